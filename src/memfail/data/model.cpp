// SPDX-License-Identifier: MIT
// Data-model helpers.
#include <memfail/data/model.hpp>

namespace memfail::data {

const char* probe_kind_name(ProbeKind kind) {
    switch (kind) {
        case ProbeKind::yes_no: return "yes_no";
        case ProbeKind::list: return "list";
        case ProbeKind::open: return "open";
        case ProbeKind::mcq: return "mcq";
        case ProbeKind::abstain: return "abstain";
    }
    return "open";
}

std::optional<ProbeKind> parse_probe_kind(const std::string& name) {
    for (ProbeKind k : {ProbeKind::yes_no, ProbeKind::list, ProbeKind::open, ProbeKind::mcq,
                        ProbeKind::abstain})
        if (name == probe_kind_name(k)) return k;
    return std::nullopt;
}

const char* detail_role_name(DetailRole role) {
    return role == DetailRole::identity ? "identity" : "qualifier";
}

std::optional<DetailRole> parse_detail_role(const std::string& name) {
    if (name == "identity") return DetailRole::identity;
    if (name == "qualifier") return DetailRole::qualifier;
    return std::nullopt;
}

DetailRole default_detail_role(const std::string& name) {
    if (name == "entity" || name == "behaviour" || name == "preference" || name == "detail" ||
        name.rfind("anchor_", 0) == 0)
        return DetailRole::identity;
    return DetailRole::qualifier;
}

MessageIndex::MessageIndex(const Scenario& scenario) {
    for (std::size_t i = 0; i < scenario.sessions.size(); ++i) {
        const Session& s = scenario.sessions[i];
        m_session_positions.emplace(s.id, i);
        for (const auto& m : s.messages) m_messages.emplace(m.id, std::make_pair(&m, &s));
    }
}

const Message* MessageIndex::message(const std::string& id) const {
    auto it = m_messages.find(id);
    return it == m_messages.end() ? nullptr : it->second.first;
}

const Session* MessageIndex::session_of(const std::string& message_id) const {
    auto it = m_messages.find(message_id);
    return it == m_messages.end() ? nullptr : it->second.second;
}

std::size_t MessageIndex::session_position(const std::string& session_id) const {
    auto it = m_session_positions.find(session_id);
    return it == m_session_positions.end() ? static_cast<std::size_t>(-1) : it->second;
}

std::size_t message_count(const Scenario& scenario) {
    std::size_t n = 0;
    for (const auto& s : scenario.sessions) n += s.messages.size();
    return n;
}

}  // namespace memfail::data

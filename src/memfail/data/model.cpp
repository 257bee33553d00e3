// SPDX-License-Identifier: MIT
// Data-model helpers.
#include <memfail/data/model.hpp>

#include <memfail/core/dates.hpp>

#include <cmath>
#include <cstdio>

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

const char* memory_type_name(MemoryType type) {
    switch (type) {
        case MemoryType::explicit_fact: return "explicit";
        case MemoryType::mutable_fact: return "mutable";
        case MemoryType::latent: return "latent";
        case MemoryType::entity: return "entity";
        case MemoryType::work_state: return "work_state";
        case MemoryType::non_memory: return "non_memory";
    }
    return "explicit";
}

std::optional<MemoryType> parse_memory_type(const std::string& name) {
    for (MemoryType t : {MemoryType::explicit_fact, MemoryType::mutable_fact, MemoryType::latent, MemoryType::entity,
                         MemoryType::work_state, MemoryType::non_memory})
        if (name == memory_type_name(t)) return t;
    return std::nullopt;
}

const char* authority_name(Authority authority) {
    switch (authority) {
        case Authority::user_stated: return "user_stated";
        case Authority::user_confirmed: return "user_confirmed";
        case Authority::agreed_upon: return "agreed_upon";
        case Authority::agent_extracted: return "agent_extracted";
        case Authority::ai_summarized: return "ai_summarized";
    }
    return "user_stated";
}

std::optional<Authority> parse_authority(const std::string& name) {
    for (Authority a : {Authority::user_stated, Authority::user_confirmed, Authority::agreed_upon,
                        Authority::agent_extracted, Authority::ai_summarized})
        if (name == authority_name(a)) return a;
    return std::nullopt;
}

const char* rubric_kind_name(RubricKind kind) {
    switch (kind) {
        case RubricKind::exact: return "exact";
        case RubricKind::structured: return "structured";
        case RubricKind::contains: return "contains";
        case RubricKind::numeric: return "numeric";
        case RubricKind::address: return "address";
        case RubricKind::multi_field: return "multi_field";
        case RubricKind::entity_count: return "entity_count";
        case RubricKind::constraint: return "constraint";
        case RubricKind::abstention: return "abstention";
        case RubricKind::semantic: return "semantic";
    }
    return "exact";
}

std::optional<RubricKind> parse_rubric_kind(const std::string& name) {
    for (RubricKind k : {RubricKind::exact, RubricKind::structured, RubricKind::contains, RubricKind::numeric,
                         RubricKind::address, RubricKind::multi_field, RubricKind::entity_count,
                         RubricKind::constraint, RubricKind::abstention, RubricKind::semantic})
        if (name == rubric_kind_name(k)) return k;
    return std::nullopt;
}

namespace {

// "5000" -> "5,000"; leaves anything that is not a run of digits alone.
std::string with_thousands(const std::string& digits) {
    if (digits.size() <= 3) return digits;
    std::string out;
    const std::size_t lead = digits.size() % 3;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (i % 3) == lead % 3 && !(lead == 0 && i == 0)) out += ',';
        out += digits[i];
    }
    return out;
}

void leaf_mentions(const nlohmann::json& value, std::vector<std::string>& out) {
    if (value.is_string()) {
        if (!value.get<std::string>().empty()) out.push_back(value.get<std::string>());
    } else if (value.is_number_integer() || value.is_number_unsigned()) {
        const std::string plain = value.dump();
        out.push_back(plain);
        const bool negative = !plain.empty() && plain[0] == '-';
        const std::string grouped = with_thousands(negative ? plain.substr(1) : plain);
        if (grouped.size() != plain.size() - (negative ? 1 : 0)) out.push_back((negative ? "-" : "") + grouped);
    } else if (value.is_number_float()) {
        const double d = value.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
            leaf_mentions(nlohmann::json(static_cast<long long>(d)), out);
        } else {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g", d);
            out.push_back(buf);
        }
    } else if (value.is_boolean()) {
        out.push_back(value.get<bool>() ? "yes" : "no");
    } else if (value.is_array() || value.is_object()) {
        for (const auto& v : value) leaf_mentions(v, out);
    }
}

}  // namespace

std::vector<std::string> value_mentions(const ValueRecord& record) {
    if (!record.mentions.empty()) return record.mentions;
    std::vector<std::string> out;
    leaf_mentions(record.value, out);
    return out;
}

namespace {

template <typename E, std::size_t N>
std::optional<E> parse_enum(const std::string& name, const char* const (&names)[N]) {
    for (std::size_t i = 0; i < N; ++i)
        if (name == names[i]) return static_cast<E>(i);
    return std::nullopt;
}

constexpr const char* k_family_names[] = {"attribute", "habit", "preference"};
constexpr const char* k_field_type_names[] = {"date", "weekday", "time", "duration",
                                              "number", "enumeration", "list", "text"};
constexpr const char* k_field_role_names[] = {"identity", "core", "detail"};

}  // namespace

const char* state_family_name(StateFamily family) { return k_family_names[static_cast<int>(family)]; }
std::optional<StateFamily> parse_state_family(const std::string& name) {
    return parse_enum<StateFamily>(name, k_family_names);
}
const char* field_type_name(FieldType type) { return k_field_type_names[static_cast<int>(type)]; }
std::optional<FieldType> parse_field_type(const std::string& name) {
    return parse_enum<FieldType>(name, k_field_type_names);
}
const char* field_role_name(FieldRole role) { return k_field_role_names[static_cast<int>(role)]; }
std::optional<FieldRole> parse_field_role(const std::string& name) {
    return parse_enum<FieldRole>(name, k_field_role_names);
}

std::string render_app_log(const AppLog& log) {
    // "[Tue 2024-03-05 06:31] ": the weekday is written out because habits are weekly, and a
    // system that keeps the text should be able to see the day without a calendar.
    std::string when = log.timestamp;
    if (when.size() >= 16 && when[10] == 'T') when[10] = ' ';
    if (when.size() > 16) when.resize(16);
    if (auto date = dates::parse_date(std::string_view(when).substr(0, std::min<std::size_t>(10, when.size()))))
        when = std::string(dates::weekday_short_name(dates::weekday(*date))) + " " + when;
    std::string out = "[" + when + "] " + log.app + "." + log.api;
    out += " request: " + log.request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += " response: " + log.response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return out;
}

bool Probe::uses_v2() const {
    return !capabilities.empty() || temporal || should_abstain || rubric || !targets.empty() || !expected.is_null() ||
           !expected_source.empty() || !failure_modes.empty() || !task.empty() || !fields.empty();
}

bool Scenario::uses_v2() const {
    if (!ledger.empty() || !checkpoints.empty() || !profile.empty()) return true;
    for (const auto& session : sessions)
        for (const auto& m : session.messages)
            if (m.app_log) return true;
    for (const auto& p : probes)
        if (p.uses_v2()) return true;
    return false;
}

const LedgerEvent* Scenario::event(const std::string& id) const {
    for (const auto& e : ledger)
        if (e.id == id) return &e;
    return nullptr;
}

std::size_t message_count(const Scenario& scenario) {
    std::size_t n = 0;
    for (const auto& s : scenario.sessions) n += s.messages.size();
    return n;
}

}  // namespace memfail::data

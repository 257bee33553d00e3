// SPDX-License-Identifier: MIT
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/protocol.hpp>

#include <map>

namespace memfail::suites::memfail_suite {

namespace {

std::string meta_string(const data::Probe& probe, const char* key) {
    auto it = probe.meta.find(key);
    return it != probe.meta.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string meta_row(const data::Probe& probe) {
    auto it = probe.meta.find("row");
    return it != probe.meta.end() && !it->is_null() ? it->dump() : std::string();
}

// "Yuki Tanaka" -> {"Yuki Tanaka", "Yuki", "Yuki Tanaka's", "Yuki's"}.
std::vector<std::string> name_variants(const std::string& name) {
    std::vector<std::string> out = {name};
    const auto words = text::split(name, ' ');
    if (words.size() > 1 && !words.front().empty()) out.push_back(words.front());
    const std::size_t n = out.size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(out[i] + "'s");
    return out;
}

}  // namespace

data::Scenario paper_protocol_scenario(data::Scenario scenario) {
    if (scenario.dataset != "persona_retrieval") return scenario;

    // Where each row's essay is: the message a direct probe of that row cites.
    std::map<std::string, std::string> message_of_row;
    for (const auto& p : scenario.probes)
        if (p.kind != data::ProbeKind::abstain && !p.evidence.empty() && !p.evidence.front().message_ids.empty())
            message_of_row.emplace(meta_string(p, "entity") + "\x1f" + meta_row(p), p.evidence.front().message_ids.front());
    const data::MessageIndex messages(scenario);

    const auto essay_message = [&](const data::Probe& p, const std::string& entity) -> const data::Message* {
        if (auto it = message_of_row.find(entity + "\x1f" + meta_row(p)); it != message_of_row.end())
            return messages.message(it->second);
        const std::string wanted = text::normalize(entity);
        const auto names = [&](const data::Message& m) {
            return m.role == "user" && text::normalized_contains(text::normalize(m.content), wanted);
        };
        // The row's own session (rows are numbered from 1 in session order), then any that names them.
        if (auto it = p.meta.find("row"); it != p.meta.end() && it->is_number_integer()) {
            const auto row = it->get<long long>();
            if (row >= 1 && static_cast<std::size_t>(row) <= scenario.sessions.size())
                for (const auto& m : scenario.sessions[static_cast<std::size_t>(row - 1)].messages)
                    if (names(m)) return &m;
        }
        for (const auto& s : scenario.sessions)
            for (const auto& m : s.messages)
                if (names(m)) return &m;
        return nullptr;
    };

    std::vector<std::pair<std::size_t, data::EvidenceFact>> additions;
    for (std::size_t i = 0; i < scenario.probes.size(); ++i) {
        const auto& p = scenario.probes[i];
        if (p.kind != data::ProbeKind::abstain || !p.evidence.empty()) continue;
        const std::string entity = meta_string(p, "entity");
        if (entity.empty()) continue;
        const data::Message* m = essay_message(p, entity);
        if (!m) continue;
        data::EvidenceFact essay;
        essay.id = p.id + "-essay";
        essay.text = m->content;
        essay.message_ids = {m->id};
        essay.key_details = {{"entity", name_variants(entity), data::DetailRole::identity}};
        additions.emplace_back(i, std::move(essay));
    }
    for (auto& [i, fact] : additions) {
        scenario.probes[i].evidence.push_back(std::move(fact));
        scenario.probes[i].meta["paper_essay"] = true;
    }
    return scenario;
}

}  // namespace memfail::suites::memfail_suite

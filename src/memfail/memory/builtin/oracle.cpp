// SPDX-License-Identifier: MIT
// The oracle reference system.
#include <memfail/memory/builtin/oracle.hpp>

#include <algorithm>
#include <set>

#include <memfail/core/text.hpp>

namespace memfail::memory {

namespace {

constexpr const char* k_over_prefix = "over.";

const char* stage_name(OracleStage s) {
    switch (s) {
        case OracleStage::all: return "all";
        case OracleStage::retrieval: return "retrieval";
        case OracleStage::summary: return "summary";
    }
    return "all";
}

bool ends_sentence(std::string_view s) {
    s = text::trim(s);
    return !s.empty() && (s.back() == '.' || s.back() == '!' || s.back() == '?');
}

}  // namespace

Result<std::unique_ptr<MemorySystem>> OracleSystem::create(const Spec& spec,
                                                           const SystemContext& context) {
    Spec own{spec.name, {}};
    Spec inner_spec;
    for (const auto& [key, value] : spec.options) {
        if (!text::starts_with(key, k_over_prefix)) {
            own.options.emplace(key, value);
            continue;
        }
        const std::string inner_key = key.substr(std::string_view(k_over_prefix).size());
        if (inner_key.empty())
            return make_error(ErrorKind::invalid_input,
                              "option 'over.' of 'oracle' names no option of the inner system");
        inner_spec.options.emplace(inner_key, value);
    }
    MF_TRY(own.check_keys({"stage", "over", "respect_k"}));
    MF_TRY_ASSIGN(const std::string stage_text,
                  own.get_choice("stage", "all", {"all", "retrieval", "summary"}));
    MF_TRY_ASSIGN(const bool respect_k, own.get_bool("respect_k", false));
    const OracleStage stage = stage_text == "all"         ? OracleStage::all
                              : stage_text == "retrieval" ? OracleStage::retrieval
                                                          : OracleStage::summary;
    if (stage == OracleStage::all) {
        if (own.has("over") || !inner_spec.options.empty())
            return make_error(ErrorKind::invalid_input,
                              "options 'over' and 'over.*' of 'oracle' apply only to "
                              "stage=retrieval or stage=summary");
        return std::unique_ptr<MemorySystem>(new OracleSystem(stage, respect_k, nullptr));
    }

    inner_spec.name = own.get("over", "verbatim");
    if (inner_spec.name == "oracle")
        return make_error(ErrorKind::invalid_input, "an oracle cannot run over another oracle");
    auto inner = make_memory_system(inner_spec, context);
    if (!inner) return inner.error().with_context("oracle over=" + inner_spec.name);
    // Ideal retrieval picks memories by their sources; a system that cannot name them would need
    // key-detail matching, which the built-in inner systems never require.
    if (!(*inner)->capabilities().provenance)
        return make_error(ErrorKind::invalid_input,
                          "oracle stage=" + stage_text + " needs an inner system that reports "
                              "memory sources, and '" + inner_spec.name + "' does not");
    return std::unique_ptr<MemorySystem>(new OracleSystem(stage, respect_k, std::move(*inner)));
}

SystemInfo OracleSystem::info() {
    return {"oracle",
            "Reference system that reads the ground truth to make a stage ideal: the ceiling to "
            "compare real systems with",
            {{"stage", "all",
              "all: gold facts stored and retrieved; retrieval: real storage by the inner system, "
              "ideal retrieval; summary: the inner system stores only the gold facts, retrieval "
              "stays real"},
             {"over", "verbatim", "inner system for stage=retrieval or stage=summary"},
             {"over.<option>", "",
              "an option of the inner system, e.g. over.chunk=sentence (spec strings cannot nest)"},
             {"respect_k", "false",
              "true: cut ideal retrieval to the top k; false: return all evidence whatever k is"}}};
}

std::string OracleSystem::spec() const {
    Spec spec{"oracle", {{"stage", stage_name(m_stage)}, {"respect_k", m_respect_k ? "true" : "false"}}};
    if (m_inner) {
        // The inner canonical spec always parses: it was produced by Spec::to_string.
        auto inner = Spec::parse(m_inner->spec());
        MF_ASSERT(inner.has_value(), "inner system produced an unparsable spec");
        spec.options["over"] = inner->name;
        for (const auto& [key, value] : inner->options) spec.options[k_over_prefix + key] = value;
    }
    return spec.to_string();
}

Capabilities OracleSystem::capabilities() const {
    Capabilities caps;
    caps.uses_ground_truth = true;
    caps.provenance = true;
    caps.idempotent_store = m_inner ? m_inner->capabilities().idempotent_store : true;
    return caps;
}

void OracleSystem::observe_ground_truth(const data::Scenario& scenario) {
    m_facts.clear();
    m_fact_times.clear();
    m_by_question.clear();
    const data::MessageIndex messages(scenario);
    std::map<std::string, std::size_t> fact_index;
    for (const data::Probe& probe : scenario.probes) {
        ProbeEvidence evidence{probe.after_session, {}};
        for (const data::EvidenceFact& fact : probe.evidence) {
            auto [it, inserted] = fact_index.emplace(fact.id, m_facts.size());
            if (inserted) {
                m_facts.push_back(fact);
                const data::Session* session =
                    fact.message_ids.empty() ? nullptr : messages.session_of(fact.message_ids.front());
                m_fact_times.push_back(session ? session->timestamp : std::string{});
            }
            if (std::find(evidence.facts.begin(), evidence.facts.end(), it->second) ==
                evidence.facts.end())
                evidence.facts.push_back(it->second);
        }
        // A profile task (the dynamic suite) has no evidence facts: its gold is the app logs its
        // fields cite, each kept as it was logged.
        for (const data::ProbeField& field : probe.fields)
            for (const std::string& log_id : field.evidence) {
                const data::Message* log = messages.message(log_id);
                if (!log) continue;
                data::EvidenceFact fact;
                fact.id = "log:" + log_id;
                fact.text = log->content;
                fact.message_ids = {log_id};
                auto [it, inserted] = fact_index.emplace(fact.id, m_facts.size());
                if (inserted) {
                    const data::Session* session = messages.session_of(log_id);
                    m_facts.push_back(std::move(fact));
                    m_fact_times.push_back(session ? session->timestamp : std::string{});
                }
                if (std::find(evidence.facts.begin(), evidence.facts.end(), it->second) == evidence.facts.end())
                    evidence.facts.push_back(it->second);
            }
        m_by_question[probe.question].push_back(std::move(evidence));
    }
}

std::vector<std::size_t> OracleSystem::facts_for(std::string_view question) const {
    auto it = m_by_question.find(question);
    if (it == m_by_question.end()) return {};
    const std::vector<ProbeEvidence>& probes = it->second;
    const bool any_current = std::any_of(probes.begin(), probes.end(), [&](const ProbeEvidence& p) {
        return p.after_session == m_last_session;
    });
    std::vector<std::size_t> out;
    for (const ProbeEvidence& probe : probes) {
        if (any_current && probe.after_session != m_last_session) continue;
        for (const std::size_t f : probe.facts)
            if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    }
    return out;
}

Memory OracleSystem::fact_memory(std::size_t index) const {
    const data::EvidenceFact& fact = m_facts[index];
    return Memory{"oracle:" + fact.id, fact.text, m_fact_times[index], m_fact_times[index],
                  fact.message_ids};
}

Result<void> OracleSystem::store_conversation(const data::Session& session) {
    m_last_session = session.id;
    if (m_stage == OracleStage::all) return {};
    if (m_stage == OracleStage::retrieval) return m_inner->store_conversation(session);

    // Ideal summarisation: each gold fact is written once per session that states it, at the
    // first of its messages in that session; facts sharing that message become one message.
    std::set<std::string> in_session;
    for (const data::Message& m : session.messages) in_session.insert(m.id);
    std::map<std::string, std::vector<std::size_t>> facts_at;
    for (std::size_t i = 0; i < m_facts.size(); ++i) {
        for (const std::string& id : m_facts[i].message_ids) {
            if (!in_session.count(id)) continue;
            facts_at[id].push_back(i);
            break;
        }
    }
    data::Session ideal{session.id, session.timestamp, {}};
    for (const data::Message& message : session.messages) {
        auto it = facts_at.find(message.id);
        if (it == facts_at.end()) continue;
        std::string content;
        for (const std::size_t f : it->second) {
            std::string sentence(text::trim(m_facts[f].text));
            if (it->second.size() > 1 && !ends_sentence(sentence)) sentence += '.';
            if (!content.empty()) content += ' ';
            content += sentence;
        }
        ideal.messages.push_back({message.id, message.role, std::move(content), message.app_log});
    }
    return m_inner->store_conversation(ideal);
}

Result<std::vector<Hit>> OracleSystem::retrieve_memories(std::string_view query,
                                                         const std::vector<data::Message>& history,
                                                         int k) {
    if (m_stage == OracleStage::summary) return m_inner->retrieve_memories(query, history, k);

    std::vector<Hit> hits;
    const std::vector<std::size_t> facts = facts_for(query);
    if (m_stage == OracleStage::all) {
        for (const std::size_t f : facts) hits.push_back({fact_memory(f), 1.0});
    } else {
        std::set<std::string> evidence_messages;
        for (const std::size_t f : facts)
            evidence_messages.insert(m_facts[f].message_ids.begin(), m_facts[f].message_ids.end());
        if (!evidence_messages.empty()) {
            MF_TRY_ASSIGN(std::vector<Memory> memories, m_inner->all_memories());
            for (Memory& memory : memories) {
                const bool sourced = std::any_of(
                    memory.sources.begin(), memory.sources.end(),
                    [&](const std::string& id) { return evidence_messages.count(id) > 0; });
                if (sourced) hits.push_back({std::move(memory), 1.0});
            }
        }
    }
    if (m_respect_k && hits.size() > static_cast<std::size_t>(std::max(k, 0)))
        hits.resize(static_cast<std::size_t>(std::max(k, 0)));
    return hits;
}

Result<std::vector<Memory>> OracleSystem::all_memories() {
    if (m_inner) return m_inner->all_memories();
    std::vector<Memory> out;
    out.reserve(m_facts.size());
    for (std::size_t i = 0; i < m_facts.size(); ++i) out.push_back(fact_memory(i));
    return out;
}

Result<void> OracleSystem::reset() {
    m_last_session.clear();
    return m_inner ? m_inner->reset() : Result<void>{};
}

}  // namespace memfail::memory

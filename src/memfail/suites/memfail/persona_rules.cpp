// SPDX-License-Identifier: MIT
// Construction rules of Persona-Retrieval (paper Section 4, Appendix B.5), including the fix of a
// known flaw of the original release: distractors must be people the memory never heard of.
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <map>
#include <optional>
#include <set>

namespace memfail::suites::memfail_suite {

namespace {

constexpr std::size_t k_essays = 100;
constexpr std::size_t k_probes_per_essay = 3;
constexpr std::size_t k_min_sentences = 10;
constexpr std::size_t k_max_sentences = 15;
constexpr double k_min_misleading = 0.35;
constexpr double k_max_misleading = 0.65;

bool marked_ambiguous(const data::Probe& p) {
    const auto it = p.meta.find("ambiguous");
    return it != p.meta.end() && it->is_boolean() && it->get<bool>();
}

// True when `normalized_text` names `name` or its possessive ("Yuki Tanaka's" normalises to
// "yuki tanakas", which "yuki tanaka" does not match on word boundaries).
bool names(const std::string& normalized_text, const std::string& name) {
    return text::normalized_contains(normalized_text, text::normalize(name)) ||
           text::normalized_contains(normalized_text, text::normalize(name + "'s"));
}

std::string meta_string(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    return it != p.meta.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void check_persona_retrieval_rules(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out) {
    auto add = [&](std::string field, std::string message) {
        out.push_back({line, std::move(field), std::move(message)});
    };

    // Essays: one per session, 10-15 sentences each.
    if (s.sessions.size() != k_essays)
        add("sessions", "Persona-Retrieval stores " + std::to_string(k_essays) + " essays; found " +
                            std::to_string(s.sessions.size()));
    std::vector<std::string> normalized_sessions;
    std::set<std::string> session_words;
    for (std::size_t i = 0; i < s.sessions.size(); ++i) {
        std::string all;
        for (std::size_t m = 0; m < s.sessions[i].messages.size(); ++m) {
            const auto& msg = s.sessions[i].messages[m];
            all += ' ' + text::normalize(msg.content);
            const std::size_t n = text::split_sentences(msg.content).size();
            if (n < k_min_sentences || n > k_max_sentences)
                add("sessions[" + std::to_string(i) + "].messages[" + std::to_string(m) + "].content",
                    "an essay has 10-15 sentences; this one has " + std::to_string(n));
        }
        normalized_sessions.push_back(all);
    }

    // Entities: the people essays are about, and every name token they use.
    std::set<std::string> entities, entity_tokens;
    for (const auto& p : s.probes) {
        const std::string entity = meta_string(p, "entity");
        if (entity.empty()) continue;
        entities.insert(entity);
        for (const auto& w : text::words(entity)) entity_tokens.insert(w);
    }
    // Names may repeat across essays (the release draws them with replacement from 30), so the
    // rule is one entity per row, checked with the rows below.

    const data::MessageIndex index(s);
    std::map<long long, std::vector<std::size_t>> rows;
    std::size_t misleading_count = 0;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        const std::string path = "probes[" + std::to_string(i) + "]";
        const std::string entity = meta_string(p, "entity");
        if (entity.empty()) add(path + ".meta.entity", "missing the entity the essay is about");
        const auto row_it = p.meta.find("row");
        if (row_it == p.meta.end() || !row_it->is_number_integer())
            add(path + ".meta.row", "missing the essay row");
        else
            rows[row_it->get<long long>()].push_back(i);
        const auto mis_it = p.meta.find("is_misleading");
        if (mis_it == p.meta.end() || !mis_it->is_boolean()) {
            add(path + ".meta.is_misleading", "must say whether the probe is misleading");
            continue;
        }
        const std::string question = text::normalize(p.question);

        if (mis_it->get<bool>()) {
            ++misleading_count;
            if (p.kind != data::ProbeKind::abstain)
                add(path + ".kind", "a misleading probe must be an abstain probe");
            if (!p.evidence.empty()) add(path + ".evidence", "a misleading probe has nothing to cite");
            const std::string distractor = meta_string(p, "distractor");
            const std::string dpath = path + ".meta.distractor";
            if (distractor.empty()) {
                add(dpath, "a misleading probe needs its distractor");
                continue;
            }
            const std::string nd = text::normalize(distractor);
            if (!names(question, distractor))
                add(path + ".question", "the question does not name the distractor '" + distractor + "'");
            if (!entity.empty() && names(question, entity))
                add(path + ".question", "a misleading question must not name the essay's entity");
            // One flaw, one line: a distractor who is a stored person also shares that person's
            // names and appears in their essay; those follow from it and are not reported again.
            std::vector<std::string> shared;
            for (const auto& w : text::words(distractor))
                if (entity_tokens.count(w)) shared.push_back(w);
            std::optional<std::size_t> mentioned;
            for (std::size_t k = 0; k < normalized_sessions.size() && !mentioned; ++k)
                if (text::normalized_contains(normalized_sessions[k], nd)) mentioned = k;
            if (entities.count(distractor))
                add(dpath, "distractor '" + distractor +
                               "' is a stored entity, so abstaining is not strictly right" +
                               (marked_ambiguous(p) ? " (marked meta.ambiguous)" : ""));
            else if (!shared.empty())
                add(dpath, "distractor '" + distractor + "' shares the name" + (shared.size() > 1 ? "s '" : " '") +
                               text::join(shared, "', '") + "' with a stored entity");
            else if (mentioned)
                add(dpath, "distractor '" + distractor + "' appears in sessions[" + std::to_string(*mentioned) + "]");
        } else {
            if (p.kind != data::ProbeKind::open) add(path + ".kind", "a direct probe is an open question");
            if (!meta_string(p, "distractor").empty())
                add(path + ".meta.distractor", "a direct probe has no distractor");
            if (!entity.empty() && !names(question, entity))
                add(path + ".question", "a direct question must name its entity '" + entity + "'");
            // Cites the essay: a message that names the entity.
            bool cites_essay = false;
            for (const auto& f : p.evidence)
                for (const auto& id : f.message_ids) {
                    const data::Message* msg = index.message(id);
                    if (msg && !entity.empty() && names(text::normalize(msg->content), entity)) cites_essay = true;
                }
            if (!cites_essay) add(path + ".evidence", "a direct probe must cite the essay about '" + entity + "'");
        }
    }

    // Rows: three probes each, never reusing a distractor.
    if (rows.size() != k_essays)
        add("probes", "probes cover " + std::to_string(rows.size()) + " essay rows; expected " +
                          std::to_string(k_essays));
    for (const auto& [row, members] : rows) {
        const std::string first = "probes[" + std::to_string(members.front()) + "]";
        if (members.size() != k_probes_per_essay)
            add(first + ".meta.row", "row " + std::to_string(row) + " has " + std::to_string(members.size()) +
                                         " probes; expected " + std::to_string(k_probes_per_essay));
        std::set<std::string> seen;
        const std::string row_entity = meta_string(s.probes[members.front()], "entity");
        for (std::size_t i : members) {
            if (meta_string(s.probes[i], "entity") != row_entity)
                add("probes[" + std::to_string(i) + "].meta.entity",
                    "row " + std::to_string(row) + " is about '" + row_entity + "'; this probe names another entity");
            const std::string distractor = meta_string(s.probes[i], "distractor");
            if (!distractor.empty() && !seen.insert(distractor).second)
                add("probes[" + std::to_string(i) + "].meta.distractor",
                    "distractor '" + distractor + "' is reused within row " + std::to_string(row));
        }
    }

    if (!s.probes.empty()) {
        const double share = static_cast<double>(misleading_count) / static_cast<double>(s.probes.size());
        if (share < k_min_misleading || share > k_max_misleading)
            add("probes", "misleading share is " + std::to_string(static_cast<int>(share * 100 + 0.5)) +
                              "%; it must be between 35% and 65%");
    }
}

}  // namespace memfail::suites::memfail_suite

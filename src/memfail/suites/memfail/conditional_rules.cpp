// SPDX-License-Identifier: MIT
// Validation rules of Conditional-Facts Easy and Hard (paper Section 4, Appendix B.2/B.3). They
// run on generated and imported data alike: a check whose inputs are missing (no meta, no key
// details) is skipped rather than guessed at.
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <map>
#include <optional>

namespace memfail::suites::memfail_suite {

namespace {

constexpr std::size_t k_expected_rows = 100;

std::string meta_string(const nlohmann::json& meta, const char* key) {
    if (!meta.is_object()) return {};
    const auto it = meta.find(key);
    if (it == meta.end() || !it->is_string()) return {};
    return it->get<std::string>();
}

const data::KeyDetail* find_detail(const data::EvidenceFact& fact, std::string_view name,
                                   std::size_t* index = nullptr) {
    for (std::size_t i = 0; i < fact.key_details.size(); ++i)
        if (fact.key_details[i].name == name && !fact.key_details[i].variants.empty()) {
            if (index) *index = i;
            return &fact.key_details[i];
        }
    return nullptr;
}

bool holds(const std::string& normalized_text, const data::KeyDetail& detail) {
    for (const auto& v : detail.variants) {
        const std::string n = text::normalize(v);
        if (!n.empty() && text::normalized_contains(normalized_text, n)) return true;
    }
    return false;
}

// Indices of the sentences that hold `detail`.
std::vector<std::size_t> sentences_holding(const std::vector<std::string>& normalized_sentences,
                                           const data::KeyDetail& detail) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < normalized_sentences.size(); ++i)
        if (holds(normalized_sentences[i], detail)) out.push_back(i);
    return out;
}

// True when a normalised sentence refers to someone by a third-person pronoun.
bool has_pronoun(const std::string& normalized_sentence) {
    for (const char* p : {"he", "she", "they", "his", "her", "their", "him", "them", "it", "its"})
        if (text::normalized_contains(normalized_sentence, p)) return true;
    return false;
}

std::size_t distance(std::size_t a, std::size_t b) { return a > b ? a - b : b - a; }

// "yes", "no" or empty, from the first word of a reference answer.
std::string answer_polarity(const std::string& answer) {
    const std::vector<std::string> w = text::words(answer);
    if (w.empty()) return {};
    if (w[0] == "yes" || w[0] == "no") return w[0];
    return {};
}

struct MessageLocation {
    std::size_t session = 0;
    std::size_t message = 0;
};

std::string content_path(const MessageLocation& at) {
    return "sessions[" + std::to_string(at.session) + "].messages[" + std::to_string(at.message) +
           "].content";
}

std::string sentence_list(const std::vector<std::size_t>& indices) {
    std::string out;
    for (std::size_t i = 0; i < indices.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(indices[i] + 1);
    }
    return out.empty() ? "none" : out;
}

}  // namespace

void check_conditional_facts_rules(const data::Scenario& s, bool hard, std::size_t line,
                                   std::vector<data::Violation>& out) {
    auto add = [&](std::string field, std::string message) {
        out.push_back({line, std::move(field), std::move(message)});
    };
    const std::string variant = hard ? "Conditional-Facts (Hard)" : "Conditional-Facts (Easy)";
    if (s.probes.size() != k_expected_rows)
        add("probes", variant + " has " + std::to_string(k_expected_rows) + " rows; found " +
                          std::to_string(s.probes.size()) + " probes");

    std::map<std::string, MessageLocation> locations;
    for (std::size_t si = 0; si < s.sessions.size(); ++si)
        for (std::size_t mi = 0; mi < s.sessions[si].messages.size(); ++mi)
            locations.emplace(s.sessions[si].messages[mi].id, MessageLocation{si, mi});

    std::map<std::string, std::size_t> seen_behaviours, seen_conditions, seen_questions;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const data::Probe& p = s.probes[i];
        const std::string path = "probes[" + std::to_string(i) + "]";

        if (p.kind != data::ProbeKind::yes_no)
            add(path + ".kind",
                "a Conditional-Facts probe is yes_no; got " + std::string(data::probe_kind_name(p.kind)));
        const std::string polarity = answer_polarity(p.answer);
        if (polarity.empty()) add(path + ".answer", "the reference answer must start with Yes or No");

        // "yes"/"no" as the generators write it; imported tables may hold a boolean.
        std::string met = meta_string(p.meta, "condition_met");
        if (p.meta.is_object() && p.meta.contains("condition_met") && p.meta["condition_met"].is_boolean())
            met = p.meta["condition_met"].get<bool>() ? "yes" : "no";
        if (!met.empty() && met != "yes" && met != "no")
            add(path + ".meta.condition_met", "must be \"yes\" or \"no\"; got \"" + met + "\"");
        else if (!met.empty() && !polarity.empty() && met != polarity)
            add(path + ".meta.condition_met",
                "says \"" + met + "\" but the reference answer says " + (polarity == "yes" ? "Yes" : "No"));

        const std::string type = meta_string(p.meta, "condition_type");
        const std::string category = meta_string(p.meta, "entity_category");
        if (!type.empty() && !conditional::is_condition_type(type))
            add(path + ".meta.condition_type", "'" + type + "' is not one of the 32 condition types");
        else if (!type.empty() && category == "pet" && !conditional::is_observable_condition_type(type))
            add(path + ".meta.condition_type",
                "a pet's rule must use an observable condition type; '" + type + "' is an internal state");
        if (!category.empty() && category != "person" && category != "character" && category != "pet")
            add(path + ".meta.entity_category", "must be person, character or pet; got '" + category + "'");

        const data::EvidenceFact* fact = p.evidence.empty() ? nullptr : &p.evidence[0];
        std::size_t behaviour_index = 0, condition_index = 0;
        const data::KeyDetail* behaviour = fact ? find_detail(*fact, "behaviour", &behaviour_index) : nullptr;
        const data::KeyDetail* condition = fact ? find_detail(*fact, "condition", &condition_index) : nullptr;
        const data::KeyDetail* entity = fact ? find_detail(*fact, "entity") : nullptr;
        const data::KeyDetail* link = fact ? find_detail(*fact, "link") : nullptr;

        // The question puts the entity in a context; naming the condition outright would give the
        // answer away without the stored rule.
        if (condition && holds(text::normalize(p.question), *condition))
            add(path + ".question", "the question repeats the condition's key phrase (\"" +
                                        condition->variants[0] +
                                        "\") verbatim; it should describe the situation in other words");

        // Rows never share a behaviour, a condition or a question.
        auto unique = [&](std::map<std::string, std::size_t>& seen, const std::string& value,
                          const std::string& field, const char* what) {
            if (value.empty()) return;
            const auto [it, fresh] = seen.emplace(value, i);
            if (!fresh)
                add(field,
                    std::string("repeats the ") + what + " of probes[" + std::to_string(it->second) + "]");
        };
        const std::string meta_behaviour = meta_string(p.meta, "behaviour");
        const std::string meta_condition = meta_string(p.meta, "condition");
        if (!meta_behaviour.empty())
            unique(seen_behaviours, text::normalize(meta_behaviour), path + ".meta.behaviour", "behaviour");
        else if (behaviour)
            unique(seen_behaviours, text::normalize(behaviour->variants[0]),
                   path + ".evidence[0].key_details[" + std::to_string(behaviour_index) + "]", "behaviour");
        if (!meta_condition.empty())
            unique(seen_conditions, text::normalize(meta_condition), path + ".meta.condition", "condition");
        else if (condition)
            unique(seen_conditions, text::normalize(condition->variants[0]),
                   path + ".evidence[0].key_details[" + std::to_string(condition_index) + "]", "condition");
        unique(seen_questions, text::normalize(p.question), path + ".question", "question");

        // The essay: the first message the fact cites.
        if (!fact || fact->message_ids.empty()) continue;
        const auto where = locations.find(fact->message_ids[0]);
        if (where == locations.end()) continue;  // validate_structure reports unknown ids
        const MessageLocation at = where->second;
        const std::string& essay = s.sessions[at.session].messages[at.message].content;
        const std::string essay_path = content_path(at);
        const std::vector<std::string> raw_sentences = text::split_sentences(essay);
        std::vector<std::string> sentences;
        sentences.reserve(raw_sentences.size());
        for (const auto& sentence : raw_sentences) sentences.push_back(text::normalize(sentence));

        const std::size_t low = hard ? 8 : 5, high = hard ? 12 : 8;
        if (sentences.size() < low || sentences.size() > high)
            add(essay_path, "the " + std::string(hard ? "Hard" : "Easy") + " essay of " + p.id + " has " +
                                std::to_string(sentences.size()) + " sentences; it needs " +
                                std::to_string(low) + " to " + std::to_string(high));

        if (!hard) {
            if (!behaviour || !condition) continue;
            // One sentence carries the whole rule: entity (where given), behaviour and condition.
            // The entity may be a pronoun there when an earlier sentence names it ("Selene keeps a
            // journal. She writes in it only when ..."), as the release's essays do.
            bool named_before = false;
            std::optional<std::size_t> rule_sentence;
            for (std::size_t k = 0; k < sentences.size() && !rule_sentence; ++k) {
                if (holds(sentences[k], *behaviour) && holds(sentences[k], *condition) &&
                    (!entity || holds(sentences[k], *entity) || (named_before && has_pronoun(sentences[k]))))
                    rule_sentence = k;
                named_before = named_before || (entity && holds(sentences[k], *entity));
            }
            if (!rule_sentence) {
                add(essay_path, "no single sentence of the Easy essay of " + p.id +
                                    " states the whole rule (" + (entity ? "entity, " : "") +
                                    "behaviour and condition)");
                continue;
            }
            // Every other sentence is an unconditional fact.
            for (std::size_t k = 0; k < raw_sentences.size(); ++k) {
                if (k == *rule_sentence) continue;
                const std::string connective = conditional::find_forbidden_connective(raw_sentences[k]);
                if (!connective.empty())
                    add(essay_path, "sentence " + std::to_string(k + 1) + " of the Easy essay of " + p.id +
                                        " adds a second conditional ('" + connective +
                                        "'); the other facts must be unconditional");
            }
            continue;
        }

        const std::string connective = conditional::find_forbidden_connective(essay);
        if (!connective.empty())
            add(essay_path, "the Hard essay of " + p.id + " contains the conditional connective '" +
                                connective + "'; the rule must be spread without one");
        if (!behaviour || !condition || !link) continue;
        const std::vector<std::size_t> b = sentences_holding(sentences, *behaviour);
        const std::vector<std::size_t> c = sentences_holding(sentences, *condition);
        const std::vector<std::size_t> l = sentences_holding(sentences, *link);
        bool together = false;
        for (std::size_t x : b)
            for (std::size_t y : c)
                if (x == y && !together) {
                    together = true;
                    add(essay_path, "sentence " + std::to_string(x + 1) + " of the Hard essay of " + p.id +
                                        " states both the behaviour and the condition");
                }
        if (b.empty() || c.empty() || l.empty()) {
            add(essay_path, "the Hard essay of " + p.id + " lacks a rule sentence (behaviour in sentences " +
                                sentence_list(b) + ", condition in " + sentence_list(c) + ", link in " +
                                sentence_list(l) + ")");
            continue;
        }
        // Some choice of behaviour, condition and link sentences must be pairwise non-adjacent.
        bool spread = false;
        for (std::size_t x : b)
            for (std::size_t y : c)
                for (std::size_t z : l)
                    if (distance(x, y) >= 2 && distance(y, z) >= 2 && distance(x, z) >= 2) spread = true;
        if (!spread && !together)
            add(essay_path, "the behaviour, condition and link sentences of the Hard essay of " + p.id +
                                " are not three pairwise non-adjacent sentences (behaviour in " +
                                sentence_list(b) + ", condition in " + sentence_list(c) + ", link in " +
                                sentence_list(l) + ")");
    }
}

}  // namespace memfail::suites::memfail_suite

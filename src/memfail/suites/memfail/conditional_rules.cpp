// SPDX-License-Identifier: MIT
// Validation rules of Conditional-Facts Easy and Hard (paper Section 4, Appendix B.2/B.3). They
// run on generated and imported data alike: a check whose inputs are missing (no meta, no key
// details) is skipped rather than guessed at.
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

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

// A key detail of two words or more ("childhood keepsake", "blue squeaky whale") places what it
// names: the sentence holding it states it. One word ("room", "baths", "wistful") may equally sit in
// a sentence that only mentions it in passing while the essay states the rule in other words, so a
// check of where the rule is stated cannot rest on it.
bool distinctive(const data::KeyDetail& detail) {
    for (const auto& v : detail.variants)
        if (text::words(v).size() < 2) return false;
    return !detail.variants.empty();
}

// The words of a condition phrase that carry its meaning: no stopwords, no connectives ("when her
// anxiety is above 7 out of 10" -> anxiety, above, 7, 10).
std::vector<std::string> condition_words(const std::string& condition) {
    static const std::set<std::string> k_frame = {"when",  "whenever", "only",  "if",    "unless", "after",
                                                  "before", "during",  "while", "until", "once",   "feels",
                                                  "feel",   "feeling", "gets",  "get",   "being",  "out"};
    std::vector<std::string> out;
    for (const auto& w : text::words(condition))
        if (!text::is_stopword(w) && !k_frame.count(w)) out.push_back(w);
    return out;
}

// True when a question holding the condition's key detail provably repeats the condition: the detail
// is a phrase of two words or more, or the condition is that one word ("dusk", "Sundays"). One word
// of a longer condition ("room" of "when ambient room temperature is below 16°C") is not the
// condition: a question may say "living room" without giving the answer away.
bool detail_is_the_condition(const data::KeyDetail& detail, const std::string& meta_condition) {
    if (distinctive(detail)) return true;
    if (meta_condition.empty()) return false;
    const std::vector<std::string> words = condition_words(meta_condition);
    if (words.size() != 1) return false;
    // The one word in another form counts: "thunder" is the condition "when it thunders".
    auto same_word = [](const std::string& a, const std::string& b) {
        if (a.size() < b.size() || a.compare(0, b.size(), b) != 0) return false;
        const std::string rest = a.substr(b.size());
        return rest.empty() || rest == "s" || rest == "es" || rest == "d" || rest == "ed" || rest == "ing";
    };
    for (const auto& v : detail.variants) {
        const std::string n = text::normalize(v);
        if (same_word(words[0], n) || same_word(n, words[0])) return true;
    }
    return false;
}

// True when a sentence states a condition in so many words: a conditional connective ("only when",
// "whenever", "unless", "if" but not "as if"), or "when", "after", "before", "during", "while",
// "once", "until", "except".
bool states_a_condition(const std::string& raw_sentence) {
    if (!conditional::find_forbidden_connective(raw_sentence).empty()) return true;
    static const std::set<std::string> k_openers = {"when",  "after", "before", "during",
                                                    "while", "once",  "until",  "except"};
    for (const auto& w : text::words(raw_sentence))
        if (k_openers.count(w)) return true;
    return false;
}

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

bool refusal_worded(std::string_view text) {
    static const std::set<std::string> k_negations = {
        "not",     "never",   "no",      "nor",      "neither", "without", "refuse",   "refuses", "refused",
        "refusing", "wont",   "avoid",   "avoids",   "avoided", "avoiding", "decline", "declines", "declined",
        "declining", "dont",  "doesnt",  "didnt",    "wouldnt", "isnt",    "arent",    "wasnt",   "cant",
        "cannot",  "couldnt", "shouldnt", "stop",    "stops",   "stopped", "resist",   "resists", "refrain",
        "refrains", "shun",   "shuns",   "unless",   "except"};
    for (const auto& w : text::words(text))
        if (k_negations.count(w)) return true;
    return false;
}

bool polarity_may_invert(std::initializer_list<std::string_view> texts, const data::EvidenceFact* fact) {
    for (const auto text : texts)
        if (refusal_worded(text)) return true;
    if (fact)
        for (const auto& d : fact->key_details)
            if ((d.name == "polarity" || d.name == "exclusivity") && !d.variants.empty() && refusal_worded(d.variants[0]))
                return true;
    return false;
}

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

        const std::string meta_behaviour = meta_string(p.meta, "behaviour");
        const std::string meta_condition = meta_string(p.meta, "condition");

        // The answer says Yes exactly when the condition is met, for a plain behaviour asked about
        // plainly. A refusal or avoidance ("refuses to ...", "never ...", "won't ..."), a rule with
        // "unless"/"except", or a question asking about the opposite ("Would she stay on the bus?")
        // may turn the answer's polarity around legitimately: no contradiction is proven there.
        if ((met == "yes" || met == "no") && !polarity.empty() && met != polarity) {
            const std::string_view detail_behaviour = behaviour ? std::string_view(behaviour->variants[0]) : std::string_view();
            if (!polarity_may_invert({p.question, meta_behaviour, detail_behaviour}, fact))
                add(path + ".meta.condition_met", "says \"" + met + "\" but the reference answer says " +
                                                      (polarity == "yes" ? "Yes" : "No"));
        }

        // The question puts the entity in a context; naming the condition outright would give the
        // answer away without the stored rule.
        if (condition && holds(text::normalize(p.question), *condition) &&
            detail_is_the_condition(*condition, meta_condition))
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
            // journal. She writes in it only when ..."), as the release's essays do. A sentence
            // holding both details is the rule sentence, one stating a condition ("only when")
            // first; failing that, one holding either detail with a conditional wording: the key
            // details are words the importer found in the essay, and the rule sentence may word the
            // other half differently ("only during downpours" for the condition "when it rains",
            // whose word "rain" the importer found in another sentence).
            std::vector<bool> named_before(sentences.size(), false);
            for (std::size_t k = 1; k < sentences.size(); ++k)
                named_before[k] = named_before[k - 1] || (entity && holds(sentences[k - 1], *entity));
            auto names_entity = [&](std::size_t k) {
                return !entity || holds(sentences[k], *entity) || (named_before[k] && has_pronoun(sentences[k]));
            };
            std::optional<std::size_t> rule_sentence, both;
            for (std::size_t k = 0; k < sentences.size() && !rule_sentence; ++k) {
                if (!holds(sentences[k], *behaviour) || !holds(sentences[k], *condition) || !names_entity(k)) continue;
                if (!both) both = k;
                if (states_a_condition(raw_sentences[k])) rule_sentence = k;
            }
            if (!rule_sentence) rule_sentence = both;
            for (std::size_t k = 0; k < sentences.size() && !rule_sentence; ++k)
                if ((holds(sentences[k], *behaviour) || holds(sentences[k], *condition)) && names_entity(k) &&
                    states_a_condition(raw_sentences[k]))
                    rule_sentence = k;
            if (!rule_sentence) {
                add(essay_path, "no single sentence of the Easy essay of " + p.id +
                                    " states the whole rule (" + (entity ? "entity, " : "") +
                                    "behaviour and condition)");
                continue;
            }
            // Every other sentence is an unconditional fact. One that holds the behaviour or the
            // condition restates the rule rather than adding a second one.
            for (std::size_t k = 0; k < raw_sentences.size(); ++k) {
                if (k == *rule_sentence || holds(sentences[k], *behaviour) || holds(sentences[k], *condition))
                    continue;
                const std::string connective = conditional::find_forbidden_connective(raw_sentences[k]);
                if (!connective.empty())
                    add(essay_path, "sentence " + std::to_string(k + 1) + " of the Easy essay of " + p.id +
                                        " adds a second conditional ('" + connective +
                                        "'); the other facts must be unconditional");
            }
            continue;
        }

        // Hard spreads the rule without a conditional connective. Only a connective joining the
        // rule's two halves in one sentence provably states it: "whenever the doorbell rings" in a
        // sentence about something else is no statement of the rule.
        if (!behaviour || !condition) continue;
        for (std::size_t k = 0; k < raw_sentences.size(); ++k) {
            if (!holds(sentences[k], *behaviour) || !holds(sentences[k], *condition)) continue;
            const std::string connective = conditional::find_forbidden_connective(raw_sentences[k]);
            if (!connective.empty())
                add(essay_path, "sentence " + std::to_string(k + 1) + " of the Hard essay of " + p.id +
                                    " states the rule with the conditional connective '" + connective +
                                    "'; the rule must be spread without one");
        }
        if (!link) continue;
        const std::vector<std::size_t> b = sentences_holding(sentences, *behaviour);
        const std::vector<std::size_t> c = sentences_holding(sentences, *condition);
        const std::vector<std::size_t> l = sentences_holding(sentences, *link);
        if (b.empty() || c.empty() || l.empty()) {
            add(essay_path, "the Hard essay of " + p.id + " lacks a rule sentence (behaviour in sentences " +
                                sentence_list(b) + ", condition in " + sentence_list(c) + ", link in " +
                                sentence_list(l) + ")");
            continue;
        }
        // Where the rule is stated is certain only for details of two words or more (see
        // distinctive()), and not from the link sentence: it points back to the condition and
        // alludes to the behaviour by design ("It's usually in those wistful, quiet moods that ...").
        const bool certain = distinctive(*behaviour) && distinctive(*condition) && distinctive(*link);
        auto outside_link = [&](const std::vector<std::size_t>& v) {
            std::vector<std::size_t> out;
            for (std::size_t x : v)
                if (std::find(l.begin(), l.end(), x) == l.end()) out.push_back(x);
            return out;
        };
        const std::vector<std::size_t> bs = outside_link(b), cs = outside_link(c);
        if (!certain || bs.empty() || cs.empty()) continue;
        bool together = false;
        for (std::size_t x : bs)
            for (std::size_t y : cs)
                if (x == y && !together) {
                    together = true;
                    add(essay_path, "sentence " + std::to_string(x + 1) + " of the Hard essay of " + p.id +
                                        " states both the behaviour and the condition");
                }
        // Some choice of behaviour, condition and link sentences must be pairwise non-adjacent.
        bool spread = false;
        for (std::size_t x : bs)
            for (std::size_t y : cs)
                for (std::size_t z : l)
                    if (distance(x, y) >= 2 && distance(y, z) >= 2 && distance(x, z) >= 2) spread = true;
        if (!spread && !together)
            add(essay_path, "the behaviour, condition and link sentences of the Hard essay of " + p.id +
                                " are not three pairwise non-adjacent sentences (behaviour in " +
                                sentence_list(bs) + ", condition in " + sentence_list(cs) + ", link in " +
                                sentence_list(l) + ")");
    }
}

}  // namespace memfail::suites::memfail_suite

// SPDX-License-Identifier: MIT
// Deterministic answer parsing.
#include <memfail/core/text.hpp>
#include <memfail/grade/answer_rules.hpp>
#include <memfail/grade/declines.hpp>
#include <memfail/grade/evidence.hpp>

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfail::grade {

namespace {

std::optional<char> letter_from_json(const nlohmann::json& j, char last) {
    if (!j.is_object()) return std::nullopt;
    for (const char* key : {"selected_choice", "answer", "choice"}) {
        auto it = j.find(key);
        if (it == j.end() || !it->is_string()) continue;
        std::string_view v = text::trim(it->get_ref<const std::string&>());
        // "C", "C.", "(C)", "C) text": the first character that is a letter decides.
        while (!v.empty() && (v.front() == '(' || v.front() == '[')) v.remove_prefix(1);
        if (!v.empty() && v.front() >= 'A' && v.front() <= last &&
            (v.size() == 1 || !std::isalpha(static_cast<unsigned char>(v[1]))))
            return v.front();
        if (!v.empty() && v.front() >= 'a' && v.front() <= last - 'A' + 'a' && v.size() == 1)
            return static_cast<char>(v.front() - 'a' + 'A');
    }
    return std::nullopt;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '\''; }

}  // namespace

std::optional<char> parse_choice_letter(std::string_view reply, char last) {
    const std::string_view trimmed = text::trim(reply);
    // 1. The whole reply (allowing a ```json fence) is a JSON object.
    std::string_view body = trimmed;
    if (text::starts_with(body, "```")) {
        body.remove_prefix(3);
        if (auto nl = body.find('\n'); nl != std::string_view::npos) body.remove_prefix(nl + 1);
        if (auto fence = body.rfind("```"); fence != std::string_view::npos) body = body.substr(0, fence);
    }
    {
        auto j = nlohmann::json::parse(body, nullptr, false);
        if (!j.is_discarded())
            if (auto l = letter_from_json(j, last)) return l;
    }
    // 2. An embedded object: try each '{' with its matching '}'.
    for (std::size_t open = trimmed.find('{'); open != std::string_view::npos; open = trimmed.find('{', open + 1)) {
        int depth = 0;
        bool in_string = false;
        for (std::size_t i = open; i < trimmed.size(); ++i) {
            const char c = trimmed[i];
            if (in_string) {
                if (c == '\\') ++i;
                else if (c == '"') in_string = false;
                continue;
            }
            if (c == '"') in_string = true;
            else if (c == '{') ++depth;
            else if (c == '}' && --depth == 0) {
                auto j = nlohmann::json::parse(trimmed.substr(open, i - open + 1), nullptr, false);
                if (!j.is_discarded())
                    if (auto l = letter_from_json(j, last)) return l;
                break;
            }
        }
    }
    // 3. The last standalone capital letter. "A" is skipped when it reads as the article: followed by
    // a space and a lower-case word ("A dog", "is a A"), since a bare option letter is followed by
    // punctuation, a parenthesis, a line end or the end of the reply.
    std::optional<char> found;
    for (std::size_t i = 0; i < trimmed.size(); ++i) {
        const char c = trimmed[i];
        if (c < 'A' || c > last) continue;
        if (i > 0 && is_word_char(trimmed[i - 1])) continue;
        if (i + 1 < trimmed.size() && is_word_char(trimmed[i + 1])) continue;
        if (c == 'A' && i + 2 < trimmed.size() && trimmed[i + 1] == ' ' &&
            std::islower(static_cast<unsigned char>(trimmed[i + 2])))
            continue;
        found = c;
    }
    return found;
}

std::optional<std::string> parse_yes_no(std::string_view reply) {
    // The first sentence in the evidence matcher's tokens, labels kept: "Yes: ..." and "Answer: no"
    // both commit.
    const auto sentences = text::split_sentences(reply);
    const auto first = evidence::tokens(sentences.empty() ? reply : std::string_view(sentences.front()));
    for (const auto& w : first) {
        if (w == "yes" || w == "yeah" || w == "yep") return std::string("yes");
        if (w == "no" || w == "nope") return std::string("no");
    }
    return std::nullopt;
}

bool looks_like_abstention(std::string_view reply) { return is_plain_abstention(read_decline(reply)); }

namespace {

// Whether `reply` states `variants` (any of them): `stated` when a unit holds one with no negation
// or hedge in that unit, `qualified` when the only units holding one also negate or hedge.
enum class Stated { no, qualified, stated };
Stated states(const std::vector<evidence::Unit>& units, const std::vector<std::string>& variants) {
    const auto& lex = evidence::lexicon();
    Stated best = Stated::no;
    for (const auto& variant : variants) {
        const auto phrase = evidence::tokens(variant);
        if (phrase.empty()) continue;
        for (const auto& u : units) {
            if (!evidence::contains(u.tokens, phrase)) continue;
            const bool qualified = std::any_of(u.tokens.begin(), u.tokens.end(), [&](const std::string& t) {
                return (lex.is_negator(t) || lex.is_hedge(t)) && !evidence::contains(phrase, {t});
            });
            if (!qualified) return Stated::stated;
            best = Stated::qualified;
        }
    }
    return best;
}

}  // namespace

AnswerVerdict grade_answer_by_rules(const data::Probe& probe, std::string_view reply) {
    AnswerVerdict v;
    switch (probe.kind) {
        case data::ProbeKind::mcq: {
            // Read exactly, as the paper grades Long-Hop: a reply with no option letter is wrong.
            const char last = static_cast<char>('A' + std::max<std::size_t>(probe.choices.size(), 1) - 1);
            auto letter = parse_choice_letter(reply, last);
            v.parsed = letter ? std::string(1, *letter) : "";
            v.correct = letter && v.parsed == probe.correct_choice;
            v.reason = !letter ? "no option letter could be read from the reply"
                               : "selected " + v.parsed + ", the answer is " + probe.correct_choice;
            return v;
        }
        case data::ProbeKind::yes_no: {
            auto expected = parse_yes_no(probe.answer);
            auto got = parse_yes_no(reply);
            v.parsed = got.value_or("");
            v.decided = expected && got;
            v.correct = v.decided && *expected == *got;
            v.reason = !got        ? "the reply commits to neither yes nor no in its first sentence; only a judge can read it"
                       : !expected ? "the reference answer says neither yes nor no; only a judge can grade this answer"
                                   : "answered " + *got + ", the reference says " + *expected;
            return v;
        }
        case data::ProbeKind::abstain: {
            // An abstention the rules can prove: the reply declines and says nothing else. One that
            // also guesses, or answers in another clause, or declines in words the rules do not know,
            // is for a judge; one that gives the trap answer (LoCoMo's adversarial_answer) without
            // declining answers instead of abstaining.
            const DeclineReading r = read_decline(reply);
            const auto trap = probe.meta.find("adversarial_answer");
            const bool names_trap = trap != probe.meta.end() && trap->is_string() &&
                                    !evidence::tokens(trap->get_ref<const std::string&>()).empty() &&
                                    evidence::contains(evidence::tokens(reply), evidence::tokens(trap->get_ref<const std::string&>()));
            if (is_plain_abstention(r) && !names_trap) {
                v.correct = true;
                v.parsed = "abstained";
                v.reason = "the reply declines (\"" + r.phrase + "\") and says nothing else";
                return v;
            }
            if (names_trap && !r.declines) {
                v.reason = "the reply answers with '" + trap->get<std::string>() + "' instead of declining";
                return v;
            }
            v.decided = false;
            v.reason = names_trap ? "the reply declines but also names '" + trap->get<std::string>() +
                                        "'; only a judge can tell whether it answers"
                       : r.declines && r.guesses ? "the reply declines, then guesses; only a judge can tell whether it answers"
                       : r.declines ? "the reply declines in part and says something else too; only a judge can tell "
                                      "whether it answers"
                                    : "the reply does not decline in words the rules know; only a judge can tell "
                                      "whether it answers instead of abstaining";
            return v;
        }
        case data::ProbeKind::list:
        case data::ProbeKind::open: {
            // A reply that only declines an answerable question is wrong. One that declines a part
            // ("she never said when") and answers the rest is graded on what it states.
            if (looks_like_abstention(reply)) {
                // Unless it names an expected detail after all ("I don't know where you work; you
                // mentioned Paris"): then what it commits to is for a judge.
                const auto reply_tokens = evidence::tokens(reply);
                const bool names_detail = std::any_of(probe.evidence.begin(), probe.evidence.end(), [&](const data::EvidenceFact& f) {
                    return std::any_of(f.key_details.begin(), f.key_details.end(), [&](const data::KeyDetail& d) {
                        return d.name != "entity" && std::any_of(d.variants.begin(), d.variants.end(), [&](const std::string& var) {
                                   const auto t = evidence::tokens(var);
                                   return !t.empty() && evidence::contains(reply_tokens, t);
                               });
                    });
                });
                v.parsed = "abstained";
                if (names_detail) {
                    v.decided = false;
                    v.reason = "the reply declines yet names an expected detail; only a judge can tell what it commits to";
                    return v;
                }
                v.reason = "the reply says it has no information, but the question has an answer";
                return v;
            }
            const auto units = evidence::units(reply);
            std::vector<std::string> found, missing, qualified;
            std::size_t uncheckable = 0;
            for (const auto& fact : probe.evidence) {
                // The deciding detail: the last key detail that does not name the entity (persona
                // facts list the person first; coexisting facts have only the preference).
                const data::KeyDetail* decisive = nullptr;
                for (const auto& d : fact.key_details)
                    if (d.name != "entity") decisive = &d;
                // An imported fact whose detail could not be derived: the rules cannot check it.
                if (!decisive || decisive->variants.empty()) {
                    ++uncheckable;
                    continue;
                }
                switch (states(units, decisive->variants)) {
                    case Stated::stated: found.push_back(decisive->variants.front()); break;
                    case Stated::qualified: qualified.push_back(decisive->variants.front()); break;
                    case Stated::no: missing.push_back(decisive->variants.front()); break;
                }
            }
            v.parsed = text::join(found, "; ");
            // Correct only when every detail is stated plainly; a detail not found may be said in
            // other words, and one found under a negation or hedge may be denied: neither decides.
            v.decided = missing.empty() && qualified.empty() && uncheckable == 0 && !found.empty();
            v.correct = v.decided;
            v.reason = v.correct ? "the reply names every expected detail"
                       : uncheckable > 0
                           ? std::to_string(uncheckable) + " expected fact(s) have no detail the rules can look for; "
                                                           "only a judge can grade this answer"
                       : !qualified.empty()
                           ? "the reply names " + text::join(qualified, "; ") +
                                 " only beside a negation or hedge; only a judge can tell whether it is stated"
                       : found.empty() && missing.empty()
                           ? std::string("the probe has no expected detail; only a judge can grade this answer")
                           : "the reply does not name " + text::join(missing, "; ") +
                                 " in these words; only a judge can tell whether it says it otherwise";
            return v;
        }
    }
    return v;
}

}  // namespace memfail::grade

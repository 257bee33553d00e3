// SPDX-License-Identifier: MIT
// Deterministic answer parsing.
#include <memfail/core/text.hpp>
#include <memfail/grade/answer_rules.hpp>

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
    const auto sentences = text::split_sentences(reply);
    const std::string first = sentences.empty() ? std::string(reply) : sentences.front();
    for (const auto& w : text::words(first)) {
        const std::string lower = text::to_lower(w);
        if (lower == "yes" || lower == "yeah" || lower == "yep") return std::string("yes");
        if (lower == "no" || lower == "nope") return std::string("no");
    }
    return std::nullopt;
}

bool looks_like_abstention(std::string_view reply) {
    const std::string n = text::normalize(reply);
    static const char* const k_phrases[] = {
        "don't have any information", "do not have any information", "don't have information",
        "do not have information", "no information about", "no information on", "not have any details",
        "don't have any details", "don't know anything about", "do not know anything about",
        "don't have any record", "no record of", "nothing about", "not familiar with",
        "haven't told me about", "have not told me about", "haven't mentioned", "never mentioned",
        "don't have details", "i'm not sure who", "not aware of any", "don't recall",
        "no memories about", "no notes about", "can't find anything", "cannot find anything"};
    for (const char* p : k_phrases)
        if (text::normalized_contains(n, text::normalize(p))) return true;
    return false;
}

AnswerVerdict grade_answer_by_rules(const data::Probe& probe, std::string_view reply) {
    AnswerVerdict v;
    switch (probe.kind) {
        case data::ProbeKind::mcq: {
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
            v.correct = expected && got && *expected == *got;
            v.reason = !got ? "the reply commits to neither yes nor no"
                            : "answered " + *got + ", the reference says " + expected.value_or("?");
            return v;
        }
        case data::ProbeKind::abstain: {
            v.correct = looks_like_abstention(reply);
            v.parsed = v.correct ? "abstained" : "answered";
            v.reason = v.correct ? "the reply says it has no information" : "the reply answers instead of abstaining";
            return v;
        }
        case data::ProbeKind::list:
        case data::ProbeKind::open: {
            const std::string normalized = text::normalize(reply);
            std::vector<std::string> found, missing;
            std::size_t uncheckable = 0;
            for (const auto& fact : probe.evidence) {
                // The deciding detail: the last key detail that does not name the entity (persona
                // facts list the person first; coexisting facts have only the preference).
                const data::KeyDetail* decisive = nullptr;
                for (const auto& d : fact.key_details)
                    if (d.name != "entity") decisive = &d;
                // An imported fact whose detail could not be derived: the rules cannot check it.
                if (!decisive) {
                    ++uncheckable;
                    continue;
                }
                bool hit = false;
                for (const auto& variant : decisive->variants)
                    if (text::normalized_contains(normalized, text::normalize(variant))) hit = true;
                (hit ? found : missing).push_back(decisive->variants.front());
            }
            v.parsed = text::join(found, "; ");
            v.correct = missing.empty() && !found.empty() && uncheckable == 0;
            v.reason = !missing.empty() ? "the reply does not name: " + text::join(missing, "; ")
                       : uncheckable > 0
                           ? std::to_string(uncheckable) + " expected fact(s) have no detail the rules can look for; "
                                                           "only a judge can grade this answer"
                           : "the reply names every expected detail";
            return v;
        }
    }
    return v;
}

}  // namespace memfail::grade

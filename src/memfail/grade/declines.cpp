// SPDX-License-Identifier: MIT
// Declines read clause by clause (declines.hpp).
#include <memfail/core/error.hpp>
#include <memfail/core/text.hpp>
#include <memfail/embedded/evidence_lexicon.hpp>
#include <memfail/grade/declines.hpp>
#include <memfail/grade/evidence.hpp>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfail::grade {

namespace {

// Phrases by their first token, so a clause is scanned once whatever the number of phrases.
struct PhraseIndex {
    std::unordered_map<std::string, std::vector<evidence::Tokens>> by_first;
    void add(evidence::Tokens phrase) {
        if (!phrase.empty()) by_first[phrase.front()].push_back(std::move(phrase));
    }
    bool found_in(const evidence::Tokens& tokens) const {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const auto it = by_first.find(tokens[i]);
            if (it == by_first.end()) continue;
            for (const auto& p : it->second)
                if (i + p.size() <= tokens.size() && std::equal(p.begin(), p.end(), tokens.begin() + static_cast<std::ptrdiff_t>(i)))
                    return true;
        }
        return false;
    }
};

struct DeclineLexicon {
    PhraseIndex anywhere, guesses;
    std::vector<evidence::Tokens> alone, explanations;
    std::unordered_set<std::string> filler;
};

const DeclineLexicon& decline_lexicon() {
    static const DeclineLexicon lex = [] {
        const auto* file = embedded::evidence_lexicon::find("declines.json");
        MF_ASSERT(file != nullptr, "the declines lexicon is embedded");
        const auto j = nlohmann::json::parse(file->content);
        DeclineLexicon out;
        auto phrases = [&](const char* key, std::vector<evidence::Tokens>& into) {
            for (const auto& p : j.at(key)) {
                auto t = evidence::tokens(p.get<std::string>());
                if (!t.empty()) into.push_back(std::move(t));
            }
        };
        auto indexed = [&](const char* key, PhraseIndex& into) {
            for (const auto& p : j.at(key)) into.add(evidence::tokens(p.get<std::string>()));
        };
        indexed("anywhere", out.anywhere);
        phrases("alone", out.alone);
        indexed("guesses", out.guesses);
        phrases("explanations", out.explanations);
        for (const auto& w : j.at("filler"))
            for (auto& t : evidence::tokens(w.get<std::string>())) out.filler.insert(std::move(t));
        return out;
    }();
    return lex;
}

// The clauses of an answer: its sentences (and lines, and ';' or ':' parts), each further cut
// before "but", "though", "although", "however" and a dash, where an answer turns from declining
// to answering.
std::vector<std::string> clauses(std::string_view answer) {
    std::vector<std::string> out;
    std::string current;
    auto flush = [&] {
        if (!text::trim(current).empty()) out.emplace_back(text::trim(current));
        current.clear();
    };
    for (std::size_t i = 0; i < answer.size(); ++i) {
        const char c = answer[i];
        const bool end = c == '.' || c == '!' || c == '?' || c == ';' || c == '\n' ||
                         (c == ':' && (i + 1 >= answer.size() || answer[i + 1] == ' '));
        // A decimal point or thousands separator inside a number does not end a clause.
        const bool in_number = c == '.' && i > 0 && i + 1 < answer.size() &&
                               std::isdigit(static_cast<unsigned char>(answer[i - 1])) &&
                               std::isdigit(static_cast<unsigned char>(answer[i + 1]));
        if (end && !in_number) {
            flush();
            continue;
        }
        current.push_back(c);
        // " -- ", " - " and an em dash between words turn the clause.
        if (c == ' ' && i + 2 < answer.size() && (answer.compare(i + 1, 2, "- ") == 0 || answer.compare(i + 1, 3, "\xE2\x80\x94") == 0)) {
            flush();
        }
    }
    flush();
    // Cut before the turning words.
    std::vector<std::string> cut;
    for (const auto& clause : out) {
        std::string rest = clause;
        for (;;) {
            std::size_t at = std::string::npos;
            const std::string lowered = text::to_lower(rest);
            for (const char* w : {" but ", " though ", " although ", " however ", ", yet "}) {
                const auto k = lowered.find(w);
                if (k != std::string::npos && k > 0 && (at == std::string::npos || k < at)) at = k;
            }
            if (at == std::string::npos) break;
            const std::string before(text::trim(rest.substr(0, at)));
            cut.push_back(before);
            rest = std::string(text::trim(rest.substr(at + 1)));
            // "You mentioned the fence but did not mention the cows": the second clause keeps the
            // first one's subject, so it reads as the decline it is.
            const std::string first_word = text::to_lower(before.substr(0, before.find(' ')));
            const std::string turn = rest.substr(0, rest.find(' '));  // "but", "though", ...
            const std::string after = text::to_lower(std::string(text::trim(rest.substr(turn.size()))));
            for (const char* verb : {"did not ", "didn't ", "didn’t ", "never ", "have not ", "haven't ", "has not ", "hasn't "})
                if (after.rfind(verb, 0) == 0 && (first_word == "you" || first_word == "i" || first_word == "she" ||
                                                  first_word == "he" || first_word == "they" || first_word == "we")) {
                    rest = turn + " " + first_word + " " + std::string(text::trim(rest.substr(turn.size())));
                    break;
                }
        }
        if (!rest.empty()) cut.push_back(std::move(rest));
    }
    return cut;
}

}  // namespace

DeclineReading read_decline(std::string_view answer) {
    const DeclineLexicon& lex = decline_lexicon();
    DeclineReading r;
    bool every = true, any_content = false;
    enum class Kind { none, declines, explains, answers };
    Kind last = Kind::none;
    for (const auto& clause : clauses(answer)) {
        const evidence::Tokens tokens = evidence::tokens(evidence::strip_labels(clause));
        evidence::Tokens content;
        for (const auto& t : tokens)
            if (!lex.filler.count(t)) content.push_back(t);
        if (content.empty()) continue;  // "Sorry!", "Unfortunately,": says nothing either way
        any_content = true;
        Kind kind = Kind::answers;
        if (lex.anywhere.found_in(tokens) || std::any_of(lex.alone.begin(), lex.alone.end(), [&](const evidence::Tokens& p) {
                return content == p;
            }))
            kind = Kind::declines;
        else if (std::any_of(lex.explanations.begin(), lex.explanations.end(), [&](const evidence::Tokens& p) {
                     return tokens.size() >= p.size() && std::equal(p.begin(), p.end(), tokens.begin());
                 }))
            // "You mentioned the fence": reports what was said; beside a decline it neither declines
            // nor answers, and alone it is no decline.
            kind = Kind::explains;
        else if (content.front() == "not" && (last == Kind::declines || last == Kind::explains))
            // "... but not your hamster": the clause before it goes on.
            kind = last;
        if (kind == Kind::declines) {
            if (!r.declines) r.phrase = clause;
            r.declines = true;
        } else if (kind == Kind::answers) {
            every = false;
        }
        last = kind;
        if (lex.guesses.found_in(tokens)) r.guesses = true;
    }
    r.wholly = r.declines && every && any_content;
    return r;
}

}  // namespace memfail::grade

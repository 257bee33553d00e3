// SPDX-License-Identifier: MIT
// MemFail CSV release -> memfail scenarios.
#include <memfail/suites/memfail/import_csv.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/csv.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

namespace memfail::suites::memfail_suite {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Words with their place in the original text, so a matched run can be quoted as the essay spells
// it ("Vira's anxiety") instead of in normalised form ("viras anxiety").

// A crude English stem, good enough to see that "reading" and "read", "rains" and "raining",
// "bake" and "baking" are one word: drops -ing/-ed/-s, a final "e" and a doubled last consonant.
// Only used as a fallback after exact matching, and only for words of 4+ letters.
std::string stem_of(std::string w) {
    auto ends = [&](std::string_view suffix) { return text::ends_with(w, suffix); };
    if (w.size() >= 6 && ends("ing"))
        w.resize(w.size() - 3);
    else if (w.size() >= 5 && ends("ied"))
        w = w.substr(0, w.size() - 3) + "y";
    else if (w.size() >= 5 && ends("ies"))
        w = w.substr(0, w.size() - 3) + "y";
    else if (w.size() >= 5 && ends("ed"))
        w.resize(w.size() - 2);
    else if (w.size() >= 4 && ends("s") && !ends("ss") && !ends("us") && !ends("is"))
        w.resize(w.size() - 1);
    if (w.size() >= 4 && w.back() == 'e') w.pop_back();
    if (w.size() >= 4 && w[w.size() - 1] == w[w.size() - 2] &&
        std::string_view("aeiouls").find(w.back()) == std::string_view::npos)
        w.pop_back();
    return w;
}

struct Token {
    std::string word;  // normalised
    // The word without a possessive "s" when the text spells one ("Thorne's", "Thorne’s" -> "thorne"),
    // else empty: a phrase naming "Thorne" is stated by "Thorne's".
    std::string base;
    std::string stem;  // stem_of(base or word)
    std::size_t begin = 0;
    std::size_t end = 0;  // one past the last byte of the word
};

// Splits `s` exactly as text::normalize does: the words of the result, joined by single spaces,
// equal normalize(s). Both apostrophes (' and U+2019, and U+2018) join a word, as there.
std::vector<Token> tokenize(std::string_view s) {
    std::vector<Token> out;
    bool in_word = false;
    std::size_t apostrophe_at = std::string::npos;  // length of the word when an apostrophe was seen
    auto close = [&] {
        if (in_word) {
            Token& t = out.back();
            if (apostrophe_at != std::string::npos && apostrophe_at + 1 == t.word.size() && t.word.back() == 's' &&
                t.word.size() > 1)
                t.base = t.word.substr(0, t.word.size() - 1);
            t.stem = stem_of(t.base.empty() ? t.word : t.base);
        }
        in_word = false;
        apostrophe_at = std::string::npos;
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80) {
            const unsigned char third = static_cast<unsigned char>(s[i + 2]);
            i += 2;
            if (third != 0x99 && third != 0x98)
                close();  // dashes and other punctuation split
            else if (in_word)
                apostrophe_at = out.back().word.size();  // curly apostrophes join
            continue;
        }
        if (c == '\'') {
            if (in_word) apostrophe_at = out.back().word.size();
            continue;
        }
        if (std::isalnum(c) || c >= 0x80) {
            if (!in_word) {
                out.push_back({{}, {}, {}, i, i});
                in_word = true;
            }
            out.back().word.push_back(static_cast<char>(std::tolower(c)));
            out.back().end = i + 1;
        } else {
            close();
        }
    }
    close();
    return out;
}

struct Sentence {
    std::string text;
    std::string normalized;
    std::vector<Token> tokens;
};

std::vector<Sentence> sentences_of(std::string_view prose) {
    std::vector<Sentence> out;
    for (auto& s : text::split_sentences(prose)) {
        Sentence sentence;
        sentence.normalized = text::normalize(s);
        sentence.tokens = tokenize(s);
        sentence.text = std::move(s);
        out.push_back(std::move(sentence));
    }
    return out;
}

// Function-ish words that pass text::is_stopword but make poor key details on their own ("only",
// "after"): a run may not start or end on one, and the single-word fallback never picks one.
bool is_weak_word(std::string_view w) {
    static const std::unordered_set<std::string_view> k_weak = {
        "only",   "whenever", "always", "usually", "often", "never", "sometimes", "every",  "each",
        "more",   "most",     "less",   "really",  "even",  "still", "before",    "after",  "while",
        "during", "until",    "once",   "one",     "own",   "like",  "get",       "gets",   "got",
        "being",  "other",    "such",   "same",    "ever",  "yet",   "whether",   "because", "feeling",
        "feels",  "feel",     "unless", "except",  "those", "these"};
    return k_weak.count(w) > 0;
}

bool is_content_word(std::string_view w) { return !text::is_stopword(w) && !is_weak_word(w); }

// How phrase words may match essay words: `exact` (the word, or the possessive of it) or `stem`
// (also another form of the same word, stem_of()).
enum class Fold { exact, stem };

// A phrase split into normalised words and their stems.
struct Phrase {
    std::vector<std::string> words;
    std::vector<std::string> stems;
    explicit Phrase(std::vector<std::string> w) : words(std::move(w)) {
        for (const auto& x : words) stems.push_back(stem_of(x));
    }
};

bool token_matches(const Token& t, const Phrase& phrase, std::size_t i, Fold fold) {
    const std::string& w = phrase.words[i];
    if (t.word == w || (!t.base.empty() && t.base == w)) return true;
    // Stems only for words long enough that a shared stem means a shared word.
    return fold == Fold::stem && w.size() >= 4 && t.word.size() >= 3 && phrase.stems[i].size() >= 3 &&
           t.stem == phrase.stems[i];
}

// Where the phrase's words [first, first + count) occur as consecutive tokens of `sentence`: the
// span as the sentence spells it, or nullopt. The span normalises to words the sentence holds, so
// it is always a valid key-detail variant for that sentence.
std::optional<std::string> spelled_in(const Sentence& sentence, const Phrase& phrase, std::size_t first,
                                      std::size_t count, Fold fold = Fold::exact) {
    const auto& tokens = sentence.tokens;
    if (count == 0 || tokens.size() < count || first + count > phrase.words.size()) return std::nullopt;
    for (std::size_t k = 0; k + count <= tokens.size(); ++k) {
        bool match = true;
        for (std::size_t j = 0; j < count && match; ++j) match = token_matches(tokens[k + j], phrase, first + j, fold);
        if (!match) continue;
        return sentence.text.substr(tokens[k].begin, tokens[k + count - 1].end - tokens[k].begin);
    }
    return std::nullopt;
}

struct RunOptions {
    std::size_t min_words = 2;
    // Words that may not make up a whole run on their own (the entity's name: it has its own detail).
    const std::set<std::string>* excluded = nullptr;
    Fold fold = Fold::exact;
};

// Longest qualifying run of `phrase` found in any of `sentences`; see longest_word_run().
std::optional<std::string> find_longest_run(const Phrase& phrase, const std::vector<Sentence>& sentences,
                                            const RunOptions& options) {
    const auto& words = phrase.words;
    const std::size_t n = words.size();
    for (std::size_t len = n; len >= std::max<std::size_t>(options.min_words, 1); --len) {
        std::optional<std::string> best;
        std::size_t best_content = 0;
        for (std::size_t first = 0; first + len <= n; ++first) {
            if (!is_content_word(words[first]) || !is_content_word(words[first + len - 1])) continue;
            std::size_t content = 0;
            bool all_excluded = true;
            for (std::size_t j = first; j < first + len; ++j) {
                if (is_content_word(words[j])) ++content;
                if (!options.excluded || !options.excluded->count(words[j])) all_excluded = false;
            }
            if (all_excluded || content <= best_content) continue;
            for (const auto& sentence : sentences) {
                if (auto spelled = spelled_in(sentence, phrase, first, len, options.fold)) {
                    best = std::move(spelled);
                    best_content = content;
                    break;
                }
            }
        }
        if (best) return best;
        if (len == 1) break;
    }
    return std::nullopt;
}

// Simple English number forms of a phrase's last word: "beanie" -> "beanies", "cats" -> "cat",
// "berries" -> "berry", "boxes" -> "box", "glass" -> "glasses". A word ending in "oes" gets both
// guesses ("tomato", "shoe"); a wrong guess is harmless since a variant only counts where it occurs.
std::vector<std::string> number_forms(const std::string& phrase) {
    const std::size_t space = phrase.find_last_of(' ');
    const std::string head = space == std::string::npos ? std::string{} : phrase.substr(0, space + 1);
    const std::string w = space == std::string::npos ? phrase : phrase.substr(space + 1);
    std::vector<std::string> forms;
    if (w.size() < 3) return forms;
    auto ends = [&](std::string_view suffix) { return text::ends_with(text::to_lower(w), suffix); };
    auto stem = [&](std::size_t drop) { return head + w.substr(0, w.size() - drop); };
    const bool looks_plural = ends("s") && !ends("ss") && !ends("us") && !ends("is");
    if (looks_plural) {
        if (ends("ies"))
            forms.push_back(stem(3) + "y");
        else if (ends("ches") || ends("shes") || ends("xes") || ends("sses") || ends("zes"))
            forms.push_back(stem(2));
        else if (ends("oes"))
            forms = {stem(2), stem(1)};
        else
            forms.push_back(stem(1));
    } else if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh")) {
        forms.push_back(phrase + "es");
    } else if (ends("y") &&
               std::string_view("aeiou").find(text::to_lower(w)[w.size() - 2]) == std::string_view::npos) {
        forms.push_back(stem(1) + "ies");
    } else {
        forms.push_back(phrase + "s");
    }
    return forms;
}

// How many documents (essays, statements, facts) of one file hold each word: "rarest" below means
// rarest in the file being imported.
struct DocumentFrequency {
    std::map<std::string, std::size_t> counts;
    std::size_t documents = 0;

    void add(std::string_view document) {
        const auto words = text::words(document);
        for (const auto& w : std::set<std::string>(words.begin(), words.end())) ++counts[w];
        ++documents;
    }
    std::size_t of(const std::string& word) const {
        const auto it = counts.find(word);
        return it == counts.end() ? 0 : it->second;
    }
    // A word in more than a third of a file's documents (and in at least three) tells no row apart:
    // a rule's condition "found" as such a word ("room", "day") is not a separable phrase.
    bool too_common(const std::string& word) const {
        const std::size_t n = of(word);
        return n >= 3 && n * 3 > documents;
    }
};

// The rarest content word of `phrase` (or its singular/plural, or another form of it) that occurs
// in `sentences`, as the sentence spells it.
std::optional<std::string> find_rarest_word(const Phrase& phrase, const std::vector<Sentence>& sentences,
                                            const DocumentFrequency& df, const std::set<std::string>* excluded) {
    struct Candidate {
        std::size_t frequency;
        std::size_t length;
        std::string word;
        std::string spelled;
    };
    std::optional<Candidate> best;
    for (const auto& w : phrase.words) {
        if (!is_content_word(w) || w.size() < 3 || (excluded && excluded->count(w))) continue;
        std::vector<std::string> forms = {w};
        for (auto& f : number_forms(w)) forms.push_back(std::move(f));
        std::optional<std::string> spelled;
        std::string matched;
        for (const auto& form : forms) {
            const Phrase single({form});
            for (const auto& sentence : sentences)
                if ((spelled = spelled_in(sentence, single, 0, 1))) break;
            if (spelled) {
                matched = form;
                break;
            }
        }
        if (!spelled) {
            const Phrase single({w});
            for (const auto& sentence : sentences)
                if ((spelled = spelled_in(sentence, single, 0, 1, Fold::stem))) break;
            if (spelled) matched = text::normalize(*spelled);
        }
        if (!spelled) continue;
        const Candidate c{df.of(matched), w.size(), matched, *spelled};
        // Ties go to the longer word, then to the earlier one.
        const bool better = !best || c.frequency < best->frequency ||
                            (c.frequency == best->frequency && c.length > best->length);
        if (better) best = c;
    }
    if (!best || df.too_common(best->word)) return std::nullopt;
    return best->spelled;
}

enum class Match { verbatim, run, rare_word, missing };

struct Derived {
    std::string variant;
    Match how = Match::missing;
    bool found() const { return how != Match::missing; }
};

// Derives one key detail for `phrase` from `sentences`: the phrase itself when it occurs inside a
// sentence (also as a possessive or another form of its words: "Italy's", "read" for "reading"),
// else the longest run of its words (>= 2, see longest_word_run), else its rarest content word,
// else nothing (Match::missing, for the caller to flag).
Derived derive_detail(std::string_view phrase, const std::vector<Sentence>& sentences,
                      const DocumentFrequency& df, const std::set<std::string>* excluded) {
    const std::string whole = std::string(text::trim(phrase));
    const Phrase words(text::words(whole));
    if (words.words.empty()) return {whole, Match::missing};
    for (const Fold fold : {Fold::exact, Fold::stem})
        for (const auto& sentence : sentences)
            if (auto spelled = spelled_in(sentence, words, 0, words.words.size(), fold))
                // Keep the column's spelling when the essay says exactly that.
                return {text::normalize(*spelled) == text::join(words.words, " ") ? whole : *spelled,
                        Match::verbatim};
    for (const Fold fold : {Fold::exact, Fold::stem})
        if (auto run = find_longest_run(words, sentences, {2, excluded, fold})) return {*run, Match::run};
    if (auto word = find_rarest_word(words, sentences, df, excluded)) return {*word, Match::rare_word};
    return {whole, Match::missing};
}

bool sentence_covers(const Sentence& sentence, const data::KeyDetail& detail) {
    for (const auto& v : detail.variants)
        if (text::normalized_contains(sentence.normalized, text::normalize(v))) return true;
    return false;
}

// Completes `chosen` (sentences already known to state the fact) with, for every key detail none of
// them holds, the earliest sentence that does: a fact's text and statements hold all its details.
std::vector<bool> cover_details(const std::vector<Sentence>& sentences, std::vector<bool> chosen,
                                const std::vector<data::KeyDetail>& details) {
    for (const auto& detail : details) {
        bool covered = false;
        for (std::size_t i = 0; i < sentences.size() && !covered; ++i)
            covered = chosen[i] && sentence_covers(sentences[i], detail);
        if (covered) continue;
        for (std::size_t i = 0; i < sentences.size(); ++i) {
            if (sentence_covers(sentences[i], detail)) {
                chosen[i] = true;
                break;
            }
        }
    }
    return chosen;
}

// Fills a fact's `statements` (the chosen sentences, verbatim, in essay order) and `text` (them
// joined), first adding sentences for details the chosen ones miss. With no sentence chosen the
// whole `fallback` text stands for the fact.
void set_statements(data::EvidenceFact& fact, const std::vector<Sentence>& sentences, std::vector<bool> chosen,
                    const std::string& fallback) {
    chosen = cover_details(sentences, std::move(chosen), fact.key_details);
    fact.statements.clear();
    for (std::size_t i = 0; i < sentences.size(); ++i)
        if (chosen[i]) fact.statements.push_back(sentences[i].text);
    fact.text = text::join(fact.statements, " ");
    if (fact.text.empty()) fact.text = fallback;
}

// "Yuki Tanaka" -> {"Yuki Tanaka", "Yuki Tanaka's", "Yuki", "Yuki's"}: essays introduce a person by
// full name and then use the first name, and a possessive is its own variant ("Yuki's" normalises
// to "yukis", which "Yuki" does not match on word boundaries), as the generators spell it. A
// leading title is skipped ("Dr. Amara Osei" -> "Amara").
std::vector<std::string> entity_variants(const std::string& entity) {
    std::vector<std::string> variants = {entity, entity + "'s"};
    std::vector<std::string> parts;
    for (const auto& p : text::split(entity, ' '))
        if (!p.empty()) parts.push_back(p);
    static const std::set<std::string> k_titles = {"mr",  "mrs",     "ms",   "dr",   "prof",
                                                   "sir", "captain", "aunt", "uncle"};
    std::size_t first = 0;
    while (first + 1 < parts.size() && k_titles.count(text::normalize(parts[first]))) ++first;
    if (parts.size() > 1) {
        std::string given = parts[first];
        while (!given.empty() && (given.back() == ',' || given.back() == '.')) given.pop_back();
        if (!given.empty() && given != entity && !text::normalize(given).empty()) {
            variants.push_back(given);
            variants.push_back(given + "'s");
        }
    }
    return variants;
}

data::KeyDetail entity_detail(const std::string& entity) {
    return {"entity", entity_variants(entity), data::DetailRole::identity};
}

data::KeyDetail make_detail(std::string name, std::string variant) {
    const data::DetailRole role = data::default_detail_role(name);
    return {std::move(name), {std::move(variant)}, role};
}

std::set<std::string> word_set(std::string_view s) {
    const auto words = text::words(s);
    return {words.begin(), words.end()};
}

std::string quote_short(std::string_view s) {
    std::string out(s.substr(0, 80));
    if (s.size() > 80) {
        // Never cut a UTF-8 sequence in half: the message would not be valid UTF-8.
        while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
        if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
        out += "...";
    }
    return "'" + out + "'";
}

// True when `s` is well-formed UTF-8 (no stray continuation bytes, no truncated or overlong
// sequences, no surrogates): JSON output needs it, and a release cell that is not is corrupt.
bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (std::size_t k = 1; k <= n; ++k) {
            if (i + k >= s.size()) return false;
            const unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

// Exclusivity and polarity words a rule sentence states: dropping one changes the rule ("only
// when" becomes "when", "never" becomes nothing), so each is a qualifier detail of the fact, as the
// generators list them. Each word is its own variant, spelled as the sentence has it.
std::vector<data::KeyDetail> qualifiers_in(const std::vector<const Sentence*>& rule_sentences) {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> k_kinds = {
        {"exclusivity", {"only", "solely", "exclusively", "except", "unless"}},
        {"polarity", {"never", "refuses", "refuse", "refused"}}};
    std::vector<data::KeyDetail> out;
    for (const auto& [name, words] : k_kinds) {
        for (const auto& w : words) {
            bool said = false;
            for (const Sentence* s : rule_sentences)
                for (const auto& t : s->tokens) said = said || t.word == w;
            if (said) out.emplace_back(name, std::vector<std::string>{w}, data::DetailRole::qualifier);
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Cell access with "file:line: column 'x'" errors.

class Row {
public:
    Row(const CsvTable& table, const CsvRecord& record, std::size_t number)
        : m_table(table), m_record(record), m_number(number) {}

    std::size_t number() const { return m_number; }

    // Prefix of a warning about this row.
    std::string at() const {
        return m_table.source + ":" + std::to_string(m_record.line) + ": row " + std::to_string(m_number);
    }

    Error error(std::string_view column, std::string message) const {
        return make_error(ErrorKind::invalid_input, std::move(message), m_table.where(m_record.line, column));
    }

    // Every cell must be UTF-8: the scenario is written as JSON.
    Result<void> check_encoding() const {
        for (std::size_t i = 0; i < m_record.fields.size() && i < m_table.header.size(); ++i)
            if (!valid_utf8(m_record.fields[i]))
                return error(m_table.header[i], "cell is not valid UTF-8; re-save the file as UTF-8");
        return {};
    }

    // The trimmed cell, empty when the column is absent (optional columns only).
    std::string cell(std::string_view column) const {
        const auto index = m_table.column_index(column);
        return index && *index < m_record.fields.size() ? std::string(text::trim(m_record.fields[*index]))
                                                        : std::string{};
    }

    Result<std::string> required(std::string_view column) const {
        std::string value = cell(column);
        if (value.empty()) return error(column, "cell is empty; this column needs a value");
        return value;
    }

    Result<json> json_cell(std::string_view column) const {
        MF_TRY_ASSIGN(const std::string raw, required(column));
        try {
            return json::parse(raw);
        } catch (const json::exception& e) {
            // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep where and why.
            std::string why = e.what();
            if (const auto close = why.find("] "); why.rfind("[json.", 0) == 0 && close != std::string::npos)
                why = why.substr(close + 2);
            return error(column, "not valid JSON (" + why + ")");
        }
    }

    // A JSON list of non-empty strings with at least `min_items` items.
    Result<std::vector<std::string>> string_list(std::string_view column, std::size_t min_items) const {
        MF_TRY_ASSIGN(const json value, json_cell(column));
        if (!value.is_array())
            return error(column, std::string("expected a JSON list of strings, got a ") + value.type_name());
        std::vector<std::string> out;
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (!value[i].is_string())
                return error(column, "item " + std::to_string(i + 1) + " is a " + value[i].type_name() +
                                         "; expected a JSON list of strings");
            std::string item(text::trim(value[i].get<std::string>()));
            if (item.empty()) return error(column, "item " + std::to_string(i + 1) + " is an empty string");
            out.push_back(std::move(item));
        }
        if (out.size() < min_items)
            return error(column, "expected at least " + std::to_string(min_items) + " item" +
                                     (min_items == 1 ? "" : "s") + ", got " + std::to_string(out.size()));
        return out;
    }

private:
    const CsvTable& m_table;
    const CsvRecord& m_record;
    std::size_t m_number;
};

// Parses every row of `table` with `parse` (a Row -> Result<T>), skipping the rows it refuses: each
// refusal goes to `report.errors` as "file:line: column 'x': reason (row N skipped)". Returns the
// rows that converted with their 1-based row numbers; an error only when none did.
template <class T, class Parse>
Result<std::vector<std::pair<std::size_t, T>>> parse_rows(const CsvTable& table, ImportReport& report,
                                                          Parse parse) {
    std::vector<std::pair<std::size_t, T>> out;
    std::optional<Error> first_error;
    for (std::size_t r = 0; r < table.records.size(); ++r) {
        const Row row(table, table.records[r], r + 1);
        Result<T> parsed = [&]() -> Result<T> {
            MF_TRY(row.check_encoding());
            return parse(row);
        }();
        if (parsed) {
            out.emplace_back(r + 1, std::move(*parsed));
            continue;
        }
        if (!first_error) first_error = parsed.error();
        report.errors.push_back(parsed.error().describe() + " (row " + std::to_string(r + 1) + " skipped)");
        ++report.skipped_rows;
    }
    if (out.empty() && first_error) {
        Error e = *first_error;
        e.message += table.records.size() == 1 ? " (the file's only row)"
                                               : " (no row of the file converts; this was the first refusal)";
        return e;
    }
    return out;
}

data::Scenario new_scenario(const std::string& dataset, const CsvTable& table) {
    data::Scenario s = make_scenario(dataset, 0);
    s.id = dataset + "-imported";
    s.meta = {{"source", "memfail-csv"},
              {"file", fs::path(table.source).filename().string()},
              {"rows", table.records.size()}};
    return s;
}

std::string fact_id(const std::string& probe, std::size_t number) {
    return probe + "-f" + std::to_string(number);
}

// Marks `fact` incomplete (the grader then needs the judge to call it faithful) and counts it.
void mark_incomplete(data::EvidenceFact& fact, ImportReport& report) {
    if (!fact.details_complete) return;
    fact.details_complete = false;
    ++report.incomplete_facts;
}

// Says why a detail is missing and what that means for grading.
std::string lost_detail_warning(const Row& row, const std::string& name, const std::string& phrase,
                                const std::string& where) {
    return row.at() + ": " + name + (phrase.empty() ? "" : " " + quote_short(phrase)) + " not found in " +
           where + "; left out of the key details and the fact marked details_complete=false, so its summary "
                   "goes to the judge";
}

// ---------------------------------------------------------------------------------------------
// Conditional-Facts (Easy and Hard).

bool states_a_condition(const Sentence& sentence) {
    if (!conditional::find_forbidden_connective(sentence.text).empty()) return true;
    return std::any_of(sentence.tokens.begin(), sentence.tokens.end(), [](const Token& t) { return t.word == "when"; });
}

// The condition clause of an Easy rule sentence, for rows whose `condition` column the essay does
// not echo: the words after its first conditional connective ("... only when she's feeling
// nostalgic." -> "she's feeling nostalgic"). "as if" and "even if" introduce no condition.
std::optional<std::string> condition_clause(const Sentence& sentence) {
    static const std::set<std::string> k_openers = {"when", "whenever", "if", "unless", "after", "during", "while"};
    const auto& tokens = sentence.tokens;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
        if (!k_openers.count(tokens[i].word)) continue;
        if (tokens[i].word == "if" && i > 0 && (tokens[i - 1].word == "as" || tokens[i - 1].word == "even")) continue;
        const bool content = std::any_of(tokens.begin() + static_cast<std::ptrdiff_t>(i) + 1, tokens.end(),
                                         [](const Token& t) { return is_content_word(t.word); });
        if (!content) return std::nullopt;
        return sentence.text.substr(tokens[i + 1].begin, tokens.back().end - tokens[i + 1].begin);
    }
    return std::nullopt;
}

// The link of a Hard essay: the sentence that ties behaviour and condition together by pointing
// back to the condition and naming or alluding to the behaviour ("It's usually in those wistful,
// quiet moods that this little ritual reappears."). The release words the pointing back freely:
//  - a demonstrative phrase: "those wistful moods", "these grey evenings", "such afternoons";
//  - "<noun> like that/this/those/these": "at times like those", "in moments like these", "on days
//    like that";
//  - a formula: "that's when" / "that is when" / "this is when", "it is then that" / "it's then
//    that", "those are the nights" / "these are the times", "whenever that happens" / "when this
//    happens".
// A sentence qualifies with such a pointer and a word of habit ("usually", "tends", "mostly", ...),
// a word of the behaviour it does not state ("Those are the nights the lullabies drift over the
// fence."), or a word standing for it ("ritual", "habit", "routine"); the last one when several
// qualify. A pointer without any of these ("That's when the bus leaves.") links nothing. `phrase`
// is the pointer as the sentence spells it, empty when the sentence has only a bare "those"/"these"
// with no words to be the link detail.
struct Link {
    std::size_t sentence = 0;
    std::string phrase;
};

std::optional<Link> find_link(const std::vector<Sentence>& sentences, const std::string& behaviour_phrase,
                              const std::optional<data::KeyDetail>& behaviour) {
    static const std::set<std::string> k_markers = {"usually", "tends", "tend", "mostly", "often", "typically",
                                                    "generally", "around", "likely", "invariably"};
    static const std::set<std::string> k_stops = {"that", "when", "which", "is",  "are", "was", "were", "her",
                                                  "his",  "their", "its",  "the", "she", "he",  "they", "it",
                                                  "i",    "we",   "you",  "this", "a",  "an",  "and", "to"};
    static const std::set<std::string> k_pointed = {"that", "this", "those", "these"};
    static const std::set<std::string> k_stand_ins = {"ritual", "rituals", "habit",     "habits", "routine",
                                                      "quirk",  "custom",  "tradition", "ceremony"};
    std::set<std::string> behaviour_stems;
    for (const auto& w : text::words(behaviour_phrase))
        if (is_content_word(w) && w.size() >= 4) behaviour_stems.insert(stem_of(w));
    std::optional<Link> best;
    for (std::size_t i = 1; i < sentences.size(); ++i) {
        const auto& tokens = sentences[i].tokens;
        auto word = [&](std::size_t j) -> const std::string& {
            static const std::string none;
            return j < tokens.size() ? tokens[j].word : none;
        };
        auto spelled = [&](std::size_t first, std::size_t last) {
            return sentences[i].text.substr(tokens[first].begin, tokens[last].end - tokens[first].begin);
        };
        bool marked = false, demonstrative = false, echoes = false, stand_in = false;
        std::string phrase;      // a demonstrative phrase: "those wistful, quiet moods"
        std::string formula;     // "that's when", "days like that", "those are the nights"
        for (std::size_t j = 0; j < tokens.size(); ++j) {
            const std::string& w = tokens[j].word;
            marked = marked || k_markers.count(w) > 0;
            stand_in = stand_in || k_stand_ins.count(w) > 0;
            echoes = echoes || (w.size() >= 4 && behaviour_stems.count(tokens[j].stem) > 0);
            if (formula.empty()) {
                // "that's when", "that is when", "this is when"
                if (w == "thats" && word(j + 1) == "when")
                    formula = spelled(j, j + 1);
                else if ((w == "that" || w == "this") && word(j + 1) == "is" && word(j + 2) == "when")
                    formula = spelled(j, j + 2);
                // "it's then that", "it is then that"
                else if (w == "its" && word(j + 1) == "then" && word(j + 2) == "that")
                    formula = spelled(j, j + 2);
                else if (w == "it" && word(j + 1) == "is" && word(j + 2) == "then" && word(j + 3) == "that")
                    formula = spelled(j, j + 3);
                // "whenever that happens", "when this happens"
                else if ((w == "whenever" || w == "when") && k_pointed.count(word(j + 1)) &&
                         (word(j + 2) == "happens" || word(j + 2) == "happened"))
                    formula = spelled(j, j + 2);
                // "days like that", "moments like these", "times like those"
                else if (w == "like" && j > 0 && j + 1 < tokens.size() && k_pointed.count(word(j + 1)) &&
                         is_content_word(word(j - 1)) && (j + 2 >= tokens.size() || !is_content_word(word(j + 2))))
                    formula = spelled(j - 1, j + 1);
                // "those are the nights", "these were the times"
                else if ((w == "those" || w == "these") && (word(j + 1) == "are" || word(j + 1) == "were") &&
                         word(j + 2) == "the" && is_content_word(word(j + 3)))
                    formula = spelled(j, j + 3);
            }
            if (w != "those" && w != "these" && w != "such") continue;
            if (w == "such" && word(j + 1) == "as") continue;  // "such as gardening" is an example
            if (w != "such") demonstrative = true;
            if (!phrase.empty()) continue;
            std::size_t k = j + 1;
            while (k < tokens.size() && k - j <= 5 && !k_stops.count(tokens[k].word) && !k_markers.count(tokens[k].word))
                ++k;
            bool content = false;
            for (std::size_t m = j + 1; m < k; ++m) content = content || is_content_word(tokens[m].word);
            if (content) {
                phrase = spelled(j, k - 1);
                demonstrative = true;  // "such afternoons" points back as "those afternoons" does
            }
        }
        const bool states_behaviour = behaviour && sentence_covers(sentences[i], *behaviour);
        if ((!phrase.empty() && marked) || (!formula.empty() && (marked || echoes || stand_in)) ||
            (!phrase.empty() && stand_in) || ((demonstrative || marked) && echoes && !states_behaviour))
            best = Link{i, !phrase.empty() ? phrase : formula};
    }
    return best;
}

struct ConditionalRow {
    std::string entity, behaviour, condition, essay, question, answer;
    bool condition_met = false;
};

Result<data::Scenario> import_conditional(const CsvTable& table, const std::string& dataset, bool hard,
                                          ImportReport& report) {
    MF_TRY(check_columns(table,
                         {"entity", "behavior", "condition", "entity_facts", "question", "condition_met",
                          "ground_truth_answer"},
                         {"entity_category", "condition_type", "question_context"}));
    MF_TRY_ASSIGN(auto rows, parse_rows<ConditionalRow>(table, report, [](const Row& row) -> Result<ConditionalRow> {
        ConditionalRow p;
        MF_TRY_ASSIGN(p.entity, row.required("entity"));
        MF_TRY_ASSIGN(p.behaviour, row.required("behavior"));
        // May be empty: some Hard rows give no condition phrase; the fact is then incomplete.
        p.condition = row.cell("condition");
        MF_TRY_ASSIGN(const auto essays, row.string_list("entity_facts", 1));
        p.essay = text::join(essays, " ");
        MF_TRY_ASSIGN(p.question, row.required("question"));
        MF_TRY_ASSIGN(p.answer, row.required("ground_truth_answer"));
        MF_TRY_ASSIGN(const std::string met, row.required("condition_met"));
        const std::string m = text::to_lower(met);
        if (m == "yes" || m == "true")
            p.condition_met = true;
        else if (m == "no" || m == "false")
            p.condition_met = false;
        else
            return row.error("condition_met", "expected yes or no, got '" + met + "'");
        return p;
    }));
    DocumentFrequency df;
    for (const auto& [number, p] : rows) df.add(p.essay);

    data::Scenario s = new_scenario(dataset, table);
    const std::string prefix = hard ? "cfh" : "cfe";
    for (const auto& [number, p] : rows) {
        const Row row(table, table.records[number - 1], number);
        const std::string message = add_user_session(s, p.essay);
        const auto sentences = sentences_of(p.essay);
        const std::set<std::string> name_words = word_set(p.entity);
        auto holds = [&](std::size_t i, const std::optional<data::KeyDetail>& d) {
            return i < sentences.size() && d && sentence_covers(sentences[i], *d);
        };
        constexpr std::size_t none = static_cast<std::size_t>(-1);

        data::EvidenceFact fact;
        fact.id = fact_id(probe_id(prefix, number), 1);
        fact.message_ids = {message};
        bool sentences_known = true;  // every sentence stating the rule was identified
        std::vector<std::string> warnings;

        // Essays name the person in the first sentence and say "she" after; some only ever say
        // "Gideon's": the first sentence holding a variant is where the rule gets its person.
        std::optional<data::KeyDetail> entity = entity_detail(p.entity);
        std::size_t intro = none;
        for (std::size_t i = 0; i < sentences.size() && intro == none; ++i)
            if (holds(i, entity)) intro = i;
        if (intro == none) {
            warnings.push_back(lost_detail_warning(row, "entity", p.entity, "the essay"));
            entity.reset();
        }

        std::optional<data::KeyDetail> behaviour, condition, link;
        if (const Derived d = derive_detail(p.behaviour, sentences, df, &name_words); d.found())
            behaviour = make_detail("behaviour", d.variant);
        if (!p.condition.empty())
            if (const Derived d = derive_detail(p.condition, sentences, df, &name_words); d.found())
                condition = make_detail("condition", d.variant);

        std::vector<bool> chosen(sentences.size(), false);
        std::vector<const Sentence*> rule;
        if (!hard) {
            // Easy states the rule in one sentence: the one holding most of it, a conditional
            // connective breaking ties ("as if" is none).
            std::size_t best = none, best_score = 0;
            for (std::size_t i = 0; i < sentences.size(); ++i) {
                const std::size_t core = (holds(i, behaviour) ? 3 : 0) + (holds(i, condition) ? 3 : 0);
                if (core == 0) continue;
                const std::size_t score = core + (holds(i, entity) ? 1 : 0) + (states_a_condition(sentences[i]) ? 2 : 0);
                if (score > best_score) {
                    best = i;
                    best_score = score;
                }
            }
            if (best != none) {
                chosen[best] = true;
                rule.push_back(&sentences[best]);
                if (!condition) {
                    if (auto clause = condition_clause(sentences[best])) {
                        condition = make_detail("condition", *clause);
                        report.warnings.push_back(row.at() + ": condition " + quote_short(p.condition) +
                                                  " is not in the essay; took the rule sentence's clause " +
                                                  quote_short(*clause) + " instead");
                    }
                }
            } else {
                sentences_known = false;
            }
        } else {
            // Hard spreads it over a behaviour, a condition and a link sentence.
            std::size_t link_at = none, behaviour_at = none, condition_at = none;
            if (const auto found = find_link(sentences, p.behaviour, behaviour)) {
                link_at = found->sentence;
                if (!found->phrase.empty()) link = make_detail("link", found->phrase);
            }
            for (std::size_t i = 0; i < sentences.size() && behaviour_at == none; ++i)
                if (i != link_at && holds(i, behaviour)) behaviour_at = i;
            if (behaviour_at == none && holds(link_at, behaviour)) behaviour_at = link_at;
            for (std::size_t i = 0; i < sentences.size() && condition_at == none; ++i)
                if (i != link_at && i != behaviour_at && holds(i, condition)) condition_at = i;
            for (std::size_t i = 0; i < sentences.size() && condition_at == none; ++i)
                if (holds(i, condition)) condition_at = i;
            for (const std::size_t i : {behaviour_at, condition_at, link_at}) {
                if (i == none) {
                    sentences_known = false;
                    continue;
                }
                if (!chosen[i]) rule.push_back(&sentences[i]);
                chosen[i] = true;
            }
        }
        if (!behaviour) warnings.push_back(lost_detail_warning(row, "behaviour", p.behaviour, "the essay"));
        if (!condition)
            warnings.push_back(p.condition.empty()
                                   ? row.at() + ": condition is empty (no separable condition phrase); the fact "
                                                "is marked details_complete=false, so its summary goes to the judge"
                                   : lost_detail_warning(row, "condition", p.condition, "the essay"));
        if (hard && !link)
            warnings.push_back(row.at() +
                               ": no link phrase (\"... usually in those ...\", \"that's when ...\", \"on days "
                               "like that ...\") found in the essay; the fact is "
                               "marked details_complete=false, so its summary goes to the judge");
        // The rule's sentences often name the person by pronoun: the sentence naming them is part
        // of what must be kept for the rule to stay linked to its person.
        const bool entity_in_rule = std::any_of(rule.begin(), rule.end(), [&](const Sentence* r) {
            return entity && sentence_covers(*r, *entity);
        });
        if (intro != none && !entity_in_rule) chosen[intro] = true;

        if (entity) fact.key_details.push_back(*entity);
        for (const auto* d : {&behaviour, &condition, &link})
            if (*d) fact.key_details.push_back(**d);
        for (auto& q : qualifiers_in(rule)) fact.key_details.push_back(std::move(q));
        set_statements(fact, sentences, chosen, p.essay);
        if (!entity || !behaviour || !condition || (hard && !link) || !sentences_known) mark_incomplete(fact, report);
        if (!sentences_known) {
            // A verbatim copy of some rule sentences is no copy of the rule: with a sentence not
            // identified, only the whole essay counts as a copy.
            fact.statements.clear();
            fact.text = p.essay;
        }
        report.warnings.insert(report.warnings.end(), warnings.begin(), warnings.end());

        // Warn when the reference answer contradicts the label: graders read both. A refusal or
        // avoidance ("refuses to ...", "never ..."), a rule with "unless", or a question asking about
        // the opposite may answer No where the condition is met: no contradiction is proven there
        // (the validator's rule, refusal_worded()).
        const auto answer_words = text::words(p.answer);
        const bool inverted = polarity_may_invert({p.behaviour, p.question}, &fact);
        if (!inverted && !answer_words.empty() && (answer_words[0] == "yes" || answer_words[0] == "no") &&
            (answer_words[0] == "yes") != p.condition_met)
            report.warnings.push_back(row.at() + ": condition_met is '" + (p.condition_met ? "yes" : "no") +
                                      "' but the answer begins with '" + answer_words[0] + "'");

        data::Probe probe;
        probe.id = probe_id(prefix, number);
        probe.question = p.question;
        probe.kind = data::ProbeKind::yes_no;
        probe.answer = p.answer;
        probe.evidence.push_back(std::move(fact));
        probe.meta = {{"entity", p.entity},
                      {"entity_category", row.cell("entity_category")},
                      {"behaviour", p.behaviour},
                      {"condition_type", row.cell("condition_type")},
                      {"condition", p.condition},
                      {"condition_met", p.condition_met},
                      {"question_context", row.cell("question_context")}};
        s.probes.push_back(std::move(probe));
    }
    return s;
}

// ---------------------------------------------------------------------------------------------
// Coexisting-Facts.

struct CoexistingRow {
    std::string category, question, answer;
    std::vector<std::string> preferences, statements;
};

Result<data::Scenario> import_coexisting(const CsvTable& table, const std::string& dataset,
                                         ImportReport& report) {
    MF_TRY(check_columns(table, {"preference_category", "preferences", "preference_facts", "question",
                                 "ground_truth_answer"}));
    MF_TRY_ASSIGN(auto rows, parse_rows<CoexistingRow>(table, report, [](const Row& row) -> Result<CoexistingRow> {
        CoexistingRow p;
        MF_TRY_ASSIGN(p.category, row.required("preference_category"));
        MF_TRY_ASSIGN(p.preferences, row.string_list("preferences", 1));
        MF_TRY_ASSIGN(p.statements, row.string_list("preference_facts", 1));
        if (p.statements.size() != p.preferences.size())
            return row.error("preference_facts", "holds " + std::to_string(p.statements.size()) +
                                                     " statements but 'preferences' lists " +
                                                     std::to_string(p.preferences.size()) +
                                                     "; each preference needs exactly one statement");
        MF_TRY_ASSIGN(p.question, row.required("question"));
        MF_TRY_ASSIGN(p.answer, row.required("ground_truth_answer"));
        return p;
    }));
    DocumentFrequency df;
    for (const auto& [number, p] : rows)
        for (const auto& statement : p.statements) df.add(statement);

    data::Scenario s = new_scenario(dataset, table);
    for (const auto& [number, p] : rows) {
        const Row row(table, table.records[number - 1], number);
        data::Probe probe;
        probe.id = probe_id("cof", number);
        probe.question = p.question;
        probe.kind = data::ProbeKind::list;
        probe.answer = p.answer;
        for (std::size_t i = 0; i < p.preferences.size(); ++i) {
            const std::string message = add_user_session(s, p.statements[i]);
            const auto sentences = sentences_of(p.statements[i]);
            const std::string& preference = p.preferences[i];
            data::KeyDetail detail{"preference", {preference}, data::DetailRole::identity};
            for (auto& form : number_forms(preference)) detail.variants.push_back(std::move(form));
            bool found = false;
            for (const auto& sentence : sentences) found = found || sentence_covers(sentence, detail);
            data::EvidenceFact fact;
            fact.id = fact_id(probe.id, i + 1);
            fact.message_ids = {message};
            if (!found) {
                // Stated in another form ("I read every night" for "reading"): the form the statement
                // uses joins the variants. In other words altogether ("shooting hoops" for
                // "basketball"): no detail can be checked literally, so the judge decides.
                const Derived d = derive_detail(preference, sentences, df, nullptr);
                if (d.found()) {
                    detail.variants.push_back(d.variant);
                    found = true;
                } else {
                    report.warnings.push_back(
                        row.at() + ": preference " + quote_short(preference) +
                        " is stated in other words (" + quote_short(p.statements[i]) +
                        "); the fact keeps its statement but no key detail and is marked "
                        "details_complete=false, so the judge decides its storage and summary");
                    mark_incomplete(fact, report);
                }
            }
            if (found) fact.key_details.push_back(std::move(detail));
            // The whole statement is the preference's: every sentence of it states the fact.
            set_statements(fact, sentences, std::vector<bool>(sentences.size(), true), p.statements[i]);
            probe.evidence.push_back(std::move(fact));
        }
        probe.meta = {{"category", p.category}, {"preferences", p.preferences}, {"n", p.preferences.size()}};
        s.probes.push_back(std::move(probe));
    }
    return s;
}

// ---------------------------------------------------------------------------------------------
// Persona-Retrieval.

struct PersonaQuestion {
    std::string text, answer, distractor;
    bool misleading = false;
};

Result<std::vector<PersonaQuestion>> parse_questions(const Row& row) {
    MF_TRY_ASSIGN(const json value, row.json_cell("questions"));
    if (!value.is_array() || value.empty())
        return row.error("questions",
                         std::string("expected a non-empty JSON list of question objects, got ") +
                             (value.is_array() ? "an empty list" : std::string("a ") + value.type_name()));
    std::vector<PersonaQuestion> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const json& q = value[i];
        const std::string path = "questions[" + std::to_string(i) + "]";
        if (!q.is_object())
            return row.error("questions", path + " is a " + q.type_name() + "; expected an object");
        auto string_field = [&](const char* key, bool nullable, std::string& out_value) -> Result<void> {
            const auto it = q.find(key);
            if (it == q.end() || (it->is_null() && !nullable))
                return row.error("questions", path + "." + key + " is missing");
            if (it->is_null()) return {};
            if (!it->is_string())
                return row.error("questions",
                                 path + "." + key + " is a " + it->type_name() + "; expected a string");
            out_value = std::string(text::trim(it->get<std::string>()));
            if (out_value.empty() && !nullable) return row.error("questions", path + "." + key + " is empty");
            return {};
        };
        PersonaQuestion pq;
        MF_TRY(string_field("text", false, pq.text));
        MF_TRY(string_field("ground_truth_answer", false, pq.answer));
        MF_TRY(string_field("distractor", true, pq.distractor));
        const auto it = q.find("is_misleading");
        if (it == q.end()) return row.error("questions", path + ".is_misleading is missing");
        if (it->is_boolean())
            pq.misleading = it->get<bool>();
        else if (it->is_string() && (text::to_lower(it->get<std::string>()) == "true" ||
                                     text::to_lower(it->get<std::string>()) == "false"))
            pq.misleading = text::to_lower(it->get<std::string>()) == "true";
        else
            return row.error("questions", path + ".is_misleading is a " + std::string(it->type_name()) +
                                              "; expected true or false");
        out.push_back(std::move(pq));
    }
    return out;
}

struct PersonaRow {
    std::string entity, essay;
    std::vector<PersonaQuestion> questions;
};

Result<data::Scenario> import_persona(const CsvTable& table, const std::string& dataset,
                                      ImportReport& report) {
    MF_TRY(check_columns(table, {"entity", "entity_facts", "questions"}));
    MF_TRY_ASSIGN(auto rows, parse_rows<PersonaRow>(table, report, [](const Row& row) -> Result<PersonaRow> {
        PersonaRow p;
        MF_TRY_ASSIGN(p.entity, row.required("entity"));
        MF_TRY_ASSIGN(const auto essays, row.string_list("entity_facts", 1));
        p.essay = text::join(essays, " ");
        MF_TRY_ASSIGN(p.questions, parse_questions(row));
        return p;
    }));
    std::map<std::string, std::vector<std::size_t>> rows_of_entity;  // normalised name -> rows
    for (const auto& [number, p] : rows) rows_of_entity[text::normalize(p.entity)].push_back(number);

    data::Scenario s = new_scenario(dataset, table);
    std::size_t distractors_stored = 0;
    for (const auto& [number, p] : rows) {
        const Row row(table, table.records[number - 1], number);
        const std::string message = add_user_session(s, p.essay);
        const auto sentences = sentences_of(p.essay);
        const std::set<std::string> name_words = word_set(p.entity);
        const data::KeyDetail entity = entity_detail(p.entity);
        bool named = false;
        for (const auto& sentence : sentences) named = named || sentence_covers(sentence, entity);
        if (!named)
            report.warnings.push_back(row.at() + ": entity '" + p.entity +
                                      "' is not named in the essay; left out of the key details and its facts "
                                      "marked details_complete=false, so the judge decides their summary");

        for (std::size_t q = 0; q < p.questions.size(); ++q) {
            const PersonaQuestion& pq = p.questions[q];
            data::Probe probe;
            probe.id = probe_id("per", number) + "-q" + std::to_string(q + 1);
            probe.question = pq.text;
            probe.answer = pq.answer;
            if (pq.misleading) {
                probe.kind = data::ProbeKind::abstain;
                // The release drew distractors from the entity pool, so a "misleading" name is often
                // someone the memory does know about: the abstain answer is then not strictly true.
                // Label it so the report counts such probes apart.
                const bool stored =
                    !pq.distractor.empty() && rows_of_entity.count(text::normalize(pq.distractor)) > 0;
                if (stored) ++distractors_stored;
                if (pq.distractor.empty())
                    report.warnings.push_back(row.at() + ": question " + std::to_string(q + 1) +
                                              " is misleading but names no distractor");
                probe.meta = {{"entity", p.entity},
                              {"is_misleading", true},
                              {"distractor", pq.distractor.empty() ? json(nullptr) : json(pq.distractor)},
                              {"distractor_is_stored", stored},
                              {"row", number}};
                if (stored) probe.meta["ambiguous"] = true;
                s.probes.push_back(std::move(probe));
                continue;
            }
            probe.kind = data::ProbeKind::open;

            // The sentence the question is about: most shared content words with question + answer.
            std::set<std::string> query;
            for (const auto& w : text::words(pq.text + " " + pq.answer))
                if (is_content_word(w) && !name_words.count(w)) query.insert(w);
            std::vector<std::pair<std::size_t, std::size_t>> ranked;  // (overlap, sentence)
            for (std::size_t i = 0; i < sentences.size(); ++i) {
                std::size_t overlap = 0;
                std::set<std::string> seen;
                for (const auto& t : sentences[i].tokens)
                    if (query.count(t.word) && seen.insert(t.word).second) ++overlap;
                ranked.emplace_back(overlap, i);
            }
            std::stable_sort(ranked.begin(), ranked.end(),
                             [](const auto& a, const auto& b) { return a.first > b.first; });
            // The detail: the longest run of the answer's words that sentence holds; when the best
            // sentence shares only question words, try the next.
            const Phrase answer_words(text::words(pq.answer));
            std::optional<std::string> detail;
            std::size_t chosen_sentence = ranked.empty() ? 0 : ranked.front().second;
            for (const auto& [overlap, index] : ranked) {
                if (overlap == 0) break;
                if ((detail = find_longest_run(answer_words, {sentences[index]}, {1, &name_words}))) {
                    chosen_sentence = index;
                    break;
                }
            }
            data::EvidenceFact fact;
            fact.id = fact_id(probe.id, 1);
            fact.message_ids = {message};
            if (named) fact.key_details.push_back(entity);
            if (detail) fact.key_details.push_back(make_detail("detail", *detail));
            std::vector<bool> chosen(sentences.size(), false);
            if (!sentences.empty()) chosen[chosen_sentence] = true;
            set_statements(fact, sentences, chosen, p.essay);
            if (!detail) {
                report.warnings.push_back(
                    row.at() + ": question " + std::to_string(q + 1) +
                    ": no words of the answer occur in the essay; the fact keeps only the entity and is marked "
                    "details_complete=false, so the judge decides its summary");
                // Which sentence states it is a guess: only the whole essay counts as a copy.
                fact.statements.clear();
                fact.text = p.essay;
            }
            if (!detail || !named) mark_incomplete(fact, report);
            probe.evidence.push_back(std::move(fact));
            probe.meta = {{"entity", p.entity}, {"is_misleading", false}, {"row", number}};
            const auto& namesakes = rows_of_entity[text::normalize(p.entity)];
            if (namesakes.size() > 1) probe.meta["entity_rows"] = namesakes;
            s.probes.push_back(std::move(probe));
        }
    }
    std::size_t shared_names = 0;
    for (const auto& [name, numbers] : rows_of_entity) shared_names += numbers.size() > 1 ? 1 : 0;
    if (shared_names > 0)
        report.warnings.push_back(table.source + ": " + std::to_string(shared_names) + " name" +
                                  (shared_names == 1 ? " is" : "s are") +
                                  " given to more than one essay; their direct probes list the namesakes' rows "
                                  "in meta.entity_rows");
    if (distractors_stored > 0)
        report.warnings.push_back(
            table.source + ": " + std::to_string(distractors_stored) + " misleading question" +
            (distractors_stored == 1 ? " names" : "s name") +
            " a person stored elsewhere in the file; the release's abstain answer is then "
            "not strictly true (marked meta.distractor_is_stored and meta.ambiguous)");
    return s;
}

// ---------------------------------------------------------------------------------------------
// Long-Hop.

// The graded question without the "Options:" block the release appends (the choices carry it).
std::string strip_options(const std::string& question) {
    std::size_t pos = 0;
    while (pos < question.size()) {
        const std::size_t end = std::min(question.find('\n', pos), question.size());
        const std::string line =
            text::to_lower(std::string(text::trim(std::string_view(question).substr(pos, end - pos))));
        if (pos > 0 && text::starts_with(line, "options:"))
            return std::string(text::trim(question.substr(0, pos)));
        pos = end + 1;
    }
    return std::string(text::trim(question));
}

struct LongHopRow {
    std::string id, question, answer, correct;
    std::size_t hops = 0;
    std::vector<std::string> facts, anchors, choices;
};

// Non-empty cells of `columns`, which must come first: a gap means a misplaced value.
Result<void> leading_cells(const Row& row, const std::vector<std::string>& columns, std::vector<std::string>& out) {
    std::string first_empty;
    for (const auto& column : columns) {
        std::string value = row.cell(column);
        if (value.empty()) {
            if (first_empty.empty()) first_empty = column;
            continue;
        }
        if (!first_empty.empty())
            return row.error(column, "has a value although '" + first_empty + "' before it is empty");
        out.push_back(std::move(value));
    }
    return {};
}

Result<LongHopRow> parse_long_hop_row(const Row& row, ImportReport& report) {
    static const std::vector<std::string> k_fact_columns = {"fact_1", "fact_2", "fact_3", "fact_4"};
    static const std::vector<std::string> k_chain_columns = {"chain_1", "chain_2", "chain_3", "chain_4",
                                                             "chain_5"};
    static const std::vector<std::string> k_choice_columns = {"choice_a", "choice_b", "choice_c", "choice_d",
                                                              "choice_e"};
    LongHopRow p;
    MF_TRY_ASSIGN(p.id, row.required("id"));
    MF_TRY_ASSIGN(const std::string hops, row.required("hop_count"));
    if (hops.size() != 1 || hops[0] < '1' || hops[0] > '3')
        return row.error("hop_count", "expected 1, 2 or 3, got " + quote_short(hops));
    p.hops = static_cast<std::size_t>(hops[0] - '0');
    MF_TRY(leading_cells(row, k_fact_columns, p.facts));
    if (p.facts.size() != p.hops + 1)
        return row.error("fact_" + std::to_string(std::min<std::size_t>(p.facts.size() + 1, 4)),
                         "a " + hops + "-hop chain needs " + std::to_string(p.hops + 1) + " facts, the row has " +
                             std::to_string(p.facts.size()));
    MF_TRY(leading_cells(row, k_chain_columns, p.anchors));
    if (p.anchors.size() != p.facts.size() + 1)
        return row.error("chain_" + std::to_string(std::min<std::size_t>(p.anchors.size() + 1, 5)),
                         std::to_string(p.facts.size()) + " facts link " + std::to_string(p.facts.size() + 1) +
                             " anchors, the row has " + std::to_string(p.anchors.size()));
    MF_TRY_ASSIGN(const std::string question, row.required("graded_question"));
    p.question = strip_options(question);
    if (p.question.empty()) return row.error("graded_question", "holds only the options; the question is empty");
    MF_TRY_ASSIGN(p.answer, row.required("ground_truth_answer"));
    MF_TRY(leading_cells(row, k_choice_columns, p.choices));
    MF_TRY_ASSIGN(const std::string correct, row.required("correct_choice"));
    p.correct = text::to_lower(correct);
    if (p.correct.size() != 1 || p.correct[0] < 'a' ||
        static_cast<std::size_t>(p.correct[0] - 'a') >= p.choices.size())
        return row.error("correct_choice", "expected a letter naming one of the " + std::to_string(p.choices.size()) +
                                               " choices, got " + quote_short(correct));
    p.correct[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(p.correct[0])));
    const std::string& marked = p.choices[static_cast<std::size_t>(p.correct[0] - 'A')];
    if (text::normalize(marked) != text::normalize(p.answer))
        report.warnings.push_back(row.at() + ": choice " + p.correct + " " + quote_short(marked) +
                                  " differs from the answer " + quote_short(p.answer));
    return p;
}

// The generator's meta.voice for a release chain: "first_person" when a fact or the question speaks
// in the first person ("I", "me", "my", "mine", "myself", "I'm", "I've"), else "named" (the
// release's other chains are about a named person: "Esme's garden fills her with calm.").
std::string chain_voice(const LongHopRow& p) {
    static const std::set<std::string> first_person = {"i", "me", "my", "mine", "myself", "im", "ive"};
    std::vector<std::string> texts = p.facts;
    texts.push_back(p.question);
    for (const auto& t : texts)
        for (const auto& w : text::words(t))
            if (first_person.count(w)) return "first_person";
    return "named";
}

Result<data::Scenario> import_long_hop(const CsvTable& table, const std::string& dataset,
                                       ImportReport& report) {
    MF_TRY(check_columns(table,
                         {"id", "hop_count", "fact_1", "fact_2", "chain_1", "chain_2", "chain_3",
                          "graded_question", "ground_truth_answer", "choice_a", "choice_b", "correct_choice"},
                         {"fact_3", "fact_4", "chain_4", "chain_5", "choice_c", "choice_d", "choice_e"}));
    MF_TRY_ASSIGN(auto rows, parse_rows<LongHopRow>(table, report, [&report](const Row& row) {
        return parse_long_hop_row(row, report);
    }));
    DocumentFrequency df;
    for (const auto& [number, p] : rows)
        for (const auto& fact : p.facts) df.add(fact);

    // One fact per message, bin-packed into conversations of 3-5 facts with no two facts of one
    // chain together, as the paper's harness stores them (Appendix B.6: "every fact across the full
    // dataset is shuffled and bin-packed into storage conversations") and as the generator does:
    // a chain is read only by retrieving each of its links. The packing's seed is fixed.
    std::vector<std::vector<std::string>> chain_facts;
    for (const auto& [number, p] : rows) chain_facts.push_back(p.facts);
    data::Scenario s = new_scenario(dataset, table);
    const auto message_of = store_chain_facts(s, chain_facts, Rng(42));

    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& [number, p] = rows[r];
        const Row row(table, table.records[number - 1], number);
        data::Probe probe;
        probe.id = probe_id("lhp", number);
        probe.question = p.question;
        probe.kind = data::ProbeKind::mcq;
        probe.choices = p.choices;
        probe.correct_choice = p.correct;
        probe.answer = p.answer;
        for (std::size_t f = 0; f < p.facts.size(); ++f) {
            const auto sentences = sentences_of(p.facts[f]);
            data::EvidenceFact fact;
            fact.id = fact_id(probe.id, f + 1);
            fact.message_ids = {message_of[r][f]};
            for (std::size_t a = f; a <= f + 1; ++a) {
                const Derived d = derive_detail(p.anchors[a], sentences, df, nullptr);
                if (!d.found()) {
                    report.warnings.push_back(lost_detail_warning(row, "anchor " + std::to_string(a + 1),
                                                                  p.anchors[a], "fact " + std::to_string(f + 1)));
                    mark_incomplete(fact, report);
                    continue;
                }
                fact.key_details.push_back(make_detail("anchor_" + std::to_string(a + 1), d.variant));
            }
            // The message is the fact: all of it states the link.
            set_statements(fact, sentences, std::vector<bool>(sentences.size(), true), p.facts[f]);
            probe.evidence.push_back(std::move(fact));
        }
        probe.meta = {{"hops", p.hops}, {"chain", p.anchors}, {"id", p.id}, {"voice", chain_voice(p)}};
        s.probes.push_back(std::move(probe));
    }
    return s;
}

// The files of the release folder, by dataset: memfail's name, then the release's.
struct DatasetFiles {
    const char* dataset;
    const char* release;
};
constexpr DatasetFiles k_dataset_files[] = {
    {"conditional_facts_easy", "conditional_facts_dataset_easy.csv"},
    {"conditional_facts_hard", "conditional_facts_dataset_hard.csv"},
    {"coexisting_facts", "coexisting_facts_dataset.csv"},
    {"persona_retrieval", "persona_dataset.csv"},
    {"long_hop", "long_hop_chains.csv"},
};

}  // namespace

std::string dataset_of_file(const std::string& file_name) {
    for (const auto& f : k_dataset_files)
        if (file_name == f.release || file_name == std::string(f.dataset) + ".csv") return f.dataset;
    return {};
}

std::string longest_word_run(std::string_view phrase, const std::vector<std::string>& sentences,
                             std::size_t min_words) {
    std::vector<Sentence> parsed;
    for (const auto& s : sentences) parsed.push_back({s, text::normalize(s), tokenize(s)});
    return find_longest_run(Phrase(text::words(phrase)), parsed, {min_words, nullptr})
        .value_or(std::string{});
}

Result<data::Scenario> import_memfail_csv_text(std::string_view content, const std::string& source,
                                               const std::string& dataset, ImportReport& report) {
    const auto& names = dataset_names();
    if (std::find(names.begin(), names.end(), dataset) == names.end()) {
        const std::string hint = did_you_mean(dataset, names);
        return make_error(ErrorKind::invalid_input, "unknown dataset '" + dataset + "'" +
                                                        (hint.empty() ? "" : " (" + hint + ")") +
                                                        "; known: " + text::join(names, ", "));
    }
    MF_TRY_ASSIGN(const CsvTable table, parse_csv(content, source));
    if (table.records.empty())
        return make_error(ErrorKind::invalid_input, "the file has a header but no data rows", source);

    // Warnings go to a local report so a failed import leaves the caller's report as it was.
    ImportReport local;
    Result<data::Scenario> scenario = make_error(ErrorKind::internal, "unreachable");
    if (dataset == "conditional_facts_easy")
        scenario = import_conditional(table, dataset, false, local);
    else if (dataset == "conditional_facts_hard")
        scenario = import_conditional(table, dataset, true, local);
    else if (dataset == "coexisting_facts")
        scenario = import_coexisting(table, dataset, local);
    else if (dataset == "persona_retrieval")
        scenario = import_persona(table, dataset, local);
    else
        scenario = import_long_hop(table, dataset, local);
    if (!scenario) return scenario.error();

    ask_all_after_last_session(*scenario);
    scenario->meta["skipped_rows"] = local.skipped_rows;
    scenario->meta["incomplete_facts"] = local.incomplete_facts;
    report.rows += table.records.size();
    report.skipped_rows += local.skipped_rows;
    report.probes += scenario->probes.size();
    report.incomplete_facts += local.incomplete_facts;
    report.warnings.insert(report.warnings.end(), local.warnings.begin(), local.warnings.end());
    report.errors.insert(report.errors.end(), local.errors.begin(), local.errors.end());
    return scenario;
}

Result<data::Scenario> import_memfail_csv_file(const std::string& path, const std::string& dataset,
                                               ImportReport& report) {
    MF_TRY_ASSIGN(const std::string content, data::read_file(path));
    return import_memfail_csv_text(content, path, dataset, report);
}

Result<std::pair<std::vector<data::Scenario>, ImportReport>> import_memfail_csv_dir(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return make_error(ErrorKind::not_found,
                          "not a directory; expected the folder holding the release's CSV files", dir);
    std::vector<std::string> entries;  // file names, sorted so notes and warnings come in a fixed order
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.is_regular_file(ec)) entries.push_back(entry.path().filename().string());
    if (ec) return make_error(ErrorKind::io, "cannot list the folder: " + ec.message(), dir);
    std::sort(entries.begin(), entries.end());
    const std::set<std::string> present(entries.begin(), entries.end());

    std::vector<data::Scenario> scenarios;
    ImportReport report;
    std::set<std::string> used;
    std::vector<std::string> expected;
    for (const auto& f : k_dataset_files) {
        const std::string own = std::string(f.dataset) + ".csv";
        expected.push_back(f.release);
        expected.push_back(own);
        const bool has_release = present.count(f.release) > 0, has_own = present.count(own) > 0;
        if (has_release && has_own)
            return make_error(ErrorKind::invalid_input,
                              std::string("both '") + f.release + "' and '" + own + "' hold " + f.dataset +
                                  "; keep one of them",
                              dir);
        if (!has_release && !has_own) continue;
        const std::string file = has_release ? f.release : own;
        used.insert(file);
        MF_TRY_ASSIGN(auto scenario, import_memfail_csv_file((fs::path(dir) / file).string(), f.dataset, report));
        scenarios.push_back(std::move(scenario));
    }
    if (scenarios.empty())
        return make_error(ErrorKind::not_found,
                          "no MemFail CSV file found; expected one or more of " + text::join(expected, ", "), dir);
    // The release keeps its generator's records beside the datasets; say what was passed over.
    for (const auto& file : entries) {
        if (used.count(file)) continue;
        const std::string path = (fs::path(dir) / file).string();
        if (text::ends_with(file, "_raw.csv"))
            report.notes.push_back(path + ": the release's raw copy (rows before filtering); ignored");
        else if (text::ends_with(file, ".json"))
            report.notes.push_back(path + ": a generation record of the release, not a dataset; ignored");
        else if (text::ends_with(file, ".csv"))
            report.warnings.push_back(path + ": not named after a MemFail dataset; skipped");
    }
    return std::pair{std::move(scenarios), std::move(report)};
}

}  // namespace memfail::suites::memfail_suite

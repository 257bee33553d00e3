// SPDX-License-Identifier: MIT
// MemFail CSV release -> memfail scenarios.
#include <memfail/suites/memfail/import_csv.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/csv.hpp>
#include <memfail/suites/memfail/generators.hpp>

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

struct Token {
    std::string word;  // normalised
    std::size_t begin = 0;
    std::size_t end = 0;  // one past the last byte of the word
};

// Splits `s` exactly as text::normalize does: the words of the result, joined by single spaces,
// equal normalize(s).
std::vector<Token> tokenize(std::string_view s) {
    std::vector<Token> out;
    bool in_word = false;
    auto close = [&] { in_word = false; };
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80) {
            const unsigned char third = static_cast<unsigned char>(s[i + 2]);
            i += 2;
            if (third != 0x99 && third != 0x98) close();  // curly apostrophes join, dashes split
            continue;
        }
        if (c == '\'') continue;
        if (std::isalnum(c) || c >= 0x80) {
            if (!in_word) {
                out.push_back({{}, i, i});
                in_word = true;
            }
            out.back().word.push_back(static_cast<char>(std::tolower(c)));
            out.back().end = i + 1;
        } else {
            close();
        }
    }
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
        "being",  "other",    "such",   "same",    "ever",  "yet",   "whether",   "because"};
    return k_weak.count(w) > 0;
}

bool is_content_word(std::string_view w) { return !text::is_stopword(w) && !is_weak_word(w); }

// Where `words` occur as consecutive tokens of `sentence`: the original spelling, or nullopt.
std::optional<std::string> spelled_in(const Sentence& sentence, const std::vector<std::string>& words,
                                      std::size_t first, std::size_t count) {
    const auto& tokens = sentence.tokens;
    if (count == 0 || tokens.size() < count) return std::nullopt;
    for (std::size_t k = 0; k + count <= tokens.size(); ++k) {
        bool match = true;
        for (std::size_t j = 0; j < count && match; ++j) match = tokens[k + j].word == words[first + j];
        if (!match) continue;
        std::string spelled =
            sentence.text.substr(tokens[k].begin, tokens[k + count - 1].end - tokens[k].begin);
        std::string joined;
        for (std::size_t j = 0; j < count; ++j) joined += (j ? " " : "") + words[first + j];
        // The span can only differ from the words if tokenize() and normalize() ever disagree.
        return text::normalize(spelled) == joined ? spelled : joined;
    }
    return std::nullopt;
}

struct RunOptions {
    std::size_t min_words = 2;
    // Words that may not make up a whole run on their own (the entity's name: it has its own detail).
    const std::set<std::string>* excluded = nullptr;
};

// Longest qualifying run of `words` found in any of `sentences`; see longest_word_run().
std::optional<std::string> find_longest_run(const std::vector<std::string>& words,
                                            const std::vector<Sentence>& sentences,
                                            const RunOptions& options) {
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
                if (auto spelled = spelled_in(sentence, words, first, len)) {
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
using DocumentFrequency = std::map<std::string, std::size_t>;

void count_document(DocumentFrequency& df, std::string_view document) {
    const auto words = text::words(document);
    for (const auto& w : std::set<std::string>(words.begin(), words.end())) ++df[w];
}

// The rarest content word of `words` (or its singular/plural) that occurs in `sentences`, as the
// sentence spells it.
std::optional<std::string> find_rarest_word(const std::vector<std::string>& words,
                                            const std::vector<Sentence>& sentences,
                                            const DocumentFrequency& df,
                                            const std::set<std::string>* excluded) {
    struct Candidate {
        std::size_t frequency;
        std::size_t length;
        std::string spelled;
    };
    std::optional<Candidate> best;
    for (const auto& w : words) {
        if (!is_content_word(w) || w.size() < 3 || (excluded && excluded->count(w))) continue;
        std::vector<std::string> forms = {w};
        for (auto& f : number_forms(w)) forms.push_back(std::move(f));
        for (const auto& form : forms) {
            std::optional<std::string> spelled;
            for (const auto& sentence : sentences)
                if ((spelled = spelled_in(sentence, {form}, 0, 1))) break;
            if (!spelled) continue;
            const auto it = df.find(form);
            const Candidate c{it == df.end() ? 0 : it->second, w.size(), *spelled};
            // Ties go to the longer word, then to the earlier one.
            const bool better = !best || c.frequency < best->frequency ||
                                (c.frequency == best->frequency && c.length > best->length);
            if (better) best = c;
            break;
        }
    }
    if (!best) return std::nullopt;
    return best->spelled;
}

enum class Match { verbatim, run, rare_word, missing };

struct Derived {
    std::string variant;
    Match how = Match::missing;
};

// Derives one key detail for `phrase` from `sentences`: the phrase itself when it occurs inside a
// sentence, else the longest run of its words (>= 2, see longest_word_run), else its rarest content
// word, else the phrase unchanged with Match::missing for the caller to warn about.
Derived derive_detail(std::string_view phrase, const std::vector<Sentence>& sentences,
                      const DocumentFrequency& df, const std::set<std::string>* excluded) {
    const std::string whole = std::string(text::trim(phrase));
    const auto words = text::words(whole);
    if (words.empty()) return {whole, Match::missing};
    for (const auto& sentence : sentences)
        if (spelled_in(sentence, words, 0, words.size())) return {whole, Match::verbatim};
    if (auto run = find_longest_run(words, sentences, {2, excluded})) return {*run, Match::run};
    if (auto word = find_rarest_word(words, sentences, df, excluded)) return {*word, Match::rare_word};
    return {whole, Match::missing};
}

bool sentence_covers(const Sentence& sentence, const data::KeyDetail& detail) {
    for (const auto& v : detail.variants)
        if (text::normalized_contains(sentence.normalized, text::normalize(v))) return true;
    return false;
}

// Joins the chosen sentences in essay order, first adding, for every key detail none of them holds,
// the earliest sentence that does: a fact's text must hold all its key details.
std::string fact_text(const std::vector<Sentence>& sentences, std::vector<bool> chosen,
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
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < sentences.size(); ++i)
        if (chosen[i]) parts.push_back(sentences[i].text);
    return text::join(parts, " ");
}

// "Yuki Tanaka" -> {"Yuki Tanaka", "Yuki"}: essays introduce a person by full name and then use
// the first name. A leading title is skipped ("Dr. Amara Osei" -> "Amara").
std::vector<std::string> entity_variants(const std::string& entity) {
    std::vector<std::string> variants = {entity};
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
        if (!given.empty() && given != entity) variants.push_back(given);
    }
    return variants;
}

std::set<std::string> word_set(std::string_view s) {
    const auto words = text::words(s);
    return {words.begin(), words.end()};
}

std::string quote_short(std::string_view s) {
    std::string out(s.substr(0, 80));
    if (s.size() > 80) out += "...";
    return "'" + out + "'";
}

// ---------------------------------------------------------------------------------------------
// Cell access with "file:line: column 'x'" errors.

class Row {
public:
    Row(const CsvTable& table, const CsvRecord& record, std::size_t number)
        : m_table(table), m_record(record), m_number(number) {}

    // Prefix of a warning about this row.
    std::string at() const {
        return m_table.source + ":" + std::to_string(m_record.line) + ": row " + std::to_string(m_number);
    }

    Error error(std::string_view column, std::string message) const {
        return make_error(ErrorKind::invalid_input, std::move(message), m_table.where(m_record.line, column));
    }

    // The trimmed cell, empty when the column is absent (optional columns only).
    std::string cell(std::string_view column) const {
        const auto index = m_table.column_index(column);
        return index ? std::string(text::trim(m_record.fields[*index])) : std::string{};
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
        } catch (const json::parse_error& e) {
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

// ---------------------------------------------------------------------------------------------
// Conditional-Facts (Easy and Hard).

Result<data::Scenario> import_conditional(const CsvTable& table, const std::string& dataset, bool hard,
                                          ImportReport& report) {
    MF_TRY(check_columns(table,
                         {"entity", "behavior", "condition", "entity_facts", "question", "condition_met",
                          "ground_truth_answer"},
                         {"entity_category", "condition_type", "question_context"}));
    struct Parsed {
        std::string entity, behaviour, condition, essay, question, answer;
        bool condition_met = false;
    };
    std::vector<Parsed> rows;
    DocumentFrequency df;
    for (std::size_t r = 0; r < table.records.size(); ++r) {
        const Row row(table, table.records[r], r + 1);
        Parsed p;
        MF_TRY_ASSIGN(p.entity, row.required("entity"));
        MF_TRY_ASSIGN(p.behaviour, row.required("behavior"));
        MF_TRY_ASSIGN(p.condition, row.required("condition"));
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
        count_document(df, p.essay);
        rows.push_back(std::move(p));
    }

    data::Scenario s = new_scenario(dataset, table);
    const std::string prefix = hard ? "cfh" : "cfe";
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const Parsed& p = rows[r];
        const Row row(table, table.records[r], r + 1);
        const std::string message = add_user_session(s, p.essay);
        const auto sentences = sentences_of(p.essay);
        const std::set<std::string> name_words = word_set(p.entity);

        std::vector<data::KeyDetail> details;
        details.push_back({"entity", entity_variants(p.entity)});
        {
            bool named = false;
            for (const auto& sentence : sentences) named = named || sentence_covers(sentence, details[0]);
            if (!named) {
                // A key detail the essay never states cannot be checked literally: leave it out so
                // the scenario stays valid, and say so.
                report.warnings.push_back(row.at() + ": entity '" + p.entity +
                                          "' is not named in the essay; left out of the key details, so "
                                          "the deterministic grader cannot check it");
                details.clear();
            }
        }
        for (const auto& [name, phrase] : {std::pair<std::string, std::string>{"behaviour", p.behaviour},
                                           std::pair<std::string, std::string>{"condition", p.condition}}) {
            const Derived d = derive_detail(phrase, sentences, df, &name_words);
            if (d.how == Match::missing) {
                report.warnings.push_back(row.at() + ": " + name + " " + quote_short(phrase) +
                                          " not found in the essay; left out of the key details, so the "
                                          "deterministic grader cannot check it");
                continue;
            }
            details.push_back({name, {d.variant}});
        }

        // Easy states the rule in one sentence: take the sentence holding most details. Hard spreads
        // it over behaviour, condition and link sentences: take every sentence holding one.
        std::vector<bool> chosen(sentences.size(), false);
        if (hard) {
            for (std::size_t i = 0; i < sentences.size(); ++i)
                chosen[i] =
                    sentence_covers(sentences[i], details[1]) || sentence_covers(sentences[i], details[2]);
        } else if (!sentences.empty()) {
            std::size_t best = 0, best_count = 0;
            for (std::size_t i = 0; i < sentences.size(); ++i) {
                std::size_t count = 0;
                for (const auto& d : details) count += sentence_covers(sentences[i], d) ? 1 : 0;
                if (count > best_count) {
                    best = i;
                    best_count = count;
                }
            }
            chosen[best] = true;
        }
        std::string text = fact_text(sentences, chosen, details);
        if (text.empty()) text = p.essay;

        // Warn when the reference answer contradicts the label: graders read both.
        const auto answer_words = text::words(p.answer);
        if (!answer_words.empty() && (answer_words[0] == "yes" || answer_words[0] == "no") &&
            (answer_words[0] == "yes") != p.condition_met)
            report.warnings.push_back(row.at() + ": condition_met is '" + (p.condition_met ? "yes" : "no") +
                                      "' but the answer begins with '" + answer_words[0] + "'");

        data::Probe probe;
        probe.id = probe_id(prefix, r + 1);
        probe.question = p.question;
        probe.kind = data::ProbeKind::yes_no;
        probe.answer = p.answer;
        probe.evidence.push_back({fact_id(probe.id, 1), text, {message}, details});
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

Result<data::Scenario> import_coexisting(const CsvTable& table, const std::string& dataset,
                                         ImportReport& report) {
    MF_TRY(check_columns(table, {"preference_category", "preferences", "preference_facts", "question",
                                 "ground_truth_answer"}));
    struct Parsed {
        std::string category, question, answer;
        std::vector<std::string> preferences, statements;
    };
    std::vector<Parsed> rows;
    DocumentFrequency df;
    for (std::size_t r = 0; r < table.records.size(); ++r) {
        const Row row(table, table.records[r], r + 1);
        Parsed p;
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
        for (const auto& statement : p.statements) count_document(df, statement);
        rows.push_back(std::move(p));
    }

    data::Scenario s = new_scenario(dataset, table);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const Parsed& p = rows[r];
        const Row row(table, table.records[r], r + 1);
        data::Probe probe;
        probe.id = probe_id("cof", r + 1);
        probe.question = p.question;
        probe.kind = data::ProbeKind::list;
        probe.answer = p.answer;
        for (std::size_t i = 0; i < p.preferences.size(); ++i) {
            const std::string message = add_user_session(s, p.statements[i]);
            const auto sentences = sentences_of(p.statements[i]);
            const std::string& preference = p.preferences[i];
            data::KeyDetail detail{"preference", {preference}};
            for (auto& form : number_forms(preference)) detail.variants.push_back(std::move(form));
            bool found = false;
            for (const auto& sentence : sentences) found = found || sentence_covers(sentence, detail);
            if (!found) {
                const Derived d = derive_detail(preference, sentences, df, nullptr);
                if (d.how == Match::missing)
                    report.warnings.push_back(
                        row.at() + ": preference " + quote_short(preference) +
                        " not found in its statement; the fact keeps the phrase as its key detail and "
                        "the file will not validate until the statement names it");
                else
                    detail.variants.push_back(d.variant);
            }
            probe.evidence.push_back(
                {fact_id(probe.id, i + 1), p.statements[i], {message}, {std::move(detail)}});
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

Result<data::Scenario> import_persona(const CsvTable& table, const std::string& dataset,
                                      ImportReport& report) {
    MF_TRY(check_columns(table, {"entity", "entity_facts", "questions"}));
    struct Parsed {
        std::string entity, essay;
        std::vector<PersonaQuestion> questions;
    };
    std::vector<Parsed> rows;
    std::set<std::string> stored_entities;  // normalised names
    for (std::size_t r = 0; r < table.records.size(); ++r) {
        const Row row(table, table.records[r], r + 1);
        Parsed p;
        MF_TRY_ASSIGN(p.entity, row.required("entity"));
        MF_TRY_ASSIGN(const auto essays, row.string_list("entity_facts", 1));
        p.essay = text::join(essays, " ");
        MF_TRY_ASSIGN(p.questions, parse_questions(row));
        stored_entities.insert(text::normalize(p.entity));
        rows.push_back(std::move(p));
    }

    data::Scenario s = new_scenario(dataset, table);
    std::size_t distractors_stored = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const Parsed& p = rows[r];
        const Row row(table, table.records[r], r + 1);
        const std::string message = add_user_session(s, p.essay);
        const auto sentences = sentences_of(p.essay);
        const std::set<std::string> name_words = word_set(p.entity);
        const data::KeyDetail entity_detail{"entity", entity_variants(p.entity)};
        bool named = false;
        for (const auto& sentence : sentences) named = named || sentence_covers(sentence, entity_detail);
        if (!named)
            report.warnings.push_back(
                row.at() + ": entity '" + p.entity +
                "' is not named in the essay; storage checks for it will rely on the LLM "
                "judge");

        for (std::size_t q = 0; q < p.questions.size(); ++q) {
            const PersonaQuestion& pq = p.questions[q];
            data::Probe probe;
            probe.id = probe_id("per", r + 1) + "-q" + std::to_string(q + 1);
            probe.question = pq.text;
            probe.answer = pq.answer;
            if (pq.misleading) {
                probe.kind = data::ProbeKind::abstain;
                // The release drew distractors from the entity pool, so a "misleading" name is often
                // someone the memory does know about; label it so graders can treat it apart.
                const bool stored =
                    !pq.distractor.empty() && stored_entities.count(text::normalize(pq.distractor));
                if (stored) ++distractors_stored;
                if (pq.distractor.empty())
                    report.warnings.push_back(row.at() + ": question " + std::to_string(q + 1) +
                                              " is misleading but names no distractor");
                probe.meta = {{"entity", p.entity},
                              {"is_misleading", true},
                              {"distractor", pq.distractor.empty() ? json(nullptr) : json(pq.distractor)},
                              {"distractor_is_stored", stored},
                              {"row", r + 1}};
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
            const auto answer_words = text::words(pq.answer);
            std::optional<std::string> detail;
            std::size_t chosen_sentence = ranked.empty() ? 0 : ranked.front().second;
            for (const auto& [overlap, index] : ranked) {
                if (overlap == 0) break;
                if ((detail = find_longest_run(answer_words, {sentences[index]}, {1, &name_words}))) {
                    chosen_sentence = index;
                    break;
                }
            }
            std::vector<data::KeyDetail> details = {entity_detail};
            if (detail)
                details.push_back({"detail", {*detail}});
            else
                report.warnings.push_back(
                    row.at() + ": question " + std::to_string(q + 1) +
                    ": no words of the answer occur in the essay; only the entity is checked "
                    "deterministically for this probe");
            std::vector<bool> chosen(sentences.size(), false);
            if (!sentences.empty()) chosen[chosen_sentence] = true;
            std::string text = fact_text(sentences, chosen, details);
            if (text.empty()) text = p.essay;
            probe.evidence.push_back({fact_id(probe.id, 1), text, {message}, std::move(details)});
            probe.meta = {{"entity", p.entity}, {"is_misleading", false}, {"row", r + 1}};
            s.probes.push_back(std::move(probe));
        }
    }
    if (distractors_stored > 0)
        report.warnings.push_back(
            table.source + ": " + std::to_string(distractors_stored) + " misleading question" +
            (distractors_stored == 1 ? " names" : "s name") +
            " a person stored elsewhere in the file; the release's abstain answer is then "
            "not strictly true (marked meta.distractor_is_stored)");
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

Result<data::Scenario> import_long_hop(const CsvTable& table, const std::string& dataset,
                                       ImportReport& report) {
    static const std::vector<std::string> k_fact_columns = {"fact_1", "fact_2", "fact_3", "fact_4"};
    static const std::vector<std::string> k_chain_columns = {"chain_1", "chain_2", "chain_3", "chain_4",
                                                             "chain_5"};
    static const std::vector<std::string> k_choice_columns = {"choice_a", "choice_b", "choice_c", "choice_d",
                                                              "choice_e"};
    MF_TRY(check_columns(table,
                         {"id", "hop_count", "fact_1", "fact_2", "chain_1", "chain_2", "chain_3",
                          "graded_question", "ground_truth_answer", "choice_a", "choice_b", "correct_choice"},
                         {"fact_3", "fact_4", "chain_4", "chain_5", "choice_c", "choice_d", "choice_e"}));
    struct Parsed {
        std::string id, question, answer, correct;
        std::size_t hops = 0;
        std::vector<std::string> facts, anchors, choices;
    };
    // Non-empty cells of `columns`, which must come first: a gap means a misplaced value.
    auto leading_cells = [](const Row& row, const std::vector<std::string>& columns,
                            std::vector<std::string>& out) -> Result<void> {
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
    };
    std::vector<Parsed> rows;
    DocumentFrequency df;
    for (std::size_t r = 0; r < table.records.size(); ++r) {
        const Row row(table, table.records[r], r + 1);
        Parsed p;
        MF_TRY_ASSIGN(p.id, row.required("id"));
        MF_TRY_ASSIGN(const std::string hops, row.required("hop_count"));
        if (hops.size() != 1 || hops[0] < '1' || hops[0] > '3')
            return row.error("hop_count", "expected 1, 2 or 3, got '" + hops + "'");
        p.hops = static_cast<std::size_t>(hops[0] - '0');
        MF_TRY(leading_cells(row, k_fact_columns, p.facts));
        if (p.facts.size() != p.hops + 1)
            return row.error("fact_" + std::to_string(std::min<std::size_t>(p.facts.size() + 1, 4)),
                             "a " + hops + "-hop chain needs " + std::to_string(p.hops + 1) +
                                 " facts, the row has " + std::to_string(p.facts.size()));
        MF_TRY(leading_cells(row, k_chain_columns, p.anchors));
        if (p.anchors.size() != p.facts.size() + 1)
            return row.error("chain_" + std::to_string(std::min<std::size_t>(p.anchors.size() + 1, 5)),
                             std::to_string(p.facts.size()) + " facts link " +
                                 std::to_string(p.facts.size() + 1) + " anchors, the row has " +
                                 std::to_string(p.anchors.size()));
        MF_TRY_ASSIGN(const std::string question, row.required("graded_question"));
        p.question = strip_options(question);
        MF_TRY_ASSIGN(p.answer, row.required("ground_truth_answer"));
        MF_TRY(leading_cells(row, k_choice_columns, p.choices));
        MF_TRY_ASSIGN(const std::string correct, row.required("correct_choice"));
        p.correct = text::to_lower(correct);
        if (p.correct.size() != 1 || p.correct[0] < 'a' ||
            static_cast<std::size_t>(p.correct[0] - 'a') >= p.choices.size())
            return row.error("correct_choice", "expected a letter naming one of the " +
                                                   std::to_string(p.choices.size()) + " choices, got '" +
                                                   correct + "'");
        p.correct[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(p.correct[0])));
        if (text::normalize(p.choices[static_cast<std::size_t>(p.correct[0] - 'A')]) !=
            text::normalize(p.answer))
            report.warnings.push_back(row.at() + ": choice " + p.correct + " " +
                                      quote_short(p.choices[static_cast<std::size_t>(p.correct[0] - 'A')]) +
                                      " differs from the answer " + quote_short(p.answer));
        for (const auto& fact : p.facts) count_document(df, fact);
        rows.push_back(std::move(p));
    }

    // Facts are stored scattered, as the paper intends: shuffled with a fixed seed and packed
    // first-fit into sessions of up to four, never two links of one chain together (that would let
    // a memory read a hop off a single conversation).
    constexpr std::size_t k_facts_per_session = 4;
    std::vector<std::pair<std::size_t, std::size_t>> order;  // (row, fact)
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t f = 0; f < rows[r].facts.size(); ++f) order.emplace_back(r, f);
    Rng rng(42);
    rng.shuffle(order);
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> bins;
    for (const auto& item : order) {
        auto fits = [&](const auto& bin) {
            if (bin.size() >= k_facts_per_session) return false;
            return std::none_of(bin.begin(), bin.end(),
                                [&](const auto& other) { return other.first == item.first; });
        };
        const auto it = std::find_if(bins.begin(), bins.end(), fits);
        if (it == bins.end())
            bins.push_back({item});
        else
            it->push_back(item);
    }
    data::Scenario s = new_scenario(dataset, table);
    std::map<std::pair<std::size_t, std::size_t>, std::string> message_of;
    for (const auto& bin : bins) {
        std::vector<std::string> parts;
        for (const auto& [r, f] : bin) {
            std::string fact = rows[r].facts[f];
            // Sentences run together in one message; give each its full stop.
            if (fact.back() != '.' && fact.back() != '!' && fact.back() != '?') fact += '.';
            parts.push_back(std::move(fact));
        }
        const std::string message = add_user_session(s, text::join(parts, " "));
        for (const auto& item : bin) message_of[item] = message;
    }

    for (std::size_t r = 0; r < rows.size(); ++r) {
        const Parsed& p = rows[r];
        const Row row(table, table.records[r], r + 1);
        data::Probe probe;
        probe.id = probe_id("lhp", r + 1);
        probe.question = p.question;
        probe.kind = data::ProbeKind::mcq;
        probe.choices = p.choices;
        probe.correct_choice = p.correct;
        probe.answer = p.answer;
        for (std::size_t f = 0; f < p.facts.size(); ++f) {
            const auto sentences = sentences_of(p.facts[f]);
            std::vector<data::KeyDetail> details;
            for (std::size_t a = f; a <= f + 1; ++a) {
                const Derived d = derive_detail(p.anchors[a], sentences, df, nullptr);
                if (d.how == Match::missing) {
                    report.warnings.push_back(row.at() + ": anchor " + std::to_string(a + 1) + " " +
                                              quote_short(p.anchors[a]) + " not found in fact " +
                                              std::to_string(f + 1) +
                                              "; left out of the key details, so the deterministic grader "
                                              "cannot check it");
                    continue;
                }
                details.push_back({"anchor_" + std::to_string(a + 1), {d.variant}});
            }
            probe.evidence.push_back(
                {fact_id(probe.id, f + 1), p.facts[f], {message_of.at({r, f})}, std::move(details)});
        }
        probe.meta = {{"hops", p.hops}, {"chain", p.anchors}, {"id", p.id}};
        s.probes.push_back(std::move(probe));
    }
    return s;
}

}  // namespace

std::string longest_word_run(std::string_view phrase, const std::vector<std::string>& sentences,
                             std::size_t min_words) {
    std::vector<Sentence> parsed;
    for (const auto& s : sentences) parsed.push_back({s, text::normalize(s), tokenize(s)});
    return find_longest_run(text::words(phrase), parsed, {min_words, nullptr}).value_or(std::string{});
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
    report.rows += table.records.size();
    report.probes += scenario->probes.size();
    report.warnings.insert(report.warnings.end(), local.warnings.begin(), local.warnings.end());
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
    std::vector<data::Scenario> scenarios;
    ImportReport report;
    std::set<std::string> known_files;
    for (const auto& name : dataset_names()) {
        const fs::path path = fs::path(dir) / (name + ".csv");
        known_files.insert(path.filename().string());
        if (!fs::exists(path, ec)) continue;
        MF_TRY_ASSIGN(auto scenario, import_memfail_csv_file(path.string(), name, report));
        scenarios.push_back(std::move(scenario));
    }
    if (scenarios.empty())
        return make_error(
            ErrorKind::not_found,
            "no MemFail CSV file found; expected one or more of " +
                text::join(std::vector<std::string>(known_files.begin(), known_files.end()), ", "),
            dir);
    // Point out CSV files that were skipped, usually a renamed dataset file.
    std::vector<std::string> skipped;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string file = entry.path().filename().string();
        if (entry.path().extension() == ".csv" && !known_files.count(file))
            skipped.push_back(entry.path().string());
    }
    std::sort(skipped.begin(), skipped.end());
    for (const auto& file : skipped)
        report.warnings.push_back(file + ": not named after a MemFail dataset; skipped");
    return std::pair{std::move(scenarios), std::move(report)};
}

}  // namespace memfail::suites::memfail_suite

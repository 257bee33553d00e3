// SPDX-License-Identifier: MIT
// Table 2 figures of a dataset.
#include <memfail/suites/memfail/stats.hpp>
#include <memfail/suites/memfail/common.hpp>

#include <memfail/core/text.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <vector>

namespace memfail::suites::memfail_suite {

namespace {

using ordered_json = nlohmann::ordered_json;

bool family(const std::string& dataset, std::string_view prefix) { return text::starts_with(dataset, prefix); }

std::optional<std::int64_t> meta_int(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    if (it == p.meta.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
}

std::optional<std::string> meta_string(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    if (it == p.meta.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

bool meta_true(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    return it != p.meta.end() && it->is_boolean() && it->get<bool>();
}

// Tokens of the sentences stating a fact (its statements, else its canonical text).
std::size_t fact_tokens(const data::EvidenceFact& f, const TokenCounter& count) {
    if (f.statements.empty()) return count(f.text);
    std::size_t total = 0;
    for (const auto& s : f.statements) total += count(s);
    return total;
}

// A graded question as the release's graded_question holds it: a multiple-choice one with its
// options appended ("...?\n\nOptions:\nA. check email\nB. ..."; the importer takes them off).
std::string graded_question(const data::Probe& p) {
    std::string out = p.question;
    if (!p.choices.empty()) out += "\n\nOptions:";
    for (std::size_t i = 0; i < p.choices.size(); ++i)
        out += std::string("\n") + static_cast<char>('A' + i % 26) + ". " + p.choices[i];
    return out;
}

struct GroupSums {
    double fact_tokens = 0;
    double question_tokens = 0;
    double graded_tokens = 0;  // the question with its options
};

void add_to_group(GroupStats& g, GroupSums& sums, const data::Probe& p, const TokenCounter& count) {
    ++g.rows;
    g.facts += static_cast<std::int64_t>(p.evidence.size());
    if (!count) return;
    for (const auto& f : p.evidence) sums.fact_tokens += static_cast<double>(fact_tokens(f, count));
    sums.question_tokens += static_cast<double>(count(p.question));
    sums.graded_tokens += static_cast<double>(count(graded_question(p)));
}

void finish_groups(std::map<std::int64_t, GroupStats>& groups, const std::map<std::int64_t, GroupSums>& sums,
                   bool counted) {
    if (!counted) return;
    for (auto& [key, g] : groups) {
        if (g.rows == 0) continue;
        g.mean_fact_tokens = sums.at(key).fact_tokens / static_cast<double>(g.rows);
        g.mean_question_tokens = sums.at(key).question_tokens / static_cast<double>(g.rows);
        g.mean_entry_tokens = (sums.at(key).fact_tokens + sums.at(key).graded_tokens) / static_cast<double>(g.rows);
    }
}

ordered_json optional_number(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

ordered_json groups_json(const std::map<std::int64_t, GroupStats>& groups, const char* key) {
    ordered_json out = ordered_json::array();
    for (const auto& [k, g] : groups)
        out.push_back({{key, k},
                       {"rows", g.rows},
                       {"facts", g.facts},
                       {"mean_fact_tokens", optional_number(g.mean_fact_tokens)},
                       {"mean_question_tokens", optional_number(g.mean_question_tokens)},
                       {"mean_entry_tokens", optional_number(g.mean_entry_tokens)}});
    return out;
}

std::string fixed1(const std::optional<double>& v) {
    if (!v) return "-";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", *v);
    return buffer;
}

std::string pad_left(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string groups_text(const std::map<std::int64_t, GroupStats>& groups, const std::string& name,
                        const std::string& unit) {
    std::string out = "  " + pad_left(name, 4) + pad_left(unit, 8) + pad_left("facts", 8) +
                      pad_left("mean tok (facts)", 19) + pad_left("mean tok (question)", 22) +
                      pad_left("mean tok (entry, Table 2)", 27) + "\n";
    for (const auto& [k, g] : groups)
        out += "  " + pad_left(std::to_string(k), 4) + pad_left(std::to_string(g.rows), 8) +
               pad_left(std::to_string(g.facts), 8) + pad_left(fixed1(g.mean_fact_tokens), 19) +
               pad_left(fixed1(g.mean_question_tokens), 22) + pad_left(fixed1(g.mean_entry_tokens), 27) + "\n";
    return out;
}

// ---- Difficulty traits ----------------------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::int64_t whitespace_words(std::string_view t) {
    std::int64_t n = 0;
    bool in_word = false;
    for (char c : t) {
        const bool space = is_space(c);
        n += !space && !in_word;
        in_word = !space;
    }
    return n;
}

bool is_upper_start(std::string_view token) {
    return !token.empty() && std::isupper(static_cast<unsigned char>(token.front()));
}

// A whitespace token without the punctuation around it and without a possessive 's.
std::string bare_token(std::string_view token) {
    std::size_t b = 0, e = token.size();
    while (b < e && !std::isalnum(static_cast<unsigned char>(token[b]))) ++b;
    while (e > b && !std::isalnum(static_cast<unsigned char>(token[e - 1]))) --e;
    std::string out(token.substr(b, e - b));
    for (const char* suffix : {"'s", "\xE2\x80\x99s"})
        if (text::ends_with(out, suffix)) out.resize(out.size() - std::string_view(suffix).size());
    return out;
}

std::vector<std::string> whitespace_tokens(std::string_view t) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < t.size()) {
        while (i < t.size() && is_space(t[i])) ++i;
        std::size_t j = i;
        while (j < t.size() && !is_space(t[j])) ++j;
        if (j > i) out.emplace_back(t.substr(i, j - i));
        i = j;
    }
    return out;
}

// Words that open a sentence without being a name, beyond the stopwords ("Most people know ...").
bool is_opener(const std::string& lower) {
    static const std::set<std::string> openers = {
        "most", "many", "every", "everyone", "everybody", "people", "friends", "after", "before", "since",
        "because", "although", "though", "while", "once", "each", "few", "known", "born", "growing",
        "outside", "by", "whenever", "yes", "one"};
    return text::is_stopword(lower) || openers.count(lower) > 0;
}

// The person a text's first sentence opens with: its leading capitalised words ("Yuki Tanaka is ..."
// -> "Yuki Tanaka"), at most three, up to punctuation or a possessive. When the sentence opens with a
// stopword or a common opener ("By trade Yuki Tanaka is ...", "Most people know Yuki ..."), the first
// run of capitalised words after it. Empty when there is none.
std::string leading_name(std::string_view content) {
    static const std::set<std::string> titles = {"mr", "mrs", "ms", "dr", "st", "prof"};
    const auto sentences = text::split_sentences(content);
    if (sentences.empty()) return {};
    const auto tokens = whitespace_tokens(sentences.front());
    std::size_t i = 0;
    if (!tokens.empty() && is_opener(text::to_lower(bare_token(tokens.front())))) {
        i = 1;
        while (i < tokens.size() && !is_upper_start(bare_token(tokens[i]))) ++i;
    }
    std::vector<std::string> name;
    for (; i < tokens.size() && name.size() < 3; ++i) {
        const std::string bare = bare_token(tokens[i]);
        if (!is_upper_start(bare) || (name.empty() && is_opener(text::to_lower(bare)))) break;
        name.push_back(bare);
        // Punctuation or a possessive ends the name ("Yuki," or "Selene's"), a title does not ("Dr.").
        if (bare != tokens[i] && !titles.count(text::to_lower(bare))) break;
    }
    return text::join(name, " ");
}

// The phrases that name a person: the full name and each capitalised word of it but titles.
std::vector<std::string> name_phrases(const std::string& person) {
    static const std::set<std::string> titles = {"mr", "mrs", "ms", "miss", "dr", "st", "sir", "prof"};
    std::vector<std::string> out;
    const std::string full = text::normalize(person);
    if (full.empty()) return out;
    out.push_back(full);
    for (const auto& token : whitespace_tokens(person)) {
        const std::string bare = bare_token(token);
        const std::string word = text::normalize(bare);
        if (!is_upper_start(bare) || word.empty() || titles.count(word) || word == full) continue;
        out.push_back(word);
    }
    // Possessives: normalize turns "Yuki's" into "yukis".
    const std::size_t n = out.size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(out[i] + "s");
    return out;
}

bool names_person(const std::string& normalized_text, const std::vector<std::string>& phrases) {
    for (const auto& p : phrases)
        if (text::normalized_contains(normalized_text, p)) return true;
    return false;
}

std::optional<std::string> entity_of(const data::Probe& p) {
    auto e = meta_string(p, "entity");
    if (!e || text::trim(*e).empty()) return std::nullopt;
    return e;
}

// The words of a text for the overlap: a possessive 's dropped, then text::words.
std::vector<std::string> overlap_words(std::string_view t) {
    std::string s = text::replace_all(std::string(t), "\xE2\x80\x99s", "");
    s = text::replace_all(std::move(s), "'s", "");
    return text::words(s);
}

bool first_person_word(const std::string& w) {
    static const std::set<std::string> words = {"i", "me", "my", "mine", "myself", "im", "ive"};
    return words.count(w) > 0;
}

// Months and weekdays: capitalised inside a sentence, and no person.
bool is_calendar_word(const std::string& w) {
    static const std::set<std::string> words = {
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays"};
    return words.count(w) > 0;
}

// A Long-Hop chain's person found in its facts' text (method "text"), or empty.
std::string chain_person_from_text(const std::vector<std::string>& facts) {
    struct Candidate {
        std::size_t order = 0;
        bool mid = false;           // capitalised inside a sentence somewhere
        std::set<std::size_t> starts;  // facts it opens (capitalised) a sentence of
    };
    std::map<std::string, Candidate> seen;  // bare word -> where
    std::size_t order = 0;
    for (std::size_t f = 0; f < facts.size(); ++f)
        for (const auto& sentence : text::split_sentences(facts[f])) {
            const auto tokens = whitespace_tokens(sentence);
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                const std::string bare = bare_token(tokens[i]);
                if (!is_upper_start(bare)) continue;
                const std::string word = text::normalize(bare);
                if (word.empty() || first_person_word(word) || is_calendar_word(word)) continue;
                auto [it, added] = seen.try_emplace(bare);
                if (added) it->second.order = order++;
                if (i > 0) it->second.mid = true;
                else it->second.starts.insert(f);
            }
        }
    std::string best;
    std::size_t best_facts = 0, best_order = 0;
    for (const auto& [bare, c] : seen) {
        const std::string word = text::normalize(bare);
        if (!c.mid && (c.starts.size() < 2 || text::is_stopword(word))) continue;
        std::size_t in_facts = 0;
        for (const auto& f : facts) in_facts += names_person(text::normalize(f), {word, word + "s"}) ? 1u : 0u;
        if (in_facts > best_facts || (in_facts == best_facts && c.order < best_order)) {
            best = bare;
            best_facts = in_facts;
            best_order = c.order;
        }
    }
    return best;
}

struct Entries {
    std::map<std::string, std::size_t> session_of_message;  // message id -> session index
    std::vector<std::string> name;                          // per session; empty: unknown
};

// Names each entry (session) and fills the name-reuse figures.
Entries name_entries(const data::Scenario& scenario, NameReuse& reuse) {
    Entries e;
    const std::size_t n = scenario.sessions.size();
    for (std::size_t i = 0; i < n; ++i)
        for (const auto& m : scenario.sessions[i].messages) e.session_of_message.emplace(m.id, i);
    std::vector<std::map<std::string, std::int64_t>> votes(n);  // raw name -> probes citing the entry
    std::vector<std::vector<std::string>> vote_order(n);
    for (const auto& p : scenario.probes) {
        const auto entity = entity_of(p);
        if (!entity) continue;
        std::set<std::size_t> cited;
        for (const auto& f : p.evidence)
            for (const auto& id : f.message_ids)
                if (const auto it = e.session_of_message.find(id); it != e.session_of_message.end())
                    cited.insert(it->second);
        // A probe without evidence (a misleading question) is linked by meta.row, the entry's
        // 1-based position, when that entry's text names the person (a skipped row shifts positions).
        if (cited.empty())
            if (const auto row = meta_int(p, "row"); row && *row >= 1 && static_cast<std::size_t>(*row) <= n) {
                const std::size_t at = static_cast<std::size_t>(*row - 1);
                const auto phrases = name_phrases(*entity);
                for (const auto& m : scenario.sessions[at].messages)
                    if (names_person(text::normalize(m.content), phrases)) {
                        cited.insert(at);
                        break;
                    }
            }
        for (const std::size_t s : cited) {
            if (votes[s][*entity]++ == 0) vote_order[s].push_back(*entity);
        }
    }
    e.name.resize(n);
    std::map<std::string, std::int64_t> per_name, per_first;
    std::vector<std::string> name_order;
    for (std::size_t i = 0; i < n; ++i) {
        ++reuse.entries;
        std::string name;
        std::int64_t best = 0;
        for (const auto& candidate : vote_order[i])
            if (votes[i][candidate] > best) {
                best = votes[i][candidate];
                name = candidate;
            }
        if (!name.empty()) {
            ++reuse.from_meta;
        } else {
            for (const auto& m : scenario.sessions[i].messages) {
                if (text::trim(m.content).empty()) continue;
                name = leading_name(m.content);
                break;
            }
            if (!name.empty()) ++reuse.from_text;
        }
        const std::string key = text::normalize(name);
        if (key.empty()) {
            ++reuse.unknown;
            continue;
        }
        e.name[i] = name;
        if (per_name[key]++ == 0) name_order.push_back(key);
        ++per_first[text::split(key, ' ').front()];
    }
    reuse.distinct = static_cast<std::int64_t>(per_name.size());
    for (const auto& key : name_order)
        if (per_name[key] > reuse.max_per_name) {
            reuse.max_per_name = per_name[key];
            reuse.most_shared = key;
        }
    if (reuse.max_per_name < 2) reuse.most_shared.clear();  // no name is shared
    reuse.distinct_first = static_cast<std::int64_t>(per_first.size());
    for (const auto& [first, count] : per_first) reuse.max_per_first_name = std::max(reuse.max_per_first_name, count);
    return e;
}

// Whether one evidence fact sits in sentences naming its person.
enum class FactPlace { pronoun, mixed, named, unknown };

FactPlace place_of(const data::EvidenceFact& f, const std::string& person, const data::MessageIndex& index) {
    const auto phrases = name_phrases(person);
    if (phrases.empty()) return FactPlace::unknown;
    std::vector<std::string> sentences;  // normalised, of every cited message
    for (const auto& id : f.message_ids)
        if (const data::Message* m = index.message(id))
            for (const auto& s : text::split_sentences(m->content)) sentences.push_back(text::normalize(s));
    if (sentences.empty()) return FactPlace::unknown;
    std::int64_t found = 0, named = 0;
    auto place_detail = [&](const std::vector<std::string>& variants) {
        bool held = false, with_name = false;
        for (const auto& s : sentences) {
            bool holds = false;
            for (const auto& v : variants) {
                const std::string nv = text::normalize(v);
                if (!nv.empty() && text::normalized_contains(s, nv)) holds = true;
            }
            if (!holds) continue;
            held = true;
            with_name = with_name || names_person(s, phrases);
        }
        found += held;
        named += held && with_name;
    };
    for (const auto& kd : f.key_details) {
        if (kd.name == "entity") continue;
        // A one-word qualifier ("only", "never") is too common to place a fact.
        const bool one_word = std::all_of(kd.variants.begin(), kd.variants.end(),
                                          [](const std::string& v) { return text::words(v).size() <= 1; });
        if (kd.effective_role() == data::DetailRole::qualifier && one_word) continue;
        place_detail(kd.variants);
    }
    if (found == 0)
        for (const auto& statement : f.statements) {
            const std::string ns = text::normalize(statement);
            if (ns.empty()) continue;
            // A statement is a detail of its own, found as a whole sentence.
            bool held = false, with_name = false;
            for (const auto& s : sentences)
                if (s == ns) {
                    held = true;
                    with_name = with_name || names_person(s, phrases);
                }
            found += held;
            named += held && with_name;
        }
    if (found == 0) return FactPlace::unknown;
    if (named == 0) return FactPlace::pronoun;
    return named == found ? FactPlace::named : FactPlace::mixed;
}

// The texts of a Long-Hop chain's facts (empty strings dropped).
std::vector<std::string> chain_fact_texts(const data::Probe& p, const data::MessageIndex& index) {
    std::vector<std::string> out;
    for (const auto& f : p.evidence) {
        std::string t = text::join(f.statements, " ");
        if (text::trim(t).empty()) t = f.text;
        if (text::trim(t).empty()) {
            std::vector<std::string> contents;
            for (const auto& id : f.message_ids)
                if (const data::Message* m = index.message(id)) contents.push_back(m->content);
            t = text::join(contents, " ");
        }
        if (!text::trim(t).empty()) out.push_back(std::move(t));
    }
    return out;
}

void classify_chain(const data::Probe& p, const data::MessageIndex& index, ChainVoices& cv) {
    ++cv.chains;
    const auto facts = chain_fact_texts(p, index);
    if (facts.empty()) {
        ++cv.unknown;
        return;
    }
    bool first_person = false;
    for (const auto& f : facts)
        for (const auto& w : text::words(f)) first_person = first_person || first_person_word(w);
    if (first_person) {
        ++cv.first_person;
        return;
    }
    std::string person;
    const auto chain = p.meta.find("chain");
    if (meta_string(p, "voice").value_or("") == "named" && chain != p.meta.end() && chain->is_array() &&
        !chain->empty() && chain->front().is_string() && is_upper_start(chain->front().get<std::string>())) {
        person = chain->front().get<std::string>();
        ++cv.person_from_meta;
    } else if (!(person = chain_person_from_text(facts)).empty()) {
        ++cv.person_from_text;
    }
    std::size_t naming = 0;
    const auto phrases = name_phrases(person);
    for (const auto& f : facts) naming += !phrases.empty() && names_person(text::normalize(f), phrases);
    if (naming == facts.size() && naming == p.evidence.size()) ++cv.named;
    else if (naming > 0) ++cv.partly_named;
    else ++cv.other;
}

ordered_json traits_json(const DatasetTraits& t) {
    ordered_json out = {{"words_per_message",
                         {{"messages", t.words.messages},
                          {"mean", optional_number(t.words.mean)},
                          {"median", optional_number(t.words.median)}}}};
    if (t.names)
        out["names"] = {{"entries", t.names->entries},
                        {"distinct", t.names->distinct},
                        {"max_entries_per_name", t.names->max_per_name},
                        {"most_shared", t.names->most_shared.empty() ? ordered_json(nullptr)
                                                                     : ordered_json(t.names->most_shared)},
                        {"distinct_first_names", t.names->distinct_first},
                        {"max_entries_per_first_name", t.names->max_per_first_name},
                        {"method", {{"meta", t.names->from_meta}, {"text", t.names->from_text}, {"unknown", t.names->unknown}}}};
    if (t.pronoun_facts)
        out["pronoun_facts"] = {{"facts", t.pronoun_facts->facts},
                                {"pronoun", t.pronoun_facts->pronoun},
                                {"mixed", t.pronoun_facts->mixed},
                                {"named", t.pronoun_facts->named},
                                {"unknown", t.pronoun_facts->unknown}};
    if (t.chains)
        out["chains"] = {{"chains", t.chains->chains},
                         {"named", t.chains->named},
                         {"first_person", t.chains->first_person},
                         {"partly_named", t.chains->partly_named},
                         {"other", t.chains->other},
                         {"unknown", t.chains->unknown},
                         {"person_method", {{"meta", t.chains->person_from_meta}, {"text", t.chains->person_from_text}}}};
    out["overlap"] = {{"probes", t.overlap.probes},
                      {"mean", optional_number(t.overlap.mean)},
                      {"no_content_words", t.overlap.no_content_words},
                      {"no_messages", t.overlap.no_messages}};
    return out;
}

std::string fixed(const std::optional<double>& v, int digits) {
    if (!v) return "-";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, *v);
    return buffer;
}

std::string traits_text(const DatasetTraits& t) {
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    std::string out = "  words/message    mean " + fixed(t.words.mean, 1) + ", median " + fixed(t.words.median, 1) +
                      " over " + n(t.words.messages) + " messages (whitespace-separated)\n";
    if (t.names) {
        const NameReuse& r = *t.names;
        out += "  names            " + n(r.distinct) + " distinct over " + n(r.entries) + " entries, at most " +
               n(r.max_per_name) + " per name" + (r.most_shared.empty() ? "" : " (" + r.most_shared + ")") + "; " +
               n(r.distinct_first) + " first names, at most " + n(r.max_per_first_name) + " per first name\n";
        out += "  name method      meta.entity " + n(r.from_meta) + ", first sentence " + n(r.from_text) +
               ", unknown " + n(r.unknown) + "\n";
    }
    if (t.pronoun_facts) {
        const PronounFacts& f = *t.pronoun_facts;
        out += "  pronoun facts    " + n(f.pronoun) + " of " + n(f.facts) +
               " facts in sentences not naming the person (mixed " + n(f.mixed) + ", named " + n(f.named) +
               ", unknown " + n(f.unknown) + ")\n";
    }
    if (t.chains) {
        const ChainVoices& c = *t.chains;
        out += "  chain voice      first person " + n(c.first_person) + ", named in every fact " + n(c.named) +
               ", partly named " + n(c.partly_named) + ", other " + n(c.other) + ", unknown " + n(c.unknown) +
               " (person from meta.chain " + n(c.person_from_meta) + ", from text " + n(c.person_from_text) + ")\n";
    }
    out += "  q/evidence words mean share " + fixed(t.overlap.mean, 3) + " over " + n(t.overlap.probes) +
           " graded probes";
    if (t.overlap.no_content_words > 0) out += "; " + n(t.overlap.no_content_words) + " without content words";
    if (t.overlap.no_messages > 0) out += "; " + n(t.overlap.no_messages) + " citing no stored message";
    out += "\n";
    return out;
}

}  // namespace

DatasetTraits dataset_traits(const data::Scenario& scenario) {
    DatasetTraits t;
    std::vector<std::int64_t> counts;
    for (const auto& s : scenario.sessions)
        for (const auto& m : s.messages) counts.push_back(whitespace_words(m.content));
    t.words.messages = static_cast<std::int64_t>(counts.size());
    if (!counts.empty()) {
        double sum = 0;
        for (const auto c : counts) sum += static_cast<double>(c);
        t.words.mean = sum / static_cast<double>(counts.size());
        std::sort(counts.begin(), counts.end());
        const std::size_t mid = counts.size() / 2;
        t.words.median = counts.size() % 2 == 1 ? static_cast<double>(counts[mid])
                                                : (static_cast<double>(counts[mid - 1]) + static_cast<double>(counts[mid])) / 2.0;
    }

    const data::MessageIndex index(scenario);
    const bool conditional = family(scenario.dataset, "conditional_facts");
    const bool persona = family(scenario.dataset, "persona_retrieval");
    if (conditional || persona) {
        NameReuse reuse;
        const Entries entries = name_entries(scenario, reuse);
        PronounFacts pf;
        for (const auto& p : scenario.probes)
            for (const auto& f : p.evidence) {
                ++pf.facts;
                std::string person = entity_of(p).value_or("");
                if (person.empty())
                    for (const auto& id : f.message_ids)
                        if (const auto it = entries.session_of_message.find(id);
                            it != entries.session_of_message.end() && !entries.name[it->second].empty()) {
                            person = entries.name[it->second];
                            break;
                        }
                switch (person.empty() ? FactPlace::unknown : place_of(f, person, index)) {
                    case FactPlace::pronoun: ++pf.pronoun; break;
                    case FactPlace::mixed: ++pf.mixed; break;
                    case FactPlace::named: ++pf.named; break;
                    case FactPlace::unknown: ++pf.unknown; break;
                }
            }
        t.names = reuse;
        t.pronoun_facts = pf;
    }
    if (family(scenario.dataset, "long_hop")) {
        ChainVoices cv;
        for (const auto& p : scenario.probes) classify_chain(p, index, cv);
        t.chains = cv;
    }

    double share_sum = 0;
    for (const auto& p : scenario.probes) {
        if (meta_true(p, "ambiguous") || p.evidence.empty()) continue;
        std::set<std::string> evidence_words;
        bool any_message = false;
        std::set<std::string> cited;
        for (const auto& f : p.evidence)
            for (const auto& id : f.message_ids) {
                const data::Message* m = index.message(id);
                if (!m || !cited.insert(id).second) continue;
                any_message = true;
                for (auto& w : overlap_words(m->content)) evidence_words.insert(std::move(w));
            }
        if (!any_message) {
            ++t.overlap.no_messages;
            continue;
        }
        std::set<std::string> content;
        for (auto& w : overlap_words(p.question))
            if (!text::is_stopword(w)) content.insert(std::move(w));
        if (content.empty()) {
            ++t.overlap.no_content_words;
            continue;
        }
        std::size_t shared = 0;
        for (const auto& w : content) shared += evidence_words.count(w);
        share_sum += static_cast<double>(shared) / static_cast<double>(content.size());
        ++t.overlap.probes;
    }
    if (t.overlap.probes > 0) t.overlap.mean = share_sum / static_cast<double>(t.overlap.probes);
    return t;
}

DatasetStats dataset_stats(const data::Scenario& scenario, const TokenCounter& count) {
    DatasetStats st;
    st.dataset = scenario.dataset;
    st.scenario_id = scenario.id;
    st.sessions = static_cast<std::int64_t>(scenario.sessions.size());
    double entry_tokens = 0;
    for (const auto& s : scenario.sessions) {
        st.messages += static_cast<std::int64_t>(s.messages.size());
        if (count)
            for (const auto& m : s.messages) entry_tokens += static_cast<double>(count(m.content));
    }
    if (count && st.sessions > 0) st.mean_entry_tokens = entry_tokens / static_cast<double>(st.sessions);
    double graded_tokens = 0;  // the graded questions, for Table 2's count of an entry

    const bool conditional = family(scenario.dataset, "conditional_facts");
    const bool coexisting = family(scenario.dataset, "coexisting_facts");
    const bool long_hop = family(scenario.dataset, "long_hop");
    const bool persona = family(scenario.dataset, "persona_retrieval");
    std::map<std::int64_t, GroupSums> n_sums, hop_sums;
    std::set<std::string> evidence_logs;
    for (const auto& p : scenario.probes) {
        ++st.probes;
        if (!p.task.empty()) {
            ++st.profile_tasks;
            for (const auto& f : p.fields) evidence_logs.insert(f.evidence.begin(), f.evidence.end());
        }
        const bool ambiguous = meta_true(p, "ambiguous");
        st.ambiguous += ambiguous;
        st.graded += !ambiguous;
        st.abstain += p.kind == data::ProbeKind::abstain;
        st.facts += static_cast<std::int64_t>(p.evidence.size());
        if (count && !ambiguous) graded_tokens += static_cast<double>(count(graded_question(p)));
        if (conditional && p.kind == data::ProbeKind::yes_no) {
            const auto yes = answer_polarity(p.answer);
            if (!yes) ++st.unreadable;
            else if (*yes) ++st.yes;
            else ++st.no;
            const auto met = condition_met(p);
            if (met && yes && *met != *yes) ++st.condition_met_mismatch;
            if (const auto type = meta_string(p, "condition_type"); type && !type->empty()) ++st.condition_types[*type];
        }
        if (coexisting) {
            const std::int64_t n = meta_int(p, "n").value_or(static_cast<std::int64_t>(p.evidence.size()));
            add_to_group(st.by_n[n], n_sums[n], p, count);
        }
        if (long_hop) {
            const std::int64_t hops = meta_int(p, "hops").value_or(static_cast<std::int64_t>(p.evidence.size()) - 1);
            add_to_group(st.by_hops[hops], hop_sums[hops], p, count);
            ++st.voices[meta_string(p, "voice").value_or("unknown")];
        }
        if (persona) st.misleading += meta_true(p, "is_misleading") || p.kind == data::ProbeKind::abstain;
    }
    st.evidence_logs = static_cast<std::int64_t>(evidence_logs.size());
    if (count && st.sessions > 0 && (conditional || persona))
        st.table2_entry_tokens = (entry_tokens + graded_tokens) / static_cast<double>(st.sessions);
    finish_groups(st.by_n, n_sums, static_cast<bool>(count));
    finish_groups(st.by_hops, hop_sums, static_cast<bool>(count));
    st.traits = dataset_traits(scenario);
    return st;
}

nlohmann::ordered_json stats_json(const DatasetStats& st) {
    ordered_json out = {{"dataset", st.dataset},
                        {"scenario", st.scenario_id},
                        {"entries",
                         {{"sessions", st.sessions},
                          {"messages", st.messages},
                          {"mean_tokens", optional_number(st.mean_entry_tokens)},
                          {"table2_mean_tokens", optional_number(st.table2_entry_tokens)}}},
                        {"probes", st.probes},
                        {"graded", st.graded},
                        {"abstain", st.abstain},
                        {"ambiguous", st.ambiguous},
                        {"facts", st.facts}};
    if (st.profile_tasks > 0) {
        out["profile_tasks"] = st.profile_tasks;
        out["evidence_logs"] = st.evidence_logs;
    }
    if (family(st.dataset, "conditional_facts")) {
        out["yes_no"] = {{"yes", st.yes},
                         {"no", st.no},
                         {"unreadable", st.unreadable},
                         {"condition_met_mismatch", st.condition_met_mismatch}};
        ordered_json types = ordered_json::object();
        for (const auto& [t, n] : st.condition_types) types[t] = n;
        out["condition_types"] = {{"count", st.condition_types.size()}, {"probes", types}};
    }
    if (family(st.dataset, "coexisting_facts")) out["by_n"] = groups_json(st.by_n, "n");
    if (family(st.dataset, "long_hop")) {
        out["by_hops"] = groups_json(st.by_hops, "hops");
        ordered_json voices = ordered_json::object();
        for (const auto& [v, n] : st.voices) voices[v] = n;
        out["voices"] = voices;
    }
    if (family(st.dataset, "persona_retrieval")) {
        out["misleading"] = {{"probes", st.misleading},
                             {"share", st.probes > 0 ? ordered_json(static_cast<double>(st.misleading) /
                                                                    static_cast<double>(st.probes))
                                                     : ordered_json(nullptr)}};
    }
    out["traits"] = traits_json(st.traits);
    return out;
}

std::string stats_text(const DatasetStats& st, const std::string& encoding) {
    const std::string tok = encoding.empty() ? "tokens not counted" : encoding;
    std::string out = st.dataset + " (scenario " + st.scenario_id + ")\n";
    out += "  entries          " + std::to_string(st.sessions) + " sessions, " + std::to_string(st.messages) +
           " messages; mean " + fixed1(st.mean_entry_tokens) + " tokens per entry (" + tok + ")";
    if (st.table2_entry_tokens)
        out += ", " + fixed1(st.table2_entry_tokens) + " with its graded questions (Table 2's count)";
    out += "\n";
    out += "  probes           " + std::to_string(st.probes) + " (graded " + std::to_string(st.graded);
    if (st.abstain > 0) out += ", abstain " + std::to_string(st.abstain);
    if (st.ambiguous > 0) out += ", ambiguous " + std::to_string(st.ambiguous) + " not graded";
    if (st.profile_tasks > 0)
        out += "), " + std::to_string(st.profile_tasks) + " profile tasks citing " + std::to_string(st.evidence_logs) +
               " evidence app logs\n";
    else
        out += "), " + std::to_string(st.facts) + " evidence facts\n";
    if (family(st.dataset, "conditional_facts")) {
        out += "  yes/no           " + std::to_string(st.yes) + " yes / " + std::to_string(st.no) + " no";
        if (st.unreadable > 0) out += " / " + std::to_string(st.unreadable) + " neither";
        if (st.condition_met_mismatch > 0)
            out += " (" + std::to_string(st.condition_met_mismatch) + " disagree with meta.condition_met)";
        out += "\n  condition types  " + std::to_string(st.condition_types.size()) + "\n";
    }
    if (family(st.dataset, "coexisting_facts")) out += groups_text(st.by_n, "N", "rows");
    if (family(st.dataset, "long_hop")) {
        out += groups_text(st.by_hops, "K", "chains");
        out += "  voice           ";
        for (const auto& [v, n] : st.voices) out += " " + v + " " + std::to_string(n);
        out += "\n";
    }
    if (family(st.dataset, "persona_retrieval")) {
        char share[32] = "-";
        if (st.probes > 0)
            std::snprintf(share, sizeof share, "%.1f%%",
                          100.0 * static_cast<double>(st.misleading) / static_cast<double>(st.probes));
        out += "  misleading       " + std::to_string(st.misleading) + " of " + std::to_string(st.probes) + " (" +
               share + ")\n";
    }
    out += traits_text(st.traits);
    return out;
}

}  // namespace memfail::suites::memfail_suite

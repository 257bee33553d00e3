// SPDX-License-Identifier: MIT
// The rubric grader. Every kind is decided by hand-written scanners over the answer, linear in its
// length (no regular expressions), on the evidence matcher's canonical text at word boundaries
// (grade/evidence.hpp: contractions, money, dates and clock times written one way); numbers
// are read from the raw text in any written form ("$5,000", "5k", "$1.2 million", "five thousand").
// A rule passes or fails only what it can decide exactly; anything else is `unsure`, for the judge.
#include <memfail/grade/rubric.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <memfail/core/text.hpp>
#include <memfail/grade/declines.hpp>
#include <memfail/grade/evidence.hpp>
#include <memfail/grade/answer_rules.hpp>

namespace memfail::grade {

using nlohmann::json;

namespace {

// ---- characters ---------------------------------------------------------------------------------

bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_ascii_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool in_list(std::string_view w, std::initializer_list<std::string_view> list) {
    return std::find(list.begin(), list.end(), w) != list.end();
}

// Length of a UTF-8 punctuation or currency sign at `i` that separates words (general punctuation
// U+2000-U+206F: dashes, curly quotes, ellipsis; U+00A0-U+00BF: no-break space, pound, yen, ...;
// the euro sign), else 0. Every other byte from 0x80 up counts as a letter, as in the evidence matcher,
// so invalid UTF-8 is read as letters and never read past the end.
std::size_t symbol_length(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0xC2 && i + 1 < s.size()) {
        const auto d = static_cast<unsigned char>(s[i + 1]);
        if (d >= 0xA0 && d <= 0xBF) return 2;
    }
    if (c == 0xE2 && i + 2 < s.size()) {
        const auto d = static_cast<unsigned char>(s[i + 1]);
        const auto e = static_cast<unsigned char>(s[i + 2]);
        if (d == 0x80 || d == 0x81) return 3;
        if (d == 0x82 && e == 0xAC) return 3;  // euro
    }
    return 0;
}

bool is_currency_symbol(std::string_view s, std::size_t i, std::size_t len) {
    if (len == 2) {
        const auto d = static_cast<unsigned char>(s[i + 1]);
        return d == 0xA3 || d == 0xA5;  // pound, yen
    }
    return len == 3 && static_cast<unsigned char>(s[i + 1]) == 0x82;  // euro
}

bool is_word_byte(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    return is_digit(c) || is_ascii_letter(c) || (c >= 0x80 && symbol_length(s, i) == 0);
}

// ---- numbers in any written form ----------------------------------------------------------------

struct NumToken {
    bool number = false;
    std::string word;   // a word, lower-cased (letters, and any digits inside it)
    double value = 0;   // a number written with digits, its suffix ("5k", "1.5M") applied
    bool integer = true;
    bool tagged = false;  // letters attached that are no multiplier ("7pm", "3rd", "5km")
    bool soft = false;    // only spaces or hyphens separate it from the token before
    bool money = false;   // a currency sign just before it ("$5", "€5")
};

struct Number {
    double value = 0;
    bool integer = true;
    bool weak = false;    // a lone "one", often a pronoun ("the one you liked")
    bool tagged = false;  // written with letters attached that are no multiplier ("7pm")
    std::size_t first = 0, last = 0;  // its tokens
    bool money = false;   // written as money: a currency sign before it or a currency word after it
};

struct NumberScan {
    std::vector<NumToken> tokens;
    std::vector<Number> numbers;
};

enum class WordClass { none, unit, teen, tens, hundred, scale, article, conjunction };

// A number word's class and value, from the evidence matcher's tables (grade/lexicon/evidence.json):
// number_words give the units, teens, tens and "hundred", scale_words the multipliers.
std::pair<WordClass, double> word_number(std::string_view w) {
    // Built once from the lexicon (whose strings live for the process): looked up without allocating,
    // since every word of an answer is asked.
    static const std::unordered_map<std::string_view, std::pair<WordClass, double>> k_words = [] {
        std::unordered_map<std::string_view, std::pair<WordClass, double>> out;
        const evidence::Lexicon& lex = evidence::lexicon();
        for (const auto& [word, digits] : lex.number_words) {
            const double v = std::strtod(digits.c_str(), nullptr);
            const WordClass c = v < 10 ? WordClass::unit : v < 20 ? WordClass::teen : v < 100 ? WordClass::tens
                              : v == 100 ? WordClass::hundred : WordClass::none;
            if (c != WordClass::none) out.emplace(word, std::make_pair(c, v));
        }
        for (const auto& [word, v] : lex.scale_words) out.emplace(word, std::make_pair(WordClass::scale, v));
        out.emplace("a", std::make_pair(WordClass::article, 0.0));
        out.emplace("an", std::make_pair(WordClass::article, 0.0));
        out.emplace("and", std::make_pair(WordClass::conjunction, 0.0));
        return out;
    }();
    const auto it = k_words.find(w);
    return it == k_words.end() ? std::pair<WordClass, double>{WordClass::none, 0} : it->second;
}

// The digits of [begin, end) without thousands separators, as a double (exact to the nearest).
double digits_value(std::string_view s, std::size_t begin, std::size_t end) {
    std::string clean;
    clean.reserve(end - begin);
    for (std::size_t k = begin; k < end; ++k)
        if (s[k] != ',') clean.push_back(s[k]);
    double v = 0;
    const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), v);
    if (r.ec != std::errc{}) return std::numeric_limits<double>::infinity();
    return v;
}

std::vector<NumToken> number_tokens(std::string_view s) {
    std::vector<NumToken> out;
    const std::size_t n = s.size();
    bool sep_soft = true, sep_currency = false;
    std::size_t i = 0;
    while (i < n) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (const std::size_t len = symbol_length(s, i); len > 0) {
            sep_soft = false;
            if (is_currency_symbol(s, i, len)) sep_currency = true;
            i += len;
            continue;
        }
        if (!is_word_byte(s, i)) {
            if (c != ' ' && c != '\t' && c != '-') sep_soft = false;
            if (c == '$') sep_currency = true;
            ++i;
            continue;
        }
        NumToken tok;
        tok.soft = !out.empty() && sep_soft;
        const bool currency = sep_currency;
        sep_soft = true;
        sep_currency = false;
        if (!is_digit(c)) {
            while (i < n && is_word_byte(s, i)) tok.word.push_back(lower(s[i++]));
            out.push_back(std::move(tok));
            continue;
        }
        // Digits: "5", "5,000", "5,000.00", "1.5", then an attached suffix ("5k", "1.5M", "3rd").
        const bool negative = i > 0 && s[i - 1] == '-' && (i < 2 || !is_word_byte(s, i - 2));
        const std::size_t start = i;
        std::size_t j = i;
        while (j < n && is_digit(static_cast<unsigned char>(s[j]))) ++j;
        if (j - start <= 3) {
            while (j + 3 < n && s[j] == ',' && is_digit(static_cast<unsigned char>(s[j + 1])) &&
                   is_digit(static_cast<unsigned char>(s[j + 2])) && is_digit(static_cast<unsigned char>(s[j + 3])) &&
                   (j + 4 >= n || !is_digit(static_cast<unsigned char>(s[j + 4]))))
                j += 4;
        }
        if (j + 1 < n && s[j] == '.' && is_digit(static_cast<unsigned char>(s[j + 1]))) {
            ++j;
            while (j < n && is_digit(static_cast<unsigned char>(s[j]))) {
                if (s[j] != '0') tok.integer = false;
                ++j;
            }
        }
        std::size_t k = j;
        while (k < n && is_word_byte(s, k) && !is_digit(static_cast<unsigned char>(s[k]))) ++k;
        if (k < n && is_word_byte(s, k)) {
            // Letters then digits again ("5k3", "15T10"): an identifier, not a number.
            while (k < n && is_word_byte(s, k)) ++k;
            for (std::size_t m = start; m < k; ++m) tok.word.push_back(lower(s[m]));
            out.push_back(std::move(tok));
            i = k;
            continue;
        }
        const std::string_view suffix = s.substr(j, k - j);
        std::string low(suffix);
        for (char& ch : low) ch = lower(ch);
        double mult = 1;
        if (low == "k" || low == "thousand") mult = 1e3;
        else if (suffix == "M" || (currency && (low == "m" || low == "mm" || low == "mn" || low == "mil")) ||
                 low == "million")
            mult = 1e6;
        else if (low == "bn" || (currency && low == "b") || low == "billion") mult = 1e9;
        else if (low == "trillion") mult = 1e12;
        tok.tagged = mult == 1 && !low.empty();
        tok.number = true;
        tok.money = currency;
        tok.value = digits_value(s, start, j) * mult * (negative ? -1 : 1);
        if (mult != 1) tok.integer = tok.value == std::floor(tok.value);
        out.push_back(std::move(tok));
        i = k;
    }
    return out;
}

std::vector<Number> read_numbers(const std::vector<NumToken>& t) {
    std::vector<Number> out;
    bool active = false;
    double total = 0, current = 0;
    WordClass last = WordClass::none;
    std::size_t first = 0, last_index = 0, words = 0;
    bool lone_one = false;
    auto flush = [&] {
        if (active) out.push_back({total + current, true, lone_one && words == 1, false, first, last_index});
        active = false;
        total = current = 0;
        words = 0;
        last = WordClass::none;
        lone_one = false;
    };
    auto next_class = [&](std::size_t i) {
        if (i + 1 >= t.size() || !t[i + 1].soft || t[i + 1].number) return WordClass::none;
        return word_number(t[i + 1].word).first;
    };
    for (std::size_t i = 0; i < t.size(); ++i) {
        const NumToken& tok = t[i];
        if (!tok.soft) flush();
        if (tok.number) {
            flush();
            double v = tok.value;
            std::size_t end = i;
            // "5 thousand", "$1.2 million", "3 hundred".
            while (end + 1 < t.size() && t[end + 1].soft && !t[end + 1].number) {
                const auto [cls, scale] = word_number(t[end + 1].word);
                if (cls != WordClass::hundred && cls != WordClass::scale) break;
                v *= scale;
                ++end;
            }
            const bool money_word =
                end + 1 < t.size() && !t[end + 1].number &&
                in_list(t[end + 1].word, {"dollars", "dollar", "usd", "eur", "euro", "euros", "gbp", "bucks"});
            out.push_back({v, tok.integer && v == std::floor(v), false, tok.tagged, i, end, tok.money || money_word});
            i = end;
            continue;
        }
        const auto [cls, value] = word_number(tok.word);
        auto start = [&] {
            if (!active) {
                active = true;
                first = i;
                lone_one = tok.word == "one";
            }
        };
        switch (cls) {
            case WordClass::none: flush(); continue;
            case WordClass::article: {
                flush();
                const WordClass n = next_class(i);
                if (n == WordClass::hundred || n == WordClass::scale) {
                    start();
                    current = 1;
                    last = WordClass::unit;
                    last_index = i;
                    words = 2;  // never a lone "one"
                }
                continue;
            }
            case WordClass::conjunction: {
                const WordClass n = next_class(i);
                if (!(active && (last == WordClass::hundred || last == WordClass::scale) &&
                      (n == WordClass::unit || n == WordClass::teen || n == WordClass::tens)))
                    flush();
                continue;
            }
            case WordClass::unit:
                if (active && (last == WordClass::unit || last == WordClass::teen)) flush();
                start();
                current += value;
                break;
            case WordClass::teen:
            case WordClass::tens:
                // A year said in pairs: "nineteen ninety-nine", "twenty twenty-four".
                if (active && total == 0 && current >= 11 && current <= 99 &&
                    (last == WordClass::teen || last == WordClass::tens)) {
                    current = current * 100 + value;
                    break;
                }
                if (active && (last == WordClass::unit || last == WordClass::teen || last == WordClass::tens)) flush();
                start();
                current += value;
                break;
            case WordClass::hundred:
                if (!active || last == WordClass::hundred) {
                    flush();
                    continue;
                }
                current = (current == 0 ? 1 : current) * 100;
                break;
            case WordClass::scale:
                if (!active) continue;
                total += (current == 0 ? 1 : current) * value;
                current = 0;
                break;
        }
        last = cls;
        last_index = i;
        ++words;
    }
    flush();
    return out;
}

NumberScan scan_numbers(std::string_view s) {
    NumberScan scan;
    scan.tokens = number_tokens(s);
    scan.numbers = read_numbers(scan.tokens);
    return scan;
}

// The one number a text states when it is nothing else ("$2,000", "5k", "five thousand dollars";
// not "7pm", "2024-03-15" or "Route 66").
std::optional<double> single_number(std::string_view s) {
    const NumberScan scan = scan_numbers(s);
    if (scan.numbers.size() != 1 || scan.numbers.front().tagged) return std::nullopt;
    const Number& num = scan.numbers.front();
    for (std::size_t i = 0; i < scan.tokens.size(); ++i) {
        if (i >= num.first && i <= num.last) continue;
        if (!in_list(scan.tokens[i].word, {"dollars", "dollar", "usd", "eur", "euro", "euros", "gbp", "bucks",
                                           "percent", "pct"}))
            return std::nullopt;
    }
    return num.value;
}

bool numbers_equal(double got, double expected, double tolerance) {
    if (!std::isfinite(got) || !std::isfinite(expected)) return false;
    return std::fabs(got - expected) <= tolerance + 1e-9 * std::max(1.0, std::fabs(expected));
}

std::string format_number(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
        std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// ---- matching on normalised text ----------------------------------------------------------------

// Start offsets of `needle` in `hay` at word boundaries (both normalised).
std::vector<std::size_t> occurrences(std::string_view hay, std::string_view needle) {
    std::vector<std::size_t> out;
    if (needle.empty()) return out;
    for (std::size_t pos = hay.find(needle); pos != std::string_view::npos; pos = hay.find(needle, pos + 1)) {
        const bool left = pos == 0 || hay[pos - 1] == ' ';
        const std::size_t end = pos + needle.size();
        const bool right = end == hay.size() || hay[end] == ' ';
        if (left && right) out.push_back(pos);
    }
    return out;
}

// True when `needle` occurs in `hay` somewhere other than inside an occurrence of one of `covers`
// that contains it ("Acme" inside "Acme Labs" when "Acme Labs" is the expected value). All normalised.
bool occurs_uncovered(std::string_view hay, std::string_view needle, const std::vector<std::string>& covers) {
    const auto found = occurrences(hay, needle);
    if (found.empty()) return false;
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    for (const auto& c : covers) {
        if (c.size() <= needle.size() || !text::normalized_contains(c, needle)) continue;
        for (std::size_t s : occurrences(hay, c)) spans.emplace_back(s, s + c.size());
    }
    if (spans.empty()) return true;
    std::sort(spans.begin(), spans.end());
    std::size_t k = 0, reach = 0;
    for (std::size_t s : found) {
        while (k < spans.size() && spans[k].first <= s) reach = std::max(reach, spans[k++].second);
        if (reach < s + needle.size()) return true;
    }
    return false;
}

// ---- the answer as the rules read it --------------------------------------------------------------

struct View {
    std::string_view raw;
    std::string norm;
    NumberScan numbers;
    const data::Rubric* rubric = nullptr;
    // Worked out when a kind first asks (each is a few passes over the answer).
    mutable std::optional<bool> declines_cache;
    mutable std::optional<DeclineReading> decline_cache;
};

// The answer declines in some clause (grade/declines.hpp), or in a phrasing the rubric itself
// accepts (accept_patterns; each may list alternatives with '|').
bool declines(std::string_view raw, const std::string& norm, const data::Rubric& rubric) {
    if (read_decline(raw).declines) return true;
    for (const auto& pattern : rubric.accept_patterns)
        for (const auto& alternative : text::split(pattern, '|')) {
            const std::string p = evidence::canonical(alternative);
            if (!p.empty() && text::normalized_contains(norm, p)) return true;
        }
    return false;
}

View make_view(std::string_view answer, const data::Rubric& rubric) {
    View v;
    v.raw = answer;
    v.norm = evidence::canonical(answer);
    v.numbers = scan_numbers(answer);
    v.rubric = &rubric;
    return v;
}

// The answer says it does not know.
const DeclineReading& view_decline(const View& v) {
    if (!v.decline_cache) v.decline_cache = read_decline(v.raw);
    return *v.decline_cache;
}

bool view_declines(const View& v) {
    if (!v.declines_cache) v.declines_cache = !v.norm.empty() && declines(v.raw, v.norm, *v.rubric);
    return *v.declines_cache;
}

// The answer declines and says nothing else, guessing nothing ("I don't know, but maybe X" does not
// abstain).
bool view_abstains(const View& v) { return is_plain_abstention(view_decline(v)); }

bool states_number(const View& v, double expected, double tolerance) {
    for (const auto& n : v.numbers.numbers)
        if (numbers_equal(n.value, expected, tolerance)) return true;
    return false;
}

// Numbers the answer states other than a lone "one".
std::vector<double> strong_numbers(const View& v) {
    std::vector<double> out;
    for (const auto& n : v.numbers.numbers)
        if (!n.weak) out.push_back(n.value);
    return out;
}

// A rubric term that is one number ("75000", "$75", "120", "$2,000", "5k"): its value, whether it
// is written as money, and whether it is written bare (digits only, no scale), as WRIT's authors
// write the leading part of an amount ("$75" for "$75K", "120" for "$120,000").
struct NumberTerm {
    double value = 0;
    bool money = false;
    bool bare = false;
};

std::optional<NumberTerm> number_term(std::string_view term) {
    const auto value = single_number(term);
    if (!value) return std::nullopt;
    const NumberScan scan = scan_numbers(term);
    NumberTerm t;
    t.value = *value;
    t.money = scan.numbers.front().money;
    t.bare = std::none_of(term.begin(), term.end(), [](char c) { return is_ascii_letter(static_cast<unsigned char>(c)); });
    return t;
}

// Whether the answer states the term's number as a value: the same amount however written
// ("$75,000", "$75K", "75 thousand dollars" for "75000"); money not as a count of something else
// ("$60" is not the 60 of "60 days"); a bare term also as the leading part of an amount written with a scale or cents
// ("120" in "$120K" or "$120,000", "$55" in "$55.99"), which is what WRIT's substring match finds.
bool states_number_term(const View& v, const NumberTerm& t) {
    const bool whole = t.value > 0 && t.value == std::floor(t.value);
    // A number counting something else ("60 days", "3 people") is no amount of money.
    auto counts_a_unit = [&](const Number& n) {
        const auto& tok = v.numbers.tokens;
        if (n.last + 1 >= tok.size() || !tok[n.last + 1].soft || tok[n.last + 1].number) return false;
        const std::string& w = tok[n.last + 1].word;
        return in_list(w, {"day", "days", "week", "weeks", "month", "months", "year", "years", "hour", "hours",
                           "minute", "minutes", "second", "seconds", "people", "persons", "person", "percent",
                           "pct", "miles", "mile", "km", "kg", "lbs", "lb", "times", "items", "item", "seats",
                           "seat", "users", "user", "steps", "pages", "page", "calories", "degrees", "points",
                           "am", "pm", "mg", "ml", "nights", "night"});
    };
    for (const auto& n : v.numbers.numbers) {
        if (n.tagged || (t.money && !n.money && counts_a_unit(n))) continue;
        if (numbers_equal(n.value, t.value, 0)) return true;
        if (!t.bare || !whole) continue;
        if (!n.integer && std::floor(n.value) == t.value) return true;
        for (double scale : {1e3, 1e6, 1e9})
            if (numbers_equal(n.value, t.value * scale, 0)) return true;
    }
    return false;
}

// A term is present when its normalised form occurs at word boundaries (outside `covers`); a term
// that is one number also when the answer states that number as a value (states_number_term); a
// term that is only a sign ("$") when the answer writes that sign, or states money for a currency
// sign.
bool term_present(const View& v, const std::string& term, const std::vector<std::string>& covers = {}) {
    if (const auto n = number_term(term)) {
        if (states_number_term(v, *n)) return true;
        // Money is money: the canonical text drops the sign, so "$60" would be found in "60 days".
        if (n->money) return false;
    }
    const std::string nt = evidence::canonical(term);
    if (!nt.empty()) return occurs_uncovered(v.norm, nt, covers);
    const std::string_view sign = text::trim(term);
    if (sign.empty()) return false;
    if (v.raw.find(sign) != std::string_view::npos) return true;
    const bool currency = is_currency_symbol(sign, 0, sign.size()) || sign == "$";
    return currency && std::any_of(v.numbers.numbers.begin(), v.numbers.numbers.end(),
                                   [](const Number& n) { return n.money; });
}

std::vector<std::string> present_terms(const View& v, const std::vector<std::string>& terms,
                                       const std::vector<std::string>& covers) {
    std::vector<std::string> out;
    for (const auto& t : terms)
        if (term_present(v, t, covers)) out.push_back(t);
    return out;
}

// present_terms for what an answer must not name: a one-word term also in its plural ("walnuts"
// names "walnut", "cheeses" names "cheese"), which a must-not list means too.
std::vector<std::string> named_terms(const View& v, const std::vector<std::string>& terms,
                                     const std::vector<std::string>& covers) {
    std::vector<std::string> out;
    for (const auto& t : terms) {
        bool named = term_present(v, t, covers);
        const std::string c = evidence::canonical(t);
        const bool one_word = !c.empty() && c.find(' ') == std::string::npos &&
                              std::all_of(c.begin(), c.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; });
        if (!named && one_word) {
            std::vector<std::string> plurals = {c + "s", c + "es"};
            if (c.size() > 2 && c.back() == 'y' && std::string_view("aeiou").find(c[c.size() - 2]) == std::string_view::npos)
                plurals.push_back(c.substr(0, c.size() - 1) + "ies");
            for (const auto& p : plurals) named = named || term_present(v, p, covers);
        }
        if (named) out.push_back(t);
    }
    return out;
}

// Appends the items of `from` that `into` does not hold yet, in order.
void add_unique(std::vector<std::string>& into, const std::vector<std::string>& from) {
    for (const auto& x : from)
        if (std::find(into.begin(), into.end(), x) == into.end()) into.push_back(x);
}

std::string quoted_list(const std::vector<std::string>& items) {
    std::vector<std::string> q;
    for (const auto& i : items) q.push_back("'" + i + "'");
    return text::join(q, ", ");
}

RubricVerdict verdict(RubricOutcome outcome, double score, std::string reason) {
    RubricVerdict v;
    v.outcome = outcome;
    v.score = score;
    v.reason = std::move(reason);
    return v;
}

// ---- values of any JSON type (exact, multi_field) ---------------------------------------------------

struct Leaf {
    RubricOutcome outcome = RubricOutcome::unsure;
    std::vector<std::string> offending;  // known-wrong values stated instead
    std::string note;
};

struct ValueContext {
    const View& view;
    std::vector<std::string> wrong;  // raw known-wrong values (none inside an expected value)
};

Leaf unstated(const ValueContext& ctx, const std::string& shown) {
    Leaf leaf;
    if (view_abstains(ctx.view)) {
        leaf.outcome = RubricOutcome::fail;
        leaf.note = "the answer declines instead of stating '" + shown + "'";
    } else {
        leaf.note = "the answer does not state '" + shown + "' in so many words; it may paraphrase it";
    }
    return leaf;
}

Leaf check_number(const ValueContext& ctx, double expected, double tolerance, const std::string& shown) {
    Leaf leaf;
    if (states_number(ctx.view, expected, tolerance)) {
        leaf.outcome = RubricOutcome::pass;
        leaf.note = "the answer states " + shown;
        return leaf;
    }
    const auto stated = strong_numbers(ctx.view);
    if (stated.empty()) {
        leaf = unstated(ctx, shown);
        if (leaf.outcome == RubricOutcome::unsure) leaf.note = "the answer states no number where " + shown + " is expected";
        return leaf;
    }
    std::vector<std::string> shown_stated;
    for (std::size_t i = 0; i < stated.size() && i < 5; ++i) shown_stated.push_back(format_number(stated[i]));
    leaf.outcome = RubricOutcome::fail;
    leaf.note = "the answer states " + text::join(shown_stated, ", ") + (stated.size() > 5 ? ", ..." : "") +
                ", not " + shown;
    return leaf;
}

Leaf check_bool(const ValueContext& ctx, bool expected, const std::string& shown) {
    Leaf leaf;
    auto got = parse_yes_no(ctx.view.raw);
    if (!got && (ctx.view.norm == "true" || ctx.view.norm == "false")) got = ctx.view.norm == "true" ? "yes" : "no";
    if (!got) return unstated(ctx, shown);
    const bool yes = *got == "yes";
    leaf.outcome = yes == expected ? RubricOutcome::pass : RubricOutcome::fail;
    leaf.note = "the answer says " + *got + (yes == expected ? "" : ", not " + shown);
    return leaf;
}

Leaf check_string(const ValueContext& ctx, const std::string& expected) {
    const std::string ns = evidence::canonical(expected);
    if (ns == "yes" || ns == "true") return check_bool(ctx, true, expected);
    if (ns == "no" || ns == "false") return check_bool(ctx, false, expected);
    if (auto n = single_number(expected)) return check_number(ctx, *n, 0, expected);
    std::vector<std::string> covers;  // known-wrong values that contain the expected one ("Acme Labs")
    for (const auto& w : ctx.wrong) covers.push_back(evidence::canonical(w));
    Leaf leaf;
    if (occurs_uncovered(ctx.view.norm, ns, covers)) {
        leaf.outcome = RubricOutcome::pass;
        leaf.note = "the answer states '" + expected + "'";
        return leaf;
    }
    for (const auto& w : ctx.wrong) {
        const std::string nw = evidence::canonical(w);
        if (nw.empty() || nw == ns || text::normalized_contains(ns, nw)) continue;
        if (term_present(ctx.view, w)) leaf.offending.push_back(w);
    }
    if (!leaf.offending.empty()) {
        leaf.outcome = RubricOutcome::fail;
        leaf.note = "the answer states " + quoted_list(leaf.offending) + ", a value known to be wrong, not '" +
                    expected + "'";
        return leaf;
    }
    return unstated(ctx, expected);
}

// Tallies a value's leaves: strings by phrase, numbers as numbers, booleans as yes/no; objects and
// arrays leaf by leaf. Null leaves say nothing and are skipped.
struct Tally {
    std::size_t passed = 0, total = 0;
    bool failed = false;
    std::vector<std::string> missing, offending, notes;
};

void tally_value(const ValueContext& ctx, const json& value, const std::string& label, Tally& out) {
    auto record = [&](const Leaf& leaf, const std::string& shown) {
        ++out.total;
        if (leaf.outcome == RubricOutcome::pass) ++out.passed;
        else out.missing.push_back(label.empty() ? shown : label + ": " + shown);
        if (leaf.outcome == RubricOutcome::fail) out.failed = true;
        for (const auto& o : leaf.offending)
            if (std::find(out.offending.begin(), out.offending.end(), o) == out.offending.end()) out.offending.push_back(o);
        out.notes.push_back(leaf.note);
    };
    if (value.is_object()) {
        for (const auto& [key, v] : value.items()) tally_value(ctx, v, label.empty() ? key : label + "." + key, out);
    } else if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i)
            tally_value(ctx, value[i], label.empty() ? "" : label + "[" + std::to_string(i) + "]", out);
    } else if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        if (!evidence::canonical(s).empty()) record(check_string(ctx, s), s);
    } else if (value.is_number()) {
        const double d = value.get<double>();
        record(check_number(ctx, d, 0, format_number(d)), format_number(d));
    } else if (value.is_boolean()) {
        const bool b = value.get<bool>();
        record(check_bool(ctx, b, b ? "yes" : "no"), b ? "yes" : "no");
    }
}

RubricOutcome tally_outcome(const Tally& t) {
    if (t.total == 0) return RubricOutcome::unsure;
    if (t.failed) return RubricOutcome::fail;
    return t.passed == t.total ? RubricOutcome::pass : RubricOutcome::unsure;
}

void collect_strings(const json& value, std::vector<std::string>& out) {
    if (value.is_string()) {
        std::string n = evidence::canonical(value.get_ref<const std::string&>());
        if (!n.empty()) out.push_back(std::move(n));
    } else if (value.is_array() || value.is_object()) {
        for (const auto& v : value) collect_strings(v, out);
    }
}

// Known-wrong values that could be told apart from the expected ones: none inside an expected value.
std::vector<std::string> usable_wrong(std::vector<std::string> candidates, const json& expected) {
    std::vector<std::string> expected_strings;
    collect_strings(expected, expected_strings);
    std::vector<std::string> out;
    for (auto& c : candidates) {
        const std::string nc = evidence::canonical(c);
        if (nc.empty()) continue;
        bool inside = false;
        for (const auto& e : expected_strings)
            if (e == nc || text::normalized_contains(e, nc)) inside = true;
        if (expected.is_number())
            if (auto n = single_number(c); n && numbers_equal(*n, expected.get<double>(), 0)) inside = true;
        if (!inside && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
    }
    return out;
}

// The expected value of a probe: `expected`, else the reference answer as a string; null when neither.
json expected_value(const data::Probe& probe) {
    if (!probe.expected.is_null()) return probe.expected;
    if (!text::trim(probe.answer).empty()) return json(probe.answer);
    return json();
}

// ---- the kinds ------------------------------------------------------------------------------------

RubricVerdict grade_exact(const data::Probe& probe, const data::Rubric& rubric, const View& view,
                          const RubricContext& context) {
    const json expected = expected_value(probe);
    if (expected.is_null()) return verdict(RubricOutcome::unsure, 0, "the probe gives no expected value to compare");
    std::vector<std::string> candidates = context.wrong_values;
    for (const auto* list : {&rubric.reject, &rubric.must_not_contain})
        candidates.insert(candidates.end(), list->begin(), list->end());
    const ValueContext ctx{view, usable_wrong(std::move(candidates), expected)};
    Tally t;
    tally_value(ctx, expected, "", t);
    RubricVerdict v;
    v.outcome = tally_outcome(t);
    v.missing = t.missing;
    v.offending = t.offending;
    if (t.total == 0) {
        v.reason = "the expected value holds nothing to compare";
    } else if (t.total == 1) {
        v.reason = t.notes.front();
    } else {
        v.reason = "the answer states " + std::to_string(t.passed) + " of " + std::to_string(t.total) +
                   " expected values";
        if (!t.missing.empty())
            v.reason += (v.outcome == RubricOutcome::fail ? "; wrong or missing: " : "; not found: ") +
                        text::join(t.missing, "; ");
    }
    v.score = t.total == 0 ? 0 : static_cast<double>(t.passed) / static_cast<double>(t.total);
    return v;
}

RubricVerdict grade_multi_field(const data::Probe& probe, const data::Rubric& rubric, const View& view,
                                const RubricContext& context) {
    json fields = rubric.fields;
    if (!(fields.is_object() || fields.is_array()) || fields.empty()) fields = probe.expected;
    if (!(fields.is_object() || fields.is_array()) || fields.empty())
        return verdict(RubricOutcome::unsure, 0, "the rubric names no fields to compare");
    std::vector<std::string> candidates = context.wrong_values;
    candidates.insert(candidates.end(), rubric.must_not_contain.begin(), rubric.must_not_contain.end());
    const ValueContext ctx{view, usable_wrong(std::move(candidates), fields)};
    std::size_t passed = 0, counted = 0;
    bool failed = false;
    RubricVerdict v;
    for (const auto& [key, value] : fields.items()) {
        Tally t;
        tally_value(ctx, value, fields.is_object() ? key : "", t);
        if (t.total == 0) continue;
        ++counted;
        const RubricOutcome o = tally_outcome(t);
        if (o == RubricOutcome::pass) ++passed;
        if (o == RubricOutcome::fail) failed = true;
        v.missing.insert(v.missing.end(), t.missing.begin(), t.missing.end());
        add_unique(v.offending, t.offending);
    }
    if (counted == 0) return verdict(RubricOutcome::unsure, 0, "the rubric's fields hold nothing to compare");
    v.score = static_cast<double>(passed) / static_cast<double>(counted);
    v.outcome = failed ? RubricOutcome::fail : passed == counted ? RubricOutcome::pass : RubricOutcome::unsure;
    v.reason = "the answer states " + std::to_string(passed) + " of " + std::to_string(counted) + " fields";
    if (!v.missing.empty())
        v.reason += (failed ? "; wrong or missing: " : "; not found in so many words: ") + text::join(v.missing, "; ");
    return v;
}

RubricVerdict grade_structured(const data::Rubric& rubric, const View& view, const RubricContext& context) {
    if (rubric.required.empty()) return verdict(RubricOutcome::unsure, 0, "the rubric lists no required elements");
    RubricVerdict v;
    std::size_t found = 0;
    for (const auto& r : rubric.required) {
        if (term_present(view, r)) ++found;
        else v.missing.push_back(r);
    }
    v.score = static_cast<double>(found) / static_cast<double>(rubric.required.size());
    const double fraction = context.structured_threshold.value_or(rubric.pass_fraction);
    const double needed = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 1.0;
    v.outcome = v.score + 1e-9 >= needed ? RubricOutcome::pass : RubricOutcome::fail;
    v.reason = "the answer names " + std::to_string(found) + " of " + std::to_string(rubric.required.size()) +
               " required elements (" + (v.outcome == RubricOutcome::pass ? "at least " : "fewer than ") +
               format_number(std::round(needed * 100)) + "% needed)";
    if (!v.missing.empty()) v.reason += "; missing: " + quoted_list(v.missing);
    return v;
}

RubricVerdict grade_contains(const data::Rubric& rubric, const View& view) {
    const auto& terms = !rubric.required.empty() ? rubric.required
                        : !rubric.expected_terms.empty() ? rubric.expected_terms
                                                          : rubric.keywords;
    if (terms.empty()) return verdict(RubricOutcome::unsure, 0, "the rubric lists no terms to look for");
    RubricVerdict v;
    for (const auto& t : terms)
        if (!term_present(view, t)) v.missing.push_back(t);
    v.outcome = v.missing.empty() ? RubricOutcome::pass : RubricOutcome::fail;
    v.score = v.missing.empty() ? 1 : 0;
    v.reason = v.missing.empty() ? "the answer names every required term"
                                 : "the answer does not name " + quoted_list(v.missing);
    return v;
}

RubricVerdict grade_numeric(const data::Probe& probe, const data::Rubric& rubric, const View& view) {
    std::optional<double> expected = rubric.number;
    if (!expected && probe.expected.is_number()) expected = probe.expected.get<double>();
    if (!expected && probe.expected.is_string()) expected = single_number(probe.expected.get_ref<const std::string&>());
    if (!expected && probe.expected.is_null()) expected = single_number(probe.answer);
    if (!expected || !std::isfinite(*expected))
        return verdict(RubricOutcome::unsure, 0, "the probe gives no expected number");
    const double tolerance = std::isfinite(rubric.tolerance) ? std::max(0.0, rubric.tolerance) : 0.0;
    const ValueContext ctx{view, {}};
    std::string shown = format_number(*expected);
    if (tolerance > 0) shown += " (within " + format_number(tolerance) + ")";
    const Leaf leaf = check_number(ctx, *expected, tolerance, shown);
    RubricVerdict v = verdict(leaf.outcome, leaf.outcome == RubricOutcome::pass ? 1 : 0, leaf.note);
    if (leaf.outcome != RubricOutcome::pass) v.missing.push_back(format_number(*expected));
    return v;
}

RubricVerdict grade_constraint(const data::Rubric& rubric, const View& view) {
    if (rubric.must_contain.empty() && rubric.must_not_contain.empty())
        return verdict(RubricOutcome::unsure, 0, "the constraint rubric states no constraint");
    RubricVerdict v;
    for (const auto& t : rubric.must_contain)
        if (!term_present(view, t)) v.missing.push_back(t);
    // "peanut-free" (required) does not violate "peanut" (not allowed).
    std::vector<std::string> covers;
    for (const auto& t : rubric.must_contain) covers.push_back(evidence::canonical(t));
    v.offending = named_terms(view, rubric.must_not_contain, covers);
    v.outcome = v.missing.empty() && v.offending.empty() ? RubricOutcome::pass : RubricOutcome::fail;
    v.score = v.outcome == RubricOutcome::pass ? 1 : 0;
    if (v.outcome == RubricOutcome::pass) {
        v.reason = "the answer meets every constraint";
    } else {
        std::vector<std::string> why;
        if (!v.missing.empty()) why.push_back("does not name " + quoted_list(v.missing));
        if (!v.offending.empty()) why.push_back("names " + quoted_list(v.offending) + ", which it must not");
        v.reason = "the answer " + text::join(why, " and ");
    }
    return v;
}

// An abstention passes only when the answer declines and states no candidate value: naming a
// rejected or known-wrong value fails, as does a guess with a number; a decline that also guesses
// or gives a number the rules cannot place ("not in our 3 conversations") is for the judge.
RubricVerdict grade_abstention(const data::Rubric& rubric, const View& view, const RubricContext& context) {
    RubricVerdict v;
    std::vector<std::string> candidates = rubric.reject;
    candidates.insert(candidates.end(), context.wrong_values.begin(), context.wrong_values.end());
    v.offending = present_terms(view, candidates, {});
    const bool declines_ = view_declines(view);
    if (!v.offending.empty()) {
        v.outcome = RubricOutcome::fail;
        v.reason = "the answer names " + quoted_list(v.offending) + (declines_ ? " while declining" : "") +
                   ": it should abstain";
        return v;
    }
    if (!declines_) {
        // An answer with a number answers; anything else may decline in words the rules do not know.
        if (const std::vector<double> stated = strong_numbers(view); !stated.empty()) {
            v.outcome = RubricOutcome::fail;
            v.offending.push_back(format_number(stated.front()));
            v.reason = "the answer states " + format_number(stated.front()) + " instead of abstaining";
            return v;
        }
        return verdict(RubricOutcome::unsure, 0,
                       "the answer does not decline in words the rules know; only a judge can tell whether it answers");
    }
    const std::vector<double> numbers = strong_numbers(view);
    const bool guess = view_decline(view).guesses;
    if (guess && !numbers.empty()) {
        v.outcome = RubricOutcome::fail;
        v.offending.push_back(format_number(numbers.front()));
        v.reason = "the answer declines, then guesses " + format_number(numbers.front()) + ": it should abstain";
        return v;
    }
    if (guess || !numbers.empty())
        return verdict(RubricOutcome::unsure, 0,
                       std::string("the answer declines but also ") +
                           (guess ? "hedges toward an answer" : "states " + format_number(numbers.front())) +
                           ": only a judge can tell whether it guesses");
    return verdict(RubricOutcome::pass, 1, "the answer declines, as it should");
}

// Count statements: "three people", "2 distinct companies", or an answer that is only a number.
std::vector<double> stated_counts(const View& view) {
    std::vector<double> out;
    const auto& t = view.numbers.tokens;
    for (const auto& n : view.numbers.numbers) {
        if (!n.integer || n.value < 0 || n.value >= 1e6) continue;
        if (n.first == 0 && n.last + 1 == t.size()) {
            out.push_back(n.value);
            continue;
        }
        std::size_t k = n.last + 1;
        while (k < t.size() && t[k].soft && !t[k].number &&
               in_list(t[k].word, {"distinct", "different", "unique", "separate", "individual", "other", "total",
                                   "named", "known", "real", "actual"}))
            ++k;
        if (k >= t.size() || !t[k].soft || t[k].number) continue;
        const std::string& w = t[k].word;
        const bool counted =
            in_list(w, {"people", "persons", "person", "individuals", "individual", "entities", "entity", "names",
                        "name", "contacts", "contact", "friends", "friend", "companies", "company", "organizations",
                        "organisations", "organization", "organisation", "orgs", "org", "employers", "employer",
                        "colleagues", "colleague", "coworkers", "coworker", "men", "man", "women", "woman",
                        "children", "child", "kids", "kid", "members", "member", "places", "place", "things",
                        "thing", "items", "item", "ones", "one"}) ||
            (w.size() >= 4 && w.back() == 's' &&
             !in_list(w, {"years", "months", "weeks", "days", "hours", "minutes", "seconds", "times", "dollars",
                          "cents", "euros", "pounds", "miles", "kilometers", "kilometres", "meters", "metres",
                          "feet", "inches", "grams", "degrees", "points", "percents", "hrs", "mins", "yrs", "lbs",
                          "kgs", "decades", "centuries", "nights", "weekends", "mornings", "evenings"}));
        if (counted) out.push_back(n.value);
    }
    return out;
}

RubricVerdict grade_entity_count(const data::Rubric& rubric, const View& view) {
    if (!rubric.expected_count) return verdict(RubricOutcome::unsure, 0, "the rubric gives no expected count");
    const double expected = *rubric.expected_count;
    const std::string shown = std::to_string(*rubric.expected_count);
    // Groups named, each once whichever of its names is used; a name inside a longer name of another
    // entity ("Lee" inside "Robert Lee") does not name its own.
    std::size_t named = 0;
    for (std::size_t g = 0; g < rubric.groups.size(); ++g) {
        std::vector<std::string> others;
        for (std::size_t h = 0; h < rubric.groups.size(); ++h)
            if (h != g)
                for (const auto& name : rubric.groups[h]) others.push_back(evidence::canonical(name));
        for (const auto& name : rubric.groups[g]) {
            const std::string n = evidence::canonical(name);
            if (!n.empty() && occurs_uncovered(view.norm, n, others)) {
                ++named;
                break;
            }
        }
    }
    const bool groups_agree = !rubric.groups.empty() && static_cast<double>(named) == expected;
    // A count stated decides, even against the names given: "Bob, Robert Lee and Alice are three
    // people" names two entities and counts three, which is the failure to merge aliases.
    const auto counts = stated_counts(view);
    for (double c : counts)
        if (c == expected) return verdict(RubricOutcome::pass, 1, "the answer counts " + shown + ", as expected");
    if (!counts.empty()) {
        RubricVerdict v = verdict(RubricOutcome::fail, 0,
                                  "the answer counts " + format_number(counts.front()) + ", not " + shown +
                                      (groups_agree ? " (though the names it gives are " + shown + " entities)" : ""));
        v.missing.push_back(shown);
        return v;
    }
    for (const auto& n : view.numbers.numbers)
        if (n.value == expected && (!n.weak || rubric.groups.empty() || groups_agree))
            return verdict(RubricOutcome::pass, 1, "the answer states " + shown + ", the expected count");
    if (groups_agree)
        return verdict(RubricOutcome::pass, 1,
                       "the answer names " + shown + " distinct entities (aliases counted once)");
    if (view_abstains(view)) {
        RubricVerdict v = verdict(RubricOutcome::fail, 0, "the answer declines instead of counting");
        v.missing.push_back(shown);
        return v;
    }
    return verdict(RubricOutcome::unsure, 0,
                   "the answer states no count" +
                       (rubric.groups.empty() ? std::string()
                                              : " and names " + std::to_string(named) + " of the known entities") +
                       "; " + shown + " expected");
}

// ---- addresses ------------------------------------------------------------------------------------

struct StateName {
    const char* code;
    const char* name;
};
constexpr StateName k_states[] = {
    {"al", "alabama"},        {"ak", "alaska"},       {"az", "arizona"},       {"ar", "arkansas"},
    {"ca", "california"},     {"co", "colorado"},     {"ct", "connecticut"},   {"de", "delaware"},
    {"fl", "florida"},        {"ga", "georgia"},      {"hi", "hawaii"},        {"id", "idaho"},
    {"il", "illinois"},       {"in", "indiana"},      {"ia", "iowa"},          {"ks", "kansas"},
    {"ky", "kentucky"},       {"la", "louisiana"},    {"me", "maine"},         {"md", "maryland"},
    {"ma", "massachusetts"},  {"mi", "michigan"},     {"mn", "minnesota"},     {"ms", "mississippi"},
    {"mo", "missouri"},       {"mt", "montana"},      {"ne", "nebraska"},      {"nv", "nevada"},
    {"nh", "new hampshire"},  {"nj", "new jersey"},   {"nm", "new mexico"},    {"ny", "new york"},
    {"nc", "north carolina"}, {"nd", "north dakota"}, {"oh", "ohio"},          {"ok", "oklahoma"},
    {"or", "oregon"},         {"pa", "pennsylvania"}, {"ri", "rhode island"},  {"sc", "south carolina"},
    {"sd", "south dakota"},   {"tn", "tennessee"},    {"tx", "texas"},         {"ut", "utah"},
    {"vt", "vermont"},        {"va", "virginia"},     {"wa", "washington"},    {"wv", "west virginia"},
    {"wi", "wisconsin"},      {"wy", "wyoming"},      {"dc", "district of columbia"}, {"pr", "puerto rico"},
};

// Codes that are also common English words: in an answer they count as a state only when upper-case.
bool code_is_word(std::string_view code) {
    return in_list(code, {"or", "in", "me", "oh", "ok", "hi", "pa", "ma", "la", "id", "al", "de", "co", "mo", "ne"});
}

const StateName* state_by_code(std::string_view code) {
    for (const auto& s : k_states)
        if (code == s.code) return &s;
    return nullptr;
}

// One spelling per address word: suffixes and unit words abbreviated, directionals to letters.
std::string canonical_address_word(const std::string& w) {
    static const std::pair<std::string_view, std::string_view> k_map[] = {
        {"street", "st"},     {"str", "st"},       {"saint", "st"},    {"avenue", "ave"},  {"av", "ave"},
        {"boulevard", "blvd"}, {"road", "rd"},     {"drive", "dr"},    {"drv", "dr"},      {"lane", "ln"},
        {"court", "ct"},      {"place", "pl"},     {"terrace", "ter"}, {"parkway", "pkwy"}, {"highway", "hwy"},
        {"circle", "cir"},    {"square", "sq"},    {"trail", "trl"},   {"plaza", "plz"},   {"apartment", "apt"},
        {"unit", "apt"},      {"#", "apt"},        {"suite", "ste"},   {"north", "n"},     {"south", "s"},
        {"east", "e"},        {"west", "w"},       {"northeast", "ne"}, {"northwest", "nw"}, {"southeast", "se"},
        {"southwest", "sw"},  {"mount", "mt"},     {"fort", "ft"},     {"first", "1st"},   {"second", "2nd"},
        {"third", "3rd"},     {"fourth", "4th"},   {"fifth", "5th"},   {"sixth", "6th"},   {"seventh", "7th"},
        {"eighth", "8th"},    {"ninth", "9th"},    {"tenth", "10th"},  {"eleventh", "11th"}, {"twelfth", "12th"}};
    for (const auto& [from, to] : k_map)
        if (w == from) return std::string(to);
    return w;
}

bool is_street_suffix(std::string_view w) {
    return in_list(w, {"st", "ave", "blvd", "rd", "dr", "ln", "ct", "pl", "ter", "pkwy", "hwy", "cir", "sq", "trl",
                       "plz", "way"});
}
bool is_unit_marker(std::string_view w) { return w == "apt" || w == "ste"; }
bool is_directional(std::string_view w) { return in_list(w, {"n", "s", "e", "w", "ne", "nw", "se", "sw"}); }
bool starts_with_digit(const std::string& w) { return !w.empty() && is_digit(static_cast<unsigned char>(w[0])); }

struct AddrToken {
    std::string word;  // canonical
    bool upper = false;  // written in capitals ("OR")
    std::size_t part = 0;  // comma-separated part
};

std::vector<AddrToken> address_tokens(std::string_view s) {
    std::vector<AddrToken> out;
    const std::size_t n = s.size();
    std::size_t part = 0, i = 0;
    std::string separator;  // since the last token
    bool last_single = false;  // the last token was one letter, or letters joined by dots ("D.C.")
    while (i < n) {
        const char c = s[i];
        if (const std::size_t len = symbol_length(s, i); len > 0) {
            // Curly apostrophes are dropped, like text::normalize does.
            const bool apostrophe = len == 3 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                                    (static_cast<unsigned char>(s[i + 2]) == 0x98 ||
                                     static_cast<unsigned char>(s[i + 2]) == 0x99);
            if (!apostrophe) separator += ' ';
            i += len;
            continue;
        }
        if (c == '#') {
            out.push_back({"apt", false, part});
            last_single = false;
            separator.clear();
            ++i;
            continue;
        }
        if (!is_word_byte(s, i)) {
            if (c == ',' || c == ';' || c == '\n' || c == '|') ++part;
            if (c != '\'') separator += c;
            ++i;
            continue;
        }
        std::string raw;
        bool all_upper = true, any_letter = false;
        while (i < n && (is_word_byte(s, i) || (s[i] == '\'' && i + 1 < n && is_word_byte(s, i + 1)))) {
            if (s[i] != '\'') {
                const auto ch = static_cast<unsigned char>(s[i]);
                if (is_ascii_letter(ch)) {
                    any_letter = true;
                    if (ch >= 'a') all_upper = false;
                }
                raw.push_back(lower(s[i]));
            }
            ++i;
        }
        const bool single = raw.size() == 1 && any_letter;
        if (single && last_single && separator == "." && !out.empty() && out.back().part == part) {
            out.back().word += raw;  // "D.C." -> "dc"
            out.back().upper = out.back().upper && all_upper;
        } else {
            out.push_back({raw, any_letter && all_upper, part});
        }
        last_single = single;
        separator.clear();
    }
    for (auto& t : out) t.word = canonical_address_word(t.word);
    return out;
}

std::vector<std::string> canonical_words(std::string_view phrase) {
    std::vector<std::string> out;
    for (auto& w : text::split(phrase, ' ')) out.push_back(canonical_address_word(w));
    return out;
}

// Start indices of `phrase` in `tokens`.
std::vector<std::size_t> phrase_positions(const std::vector<AddrToken>& tokens, const std::vector<std::string>& phrase) {
    std::vector<std::size_t> out;
    if (phrase.empty() || phrase.size() > tokens.size()) return out;
    for (std::size_t i = 0; i + phrase.size() <= tokens.size(); ++i) {
        bool ok = true;
        for (std::size_t k = 0; k < phrase.size() && ok; ++k) ok = tokens[i + k].word == phrase[k];
        if (ok) out.push_back(i);
    }
    return out;
}

bool names_state(const std::vector<AddrToken>& tokens, const StateName& state) {
    for (const auto& t : tokens)
        if (t.word == state.code && (t.upper || !code_is_word(state.code))) return true;
    return !phrase_positions(tokens, canonical_words(state.name)).empty();
}

struct ExpectedAddress {
    std::string number;                            // house number; empty: none
    std::vector<std::string> street;               // street name, canonical words
    std::string suffix;                            // canonical suffix; empty: none
    std::vector<std::string> units;                // apartment / suite identifiers
    std::vector<std::vector<std::string>> places;  // city and other named parts
    std::vector<const StateName*> states;
    std::string zip;  // not required, but another one stated is not this address
};

bool is_zip(const std::string& w) {
    return w.size() == 5 && std::all_of(w.begin(), w.end(), [](char ch) { return is_digit(static_cast<unsigned char>(ch)); });
}

ExpectedAddress parse_address(std::string_view text_) {
    const auto t = address_tokens(text_);
    std::vector<bool> used(t.size(), false);
    ExpectedAddress a;
    for (std::size_t i = 0; i + 1 < t.size(); ++i)
        if (is_unit_marker(t[i].word) && !used[i] && t[i + 1].part == t[i].part) {
            a.units.push_back(t[i + 1].word);
            used[i] = used[i + 1] = true;
        }
    // The house number: a number followed by words in its part ("123 Oak St"), not a unit's.
    std::size_t house = t.size();
    for (std::size_t i = 0; i < t.size() && house == t.size(); ++i) {
        if (used[i] || !starts_with_digit(t[i].word)) continue;
        for (std::size_t j = i + 1; j < t.size() && t[j].part == t[i].part; ++j)
            if (!used[j] && !starts_with_digit(t[j].word)) {
                house = i;
                break;
            }
    }
    if (house < t.size()) {
        a.number = t[house].word;
        used[house] = true;
        std::size_t j = house + 1;
        for (; j < t.size() && t[j].part == t[house].part && !used[j]; ++j) {
            const std::string& w = t[j].word;
            const bool first = a.street.empty();
            if (!first && starts_with_digit(w)) break;  // a ZIP code written without a comma
            used[j] = true;
            if (!first && is_street_suffix(w)) {
                a.suffix = w;
                ++j;
                break;
            }
            a.street.push_back(w);
        }
        // A directional after the suffix ("Oak St NE") is not required.
        if (!a.suffix.empty() && j < t.size() && t[j].part == t[house].part && !used[j] && is_directional(t[j].word))
            used[j] = true;
    }
    // The other parts: ZIP codes and the country are not required; a state at a part's end is a
    // state; what remains is a place (the city).
    std::size_t i = 0;
    while (i < t.size()) {
        const std::size_t part = t[i].part;
        std::vector<std::string> words;
        bool after_zip = false;
        for (; i < t.size() && t[i].part == part; ++i) {
            if (used[i]) continue;
            const std::string& w = t[i].word;
            const bool digits = std::all_of(w.begin(), w.end(), [](char ch) { return is_digit(static_cast<unsigned char>(ch)); });
            const bool zip = digits && (w.size() == 5 || (w.size() == 4 && after_zip));  // "97201", "97201-1234"
            if (zip && w.size() == 5 && a.zip.empty()) a.zip = w;
            after_zip = zip;
            if (zip || w == "usa" || (w == "us" && t[i].upper)) continue;
            words.push_back(w);
        }
        if (words.size() >= 2 && words[words.size() - 2] == "united" && words.back() == "states") words.resize(words.size() - 2);
        const StateName* state = nullptr;
        std::size_t state_words = 0;
        for (const auto& s : k_states) {
            const auto name = canonical_words(s.name);
            if (name.size() <= words.size() && name.size() > state_words &&
                std::equal(name.begin(), name.end(), words.end() - static_cast<std::ptrdiff_t>(name.size()))) {
                state = &s;
                state_words = name.size();
            }
        }
        if (!state && !words.empty() && words.back().size() == 2)
            if (const StateName* s = state_by_code(words.back())) {
                state = s;
                state_words = 1;
            }
        if (state) {
            if (std::find(a.states.begin(), a.states.end(), state) == a.states.end()) a.states.push_back(state);
            words.resize(words.size() - state_words);
        }
        if (!words.empty()) a.places.push_back(words);
    }
    return a;
}

RubricVerdict grade_address(const data::Probe& probe, const View& view) {
    const json expected = expected_value(probe);
    std::string address;
    if (expected.is_string()) {
        address = expected.get<std::string>();
    } else if (expected.is_object() || expected.is_array()) {
        std::vector<std::string> parts;
        for (const auto& v : expected)
            if (v.is_string() || v.is_number()) parts.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        address = text::join(parts, ", ");
    }
    // An annotation after the address ("123 Main Street, Springfield, IL (single location; ...)", as
    // WRIT writes its values) is no part of it; no address component is written in parentheses.
    if (const auto open = address.find('('); open != std::string::npos && open > 0)
        address = std::string(text::trim(std::string_view(address).substr(0, open)));
    const ExpectedAddress a = parse_address(address);
    if (a.number.empty() && a.street.empty() && a.units.empty() && a.places.empty() && a.states.empty())
        return verdict(RubricOutcome::unsure, 0, "the probe gives no address to compare");
    const auto tokens = address_tokens(view.raw);
    std::vector<std::string> hard, soft;  // components wrong or missing / not found as written
    if (!a.street.empty()) {
        const auto at = phrase_positions(tokens, a.street);
        const std::string street = text::join(a.street, " ");
        if (at.empty()) {
            hard.push_back("street '" + street + "'");
            if (!a.number.empty()) hard.push_back("house number " + a.number);
        } else {
            if (!a.number.empty()) {
                bool here = false, other = false, anywhere = false;
                for (std::size_t p : at)
                    for (std::size_t back = 1; back <= 2 && back <= p; ++back) {
                        const std::string& w = tokens[p - back].word;
                        if (w == a.number) here = true;
                        else if (back == 1 && starts_with_digit(w)) other = true;
                        if (back == 1 && !is_directional(w)) break;
                    }
                for (const auto& tok : tokens) anywhere = anywhere || tok.word == a.number;
                if (!here) (other || !anywhere ? hard : soft).push_back("house number " + a.number);
            }
            if (!a.suffix.empty()) {
                bool here = false, other = false;
                for (std::size_t p : at) {
                    const std::size_t after = p + a.street.size();
                    if (after >= tokens.size()) continue;
                    if (tokens[after].word == a.suffix) here = true;
                    else if (is_street_suffix(tokens[after].word)) other = true;
                }
                if (!here) (other ? hard : soft).push_back("street suffix '" + a.suffix + "'");
            }
        }
    } else if (!a.number.empty()) {
        bool anywhere = false;
        for (const auto& tok : tokens) anywhere = anywhere || tok.word == a.number;
        if (!anywhere) hard.push_back("house number " + a.number);
    }
    for (const auto& u : a.units) {
        bool found = false;
        for (const auto& tok : tokens) found = found || tok.word == u;
        if (!found) soft.push_back("unit " + u);
    }
    for (const auto& p : a.places)
        if (phrase_positions(tokens, p).empty()) soft.push_back("'" + text::join(p, " ") + "'");
    for (const StateName* s : a.states)
        if (!names_state(tokens, *s)) soft.push_back("state " + std::string(s->code));
    if (!a.zip.empty()) {
        bool same = false, other = false;
        for (const auto& tok : tokens)
            if (is_zip(tok.word) && tok.word != a.number) (tok.word == a.zip ? same : other) = true;
        if (other && !same) soft.push_back("ZIP code " + a.zip + " (it gives another)");
    }
    RubricVerdict v;
    if (!hard.empty()) {
        v.outcome = RubricOutcome::fail;
        v.missing = hard;
        v.missing.insert(v.missing.end(), soft.begin(), soft.end());
        v.reason = "the answer does not give the address's " + text::join(hard, " and ");
    } else if (soft.empty()) {
        v = verdict(RubricOutcome::pass, 1, "the answer gives the address (normalised: every component present)");
    } else {
        v.missing = soft;
        v.outcome = view_abstains(view) ? RubricOutcome::fail : RubricOutcome::unsure;
        v.reason = view_abstains(view) ? "the answer declines to give the address"
                                       : "the answer does not give, as written, the address's " + text::join(soft, ", ");
    }
    return v;
}

// Phrases that forbidden elements may sit inside without being named: the expected value's own
// strings and every required term ("Acme" is not named by "Acme Labs" when "Acme Labs" is expected).
std::vector<std::string> protected_phrases(const data::Probe& probe, const data::Rubric& rubric) {
    std::vector<std::string> out;
    collect_strings(expected_value(probe), out);
    collect_strings(rubric.fields, out);
    for (const auto* list : {&rubric.required, &rubric.must_contain, &rubric.expected_terms})
        for (const auto& t : *list) out.push_back(evidence::canonical(t));
    return out;
}

// A rejected element that describes a reading rather than naming a value ("Alice Martinez as current
// lead without staleness warning"): more than four words, or a word that makes it a claim.
bool descriptive(const std::string& element) {
    const auto words = text::split(evidence::canonical(element), ' ');
    if (words.size() > 4) return true;
    for (const auto& w : words)
        if (in_list(w, {"as", "without", "with", "is", "are", "was", "were", "not", "no", "asserting", "claiming",
                        "treating", "saying", "instead", "sole", "only"}))
            return true;
    return false;
}

// The names, numbers and codes a descriptive element is about: its words with a digit, a currency
// sign or a capital letter ("Alice", "Martinez", "$50K", "CRM-9012").
std::vector<std::string> salient_words(const std::string& element) {
    std::vector<std::string> out;
    for (const auto& raw : text::split(element, ' ')) {
        std::string w(raw);
        while (!w.empty() && std::string_view(",.;:!?()\"'").find(w.back()) != std::string_view::npos) w.pop_back();
        while (!w.empty() && std::string_view("(\"'").find(w.front()) != std::string_view::npos) w.erase(w.begin());
        if (w.empty()) continue;
        const bool marked = std::any_of(w.begin(), w.end(), [](char c) { return is_digit(static_cast<unsigned char>(c)) || c == '$'; }) ||
                            (w[0] >= 'A' && w[0] <= 'Z');
        if (marked && !in_list(evidence::canonical(w), {"as", "the", "a", "an", "i", "no", "not"})) out.push_back(w);
    }
    return out;
}

// reject_elements beside any kind but abstention. A wrong answer that names one has it listed
// among what it got wrong. A passing answer that names one as written ("Bob Okonkwo is CEO; he
// replaced Alice Nguyen") may name it as the past or as current, which only meaning tells: it goes
// to the judge, never a pass, and never a decided error for a faithful answer. So does a passing
// answer that names every name and number of a descriptive one ("Alice Martinez as current lead
// without staleness warning").
void apply_rejects(const data::Probe& probe, const data::Rubric& rubric, const View& view, RubricVerdict& v) {
    std::vector<std::string> literal, fitted;
    for (const auto& r : rubric.reject) {
        if (!descriptive(r)) {
            literal.push_back(r);
            continue;
        }
        const auto salient = salient_words(r);
        if (!salient.empty() && std::all_of(salient.begin(), salient.end(),
                                            [&](const std::string& w) { return term_present(view, w); }))
            fitted.push_back(r);
    }
    const auto named = present_terms(view, literal, protected_phrases(probe, rubric));
    add_unique(v.offending, named);
    if (v.outcome != RubricOutcome::pass) {
        if (!named.empty()) v.reason += "; it also names rejected " + quoted_list(named);
        return;
    }
    if (!named.empty()) {
        v.outcome = RubricOutcome::unsure;
        v.reason += "; but it also names rejected " + quoted_list(named) +
                    ": only a judge can tell whether as the past or as current";
    } else if (!fitted.empty()) {
        v.outcome = RubricOutcome::unsure;
        v.reason += "; but it names what the rejected reading " + quoted_list(fitted) +
                    " is about: only a judge can tell which reading it gives";
    }
}

}  // namespace

const char* rubric_outcome_name(RubricOutcome outcome) {
    switch (outcome) {
        case RubricOutcome::pass: return "pass";
        case RubricOutcome::fail: return "fail";
        case RubricOutcome::unsure: return "unsure";
    }
    return "unsure";
}

data::Rubric effective_rubric(const data::Probe& probe) {
    if (probe.rubric) return *probe.rubric;
    data::Rubric r;
    r.kind = probe.should_abstain || probe.kind == data::ProbeKind::abstain ? data::RubricKind::abstention
                                                                             : data::RubricKind::exact;
    return r;
}

RubricVerdict grade_rubric(const data::Probe& probe, std::string_view answer) {
    return grade_rubric(probe, answer, RubricContext{});
}

RubricVerdict grade_rubric(const data::Probe& probe, std::string_view answer, const RubricContext& context) {
    const data::Rubric rubric = effective_rubric(probe);
    const View view = make_view(answer, rubric);
    RubricVerdict v;
    if (view.norm.empty())
        return verdict(RubricOutcome::fail, 0,
                       rubric.kind == data::RubricKind::abstention
                           ? "the answer is empty; an empty answer is not an abstention"
                           : "the answer is empty: it states nothing");
    switch (rubric.kind) {
        case data::RubricKind::exact: v = grade_exact(probe, rubric, view, context); break;
        case data::RubricKind::structured: v = grade_structured(rubric, view, context); break;
        case data::RubricKind::contains: v = grade_contains(rubric, view); break;
        case data::RubricKind::numeric: v = grade_numeric(probe, rubric, view); break;
        case data::RubricKind::address: v = grade_address(probe, view); break;
        case data::RubricKind::multi_field: v = grade_multi_field(probe, rubric, view, context); break;
        case data::RubricKind::entity_count: v = grade_entity_count(rubric, view); break;
        case data::RubricKind::constraint: v = grade_constraint(rubric, view); break;
        case data::RubricKind::abstention: v = grade_abstention(rubric, view, context); break;
        case data::RubricKind::semantic: v = verdict(RubricOutcome::unsure, 0, "needs the judge"); break;
    }
    // A value given with a doubt ("I'm not sure, maybe June 15?") may be a guess: whether the answer
    // commits to it is for the judge, as the answer rules leave a hedged statement (never a pass).
    if (v.outcome == RubricOutcome::pass && rubric.kind != data::RubricKind::abstention &&
        rubric.kind != data::RubricKind::constraint && (view_declines(view) || view_decline(view).guesses)) {
        v.outcome = RubricOutcome::unsure;
        v.reason += "; but the answer hedges: only a judge can tell whether it commits to it";
    }
    // Forbidden elements fail any kind, whatever else the answer says.
    if (!rubric.forbidden.empty()) {
        const auto named = named_terms(view, rubric.forbidden, protected_phrases(probe, rubric));
        if (!named.empty()) {
            add_unique(v.offending, named);
            v.outcome = RubricOutcome::fail;
            v.score = 0;
            v.reason = "the answer names forbidden " + quoted_list(named) + " (otherwise: " + v.reason + ")";
        }
    }
    if (rubric.kind != data::RubricKind::abstention && !rubric.reject.empty())
        apply_rejects(probe, rubric, view, v);
    // A constraint check beside another kind (WRIT's constraint_check under a semantic rubric, say):
    // a violated constraint fails the answer whatever else it says; a kept one decides nothing more.
    if (rubric.kind != data::RubricKind::constraint && (!rubric.must_contain.empty() || !rubric.must_not_contain.empty())) {
        const RubricVerdict c = grade_constraint(rubric, view);
        if (c.outcome == RubricOutcome::fail) {
            add_unique(v.offending, c.offending);
            v.missing.insert(v.missing.end(), c.missing.begin(), c.missing.end());
            v.outcome = RubricOutcome::fail;
            v.score = 0;
            v.reason = "constraint: " + c.reason + " (otherwise: " + v.reason + ")";
        }
    }
    if (!std::isfinite(v.score)) v.score = 0;
    v.score = std::clamp(v.score, 0.0, 1.0);
    return v;
}

namespace {

// Every value record the probe's targets ever had: their histories, then their distractors.
template <class F>
void for_each_target_record(const data::Scenario& scenario, const data::Probe& probe, F&& visit) {
    for (const auto& id : probe.targets)
        if (const data::LedgerEvent* event = scenario.event(id)) {
            for (const auto& r : event->history) visit(r);
            for (const auto& r : event->distractors) visit(r);
        }
}

}  // namespace

RubricContext rubric_context(const data::Scenario& scenario, const data::Probe& probe) {
    RubricContext context;
    const json expected = expected_value(probe);
    std::set<std::string> seen;
    for_each_target_record(scenario, probe, [&](const data::ValueRecord& record) {
        if (!expected.is_null() && record.value == expected) return;
        for (auto& m : data::value_mentions(record))
            if (!evidence::canonical(m).empty() && seen.insert(m).second) context.wrong_values.push_back(std::move(m));
    });
    return context;
}

bool answer_states_known_value(const data::Scenario& scenario, const data::Probe& probe, std::string_view answer) {
    // Read as the rubric reads it: words at word boundaries, a number as a value ("$75K" states 75000).
    data::Rubric none;
    const View view = make_view(answer, none);
    bool stated = false;
    for_each_target_record(scenario, probe, [&](const data::ValueRecord& record) {
        for (const auto& m : data::value_mentions(record))
            stated = stated || term_present(view, m);
        if (!stated && record.value.is_number()) stated = states_number(view, record.value.get<double>(), 0);
    });
    return stated;
}

bool answer_declines(const data::Probe& probe, std::string_view answer) {
    return declines(answer, evidence::canonical(answer), effective_rubric(probe));
}

}  // namespace memfail::grade

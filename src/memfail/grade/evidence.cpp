// SPDX-License-Identifier: MIT
// The text-evidence matcher's reading of text: units, labels, canonical tokens (evidence.hpp).
#include <memfail/grade/evidence.hpp>

#include <memfail/core/error.hpp>
#include <memfail/core/text.hpp>
#include <memfail/embedded/evidence_lexicon.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace memfail::grade::evidence {

namespace {

bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_alpha(unsigned char c) { return is_lower(c) || is_upper(c); }

Lexicon parse_lexicon() {
    const auto* file = embedded::evidence_lexicon::find("evidence.json");
    MF_ASSERT(file != nullptr, "the evidence lexicon is embedded");
    const auto j = nlohmann::json::parse(file->content);
    Lexicon lex;
    const auto set_of = [&](const char* key) {
        std::unordered_set<std::string> out;
        for (const auto& w : j.at(key)) out.insert(w.get<std::string>());
        return out;
    };
    lex.label_words = set_of("label_words");
    lex.meaning_labels = set_of("meaning_labels");
    lex.weekdays = set_of("weekdays");
    lex.negators = set_of("negators");
    lex.hedges = set_of("hedges");
    lex.operator_glue = set_of("operator_glue");
    lex.indefinite_persons = set_of("indefinite_persons");
    for (const auto& [k, v] : j.at("contractions").items()) lex.contractions[k] = v.get<std::string>();
    for (const auto& [canon, members] : j.at("word_classes").items())
        for (const auto& m : members) lex.word_class[m.get<std::string>()] = canon;
    for (const auto& [k, v] : j.at("number_words").items()) lex.number_words[k] = v.get<std::string>();
    for (const auto& [k, v] : j.at("months").items()) lex.months[k] = v.get<int>();
    for (const auto& [k, v] : j.at("scale_words").items()) lex.scale_words[k] = v.get<double>();
    return lex;
}

// One raw word of lower-cased text: letters, digits and inner apostrophes, or a number with its
// money sign, thousands commas, decimals and suffix.
struct Scanner {
    std::string_view s;
    std::size_t i = 0;
    Tokens out;

    static std::string lower_unified(std::string_view text) {
        std::string r;
        r.reserve(text.size());
        for (std::size_t k = 0; k < text.size(); ++k) {
            const unsigned char c = static_cast<unsigned char>(text[k]);
            // U+2018/2019 (quotes used as apostrophes), U+201C/201D, U+2013/2014 dashes.
            if (c == 0xE2 && k + 2 < text.size() && static_cast<unsigned char>(text[k + 1]) == 0x80) {
                const unsigned char third = static_cast<unsigned char>(text[k + 2]);
                if (third == 0x98 || third == 0x99) r.push_back('\'');
                else if (third == 0x9C || third == 0x9D) r.push_back('"');
                else r.push_back(' ');
                k += 2;
                continue;
            }
            r.push_back(static_cast<char>(std::tolower(c)));
        }
        return r;
    }

    static std::string trim_number(std::string digits) {
        // "1.50" -> "1.5", "120.00" -> "120"; leading zeros of integers are kept (codes, "007").
        if (auto dot = digits.find('.'); dot != std::string::npos) {
            while (!digits.empty() && digits.back() == '0') digits.pop_back();
            if (!digits.empty() && digits.back() == '.') digits.pop_back();
        }
        return digits;
    }

    static std::string multiply(const std::string& number, double factor) {
        const double v = std::strtod(number.c_str(), nullptr) * factor;
        // Whole amounts as integers; beyond what a long long holds (1e29 from "1e20 billion") the
        // cast would be undefined, so those stay in floating form.
        if (std::isfinite(v) && std::abs(v) < 9e18) {
            const double rounded = std::floor(v + 0.5);
            if (std::abs(v - rounded) < 1e-6) return std::to_string(static_cast<long long>(rounded));
        }
        return trim_number(std::to_string(v));
    }

    void number() {
        std::string digits;
        while (i < s.size()) {
            const unsigned char c = static_cast<unsigned char>(s[i]);
            if (is_digit(c)) {
                digits.push_back(static_cast<char>(c));
                ++i;
            } else if (c == ',' && !digits.empty() && i + 3 < s.size() && is_digit(static_cast<unsigned char>(s[i + 1])) &&
                       is_digit(static_cast<unsigned char>(s[i + 2])) && is_digit(static_cast<unsigned char>(s[i + 3])) &&
                       (i + 4 >= s.size() || !is_digit(static_cast<unsigned char>(s[i + 4])))) {
                ++i;  // a thousands separator
            } else if (c == '.' && i + 1 < s.size() && is_digit(static_cast<unsigned char>(s[i + 1])) && digits.find('.') == std::string::npos &&
                       !digits.empty()) {
                digits.push_back('.');
                ++i;
            } else {
                break;
            }
        }
        // An ISO date: yyyy-mm-dd (a time after it is read as its own tokens).
        if (digits.size() == 4 && i + 4 < s.size() && s[i] == '-' && is_digit(static_cast<unsigned char>(s[i + 1])) &&
            is_digit(static_cast<unsigned char>(s[i + 2])) && s[i + 3] == '-') {
            std::size_t j = i + 4;
            std::string day;
            while (j < s.size() && is_digit(static_cast<unsigned char>(s[j])) && day.size() < 2) day.push_back(s[j++]);
            if (!day.empty() && (j >= s.size() || !is_digit(static_cast<unsigned char>(s[j])))) {
                const int month = std::atoi(std::string(s.substr(i + 1, 2)).c_str());
                const int d = std::atoi(day.c_str());
                if (month >= 1 && month <= 12 && d >= 1 && d <= 31) {
                    out.push_back(date_token(month, d));
                    out.push_back(digits);
                    i = j;
                    return;
                }
            }
        }
        // A clock time: "09:00", "9:30" (seconds dropped); am / pm is applied later.
        if (!digits.empty() && digits.size() <= 2 && digits.find('.') == std::string::npos && i + 2 < s.size() + 0 &&
            s[i] == ':' && is_digit(static_cast<unsigned char>(s[i + 1])) && is_digit(static_cast<unsigned char>(s[i + 2])) &&
            (i + 3 >= s.size() || !is_digit(static_cast<unsigned char>(s[i + 3])))) {
            const int hour = std::atoi(digits.c_str());
            const int minute = std::atoi(std::string(s.substr(i + 1, 2)).c_str());
            i += 3;
            if (i + 2 < s.size() && s[i] == ':' && is_digit(static_cast<unsigned char>(s[i + 1])) &&
                is_digit(static_cast<unsigned char>(s[i + 2])))
                i += 3;
            char buf[32];
            std::snprintf(buf, sizeof buf, "%02d:%02d", hour % 100, minute % 100);
            out.push_back(buf);
            return;
        }
        // Suffixes written onto the number: k / m / bn, ordinals, am / pm.
        std::string suffix;
        std::size_t j = i;
        while (j < s.size() && is_lower(static_cast<unsigned char>(s[j])) && suffix.size() < 3) suffix.push_back(s[j++]);
        const bool ends = j >= s.size() || !is_alpha(static_cast<unsigned char>(s[j]));
        if (ends && (suffix == "k" || suffix == "m" || suffix == "bn" || suffix == "b")) {
            out.push_back(multiply(digits, suffix == "k" ? 1e3 : suffix == "m" ? 1e6 : 1e9));
            i = j;
            return;
        }
        if (ends && (suffix == "st" || suffix == "nd" || suffix == "rd" || suffix == "th")) {
            out.push_back(trim_number(digits));
            i = j;
            return;
        }
        if (ends && (suffix == "am" || suffix == "pm")) {
            out.push_back(trim_number(digits));
            out.push_back(suffix);
            i = j;
            return;
        }
        out.push_back(trim_number(digits));
    }

    static std::string date_token(int month, int day) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%02d-%02d", month, day);
        return buf;
    }

    void word(const Lexicon& lex) {
        std::string w;
        while (i < s.size()) {
            const unsigned char c = static_cast<unsigned char>(s[i]);
            if (is_lower(c) || is_digit(c) || c >= 0x80) {
                w.push_back(static_cast<char>(c));
                ++i;
            } else if (c == '\'' && i + 1 < s.size() && is_lower(static_cast<unsigned char>(s[i + 1])) && !w.empty()) {
                w.push_back('\'');
                ++i;
            } else {
                break;
            }
        }
        if (auto it = lex.contractions.find(w); it != lex.contractions.end()) {
            for (auto& part : text::split(it->second, ' ')) out.push_back(part);
            return;
        }
        if (ends_with(w, "n't")) {
            out.push_back(w.substr(0, w.size() - 3));
            out.push_back("not");
            return;
        }
        for (const char* suffix : {"'re", "'ve", "'ll", "'m"}) {
            if (ends_with(w, suffix)) {
                out.push_back(w.substr(0, w.size() - std::string_view(suffix).size()));
                const std::string_view sx = suffix;
                out.push_back(sx == "'re" ? "are" : sx == "'ve" ? "have" : sx == "'ll" ? "will" : "am");
                return;
            }
        }
        w.erase(std::remove(w.begin(), w.end(), '\''), w.end());
        if (!w.empty()) out.push_back(std::move(w));
    }

    static bool ends_with(const std::string& w, std::string_view suffix) {
        return w.size() > suffix.size() && w.compare(w.size() - suffix.size(), suffix.size(), suffix) == 0;
    }

    void run(const Lexicon& lex) {
        while (i < s.size()) {
            const unsigned char c = static_cast<unsigned char>(s[i]);
            if (is_digit(c)) {
                number();
            } else if (c == '$' || c == 0xC2 /* pound sign's lead byte: £ */) {
                ++i;
                if (c == 0xC2 && i < s.size()) ++i;
            } else if (is_lower(c) || c >= 0x80) {
                word(lex);
            } else {
                ++i;
            }
        }
    }
};

bool all_digits(const std::string& t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return is_digit(static_cast<unsigned char>(c)); });
}
bool is_number(const std::string& t) {
    if (t.empty() || !is_digit(static_cast<unsigned char>(t[0]))) return false;
    return std::all_of(t.begin(), t.end(), [](char c) { return is_digit(static_cast<unsigned char>(c)) || c == '.'; });
}

// Values and word classes written one way, on the scanned tokens.
Tokens canonical_values(Tokens in, const Lexicon& lex) {
    for (auto& t : in)
        if (auto it = lex.number_words.find(t); it != lex.number_words.end()) t = it->second;
    Tokens out;
    out.reserve(in.size());
    for (std::size_t k = 0; k < in.size(); ++k) {
        const std::string& t = in[k];
        const auto next = [&](std::size_t d) -> const std::string& {
            static const std::string k_empty;
            return k + d < in.size() ? in[k + d] : k_empty;
        };
        // A multiplier word after a number: "120 thousand", "1.5 million", "3 dozen".
        if (auto scale = lex.scale_words.find(next(1)); is_number(t) && scale != lex.scale_words.end()) {
            out.push_back(Scanner::multiply(t, scale->second));
            ++k;
            continue;
        }
        // A date: "june 15", "june 15 2026", "15 june", "15 of june".
        if (auto m = lex.months.find(t); m != lex.months.end() && all_digits(next(1)) && next(1).size() <= 2) {
            const int day = std::atoi(next(1).c_str());
            if (day >= 1 && day <= 31) {
                out.push_back(Scanner::date_token(m->second, day));
                k += 1;
                continue;
            }
        }
        if (all_digits(t) && t.size() <= 2) {
            const int day = std::atoi(t.c_str());
            const bool of = next(1) == "of";
            const auto m = lex.months.find(of ? next(2) : next(1));
            if (day >= 1 && day <= 31 && m != lex.months.end()) {
                out.push_back(Scanner::date_token(m->second, day));
                k += of ? 2 : 1;
                continue;
            }
        }
        // A clock time with am / pm: "3:30 pm" -> "15:30".
        if (t.size() == 5 && t[2] == ':' && (next(1) == "am" || next(1) == "pm")) {
            int hour = std::atoi(t.substr(0, 2).c_str());
            if (hour >= 1 && hour <= 12) {
                if (next(1) == "pm" && hour != 12) hour += 12;
                if (next(1) == "am" && hour == 12) hour = 0;
                out.push_back((hour < 10 ? "0" : "") + std::to_string(hour) + t.substr(2));
                ++k;
                continue;
            }
        }
        // A time: "3 pm" -> "15:00", "3 30 pm" (from "3:30 pm") -> "15:30", "15 00" stays two numbers
        // unless written with a colon (the scanner reads "15:00" as "15" "00").
        if (all_digits(t) && t.size() <= 2) {
            std::size_t used = 0;
            int hour = std::atoi(t.c_str());
            int minute = 0;
            bool time = false;
            if (all_digits(next(1)) && next(1).size() == 2 && (next(2) == "am" || next(2) == "pm")) {
                minute = std::atoi(next(1).c_str());
                used = 2;
                time = true;
            } else if (next(1) == "am" || next(1) == "pm") {
                used = 1;
                time = true;
            }
            if (time && hour >= 1 && hour <= 12 && minute < 60) {
                const std::string& half = next(used);
                if (half == "pm" && hour != 12) hour += 12;
                if (half == "am" && hour == 12) hour = 0;
                char buf[32];
                std::snprintf(buf, sizeof buf, "%02d:%02d", hour, minute);
                out.push_back(buf);
                k += used;
                continue;
            }
        }
        if (auto c = lex.word_class.find(t); c != lex.word_class.end()) {
            out.push_back(c->second);
            continue;
        }
        out.push_back(t);
    }
    return out;
}

bool is_date_or_time_word(const std::string& w, const Lexicon& lex) {
    if (w.empty()) return true;
    if (lex.months.count(w) || lex.weekdays.count(w)) return true;
    if (w == "am" || w == "pm" || w == "utc" || w == "gmt" || w == "t" || w == "z" || w == "at" || w == "on") return true;
    return std::all_of(w.begin(), w.end(), [](char c) {
        return is_digit(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '/' || c == '.' || c == 't' ||
               c == 'z' || c == '+';
    });
}

// True when `label` (the text before a colon, or inside brackets) is a role, a speaker's name, a
// field name or a timestamp, and says nothing that changes what follows.
bool is_label(std::string_view label, const Lexicon& lex) {
    label = text::trim(label);
    if (label.empty() || label.size() > 40) return false;
    std::vector<std::string> words;
    std::string current;
    for (char ch : label) {
        if (ch == ' ' || ch == '_' || ch == '-' || ch == '\t') {
            if (!current.empty()) words.push_back(current);
            current.clear();
        } else {
            current.push_back(ch);
        }
    }
    if (!current.empty()) words.push_back(current);
    if (words.empty() || words.size() > 5) return false;
    const std::string lower = text::to_lower(label);
    bool timestamp = true;
    for (const auto& w : words) {
        const std::string lw = text::to_lower(w);
        std::string bare;
        for (char ch : lw)
            if (ch != ',' && ch != '.') bare.push_back(ch);
        if (lex.meaning_labels.count(bare)) return false;
        if (!is_date_or_time_word(bare, lex)) timestamp = false;
    }
    if (timestamp) return std::any_of(label.begin(), label.end(), [](char c) { return is_digit(static_cast<unsigned char>(c)); });
    std::string spaced;
    for (std::size_t k = 0; k < words.size(); ++k) spaced += (k ? " " : "") + text::to_lower(words[k]);
    if (lex.label_words.count(spaced)) return true;
    // A role word with a number or letter: "User 1", "Speaker A", "assistant_2".
    if (words.size() == 2 && lex.label_words.count(text::to_lower(words[0])) && words[1].size() <= 3) return true;
    // A speaker's name: one to three capitalised words, none a function word (so "I'LL ADMIT IT:" in
    // a text written in capitals is not a name, as "I'll admit it:" is not).
    if (words.size() > 3) return false;
    for (const auto& w : words) {
        if (!is_upper(static_cast<unsigned char>(w[0]))) return false;
        if (words.size() > 1 && is_function_word(text::to_lower(w))) return false;
        if (!std::all_of(w.begin(), w.end(), [](char c) {
                return is_alpha(static_cast<unsigned char>(c)) || c == '.' || c == '\'' || is_digit(static_cast<unsigned char>(c));
            }))
            return false;
    }
    return true;
}

bool is_markup(unsigned char c) {
    return c == '*' || c == '#' || c == '>' || c == '`' || c == '"' || c == '\'' || c == '{' || c == ',' ||
           c == '|' || c == '~' || c == '=';
}

}  // namespace

const Lexicon& lexicon() {
    static const Lexicon lex = parse_lexicon();
    return lex;
}

Tokens tokens(std::string_view text) {
    const Lexicon& lex = lexicon();
    const std::string lowered = Scanner::lower_unified(text);
    Scanner scanner{lowered, 0, {}};
    scanner.run(lex);
    return canonical_values(std::move(scanner.out), lex);
}

std::string join(const Tokens& tokens) {
    std::string out;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
        if (k) out.push_back(' ');
        out += tokens[k];
    }
    return out;
}

std::string canonical(std::string_view text) { return join(tokens(text)); }

std::string strip_labels(std::string_view unit) {
    const Lexicon& lex = lexicon();
    std::string_view u = text::trim(unit);
    for (int round = 0; round < 8; ++round) {
        const std::string_view before = u;
        // Markup, quotes and list bullets carry no words: skip them ("- ", "* ", "**", "> ", "• ").
        while (!u.empty()) {
            const unsigned char c = static_cast<unsigned char>(u[0]);
            if (is_markup(c) || c == ' ' || c == '\t') {
                u.remove_prefix(1);
            } else if ((c == '-' || c == '+') && u.size() > 1 && u[1] == ' ') {
                u.remove_prefix(2);
            } else if (c == 0xE2 && u.size() >= 3) {
                // U+2022 bullet, U+2013/2014 dashes, U+201C/201D/2018/2019 quotes, U+00B7 is below.
                const unsigned char b1 = static_cast<unsigned char>(u[1]), b2 = static_cast<unsigned char>(u[2]);
                if (b1 == 0x80 && (b2 == 0xA2 || b2 == 0x93 || b2 == 0x94 || b2 == 0x9C || b2 == 0x9D || b2 == 0x98 || b2 == 0x99))
                    u.remove_prefix(3);
                else
                    break;
            } else if (c == 0xC2 && u.size() >= 2 && (static_cast<unsigned char>(u[1]) == 0xB7 || static_cast<unsigned char>(u[1]) == 0xAB)) {
                u.remove_prefix(2);
            } else {
                break;
            }
        }
        // A numbered list marker: "1. ", "12) ", "(3) ", "a) ".
        {
            std::size_t k = 0;
            const bool paren = !u.empty() && u[0] == '(';
            if (paren) ++k;
            const std::size_t digits_from = k;
            while (k < u.size() && k - digits_from < 3 && is_digit(static_cast<unsigned char>(u[k]))) ++k;
            bool marker = false;
            if (k > digits_from && k + 1 < u.size() && (u[k] == '.' || u[k] == ')') && u[k + 1] == ' ') marker = true;
            if (!marker && !paren && u.size() > 2 && is_lower(static_cast<unsigned char>(u[0])) && u[1] == ')' && u[2] == ' ') {
                k = 1;
                marker = true;
            }
            if (marker) u.remove_prefix(k + 1);
        }
        // A bracketed label: "[2026-03-01 09:00]", "(user)", "[Mira]".
        if (!u.empty() && (u[0] == '[' || u[0] == '(' || u[0] == '<')) {
            const char close = u[0] == '[' ? ']' : u[0] == '(' ? ')' : '>';
            const std::size_t end = u.find(close);
            if (end != std::string_view::npos && end > 1 && is_label(u.substr(1, end - 1), lex)) {
                u.remove_prefix(end + 1);
                u = text::trim(u);
                if (!u.empty() && (u[0] == ':' || u[0] == '-' || u[0] == '|')) u.remove_prefix(1);
            }
        }
        // "Label: text", "\"fact\": \"text", "2026-03-01 09:00 - text".
        {
            std::size_t colon = std::string_view::npos;
            for (std::size_t k = 0; k < u.size() && k < 48; ++k) {
                if (u[k] == ':' && (k + 1 >= u.size() || u[k + 1] == ' ' || u[k + 1] == '"' || u[k + 1] == '\t')) {
                    colon = k;
                    break;
                }
                if (u[k] == '.' || u[k] == '!' || u[k] == '?') break;
            }
            if (colon != std::string_view::npos && colon > 0) {
                std::string label(u.substr(0, colon));
                label.erase(std::remove_if(label.begin(), label.end(),
                                           [](char ch) { return ch == '"' || ch == '*' || ch == '`' || ch == '\''; }),
                            label.end());
                if (is_label(label, lex)) u.remove_prefix(colon + 1);
            } else {
                // A timestamp then a dash or a bar: "2026-03-01 09:00 - ", "09:00 | ".
                for (const std::string_view sep : {" - ", " | ", " \xE2\x80\x94 ", " \xE2\x80\x93 "}) {
                    const std::size_t at = u.find(sep);
                    if (at != std::string_view::npos && at > 0 && at < 40 && is_label(u.substr(0, at), lex) &&
                        std::any_of(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(at),
                                    [](char c) { return is_digit(static_cast<unsigned char>(c)); })) {
                        u.remove_prefix(at + sep.size());
                        break;
                    }
                }
            }
        }
        u = text::trim(u);
        if (u == before) break;
    }
    return std::string(u);
}

std::vector<std::string> split_units(std::string_view text) {
    std::vector<std::string> out;
    const auto add_sentences = [&](std::string_view part) {
        std::size_t start = 0;
        for (std::size_t k = 0; k < part.size(); ++k) {
            const char c = part[k];
            if (c != '.' && c != '!' && c != '?') continue;
            std::size_t end = k + 1;
            while (end < part.size() && (part[end] == '"' || part[end] == ')' || part[end] == '\'' || part[end] == '*' ||
                                         part[end] == '.' || part[end] == '!' || part[end] == '?'))
                ++end;
            while (end + 2 < part.size() && part[end] == '\xE2' && part[end + 1] == '\x80' &&
                   (part[end + 2] == '\x99' || part[end + 2] == '\x9D'))
                end += 3;
            if (end >= part.size() || !std::isspace(static_cast<unsigned char>(part[end]))) continue;
            std::size_t next = end;
            while (next < part.size() && std::isspace(static_cast<unsigned char>(part[next]))) ++next;
            if (next >= part.size()) break;
            if (is_lower(static_cast<unsigned char>(part[next]))) continue;
            // Not after an abbreviation ("Dr.", "e.g.") nor after a list number alone ("1. ").
            std::size_t w = k;
            while (w > 0 && std::isalnum(static_cast<unsigned char>(part[w - 1]))) --w;
            const std::string_view word = part.substr(w, k - w);
            static const std::set<std::string_view> k_titles = {"Mr", "Mrs", "Ms", "Dr", "St", "Prof", "Jr", "Sr", "vs"};
            if (c == '.' && (k_titles.count(word) || (word.size() == 1 && w > 0 && part[w - 1] == '.'))) continue;
            if (c == '.' && text::trim(part.substr(start, k - start)).size() <= 3 &&
                std::all_of(word.begin(), word.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)); }))
                continue;
            const std::string_view sentence = text::trim(part.substr(start, end - start));
            if (!sentence.empty()) out.push_back(strip_labels(sentence));
            start = next;
            k = next - 1;
        }
        const std::string_view rest = text::trim(part.substr(std::min(start, part.size())));
        if (!rest.empty()) out.push_back(strip_labels(rest));
    };
    std::size_t line_start = 0;
    for (std::size_t k = 0; k <= text.size(); ++k) {
        if (k < text.size() && text[k] != '\n' && text[k] != '\r') continue;
        std::string_view line = text.substr(line_start, k - line_start);
        line_start = k + 1;
        // " | " separates items written on one line.
        std::size_t from = 0;
        while (true) {
            const std::size_t bar = line.find(" | ", from);
            add_sentences(strip_labels(line.substr(from, bar == std::string_view::npos ? line.npos : bar - from)));
            if (bar == std::string_view::npos) break;
            from = bar + 3;
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return s.empty(); }), out.end());
    return out;
}

std::vector<Unit> units(std::string_view text) {
    std::vector<Unit> out;
    for (const auto& raw : split_units(text)) {
        Unit u;
        u.tokens = tokens(raw);
        if (u.tokens.empty()) continue;
        u.canon = join(u.tokens);
        out.push_back(std::move(u));
    }
    return out;
}

std::vector<std::size_t> find_all(const Tokens& haystack, const Tokens& phrase) {
    std::vector<std::size_t> out;
    if (phrase.empty() || phrase.size() > haystack.size()) return out;
    for (std::size_t k = 0; k + phrase.size() <= haystack.size(); ++k)
        if (std::equal(phrase.begin(), phrase.end(), haystack.begin() + static_cast<std::ptrdiff_t>(k))) out.push_back(k);
    return out;
}

bool contains(const Tokens& haystack, const Tokens& phrase) {
    if (phrase.empty() || phrase.size() > haystack.size()) return false;
    return std::search(haystack.begin(), haystack.end(), phrase.begin(), phrase.end()) != haystack.end();
}

Alignment align(const Tokens& a, const Tokens& b) {
    Alignment al;
    const std::size_t n = a.size(), m = b.size();
    al.kept.assign(n, false);
    al.inserted.assign(n + 1, {});
    if (n == 0 || n * m > 400000) {
        if (n == 0) al.inserted[0] = b;
        return al;
    }
    // dp[i][j]: LCS of a[i..] and b[j..].
    std::vector<std::uint16_t> dp((n + 1) * (m + 1), 0);
    const auto at = [&](std::size_t i, std::size_t j) -> std::uint16_t& { return dp[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            at(i, j) = a[i] == b[j] ? static_cast<std::uint16_t>(at(i + 1, j + 1) + 1) : std::max(at(i + 1, j), at(i, j + 1));
    std::size_t i = 0, j = 0;
    while (i < n && j < m) {
        if (a[i] == b[j]) {
            al.kept[i] = true;
            ++al.common;
            ++i;
            ++j;
        } else if (at(i + 1, j) >= at(i, j + 1)) {
            ++i;
        } else {
            al.inserted[i].push_back(b[j]);
            ++j;
        }
    }
    for (; j < m; ++j) al.inserted[n].push_back(b[j]);
    return al;
}

std::string stem(const std::string& token) { return token.size() <= 5 ? token : token.substr(0, 5); }

bool is_function_word(const std::string& token) {
    return text::is_stopword(token) || token.size() <= 2 || lexicon().operator_glue.count(token) > 0;
}

}  // namespace memfail::grade::evidence

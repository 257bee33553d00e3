// SPDX-License-Identifier: MIT
// LoCoMo's token F1 and NLTK's Porter stemmer, written from their published definitions.
#include <memfail/suites/benchmarks/metric.hpp>

#include <algorithm>
#include <map>
#include <string>

#include <unicode/uchar.h>
#include <unicode/ustring.h>

namespace memfail::suites::benchmarks {

namespace {

// ---------------------------------------------------------------------------------------------
// UTF-8 <-> code points. Invalid bytes become U+FFFD (a Python string never holds them).

std::u32string decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        char32_t c = 0;
        if (b < 0x80) n = 1, c = b;
        else if ((b & 0xE0) == 0xC0) n = 2, c = b & 0x1F;
        else if ((b & 0xF0) == 0xE0) n = 3, c = b & 0x0F;
        else if ((b & 0xF8) == 0xF0) n = 4, c = b & 0x07;
        bool ok = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto cont = static_cast<unsigned char>(s[i + k]);
            ok = (cont & 0xC0) == 0x80;
            c = (c << 6) | (cont & 0x3F);
        }
        if (!ok) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        out.push_back(c);
        i += n;
    }
    return out;
}

std::string encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char32_t c : s) {
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return out;
}

// Python's str.lower(): full Unicode case mapping ("İ" to "i" + U+0307, a final sigma to "ς"),
// through ICU's root locale.
std::u32string lower(std::u32string_view s) {
    bool ascii = true;
    for (const char32_t c : s) ascii = ascii && c < 0x80;
    if (ascii) {
        std::u32string out(s);
        for (auto& c : out)
            if (c >= U'A' && c <= U'Z') c += 32;
        return out;
    }
    std::u16string in;
    in.reserve(s.size());
    for (const char32_t c : s) {
        if (c >= 0x10000) {
            in.push_back(static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10)));
            in.push_back(static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
        } else {
            in.push_back(static_cast<char16_t>(c));
        }
    }
    std::u16string lowered(in.size() * 3 + 8, u'\0');
    UErrorCode status = U_ZERO_ERROR;
    const int32_t n = u_strToLower(reinterpret_cast<UChar*>(lowered.data()), static_cast<int32_t>(lowered.size()),
                                   reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()), "", &status);
    if (U_FAILURE(status)) return std::u32string(s);  // unreachable: the buffer holds any lower-casing
    std::u32string out;
    out.reserve(static_cast<std::size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
        const char32_t u = lowered[static_cast<std::size_t>(i)];
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < n) {
            out.push_back(0x10000 + ((u - 0xD800) << 10) + (lowered[static_cast<std::size_t>(i + 1)] - 0xDC00));
            ++i;
        } else {
            out.push_back(u);
        }
    }
    return out;
}

// Python's str.split() whitespace.
bool is_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// A word character of the `regex` module's \b (what the authors' article rule uses): alphabetic,
// a mark, a decimal digit, connector punctuation or a join control, by ICU's Unicode properties.
bool is_word(char32_t c) {
    if (c < 0x80) return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9') || c == U'_';
    const auto cp = static_cast<UChar32>(c);
    if (u_hasBinaryProperty(cp, UCHAR_ALPHABETIC) || u_hasBinaryProperty(cp, UCHAR_JOIN_CONTROL)) return true;
    switch (u_charType(cp)) {
        case U_NON_SPACING_MARK:
        case U_COMBINING_SPACING_MARK:
        case U_ENCLOSING_MARK:
        case U_DECIMAL_DIGIT_NUMBER:
        case U_CONNECTOR_PUNCTUATION:
            return true;
        default:
            return false;
    }
}

bool is_ascii_punctuation(char32_t c) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

std::vector<std::u32string> split_space(std::u32string_view s) {
    std::vector<std::u32string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i])) ++i;
        std::size_t j = i;
        while (j < s.size() && !is_space(s[j])) ++j;
        if (j > i) out.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

std::u32string normalize32(std::u32string s) {
    std::u32string kept;
    kept.reserve(s.size());
    // Lower-cased first (a capital may lower-case to two code points), then ASCII punctuation
    // dropped: the order of the authors' normalize_answer.
    for (const char32_t c : lower(s))
        if (!is_ascii_punctuation(c)) kept.push_back(c);  // ',' is punctuation too
    // \b(a|an|the|and)\b: a maximal run of word characters that is one of these becomes a space.
    std::u32string out;
    out.reserve(kept.size());
    for (std::size_t i = 0; i < kept.size();) {
        if (!is_word(kept[i])) {
            out.push_back(kept[i++]);
            continue;
        }
        std::size_t j = i;
        while (j < kept.size() && is_word(kept[j])) ++j;
        const std::u32string_view run(kept.data() + i, j - i);
        if (run == U"a" || run == U"an" || run == U"the" || run == U"and") out.push_back(U' ');
        else out.append(run);
        i = j;
    }
    std::u32string joined;
    for (const auto& w : split_space(out)) {
        if (!joined.empty()) joined.push_back(U' ');
        joined += w;
    }
    return joined;
}

// ---------------------------------------------------------------------------------------------
// NLTK's PorterStemmer, mode NLTK_EXTENSIONS (nltk/stem/porter.py), rule for rule.

using Word = std::u32string;

bool ends(const Word& w, std::u32string_view suffix) {
    return w.size() >= suffix.size() && std::u32string_view(w).substr(w.size() - suffix.size()) == suffix;
}
Word strip(const Word& w, std::size_t n) { return w.substr(0, w.size() - n); }

bool is_consonant(const Word& w, std::size_t i) {
    const char32_t c = w[i];
    if (c == U'a' || c == U'e' || c == U'i' || c == U'o' || c == U'u') return false;
    if (c == U'y') return i == 0 ? true : !is_consonant(w, i - 1);
    return true;
}

int measure(const Word& stem) {
    int m = 0;
    for (std::size_t i = 1; i < stem.size(); ++i)
        if (!is_consonant(stem, i - 1) && is_consonant(stem, i)) ++m;
    return m;
}

bool contains_vowel(const Word& stem) {
    for (std::size_t i = 0; i < stem.size(); ++i)
        if (!is_consonant(stem, i)) return true;
    return false;
}

bool ends_double_consonant(const Word& w) {
    return w.size() >= 2 && w[w.size() - 1] == w[w.size() - 2] && is_consonant(w, w.size() - 1);
}

bool ends_cvc(const Word& w) {
    const std::size_t n = w.size();
    if (n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) && w[n - 1] != U'w' &&
        w[n - 1] != U'x' && w[n - 1] != U'y')
        return true;
    return n == 2 && !is_consonant(w, 0) && is_consonant(w, 1);
}

struct Rule {
    std::u32string_view suffix;  // "*d": a double consonant
    Word replacement;
    bool (*condition)(const Word& stem, const Word& word) = nullptr;  // null: always
};

// The first rule whose suffix the word has decides: applied when its condition holds, else the
// word is left as it is.
Word apply_rules(const Word& word, const std::vector<Rule>& rules) {
    for (const auto& r : rules) {
        if (r.suffix == U"*d" && ends_double_consonant(word)) {
            const Word stem = strip(word, 2);
            return !r.condition || r.condition(stem, word) ? stem + r.replacement : word;
        }
        if (ends(word, r.suffix)) {
            const Word stem = strip(word, r.suffix.size());
            return !r.condition || r.condition(stem, word) ? stem + r.replacement : word;
        }
    }
    return word;
}

bool positive(const Word& stem, const Word&) { return measure(stem) > 0; }
bool above_one(const Word& stem, const Word&) { return measure(stem) > 1; }

Word step1a(const Word& w) {
    if (ends(w, U"ies") && w.size() == 4) return strip(w, 3) + U"ie";
    return apply_rules(w, {{U"sses", U"ss"}, {U"ies", U"i"}, {U"ss", U"ss"}, {U"s", U""}});
}

Word step1b(const Word& w) {
    if (ends(w, U"ied")) return strip(w, 3) + (w.size() == 4 ? U"ie" : U"i");
    if (ends(w, U"eed")) {
        const Word stem = strip(w, 3);
        return measure(stem) > 0 ? stem + U"ee" : w;
    }
    Word stem;
    bool trimmed = false;
    for (const std::u32string_view suffix : {std::u32string_view(U"ed"), std::u32string_view(U"ing")}) {
        if (!ends(w, suffix)) continue;
        stem = strip(w, suffix.size());
        if (contains_vowel(stem)) {
            trimmed = true;
            break;
        }
    }
    if (!trimmed) return w;
    if (ends(stem, U"at")) return stem + U"e";
    if (ends(stem, U"bl")) return stem + U"e";
    if (ends(stem, U"iz")) return stem + U"e";
    if (ends_double_consonant(stem)) {
        const char32_t last = stem.back();
        return last != U'l' && last != U's' && last != U'z' ? strip(stem, 1) : stem;
    }
    return measure(stem) == 1 && ends_cvc(stem) ? stem + U"e" : stem;
}

Word step1c(const Word& w) {
    return apply_rules(w, {{U"y", U"i", [](const Word& stem, const Word&) {
                               return stem.size() > 1 && is_consonant(stem, stem.size() - 1);
                           }}});
}

Word step2(const Word& w) {
    if (ends(w, U"alli") && measure(strip(w, 4)) > 0) return step2(strip(w, 4) + U"al");
    static const std::vector<Rule> rules = {
        {U"ational", U"ate", positive}, {U"tional", U"tion", positive}, {U"enci", U"ence", positive},
        {U"anci", U"ance", positive},   {U"izer", U"ize", positive},    {U"bli", U"ble", positive},
        {U"alli", U"al", positive},     {U"entli", U"ent", positive},   {U"eli", U"e", positive},
        {U"ousli", U"ous", positive},   {U"ization", U"ize", positive}, {U"ation", U"ate", positive},
        {U"ator", U"ate", positive},    {U"alism", U"al", positive},    {U"iveness", U"ive", positive},
        {U"fulness", U"ful", positive}, {U"ousness", U"ous", positive}, {U"aliti", U"al", positive},
        {U"iviti", U"ive", positive},   {U"biliti", U"ble", positive},  {U"fulli", U"ful", positive},
        // The 'l' of 'logi' stays with the stem for the measure.
        {U"logi", U"log", [](const Word&, const Word& word) { return measure(strip(word, 3)) > 0; }},
    };
    return apply_rules(w, rules);
}

Word step3(const Word& w) {
    static const std::vector<Rule> rules = {{U"icate", U"ic", positive}, {U"ative", U"", positive},
                                            {U"alize", U"al", positive}, {U"iciti", U"ic", positive},
                                            {U"ical", U"ic", positive},  {U"ful", U"", positive},
                                            {U"ness", U"", positive}};
    return apply_rules(w, rules);
}

Word step4(const Word& w) {
    static const std::vector<Rule> rules = {
        {U"al", U"", above_one},    {U"ance", U"", above_one}, {U"ence", U"", above_one}, {U"er", U"", above_one},
        {U"ic", U"", above_one},    {U"able", U"", above_one}, {U"ible", U"", above_one}, {U"ant", U"", above_one},
        {U"ement", U"", above_one}, {U"ment", U"", above_one}, {U"ent", U"", above_one},
        {U"ion", U"", [](const Word& stem, const Word&) {
             return measure(stem) > 1 && (stem.back() == U's' || stem.back() == U't');
         }},
        {U"ou", U"", above_one},    {U"ism", U"", above_one},  {U"ate", U"", above_one},  {U"iti", U"", above_one},
        {U"ous", U"", above_one},   {U"ive", U"", above_one},  {U"ize", U"", above_one},
    };
    return apply_rules(w, rules);
}

Word step5a(const Word& w) {
    if (!ends(w, U"e")) return w;
    const Word stem = strip(w, 1);
    const int m = measure(stem);
    if (m > 1) return stem;
    if (m == 1 && !ends_cvc(stem)) return stem;
    return w;
}

Word step5b(const Word& w) {
    return apply_rules(w, {{U"ll", U"l", [](const Word&, const Word& word) { return measure(strip(word, 1)) > 1; }}});
}

Word stem32(Word w) {
    w = lower(w);
    static const std::map<Word, Word> irregular = {
        {U"sky", U"sky"},         {U"skies", U"sky"},         {U"dying", U"die"},       {U"lying", U"lie"},
        {U"tying", U"tie"},       {U"news", U"news"},         {U"innings", U"inning"},  {U"inning", U"inning"},
        {U"outings", U"outing"},  {U"outing", U"outing"},     {U"cannings", U"canning"}, {U"canning", U"canning"},
        {U"howe", U"howe"},       {U"proceed", U"proceed"},   {U"exceed", U"exceed"},   {U"succeed", U"succeed"}};
    if (const auto it = irregular.find(w); it != irregular.end()) return it->second;
    if (w.size() <= 2) return w;
    return step5b(step5a(step4(step3(step2(step1c(step1b(step1a(w))))))));
}

std::vector<std::u32string> stemmed_tokens(std::string_view s) {
    std::vector<std::u32string> out = split_space(normalize32(decode(s)));
    for (auto& t : out) t = stem32(std::move(t));
    return out;
}

std::string_view trim_space(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\n\r\f\v");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1);
}

std::vector<std::string_view> split_on(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.push_back(trim_space(s.substr(start, i - start)));
            start = i + 1;
        }
    return out;
}

}  // namespace

std::string porter_stem(std::string_view word) { return encode(stem32(decode(word))); }

std::string locomo_normalize(std::string_view s) { return encode(normalize32(decode(s))); }

double locomo_token_f1(std::string_view prediction, std::string_view answer) {
    const auto p = stemmed_tokens(prediction);
    const auto a = stemmed_tokens(answer);
    std::map<std::u32string, int> counts;
    for (const auto& t : a) ++counts[t];
    int same = 0;
    for (const auto& t : p)
        if (auto it = counts.find(t); it != counts.end() && it->second > 0) {
            --it->second;
            ++same;
        }
    if (same == 0) return 0.0;
    const double precision = static_cast<double>(same) / static_cast<double>(p.size());
    const double recall = static_cast<double>(same) / static_cast<double>(a.size());
    return 2 * precision * recall / (precision + recall);
}

double locomo_multi_f1(std::string_view prediction, std::string_view answer) {
    const auto predictions = split_on(prediction, ',');
    const auto answers = split_on(answer, ',');
    double sum = 0;
    for (const auto a : answers) {
        double best = 0;
        for (const auto p : predictions) best = std::max(best, locomo_token_f1(p, a));
        sum += best;
    }
    return sum / static_cast<double>(answers.size());
}

std::optional<double> locomo_score(int category, std::string_view prediction, std::string_view answer) {
    switch (category) {
        case 1: return locomo_multi_f1(prediction, answer);
        case 2:
        case 4: return locomo_token_f1(prediction, answer);
        case 3: return locomo_token_f1(prediction, trim_space(answer.substr(0, answer.find(';'))));
        case 5: {
            const std::string lowered = encode(lower(decode(prediction)));
            const bool declined = lowered.find("no information available") != std::string::npos ||
                                  lowered.find("not mentioned") != std::string::npos;
            return declined ? 1.0 : 0.0;
        }
        default: return std::nullopt;
    }
}

std::string locomo_category_name(int category) {
    switch (category) {
        case 1: return "multi-hop";
        case 2: return "temporal";
        case 3: return "open-domain";
        case 4: return "single-hop";
        case 5: return "adversarial";
        default: return "";
    }
}

const std::vector<std::string>& longmemeval_question_types() {
    static const std::vector<std::string> types = {"single-session-user",   "single-session-preference",
                                                   "single-session-assistant", "multi-session",
                                                   "temporal-reasoning",    "knowledge-update"};
    return types;
}

}  // namespace memfail::suites::benchmarks

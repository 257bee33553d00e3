// SPDX-License-Identifier: MIT
// Text utilities.
#include <memfail/core/text.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_set>

namespace memfail::text {

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(sep, start);
        if (pos == std::string_view::npos) {
            parts.emplace_back(s.substr(start));
            return parts;
        }
        parts.emplace_back(s.substr(start, pos - start));
        start = pos + 1;
    }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    if (from.empty()) return s;
    std::size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
        s.replace(pos, from.size(), to);
        pos += to.size();
    }
    return s;
}

std::string normalize(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    bool pending_space = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        // UTF-8 right single quote (E2 80 99) is an apostrophe: drop it like '\''.
        if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80) {
            const unsigned char third = static_cast<unsigned char>(s[i + 2]);
            i += 2;
            if (third == 0x99 || third == 0x98) continue;
            pending_space = !out.empty();
            continue;
        }
        if (c == '\'') continue;
        if (std::isalnum(c) || c >= 0x80) {
            if (pending_space) out.push_back(' ');
            pending_space = false;
            out.push_back(static_cast<char>(std::tolower(c)));
        } else {
            pending_space = !out.empty();
        }
    }
    return out;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    for (auto& w : split(normalize(s), ' '))
        if (!w.empty()) out.push_back(std::move(w));
    return out;
}

bool normalized_contains(std::string_view hay, std::string_view needle) {
    if (needle.empty()) return false;
    std::size_t pos = 0;
    while ((pos = hay.find(needle, pos)) != std::string_view::npos) {
        const bool left_ok = pos == 0 || hay[pos - 1] == ' ';
        const std::size_t end = pos + needle.size();
        const bool right_ok = end == hay.size() || hay[end] == ' ';
        if (left_ok && right_ok) return true;
        ++pos;
    }
    return false;
}

bool contains_phrase(std::string_view haystack, std::string_view phrase) {
    return normalized_contains(normalize(haystack), normalize(phrase));
}

namespace {
bool is_abbreviation_before(std::string_view prose, std::size_t dot) {
    // Walk back over the word that ends at `dot`.
    std::size_t start = dot;
    while (start > 0 && std::isalpha(static_cast<unsigned char>(prose[start - 1]))) --start;
    const std::string_view word = prose.substr(start, dot - start);
    static const std::array<std::string_view, 6> titles = {"Mr", "Mrs", "Ms", "Dr", "St", "Prof"};
    if (std::find(titles.begin(), titles.end(), word) != titles.end()) return true;
    // "e.g." / "i.e.": a single letter preceded by a dot.
    return word.size() == 1 && start > 0 && prose[start - 1] == '.';
}
}  // namespace

std::vector<std::string> split_sentences(std::string_view prose) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i < prose.size(); ++i) {
        const char c = prose[i];
        if (c != '.' && c != '!' && c != '?') continue;
        std::size_t end = i + 1;
        // Closing quotes and brackets stay with the sentence, curly ones (U+2019, U+201D) too.
        while (end < prose.size()) {
            if (prose[end] == '"' || prose[end] == ')' || prose[end] == '\'') {
                ++end;
            } else if (end + 2 < prose.size() && prose[end] == '\xE2' && prose[end + 1] == '\x80' &&
                       (prose[end + 2] == '\x99' || prose[end + 2] == '\x9D')) {
                end += 3;
            } else {
                break;
            }
        }
        if (end >= prose.size()) break;
        if (!std::isspace(static_cast<unsigned char>(prose[end]))) continue;
        std::size_t next = end;
        while (next < prose.size() && std::isspace(static_cast<unsigned char>(prose[next]))) ++next;
        if (next >= prose.size()) break;
        const unsigned char n = static_cast<unsigned char>(prose[next]);
        if (!(std::isupper(n) || std::isdigit(n) || n == '"' || n >= 0x80)) continue;
        if (c == '.' && is_abbreviation_before(prose, i)) continue;
        const std::string_view sentence = trim(prose.substr(start, end - start));
        if (!sentence.empty()) out.emplace_back(sentence);
        start = next;
        i = next - 1;
    }
    const std::string_view rest = trim(prose.substr(std::min(start, prose.size())));
    if (!rest.empty()) out.emplace_back(rest);
    return out;
}

bool is_stopword(std::string_view w) {
    static const std::unordered_set<std::string_view> k_stopwords = {
        "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "for", "with",
        "by", "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does",
        "did", "i", "me", "my", "mine", "you", "your", "he", "him", "his", "she", "her", "hers",
        "it", "its", "we", "us", "our", "they", "them", "their", "this", "that", "these", "those",
        "what", "which", "who", "whom", "when", "where", "why", "how", "would", "should", "could",
        "can", "will", "shall", "may", "might", "must", "have", "has", "had", "not", "no", "so",
        "than", "then", "there", "here", "now", "just", "about", "into", "out", "up", "down",
        "any", "some", "all", "also", "too", "very", "s", "t", "don", "doesn", "isn", "im"};
    return k_stopwords.count(w) > 0;
}

std::string capitalize(std::string_view s) {
    std::string out(s);
    if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

}  // namespace memfail::text

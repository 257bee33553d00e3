// SPDX-License-Identifier: MIT
// API key redaction: longest-match replacement of key fragments.
#include <memfail/llm/redact.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace memfail::llm {

namespace {
constexpr std::size_t k_min_fragment = 8;
constexpr std::string_view k_mask = "[redacted]";

// Length of the longest piece of `key` that starts `text` (0 when none).
std::size_t longest_key_piece_at(std::string_view text, std::string_view key) {
    std::size_t best = 0;
    for (std::size_t j = 0; j < key.size(); ++j) {
        std::size_t n = 0;
        while (n < text.size() && j + n < key.size() && text[n] == key[j + n]) ++n;
        best = std::max(best, n);
    }
    return best;
}
}  // namespace

std::string redact(std::string_view text, std::string_view key) {
    if (key.empty()) return std::string(text);
    const std::size_t min_len = std::min(k_min_fragment, key.size());
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        // Cheap filter first: a piece can only start here if this character occurs in the key.
        if (key.find(text[i]) != std::string_view::npos) {
            const std::size_t n = longest_key_piece_at(text.substr(i), key);
            if (n >= min_len) {
                out += k_mask;
                i += n;
                continue;
            }
        }
        out += text[i];
        ++i;
    }
    return out;
}

}  // namespace memfail::llm

namespace memfail::llm {

namespace {

struct UrlParts {
    std::string scheme_and_slashes;  // "https://", or empty
    std::string userinfo;            // without the '@'
    std::string host;                // host[:port]
    std::vector<std::string> segments;  // the path split on '/', the first (empty) one included
    bool has_path = false;
    std::vector<std::pair<std::string, std::string>> query;  // name, value ("" when no '=')
    std::vector<bool> query_has_value;
    bool has_query = false;
};

UrlParts split_url(std::string_view url) {
    UrlParts p;
    std::string_view rest = url;
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
    if (const auto scheme = rest.find("://"); scheme != std::string_view::npos) {
        p.scheme_and_slashes = std::string(rest.substr(0, scheme + 3));
        rest.remove_prefix(scheme + 3);
    }
    const auto authority_end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, authority_end);
    rest = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        p.userinfo = std::string(authority.substr(0, at));
        authority.remove_prefix(at + 1);
    }
    p.host = std::string(authority);
    std::string_view path = rest.substr(0, rest.find('?'));
    if (const auto q = rest.find('?'); q != std::string_view::npos) {
        p.has_query = true;
        std::string_view query = rest.substr(q + 1);
        while (!query.empty() || p.query.empty()) {
            const auto amp = query.find('&');
            const std::string_view part = query.substr(0, amp);
            const auto eq = part.find('=');
            p.query.emplace_back(std::string(part.substr(0, eq)),
                                 eq == std::string_view::npos ? std::string() : std::string(part.substr(eq + 1)));
            p.query_has_value.push_back(eq != std::string_view::npos);
            if (amp == std::string_view::npos) break;
            query.remove_prefix(amp + 1);
        }
    }
    if (!path.empty()) {
        p.has_path = true;
        for (;;) {
            const auto slash = path.find('/');
            p.segments.emplace_back(path.substr(0, slash));
            if (slash == std::string_view::npos) break;
            path.remove_prefix(slash + 1);
        }
    }
    return p;
}

bool holds_key(std::string_view segment, std::string_view api_key) {
    return !api_key.empty() && !segment.empty() && redact(segment, api_key) != segment;
}

bool secret_segment(std::string_view segment, std::string_view api_key) {
    return holds_key(segment, api_key) || looks_like_secret(segment);
}

}  // namespace

bool looks_like_secret(std::string_view s) {
    auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
    auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    std::string head(s.substr(0, 6));
    for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string_view prefix : {"sk-", "sk_", "pk-", "key-", "key_", "token-", "token_"})
        if (s.size() >= 12 && head.rfind(prefix, 0) == 0) return true;
    if (s.size() >= 20 && std::any_of(s.begin(), s.end(), lower) && std::any_of(s.begin(), s.end(), upper) &&
        std::any_of(s.begin(), s.end(), digit))
        return true;
    std::size_t run = 0;
    bool letters = false;
    bool digits = false;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        const char c = i < s.size() ? s[i] : '/';
        if (lower(c) || upper(c) || digit(c)) {
            ++run;
            letters = letters || !digit(c);
            digits = digits || digit(c);
            continue;
        }
        if (run >= 24 && letters && digits) return true;
        run = 0;
        letters = digits = false;
    }
    return false;
}

std::string redact_url(std::string_view url, std::string_view api_key) {
    const UrlParts p = split_url(url);
    std::string out = p.scheme_and_slashes;
    if (!p.userinfo.empty()) out += std::string(k_mask) + "@";
    out += redact(p.host, api_key);
    for (std::size_t i = 0; i < p.segments.size(); ++i) {
        if (i > 0) out += '/';
        out += secret_segment(p.segments[i], api_key) ? std::string(k_mask) : p.segments[i];
    }
    if (p.has_query) {
        out += '?';
        for (std::size_t i = 0; i < p.query.size(); ++i) {
            if (i > 0) out += '&';
            out += redact(p.query[i].first, api_key);
            if (p.query_has_value[i]) out += "=" + std::string(p.query[i].second.empty() ? "" : k_mask);
        }
    }
    return out;
}

std::string redact_with_url(std::string_view text, std::string_view url, std::string_view api_key) {
    std::string out = redact(text, api_key);
    const UrlParts p = split_url(url);
    std::vector<std::string> secrets;
    if (!p.userinfo.empty()) {
        secrets.push_back(p.userinfo);
        const auto colon = p.userinfo.find(':');
        if (colon != std::string::npos && colon + 1 < p.userinfo.size()) secrets.push_back(p.userinfo.substr(colon + 1));
    }
    for (const auto& [name, value] : p.query)
        if (value.size() >= 4) secrets.push_back(value);
    for (const auto& segment : p.segments)
        if (secret_segment(segment, api_key)) secrets.push_back(segment);
    // Longest first, so a secret holding another is replaced whole.
    std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const auto& secret : secrets) {
        for (std::size_t at = out.find(secret); at != std::string::npos; at = out.find(secret, at + k_mask.size()))
            out.replace(at, secret.size(), k_mask);
    }
    return out;
}

}  // namespace memfail::llm

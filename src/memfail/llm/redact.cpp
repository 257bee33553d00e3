// SPDX-License-Identifier: MIT
// API key redaction: longest-match replacement of key fragments.
#include <memfail/llm/redact.hpp>

#include <algorithm>

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

// SPDX-License-Identifier: MIT
// Feature-hashed text embeddings.
#include <memfail/memory/embedder.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include <memfail/core/error.hpp>
#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>

namespace memfail::memory {

namespace {

// Distinct seeds keep the families apart: the unigram "rain" and the character 4-gram "rain"
// are different features.
constexpr std::uint64_t k_seed_unigram = 0x756e6967726d3031ULL;
constexpr std::uint64_t k_seed_bigram = 0x626967726d303032ULL;
constexpr std::uint64_t k_seed_chars = 0x63686172733033ULL;

// Share of the norm each family gets. Words decide topic; bigrams reward shared phrasing;
// character n-grams bridge inflections and small spelling differences.
constexpr float k_weight_unigram = 1.0F;
constexpr float k_weight_bigram = 0.5F;
constexpr float k_weight_chars = 0.6F;

constexpr std::size_t k_min_ngram = 3;
constexpr std::size_t k_max_ngram = 5;

// Turns a bag of feature hashes into weighted, signed bucket entries whose family norm is `share`.
void add_family(std::vector<std::uint64_t>& hashes, float share, int dim,
                std::vector<HashedFeature>& out) {
    if (hashes.empty()) return;
    std::sort(hashes.begin(), hashes.end());
    std::vector<std::pair<std::uint64_t, float>> weighted;
    double norm_sq = 0;
    for (std::size_t i = 0; i < hashes.size();) {
        std::size_t j = i;
        while (j < hashes.size() && hashes[j] == hashes[i]) ++j;
        const float w = 1.0F + std::log(static_cast<float>(j - i));
        weighted.emplace_back(hashes[i], w);
        norm_sq += static_cast<double>(w) * w;
        i = j;
    }
    const float scale = share / static_cast<float>(std::sqrt(norm_sq));
    for (const auto& [h, w] : weighted) {
        const auto bucket = static_cast<std::uint32_t>(h % static_cast<std::uint64_t>(dim));
        const float sign = (h >> 63) != 0 ? -1.0F : 1.0F;
        out.push_back({bucket, sign * w * scale});
    }
}

// Drops the possessive "'s" (straight or curly apostrophe) so "Priya's" embeds as "Priya" rather
// than as the unrelated word "priyas" that text::normalize would make of it.
std::string strip_possessives(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        std::size_t apostrophe = 0;
        if (s[i] == '\'') apostrophe = 1;
        else if (s.substr(i, 3) == "\xE2\x80\x99") apostrophe = 3;
        const std::size_t after = i + apostrophe;
        if (apostrophe > 0 && i > 0 && after < s.size() && (s[after] == 's' || s[after] == 'S') &&
            (after + 1 == s.size() || !std::isalnum(static_cast<unsigned char>(s[after + 1])))) {
            i = after;  // skip the apostrophe and the s
            continue;
        }
        out.push_back(s[i]);
    }
    return out;
}

}  // namespace

HashedEmbedder::HashedEmbedder(int dim) : m_dim(dim) {
    MF_ASSERT(dim > 0, "an embedding needs at least one dimension");
}

std::vector<HashedFeature> HashedEmbedder::features(std::string_view input) const {
    const std::vector<std::string> all_words = text::words(strip_possessives(input));
    std::vector<bool> content(all_words.size());
    for (std::size_t i = 0; i < all_words.size(); ++i) content[i] = !text::is_stopword(all_words[i]);

    std::vector<std::uint64_t> unigrams;
    std::vector<std::uint64_t> bigrams;
    std::vector<std::uint64_t> chars;
    std::string framed;
    std::string pair;
    for (std::size_t i = 0; i < all_words.size(); ++i) {
        const std::string& word = all_words[i];
        if (i + 1 < all_words.size() && (content[i] || content[i + 1])) {
            pair.assign(word).append(1, ' ').append(all_words[i + 1]);
            bigrams.push_back(hash64(pair, k_seed_bigram));
        }
        if (!content[i]) continue;
        unigrams.push_back(hash64(word, k_seed_unigram));
        framed.assign(1, '<').append(word).append(1, '>');
        const std::string_view view(framed);
        for (std::size_t n = k_min_ngram; n <= k_max_ngram && n <= view.size(); ++n)
            for (std::size_t start = 0; start + n <= view.size(); ++start)
                chars.push_back(hash64(view.substr(start, n), k_seed_chars));
    }

    std::vector<HashedFeature> raw;
    raw.reserve(unigrams.size() + bigrams.size() + chars.size());
    add_family(unigrams, k_weight_unigram, m_dim, raw);
    add_family(bigrams, k_weight_bigram, m_dim, raw);
    add_family(chars, k_weight_chars, m_dim, raw);

    // Merge entries that landed in the same bucket; drop the ones that cancelled out exactly.
    std::sort(raw.begin(), raw.end(),
              [](const HashedFeature& a, const HashedFeature& b) { return a.bucket < b.bucket; });
    std::vector<HashedFeature> merged;
    merged.reserve(raw.size());
    for (const HashedFeature& f : raw) {
        if (!merged.empty() && merged.back().bucket == f.bucket)
            merged.back().weight += f.weight;
        else
            merged.push_back(f);
    }
    std::erase_if(merged, [](const HashedFeature& f) { return f.weight == 0.0F; });
    return merged;
}

std::vector<float> HashedEmbedder::embed(std::string_view text) const {
    std::vector<float> v = densify(features(text), m_dim);
    l2_normalize(v);
    return v;
}

bool l2_normalize(std::span<float> v) {
    double norm_sq = 0;
    for (const float x : v) norm_sq += static_cast<double>(x) * x;
    if (norm_sq == 0) return false;
    const auto inv = static_cast<float>(1.0 / std::sqrt(norm_sq));
    for (float& x : v) x *= inv;
    return true;
}

std::vector<float> densify(const std::vector<HashedFeature>& features, int dim) {
    std::vector<float> v(static_cast<std::size_t>(dim), 0.0F);
    for (const HashedFeature& f : features) {
        MF_ASSERT(f.bucket < v.size(), "feature bucket outside the vector");
        v[f.bucket] += f.weight;
    }
    return v;
}

}  // namespace memfail::memory

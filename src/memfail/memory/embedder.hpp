// SPDX-License-Identifier: MIT
// Text embedders for the vector retrievers: an interface plus a dependency-free feature-hashing one.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace memfail::memory {

class Embedder {
public:
    virtual ~Embedder() = default;
    virtual int dim() const = 0;
    // A vector of dim() floats, L2-normalised, or all zeros when the text has nothing to embed.
    virtual std::vector<float> embed(std::string_view text) const = 0;
};

// One non-zero coordinate of a sparse hashed vector.
struct HashedFeature {
    std::uint32_t bucket = 0;
    float weight = 0;
};

// Feature hashing ("the hashing trick") over the normalised text (possessive "'s" dropped, then
// text::normalize):
//   - word unigrams of content words (stopwords carry little topic and would dominate short texts),
//   - word bigrams in which at least one word is not a stopword,
//   - character 3- to 5-grams of each content word framed as "<word>", so "hiking" meets "hikes".
// Each feature weighs 1 + ln(tf) (sublinear, so a repeated word does not swamp the rest). The three
// families are scaled to fixed shares of the norm so the many character n-grams cannot drown the
// words, and a sign bit from the hash makes bucket collisions cancel out on average instead of
// piling up. No model, no vocabulary: the same text gives the same vector on every machine.
class HashedEmbedder final : public Embedder {
public:
    static constexpr int k_default_dim = 512;

    explicit HashedEmbedder(int dim = k_default_dim);

    int dim() const override { return m_dim; }
    std::vector<float> embed(std::string_view text) const override;

    // The un-normalised features of `text`, one entry per touched bucket, sorted by bucket. The
    // hashed retriever counts document frequencies over these buckets.
    std::vector<HashedFeature> features(std::string_view text) const;

private:
    int m_dim;
};

// Scales `v` to unit length in place; returns false (leaving it unchanged) when it is all zeros.
bool l2_normalize(std::span<float> v);

// A dense vector of `dim` floats from sparse features (not normalised).
std::vector<float> densify(const std::vector<HashedFeature>& features, int dim);

}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// Text embeddings for the dense retrievers, in batches and able to fail: the offline hashed
// embedder (embedder.hpp) or a model behind the OpenAI-compatible /v1/embeddings endpoint
// (--embed-model), reached through the run's cached client.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::memory {

class TextEmbedder {
public:
    virtual ~TextEmbedder() = default;
    // "hashed:dim=512" or "model:<name>": changes when the vectors would differ.
    virtual std::string signature() const = 0;
    // True when a vector's mass sits in a few dimensions (hashed features), so the retriever's
    // index scans columns; false (models) keeps an HNSW graph. See LargeIndex.
    virtual bool sparse() const { return false; }
    // One L2-normalised vector per text, in order; all have the same dimension.
    virtual Result<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) = 0;
};

// The hashed embedder behind the batch interface (never fails).
std::unique_ptr<TextEmbedder> make_hashed_text_embedder(int dim);

// Embeddings from services.embed_model through services.client, `batch` texts per request.
// invalid_input without a model; without a client (a spec being validated) embed() fails instead.
Result<std::unique_ptr<TextEmbedder>> make_model_text_embedder(const SystemServices& services, std::size_t batch = 64);

// The model embedder when services name an embeddings model, else the hashed one.
Result<std::unique_ptr<TextEmbedder>> make_text_embedder(const SystemServices& services, int hashed_dim);

}  // namespace memfail::memory

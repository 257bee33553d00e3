// SPDX-License-Identifier: MIT
// Hashed and model text embedders.
#include <memfail/memory/embedder.hpp>
#include <memfail/memory/text_embedder.hpp>

namespace memfail::memory {

namespace {

class HashedTextEmbedder final : public TextEmbedder {
public:
    explicit HashedTextEmbedder(int dim) : m_embedder(dim) {}
    std::string signature() const override { return "hashed:dim=" + std::to_string(m_embedder.dim()); }
    bool sparse() const override { return true; }
    Result<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) override {
        std::vector<std::vector<float>> out;
        out.reserve(texts.size());
        for (const auto& t : texts) out.push_back(m_embedder.embed(t));
        return out;
    }

private:
    HashedEmbedder m_embedder;
};

class ModelTextEmbedder final : public TextEmbedder {
public:
    ModelTextEmbedder(llm::LlmClient* client, std::string model, std::size_t batch)
        : m_client(client), m_model(std::move(model)), m_batch(std::max<std::size_t>(1, batch)) {}

    std::string signature() const override { return "model:" + m_model; }

    Result<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) override {
        if (!m_client)
            return make_error(ErrorKind::invalid_input,
                              "model embeddings need an OpenAI-compatible endpoint (--base-url or OPENAI_BASE_URL)");
        std::vector<std::vector<float>> out;
        out.reserve(texts.size());
        for (std::size_t start = 0; start < texts.size(); start += m_batch) {
            llm::EmbeddingRequest request;
            request.role = llm::Role::embed;
            request.model = m_model;
            request.inputs.assign(texts.begin() + static_cast<std::ptrdiff_t>(start),
                                  texts.begin() + static_cast<std::ptrdiff_t>(std::min(texts.size(), start + m_batch)));
            MF_TRY_ASSIGN(llm::EmbeddingReply reply, m_client->embed(request));
            if (reply.vectors.size() != request.inputs.size())
                return make_error(ErrorKind::protocol,
                                  "the embeddings endpoint returned " + std::to_string(reply.vectors.size()) +
                                      " vectors for " + std::to_string(request.inputs.size()) + " inputs",
                                  m_model);
            for (auto& v : reply.vectors) {
                if (!out.empty() && v.size() != out.front().size())
                    return make_error(ErrorKind::protocol, "the embeddings endpoint changed dimension mid-run", m_model);
                if (v.empty()) return make_error(ErrorKind::protocol, "the embeddings endpoint returned an empty vector", m_model);
                l2_normalize(v);  // servers need not normalise; cosine search needs it
                out.push_back(std::move(v));
            }
        }
        return out;
    }

private:
    llm::LlmClient* m_client;  // null while only validating a spec: embed() then says what is missing
    std::string m_model;
    std::size_t m_batch;
};

}  // namespace

std::unique_ptr<TextEmbedder> make_hashed_text_embedder(int dim) { return std::make_unique<HashedTextEmbedder>(dim); }

Result<std::unique_ptr<TextEmbedder>> make_model_text_embedder(const SystemServices& services, std::size_t batch) {
    if (services.embed_model.empty())
        return make_error(ErrorKind::invalid_input, "model embeddings need an embeddings model: pass --embed-model");
    return std::unique_ptr<TextEmbedder>(std::make_unique<ModelTextEmbedder>(services.client, services.embed_model, batch));
}

Result<std::unique_ptr<TextEmbedder>> make_text_embedder(const SystemServices& services, int hashed_dim) {
    if (services.embed_model.empty()) return make_hashed_text_embedder(hashed_dim);
    return make_model_text_embedder(services);
}

}  // namespace memfail::memory

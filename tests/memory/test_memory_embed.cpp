// SPDX-License-Identifier: MIT
// verbatim:retriever=embed: vectors from an embeddings model over real HTTP (tools/fake-llm, whose
// vectors are a deterministic function of the text), one request per stored session, persisted
// and reloaded, and a clear error when no model is named.
#include <gtest/gtest.h>

#include <memfail/llm/openai_client.hpp>
#include <memfail/memory/memory_system.hpp>

#include <fake_llm.hpp>

#include <filesystem>
#include <unistd.h>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

struct EmbeddingServer {
    std::unique_ptr<fake_llm::FakeLlmServer> server;
    std::unique_ptr<llm::LlmClient> client;

    EmbeddingServer() {
        server = ok(fake_llm::FakeLlmServer::start({}));
        llm::ClientOptions options;
        options.base_url = server->base_url();
        client = ok(llm::make_openai_client(options));
    }
    std::int64_t embeddings() const { return server->stats()["embeddings"].get<std::int64_t>(); }
    SystemContext context(const std::string& dir) const {
        SystemContext c{dir, "memory", {}};
        c.services.client = client.get();
        c.services.embed_model = "test-embedder";
        return c;
    }
};

data::Session session_of(const std::string& id, std::vector<std::pair<std::string, std::string>> turns) {
    std::vector<data::Message> messages;
    for (auto& [mid, text] : turns) messages.push_back(test::user(mid, text));
    return test::session(id, "2026-03-01T09:00:00Z", std::move(messages));
}

TEST(VerbatimEmbed, NeedsAnEmbeddingsModel) {
    auto made = make_memory_system("verbatim:retriever=embed", SystemContext{});
    ASSERT_FALSE(made.has_value());
    EXPECT_EQ(made.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(made.error().message.find("--embed-model"), std::string::npos);
}

TEST(VerbatimEmbed, OneRequestPerSessionAndExactTextRanksFirst) {
    EmbeddingServer embed;
    const auto dir = std::filesystem::temp_directory_path() / ("memfail-embed-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    {
        auto system = ok(make_memory_system("verbatim:retriever=embed", embed.context(dir.string())));
        ok(system->store_conversation(session_of("s1", {{"m1", "Priya moved to Lisbon."}, {"m2", "She works at the aquarium."}})));
        ok(system->store_conversation(session_of("s2", {{"m3", "Biscuit hides during thunderstorms."}})));
        EXPECT_EQ(embed.embeddings(), 2);  // one batch per session
        // The fake server's vectors depend only on the text: the memory with the query's exact text
        // has cosine 1 and must rank first.
        const auto hits = ok(system->retrieve_memories("She works at the aquarium.", {}, 2));
        ASSERT_FALSE(hits.empty());
        EXPECT_EQ(hits[0].memory.sources, std::vector<std::string>{"m2"});
        EXPECT_NEAR(hits[0].score, 1.0, 1e-5);
        EXPECT_EQ(embed.embeddings(), 3);
    }
    {
        // Reopened: the stored vectors are reloaded, not recomputed; only the query costs a call.
        auto system = ok(make_memory_system("verbatim:retriever=embed", embed.context(dir.string())));
        const auto hits = ok(system->retrieve_memories("Biscuit hides during thunderstorms.", {}, 1));
        ASSERT_EQ(hits.size(), 1u);
        EXPECT_EQ(hits[0].memory.sources, std::vector<std::string>{"m3"});
        EXPECT_EQ(embed.embeddings(), 4);
    }
    std::filesystem::remove_all(dir);
}

TEST(VerbatimEmbed, AFailingEndpointIsAnErrorNotACrash) {
    EmbeddingServer embed;
    ok(embed.server->set_script(nlohmann::json::parse(R"({"rules": [{"match": {"endpoint": "embeddings"}, "fault": "http_400"}]})")));
    auto system = ok(make_memory_system("verbatim:retriever=embed", embed.context("")));
    auto stored = system->store_conversation(session_of("s1", {{"m1", "Priya moved to Lisbon."}}));
    ASSERT_FALSE(stored.has_value());
    // The failed session left nothing half-stored.
    EXPECT_TRUE(ok(system->all_memories()).empty());
}

}  // namespace
}  // namespace memfail::memory

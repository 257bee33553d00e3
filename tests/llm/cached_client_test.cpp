// SPDX-License-Identifier: MIT
// The reply cache over the real client and fake server: replay without network calls, refresh and
// off modes, single-flight, what goes into the key, and no API key in the database file.
#include <atomic>
#include <thread>
#include <vector>

#include <memfail/llm/cached_client.hpp>

#include "llm_test_support.hpp"

namespace memfail::llm {
namespace {

using nlohmann::json;
using testing::fast_options;
using testing::make_client;
using testing::plain_request;
using testing::schema_request;
using testing::start_fake;
using testing::TempDir;

std::shared_ptr<LlmCache> open_cache(const std::filesystem::path& path) {
    auto cache = LlmCache::open(path.string());
    if (!cache) ADD_FAILURE() << cache.error().describe();
    return cache ? std::move(cache).value() : nullptr;
}

std::vector<ChatRequest> batch() {
    std::vector<ChatRequest> requests;
    for (int i = 0; i < 6; ++i) {
        ChatRequest request = i % 2 ? schema_request("probe " + std::to_string(i)) : plain_request("probe " + std::to_string(i));
        request.temperature = 0.0;
        request.seed = 7;
        requests.push_back(request);
    }
    return requests;
}

// Schema and plain prompts get different replies, so byte equality below means the right entry came back.
json varied_script() {
    return {{"rules",
             {{{"match", {{"schema", "memfail_test_verdict"}}},
               {"json", {{"verdict", "no"}, {"reason", "because of the probe"}}}},
              {{"match", {{"regex", "probe [024]"}}}, {"reply", "even probe answered"}}}}};
}

TEST(CachedClient, SecondRunIsServedFromTheCacheByteForByte) {
    TempDir dir;
    auto server = start_fake(varied_script());
    ASSERT_TRUE(server);
    const auto db = dir.path() / "llm-cache.sqlite";
    std::vector<ChatReply> first;
    {
        CachedClient client(make_client(fast_options(*server)), open_cache(db), CacheMode::on);
        for (const auto& request : batch()) {
            auto reply = client.chat(request);
            ASSERT_TRUE(reply) << reply.error().describe();
            EXPECT_FALSE(reply->cache_hit);
            first.push_back(*reply);
        }
        EXPECT_EQ(client.stats().misses, 6);
    }
    const auto requests_after_first = server->stats()["requests"].get<int>();
    EXPECT_EQ(requests_after_first, 6);

    // A new process would open the same file: do the same with a fresh cache object.
    CachedClient client(make_client(fast_options(*server)), open_cache(db), CacheMode::on);
    const auto requests = batch();
    for (std::size_t i = 0; i < requests.size(); ++i) {
        auto reply = client.chat(requests[i]);
        ASSERT_TRUE(reply) << reply.error().describe();
        EXPECT_TRUE(reply->cache_hit);
        EXPECT_EQ(reply->attempts, 0);
        EXPECT_EQ(reply->content, first[i].content);
        EXPECT_EQ(reply->json, first[i].json);
        EXPECT_EQ(reply->finish_reason, first[i].finish_reason);
        EXPECT_EQ(reply->usage.prompt_tokens, first[i].usage.prompt_tokens);
    }
    EXPECT_EQ(server->stats()["requests"], requests_after_first);
    EXPECT_EQ(client.stats().hits, 6);
    EXPECT_EQ(client.stats().misses, 0);
}

TEST(CachedClient, RefreshModeCallsAgainAndReplacesEntries) {
    TempDir dir;
    auto server = start_fake(varied_script());
    ASSERT_TRUE(server);
    auto cache = open_cache(dir.path() / "c.sqlite");
    CachedClient on(make_client(fast_options(*server)), cache, CacheMode::on);
    for (const auto& request : batch()) ASSERT_TRUE(on.chat(request));
    CachedClient refresh(make_client(fast_options(*server)), cache, CacheMode::refresh);
    for (const auto& request : batch()) {
        auto reply = refresh.chat(request);
        ASSERT_TRUE(reply);
        EXPECT_FALSE(reply->cache_hit);
    }
    EXPECT_EQ(server->stats()["requests"], 12);
    EXPECT_EQ(cache->entry_count().value(), 6);  // replaced, not duplicated
}

TEST(CachedClient, OffModeNeverReadsOrWrites) {
    TempDir dir;
    auto server = start_fake();
    ASSERT_TRUE(server);
    auto cache = open_cache(dir.path() / "c.sqlite");
    CachedClient client(make_client(fast_options(*server)), cache, CacheMode::off);
    for (int round = 0; round < 2; ++round) {
        auto reply = client.chat(plain_request("same"));
        ASSERT_TRUE(reply);
        EXPECT_FALSE(reply->cache_hit);
    }
    EXPECT_EQ(server->stats()["requests"], 2);
    EXPECT_EQ(cache->entry_count().value(), 0);
}

TEST(CachedClient, IdenticalConcurrentRequestsMakeOneCall) {
    TempDir dir;
    auto server = start_fake({{"default", {{"delay_ms", 200}, {"reply", "shared answer"}}}});
    ASSERT_TRUE(server);
    CachedClient client(make_client(fast_options(*server)), open_cache(dir.path() / "c.sqlite"), CacheMode::on);
    std::vector<std::thread> threads;
    std::vector<std::string> contents(8);
    std::atomic<int> hits{0};
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
            auto reply = client.chat(plain_request("the very same question"));
            if (!reply) return;
            contents[i] = reply->content;
            if (reply->cache_hit) ++hits;
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(server->stats()["requests"], 1);
    for (const auto& content : contents) EXPECT_EQ(content, "shared answer");
    EXPECT_EQ(hits.load(), 7);
    EXPECT_EQ(client.stats().shared, 7);
}

TEST(CachedClient, ErrorsAreNotCached) {
    TempDir dir;
    auto server = start_fake({{"rules", {{{"fault", "schema_violation"}, {"times", 3}}}}});
    ASSERT_TRUE(server);
    auto cache = open_cache(dir.path() / "c.sqlite");
    ClientOptions options = fast_options(*server);
    options.max_schema_retries = 2;
    CachedClient client(make_client(options), cache, CacheMode::on);
    auto failed = client.chat(schema_request("q"));
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().kind, ErrorKind::invalid_output);
    EXPECT_EQ(cache->entry_count().value(), 0);
    auto later = client.chat(schema_request("q"));  // the fault rule is used up now
    ASSERT_TRUE(later) << later.error().describe();
    EXPECT_FALSE(later->cache_hit);
    EXPECT_EQ(cache->entry_count().value(), 1);
}

TEST(CachedClient, EmbeddingsAreCachedPerRequest) {
    TempDir dir;
    auto server = start_fake();
    ASSERT_TRUE(server);
    CachedClient client(make_client(fast_options(*server)), open_cache(dir.path() / "c.sqlite"), CacheMode::on);
    EmbeddingRequest request;
    request.model = "e";
    request.inputs = {"one", "two"};
    auto first = client.embed(request);
    ASSERT_TRUE(first) << first.error().describe();
    auto second = client.embed(request);
    ASSERT_TRUE(second);
    EXPECT_TRUE(second->cache_hit);
    EXPECT_EQ(second->vectors, first->vectors);  // floats survive the JSON round trip exactly
    EXPECT_EQ(server->stats()["embeddings"], 1);
    request.inputs = {"two", "one"};
    auto swapped = client.embed(request);
    ASSERT_TRUE(swapped);
    EXPECT_FALSE(swapped->cache_hit);
    EXPECT_EQ(swapped->vectors[0], first->vectors[1]);
}

TEST(CacheKey, CoversWhatDeterminesTheReplyAndNothingElse) {
    const ChatRequest base = schema_request("question");
    const auto key = [](const ChatRequest& r, const std::string& identity = "http://h/v1") {
        return cache_key(chat_cache_request(identity, r));
    };
    const std::string k = key(base);
    EXPECT_EQ(k.size(), 32u);
    ChatRequest other_stage = base;
    other_stage.stage = "judge.other";
    other_stage.role = Role::answer;
    EXPECT_EQ(key(other_stage), k);

    ChatRequest changed = base;
    changed.model = "m2";
    EXPECT_NE(key(changed), k);
    changed = base;
    changed.temperature = 0.0;
    EXPECT_NE(key(changed), k);
    changed = base;
    changed.seed = 1;
    EXPECT_NE(key(changed), k);
    changed = base;
    changed.max_tokens = 10;
    EXPECT_NE(key(changed), k);
    changed = base;
    changed.schema->name = "other_schema";
    EXPECT_NE(key(changed), k);
    changed = base;
    changed.schema->schema["required"] = json::array({"verdict"});
    EXPECT_NE(key(changed), k);
    changed = base;
    changed.messages[1].content += " ";
    EXPECT_NE(key(changed), k);
    EXPECT_NE(key(base, "http://other/v1"), k);
}

TEST(CachedClient, TheApiKeyIsNotInTheDatabaseFile) {
    TempDir dir;
    const std::string api_key = "sk-test-CACHE-abcdefghijklmnop0123";
    auto server = start_fake(varied_script(), api_key);
    ASSERT_TRUE(server);
    const auto db = dir.path() / "c.sqlite";
    {
        ClientOptions options = fast_options(*server);
        options.api_key = api_key;
        CachedClient client(make_client(options), open_cache(db), CacheMode::on);
        for (const auto& request : batch()) ASSERT_TRUE(client.chat(request));
        EmbeddingRequest embed;
        embed.model = "e";
        embed.inputs = {"x"};
        ASSERT_TRUE(client.embed(embed));
    }
    std::string bytes;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) bytes += testing::read_bytes(entry.path());
    EXPECT_GT(bytes.size(), 0u);
    EXPECT_NE(bytes.find("probe 1"), std::string::npos);  // the file does hold the requests
    EXPECT_EQ(bytes.find(api_key), std::string::npos);
    EXPECT_EQ(bytes.find("abcdefghijklmnop"), std::string::npos);
}

TEST(CacheMode, ParsesNames) {
    EXPECT_EQ(parse_cache_mode("on").value(), CacheMode::on);
    EXPECT_EQ(parse_cache_mode("refresh").value(), CacheMode::refresh);
    EXPECT_EQ(parse_cache_mode("off").value(), CacheMode::off);
    EXPECT_FALSE(parse_cache_mode("yes"));
    EXPECT_EQ(cache_mode_name(CacheMode::refresh), "refresh");
}

}  // namespace
}  // namespace memfail::llm

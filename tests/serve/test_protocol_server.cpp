// SPDX-License-Identifier: MIT
// memfail serve's protocol server over real loopback HTTP: the http: transport round trip against a
// built-in system used directly, bearer tokens, body limits, malformed requests, and the
// OpenAI-compatible embeddings endpoint (also through memfail's own OpenAI client).
#include "serve_test_util.hpp"

#include <cmath>
#include <cstring>

#include <memfail/llm/openai_client.hpp>
#include <memfail/memory/embedder.hpp>
#include <memfail/serve/protocol_server.hpp>

namespace memfail::serve_test {
namespace {

using json = nlohmann::json;
using memory::adapter::AdapterSystem;

std::unique_ptr<serve::ProtocolServer> start_server(serve::ServerOptions options = {}) {
    if (!options.system) options.system = ok(memory::make_memory_system("verbatim", memory::SystemContext{}));
    options.port = 0;
    return ok(serve::ProtocolServer::start(std::move(options)));
}

std::unique_ptr<AdapterSystem> connect(const std::string& spec) {
    return ok(AdapterSystem::connect(ok(http_transport(spec)), spec));
}

httplib::Client client_for(const serve::ProtocolServer& server) {
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(5, 0);
    return client;
}

TEST(ProtocolServer, RoundTripGivesTheSameRetrievalAsTheSystemUsedDirectly) {
    auto direct = ok(memory::make_memory_system("verbatim", memory::SystemContext{}));
    auto server = start_server();
    auto remote = connect("http:url=" + server->base_url());
    EXPECT_EQ(remote->system_name().empty(), false);
    for (const auto& s : sample_sessions()) {
        ASSERT_TRUE(direct->store_conversation(s));
        auto stored = remote->store_conversation(s);
        ASSERT_TRUE(stored) << stored.error().describe();
    }
    for (const std::string query : {"What does the user drink in the evening?", "Which days does the user run?"}) {
        for (int k : {1, 3}) {
            const auto want = ok(direct->retrieve_memories(query, {}, k));
            const auto got = ok(remote->retrieve_memories(query, {}, k));
            ASSERT_EQ(got.size(), want.size()) << query << " k=" << k;
            ASSERT_FALSE(got.empty());
            for (std::size_t i = 0; i < got.size(); ++i) {
                EXPECT_EQ(got[i].memory.id, want[i].memory.id);
                EXPECT_EQ(got[i].memory.text, want[i].memory.text);
                EXPECT_EQ(got[i].memory.sources, want[i].memory.sources);
                EXPECT_NEAR(got[i].score, want[i].score, 1e-9);
            }
        }
    }
    const auto all_direct = ok(direct->all_memories());
    const auto all_remote = ok(remote->all_memories());
    ASSERT_EQ(all_remote.size(), all_direct.size());
    for (std::size_t i = 0; i < all_remote.size(); ++i) EXPECT_EQ(all_remote[i].id, all_direct[i].id);
    ASSERT_TRUE(remote->reset());
    EXPECT_TRUE(ok(remote->all_memories()).empty());
}

TEST(ProtocolServer, TokenIsRequiredAndNeverEchoed) {
    const std::string token = "tok-9f8e7d6c5b4a39281706";
    serve::ServerOptions options;
    options.token = token;
    auto server = start_server(std::move(options));

    auto client = client_for(*server);
    auto res = client.Post("/v1/hello", R"({"protocol": 1})", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401);
    const json body = json::parse(res->body);
    ASSERT_TRUE(body.contains("error"));
    EXPECT_TRUE(body["error"]["message"].is_string());
    EXPECT_EQ(res->body.find(token), std::string::npos);

    // No token configured on the client: refused with an auth error.
    auto anonymous = AdapterSystem::connect(ok(http_transport("http:url=" + server->base_url())), "http");
    ASSERT_FALSE(anonymous);
    EXPECT_EQ(anonymous.error().kind, ErrorKind::auth);

    // A wrong token: refused, and neither token appears in the message.
    const std::string wrong = "tok-wrong-0000000000000000";
    ::setenv("MEMFAIL_SERVE_TEST_WRONG", wrong.c_str(), 1);
    auto refused = AdapterSystem::connect(
        ok(http_transport("http:url=" + server->base_url() + ",token_env=MEMFAIL_SERVE_TEST_WRONG,retries=0")), "http");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::auth);
    EXPECT_NE(refused.error().describe().find("401"), std::string::npos);
    EXPECT_NE(refused.error().describe().find("MEMFAIL_SERVE_TEST_WRONG"), std::string::npos);
    EXPECT_EQ(refused.error().describe().find(wrong), std::string::npos);
    EXPECT_EQ(refused.error().describe().find(token), std::string::npos);

    // The right token: served.
    ::setenv("MEMFAIL_SERVE_TEST_TOKEN", token.c_str(), 1);
    auto remote = connect("http:url=" + server->base_url() + ",token_env=MEMFAIL_SERVE_TEST_TOKEN");
    ASSERT_TRUE(remote->store_conversation(sample_sessions()[0]));
    EXPECT_FALSE(ok(remote->all_memories()).empty());

    // Health checks need no token.
    auto health = client.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(json::parse(health->body)["status"], "ok");
}

TEST(ProtocolServer, MissingTokenVariableIsNamedWithoutAValue) {
    ::unsetenv("MEMFAIL_SERVE_TEST_UNSET");
    auto transport = http_transport("http:url=http://127.0.0.1:9,token_env=MEMFAIL_SERVE_TEST_UNSET");
    ASSERT_FALSE(transport);
    EXPECT_EQ(transport.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(transport.error().describe().find("MEMFAIL_SERVE_TEST_UNSET"), std::string::npos);
}

TEST(ProtocolServer, OversizedBodyIs413) {
    serve::ServerOptions options;
    options.max_body = 2048;
    auto server = start_server(std::move(options));
    auto client = client_for(*server);
    const std::string big = json{{"session", {{"id", "big"}, {"messages", json::array()}}}, {"pad", std::string(4096, 'x')}}.dump();
    auto res = client.Post("/v1/store_conversation", big, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 413);
    const json body = json::parse(res->body);
    EXPECT_EQ(body["error"]["kind"], "invalid_request");
    EXPECT_NE(body["error"]["message"].get<std::string>().find("2048"), std::string::npos);

    // Through the transport: a clear invalid-input error, not retried into a different failure.
    auto remote = connect("http:url=" + server->base_url());
    auto stored = remote->store_conversation(session("s-big", "2026-03-01T09:00:00Z", {{"user", std::string(5000, 'a')}}));
    ASSERT_FALSE(stored);
    EXPECT_EQ(stored.error().kind, ErrorKind::invalid_input);
    // A small one still fits.
    EXPECT_TRUE(remote->store_conversation(sample_sessions()[0]));
}

TEST(ProtocolServer, MalformedAndUnknownRequestsGetStructuredErrors) {
    auto server = start_server();
    auto client = client_for(*server);

    auto malformed = client.Post("/v1/retrieve_memories", "{\"query\": ", "application/json");
    ASSERT_TRUE(malformed);
    EXPECT_EQ(malformed->status, 400);
    EXPECT_EQ(json::parse(malformed->body)["error"]["kind"], "invalid_request");

    auto not_object = client.Post("/v1/reset", "[1, 2]", "application/json");
    ASSERT_TRUE(not_object);
    EXPECT_EQ(not_object->status, 400);
    EXPECT_EQ(json::parse(not_object->body)["error"]["kind"], "invalid_request");

    auto bad_params = client.Post("/v1/retrieve_memories", R"({"query": 7, "k": "five"})", "application/json");
    ASSERT_TRUE(bad_params);
    EXPECT_EQ(bad_params->status, 400);
    EXPECT_EQ(json::parse(bad_params->body)["error"]["kind"], "invalid_request");

    auto unknown = client.Post("/v1/frobnicate", "{}", "application/json");
    ASSERT_TRUE(unknown);
    EXPECT_EQ(json::parse(unknown->body)["error"]["kind"], "unsupported");

    auto route = client.Get("/nowhere");
    ASSERT_TRUE(route);
    EXPECT_EQ(route->status, 404);
    EXPECT_TRUE(json::parse(route->body)["error"].is_object());

    // Embeddings are off unless asked for.
    auto models = client.Get("/v1/models");
    ASSERT_TRUE(models);
    EXPECT_EQ(models->status, 404);

    // Through the transport an unknown operation is ErrorKind::unsupported.
    auto transport = ok(http_transport("http:url=" + server->base_url()));
    auto answer = transport->call("frobnicate", json::object());
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().kind, ErrorKind::unsupported);
}

std::vector<float> decode_base64_floats(const std::string& text) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        return c == '+' ? 62 : c == '/' ? 63 : -1;
    };
    std::string bytes;
    std::uint32_t buffer = 0;
    int bits = 0;
    for (char c : text) {
        const int v = value(c);
        if (v < 0) break;
        buffer = (buffer << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes += static_cast<char>((buffer >> bits) & 0xFF);
        }
    }
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
}

TEST(ProtocolServer, EmbeddingsEndpointIsOpenAiShaped) {
    serve::ServerOptions options;
    options.embeddings = true;
    options.embedding_dim = 32;
    auto server = start_server(std::move(options));
    auto client = client_for(*server);
    const memory::HashedEmbedder reference(32);

    const std::vector<std::string> inputs = {"Green tea after dinner", "Running on Tuesday mornings", "Lisbon in August"};
    auto res = client.Post("/v1/embeddings", json{{"model", "my-embedder"}, {"input", inputs}}.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const json body = json::parse(res->body);
    EXPECT_EQ(body["object"], "list");
    EXPECT_EQ(body["model"], "my-embedder");
    ASSERT_EQ(body["data"].size(), inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        EXPECT_EQ(body["data"][i]["index"], i);
        EXPECT_EQ(body["data"][i]["object"], "embedding");
        const auto vector = body["data"][i]["embedding"].get<std::vector<float>>();
        ASSERT_EQ(vector.size(), 32u);
        const auto want = reference.embed(inputs[i]);
        for (std::size_t d = 0; d < vector.size(); ++d) EXPECT_FLOAT_EQ(vector[d], want[d]);
    }
    EXPECT_GT(body["usage"]["prompt_tokens"].get<int>(), 0);

    // A single string, another dimension, and base64 as the OpenAI SDKs ask for by default.
    auto single = client.Post("/v1/embeddings",
                              json{{"model", "m"}, {"input", "Green tea after dinner"}, {"dimensions", 8},
                                   {"encoding_format", "base64"}}
                                  .dump(),
                              "application/json");
    ASSERT_TRUE(single);
    ASSERT_EQ(single->status, 200) << single->body;
    const json one = json::parse(single->body);
    ASSERT_EQ(one["data"].size(), 1u);
    const auto decoded = decode_base64_floats(one["data"][0]["embedding"].get<std::string>());
    const auto want8 = memory::HashedEmbedder(8).embed("Green tea after dinner");
    ASSERT_EQ(decoded.size(), 8u);
    for (std::size_t d = 0; d < 8; ++d) EXPECT_FLOAT_EQ(decoded[d], want8[d]);

    auto bad = client.Post("/v1/embeddings", json{{"model", "m"}, {"input", json::array({1, 2, 3})}}.dump(), "application/json");
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400);
    EXPECT_TRUE(json::parse(bad->body)["error"]["message"].is_string());

    auto models = client.Get("/v1/models");
    ASSERT_TRUE(models);
    ASSERT_EQ(models->status, 200);
    EXPECT_FALSE(json::parse(models->body)["data"].empty());
}

TEST(ProtocolServer, MemfailsOwnOpenAiClientEmbedsThroughIt) {
    const std::string token = "embed-token-1234567890";
    serve::ServerOptions options;
    options.embeddings = true;
    options.embedding_dim = 48;
    options.token = token;
    auto server = start_server(std::move(options));
    llm::ClientOptions client_options;
    client_options.base_url = server->base_url() + "/v1";
    client_options.api_key = token;
    client_options.max_retries = 0;
    auto client = ok(llm::make_openai_client(client_options));
    llm::EmbeddingRequest request;
    request.model = "hashed";
    request.inputs = {"I cycle to work when it rains", "My sister lives in Lisbon"};
    auto reply = client->embed(request);
    ASSERT_TRUE(reply) << reply.error().describe();
    ASSERT_EQ(reply->vectors.size(), 2u);
    const memory::HashedEmbedder reference(48);
    for (std::size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(reply->vectors[i].size(), 48u);
        const auto want = reference.embed(request.inputs[i]);
        for (std::size_t d = 0; d < 48; ++d) EXPECT_FLOAT_EQ(reply->vectors[i][d], want[d]);
    }

    // Without the key the client is refused with an auth error.
    client_options.api_key = "";
    auto anonymous = ok(llm::make_openai_client(client_options));
    auto refused = anonymous->embed(request);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::auth);
}

TEST(ProtocolServer, LoopbackHosts) {
    EXPECT_TRUE(serve::is_loopback_host("127.0.0.1"));
    EXPECT_TRUE(serve::is_loopback_host("127.8.0.3"));
    EXPECT_TRUE(serve::is_loopback_host("localhost"));
    EXPECT_TRUE(serve::is_loopback_host("::1"));
    EXPECT_FALSE(serve::is_loopback_host("0.0.0.0"));
    EXPECT_FALSE(serve::is_loopback_host("192.168.1.4"));
    EXPECT_FALSE(serve::is_loopback_host("::"));
}

TEST(ProtocolServer, StopIsIdempotentAndRefusesABusyPort) {
    auto server = start_server();
    serve::ServerOptions second;
    second.system = ok(memory::make_memory_system("verbatim", memory::SystemContext{}));
    second.port = server->port();
    auto busy = serve::ProtocolServer::start(std::move(second));
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().kind, ErrorKind::network);
    EXPECT_TRUE(server->running());
    server->stop();
    server->stop();
    EXPECT_FALSE(server->running());
}

}  // namespace
}  // namespace memfail::serve_test

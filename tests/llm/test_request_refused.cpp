// SPDX-License-Identifier: MIT
// llm::request_refused: a request the server refused as sent (HTTP 400, 422, ...: a content filter,
// one prompt too long) is told apart from an endpoint that is down (5xx, connection refused, a
// broken reply, auth, 404, 429), on the real client's own errors: the run's fail-fast guard
// counts only the second kind (run/call_recorder.hpp).
#include "llm_test_support.hpp"

#include <gtest/gtest.h>

namespace memfail::llm {
namespace {

using nlohmann::json;
using testing::fast_options;
using testing::make_client;
using testing::plain_request;
using testing::start_fake;

Error failure_for(const json& rule) {
    auto server = start_fake({{"rules", {rule}}});
    EXPECT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.max_retries = 0;
    auto reply = make_client(options)->chat(plain_request("hello"));
    EXPECT_FALSE(reply);
    return reply ? Error{} : reply.error();
}

TEST(RequestRefused, AFourHundredForOnePromptIsARefusal) {
    const Error refused = failure_for({{"fault", "http_400"}});
    EXPECT_EQ(refused.kind, ErrorKind::protocol);
    EXPECT_TRUE(request_refused(refused)) << refused.describe();
}

TEST(RequestRefused, AnEndpointThatIsDownIsNot) {
    for (const char* fault : {"http_500", "http_503", "http_429"}) {
        const Error down = failure_for({{"fault", fault}});
        EXPECT_FALSE(request_refused(down)) << fault << ": " << down.describe();
    }
    // Nothing listening.
    ClientOptions options;
    options.base_url = "http://127.0.0.1:9/v1";
    options.max_retries = 0;
    options.timeout_seconds = 2;
    auto reply = make_client(options)->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_FALSE(request_refused(reply.error())) << reply.error().describe();
}

TEST(RequestRefused, ReadsTheStatusTheClientQuotes) {
    auto error = [](ErrorKind kind, const std::string& message) { return make_error(kind, message); };
    const std::string head = "POST http://x/v1/chat/completions: ";
    EXPECT_TRUE(request_refused(error(ErrorKind::protocol, head + "HTTP 422 after 1 attempt: bad prompt")));
    EXPECT_TRUE(request_refused(error(ErrorKind::protocol, head + "HTTP 413 after 1 attempt: too large")));
    // A broken reply quotes no status; a 5xx is a network error; the server's text cannot fake one.
    EXPECT_FALSE(request_refused(error(ErrorKind::protocol, head + "the reply is not a chat completion after 3 attempts: x")));
    EXPECT_FALSE(request_refused(error(ErrorKind::network, head + "HTTP 502 after 3 attempts: bad gateway")));
    EXPECT_FALSE(request_refused(error(ErrorKind::protocol, head + "the reply is not a chat completion after 3 "
                                                                   "attempts: HTTP 400 after 1 attempt")));
    EXPECT_FALSE(request_refused(error(ErrorKind::auth, head + "HTTP 401 after 1 attempt: no key")));
}

}  // namespace
}  // namespace memfail::llm

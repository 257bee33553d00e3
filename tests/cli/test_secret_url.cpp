// SPDX-License-Identifier: MIT
// Issue 32 item 7: a credential in the base URL's path or query (OPENAI_BASE_URL=http://host/KEY/v1)
// reaches none of what memfail writes or prints: a whole run against the scripted server
// (tools/fake-llm) and its reports leave no file holding it, and a failing preflight does not
// print it.
#include "cli_test_util.hpp"

#include <fake_llm.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace memfail {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Ran;

// The API key (named with --api-key-env), a different key-like path segment, and a query value.
constexpr const char* k_api_key = "sk-proj-Zq7Rt2Lm9Xw4Kp8Vb3Nc6Hd1Jf5Gs0Ay";
constexpr const char* k_path_secret = "Ak9dPq2Lw8Rt5Zy3Xn7Vb1Mc";
constexpr const char* k_query_secret = "qv-7Hd2Lm9Xw4Kp8Vb3N";

class SecretUrl : public testing::CliTest {
protected:
    SecretUrl() : CliTest("memfail-cli-secret-url") {}

    void SetUp() override {
        CliTest::SetUp();
        ::setenv("MEMFAIL_SECRET_URL_KEY", k_api_key, 1);
        fake_llm::ServerOptions options;
        options.script = {{"rules", json::array()}, {"default", {{"reply", "B"}}}};
        options.threads = 4;
        auto started = fake_llm::FakeLlmServer::start(std::move(options));
        ASSERT_TRUE(started) << started.error().describe();
        m_server = std::move(started).value();
    }
    void TearDown() override {
        ::unsetenv("MEMFAIL_SECRET_URL_KEY");
        CliTest::TearDown();
    }

    // The secrets in `bytes`, by name (empty when none).
    static std::vector<std::string> leaked(const std::string& bytes) {
        std::vector<std::string> found;
        for (const char* secret : {k_api_key, k_path_secret, k_query_secret})
            if (bytes.find(secret) != std::string::npos) found.emplace_back(secret);
        return found;
    }

    Ran run(const std::string& base_url, const std::string& out) {
        return memfail("run --system verbatim --data-dir '" + (m_dir / "data").string() +
                       "' --datasets long_hop --limit 3 --k 1 --answer-model taker --base-url '" + base_url +
                       "' --api-key-env MEMFAIL_SECRET_URL_KEY --retries 0 --concurrency 1 --out '" +
                       (m_dir / out).string() + "' -q");
    }

    std::unique_ptr<fake_llm::FakeLlmServer> m_server;
};

TEST_F(SecretUrl, NoFileARunWritesHoldsTheCredentialInItsBaseUrl) {
    ASSERT_EQ(memfail("datasets generate long_hop -o '" + (m_dir / "data").string() + "'").code, 0);
    // The key, and another key-like segment, as path segments that the client's URL normalisation
    // then steps back out of ("/KEY/../v1" is "/v1"), so the scripted server answers on /v1.
    const std::string base = m_server->base_url();
    const std::string host = base.substr(0, base.rfind("/v1"));
    const std::string url = host + "/" + k_api_key + "/../" + k_path_secret + "/../v1?deployment=" + k_query_secret;
    const Ran ran = run(url, "r.db");
    ASSERT_EQ(ran.code, 0) << ran.out << ran.err;
    EXPECT_GT(m_server->stats().value("requests", 0), 0) << m_server->stats().dump();
    EXPECT_TRUE(leaked(ran.out + ran.err).empty()) << ran.out << ran.err;

    const std::string db = (m_dir / "r.db").string();
    const Ran json_report = memfail("report '" + db + "' --format json");
    ASSERT_EQ(json_report.code, 0) << json_report.err;
    EXPECT_NE(json_report.out.find("[redacted]"), std::string::npos) << "the base URL is shown, redacted";
    EXPECT_TRUE(leaked(json_report.out + json_report.err).empty()) << json_report.out.substr(0, 2000);
    const Ran html_report = memfail("report '" + db + "' --html '" + (m_dir / "report.html").string() + "'");
    ASSERT_EQ(html_report.code, 0) << html_report.err;
    for (const char* format : {"markdown", "csv", "jsonl"}) {
        const Ran other = memfail("report '" + db + "' --format " + std::string(format));
        EXPECT_TRUE(leaked(other.out + other.err).empty()) << format;
    }

    // Every file written (the results database, its reply cache, the reports), byte for byte.
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(m_dir)) {
        if (!entry.is_regular_file() || entry.path().parent_path() == m_dir / "data") continue;
        ++files;
        const auto found = leaked(testing::slurp(entry.path()));
        EXPECT_TRUE(found.empty()) << entry.path() << " holds " << (found.empty() ? "" : found.front());
    }
    EXPECT_GE(files, 3u);  // r.db, r.db.llm-cache.db, report.html at least
    EXPECT_TRUE(fs::exists(m_dir / "r.db.llm-cache.db"));
}

TEST_F(SecretUrl, AFailingPreflightDoesNotPrintTheCredential) {
    ASSERT_EQ(memfail("datasets generate long_hop -o '" + (m_dir / "data").string() + "'").code, 0);
    const std::string base = m_server->base_url();
    const std::string host = base.substr(0, base.rfind("/v1"));
    // The scripted server has no route under these paths: the preflight fails (404), and says so.
    for (const std::string& url : {host + "/" + k_api_key + "/v1", host + "/" + k_path_secret + "/v1",
                                   host + "/v1/" + k_path_secret + "?deployment=" + k_query_secret}) {
        const Ran ran = run(url, "failed.db");
        EXPECT_NE(ran.code, 0) << url;
        EXPECT_NE(ran.err.find("preflight"), std::string::npos) << ran.err;
        EXPECT_TRUE(leaked(ran.out + ran.err).empty()) << ran.out << ran.err;
        for (const auto& entry : fs::recursive_directory_iterator(m_dir)) {
            if (!entry.is_regular_file() || entry.path().parent_path() == m_dir / "data") continue;
            EXPECT_TRUE(leaked(testing::slurp(entry.path())).empty()) << entry.path();
        }
    }
    // An unreachable server: the transport's own message names the URL too.
    const Ran down = run("http://127.0.0.1:1/" + std::string(k_api_key) + "/v1", "down.db");
    EXPECT_NE(down.code, 0);
    EXPECT_TRUE(leaked(down.out + down.err).empty()) << down.err;
}

}  // namespace
}  // namespace memfail

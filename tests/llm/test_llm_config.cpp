// SPDX-License-Identifier: MIT
// LLM settings: the TOML file (values, unknown keys with file:line, keys refused), layering, and
// the prompts' schema names and renderings.
#include <memfail/llm/llm_config.hpp>
#include <memfail/llm/prompts.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace memfail::llm {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / ("memfail-config-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path) << text;
    return path.string();
}

TEST(LlmConfig, ReadsEveryKey) {
    const auto path = write_file("good.toml", R"(
base_url = "http://127.0.0.1:9999/v1"
api_key_env = "MY_KEY"
concurrency = 16
requests_per_minute = 500
tokens_per_minute = 200000
timeout = 30.5
max_retries = 3
max_schema_retries = 1
structured_output = "json_object"
cache = "refresh"
cache_db = "/tmp/c.db"
temperature = 0
seed = 7

[models]
answer = "small"
judge = "large"
)");
    LlmSettings s;
    ASSERT_TRUE(apply_toml_file(path, s).has_value());
    EXPECT_EQ(s.base_url, "http://127.0.0.1:9999/v1");
    EXPECT_EQ(s.api_key_env, "MY_KEY");
    EXPECT_EQ(s.concurrency, 16);
    EXPECT_DOUBLE_EQ(s.requests_per_minute, 500);
    EXPECT_DOUBLE_EQ(s.timeout_seconds, 30.5);
    EXPECT_EQ(s.max_retries, 3);
    EXPECT_EQ(s.structured_output, "json_object");
    EXPECT_EQ(s.cache, "refresh");
    ASSERT_TRUE(s.temperature.has_value());
    EXPECT_DOUBLE_EQ(*s.temperature, 0.0);
    EXPECT_EQ(s.seed, 7);
    EXPECT_EQ(s.answer_model, "small");
    EXPECT_EQ(s.judge_model, "large");
    EXPECT_TRUE(s.uses_llm());
    // The record of a run holds the variable's name, never a key.
    EXPECT_EQ(s.to_json()["api_key_env"], "MY_KEY");
}

TEST(LlmConfig, ErrorsNameFileLineAndKey) {
    LlmSettings s;
    auto typo = apply_toml_file(write_file("typo.toml", "base_url = \"http://x/v1\"\nconcurency = 4\n"), s);
    ASSERT_FALSE(typo.has_value());
    EXPECT_NE(typo.error().where.find("typo.toml:2: concurency"), std::string::npos) << typo.error().describe();
    EXPECT_NE(typo.error().message.find("concurrency"), std::string::npos);

    auto key = apply_toml_file(write_file("key.toml", "api_key = \"sk-abc\"\n"), s);
    ASSERT_FALSE(key.has_value());
    EXPECT_NE(key.error().message.find("environment variable"), std::string::npos);
    EXPECT_EQ(key.error().describe().find("sk-abc"), std::string::npos);

    auto type = apply_toml_file(write_file("type.toml", "concurrency = \"many\"\n"), s);
    ASSERT_FALSE(type.has_value());
    EXPECT_NE(type.error().message.find("integer"), std::string::npos);

    auto role = apply_toml_file(write_file("role.toml", "[models]\nanswr = \"m\"\n"), s);
    ASSERT_FALSE(role.has_value());
    EXPECT_NE(role.error().message.find("answer"), std::string::npos);

    auto range = apply_toml_file(write_file("range.toml", "cache = \"sometimes\"\n"), s);
    ASSERT_FALSE(range.has_value());

    // 4294967297 would wrap to 1 in an int: refused with its line instead.
    LlmSettings fresh;
    auto wraps = apply_toml_file(write_file("wrap.toml", "base_url = \"http://x/v1\"\nconcurrency = 4294967297\n"), fresh);
    ASSERT_FALSE(wraps.has_value());
    EXPECT_NE(wraps.error().where.find("wrap.toml:2"), std::string::npos) << wraps.error().describe();
    EXPECT_NE(wraps.error().message.find("between 1 and 1024"), std::string::npos);
    EXPECT_EQ(fresh.concurrency, LlmSettings{}.concurrency);
    auto negative = apply_toml_file(write_file("neg.toml", "max_retries = -1\n"), fresh);
    ASSERT_FALSE(negative.has_value());
    EXPECT_NE(negative.error().where.find("neg.toml:1"), std::string::npos);

    auto syntax = apply_toml_file(write_file("syntax.toml", "base_url = \n"), s);
    ASSERT_FALSE(syntax.has_value());
    EXPECT_NE(syntax.error().where.find("syntax.toml:1"), std::string::npos);

    EXPECT_FALSE(apply_toml_file("/nonexistent/memfail.toml", s).has_value());
}

TEST(LlmConfig, EnvironmentGivesTheBaseUrlAndTheKey) {
    ::setenv("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1", 1);
    ::setenv("MEMFAIL_CONFIG_TEST_KEY", "sk-from-env", 1);
    LlmSettings s;
    apply_environment(s);
    EXPECT_EQ(s.base_url, "http://127.0.0.1:1234/v1");
    s.api_key_env = "MEMFAIL_CONFIG_TEST_KEY";
    EXPECT_EQ(api_key_from_environment(s), "sk-from-env");
    EXPECT_EQ(s.to_json().dump().find("sk-from-env"), std::string::npos);
    ::unsetenv("OPENAI_BASE_URL");
    ::unsetenv("MEMFAIL_CONFIG_TEST_KEY");
}

TEST(LlmConfig, ACredentialInTheBaseUrlIsRefusedWithoutEchoingIt) {
    for (const char* url : {"http://user:sk-secret-1234@127.0.0.1:8000/v1", "https://sk-secret-1234@api.example/v1",
                            "http://127.0.0.1:8000/v1?api_key=sk-secret-1234", "http://127.0.0.1/v1?x=1&Access_Token=sk-secret-1234"}) {
        LlmSettings s;
        s.base_url = url;
        auto v = s.validate();
        ASSERT_FALSE(v.has_value()) << url;
        EXPECT_EQ(v.error().kind, ErrorKind::invalid_input);
        EXPECT_NE(v.error().message.find("--api-key-env"), std::string::npos);
        EXPECT_EQ(v.error().describe().find("sk-secret-1234"), std::string::npos) << url;
    }
    for (const char* url : {"http://127.0.0.1:8000/v1", "https://api.example/v1?region=eu", "http://h/v1/@me"}) {
        LlmSettings s;
        s.base_url = url;
        EXPECT_TRUE(s.validate().has_value()) << url;
    }
}

TEST(Prompts, EachJudgeStageHasItsOwnStrictSchema) {
    using namespace prompts;
    const JudgedFact fact{1, "Mango chews shoelaces in the garden.", {"shoelaces", "garden"}, {}};
    const std::vector<LabelledMemory> memories = {{"m1", "Mango chews shoelaces."}, {"m2", "Unrelated."}};
    const std::vector<ChatRequest> calls = {
        judge_storage("j", memories, {fact}), judge_summary("j", fact, memories), judge_retrieval("j", fact, memories),
        judge_answer("j", "open", "q?", "ref", {}, {"f"}, "resp"), judge_abstention("j", "q?", "Lena", "resp")};
    std::set<std::string> names;
    for (const auto& c : calls) {
        ASSERT_TRUE(c.schema.has_value());
        names.insert(c.schema->name);
        EXPECT_EQ(c.role, Role::judge);
        EXPECT_EQ(c.schema->schema["additionalProperties"], false);
        EXPECT_FALSE(c.schema->schema["required"].empty());
        EXPECT_EQ(c.model, "j");
    }
    EXPECT_EQ(names.size(), calls.size());
    // The storage prompt shows every memory label and the fact's number and details.
    const std::string& user = calls[0].messages.back().content;
    for (const char* needle : {"[m1] Mango chews shoelaces.", "[m2] Unrelated.", "(1) Mango", "\"garden\""})
        EXPECT_NE(user.find(needle), std::string::npos) << needle;
}

TEST(Prompts, GradedAnswerListsMemoriesAndLetteredOptions) {
    const auto r = prompts::graded_answer("m", {{"first note", "2023-05-08 (Mon) 13:56"}, {"second note", ""}}, {},
                                          "Where do I end up?", {"home", "work", "gym", "park", "shop"},
                                          "2023-05-25 (Thu)");
    EXPECT_EQ(r.role, Role::answer);
    EXPECT_FALSE(r.schema.has_value());  // the letter is parsed from text, as the paper's harness does
    // Each memory with its date, when it has one, and the date the question is asked on.
    EXPECT_NE(r.messages.front().content.find("1. [2023-05-08 (Mon) 13:56] first note"), std::string::npos);
    EXPECT_NE(r.messages.front().content.find("Today's date: 2023-05-25 (Thu)."), std::string::npos);
    EXPECT_NE(r.messages.front().content.find("2. second note"), std::string::npos);
    const std::string& user = r.messages.back().content;
    EXPECT_NE(user.find("E. shop"), std::string::npos);
    EXPECT_NE(user.find("selected_choice"), std::string::npos);
    const auto plain = prompts::graded_answer("m", {}, {}, "Q?", {});
    EXPECT_NE(plain.messages.front().content.find("(none)"), std::string::npos);
    EXPECT_EQ(plain.messages.front().content.find("Today's date"), std::string::npos);
    EXPECT_EQ(plain.messages.back().content, "Q?");
}

}  // namespace
}  // namespace memfail::llm

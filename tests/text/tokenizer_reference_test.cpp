// SPDX-License-Identifier: MIT
// Exact equality of token ids and counts with OpenAI's tiktoken (the npm package, run under node)
// for cl100k_base and o200k_base on a varied corpus plus generated long and random texts.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/text/tokenizer.hpp>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using memfail::text::Tokenizer;

const std::vector<std::string> k_encodings = {"cl100k_base", "o200k_base"};

bool reference_required() {
    const char* v = std::getenv("MEMFAIL_REQUIRE_TOKENIZER_REFERENCE");
    return v && std::string(v) == "1";
}

struct NamedText {
    std::string name;
    std::string text;
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A private temporary folder, removed on destruction.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        m_path = fs::temp_directory_path() /
                 ("memfail-tokref-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

struct ReferenceRun {
    bool available = false;
    std::string why;          // why the reference is unavailable, or why it failed
    bool failed = false;      // node ran but the script broke: always a test failure
    nlohmann::json ids;       // {"cl100k_base": [[...], ...], ...}
    std::string version;
};

// Runs tests/text/reference.mjs with an argument vector (no shell): the texts travel in a file.
ReferenceRun run_reference(const std::vector<NamedText>& texts) {
    ReferenceRun run;
    const fs::path script = fs::path(MEMFAIL_TEST_FIXTURES).parent_path() / "text" / "reference.mjs";
    const char* env_modules = std::getenv("MEMFAIL_NPM_MODULES");
    const std::string modules = env_modules && *env_modules ? env_modules : MEMFAIL_NPM_MODULES;
    TempDir dir;
    const fs::path input = dir.path() / "input.json";
    const fs::path out = dir.path() / "out.json";
    const fs::path err = dir.path() / "err.txt";
    {
        nlohmann::json request = {{"encodings", k_encodings}, {"texts", nlohmann::json::array()}};
        for (const auto& t : texts) request["texts"].push_back(t.text);
        std::ofstream(input, std::ios::binary) << request.dump();
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> args = {"node", script.string(), modules, input.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, "node", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        run.why = "node is not on PATH (" + std::string(std::strerror(rc)) + "); install Node.js to compare with tiktoken";
        return run;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 127) {
        run.why = "node could not be run: " + read_file(err);
        return run;
    }
    if (code == 3) {
        run.why = read_file(err);
        return run;
    }
    if (code != 0) {
        run.failed = true;
        run.why = "reference.mjs exited with " + std::to_string(code) + ": " + read_file(err);
        return run;
    }
    const nlohmann::json reply = nlohmann::json::parse(read_file(out), nullptr, false);
    if (reply.is_discarded() || !reply.contains("ids")) {
        run.failed = true;
        run.why = "reference.mjs printed no JSON result";
        return run;
    }
    run.available = true;
    run.ids = reply["ids"];
    run.version = reply.value("tiktoken", "?");
    return run;
}

std::vector<NamedText> corpus_cases() {
    std::vector<NamedText> cases;
    const auto doc = nlohmann::json::parse(read_file(fs::path(MEMFAIL_TEST_FIXTURES) / "tokenizer" / "corpus.json"));
    for (const auto& c : doc.at("cases")) cases.push_back({c.at("name").get<std::string>(), c.at("text").get<std::string>()});
    return cases;
}

std::string repeat(std::string_view s, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

// Texts too long or too many to keep in the fixture: long pieces (which take the heap merge), long
// whitespace runs, every number length, and random strings over boundary-sensitive atoms.
std::vector<NamedText> generated_cases(const std::vector<NamedText>& corpus) {
    std::vector<NamedText> cases;
    memfail::Rng rng(20261122);
    std::string digits;
    for (int len = 1; len <= 40; ++len) {
        std::string number;
        for (int i = 0; i < len; ++i) number += static_cast<char>('0' + (i * 7 + len) % 10);
        digits += number + (len % 3 == 0 ? "\n" : " ");
        cases.push_back({"number_" + std::to_string(len), number});
    }
    cases.push_back({"numbers_all_lengths", digits});
    std::string word;
    for (int i = 0; i < 6000; ++i) word += static_cast<char>('a' + rng.below(26));
    cases.push_back({"long_random_word", word});
    cases.push_back({"long_repeated_letter", repeat("a", 5000)});
    cases.push_back({"long_word_of_syllables", repeat("supercalifragilistic", 300)});
    cases.push_back({"long_camel_case", repeat("CamelCaseWordsGoOn", 200)});
    cases.push_back({"long_cjk_run", repeat("机器学习是人工智能的一个分支", 200)});
    cases.push_back({"long_cyrillic_word", repeat("быстро", 400)});
    cases.push_back({"long_emoji_run", repeat("😀👨‍👩‍👧", 300)});
    cases.push_back({"long_punctuation_run", repeat("!?.", 1500)});
    cases.push_back({"long_spaces", repeat(" ", 4000) + "x"});
    cases.push_back({"long_spaces_then_newlines", repeat(" ", 700) + repeat("\n", 700) + repeat(" ", 300) + "end"});
    cases.push_back({"long_tabs", repeat("\t", 2500)});
    cases.push_back({"long_crlf", repeat("\r\n", 1500)});
    cases.push_back({"long_ideographic_spaces", repeat("\u3000", 1200) + "z"});
    cases.push_back({"long_nbsp_mix", repeat(" \u00a0", 900) + "!"});
    cases.push_back({"long_digits", repeat("1234567890", 300)});

    const std::vector<std::string> atoms = {
        " ",    "  ",   "\n",       "\r\n",     "\r",       "\t",       "'s",   "'S",  "'ll", "'LL", "'Re", "'",
        "a",    "Z",    "word",     "Word",     "WORD",     "é",        "e\u0301", "1", "42", "12345", "٣", "²",
        "!",    "?!",   "/",        ".",        "-",        "_",        "\u00a0", "\u3000", "\u2003", "\u0085",
        "\u2028", "\u180e", "\u200b", "中文",   "東京",     "😀",       "\u200d", "🏽",   "ǅ",   "ſ",   "ß",   "Ω",
        "ñ",    "\u0301", "<|endoftext|>", "http://x.y/z", "\"", "{", "}", ":", ",", "()", "$", "\u00ad"};
    for (int i = 0; i < 300; ++i) {
        std::string text;
        const auto n = rng.between(1, 40);
        for (std::int64_t k = 0; k < n; ++k) text += rng.pick(atoms);
        cases.push_back({"random_" + std::to_string(i), text});
    }
    std::string all;
    for (const auto& c : corpus) all += c.text + "\n";
    cases.push_back({"corpus_concatenated", all});
    return cases;
}

class TokenizerReference : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_cases = corpus_cases();
        for (auto& c : generated_cases(s_cases)) s_cases.push_back(std::move(c));
        s_run = run_reference(s_cases);
    }
    void SetUp() override {
        if (s_run.failed) FAIL() << s_run.why;
        if (!s_run.available) {
            if (reference_required()) FAIL() << "MEMFAIL_REQUIRE_TOKENIZER_REFERENCE=1 but " << s_run.why;
            GTEST_SKIP() << "tiktoken reference unavailable: " << s_run.why;
        }
    }
    static std::shared_ptr<const Tokenizer> tokenizer(const std::string& encoding) {
        auto loaded = memfail::text::shared_tokenizer(encoding);
        if (!loaded) ADD_FAILURE() << loaded.error().describe();
        return loaded ? *loaded : nullptr;
    }
    static std::vector<NamedText> s_cases;
    static ReferenceRun s_run;
};
std::vector<NamedText> TokenizerReference::s_cases;
ReferenceRun TokenizerReference::s_run;

std::string show(const Tokenizer& tok, const std::vector<std::uint32_t>& ids, std::size_t from) {
    std::string out;
    for (std::size_t i = from; i < ids.size() && i < from + 6; ++i) {
        auto bytes = tok.decode({ids[i]});
        out += std::to_string(ids[i]) + "=" + nlohmann::json(bytes ? *bytes : "?").dump(-1, ' ', true,
                                                                                       nlohmann::json::error_handler_t::replace) + " ";
    }
    return out;
}

TEST_F(TokenizerReference, IdsAndCountsEqualTiktokenOnCorpus) {
    std::size_t compared = 0;
    for (const auto& encoding : k_encodings) {
        const auto tok = tokenizer(encoding);
        ASSERT_TRUE(tok);
        const auto& expected_all = s_run.ids.at(encoding);
        ASSERT_EQ(expected_all.size(), s_cases.size());
        for (std::size_t i = 0; i < s_cases.size(); ++i) {
            const auto expected = expected_all[i].get<std::vector<std::uint32_t>>();
            const auto ids = tok->encode(s_cases[i].text);
            if (ids != expected) {
                std::size_t at = 0;
                while (at < ids.size() && at < expected.size() && ids[at] == expected[at]) ++at;
                ADD_FAILURE() << encoding << " case '" << s_cases[i].name << "' differs at token " << at
                              << "\n  ours:      " << show(*tok, ids, at) << "\n  tiktoken:  " << show(*tok, expected, at);
            }
            EXPECT_EQ(tok->count(s_cases[i].text), expected.size()) << encoding << " " << s_cases[i].name;
            ++compared;
        }
    }
    EXPECT_EQ(compared, 2 * s_cases.size());
    std::cout << "[ reference ] tiktoken " << s_run.version << ", " << s_cases.size() << " texts per encoding\n";
}

TEST_F(TokenizerReference, CorpusCoversTheRequiredKinds) {
    // Guards the fixture itself: the equality test is only as good as what the corpus contains.
    std::string all;
    for (const auto& c : s_cases) all += c.text;
    for (const std::string needle : {"\u00a0", "\u2003", "\u3000", "\u0085", "\u180e", "\r\n", "\t", "'LL", "'S", "'re",
                                     "\u200d", "<|endoftext|>", "https://", "東京", "Привет", "नमस्ते", "مرحبا",
                                     "e\u0301", "😀"})
        EXPECT_NE(all.find(needle), std::string::npos) << "corpus lacks " << needle;
    bool has_empty = false, has_long = false;
    for (const auto& c : s_cases) {
        has_empty |= c.text.empty();
        has_long |= c.text.size() >= 4000 && c.text.find(' ') == std::string::npos;
    }
    EXPECT_TRUE(has_empty);
    EXPECT_TRUE(has_long);
}

}  // namespace

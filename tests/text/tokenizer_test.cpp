// SPDX-License-Identifier: MIT
// Tokenizer behaviour that needs no reference: merge order on a hand-made rank file, round trips,
// special tokens, thread safety, load errors, model-to-encoding rules and UTF-8 repair.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/text/bpe.hpp>
#include <memfail/text/tokenizer.hpp>

namespace {

namespace fs = std::filesystem;
using memfail::ErrorKind;
using memfail::text::Tokenizer;

class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        m_path = fs::temp_directory_path() / ("memfail-tok-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    const fs::path& path() const { return m_path; }
    void write(const std::string& name, const std::string& content) const {
        std::ofstream(m_path / name, std::ios::binary) << content;
    }

private:
    fs::path m_path;
};

std::string base64(std::string_view bytes) {
    static const char* k_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto n = (std::uint32_t(std::uint8_t(bytes[i])) << 16) | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) |
                       std::uint8_t(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out += k_alphabet[(n >> s) & 63];
    }
    if (i < bytes.size()) {
        std::uint32_t n = std::uint32_t(std::uint8_t(bytes[i])) << 16;
        if (i + 1 < bytes.size()) n |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
        out += k_alphabet[(n >> 18) & 63];
        out += k_alphabet[(n >> 12) & 63];
        out += i + 1 < bytes.size() ? k_alphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

// A rank file in the npm package's format: the 256 single bytes (rank = byte value), then `extra`
// tokens from rank 256 on, one line each so the offsets are exercised too.
std::string synthetic_rank_file(const std::vector<std::string>& extra, const std::string& pattern = "\\S+|\\s+",
                                bool drop_byte_q = false) {
    std::string ranks = "! 0";
    for (int b = 0; b < 256; ++b) {
        const std::string byte(1, static_cast<char>(b));
        ranks += " " + (drop_byte_q && b == 'q' ? base64("qq") : base64(byte));
    }
    for (std::size_t i = 0; i < extra.size(); ++i)
        ranks += "\n" + extra[i] + " " + std::to_string(256 + i) + " " + base64(extra[i]);
    nlohmann::json doc = {{"pat_str", pattern},
                          {"special_tokens", {{"<|end|>", 1000}}},
                          {"bpe_ranks", ranks}};
    return doc.dump();
}

std::unique_ptr<Tokenizer> load_synthetic(const TempDir& dir, const std::vector<std::string>& extra) {
    dir.write("tiny.json", synthetic_rank_file(extra));
    auto loaded = memfail::text::load_tokenizer("tiny", dir.path().string());
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().describe());
    return loaded ? std::move(loaded).value() : nullptr;
}

std::vector<std::uint32_t> ids(std::initializer_list<int> values) {
    std::vector<std::uint32_t> out;
    for (int v : values) out.push_back(static_cast<std::uint32_t>(v));
    return out;
}

TEST(TokenizerMerge, LowestRankPairMergesFirstNotLeftToRight) {
    TempDir dir;
    // ranks: "bc"=256, "ab"=257, "cd"=258. Greedy left-to-right would give ab|cd; BPE merges bc.
    const auto tok = load_synthetic(dir, {"bc", "ab", "cd"});
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->encode("abcd"), ids({'a', 256, 'd'}));
    EXPECT_EQ(tok->encode("abcd cd"), ids({'a', 256, 'd', ' ', 258}));
}

TEST(TokenizerMerge, TiesGoToTheLeftmostPairAndMergesChain) {
    TempDir dir;
    // "aa"=256, "aaaa"=257: "aaaaa" -> aa aa a -> aaaa a.
    const auto tok = load_synthetic(dir, {"aa", "aaaa"});
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->encode("aaa"), ids({256, 'a'}));
    EXPECT_EQ(tok->encode("aaaaa"), ids({257, 'a'}));
    EXPECT_EQ(tok->count("aaaaa aaa"), 5u);
}

TEST(TokenizerMerge, WholePieceInTheTableIsOneTokenEvenWhenMergesCannotReachIt) {
    TempDir dir;
    // "xyz" is a token but neither "xy" nor "yz" is: the reference looks the whole piece up first.
    const auto tok = load_synthetic(dir, {"xyz"});
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->encode("xyz"), ids({256}));
    EXPECT_EQ(tok->encode("xyzx"), ids({'x', 'y', 'z', 'x'}));
}

TEST(TokenizerMerge, SpecialTokensDecodeButOrdinaryEncodingIgnoresThem) {
    TempDir dir;
    const auto tok = load_synthetic(dir, {});
    ASSERT_TRUE(tok);
    EXPECT_EQ(*tok->decode(ids({1000})), "<|end|>");
    const auto plain = tok->encode("<|end|>");
    EXPECT_EQ(plain.size(), 7u);  // seven single bytes: no merges in this table
    EXPECT_EQ(*tok->decode(plain), "<|end|>");
}

TEST(TokenizerMerge, LinearAndHeapMergesAgreeOnRandomPieces) {
    // Both forms must pick the same pair at every step; compare them on pieces over a small alphabet
    // with many overlapping merges, where tie and ordering mistakes would show.
    memfail::text::detail::RankTable table;
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    memfail::Rng rng(7);
    const std::string alphabet = "abcab";
    for (int i = 0; i < 400; ++i) {
        std::string t;
        const auto len = rng.between(2, 6);
        for (std::int64_t k = 0; k < len; ++k) t += alphabet[rng.below(alphabet.size())];
        tokens.push_back(t);
    }
    std::uint32_t rank = 0;
    for (const auto& t : tokens)
        if (table.insert(t, rank)) ++rank;
    table.index_pairs();
    memfail::text::detail::MergeScratch scratch;
    for (int i = 0; i < 300; ++i) {
        std::string piece;
        const auto len = rng.between(2, 300);
        for (std::int64_t k = 0; k < len; ++k) piece += alphabet[rng.below(alphabet.size())];
        std::vector<std::uint32_t> linear, heap;
        memfail::text::detail::merge_linear(table, piece, scratch, linear);
        memfail::text::detail::merge_heap(table, piece, scratch, heap);
        ASSERT_EQ(linear, heap) << piece;
    }
}

TEST(TokenizerMerge, PairIndexHoldsEverySplitIntoTwoTokensAndNothingElse) {
    memfail::text::detail::RankTable table;
    for (int b = 0; b < 256; ++b) ASSERT_TRUE(table.insert(std::string(1, static_cast<char>(b)), b));
    // "abc" splits as a|bc and ab|c; "abcdefghij" (a key longer than 8 bytes) as abcde|fghij only.
    ASSERT_TRUE(table.insert("ab", 256));
    ASSERT_TRUE(table.insert("bc", 257));
    ASSERT_TRUE(table.insert("abc", 258));
    ASSERT_TRUE(table.insert("abcde", 259));
    ASSERT_TRUE(table.insert("fghij", 260));
    ASSERT_TRUE(table.insert("abcdefghij", 261));
    table.index_pairs();
    ASSERT_TRUE(table.pairs_indexed());
    using memfail::text::detail::k_no_rank;
    EXPECT_EQ(table.pair_rank('a', 'b'), 256u);
    EXPECT_EQ(table.pair_rank('a', 257), 258u);
    EXPECT_EQ(table.pair_rank(256, 'c'), 258u);
    EXPECT_EQ(table.pair_rank(259, 260), 261u);
    EXPECT_EQ(table.pair_rank(260, 259), k_no_rank);
    EXPECT_EQ(table.pair_rank('a', 'c'), k_no_rank);
    EXPECT_EQ(table.pair_rank(258, 'd'), k_no_rank);  // "abcd" is no token
    // Counted independently: a|b, b|c, a|bc, ab|c and abcde|fghij; "abcde" and "fghij" have no
    // split into two tokens.
    std::size_t expected = 0;
    for (const std::string t : {"ab", "bc", "abc", "abcde", "fghij", "abcdefghij"})
        for (std::size_t s = 1; s < t.size(); ++s)
            if (table.find(t.substr(0, s)) != k_no_rank && table.find(t.substr(s)) != k_no_rank) ++expected;
    EXPECT_EQ(expected, 5u);
    EXPECT_EQ(table.pair_count(), expected);
}

TEST(TokenizerUtf8, IllFormedBytesBecomeOneReplacementPerMaximalSubpart) {
    using memfail::text::detail::repair_utf8;
    std::string out;
    EXPECT_FALSE(repair_utf8("plain é 東 😀", out));
    ASSERT_TRUE(repair_utf8("a\xff" "b", out));
    EXPECT_EQ(out, "a\uFFFD" "b");
    ASSERT_TRUE(repair_utf8("\xE2\x82", out));  // truncated three-byte sequence: one subpart
    EXPECT_EQ(out, "\uFFFD");
    ASSERT_TRUE(repair_utf8("\xED\xA0\x80", out));  // a surrogate: ED cannot start it, so three
    EXPECT_EQ(out, "\uFFFD\uFFFD\uFFFD");
    ASSERT_TRUE(repair_utf8("\xC0\xAF", out));  // overlong
    EXPECT_EQ(out, "\uFFFD\uFFFD");
    ASSERT_TRUE(repair_utf8("\xF0\x9F\x98", out));
    EXPECT_EQ(out, "\uFFFD");
}

// The real encodings; tests skip (or fail when the reference is required) without the rank files.
class RealEncodings : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* name : {"cl100k_base", "o200k_base"}) {
            auto loaded = memfail::text::shared_tokenizer(name);
            if (!loaded) {
                const char* required = std::getenv("MEMFAIL_REQUIRE_TOKENIZER_REFERENCE");
                if (required && std::string(required) == "1") FAIL() << loaded.error().describe();
                GTEST_SKIP() << loaded.error().describe();
            }
            m_tokenizers.push_back(*loaded);
        }
    }
    static std::vector<std::string> corpus() {
        std::ifstream in(fs::path(MEMFAIL_TEST_FIXTURES) / "tokenizer" / "corpus.json", std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        std::vector<std::string> texts;
        const auto doc = nlohmann::json::parse(s.str());
        for (const auto& c : doc.at("cases")) texts.push_back(c.at("text").get<std::string>());
        return texts;
    }
    std::vector<std::shared_ptr<const Tokenizer>> m_tokenizers;
};

TEST_F(RealEncodings, DecodeOfEncodeIsTheInput) {
    const auto texts = corpus();
    ASSERT_GT(texts.size(), 20u);
    for (const auto& tok : m_tokenizers) {
        for (const auto& text : texts) {
            const auto tokens = tok->encode(text);
            EXPECT_EQ(tok->count(text), tokens.size());
            const auto back = tok->decode(tokens);
            ASSERT_TRUE(back);
            EXPECT_EQ(*back, text) << tok->encoding();
            EXPECT_LE(tokens.size(), text.size());  // at most one token per byte
        }
        EXPECT_TRUE(tok->encode("").empty());
    }
}

TEST_F(RealEncodings, EncodingNamesAndSharedInstances) {
    EXPECT_EQ(m_tokenizers[0]->encoding(), "cl100k_base");
    EXPECT_EQ(m_tokenizers[1]->encoding(), "o200k_base");
    EXPECT_EQ(memfail::text::shared_tokenizer("cl100k_base")->get(), m_tokenizers[0].get());
    // Concurrent first use of a different folder string still yields one instance per key.
    const std::string dir = memfail::text::default_tokenizer_dir() + "/.";
    std::vector<const Tokenizer*> seen(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] { seen[t] = memfail::text::shared_tokenizer("cl100k_base", dir)->get(); });
    for (auto& th : threads) th.join();
    for (int t = 1; t < 4; ++t) EXPECT_EQ(seen[t], seen[0]);
    EXPECT_NE(seen[0], m_tokenizers[0].get());
}

TEST_F(RealEncodings, SpecialTokensFromTheFileDecodeAndAreNotProducedByEncode) {
    for (const auto& tok : m_tokenizers) {
        std::ifstream in(fs::path(memfail::text::default_tokenizer_dir()) / (tok->encoding() + ".json"));
        std::ostringstream s;
        s << in.rdbuf();
        // Only the small special_tokens object is parsed (a full parse is slow in Debug builds).
        const std::string file = s.str();
        const std::size_t at = file.find("\"special_tokens\"");
        ASSERT_NE(at, std::string::npos);
        const std::size_t open = file.find('{', at), close = file.find('}', at);
        const auto specials = nlohmann::json::parse(file.substr(open, close - open + 1));
        ASSERT_FALSE(specials.empty());
        for (const auto& [name, id] : specials.items()) {
            EXPECT_EQ(*tok->decode({id.get<std::uint32_t>()}), name);
            const auto plain = tok->encode(name);
            EXPECT_GT(plain.size(), 1u) << name;
            for (const auto t : plain) EXPECT_NE(t, id.get<std::uint32_t>());
            EXPECT_EQ(*tok->decode(plain), name);
        }
    }
}

TEST_F(RealEncodings, UnknownIdIsNotFound) {
    for (const auto& tok : m_tokenizers) {
        for (const std::uint32_t bad : {4'000'000'000u, 0xFFFFFFFFu, 3'000'000u}) {
            const auto r = tok->decode({0, bad});
            ASSERT_FALSE(r);
            EXPECT_EQ(r.error().kind, ErrorKind::not_found);
            EXPECT_NE(r.error().message.find(std::to_string(bad)), std::string::npos);
        }
    }
}

TEST_F(RealEncodings, IllFormedUtf8CountsLikeItsReplacement) {
    for (const auto& tok : m_tokenizers) {
        EXPECT_EQ(tok->encode("caf\xE9 ok"), tok->encode("caf\uFFFD ok"));
        EXPECT_EQ(tok->count("\xFF\xFE"), tok->count("\uFFFD\uFFFD"));
    }
}

TEST_F(RealEncodings, ConcurrentEncodingGivesTheSameTokens) {
    std::string text;
    for (const auto& t : corpus()) text += t + "\n";
    for (int i = 0; i < 3; ++i) text += text;
    std::vector<std::vector<std::uint32_t>> expected;
    for (const auto& tok : m_tokenizers) expected.push_back(tok->encode(text));
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 6; ++round) {
                // Alternate encodings and entry points within a thread: the per-thread state is shared.
                const std::size_t which = static_cast<std::size_t>(t + round) % m_tokenizers.size();
                const auto& tok = m_tokenizers[which];
                if (round % 2 ? tok->count(text) != expected[which].size() : tok->encode(text) != expected[which])
                    ++mismatches;
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0);
}

TEST(TokenizerLoad, MissingFolderIsNotFoundAndSaysHowToGetTheFiles) {
    TempDir dir;
    const auto missing = (dir.path() / "nowhere").string();
    const auto r = memfail::text::load_tokenizer("cl100k_base", missing);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::not_found);
    EXPECT_NE(r.error().describe().find(missing + "/cl100k_base.json"), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().message.find("scripts/install-deps"), std::string::npos);
    EXPECT_NE(r.error().message.find("--tokenizer-dir"), std::string::npos);
    EXPECT_FALSE(memfail::text::shared_tokenizer("cl100k_base", missing));
}

TEST(TokenizerLoad, MalformedFilesAreInvalidInputNamingTheFile) {
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"not_json", "{ this is not json"},
        {"array", "[1, 2]"},
        {"no_ranks", R"({"pat_str": "\\S+", "special_tokens": {}})"},
        {"no_pattern", nlohmann::json{{"bpe_ranks", "! 0 YQ=="}}.dump()},
        {"bad_base64", nlohmann::json{{"pat_str", "\\S+"}, {"bpe_ranks", "! 0 YQ== @@@"}}.dump()},
        {"bad_rank", nlohmann::json{{"pat_str", "\\S+"}, {"bpe_ranks", "! x YQ=="}}.dump()},
        {"missing_byte", synthetic_rank_file({}, "\\S+|\\s+", /*drop_byte_q=*/true)},
        {"duplicate", synthetic_rank_file({"ab", "ab"})},
        {"bad_pattern", synthetic_rank_file({}, "(unclosed")},
        {"bad_special", [] {
             auto doc = nlohmann::json::parse(synthetic_rank_file({}));
             doc["special_tokens"] = {{"<|x|>", "one"}};
             return doc.dump();
         }()},
    };
    for (const auto& [name, content] : bad) {
        dir.write(name + ".json", content);
        const auto r = memfail::text::load_tokenizer(name, dir.path().string());
        ASSERT_FALSE(r) << name;
        EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << name << ": " << r.error().describe();
        EXPECT_NE(r.error().message.find(name + ".json"), std::string::npos) << r.error().describe();
    }
    // Not a path: an encoding name cannot climb out of the folder.
    const auto r = memfail::text::load_tokenizer("../etc/passwd", dir.path().string());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
}

TEST(TokenizerLoad, DefaultFolderFollowsTheEnvironment) {
    const char* old = std::getenv("MEMFAIL_TOKENIZER_DIR");
    const std::string saved = old ? old : "";
    ::setenv("MEMFAIL_TOKENIZER_DIR", "/some/where", 1);
    EXPECT_EQ(memfail::text::default_tokenizer_dir(), "/some/where");
    ::unsetenv("MEMFAIL_TOKENIZER_DIR");
    EXPECT_FALSE(memfail::text::default_tokenizer_dir().empty());
    EXPECT_NE(memfail::text::default_tokenizer_dir(), "/some/where");
    if (old) ::setenv("MEMFAIL_TOKENIZER_DIR", saved.c_str(), 1);
}

TEST(EncodingForModel, FollowsOpenAiModelFamilies) {
    using memfail::text::encoding_for_model;
    for (const char* m : {"gpt-4o", "gpt-4o-mini-2024-07-18", "chatgpt-4o-latest", "gpt-4.1-nano", "gpt-4.5-preview",
                          "gpt-5", "gpt-5-mini", "o1", "o1-mini", "o3-mini", "o4-mini", "gpt-oss-20b",
                          "openai/gpt-4o", "ft:gpt-4o-mini:acme::abc123", "GPT-4o", "llama3.1:8b", "qwen2.5-7b-instruct", ""})
        EXPECT_EQ(encoding_for_model(m), "o200k_base") << m;
    for (const char* m : {"gpt-4", "gpt-4-turbo", "gpt-4-0613", "gpt-3.5-turbo", "gpt-3.5-turbo-16k", "gpt-35-turbo",
                          "text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002",
                          "ft:gpt-3.5-turbo:acme::x1", "openai/gpt-4-turbo", "davinci-002"})
        EXPECT_EQ(encoding_for_model(m), "cl100k_base") << m;
}

}  // namespace

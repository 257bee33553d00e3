// SPDX-License-Identifier: MIT
// The tiktoken-compatible tokenizer: rank-file loading, PCRE2 pre-tokenization and encode/decode.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <memfail/text/tokenizer.hpp>

#include <pcre2.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include <memfail/text/bpe.hpp>

namespace memfail::text {
namespace {

using detail::k_no_rank;

constexpr std::string_view k_install_hint =
    "run scripts/install-deps or pass --tokenizer-dir (or set MEMFAIL_TOKENIZER_DIR)";

// Per-thread PCRE2 match state and merge scratch, shared by every tokenizer the thread uses: match
// data created without a pattern is not tied to one, which keeps encode() free of locks.
struct ThreadState {
    pcre2_match_data* data = nullptr;
    pcre2_match_context* context = nullptr;
    pcre2_jit_stack* jit_stack = nullptr;
    detail::MergeScratch scratch;
    std::vector<std::uint32_t> tokens;  // count() encodes into this
    std::string repaired;               // input with ill-formed UTF-8 replaced

    ThreadState() {
        data = pcre2_match_data_create(1, nullptr);
        context = pcre2_match_context_create(nullptr);
        // The default 32 KiB JIT stack is on the machine stack; a growable one removes any doubt
        // about very long runs of one character class.
        jit_stack = pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, nullptr);
        MF_ASSERT(data && context && jit_stack, "PCRE2 allocation failed");
        pcre2_jit_stack_assign(context, nullptr, jit_stack);
    }
    ~ThreadState() {
        pcre2_jit_stack_free(jit_stack);
        pcre2_match_context_free(context);
        pcre2_match_data_free(data);
    }
    ThreadState(const ThreadState&) = delete;
    ThreadState& operator=(const ThreadState&) = delete;
};

ThreadState& thread_state() {
    thread_local ThreadState state;
    return state;
}

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    const int n = pcre2_get_error_message(code, buffer, sizeof buffer);
    return n < 0 ? "PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<char*>(buffer));
}

// The reference runs the pattern with Rust's regex, where \s is Unicode White_Space. PCRE2's \s
// under PCRE2_UCP also matches U+180E (MONGOLIAN VOWEL SEPARATOR, a format character since Unicode
// 6.3), so every \s and \S becomes the explicit White_Space property; the rest of the pattern is
// used as written.
std::string adapt_pattern(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() + 64);
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\' && i + 1 < pattern.size()) {
            const char c = pattern[++i];
            if (c == 's')
                out += "\\p{White_Space}";
            else if (c == 'S')
                out += "\\P{White_Space}";
            else
                out += '\\', out += c;
        } else {
            out += pattern[i];
        }
    }
    return out;
}

struct TokenSpan {
    std::uint32_t offset = 0;
    std::uint32_t length = k_no_rank;  // k_no_rank: no token has this id
};

class BpeTokenizer final : public Tokenizer {
public:
    BpeTokenizer(std::string encoding, detail::RankTable ranks, std::string token_bytes,
                 std::vector<TokenSpan> spans, pcre2_code* code, bool jit)
        : m_encoding(std::move(encoding)), m_ranks(std::move(ranks)), m_token_bytes(std::move(token_bytes)),
          m_spans(std::move(spans)), m_code(code), m_jit(jit) {}
    ~BpeTokenizer() override { pcre2_code_free(m_code); }
    BpeTokenizer(const BpeTokenizer&) = delete;
    BpeTokenizer& operator=(const BpeTokenizer&) = delete;

    const std::string& encoding() const override { return m_encoding; }

    std::vector<std::uint32_t> encode(std::string_view text) const override {
        std::vector<std::uint32_t> out;
        out.reserve(text.size() / 3 + 4);
        encode_into(text, thread_state(), out);
        return out;
    }

    std::size_t count(std::string_view text) const override {
        ThreadState& state = thread_state();
        state.tokens.clear();
        encode_into(text, state, state.tokens);
        const std::size_t n = state.tokens.size();
        // Do not keep a huge buffer alive in every thread after one big document.
        if (state.tokens.capacity() > (std::size_t{1} << 22)) std::vector<std::uint32_t>().swap(state.tokens);
        return n;
    }

    Result<std::string> decode(const std::vector<std::uint32_t>& tokens) const override {
        std::string out;
        for (const std::uint32_t id : tokens) {
            if (id >= m_spans.size() || m_spans[id].length == k_no_rank)
                return make_error(ErrorKind::not_found,
                                  "token id " + std::to_string(id) + " is not in the " + m_encoding + " vocabulary");
            out.append(m_token_bytes, m_spans[id].offset, m_spans[id].length);
        }
        return out;
    }

private:
    void encode_into(std::string_view text, ThreadState& state, std::vector<std::uint32_t>& out) const {
        std::string_view subject = text;
        // The reference takes a Unicode string; ill-formed bytes reach it as U+FFFD (that is how
        // TextEncoder and from_utf8_lossy treat them), and PCRE2 needs valid UTF-8 anyway.
        if (detail::repair_utf8(text, state.repaired)) subject = state.repaired;
        const auto* bytes = reinterpret_cast<PCRE2_SPTR>(subject.data());
        const std::size_t n = subject.size();
        std::size_t pos = 0;
        while (pos < n) {
            int rc = m_jit ? pcre2_jit_match(m_code, bytes, n, pos, 0, state.data, state.context)
                           : pcre2_match(m_code, bytes, n, pos, PCRE2_NO_UTF_CHECK, state.data, state.context);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && m_jit)  // e.g. JIT stack limit: the interpreter uses the heap
                rc = pcre2_match(m_code, bytes, n, pos, PCRE2_NO_UTF_CHECK, state.data, state.context);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {
                const std::string why = "pre-tokenization pattern failed: " + pcre2_message(rc);
                MF_ASSERT(false, why.c_str());
            }
            const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
            const std::size_t begin = ovector[0];
            const std::size_t end = ovector[1];
            if (end <= begin) {  // the patterns never match empty; step one character to be safe
                pos = begin + 1;
                while (pos < n && (static_cast<unsigned char>(subject[pos]) & 0xC0) == 0x80) ++pos;
                continue;
            }
            const std::string_view piece = subject.substr(begin, end - begin);
            const std::uint32_t rank = m_ranks.find(piece);
            if (rank != k_no_rank)
                out.push_back(rank);
            else
                detail::byte_pair_merge(m_ranks, piece, state.scratch, out);
            pos = end;
        }
    }

    std::string m_encoding;
    detail::RankTable m_ranks;
    std::string m_token_bytes;
    std::vector<TokenSpan> m_spans;
    pcre2_code* m_code;
    bool m_jit;
};

Error malformed(const std::string& path, const std::string& what) {
    return make_error(ErrorKind::invalid_input, path + " is not a valid tiktoken rank file: " + what, path);
}

Result<std::string> read_whole_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return make_error(ErrorKind::not_found,
                          "tokenizer rank file " + path + " does not exist; " + std::string(k_install_hint), path);
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(ErrorKind::io, "cannot open tokenizer rank file " + path + ": " + std::strerror(errno), path);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (!in && !in.eof()) return make_error(ErrorKind::io, "cannot read tokenizer rank file " + path, path);
    return std::move(buffer).str();
}

bool valid_encoding_name(std::string_view name) {
    if (name.empty() || name.front() == '.') return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '.';
    });
}

bool parse_u32(std::string_view text, std::uint32_t& value) {
    if (text.empty() || text.size() > 10) return false;
    std::uint64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (v >= k_no_rank) return false;
    value = static_cast<std::uint32_t>(v);
    return true;
}

// bpe_ranks: lines "<label> <first rank> <base64 token> <base64 token> ...", the i-th token of a
// line having rank first + i (the npm package's compact form of a .tiktoken file).
Result<void> parse_ranks(const std::string& path, std::string_view text, detail::RankTable& ranks,
                         std::string& token_bytes, std::vector<TokenSpan>& spans) {
    const std::size_t estimated = static_cast<std::size_t>(std::count(text.begin(), text.end(), ' '));
    ranks.reserve(estimated, text.size());
    token_bytes.reserve(text.size() * 3 / 4);
    std::size_t line_no = 0;
    while (!text.empty()) {
        const std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        const std::string where = "bpe_ranks line " + std::to_string(line_no);
        std::size_t field = 0;
        std::uint32_t rank = 0;
        while (!line.empty()) {
            const std::size_t sp = line.find(' ');
            const std::string_view item = line.substr(0, sp);
            line.remove_prefix(sp == std::string_view::npos ? line.size() : sp + 1);
            if (item.empty()) continue;
            if (field == 1) {
                if (!parse_u32(item, rank)) return malformed(path, where + ": bad rank '" + std::string(item) + "'");
            } else if (field >= 2) {
                const std::size_t offset = token_bytes.size();
                if (!detail::base64_decode(item, token_bytes) || token_bytes.size() == offset)
                    return malformed(path, where + ": bad base64 token '" + std::string(item) + "'");
                const std::string_view bytes(token_bytes.data() + offset, token_bytes.size() - offset);
                if (rank == k_no_rank) return malformed(path, where + ": rank out of range");
                if (bytes.size() > 0xFFFF) return malformed(path, where + ": a token longer than 65535 bytes");
                if (!ranks.insert(bytes, rank))
                    return malformed(path, where + ": token of rank " + std::to_string(rank) + " appears twice");
                if (spans.size() <= rank) spans.resize(std::size_t{rank} + 1);
                if (spans[rank].length != k_no_rank)
                    return malformed(path, where + ": rank " + std::to_string(rank) + " is used twice");
                spans[rank] = TokenSpan{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(bytes.size())};
                ++rank;
            }
            ++field;
        }
        if (field < 2) return malformed(path, where + ": expected '<label> <rank> <tokens...>'");
    }
    if (ranks.size() == 0) return malformed(path, "bpe_ranks is empty");
    // The merge starts from single bytes, so every byte must be a token.
    for (int b = 0; b < 256; ++b) {
        const char c = static_cast<char>(b);
        if (ranks.find(std::string_view(&c, 1)) == k_no_rank)
            return malformed(path, "bpe_ranks lacks the single byte " + std::to_string(b));
    }
    ranks.index_pairs();
    return {};
}

// Fast path for the usual file: the multi-megabyte bpe_ranks value (base64, digits and spaces, no
// escapes) is sliced out of the raw text, and only the small remainder goes through the JSON parser,
// which halves load time. False (use the full parser) for anything unusual, e.g. escapes in the value.
bool split_rank_string(std::string_view text, nlohmann::json& rest, std::string_view& bpe_text) {
    constexpr std::string_view k_key = "\"bpe_ranks\"";
    const std::size_t key = text.find(k_key);
    if (key == std::string_view::npos) return false;
    std::size_t i = key + k_key.size();
    const auto skip_space = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
    };
    skip_space();
    if (i >= text.size() || text[i] != ':') return false;
    ++i;
    skip_space();
    if (i >= text.size() || text[i] != '"') return false;
    const std::size_t begin = i + 1;
    const std::size_t end = text.find_first_of("\"\\", begin);
    if (end == std::string_view::npos || text[end] != '"') return false;
    std::string remainder;
    remainder.reserve(text.size() - (end - begin) + 2);
    remainder.append(text.substr(0, begin));
    remainder.append(text.substr(end));
    rest = nlohmann::json::parse(remainder, nullptr, /*allow_exceptions=*/false);
    // The key might have been found inside some other string; then the top-level value is not the
    // one emptied here, and the full parser decides.
    if (rest.is_discarded() || !rest.is_object()) return false;
    const auto bpe = rest.find("bpe_ranks");
    if (bpe == rest.end() || !bpe->is_string() || !bpe->get_ref<const std::string&>().empty()) return false;
    bpe_text = text.substr(begin, end - begin);
    return true;
}

}  // namespace

std::string default_tokenizer_dir() {
    if (const char* env = std::getenv("MEMFAIL_TOKENIZER_DIR"); env && *env) return env;
    // Installed (`make install`, the Debian package): <prefix>/bin/memfail beside
    // <prefix>/share/memfail/tokenizers. A binary in the build tree has no such folder beside it.
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto installed = exe.parent_path().parent_path() / "share" / "memfail" / "tokenizers";
        if (std::filesystem::is_directory(installed, ec)) return installed.string();
    }
#ifdef MEMFAIL_DEFAULT_TOKENIZER_DIR
    return MEMFAIL_DEFAULT_TOKENIZER_DIR;  // the source tree's, where scripts/install-deps puts them
#else
    return {};
#endif
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer(std::string_view encoding, const std::string& dir) {
    if (!valid_encoding_name(encoding))
        return make_error(ErrorKind::invalid_input, "'" + std::string(encoding) + "' is not an encoding name");
    const std::string folder = dir.empty() ? default_tokenizer_dir() : dir;
    const std::string path = (std::filesystem::path(folder) / (std::string(encoding) + ".json")).string();
    MF_TRY_ASSIGN(const std::string text, read_whole_file(path));

    nlohmann::json doc;
    std::string_view bpe_text;
    if (!split_rank_string(text, doc, bpe_text)) {
        doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (doc.is_discarded()) return malformed(path, "not JSON");
        if (!doc.is_object()) return malformed(path, "not a JSON object");
        const auto bpe = doc.find("bpe_ranks");
        if (bpe == doc.end() || !bpe->is_string()) return malformed(path, "missing string field bpe_ranks");
        bpe_text = bpe->get_ref<const std::string&>();
    }
    const auto pat = doc.find("pat_str");
    if (pat == doc.end() || !pat->is_string()) return malformed(path, "missing string field pat_str");

    detail::RankTable ranks;
    std::string token_bytes;
    std::vector<TokenSpan> spans;
    MF_TRY(parse_ranks(path, bpe_text, ranks, token_bytes, spans));

    // Special tokens are decodable but never produced by ordinary encoding.
    if (const auto special = doc.find("special_tokens"); special != doc.end()) {
        if (!special->is_object()) return malformed(path, "special_tokens is not an object");
        for (const auto& [name, value] : special->items()) {
            if (!value.is_number_unsigned() || value.get<std::uint64_t>() >= k_no_rank || name.empty())
                return malformed(path, "special token '" + name + "' has no valid id");
            const auto id = value.get<std::uint32_t>();
            if (spans.size() <= id) spans.resize(std::size_t{id} + 1);
            if (spans[id].length != k_no_rank)
                return malformed(path, "special token '" + name + "' reuses id " + std::to_string(id));
            spans[id] = TokenSpan{static_cast<std::uint32_t>(token_bytes.size()), static_cast<std::uint32_t>(name.size())};
            token_bytes += name;
        }
    }

    const std::string pattern = adapt_pattern(pat->get_ref<const std::string&>());
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
    if (!code)
        return malformed(path, "pat_str does not compile (" + pcre2_message(error_code) + " at offset " +
                                   std::to_string(error_offset) + ")");
    // Without JIT (unsupported platform) the interpreter gives the same matches, only slower.
    const bool jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    return std::unique_ptr<Tokenizer>(std::make_unique<BpeTokenizer>(std::string(encoding), std::move(ranks),
                                                                     std::move(token_bytes), std::move(spans), code, jit));
}

Result<std::shared_ptr<const Tokenizer>> shared_tokenizer(std::string_view encoding, const std::string& dir) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const Tokenizer>, std::less<>> loaded;
    const std::string folder = dir.empty() ? default_tokenizer_dir() : dir;
    std::string key = std::string(encoding) + '\n' + folder;
    // Loading under the lock makes concurrent first callers wait for one load instead of racing.
    const std::lock_guard lock(mutex);
    if (const auto it = loaded.find(key); it != loaded.end()) return it->second;
    MF_TRY_ASSIGN(std::unique_ptr<Tokenizer> tokenizer, load_tokenizer(encoding, folder));
    std::shared_ptr<const Tokenizer> shared(std::move(tokenizer));
    loaded.emplace(std::move(key), shared);  // failures are not cached: installing the files later works
    return shared;
}

std::string_view encoding_for_model(std::string_view model) {
    // Provider prefixes ("openai/gpt-4o", OpenRouter style) and fine-tune names
    // ("ft:gpt-4o-mini:org::id") name the base model after them.
    if (const std::size_t slash = model.rfind('/'); slash != std::string_view::npos) model.remove_prefix(slash + 1);
    if (model.substr(0, 3) == "ft:") {
        model.remove_prefix(3);
        model = model.substr(0, model.find(':'));
    }
    std::string name(model);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    const auto starts = [&](std::string_view prefix) { return std::string_view(name).substr(0, prefix.size()) == prefix; };
    // The o200k families first: "gpt-4o" and "gpt-4.1" also start with "gpt-4".
    for (const std::string_view prefix : {"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4"})
        if (starts(prefix)) return "o200k_base";
    for (const std::string_view prefix : {"gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada-002",
                                          "davinci-002", "babbage-002"})
        if (starts(prefix)) return "cl100k_base";
    return "o200k_base";
}

}  // namespace memfail::text

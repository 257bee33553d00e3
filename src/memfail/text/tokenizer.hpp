// SPDX-License-Identifier: MIT
// Exact byte-pair token counts for OpenAI's cl100k_base and o200k_base encodings: the same
// pre-tokenization pattern and merge ranks as the reference, so counts match the API's usage. The
// rank files are data, obtained by scripts/install-deps from the npm package `tiktoken`
// (encoders/<name>.json); see docs/TOKENS.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::text {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    // "cl100k_base" or "o200k_base".
    virtual const std::string& encoding() const = 0;
    // Ordinary encoding: special-token strings such as "<|endoftext|>" are encoded as plain text,
    // as the API counts user content. Thread-safe.
    virtual std::vector<std::uint32_t> encode(std::string_view text) const = 0;
    virtual std::size_t count(std::string_view text) const = 0;
    // Bytes of the tokens (may be invalid UTF-8 for a partial sequence); not_found for an unknown id.
    virtual Result<std::string> decode(const std::vector<std::uint32_t>& tokens) const = 0;
};

// Where rank files are looked for when no folder is given: $MEMFAIL_TOKENIZER_DIR, else the folder
// scripts/install-deps fills (compiled in as MEMFAIL_DEFAULT_TOKENIZER_DIR).
std::string default_tokenizer_dir();

// Loads `<dir>/<encoding>.json` (dir empty: default_tokenizer_dir()). Errors name the file and say
// how to obtain it.
Result<std::unique_ptr<Tokenizer>> load_tokenizer(std::string_view encoding, const std::string& dir = {});

// Process-wide: each (encoding, dir) is loaded once and shared; safe to call from many threads.
Result<std::shared_ptr<const Tokenizer>> shared_tokenizer(std::string_view encoding, const std::string& dir = {});

// The encoding OpenAI uses for a model name: o200k_base for gpt-4o, gpt-4.1, gpt-5, o1/o3/o4 and
// unknown models; cl100k_base for gpt-4, gpt-3.5 and text-embedding-3/ada-002.
std::string_view encoding_for_model(std::string_view model);

}  // namespace memfail::text

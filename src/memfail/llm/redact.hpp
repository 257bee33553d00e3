// SPDX-License-Identifier: MIT
// Removes an API key from text before it can reach an error message, a log or a report.
#pragma once
#include <string>
#include <string_view>

namespace memfail::llm {

// Replaces every occurrence of `key`, and of any piece of it at least 8 characters long (a server
// may echo a truncated or partly masked key), with "[redacted]". An empty key leaves `text` as is;
// a key shorter than 8 characters is only replaced whole.
std::string redact(std::string_view text, std::string_view key);

// A base URL is recorded with every run (runs table, reports) and shown in messages, so it is only
// ever stored or printed in this form:
// - user:password@ becomes "[redacted]@";
// - every query value becomes "[redacted]" (the names stay: "?api-version=[redacted]");
// - a fragment is dropped;
// - a path segment becomes "[redacted]" when it holds the API key (or a piece of it of 8 or more
//   characters), or looks like a credential (looks_like_secret).
std::string redact_url(std::string_view url, std::string_view api_key = {});

// True for a URL path segment that reads as a credential rather than a name: it starts with a key
// prefix (sk-, sk_, pk-, key-, key_, token-, token_) and has 12 or more characters; or it has 20 or
// more characters with a lower-case letter, an upper-case letter and a digit; or it holds an
// unbroken run of 24 or more letters and digits with both letters and digits in it (hex or base64
// keys). Version and model names ("v1", "gpt-4o-mini-2024-07-18", "deployments") are not.
bool looks_like_secret(std::string_view segment);

// `text` with the API key and every secret part of `url` (what redact_url hides: userinfo, query
// values, secret path segments) replaced by "[redacted]": for messages that may echo the URL.
std::string redact_with_url(std::string_view text, std::string_view url, std::string_view api_key);

}  // namespace memfail::llm

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

}  // namespace memfail::llm

// SPDX-License-Identifier: MIT
// Helpers shared by the subcommands.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace memfail::cli {

// Prints a progress line to stderr (one line each, so logs stay readable when not on a terminal).
void progress_line(const std::string& line);

// Splits "1,3,5" into integers; throws Fatal (invalid_input) naming `option` on a bad item.
std::vector<int> parse_int_list(const std::string& text, const std::string& option);
// Splits "a,b" and trims; empty items dropped.
std::vector<std::string> parse_name_list(const std::vector<std::string>& items);

}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// One table type, printed as aligned text, Markdown, CSV or JSON (llama-bench style printers).
#pragma once
#include <string>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::report {

enum class Align { left, right };

struct Column {
    std::string name;
    Align align = Align::right;
};

struct Table {
    std::string title;
    std::vector<Column> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> notes;  // printed under the table in text and Markdown
    // Printed above the title in text and Markdown, marked as warnings: what makes every figure of
    // the table mean something else than it seems (a system that stored nothing).
    std::vector<std::string> banners;
};

enum class Format { text, markdown, csv, json };
Result<Format> parse_format(const std::string& name);

// The rate columns of a success table: `rate`, `ci_low`, `ci_high` (fractions) for machines
// (CSV, JSON), `rate %` and `95% CI` for people.
void add_rate_columns(Table& table, bool machine);

std::string render(const Table& table, Format format);
std::string render_text(const Table& table);
std::string render_markdown(const Table& table);
std::string render_csv(const Table& table);
std::string render_json(const Table& table);  // [{"column": "value", ...}, ...]

}  // namespace memfail::report

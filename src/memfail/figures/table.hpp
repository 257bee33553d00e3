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

// Who a table is for. `human`: rates in percent with one decimal, the interval as "[96.3, 100.0]",
// headers as printed ("rate %", "95% CI", "tok/probe"). `machine` (CSV): snake_case headers without
// symbols, rates and interval bounds as fractions between 0 and 1 (`rate`, `ci_low`, `ci_high`,
// as in the results JSON), empty cells where there is no number, and in a report over several
// results files a `file` column beside the run's own id.
enum class TableStyle { human, machine };

// Formats 0.4213 as "42.1".
std::string percent(double fraction);
// Formats a fraction for machine-read tables: 0.42134567 as "0.421346", 1 as "1".
std::string fraction(double value);

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

// SPDX-License-Identifier: MIT
// A small RFC 4180 CSV reader that remembers the physical line each record starts on.
//
// Accepts quoted fields with doubled quotes and line breaks inside, CRLF or LF line ends and a
// leading UTF-8 byte-order mark; blank lines between records are skipped. Every error is
// invalid_input with `where` set to "file:line" or "file:line: column 'x'", so a user can open the
// file at the right place.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::suites::memfail_suite {

struct CsvRecord {
    std::size_t line = 0;  // 1-based physical line the record starts on
    std::vector<std::string> fields;
};

struct CsvTable {
    std::string source;  // file name used in messages
    std::size_t header_line = 0;
    std::vector<std::string> header;
    std::vector<CsvRecord> records;  // data records, header excluded

    // Index of the header column called `name`, if any.
    std::optional<std::size_t> column_index(std::string_view name) const;
    // "source:line: column 'name'": the `where` of an error about one cell.
    std::string where(std::size_t line, std::string_view column) const;
};

// Parses `content` (the text of a CSV file whose first record is the header). Line breaks inside
// quoted fields are returned as "\n" whatever the file used. Every record must have as many fields
// as the header.
Result<CsvTable> parse_csv(std::string_view content, const std::string& source);

// Reads and parses the file at `path`; messages name `path` as given.
Result<CsvTable> read_csv_file(const std::string& path);

// Checks the header against the columns a dataset defines: every `required` column must be there,
// no column may appear twice, and a column outside `required` + `optional` is an error (it usually
// means the file belongs to another dataset or was re-exported with an index column).
Result<void> check_columns(const CsvTable& table, const std::vector<std::string>& required,
                           const std::vector<std::string>& optional = {});

}  // namespace memfail::suites::memfail_suite

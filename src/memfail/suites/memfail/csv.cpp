// SPDX-License-Identifier: MIT
// RFC 4180 CSV reading with physical line numbers.
#include <memfail/suites/memfail/csv.hpp>

#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites::memfail_suite {

std::optional<std::size_t> CsvTable::column_index(std::string_view name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
    return std::nullopt;
}

std::string CsvTable::where(std::size_t line, std::string_view column) const {
    return source + ":" + std::to_string(line) + ": column '" + std::string(column) + "'";
}

namespace {

class Parser {
public:
    Parser(std::string_view content, const std::string& source) : m_in(content), m_source(source) {
        // A byte-order mark is what spreadsheet programs put before the first header name.
        if (text::starts_with(m_in, "\xEF\xBB\xBF")) m_pos = 3;
    }

    Result<std::vector<CsvRecord>> records() {
        std::vector<CsvRecord> out;
        while (m_pos < m_in.size()) {
            if (at_line_break()) {  // a blank line separates nothing; skip it
                consume_line_break();
                continue;
            }
            CsvRecord record;
            record.line = m_line;
            while (true) {
                std::string field;
                if (m_in[m_pos] == '"') {
                    MF_TRY(quoted_field(field, record.fields.size(), out));
                } else {
                    // Unquoted: a stray quote inside is kept literally, as most writers expect.
                    while (m_pos < m_in.size() && m_in[m_pos] != ',' && !at_line_break())
                        field.push_back(m_in[m_pos++]);
                }
                record.fields.push_back(std::move(field));
                if (m_pos < m_in.size() && m_in[m_pos] == ',') {
                    ++m_pos;  // at the end of the input, the next pass reads the final empty field
                    continue;
                }
                break;
            }
            if (m_pos < m_in.size()) consume_line_break();
            out.push_back(std::move(record));
        }
        return out;
    }

private:
    bool at_line_break() const { return m_in[m_pos] == '\n' || m_in[m_pos] == '\r'; }

    void consume_line_break() {
        if (m_in[m_pos] == '\r' && m_pos + 1 < m_in.size() && m_in[m_pos + 1] == '\n') ++m_pos;
        ++m_pos;
        ++m_line;
    }

    std::string field_name(std::size_t index, const std::vector<CsvRecord>& so_far) const {
        // Before the header is read there are no names, only positions.
        if (!so_far.empty() && index < so_far.front().fields.size())
            return "column '" + std::string(text::trim(so_far.front().fields[index])) + "'";
        return "field " + std::to_string(index + 1);
    }

    Result<void> quoted_field(std::string& field, std::size_t index, const std::vector<CsvRecord>& so_far) {
        const std::size_t open_line = m_line;
        ++m_pos;  // the opening quote
        while (true) {
            if (m_pos >= m_in.size())
                return make_error(
                    ErrorKind::invalid_input,
                    "quoted field is never closed: the quote opened here runs to the end of "
                    "the file",
                    m_source + ":" + std::to_string(open_line) + ": " + field_name(index, so_far));
            const char c = m_in[m_pos];
            if (c == '"') {
                if (m_pos + 1 < m_in.size() && m_in[m_pos + 1] == '"') {
                    field.push_back('"');
                    m_pos += 2;
                    continue;
                }
                ++m_pos;
                break;
            }
            if (c == '\n' || c == '\r') {
                consume_line_break();
                field.push_back('\n');
                continue;
            }
            field.push_back(c);
            ++m_pos;
        }
        if (m_pos < m_in.size() && m_in[m_pos] != ',' && !at_line_break())
            return make_error(ErrorKind::invalid_input,
                              std::string("unexpected character '") + m_in[m_pos] +
                                  "' after a closing quote; a quote inside a quoted field must be doubled",
                              m_source + ":" + std::to_string(m_line) + ": " + field_name(index, so_far));
        return {};
    }

    std::string_view m_in;
    const std::string& m_source;
    std::size_t m_pos = 0;
    std::size_t m_line = 1;
};

}  // namespace

Result<CsvTable> parse_csv(std::string_view content, const std::string& source) {
    Parser parser(content, source);
    MF_TRY_ASSIGN(auto records, parser.records());
    if (records.empty())
        return make_error(ErrorKind::invalid_input, "the file is empty; expected a header line", source);
    CsvTable table;
    table.source = source;
    table.header_line = records.front().line;
    for (const auto& name : records.front().fields) table.header.emplace_back(text::trim(name));
    for (std::size_t i = 1; i < records.size(); ++i) {
        if (records[i].fields.size() != table.header.size())
            return make_error(ErrorKind::invalid_input,
                              "record has " + std::to_string(records[i].fields.size()) +
                                  " fields but the header has " + std::to_string(table.header.size()) +
                                  " (an unquoted comma, or a quote left open?)",
                              source + ":" + std::to_string(records[i].line));
        table.records.push_back(std::move(records[i]));
    }
    return table;
}

Result<CsvTable> read_csv_file(const std::string& path) {
    MF_TRY_ASSIGN(auto content, data::read_file(path));
    return parse_csv(content, path);
}

Result<void> check_columns(const CsvTable& table, const std::vector<std::string>& required,
                           const std::vector<std::string>& optional) {
    std::set<std::string> seen;
    for (const auto& name : table.header)
        if (!seen.insert(name).second)
            return make_error(ErrorKind::invalid_input, "column appears twice in the header",
                              table.where(table.header_line, name));
    for (const auto& name : required) {
        if (seen.count(name)) continue;
        // A misspelt header ("behaviour" for "behavior") is the common cause; point at it.
        std::string near;
        for (const auto& have : table.header)
            if (near.empty() && text::edit_distance(have, name) <= 2) near = have;
        return make_error(ErrorKind::invalid_input,
                          "required column is missing from the header" +
                              (near.empty() ? std::string{} : " (the header has '" + near + "'; misspelt?)"),
                          table.where(table.header_line, name));
    }
    std::vector<std::string> known = required;
    known.insert(known.end(), optional.begin(), optional.end());
    for (const auto& name : table.header) {
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        return make_error(ErrorKind::invalid_input,
                          "unknown column for this dataset; expected only: " + text::join(known, ", "),
                          table.where(table.header_line, name));
    }
    return {};
}

}  // namespace memfail::suites::memfail_suite

// SPDX-License-Identifier: MIT
// Table printers.
#include <memfail/figures/table.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace memfail::report {

std::string percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", 100.0 * fraction);
    return buffer;
}

std::string fraction(double value) {
    // Rounding noise of an interval bound at 0 or 1 ("8.67e-19") is printed as the bound.
    if (std::fabs(value) < 5e-7) value = 0;
    if (std::fabs(value - 1) < 5e-7) value = 1;
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}


Result<Format> parse_format(const std::string& name) {
    if (name == "text") return Format::text;
    if (name == "markdown" || name == "md") return Format::markdown;
    if (name == "csv") return Format::csv;
    if (name == "json") return Format::json;
    return make_error(ErrorKind::invalid_input,
                      "unknown format '" + name + "'; expected text, markdown, csv or json");
}

void add_rate_columns(Table& table, bool machine) {
    if (machine)
        table.columns.insert(table.columns.end(), {{"rate", Align::right}, {"ci_low", Align::right}, {"ci_high", Align::right}});
    else
        table.columns.insert(table.columns.end(), {{"rate %", Align::right}, {"95% CI", Align::left}});
}

std::string render(const Table& table, Format format) {
    switch (format) {
        case Format::text: return render_text(table);
        case Format::markdown: return render_markdown(table);
        case Format::csv: return render_csv(table);
        case Format::json: return render_json(table);
    }
    return render_text(table);
}

namespace {
// Display width counting UTF-8 code points, so "±" or "—" do not break alignment.
std::size_t width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}
std::string pad(const std::string& s, std::size_t w, Align align) {
    const std::size_t fill = w > width(s) ? w - width(s) : 0;
    return align == Align::left ? s + std::string(fill, ' ') : std::string(fill, ' ') + s;
}
}  // namespace

std::string render_text(const Table& t) {
    std::vector<std::size_t> widths(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        widths[c] = width(t.columns[c].name);
        for (const auto& row : t.rows)
            if (c < row.size()) widths[c] = std::max(widths[c], width(row[c]));
    }
    std::string out;
    for (const auto& b : t.banners) out += "!!! " + b + "\n";
    if (!t.title.empty()) out += t.title + "\n";
    auto line = [&](const std::vector<std::string>& cells) {
        std::string l;
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
            if (c) l += "  ";
            l += pad(c < cells.size() ? cells[c] : "", widths[c], t.columns[c].align);
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out += l + "\n";
    };
    std::vector<std::string> header;
    for (const auto& c : t.columns) header.push_back(c.name);
    line(header);
    std::string rule;
    for (std::size_t c = 0; c < widths.size(); ++c) rule += (c ? "  " : "") + std::string(widths[c], '-');
    out += rule + "\n";
    for (const auto& row : t.rows) line(row);
    for (const auto& n : t.notes) out += n + "\n";
    return out;
}

std::string render_markdown(const Table& t) {
    auto esc = [](const std::string& s) {
        std::string o;
        for (char ch : s) {
            if (ch == '|') o += "\\|";
            else o += ch;
        }
        return o;
    };
    std::string out;
    for (const auto& b : t.banners) out += "> **Warning:** " + b + "\n\n";
    if (!t.title.empty()) out += "### " + t.title + "\n\n";
    out += "|";
    for (const auto& c : t.columns) out += " " + esc(c.name) + " |";
    out += "\n|";
    for (const auto& c : t.columns) out += c.align == Align::right ? " ---: |" : " :--- |";
    out += "\n";
    for (const auto& row : t.rows) {
        out += "|";
        for (std::size_t c = 0; c < t.columns.size(); ++c) out += " " + esc(c < row.size() ? row[c] : "") + " |";
        out += "\n";
    }
    if (!t.notes.empty()) out += "\n";
    for (const auto& n : t.notes) out += n + "\n";
    return out;
}

std::string render_csv(const Table& t) {
    auto cell = [](const std::string& s) {
        if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
        std::string o = "\"";
        for (char ch : s) {
            if (ch == '"') o += "\"\"";
            else o += ch;
        }
        return o + "\"";
    };
    std::string out;
    for (std::size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + cell(t.columns[c].name);
    out += "\n";
    for (const auto& row : t.rows) {
        for (std::size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + cell(c < row.size() ? row[c] : "");
        out += "\n";
    }
    return out;
}

std::string render_json(const Table& t) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : t.rows) {
        nlohmann::json o = nlohmann::json::object();
        for (std::size_t c = 0; c < t.columns.size(); ++c) o[t.columns[c].name] = c < row.size() ? row[c] : "";
        rows.push_back(std::move(o));
    }
    return rows.dump(2) + "\n";
}

}  // namespace memfail::report

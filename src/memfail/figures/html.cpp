// SPDX-License-Identifier: MIT
// HTML pieces (html.hpp).
#include <memfail/figures/html.hpp>
#include <memfail/figures/svg.hpp>

#include <cstdio>

namespace memfail::report::html {

std::string escape(std::string_view text) { return svg::escape(text); }

std::string fixed(double v, int decimals) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

std::string table(const Table& t, const std::string& cls) {
    std::string out = "<div class=\"table-wrap\"><table" + (cls.empty() ? std::string() : " class=\"" + escape(cls) + "\"") + ">";
    if (!t.title.empty()) out += "<caption>" + escape(t.title) + "</caption>";
    out += "<thead><tr>";
    for (const auto& c : t.columns)
        out += std::string("<th") + (c.align == Align::right ? " class=\"num\"" : "") + ">" + escape(c.name) + "</th>";
    out += "</tr></thead><tbody>";
    for (const auto& row : t.rows) {
        out += "<tr>";
        for (std::size_t i = 0; i < row.size(); ++i) {
            const bool right = i < t.columns.size() && t.columns[i].align == Align::right;
            out += std::string("<td") + (right ? " class=\"num\"" : "") + ">" + escape(row[i]) + "</td>";
        }
        out += "</tr>";
    }
    out += "</tbody></table></div>";
    for (const auto& n : t.notes) out += "<p class=\"note\">" + escape(n) + "</p>";
    return out;
}

std::string folded_table(const Table& t, const std::string& cls) {
    if (t.rows.size() <= 24) return table(t, cls);
    return "<details class=\"fold\"><summary>" + escape(t.title.empty() ? "The table" : t.title) + " (" +
           std::to_string(t.rows.size()) + " rows)</summary>" + table(t, cls) + "</details>";
}

std::string figure(const std::string& svg_text, const std::string& caption, const std::string& legend) {
    return "<figure><div class=\"chart-wrap\">" + svg_text + "</div>" + legend + "<figcaption>" + escape(caption) +
           "</figcaption></figure>";
}

}  // namespace memfail::report::html

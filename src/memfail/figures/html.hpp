// SPDX-License-Identifier: MIT
// The pieces of the HTML report every section is made of: escaped text, tables (folded when long)
// and charts with their legend and caption. Every piece escapes what it is given.
#pragma once
#include <string>
#include <string_view>

#include <memfail/figures/table.hpp>

namespace memfail::report::html {

// `text` safe between tags and inside a quoted attribute.
std::string escape(std::string_view text);
// `v` with `decimals` digits after the point: fixed(0.5, 3) = "0.500".
std::string fixed(double v, int decimals);
// A table as HTML, its title the caption and its notes under it; `cls` its class.
std::string table(const Table& t, const std::string& cls = {});
// The same, folded (a <details>) when longer than 24 rows, so the charts around it stay in view.
std::string folded_table(const Table& t, const std::string& cls = {});
// A chart, its legend as HTML (svg::legend_html: it wraps at the width of the screen while a wide
// chart scrolls sideways) and its caption.
std::string figure(const std::string& svg_text, const std::string& caption, const std::string& legend = {});

}  // namespace memfail::report::html

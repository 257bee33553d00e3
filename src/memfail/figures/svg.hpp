// SPDX-License-Identifier: MIT
// A small SVG writer for the report's charts: grouped bars with error bars, stacked bars, lines.
//
// Output is meant to be inlined in an HTML5 page (no xmlns, no external references, no ids) and is
// deterministic: the same chart gives the same bytes, so tests can check its structure. Every text
// and attribute is escaped (dataset and system names are data). Every bar, segment and point
// carries a <title> tooltip with the caller's text, so the numbers can match the tables exactly.
// Elements tests can count carry a class: "bar", "error-bar", "segment", "point", "point-label",
// "legend-entry".
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/figures/stats.hpp>

namespace memfail::report::svg {

// Escapes & < > " ' so `text` is inert in XML/HTML text and in quoted attribute values.
std::string escape(std::string_view text);

// A fixed colour per failure stage, the same in every chart ("#rrggbb"). Stages are the grade
// names plus "retrieved" (memory side passed, answer not graded), "needs_answer_stage" (abstain
// probes whose answer was not graded) and "error"; anything else is grey.
std::string stage_colour(std::string_view stage);
// The legend wording for a stage ("not stored", "abstain (answer not graded)", ...).
std::string stage_label(std::string_view stage);
// Stages in the order bars stack them: failures first, in pipeline order, then successes.
const std::vector<std::string>& stage_order();

// A qualitative palette (colour-blind friendly), cycled when `index` passes its end.
std::string palette_colour(std::size_t index);
// `colour` ("#rrggbb") moved towards white by `amount` in [0, 1] (0: unchanged, 1: white).
std::string tint(const std::string& colour, double amount);

struct LegendEntry {
    std::string label;
    std::string colour;
    std::string key;  // written as data-key (e.g. the stage name); may be empty
};

// Where a chart's legend goes: drawn inside the SVG below the plot (wrapping at the chart's own
// width), or left out because the page shows it as HTML (legend_html), which wraps at the width of
// the screen however wide the chart is.
enum class Legend { inside, none };

// The legend as an HTML list that wraps at any width: <ul class="legend"> with one
// <li class="legend-entry" data-key=...> per entry, its colour in a <span class="swatch">.
std::string legend_html(const std::vector<LegendEntry>& entries);

// --- Grouped vertical bars: one group per category (dataset), one bar per series in each. ---

struct BarValue {
    double value = 0;                   // a fraction in [0, 1], drawn as 0-100 %
    std::optional<Interval> interval;   // drawn as an error bar
    std::string tooltip;
};

struct BarGroup {
    std::string label;
    std::vector<std::optional<BarValue>> bars;  // one per series, in series order; nullopt: no data
};

struct GroupedBarChart {
    std::string title;    // the accessible name (<title> of the chart)
    std::string y_label;  // e.g. "success rate (%)"
    std::vector<LegendEntry> series;
    std::vector<BarGroup> groups;
    Legend legend = Legend::inside;
};

std::string render(const GroupedBarChart& chart);

// --- Stacked horizontal bars: each bar splits a count of probes into categories (stages). ---

struct StackedBar {
    std::string label;
    std::vector<std::int64_t> counts;   // one per category, in category order
    std::vector<std::string> tooltips;  // one per category (segments of count 0 are not drawn)
    std::string empty_label = "no probes";  // written in place of a bar whose counts are all 0
};

struct StackedBarGroup {
    std::string label;  // a heading row above the group's bars (omitted when empty)
    std::vector<StackedBar> bars;
};

struct StackedBarChart {
    std::string title;
    std::string x_label;  // e.g. "share of graded probes (%)"
    std::vector<LegendEntry> categories;
    std::vector<StackedBarGroup> groups;
    Legend legend = Legend::inside;
};

std::string render(const StackedBarChart& chart);

// --- Lines through points: success (0-100 %) against a numeric or categorical x. ---

struct LinePoint {
    double x = 0;  // the value, or an index into LineChart::x_categories
    double y = 0;  // a fraction in [0, 1]
    std::optional<Interval> interval;
    std::string tooltip;
    // Drawn beside the point (<text class="point-label">, cut to 24 characters); empty: none.
    std::string label;
};

struct LineSeries {
    std::string name;
    std::string colour;
    std::vector<LinePoint> points;  // drawn in x order
};

struct LineChart {
    std::string title;
    std::string x_label;  // with its unit, e.g. "mean tokens per stored memory"
    std::string y_label;
    std::vector<std::string> x_categories;  // when set, the x axis is categorical
    std::vector<LineSeries> series;
    Legend legend = Legend::inside;
};

// The legend entries of a line chart: one per series, its name and colour.
std::vector<LegendEntry> legend_entries(const LineChart& chart);

std::string render(const LineChart& chart);

}  // namespace memfail::report::svg

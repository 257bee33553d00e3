// SPDX-License-Identifier: MIT
// The SVG writer: element counts, escaping, stage colours and layout that stays inside the chart.
#include <memfail/figures/svg.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace memfail::report::svg {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

struct Box {
    double width = 0, height = 0;
};

Box view_box(const std::string& svg_text) {
    std::smatch m;
    const std::regex re("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\"");
    EXPECT_TRUE(std::regex_search(svg_text, m, re)) << svg_text.substr(0, 200);
    if (m.empty()) return {};
    return {std::stod(m[1]), std::stod(m[2])};
}

struct Rect {
    double x, y, w, h;
    std::string fill;
};

std::vector<Rect> rects(const std::string& svg_text) {
    std::vector<Rect> out;
    const std::regex re("<rect x=\"([-0-9.]+)\" y=\"([-0-9.]+)\" width=\"([-0-9.]+)\" height=\"([-0-9.]+)\" fill=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(svg_text.begin(), svg_text.end(), re); it != std::sregex_iterator(); ++it)
        out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4]), (*it)[5]});
    return out;
}

// Every rectangle has a size and lies inside the view box; every text anchor does too.
void expect_inside(const std::string& svg_text) {
    const Box box = view_box(svg_text);
    for (const auto& r : rects(svg_text)) {
        EXPECT_GT(r.w, 0);
        EXPECT_GT(r.h, 0);
        EXPECT_GE(r.x, 0);
        EXPECT_GE(r.y, 0);
        EXPECT_LE(r.x + r.w, box.width + 0.1);
        EXPECT_LE(r.y + r.h, box.height + 0.1);
    }
    const std::regex text_re("<text x=\"([-0-9.]+)\" y=\"([-0-9.]+)\"");
    for (auto it = std::sregex_iterator(svg_text.begin(), svg_text.end(), text_re); it != std::sregex_iterator(); ++it) {
        EXPECT_GE(std::stod((*it)[1]), 0);
        EXPECT_LE(std::stod((*it)[1]), box.width);
        EXPECT_GE(std::stod((*it)[2]), 0);
        EXPECT_LE(std::stod((*it)[2]), box.height);
    }
    EXPECT_EQ(svg_text.find("nan"), std::string::npos);
    EXPECT_EQ(svg_text.find("inf"), std::string::npos);
}

GroupedBarChart bars(std::size_t groups, std::size_t series, const std::string& group_label = "dataset") {
    GroupedBarChart c;
    c.title = "success";
    c.y_label = "success rate (%)";
    for (std::size_t s = 0; s < series; ++s)
        c.series.push_back({"system " + std::to_string(s), palette_colour(s), {}});
    for (std::size_t g = 0; g < groups; ++g) {
        BarGroup group;
        group.label = group_label + "_" + std::to_string(g);
        for (std::size_t s = 0; s < series; ++s) {
            const double v = static_cast<double>((g * 7 + s * 3) % 11) / 10.0;
            group.bars.push_back(BarValue{v, Interval{std::max(0.0, v - 0.1), std::min(1.0, v + 0.1)},
                                          "g" + std::to_string(g) + " s" + std::to_string(s)});
        }
        c.groups.push_back(std::move(group));
    }
    return c;
}

TEST(Svg, EscapesEveryMarkupCharacter) {
    EXPECT_EQ(escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    EXPECT_EQ(escape("plain"), "plain");
}

TEST(Svg, GroupedBarsCountBarsErrorBarsAndLegend) {
    GroupedBarChart c = bars(3, 4);
    c.groups[1].bars[2] = std::nullopt;  // no data: no bar
    const std::string out = render(c);
    EXPECT_EQ(count(out, "<g class=\"bar\">"), 11u);
    EXPECT_EQ(count(out, "<g class=\"error-bar\">"), 11u);
    EXPECT_EQ(count(out, "<g class=\"legend-entry\""), 4u);
    EXPECT_EQ(count(out, "<g class=\"category-label\">"), 3u);
    EXPECT_NE(out.find("<title>g2 s3</title>"), std::string::npos);
    EXPECT_EQ(out.find("g1 s2"), std::string::npos);
    EXPECT_EQ(out.rfind("<svg", 0), 0u);
    EXPECT_EQ(out.find("http"), std::string::npos);  // inline SVG needs no namespace URL
    EXPECT_EQ(out.find(" id="), std::string::npos);  // no ids that could clash between charts
}

TEST(Svg, ShortenedLegendLabelsKeepBothEndsSoSeriesStayDistinct) {
    // Four series of one long system name that differ only in their k, at the end of the label.
    GroupedBarChart c = bars(1, 4);
    const std::string system = "run 5 \u00b7 oracle:stage=retrieval,over=verbatim:chunk=sentence,retriever=bm25";
    for (std::size_t s = 0; s < 4; ++s) c.series[s].label = system + " \u00b7 k=" + std::to_string(1 + 3 * s);
    const std::string out = render(c);
    std::regex legend_text("<g class=\"legend-entry\"[^>]*>.*?<text[^>]*>([^<]*)</text>");
    std::set<std::string> shown;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), legend_text); it != std::sregex_iterator(); ++it)
        shown.insert((*it)[1]);
    ASSERT_EQ(shown.size(), 4u) << out;
    for (const auto& label : shown) {
        EXPECT_NE(label.find("\u2026"), std::string::npos) << label;  // shortened...
        EXPECT_EQ(label.rfind("run 5", 0), 0u) << label;                 // ...keeping the run
        EXPECT_NE(label.find(" k="), std::string::npos) << label;       // ...and the k
    }
}

TEST(Svg, BarHeightFollowsTheValue) {
    GroupedBarChart c = bars(1, 2);
    c.groups[0].bars[0]->value = 0.25;
    c.groups[0].bars[1]->value = 0.75;
    const auto rs = rects(render(c));
    std::vector<double> heights;
    for (const auto& r : rs)
        if (r.fill == palette_colour(0) || r.fill == palette_colour(1)) heights.push_back(r.h);
    ASSERT_GE(heights.size(), 2u);
    EXPECT_NEAR(heights[1] / heights[0], 3.0, 0.05);
}

TEST(Svg, OutputIsDeterministic) {
    EXPECT_EQ(render(bars(4, 6)), render(bars(4, 6)));
}

TEST(Svg, TextIsEscapedNotInterpreted) {
    GroupedBarChart c = bars(2, 1, "<script>alert(\"x&'\")</script>");
    c.series[0].label = "sys<b>\"&'";
    c.groups[0].bars[0]->tooltip = "</title><script>";
    const std::string out = render(c);
    EXPECT_EQ(out.find("<script"), std::string::npos);
    EXPECT_EQ(out.find("<b>"), std::string::npos);
    EXPECT_NE(out.find("&lt;script&gt;"), std::string::npos);
    EXPECT_NE(out.find("sys&lt;b&gt;&quot;&amp;&#39;"), std::string::npos);
    EXPECT_EQ(count(out, "</title>"), count(out, "<title>"));
}

TEST(Svg, OneBarAndManyBarsBothFitWithoutOverlap) {
    for (auto [groups, series] : {std::pair<std::size_t, std::size_t>{1, 1}, {5, 8}, {5, 48}, {1, 48}, {8, 1}}) {
        SCOPED_TRACE(std::to_string(groups) + " groups x " + std::to_string(series) + " series");
        GroupedBarChart c = bars(groups, series, "a_rather_long_dataset_name_for_testing");
        const std::string out = render(c);
        expect_inside(out);
        // Bars of one group sit side by side, left to right, never overlapping.
        const std::regex re("<g class=\"bar\"><title>g([0-9]+) s([0-9]+)</title><rect x=\"([-0-9.]+)\" y=\"[-0-9.]+\" width=\"([-0-9.]+)\"");
        std::map<std::size_t, std::vector<std::pair<double, double>>> by_group;
        for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it)
            by_group[std::stoul((*it)[1])].push_back({std::stod((*it)[3]), std::stod((*it)[4])});
        std::size_t total = 0;
        for (const auto& [g, xs] : by_group) {
            total += xs.size();
            for (std::size_t i = 1; i < xs.size(); ++i) EXPECT_LE(xs[i - 1].first + xs[i - 1].second, xs[i].first + 1e-6);
            for (const auto& [x, w] : xs) {
                EXPECT_GE(w, 4.0);
                EXPECT_LE(w, 28.0);
            }
        }
        EXPECT_EQ(total, groups * series);
        EXPECT_EQ(count(out, "<g class=\"legend-entry\""), series);
    }
}

TEST(Svg, LongLabelsAreWrappedOrSlantedWithTheFullTextKept) {
    // Separators allow wrapping onto short lines under each group.
    std::string out = render(bars(6, 6, "conditional_facts_with_a_very_long_name"));
    EXPECT_EQ(out.find("rotate(-40"), std::string::npos);
    const std::regex wrapped("<g class=\"category-label\"><title>[^<]*</title><text [^>]*>[^<]*</text><text ");
    EXPECT_TRUE(std::regex_search(out, wrapped));
    expect_inside(out);
    // One long word cannot wrap: it is slanted, and its full text stays in the tooltip.
    out = render(bars(6, 6, "conditionalfactswithaverylongnameindeedandmore"));
    EXPECT_NE(out.find("rotate(-40"), std::string::npos);
    EXPECT_NE(out.find("<title>conditionalfactswithaverylongnameindeedandmore_0</title>"), std::string::npos);
    expect_inside(out);
}

StackedBarChart stacked() {
    StackedBarChart c;
    c.title = "stages";
    c.x_label = "share of probes (%)";
    for (const auto& s : stage_order()) c.categories.push_back({stage_label(s), stage_colour(s), s});
    for (int g = 0; g < 2; ++g) {
        StackedBarGroup group;
        group.label = "dataset " + std::to_string(g);
        for (int b = 0; b < 3; ++b) {
            StackedBar bar;
            bar.label = "run " + std::to_string(b);
            for (std::size_t s = 0; s < stage_order().size(); ++s) {
                bar.counts.push_back(static_cast<std::int64_t>((s + static_cast<std::size_t>(b)) % 3));
                bar.tooltips.push_back(stage_order()[s] + " " + std::to_string(bar.counts.back()));
            }
            group.bars.push_back(std::move(bar));
        }
        c.groups.push_back(std::move(group));
    }
    return c;
}

TEST(Svg, StackedSegmentsUseOneColourPerStage) {
    const StackedBarChart c = stacked();
    const std::string out = render(c);
    std::size_t non_zero = 0;
    for (const auto& g : c.groups)
        for (const auto& b : g.bars)
            for (auto n : b.counts) non_zero += n > 0;
    EXPECT_EQ(count(out, "<g class=\"segment\""), non_zero);
    EXPECT_EQ(count(out, "<g class=\"legend-entry\""), stage_order().size());
    const std::regex re("<g class=\"(segment|legend-entry)\" data-key=\"([a-z_]+)\"><title>[^<]*</title><rect [^>]*fill=\"([^\"]+)\"");
    std::size_t checked = 0;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it, ++checked)
        EXPECT_EQ((*it)[3].str(), stage_colour((*it)[2].str())) << (*it)[2];
    EXPECT_EQ(checked, non_zero + stage_order().size());
    expect_inside(out);
}

TEST(Svg, StackedSegmentWidthsAreShares) {
    StackedBarChart c;
    c.categories = {{"a", "#111111", "a"}, {"b", "#eeeeee", "b"}};
    c.groups = {{"", {StackedBar{"bar", {1, 3}, {"a 1", "b 3"}}}}};
    const auto rs = rects(render(c));
    double a = 0, b = 0;
    for (const auto& r : rs) {
        if (r.fill == "#111111" && r.h == 16) a = r.w;
        if (r.fill == "#eeeeee" && r.h == 16) b = r.w;
    }
    ASSERT_GT(a, 0);
    EXPECT_NEAR(b / a, 3.0, 0.01);
}

TEST(Svg, StageColoursAreDistinct) {
    std::map<std::string, std::string> seen;
    for (const auto& s : stage_order()) {
        const std::string colour = stage_colour(s);
        EXPECT_FALSE(seen.count(colour)) << s << " shares " << colour << " with " << seen[colour];
        seen[colour] = s;
        EXPECT_NE(stage_label(s), "");
    }
    EXPECT_EQ(stage_label("needs_answer_stage"), "abstain (answer not graded)");
}

TEST(Svg, LineChartDrawsEveryPointOnNumericAndCategoricalAxes) {
    LineChart c;
    c.title = "tokens";
    c.x_label = "mean tokens per stored memory";
    c.y_label = "success (%)";
    c.series = {{"d1", palette_colour(0), {{30, 0.5, Interval{0.4, 0.6}, "d1 a", "run 1"}, {10, 0.2, std::nullopt, "d1 b", "run 1"}}},
                {"d2", palette_colour(1), {{55.5, 0.9, std::nullopt, "d2 a", "a-rather-long-run-name-that-is-cut"}}}};
    std::string out = render(c);
    EXPECT_EQ(count(out, "<g class=\"point\">"), 3u);
    // Every point is labelled and a long label is cut; labels stay inside the chart.
    EXPECT_EQ(count(out, "class=\"point-label\""), 3u);
    EXPECT_EQ(count(out, ">run 1</text>"), 2u);
    EXPECT_EQ(out.find("a-rather-long-run-name-that-is-cut"), std::string::npos);
    std::smatch view;
    ASSERT_TRUE(std::regex_search(out, view, std::regex("viewBox=\"0 0 ([0-9.]+) ")));
    const double chart_width = std::stod(view[1].str());
    const std::regex label_x("<text x=\"([0-9.-]+)\" y=\"[0-9.-]+\" font-size=\"11\" class=\"point-label\"[^>]*>([^<]*)<");
    std::size_t labels = 0;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), label_x); it != std::sregex_iterator(); ++it, ++labels) {
        const double x = std::stod((*it)[1].str());
        EXPECT_GE(x, 0.0);
        EXPECT_LE(x + 0.6 * 11 * static_cast<double>((*it)[2].str().size()), chart_width + 1);
    }
    EXPECT_EQ(labels, 3u);
    EXPECT_EQ(count(out, "<g class=\"legend-entry\""), 2u);
    EXPECT_EQ(count(out, "<g class=\"error-bar\">"), 1u);
    EXPECT_EQ(count(out, "<polyline"), 1u);  // a single point needs no line
    EXPECT_NE(out.find("mean tokens per stored memory"), std::string::npos);
    expect_inside(out);
    // Points are joined left to right: "d1 b" (x=10) comes before "d1 a" (x=30).
    EXPECT_LT(out.find("d1 b"), out.find("d1 a"));

    c.x_categories = {"model-small", "model-large"};
    c.series = {{"d1", palette_colour(0), {{0, 0.5, std::nullopt, "small", {}}, {1, 0.7, std::nullopt, "large", {}}}}};
    out = render(c);
    EXPECT_EQ(count(out, "<g class=\"point\">"), 2u);
    EXPECT_EQ(count(out, "point-label"), 0u);
    EXPECT_EQ(count(out, "<g class=\"category-label\">"), 2u);
    expect_inside(out);
}

TEST(Svg, OnePointOnANumericAxisStillHasARange) {
    LineChart c;
    c.series = {{"only", palette_colour(0), {{12, 0.3, std::nullopt, "one", {}}}}};
    expect_inside(render(c));
}

TEST(Svg, LegendsCanBeLeftToTheHtmlPage) {
    LineChart c;
    c.series = {{"run 1 \u00b7 verbatim", palette_colour(0), {{12, 0.3, std::nullopt, "one", {}}}},
                {"run 2 \u00b7 <oracle>", palette_colour(1), {{20, 0.6, std::nullopt, "two", {}}}}};
    const std::string inside = render(c);
    c.legend = Legend::none;
    const std::string outside = render(c);
    EXPECT_EQ(count(inside, "<g class=\"legend-entry\""), 2u);
    EXPECT_EQ(count(outside, "legend-entry"), 0u);
    // Without its legend the chart is shorter, and otherwise the same.
    EXPECT_LT(outside.size(), inside.size());
    const std::string html = legend_html(legend_entries(c));
    EXPECT_EQ(html.rfind("<ul class=\"legend\">", 0), 0u);
    EXPECT_EQ(count(html, "<li class=\"legend-entry\"><span class=\"swatch\" style=\"background:" + palette_colour(0) + "\">"), 1u);
    EXPECT_NE(html.find("run 2 \u00b7 &lt;oracle&gt;"), std::string::npos);
    EXPECT_EQ(legend_html({}), "");
    StackedBarChart stacked;
    stacked.categories = {{"not stored", stage_colour("not_stored"), "not_stored"}};
    stacked.groups = {{"d", {{"run 1", {3}, {"3 probes"}}}}};
    stacked.legend = Legend::none;
    EXPECT_EQ(count(render(stacked), "legend-entry"), 0u);
    EXPECT_EQ(count(legend_html(stacked.categories), "data-key=\"not_stored\""), 1u);
}

TEST(Svg, EmptyChartsSaySo) {
    EXPECT_NE(render(GroupedBarChart{}).find("No data"), std::string::npos);
    EXPECT_NE(render(StackedBarChart{}).find("No data"), std::string::npos);
    EXPECT_NE(render(LineChart{}).find("No data"), std::string::npos);
}

TEST(Svg, TintMovesTowardsWhite) {
    EXPECT_EQ(tint("#000000", 0.5), "#808080");
    EXPECT_EQ(tint("#4e79a7", 0), "#4e79a7");
    EXPECT_EQ(tint("#4e79a7", 1), "#ffffff");
    EXPECT_NE(palette_colour(0), palette_colour(1));
    EXPECT_EQ(palette_colour(0), palette_colour(10));
}

}  // namespace
}  // namespace memfail::report::svg

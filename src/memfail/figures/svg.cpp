// SPDX-License-Identifier: MIT
// The report's SVG writer: layout is computed from the number of bars and the length of labels so
// a chart of one system and one k reads as well as one of eight systems and six k.
#include <memfail/figures/svg.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

namespace memfail::report::svg {

namespace {

constexpr double k_font = 12;        // axis titles, legend
constexpr double k_small_font = 11;  // tick and category labels
constexpr double k_char_width = 0.6; // mean glyph advance of a sans-serif font, in ems (an estimate)
constexpr double k_plot_height = 220;
constexpr double k_top = 14;
constexpr std::size_t k_max_label_chars = 44;
constexpr double k_pi = 3.14159265358979323846;
constexpr double k_label_angle = 40;  // degrees, for category labels too long to stand upright

// Coordinates with one decimal, without a trailing ".0" and never "-0".
std::string num(double v) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.1f", v);
    std::string s = buffer;
    if (s == "-0.0") s = "0.0";
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s;
}

std::size_t code_points(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

double text_width(std::string_view s, double font) {
    return static_cast<double>(code_points(s)) * font * k_char_width;
}

// `s` cut to `max_chars` code points by an ellipsis in the middle: labels such as
// "run 5 · oracle:stage=retrieval,over=verbatim · k=10" differ at both ends (the run, the k), so
// both ends are kept.
std::string truncate(const std::string& s, std::size_t max_chars) {
    if (max_chars < 2 || code_points(s) <= max_chars) return s;
    std::vector<std::size_t> starts;  // byte offset of every code point
    for (std::size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
    const std::size_t keep = max_chars - 1;
    const std::size_t head = (keep + 1) / 2, tail = keep - head;
    return s.substr(0, starts[head]) + "\u2026" + s.substr(starts[starts.size() - tail]);
}

// Splits a label after separators (_ - space / : .) into lines of at most `width` pixels.
std::vector<std::string> wrap(const std::string& label, double width, double font) {
    std::vector<std::string> tokens;
    std::string current;
    for (char c : label) {
        current += c;
        if (c == '_' || c == '-' || c == ' ' || c == '/' || c == ':' || c == '.') {
            tokens.push_back(current);
            current.clear();
        }
    }
    if (!current.empty()) tokens.push_back(current);
    std::vector<std::string> lines;
    std::string line;
    for (const auto& t : tokens) {
        if (!line.empty() && text_width(line + t, font) > width) {
            lines.push_back(line);
            line.clear();
        }
        line += t;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

// Channel `i` (0 red, 1 green, 2 blue) of "#rrggbb", 0-255; 0 for a malformed digit.
int channel(const std::string& colour, int i) {
    const std::string hex = colour.substr(static_cast<std::size_t>(1 + 2 * i), 2);
    return static_cast<int>(std::strtol(hex.c_str(), nullptr, 16));
}

double luminance(const std::string& colour) {
    if (colour.size() != 7 || colour[0] != '#') return 1.0;
    return (0.2126 * channel(colour, 0) + 0.7152 * channel(colour, 1) + 0.0722 * channel(colour, 2)) / 255.0;
}

// Appends elements to an SVG document; attribute values and text are escaped here, once.
class Writer {
public:
    Writer(double width, double height, const std::string& title) {
        m_out += "<svg class=\"chart\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" width=\"" + num(width) +
                 "\" height=\"" + num(height) +
                 "\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\" "
                 "font-size=\"" + num(k_font) + "\">";
        m_out += "<title>" + escape(title) + "</title>";
    }
    void raw(const std::string& s) { m_out += s; }
    void open_group(const std::string& cls, const std::string& tooltip, const std::string& extra = {}) {
        m_out += "<g class=\"" + cls + "\"" + extra + ">";
        if (!tooltip.empty()) m_out += "<title>" + escape(tooltip) + "</title>";
    }
    void close_group() { m_out += "</g>"; }
    void rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = {}) {
        m_out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
                 "\" fill=\"" + escape(fill) + "\"" + extra + "/>";
    }
    void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1,
              const std::string& extra = {}) {
        m_out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
                 "\" stroke=\"" + escape(stroke) + "\" stroke-width=\"" + num(width) + "\"" + extra + "/>";
    }
    // `anchor`: start, middle or end; `rotate`: degrees about (x, y).
    void text(double x, double y, const std::string& s, const std::string& anchor = "start", double font = k_font,
              double rotate = 0, const std::string& extra = {}) {
        m_out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"";
        if (anchor != "start") m_out += " text-anchor=\"" + anchor + "\"";
        if (font != k_font) m_out += " font-size=\"" + num(font) + "\"";
        if (rotate != 0) m_out += " transform=\"rotate(" + num(rotate) + " " + num(x) + " " + num(y) + ")\"";
        m_out += extra + ">" + escape(s) + "</text>";
    }
    std::string finish() { return m_out + "</svg>"; }

private:
    std::string m_out;
};

// The legend flows left to right and wraps; layout first (for the height), then drawing.
struct LegendLayout {
    std::vector<std::pair<double, double>> positions;  // per entry, relative to the legend's origin
    std::vector<std::string> labels;                   // shortened for display
    double height = 0;
};

LegendLayout layout_legend(const std::vector<LegendEntry>& entries, double width) {
    LegendLayout out;
    const double row_h = 18;
    double x = 0, y = 0;
    for (const auto& e : entries) {
        std::string label = truncate(e.label, k_max_label_chars);
        const double w = 12 + 6 + text_width(label, k_font) + 16;
        if (x > 0 && x + w > width) {
            x = 0;
            y += row_h;
        }
        out.positions.emplace_back(x, y);
        out.labels.push_back(std::move(label));
        x += w;
    }
    out.height = entries.empty() ? 0 : y + row_h;
    return out;
}

void draw_legend(Writer& w, const std::vector<LegendEntry>& entries, const LegendLayout& layout, double x0, double y0) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& e = entries[i];
        const double x = x0 + layout.positions[i].first, y = y0 + layout.positions[i].second;
        w.open_group("legend-entry", e.label, e.key.empty() ? std::string() : " data-key=\"" + escape(e.key) + "\"");
        w.rect(x, y + 2, 12, 12, e.colour);
        w.text(x + 18, y + 12, layout.labels[i]);
        w.close_group();
    }
}

// Category labels under equal slots: upright, wrapped or slanted, whichever first fits.
struct CategoryLabels {
    enum class Mode { upright, wrapped, slanted } mode = Mode::upright;
    std::vector<std::vector<std::string>> lines;  // per category
    double height = 0;        // vertical space below the axis
    double left_spill = 0;    // how far slanted labels reach left of the first slot's centre
};

CategoryLabels layout_categories(const std::vector<std::string>& labels, double slot) {
    CategoryLabels out;
    const double fit = slot - 6;
    bool upright = true;
    for (const auto& l : labels) upright &= text_width(l, k_small_font) <= fit;
    if (upright) {
        for (const auto& l : labels) out.lines.push_back({l});
        out.height = 20;
        return out;
    }
    std::vector<std::vector<std::string>> wrapped;
    bool wraps = true;
    std::size_t most = 1;
    for (const auto& l : labels) {
        auto lines = wrap(l, fit, k_small_font);
        for (const auto& line : lines) wraps &= text_width(line, k_small_font) <= fit;
        wraps &= lines.size() <= 3;
        most = std::max(most, lines.size());
        wrapped.push_back(std::move(lines));
    }
    if (wraps) {
        out.mode = CategoryLabels::Mode::wrapped;
        out.lines = std::move(wrapped);
        out.height = 8 + 13.0 * static_cast<double>(most);
        return out;
    }
    out.mode = CategoryLabels::Mode::slanted;
    const double angle = k_label_angle * k_pi / 180.0;
    double longest = 0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        std::string l = truncate(labels[i], k_max_label_chars);
        const double w = text_width(l, k_small_font);
        longest = std::max(longest, w);
        // Slot i's centre is i * slot right of the first one's: only a long early label spills left.
        out.left_spill = std::max(out.left_spill, w * std::cos(angle) - static_cast<double>(i) * slot);
        out.lines.push_back({std::move(l)});
    }
    out.height = 14 + longest * std::sin(angle) + k_small_font;
    return out;
}

void draw_categories(Writer& w, const std::vector<std::string>& full, const CategoryLabels& labels, double x0,
                     double slot, double axis_y) {
    const double angle = k_label_angle;
    for (std::size_t i = 0; i < labels.lines.size(); ++i) {
        const double cx = x0 + (static_cast<double>(i) + 0.5) * slot;
        w.open_group("category-label", full[i]);
        if (labels.mode == CategoryLabels::Mode::slanted) {
            w.text(cx, axis_y + 14, labels.lines[i][0], "end", k_small_font, -angle);
        } else {
            for (std::size_t j = 0; j < labels.lines[i].size(); ++j)
                w.text(cx, axis_y + 15 + 13.0 * static_cast<double>(j), labels.lines[i][j], "middle", k_small_font);
        }
        w.close_group();
    }
}

// The y axis from 0 to 100 % with gridlines every 20 %, and its title.
void draw_percent_axis(Writer& w, double left, double top, double plot_w, double plot_h, const std::string& title) {
    for (int t = 0; t <= 100; t += 20) {
        const double y = top + plot_h - plot_h * t / 100.0;
        w.line(left, y, left + plot_w, y, t == 0 ? "#555555" : "#e3e3e3", 1);
        w.text(left - 6, y + 4, std::to_string(t), "end", k_small_font);
    }
    w.line(left, top, left, top + plot_h, "#555555", 1);
    w.text(14, top + plot_h / 2, title, "middle", k_font, -90);
}

void draw_error_bar(Writer& w, double cx, double cap, const Interval& ci, double top, double plot_h) {
    const double y_low = top + plot_h - plot_h * std::clamp(ci.low, 0.0, 1.0);
    const double y_high = top + plot_h - plot_h * std::clamp(ci.high, 0.0, 1.0);
    w.open_group("error-bar", {});
    w.line(cx, y_low, cx, y_high, "#222222", 1.2);
    w.line(cx - cap / 2, y_low, cx + cap / 2, y_low, "#222222", 1.2);
    w.line(cx - cap / 2, y_high, cx + cap / 2, y_high, "#222222", 1.2);
    w.close_group();
}

std::string empty_chart(const std::string& title, const std::string& message) {
    Writer w(360, 40, title);
    w.text(8, 24, message);
    return w.finish();
}

// Tick positions covering [low, high] at a step of 1, 2 or 5 times a power of ten.
std::vector<double> nice_ticks(double& low, double& high) {
    if (high - low < 1e-9) {
        const double pad = std::max(1.0, std::fabs(low) * 0.1);
        low -= pad;
        high += pad;
    }
    const double raw = (high - low) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = power;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= raw) {
            step = m * power;
            break;
        }
    low = std::floor(low / step) * step;
    high = std::ceil(high / step) * step;
    std::vector<double> ticks;
    for (double t = low; t <= high + step / 2; t += step) ticks.push_back(std::fabs(t) < step / 1e6 ? 0.0 : t);
    return ticks;
}

std::string tick_label(double v, double step) {
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

}  // namespace

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string stage_colour(std::string_view stage) {
    // Okabe-Ito hues: failures warm, successes green and blue, no-verdicts grey.
    if (stage == "not_stored") return "#d55e00";
    if (stage == "summary_error") return "#e69f00";
    if (stage == "not_retrieved") return "#cc79a7";
    if (stage == "unverified") return "#a6a6a6";
    if (stage == "reasoning_error") return "#f0e442";
    if (stage == "retrieved") return "#56b4e9";
    if (stage == "correct") return "#009e73";
    if (stage == "needs_answer_stage") return "#c9d3dd";
    if (stage == "ambiguous") return "#e3e8ee";
    return "#8c8c8c";  // error and anything unknown
}

std::string stage_label(std::string_view stage) {
    if (stage == "not_stored") return "not stored";
    if (stage == "summary_error") return "summary error";
    if (stage == "not_retrieved") return "not retrieved";
    if (stage == "unverified") return "summary unverified (needs a judge)";
    if (stage == "reasoning_error") return "reasoning error";
    if (stage == "retrieved") return "retrieved (answer not graded)";
    if (stage == "correct") return "correct";
    if (stage == "needs_answer_stage") return "abstain (answer not graded)";
    if (stage == "ambiguous") return "ambiguous (named person is stored)";
    if (stage == "error") return "error";
    return std::string(stage);
}

const std::vector<std::string>& stage_order() {
    static const std::vector<std::string> order = {"not_stored", "summary_error", "unverified", "not_retrieved",
                                                   "reasoning_error", "retrieved", "correct", "needs_answer_stage", "ambiguous", "error"};
    return order;
}

std::string palette_colour(std::size_t index) {
    static constexpr std::array<const char*, 10> k_palette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                              "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    return k_palette[index % k_palette.size()];
}

std::string tint(const std::string& colour, double amount) {
    if (colour.size() != 7 || colour[0] != '#') return colour;
    amount = std::clamp(amount, 0.0, 1.0);
    char out[8];
    int channels[3];
    for (int i = 0; i < 3; ++i) {
        const int c = channel(colour, i);
        channels[i] = static_cast<int>(std::lround(c + (255 - c) * amount));
    }
    std::snprintf(out, sizeof out, "#%02x%02x%02x", channels[0], channels[1], channels[2]);
    return out;
}

std::string render(const GroupedBarChart& chart) {
    std::size_t series = chart.series.size();
    for (const auto& g : chart.groups) series = std::max(series, g.bars.size());
    if (chart.groups.empty() || series == 0) return empty_chart(chart.title, "No data to chart.");
    const double groups = static_cast<double>(chart.groups.size());
    const double n = static_cast<double>(series);
    // Aim for a plot about 860 px wide; bars never thinner than 4 px nor wider than 28 px.
    const double bar_w = std::clamp(860.0 / (groups * n), 4.0, 28.0);
    const double gap = series > 1 ? std::min(2.0, bar_w * 0.15) : 0.0;
    const double cluster = n * bar_w + (n - 1) * gap;
    const double slot = std::max(cluster + std::max(14.0, bar_w), 84.0);
    std::vector<std::string> labels;
    for (const auto& g : chart.groups) labels.push_back(g.label);
    const CategoryLabels cats = layout_categories(labels, slot);
    const double left = std::max(52.0, cats.left_spill - slot / 2 + 6);
    const double plot_w = groups * slot;
    const double width = std::max(left + plot_w + 16, 360.0);
    const LegendLayout legend = layout_legend(chart.legend == Legend::inside ? chart.series : std::vector<LegendEntry>{},
                                              width - 16);
    const double legend_y = k_top + k_plot_height + cats.height + 8;
    const double height = legend_y + legend.height + 4;

    Writer w(width, height, chart.title);
    draw_percent_axis(w, left, k_top, plot_w, k_plot_height, chart.y_label);
    for (std::size_t gi = 0; gi < chart.groups.size(); ++gi) {
        const auto& g = chart.groups[gi];
        const double x0 = left + static_cast<double>(gi) * slot + (slot - cluster) / 2;
        for (std::size_t si = 0; si < g.bars.size(); ++si) {
            if (!g.bars[si]) continue;
            const BarValue& b = *g.bars[si];
            const double x = x0 + static_cast<double>(si) * (bar_w + gap);
            // At least a hairline, so a 0 % bar is visible and hoverable.
            const double h = std::max(1.0, k_plot_height * std::clamp(b.value, 0.0, 1.0));
            const std::string colour = si < chart.series.size() ? chart.series[si].colour : palette_colour(si);
            w.open_group("bar", b.tooltip);
            w.rect(x, k_top + k_plot_height - h, bar_w, h, colour);
            if (b.interval) draw_error_bar(w, x + bar_w / 2, std::min(bar_w * 0.6, 8.0), *b.interval, k_top, k_plot_height);
            w.close_group();
        }
    }
    draw_categories(w, labels, cats, left, slot, k_top + k_plot_height);
    if (chart.legend == Legend::inside) draw_legend(w, chart.series, legend, 8, legend_y);
    return w.finish();
}

std::string render(const StackedBarChart& chart) {
    std::size_t bars = 0;
    for (const auto& g : chart.groups) bars += g.bars.size();
    if (bars == 0 || chart.categories.empty()) return empty_chart(chart.title, "No data to chart.");
    const double bar_h = 16, row_gap = 6, header_h = 20, plot_w = 600, right = 64;
    double label_w = 0;
    for (const auto& g : chart.groups)
        for (const auto& b : g.bars) label_w = std::min(280.0, std::max(label_w, text_width(b.label, k_small_font)));
    const double left = label_w + 16;
    const double width = left + plot_w + right;
    const std::size_t max_label_chars = static_cast<std::size_t>(label_w / (k_small_font * k_char_width));

    double plot_h = 4;
    for (const auto& g : chart.groups) {
        if (!g.label.empty()) plot_h += header_h;
        plot_h += static_cast<double>(g.bars.size()) * (bar_h + row_gap);
    }
    const double axis_y = k_top + plot_h;
    const LegendLayout legend = layout_legend(
        chart.legend == Legend::inside ? chart.categories : std::vector<LegendEntry>{}, width - 16);
    const double legend_y = axis_y + 42;
    const double height = legend_y + legend.height + 4;

    Writer w(width, height, chart.title);
    for (int t = 0; t <= 100; t += 20) {
        const double x = left + plot_w * t / 100.0;
        w.line(x, k_top, x, axis_y, t == 0 ? "#555555" : "#e3e3e3", 1);
        w.text(x, axis_y + 14, std::to_string(t), "middle", k_small_font);
    }
    w.line(left, axis_y, left + plot_w, axis_y, "#555555", 1);
    w.text(left + plot_w / 2, axis_y + 32, chart.x_label, "middle");
    double y = k_top + 4;
    for (const auto& g : chart.groups) {
        if (!g.label.empty()) {
            w.open_group("group-label", g.label);
            w.text(8, y + 14, truncate(g.label, k_max_label_chars + 16), "start", k_font, 0, " font-weight=\"bold\"");
            w.close_group();
            y += header_h;
        }
        for (const auto& b : g.bars) {
            w.open_group("bar-label", b.label);
            w.text(left - 6, y + bar_h - 4, truncate(b.label, std::max<std::size_t>(max_label_chars, 8)), "end",
                   k_small_font);
            w.close_group();
            std::int64_t total = 0;
            for (auto c : b.counts) total += c;
            if (total <= 0) {
                w.text(left + 6, y + bar_h - 4, b.empty_label, "start", k_small_font, 0, " fill=\"#666666\"");
                y += bar_h + row_gap;
                continue;
            }
            double x = left;
            for (std::size_t ci = 0; ci < b.counts.size() && ci < chart.categories.size(); ++ci) {
                if (b.counts[ci] <= 0) continue;
                const double share = static_cast<double>(b.counts[ci]) / static_cast<double>(total);
                const double sw = plot_w * share;
                const auto& cat = chart.categories[ci];
                w.open_group("segment", ci < b.tooltips.size() ? b.tooltips[ci] : std::string(),
                             " data-key=\"" + escape(cat.key) + "\"");
                w.rect(x, y, sw, bar_h, cat.colour);
                // The share is printed when it fits inside the segment.
                char pct_buffer[16];
                std::snprintf(pct_buffer, sizeof pct_buffer, "%.1f", 100.0 * share);
                const std::string pct = pct_buffer;
                if (sw >= text_width(pct, 10) + 6)
                    w.text(x + sw / 2, y + bar_h - 4, pct, "middle", 10, 0,
                           luminance(cat.colour) < 0.45 ? " fill=\"#ffffff\"" : " fill=\"#111111\"");
                w.close_group();
                x += sw;
            }
            w.text(left + plot_w + 6, y + bar_h - 4, "n=" + std::to_string(total), "start", k_small_font, 0,
                   " fill=\"#444444\"");
            y += bar_h + row_gap;
        }
    }
    if (chart.legend == Legend::inside) draw_legend(w, chart.categories, legend, 8, legend_y);
    return w.finish();
}

std::vector<LegendEntry> legend_entries(const LineChart& chart) {
    std::vector<LegendEntry> entries;
    for (const auto& s : chart.series) entries.push_back({s.name, s.colour, {}});
    return entries;
}

std::string legend_html(const std::vector<LegendEntry>& entries) {
    if (entries.empty()) return {};
    std::string out = "<ul class=\"legend\">";
    for (const auto& e : entries) {
        out += "<li class=\"legend-entry\"";
        if (!e.key.empty()) out += " data-key=\"" + escape(e.key) + "\"";
        out += "><span class=\"swatch\" style=\"background:" + escape(e.colour) + "\"></span>" + escape(e.label) + "</li>";
    }
    return out + "</ul>";
}

std::string render(const LineChart& chart) {
    std::size_t points = 0;
    for (const auto& s : chart.series) points += s.points.size();
    if (points == 0) return empty_chart(chart.title, "No data to chart.");
    const bool categorical = !chart.x_categories.empty();
    double slot = 0, plot_w = 0, x_low = 0, x_high = 0;
    std::vector<double> ticks;
    CategoryLabels cats;
    if (categorical) {
        slot = std::max(96.0, 480.0 / static_cast<double>(chart.x_categories.size()));
        plot_w = slot * static_cast<double>(chart.x_categories.size());
        cats = layout_categories(chart.x_categories, slot);
    } else {
        x_low = std::numeric_limits<double>::max();
        x_high = std::numeric_limits<double>::lowest();
        for (const auto& s : chart.series)
            for (const auto& p : s.points) {
                x_low = std::min(x_low, p.x);
                x_high = std::max(x_high, p.x);
            }
        ticks = nice_ticks(x_low, x_high);
        plot_w = 520;
        cats.height = 20;
    }
    const double left = std::max(52.0, categorical ? cats.left_spill - slot / 2 + 6 : 0.0);
    const double width = left + plot_w + 24;
    const double axis_y = k_top + k_plot_height;
    const double x_title_y = axis_y + cats.height + 14;
    const std::vector<LegendEntry> entries =
        chart.legend == Legend::inside ? legend_entries(chart) : std::vector<LegendEntry>{};
    const LegendLayout legend = layout_legend(entries, width - 16);
    const double legend_y = x_title_y + 10;
    const double height = legend_y + legend.height + 4;
    auto x_of = [&](double x) {
        if (categorical) return left + (x + 0.5) * slot;
        return left + plot_w * (x - x_low) / (x_high - x_low);
    };
    // On a categorical axis the series are dodged apart so equal values and their error bars
    // do not hide one another.
    const double series_count = static_cast<double>(chart.series.size());
    const double dodge = categorical && chart.series.size() > 1 ? std::min(10.0, slot * 0.6 / series_count) : 0.0;
    auto y_of = [&](double y) { return axis_y - k_plot_height * std::clamp(y, 0.0, 1.0); };

    Writer w(width, height, chart.title);
    draw_percent_axis(w, left, k_top, plot_w, k_plot_height, chart.y_label);
    w.line(left, axis_y, left + plot_w, axis_y, "#555555", 1);
    if (categorical) {
        draw_categories(w, chart.x_categories, cats, left, slot, axis_y);
    } else {
        const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
        for (double t : ticks) {
            const double x = x_of(t);
            w.line(x, axis_y, x, axis_y + 4, "#555555", 1);
            w.text(x, axis_y + 16, tick_label(t, step), "middle", k_small_font);
        }
    }
    w.text(left + plot_w / 2, x_title_y, chart.x_label, "middle");
    struct Box {
        double x, y, w, h;
        bool overlaps(const Box& o) const { return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h; }
    };
    std::vector<Box> placed;  // point labels drawn so far
    for (std::size_t si = 0; si < chart.series.size(); ++si) {
        const auto& s = chart.series[si];
        const double shift = dodge * (static_cast<double>(si) - (series_count - 1) / 2);
        std::vector<LinePoint> sorted = s.points;
        std::stable_sort(sorted.begin(), sorted.end(), [](const LinePoint& a, const LinePoint& b) { return a.x < b.x; });
        w.open_group("series", s.name);
        if (sorted.size() > 1) {
            std::string pts;
            for (const auto& p : sorted) pts += (pts.empty() ? "" : " ") + num(x_of(p.x) + shift) + "," + num(y_of(p.y));
            w.raw("<polyline class=\"series-line\" points=\"" + pts + "\" fill=\"none\" stroke=\"" + escape(s.colour) +
                  "\" stroke-width=\"2\"/>");
        }
        for (const auto& p : sorted) {
            w.open_group("point", p.tooltip);
            if (p.interval) draw_error_bar(w, x_of(p.x) + shift, 8, *p.interval, k_top, k_plot_height);
            const double cx = x_of(p.x) + shift, cy = y_of(p.y);
            w.raw("<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"4.5\" fill=\"" +
                  escape(s.colour) + "\" stroke=\"#ffffff\" stroke-width=\"1\"/>");
            if (!p.label.empty()) {
                // The first free place around the point (above right, below right, above left, ...,
                // then further out) that overlaps no label drawn before and stays in the chart; the
                // first candidate when none is free.
                const std::string label = truncate(p.label, 24);
                const double lw = text_width(label, k_small_font), lh = k_small_font;
                std::optional<Box> chosen;
                for (std::size_t ring = 0; ring < 5 && !chosen; ++ring)
                    for (const bool right : {true, false})
                        for (const double dy : {-8.0 - 13.0 * static_cast<double>(ring), 16.0 + 13.0 * static_cast<double>(ring)}) {
                            Box b{right ? cx + 7 : cx - 7 - lw, cy + dy - lh, lw, lh};
                            if (b.x < 2 || b.x + b.w > width - 2 || b.y < 0 || b.y + b.h > axis_y) continue;
                            bool free = true;
                            for (const auto& o : placed) free &= !b.overlaps(o);
                            if (free && !chosen) chosen = b;
                        }
                if (!chosen) {
                    const bool leftwards = cx + 7 + lw > width - 2;
                    chosen = Box{leftwards ? cx - 7 - lw : cx + 7, (cy - 8 < k_top + 4 ? cy + 16 : cy - 8) - lh, lw, lh};
                }
                placed.push_back(*chosen);
                w.text(chosen->x, chosen->y + lh, label, "start", k_small_font, 0,
                       " class=\"point-label\" fill=\"#222222\"");
            }
            w.close_group();
        }
        w.close_group();
    }
    draw_legend(w, entries, legend, 8, legend_y);
    return w.finish();
}

}  // namespace memfail::report::svg

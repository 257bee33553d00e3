// SPDX-License-Identifier: MIT
// HaluMem's operation figures (halumem_ops.hpp) as its authors' evaluation.py aggregates them, from
// the session checks a run recorded: extraction recall and weighted recall, false-memory resistance
// (FMR), memory accuracy and target precision, F1 of recall and target precision, and the shares of
// update verdicts. Denominators are every checked item, as HaluMem's "(all)" figures: an item nobody
// decided (offline, the judge's) or whose judge call failed is in the denominator and never in a
// numerator, and its count is shown beside the figure.
#include <memfail/suites/benchmarks/halumem_report.hpp>

#include <memfail/figures/html.hpp>
#include <memfail/store/results_db.hpp>

#include <map>

namespace memfail::suites::benchmarks {

using nlohmann::json;
using report::Align;
using report::Table;
using report::TableStyle;

namespace {

// One figure's parts: numerator (a sum of scores, or of weighted scores), denominator, undecided.
struct Figure {
    double sum = 0, total = 0;
    std::int64_t items = 0, undecided = 0, errors = 0;
    // Empty when nothing is decided: a bound of 0 over items nobody judged would read as a failure.
    std::optional<double> value() const {
        if (total <= 0 || undecided + errors >= items) return std::nullopt;
        return sum / total;
    }
};

struct Operations {
    std::int64_t run = 0;
    std::string system;
    Figure recall, weighted_recall, fmr, accuracy, target_precision;
    std::int64_t excluded = 0;       // interference points with a real point's text
    std::int64_t target_unknown = 0; // memories whose slot inclusion nobody decided
    std::map<std::string, std::int64_t> updates;  // correct, hallucination, omission, other
    std::int64_t update_items = 0, update_undecided = 0, update_errors = 0;
    std::int64_t sessions = 0;
};

Result<std::vector<Operations>> operations(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    std::vector<Operations> out;
    for (std::int64_t id : run_ids) {
        Operations o;
        o.run = id;
        {
            MF_TRY_ASSIGN(store::Statement s, db.database().prepare("SELECT system_spec FROM runs WHERE id = ?"));
            s.bind(1, id);
            MF_TRY_ASSIGN(bool row, s.step());
            if (row) o.system = s.column_text(0);
        }
        MF_TRY_ASSIGN(store::Statement s, db.database().prepare(
            "SELECT c.name, c.score, c.label, c.weight FROM session_checks c JOIN run_scenarios sc "
            "ON sc.run_id = c.run_id AND sc.scenario_id = c.scenario_id "
            "WHERE c.run_id = ? AND sc.dataset = 'halumem' AND c.name != ''"));
        s.bind(1, id);
        bool any = false;
        MF_TRY(s.for_each_row([&] {
            any = true;
            const std::string name = s.column_text(0);
            const bool decided = !s.column_is_null(1);
            const double score = decided ? s.column_double(1) : 0.0;
            const std::string label = s.column_text(2);
            const double weight = s.column_double(3);
            const bool error = label == "error";
            auto count = [&](Figure& f, double add, double of) {
                ++f.items;
                f.total += of;
                if (decided) f.sum += add;
                else if (error) ++f.errors;
                else ++f.undecided;
            };
            if (name == "extraction") {
                // HaluMem's recall counts integrity 2 only; its weighted recall 0.5 x score x importance.
                count(o.recall, score >= 1.0 ? 1.0 : 0.0, 1.0);
                count(o.weighted_recall, score * weight, weight);
            } else if (name == "false_memory") {
                if (label == "excluded") ++o.excluded;
                else count(o.fmr, score, 1.0);
            } else if (name == "accuracy") {
                count(o.accuracy, score, 1.0);
                if (label == "target") count(o.target_precision, score, 1.0);
                else if (label != "other") ++o.target_unknown;
            } else if (name == "update") {
                ++o.update_items;
                if (decided) ++o.updates[label];
                else if (error) ++o.update_errors;
                else ++o.update_undecided;
            }
        }));
        if (!any) continue;
        {
            MF_TRY_ASSIGN(store::Statement n, db.database().prepare(
                "SELECT COUNT(DISTINCT c.scenario_id || char(31) || c.session_id) FROM session_checks c JOIN run_scenarios sc "
                "ON sc.run_id = c.run_id AND sc.scenario_id = c.scenario_id WHERE c.run_id = ? AND sc.dataset = 'halumem'"));
            n.bind(1, id);
            MF_TRY_ASSIGN(bool row, n.step());
            if (row) o.sessions = n.column_int(0);
        }
        out.push_back(std::move(o));
    }
    return out;
}

std::string share(std::optional<double> v, TableStyle style) {
    if (!v) return style == TableStyle::machine ? "" : "-";
    return style == TableStyle::machine ? report::fraction(*v) : report::percent(*v);
}

// "73.2 (41/56)" for people; the fraction for machines.
std::string shown(const Figure& f, TableStyle style, bool counts = true) {
    if (style == TableStyle::machine || !f.value() || !counts) return share(f.value(), style);
    char buf[64];
    std::snprintf(buf, sizeof buf, " (%.0f/%.0f)", f.sum, f.total);
    return share(f.value(), style) + buf;
}

std::optional<double> f1(const Operations& o) {
    // Only when both figures are decided whole: an undecided item could move either.
    const auto p = o.target_precision.value(), r = o.recall.value();
    if (!p || !r || o.target_precision.undecided + o.target_precision.errors + o.target_unknown > 0 ||
        o.recall.undecided + o.recall.errors > 0 || *p + *r <= 0)
        return std::nullopt;
    return 2 * *p * *r / (*p + *r);
}

Table operations_table(const std::vector<Operations>& ops, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    Table t;
    t.title = "HaluMem operations (memory extraction, false memories, updating)";
    const std::vector<std::string> names =
        machine ? std::vector<std::string>{"run", "system", "sessions", "recall", "recall_items", "recall_undecided",
                                           "weighted_recall", "fmr", "fmr_items", "fmr_undecided", "fmr_excluded",
                                           "accuracy", "accuracy_items", "accuracy_undecided", "target_precision",
                                           "target_items", "target_unknown", "f1", "update_correct", "update_hallucination",
                                           "update_omission", "update_other", "update_items", "update_undecided", "errors"}
                : std::vector<std::string>{"run", "system", "sessions", "recall %", "undecided", "weighted R %", "FMR %",
                                           "undecided", "excluded", "accuracy %", "undecided", "target P %", "unknown",
                                           "F1 %", "update C/H/O/other %", "updates", "undecided", "errors"};
    for (const auto& n : names) t.columns.push_back({n, n == "system" ? Align::left : Align::right});
    for (const auto& o : ops) {
        const auto update_share = [&](const char* label) -> std::optional<double> {
            if (o.update_items == 0 || o.update_undecided + o.update_errors >= o.update_items) return std::nullopt;
            const auto it = o.updates.find(label);
            return static_cast<double>(it == o.updates.end() ? 0 : it->second) / static_cast<double>(o.update_items);
        };
        const std::int64_t errors = o.recall.errors + o.fmr.errors + o.accuracy.errors + o.update_errors;
        if (machine) {
            t.rows.push_back({std::to_string(o.run), o.system, std::to_string(o.sessions), share(o.recall.value(), style),
                              std::to_string(o.recall.items), std::to_string(o.recall.undecided),
                              share(o.weighted_recall.value(), style), share(o.fmr.value(), style),
                              std::to_string(o.fmr.items), std::to_string(o.fmr.undecided), std::to_string(o.excluded),
                              share(o.accuracy.value(), style), std::to_string(o.accuracy.items),
                              std::to_string(o.accuracy.undecided), share(o.target_precision.value(), style),
                              std::to_string(o.target_precision.items), std::to_string(o.target_unknown),
                              share(f1(o), style), share(update_share("correct"), style),
                              share(update_share("hallucination"), style), share(update_share("omission"), style),
                              share(update_share("other"), style), std::to_string(o.update_items),
                              std::to_string(o.update_undecided), std::to_string(errors)});
            continue;
        }
        std::string updates = "-";
        if (update_share("correct"))
            updates = share(update_share("correct"), style) + "/" + share(update_share("hallucination"), style) + "/" +
                      share(update_share("omission"), style) + "/" + share(update_share("other"), style);
        t.rows.push_back({std::to_string(o.run), o.system, std::to_string(o.sessions), shown(o.recall, style),
                          std::to_string(o.recall.undecided), shown(o.weighted_recall, style, false), shown(o.fmr, style),
                          std::to_string(o.fmr.undecided), std::to_string(o.excluded), shown(o.accuracy, style, false),
                          std::to_string(o.accuracy.undecided), shown(o.target_precision, style, false),
                          std::to_string(o.target_unknown), share(f1(o), style), updates, std::to_string(o.update_items),
                          std::to_string(o.update_undecided), std::to_string(errors)});
    }
    if (!machine) {
        t.notes.push_back("As HaluMem's evaluation.py over its (all) denominators: recall = real memory points a memory the "
                          "session added covers fully (integrity 2) / real points checked; weighted R weighs each by its "
                          "importance, partial coverage counting half; FMR = interference points not stored / interference "
                          "points; accuracy = mean support of the memories a session added (2 = 100%, 1 = 50%); target P the "
                          "same over the memories whose information has a slot among the real points; F1 of recall and "
                          "target P; updates: the top 10 retrieved for each update, judged correct / hallucination / "
                          "omission / other.");
        t.notes.push_back("undecided: items the rules could not decide (the judge's: --judge-model); they are in every "
                          "denominator and no numerator, so each figure is a lower bound until they are judged (\"-\": none is decided); F1 shows "
                          "only when recall and target P are decided whole. excluded: interference points with the text of "
                          "a real point of their session (HaluMem counts them). errors: judge calls that failed.");
    }
    return t;
}

json operations_json(const Operations& o) {
    auto figure = [](const Figure& f) {
        return json{{"value", f.value() ? json(*f.value()) : json(nullptr)},
                    {"items", f.items},
                    {"undecided", f.undecided},
                    {"errors", f.errors}};
    };
    json updates = json::object();
    for (const auto& [label, n] : o.updates) updates[label] = n;
    const auto f = f1(o);
    return {{"sessions", o.sessions},
            {"recall", figure(o.recall)},
            {"weighted_recall", figure(o.weighted_recall)},
            {"fmr", figure(o.fmr)},
            {"fmr_excluded", o.excluded},
            {"accuracy", figure(o.accuracy)},
            {"target_precision", figure(o.target_precision)},
            {"target_unknown", o.target_unknown},
            {"f1", f ? json(*f) : json(nullptr)},
            {"updates", {{"counts", updates}, {"items", o.update_items}, {"undecided", o.update_undecided}, {"errors", o.update_errors}}}};
}

class HalumemReport final : public report::SuiteReport {
public:
    std::string id() const override { return "halumem"; }
    std::string title() const override { return "HaluMem operations"; }
    Result<bool> present(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) const override {
        MF_TRY_ASSIGN(auto ops, operations(db, run_ids));
        return !ops.empty();
    }
    Result<std::vector<Table>> scorecard(store::ResultsDb& db, const std::vector<std::int64_t>& ids) const override {
        MF_TRY_ASSIGN(auto ops, operations(db, ids));
        if (ops.empty()) return std::vector<Table>{};
        return std::vector<Table>{operations_table(ops, TableStyle::human)};
    }
    std::vector<report::NamedTable> tables() const override {
        return {{"halumem", "HaluMem's operation figures (extraction recall, FMR, accuracy, target precision, F1, updates) per run"}};
    }
    Result<Table> table(const std::string& name, store::ResultsDb& db, const std::vector<std::int64_t>& ids,
                        TableStyle style) const override {
        if (name != "halumem") return SuiteReport::table(name, db, ids, style);
        MF_TRY_ASSIGN(auto ops, operations(db, ids));
        return operations_table(ops, style);
    }
    Result<std::string> html(store::ResultsDb& db, const report::SectionContext& context) const override {
        std::vector<std::int64_t> ids;
        for (const auto& run : context.runs) ids.push_back(run.id);
        MF_TRY_ASSIGN(auto ops, operations(db, ids));
        for (auto& o : ops)
            for (const auto& run : context.runs)
                if (run.id == o.run) o.system = run.label;
        std::string out = context.heading("halumem", "HaluMem operations");
        out += "<p>What HaluMem grades per operation, from the memory after each session that holds memory points: how "
               "much of each session's information the memories it added keep, whether they keep the assistant's false "
               "statements, how accurate they are, and whether an update replaces what it updates. Undecided items (the "
               "judge's) are in every denominator and no numerator.</p>";
        out += report::html::table(operations_table(ops, TableStyle::human));
        out += "</section>";
        return out;
    }
    std::string json_key() const override { return "halumem"; }
    Result<json> run_json(store::ResultsDb& db, std::int64_t id) const override {
        MF_TRY_ASSIGN(auto ops, operations(db, {id}));
        if (ops.empty()) return json(nullptr);
        return operations_json(ops.front());
    }
};

}  // namespace

const report::SuiteReport& halumem_report() {
    static const HalumemReport report;
    return report;
}

}  // namespace memfail::suites::benchmarks

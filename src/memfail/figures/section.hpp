// SPDX-License-Identifier: MIT
// A suite's own part of every report (its scorecard), supplied through Suite::report(): the tables
// that open the text report, the tables `memfail report --table NAME` prints, a section of the HTML
// report and a block of each run in the results JSON. The report (report/) iterates the suites and
// never names one.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// A table a suite offers to `memfail report --table NAME` (CSV and JSON), with what it holds.
struct NamedTable {
    std::string name;         // "integrity", "profile-slices"
    std::string description;  // "write-integrity memory checks per run x mode x check x k"
};

// One run as the HTML report names it.
struct SectionRun {
    std::int64_t id = 0;
    std::string name;   // as tables show it: "3", or "A.db#3" in a report over several files
    std::string label;  // "run 3 · mem0"
};

// What a suite's HTML section is drawn with: the runs in report order and the section's numbered
// heading (which opens the <section>; the suite closes it).
struct SectionContext {
    std::vector<SectionRun> runs;
    std::function<std::string(const std::string& id, const std::string& title)> heading;
};

class SuiteReport {
public:
    virtual ~SuiteReport() = default;
    // The HTML section's id and title ("integrity", "Write integrity").
    virtual std::string id() const = 0;
    virtual std::string title() const = 0;
    // Whether these runs hold any of the suite's rows; nothing of the suite is shown otherwise.
    virtual Result<bool> present(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) const = 0;
    // True when a report over only these datasets opens with this section: its scorecard is the
    // headline and the staged grade a diagnostic after it.
    virtual bool leads(const std::vector<std::string>& datasets) const {
        (void)datasets;
        return false;
    }
    // The tables that open the text and Markdown report, in order (only non-empty ones).
    virtual Result<std::vector<Table>> scorecard(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) const = 0;
    // The tables `--table` names, and one of them.
    virtual std::vector<NamedTable> tables() const { return {}; }
    virtual Result<Table> table(const std::string& name, store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                TableStyle style) const {
        (void)db, (void)run_ids, (void)style;
        return make_error(ErrorKind::invalid_input, "no table '" + name + "' in the " + id() + " section");
    }
    // The HTML section, from the heading to </section>.
    virtual Result<std::string> html(store::ResultsDb& db, const SectionContext& context) const = 0;
    // A run's block in the results JSON, under json_key(); null when the run has none.
    virtual std::string json_key() const = 0;
    virtual Result<nlohmann::json> run_json(store::ResultsDb& db, std::int64_t run_id) const = 0;
    // The memory checks the suite records (Suite::check_memory), in the order its probes show them.
    virtual std::vector<std::string> check_order() const { return {}; }
    // A sentence for the probe browser's introduction, when these runs have the suite's rows (what
    // its probes show beyond every probe's fields); empty: none.
    virtual std::string browser_note() const { return {}; }
};

}  // namespace memfail::report

// SPDX-License-Identifier: MIT
// memfail compare: where run B differs from run A by more than chance, per dataset, k and stage.
#include <commands/cli.hpp>
#include <commands/common.hpp>

#include <memfail/report/compare.hpp>
#include <memfail/report/run_report.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>

namespace memfail::cli {

// Declared in cli.hpp beside the other subcommands.
void add_compare_command(CLI::App& app, std::function<void()>& action);

namespace {

struct CompareCliOptions {
    std::string file_a;
    std::string file_b;  // empty: both runs come from file_a
    std::optional<std::int64_t> run_a;
    std::optional<std::int64_t> run_b;
    double alpha = 0.05;
    std::int64_t min_probes = 20;
    std::string format = "text";
    bool force = false;
};

constexpr const char* k_footer = R"(How to read it:
  Runs are matched by dataset and k. For each match, the success rate and each failure stage's
  share of the probes are compared: B-A is the difference in percentage points. When a dataset has
  the same hash on both sides, the sides graded the same probes: they are paired by scenario, probe
  and k, and the test is the exact McNemar test (two-sided binomial test of the probes where only A
  or only B had the outcome, shown as "A only/B only", against an even split). Only when the hashes
  differ (different probes) are the sides independent samples: the pooled two-proportion z-test, or
  Fisher's exact test when an expected count in the 2x2 table is below 5 (a warning says so). A
  stage that every unsuccessful probe failed at, on both sides, mirrors success: shown as "mirror",
  tested once as success. All tested rows form one family corrected with Holm-Bonferroni; a row is
  flagged "B better" or "B worse" only when its adjusted p is below --alpha. Rows with fewer than
  --min-probes probes (pairs) on either side are shown as "too few" and never flagged.

Forms:
  memfail compare A.db B.db                      each file's finished runs (one system per file)
  memfail compare A.db B.db --run-a 2 --run-b 5  one chosen run from each file
  memfail compare results.db --run-a 1 --run-b 2 two runs of one file

The exit code is 0 whenever the comparison ran, whatever it found.
)";

store::ResultsDb open_existing(const std::string& path) {
    // Read only: comparing never writes to a results file, and a typo is "no such results file".
    return value_or_fatal(store::ResultsDb::open_read_only(path));
}

std::vector<std::int64_t> side_runs(store::ResultsDb& db, const std::optional<std::int64_t>& chosen) {
    std::vector<std::int64_t> requested;
    if (chosen) requested.push_back(*chosen);
    return value_or_fatal(report::select_runs(db, requested));
}

std::string render_readable(const report::Comparison& cmp, report::Format format) {
    std::string out;
    const bool markdown = format == report::Format::markdown;
    out += report::comparison_summary(cmp) + "\n\n";
    for (const auto& w : cmp.warnings) out += (markdown ? "> **Warning:** " : "warning: ") + w + "\n";
    if (!cmp.warnings.empty()) out += "\n";
    out += report::render(report::comparison_table(cmp), format);
    return out;
}

void run_compare(const CompareCliOptions& opts) {
    const auto format = value_or_fatal(report::parse_format(opts.format));
    if (opts.file_b.empty() && (!opts.run_a || !opts.run_b))
        throw Fatal(make_error(ErrorKind::invalid_input,
                               "with one results file, name both runs to compare: --run-a ID --run-b ID"));
    store::ResultsDb db_a = open_existing(opts.file_a);
    std::optional<store::ResultsDb> db_b_storage;
    if (!opts.file_b.empty()) db_b_storage.emplace(open_existing(opts.file_b));
    store::ResultsDb& db_b = db_b_storage ? *db_b_storage : db_a;
    const auto runs_a = side_runs(db_a, opts.run_a);
    const auto runs_b = side_runs(db_b, opts.run_b);

    report::CompareOptions options;
    options.alpha = opts.alpha;
    options.min_probes = opts.min_probes;
    options.force = opts.force;
    auto result = report::compare_runs(db_a, runs_a, db_b, runs_b, options);
    if (!result) {
        Error error = result.error();
        if (error.kind == ErrorKind::invalid_input && error.message.find("choose one run") != std::string::npos)
            error.message += error.message.rfind("side A", 0) == 0 ? " (--run-a ID)" : " (--run-b ID)";
        throw Fatal(error);
    }
    const report::Comparison& cmp = *result;
    std::string out;
    switch (format) {
        case report::Format::json: out = report::comparison_json(cmp); break;
        case report::Format::csv:
            // The CSV stays a plain table for spreadsheets; warnings go to stderr.
            for (const auto& w : cmp.warnings) progress_line("warning: " + w);
            out = report::render(report::comparison_table(cmp), format);
            break;
        default: out = render_readable(cmp, format); break;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace

void add_compare_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<CompareCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "compare", "Compare run B with run A per dataset, k and failure stage, flagging only differences "
                   "the sample sizes support (exact McNemar on the same probes, else z-test or Fisher's exact test; "
                   "Holm-Bonferroni)");
    cmd->add_option("a", opts->file_a, "Results database of side A (written by `memfail run`)")->required();
    cmd->add_option("b", opts->file_b, "Results database of side B (default: A's file, with --run-a and --run-b)");
    cmd->add_option("--run-a", opts->run_a, "Run id of side A (default: every finished run in A.db)");
    cmd->add_option("--run-b", opts->run_b,
                    "Run id of side B (default: every finished run in B.db; required with one file)");
    cmd->add_option("--alpha", opts->alpha, "Family-wise significance level after Holm-Bonferroni")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_flag("--force", opts->force,
                  "Compare runs of different protocols (memfail vs paper) anyway, with a warning; refused otherwise");
    cmd->add_option("--min-probes", opts->min_probes,
                    "Fewest probes per side for a row to be tested; smaller rows are shown as \"too few\"")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--format,-f", opts->format, "text, markdown, csv or json")->capture_default_str();
    cmd->footer(k_footer);
    cmd->callback([opts, &action] {
        action = [opts] { run_compare(*opts); };
    });
}

}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// memfail report: the diagnostic table of a results database.
#include <commands/cli.hpp>
#include <commands/common.hpp>

#include <memfail/report/run_report.hpp>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

namespace memfail::cli {

namespace {
struct ReportOptions {
    std::string results;
    std::vector<long long> runs;
    std::string format = "text";
    bool show_runs = true;
};
}  // namespace

void add_report_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "report", "Print success per dataset and k with 95% Wilson intervals and the count of each "
                  "failure stage, plus LLM usage and rules/judge agreement when a model was used");
    cmd->add_option("results", opts->results, "Results database written by `memfail run`")->required();
    cmd->add_option("--run", opts->runs, "Run ids to include (default: every finished run)");
    cmd->add_option("--format,-f", opts->format, "text, markdown, csv or json")->capture_default_str();
    cmd->add_flag("!--no-runs", opts->show_runs, "Leave out the table of runs (datasets, hashes, latencies)");
    cmd->callback([opts, &action] {
        action = [opts] {
            const auto format = value_or_fatal(report::parse_format(opts->format));
            if (!std::filesystem::exists(opts->results))
                throw Fatal(make_error(ErrorKind::not_found, "no such results file", opts->results));
            auto db = value_or_fatal(store::ResultsDb::open(opts->results));
            std::vector<std::int64_t> requested(opts->runs.begin(), opts->runs.end());
            const auto ids = value_or_fatal(report::select_runs(db, requested));
            std::string out;
            if (format == report::Format::text || format == report::Format::markdown) {
                // The flat table's title says whether answers were graded (end to end) or only memory.
                out = value_or_fatal(report::success_table(db, ids)).title + "\n\n";
                for (const auto& t : value_or_fatal(report::success_tables_by_run(db, ids)))
                    out += report::render(t, format) + "\n";
                const auto usage = value_or_fatal(report::llm_usage_table(db, ids));
                if (!usage.rows.empty()) out += report::render(usage, format) + "\n";
                const auto agreement = value_or_fatal(report::agreement_table(db, ids));
                if (!agreement.rows.empty()) {
                    out += report::render(agreement, format) + "\n";
                    const auto disagreements = value_or_fatal(report::disagreement_table(db, ids, 20));
                    if (!disagreements.rows.empty()) out += report::render(disagreements, format) + "\n";
                }
                if (opts->show_runs) out += report::render(value_or_fatal(report::runs_table(db, ids)), format);
            } else {
                out = report::render(value_or_fatal(report::success_table(db, ids)), format);
            }
            std::fwrite(out.data(), 1, out.size(), stdout);
        };
    });
}

}  // namespace memfail::cli

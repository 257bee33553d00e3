// SPDX-License-Identifier: MIT
// memfail report: the diagnostic tables of a results database, its exports (results JSON, samples
// JSONL) and the self-contained HTML report.
#include <commands/cli.hpp>
#include <commands/common.hpp>

#include <memfail/data/jsonl.hpp>
#include <memfail/report/benchmark.hpp>
#include <memfail/report/evidence_recall.hpp>
#include <memfail/report/export.hpp>
#include <memfail/report/html_report.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/leaky.hpp>
#include <memfail/report/slices.hpp>
#include <memfail/report/sources.hpp>
#include <memfail/store/results_db.hpp>
#include <memfail/suites/suite.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

namespace memfail::cli {

namespace {

struct ReportOptions {
    std::vector<std::string> results;
    std::vector<std::string> runs;
    std::string format = "text";
    std::string output;
    std::string html;
    std::size_t max_probes = 0;
    std::string title = "memfail report";
    std::vector<std::string> prices;
    bool show_runs = true;
    bool show_slices = true;
    std::string csv_table = "success";
    bool exclude_leaky = false;
};

std::string tables_document(store::ResultsDb& db, const std::vector<std::int64_t>& ids, report::Format format,
                            const ReportOptions& opts, const std::map<std::string, report::ModelPrice>& prices) {
    std::string out;
    if (format == report::Format::text || format == report::Format::markdown) {
        // A suite with a scorecard of its own opens the report with it: the write-integrity checks
        // and answers, the long-horizon profile. The staged evidence grade (the MemFail-shaped
        // success table) follows; for such suites it is a diagnostic, not their headline.
        std::string scorecards;
        for (const suites::Suite* suite : suites::all_suites())
            if (const report::SuiteReport* section = suite->report())
                for (const auto& t : value_or_fatal(section->scorecard(db, ids)))
                    scorecards += report::render(t, format) + "\n";
        out = scorecards;
        // The flat table's title says whether answers were graded (end to end) or only memory.
        out += (scorecards.empty() ? std::string() : std::string("Staged evidence grade, every dataset: ")) +
               value_or_fatal(report::success_table(db, ids)).title + "\n\n";
        for (const auto& t : value_or_fatal(report::success_tables_by_run(db, ids)))
            out += report::render(t, format) + "\n";
        const auto leaky = value_or_fatal(report::leaky_table(db));
        if (!leaky.rows.empty()) out += report::render(leaky, format) + "\n";
        if (opts.show_slices) {
            const auto flat = value_or_fatal(report::slices_table(db, ids));
            if (!flat.rows.empty()) {
                out += flat.title + "\n\n";
                for (const auto& t : value_or_fatal(report::slices_tables_by_run(db, ids)))
                    out += report::render(t, format) + "\n";
            }
        }
        // The published benchmarks' own metric, for runs over locomo or longmemeval.
        const auto benchmark = value_or_fatal(report::benchmark_table(db, ids));
        if (!benchmark.rows.empty()) out += report::render(benchmark, format) + "\n";
        const auto recall = value_or_fatal(report::evidence_recall_table(db, ids));
        if (!recall.rows.empty()) out += report::render(recall, format) + "\n";
        const auto usage = value_or_fatal(report::llm_usage_table(db, ids));
        if (!usage.rows.empty()) {
            out += report::render(usage, format) + "\n";
            if (!prices.empty()) out += report::render(value_or_fatal(report::llm_cost_table(db, ids, prices)), format) + "\n";
        }
        const auto agreement = value_or_fatal(report::agreement_table(db, ids));
        if (!agreement.rows.empty()) {
            out += report::render(agreement, format) + "\n";
            const auto disagreements = value_or_fatal(report::disagreement_table(db, ids, 20));
            if (!disagreements.rows.empty()) out += report::render(disagreements, format) + "\n";
        }
        if (opts.show_runs) out += report::render(value_or_fatal(report::runs_table(db, ids)), format);
        return out;
    }
    if (format == report::Format::json) return value_or_fatal(report::results_json(db, ids));
    // CSV is for programs: numbers as numbers (rates as fractions), headers without symbols.
    const auto style = format == report::Format::csv ? report::TableStyle::machine : report::TableStyle::human;
    if (opts.csv_table == "slices") return report::render(value_or_fatal(report::slices_table(db, ids, style)), format);
    for (const suites::Suite* suite : suites::all_suites())
        if (const report::SuiteReport* section = suite->report())
            for (const auto& named : section->tables())
                if (named.name == opts.csv_table)
                    return report::render(value_or_fatal(section->table(named.name, db, ids, style)), format);
    if (opts.csv_table == "evidence-recall")
        return report::render(value_or_fatal(report::evidence_recall_table(db, ids, style)), format);
    if (opts.csv_table == "benchmark") return report::render(value_or_fatal(report::benchmark_table(db, ids, style)), format);
    if (opts.csv_table == "leaky") return report::render(value_or_fatal(report::leaky_table(db, style)), format);
    return report::render(value_or_fatal(report::success_table(db, ids, style)), format);
}

// --run values: "ID" (one results file) or "FILE#ID" (FILE as given, or its name), by file.
std::vector<report::ReportInput> report_inputs(const ReportOptions& opts) {
    std::vector<report::ReportInput> inputs;
    for (const auto& path : opts.results) inputs.push_back({path, {}});
    const auto names = report::display_names(opts.results);
    for (const auto& spec : opts.runs) {
        const auto hash = spec.rfind('#');
        const std::string file = hash == std::string::npos ? std::string() : spec.substr(0, hash);
        const std::string number = hash == std::string::npos ? spec : spec.substr(hash + 1);
        char* end = nullptr;
        const long long id = std::strtoll(number.c_str(), &end, 10);
        if (number.empty() || end != number.c_str() + number.size() || id <= 0)
            throw Fatal(make_error(ErrorKind::invalid_input, "bad run '" + spec + "': expected a run id, or FILE#ID",
                                   "--run"));
        std::size_t at = inputs.size();
        if (file.empty()) {
            if (inputs.size() > 1)
                throw Fatal(make_error(ErrorKind::invalid_input,
                                       "run " + number + " of which file? With several results files, name it as FILE#ID "
                                       "(e.g. --run " + names.front() + "#" + number + ")",
                                       "--run"));
            at = 0;
        } else {
            for (std::size_t i = 0; i < inputs.size(); ++i)
                if (file == opts.results[i] || file == names[i]) at = i;
            if (at == inputs.size())
                throw Fatal(make_error(ErrorKind::invalid_input,
                                       "bad run '" + spec + "': '" + file + "' is not one of the results files given",
                                       "--run"));
        }
        inputs[at].runs.push_back(id);
    }
    return inputs;
}

}  // namespace

void add_report_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "report",
        "Show one or more results databases (read only): success per dataset and k with 95% Wilson intervals and the count of "
        "each failure stage, LLM usage and rules/judge agreement (text, markdown), the flat table (csv), "
        "the results document (json), one record per probe x k (jsonl), or a self-contained HTML report "
        "with the figures and a probe browser (--html)");
    cmd->add_option("results", opts->results,
                    "Results databases written by `memfail run` (read only, never written); several make one report "
                    "naming each run FILE#ID")
        ->required();
    cmd->add_option("--run", opts->runs,
                    "Runs to include, as ID, or FILE#ID with several results files (default: every finished run of "
                    "each file)");
    cmd->add_option("--format,-f", opts->format,
                    "text, markdown, csv (the flat success table), json (results: runs, config, per "
                    "dataset x k counts, rates and intervals, LLM usage) or jsonl (samples: one line per "
                    "probe x k with its question, stage, facts, checks, retrieved memories and answer)")
        ->capture_default_str();
    cmd->add_option("--output,-o", opts->output,
                    "Write the --format output to this file (atomically) instead of standard output");
    cmd->add_option("--html", opts->html,
                    "Also write the self-contained HTML report (inline SVG charts, run metadata, probe "
                    "browser; no network needed to view it) to this file");
    cmd->add_option("--html-max-probes", opts->max_probes,
                    "Embed at most this many probe x k rows in the HTML probe browser (0: all)")
        ->capture_default_str();
    cmd->add_option("--title", opts->title, "Title of the HTML report")->capture_default_str();
    cmd->add_option("--price", opts->prices,
                    "MODEL=INPUT/OUTPUT: a model's price in US dollars per million prompt/completion tokens "
                    "(repeatable); adds the LLM cost per run, role and model to the tables and the HTML report");
    cmd->add_flag("!--no-runs", opts->show_runs, "Leave out the table of runs (datasets, hashes, latencies)");
    cmd->add_flag("!--no-slices", opts->show_slices,
                  "Leave out the slice tables of text and markdown (each dataset by its probes' labels: condition "
                  "met or not and condition type, N, hops and voice, direct/misleading/ambiguous, LoCoMo category, "
                  "LongMemEval question type)");
    // The tables: the report's own, then each suite's (SuiteReport::tables), described from one list.
    std::vector<std::string> table_names = {"success", "slices"};
    std::string table_help = "The flat table --format csv prints: success (per run x dataset x k), slices (per run x "
                             "dataset x k x probe label), ";
    for (const suites::Suite* suite : suites::all_suites())
        if (const report::SuiteReport* section = suite->report())
            for (const auto& named : section->tables()) {
                table_names.push_back(named.name);
                table_help += named.name + " (" + named.description + "), ";
            }
    table_names.push_back("benchmark");
    table_names.push_back("evidence-recall");
    table_names.push_back("leaky");
    table_help += "benchmark (LoCoMo token F1 per category, LongMemEval accuracy per question type, per run x "
                  "dataset x k), evidence-recall (LoCoMo and LongMemEval: every, any and the share of cited turns "
                  "retrieved, per run x dataset x k x category) or leaky (per dataset: probes a `none` run answered right without memory)";
    cmd->add_option("--table", opts->csv_table, table_help)
        ->check(CLI::IsMember(table_names))
        ->capture_default_str();
    cmd->add_flag("--exclude-leaky", opts->exclude_leaky,
                  "Leave out of every rate the probes a model answers right without memory: those a `none` run "
                  "with an answer model (in these results) got right, matched by dataset content. Fails when the "
                  "results hold no such run");
    cmd->callback([opts, cmd, &action] {
        const bool format_given = cmd->count("--format") > 0;
        action = [opts, format_given] {
            const bool jsonl = opts->format == "jsonl";
            const auto format = jsonl ? report::Format::json : value_or_fatal(report::parse_format(opts->format));
            const auto prices = value_or_fatal(report::parse_prices(opts->prices));
            // Read only: a report never writes to a results file. Several files are merged in memory.
            const auto inputs = report_inputs(*opts);
            std::optional<store::ResultsDb> single;
            std::optional<report::MergedResults> merged;
            std::vector<std::int64_t> ids;
            if (inputs.size() == 1) {
                single.emplace(value_or_fatal(store::ResultsDb::open_read_only(inputs[0].path)));
                ids = value_or_fatal(report::select_runs(*single, inputs[0].runs));
            } else {
                merged.emplace(value_or_fatal(report::merge_results(inputs)));
                ids = merged->run_ids;
            }
            store::ResultsDb& db = single ? *single : merged->db;
            if (opts->exclude_leaky) {
                // Loudly: without a `none` run with answers there is nothing to leave out, and a
                // table that silently left nothing out would read as if it had.
                if (value_or_fatal(report::leaky_datasets(db)).empty())
                    throw Fatal(make_error(ErrorKind::invalid_input,
                                           "--exclude-leaky needs a `none` run whose answers were graded in these "
                                           "results: memfail run --system none --answer-model M --datasets ... --out "
                                           "THE_SAME_FILE (or pass its results file too)",
                                           "--exclude-leaky"));
                db.exclude_answerable_without_memory(true);
            }

            if (!opts->html.empty()) {
                report::HtmlReportOptions html;
                html.title = opts->title;
                if (opts->exclude_leaky) html.title += " (probes answerable without memory left out)";
                html.generated_at = store::utc_now();
                html.prices = prices;
                if (opts->max_probes > 0) html.max_probes = opts->max_probes;
                const std::string page = value_or_fatal(report::render_html_report(db, ids, html));
                value_or_fatal(data::write_file_atomically(opts->html, page));
                std::fprintf(stderr, "report: wrote %s (%zu KiB, %zu run%s)\n", opts->html.c_str(),
                             (page.size() + 1023) / 1024, ids.size(), ids.size() == 1 ? "" : "s");
                // With --html alone the tables are not printed again; ask for a format to get both.
                if (opts->output.empty() && !format_given) return;
            }

            if (jsonl) {
                auto stream = [&](std::ostream& out) -> Result<void> {
                    MF_TRY(report::write_samples_jsonl(db, ids, out));
                    return {};
                };
                if (opts->output.empty()) value_or_fatal(stream(std::cout));
                else value_or_fatal(data::write_file_atomically(opts->output, stream));
                return;
            }
            const std::string out = tables_document(db, ids, format, *opts, prices);
            if (opts->output.empty()) std::fwrite(out.data(), 1, out.size(), stdout);
            else value_or_fatal(data::write_file_atomically(opts->output, out));
        };
    });
}

}  // namespace memfail::cli

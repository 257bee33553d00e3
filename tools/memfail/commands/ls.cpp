// SPDX-License-Identifier: MIT
// memfail ls: list memory systems, datasets, or the runs in a results database.
#include <commands/cli.hpp>
#include <commands/common.hpp>

#include <memfail/memory/memory_system.hpp>
#include <memfail/store/results_db.hpp>
#include <memfail/suites/suite.hpp>

#include <CLI/CLI.hpp>
#include <memory>

namespace memfail::cli {

void add_ls_command(CLI::App& app, std::function<void()>& action) {
    CLI::App* cmd = app.add_subcommand("ls", "List memory systems, datasets or runs");
    cmd->require_subcommand(1);

    CLI::App* systems = cmd->add_subcommand("systems", "Built-in memory systems and their options");
    systems->callback([&action] {
        action = [] {
            for (const auto& info : memory::list_memory_systems()) {
                std::printf("%s\n    %s\n", info.name.c_str(), info.summary.c_str());
                for (const auto& o : info.options)
                    std::printf("    %-16s default %-10s %s\n", o.name.c_str(),
                                o.default_value.empty() ? "-" : o.default_value.c_str(), o.help.c_str());
            }
        };
    });

    CLI::App* datasets = cmd->add_subcommand(
        "datasets", "Every suite's datasets (what `datasets generate` writes and `run --datasets` takes by name) and the "
                    "formats `datasets import --from` reads; one per line, tab-separated: kind, suite, name");
    datasets->callback([&action] {
        action = [] {
            for (const suites::Suite* suite : suites::all_suites()) {
                for (const auto& n : suite->dataset_names())
                    std::printf("dataset\t%s\t%s\n", suite->name().c_str(), n.c_str());
                // The MemFail release's CSV importer is the command's own (`--from memfail-csv`).
                if (suite->name() == "memfail") std::printf("import\tmemfail\tmemfail-csv\n");
                for (const auto& f : suite->import_formats())
                    std::printf("import\t%s\t%s\n", suite->name().c_str(), f.c_str());
            }
        };
    });

    auto results = std::make_shared<std::string>();
    CLI::App* runs = cmd->add_subcommand("runs", "Runs recorded in a results database: status, probe x k rows and how many ended in error, and the process writing the run (if any)");
    runs->add_option("results", *results, "Results database (read only, never written)")->required();
    runs->callback([results, &action] {
        action = [results] {
            auto db = value_or_fatal(store::ResultsDb::open_read_only(*results));
            auto errors = value_or_fatal(db.database().prepare(
                "SELECT COUNT(*), COALESCE(SUM(stage = 'error'), 0) FROM probe_results WHERE run_id = ?"));
            for (const auto& r : value_or_fatal(db.runs())) {
                errors.reset();
                errors.bind(1, r.id);
                std::int64_t rows = 0, in_error = 0;
                if (value_or_fatal(errors.step())) {
                    rows = errors.column_int(0);
                    in_error = errors.column_int(1);
                }
                const auto writer = value_or_fatal(db.run_writer(r.id));
                std::printf("%lld  %-9s %s  %s  %s  %lld probe x k, %lld in error%s%s\n", static_cast<long long>(r.id),
                            r.status.c_str(), r.started_at.c_str(), r.system_spec.c_str(), r.code_version.c_str(),
                            static_cast<long long>(rows), static_cast<long long>(in_error),
                            writer ? ("  written by " + *writer).c_str() : "",
                            r.error.empty() ? "" : ("  error: " + r.error).c_str());
            }
        };
    });
}

}  // namespace memfail::cli

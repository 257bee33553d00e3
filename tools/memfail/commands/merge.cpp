// SPDX-License-Identifier: MIT
// memfail merge: join the results files of a sharded run (`memfail run --shard I/N`) into one.
#include <commands/cli.hpp>
#include <commands/common.hpp>

#include <memfail/run/merge.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace memfail::cli {

namespace {
struct MergeOptions {
    std::string out;
    std::vector<std::string> inputs;
};
}  // namespace

void add_merge_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<MergeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "merge",
        "Join the results files of the parts of a sharded run (`memfail run --shard I/N`) into one new results "
        "file: one run per configuration, equal to a single-process run of the same work, with the parts' LLM "
        "reply caches joined into OUT.llm-cache.db. Refuses (writing nothing) parts that are unfinished, missing, "
        "overlapping, or of another configuration or code version");
    cmd->add_option("out", opts->out, "The results database to write (must not exist)")->required();
    cmd->add_option("inputs", opts->inputs, "The parts' results databases (read, never changed)")->required();
    cmd->callback([opts, &action] {
        action = [opts] {
            const run::MergeReport report = value_or_fatal(run::merge_shards(opts->out, opts->inputs));
            std::printf("merged %zu file(s) into %s:\n", opts->inputs.size(), opts->out.c_str());
            for (const auto& line : report.lines) std::printf("  %s\n", line.c_str());
            if (report.cache_files > 0)
                std::printf("  llm cache: %zu replies from %zu part cache(s) -> %s.llm-cache.db\n",
                            report.cache_entries, report.cache_files, opts->out.c_str());
            for (const auto& note : report.notes) std::printf("  note: %s\n", note.c_str());
        };
    });
}

}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// memfail run (placeholder until written).
#include <commands/cli.hpp>
#include <CLI/CLI.hpp>
namespace memfail::cli {
void add_run_command(CLI::App& app, std::function<void()>& action) { app.add_subcommand("run", "run"); }
}  // namespace memfail::cli

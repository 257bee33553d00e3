// SPDX-License-Identifier: MIT
// memfail report (placeholder until written).
#include <commands/cli.hpp>
#include <CLI/CLI.hpp>
namespace memfail::cli {
void add_report_command(CLI::App& app, std::function<void()>& action) { app.add_subcommand("report", "report"); }
}  // namespace memfail::cli

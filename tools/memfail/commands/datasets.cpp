// SPDX-License-Identifier: MIT
// memfail datasets (placeholder until written).
#include <commands/cli.hpp>
#include <CLI/CLI.hpp>
namespace memfail::cli {
void add_datasets_command(CLI::App& app, std::function<void()>& action) { app.add_subcommand("datasets", "datasets"); }
}  // namespace memfail::cli

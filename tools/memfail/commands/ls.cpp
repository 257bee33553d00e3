// SPDX-License-Identifier: MIT
// memfail ls (placeholder until written).
#include <commands/cli.hpp>
#include <CLI/CLI.hpp>
namespace memfail::cli {
void add_ls_command(CLI::App& app, std::function<void()>& action) { app.add_subcommand("ls", "ls"); }
}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// The memfail CLI: one function per subcommand file adds its options to the app (explicit list in
// cli.cpp, no static registration). Errors end a command by throwing memfail::Fatal.
#pragma once
#include <functional>

namespace CLI {
class App;
}

namespace memfail::cli {

// Thrown by a command that has already said what went wrong and only needs an exit code (e.g.
// `datasets validate` after printing each violation).
struct ExitStatus {
    int code;
};

// Runs the CLI; returns the process exit code (0 ok, 1 failure, 2 bad input, 3 outside service).
int main(int argc, char** argv);

// Builds the full command tree with every subcommand; exposed so tests can walk the options.
// `action` receives the callback of the chosen subcommand.
void build_app(CLI::App& app, std::function<void()>& action);

// Subcommands, each in commands/<name>.cpp.
void add_datasets_command(CLI::App& app, std::function<void()>& action);
void add_run_command(CLI::App& app, std::function<void()>& action);
void add_report_command(CLI::App& app, std::function<void()>& action);
void add_compare_command(CLI::App& app, std::function<void()>& action);
void add_ls_command(CLI::App& app, std::function<void()>& action);
void add_conformance_command(CLI::App& app, std::function<void()>& action);
void add_serve_command(CLI::App& app, std::function<void()>& action);
void add_merge_command(CLI::App& app, std::function<void()>& action);

}  // namespace memfail::cli

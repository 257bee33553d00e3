// SPDX-License-Identifier: MIT
// CLI entry: builds the command tree and turns errors into messages and exit codes.
#include <commands/cli.hpp>

#include <memfail/core/error.hpp>
#include <memfail/core/version.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>

namespace memfail::cli {

void build_app(CLI::App& app, std::function<void()>& action) {
    app.description(
        "memfail: find where an LLM memory system fails (storage, summary, retrieval, reasoning)");
    app.name("memfail");  // usage lines say "memfail", whatever path the binary was run from
    app.set_version_flag("--version", std::string(code_version()));
    app.require_subcommand(1);
    add_datasets_command(app, action);
    add_run_command(app, action);
    add_report_command(app, action);
    add_compare_command(app, action);
    add_merge_command(app, action);
    add_ls_command(app, action);
    add_conformance_command(app, action);
    add_serve_command(app, action);
}

int main(int argc, char** argv) {
    CLI::App app;
    std::function<void()> action;
    build_app(app, action);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        if (action) action();
        return 0;
    } catch (const ExitStatus& e) {
        return e.code;
    } catch (const Fatal& e) {
        std::fprintf(stderr, "memfail: error: %s\n", e.error().describe().c_str());
        return exit_code_for(e.error().kind);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "memfail: internal error: %s\n", e.what());
        return 1;
    }
}

}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// Walks every subcommand of the CLI: each has a description, each option has help text, and no
// subcommand declares the same flag twice.
#include <commands/cli.hpp>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <set>

namespace memfail::cli {
namespace {

void walk(const CLI::App& app, const std::string& path, std::vector<std::string>& problems, int& commands) {
    ++commands;
    if (app.get_description().empty()) problems.push_back(path + ": no description");
    std::set<std::string> names;
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_description().empty()) problems.push_back(path + " " + opt->get_name() + ": no help text");
        for (const auto& n : opt->get_lnames())
            if (!names.insert("--" + n).second) problems.push_back(path + ": duplicate --" + n);
        for (const auto& n : opt->get_snames())
            if (!names.insert("-" + n).second) problems.push_back(path + ": duplicate -" + n);
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        walk(*sub, path + " " + sub->get_name(), problems, commands);
}

TEST(CliOptions, EveryCommandAndOptionIsDocumented) {
    CLI::App app;
    std::function<void()> action;
    build_app(app, action);
    std::vector<std::string> problems;
    int commands = 0;
    walk(app, "memfail", problems, commands);
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
    EXPECT_GE(commands, 9);  // memfail, datasets (+3), run, report, ls (+3)
}

TEST(CliOptions, RunParsesItsOptions) {
    CLI::App app;
    std::function<void()> action;
    build_app(app, action);
    const char* argv[] = {"memfail", "run", "--system", "none", "--k", "1,2", "--datasets", "long_hop", "-q"};
    EXPECT_NO_THROW(app.parse(static_cast<int>(std::size(argv)), const_cast<char**>(argv)));
    EXPECT_TRUE(static_cast<bool>(action));
}

TEST(CliOptions, UnknownFlagIsAParseError) {
    CLI::App app;
    std::function<void()> action;
    build_app(app, action);
    const char* argv[] = {"memfail", "run", "--sytem", "none"};
    EXPECT_THROW(app.parse(static_cast<int>(std::size(argv)), const_cast<char**>(argv)), CLI::ParseError);
}

}  // namespace
}  // namespace memfail::cli

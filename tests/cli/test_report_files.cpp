// SPDX-License-Identifier: MIT
// The real `memfail` binary on results files: commands that only read (report in every format, ls
// runs, compare) leave a results file's bytes and modification time as they were, work on a file
// without write permission, and `memfail report A.db B.db` makes one report naming runs FILE#ID.
#include <report/report_fixture.hpp>
#include "cli_test_util.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace memfail {
namespace {

namespace fs = std::filesystem;

using testing::Ran;
using testing::slurp;

class ReportFiles : public testing::CliTest {
protected:
    ReportFiles() : CliTest("memfail-cli-report") {}
    // A results file of `systems` (one run each), written through the ResultsDb API.
    fs::path results(const std::string& name, std::vector<std::string> systems) {
        const fs::path path = m_dir / name;
        auto db = store::ResultsDb::open(path.string()).value();
        report::testing::FixtureSpec spec;
        spec.systems = std::move(systems);
        report::testing::build_fixture(db, spec);
        return path;
    }
    // Runs every command that only reads on `file` and checks its bytes and time are unchanged.
    void read_only_commands_leave_alone(const fs::path& file);
};

TEST_F(ReportFiles, CommandsThatReadNeverWriteTheResultsFile) {
    const fs::path current = results("results.db", {"verbatim", "oracle"});
    // A file as results schema 2 left it (no probe or memory texts): read as it is, never migrated.
    const fs::path older = results("older.db", {"verbatim", "oracle"});
    {
        auto db = store::Database::open(older.string()).value();
        ASSERT_TRUE(db.exec("DROP TABLE probe_texts; DROP TABLE memory_texts; DROP TABLE run_writers;").has_value());
        ASSERT_TRUE(db.set_user_version(2).has_value());
    }
    for (const fs::path& file : {current, older}) {
        SCOPED_TRACE(file.string());
        read_only_commands_leave_alone(file);
    }
    auto db = store::Database::open_read_only(older.string()).value();
    EXPECT_EQ(db.user_version().value(), 2);
}

void ReportFiles::read_only_commands_leave_alone(const fs::path& file) {
    // The writer is gone: only the results file itself is left.
    ASSERT_FALSE(fs::exists(file.string() + "-wal"));
    const std::string bytes = slurp(file);
    const auto mtime = fs::last_write_time(file);
    const std::string f = file.string();
    const fs::path html = m_dir / "report.html";
    for (const std::string& args : std::vector<std::string>{"report " + f, "report " + f + " --format csv", "report " + f + " --format json",
                                   "report " + f + " --format jsonl", "report " + f + " --format markdown --run 2",
                                   "report " + f + " --html " + html.string(), "ls runs " + f,
                                   "compare " + f + " --run-a 1 --run-b 2"}) {
        const Ran ran = memfail(args);
        EXPECT_EQ(ran.code, 0) << args << "\n" << ran.err;
        EXPECT_FALSE(ran.out.empty() && args.find("--html") == std::string::npos) << args;
        EXPECT_EQ(slurp(file), bytes) << args << " changed the results file";
        EXPECT_EQ(fs::last_write_time(file), mtime) << args << " touched the results file";
        EXPECT_FALSE(fs::exists(f + "-wal")) << args << " left a -wal file";
        EXPECT_FALSE(fs::exists(f + "-shm")) << args << " left a -shm file";
    }
    EXPECT_TRUE(fs::exists(html));
}

TEST_F(ReportFiles, AFileWithoutWritePermissionCanBeReported) {
    const fs::path file = results("locked.db", {"verbatim"});
    fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    const std::string bytes = slurp(file);
    const Ran csv = memfail("report " + file.string() + " --format csv");
    ASSERT_EQ(csv.code, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("run,system,dataset,k,probes,success,rate,ci_low,ci_high,", 0), 0u) << csv.out;
    const Ran runs = memfail("ls runs " + file.string());
    EXPECT_EQ(runs.code, 0) << runs.err;
    EXPECT_EQ(slurp(file), bytes);
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::owner_write, fs::perms::none);
}

TEST_F(ReportFiles, OneReportOverSeveralFiles) {
    const fs::path a = results("a.db", {"verbatim"});
    const fs::path b = results("b.db", {"oracle", "notes"});
    const std::string both = a.string() + " " + b.string();

    const Ran text = memfail("report " + both + " --no-slices");
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("run a.db#1: verbatim"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("run b.db#1: oracle"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("run b.db#2: notes"), std::string::npos) << text.out;

    const Ran csv = memfail("report " + both + " --format csv");
    ASSERT_EQ(csv.code, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("file,run,system,", 0), 0u) << csv.out;
    EXPECT_NE(csv.out.find("\nb.db,2,notes,"), std::string::npos) << csv.out;

    const Ran chosen = memfail("report " + both + " --format csv --run b.db#2 --run a.db#1");
    ASSERT_EQ(chosen.code, 0) << chosen.err;
    EXPECT_EQ(chosen.out.find("oracle"), std::string::npos);
    EXPECT_NE(chosen.out.find("\nb.db,2,notes,"), std::string::npos);

    const Ran html = memfail("report " + both + " --html " + (m_dir / "all.html").string());
    ASSERT_EQ(html.code, 0) << html.err;
    EXPECT_NE(slurp(m_dir / "all.html").find("run b.db#2 \u00b7 notes"), std::string::npos);

    // A bare run id is ambiguous across files; a missing file is named.
    const Ran bare = memfail("report " + both + " --run 1");
    EXPECT_EQ(bare.code, 2);
    EXPECT_NE(bare.err.find("FILE#ID"), std::string::npos) << bare.err;
    const std::string missing = (m_dir / "missing.db").string();
    const Ran gone = memfail("report " + a.string() + " " + missing);
    EXPECT_NE(gone.code, 0);
    EXPECT_NE(gone.err.find(missing), std::string::npos) << gone.err;
    EXPECT_FALSE(fs::exists(missing));
    const Ran no_run = memfail("report " + both + " --run b.db#9");
    EXPECT_NE(no_run.code, 0);
    EXPECT_NE(no_run.err.find(b.string()), std::string::npos) << no_run.err;
    EXPECT_NE(no_run.err.find("no run 9"), std::string::npos) << no_run.err;
}

}  // namespace
}  // namespace memfail

// SPDX-License-Identifier: MIT
// `memfail datasets import` through the real binary: every importer that refuses a file or skips
// an element (a memfail-csv row, a WRIT file, a DynamicMem user folder, a LoCoMo sample, a
// LongMemEval instance, a HaluMem user) writes the rest, prints the count as the last line, after
// every note, and exits 2; with --allow-partial it exits 0. A whole import exits 0 and says nothing
// of the kind.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace memfail {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Ran;
using testing::slurp;

const fs::path k_fixtures = MEMFAIL_TEST_FIXTURES;

// The last non-empty line of `text`.
std::string last_line(const std::string& text) {
    std::size_t end = text.find_last_not_of('\n');
    if (end == std::string::npos) return {};
    const std::size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

void write(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
}

class ImportExitCodes : public testing::CliTest {
protected:
    ImportExitCodes() : CliTest("memfail-cli-import-exit") {}

    // Imports SOURCE with --from FROM twice, without and with --allow-partial, and checks both: exit
    // 2 and then 0, the datasets written both times, and the last line of stderr naming `counted`.
    void expect_partial(const std::string& from, const fs::path& source, const std::string& counted) {
        const Ran strict = memfail("datasets import --from " + from + " '" + source.string() + "' -o '" +
                                   (m_dir / "strict").string() + "'");
        EXPECT_EQ(strict.code, 2) << strict.out << strict.err;
        const std::string last = last_line(strict.err);
        EXPECT_NE(last.find("the import is incomplete: " + counted + " (see the"), std::string::npos) << strict.err;
        EXPECT_NE(last.find("pass --allow-partial to accept a partial import"), std::string::npos) << last;
        EXPECT_TRUE(fs::exists(m_dir / "strict" / "manifest.json")) << "the rest is written";

        const Ran allowed = memfail("datasets import --from " + from + " '" + source.string() + "' -o '" +
                                    (m_dir / "allowed").string() + "' --allow-partial");
        EXPECT_EQ(allowed.code, 0) << allowed.out << allowed.err;
        const std::string accepted = last_line(allowed.err);
        EXPECT_NE(accepted.find("a partial import, accepted (--allow-partial): " + counted), std::string::npos)
            << allowed.err;
        ASSERT_TRUE(fs::exists(m_dir / "allowed" / "manifest.json"));
        EXPECT_TRUE(json::parse(slurp(m_dir / "allowed" / "manifest.json")).value("partial_accepted", false));
    }

    // A whole import: exit 0, no partial line.
    void expect_whole(const std::string& from, const fs::path& source) {
        const Ran ran = memfail("datasets import --from " + from + " '" + source.string() + "' -o '" +
                                (m_dir / "whole").string() + "'");
        EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
        EXPECT_EQ(ran.err.find("the import is incomplete"), std::string::npos) << ran.err;
        EXPECT_EQ(ran.err.find("partial import"), std::string::npos) << ran.err;
    }
};

TEST_F(ImportExitCodes, MemfailCsvSkippedRowExitsTwoUnlessAllowed) {
    expect_whole("memfail-csv", k_fixtures / "memfail-csv");
    const fs::path csv = m_dir / "csv";
    fs::copy(k_fixtures / "memfail-csv", csv, fs::copy_options::recursive);
    // One row of one file is not valid UTF-8: that row is skipped, the rest imports.
    const fs::path file = csv / "long_hop.csv";
    std::string text = slurp(file);
    const std::size_t row = text.find('\n') + 1;
    const std::size_t a = text.find('a', row);
    ASSERT_NE(a, std::string::npos);
    text[a] = '\xff';
    write(file, text);
    expect_partial("memfail-csv", csv, "skipped 1 row");
}

TEST_F(ImportExitCodes, WritRefusedFileExitsTwoUnlessAllowed) {
    const fs::path dir = m_dir / "writ";
    fs::copy(k_fixtures / "writ" / "release", dir, fs::copy_options::recursive);
    expect_whole("writ", dir);
    // A truncated scenario among the others.
    const fs::path victim = dir / "drift-001-phone-carrier.json";
    write(victim, slurp(victim).substr(0, 300));
    expect_partial("writ", dir, "refused 1 file");
}

TEST_F(ImportExitCodes, DynamicMemRefusedUserExitsTwoUnlessAllowed) {
    const fs::path dir = m_dir / "users";
    fs::copy(k_fixtures / "dynamicmem" / "two_users", dir, fs::copy_options::recursive);
    expect_whole("dynamicmem", dir);
    // A third user whose task packs are not JSON.
    fs::copy(k_fixtures / "dynamicmem" / "broken" / "bad_json", dir / "user_c", fs::copy_options::recursive);
    expect_partial("dynamicmem", dir, "refused 1 user folder");
}

TEST_F(ImportExitCodes, LocomoSkippedSampleExitsTwoUnlessAllowed) {
    const fs::path source = k_fixtures / "locomo" / "locomo10-fixture.json";
    expect_whole("locomo", source);
    json samples = json::parse(slurp(source));
    ASSERT_GE(samples.size(), 2u);
    samples[1] = 42;  // a sample that is not an object
    const fs::path broken = m_dir / "locomo10.json";
    write(broken, samples.dump());
    expect_partial("locomo", broken, "skipped 1 sample");
}

TEST_F(ImportExitCodes, LongMemEvalSkippedInstanceExitsTwoUnlessAllowed) {
    const fs::path source = k_fixtures / "longmemeval" / "longmemeval-fixture.json";
    expect_whole("longmemeval", source);
    json instances = json::parse(slurp(source));
    ASSERT_GE(instances.size(), 2u);
    instances[0] = "not an instance";
    const fs::path broken = m_dir / "longmemeval_s.json";
    write(broken, instances.dump());
    expect_partial("longmemeval", broken, "skipped 1 instance");
}

TEST_F(ImportExitCodes, HaluMemSkippedUserExitsTwoUnlessAllowed) {
    const fs::path source = k_fixtures / "halumem" / "halumem-medium-fixture.jsonl";
    expect_whole("halumem", source);
    const fs::path broken = m_dir / "HaluMem-Medium.jsonl";
    write(broken, slurp(source) + "{\"uuid\": \"broken\", \"sessions\": [\n");
    expect_partial("halumem", broken, "skipped 1 user");
}

}  // namespace
}  // namespace memfail

// SPDX-License-Identifier: MIT
// `memfail ls datasets` lists every suite's datasets and the formats `datasets import --from` reads,
// not only the five MemFail datasets.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

namespace memfail {
namespace {

class LsCommand : public testing::CliTest {
protected:
    LsCommand() : CliTest("memfail-cli-ls") {}
};

TEST_F(LsCommand, DatasetsListsEverySuitesDatasetsAndImporters) {
    const testing::Ran ran = memfail("ls datasets");
    ASSERT_EQ(ran.code, 0) << ran.err;
    std::set<std::string> lines;
    std::istringstream in(ran.out);
    for (std::string line; std::getline(in, line);) lines.insert(line);
    for (const char* expected :
         {"dataset\tmemfail\tconditional_facts_easy", "dataset\tmemfail\tlong_hop", "dataset\twrit\twrit_update",
          "dataset\tdynamic\tdynamic", "dataset\tbenchmarks\tlocomo", "import\tmemfail\tmemfail-csv", "import\twrit\twrit",
          "import\tdynamic\tdynamicmem", "import\tbenchmarks\tlocomo", "import\tbenchmarks\tlongmemeval",
          "import\tbenchmarks\thalumem"})
        EXPECT_TRUE(lines.count(expected)) << expected << " not in:\n" << ran.out;
    // Every importer listed is one `datasets import --from` takes.
    for (const auto& line : lines) {
        if (line.rfind("import\t", 0) != 0) continue;
        const std::string format = line.substr(line.rfind('\t') + 1);
        const testing::Ran imported = memfail("datasets import --from " + format + " " + (m_dir / "absent").string() +
                                              " -o " + (m_dir / ("out-" + format)).string());
        EXPECT_EQ(imported.err.find("unknown import format"), std::string::npos) << format << ": " << imported.err;
    }
}

}  // namespace
}  // namespace memfail

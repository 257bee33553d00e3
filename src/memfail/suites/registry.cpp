// SPDX-License-Identifier: MIT
// The suites, by name.
#include <memfail/suites/suite.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/protocol.hpp>
#include <memfail/suites/memfail/rules.hpp>
#include <memfail/suites/benchmarks/benchmarks_suite.hpp>
#include <memfail/suites/dynamic/dynamic_suite.hpp>
#include <memfail/suites/writ/writ_suite.hpp>

#include <algorithm>

namespace memfail::suites {

namespace {

// MemFail's five adversarial datasets: one scenario each.
class MemfailSuite final : public Suite {
public:
    std::string name() const override { return "memfail"; }
    std::vector<std::string> dataset_names() const override { return memfail_suite::dataset_names(); }
    Result<std::vector<data::Scenario>> generate(const std::string& dataset,
                                                 const GenerateOptions& options) const override {
        memfail_suite::GenerateOptions settings;
        settings.seed = options.seed;
        MF_TRY(memfail_suite::apply_settings(options.params, settings));
        MF_TRY_ASSIGN(data::Scenario s, memfail_suite::generate_dataset(dataset, settings));
        std::vector<data::Scenario> out;
        out.push_back(std::move(s));
        return out;
    }
    void validate(const data::Scenario& scenario, std::size_t line,
                  std::vector<data::Violation>& out) const override {
        memfail_suite::check_dataset_rules(scenario, line, out);
    }
    data::Scenario for_protocol(const data::Scenario& scenario, const std::string& protocol) const override {
        return protocol == "paper" ? memfail_suite::paper_protocol_scenario(scenario) : scenario;
    }
};

}  // namespace

const std::vector<const Suite*>& all_suites() {
    static const MemfailSuite memfail;
    static const std::vector<const Suite*> suites = {&memfail, &writ::writ_suite(), &dynamic::dynamic_suite(),
                                                       &benchmarks::benchmarks_suite()};
    return suites;
}

const Suite* find_suite(std::string_view name) {
    for (const Suite* s : all_suites())
        if (s->name() == name) return s;
    return nullptr;
}

const Suite* suite_for_dataset(std::string_view dataset) {
    for (const Suite* s : all_suites()) {
        const auto names = s->dataset_names();
        if (std::find(names.begin(), names.end(), dataset) != names.end()) return s;
    }
    return nullptr;
}

std::vector<std::string> expand_dataset_names(const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& n : names) {
        const Suite* suite = n == "all" ? find_suite("memfail") : find_suite(n);
        if (!suite) {
            out.push_back(n);
            continue;
        }
        const auto all = suite->dataset_names();
        out.insert(out.end(), all.begin(), all.end());
    }
    return out;
}

std::vector<std::string> protocol_names() {
    std::vector<std::string> out = {"memfail", "paper"};
    for (const Suite* suite : all_suites())
        for (const auto& p : suite->protocols()) out.push_back(p);
    return out;
}

std::vector<std::string> known_dataset_names() {
    std::vector<std::string> known = {"all"};
    for (const Suite* suite : all_suites()) {
        known.push_back(suite->name());
        for (const auto& d : suite->dataset_names()) known.push_back(d);
    }
    return known;
}

}  // namespace memfail::suites

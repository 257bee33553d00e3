// SPDX-License-Identifier: MIT
// The write-integrity suite behind the Suite interface.
#include <memfail/suites/writ/answers.hpp>
#include <memfail/suites/writ/checks.hpp>
#include <memfail/suites/writ/generate.hpp>
#include <memfail/suites/writ/import_writ.hpp>
#include <memfail/suites/writ/rules.hpp>
#include <memfail/suites/writ/writ_suite.hpp>
#include <memfail/suites/writ/report.hpp>

#include <algorithm>

namespace memfail::suites::writ {

namespace {

class WritSuite final : public Suite {
public:
    std::string name() const override { return "writ"; }
    std::vector<std::string> dataset_names() const override {
        std::vector<std::string> out;
        for (const auto& c : categories()) out.push_back(dataset_name(c));
        return out;
    }
    Result<std::vector<data::Scenario>> generate(const std::string& dataset,
                                                 const GenerateOptions& options) const override {
        for (const auto& c : categories())
            if (dataset_name(c) == dataset) return generate_category(c, options);
        return make_error(ErrorKind::invalid_input, "unknown write-integrity dataset '" + dataset + "'");
    }
    std::vector<std::string> import_formats() const override { return {"writ"}; }
    Result<ImportResult> import(const std::string& format, const std::string& path) const override {
        if (format != "writ") return Suite::import(format, path);
        return import_writ_dir(path);
    }
    void validate(const data::Scenario& scenario, std::size_t line,
                  std::vector<data::Violation>& out) const override {
        validate_writ(scenario, line, out);
    }
    std::vector<CheckResult> check_memory(const CheckContext& context) const override {
        return check_writ_memory(context);
    }
    const report::SuiteReport* report() const override { return &writ_report(); }
    std::optional<AnswerGrade> grade_answer(const AnswerContext& context) const override {
        return grade_writ_answer(context);
    }
    bool takes_system_answer(const data::Probe& probe) const override { return probe.uses_v2(); }
    Result<void> check_setting(const std::string& name, const std::string& value) const override {
        return check_writ_setting(name, value);
    }
    std::vector<std::string> setting_names() const override { return writ_setting_names(); }
};

}  // namespace

const Suite& writ_suite() {
    static const WritSuite suite;
    return suite;
}

}  // namespace memfail::suites::writ

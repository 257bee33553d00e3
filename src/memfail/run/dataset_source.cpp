// SPDX-License-Identifier: MIT
// Dataset resolution for runs.
#include <memfail/core/spec.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/run/dataset_source.hpp>
#include <memfail/suites/suite.hpp>

#include <algorithm>
#include <filesystem>

namespace memfail::run {

namespace {

Result<void> add_file(const std::string& path, std::vector<LoadedDataset>& out) {
    MF_TRY_ASSIGN(auto loaded, data::read_jsonl(path));
    if (loaded.empty()) return make_error(ErrorKind::invalid_input, "dataset file holds no scenario", path);
    for (auto& l : loaded) {
        std::vector<data::Violation> violations;
        // Structure only: a suite's construction rules (`memfail datasets validate`) may refuse a
        // file a user trimmed or wrote by hand, which still runs.
        data::validate_structure(l.scenario, l.line, violations);
        if (!violations.empty()) {
            std::string message = std::to_string(violations.size()) +
                                  " structural violation(s); run `memfail datasets validate " + path +
                                  "` for all of them. First: " +
                                  data::format_violation(path, violations.front());
            return make_error(ErrorKind::invalid_input, message, path);
        }
        std::string hash = data::scenario_hash(l.scenario);
        out.push_back({std::move(l.scenario), path, std::move(hash)});
    }
    return {};
}

}  // namespace

Result<std::vector<LoadedDataset>> load_datasets(const std::vector<std::string>& names,
                                                 const std::string& data_dir, std::uint64_t seed) {
    const std::vector<std::string> expanded = suites::expand_dataset_names(names);
    if (!data_dir.empty()) {
        // A mistyped folder must not quietly turn into freshly generated data.
        std::error_code ec;
        if (!std::filesystem::is_directory(data_dir, ec))
            return make_error(std::filesystem::exists(data_dir, ec) ? ErrorKind::invalid_input : ErrorKind::not_found,
                              std::filesystem::exists(data_dir, ec) ? "--data-dir is not a folder"
                                                                    : "--data-dir names a folder that does not exist",
                              data_dir);
    }
    const std::vector<std::string> known = suites::known_dataset_names();
    std::vector<LoadedDataset> out;
    for (const auto& name : expanded) {
        if (const suites::Suite* suite = suites::suite_for_dataset(name)) {
            const std::string candidate = (std::filesystem::path(data_dir.empty() ? "." : data_dir) /
                                           (name + ".jsonl")).string();
            if (!data_dir.empty() && std::filesystem::exists(candidate)) {
                MF_TRY(add_file(candidate, out));
                continue;
            }
            MF_TRY_ASSIGN(auto scenarios, suite->generate(name, {seed, {}}));
            for (auto& scenario : scenarios) {
                std::string hash = data::scenario_hash(scenario);
                out.push_back({std::move(scenario), "generated (seed " + std::to_string(seed) + ")", std::move(hash)});
            }
            continue;
        }
        if (std::filesystem::exists(name)) {
            MF_TRY(add_file(name, out));
            continue;
        }
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        const std::string hint = did_you_mean(name, known);
        return make_error(ErrorKind::invalid_input, "'" + name + "' is neither a dataset or suite name (" + list +
                                                        ") nor an existing JSONL file" +
                                                        (hint.empty() ? std::string{} : " (" + hint + ")"));
    }
    return out;
}

}  // namespace memfail::run

// SPDX-License-Identifier: MIT
// Dataset resolution for runs.
#include <memfail/core/spec.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/run/dataset_source.hpp>
#include <memfail/suites/suite.hpp>

#include <algorithm>
#include <functional>
#include <filesystem>

namespace memfail::run {

namespace {

// What each scenario becomes as it is loaded: kept whole, or made a skeleton (shard parts).
using Shape = std::function<void(LoadedDataset&)>;

void add(LoadedDataset&& d, const Shape& shape, std::vector<LoadedDataset>& out) {
    if (shape) shape(d);
    out.push_back(std::move(d));
}

Result<void> add_file(const std::string& path, const Shape& shape, std::vector<LoadedDataset>& out) {
    std::size_t count = 0;
    MF_TRY(data::for_each_jsonl(path, [&](data::LoadedScenario&& l) -> Result<void> {
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
        add({std::move(l.scenario), path, std::move(hash)}, shape, out);
        ++count;
        return {};
    }));
    if (count == 0) return make_error(ErrorKind::invalid_input, "dataset file holds no scenario", path);
    return {};
}

Result<std::vector<LoadedDataset>> load(const std::vector<std::string>& names, const std::string& data_dir,
                                        std::uint64_t seed, const Shape& shape) {
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
                MF_TRY(add_file(candidate, shape, out));
                continue;
            }
            MF_TRY_ASSIGN(auto scenarios, suite->generate(name, {seed, {}}));
            for (auto& scenario : scenarios) {
                std::string hash = data::scenario_hash(scenario);
                add({std::move(scenario), "generated (seed " + std::to_string(seed) + ")", std::move(hash)}, shape, out);
            }
            continue;
        }
        if (std::filesystem::exists(name)) {
            MF_TRY(add_file(name, shape, out));
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

}  // namespace

Result<std::vector<LoadedDataset>> load_datasets(const std::vector<std::string>& names,
                                                 const std::string& data_dir, std::uint64_t seed) {
    return load(names, data_dir, seed, {});
}

Result<std::vector<LoadedDataset>> load_datasets_for_shard(const std::vector<std::string>& names,
                                                           const std::string& data_dir, std::uint64_t seed,
                                                           std::size_t limit, const std::vector<std::string>& modes,
                                                           const ShardSpec& shard) {
    // A skeleton keeps what the runner reads of a scenario it does not run: its hash and weight as
    // --limit leaves them (the runner limits and rehashes the scenarios it runs the same way).
    const auto skeleton = [limit](LoadedDataset& d) {
        d.weight = scenario_weight(d.scenario, limit);
        if (limit > 0 && d.scenario.probes.size() > limit) {
            d.scenario.probes.resize(limit);
            d.hash = data::scenario_hash(d.scenario);
        }
        d.scenario.sessions.clear();
        d.scenario.sessions.shrink_to_fit();
        d.scenario.probes.clear();
        d.scenario.probes.shrink_to_fit();
        d.skeleton = true;
    };
    MF_TRY_ASSIGN(const auto weighed, load(names, data_dir, seed, skeleton));
    std::vector<std::string> units;
    std::vector<std::uint64_t> weights;
    std::vector<std::size_t> unit_scenario;
    const std::vector<std::string> unit_modes = modes.empty() ? std::vector<std::string>{""} : modes;
    for (std::size_t i = 0; i < weighed.size(); ++i)
        for (const auto& mode : unit_modes) {
            units.push_back(mode_unit_id(weighed[i].scenario.id, mode));
            weights.push_back(weighed[i].weight);
            unit_scenario.push_back(i);
        }
    const std::vector<int> part = assign_shards(units, weights, shard.count);
    std::vector<bool> wanted(weighed.size(), false);
    for (std::size_t u = 0; u < units.size(); ++u)
        if (part[u] == shard.index - 1) wanted[unit_scenario[u]] = true;
    // Second pass: the same scenarios in the same order; this part's in full.
    std::size_t at = 0;
    MF_TRY_ASSIGN(auto loaded, load(names, data_dir, seed, [&](LoadedDataset& d) {
        const std::uint64_t weight = at < weighed.size() ? weighed[at].weight : 0;
        if (at < wanted.size() && wanted[at]) d.weight = weight;
        else skeleton(d);
        ++at;
    }));
    if (loaded.size() != weighed.size())
        return make_error(ErrorKind::io, "the dataset files changed while they were read twice for --shard");
    for (std::size_t i = 0; i < loaded.size(); ++i)
        if (loaded[i].scenario.id != weighed[i].scenario.id || loaded[i].weight != weighed[i].weight)
            return make_error(ErrorKind::io, "the dataset files changed while they were read twice for --shard",
                              loaded[i].origin);
    return loaded;
}

}  // namespace memfail::run

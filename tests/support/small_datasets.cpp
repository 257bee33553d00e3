// SPDX-License-Identifier: MIT
#include <support/small_datasets.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/jsonl.hpp>

namespace memfail::testing {

const std::vector<run::LoadedDataset>& generated_datasets() {
    static const std::vector<run::LoadedDataset> datasets = [] {
        auto loaded = run::load_datasets({"all"}, "", 42);
        MF_ASSERT(loaded.has_value(), "the generators must produce valid datasets");
        return std::move(loaded).value();
    }();
    return datasets;
}

std::vector<run::LoadedDataset> small_datasets(const std::vector<std::string>& names, std::size_t probes) {
    auto loaded = run::load_datasets(names, "", 42);
    MF_ASSERT(loaded.has_value(), "the generators must produce valid datasets");
    std::vector<run::LoadedDataset> out = std::move(loaded).value();
    for (auto& d : out) {
        if (d.scenario.probes.size() > probes) d.scenario.probes.resize(probes);
        d.hash = data::scenario_hash(d.scenario);
    }
    return out;
}

}  // namespace memfail::testing

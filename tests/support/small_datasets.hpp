// SPDX-License-Identifier: MIT
// The generated datasets cut down for tests that make model calls.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <memfail/run/dataset_source.hpp>

namespace memfail::testing {

// The five MemFail datasets (seed 42), generated once per test program and shared.
const std::vector<run::LoadedDataset>& generated_datasets();

// The first `probes` probes of each named dataset (seed 42; every session kept), rehashed.
std::vector<run::LoadedDataset> small_datasets(const std::vector<std::string>& names, std::size_t probes);

}  // namespace memfail::testing

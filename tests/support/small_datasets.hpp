// SPDX-License-Identifier: MIT
// The generated datasets cut down for tests that make model calls.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <memfail/run/dataset_source.hpp>

namespace memfail::testing {

// The first `probes` probes of each named dataset (seed 42; every session kept), rehashed.
std::vector<run::LoadedDataset> small_datasets(const std::vector<std::string>& names, std::size_t probes);

}  // namespace memfail::testing

// SPDX-License-Identifier: MIT
// The programmatic long-horizon profile dataset (DynamicMem's shape): per user, months of app logs
// across the apps of a phone and laptop, an evolving profile of attributes, habits and preferences
// that no log states outright, quarterly checkpoints, and two tasks per state key per checkpoint
// (state completion, personalized service) with gold evidence per field. Deterministic per seed
// and user index; words, state definitions and log templates are data files under lexicon/.
#pragma once
#include <cstdint>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::dynamic {

inline constexpr const char* k_dynamic_generator_version = "dynamic-gen/2";

struct GeneratorOptions {
    std::uint64_t seed = 42;
    int users = 1;
    int months = 15;     // a multiple of 3: one checkpoint per quarter
    double scale = 1.0;  // multiplies the routine (noise) volume; grounded events are not scaled
    // The share of noise logs that are look-alikes (the user's own kinds of call with values none
    // of their keys has: generate_logs.cpp). 0 by default: at 0.8 a shape-only filter keeps 84.9% of
    // a default user's logs (24.8% at 0), but the look-alikes come in volumes no user logs (dozens
    // of workouts a day), itself a tell; realistic rates per kind are still to be set.
    double lookalikes = 0.0;
};

// Reads the suite parameters "users" (1..1000), "months" (3..24, a multiple of 3) and "scale"
// (0.01..4) from options.params; an unknown name gets a did-you-mean hint.
Result<GeneratorOptions> generator_options(const suites::GenerateOptions& options);

// User `user_index` (0-based; its id is "dynamic-u001" for 0), fully determined by the seed and the
// index: the same whatever `users` is. Memory is bounded by this one user.
Result<data::Scenario> generate_user(const GeneratorOptions& options, int user_index);

}  // namespace memfail::suites::dynamic

// SPDX-License-Identifier: MIT
// The dynamic generator's working state for one user, shared by its three stages: the profile and
// its changes (generate_profile.cpp), the app logs (generate_logs.cpp), and the ground truth and
// tasks (generate_probes.cpp). Internal to the generator (namespace gen, like lexicon.hpp), so its
// names never meet those of the suite's other parts.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/dynamic/generate.hpp>
#include <memfail/suites/dynamic/lexicon.hpp>

namespace memfail::suites::dynamic::gen {

inline constexpr int k_window_months = 3;

// One profile state key of this user over every window.
struct KeyPlan {
    KeyPlan(std::string key_, data::StateFamily family_, std::string domain_, std::string label_, std::string group_)
        : key(std::move(key_)), family(family_), domain(std::move(domain_)), label(std::move(label_)), group(std::move(group_)) {}

    std::string key;  // "habits_state:long_run"
    data::StateFamily family = data::StateFamily::attribute;
    std::string domain, label, group;
    const HabitDef* habit = nullptr;
    const AttributeDef* attribute = nullptr;
    const PreferenceDef* preference = nullptr;
    std::vector<nlohmann::json> values;  // per window; null: it does not hold then
    std::vector<int> options;            // preferences: the option held per window (-1: none)
};

// That a log shows one leaf of a key's value as it was when logged. For collections the path is
// "items" and the leaf one item; for preferences "statement", "favors" or "avoids" and the option.
struct Evidence {
    std::size_t log = 0;  // index into UserPlan::logs
    int window = 0;
    std::string path;
    nlohmann::json leaf;
};

struct PendingLog {
    std::int64_t day = 0;  // days since the epoch
    int second = 0;        // of the day
    data::AppLog log;
};

struct UserPlan {
    GeneratorOptions options;
    int user = 0;
    std::string scenario_id;
    int windows = 0;
    std::vector<std::int64_t> window_start;  // days since the epoch; windows + 1 entries (the last: the end)
    std::vector<KeyPlan> keys;
    std::vector<const CauseDef*> causes;           // one per boundary: causes[w - 1] acts at window w
    std::vector<std::vector<std::string>> changed;  // per boundary: the keys it changed
    nlohmann::json profile = nlohmann::json::object();
    std::vector<PendingLog> logs;
    std::vector<std::vector<Evidence>> evidence;  // per key
    std::vector<std::string> log_ids;             // per pending log, once sessions are built
    std::size_t grounded = 0;                     // logs that evidence a field

    int window_of(std::int64_t day) const;
    std::int64_t checkpoint_day(int window) const { return window_start[window + 1] - 1; }
};

// Stage 1: who the user is, which keys they have, and every key's value per window.
void plan_profile(UserPlan& plan, const Lexicon& lexicon, Rng rng);
// Stage 2: the grounded logs (with their evidence) and the noise.
void emit_logs(UserPlan& plan, const Lexicon& lexicon, Rng rng);
// Sorts the logs into day sessions and gives them ids (fills plan.log_ids).
std::vector<data::Session> build_sessions(UserPlan& plan);
// Stage 3: checkpoints, the ground-truth profile and the tasks.
void build_ground_truth(const UserPlan& plan, const Lexicon& lexicon, data::Scenario& scenario);

// Shared helpers.
std::string readable_date(std::int64_t day);  // "March 31, 2024"
std::string family_prefix(data::StateFamily family);  // "habits_state"

}  // namespace memfail::suites::dynamic::gen

// SPDX-License-Identifier: MIT
// Stage names.
#include <memfail/grade/stage.hpp>

namespace memfail::grade {

const char* stage_name(Stage stage) {
    switch (stage) {
        case Stage::not_stored: return "not_stored";
        case Stage::summary_error: return "summary_error";
        case Stage::unverified: return "unverified";
        case Stage::not_retrieved: return "not_retrieved";
        case Stage::retrieved: return "retrieved";
        case Stage::reasoning_error: return "reasoning_error";
        case Stage::correct: return "correct";
    }
    return "not_stored";
}

std::optional<Stage> parse_stage(const std::string& name) {
    for (Stage s : {Stage::not_stored, Stage::summary_error, Stage::unverified, Stage::not_retrieved, Stage::retrieved,
                    Stage::reasoning_error, Stage::correct})
        if (name == stage_name(s)) return s;
    return std::nullopt;
}

bool is_memory_failure(Stage stage) {
    return stage == Stage::not_stored || stage == Stage::summary_error || stage == Stage::not_retrieved;
}

}  // namespace memfail::grade

// SPDX-License-Identifier: MIT
// Reading and writing scenarios as JSONL ("format": "memfail/1", one scenario per line).
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>

namespace memfail::data {

nlohmann::json to_json(const Scenario& scenario);
// One probe as it appears in a scenario's "probes" array (also what a results file records).
nlohmann::json to_json(const Probe& probe);
// One ledger event as it appears in a scenario's "ledger" array.
nlohmann::json to_json(const LedgerEvent& event);

// Parses one scenario. Errors are invalid_input with `where` set to the JSON path of the bad field
// ("probes[3].evidence[0].message_ids").
Result<Scenario> scenario_from_json(const nlohmann::json& j);

// A scenario with the line it came from.
struct LoadedScenario {
    Scenario scenario;
    std::size_t line = 0;
};

// Deepest nesting of arrays and objects a JSONL line may have; a deeper line is refused with
// "path:line: nesting deeper than 64" before it is parsed.
inline constexpr std::size_t k_max_json_depth = 64;

// Deepest nesting of arrays and objects in JSON `text`, brackets inside strings not counted. Stops
// as soon as it passes `limit` (returning a depth above it), so a hostile text costs one scan and no
// recursion, before any parser sees it.
std::size_t json_nesting_depth(std::string_view text, std::size_t limit = k_max_json_depth);

// Reads every scenario of a JSONL file. The first error stops reading and names "path:line: field".
Result<std::vector<LoadedScenario>> read_jsonl(const std::string& path);
// The same, one scenario at a time: `each` gets every scenario as it is read (and may keep it or
// not), so a file of any size is read in the memory of its largest line. An error from `each` or
// from reading stops there and is returned.
Result<void> for_each_jsonl(const std::string& path, const std::function<Result<void>(LoadedScenario&&)>& each);

// One scenario as its JSONL line (without the newline); an error names the scenario when its text
// is not UTF-8.
Result<std::string> scenario_line(const Scenario& scenario);

// Writes scenarios to `path` atomically: a temporary file beside it is renamed over `path` only once
// everything is written, so a failure never leaves a half-written file.
Result<void> write_jsonl(const std::string& path, const std::vector<Scenario>& scenarios);

// Hash of a scenario's canonical serialisation (keys sorted, no whitespace): names the exact data a
// run used.
std::string scenario_hash(const Scenario& scenario);

// Writes `content` to `path` through a temporary file and rename.
Result<void> write_file_atomically(const std::string& path, const std::string& content);
// The same for output too large to hold in memory: `produce` streams it into the temporary file;
// if it fails, or the write does, nothing appears under `path`.
Result<void> write_file_atomically(const std::string& path,
                                   const std::function<Result<void>(std::ostream&)>& produce);
Result<std::string> read_file(const std::string& path);

}  // namespace memfail::data

// SPDX-License-Identifier: MIT
// What the LoCoMo and LongMemEval importers share: their files' date forms, evidence facts with key
// details derived from the answer, notes capped per kind, and the streaming of a file whose top
// level is a list (one sample or instance in memory at a time).
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::benchmarks {

inline constexpr const char* k_suite = "benchmarks";

// LoCoMo's "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00Z" (also "8 May 2023", "May 8, 2023").
std::optional<std::string> locomo_date_time(std::string_view text);
// HaluMem's "Jan 15, 2029, 15:12:20" (naive time, no zone) -> "2029-01-15T15:12:20Z".
std::optional<std::string> halumem_date(std::string_view text);
// LongMemEval's "2023/05/20 (Sat) 02:21" -> "2023-05-20T02:21:00Z" (the weekday is not checked).
std::optional<std::string> longmemeval_date(std::string_view text);

// An evidence fact citing one message. Its key detail `answer` (identity) is the longest run of
// the answer's words the message holds (suites::memfail_suite::longest_word_run), tried for each of
// `answers` in turn, when that run carries at least half of the answer's content words; its
// statements are then the message's sentences holding the run. Otherwise (the answer is worded
// differently, computed, or a rubric) the fact has no key detail and details_complete = false:
// the judge decides its summary stage.
data::EvidenceFact answer_fact(const std::string& id, const data::Message& message,
                               const std::vector<std::string>& answers);
// The answer and the parts its words may be found in: the whole, then each ';' or ',' part.
std::vector<std::string> answer_forms(const std::string& answer);

// Notes of one import; a kind after its first 20 notes is counted, and one note per kind says how
// many more there were (a systematic quirk of a 500-instance file must not bury the others).
class Notes {
public:
    explicit Notes(std::vector<ImportNote>& out) : m_out(out) {}
    void add(const std::string& kind, const std::string& file, const std::string& path, const std::string& message);
    // A note said once per import, whatever the number of elements it applies to.
    void once(const std::string& kind, const std::string& file, const std::string& path, const std::string& message) {
        if (m_once.insert(kind).second) m_out.push_back({file, path, message});
    }
    // The "... more" notes; call once, at the end.
    void finish(const std::string& file);

private:
    std::vector<ImportNote>& m_out;
    std::map<std::string, std::size_t> m_counts;
    std::set<std::string> m_once;
};

// A chat turn {role, content, ...} as LongMemEval and HaluMem write one: its role ("user" or
// "assistant"; another, or none, is taken as user, noted) and content. Empty (noted, the turn
// skipped) when it is no object or has no content. Keys beyond role, content and `known` are noted,
// not kept. `noun` names it in notes ("turn", "message").
struct ChatTurn {
    std::string role, content;
};
std::optional<ChatTurn> read_chat_turn(const nlohmann::json& turn, const std::string& path, const std::string& noun,
                                       const std::vector<std::string>& known, Notes& notes, const std::string& file);

// Gives a scenario id not used yet in this import: `id`, else "<id>-2", "<id>-3", ... (noted).
std::string unique_scenario_id(const std::string& id, std::set<std::string>& used, Notes& notes,
                               const std::string& file, const std::string& path);

// Streams `file`, a JSON list, handing each element (parsed alone, then dropped) to `on_element`
// with its index. Returns the reason the file cannot be read (not valid JSON, not a list, nesting
// deeper than data::k_max_json_depth) or what `on_element` returned to stop; nullopt when read to
// the end. Exceptions other than the parser's (a sink's) pass through.
std::optional<std::string> stream_list(
    const std::string& file, const std::function<std::optional<std::string>(const nlohmann::json&, std::size_t)>& on_element);

using ScenarioSink = std::function<Result<void>(data::Scenario&&)>;

// Makes one scenario of one element of a file (its index, the file, the import's notes).
using ElementImporter =
    std::function<Result<data::Scenario>(const nlohmann::json&, std::size_t, const std::string&, Notes&)>;

// The driver the importers share: streams `path`, makes one scenario of each element with
// `import_element` (an error skips the element, noted and counted in elements_skipped), gives it a
// unique id and hands it to `sink`. An unreadable file, or one with no importable element, is an
// error naming it. `what` names an element in messages ("LoCoMo sample").
Result<ImportResult> import_list_file(const std::string& path, const std::string& what, const ElementImporter& import_element,
                                      const ScenarioSink& sink);
// The same over a JSONL file, one element per line (HaluMem): a line that is not JSON, or nests
// deeper than data::k_max_json_depth, is skipped like an element that cannot be imported; a file
// that opens with '[' is read as a JSON list.
Result<ImportResult> import_jsonl_file(const std::string& path, const std::string& what,
                                       const ElementImporter& import_element, const ScenarioSink& sink);

}  // namespace memfail::suites::benchmarks

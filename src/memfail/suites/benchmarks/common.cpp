// SPDX-License-Identifier: MIT
#include <memfail/suites/benchmarks/common.hpp>

#include <memfail/core/dates.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/import_json.hpp>
#include <memfail/suites/memfail/import_csv.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace memfail::suites::benchmarks {

using nlohmann::json;

namespace {

constexpr std::size_t k_max_notes_per_kind = 20;

std::optional<int> month_number(std::string_view name) {
    static const char* const k_months[] = {"january", "february", "march",     "april",   "may",      "june",
                                           "july",    "august",   "september", "october", "november", "december"};
    if (name.size() < 3) return std::nullopt;
    for (int m = 0; m < 12; ++m) {
        const std::string_view full(k_months[m]);
        if (name == full || (name.size() <= full.size() && full.substr(0, name.size()) == name && name.size() == 3) ||
            (name == "sept" && m == 8))
            return m + 1;
    }
    return std::nullopt;
}

std::optional<int> whole_number(std::string_view s) {
    if (s.empty() || s.size() > 6) return std::nullopt;
    int n = 0;
    for (const char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
        n = n * 10 + (c - '0');
    }
    return n;
}

std::size_t content_words(std::string_view phrase) {
    std::size_t n = 0;
    for (const auto& w : text::words(phrase)) n += !text::is_stopword(w);
    return n;
}

struct StreamStop {
    std::string message;
};

}  // namespace

std::optional<std::string> locomo_date_time(std::string_view raw) {
    std::string s = text::to_lower(raw);
    for (auto& c : s)
        if (c == ',') c = ' ';
    std::vector<std::string> tokens;
    for (const auto& t : text::split(s, ' '))
        if (!t.empty()) tokens.push_back(t);
    int minutes = 0;
    std::size_t i = 0;
    // "1:56 pm on ..." (the time is optional: a bare date is midnight).
    const auto on = std::find(tokens.begin(), tokens.end(), "on");
    if (on != tokens.end()) {
        std::string clock;
        for (auto it = tokens.begin(); it != on; ++it) clock += (clock.empty() ? "" : " ") + *it;
        const auto parsed = dates::parse_clock(clock);
        if (!parsed) return std::nullopt;
        minutes = *parsed;
        i = static_cast<std::size_t>(on - tokens.begin()) + 1;
    }
    if (tokens.size() != i + 3) return std::nullopt;
    std::optional<int> day = whole_number(tokens[i]), month = month_number(tokens[i + 1]);
    if (!day || !month) {  // "May 8 2023"
        day = whole_number(tokens[i + 1]);
        month = month_number(tokens[i]);
    }
    const std::optional<int> year = whole_number(tokens[i + 2]);
    if (!day || !month || !year || *year < 1000) return std::nullopt;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", *year, *month, *day);
    const auto date = dates::parse_date(buf);  // refuses 31 April
    if (!date) return std::nullopt;
    return dates::format_iso({*date, minutes / 60, minutes % 60, 0});
}

std::optional<std::string> halumem_date(std::string_view raw) {
    // "Jan 15, 2029, 15:12:20": the month's name, the day, the year, a 24-hour clock with seconds.
    std::string s = text::to_lower(text::trim(raw));
    for (auto& c : s)
        if (c == ',') c = ' ';
    std::vector<std::string> tokens;
    for (const auto& t : text::split(s, ' '))
        if (!t.empty()) tokens.push_back(t);
    if (tokens.size() != 4) return std::nullopt;
    const std::optional<int> month = month_number(tokens[0]), day = whole_number(tokens[1]), year = whole_number(tokens[2]);
    if (!month || !day || !year || *year < 1000) return std::nullopt;
    const auto clock = text::split(tokens[3], ':');
    if (clock.size() != 3) return std::nullopt;
    const std::optional<int> h = whole_number(clock[0]), m = whole_number(clock[1]), sec = whole_number(clock[2]);
    if (!h || !m || !sec || clock[1].size() != 2 || clock[2].size() != 2 || *h > 23 || *m > 59 || *sec > 59)
        return std::nullopt;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", *year, *month, *day);
    const auto date = dates::parse_date(buf);
    if (!date) return std::nullopt;
    return dates::format_iso({*date, *h, *m, *sec});
}

std::optional<std::string> longmemeval_date(std::string_view raw) {
    const std::string s(text::trim(raw));
    const auto space = s.find(' ');
    std::string day = s.substr(0, space);
    for (auto& c : day)
        if (c == '/') c = '-';
    const auto date = dates::parse_date(day);
    if (!date) return std::nullopt;
    int minutes = 0;
    if (space != std::string::npos) {
        const auto last = s.rfind(' ');
        const auto clock = dates::parse_clock(s.substr(last + 1));
        if (!clock) return std::nullopt;
        minutes = *clock;
    }
    return dates::format_iso({*date, minutes / 60, minutes % 60, 0});
}

std::vector<std::string> answer_forms(const std::string& answer) {
    std::vector<std::string> forms = {answer};
    for (const auto& part : text::split(text::replace_all(answer, ";", ","), ',')) {
        const std::string p(text::trim(part));
        if (!p.empty() && p != answer) forms.push_back(p);
    }
    return forms;
}

data::EvidenceFact answer_fact(const std::string& id, const data::Message& message,
                               const std::vector<std::string>& answers) {
    data::EvidenceFact fact;
    fact.id = id;
    fact.text = message.content;
    fact.message_ids = {message.id};
    std::vector<std::string> sentences = text::split_sentences(message.content);
    if (sentences.empty()) sentences.emplace_back(text::trim(message.content));
    for (const auto& answer : answers) {
        const std::size_t wanted = content_words(answer);
        if (wanted == 0) continue;
        const std::string run = memfail_suite::longest_word_run(answer, sentences, 1);
        if (run.empty() || 2 * content_words(run) < wanted) continue;
        fact.key_details.push_back({"answer", {run}, data::DetailRole::identity});
        const std::string normalized_run = text::normalize(run);
        for (const auto& sentence : sentences)
            if (text::normalized_contains(text::normalize(sentence), normalized_run)) fact.statements.push_back(sentence);
        return fact;
    }
    fact.details_complete = false;
    return fact;
}

void Notes::add(const std::string& kind, const std::string& file, const std::string& path, const std::string& message) {
    if (++m_counts[kind] <= k_max_notes_per_kind) m_out.push_back({file, path, message});
}

void Notes::finish(const std::string& file) {
    for (const auto& [kind, n] : m_counts)
        if (n > k_max_notes_per_kind)
            m_out.push_back({file, "", std::to_string(n - k_max_notes_per_kind) + " more note(s) of this kind (" + kind +
                                           ") not listed"});
}

std::optional<ChatTurn> read_chat_turn(const json& turn, const std::string& path, const std::string& noun,
                                       const std::vector<std::string>& known, Notes& notes, const std::string& file) {
    using import_json::at;
    if (!turn.is_object()) {
        notes.add(noun, file, path, "a " + noun + " must be an object, not " + import_json::type_name(turn) + "; skipped");
        return std::nullopt;
    }
    const auto content = turn.find("content");
    if (content == turn.end() || !content->is_string() || text::trim(content->get_ref<const std::string&>()).empty()) {
        notes.add("empty " + noun, file, path, "a " + noun + " without content; skipped");
        return std::nullopt;
    }
    ChatTurn out;
    out.role = turn.contains("role") && turn["role"].is_string() ? turn["role"].get<std::string>() : "";
    if (out.role != "user" && out.role != "assistant") {
        notes.add("role", file, at(path, "role"),
                  "role " + (out.role.empty() ? std::string("missing") : "'" + out.role + "'") + "; taken as user");
        out.role = "user";
    }
    for (auto it = turn.begin(); it != turn.end(); ++it)
        if (it.key() != "role" && it.key() != "content" && std::find(known.begin(), known.end(), it.key()) == known.end())
            notes.add("unknown " + noun + " key " + it.key(), file, at(path, it.key()), "unknown key of a " + noun + "; not kept");
    out.content = content->get<std::string>();
    return out;
}

std::string unique_scenario_id(const std::string& id, std::set<std::string>& used, Notes& notes,
                               const std::string& file, const std::string& path) {
    if (used.insert(id).second) return id;
    std::string unique;
    for (std::size_t n = 2; unique.empty() || used.count(unique); ++n) unique = data::clean_id(id + "-" + std::to_string(n));
    used.insert(unique);
    notes.add("duplicate id", file, path, "scenario id '" + id + "' is already used; imported as '" + unique + "'");
    return unique;
}

std::optional<std::string> stream_list(
    const std::string& file, const std::function<std::optional<std::string>(const json&, std::size_t)>& on_element) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::string("cannot open the file");
    std::size_t index = 0;
    bool list = false;
    try {
        const json root = json::parse(in, [&](int depth, json::parse_event_t event, json& parsed) -> bool {
            switch (event) {
                case json::parse_event_t::object_start:
                case json::parse_event_t::array_start:
                    if (depth == 0) {
                        if (event == json::parse_event_t::object_start)
                            throw StreamStop{"the file must hold a JSON list, not an object"};
                        list = true;
                    }
                    if (static_cast<std::size_t>(depth) >= data::k_max_json_depth)
                        throw StreamStop{"nesting deeper than " + std::to_string(data::k_max_json_depth)};
                    return true;
                case json::parse_event_t::key: return true;
                case json::parse_event_t::object_end:
                case json::parse_event_t::array_end:
                case json::parse_event_t::value:
                    if (depth != 1) return true;
                    if (auto stop = on_element(parsed, index++)) throw StreamStop{*stop};
                    return false;  // dropped: the list never grows
            }
            return true;
        });
        if (!list) return std::string("the file must hold a JSON list, not ") + import_json::type_name(root);
    } catch (const StreamStop& stop) {
        return stop.message;
    } catch (const json::parse_error& e) {
        return "not valid JSON: " + import_json::parser_message(e.what());
    } catch (const json::exception& e) {
        return "not readable JSON: " + import_json::parser_message(e.what());
    }
    return std::nullopt;
}

namespace {

// What the list and the JSONL drivers share: each element imported (a parser's or an importer's
// exception read as the element's error), given a unique id, checked against the structural rules
// and handed to the sink, or skipped with a note and counted.
class ElementLoop {
public:
    ElementLoop(const std::string& path, const ScenarioSink& sink) : m_path(path), m_sink(sink) { m_out.files_read = 1; }

    // Returns false once the sink has refused a scenario (sink_error() says why).
    bool take(const std::string& where, const std::function<Result<data::Scenario>()>& import) {
        Result<data::Scenario> s = make_error(ErrorKind::internal, "not imported");
        try {
            s = import();
        } catch (const json::exception& e) {
            s = make_error(ErrorKind::internal, "internal error (" + import_json::parser_message(e.what()) + "); please report this");
        }
        if (s) {
            s->id = unique_scenario_id(s->id, m_ids, m_notes, m_path, where);
            std::vector<data::Violation> violations;
            data::validate_structure(*s, 0, violations);
            if (!violations.empty())
                s = make_error(ErrorKind::internal, "the imported scenario breaks a structural rule (" +
                                                        violations.front().field + ": " + violations.front().message +
                                                        "); please report this");
        }
        if (!s) {
            if (m_first_skip.empty()) m_first_skip = where + ": " + s.error().message;
            m_notes.add("skipped", m_path, where, "not imported: " + s.error().message);
            ++m_out.elements_skipped;
            return true;
        }
        if (auto written = m_sink(std::move(*s)); !written) {
            m_sink_error = written.error();
            return false;
        }
        ++m_imported;
        return true;
    }

    Notes& notes() { return m_notes; }
    const std::optional<Error>& sink_error() const { return m_sink_error; }

    // The result; an error naming the file when nothing was imported (`empty`: why, when nothing was
    // even read).
    Result<ImportResult> finish(const std::string& what, const std::string& empty) {
        m_notes.finish(m_path);
        if (m_imported == 0)
            return make_error(ErrorKind::invalid_input,
                              "no " + what + " imported" + (m_first_skip.empty() ? ": " + empty : "; the first: " + m_first_skip),
                              m_path);
        return std::move(m_out);
    }

private:
    const std::string& m_path;
    const ScenarioSink& m_sink;
    ImportResult m_out;
    Notes m_notes{m_out.notes};
    std::set<std::string> m_ids;
    std::size_t m_imported = 0;
    std::string m_first_skip;
    std::optional<Error> m_sink_error;
};

struct LineStop {
    std::string message;
};

}  // namespace

Result<ImportResult> import_list_file(const std::string& path, const std::string& what, const ElementImporter& import_element,
                                      const ScenarioSink& sink) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return make_error(ErrorKind::invalid_input, "a folder; expected " + what + "'s JSON file", path);
    ElementLoop loop(path, sink);
    const auto stopped = stream_list(path, [&](const json& element, std::size_t index) -> std::optional<std::string> {
        if (!loop.take(import_json::at("", index), [&] { return import_element(element, index, path, loop.notes()); }))
            return std::string("stopped");
        return std::nullopt;
    });
    if (loop.sink_error()) return *loop.sink_error();
    if (stopped) return make_error(ErrorKind::invalid_input, *stopped, path);
    return loop.finish(what, "the list is empty");
}

Result<ImportResult> import_jsonl_file(const std::string& path, const std::string& what,
                                       const ElementImporter& import_element, const ScenarioSink& sink) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return make_error(ErrorKind::invalid_input, "a folder; expected " + what + "s' JSONL file", path);
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(ErrorKind::io, "cannot open the file", path);
    // A JSON list of the same elements (a converted copy) is read as a list.
    char first = 0;
    while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
    }
    if (in && first == '[') {
        in.close();
        return import_list_file(path, what, import_element, sink);
    }
    in.clear();
    in.seekg(0);
    ElementLoop loop(path, sink);
    std::size_t line_number = 0;
    std::string line;
    while (std::getline(in, line)) {
        ++line_number;
        if (text::trim(line).empty()) continue;
        const bool go_on = loop.take("line " + std::to_string(line_number), [&]() -> Result<data::Scenario> {
            try {
                const json element = json::parse(line, [](int depth, json::parse_event_t, json&) -> bool {
                    if (static_cast<std::size_t>(depth) >= data::k_max_json_depth)
                        throw LineStop{"nesting deeper than " + std::to_string(data::k_max_json_depth)};
                    return true;
                });
                return import_element(element, line_number - 1, path, loop.notes());
            } catch (const LineStop& stop) {
                return make_error(ErrorKind::invalid_input, stop.message);
            } catch (const json::parse_error& e) {
                return make_error(ErrorKind::invalid_input, "not valid JSON (" + import_json::parser_message(e.what()) + ")");
            }
        });
        if (!go_on) return *loop.sink_error();
    }
    if (in.bad()) return make_error(ErrorKind::io, "reading failed at line " + std::to_string(line_number + 1), path);
    return loop.finish(what, "the file is empty");
}

}  // namespace memfail::suites::benchmarks

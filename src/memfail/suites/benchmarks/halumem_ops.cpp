// SPDX-License-Identifier: MIT
#include <memfail/suites/benchmarks/halumem_ops.hpp>

#include <memfail/core/text.hpp>
#include <memfail/grade/evidence.hpp>
#include <memfail/suites/benchmarks/import_halumem.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites::benchmarks {

namespace ev = grade::evidence;
using nlohmann::json;

namespace {

constexpr int k_update_top_k = 10;  // HaluMem's update probe: search_memory(..., top_k=10)

// The content stems of a text, its person's name aside (every memory of a user may name them).
std::set<std::string> content_stems(std::string_view text, const std::set<std::string>& name) {
    std::set<std::string> out;
    for (const auto& w : ev::tokens(text))
        if (!ev::is_function_word(w)) {
            std::string s = ev::stem(w);
            if (!name.count(s)) out.insert(std::move(s));
        }
    return out;
}

// A text as the rules read it: its units' tokens, labels taken off, in one run.
ev::Tokens phrase_tokens(const std::string& text) {
    ev::Tokens out;
    for (const auto& unit : ev::split_units(text))
        for (auto& w : ev::tokens(ev::strip_labels(unit))) out.push_back(std::move(w));
    return out;
}

// Memories as the rules read them.
struct Texts {
    std::vector<ev::Tokens> tokens;
    std::vector<std::string> canonical;
    std::set<std::string> stems;

    void add(const std::string& text) {
        ev::Tokens t = phrase_tokens(text);
        for (const auto& w : t) stems.insert(ev::stem(w));
        canonical.push_back(ev::join(t));
        tokens.push_back(std::move(t));
    }
    bool holds_phrase(const ev::Tokens& phrase) const {
        return !phrase.empty() && std::any_of(tokens.begin(), tokens.end(), [&](const ev::Tokens& t) { return ev::contains(t, phrase); });
    }
    bool holds_any(const std::set<std::string>& wanted) const {
        return std::any_of(wanted.begin(), wanted.end(), [&](const std::string& s) { return stems.count(s) > 0; });
    }
};


std::string text_of(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The memory points of one session (meta.memory_points, as the importer keeps them).
std::vector<const json*> points_of(const data::Scenario& s, const std::string& session_id) {
    std::vector<const json*> out;
    const auto all = s.meta.find("memory_points");
    if (all == s.meta.end() || !all->is_array()) return out;
    for (const auto& p : *all)
        if (p.is_object() && text_of(p, "session") == session_id && !text_of(p, "memory_content").empty()) out.push_back(&p);
    return out;
}

bool is_interference(const json& p) { return text_of(p, "memory_source") == "interference"; }


std::string lines(const json& list) {
    std::string out;
    if (!list.is_array()) return out;
    for (const auto& v : list)
        if (v.is_string()) out += "- " + v.get<std::string>() + "\n";
    return out.empty() ? "(none)\n" : out;
}

SessionCheck integrity_check(const char* name, const json& point, const Texts& added,
                             const std::vector<std::string>& added_texts, const std::set<std::string>& name_stems) {
    SessionCheck c;
    c.name = name;
    c.item = text_of(point, "id");
    const std::string content = text_of(point, "memory_content");
    const auto w = point.find("importance");
    c.weight = w != point.end() && w->is_number() ? w->get<double>() : 0.0;
    const bool resist = c.name == "false_memory";
    const auto stems = content_stems(content, name_stems);
    if (added.tokens.empty()) {
        c.score = resist ? 1.0 : 0.0;
        c.label = resist ? "resisted" : "missing";
        c.detail = "the session added no memory";
    } else if (added.holds_phrase(phrase_tokens(content))) {
        c.score = resist ? 0.0 : 1.0;
        c.label = resist ? "stored" : "covered";
        c.detail = "a memory the session added holds the point word for word";
    } else if (!stems.empty() && !added.holds_any(stems)) {
        c.score = resist ? 1.0 : 0.0;
        c.label = resist ? "resisted" : "missing";
        c.detail = "no memory the session added holds any content word of the point";
    } else {
        c.grader = "rules_unsure";
        c.detail = "the memories the session added share words with the point but do not hold it word for word; only a "
                   "judge can tell whether they cover it";
        c.judge_input = {{"kind", "integrity"}, {"memories", json(added_texts)}, {"point", content}};
    }
    return c;
}

// ---- The judge's prompts (after HaluMem's eval_tools.py: its rubric and output fields) ----------

llm::ChatRequest judge_request(const grade::LlmJudge& judge, const char* stage, const char* schema_name,
                               json schema, std::string prompt) {
    llm::ChatRequest r;
    r.role = llm::Role::judge;
    r.stage = stage;
    r.model = judge.options().model;
    r.messages.push_back({"user", std::move(prompt)});
    r.schema = llm::JsonSchema{schema_name, std::move(schema)};
    return r;
}

json enum_schema(const char* key, std::vector<std::string> values, const char* reason_key = "reasoning") {
    return {{"type", "object"},
            {"properties", {{reason_key, {{"type", "string"}}}, {key, {{"type", "string"}, {"enum", values}}}}},
            {"required", json::array({reason_key, key})},
            {"additionalProperties", false}};
}

std::string integrity_prompt(const json& in) {
    return "You check whether an AI memory system kept a key piece of information from a conversation.\n\n"
           "Memories the system wrote:\n" + lines(in.value("memories", json::array())) +
           "\nExpected memory point:\n" + text_of(in, "point") +
           "\n\nScore how well the memories hold the expected point:\n"
           "2: it is stated or clearly implied, with every element of a compound point right (meaning counts, not wording)\n"
           "1: it is partly there: some elements missing, a key field (time, person, relation) partly wrong, or it is only "
           "hedged (\"might\", \"probably\")\n"
           "0: it is absent or stated wrongly\n"
           "Memories beyond the point do not lower the score; when memories conflict, take the best score any supports.\n"
           "Reply with a JSON object: {\"reasoning\": \"...\", \"score\": \"2\" | \"1\" | \"0\"}.";
}

std::string accuracy_prompt(const json& in) {
    return "You check one memory an AI memory system wrote against the conversation it came from.\n\n"
           "Conversation:\n" + text_of(in, "dialogue") +
           "\nReference memory points of the conversation:\n" + lines(in.value("golden", json::array())) +
           "\nMemory to check:\n" + text_of(in, "memory") +
           "\n\nSplit the memory into its separate pieces of information and check each against the conversation and "
           "the reference points only (no outside knowledge).\n"
           "accuracy_score: 2 if every piece is supported; 1 if some are; 0 if none is, or it contradicts them (a "
           "hallucinated memory).\n"
           "is_included_in_golden_memories: true if every piece concerns something (a field or slot) the reference "
           "points cover, whatever its value; otherwise false.\n"
           "Reply with a JSON object: {\"reason\": \"...\", \"accuracy_score\": \"2\" | \"1\" | \"0\", "
           "\"is_included_in_golden_memories\": \"true\" | \"false\"}.";
}

std::string update_prompt(const json& in) {
    return "You check whether an AI memory system took in an update of something it knew.\n\n"
           "Memories the system returned for the update:\n" + lines(in.value("memories", json::array())) +
           "\nThe update (what is true now):\n" + text_of(in, "updated") +
           "\nWhat it replaces:\n" + text_of(in, "original") +
           "\n\nClassify:\n"
           "Correct: a memory holds every piece of the update with its key fields exact, and the replaced information is "
           "gone or marked as out of date.\n"
           "Hallucination: a memory about the update states it with wrong facts.\n"
           "Omission: no memory is about the update, or the update's key information is missing.\n"
           "Other: none of these.\n"
           "Reply with a JSON object: {\"reason\": \"...\", \"evaluation_result\": \"Correct\" | \"Hallucination\" | "
           "\"Omission\" | \"Other\"}.";
}

std::optional<int> score_of(const json& reply, const char* key) {
    const auto it = reply.find(key);
    if (it == reply.end()) return std::nullopt;
    std::string v = it->is_string() ? std::string(text::trim(it->get<std::string>())) : it->is_number_integer() ? std::to_string(it->get<int>()) : "";
    if (v == "0" || v == "1" || v == "2") return v[0] - '0';
    return std::nullopt;
}

}  // namespace

bool halumem_checks_session(const data::Scenario& scenario, std::size_t session) {
    if (scenario.dataset != k_halumem || session >= scenario.sessions.size()) return false;
    return !points_of(scenario, scenario.sessions[session].id).empty();
}

std::vector<SessionCheck> halumem_check_session(const SessionCheckContext& context) {
    const data::Scenario& s = context.scenario;
    const data::Session& session = s.sessions[context.session];
    std::vector<SessionCheck> out;
    std::set<std::string> name_stems;
    for (const auto& w : ev::tokens(text_of(s.meta, "user_name"))) name_stems.insert(ev::stem(w));

    Texts added;
    std::vector<std::string> added_texts;
    for (std::size_t i : context.added) {
        added.add(context.held[i].text);
        added_texts.push_back(context.held[i].text);
    }
    const auto points = points_of(s, session.id);
    std::set<std::string> real_canonical;
    json golden = json::array();
    for (const json* p : points)
        if (!is_interference(*p)) {
            real_canonical.insert(ev::join(phrase_tokens(text_of(*p, "memory_content"))));
            golden.push_back(text_of(*p, "memory_content"));
        }

    for (const json* p : points) {
        const std::string content = text_of(*p, "memory_content");
        if (is_interference(*p)) {
            if (real_canonical.count(ev::join(phrase_tokens(content)))) {
                SessionCheck c;
                c.name = "false_memory";
                c.item = text_of(*p, "id");
                c.label = "excluded";
                c.weight = 0;
                c.detail = "the interference point has the text of a real point of its session: storing it cannot be told "
                           "from storing the real fact";
                out.push_back(std::move(c));
                continue;
            }
            out.push_back(integrity_check("false_memory", *p, added, added_texts, name_stems));
            continue;
        }
        const bool update = p->value("is_update", false) && p->contains("original_memories") &&
                            (*p)["original_memories"].is_array() && !(*p)["original_memories"].empty();
        if (update) {
            auto hits = context.retrieve(content, k_update_top_k);
            if (!hits) {
                SessionCheck c;
                c.name = "update";
                c.item = text_of(*p, "id");
                c.label = "error";
                c.detail = "retrieving for the update failed: " + hits.error().describe();
                out.push_back(std::move(c));
                continue;
            }
            if (!hits->empty()) {
                SessionCheck c;
                c.name = "update";
                c.item = text_of(*p, "id");
                Texts top;
                std::vector<std::string> top_texts;
                for (const auto& h : *hits) {
                    top.add(h.memory.text);
                    top_texts.push_back(h.memory.text);
                }
                const auto stems = content_stems(content, name_stems);
                if (!stems.empty() && !top.holds_any(stems)) {
                    c.score = 0;
                    c.label = "omission";
                    c.detail = "none of the top " + std::to_string(k_update_top_k) + " memories holds any content word of the update";
                } else {
                    c.grader = "rules_unsure";
                    c.detail = "the top " + std::to_string(k_update_top_k) +
                               " memories share words with the update; only a judge can tell whether they hold it and drop what it replaces";
                    std::string original;
                    for (const auto& o : (*p)["original_memories"])
                        if (o.is_string()) original += (original.empty() ? "" : "\n") + o.get<std::string>();
                    c.judge_input = {{"kind", "update"}, {"memories", json(top_texts)}, {"updated", content}, {"original", original}};
                }
                out.push_back(std::move(c));
                continue;
            }
            // Nothing retrieved: HaluMem grades the point for extraction instead.
        }
        out.push_back(integrity_check("extraction", *p, added, added_texts, name_stems));
    }

    // Accuracy of what the session added.
    std::string dialogue;
    for (const auto& m : session.messages) dialogue += m.role + ": " + m.content + "\n";
    for (std::size_t j = 0; j < context.added.size(); ++j) {
        const memory::Memory& m = context.held[context.added[j]];
        SessionCheck c;
        c.name = "accuracy";
        c.item = m.id;
        if (real_canonical.count(added.canonical[j])) {
            c.score = 1;
            c.label = "target";
            c.detail = "the memory is a real point of the session word for word";
        } else {
            c.grader = "rules_unsure";
            c.detail = "only a judge can tell whether the memory's information is supported by the dialogue";
            c.judge_input = {{"kind", "accuracy"}, {"dialogue", dialogue}, {"golden", golden}, {"memory", m.text}};
        }
        out.push_back(std::move(c));
    }
    return out;
}

Result<void> halumem_judge_session_check(const data::Scenario& scenario, SessionCheck& check, grade::LlmJudge& judge) {
    (void)scenario;
    const json& in = check.judge_input;
    const std::string kind = text_of(in, "kind");
    if (kind == "integrity") {
        MF_TRY_ASSIGN(json reply, judge.ask(judge_request(judge, "judge.halumem_integrity", "memfail_judge_halumem_integrity",
                                                          enum_schema("score", {"0", "1", "2"}), integrity_prompt(in))));
        const auto score = score_of(reply, "score");
        if (!score) return make_error(ErrorKind::invalid_output, "the integrity judge gave no score of 0, 1 or 2");
        const bool resist = check.name == "false_memory";
        check.score = resist ? (*score == 0 ? 1.0 : 0.0) : *score / 2.0;
        check.label = resist ? (*score == 0 ? "resisted" : "stored") : (*score == 2 ? "covered" : *score == 1 ? "partial" : "missing");
        check.grader = "llm";
        check.detail = text_of(reply, "reasoning");
        return {};
    }
    if (kind == "accuracy") {
        json schema = {{"type", "object"},
                       {"properties",
                        {{"reason", {{"type", "string"}}},
                         {"accuracy_score", {{"type", "string"}, {"enum", {"0", "1", "2"}}}},
                         {"is_included_in_golden_memories", {{"type", "string"}, {"enum", {"true", "false"}}}}}},
                       {"required", json::array({"reason", "accuracy_score", "is_included_in_golden_memories"})},
                       {"additionalProperties", false}};
        MF_TRY_ASSIGN(json reply, judge.ask(judge_request(judge, "judge.halumem_accuracy", "memfail_judge_halumem_accuracy",
                                                          std::move(schema), accuracy_prompt(in))));
        const auto score = score_of(reply, "accuracy_score");
        if (!score) return make_error(ErrorKind::invalid_output, "the accuracy judge gave no accuracy_score of 0, 1 or 2");
        const auto included = reply.find("is_included_in_golden_memories");
        const bool target = included != reply.end() &&
                            ((included->is_string() && text::to_lower(included->get<std::string>()) == "true") ||
                             (included->is_boolean() && included->get<bool>()));
        check.score = *score / 2.0;
        check.label = target ? "target" : "other";
        check.grader = "llm";
        check.detail = text_of(reply, "reason");
        return {};
    }
    if (kind == "update") {
        MF_TRY_ASSIGN(json reply, judge.ask(judge_request(judge, "judge.halumem_update", "memfail_judge_halumem_update",
                                                          enum_schema("evaluation_result", {"Correct", "Hallucination", "Omission", "Other"}, "reason"),
                                                          update_prompt(in))));
        const std::string result = text::to_lower(text::trim(text_of(reply, "evaluation_result")));
        if (result != "correct" && result != "hallucination" && result != "omission" && result != "other")
            return make_error(ErrorKind::invalid_output, "the update judge gave no Correct, Hallucination, Omission or Other");
        check.label = result;
        check.score = result == "correct" ? 1.0 : 0.0;
        check.grader = "llm";
        check.detail = text_of(reply, "reason");
        return {};
    }
    return make_error(ErrorKind::internal, "no judge for a HaluMem check of kind '" + kind + "'");
}

}  // namespace memfail::suites::benchmarks

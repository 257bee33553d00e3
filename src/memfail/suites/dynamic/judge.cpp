// SPDX-License-Identifier: MIT
// The dynamic suite's judge prompts and reply readers. The prompt texts are memfail's own, kept here
// as constants beside the code that fills them in (as llm/prompts.cpp keeps the staged judge's);
// changing one means bumping k_dynamic_judge_version.
#include <memfail/suites/dynamic/judge.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <memfail/core/text.hpp>
#include <memfail/llm/schema_check.hpp>

namespace memfail::suites::dynamic {

using nlohmann::json;

namespace {

constexpr const char* k_fields_stage = "judge.dynamic_fields";
constexpr const char* k_attribution_stage = "judge.dynamic_attribution";

constexpr const char* k_fields_system =
    "You grade a structured output that an assistant produced for a user from what it remembers of the "
    "user's app activity. The output fills a JSON template. Most of its fields were checked mechanically; "
    "the fields listed for you could not be, usually because they are free text or are written differently "
    "from the reference. Grade each listed field on its own, comparing the predicted value with the "
    "reference value in the light of the request.\n\n"
    "core_correct: true when the predicted value gets the substance of the reference right: the same "
    "entity, place, routine, time, amount or choice, however it is worded or formatted (abbreviations, "
    "synonyms and different units or date formats are fine). false when it names something else, gives an "
    "outdated or competing value, hedges between several values, or is empty or a placeholder.\n"
    "detail_quality: 2 when the predicted value is as specific and complete as the reference; 1 when it is "
    "vaguer, partial, or adds details the reference does not support; 0 when it is wrong or empty.\n"
    "A clock time within 5 minutes of the reference is the same timing (core_correct true) with "
    "detail_quality 1; only the exact time earns 2. Further off, it is another time.\n\n"
    "For each field, write a short analysis first, then the two verdicts. Give exactly one judgment for "
    "every listed field, copying its path exactly, and none for any other field.";

constexpr const char* k_attribution_system =
    "You diagnose why an assistant's answer about a user went wrong, by looking at what its memory system "
    "handed it. You see the request, the reference answer, the assistant's answer, the memories retrieved "
    "for the request, the app logs that actually support the reference answer (the gold evidence), and logs "
    "of outdated or competing values when there are any. Choose the first label that applies:\n"
    "- irrelevant_evidence: no retrieved memory carries anything from the gold evidence, the outdated or "
    "competing logs, or this part of the user's life at all.\n"
    "- identity_miss: no retrieved memory establishes which entity, routine or comparison the answer is "
    "about: only another routine, another entity, another item or another pair of compared options came "
    "back, so the right one could not be told apart. One memory that establishes it is enough. A routine is "
    "the same routine at its earlier times and places; an earlier employer, item or preference is another "
    "one.\n"
    "- detail_miss: the retrieved memories identify the right thing but lack a detail the answer needs "
    "(a time, a day, an amount, a setting), also when an outdated value stands in its place.\n"
    "- conflated: the retrieved memories hold everything the answer needs and also an outdated or "
    "competing value beside it, so the two could be mixed up.\n"
    "- all_clear: the retrieved memories hold everything the reference answer needs; the assistant went "
    "wrong on its own.\n"
    "Judge only from what the retrieved memories contain, not from what the assistant wrote.";

const char* task_description(const std::string& task) {
    if (task == "state_completion") return "state completion: fill in the user's current state as a JSON record";
    if (task == "personalized_service")
        return "personalized service: prepare a reminder, search or form for the user from what is known about them";
    return "fill in a JSON template from what is known about the user";
}

const char* role_description(data::FieldRole role) {
    switch (role) {
        case data::FieldRole::identity: return "identity: which entity or routine the output is about";
        case data::FieldRole::core: return "core: the value asked for";
        case data::FieldRole::detail: return "detail: precision beyond the core value";
    }
    return "core: the value asked for";
}

std::string context_block(const std::string& task, const std::string& state_key, const std::string& question,
                          const json& reference, const std::string& predicted) {
    return "TASK: " + std::string(task_description(task)) + "\nSTATE: " + state_key + "\n\nREQUEST:\n" + question +
           "\n\nREFERENCE OUTPUT:\n" + reference.dump(2) + "\n\nPREDICTED OUTPUT:\n" +
           (text::trim(predicted).empty() ? std::string("(empty)") : predicted) + "\n";
}

Error bad_reply(const char* stage, std::string what) {
    return make_error(ErrorKind::invalid_output, "the judge's reply " + std::move(what), stage);
}

// Writes `value` at `path` ("a.b", "a[0].b"), creating objects and arrays on the way.
void set_at(json& root, const std::string& path, const json& value) {
    json* at = &root;
    std::size_t i = 0;
    const std::size_t n = path.size();
    while (i < n) {
        if (path[i] == '[') {
            const std::size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1) return;
            std::size_t index = 0;
            for (std::size_t k = i + 1; k < close; ++k) {
                if (path[k] < '0' || path[k] > '9') return;
                index = index * 10 + static_cast<std::size_t>(path[k] - '0');
            }
            if (!at->is_array()) *at = json::array();
            while (at->size() <= index) at->push_back(nullptr);
            at = &(*at)[index];
            i = close + 1;
        } else {
            std::size_t end = i;
            while (end < n && path[end] != '.' && path[end] != '[') ++end;
            if (!at->is_object()) *at = json::object();
            at = &(*at)[path.substr(i, end - i)];
            i = end;
        }
        if (i < n && path[i] == '.') ++i;
    }
    *at = value;
}

// The JSON a chat reply carries: its schema-checked object, else the first object in its text.
Result<json> reply_json(const llm::ChatReply& reply, const char* stage) {
    if (reply.json) return *reply.json;
    auto parsed = parse_answer_json(reply.content);
    if (!parsed) return bad_reply(stage, "carried no JSON object");
    return std::move(parsed).value();
}

}  // namespace

json reference_output(const data::Probe& probe) {
    json out = probe.answer_template.is_null() ? json::object() : probe.answer_template;
    for (const auto& f : probe.fields) set_at(out, f.path, f.expected);
    return out;
}

FieldJudgeInput field_judge_input(const data::Probe& probe, const std::string& predicted,
                                  const std::vector<FieldGrade>& grades) {
    FieldJudgeInput in;
    in.task = probe.task;
    in.state_key = probe.state_key;
    in.question = probe.question;
    in.reference = reference_output(probe);
    in.predicted = predicted;
    for (const auto& f : probe.fields) {
        const bool open = grades.empty() || std::any_of(grades.begin(), grades.end(), [&](const FieldGrade& g) {
                              return g.path == f.path && !g.core_correct;
                          });
        if (open) in.fields.push_back(f);
    }
    return in;
}

json field_judge_schema(const std::vector<std::string>& paths) {
    const json judgment = {
        {"type", "object"},
        {"properties",
         {{"field_path", {{"type", "string"}, {"enum", paths}}},
          {"analysis", {{"type", "string"}}},
          {"core_correct", {{"type", "boolean"}}},
          {"detail_quality", {{"type", "integer"}, {"minimum", 0}, {"maximum", 2}}}}},
        {"required", {"field_path", "analysis", "core_correct", "detail_quality"}},
        {"additionalProperties", false}};
    return {{"type", "object"},
            {"properties",
             {{"field_judgments",
               {{"type", "array"}, {"items", judgment}, {"minItems", paths.size()}, {"maxItems", paths.size()}}}}},
            {"required", {"field_judgments"}},
            {"additionalProperties", false}};
}

llm::ChatRequest field_judge_request(const std::string& model, const FieldJudgeInput& input) {
    std::string user = context_block(input.task, input.state_key, input.question, input.reference, input.predicted);
    user += "\nFIELDS TO JUDGE:\n";
    std::vector<std::string> paths;
    for (const auto& f : input.fields) {
        user += "- " + f.path + " (" + data::field_type_name(f.type) + "; " + role_description(f.role) +
                "): reference " + f.expected.dump();
        if (!f.options.empty()) user += "; allowed values: " + text::join(f.options, ", ");
        user += "\n";
        paths.push_back(f.path);
    }
    llm::ChatRequest r;
    r.role = llm::Role::judge;
    r.stage = k_fields_stage;
    r.model = model;
    r.messages = {{"system", k_fields_system}, {"user", std::move(user)}};
    r.schema = llm::JsonSchema{k_field_judge_schema, field_judge_schema(paths)};
    return r;
}

Result<std::vector<FieldGrade>> parse_field_judgments(const json& reply, const std::vector<std::string>& paths) {
    const char* stage = k_fields_stage;
    if (!reply.is_object()) return bad_reply(stage, "is not a JSON object");
    const auto list = reply.find("field_judgments");
    if (list == reply.end() || !list->is_array()) return bad_reply(stage, "has no field_judgments list");
    std::map<std::string, FieldGrade> judged;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const json& j = (*list)[i];
        const std::string at = "field_judgments[" + std::to_string(i) + "]";
        if (!j.is_object()) return bad_reply(stage, at + " is not an object");
        const auto path = j.find("field_path");
        if (path == j.end() || !path->is_string()) return bad_reply(stage, at + " names no field_path");
        const std::string p = path->get<std::string>();
        if (std::find(paths.begin(), paths.end(), p) == paths.end())
            return bad_reply(stage, "judges the field '" + p + "', which it was not asked about");
        if (judged.count(p)) return bad_reply(stage, "judges the field '" + p + "' more than once");
        const auto core = j.find("core_correct");
        if (core == j.end() || !core->is_boolean())
            return bad_reply(stage, "gives no boolean core_correct for '" + p + "'");
        const auto detail = j.find("detail_quality");
        if (detail == j.end() || !detail->is_number() || std::floor(detail->get<double>()) != detail->get<double>() ||
            detail->get<double>() < 0 || detail->get<double>() > 2)
            return bad_reply(stage, "gives no detail_quality of 0, 1 or 2 for '" + p + "'");
        const auto analysis = j.find("analysis");
        if (analysis == j.end() || !analysis->is_string())
            return bad_reply(stage, "gives no analysis for '" + p + "'");
        FieldGrade g;
        g.path = p;
        g.core_correct = core->get<bool>();
        g.detail_quality = static_cast<int>(detail->get<double>());
        g.score = field_score(*g.core_correct, g.detail_quality);
        g.decided_by = Decider::judge;
        g.reason = analysis->get<std::string>();
        judged.emplace(p, std::move(g));
    }
    std::vector<std::string> missing;
    for (const auto& p : paths)
        if (!judged.count(p)) missing.push_back("'" + p + "'");
    if (!missing.empty()) return bad_reply(stage, "does not judge " + text::join(missing, ", "));
    // Whatever the checks above do not name (an extra property, say) the schema still refuses.
    if (auto problem = llm::validate(reply, field_judge_schema(paths))) return bad_reply(stage, "is malformed: " + *problem);
    std::vector<FieldGrade> out;
    out.reserve(paths.size());
    for (const auto& p : paths) out.push_back(judged.at(p));
    return out;
}

Result<std::vector<FieldGrade>> parse_field_judgments(const llm::ChatReply& reply, const std::vector<std::string>& paths) {
    MF_TRY_ASSIGN(json j, reply_json(reply, k_fields_stage));
    return parse_field_judgments(j, paths);
}

std::vector<FieldGrade> merge_judged(std::vector<FieldGrade> rule, const std::vector<FieldGrade>& judged) {
    for (auto& g : rule) {
        if (g.core_correct) continue;
        for (const auto& j : judged)
            if (j.path == g.path) {
                g = j;
                break;
            }
    }
    return rule;
}

json attribution_judge_schema() {
    json labels = json::array();
    for (auto a : {Attribution::irrelevant_evidence, Attribution::identity_miss, Attribution::detail_miss,
                   Attribution::conflated, Attribution::all_clear})
        labels.push_back(attribution_name(a));
    return {{"type", "object"},
            {"properties", {{"label", {{"type", "string"}, {"enum", labels}}}, {"reason", {{"type", "string"}}}}},
            {"required", {"label", "reason"}},
            {"additionalProperties", false}};
}

llm::ChatRequest attribution_judge_request(const std::string& model, const AttributionJudgeInput& input) {
    auto numbered = [](const char* title, const std::vector<std::string>& items, const char* none) {
        std::string out = std::string(title) + ":\n";
        if (items.empty()) return out + none + "\n";
        for (std::size_t i = 0; i < items.size(); ++i) out += std::to_string(i + 1) + ". " + items[i] + "\n";
        return out;
    };
    std::string user = context_block(input.task, input.state_key, input.question, input.reference, input.predicted);
    user += "\n" + numbered("RETRIEVED MEMORIES", input.retrieved, "(none)");
    user += "\n" + numbered("GOLD EVIDENCE", input.gold, "(none)");
    user += "\n" + numbered("OUTDATED OR COMPETING LOGS", input.conflicting, "(none)");
    llm::ChatRequest r;
    r.role = llm::Role::judge;
    r.stage = k_attribution_stage;
    r.model = model;
    r.messages = {{"system", k_attribution_system}, {"user", std::move(user)}};
    r.schema = llm::JsonSchema{k_attribution_judge_schema, attribution_judge_schema()};
    return r;
}

Result<AttributionJudgment> parse_attribution_judgment(const json& reply) {
    const char* stage = k_attribution_stage;
    if (!reply.is_object()) return bad_reply(stage, "is not a JSON object");
    const auto label = reply.find("label");
    if (label == reply.end() || !label->is_string()) return bad_reply(stage, "names no label");
    const auto parsed = parse_attribution(label->get<std::string>());
    if (!parsed) return bad_reply(stage, "names the unknown label '" + label->get<std::string>() + "'");
    const auto reason = reply.find("reason");
    if (reason == reply.end() || !reason->is_string()) return bad_reply(stage, "gives no reason");
    if (auto problem = llm::validate(reply, attribution_judge_schema())) return bad_reply(stage, "is malformed: " + *problem);
    return AttributionJudgment{*parsed, reason->get<std::string>()};
}

Result<AttributionJudgment> parse_attribution_judgment(const llm::ChatReply& reply) {
    MF_TRY_ASSIGN(json j, reply_json(reply, k_attribution_stage));
    return parse_attribution_judgment(j);
}

Result<llm::ChatReply> DynamicJudge::ask(llm::ChatRequest request) {
    request.temperature = m_options.temperature;
    request.seed = m_options.seed;
    return m_client.chat(request);
}

Result<std::vector<FieldGrade>> DynamicJudge::fields(const data::Probe& probe, const std::string& predicted,
                                                     const std::vector<FieldGrade>& rule_grades) {
    const bool open = std::any_of(rule_grades.begin(), rule_grades.end(),
                                  [](const FieldGrade& g) { return !g.core_correct; });
    if (!open) return rule_grades;
    const FieldJudgeInput input = field_judge_input(probe, predicted, rule_grades);
    std::vector<std::string> paths;
    for (const auto& f : input.fields) paths.push_back(f.path);
    MF_TRY_ASSIGN(llm::ChatReply reply, ask(field_judge_request(m_options.model, input)));
    MF_TRY_ASSIGN(auto judged, parse_field_judgments(reply, paths));
    return merge_judged(rule_grades, judged);
}

Result<AttributionJudgment> DynamicJudge::attribution(const AttributionJudgeInput& input) {
    MF_TRY_ASSIGN(llm::ChatReply reply, ask(attribution_judge_request(m_options.model, input)));
    return parse_attribution_judgment(reply);
}

}  // namespace memfail::suites::dynamic

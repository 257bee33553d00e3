// SPDX-License-Identifier: MIT
// fake-llm server: script validation, rule matching, OpenAI-shaped replies and faults over
// cpp-httplib.
#include "fake_llm.hpp"
#include "extractive.hpp"
#include "generative.hpp"

#include <memfail/core/hash.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/text/tokenizer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

namespace memfail::fake_llm {

namespace {

using json = nlohmann::json;

constexpr std::size_t k_max_body_bytes = 32u * 1024u * 1024u;
constexpr std::int64_t k_default_stall_ms = 60000;
constexpr std::int64_t k_max_delay_ms = 3600 * 1000;
constexpr auto k_sleep_slice = std::chrono::milliseconds(10);

// ---------------------------------------------------------------------------------------------
// The script, parsed once into a form the request handlers can match quickly.

enum class Endpoint { chat, embeddings };

enum class Fault {
    none,
    http_429,
    http_500,
    http_503,
    http_400,
    stall,
    malformed_json,
    schema_violation
};

const std::vector<std::string> k_fault_names = {
    "http_429", "http_500", "http_503", "http_400", "stall", "malformed_json", "schema_violation"};
const std::vector<std::string> k_finish_reasons = {"stop", "length", "content_filter",
                                                   "tool_calls"};
const std::vector<std::string> k_top_keys = {"rules", "default", "description", "extractive"};
const std::vector<std::string> k_action_keys = {"reply",       "json",  "delay_ms",     "fault",
                                                "retry_after", "usage", "finish_reason"};
const std::vector<std::string> k_rule_only_keys = {"name", "description", "match", "times"};
const std::vector<std::string> k_match_keys = {"endpoint",           "schema", "model", "contains",
                                               "last_user_contains", "regex"};

bool is_content_fault(Fault f) {
    return f == Fault::malformed_json || f == Fault::schema_violation;
}

std::string_view fault_name(Fault f) {
    if (f == Fault::none)
        return "none";
    return k_fault_names[static_cast<std::size_t>(f) - 1];
}

struct Action {
    enum class Content { auto_reply, text, json_value };
    Content content = Content::auto_reply;
    std::string text;
    json value;
    std::optional<std::int64_t> delay_ms;
    Fault fault = Fault::none;
    std::optional<std::int64_t> retry_after;
    bool usage = true;
    std::string finish_reason = "stop";
};

struct Rule {
    std::string label;
    Endpoint endpoint = Endpoint::chat;
    std::optional<std::string> schema;
    std::optional<std::string> model;
    std::optional<std::string> contains;
    std::optional<std::string> last_user_contains;
    std::optional<std::regex> regex;
    std::optional<std::int64_t> times;
    Action action;
    // How many matching requests this rule has claimed; atomic because handlers run in parallel.
    std::unique_ptr<std::atomic<std::int64_t>> used =
        std::make_unique<std::atomic<std::int64_t>>(0);
};

struct Script {
    std::vector<Rule> rules;
    Action fallback; // "default", or the auto action when the script has none
    // Requests no rule matches whose schema is one of memfail's memory-system prompts get the
    // extractive stand-in's reply (extractive.hpp) instead of the fallback's content.
    bool extractive = false;
};

std::string join_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

Error script_error(const std::string& where, std::string message) {
    return make_error(ErrorKind::invalid_input, std::move(message), where);
}

std::string list_names(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

bool contains_name(const std::vector<std::string>& names, const std::string& key) {
    return std::find(names.begin(), names.end(), key) != names.end();
}

// Rejects keys outside `known`, with a typo hint or a note on where the key belongs instead.
Result<void> check_keys(const json& obj, const std::string& path,
                        const std::vector<std::string>& known, const std::string& level) {
    for (const auto& item : obj.items()) {
        const std::string& key = item.key();
        if (contains_name(known, key))
            continue;
        const std::string where = join_path(path, key);
        std::string hint = did_you_mean(key, known);
        if (!hint.empty())
            return script_error(where, "unknown key; " + hint);
        if (level == "rule" && contains_name(k_match_keys, key))
            return script_error(where, "unknown key; conditions such as '" + key +
                                           "' go inside \"match\"");
        if (level == "match" &&
            (contains_name(k_action_keys, key) || contains_name(k_rule_only_keys, key)))
            return script_error(where, "unknown key; '" + key +
                                           "' belongs to the rule, not inside \"match\"");
        if (level == "default" &&
            (contains_name(k_rule_only_keys, key) || contains_name(k_match_keys, key)))
            return script_error(where, "unknown key; \"default\" holds only the action fields (" +
                                           list_names(k_action_keys) + ")");
        return script_error(where, "unknown key; expected one of: " + list_names(known));
    }
    return {};
}

const char* json_type_name(const json& v) {
    if (v.is_null())
        return "null";
    if (v.is_boolean())
        return "a boolean";
    if (v.is_number())
        return "a number";
    if (v.is_string())
        return "a string";
    if (v.is_array())
        return "an array";
    return "an object";
}

Result<std::int64_t> get_int(const json& v, const std::string& where, std::int64_t lo,
                             std::int64_t hi) {
    if (!v.is_number_integer())
        return script_error(where, std::string("must be a whole number, got ") + json_type_name(v) +
                                       (v.is_number() ? " with a fraction" : ""));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
        return script_error(where, "must be at most " + std::to_string(hi));
    const auto n = v.get<std::int64_t>();
    if (n < lo || n > hi)
        return script_error(where, "must be between " + std::to_string(lo) + " and " +
                                       std::to_string(hi) + ", got " + std::to_string(n));
    return n;
}

Result<std::string> get_string(const json& v, const std::string& where) {
    if (!v.is_string())
        return script_error(where, std::string("must be a string, got ") + json_type_name(v));
    return v.get<std::string>();
}

Result<std::string> get_choice(const json& v, const std::string& where,
                               const std::vector<std::string>& allowed, const std::string& what) {
    MF_TRY_ASSIGN(std::string s, get_string(v, where));
    if (contains_name(allowed, s))
        return s;
    std::string hint = did_you_mean(s, allowed);
    return script_error(where, "unknown " + what + " '" + s + "'" +
                                   (hint.empty() ? "" : " (" + hint + ")") +
                                   "; expected one of: " + list_names(allowed));
}

// Parses the action fields of a rule or of "default". `endpoint` is empty for "default", which
// serves both endpoints (fields that mean nothing for embeddings are ignored there).
Result<void> parse_action(const json& obj, const std::string& path,
                          std::optional<Endpoint> endpoint, Action& action) {
    const bool embeddings = endpoint && *endpoint == Endpoint::embeddings;
    if (obj.contains("reply") && obj.contains("json"))
        return script_error(path, "has both \"reply\" and \"json\"; give at most one");
    if (obj.contains("reply")) {
        MF_TRY_ASSIGN(action.text, get_string(obj["reply"], join_path(path, "reply")));
        action.content = Action::Content::text;
    }
    if (obj.contains("json")) {
        action.value = obj["json"];
        action.content = Action::Content::json_value;
    }
    if (obj.contains("delay_ms")) {
        MF_TRY_ASSIGN(action.delay_ms,
                      get_int(obj["delay_ms"], join_path(path, "delay_ms"), 0, k_max_delay_ms));
    }
    if (obj.contains("fault")) {
        MF_TRY_ASSIGN(std::string name,
                      get_choice(obj["fault"], join_path(path, "fault"), k_fault_names, "fault"));
        const auto it = std::find(k_fault_names.begin(), k_fault_names.end(), name);
        action.fault = static_cast<Fault>(1 + (it - k_fault_names.begin()));
        if (action.content != Action::Content::auto_reply)
            return script_error(path,
                                std::string("has both \"fault\" and \"") +
                                    (action.content == Action::Content::text ? "reply" : "json") +
                                    "\"; a fault replaces the reply");
        if (embeddings && is_content_fault(action.fault))
            return script_error(join_path(path, "fault"),
                                "'" + name +
                                    "' corrupts a chat reply and does not apply to embeddings");
    }
    if (obj.contains("retry_after")) {
        const std::string where = join_path(path, "retry_after");
        MF_TRY_ASSIGN(action.retry_after, get_int(obj["retry_after"], where, 0, 86400));
        if (action.fault != Fault::http_429 && action.fault != Fault::http_503)
            return script_error(where, "applies only with \"fault\": \"http_429\" or \"http_503\"");
    }
    if (obj.contains("usage")) {
        const json& v = obj["usage"];
        if (!v.is_boolean())
            return script_error(join_path(path, "usage"),
                                std::string("must be true or false, got ") + json_type_name(v));
        action.usage = v.get<bool>();
    }
    if (obj.contains("finish_reason")) {
        MF_TRY_ASSIGN(action.finish_reason,
                      get_choice(obj["finish_reason"], join_path(path, "finish_reason"),
                                 k_finish_reasons, "finish_reason"));
    }
    if (embeddings) {
        for (const char* key : {"reply", "json", "finish_reason"})
            if (obj.contains(key))
                return script_error(join_path(path, key),
                                    "does not apply to an embeddings rule (vectors are "
                                    "always generated from the input)");
    }
    return {};
}

Result<void> parse_match(const json& match, const std::string& path, Rule& rule) {
    if (!match.is_object())
        return script_error(path, std::string("must be an object, got ") + json_type_name(match));
    MF_TRY(check_keys(match, path, k_match_keys, "match"));
    if (match.contains("endpoint")) {
        MF_TRY_ASSIGN(std::string e, get_choice(match["endpoint"], join_path(path, "endpoint"),
                                                {"chat", "embeddings"}, "endpoint"));
        rule.endpoint = e == "chat" ? Endpoint::chat : Endpoint::embeddings;
    }
    auto opt_string = [&](const char* key, std::optional<std::string>& out) -> Result<void> {
        if (!match.contains(key))
            return {};
        MF_TRY_ASSIGN(out, get_string(match[key], join_path(path, key)));
        return {};
    };
    MF_TRY(opt_string("schema", rule.schema));
    MF_TRY(opt_string("model", rule.model));
    MF_TRY(opt_string("contains", rule.contains));
    MF_TRY(opt_string("last_user_contains", rule.last_user_contains));
    if (match.contains("regex")) {
        const std::string where = join_path(path, "regex");
        MF_TRY_ASSIGN(std::string pattern, get_string(match["regex"], where));
        try {
            rule.regex.emplace(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            return script_error(where, std::string("invalid regular expression: ") + e.what());
        }
    }
    if (rule.endpoint == Endpoint::embeddings) {
        for (const char* key : {"schema", "last_user_contains"})
            if (match.contains(key))
                return script_error(join_path(path, key),
                                    "does not apply to embeddings requests, which have no "
                                    "schema or messages");
    }
    return {};
}

Result<std::shared_ptr<Script>> parse_script(const json& doc) {
    auto script = std::make_shared<Script>();
    if (!doc.is_object())
        return script_error("", std::string("the script must be a JSON object, got ") +
                                    json_type_name(doc));
    MF_TRY(check_keys(doc, "", k_top_keys, "top"));
    if (doc.contains("description") && !doc["description"].is_string())
        return script_error("description", "must be a string");
    if (doc.contains("extractive")) {
        if (!doc["extractive"].is_boolean())
            return script_error("extractive", std::string("must be true or false, got ") +
                                                  json_type_name(doc["extractive"]));
        script->extractive = doc["extractive"].get<bool>();
    }
    if (doc.contains("rules")) {
        const json& rules = doc["rules"];
        if (!rules.is_array())
            return script_error("rules",
                                std::string("must be an array, got ") + json_type_name(rules));
        for (std::size_t i = 0; i < rules.size(); ++i) {
            const std::string path = "rules[" + std::to_string(i) + "]";
            const json& r = rules[i];
            if (!r.is_object())
                return script_error(path,
                                    std::string("must be an object, got ") + json_type_name(r));
            std::vector<std::string> known = k_rule_only_keys;
            known.insert(known.end(), k_action_keys.begin(), k_action_keys.end());
            MF_TRY(check_keys(r, path, known, "rule"));
            Rule rule;
            rule.label = path;
            if (r.contains("name")) {
                MF_TRY_ASSIGN(rule.label, get_string(r["name"], path + ".name"));
                if (rule.label.empty())
                    return script_error(path + ".name", "must not be empty");
            }
            if (r.contains("description") && !r["description"].is_string())
                return script_error(path + ".description", "must be a string");
            if (r.contains("match"))
                MF_TRY(parse_match(r["match"], path + ".match", rule));
            if (r.contains("times")) {
                MF_TRY_ASSIGN(rule.times, get_int(r["times"], path + ".times", 0, INT64_MAX / 2));
            }
            MF_TRY(parse_action(r, path, rule.endpoint, rule.action));
            script->rules.push_back(std::move(rule));
        }
    }
    if (doc.contains("default")) {
        const json& d = doc["default"];
        if (!d.is_object())
            return script_error("default",
                                std::string("must be an object, got ") + json_type_name(d));
        MF_TRY(check_keys(d, "default", k_action_keys, "default"));
        MF_TRY(parse_action(d, "default", std::nullopt, script->fallback));
    }
    return script;
}

// ---------------------------------------------------------------------------------------------
// Auto replies for JSON schemas.

const json* resolve_ref(const json& root, const std::string& ref) {
    if (ref == "#")
        return &root;
    if (ref.rfind("#/", 0) != 0)
        return nullptr;
    try {
        const json::json_pointer pointer(ref.substr(1));
        if (!root.contains(pointer))
            return nullptr;
        return &root.at(pointer);
    } catch (const json::exception&) {
        return nullptr;
    }
}

std::string pick_type(const json& schema) {
    if (schema.contains("type")) {
        const json& t = schema["type"];
        if (t.is_string())
            return t.get<std::string>();
        if (t.is_array()) {
            // Prefer a real value over null for ["string", "null"].
            for (const auto& x : t)
                if (x.is_string() && x != "null")
                    return x.get<std::string>();
            if (!t.empty() && t[0].is_string())
                return t[0].get<std::string>();
        }
    }
    if (schema.contains("properties") || schema.contains("required"))
        return "object";
    if (schema.contains("items") || schema.contains("prefixItems"))
        return "array";
    return "string";
}

json minimal_string(const json& schema) {
    std::string s = "ok";
    const std::string format = schema.value("format", "");
    if (format == "date-time")
        s = "1970-01-01T00:00:00Z";
    else if (format == "date")
        s = "1970-01-01";
    else if (format == "time")
        s = "00:00:00";
    else if (format == "email")
        s = "ok@example.com";
    else if (format == "uri" || format == "url")
        s = "https://example.com/";
    else if (format == "uuid")
        s = "00000000-0000-0000-0000-000000000000";
    const auto min_len = schema.value("minLength", std::int64_t{0});
    const auto max_len = schema.value("maxLength", std::int64_t{-1});
    if (min_len > static_cast<std::int64_t>(s.size()))
        s.append(static_cast<std::size_t>(std::min<std::int64_t>(min_len, 1 << 20)) - s.size(),
                 'k');
    if (max_len >= 0 && static_cast<std::int64_t>(s.size()) > max_len)
        s.resize(static_cast<std::size_t>(max_len));
    return s;
}

json minimal_number(const json& schema, bool integer) {
    auto num = [&](const char* key) -> std::optional<double> {
        if (schema.contains(key) && schema[key].is_number())
            return schema[key].get<double>();
        return std::nullopt;
    };
    double v = 0;
    if (auto lo = num("minimum"))
        v = *lo;
    else if (auto xlo = num("exclusiveMinimum"))
        v = integer ? std::floor(*xlo) + 1 : *xlo + 1;
    else if (auto hi = num("maximum"); hi && *hi < 0)
        v = *hi;
    else if (auto xhi = num("exclusiveMaximum"); xhi && *xhi <= 0)
        v = integer ? std::ceil(*xhi) - 1 : *xhi - 1;
    if (integer)
        return static_cast<std::int64_t>(std::ceil(v));
    return v;
}

// Makes the i-th copy of an array item distinct when the schema asks for uniqueItems.
json vary(json v, std::size_t i) {
    if (i == 0)
        return v;
    if (v.is_string())
        return v.get<std::string>() + std::to_string(i);
    if (v.is_number_integer())
        return v.get<std::int64_t>() + static_cast<std::int64_t>(i);
    if (v.is_number())
        return v.get<double>() + static_cast<double>(i);
    return v;
}

json minimal_at(const json& schema, const json& root, int depth) {
    if (depth > 64 || !schema.is_object())
        return "ok"; // `true` schemas accept anything
    if (schema.contains("$ref") && schema["$ref"].is_string()) {
        if (const json* target = resolve_ref(root, schema["$ref"].get<std::string>()))
            return minimal_at(*target, root, depth + 1);
        return "ok";
    }
    if (schema.contains("const"))
        return schema["const"];
    if (schema.contains("enum") && schema["enum"].is_array() && !schema["enum"].empty())
        return schema["enum"][0];
    for (const char* key : {"anyOf", "oneOf"})
        if (schema.contains(key) && schema[key].is_array() && !schema[key].empty())
            return minimal_at(schema[key][0], root, depth + 1);
    if (schema.contains("allOf") && schema["allOf"].is_array()) {
        // Merge the parts' properties and required lists: enough for the schemas prompts use.
        json merged = schema;
        merged.erase("allOf");
        for (const auto& part : schema["allOf"]) {
            const json* p = &part;
            if (part.is_object() && part.contains("$ref") && part["$ref"].is_string())
                if (const json* t = resolve_ref(root, part["$ref"].get<std::string>()))
                    p = t;
            if (!p->is_object())
                continue;
            for (const auto& item : p->items()) {
                if (item.key() == "properties" && item.value().is_object())
                    merged["properties"].update(item.value());
                else if (item.key() == "required" && item.value().is_array())
                    for (const auto& r : item.value())
                        merged["required"].push_back(r);
                else if (!merged.contains(item.key()))
                    merged[item.key()] = item.value();
            }
        }
        return minimal_at(merged, root, depth + 1);
    }
    const std::string type = pick_type(schema);
    if (type == "object") {
        json out = json::object();
        if (!schema.contains("required") || !schema["required"].is_array())
            return out;
        for (const auto& name_json : schema["required"]) {
            if (!name_json.is_string())
                continue;
            const std::string name = name_json.get<std::string>();
            const json* prop = nullptr;
            if (schema.contains("properties") && schema["properties"].is_object() &&
                schema["properties"].contains(name))
                prop = &schema["properties"][name];
            else if (schema.contains("additionalProperties") &&
                     schema["additionalProperties"].is_object())
                prop = &schema["additionalProperties"];
            out[name] = prop ? minimal_at(*prop, root, depth + 1) : json("ok");
        }
        return out;
    }
    if (type == "array") {
        json out = json::array();
        const auto count =
            std::clamp<std::int64_t>(schema.value("minItems", std::int64_t{0}), 0, 10000);
        const bool unique = schema.value("uniqueItems", false);
        const json* prefix = schema.contains("prefixItems") && schema["prefixItems"].is_array()
                                 ? &schema["prefixItems"]
                                 : nullptr;
        const json* items = schema.contains("items") ? &schema["items"] : nullptr;
        for (std::int64_t i = 0; i < count; ++i) {
            const auto idx = static_cast<std::size_t>(i);
            json item;
            if (prefix && idx < prefix->size())
                item = minimal_at((*prefix)[idx], root, depth + 1);
            else if (items && items->is_object())
                item = minimal_at(*items, root, depth + 1);
            else
                item = "ok";
            if (unique && items && items->is_object() && items->contains("enum") &&
                (*items)["enum"].is_array() && idx < (*items)["enum"].size())
                item = (*items)["enum"][idx];
            else if (unique)
                item = vary(std::move(item), idx);
            out.push_back(std::move(item));
        }
        return out;
    }
    if (type == "integer")
        return minimal_number(schema, true);
    if (type == "number")
        return minimal_number(schema, false);
    if (type == "boolean")
        return true;
    if (type == "null")
        return nullptr;
    return minimal_string(schema);
}

// Fits a reply written for a known schema to the request's own schema: required properties it
// lacks get their auto value (minimal_at), properties the schema forbids (additionalProperties
// false) are dropped, in nested objects and array items too. Leaves everything else alone.
json conform_to_schema(json value, const json& schema, const json& root, int depth) {
    if (depth > 32 || !schema.is_object())
        return value;
    if (schema.contains("$ref") && schema["$ref"].is_string()) {
        if (const json* target = resolve_ref(root, schema["$ref"].get<std::string>()))
            return conform_to_schema(std::move(value), *target, root, depth + 1);
        return value;
    }
    if (value.is_object() && schema.contains("properties") && schema["properties"].is_object()) {
        const json& props = schema["properties"];
        if (schema.contains("additionalProperties") && schema["additionalProperties"] == false)
            for (auto it = value.begin(); it != value.end();)
                it = props.contains(it.key()) ? std::next(it) : value.erase(it);
        for (auto it = value.begin(); it != value.end(); ++it)
            if (props.contains(it.key()))
                it.value() = conform_to_schema(std::move(it.value()), props[it.key()], root, depth + 1);
        if (schema.contains("required") && schema["required"].is_array())
            for (const auto& name : schema["required"])
                if (name.is_string() && !value.contains(name.get<std::string>()))
                    value[name.get<std::string>()] =
                        props.contains(name.get<std::string>())
                            ? minimal_at(props[name.get<std::string>()], root, depth + 1)
                            : json("ok");
    } else if (value.is_array() && schema.contains("items") && schema["items"].is_object()) {
        for (auto& item : value)
            item = conform_to_schema(std::move(item), schema["items"], root, depth + 1);
    }
    return value;
}

// ---------------------------------------------------------------------------------------------
// Requests.

// A parsed request, reduced to what rules match on and what the log records.
struct Call {
    Endpoint endpoint = Endpoint::chat;
    std::string model;
    std::vector<std::string> roles; // chat only, parallel to texts
    std::vector<std::string> texts; // message contents, or embedding inputs
    std::string last_user;
    std::optional<std::string> schema_name;
    std::string format = "text"; // text | json_object | json_schema
    json schema;                 // json_schema only; null when absent
};

struct BadRequest {
    std::string message;
    json param;
};

std::string joined(const std::vector<std::string>& texts) {
    std::string out;
    for (std::size_t i = 0; i < texts.size(); ++i)
        out += (i ? "\n" : "") + texts[i];
    return out;
}

// "schema name: judge_storage" in a system message: how json_object fallback prompts are told
// apart.
std::optional<std::string> schema_name_in_text(const std::string& text) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::string label = "schema name:";
    const auto at = lower.find(label);
    if (at == std::string::npos)
        return std::nullopt;
    std::size_t i = at + label.size();
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
        ++i;
    std::size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                               text[j] == '_' || text[j] == '-' || text[j] == '.'))
        ++j;
    if (j == i)
        return std::nullopt;
    return text.substr(i, j - i);
}

std::optional<BadRequest> parse_model(const json& body, Call& call) {
    if (!body.contains("model"))
        return BadRequest{"you must provide a model parameter", "model"};
    if (!body["model"].is_string() || body["model"].get<std::string>().empty())
        return BadRequest{"'model' must be a non-empty string", "model"};
    call.model = body["model"].get<std::string>();
    return std::nullopt;
}

std::optional<BadRequest> parse_chat(const json& body, Call& call) {
    call.endpoint = Endpoint::chat;
    if (!body.is_object())
        return BadRequest{"the request body must be a JSON object", nullptr};
    if (auto bad = parse_model(body, call))
        return bad;
    if (!body.contains("messages") || !body["messages"].is_array() || body["messages"].empty())
        return BadRequest{"'messages' must be a non-empty array", "messages"};
    static const std::vector<std::string> roles = {"system",    "developer", "user",
                                                   "assistant", "tool",      "function"};
    const json& messages = body["messages"];
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const std::string param = "messages[" + std::to_string(i) + "]";
        const json& m = messages[i];
        if (!m.is_object())
            return BadRequest{param + " must be an object", param};
        if (!m.contains("role") || !m["role"].is_string() ||
            !contains_name(roles, m["role"].get<std::string>()))
            return BadRequest{param + ".role must be one of: " + list_names(roles),
                              param + ".role"};
        std::string text;
        const json content = m.value("content", json());
        if (content.is_string()) {
            text = content.get<std::string>();
        } else if (content.is_array()) {
            for (const auto& part : content) {
                if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
                    return BadRequest{param + ".content parts must be objects with a \"type\"",
                                      param + ".content"};
                if (part["type"] == "text") {
                    if (!part.contains("text") || !part["text"].is_string())
                        return BadRequest{param + ".content text parts need a string \"text\"",
                                          param + ".content"};
                    text += (text.empty() ? "" : "\n") + part["text"].get<std::string>();
                }
            }
        } else if (!content.is_null()) {
            return BadRequest{param + ".content must be a string, an array of parts or null",
                              param + ".content"};
        }
        call.roles.push_back(m["role"].get<std::string>());
        call.texts.push_back(std::move(text));
        if (call.roles.back() == "user")
            call.last_user = call.texts.back();
    }
    if (body.contains("stream") && body["stream"] == true)
        return BadRequest{"fake-llm does not stream; send \"stream\": false", "stream"};
    for (const char* key : {"temperature", "top_p"})
        if (body.contains(key) && !body[key].is_number() && !body[key].is_null())
            return BadRequest{std::string("'") + key + "' must be a number", key};
    for (const char* key : {"seed", "max_tokens", "max_completion_tokens", "n"})
        if (body.contains(key) && !body[key].is_number_integer() && !body[key].is_null())
            return BadRequest{std::string("'") + key + "' must be an integer", key};
    if (body.contains("response_format") && !body["response_format"].is_null()) {
        const json& rf = body["response_format"];
        if (!rf.is_object() || !rf.contains("type") || !rf["type"].is_string())
            return BadRequest{"'response_format' must be an object with a string \"type\"",
                              "response_format"};
        call.format = rf["type"].get<std::string>();
        if (call.format == "json_schema") {
            if (!rf.contains("json_schema") || !rf["json_schema"].is_object())
                return BadRequest{"'response_format.json_schema' must be an object",
                                  "response_format.json_schema"};
            const json& js = rf["json_schema"];
            if (!js.contains("name") || !js["name"].is_string() ||
                js["name"].get<std::string>().empty())
                return BadRequest{"'response_format.json_schema.name' must be a non-empty string",
                                  "response_format.json_schema.name"};
            call.schema_name = js["name"].get<std::string>();
            if (js.contains("schema")) {
                if (!js["schema"].is_object())
                    return BadRequest{"'response_format.json_schema.schema' must be an object",
                                      "response_format.json_schema.schema"};
                call.schema = js["schema"];
            }
            if (js.contains("strict") && !js["strict"].is_boolean())
                return BadRequest{"'response_format.json_schema.strict' must be a boolean",
                                  "response_format.json_schema.strict"};
        } else if (call.format == "json_object") {
            for (std::size_t i = 0; i < call.roles.size(); ++i)
                if (call.roles[i] == "system" || call.roles[i] == "developer")
                    if (auto name = schema_name_in_text(call.texts[i])) {
                        call.schema_name = name;
                        break;
                    }
        } else if (call.format != "text") {
            return BadRequest{
                "'response_format.type' must be one of: text, json_object, json_schema",
                "response_format.type"};
        }
    }
    return std::nullopt;
}

std::optional<BadRequest> parse_embeddings(const json& body, Call& call, int& dimensions,
                                           bool& base64, int default_dim) {
    call.endpoint = Endpoint::embeddings;
    if (!body.is_object())
        return BadRequest{"the request body must be a JSON object", nullptr};
    if (auto bad = parse_model(body, call))
        return bad;
    if (!body.contains("input"))
        return BadRequest{"you must provide an input parameter", "input"};
    const json& input = body["input"];
    if (input.is_string()) {
        call.texts.push_back(input.get<std::string>());
    } else if (input.is_array() && !input.empty()) {
        for (const auto& x : input) {
            if (!x.is_string())
                return BadRequest{
                    "'input' must be a string or an array of strings (fake-llm does not take "
                    "token arrays)",
                    "input"};
            call.texts.push_back(x.get<std::string>());
        }
    } else {
        return BadRequest{"'input' must be a string or a non-empty array of strings", "input"};
    }
    for (const auto& t : call.texts)
        if (t.empty())
            return BadRequest{"'input' must not contain empty strings", "input"};
    dimensions = default_dim;
    if (body.contains("dimensions") && !body["dimensions"].is_null()) {
        const json& d = body["dimensions"];
        if (!d.is_number_integer() || d.get<std::int64_t>() < 1 || d.get<std::int64_t>() > 65536)
            return BadRequest{"'dimensions' must be an integer between 1 and 65536", "dimensions"};
        dimensions = static_cast<int>(d.get<std::int64_t>());
    }
    base64 = false;
    if (body.contains("encoding_format") && !body["encoding_format"].is_null()) {
        const json& f = body["encoding_format"];
        if (f == "base64")
            base64 = true;
        else if (f != "float")
            return BadRequest{"'encoding_format' must be \"float\" or \"base64\"",
                              "encoding_format"};
    }
    return std::nullopt;
}

bool rule_matches(const Rule& rule, const Call& call) {
    if (rule.endpoint != call.endpoint)
        return false;
    if (rule.model && *rule.model != call.model)
        return false;
    if (rule.schema && (!call.schema_name || *call.schema_name != *rule.schema))
        return false;
    if (rule.contains) {
        const bool any =
            std::any_of(call.texts.begin(), call.texts.end(), [&](const std::string& t) {
                return t.find(*rule.contains) != std::string::npos;
            });
        if (!any)
            return false;
    }
    if (rule.last_user_contains &&
        call.last_user.find(*rule.last_user_contains) == std::string::npos)
        return false;
    if (rule.regex && !std::regex_search(joined(call.texts), *rule.regex))
        return false;
    return true;
}

std::string base64_encode(const std::string& bytes) {
    static const char* k_alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
        out += k_alphabet[(n >> 18) & 63];
        out += k_alphabet[(n >> 12) & 63];
        out += k_alphabet[(n >> 6) & 63];
        out += k_alphabet[n & 63];
    }
    if (i < bytes.size()) {
        const bool two = i + 1 < bytes.size();
        const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (two ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0);
        out += k_alphabet[(n >> 18) & 63];
        out += k_alphabet[(n >> 12) & 63];
        out += two ? k_alphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string float_bytes_le(const std::vector<float>& v) {
    std::string out;
    out.reserve(v.size() * 4);
    for (float f : v) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &f, sizeof bits);
        for (int b = 0; b < 4; ++b)
            out += static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
    return out;
}

std::string dump(const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message,
                const std::string& type, const json& param = nullptr, const json& code = nullptr) {
    send_json(
        res, status,
        json{{"error", {{"message", message}, {"type", type}, {"param", param}, {"code", code}}}});
}

// httplib 0.11 listens with a backlog of 5, so a burst of 32 connections overflows the accept
// queue; the kernel then drops handshakes and clients stall for a SYN retry. Listening again on
// the bound socket (allowed on Linux and the BSDs) raises the backlog to the system maximum.
class Server : public httplib::Server {
  public:
    void widen_backlog() {
        const auto sock = svr_sock_.load();
        if (sock != INVALID_SOCKET)
            ::listen(sock, SOMAXCONN);
    }
};

struct Stats {
    std::int64_t requests = 0, chat = 0, embeddings = 0, models = 0;
    std::int64_t in_flight = 0, peak_in_flight = 0;
    std::int64_t faults = 0, bad_requests = 0, auth_failures = 0;
    std::map<std::string, std::int64_t> by_rule, by_schema;
};

} // namespace

// ---------------------------------------------------------------------------------------------
// The server.

struct FakeLlmServer::Impl {
    ServerOptions options;
    Server server;
    std::thread thread;
    std::atomic<bool> stopping{false};
    std::atomic<bool> listen_done{false};
    std::mutex stop_mutex;
    int port = 0;

    mutable std::mutex script_mutex;
    std::shared_ptr<Script> script;

    mutable std::mutex stats_mutex;
    Stats stats;

    std::mutex log_mutex;
    std::ofstream log;
    std::int64_t log_seq = 0;

    std::atomic<std::int64_t> next_id{0};

    Impl(ServerOptions o, std::shared_ptr<Script> s)
        : options(std::move(o)), script(std::move(s)) {}

    // Counts a model request for its whole life, including faults, stalls and rejections.
    class InFlight {
      public:
        InFlight(Impl& impl, Endpoint endpoint) : m_impl(impl) {
            std::lock_guard lock(m_impl.stats_mutex);
            auto& s = m_impl.stats;
            ++s.requests;
            ++(endpoint == Endpoint::chat ? s.chat : s.embeddings);
            s.peak_in_flight = std::max(s.peak_in_flight, ++s.in_flight);
        }
        ~InFlight() {
            std::lock_guard lock(m_impl.stats_mutex);
            --m_impl.stats.in_flight;
        }
        InFlight(const InFlight&) = delete;
        InFlight& operator=(const InFlight&) = delete;

      private:
        Impl& m_impl;
    };

    template <class F>
    void count(F&& f) {
        std::lock_guard lock(stats_mutex);
        f(stats);
    }

    void write_log(json entry) {
        if (options.log_path.empty())
            return;
        std::lock_guard lock(log_mutex);
        entry["seq"] = ++log_seq;
        log << dump(entry) << '\n';
        log.flush();
    }

    // Sleeps in short slices so stop() is never held up by a long delay or a stall.
    bool sleep_unless_stopping(std::int64_t ms) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        while (!stopping.load()) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= end)
                return true;
            std::this_thread::sleep_for(
                std::min<std::chrono::steady_clock::duration>(k_sleep_slice, end - now));
        }
        return false;
    }

    // Checks the Authorization header; on failure answers 401 and returns false.
    // The checks every /v1 request passes first: authorisation, then a JSON body. False when an
    // error reply was already sent.
    bool admit(const httplib::Request& req, httplib::Response& res, json& entry, json& body) {
        bool auth_present = false;
        if (!check_auth(req, res, auth_present, entry))
            return false;
        entry["auth_present"] = auth_present;
        return parse_body(req, res, body, entry);
    }

    bool check_auth(const httplib::Request& req, httplib::Response& res, bool& present,
                    json& log_entry) {
        present = req.has_header("Authorization");
        if (options.required_key.empty())
            return true;
        const std::string header = req.get_header_value("Authorization");
        const std::string bearer = "Bearer ";
        const std::string sent =
            header.rfind(bearer, 0) == 0 ? header.substr(bearer.size()) : header;
        if (present && header == bearer + options.required_key)
            return true;
        count([](Stats& s) { ++s.auth_failures; });
        log_entry["auth_present"] = present;
        log_entry["status"] = 401;
        write_log(log_entry);
        // Deliberately echoes the key that was sent, like some real servers: memfail must redact
        // it.
        if (!present || sent.empty())
            send_error(res, 401,
                       "You didn't provide an API key. You need to provide your API key in an "
                       "Authorization "
                       "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                       "invalid_request_error");
        else
            send_error(res, 401, "Incorrect API key provided: " + sent + ".",
                       "invalid_request_error", nullptr, "invalid_api_key");
        return false;
    }

    bool parse_body(const httplib::Request& req, httplib::Response& res, json& body,
                    json& log_entry) {
        try {
            body = json::parse(req.body);
            return true;
        } catch (const json::exception& e) {
            count([](Stats& s) { ++s.bad_requests; });
            log_entry["status"] = 400;
            write_log(log_entry);
            send_error(res, 400,
                       std::string("We could not parse the JSON body of your request: ") + e.what(),
                       "invalid_request_error");
            return false;
        }
    }

    void reject(httplib::Response& res, const BadRequest& bad, json& log_entry) {
        count([](Stats& s) { ++s.bad_requests; });
        log_entry["status"] = 400;
        log_entry["error"] = bad.message;
        write_log(log_entry);
        send_error(res, 400, bad.message, "invalid_request_error", bad.param);
    }

    struct Choice {
        std::shared_ptr<Script> script; // keeps `action` alive if the script is replaced meanwhile
        const Action* action = nullptr;
        std::string label;
        bool from_rule = false; // false: the fallback answers
    };

    Choice choose(const Call& call) {
        Choice choice;
        {
            std::lock_guard lock(script_mutex);
            choice.script = script;
        }
        for (const Rule& rule : choice.script->rules) {
            if (!rule_matches(rule, call))
                continue;
            if (rule.times && rule.used->fetch_add(1) >= *rule.times)
                continue; // used up: fall through
            choice.action = &rule.action;
            choice.label = rule.label;
            choice.from_rule = true;
            return choice;
        }
        choice.action = &choice.script->fallback;
        choice.label = "default";
        return choice;
    }

    // The fault this action applies to `endpoint`; content faults mean nothing for embeddings.
    static Fault effective_fault(const Action& action, Endpoint endpoint) {
        if (endpoint == Endpoint::embeddings && is_content_fault(action.fault))
            return Fault::none;
        return action.fault;
    }

    // Answers an HTTP-level fault (429, 500, 503, 400, stall). Returns false for none/content
    // faults.
    bool answer_http_fault(Fault fault, const Action& action, httplib::Response& res) {
        auto retry_after = [&] {
            if (action.retry_after)
                res.set_header("Retry-After", std::to_string(*action.retry_after));
        };
        switch (fault) {
        case Fault::http_429:
            retry_after();
            send_error(res, 429, "Rate limit reached for requests (scripted by fake-llm).",
                       "requests", nullptr, "rate_limit_exceeded");
            return true;
        case Fault::http_500:
            send_error(
                res, 500,
                "The server had an error while processing your request (scripted by fake-llm).",
                "server_error");
            return true;
        case Fault::http_503:
            retry_after();
            send_error(res, 503,
                       "The engine is currently overloaded, please try again later (scripted by "
                       "fake-llm).",
                       "server_error", nullptr, "overloaded");
            return true;
        case Fault::http_400:
            send_error(res, 400, "The request was rejected (scripted by fake-llm).",
                       "invalid_request_error");
            return true;
        case Fault::stall: {
            if (!sleep_unless_stopping(action.delay_ms.value_or(k_default_stall_ms))) {
                send_error(res, 503, "fake-llm is shutting down.", "server_error");
                return true;
            }
            send_error(res, 504,
                       "The request stalled deliberately and the client did not give up (scripted "
                       "by fake-llm).",
                       "timeout");
            return true;
        }
        default:
            return false;
        }
    }

    void handle_chat(const httplib::Request& req, httplib::Response& res) {
        InFlight guard(*this, Endpoint::chat);
        json entry{{"endpoint", "chat"}};
        json body;
        if (!admit(req, res, entry, body))
            return;
        Call call;
        const auto bad = parse_chat(body, call);
        entry["model"] = call.model;
        if (bad)
            return reject(res, *bad, entry);
        entry["schema"] = call.schema_name ? json(*call.schema_name) : json(nullptr);
        entry["response_format"] = call.format;
        json messages = json::array();
        for (std::size_t i = 0; i < call.texts.size(); ++i)
            messages.push_back({{"role", call.roles[i]}, {"content", call.texts[i]}});
        entry["messages"] = std::move(messages);
        if (call.format == "json_schema" && !options.json_schema_supported)
            return reject(
                res,
                BadRequest{
                    "Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                    "with this model.",
                    "response_format"},
                entry);

        const Choice choice = choose(call);
        const Action& action = *choice.action;
        const Fault fault = effective_fault(action, Endpoint::chat);
        // No rule fits: the extractive stand-in answers memfail's memory-system prompts (the
        // fallback's delay and usage still apply; a fallback fault still wins).
        std::optional<json> extracted;
        std::optional<std::string> answered;
        if (!choice.from_rule && choice.script->extractive && call.schema_name &&
            fault == Fault::none) {
            // Dataset-generation prompts get the generative stand-in (generative.hpp), shaped to
            // the request's own schema when it sent one.
            extracted = generative_reply(*call.schema_name, entry["messages"]);
            if (extracted && call.schema.is_object())
                extracted = conform_to_schema(std::move(*extracted), call.schema, call.schema, 0);
            if (!extracted)
                extracted = extractive_reply(*call.schema_name, entry["messages"]);
        }
        else if (!choice.from_rule && choice.script->extractive && !call.schema_name && fault == Fault::none)
            answered = extractive_answer(entry["messages"]);
        if (answered) extracted = json(*answered);
        const std::string label = extracted ? std::string("extractive") : choice.label;
        count([&](Stats& s) {
            ++s.by_rule[label];
            if (call.schema_name)
                ++s.by_schema[*call.schema_name];
            if (fault != Fault::none)
                ++s.faults;
        });
        entry["rule"] = label;
        entry["action"] = fault != Fault::none                      ? std::string(fault_name(fault))
                          : extracted                               ? "extractive"
                          : action.content == Action::Content::text ? "reply"
                          : action.content == Action::Content::json_value ? "json"
                                                                          : "auto";
        write_log(entry);

        if (fault != Fault::stall && action.delay_ms && !sleep_unless_stopping(*action.delay_ms))
            return send_error(res, 503, "fake-llm is shutting down.", "server_error");
        if (answer_http_fault(fault, action, res))
            return;

        std::string content;
        if (fault == Fault::malformed_json)
            content = "{\"verdict\": ";
        else if (fault == Fault::schema_violation)
            content = "{\"unexpected\": true}";
        else if (answered)
            content = *answered;
        else if (extracted)
            content = dump(*extracted);
        else if (action.content == Action::Content::text)
            content = action.text;
        else if (action.content == Action::Content::json_value)
            content = dump(action.value);
        else if (call.format == "json_schema")
            content = call.schema.is_object() ? dump(minimal_instance(call.schema)) : "{}";
        else if (call.format == "json_object")
            content = "{}";
        else
            content = "OK";

        json reply{
            {"id", "chatcmpl-fake-" + std::to_string(++next_id)},
            {"object", "chat.completion"},
            {"created", static_cast<std::int64_t>(std::time(nullptr))},
            {"model", call.model},
            {"choices", json::array({{{"index", 0},
                                      {"message", {{"role", "assistant"}, {"content", content}}},
                                      {"finish_reason", action.finish_reason}}})}};
        if (action.usage) {
            const std::int64_t prompt = count_chat_prompt(call.model, call.texts);
            const std::int64_t completion = count_tokens(call.model, content);
            reply["usage"] = {{"prompt_tokens", prompt},
                              {"completion_tokens", completion},
                              {"total_tokens", prompt + completion}};
        }
        send_json(res, 200, reply);
    }

    void handle_embeddings(const httplib::Request& req, httplib::Response& res) {
        InFlight guard(*this, Endpoint::embeddings);
        json entry{{"endpoint", "embeddings"}};
        json body;
        if (!admit(req, res, entry, body))
            return;
        Call call;
        int dimensions = options.embedding_dim;
        bool base64 = false;
        const auto bad = parse_embeddings(body, call, dimensions, base64, options.embedding_dim);
        entry["model"] = call.model;
        if (bad)
            return reject(res, *bad, entry);
        entry["input"] = call.texts;
        entry["dimensions"] = dimensions;

        const Choice choice = choose(call);
        const Action& action = *choice.action;
        const Fault fault = effective_fault(action, Endpoint::embeddings);
        count([&](Stats& s) {
            ++s.by_rule[choice.label];
            if (fault != Fault::none)
                ++s.faults;
        });
        entry["rule"] = choice.label;
        entry["action"] =
            fault != Fault::none ? std::string(fault_name(fault)) : std::string("vectors");
        write_log(entry);

        if (fault != Fault::stall && action.delay_ms && !sleep_unless_stopping(*action.delay_ms))
            return send_error(res, 503, "fake-llm is shutting down.", "server_error");
        if (answer_http_fault(fault, action, res))
            return;

        json data = json::array();
        std::int64_t words = 0;
        for (std::size_t i = 0; i < call.texts.size(); ++i) {
            const auto vec = embedding_for(call.texts[i], dimensions);
            json embedding = base64 ? json(base64_encode(float_bytes_le(vec))) : json(vec);
            data.push_back(
                {{"object", "embedding"}, {"index", i}, {"embedding", std::move(embedding)}});
            words += count_tokens(call.model, call.texts[i]);
        }
        json reply{{"object", "list"}, {"data", std::move(data)}, {"model", call.model}};
        if (action.usage)
            reply["usage"] = {{"prompt_tokens", words}, {"total_tokens", words}};
        send_json(res, 200, reply);
    }

    void handle_models(const httplib::Request& req, httplib::Response& res) {
        count([](Stats& s) { ++s.models; });
        json entry{{"endpoint", "models"}};
        bool present = false;
        if (!check_auth(req, res, present, entry))
            return;
        std::vector<std::string> ids = {"fake-model"};
        {
            std::lock_guard lock(script_mutex);
            for (const auto& r : script->rules)
                if (r.model && !contains_name(ids, *r.model))
                    ids.push_back(*r.model);
        }
        json data = json::array();
        for (const auto& id : ids)
            data.push_back(
                {{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "fake-llm"}});
        send_json(res, 200, json{{"object", "list"}, {"data", std::move(data)}});
    }

    json stats_json() const {
        std::lock_guard lock(stats_mutex);
        return json{{"requests", stats.requests},
                    {"chat", stats.chat},
                    {"embeddings", stats.embeddings},
                    {"models", stats.models},
                    {"in_flight", stats.in_flight},
                    {"peak_in_flight", stats.peak_in_flight},
                    {"by_rule", stats.by_rule},
                    {"by_schema", stats.by_schema},
                    {"faults", stats.faults},
                    {"bad_requests", stats.bad_requests},
                    {"auth_failures", stats.auth_failures}};
    }

    void reset() {
        {
            std::lock_guard lock(script_mutex);
            for (auto& r : script->rules)
                r.used->store(0);
        }
        std::lock_guard lock(stats_mutex);
        const auto in_flight = stats.in_flight;
        stats = Stats{};
        stats.in_flight = in_flight;
        stats.peak_in_flight = in_flight;
    }

    Result<void> set_script(const json& doc) {
        MF_TRY_ASSIGN(auto parsed, parse_script(doc));
        std::lock_guard lock(script_mutex);
        script = std::move(parsed);
        return {};
    }

    // Wraps a handler so nothing escapes into httplib: any exception becomes a 500 JSON error.
    template <class F>
    httplib::Server::Handler guarded(F f) {
        return [this, f](const httplib::Request& req, httplib::Response& res) {
            try {
                (this->*f)(req, res);
            } catch (const std::exception& e) {
                send_error(res, 500, std::string("fake-llm internal error: ") + e.what(),
                           "server_error");
            } catch (...) {
                send_error(res, 500, "fake-llm internal error", "server_error");
            }
        };
    }

    void handle_stats(const httplib::Request&, httplib::Response& res) {
        send_json(res, 200, stats_json());
    }

    void handle_reset(const httplib::Request&, httplib::Response& res) {
        reset();
        send_json(res, 200, json{{"ok", true}});
    }

    void handle_script(const httplib::Request& req, httplib::Response& res) {
        json doc;
        try {
            doc = json::parse(req.body);
        } catch (const json::exception& e) {
            return send_error(res, 400, std::string("the script is not valid JSON: ") + e.what(),
                              "invalid_request_error");
        }
        auto done = set_script(doc);
        if (!done)
            return send_error(res, 400, done.error().describe(), "invalid_request_error");
        send_json(res, 200, json{{"ok", true}});
    }

    void install_routes() {
        server.new_task_queue = [n = options.threads] {
            return new httplib::ThreadPool(static_cast<std::size_t>(n));
        };
        server.set_payload_max_length(k_max_body_bytes);
        // httplib's default also sets SO_REUSEPORT, which lets a second server silently share a
        // busy port; an explicit --port must fail loudly instead.
        // TCP_NODELAY (inherited by accepted sockets): httplib writes headers and body separately,
        // and Nagle's algorithm would hold the body until the client's delayed ACK, ~40 ms a reply.
        server.set_socket_options([](socket_t sock) {
            int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        });
        server.set_tcp_nodelay(true);
        // Idle keep-alive connections are only re-checked for shutdown after this timeout, so keep
        // it short: stop() must not wait long for clients that hold a pooled connection.
        server.set_keep_alive_timeout(1);
        server.set_keep_alive_max_count(100000);
        server.Post("/v1/chat/completions", guarded(&Impl::handle_chat));
        server.Post("/v1/embeddings", guarded(&Impl::handle_embeddings));
        server.Get("/v1/models", guarded(&Impl::handle_models));
        server.Get("/_fake/stats", guarded(&Impl::handle_stats));
        server.Post("/_fake/reset", guarded(&Impl::handle_reset));
        server.Post("/_fake/script", guarded(&Impl::handle_script));
        server.set_exception_handler(
            [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
                send_error(res, 500, "fake-llm internal error", "server_error");
            });
        // httplib's own errors (unknown path, body too large) get OpenAI-shaped bodies too.
        server.set_error_handler(httplib::Server::HandlerWithResponse(
            [](const httplib::Request& req, httplib::Response& res) {
                if (!res.body.empty())
                    return httplib::Server::HandlerResponse::Unhandled;
                std::string message = "fake-llm: HTTP " + std::to_string(res.status);
                std::string code;
                if (res.status == 404) {
                    message = "Unknown request URL: " + req.method + " " + req.path + ".";
                    code = "unknown_url";
                } else if (res.status == 413) {
                    message =
                        "The request body exceeds " + std::to_string(k_max_body_bytes) + " bytes.";
                } else if (res.status == 400 && req.method == "POST" && !req.has_header("Content-Length") &&
                           !req.has_header("Transfer-Encoding")) {
                    // The HTTP library refuses a POST that says nothing of its body's length
                    // before any handler runs (`curl -X POST URL` sends no Content-Length).
                    message = "POST " + req.path +
                              " needs a Content-Length header (or a chunked body); for an empty body send "
                              "Content-Length: 0 (curl -d '' ...)";
                    code = "missing_content_length";
                }
                send_error(res, res.status, message, "invalid_request_error", nullptr,
                           code.empty() ? json(nullptr) : json(code));
                return httplib::Server::HandlerResponse::Handled;
            }));
    }

    void stop() {
        std::lock_guard lock(stop_mutex);
        stopping = true;
        server.stop();
        if (thread.joinable())
            thread.join();
    }
};

FakeLlmServer::FakeLlmServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

FakeLlmServer::~FakeLlmServer() {
    stop();
}

Result<std::unique_ptr<FakeLlmServer>> FakeLlmServer::start(ServerOptions options) {
    if (options.threads < 1 || options.threads > 4096)
        return make_error(ErrorKind::invalid_input, "threads must be between 1 and 4096",
                          "threads");
    if (options.embedding_dim < 1 || options.embedding_dim > 65536)
        return make_error(ErrorKind::invalid_input, "embedding_dim must be between 1 and 65536",
                          "embedding_dim");
    if (options.port < 0 || options.port > 65535)
        return make_error(ErrorKind::invalid_input, "port must be between 0 and 65535", "port");
    if (options.host.empty())
        return make_error(ErrorKind::invalid_input, "host must not be empty", "host");
    MF_TRY_ASSIGN(auto script, parse_script(options.script));
    // The tokenizers usage is counted with are loaded before the first request, so no request
    // waits for a rank file (a client with a short timeout would read the load as a stall).
    for (const char* encoding : {"o200k_base", "cl100k_base"})
        (void)memfail::text::shared_tokenizer(encoding);

    auto impl = std::make_unique<Impl>(std::move(options), std::move(script));
    if (!impl->options.log_path.empty()) {
        impl->log.open(impl->options.log_path, std::ios::app | std::ios::binary);
        if (!impl->log.is_open())
            return make_error(ErrorKind::io, "cannot open the request log for appending",
                              impl->options.log_path);
    }
    impl->install_routes();

    const std::string& host = impl->options.host;
    if (impl->options.port == 0) {
        impl->port = impl->server.bind_to_any_port(host);
        if (impl->port < 0)
            return make_error(ErrorKind::network, "cannot bind a free port on " + host);
    } else {
        if (!impl->server.bind_to_port(host, impl->options.port))
            return make_error(ErrorKind::network, "cannot listen on " + host + ":" +
                                                      std::to_string(impl->options.port) +
                                                      " (in use, or not a local address)");
        impl->port = impl->options.port;
    }
    impl->server.widen_backlog();
    Impl* raw = impl.get();
    raw->thread = std::thread([raw] {
        raw->server.listen_after_bind();
        raw->listen_done = true;
    });
    // listen_after_bind either marks the server running before it accepts, or returns at once.
    while (!raw->server.is_running() && !raw->listen_done)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!raw->server.is_running()) {
        raw->thread.join();
        return make_error(ErrorKind::network, "the server did not start listening on " + host);
    }
    return std::unique_ptr<FakeLlmServer>(new FakeLlmServer(std::move(impl)));
}

int FakeLlmServer::port() const {
    return m_impl->port;
}

std::string FakeLlmServer::base_url() const {
    const std::string& host = m_impl->options.host;
    const std::string shown = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "[::1]" : host;
    return "http://" + shown + ":" + std::to_string(m_impl->port) + "/v1";
}

nlohmann::json FakeLlmServer::stats() const {
    return m_impl->stats_json();
}

void FakeLlmServer::reset() {
    m_impl->reset();
}

Result<void> FakeLlmServer::set_script(nlohmann::json script) {
    return m_impl->set_script(script);
}

void FakeLlmServer::stop() {
    m_impl->stop();
}

bool FakeLlmServer::running() const {
    return !m_impl->stopping && !m_impl->listen_done;
}

Result<void> validate_script(const nlohmann::json& script) {
    MF_TRY(parse_script(script));
    return {};
}

Result<nlohmann::json> load_script(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return make_error(ErrorKind::io, "cannot open the script file", path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        // Turn the byte offset into line:column, which editors understand.
        std::size_t line = 1, column = 1;
        const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
        for (std::size_t i = 0; i < end; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        std::string what = e.what();
        const auto colon = what.find(": ", what.find("parse error"));
        if (colon != std::string::npos)
            what = what.substr(colon + 2);
        return make_error(ErrorKind::invalid_input, "invalid JSON: " + what,
                          path + ":" + std::to_string(line) + ":" + std::to_string(column));
    }
    auto valid = validate_script(doc);
    if (!valid)
        return valid.error().with_context(path);
    return doc;
}

nlohmann::json minimal_instance(const nlohmann::json& schema) {
    return minimal_at(schema, schema, 0);
}

std::vector<float> embedding_for(std::string_view text, int dimensions) {
    MF_ASSERT(dimensions > 0, "embedding dimension must be positive");
    std::vector<double> v(static_cast<std::size_t>(dimensions));
    double norm = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        // Top 53 bits of a seeded hash, mapped to [-1, 1): the same on every platform.
        const std::uint64_t h = hash64(text, 0x9E3779B97F4A7C15ull + i);
        v[i] = static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
        norm += v[i] * v[i];
    }
    std::vector<float> out(v.size());
    if (norm == 0) {
        out[0] = 1.0f;
        return out;
    }
    norm = std::sqrt(norm);
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = static_cast<float>(v[i] / norm);
    return out;
}

std::int64_t count_words(std::string_view text) {
    std::int64_t n = 0;
    bool in_word = false;
    for (char c : text) {
        const bool space =
            c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        if (!space && !in_word)
            ++n;
        in_word = !space;
    }
    return n;
}

std::int64_t count_tokens(std::string_view model, std::string_view content) {
    const auto tokenizer = memfail::text::shared_tokenizer(memfail::text::encoding_for_model(model));
    if (!tokenizer) {
        static std::once_flag said;
        std::call_once(said, [&] {
            std::fprintf(stderr, "fake-llm: usage counts whitespace words: %s\n",
                         tokenizer.error().describe().c_str());
        });
        return count_words(content);
    }
    return static_cast<std::int64_t>((*tokenizer)->count(content));
}

std::int64_t count_chat_prompt(std::string_view model, const std::vector<std::string>& contents) {
    std::int64_t n = 3;
    for (const auto& c : contents)
        n += 3 + count_tokens(model, c);
    return n;
}

} // namespace memfail::fake_llm

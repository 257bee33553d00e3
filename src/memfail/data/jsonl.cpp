// SPDX-License-Identifier: MIT
// JSONL serialisation of the data model with field-precise errors.
#include <memfail/core/hash.hpp>
#include <memfail/data/jsonl.hpp>

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

namespace memfail::data {

using nlohmann::json;

namespace {

json key_details_to_json(const std::vector<KeyDetail>& details) {
    json out = json::array();
    for (const auto& d : details) {
        json j = {{"name", d.name}, {"variants", d.variants}};
        if (d.role) j["role"] = detail_role_name(*d.role);
        out.push_back(std::move(j));
    }
    return out;
}

// Field readers: each names the JSON path of what is wrong.
Error field_error(const std::string& path, const std::string& message) {
    return make_error(ErrorKind::invalid_input, message, path);
}

Result<std::string> get_string(const json& obj, const char* key, const std::string& path,
                               bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        if (required) return field_error(path + "." + key, "required field is missing");
        return std::string{};
    }
    if (!it->is_string()) return field_error(path + "." + key, "must be a string");
    return it->get<std::string>();
}

Result<std::vector<std::string>> get_strings(const json& obj, const char* key,
                                             const std::string& path, bool required = true) {
    auto it = obj.find(key);
    std::vector<std::string> out;
    if (it == obj.end() || it->is_null()) {
        if (required) return field_error(path + "." + key, "required field is missing");
        return out;
    }
    if (!it->is_array()) return field_error(path + "." + key, "must be a list of strings");
    for (std::size_t i = 0; i < it->size(); ++i) {
        if (!(*it)[i].is_string())
            return field_error(path + "." + key + "[" + std::to_string(i) + "]", "must be a string");
        out.push_back((*it)[i].get<std::string>());
    }
    return out;
}

Result<const json*> get_array(const json& obj, const char* key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end()) return field_error(path + "." + key, "required field is missing");
    if (!it->is_array()) return field_error(path + "." + key, "must be a list");
    return &*it;
}

std::string join_path(const std::string& base, const char* key, std::size_t index) {
    std::string p = base.empty() ? std::string(key) : base + "." + key;
    return p + "[" + std::to_string(index) + "]";
}

Result<EvidenceFact> fact_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    EvidenceFact f;
    MF_TRY_ASSIGN(f.id, get_string(j, "id", path));
    MF_TRY_ASSIGN(f.text, get_string(j, "text", path));
    MF_TRY_ASSIGN(f.message_ids, get_strings(j, "message_ids", path));
    MF_TRY_ASSIGN(const json* details, get_array(j, "key_details", path));
    for (std::size_t i = 0; i < details->size(); ++i) {
        const std::string dpath = join_path(path, "key_details", i);
        const json& d = (*details)[i];
        if (!d.is_object()) return field_error(dpath, "must be an object");
        KeyDetail kd;
        MF_TRY_ASSIGN(kd.name, get_string(d, "name", dpath));
        MF_TRY_ASSIGN(kd.variants, get_strings(d, "variants", dpath));
        MF_TRY_ASSIGN(const std::string role, get_string(d, "role", dpath, /*required=*/false));
        if (!role.empty()) {
            kd.role = parse_detail_role(role);
            if (!kd.role) return field_error(dpath + ".role", "must be \"identity\" or \"qualifier\", not '" + role + "'");
        }
        f.key_details.push_back(std::move(kd));
    }
    MF_TRY_ASSIGN(f.statements, get_strings(j, "statements", path, /*required=*/false));
    if (auto it = j.find("details_complete"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean()) return field_error(path + ".details_complete", "must be true or false");
        f.details_complete = it->get<bool>();
    }
    return f;
}

Result<bool> get_bool(const json& obj, const char* key, const std::string& path, bool fallback) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return field_error(path + "." + key, "must be true or false");
    return it->get<bool>();
}

json value_record_to_json(const ValueRecord& r) {
    json j = {{"value", r.value}, {"as_of", r.as_of}, {"authority", authority_name(r.authority)}};
    if (!r.message_id.empty()) j["message_id"] = r.message_id;
    if (!r.session_id.empty()) j["session_id"] = r.session_id;
    if (!r.mentions.empty()) j["mentions"] = r.mentions;
    return j;
}

Result<ValueRecord> value_record_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    ValueRecord r;
    if (auto it = j.find("value"); it != j.end()) r.value = *it;
    else return field_error(path + ".value", "required field is missing");
    MF_TRY_ASSIGN(r.as_of, get_string(j, "as_of", path));
    MF_TRY_ASSIGN(r.message_id, get_string(j, "message_id", path, false));
    MF_TRY_ASSIGN(r.session_id, get_string(j, "session_id", path, false));
    MF_TRY_ASSIGN(const std::string authority, get_string(j, "authority", path, false));
    if (!authority.empty()) {
        auto a = parse_authority(authority);
        if (!a)
            return field_error(path + ".authority", "unknown authority '" + authority +
                                                        "'; expected user_stated, user_confirmed, agreed_upon, "
                                                        "agent_extracted or ai_summarized");
        r.authority = *a;
    }
    MF_TRY_ASSIGN(r.mentions, get_strings(j, "mentions", path, false));
    return r;
}

json event_to_json(const LedgerEvent& e) {
    json history = json::array();
    for (const auto& r : e.history) history.push_back(value_record_to_json(r));
    json j = {{"id", e.id},
              {"type", memory_type_name(e.type)},
              {"value", e.value},
              {"history", history},
              {"introduced_in", e.introduced_in},
              {"should_persist", e.should_persist}};
    if (!e.updated_in.empty()) j["updated_in"] = e.updated_in;
    if (!e.retracted_in.empty()) j["retracted_in"] = e.retracted_in;
    if (!e.retracted_by.empty()) j["retracted_by"] = e.retracted_by;
    if (!e.expires_after.empty()) j["expires_after"] = e.expires_after;
    if (!e.aliases.empty()) j["aliases"] = e.aliases;
    if (!e.distractors.empty()) {
        json d = json::array();
        for (const auto& r : e.distractors) d.push_back(value_record_to_json(r));
        j["distractors"] = d;
    }
    if (!e.description.empty()) j["description"] = e.description;
    return j;
}

Result<LedgerEvent> event_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    LedgerEvent e;
    MF_TRY_ASSIGN(e.id, get_string(j, "id", path));
    MF_TRY_ASSIGN(const std::string type, get_string(j, "type", path));
    auto t = parse_memory_type(type);
    if (!t)
        return field_error(path + ".type", "unknown type '" + type +
                                               "'; expected explicit, mutable, latent, entity, work_state or non_memory");
    e.type = *t;
    if (auto it = j.find("value"); it != j.end()) e.value = *it;
    MF_TRY_ASSIGN(const json* history, get_array(j, "history", path));
    for (std::size_t i = 0; i < history->size(); ++i) {
        MF_TRY_ASSIGN(ValueRecord r, value_record_from_json((*history)[i], join_path(path, "history", i)));
        e.history.push_back(std::move(r));
    }
    MF_TRY_ASSIGN(e.introduced_in, get_string(j, "introduced_in", path));
    MF_TRY_ASSIGN(e.updated_in, get_string(j, "updated_in", path, false));
    MF_TRY_ASSIGN(e.retracted_in, get_string(j, "retracted_in", path, false));
    MF_TRY_ASSIGN(e.retracted_by, get_string(j, "retracted_by", path, false));
    MF_TRY_ASSIGN(e.should_persist, get_bool(j, "should_persist", path, true));
    MF_TRY_ASSIGN(e.expires_after, get_string(j, "expires_after", path, false));
    MF_TRY_ASSIGN(e.aliases, get_strings(j, "aliases", path, false));
    if (j.contains("distractors")) {
        MF_TRY_ASSIGN(const json* d, get_array(j, "distractors", path));
        for (std::size_t i = 0; i < d->size(); ++i) {
            MF_TRY_ASSIGN(ValueRecord r, value_record_from_json((*d)[i], join_path(path, "distractors", i)));
            e.distractors.push_back(std::move(r));
        }
    }
    MF_TRY_ASSIGN(e.description, get_string(j, "description", path, false));
    return e;
}

json rubric_to_json(const Rubric& r) {
    json j = {{"kind", rubric_kind_name(r.kind)}};
    if (!r.method.empty()) j["method"] = r.method;
    auto list = [&](const char* key, const std::vector<std::string>& v) {
        if (!v.empty()) j[key] = v;
    };
    list("required", r.required);
    if (r.pass_fraction != 1.0) j["pass_fraction"] = r.pass_fraction;
    list("must_contain", r.must_contain);
    list("must_not_contain", r.must_not_contain);
    list("forbidden", r.forbidden);
    list("reject", r.reject);
    list("accept_patterns", r.accept_patterns);
    if (r.number) j["number"] = *r.number;
    if (r.tolerance != 0) j["tolerance"] = r.tolerance;
    if (r.expected_count) j["expected_count"] = *r.expected_count;
    if (!r.groups.empty()) j["groups"] = r.groups;
    if (!r.fields.empty()) j["fields"] = r.fields;
    list("keywords", r.keywords);
    list("criteria", r.criteria);
    list("expected_terms", r.expected_terms);
    if (!r.notes.empty()) j["notes"] = r.notes;
    return j;
}

Result<Rubric> rubric_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    Rubric r;
    MF_TRY_ASSIGN(const std::string kind, get_string(j, "kind", path));
    auto k = parse_rubric_kind(kind);
    if (!k)
        return field_error(path + ".kind", "unknown rubric kind '" + kind +
                                               "'; expected exact, structured, contains, numeric, address, "
                                               "multi_field, entity_count, constraint, abstention or semantic");
    r.kind = *k;
    MF_TRY_ASSIGN(r.method, get_string(j, "method", path, false));
    MF_TRY_ASSIGN(r.required, get_strings(j, "required", path, false));
    if (auto it = j.find("pass_fraction"); it != j.end()) {
        if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1)
            return field_error(path + ".pass_fraction", "must be a number from 0 to 1");
        r.pass_fraction = it->get<double>();
    }
    MF_TRY_ASSIGN(r.must_contain, get_strings(j, "must_contain", path, false));
    MF_TRY_ASSIGN(r.must_not_contain, get_strings(j, "must_not_contain", path, false));
    MF_TRY_ASSIGN(r.forbidden, get_strings(j, "forbidden", path, false));
    MF_TRY_ASSIGN(r.reject, get_strings(j, "reject", path, false));
    MF_TRY_ASSIGN(r.accept_patterns, get_strings(j, "accept_patterns", path, false));
    if (auto it = j.find("number"); it != j.end()) {
        if (!it->is_number()) return field_error(path + ".number", "must be a number");
        r.number = it->get<double>();
    }
    if (auto it = j.find("tolerance"); it != j.end()) {
        if (!it->is_number() || it->get<double>() < 0)
            return field_error(path + ".tolerance", "must be a number of at least 0");
        r.tolerance = it->get<double>();
    }
    if (auto it = j.find("expected_count"); it != j.end()) {
        if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1000000)
            return field_error(path + ".expected_count", "must be a whole number from 0 to 1000000");
        r.expected_count = it->get<int>();
    }
    if (auto it = j.find("groups"); it != j.end()) {
        if (!it->is_array()) return field_error(path + ".groups", "must be a list of lists of strings");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const json& g = (*it)[i];
            const std::string gpath = path + ".groups[" + std::to_string(i) + "]";
            if (!g.is_array()) return field_error(gpath, "must be a list of strings");
            std::vector<std::string> names;
            for (std::size_t n = 0; n < g.size(); ++n) {
                if (!g[n].is_string()) return field_error(gpath + "[" + std::to_string(n) + "]", "must be a string");
                names.push_back(g[n].get<std::string>());
            }
            r.groups.push_back(std::move(names));
        }
    }
    if (auto it = j.find("fields"); it != j.end()) {
        if (!it->is_object()) return field_error(path + ".fields", "must be an object");
        r.fields = *it;
    }
    MF_TRY_ASSIGN(r.keywords, get_strings(j, "keywords", path, false));
    MF_TRY_ASSIGN(r.criteria, get_strings(j, "criteria", path, false));
    MF_TRY_ASSIGN(r.expected_terms, get_strings(j, "expected_terms", path, false));
    MF_TRY_ASSIGN(r.notes, get_string(j, "notes", path, false));
    return r;
}

json object_or_empty(const json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? json::object() : *it;
}

json app_log_to_json(const AppLog& a) {
    json j = {{"timestamp", a.timestamp}, {"app", a.app}, {"api", a.api}, {"request", a.request}, {"response", a.response}};
    if (!a.details.empty()) j["details"] = a.details;
    return j;
}

Result<AppLog> app_log_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    AppLog a;
    MF_TRY_ASSIGN(a.timestamp, get_string(j, "timestamp", path));
    MF_TRY_ASSIGN(a.app, get_string(j, "app", path));
    MF_TRY_ASSIGN(a.api, get_string(j, "api", path));
    a.request = object_or_empty(j, "request");
    a.response = object_or_empty(j, "response");
    MF_TRY_ASSIGN(a.details, get_strings(j, "details", path, false));
    return a;
}

json field_to_json(const ProbeField& f) {
    json j = {{"path", f.path}, {"type", field_type_name(f.type)}, {"role", field_role_name(f.role)},
              {"expected", f.expected}, {"evidence", f.evidence}};
    if (!f.options.empty()) j["options"] = f.options;
    return j;
}

Result<ProbeField> field_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    ProbeField f;
    MF_TRY_ASSIGN(f.path, get_string(j, "path", path));
    MF_TRY_ASSIGN(const std::string type, get_string(j, "type", path));
    auto t = parse_field_type(type);
    if (!t)
        return field_error(path + ".type", "unknown field type '" + type +
                                               "'; expected date, weekday, time, duration, number, enumeration, list or text");
    f.type = *t;
    MF_TRY_ASSIGN(const std::string role, get_string(j, "role", path, false));
    if (!role.empty()) {
        auto r = parse_field_role(role);
        if (!r) return field_error(path + ".role", "must be identity, core or detail, not '" + role + "'");
        f.role = *r;
    }
    if (auto it = j.find("expected"); it != j.end()) f.expected = *it;
    MF_TRY_ASSIGN(f.options, get_strings(j, "options", path, false));
    MF_TRY_ASSIGN(f.evidence, get_strings(j, "evidence", path, false));
    return f;
}

json profile_state_to_json(const ProfileState& st) {
    json snapshots = json::array();
    for (const auto& sn : st.snapshots) {
        json evidence = json::object();
        for (const auto& fe : sn.evidence) evidence[fe.path] = fe.log_ids;
        snapshots.push_back({{"checkpoint", sn.checkpoint}, {"value", sn.value}, {"evidence", evidence}});
    }
    json j = {{"key", st.key}, {"family", state_family_name(st.family)}, {"domain", st.domain},
              {"snapshots", snapshots}};
    if (!st.competing.empty()) j["competing"] = st.competing;
    return j;
}

Result<ProfileState> profile_state_from_json(const json& j, const std::string& path) {
    if (!j.is_object()) return field_error(path, "must be an object");
    ProfileState st;
    MF_TRY_ASSIGN(st.key, get_string(j, "key", path));
    MF_TRY_ASSIGN(const std::string family, get_string(j, "family", path));
    auto f = parse_state_family(family);
    if (!f) return field_error(path + ".family", "must be attribute, habit or preference, not '" + family + "'");
    st.family = *f;
    MF_TRY_ASSIGN(st.domain, get_string(j, "domain", path, false));
    MF_TRY_ASSIGN(st.competing, get_strings(j, "competing", path, false));
    MF_TRY_ASSIGN(const json* snapshots, get_array(j, "snapshots", path));
    for (std::size_t i = 0; i < snapshots->size(); ++i) {
        const std::string spath = join_path(path, "snapshots", i);
        const json& sj = (*snapshots)[i];
        if (!sj.is_object()) return field_error(spath, "must be an object");
        StateSnapshot sn;
        MF_TRY_ASSIGN(sn.checkpoint, get_string(sj, "checkpoint", spath));
        if (auto it = sj.find("value"); it != sj.end()) sn.value = *it;
        if (auto it = sj.find("evidence"); it != sj.end() && !it->is_null()) {
            if (!it->is_object()) return field_error(spath + ".evidence", "must be an object of field path -> log ids");
            for (auto e = it->begin(); e != it->end(); ++e) {
                FieldEvidence fe;
                fe.path = e.key();
                MF_TRY_ASSIGN(fe.log_ids, get_strings(*it, e.key().c_str(), spath + ".evidence"));
                sn.evidence.push_back(std::move(fe));
            }
        }
        st.snapshots.push_back(std::move(sn));
    }
    return st;
}

// The memfail/2 fields of a probe, read only from a memfail/2 file.
Result<void> probe_v2_from_json(const json& pj, const std::string& path, Probe& p) {
    MF_TRY_ASSIGN(p.capabilities, get_strings(pj, "capabilities", path, false));
    if (auto it = pj.find("temporal"); it != pj.end() && !it->is_null()) {
        if (!it->is_object()) return field_error(path + ".temporal", "must be an object");
        TemporalQuery t;
        MF_TRY_ASSIGN(t.as_of, get_string(*it, "as_of", path + ".temporal", false));
        MF_TRY_ASSIGN(t.expect_current, get_bool(*it, "expect_current", path + ".temporal", true));
        p.temporal = t;
    }
    MF_TRY_ASSIGN(p.should_abstain, get_bool(pj, "should_abstain", path, false));
    if (auto it = pj.find("rubric"); it != pj.end() && !it->is_null()) {
        MF_TRY_ASSIGN(Rubric r, rubric_from_json(*it, path + ".rubric"));
        p.rubric = std::move(r);
    }
    MF_TRY_ASSIGN(p.targets, get_strings(pj, "targets", path, false));
    if (auto it = pj.find("expected"); it != pj.end()) p.expected = *it;
    MF_TRY_ASSIGN(p.expected_source, get_string(pj, "expected_source", path, false));
    MF_TRY_ASSIGN(p.failure_modes, get_strings(pj, "failure_modes", path, false));
    MF_TRY_ASSIGN(p.task, get_string(pj, "task", path, false));
    MF_TRY_ASSIGN(p.state_key, get_string(pj, "state_key", path, false));
    MF_TRY_ASSIGN(p.checkpoint, get_string(pj, "checkpoint", path, false));
    if (auto it = pj.find("answer_template"); it != pj.end()) p.answer_template = *it;
    if (auto it = pj.find("fields"); it != pj.end() && !it->is_null()) {
        if (!it->is_array()) return field_error(path + ".fields", "must be a list");
        for (std::size_t i = 0; i < it->size(); ++i) {
            MF_TRY_ASSIGN(ProbeField f, field_from_json((*it)[i], join_path(path, "fields", i)));
            p.fields.push_back(std::move(f));
        }
    }
    MF_TRY_ASSIGN(p.conflicting, get_strings(pj, "conflicting", path, false));
    MF_TRY_ASSIGN(p.state_change, get_string(pj, "state_change", path, false));
    return {};
}

// The first memfail/2 key a memfail/1 object carries, or null.
const char* v2_key_in(const json& j, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        if (j.contains(k)) return k;
    return nullptr;
}

// nlohmann's what() without its "[json.exception.out_of_range.406] " prefix.
std::string without_exception_id(const std::string& what) {
    const auto end = what.find("] ");
    return !what.empty() && what.front() == '[' && end != std::string::npos ? what.substr(end + 2) : what;
}

// The JSON path ("probes[2].meta.row") of the value being read when parsing `text` fails on a
// non-syntax error. Parses again with a callback that tracks where it is; only called on failure.
std::string field_at_failure(const std::string& text) {
    struct Frame {
        bool array = false;
        std::size_t index = 0;
        std::string key;
    };
    std::vector<Frame> stack;
    auto path = [&stack] {
        std::string out;
        for (std::size_t i = 0; i < stack.size(); ++i) {
            const Frame& f = stack[i];
            if (f.array) out += "[" + std::to_string(f.index) + "]";
            else if (!f.key.empty()) out += (out.empty() ? "" : ".") + f.key;
        }
        return out;
    };
    auto finished_value = [&stack] {
        if (!stack.empty() && stack.back().array) ++stack.back().index;
    };
    try {
        const json kept = json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
            switch (event) {
                case json::parse_event_t::object_start: stack.push_back({false, 0, {}}); break;
                case json::parse_event_t::array_start: stack.push_back({true, 0, {}}); break;
                case json::parse_event_t::key:
                    if (!stack.empty() && parsed.is_string()) stack.back().key = parsed.get<std::string>();
                    break;
                case json::parse_event_t::object_end:
                case json::parse_event_t::array_end:
                    if (!stack.empty()) stack.pop_back();
                    finished_value();
                    break;
                case json::parse_event_t::value: finished_value(); break;
            }
            return true;  // keep everything: a discarded object reports no object_end
        });
        (void)kept;
    } catch (const json::exception&) {
        return path();
    }
    return {};
}

}  // namespace

// Deepest nesting of arrays and objects in `text`, brackets inside strings not counted. Returns as
// soon as the limit is passed, so a hostile line costs one scan and no recursion.
std::size_t json_nesting_depth(std::string_view text, std::size_t limit) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) --depth;
    }
    return deepest;
}

json to_json(const LedgerEvent& e) { return event_to_json(e); }

json to_json(const Probe& p) {
    json evidence = json::array();
    for (const auto& f : p.evidence) {
        json fact = {{"id", f.id},
                     {"text", f.text},
                     {"message_ids", f.message_ids},
                     {"key_details", key_details_to_json(f.key_details)}};
        if (!f.statements.empty()) fact["statements"] = f.statements;
        if (!f.details_complete) fact["details_complete"] = false;
        evidence.push_back(std::move(fact));
    }
    json probe = {{"id", p.id},           {"after_session", p.after_session},
                  {"question", p.question}, {"kind", probe_kind_name(p.kind)},
                  {"answer", p.answer},     {"evidence", evidence}};
    if (p.kind == ProbeKind::mcq) {
        probe["choices"] = p.choices;
        probe["correct_choice"] = p.correct_choice;
    }
    if (!p.meta.empty()) probe["meta"] = p.meta;
    if (!p.capabilities.empty()) probe["capabilities"] = p.capabilities;
    if (p.temporal) {
        json t = {{"expect_current", p.temporal->expect_current}};
        if (!p.temporal->as_of.empty()) t["as_of"] = p.temporal->as_of;
        probe["temporal"] = t;
    }
    if (p.should_abstain) probe["should_abstain"] = true;
    if (p.rubric) probe["rubric"] = rubric_to_json(*p.rubric);
    if (!p.targets.empty()) probe["targets"] = p.targets;
    if (!p.expected.is_null()) probe["expected"] = p.expected;
    if (!p.expected_source.empty()) probe["expected_source"] = p.expected_source;
    if (!p.failure_modes.empty()) probe["failure_modes"] = p.failure_modes;
    if (!p.task.empty()) probe["task"] = p.task;
    if (!p.state_key.empty()) probe["state_key"] = p.state_key;
    if (!p.checkpoint.empty()) probe["checkpoint"] = p.checkpoint;
    if (!p.answer_template.is_null()) probe["answer_template"] = p.answer_template;
    if (!p.fields.empty()) {
        json fields = json::array();
        for (const auto& f : p.fields) fields.push_back(field_to_json(f));
        probe["fields"] = fields;
    }
    if (!p.conflicting.empty()) probe["conflicting"] = p.conflicting;
    if (!p.state_change.empty()) probe["state_change"] = p.state_change;
    return probe;
}

json to_json(const Scenario& s) {
    json sessions = json::array();
    for (const auto& session : s.sessions) {
        json messages = json::array();
        for (const auto& m : session.messages) {
            json mj = {{"id", m.id}, {"role", m.role}};
            // An app log's content is written only when it is not the log's standard rendering.
            if (m.app_log) {
                mj["app_log"] = app_log_to_json(*m.app_log);
                if (m.content != render_app_log(*m.app_log)) mj["content"] = m.content;
            } else {
                mj["content"] = m.content;
            }
            messages.push_back(std::move(mj));
        }
        sessions.push_back(
            {{"id", session.id}, {"timestamp", session.timestamp}, {"messages", messages}});
    }
    json probes = json::array();
    for (const auto& p : s.probes) probes.push_back(to_json(p));
    const bool v2 = s.uses_v2();
    json out = {{"format", v2 ? k_format_v2 : k_format}, {"id", s.id},         {"suite", s.suite},
                {"dataset", s.dataset}, {"sessions", sessions}, {"probes", probes}};
    if (!s.meta.empty()) out["meta"] = s.meta;
    if (!s.ledger.empty()) {
        json ledger = json::array();
        for (const auto& e : s.ledger) ledger.push_back(event_to_json(e));
        out["ledger"] = ledger;
    }
    if (!s.checkpoints.empty()) {
        json checkpoints = json::array();
        for (const auto& c : s.checkpoints)
            checkpoints.push_back({{"id", c.id}, {"as_of", c.as_of}, {"after_session", c.after_session}});
        out["checkpoints"] = checkpoints;
    }
    if (!s.profile.empty()) {
        json profile = json::array();
        for (const auto& st : s.profile) profile.push_back(profile_state_to_json(st));
        out["profile"] = profile;
    }
    return out;
}

Result<Scenario> scenario_from_json(const json& j) {
    if (!j.is_object()) return field_error("(line)", "a scenario must be a JSON object");
    Scenario s;
    MF_TRY_ASSIGN(s.format, get_string(j, "format", ""));
    const bool v2 = s.format == k_format_v2;
    if (s.format != k_format && !v2)
        return field_error("format", "unsupported format '" + s.format + "'; this build reads '" +
                                         std::string(k_format) + "' and '" + k_format_v2 + "'");
    if (!v2)
        if (const char* key = v2_key_in(j, {"ledger", "checkpoints", "profile"}))
            return field_error(key, "needs \"format\": \"memfail/2\" (this file says memfail/1)");
    MF_TRY_ASSIGN(s.id, get_string(j, "id", ""));
    MF_TRY_ASSIGN(s.suite, get_string(j, "suite", ""));
    MF_TRY_ASSIGN(s.dataset, get_string(j, "dataset", ""));
    if (auto it = j.find("meta"); it != j.end()) {
        if (!it->is_object()) return field_error("meta", "must be an object");
        s.meta = *it;
    }
    MF_TRY_ASSIGN(const json* sessions, get_array(j, "sessions", ""));
    for (std::size_t i = 0; i < sessions->size(); ++i) {
        const std::string path = join_path("", "sessions", i);
        const json& sj = (*sessions)[i];
        if (!sj.is_object()) return field_error(path, "must be an object");
        Session session;
        MF_TRY_ASSIGN(session.id, get_string(sj, "id", path));
        MF_TRY_ASSIGN(session.timestamp, get_string(sj, "timestamp", path));
        MF_TRY_ASSIGN(const json* messages, get_array(sj, "messages", path));
        for (std::size_t m = 0; m < messages->size(); ++m) {
            const std::string mpath = join_path(path, "messages", m);
            const json& mj = (*messages)[m];
            if (!mj.is_object()) return field_error(mpath, "must be an object");
            Message msg;
            MF_TRY_ASSIGN(msg.id, get_string(mj, "id", mpath));
            MF_TRY_ASSIGN(msg.role, get_string(mj, "role", mpath));
            if (auto al = mj.find("app_log"); al != mj.end() && !al->is_null()) {
                if (!v2) return field_error(mpath + ".app_log", "needs \"format\": \"memfail/2\" (this file says memfail/1)");
                MF_TRY_ASSIGN(AppLog log, app_log_from_json(*al, mpath + ".app_log"));
                MF_TRY_ASSIGN(msg.content, get_string(mj, "content", mpath, /*required=*/false));
                if (msg.content.empty()) msg.content = render_app_log(log);
                msg.app_log = std::move(log);
            } else {
                MF_TRY_ASSIGN(msg.content, get_string(mj, "content", mpath));
            }
            session.messages.push_back(std::move(msg));
        }
        s.sessions.push_back(std::move(session));
    }
    MF_TRY_ASSIGN(const json* probes, get_array(j, "probes", ""));
    for (std::size_t i = 0; i < probes->size(); ++i) {
        const std::string path = join_path("", "probes", i);
        const json& pj = (*probes)[i];
        if (!pj.is_object()) return field_error(path, "must be an object");
        Probe p;
        MF_TRY_ASSIGN(p.id, get_string(pj, "id", path));
        MF_TRY_ASSIGN(p.after_session, get_string(pj, "after_session", path));
        MF_TRY_ASSIGN(p.question, get_string(pj, "question", path));
        MF_TRY_ASSIGN(std::string kind, get_string(pj, "kind", path));
        auto parsed = parse_probe_kind(kind);
        if (!parsed)
            return field_error(path + ".kind", "unknown kind '" + kind +
                                                   "'; expected yes_no, list, open, mcq or abstain");
        p.kind = *parsed;
        MF_TRY_ASSIGN(p.answer, get_string(pj, "answer", path, false));
        MF_TRY_ASSIGN(p.choices, get_strings(pj, "choices", path, false));
        MF_TRY_ASSIGN(p.correct_choice, get_string(pj, "correct_choice", path, false));
        if (auto it = pj.find("meta"); it != pj.end()) {
            if (!it->is_object()) return field_error(path + ".meta", "must be an object");
            p.meta = *it;
        }
        if (v2) {
            MF_TRY(probe_v2_from_json(pj, path, p));
        } else if (const char* key = v2_key_in(pj, {"capabilities", "temporal", "should_abstain", "rubric", "targets",
                                                    "expected", "expected_source", "failure_modes", "task",
                                                    "state_key", "checkpoint", "answer_template", "fields",
                                                    "conflicting", "state_change"})) {
            return field_error(path + "." + key, "needs \"format\": \"memfail/2\" (this file says memfail/1)");
        }
        MF_TRY_ASSIGN(const json* evidence, get_array(pj, "evidence", path));
        for (std::size_t e = 0; e < evidence->size(); ++e) {
            MF_TRY_ASSIGN(EvidenceFact f, fact_from_json((*evidence)[e], join_path(path, "evidence", e)));
            p.evidence.push_back(std::move(f));
        }
        s.probes.push_back(std::move(p));
    }
    if (v2 && j.contains("ledger")) {
        MF_TRY_ASSIGN(const json* ledger, get_array(j, "ledger", ""));
        for (std::size_t i = 0; i < ledger->size(); ++i) {
            MF_TRY_ASSIGN(LedgerEvent e, event_from_json((*ledger)[i], join_path("", "ledger", i)));
            s.ledger.push_back(std::move(e));
        }
    }
    if (v2 && j.contains("checkpoints")) {
        MF_TRY_ASSIGN(const json* checkpoints, get_array(j, "checkpoints", ""));
        for (std::size_t i = 0; i < checkpoints->size(); ++i) {
            const std::string path = join_path("", "checkpoints", i);
            const json& cj = (*checkpoints)[i];
            if (!cj.is_object()) return field_error(path, "must be an object");
            Checkpoint c;
            MF_TRY_ASSIGN(c.id, get_string(cj, "id", path));
            MF_TRY_ASSIGN(c.as_of, get_string(cj, "as_of", path));
            MF_TRY_ASSIGN(c.after_session, get_string(cj, "after_session", path));
            s.checkpoints.push_back(std::move(c));
        }
    }
    if (v2 && j.contains("profile")) {
        MF_TRY_ASSIGN(const json* profile, get_array(j, "profile", ""));
        for (std::size_t i = 0; i < profile->size(); ++i) {
            MF_TRY_ASSIGN(ProfileState st, profile_state_from_json((*profile)[i], join_path("", "profile", i)));
            s.profile.push_back(std::move(st));
        }
    }
    return s;
}

Result<void> for_each_jsonl(const std::string& path, const std::function<Result<void>(LoadedScenario&&)>& each) {
    std::ifstream in(path);
    if (!in)
        return make_error(std::filesystem::exists(path) ? ErrorKind::io : ErrorKind::not_found,
                          "cannot open dataset file", path);
    std::string line;
    std::size_t line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = path + ":" + std::to_string(line_no);
        if (json_nesting_depth(line) > k_max_json_depth)
            return make_error(ErrorKind::invalid_input,
                              "nesting deeper than " + std::to_string(k_max_json_depth), where);
        json j;
        try {
            j = json::parse(line);
        } catch (const json::parse_error& e) {
            return make_error(ErrorKind::invalid_input,
                              std::string("not valid JSON: ") + e.what(), where);
        } catch (const json::exception& e) {
            // A number too large for a double (1e999) and the like: name the field it is in.
            return make_error(ErrorKind::invalid_input, "value out of range: " + without_exception_id(e.what()),
                              field_at_failure(line))
                .with_context(where);
        }
        auto scenario = scenario_from_json(j);
        if (!scenario) return scenario.error().with_context(where);
        MF_TRY(each({std::move(scenario).value(), line_no}));
    }
    if (in.bad()) return make_error(ErrorKind::io, "read error", path);
    return {};
}

Result<std::vector<LoadedScenario>> read_jsonl(const std::string& path) {
    std::vector<LoadedScenario> out;
    MF_TRY(for_each_jsonl(path, [&](LoadedScenario&& loaded) -> Result<void> {
        out.push_back(std::move(loaded));
        return {};
    }));
    return out;
}

Result<void> write_file_atomically(const std::string& path,
                                   const std::function<Result<void>(std::ostream&)>& produce) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    Result<void> written;
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return make_error(ErrorKind::io, "cannot create file", tmp);
        written = produce(out);
        out.flush();
        if (written && !out) written = make_error(ErrorKind::io, "write failed (disk full?)", tmp);
    }
    if (!written) {
        fs::remove(tmp, ec);
        return written;
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return make_error(ErrorKind::io, "cannot rename into place: " + ec.message(), path);
    }
    return {};
}

Result<void> write_file_atomically(const std::string& path, const std::string& content) {
    return write_file_atomically(path, [&content](std::ostream& out) -> Result<void> {
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        return {};
    });
}

Result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(ErrorKind::not_found, "cannot open file", path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<std::string> scenario_line(const Scenario& s) {
    try {
        return to_json(s).dump();
    } catch (const json::exception& e) {
        // Text that is not UTF-8 cannot be written as JSON.
        return make_error(ErrorKind::invalid_input, "scenario '" + s.id + "' cannot be written: " +
                                                        without_exception_id(e.what()));
    }
}

Result<void> write_jsonl(const std::string& path, const std::vector<Scenario>& scenarios) {
    std::string content;
    for (const auto& s : scenarios) {
        auto line = scenario_line(s);
        if (!line) return line.error().with_context(path);
        content += *line;
        content += '\n';
    }
    return write_file_atomically(path, content);
}

std::string scenario_hash(const Scenario& scenario) { return content_hash(to_json(scenario).dump()); }

}  // namespace memfail::data

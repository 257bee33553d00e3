// SPDX-License-Identifier: MIT
// Loading and checking the dynamic lexicon: the typed definitions are read with a Reader that keeps
// the first problem (file and JSON path) and lets parsing run on with defaults, so one function per
// definition kind reads like the file it parses. Templates are then checked against the variables
// their kind supplies, so a typo ("{strat_time}") fails here, not while generating a user.
#include <memfail/embedded/dynamic_lexicon.hpp>
#include <memfail/suites/lexicon_reader.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/dynamic/lexicon.hpp>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>

namespace memfail::suites::dynamic::gen {

namespace {

using nlohmann::json;

using Reader = suites::LexiconReader;

// Each element of `arr` (a list, or null after a reported problem).
template <class F>
void each(const json& arr, const std::string& path, F&& f) {
    if (!arr.is_array()) return;
    for (std::size_t i = 0; i < arr.size(); ++i) f(arr[i], path + "[" + std::to_string(i) + "]");
}

LogTemplate read_log(Reader& r, const json& j, const std::string& path) {
    LogTemplate t;
    t.app = r.str(j, "app", path);
    t.api = r.str(j, "api", path);
    if (j.contains("at")) t.at = r.str(j, "at", path);
    t.request = r.member(j, "request", path);
    if (!t.request.is_object()) r.fail(path + ".request", "must be an object");
    if (j.contains("response")) t.response = j.at("response");
    return t;
}

int read_clock(Reader& r, const std::string& text, const std::string& path) {
    const auto minutes = dates::parse_clock(text);
    if (!minutes || text.size() != 5) r.fail(path, "must be a time \"HH:MM\", not '" + text + "'");
    return minutes.value_or(0);
}

HabitDef read_habit(Reader& r, const json& j, const std::string& path) {
    HabitDef h;
    h.id = r.str(j, "id", path);
    h.domain = r.str(j, "domain", path);
    h.label = r.str(j, "label", path);
    h.activity = r.str(j, "activity", path);
    h.group = r.str(j, "group", path);
    h.hint = r.str(j, "hint", path);
    for (const auto& spec : r.strings(j, "schedules", path)) {
        auto schedule = parse_schedule(spec);
        if (!schedule) r.fail(path + ".schedules", schedule.error().message);
        else h.schedules.push_back(*schedule);
    }
    for (const auto& t : r.strings(j, "start_times", path)) h.start_times.push_back(read_clock(r, t, path + ".start_times"));
    h.durations = r.ints(j, "durations", path);
    h.locations = r.str(j, "locations", path);
    h.log = read_log(r, r.member(j, "log", path), path + ".log");
    if (h.log.at != "start" && h.log.at != "end") r.fail(path + ".log.at", "must be \"start\" or \"end\"");
    return h;
}

data::FieldType read_field_type(Reader& r, const std::string& name, const std::string& path) {
    const auto type = data::parse_field_type(name);
    if (!type) r.fail(path, "unknown field type '" + name + "'");
    return type.value_or(data::FieldType::text);
}

AttributeDef read_attribute(Reader& r, const json& j, const std::string& path) {
    AttributeDef a;
    a.id = r.str(j, "id", path);
    a.domain = r.str(j, "domain", path);
    a.label = r.str(j, "label", path);
    a.kind = r.str(j, "kind", path);
    a.group = r.str(j, "group", path);
    a.service = r.str(j, "service", path);
    if (a.kind == "collection") {
        a.pool = r.str(j, "pool", path);
        const auto initial = r.ints(j, "initial", path);
        if (initial.size() != 2 || initial[0] < 0 || initial[0] > initial[1]) r.fail(path + ".initial", "must be [lo, hi]");
        else a.initial_lo = initial[0], a.initial_hi = initial[1];
    } else if (a.kind == "single") {
        each(r.array(j, "fields", path), path + ".fields", [&](const json& f, const std::string& fpath) {
            FieldDef field;
            field.name = r.str(f, "name", fpath);
            field.type = read_field_type(r, r.str(f, "type", fpath), fpath + ".type");
            const auto role = data::parse_field_role(r.str(f, "role", fpath));
            if (!role) r.fail(fpath + ".role", "must be identity, core or detail");
            field.role = role.value_or(data::FieldRole::core);
            if (field.type == data::FieldType::number) {
                const auto range = r.ints(f, "range", fpath);
                if (range.size() != 2 || range[0] > range[1]) r.fail(fpath + ".range", "must be [lo, hi]");
                else field.lo = range[0], field.hi = range[1];
                if (f.contains("step")) field.step = std::max(1, f.value("step", 1));
            } else {
                field.pool = r.str(f, "pool", fpath);
                if (f.contains("paired_with")) field.paired_with = r.str(f, "paired_with", fpath);
            }
            a.fields.push_back(std::move(field));
        });
    } else if (!a.kind.empty()) {
        r.fail(path + ".kind", "must be \"single\" or \"collection\"");
    }
    each(r.array(j, "logs", path), path + ".logs",
         [&](const json& l, const std::string& lpath) { a.logs.push_back(read_log(r, l, lpath)); });
    return a;
}

PreferenceDef read_preference(Reader& r, const json& j, const std::string& path) {
    PreferenceDef p;
    p.id = r.str(j, "id", path);
    p.domain = r.str(j, "domain", path);
    p.label = r.str(j, "label", path);
    p.group = r.str(j, "group", path);
    p.service = r.str(j, "service", path);
    each(r.array(j, "options", path), path + ".options", [&](const json& o, const std::string& opath) {
        PreferenceOption option;
        option.statement = r.str(o, "statement", opath);
        option.favors = r.str(o, "favors", opath);
        option.avoids = r.str(o, "avoids", opath);
        each(r.array(o, "signals", opath), opath + ".signals", [&](const json& s, const std::string& spath) {
            Signal signal;
            const std::string side = r.str(s, "side", spath);
            if (side != "favors" && side != "avoids") r.fail(spath + ".side", "must be \"favors\" or \"avoids\"");
            signal.favors = side == "favors";
            signal.mark = r.str(s, "mark", spath);
            signal.log = read_log(r, s, spath);
            option.signals.push_back(std::move(signal));
        });
        p.options.push_back(std::move(option));
    });
    if (p.options.size() < 2) r.fail(path + ".options", "a preference needs at least two options to shift between");
    return p;
}

CauseDef read_cause(Reader& r, const json& j, const std::string& path) {
    static const std::set<std::string> k_ops = {"modify", "acquire", "drop", "add_item", "remove_item"};
    CauseDef c;
    c.id = r.str(j, "id", path);
    c.kind = r.str(j, "kind", path);
    c.description = r.str(j, "description", path);
    each(r.array(j, "effects", path), path + ".effects", [&](const json& e, const std::string& epath) {
        Effect effect{r.str(e, "key", epath), r.str(e, "op", epath)};
        if (!effect.op.empty() && !k_ops.count(effect.op)) r.fail(epath + ".op", "unknown operation '" + effect.op + "'");
        c.effects.push_back(std::move(effect));
    });
    return c;
}

CallDef read_call(Reader& r, const json& j, const std::string& path) {
    CallDef c;
    const std::string id = r.str(j, "id", path);
    const auto dot = id.find('.');
    if (dot == std::string::npos) r.fail(path + ".id", "must be \"app.api\"");
    else c.app = id.substr(0, dot), c.api = id.substr(dot + 1);
    const json& per_day = r.member(j, "per_day", path);
    if (per_day.is_number()) c.per_day = per_day.get<double>();
    if (!per_day.is_number() || !(c.per_day >= 0 && c.per_day <= 50)) r.fail(path + ".per_day", "must be a number from 0 to 50");
    c.request = r.member(j, "request", path);
    c.response = r.member(j, "response", path);
    if (!c.request.is_object()) r.fail(path + ".request", "must be an object");
    if (!c.response.is_object()) r.fail(path + ".response", "must be an object");
    return c;
}

EmployerDef read_employer(Reader& r, const json& j, const std::string& path) {
    EmployerDef e;
    e.name = r.str(j, "name", path);
    e.sector = r.str(j, "sector", path);
    each(r.array(j, "roles", path), path + ".roles", [&](const json& role, const std::string& rpath) {
        e.roles.push_back({r.str(role, "title", rpath), r.str(role, "occupation", rpath)});
        for (std::size_t i = 0; i + 1 < e.roles.size(); ++i)
            if (e.roles[i].title == e.roles.back().title) r.fail(rpath + ".title", "'" + e.roles.back().title + "' is listed twice");
    });
    return e;
}

// The pools the employer attribute's fields draw from, derived from tables.employers: the names,
// and every role title.
void derive_employer_pools(Reader& r, Lexicon& lex) {
    std::vector<std::string> names, titles;
    for (const auto& e : lex.employers) {
        if (std::find(names.begin(), names.end(), e.name) != names.end())
            r.fail("tables.employers", "employer '" + e.name + "' is listed twice");
        names.push_back(e.name);
        for (const auto& role : e.roles)
            if (std::find(titles.begin(), titles.end(), role.title) == titles.end()) titles.push_back(role.title);
    }
    for (const char* pool : {"employers", "job_titles"})
        if (lex.pools.count(pool)) r.fail(std::string("pools.") + pool, "is derived from tables.employers, not listed");
    lex.pools["employers"] = std::move(names);
    lex.pools["job_titles"] = std::move(titles);
}

void read_file(Reader& r, const json& doc, Lexicon& lex) {
    const json& pools = r.member(doc, "pools", "");
    if (pools.is_object())
        for (const auto& [name, words] : pools.items()) {
            if (lex.pools.count(name)) r.fail("pools." + name, "pool '" + name + "' is defined in two files");
            lex.pools[name] = r.strings(pools, name.c_str(), "pools");
        }
    const json& tables = r.member(doc, "tables", "");
    if (!tables.is_object()) return;
    for (const auto& [name, rows] : tables.items()) {
        const std::string path = "tables." + name;
        if (name == "habits")
            each(rows, path, [&](const json& j, const std::string& p) { lex.habits.push_back(read_habit(r, j, p)); });
        else if (name == "attributes")
            each(rows, path, [&](const json& j, const std::string& p) { lex.attributes.push_back(read_attribute(r, j, p)); });
        else if (name == "preferences")
            each(rows, path, [&](const json& j, const std::string& p) { lex.preferences.push_back(read_preference(r, j, p)); });
        else if (name == "causes")
            each(rows, path, [&](const json& j, const std::string& p) { lex.causes.push_back(read_cause(r, j, p)); });
        else if (name == "calls")
            each(rows, path, [&](const json& j, const std::string& p) {
                CallDef c = read_call(r, j, p);
                const std::string id = c.app + "." + c.api;
                if (lex.call_index.count(id)) r.fail(p + ".id", "'" + id + "' is listed twice");
                lex.call_index[id] = lex.calls.size();
                lex.calls.push_back(std::move(c));
            });
        else if (name == "employers") {
            each(rows, path, [&](const json& j, const std::string& p) { lex.employers.push_back(read_employer(r, j, p)); });
            derive_employer_pools(r, lex);
        }
        else if (name == "envelopes")
            each(rows, path, [&](const json& j, const std::string& p) {
                lex.envelopes[r.str(j, "id", p)] = {{"request", r.member(j, "request", p)}, {"response", r.member(j, "response", p)}};
            });
        else
            r.fail(path, "unknown table '" + name + "'");
    }
}

// ---- template checks -------------------------------------------------------------------------------

bool parse_range(std::string_view body, int& lo, int& hi) {
    const auto dash = body.find('-');
    if (dash == std::string_view::npos || dash == 0) return false;
    try {
        lo = std::stoi(std::string(body.substr(0, dash)));
        hi = std::stoi(std::string(body.substr(dash + 1)));
    } catch (...) {
        return false;
    }
    return lo <= hi;
}

// Every placeholder of every string in `t` is a known pool, a valid range, {id} or one of `vars`.
void check_template(Reader& r, const json& t, const std::set<std::string>& vars, const Lexicon& lex,
                    const std::string& path) {
    if (t.is_object()) {
        for (const auto& [k, v] : t.items()) check_template(r, v, vars, lex, path + "." + k);
    } else if (t.is_array()) {
        for (std::size_t i = 0; i < t.size(); ++i) check_template(r, t[i], vars, lex, path + "[" + std::to_string(i) + "]");
    } else if (t.is_string()) {
        const std::string& s = t.get_ref<const std::string&>();
        for (std::size_t i = s.find('{'); i != std::string::npos; i = s.find('{', i + 1)) {
            const auto end = s.find('}', i);
            if (end == std::string::npos) return r.fail(path, "unclosed placeholder in '" + s + "'");
            const std::string body = s.substr(i + 1, end - i - 1);
            int lo = 0, hi = 0;
            const bool ok = body == "id" || vars.count(body) ||
                            (body.size() > 1 && body[0] == '@' && lex.pools.count(body.substr(1))) ||
                            (body.size() > 1 && (body[0] == '#' || body[0] == '$') && parse_range(body.substr(1), lo, hi));
            if (!ok) r.fail(path, "unknown placeholder '{" + body + "}'");
        }
    }
}

bool template_holds(const json& t, const std::string& placeholder) {
    return t.dump().find("{" + placeholder + "}") != std::string::npos;
}

// A template's placeholders are known, and its fields are fields of its API's call (so every log
// of the API has the call's one shape once the rest are filled).
void check_log(Reader& r, const LogTemplate& log, const std::set<std::string>& vars, const Lexicon& lex,
               const std::string& path) {
    check_template(r, log.request, vars, lex, path + ".request");
    if (!log.response.is_null()) check_template(r, log.response, vars, lex, path + ".response");
    const auto it = lex.call_index.find(log.app + "." + log.api);
    if (it == lex.call_index.end())
        return r.fail(path, "'" + log.app + "." + log.api + "' has no entry in apps.json's calls");
    const CallDef& call = lex.calls[it->second];
    for (const auto& [part, fields, allowed] : {std::tuple{"request", &log.request, &call.request},
                                                std::tuple{"response", &log.response, &call.response}}) {
        if (!fields->is_object()) continue;
        for (const auto& [k, v] : fields->items())
            if (!allowed->contains(k))
                r.fail(path + "." + part + "." + k, "not a " + std::string(part) + " field of '" + log.app + "." + log.api +
                                                          "' in apps.json's calls");
    }
}

void check_definitions(Reader& r, const Lexicon& lex) {
    static const std::set<std::string> k_domains = {"work_and_education",    "family_and_relationships",
                                                    "social_and_community",  "health_and_self_care",
                                                    "finances_and_material_living", "leisure_and_media"};
    auto check_domain = [&](const std::string& domain, const std::string& path) {
        if (!k_domains.count(domain)) r.fail(path + ".domain", "unknown life domain '" + domain + "'");
    };
    auto check_pool = [&](const std::string& name, const std::string& path) {
        if (!lex.pools.count(name)) r.fail(path, "unknown pool '" + name + "'");
    };
    const std::set<std::string> habit_vars = {"start_time", "end_time", "location", "date"};
    for (std::size_t i = 0; i < lex.habits.size(); ++i) {
        const HabitDef& h = lex.habits[i];
        const std::string path = "habits.json: tables.habits[" + std::to_string(i) + "]";
        check_domain(h.domain, path);
        check_pool(h.locations, path + ".locations");
        check_log(r, h.log, habit_vars, lex, path + ".log");
        // Every field of a habit's value must be shown by each occurrence's log.
        for (const char* v : {"start_time", "end_time", "location"})
            if (!template_holds(h.log.request, v)) r.fail(path + ".log.request", std::string("must show {") + v + "}");
    }
    for (std::size_t i = 0; i < lex.attributes.size(); ++i) {
        const AttributeDef& a = lex.attributes[i];
        const std::string path = "attributes.json: tables.attributes[" + std::to_string(i) + "]";
        check_domain(a.domain, path);
        std::set<std::string> vars;
        if (a.collection()) {
            check_pool(a.pool, path + ".pool");
            vars.insert("item");
        }
        for (std::size_t fi = 0; fi < a.fields.size(); ++fi) {
            const FieldDef& f = a.fields[fi];
            vars.insert(f.name);
            if (f.type != data::FieldType::number) check_pool(f.pool, path + ".fields." + f.name);
            // A paired role names an earlier employer field, so the role is drawn once the employer is.
            if (f.paired_with.empty()) continue;
            const auto earlier = a.fields.begin() + static_cast<std::ptrdiff_t>(fi);
            const auto by = std::find_if(a.fields.begin(), earlier, [&](const FieldDef& g) { return g.name == f.paired_with; });
            if (by == earlier || by->pool != "employers" || f.pool != "job_titles")
                r.fail(path + ".fields." + f.name + ".paired_with",
                       "a paired field draws from job_titles and names an earlier field that draws from employers");
        }
        for (std::size_t l = 0; l < a.logs.size(); ++l) check_log(r, a.logs[l], vars, lex, path + ".logs[" + std::to_string(l) + "]");
        for (const auto& v : vars) {
            bool shown = false;
            for (const auto& l : a.logs) shown = shown || template_holds(l.request, v) || template_holds(l.response, v);
            if (!shown) r.fail(path + ".logs", "no log shows {" + v + "}");
        }
    }
    for (std::size_t i = 0; i < lex.preferences.size(); ++i) {
        const PreferenceDef& p = lex.preferences[i];
        const std::string path = "preferences.json: tables.preferences[" + std::to_string(i) + "]";
        check_domain(p.domain, path);
        for (std::size_t o = 0; o < p.options.size(); ++o)
            for (std::size_t s = 0; s < p.options[o].signals.size(); ++s) {
                const Signal& sig = p.options[o].signals[s];
                const std::string spath = path + ".options[" + std::to_string(o) + "].signals[" + std::to_string(s) + "]";
                check_log(r, sig.log, {}, lex, spath);
                const std::string shown = text::normalize(sig.log.request.dump() + " " + sig.log.response.dump());
                if (!text::normalized_contains(shown, text::normalize(sig.mark)))
                    r.fail(spath + ".mark", "'" + sig.mark + "' does not appear in the signal's log");
            }
    }
    const std::set<std::string> call_vars = {"start_time", "end_time", "date"};
    for (std::size_t i = 0; i < lex.calls.size(); ++i)
        check_log(r, {lex.calls[i].app, lex.calls[i].api, "", lex.calls[i].request, lex.calls[i].response}, call_vars, lex,
                  "apps.json: tables.calls[" + std::to_string(i) + "]");
    const auto& apps = lex.pools.count("apps") ? lex.pools.at("apps") : std::vector<std::string>{};
    for (const auto& [app, envelope] : lex.envelopes) {
        check_template(r, envelope, {}, lex, "apps.json: tables.envelopes." + app);
        if (std::find(apps.begin(), apps.end(), app) == apps.end()) r.fail("apps.json: tables.envelopes." + app, "not an app of pools.apps");
    }
    // Every log's app is one of the apps, so the suite's app list is the whole list.
    auto known_app = [&](const std::string& app, const std::string& path) {
        if (std::find(apps.begin(), apps.end(), app) == apps.end()) r.fail(path, "unknown app '" + app + "'");
    };
    for (const auto& h : lex.habits) known_app(h.log.app, "habits.json: " + h.id);
    for (const auto& a : lex.attributes)
        for (const auto& l : a.logs) known_app(l.app, "attributes.json: " + a.id);
    for (const auto& p : lex.preferences)
        for (const auto& o : p.options)
            for (const auto& sig : o.signals) known_app(sig.log.app, "preferences.json: " + p.id);
    for (const auto& c : lex.calls) known_app(c.app, "apps.json: calls " + c.app + "." + c.api);
    for (const char* pool : {"first_names", "last_names", "cities", "occupations", "households", "apps", "state_completion",
                             "service_habit", "service_preference", "service_attribute"})
        check_pool(pool, std::string("pools.") + pool);
}

std::string random_id(Rng& rng) {
    static const char* k_hex = "0123456789abcdef";
    std::string out(10, '0');
    for (char& c : out) c = k_hex[rng.below(16)];
    return out;
}

std::string to_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

json fill_string(const std::string& s, const Vars& vars, const Lexicon& lex, Rng& rng, const std::set<std::string>* avoid) {
    std::string out;
    std::optional<json> whole;  // the value when the string is exactly one placeholder
    for (std::size_t i = 0; i < s.size();) {
        const auto open = s.find('{', i);
        if (open == std::string::npos) {
            out.append(s, i, std::string::npos);
            break;
        }
        out.append(s, i, open - i);
        const auto close = s.find('}', open);
        MF_ASSERT(close != std::string::npos, "unclosed placeholder (the lexicon check missed it)");
        const std::string body = s.substr(open + 1, close - open - 1);
        json value;
        int lo = 0, hi = 0;
        if (body == "id") value = random_id(rng);
        else if (body[0] == '@') {
            const auto& words = lex.pool(body.substr(1));
            std::string word = rng.pick(words);
            for (int tries = 0; avoid && tries < 8 && avoid->count(word); ++tries) word = rng.pick(words);
            value = word;
        }
        else if (body[0] == '#' && parse_range(body.substr(1), lo, hi)) value = rng.between(lo, hi);
        else if (body[0] == '$' && parse_range(body.substr(1), lo, hi))
            value = static_cast<double>(rng.between(lo * 100, hi * 100)) / 100.0;
        else {
            const auto it = vars.find(body);
            MF_ASSERT(it != vars.end(), "template variable without a value (the lexicon check missed it)");
            value = it->second;
        }
        if (open == 0 && close + 1 == s.size()) whole = value;
        out += to_text(value);
        i = close + 1;
    }
    if (whole && whole->is_number()) return *whole;
    return out;
}

}  // namespace

const std::vector<std::string>& frequency_types() {
    static const std::vector<std::string> k = {"daily", "weekly", "biweekly", "monthly_by_date", "monthly_nth_weekday"};
    return k;
}

Result<Schedule> parse_schedule(std::string_view spec) {
    const auto parts = text::split(spec, ':');
    auto bad = [&](const std::string& why) {
        return make_error(ErrorKind::invalid_input, "schedule '" + std::string(spec) + "': " + why);
    };
    auto number = [](const std::string& s, int lo, int hi) -> std::optional<int> {
        if (s.empty() || s.size() > 2 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
        const int n = std::stoi(s);
        if (n < lo || n > hi) return std::nullopt;
        return n;
    };
    Schedule s;
    s.type = parts.empty() ? "" : parts[0];
    if (s.type == "daily" && parts.size() == 1) return s;
    if ((s.type == "weekly" || s.type == "biweekly") && parts.size() == 2) {
        for (const auto& d : text::split(parts[1], ',')) {
            const auto day = number(d, 0, 6);
            if (!day) return bad("days are 0 (Monday) .. 6 (Sunday)");
            s.days.push_back(*day);
        }
        if (s.type == "biweekly" && s.days.size() != 1) return bad("a biweekly schedule has one day");
        return s;
    }
    if (s.type == "monthly_by_date" && parts.size() == 2) {
        const auto day = number(parts[1], 1, 28);
        if (!day) return bad("the day of the month is 1..28 (every month has it)");
        s.day_of_month = *day;
        return s;
    }
    if (s.type == "monthly_nth_weekday" && parts.size() == 3) {
        const auto nth = number(parts[1], 1, 4);
        const auto wd = number(parts[2], 0, 6);
        if (!nth || !wd) return bad("nth is 1..4 and the weekday 0..6");
        s.nth = *nth, s.weekday = *wd;
        return s;
    }
    return bad("expected daily, weekly:<days>, biweekly:<day>, monthly_by_date:<day> or monthly_nth_weekday:<nth>:<weekday>");
}

nlohmann::json schedule_json(const Schedule& s) {
    json out = {{"frequency_type", s.type}};
    if (s.type == "weekly" || s.type == "biweekly") out["days_of_week"] = s.days;
    if (s.type == "monthly_by_date") out["day_of_month"] = s.day_of_month;
    if (s.type == "monthly_nth_weekday") {
        out["nth"] = s.nth;
        out["weekday"] = s.weekday;
    }
    return out;
}

Schedule schedule_from_json(const nlohmann::json& v) {
    Schedule s;
    s.type = v.at("frequency_type").get<std::string>();
    if (v.contains("days_of_week")) s.days = v.at("days_of_week").get<std::vector<int>>();
    s.day_of_month = v.value("day_of_month", 0);
    s.nth = v.value("nth", 0);
    s.weekday = v.value("weekday", 0);
    return s;
}

bool occurs_on(const Schedule& s, std::int64_t day, std::int64_t origin) {
    const dates::Date date = dates::civil_from_days(day);
    const int wd = dates::weekday(date);
    auto on_day = [&] { return std::find(s.days.begin(), s.days.end(), wd) != s.days.end(); };
    if (s.type == "daily") return true;
    if (s.type == "weekly") return on_day();
    if (s.type == "biweekly") return on_day() && ((day - origin) / 7) % 2 == 0;
    if (s.type == "monthly_by_date") return date.day == s.day_of_month;
    if (s.type == "monthly_nth_weekday") return wd == s.weekday && (date.day - 1) / 7 + 1 == s.nth;
    return false;
}

const std::vector<std::string>& Lexicon::pool(std::string_view name) const {
    const auto it = pools.find(name);
    MF_ASSERT(it != pools.end() && !it->second.empty(), "unknown or empty pool (the lexicon check missed it)");
    return it->second;
}

Result<Lexicon> parse_lexicon(const std::vector<std::pair<std::string, std::string>>& files) {
    Lexicon lex;
    for (const auto& [name, content] : files) {
        json doc = json::parse(content, nullptr, false);
        if (doc.is_discarded() || !doc.is_object())
            return make_error(ErrorKind::invalid_input, "is not a JSON object", name);
        Reader r(name);
        read_file(r, doc, lex);
        if (r.error()) return *r.error();
    }
    Reader r("dynamic lexicon");
    if (lex.habits.empty() || lex.attributes.empty() || lex.preferences.empty() || lex.causes.empty() || lex.calls.empty())
        r.fail("tables", "habits, attributes, preferences, causes and calls are all required");
    check_definitions(r, lex);
    if (r.error()) return *r.error();
    return lex;
}

const EmployerRole* EmployerDef::role(std::string_view title) const {
    for (const auto& r : roles)
        if (r.title == title) return &r;
    return nullptr;
}

const EmployerDef* Lexicon::employer(std::string_view name) const {
    for (const auto& e : employers)
        if (e.name == name) return &e;
    return nullptr;
}

const Result<Lexicon>& dynamic_lexicon() {
    static const Result<Lexicon> k_lexicon = [] {
        std::vector<std::pair<std::string, std::string>> files;
        for (const auto& f : embedded::dynamic_lexicon::files())
            files.emplace_back(std::string(f.name), std::string(f.content));
        return parse_lexicon(files);
    }();
    return k_lexicon;
}

const CallDef& Lexicon::call(const std::string& app, const std::string& api) const {
    const auto it = call_index.find(app + "." + api);
    MF_ASSERT(it != call_index.end(), "an API without a call (the lexicon check missed it)");
    return calls[it->second];
}

nlohmann::json fill_template(const nlohmann::json& t, const Vars& vars, const Lexicon& lex, Rng& rng,
                             const std::set<std::string>* avoid) {
    if (t.is_object()) {
        json out = json::object();
        for (const auto& [k, v] : t.items()) out[k] = fill_template(v, vars, lex, rng, avoid);
        return out;
    }
    if (t.is_array()) {
        json out = json::array();
        for (const auto& v : t) out.push_back(fill_template(v, vars, lex, rng, avoid));
        return out;
    }
    if (t.is_string()) return fill_string(t.get<std::string>(), vars, lex, rng, avoid);
    return t;
}

}  // namespace memfail::suites::dynamic::gen

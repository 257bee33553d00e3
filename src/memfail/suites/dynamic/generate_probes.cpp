// SPDX-License-Identifier: MIT
// Stage 3 of the dynamic generator: checkpoints, the ground-truth profile (a snapshot per
// checkpoint, each field with the most recent logs that establish its value), and the two tasks per
// key per checkpoint. Gold evidence and conflicting logs are only ever drawn from windows up to the
// checkpoint's, so every task is answerable from what is stored by then (checkpoint isolation).
#include <memfail/core/text.hpp>
#include <memfail/suites/dynamic/plan.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace memfail::suites::dynamic::gen {

namespace {

using nlohmann::json;
using data::FieldRole;
using data::FieldType;

constexpr std::size_t k_max_evidence = 4;     // per field: the most recent logs
constexpr std::size_t k_max_superseded = 4;   // conflicting logs of the key's own past values
constexpr std::size_t k_max_competing = 2;    // conflicting logs per competing key

// One leaf a task grades; `source` is the path in the state's value (or the evidence path) whose
// logs evidence it.
struct FieldSpec {
    std::string path;
    FieldType type = FieldType::text;
    FieldRole role = FieldRole::core;
    json expected;
    std::vector<std::string> options;
    std::string source;
};

const json& leaf_at(const json& value, const std::string& path) {
    static const json k_null;
    const json* at = &value;
    for (const auto& part : text::split(path, '.')) {
        if (!at->is_object() || !at->contains(part)) return k_null;
        at = &at->at(part);
    }
    return *at;
}

void set_leaf(json& value, const std::string& path, json leaf) {
    json* at = &value;
    for (const auto& part : text::split(path, '.')) at = &(*at)[part];
    *at = std::move(leaf);
}

// Whether evidence `e` shows the key's value at window w.
bool is_current(const KeyPlan& k, const Evidence& e, int w) {
    const json& value = k.values[w];
    if (value.is_null()) return false;
    if (k.preference) return e.leaf == k.options[w];
    if (e.path == "items") {
        const json& items = value["items"];
        return std::find(items.begin(), items.end(), e.leaf) != items.end();
    }
    return leaf_at(value, e.path) == e.leaf;
}

std::vector<std::string> current_evidence(const UserPlan& plan, std::size_t ki, const std::string& path, int w) {
    std::vector<std::string> out;
    const auto& evidence = plan.evidence[ki];
    // Most recent first: evidence is appended window by window, in time order within a habit's window
    // but not across kinds, so order by the log's moment.
    std::vector<const Evidence*> fits;
    for (const auto& e : evidence)
        if (e.window <= w && e.path == path && is_current(plan.keys[ki], e, w)) fits.push_back(&e);
    std::sort(fits.begin(), fits.end(), [&](const Evidence* a, const Evidence* b) {
        return plan.log_ids[a->log] > plan.log_ids[b->log];
    });
    for (const Evidence* e : fits) {
        if (out.size() == k_max_evidence) break;
        if (std::find(out.begin(), out.end(), plan.log_ids[e->log]) == out.end()) out.push_back(plan.log_ids[e->log]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<FieldSpec> state_fields(const KeyPlan& k, int w, const Lexicon& lex) {
    const json& v = k.values[w];
    std::vector<FieldSpec> out;
    auto add = [&](std::string path, FieldType type, FieldRole role, std::vector<std::string> options = {}) {
        json expected = leaf_at(v, path);
        out.push_back({path, type, role, std::move(expected), std::move(options), path});
    };
    if (k.habit) {
        add("schedule.frequency_type", FieldType::enumeration, FieldRole::core, frequency_types());
        if (v["schedule"].contains("days_of_week")) add("schedule.days_of_week", FieldType::weekday, FieldRole::core);
        if (v["schedule"].contains("day_of_month")) add("schedule.day_of_month", FieldType::number, FieldRole::core);
        if (v["schedule"].contains("nth")) {
            add("schedule.nth", FieldType::number, FieldRole::core);
            add("schedule.weekday", FieldType::weekday, FieldRole::core);
        }
        add("timing.start_time", FieldType::time, FieldRole::core);
        add("timing.end_time", FieldType::time, FieldRole::detail);
        add("location", FieldType::text, FieldRole::detail);
    } else if (k.attribute && k.attribute->collection()) {
        add("items", FieldType::list, FieldRole::core);
    } else if (k.attribute) {
        for (const auto& f : k.attribute->fields)
            add(f.name, f.type, f.role, f.type == FieldType::enumeration ? lex.pool(f.pool) : std::vector<std::string>{});
    } else {
        add("statement", FieldType::text, FieldRole::core);
    }
    return out;
}

// The first day after `after` on which the habit falls (a schedule falls within eight weeks).
std::int64_t next_occurrence(const UserPlan& plan, const Schedule& s, std::int64_t after) {
    for (std::int64_t day = after + 1; day <= after + 62; ++day)
        if (occurs_on(s, day, plan.window_start[0])) return day;
    return after + 1;
}

struct Service {
    std::vector<FieldSpec> fields;
    std::string question;
};

std::string fill_text(std::string tmpl, const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [name, value] : vars) tmpl = text::replace_all(tmpl, "{" + name + "}", value);
    return tmpl;
}

Service habit_service(const UserPlan& plan, const KeyPlan& k, int w, const Lexicon& lex) {
    const json& v = k.values[w];
    const Schedule s = schedule_from_json(v["schedule"]);
    const std::int64_t next = next_occurrence(plan, s, plan.checkpoint_day(w));
    const int next_wd = dates::weekday(dates::civil_from_days(next));
    const std::string day_source = v["schedule"].contains("days_of_week") ? "schedule.days_of_week"
                                   : v["schedule"].contains("day_of_month") ? "schedule.day_of_month"
                                   : v["schedule"].contains("weekday")      ? "schedule.weekday"
                                                                            : "schedule.frequency_type";
    Service out;
    out.fields = {{"reminder.activity", FieldType::text, FieldRole::identity, k.habit->activity, {}, "timing.start_time"},
                  {"reminder.day", FieldType::weekday, FieldRole::core, dates::weekday_name(next_wd), {}, day_source},
                  {"reminder.time", FieldType::time, FieldRole::core, v["timing"]["start_time"], {}, "timing.start_time"},
                  {"reminder.place", FieldType::text, FieldRole::detail, v["location"], {}, "location"}};
    const std::int64_t now = next - 1;
    const std::string when = std::string(dates::weekday_name(dates::weekday(dates::civil_from_days(now)))) +
                             " 18:00, " + readable_date(now);
    out.question = fill_text(lex.text("service_habit"), {{"now", when}, {"hint", k.habit->hint}});
    return out;
}

Service preference_service(const UserPlan& plan, const KeyPlan& k, int w, const Lexicon& lex) {
    const PreferenceOption& o = k.preference->options[k.options[w]];
    Service out;
    out.fields = {{"filters.include", FieldType::text, FieldRole::core, o.favors, {}, "favors"},
                  {"filters.exclude", FieldType::text, FieldRole::detail, o.avoids, {}, "avoids"}};
    out.question = fill_text(lex.text("service_preference"),
                             {{"service", k.preference->service}, {"date", readable_date(plan.checkpoint_day(w))}});
    return out;
}

Service attribute_service(const UserPlan& plan, const KeyPlan& k, int w, const Lexicon& lex) {
    Service out;
    for (auto f : state_fields(k, w, lex)) {
        f.path = "form." + f.path;
        out.fields.push_back(std::move(f));
    }
    out.question = fill_text(lex.text("service_attribute"),
                             {{"service", k.attribute->service}, {"date", readable_date(plan.checkpoint_day(w))}});
    return out;
}

// The task's template (every graded leaf "<fill>") and reference output.
std::pair<json, json> shapes(const std::vector<FieldSpec>& fields, const json& base) {
    json tmpl = base, expected = base;
    for (const auto& f : fields) {
        set_leaf(tmpl, f.path, "<fill>");
        set_leaf(expected, f.path, f.expected);
    }
    return {tmpl, expected};
}

// Logs a system may confuse with the current value: the key's superseded values, and the current
// values of competing keys. Never ones that are this task's gold evidence.
std::vector<std::string> conflicting_logs(const UserPlan& plan, std::size_t ki, int w, const std::set<std::string>& gold,
                                          const std::vector<std::size_t>& competing, const Lexicon& lex) {
    std::vector<std::string> superseded;
    for (const auto& e : plan.evidence[ki])
        if (e.window <= w && !is_current(plan.keys[ki], e, w) && !gold.count(plan.log_ids[e.log]))
            superseded.push_back(plan.log_ids[e.log]);
    std::sort(superseded.begin(), superseded.end());
    superseded.erase(std::unique(superseded.begin(), superseded.end()), superseded.end());
    if (superseded.size() > k_max_superseded)
        superseded.erase(superseded.begin(), superseded.end() - static_cast<std::ptrdiff_t>(k_max_superseded));
    std::set<std::string> out(superseded.begin(), superseded.end());
    for (const auto ci : competing) {
        if (plan.keys[ci].values[w].is_null()) continue;
        const auto fields = state_fields(plan.keys[ci], w, lex);
        auto ids = current_evidence(plan, ci, fields.front().source, w);
        std::size_t taken = 0;
        for (auto it = ids.rbegin(); it != ids.rend() && taken < k_max_competing; ++it)
            if (!gold.count(*it) && out.insert(*it).second) ++taken;
    }
    return {out.begin(), out.end()};
}

// new: first holds here; updated: changed since the previous checkpoint; retained: the same since it
// first held; settled: the same as at the previous checkpoint, after an earlier change.
std::string state_change(const KeyPlan& k, int w) {
    if (w == 0 || k.values[w - 1].is_null()) return "new";
    if (k.values[w - 1] != k.values[w]) return "updated";
    for (int i = 0; i < w; ++i)
        if (!k.values[i].is_null() && k.values[i] != k.values[w]) return "settled";
    return "retained";
}

data::ProbeField probe_field(const UserPlan& plan, std::size_t ki, int w, const FieldSpec& f) {
    data::ProbeField out;
    out.path = f.path;
    out.type = f.type;
    out.role = f.role;
    out.expected = f.expected;
    out.options = f.options;
    out.evidence = current_evidence(plan, ki, f.source, w);
    return out;
}

data::Probe make_probe(const UserPlan& plan, std::size_t ki, int w, const std::string& task,
                       const std::vector<FieldSpec>& fields, const json& base, std::string question,
                       const data::Checkpoint& cp, const std::vector<std::size_t>& competing, const Lexicon& lex) {
    const KeyPlan& k = plan.keys[ki];
    data::Probe p;
    p.id = plan.scenario_id + "." + cp.id + "." + (task == "state_completion" ? "sc" : "ps") + "." + k.key;
    p.after_session = cp.after_session;
    p.kind = data::ProbeKind::open;
    p.task = task;
    p.state_key = k.key;
    p.checkpoint = cp.id;
    auto [tmpl, expected] = shapes(fields, base);
    p.question = text::replace_all(std::move(question), "{template}", tmpl.dump());
    p.answer_template = std::move(tmpl);
    p.expected = expected;
    p.answer = expected.dump();
    std::set<std::string> gold;
    for (const auto& f : fields) {
        p.fields.push_back(probe_field(plan, ki, w, f));
        gold.insert(p.fields.back().evidence.begin(), p.fields.back().evidence.end());
    }
    p.conflicting = conflicting_logs(plan, ki, w, gold, competing, lex);
    p.state_change = state_change(k, w);
    p.meta = {{"family", data::state_family_name(k.family)}, {"domain", k.domain}, {"key", k.key}};
    return p;
}

std::vector<data::Checkpoint> checkpoints(const UserPlan& plan, const std::vector<data::Session>& sessions) {
    std::vector<data::Checkpoint> out;
    for (int w = 0; w < plan.windows; ++w) {
        const std::string date = dates::format_date(dates::civil_from_days(plan.checkpoint_day(w)));
        data::Checkpoint cp{"C" + std::to_string(w + 1), date + "T23:59:59Z", ""};
        // Session ids are "dYYYY-MM-DD", so their order is the calendar's.
        for (const auto& s : sessions)
            if (s.id.substr(1) <= date) cp.after_session = s.id;
        out.push_back(std::move(cp));
    }
    return out;
}

}  // namespace

std::string readable_date(std::int64_t day) {
    static const char* k_months[] = {"January", "February", "March",     "April",   "May",      "June",
                                     "July",    "August",   "September", "October", "November", "December"};
    const auto d = dates::civil_from_days(day);
    return std::string(k_months[d.month - 1]) + " " + std::to_string(d.day) + ", " + std::to_string(d.year);
}

std::string family_prefix(data::StateFamily family) {
    switch (family) {
        case data::StateFamily::attribute: return "attributes_state";
        case data::StateFamily::habit: return "habits_state";
        case data::StateFamily::preference: return "preferences_state";
    }
    return {};
}

// A superseded log can evidence the old value and the current one alike (a Thursday run when the
// routine went from Mondays and Thursdays to Thursdays only): its details are all in a current gold
// log, so no memory could hold the gold without "holding" it. Such a log is no conflict; it is left
// out of `conflicting` so that retrieving the current evidence never reads as conflated.
void drop_indistinguishable_conflicts(data::Scenario& scenario) {
    const data::MessageIndex messages(scenario);
    std::map<std::string, std::string> normalized;  // log id -> normalised content, as needed
    auto text_of = [&](const std::string& id) -> const std::string& {
        auto it = normalized.find(id);
        if (it != normalized.end()) return it->second;
        const data::Message* m = messages.message(id);
        return normalized.emplace(id, m ? text::normalize(m->content) : std::string()).first->second;
    };
    for (auto& p : scenario.probes) {
        std::set<std::string> gold;
        for (const auto& f : p.fields) gold.insert(f.evidence.begin(), f.evidence.end());
        std::erase_if(p.conflicting, [&](const std::string& c) {
            const data::Message* m = messages.message(c);
            if (!m || !m->app_log || m->app_log->details.empty()) return false;
            std::vector<std::string> details;
            for (const auto& d : m->app_log->details) details.push_back(text::normalize(d));
            return std::any_of(gold.begin(), gold.end(), [&](const std::string& g) {
                const std::string& t = text_of(g);
                return std::all_of(details.begin(), details.end(),
                                   [&](const std::string& d) { return text::normalized_contains(t, d); });
            });
        });
    }
}

void build_ground_truth(const UserPlan& plan, const Lexicon& lex, data::Scenario& scenario) {
    scenario.checkpoints = checkpoints(plan, scenario.sessions);
    // A service question names only the moment and the kind of routine; two competing habits due
    // at the same moment would ask the same question with two right answers. The later one's
    // service task is left out (counted in meta), so every question has one reference.
    std::set<std::pair<std::string, std::string>> asked;  // (checkpoint, question)
    std::size_t ambiguous = 0;
    for (std::size_t ki = 0; ki < plan.keys.size(); ++ki) {
        const KeyPlan& k = plan.keys[ki];
        std::vector<std::size_t> competing;
        data::ProfileState state{k.key, k.family, k.domain, {}, {}};
        for (std::size_t ci = 0; ci < plan.keys.size(); ++ci)
            if (ci != ki && plan.keys[ci].group == k.group) {
                competing.push_back(ci);
                state.competing.push_back(plan.keys[ci].key);
            }
        for (int w = 0; w < plan.windows; ++w) {
            if (k.values[w].is_null() && state.snapshots.empty()) continue;  // not known yet
            const data::Checkpoint& cp = scenario.checkpoints[w];
            data::StateSnapshot snap{cp.id, k.values[w], {}};
            if (k.values[w].is_null()) {
                state.snapshots.push_back(std::move(snap));
                continue;
            }
            const auto fields = state_fields(k, w, lex);
            for (const auto& f : fields) snap.evidence.push_back({f.path, current_evidence(plan, ki, f.source, w)});
            state.snapshots.push_back(std::move(snap));

            const std::string sc_question = fill_text(
                lex.text("state_completion"), {{"label", k.label}, {"date", readable_date(plan.checkpoint_day(w))}});
            scenario.probes.push_back(
                make_probe(plan, ki, w, "state_completion", fields, k.values[w], sc_question, cp, competing, lex));
            const Service service = k.habit        ? habit_service(plan, k, w, lex)
                                    : k.preference ? preference_service(plan, k, w, lex)
                                                   : attribute_service(plan, k, w, lex);
            if (!asked.insert({cp.id, service.question}).second) {
                ++ambiguous;
                continue;
            }
            scenario.probes.push_back(make_probe(plan, ki, w, "personalized_service", service.fields, json::object(),
                                                 service.question, cp, competing, lex));
        }
        scenario.profile.push_back(std::move(state));
    }
    scenario.meta["ambiguous_service_tasks_left_out"] = ambiguous;
    drop_indistinguishable_conflicts(scenario);
}

}  // namespace memfail::suites::dynamic::gen

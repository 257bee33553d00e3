// SPDX-License-Identifier: MIT
// Stage 2 of the dynamic generator: the app logs. Grounded logs show a key's value as it is in their
// window (a run on its weekday at its time from its park; a payroll deposit from the employer; an
// order that shows a taste), each recording which leaf it evidences and carrying the surface
// strings that do in its `details`. Noise logs evidence nothing and make up the bulk; `scale`
// multiplies them. They are the same API calls as the grounded logs (apps.json's calls, at each
// call's rate a day), with the same fields and values none of the user's keys has: every log of an
// API has one shape, so neither the API nor the shape of a log tells evidence from noise. When asked
// (`lookalikes`), a further share imitates the user's own routines and attributes. No template
// states a profile value as a profile value.
#include <memfail/core/text.hpp>
#include <memfail/suites/dynamic/plan.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>

namespace memfail::suites::dynamic::gen {

namespace {

using nlohmann::json;

constexpr double k_daily_log_rate = 0.3;     // a daily routine is logged on about a third of its days
constexpr double k_routine_log_rate = 0.95;  // other routines nearly always
// A day's noise is the calls' daily total (about 66 at scale 1: ~2M tokens in 15 months) times a
// factor drawn from this range, so busy and quiet days alternate.
constexpr double k_noise_day_lo = 0.75;
constexpr double k_noise_day_hi = 1.25;
// Grounded events per user (DynamicMem averages 1,772): drawn per user from this range.
constexpr int k_grounded_lo = 1650;
constexpr int k_grounded_hi = 1900;
constexpr std::size_t k_max_extra_per_slot = 12;  // extra events per attribute or preference window


std::string leaf_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Every value a key of this user ever has (its habit's times and places, its attribute's employers
// and roles), as text: noise never draws one from a pool.
std::set<std::string> used_values(const UserPlan& plan) {
    std::set<std::string> out;
    for (const auto& k : plan.keys)
        for (const auto& v : k.values) {
            if (v.is_null()) continue;
            std::function<void(const json&)> add = [&](const json& x) {
                if (x.is_object() || x.is_array())
                    for (const auto& e : x) add(e);
                else
                    out.insert(leaf_text(x));
            };
            add(v);
        }
    return out;
}

class LogWriter {
public:
    LogWriter(UserPlan& plan, const Lexicon& lex, Rng& rng)
        : m_plan(plan), m_lex(lex), m_rng(rng), m_avoid(used_values(plan)) {}

    // Adds one log from a template; returns its index.
    std::size_t add(std::int64_t day, int second, const LogTemplate& t, const Vars& vars,
                    std::vector<std::string> details) {
        PendingLog p;
        p.day = day;
        p.second = std::clamp(second, 0, 86399);
        p.log.app = t.app;
        p.log.api = t.api;
        const CallDef& call = m_lex.call(t.app, t.api);
        p.log.request = fill_template(t.request, vars, m_lex, m_rng, &m_avoid);
        p.log.response = fill_template(t.response.is_null() ? call.response : t.response, vars, m_lex, m_rng, &m_avoid);
        conform(p.log, call, day);
        add_envelope(p.log);
        std::sort(details.begin(), details.end());
        details.erase(std::unique(details.begin(), details.end()), details.end());
        p.log.details = std::move(details);
        if (!p.log.details.empty()) ++m_plan.grounded;
        const auto t_day = dates::civil_from_days(day);
        p.log.timestamp = dates::format_log({t_day, p.second / 3600, p.second / 60 % 60, p.second % 60});
        m_plan.logs.push_back(std::move(p));
        return m_plan.logs.size() - 1;
    }

    // The call's fields the template did not name, filled as noise fills them: every log of an API
    // has the same fields.
    void conform(data::AppLog& log, const CallDef& call, std::int64_t day) {
        std::optional<Vars> vars;
        for (auto [target, fields] : {std::pair{&log.request, &call.request}, std::pair{&log.response, &call.response}})
            for (const auto& [k, v] : fields->items()) {
                if (target->contains(k)) continue;
                if (!vars) vars = random_times(day);
                (*target)[k] = fill_template(v, *vars, m_lex, m_rng, &m_avoid);
            }
    }

    // A noise call's {start_time}, {end_time} and {date}: a span of 15 minutes to 2 hours in waking
    // hours, at times none of the user's routines has.
    Vars random_times(std::int64_t day) {
        std::string start, end;
        for (int tries = 0; tries < 8 && (start.empty() || m_avoid.count(start) || m_avoid.count(end)); ++tries) {
            const int minute = static_cast<int>(m_rng.between(5 * 12, 21 * 12)) * 5;
            start = dates::format_clock(minute);
            end = dates::format_clock(minute + static_cast<int>(m_rng.between(3, 24)) * 5);
        }
        return {{"start_time", start}, {"end_time", end}, {"date", dates::format_date(dates::civil_from_days(day))}};
    }

    const std::set<std::string>& avoid() const { return m_avoid; }

    // The fields every call of the app carries; a log's own field of the same name wins.
    void add_envelope(data::AppLog& log) {
        const auto it = m_lex.envelopes.find(log.app);
        if (it == m_lex.envelopes.end()) return;
        for (const char* part : {"request", "response"}) {
            json& target = std::string_view(part) == "request" ? log.request : log.response;
            if (!target.is_object()) continue;
            const json fields = fill_template(it->second.at(part), {}, m_lex, m_rng);
            for (const auto& [k, v] : fields.items())
                if (!target.contains(k)) target[k] = v;
        }
    }

    void evidence(std::size_t key, std::size_t log, int window, std::string path, json leaf) {
        m_plan.evidence[key].push_back({log, window, std::move(path), std::move(leaf)});
    }

    // A random moment of a random day of window w, in waking hours.
    std::pair<std::int64_t, int> random_moment(int w) {
        const std::int64_t day = m_rng.between(m_plan.window_start[w], m_plan.window_start[w + 1] - 1);
        return {day, static_cast<int>(m_rng.between(7 * 3600, 22 * 3600))};
    }

    Rng& rng() { return m_rng; }
    UserPlan& plan() { return m_plan; }

private:
    UserPlan& m_plan;
    const Lexicon& m_lex;
    Rng& m_rng;
    const std::set<std::string> m_avoid;
};

// How far a logged occurrence strays from the routine's time, in minutes: people start a few
// minutes early or late. Exact 40% of the time, within 5 minutes 85%, never more than 10, so the
// routine's time is the most common one logged and a reading within 5 minutes is the same timing
// (DynamicMem's judge counts a time within 5 minutes as core-correct).
int jitter_minutes(Rng& rng) {
    const double u = rng.unit();
    if (u < 0.40) return 0;
    const int size = u < 0.85 ? static_cast<int>(rng.between(1, 5)) : static_cast<int>(rng.between(6, 10));
    return rng.chance(0.5) ? size : -size;
}

// One occurrence of a habit on `day`, evidencing every leaf of its value. The log shows the times it
// happened at, within 10 minutes of the routine's; the evidence is for the routine's value.
void habit_occurrence(LogWriter& out, std::size_t ki, int w, std::int64_t day) {
    const KeyPlan& k = out.plan().keys[ki];
    const json& v = k.values[w];
    const std::string start = v["timing"]["start_time"], end = v["timing"]["end_time"];
    const std::string location = v["location"];
    const std::string date = dates::format_date(dates::civil_from_days(day));
    const Schedule schedule = schedule_from_json(v["schedule"]);
    // How a log shows the day: its weekday (written in every log's rendering) or, for a monthly
    // routine, its date.
    const bool monthly = schedule.type == "monthly_by_date" || schedule.type == "monthly_nth_weekday";
    const std::string day_mark =
        monthly ? date : dates::weekday_short_name(dates::weekday(dates::civil_from_days(day)));
    const int shift = jitter_minutes(out.rng());
    const int end_shift = out.rng().chance(0.5) ? shift : shift + static_cast<int>(out.rng().between(-3, 3));
    const int start_min = std::clamp(*dates::parse_clock(start) + shift, 0, 24 * 60 - 2);
    const int end_min = std::clamp(*dates::parse_clock(end) + end_shift, start_min + 1, 24 * 60 - 1);
    const std::string shown_start = dates::format_clock(start_min), shown_end = dates::format_clock(end_min);
    const int second = k.habit->log.at == "start" ? start_min * 60 - static_cast<int>(out.rng().between(600, 2400))
                                                 : end_min * 60 + static_cast<int>(out.rng().between(60, 600));
    const Vars vars = {{"start_time", shown_start}, {"end_time", shown_end}, {"location", location}, {"date", date}};
    const std::size_t log = out.add(day, second, k.habit->log, vars, {day_mark, shown_start, shown_end, location});
    out.evidence(ki, log, w, "schedule.frequency_type", schedule.type);
    for (const auto& [field, leaf] : v["schedule"].items())
        if (field != "frequency_type") out.evidence(ki, log, w, "schedule." + field, leaf);
    out.evidence(ki, log, w, "timing.start_time", start);
    out.evidence(ki, log, w, "timing.end_time", end);
    out.evidence(ki, log, w, "location", location);
}

void habit_window(LogWriter& out, std::size_t ki, int w) {
    const UserPlan& plan = out.plan();
    const Schedule schedule = schedule_from_json(plan.keys[ki].values[w]["schedule"]);
    const double rate = schedule.type == "daily" ? k_daily_log_rate : k_routine_log_rate;
    std::size_t logged = 0;
    std::int64_t last = -1;
    for (std::int64_t day = plan.window_start[w]; day < plan.window_start[w + 1]; ++day) {
        if (!occurs_on(schedule, day, plan.window_start[0])) continue;
        last = day;
        if (out.rng().chance(rate)) habit_occurrence(out, ki, w, day), ++logged;
    }
    // A window in which the routine holds shows it at least once.
    if (!logged && last >= 0) habit_occurrence(out, ki, w, last);
}

bool shows(const LogTemplate& t, const std::string& var) {
    const std::string needle = "{" + var + "}";
    return t.request.dump().find(needle) != std::string::npos || t.response.dump().find(needle) != std::string::npos;
}

void attribute_log(LogWriter& out, std::size_t ki, int w, const LogTemplate& t) {
    const KeyPlan& k = out.plan().keys[ki];
    const json& v = k.values[w];
    Vars vars;
    std::vector<std::string> details;
    for (const auto& [field, leaf] : v.items()) vars[field] = leaf;
    for (const auto& [field, leaf] : v.items())
        if (shows(t, field)) details.push_back(leaf_text(leaf));
    const auto [day, second] = out.random_moment(w);
    const std::size_t log = out.add(day, second, t, vars, details);
    for (const auto& [field, leaf] : v.items())
        if (shows(t, field)) out.evidence(ki, log, w, field, leaf);
}

void collection_log(LogWriter& out, std::size_t ki, int w, const std::string& item) {
    const AttributeDef& a = *out.plan().keys[ki].attribute;
    const auto [day, second] = out.random_moment(w);
    const std::size_t log = out.add(day, second, out.rng().pick(a.logs), {{"item", item}}, {item});
    out.evidence(ki, log, w, "items", item);
}

// The logs that show every field (every item) of an attribute in window w at least once.
void attribute_window(LogWriter& out, std::size_t ki, int w) {
    const KeyPlan& k = out.plan().keys[ki];
    const AttributeDef& a = *k.attribute;
    if (a.collection()) {
        for (const auto& item : k.values[w]["items"]) collection_log(out, ki, w, item.get<std::string>());
        return;
    }
    for (const auto& f : a.fields) {
        std::vector<const LogTemplate*> fits;
        for (const auto& t : a.logs)
            if (shows(t, f.name)) fits.push_back(&t);
        attribute_log(out, ki, w, *out.rng().pick(fits));
    }
}

// One more event that shows the attribute, at random.
void attribute_extra(LogWriter& out, std::size_t ki, int w) {
    const KeyPlan& k = out.plan().keys[ki];
    if (k.attribute->collection())
        collection_log(out, ki, w, out.rng().pick(k.values[w]["items"].get<std::vector<std::string>>()));
    else
        attribute_log(out, ki, w, out.rng().pick(k.attribute->logs));
}

// The log's field value that holds `mark` ("large oat milk flat white" for "oat milk flat white"):
// the evidence is that value, not the mark as a word anywhere (a bare "tickets" or "action" is in
// hundreds of other logs). The shortest such value; the mark itself when no field holds it.
std::string field_value_holding(const data::AppLog& log, const std::string& mark) {
    const std::string needle = text::to_lower(mark);
    std::string best;
    std::function<void(const json&)> visit = [&](const json& v) {
        if (v.is_object() || v.is_array()) {
            for (const auto& e : v) visit(e);
        } else if (v.is_string()) {
            const std::string& t = v.get_ref<const std::string&>();
            if (text::to_lower(t).find(needle) != std::string::npos && (best.empty() || t.size() < best.size())) best = t;
        }
    };
    visit(log.request);
    visit(log.response);
    return best.empty() ? mark : best;
}

void preference_signal(LogWriter& out, std::size_t ki, int w, const Signal& s) {
    const int option = out.plan().keys[ki].options[w];
    const auto [day, second] = out.random_moment(w);
    const std::size_t log = out.add(day, second, s.log, {}, {s.mark});
    auto& logged = out.plan().logs[log].log;
    logged.details = {field_value_holding(logged, s.mark)};
    out.evidence(ki, log, w, "statement", option);
    out.evidence(ki, log, w, s.favors ? "favors" : "avoids", option);
}

// Every signal of the preference's current option once in window w.
void preference_window(LogWriter& out, std::size_t ki, int w) {
    const KeyPlan& k = out.plan().keys[ki];
    for (const auto& s : k.preference->options[k.options[w]].signals) preference_signal(out, ki, w, s);
}

void preference_extra(LogWriter& out, std::size_t ki, int w) {
    const KeyPlan& k = out.plan().keys[ki];
    preference_signal(out, ki, w, out.rng().pick(k.preference->options[k.options[w]].signals));
}

// Spreads more attribute and preference events over their key-windows until the user has about
// `target` grounded events (DynamicMem's ~1,772), so the total does not swing with how many daily
// routines a user happens to have.
void fill_to_target(LogWriter& out, std::size_t target) {
    UserPlan& plan = out.plan();
    std::vector<std::pair<std::size_t, int>> slots;
    for (std::size_t ki = 0; ki < plan.keys.size(); ++ki)
        for (int w = 0; w < plan.windows; ++w)
            if (!plan.keys[ki].habit && !plan.keys[ki].values[w].is_null()) slots.emplace_back(ki, w);
    if (slots.empty() || plan.grounded >= target) return;
    const std::size_t budget = std::min(target - plan.grounded, slots.size() * k_max_extra_per_slot);
    for (std::size_t i = 0; i < budget; ++i) {
        const auto [ki, w] = slots[i < slots.size() * (budget / slots.size()) ? i % slots.size() : out.rng().below(slots.size())];
        if (plan.keys[ki].attribute) attribute_extra(out, ki, w);
        else preference_extra(out, ki, w);
    }
}

// A value of `pool` no key of the user has; empty when the pool holds only theirs.
std::string unused_pick(const Lexicon& lex, const std::string& pool, const std::set<std::string>& used, Rng& rng) {
    std::vector<std::string> free;
    for (const auto& v : lex.pool(pool))
        if (!used.count(v)) free.push_back(v);
    return free.empty() ? std::string() : rng.pick(free);
}

// One look-alike on `day`: a grounded API's call with values none of the user's keys has (a one-off
// workout at another time and place; a deposit from another payer; an item the user does not own).
// Preference signals are left out: their text is the preference itself.
bool emit_lookalike(LogWriter& out, const Lexicon& lex, const std::set<std::string>& used, std::int64_t day) {
    Rng& rng = out.rng();
    // The user's own kinds of call: their routines' and their attributes' templates.
    const UserPlan& plan = out.plan();
    std::vector<const KeyPlan*> kinds;
    for (const auto& k : plan.keys)
        if (k.habit || (k.attribute && !k.attribute->logs.empty())) kinds.push_back(&k);
    if (kinds.empty()) return false;
    const KeyPlan& kind = *rng.pick(kinds);
    const int second = static_cast<int>(rng.between(6 * 3600 + 1800, 23 * 3600 + 2700));
    if (kind.habit) {
        const HabitDef& h = *kind.habit;
        std::string start, end;
        for (int tries = 0; tries < 8 && (start.empty() || used.count(start) || used.count(end)); ++tries) {
            const int minute = static_cast<int>(rng.between(5 * 60, 21 * 60)) / 5 * 5;
            start = dates::format_clock(minute);
            end = dates::format_clock(minute + rng.pick(h.durations));
        }
        const std::string location = unused_pick(lex, h.locations, used, rng);
        if (location.empty() || used.count(start) || used.count(end)) return false;
        const Vars vars = {{"start_time", start}, {"end_time", end}, {"location", location},
                           {"date", dates::format_date(dates::civil_from_days(day))}};
        out.add(day, second, h.log, vars, {});
        return true;
    }
    const AttributeDef& a = *kind.attribute;
    Vars vars;
    if (a.collection()) {
        const std::string item = unused_pick(lex, a.pool, used, rng);
        if (item.empty()) return false;
        vars["item"] = item;
    } else {
        for (const auto& f : a.fields) {
            if (f.type == data::FieldType::number) {
                int n = 0;
                for (int tries = 0; tries < 16 && (tries == 0 || used.count(std::to_string(n))); ++tries)
                    n = f.lo + static_cast<int>(rng.between(0, (f.hi - f.lo) / f.step)) * f.step;
                if (used.count(std::to_string(n))) return false;
                vars[f.name] = n;
                continue;
            }
            const std::string v = unused_pick(lex, f.pool, used, rng);
            if (v.empty()) return false;
            vars[f.name] = v;
        }
    }
    out.add(day, second, rng.pick(a.logs), vars, {});
    return true;
}

void emit_noise(LogWriter& out, const Lexicon& lex) {
    std::vector<double> cumulative;
    double total = 0;
    for (const auto& c : lex.calls) cumulative.push_back(total += c.per_day);
    const UserPlan& plan = out.plan();
    Rng& rng = out.rng();
    const std::set<std::string>& used = out.avoid();
    for (std::int64_t day = plan.window_start.front(); day < plan.window_start.back(); ++day) {
        const double factor = k_noise_day_lo + (k_noise_day_hi - k_noise_day_lo) * rng.unit();
        const double expected = plan.options.scale * total * factor;
        auto count = static_cast<int>(expected);
        if (rng.unit() < expected - count) ++count;
        for (int i = 0; i < count; ++i) {
            // Look-alikes (GeneratorOptions::lookalikes): calls imitating the user's own routines and
            // attributes with other values, drawn only when asked.
            if (plan.options.lookalikes > 0 && rng.chance(plan.options.lookalikes) && emit_lookalike(out, lex, used, day))
                continue;
            const double pick = rng.unit() * total;
            const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), pick) - cumulative.begin();
            const CallDef& c = lex.calls[static_cast<std::size_t>(std::min<std::ptrdiff_t>(at, static_cast<std::ptrdiff_t>(lex.calls.size()) - 1))];
            const int second = static_cast<int>(rng.between(6 * 3600 + 1800, 23 * 3600 + 2700));
            out.add(day, second, {c.app, c.api, "", c.request, c.response}, out.random_times(day), {});
        }
    }
}

}  // namespace

void emit_logs(UserPlan& plan, const Lexicon& lex, Rng rng) {
    plan.evidence.assign(plan.keys.size(), {});
    Rng grounded = rng.fork("grounded");
    LogWriter out(plan, lex, grounded);
    for (std::size_t ki = 0; ki < plan.keys.size(); ++ki)
        for (int w = 0; w < plan.windows; ++w) {
            if (plan.keys[ki].values[w].is_null()) continue;
            if (plan.keys[ki].habit) habit_window(out, ki, w);
            else if (plan.keys[ki].attribute) attribute_window(out, ki, w);
            else preference_window(out, ki, w);
        }
    // The target is for 15 months; a shorter history gets its share.
    const auto target = static_cast<std::size_t>(grounded.between(k_grounded_lo, k_grounded_hi) * plan.windows / 5);
    fill_to_target(out, target);
    // Noise from its own stream, so the grounded logs are the same at every scale.
    Rng noise_rng = rng.fork("noise");
    LogWriter noise(plan, lex, noise_rng);
    emit_noise(noise, lex);
}

std::vector<data::Session> build_sessions(UserPlan& plan) {
    std::vector<std::size_t> order(plan.logs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto& x = plan.logs[a];
        const auto& y = plan.logs[b];
        return x.day != y.day ? x.day < y.day : x.second < y.second;
    });
    plan.log_ids.assign(plan.logs.size(), {});
    std::vector<data::Session> sessions;
    std::size_t n = 0;
    for (const auto i : order) {
        PendingLog& p = plan.logs[i];
        const std::string date = dates::format_date(dates::civil_from_days(p.day));
        if (sessions.empty() || sessions.back().id != "d" + date)
            sessions.push_back({"d" + date, date + "T00:00:00Z", {}});
        char id[32];
        std::snprintf(id, sizeof id, "log-%06zu", ++n);
        plan.log_ids[i] = id;
        data::Message m;
        m.id = id;
        m.role = "app";
        m.content = data::render_app_log(p.log);
        m.app_log = std::move(p.log);
        sessions.back().messages.push_back(std::move(m));
    }
    return sessions;
}

}  // namespace memfail::suites::dynamic::gen

// SPDX-License-Identifier: MIT
// Stage 1 of the dynamic generator: who the user is, which state keys they have, and what each key
// holds in every quarter-long window. Changes happen only at window boundaries and only through a
// latent cause (causes.json: a move, a new job, winter), which changes several keys together; keys
// no cause touches keep their value all along (long-range retention).
#include <memfail/suites/dynamic/plan.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites::dynamic::gen {

namespace {

using nlohmann::json;

const std::vector<std::string>& domains() {
    static const std::vector<std::string> k = {"work_and_education",       "family_and_relationships",
                                               "social_and_community",     "health_and_self_care",
                                               "finances_and_material_living", "leisure_and_media"};
    return k;
}

// Every key the lexicon defines, with no values yet.
std::vector<KeyPlan> all_keys(const Lexicon& lex) {
    std::vector<KeyPlan> out;
    for (const auto& h : lex.habits) {
        KeyPlan k{"habits_state:" + h.id, data::StateFamily::habit, h.domain, h.label, h.group};
        k.habit = &h;
        out.push_back(std::move(k));
    }
    for (const auto& a : lex.attributes) {
        KeyPlan k{"attributes_state:" + a.id, data::StateFamily::attribute, a.domain, a.label, a.group};
        k.attribute = &a;
        out.push_back(std::move(k));
    }
    for (const auto& p : lex.preferences) {
        KeyPlan k{"preferences_state:" + p.id, data::StateFamily::preference, p.domain, p.label, p.group};
        k.preference = &p;
        out.push_back(std::move(k));
    }
    return out;
}

json habit_value(const HabitDef& h, const Schedule& schedule, int start, int duration, const std::string& location) {
    return {{"schedule", schedule_json(schedule)},
            {"timing", {{"start_time", dates::format_clock(start)}, {"end_time", dates::format_clock(start + duration)}}},
            {"location", location}};
}

json new_habit(const HabitDef& h, const Lexicon& lex, Rng& rng) {
    return habit_value(h, rng.pick(h.schedules), rng.pick(h.start_times), rng.pick(h.durations),
                       rng.pick(lex.pool(h.locations)));
}

// Something different from `current` drawn from `options`, or `current` when there is nothing else.
template <class T>
T other_than(const std::vector<T>& options, const T& current, Rng& rng) {
    std::vector<T> rest;
    for (const auto& o : options)
        if (!(o == current)) rest.push_back(o);
    return rest.empty() ? current : rng.pick(rest);
}

// An adjusted routine: a new schedule, start time or place (one or two of them), so a reader of the
// logs sees the same activity move.
json modify_habit(const HabitDef& h, const json& value, const Lexicon& lex, Rng& rng) {
    Schedule schedule = schedule_from_json(value.at("schedule"));
    int start = *dates::parse_clock(value.at("timing").at("start_time").get<std::string>());
    const int duration = *dates::parse_clock(value.at("timing").at("end_time").get<std::string>()) - start;
    std::string location = value.at("location").get<std::string>();
    std::vector<int> aspects = {0, 1, 2};
    rng.shuffle(aspects);
    aspects.resize(rng.chance(0.5) ? 2 : 1);
    for (const int aspect : aspects) {
        if (aspect == 0) schedule = other_than(h.schedules, schedule, rng);
        if (aspect == 1) start = other_than(h.start_times, start, rng);
        if (aspect == 2) location = other_than(lex.pool(h.locations), location, rng);
    }
    json out = habit_value(h, schedule, start, duration, location);
    // A habit whose only option was the one it had (meditation: daily) still moves its time.
    if (out == value) out = habit_value(h, schedule, other_than(h.start_times, start, rng), duration, location);
    return out;
}

json draw_field(const FieldDef& f, const Lexicon& lex, Rng& rng) {
    if (f.type == data::FieldType::number) {
        const int steps = (f.hi - f.lo) / f.step;
        return f.lo + static_cast<int>(rng.between(0, steps)) * f.step;
    }
    return rng.pick(lex.pool(f.pool));
}

json new_attribute(const AttributeDef& a, const Lexicon& lex, Rng& rng) {
    if (a.collection()) {
        const auto count = static_cast<std::size_t>(rng.between(a.initial_lo, a.initial_hi));
        if (count == 0) return nullptr;
        const auto& pool = lex.pool(a.pool);
        json items = json::array();
        for (const auto i : rng.sample_indices(pool.size(), std::min(count, pool.size()))) items.push_back(pool[i]);
        return {{"items", items}};
    }
    json out = json::object();
    for (const auto& f : a.fields) out[f.name] = draw_field(f, lex, rng);
    return out;
}

json modify_attribute(const AttributeDef& a, const json& value, const Lexicon& lex, Rng& rng) {
    json out = value;
    // The first field always changes (a new employer, a new address); the others sometimes with it.
    for (std::size_t i = 0; i < a.fields.size(); ++i) {
        const FieldDef& f = a.fields[i];
        if (i > 0 && !rng.chance(0.5)) continue;
        for (int tries = 0; tries < 8 && out[f.name] == value[f.name]; ++tries) out[f.name] = draw_field(f, lex, rng);
    }
    return out;
}

json add_item(const AttributeDef& a, const json& value, const Lexicon& lex, Rng& rng) {
    json items = value.is_null() ? json::array() : value.at("items");
    std::vector<std::string> fresh;
    for (const auto& item : lex.pool(a.pool))
        if (std::find(items.begin(), items.end(), json(item)) == items.end()) fresh.push_back(item);
    if (fresh.empty()) return value;
    items.push_back(rng.pick(fresh));
    return {{"items", items}};
}

json remove_item(const json& value, Rng& rng) {
    json items = value.at("items");
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(rng.below(items.size())));
    if (items.empty()) return nullptr;
    return {{"items", items}};
}

// A fresh value for a key that starts holding (at the start or when a cause makes it).
void start_key(KeyPlan& k, int window, const Lexicon& lex, Rng& rng) {
    if (k.habit) k.values[window] = new_habit(*k.habit, lex, rng);
    if (k.attribute) k.values[window] = new_attribute(*k.attribute, lex, rng);
    if (k.preference) {
        k.options[window] = static_cast<int>(rng.below(k.preference->options.size()));
        k.values[window] = {{"statement", k.preference->options[k.options[window]].statement}};
    }
}

void modify_key(KeyPlan& k, int w, const Lexicon& lex, Rng& rng) {
    if (k.habit) k.values[w] = modify_habit(*k.habit, k.values[w], lex, rng);
    if (k.attribute && !k.attribute->collection()) k.values[w] = modify_attribute(*k.attribute, k.values[w], lex, rng);
    if (k.attribute && k.attribute->collection()) k.values[w] = add_item(*k.attribute, k.values[w], lex, rng);
    if (k.preference) {
        std::vector<int> others;
        for (int o = 0; o < static_cast<int>(k.preference->options.size()); ++o)
            if (o != k.options[w]) others.push_back(o);
        k.options[w] = rng.pick(others);
        k.values[w] = {{"statement", k.preference->options[k.options[w]].statement}};
    }
}

// Applies one effect of a cause at window w (whose values start as window w-1's).
void apply_effect(KeyPlan& k, const std::string& op, int w, const Lexicon& lex, Rng& rng) {
    const bool held = !k.values[w].is_null();
    if (op == "drop") {
        k.values[w] = nullptr;
        if (k.preference) k.options[w] = -1;
    } else if (op == "add_item" && k.attribute && k.attribute->collection()) {
        k.values[w] = add_item(*k.attribute, k.values[w], lex, rng);
    } else if (op == "remove_item" && held && k.attribute && k.attribute->collection()) {
        k.values[w] = remove_item(k.values[w], rng);
    } else if (op == "acquire" && !held) {
        start_key(k, w, lex, rng);
    } else if (held && (op == "modify" || op == "acquire")) {
        modify_key(k, w, lex, rng);
    }
}

// The first thing the chosen causes do to `key`: a key that is acquired (or first gets an item)
// does not hold before.
std::string first_op(const std::vector<const CauseDef*>& causes, const std::string& key) {
    for (const CauseDef* c : causes)
        for (const auto& e : c->effects)
            if (e.key == key) return e.op;
    return {};
}

void choose_keys(UserPlan& plan, const Lexicon& lex, Rng& rng) {
    std::vector<KeyPlan> pool = all_keys(lex);
    std::set<std::string> chosen;
    for (const CauseDef* c : plan.causes)
        for (const auto& e : c->effects)
            if (rng.chance(0.85)) chosen.insert(e.key);
    auto can_start = [&](const KeyPlan& k) {
        return !(k.attribute && k.attribute->collection() && k.attribute->initial_hi == 0) || chosen.count(k.key);
    };
    std::vector<std::size_t> order(pool.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    rng.shuffle(order);
    const auto target = static_cast<std::size_t>(rng.between(33, 40));
    for (const auto i : order)
        if (chosen.size() < target && can_start(pool[i])) chosen.insert(pool[i].key);
    // Every life domain and every family is represented.
    for (const auto& domain : domains()) {
        bool has = false;
        for (const auto& k : pool) has = has || (chosen.count(k.key) && k.domain == domain);
        for (const auto i : order)
            if (!has && pool[i].domain == domain && can_start(pool[i])) chosen.insert(pool[i].key), has = true;
    }
    for (auto& k : pool)
        if (chosen.count(k.key)) plan.keys.push_back(std::move(k));
}

// Makes every schedule type appear among the habits held from the start: a habit whose options
// include a missing type takes it, when that leaves its own type still represented.
void cover_schedule_types(UserPlan& plan, Rng& rng) {
    for (const auto& type : frequency_types()) {
        std::map<std::string, int> counts;
        for (const auto& k : plan.keys)
            if (k.habit && !k.values[0].is_null()) ++counts[k.values[0]["schedule"]["frequency_type"].get<std::string>()];
        if (counts[type] > 0) continue;
        for (auto& k : plan.keys) {
            if (!k.habit || k.values[0].is_null()) continue;
            const std::string current = k.values[0]["schedule"]["frequency_type"];
            if (counts[current] < 2) continue;
            std::vector<Schedule> fits;
            for (const auto& s : k.habit->schedules)
                if (s.type == type) fits.push_back(s);
            if (fits.empty()) continue;
            k.values[0]["schedule"] = schedule_json(rng.pick(fits));
            break;
        }
    }
}

json basic_profile(const Lexicon& lex, Rng& rng) {
    json p = {{"name", rng.pick(lex.pool("first_names")) + " " + rng.pick(lex.pool("last_names"))},
              {"age", rng.between(26, 58)},
              {"city", rng.pick(lex.pool("cities"))},
              {"occupation", rng.pick(lex.pool("occupations"))},
              {"household", rng.pick(lex.pool("households"))},
              {"domains", domains()}};
    return p;
}

}  // namespace

int UserPlan::window_of(std::int64_t day) const {
    for (int w = 0; w < windows; ++w)
        if (day < window_start[w + 1]) return w;
    return windows - 1;
}

void plan_profile(UserPlan& plan, const Lexicon& lex, Rng rng) {
    plan.profile = basic_profile(lex, rng);
    std::vector<std::size_t> cause_order(lex.causes.size());
    for (std::size_t i = 0; i < cause_order.size(); ++i) cause_order[i] = i;
    rng.shuffle(cause_order);
    for (int b = 0; b + 1 < plan.windows; ++b) plan.causes.push_back(&lex.causes[cause_order[b % cause_order.size()]]);
    plan.changed.assign(plan.causes.size(), {});

    choose_keys(plan, lex, rng);
    for (auto& k : plan.keys) {
        k.values.assign(plan.windows, nullptr);
        k.options.assign(plan.windows, -1);
        const std::string op = first_op(plan.causes, k.key);
        if (op != "acquire" && op != "add_item") start_key(k, 0, lex, rng);
        else if (op == "add_item" && k.attribute && k.attribute->initial_hi > 0) start_key(k, 0, lex, rng);
    }
    cover_schedule_types(plan, rng);

    for (int w = 1; w < plan.windows; ++w) {
        const CauseDef* cause = plan.causes[w - 1];
        for (auto& k : plan.keys) {
            k.values[w] = k.values[w - 1];
            k.options[w] = k.options[w - 1];
            for (const auto& e : cause->effects)
                if (e.key == k.key) apply_effect(k, e.op, w, lex, rng);
            if (k.values[w] != k.values[w - 1]) plan.changed[w - 1].push_back(k.key);
        }
    }
}

}  // namespace memfail::suites::dynamic::gen

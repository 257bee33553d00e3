// SPDX-License-Identifier: MIT
// Stage 1 of the dynamic generator: who the user is, which state keys they have, and what each key
// holds in every quarter-long window. Changes happen only at window boundaries and only through a
// latent cause (causes.json: a move, a new job, winter), which changes several keys together; keys
// no cause touches keep their value all along (long-range retention).
#include <memfail/core/hash.hpp>
#include <memfail/suites/dynamic/plan.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

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

// ---- habit values, one slot of them per user -------------------------------------------------------
//
// Two users of one seed never hold the same habit value: every value a habit can take (a schedule,
// a start time, a duration, a place) belongs to one of k_habit_slots slots, by a hash of the seed, the
// habit and the value itself, and user i takes only values of slot i % k_habit_slots, when it starts
// the habit and whenever it adjusts it. So users whose indices differ modulo k_habit_slots never share
// a value, and each user still depends only on the seed and its own index. A start time is one of
// the habit's moved by up to k_start_shift minutes in 5-minute steps (06:15 may be 06:05 or 06:25),
// so that a slot still holds ten or more values of every habit to draw from (meditation, the
// smallest habit, has 624 values in all).
constexpr int k_habit_slots = 32;
constexpr int k_start_shift = 15;
constexpr int k_least_move = 15;  // an adjusted start time moves by at least this many minutes

struct HabitChoice {
    std::size_t schedule = 0;  // index into HabitDef::schedules
    int start = 0, duration = 0;
    std::size_t location = 0;  // index into the habit's place pool
};

// The values of each habit that this user's slot holds, listed once per habit.
class HabitSlots {
public:
    HabitSlots(const Lexicon& lex, std::uint64_t seed, int user)
        : m_lex(lex), m_seed(seed), m_slot(static_cast<std::uint64_t>(user % k_habit_slots)) {}

    const std::vector<HabitChoice>& owned(const HabitDef& h) {
        auto [it, fresh] = m_owned.try_emplace(h.id);
        if (!fresh) return it->second;
        const auto& places = m_lex.pool(h.locations);
        std::set<std::tuple<std::size_t, int, int, std::size_t>> seen;
        for (std::size_t s = 0; s < h.schedules.size(); ++s) {
            const std::string schedule = schedule_json(h.schedules[s]).dump();
            for (const int base : h.start_times)
                for (int shift = -k_start_shift; shift <= k_start_shift; shift += 5)
                    for (const int duration : h.durations)
                        for (std::size_t l = 0; l < places.size(); ++l) {
                            const int start = base + shift;
                            if (start < 0 || start + duration >= 24 * 60 || !seen.insert({s, start, duration, l}).second) continue;
                            const std::string key = h.id + "\n" + schedule + "\n" + std::to_string(start) + "\n" +
                                                    std::to_string(duration) + "\n" + places[l];
                            if (hash64(key, m_seed) % k_habit_slots == m_slot) it->second.push_back({s, start, duration, l});
                        }
        }
        return it->second;
    }
    json value(const HabitDef& h, const HabitChoice& c) const {
        return habit_value(h, h.schedules[c.schedule], c.start, c.duration, places(h)[c.location]);
    }
    const std::vector<std::string>& places(const HabitDef& h) const { return m_lex.pool(h.locations); }

private:
    const Lexicon& m_lex;
    std::uint64_t m_seed;
    std::uint64_t m_slot;
    std::map<std::string, std::vector<HabitChoice>, std::less<>> m_owned;
};

// One of `candidates` with the lowest score (score(c) < 0: not a candidate); null when none is.
template <class Score>
const HabitChoice* best_choice(const std::vector<HabitChoice>& candidates, Score&& score, Rng& rng) {
    std::vector<const HabitChoice*> best;
    int best_score = -1;
    for (const auto& c : candidates) {
        const int s = score(c);
        if (s < 0 || (best_score >= 0 && s > best_score)) continue;
        if (s < best_score || best_score < 0) best.clear(), best_score = s;
        best.push_back(&c);
    }
    return best.empty() ? nullptr : rng.pick(best);
}

// What a habit value holds, read back from its JSON.
struct HabitParts {
    Schedule schedule;
    int start = 0, duration = 0;
    std::string location;
    explicit HabitParts(const json& value)
        : schedule(schedule_from_json(value.at("schedule"))),
          start(*dates::parse_clock(value.at("timing").at("start_time").get<std::string>())),
          duration(*dates::parse_clock(value.at("timing").at("end_time").get<std::string>()) - start),
          location(value.at("location").get<std::string>()) {}
};

json new_habit(const HabitDef& h, const Lexicon& lex, HabitSlots& slots, Rng& rng) {
    const auto& owned = slots.owned(h);
    if (owned.empty())  // a habit with too few values to share out (no lexicon habit is one)
        return habit_value(h, rng.pick(h.schedules), rng.pick(h.start_times), rng.pick(h.durations),
                           rng.pick(lex.pool(h.locations)));
    return slots.value(h, rng.pick(owned));
}

// An adjusted routine: a new schedule, start time or place (one or two of them), so a reader of the
// logs sees the same activity move. It is a value of the user's slot that changes just those
// aspects when the slot has one, else the one closest to that (a habit whose only schedule is the
// one it had, meditation's daily, moves its time or place instead).
json modify_habit(const HabitDef& h, const json& value, const Lexicon& lex, HabitSlots& slots, Rng& rng) {
    const HabitParts now(value);
    std::vector<int> aspects = {0, 1, 2};
    rng.shuffle(aspects);
    aspects.resize(rng.chance(0.5) ? 2 : 1);
    const auto& places = lex.pool(h.locations);
    auto score = [&](const HabitChoice& c) {
        const int moved = std::abs(c.start - now.start);
        if (moved > 0 && moved < k_least_move) return -1;  // a nudge, not an adjustment
        const bool changed[3] = {!(h.schedules[c.schedule] == now.schedule), moved > 0, places[c.location] != now.location};
        if (!changed[0] && !changed[1] && !changed[2]) return -1;
        // The chosen aspects exactly; failing that, as few others and as few in all as there can be.
        int s = c.duration == now.duration ? 0 : 100;
        for (int a = 0; a < 3; ++a)
            s += 2 * (changed[a] != (std::find(aspects.begin(), aspects.end(), a) != aspects.end())) + changed[a];
        return s;
    };
    if (const HabitChoice* c = best_choice(slots.owned(h), score, rng)) return slots.value(h, *c);
    return new_habit(h, lex, slots, rng);
}

// The roles the employers table pairs with `employer` (a field's value).
std::vector<std::string> roles_at(const Lexicon& lex, const json& employer) {
    const EmployerDef* e = employer.is_string() ? lex.employer(employer.get_ref<const std::string&>()) : nullptr;
    MF_ASSERT(e != nullptr, "an employer the employers table does not list (the lexicon check missed it)");
    std::vector<std::string> out;
    for (const auto& r : e->roles) out.push_back(r.title);
    return out;
}

// A value for field `f` of `value` (the attribute's object, with the fields before `f` drawn).
json draw_field(const FieldDef& f, const json& value, const Lexicon& lex, Rng& rng) {
    if (f.type == data::FieldType::number) {
        const int steps = (f.hi - f.lo) / f.step;
        return f.lo + static_cast<int>(rng.between(0, steps)) * f.step;
    }
    if (!f.paired_with.empty()) return rng.pick(roles_at(lex, value.at(f.paired_with)));
    return rng.pick(lex.pool(f.pool));
}

// Whether a paired field's value is one its partner field's value has (an unpaired field always is).
bool fits_pair(const FieldDef& f, const json& value, const Lexicon& lex) {
    if (f.paired_with.empty()) return true;
    const auto roles = roles_at(lex, value.at(f.paired_with));
    return value.contains(f.name) && value.at(f.name).is_string() &&
           std::find(roles.begin(), roles.end(), value.at(f.name).get<std::string>()) != roles.end();
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
    for (const auto& f : a.fields) out[f.name] = draw_field(f, out, lex, rng);
    return out;
}

json modify_attribute(const AttributeDef& a, const json& value, const Lexicon& lex, Rng& rng) {
    json out = value;
    // The first field always changes (a new employer, a new address); the others sometimes with it,
    // and always when they no longer fit it (a role the new employer does not have).
    for (std::size_t i = 0; i < a.fields.size(); ++i) {
        const FieldDef& f = a.fields[i];
        if (i > 0 && fits_pair(f, out, lex) && !rng.chance(0.5)) continue;
        for (int tries = 0; tries < 8 && out[f.name] == value[f.name]; ++tries) out[f.name] = draw_field(f, out, lex, rng);
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
void start_key(KeyPlan& k, int window, const Lexicon& lex, HabitSlots& slots, Rng& rng) {
    if (k.habit) k.values[window] = new_habit(*k.habit, lex, slots, rng);
    if (k.attribute) k.values[window] = new_attribute(*k.attribute, lex, rng);
    if (k.preference) {
        k.options[window] = static_cast<int>(rng.below(k.preference->options.size()));
        k.values[window] = {{"statement", k.preference->options[k.options[window]].statement}};
    }
}

void modify_key(KeyPlan& k, int w, const Lexicon& lex, HabitSlots& slots, Rng& rng) {
    if (k.habit) k.values[w] = modify_habit(*k.habit, k.values[w], lex, slots, rng);
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
void apply_effect(KeyPlan& k, const std::string& op, int w, const Lexicon& lex, HabitSlots& slots, Rng& rng) {
    const bool held = !k.values[w].is_null();
    if (op == "drop") {
        k.values[w] = nullptr;
        if (k.preference) k.options[w] = -1;
    } else if (op == "add_item" && k.attribute && k.attribute->collection()) {
        k.values[w] = add_item(*k.attribute, k.values[w], lex, rng);
    } else if (op == "remove_item" && held && k.attribute && k.attribute->collection()) {
        k.values[w] = remove_item(k.values[w], rng);
    } else if (op == "acquire" && !held) {
        start_key(k, w, lex, slots, rng);
    } else if (held && (op == "modify" || op == "acquire")) {
        modify_key(k, w, lex, slots, rng);
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
// include a missing type takes it (a value of the user's slot with that schedule, as close to the
// one it had as there is), when that leaves its own type still represented.
void cover_schedule_types(UserPlan& plan, HabitSlots& slots, Rng& rng) {
    for (const auto& type : frequency_types()) {
        std::map<std::string, int> counts;
        for (const auto& k : plan.keys)
            if (k.habit && !k.values[0].is_null()) ++counts[k.values[0]["schedule"]["frequency_type"].get<std::string>()];
        if (counts[type] > 0) continue;
        for (auto& k : plan.keys) {
            if (!k.habit || k.values[0].is_null()) continue;
            const std::string current = k.values[0]["schedule"]["frequency_type"];
            if (counts[current] < 2) continue;
            const HabitParts now(k.values[0]);
            const auto& places = slots.places(*k.habit);
            auto score = [&](const HabitChoice& c) {
                if (k.habit->schedules[c.schedule].type != type) return -1;
                return (c.start != now.start) + (c.duration != now.duration) + (places[c.location] != now.location);
            };
            const HabitChoice* c = best_choice(slots.owned(*k.habit), score, rng);
            if (!c) continue;
            k.values[0] = slots.value(*k.habit, *c);
            break;
        }
    }
}

// The occupation a profile states for the role the user first holds at an employer (the first value
// of an attribute with a paired role field); empty when the user has no such attribute.
std::string first_occupation(const UserPlan& plan, const Lexicon& lex) {
    for (const auto& k : plan.keys) {
        if (!k.attribute) continue;
        for (const auto& f : k.attribute->fields) {
            if (f.paired_with.empty()) continue;
            for (const auto& v : k.values) {
                if (v.is_null()) continue;
                const EmployerDef* e = lex.employer(v.at(f.paired_with).get<std::string>());
                const EmployerRole* r = e ? e->role(v.at(f.name).get<std::string>()) : nullptr;
                MF_ASSERT(r != nullptr, "a role its employer does not have");
                return r->occupation;
            }
        }
    }
    return {};
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
    HabitSlots slots(lex, plan.options.seed, plan.user);
    for (auto& k : plan.keys) {
        k.values.assign(plan.windows, nullptr);
        k.options.assign(plan.windows, -1);
        const std::string op = first_op(plan.causes, k.key);
        if (op != "acquire" && op != "add_item") start_key(k, 0, lex, slots, rng);
        else if (op == "add_item" && k.attribute && k.attribute->initial_hi > 0) start_key(k, 0, lex, slots, rng);
    }
    cover_schedule_types(plan, slots, rng);

    for (int w = 1; w < plan.windows; ++w) {
        const CauseDef* cause = plan.causes[w - 1];
        for (auto& k : plan.keys) {
            k.values[w] = k.values[w - 1];
            k.options[w] = k.options[w - 1];
            for (const auto& e : cause->effects)
                if (e.key == k.key) apply_effect(k, e.op, w, lex, slots, rng);
            if (k.values[w] != k.values[w - 1]) plan.changed[w - 1].push_back(k.key);
        }
    }
    // A user with an employer works as what their first role there is; others keep the drawn one.
    if (const std::string occupation = first_occupation(plan, lex); !occupation.empty()) plan.profile["occupation"] = occupation;
}

}  // namespace memfail::suites::dynamic::gen

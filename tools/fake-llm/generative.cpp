// SPDX-License-Identifier: MIT
// The generative stand-in (generative.hpp): per schema, a writer that draws words and templates from
// generative.json with a generator seeded by the plan (and the attempt), then checks its own draft
// against the contract's rules and draws again (a new salt) until one passes. Every check below
// mirrors a rule of the request/reply contract; "literally" means on memfail's normalised text, on
// word boundaries (text::normalized_contains).
#include "generative.hpp"

#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/embedded/fake_llm_generative.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace memfail::fake_llm {

namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Shared helpers.

const json& lexicon() {
    static const json k_lexicon = [] {
        const auto* file = embedded::fake_llm_generative::find("generative.json");
        return file ? json::parse(file->content) : json::object();
    }();
    return k_lexicon;
}

// A small deterministic generator (splitmix64): the same seed gives the same draws everywhere.
class Draw {
  public:
    explicit Draw(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
    // An inclusive range; lo when hi < lo.
    std::int64_t between(std::int64_t lo, std::int64_t hi) {
        return hi <= lo ? lo : lo + static_cast<std::int64_t>(below(static_cast<std::size_t>(hi - lo + 1)));
    }
    bool coin() { return (next() & 1u) != 0; }
    template <class T>
    const T& pick(const std::vector<T>& items) {
        return items[below(items.size())];
    }
    const json& pick(const json& items) { return items[below(items.size())]; }
    template <class T>
    void shuffle(std::vector<T>& items) {
        for (std::size_t i = items.size(); i > 1; --i)
            std::swap(items[i - 1], items[below(i)]);
    }

  private:
    std::uint64_t m_state = 0;
};

std::string str(const json& obj, const char* key, const std::string& fallback = "") {
    if (obj.is_object() && obj.contains(key) && obj[key].is_string())
        return obj[key].get<std::string>();
    return fallback;
}

std::int64_t integer(const json& obj, const char* key, std::int64_t fallback) {
    if (obj.is_object() && obj.contains(key) && obj[key].is_number_integer())
        return obj[key].get<std::int64_t>();
    return fallback;
}

std::vector<std::string> strings(const json& items) {
    std::vector<std::string> out;
    if (items.is_array())
        for (const auto& s : items)
            if (s.is_string())
                out.push_back(s.get<std::string>());
    return out;
}

bool fits(const json& entry, const std::string& kind) {
    if (!entry.contains("fit"))
        return true;
    for (const auto& f : entry["fit"])
        if (f == kind)
            return true;
    return false;
}

std::string norm(std::string_view s) {
    return text::normalize(s);
}

// `phrase` inside `haystack`, both normalised, on word boundaries.
bool has(std::string_view haystack, std::string_view phrase) {
    const std::string p = norm(phrase);
    return !p.empty() && text::normalized_contains(norm(haystack), p);
}

std::string capital(const std::string& s) {
    return text::capitalize(s);
}

// Pronoun forms, with the verb agreement "they" needs.
struct Pronoun {
    std::string subj = "they", obj = "them", pos = "their", refl = "themselves";
    bool plural = true;
};

Pronoun pronoun_of(const std::string& word) {
    const std::string w = text::to_lower(word);
    if (w == "he")
        return {"he", "him", "his", "himself", false};
    if (w == "she")
        return {"she", "her", "her", "herself", false};
    if (w == "it")
        return {"it", "it", "its", "itself", false};
    return {};
}

// Replaces {token}s from `values` and [singular|plural] choices by `plural`.
std::string fill(std::string s, const std::map<std::string, std::string>& values, bool plural) {
    for (const auto& [key, value] : values)
        s = text::replace_all(std::move(s), "{" + key + "}", value);
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '[') {
            const auto bar = s.find('|', i);
            const auto end = s.find(']', i);
            if (bar != std::string::npos && end != std::string::npos && bar < end) {
                out += plural ? s.substr(bar + 1, end - bar - 1) : s.substr(i + 1, bar - i - 1);
                i = end;
                continue;
            }
        }
        out.push_back(s[i]);
    }
    return out;
}

// The pronoun tokens of the conditional lexicon.
std::map<std::string, std::string> pronoun_values(const Pronoun& p, const std::string& name) {
    return {{"Name", name},          {"Name's", name + "'s"},   {"Subj", capital(p.subj)}, {"subj", p.subj},
            {"obj", p.obj},          {"pos", p.pos},            {"Pos", capital(p.pos)},
            {"refl", p.refl}};
}

// True when the text holds no unreplaced token.
bool complete(const std::string& s) {
    return s.find('{') == std::string::npos && s.find('}') == std::string::npos;
}

std::size_t sentence_count(const std::string& essay) {
    return text::split_sentences(essay).size();
}

// Third person singular of a base verb ("brew" -> "brews", "watch" -> "watches").
std::string third_person(const std::string& verb) {
    if (verb.empty())
        return verb;
    const auto space = verb.find(' ');
    const std::string head = verb.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : verb.substr(space);
    std::string out;
    if (head == "have")
        out = "has";
    else if (head == "be")
        out = "is";
    else if (text::ends_with(head, "s") || text::ends_with(head, "sh") || text::ends_with(head, "ch") ||
             text::ends_with(head, "x") || text::ends_with(head, "z") || text::ends_with(head, "o"))
        out = head + "es";
    else if (head.size() > 1 && head.back() == 'y' &&
             std::string("aeiou").find(head[head.size() - 2]) == std::string::npos)
        out = head.substr(0, head.size() - 1) + "ies";
    else
        out = head + "s";
    return out + rest;
}

// The PLAN object and the attempt number of the request (the last user message with a PLAN line).
struct Plan {
    json value;
    std::int64_t attempt = 1;
    std::string taken;  // PREVIOUS PROBLEM "the behavior 'X' is already used by row N": X, normalised
};

std::optional<Plan> read_plan(const json& messages) {
    if (!messages.is_array())
        return std::nullopt;
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
        if (!it->is_object() || str(*it, "role") != "user")
            continue;
        const std::string content = str(*it, "content");
        std::optional<Plan> plan;
        for (const auto& raw : text::split(content, '\n')) {
            const std::string line(text::trim(raw));
            if (text::starts_with(line, "PLAN:") && !plan) {
                try {
                    json value = json::parse(text::trim(std::string_view(line).substr(5)));
                    if (value.is_object())
                        plan = Plan{std::move(value), 1, ""};
                } catch (const json::exception&) {
                }
            } else if (text::starts_with(line, "PREVIOUS PROBLEM:") && plan) {
                // A retry after a repeat: what another row already uses, to be left alone this time.
                static const std::regex k_used("'(.+)' is already used by row");
                std::smatch m;
                if (std::regex_search(line, m, k_used))
                    plan->taken = norm(m[1].str());
            } else if (text::starts_with(line, "ATTEMPT:") && plan) {
                try {
                    plan->attempt = std::stoll(std::string(text::trim(std::string_view(line).substr(8))));
                } catch (const std::exception&) {
                }
            }
        }
        if (plan)
            return plan;
    }
    return std::nullopt;
}

// The generator for one draft: the plan (key order does not matter: dump() sorts keys), the
// attempt and the salt of the draft.
Draw draw_for(const Plan& plan, std::string_view schema, std::uint64_t salt) {
    const std::string key = std::string(schema) + "\n" + plan.value.dump() + "\n" +
                            std::to_string(plan.attempt) + "\n" + std::to_string(salt);
    return Draw(hash64(key, 0x6D656D6661696Cull));
}

// Tries `write` with salts 0, 1, ... until it gives a reply; the last draft as a last resort.
std::optional<json> first_valid(const Plan& plan, std::string_view schema,
                                const std::function<std::optional<json>(Draw&, const json&, bool)>& write) {
    // The writers see the attempt and the draft number beside the plan (Long-Hop walks its pools by them).
    json seen = plan.value;
    seen["__attempt"] = plan.attempt;
    seen["__taken"] = plan.taken;
    constexpr std::uint64_t k_drafts = 200;
    for (std::uint64_t salt = 0; salt < k_drafts; ++salt) {
        Draw draw = draw_for(plan, schema, salt);
        seen["__draft"] = salt;
        if (auto reply = write(draw, seen, false))
            return reply;
    }
    Draw draw = draw_for(plan, schema, k_drafts);
    seen["__draft"] = k_drafts;
    return write(draw, seen, true);
}

// ---------------------------------------------------------------------------------------------
// Conditional-Facts.

const std::vector<std::string> k_connectives = {"only when", "unless",       "except when", "but only if",
                                                "whenever",  "if",           "only after",  "only if"};

bool has_connective(const std::string& s) {
    for (const auto& c : k_connectives)
        if (has(s, c))
            return true;
    return false;
}

const std::vector<std::string> k_ages = {"two",   "three", "four",   "five",   "six",   "seven",
                                         "eight", "nine",  "ten",    "eleven", "twelve"};

struct Entity {
    std::string name;
    Pronoun p;
    std::string style;    // person, character or pet
    std::string species;  // pets: cat, dog, ...; others: the style
    std::map<std::string, std::string> values;  // tokens: pronouns, place, town, habit, ...
};

std::string render_entity(const std::string& tmpl, const Entity& e) {
    std::string t = tmpl;
    // A verb phrase after "they" would not agree ("they hums"): name the entity there instead.
    if (e.p.plural && t.find("{vp}") != std::string::npos) {
        t = text::replace_all(t, "{Subj} {vp}", "{Name} {vp}");
        t = text::replace_all(t, "{subj} {vp}", "{Name} {vp}");
    }
    return fill(t, e.values, e.p.plural);
}

// The entity: its style, setting and the tokens its sentences use.
Entity make_entity(Draw& draw, const json& plan) {
    const json& lex = lexicon()["conditional"];
    Entity e;
    e.name = str(plan, "entity", "Alex");
    e.p = pronoun_of(str(plan, "pronoun", "they"));
    e.values = pronoun_values(e.p, e.name);
    const bool pet = str(plan, "entity_category") == "pet";
    if (pet) {
        e.style = "pet";
        const json& kind = draw.pick(lex["pet_kinds"]);
        e.species = str(kind, "species");
        const json& household = draw.pick(lex["households"]);
        const std::string age = draw.pick(k_ages);
        e.values["breed"] = str(kind, "breed");
        e.values["a_age"] = std::string(age == "eight" || age == "eleven" ? "an " : "a ") + age + "-year-old";
        e.values["household"] = str(household, "household");
        e.values["place"] = str(household, "home");
    } else {
        const std::string category = str(plan, "entity_category");
        e.style = category == "person" || category == "character" ? category : (draw.coin() ? "person" : "character");
        e.species = e.style;
        if (e.style == "person") {
            const json& job = draw.pick(lex["professions"]);
            e.values["occupation"] = str(job, "profession");
            e.values["place"] = str(job, "place");
            e.values["town"] = draw.pick(lex["towns"]).get<std::string>();
            e.values["age"] = std::to_string(draw.between(24, 71));
        } else {
            const json& role = draw.pick(lex["character_roles"]);
            e.values["role"] = str(role, "title");
            const std::string realm = draw.pick(lex["realms"]).get<std::string>();
            e.values["realm"] = realm;
            e.values["town"] = realm;
            e.values["place"] = realm;
        }
    }
    return e;
}

std::string behaviour_phrase(const json& b, const Entity& e) {
    return fill(str(b, "verb_s") + " " + str(b, "rest"), e.values, false);
}

// "paints tiny boats" -> "paint tiny boats": for a behaviour the pools do not hold.
std::string base_form(const std::string& phrase) {
    const auto space = phrase.find(' ');
    std::string head = phrase.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : phrase.substr(space);
    if (head == "has")
        head = "have";
    else if (head == "is")
        head = "be";
    else if (text::ends_with(head, "ies"))
        head = head.substr(0, head.size() - 3) + "y";
    else if (text::ends_with(head, "shes") || text::ends_with(head, "ches") || text::ends_with(head, "sses") ||
             text::ends_with(head, "xes") || text::ends_with(head, "oes"))
        head = head.substr(0, head.size() - 2);
    else if (text::ends_with(head, "s") && !text::ends_with(head, "ss"))
        head.pop_back();
    return head + rest;
}

std::string behaviour_base(const json& b, const Entity& e) {
    return fill(str(b, "verb") + " " + str(b, "rest"), e.values, e.p.plural);
}

std::vector<const json*> conditions_for(const std::string& type, const Entity& e) {
    const json& all = lexicon()["conditional"]["conditions"];
    std::vector<const json*> exact, typed;
    for (const auto& c : all) {
        if (str(c, "type") != type)
            continue;
        typed.push_back(&c);
        if (fits(c, e.species) || (e.style != "pet" && (fits(c, "person") || fits(c, "character"))))
            exact.push_back(&c);
    }
    if (!exact.empty())
        return exact;
    if (!typed.empty())
        return typed;
    std::vector<const json*> any;
    for (const auto& c : all)
        if (fits(c, e.species))
            any.push_back(&c);
    return any;
}

bool kind_allows(const json& b, const std::string& type) {
    const json& compat = lexicon()["conditional"]["compatibility"];
    const std::string kind = str(b, "kind");
    if (!compat.contains(kind))
        return true;
    for (const auto& t : compat[kind])
        if (t == type)
            return true;
    return false;
}

std::vector<const json*> behaviours_for(const std::string& type, const Entity& e) {
    const json& all = lexicon()["conditional"]["behaviours"];
    std::vector<const json*> strict, loose;
    for (const auto& b : all) {
        const bool fit = fits(b, e.species) || (e.style != "pet" && (fits(b, "person") || fits(b, "character")));
        if (!fit)
            continue;
        loose.push_back(&b);
        if (kind_allows(b, type) && str(b, "avoid_type") != type)
            strict.push_back(&b);
    }
    return strict.empty() ? loose : strict;
}

// Ordinary sentences of the entity's life: its setting, then personal background (one per group).
std::vector<std::string> fillers_for(Draw& draw, const Entity& e, const std::string& type, bool hard,
                                     const std::vector<std::string>& avoid) {
    const json& lex = lexicon()["conditional"];
    std::vector<std::string> setting, background;
    const std::string setting_key = e.style;
    for (const auto& s : lex["setting"][setting_key]) {
        const std::string t = s.get<std::string>();
        if (hard && (t.find("{habit}") != std::string::npos || t.find("{Habit}") != std::string::npos))
            continue;
        setting.push_back(t);
    }
    std::set<std::string> groups;
    std::vector<const json*> bg;
    for (const auto& b : lex["background"])
        if (fits(b, e.species) && str(b, "avoid_type") != type)
            bg.push_back(&b);
    draw.shuffle(bg);
    for (const json* b : bg) {
        const std::string group = str(*b, "group");
        if (!group.empty() && !groups.insert(group).second)
            continue;
        background.push_back(str(*b, "text"));
    }
    draw.shuffle(setting);
    std::vector<std::string> out;
    auto accept = [&](const std::string& tmpl) {
        const std::string s = render_entity(tmpl, e);
        // Every sentence but the rule is unconditional, in Easy essays too.
        if (!complete(s) || has_connective(s))
            return;
        for (const auto& a : avoid)
            if (has(s, a))
                return;
        if (sentence_count(s) != 1)
            return;
        out.push_back(s);
    };
    // Setting and background alternate, so the essay stays on one life and keeps some variety.
    for (std::size_t i = 0; i < std::max(setting.size(), background.size()); ++i) {
        if (i < setting.size() && i < 4)
            accept(setting[i]);
        if (i < background.size())
            accept(background[i]);
    }
    return out;
}

std::string intro_for(Draw& draw, const Entity& e) {
    const json& intros = lexicon()["conditional"]["intros"][e.style];
    return render_entity(draw.pick(intros).get<std::string>(), e);
}

// The question and answer of a row: the situation first, then whether the entity would act now.
void write_question(Draw& draw, json& reply, const Entity& e, const json* condition, const std::string& behaviour_base_form,
                    const std::string& behaviour, const std::string& clause, bool met) {
    const json& lex = lexicon()["conditional"];
    std::string context;
    if (condition)
        context = render_entity(str(*condition, met ? "yes_context" : "no_context"), e);
    else
        context = met ? "Everything about this moment fits the pattern described."
                      : "Nothing about this moment fits the pattern described.";
    std::string question = fill(draw.pick(lex["questions"]).get<std::string>(),
                                {{"ctx", context}, {"Name", e.name}, {"do", behaviour_base_form}}, false);
    if (has(question, clause))
        question = "Would " + e.name + " " + behaviour_base_form + " right now?";
    const std::string stated = e.name + " " + behaviour + " only " + clause;
    const std::string answer =
        fill(draw.pick(lex[met ? "answers_yes" : "answers_no"]).get<std::string>(), {{"stated", stated}}, false);
    reply["question"] = question;
    reply["question_context"] = context;
    reply["ground_truth_answer"] = answer;
}

std::pair<std::int64_t, std::int64_t> sentence_range(const json& plan, std::int64_t lo, std::int64_t hi) {
    if (plan.contains("sentences") && plan["sentences"].is_array() && plan["sentences"].size() == 2 &&
        plan["sentences"][0].is_number_integer() && plan["sentences"][1].is_number_integer()) {
        lo = plan["sentences"][0].get<std::int64_t>();
        hi = plan["sentences"][1].get<std::int64_t>();
    }
    lo = std::clamp<std::int64_t>(lo, 1, 60);
    hi = std::clamp<std::int64_t>(hi, lo, 60);
    return {lo, hi};
}

// Places `fixed` sentences at `positions` (ascending) among fillers, intro first; nullopt when the
// fillers run out.
std::optional<std::vector<std::string>> assemble(std::size_t n, const std::string& intro,
                                                 const std::vector<std::pair<std::size_t, std::string>>& fixed,
                                                 const std::vector<std::string>& fillers) {
    std::vector<std::string> out(n);
    std::vector<bool> used(n, false);
    out[0] = intro;
    used[0] = true;
    for (const auto& [pos, s] : fixed) {
        if (pos >= n || used[pos])
            return std::nullopt;
        out[pos] = s;
        used[pos] = true;
    }
    std::size_t next = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (used[i])
            continue;
        if (next >= fillers.size())
            return std::nullopt;
        out[i] = fillers[next++];
    }
    return out;
}

std::optional<json> write_conditional_easy(Draw& draw, const json& plan, bool last_resort) {
    Entity e = make_entity(draw, plan);
    const std::string type = str(plan, "condition_type", "time_of_day");
    const bool met = str(plan, "condition_met", "yes") == "yes";
    const auto conds = conditions_for(type, e);
    const auto behaviours = behaviours_for(type, e);
    if (conds.empty() || behaviours.empty())
        return std::nullopt;
    const json& lex = lexicon()["conditional"];
    // memfail allows each condition once in a dataset, and rows of one condition type are written
    // apart: the type's clauses (every condition, then each "when" clause again with each opener
    // of condition_openers: "at times when ...") are walked from a place of the row's own, one
    // step per attempt and per draft, skipping the clause PREVIOUS PROBLEM named. Rows of a type
    // rarely start on the same clause, and a retry never repeats one.
    std::vector<std::pair<const json*, std::string>> clauses;
    for (const json* c : conds)
        clauses.emplace_back(c, render_entity(str(*c, "clause"), e));
    for (const auto& opener : lex["condition_openers"])
        for (const json* c : conds) {
            const std::string clause = render_entity(str(*c, "clause"), e);
            if (text::starts_with(clause, "when "))
                clauses.emplace_back(c, opener.get<std::string>() + clause.substr(4));
        }
    const auto row = static_cast<std::size_t>(std::max<std::int64_t>(integer(plan, "row", 1), 1));
    const auto step = static_cast<std::size_t>(std::max<std::int64_t>(integer(plan, "__attempt", 1), 1) - 1 +
                                               std::max<std::int64_t>(integer(plan, "__draft", 0), 0));
    const std::string taken_clause = str(plan, "__taken");
    std::size_t pick = (hash64(std::to_string(row), 7) + step) % clauses.size();
    for (std::size_t k = 0; k < clauses.size() && !taken_clause.empty() && norm(clauses[pick].second) == taken_clause; ++k)
        pick = (pick + 1) % clauses.size();
    const json& c = *clauses[pick].first;
    std::string clause = clauses[pick].second;
    const json& b = *behaviours[draw.below(behaviours.size())];
    // Half the behaviours get a manner, so behaviours repeat less.
    const std::string manner = draw.coin() ? draw.pick(lex["behaviour_manners"]).get<std::string>() : "";
    const std::string behaviour = behaviour_phrase(b, e) + manner;
    e.values["habit"] = str(b, "habit");
    e.values["Habit"] = capital(str(b, "habit"));
    const auto [lo, hi] = sentence_range(plan, 6, 9);
    const auto n = static_cast<std::size_t>(draw.between(lo, hi));
    if (n < 2)
        return std::nullopt;
    const std::string rule = render_entity(draw.pick(lex["easy_rules"]).get<std::string>(),
                                           [&] {
                                               Entity r = e;
                                               r.values["vp"] = behaviour;
                                               r.values["clause"] = clause;
                                               return r;
                                           }());
    const std::string intro = intro_for(draw, e);
    const auto fillers = fillers_for(draw, e, type, false, {behaviour, clause, str(b, "rest")});
    const auto pos = static_cast<std::size_t>(draw.between(1, static_cast<std::int64_t>(n) - 1));
    const auto sentences = assemble(n, intro, {{pos, rule}}, fillers);
    if (!sentences)
        return std::nullopt;
    const std::string essay = text::join(*sentences, " ");
    // Checks: the sentence count, one rule sentence with both phrases joined by "only".
    const auto split = text::split_sentences(essay);
    std::size_t rule_sentences = 0;
    for (const auto& s : split)
        if (has(s, behaviour) || has(s, clause))
            ++rule_sentences;
    if (!last_resort && (split.size() < static_cast<std::size_t>(lo) || split.size() > static_cast<std::size_t>(hi) ||
                         rule_sentences != 1 || !has(rule, "only " + clause) || !has(rule, behaviour) || !complete(essay) ||
                         has(intro, behaviour)))
        return std::nullopt;
    const std::string taken = str(plan, "__taken");
    if (!last_resort && !taken.empty() && (norm(behaviour) == taken || norm(clause) == taken))
        return std::nullopt;
    json reply{{"behavior", behaviour}, {"condition", clause}, {"essay", essay}};
    write_question(draw, reply, e, &c, behaviour_base(b, e) + manner, behaviour, clause, met);
    if (!last_resort && (!has(reply["question"].get<std::string>(), e.name) ||
                         has(reply["question"].get<std::string>(), clause)))
        return std::nullopt;
    return json{{"behavior", reply["behavior"]},
                {"condition", reply["condition"]},
                {"essay", reply["essay"]},
                {"question", reply["question"]},
                {"question_context", reply["question_context"]},
                {"ground_truth_answer", reply["ground_truth_answer"]}};
}

// memfail's importer takes a Hard essay's link as the last sentence with a habit word (usually,
// tends, ...) and a "those ..." phrase, or with either and an echo of the behaviour: the link
// sentence must be such a sentence and no later one may have a habit word or a demonstrative.
bool link_found_last(const std::vector<std::string>& sentences, const std::string& link) {
    static const std::set<std::string> k_markers = {"usually", "tends", "tend", "mostly", "often", "typically",
                                                    "generally", "around", "likely", "invariably"};
    static const std::set<std::string> k_stops = {"that", "when", "which", "is",  "are", "was", "were", "her",
                                                  "his",  "their", "its",  "the", "she", "he",  "they", "it",
                                                  "i",    "we",   "you",  "this", "a",  "an",  "and", "to"};
    auto marked = [&](const std::vector<std::string>& w) {
        return std::any_of(w.begin(), w.end(), [&](const std::string& x) { return k_markers.count(x) > 0; });
    };
    const auto w = text::words(link);
    bool phrase = false;
    for (std::size_t j = 0; j < w.size() && !phrase; ++j) {
        if (w[j] != "those" && w[j] != "these")
            continue;
        for (std::size_t k = j + 1; k < w.size() && k - j <= 5 && !k_stops.count(w[k]); ++k)
            phrase = phrase || !text::is_stopword(w[k]);
    }
    if (!phrase || !marked(w))
        return false;
    const auto at = std::find_if(sentences.begin(), sentences.end(), [&](const std::string& s) { return norm(s) == norm(link); });
    if (at == sentences.end() || at == sentences.begin())
        return false;
    for (auto it = at + 1; it != sentences.end(); ++it) {
        const auto later = text::words(*it);
        if (marked(later) || std::any_of(later.begin(), later.end(), [](const std::string& x) { return x == "those" || x == "these"; }))
            return false;
    }
    return true;
}

// What memfail's importer may take as the condition's key detail in an essay that does not spell
// the clause out (the longest run of two or more of its words that the essay holds, else its
// rarest word there), conservatively: every such run and every content word the essay holds.
std::vector<std::string> condition_keys(const std::string& clause, const std::string& essay) {
    const auto w = text::words(clause);
    std::vector<std::string> runs;
    for (std::size_t len = w.size(); len >= 2; --len)
        for (std::size_t i = 0; i + len <= w.size(); ++i) {
            std::vector<std::string> run(w.begin() + static_cast<std::ptrdiff_t>(i),
                                         w.begin() + static_cast<std::ptrdiff_t>(i + len));
            const std::string phrase = text::join(run, " ");
            if (has(essay, phrase) && std::any_of(run.begin(), run.end(), [](const std::string& x) { return !text::is_stopword(x); }))
                runs.push_back(phrase);
        }
    std::vector<std::string> out = runs;
    for (const auto& x : w)
        if (!text::is_stopword(x) && x.size() >= 3 && has(essay, x))
            out.push_back(x);
    return out;
}

std::optional<json> write_conditional_hard(Draw& draw, const json& plan, bool last_resort) {
    Entity e = make_entity(draw, plan);
    const std::string type = str(plan, "condition_type", "time_of_day");
    const bool met = str(plan, "condition_met", "yes") == "yes";
    const std::string behaviour = str(plan, "behavior");
    const std::string clause = str(plan, "condition");
    if (behaviour.empty() || clause.empty())
        return std::nullopt;
    // The Easy row's behaviour and condition, found again in the pools by their rendered text.
    const json* bmatch = nullptr;
    std::string manner;
    for (const auto& b : lexicon()["conditional"]["behaviours"]) {
        const std::string p = behaviour_phrase(b, e);
        if (norm(p) == norm(behaviour)) {
            bmatch = &b;
            break;
        }
        for (const auto& m : lexicon()["conditional"]["behaviour_manners"])
            if (norm(p + m.get<std::string>()) == norm(behaviour)) {
                bmatch = &b;
                manner = m.get<std::string>();
            }
        if (bmatch)
            break;
    }
    std::string bare = norm(clause);  // without an "at times" / "in moments" opener
    for (const auto& opener : lexicon()["conditional"]["condition_openers"]) {
        const std::string o = norm(opener.get<std::string>());
        if (text::starts_with(bare, o + " "))
            bare = "when " + bare.substr(o.size() + 1);
    }
    const json* cmatch = nullptr;
    for (const auto& c : lexicon()["conditional"]["conditions"])
        if (norm(render_entity(str(c, "clause"), e)) == bare) {
            cmatch = &c;
            break;
        }
    const std::string habit = bmatch ? str(*bmatch, "habit") : "this little habit";
    e.values["habit"] = habit;
    e.values["Habit"] = capital(habit);
    const std::string anchor = cmatch ? render_entity(str(*cmatch, "anchor"), e) : "at those particular times";
    const std::string base = bmatch ? behaviour_base(*bmatch, e) + manner : base_form(behaviour);
    Entity r = e;
    r.values["vp"] = behaviour;
    r.values["anchor"] = anchor;
    const json& lex = lexicon()["conditional"];
    const std::string behaviour_sentence = render_entity(draw.pick(lex["hard_behaviour"]).get<std::string>(), r);
    const std::string condition_sentence =
        cmatch ? render_entity(str(*cmatch, "sentence"), e)
               : capital(e.p.pos) + " weeks have their share of moments " + clause + ".";
    const std::string link_sentence = render_entity(draw.pick(lex["hard_link"]).get<std::string>(), r);
    const auto [lo, hi] = sentence_range(plan, 8, 12);
    const auto n = static_cast<std::int64_t>(draw.between(lo, hi));
    if (n < 6)
        return std::nullopt;
    // Three non-adjacent positions after the intro; behaviour and condition in either order, the
    // link (which refers back to both) last.
    const auto p1 = static_cast<std::size_t>(draw.between(1, n - 5));
    const auto p2 = static_cast<std::size_t>(draw.between(static_cast<std::int64_t>(p1) + 2, n - 3));
    const auto p3 = static_cast<std::size_t>(draw.between(static_cast<std::int64_t>(p2) + 2, n - 1));
    const bool behaviour_first = draw.coin();
    std::vector<std::string> avoid = {behaviour, clause, habit, anchor};
    if (bmatch)
        avoid.push_back(str(*bmatch, "rest"));
    const auto fillers = fillers_for(draw, e, type, true, avoid);
    const std::string intro = intro_for(draw, e);
    const auto sentences =
        assemble(static_cast<std::size_t>(n), intro,
                 {{p1, behaviour_first ? behaviour_sentence : condition_sentence},
                  {p2, behaviour_first ? condition_sentence : behaviour_sentence},
                  {p3, link_sentence}},
                 fillers);
    if (!sentences)
        return std::nullopt;
    const std::string essay = text::join(*sentences, " ");
    if (!last_resort) {
        const auto split = text::split_sentences(essay);
        if (split.size() < static_cast<std::size_t>(lo) || split.size() > static_cast<std::size_t>(hi))
            return std::nullopt;
        if (has_connective(essay) || has(essay, clause) || !has(behaviour_sentence, behaviour) ||
            has(behaviour_sentence, clause) || has(link_sentence, behaviour) ||
            has(condition_sentence, behaviour) || has(intro, behaviour) || !complete(essay))
            return std::nullopt;
        // The three sentences are sentences of the essay, verbatim and apart.
        std::vector<std::size_t> at;
        for (const auto* s : {&behaviour_sentence, &condition_sentence, &link_sentence}) {
            const auto it = std::find(split.begin(), split.end(), *s);
            if (it == split.end())
                return std::nullopt;
            at.push_back(static_cast<std::size_t>(it - split.begin()));
        }
        std::sort(at.begin(), at.end());
        if (at[1] - at[0] < 2 || at[2] - at[1] < 2)
            return std::nullopt;
    }
    if (!last_resort && !link_found_last(text::split_sentences(essay), link_sentence))
        return std::nullopt;
    json reply;
    write_question(draw, reply, e, cmatch, base, behaviour, clause, met);
    // The question must not name what memfail takes as the condition's key detail in this essay;
    // when the situation's own words would, the question leaves the situation to question_context.
    const auto keys = condition_keys(clause, essay);
    auto names_key = [&](const std::string& q) {
        return std::any_of(keys.begin(), keys.end(), [&](const std::string& k) { return has(q, k); });
    };
    if (names_key(reply["question"].get<std::string>()))
        reply["question"] = "Given how things stand at the moment, would " + e.name + " " + base + " right now?";
    if (!last_resort && (!has(reply["question"].get<std::string>(), e.name) ||
                         has(reply["question"].get<std::string>(), clause) || names_key(reply["question"].get<std::string>())))
        return std::nullopt;
    return json{{"behavior_sentence", behaviour_sentence},
                {"condition_sentence", condition_sentence},
                {"link_sentence", link_sentence},
                {"essay", essay},
                {"question", reply["question"]},
                {"question_context", reply["question_context"]},
                {"ground_truth_answer", reply["ground_truth_answer"]}};
}

// ---------------------------------------------------------------------------------------------
// Coexisting-Facts.

struct Preference {
    std::string phrase;
    bool plural = false;
};

std::optional<json> write_coexisting(Draw& draw, const json& plan, bool last_resort) {
    const json& lex = lexicon()["coexisting"];
    const std::string category = str(plan, "category", "things");
    const json* entry = nullptr;
    for (const auto& c : lex["categories"])
        if (norm(str(c, "name")) == norm(category)) {
            entry = &c;
            break;
        }
    std::string label = category;
    std::vector<Preference> pool;
    std::vector<std::string> statements, questions;
    bool general = true;
    if (entry) {
        label = str(*entry, "label", category);
        for (const auto& p : (*entry)["preferences"])
            if (text::words(str(p, "phrase")).size() <= 3)  // one to three words
                pool.push_back({str(p, "phrase"), p.value("plural", false)});
        statements = strings((*entry)["statements"]);
        questions = strings((*entry)["questions"]);
        general = entry->value("general", true);
    } else {
        for (const auto& adjective : lex["fallback_adjectives"])
            pool.push_back({adjective.get<std::string>() + " " + category, true});
    }
    if (general || statements.size() < 5)
        for (const auto& s : lex["statements"])
            statements.push_back(s.get<std::string>());
    // First-person statements only ("I", "me", "my", "I'd", ...).
    statements.erase(std::remove_if(statements.begin(), statements.end(),
                                    [](const std::string& s) {
                                        static const std::set<std::string> k_first = {
                                            "i", "me", "my", "mine", "myself", "im", "ive", "ill", "id"};
                                        const auto w = text::words(s);
                                        return std::none_of(w.begin(), w.end(), [](const std::string& x) {
                                            return k_first.count(x) > 0;
                                        });
                                    }),
                     statements.end());
    if (statements.empty())
        return std::nullopt;
    const auto count = static_cast<std::size_t>(std::clamp<std::int64_t>(integer(plan, "count", 3), 1, 50));
    if (pool.size() < count)
        return std::nullopt;
    draw.shuffle(pool);
    std::vector<Preference> chosen;
    for (const auto& p : pool) {
        if (chosen.size() == count)
            break;
        bool clash = false;
        for (const auto& c : chosen)
            clash = clash || has(c.phrase, p.phrase) || has(p.phrase, c.phrase);
        if (!clash)
            chosen.push_back(p);
    }
    if (chosen.size() != count)
        return std::nullopt;
    draw.shuffle(statements);
    json prefs = json::array(), facts = json::array();
    std::vector<std::string> names;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        const auto& p = chosen[i];
        const std::string& tmpl = statements[i % statements.size()];
        std::string s = fill(tmpl,
                             {{"P", capital(p.phrase)},
                              {"p", p.phrase},
                              {"c", p.phrase},
                              {"is", p.plural ? "are" : "is"},
                              {"has", p.plural ? "have" : "has"},
                              {"was", p.plural ? "were" : "was"},
                              {"s", p.plural ? "" : "s"},
                              {"label", label}},
                             false);
        if (!last_resort) {
            if (!complete(s) || !has(s, p.phrase))
                return std::nullopt;
            for (const auto& other : chosen)
                if (&other != &p && has(s, other.phrase))
                    return std::nullopt;
        }
        prefs.push_back(p.phrase);
        facts.push_back(s);
        names.push_back(p.phrase);
    }
    // The question: the category's own scenarios first, then built ones (an opener and an ask).
    std::vector<std::string> asks;
    for (const auto& q : questions)
        asks.push_back(q);
    for (const auto& opener : lex["question_openers"])
        for (const auto& ask : lex["question_asks"])
            asks.push_back(opener.get<std::string>() + " " + fill(ask.get<std::string>(), {{"label", label}}, false));
    std::string question;
    for (std::size_t tries = 0; tries < 8 && question.empty(); ++tries) {
        // Own scenarios are preferred (a real prompt would write one for the category).
        const bool own = !questions.empty() && tries < 6;
        const std::string q = own ? draw.pick(questions) : draw.pick(asks);
        bool names_one = false;
        for (const auto& nm : names)
            names_one = names_one || has(q, nm);
        if (!names_one)
            question = q;
    }
    if (question.empty())
        return std::nullopt;
    return json{{"preferences", prefs},
                {"preference_facts", facts},
                {"question", question},
                {"ground_truth_answer", text::join(names, ", ")}};
}

// ---------------------------------------------------------------------------------------------
// Persona-Retrieval.

struct PersonaTokens {
    std::map<std::string, std::string> values;
    bool plural = false;
};

PersonaTokens persona_tokens(const std::string& name, const Pronoun& p, const std::string& flavor) {
    PersonaTokens t;
    const std::string first = text::split(name, ' ')[0];
    const bool they = p.plural;
    t.plural = they;
    t.values = {{"Name", name},
                {"First", first},
                {"name", name},
                {"He", capital(p.subj)},
                {"he", p.subj},
                {"him", p.obj},
                {"his", p.pos},
                {"His", capital(p.pos)},
                {"himself", p.refl},
                {"place", "work"},
                {"profession", flavor},
                {"flavor", flavor}};
    // The fact sentences were written for "he"/"she": "they is" would not agree.
    if (they) {
        t.values["He"] = first;
        t.values["he"] = first;
    }
    return t;
}

std::string persona_fill(std::string tmpl, const PersonaTokens& t, const std::string& subj,
                         const std::map<std::string, std::string>& extra = {}) {
    std::map<std::string, std::string> values = t.values;
    values["Subj"] = capital(subj);
    values["subj"] = subj;
    for (const auto& [k, v] : extra)
        values[k] = v;
    // Fill the fact parts first: they hold pronoun tokens of their own.
    for (const char* key : {"Extra", "extra", "Key", "key", "cue"})
        if (values.count(key))
            tmpl = text::replace_all(tmpl, std::string("{") + key + "}", values[key]);
    return fill(tmpl, values, false);
}

// Some phrase of at least three words of `answer` that `essay` holds literally.
bool quotes_essay(const std::string& answer, const std::string& essay) {
    const auto w = text::words(answer);
    const std::string e = norm(essay);
    for (std::size_t i = 0; i + 3 <= w.size(); ++i)
        if (text::normalized_contains(e, w[i] + " " + w[i + 1] + " " + w[i + 2]))
            return true;
    return false;
}

std::optional<json> write_persona(Draw& draw, const json& plan, bool last_resort) {
    const json& lex = lexicon()["persona"];
    const std::string name = str(plan, "entity", "Alex Morgan");
    const std::string first = text::split(name, ' ')[0];
    const Pronoun p = pronoun_of(str(plan, "pronoun", "they"));
    std::string flavor = str(plan, "flavor", "a person with many interests");
    while (!flavor.empty() && (flavor.back() == '.' || flavor.back() == ' '))
        flavor.pop_back();
    const PersonaTokens tokens = persona_tokens(name, p, flavor);
    const json slots = plan.contains("slots") && plan["slots"].is_array() ? plan["slots"] : json::array();
    const auto [lo, hi] = sentence_range(plan, 8, 12);
    const auto n = static_cast<std::size_t>(draw.between(lo, hi));
    // A subject for fact sentences: the first name or the pronoun (never "they", which would not agree).
    auto subject = [&] { return p.plural || draw.coin() ? first : p.subj; };

    std::vector<std::vector<std::string>> body;  // groups of sentences after the intro (a fact's pair stays together)
    // The flavor's detail: "... who hates city light pollution" -> "she hates city light pollution".
    const std::string lower = " " + text::to_lower(flavor) + " ";
    std::string tail_sentence;
    if (const auto who = lower.find(" who "); who != std::string::npos) {
        const std::string tail = std::string(text::trim(flavor.substr(who + 4)));
        if (!p.plural)
            tail_sentence = persona_fill(draw.pick(lex["tail_who"]).get<std::string>(), tokens, subject(), {{"tail", tail}});
    } else {
        for (const char* prep : {" with ", " on ", " in ", " of "}) {
            const auto at = lower.find(prep);
            if (at == std::string::npos)
                continue;
            const std::string tail = std::string(text::trim(flavor.substr(at + std::string(prep).size() - 1)));
            tail_sentence = persona_fill(draw.pick(lex["tail_np"]).get<std::string>(), tokens, subject(), {{"tail", tail}});
            break;
        }
    }
    if (!tail_sentence.empty())
        body.push_back({tail_sentence});

    // One fact type per question that is not misleading, then more facts as texture.
    std::vector<const json*> types;
    for (const auto& ft : lex["fact_types"])
        types.push_back(&ft);
    draw.shuffle(types);
    std::size_t next_type = 0;
    struct Fact {
        std::string question, answer;
    };
    auto write_fact = [&](bool for_question, std::vector<std::vector<std::string>>& out) -> std::optional<Fact> {
        if (next_type >= types.size())
            return std::nullopt;
        const json& ft = *types[next_type++];
        const json& inst = draw.pick(ft["instances"]);
        std::map<std::string, std::string> parts;
        // Fact parts may hold pronoun tokens ("it tastes like soap to {him}").
        for (const char* key : {"key", "extra", "cue"})
            if (inst.contains(key))
                parts[key] = fill(str(inst, key), tokens.values, false);
        parts["Key"] = capital(parts["key"]);
        parts["Extra"] = capital(parts["extra"]);
        const bool pair = ft.contains("pairs") && !ft["pairs"].empty() && draw.coin();
        std::vector<std::string> written;
        if (pair) {
            for (const auto& s : draw.pick(ft["pairs"]))
                written.push_back(persona_fill(s.get<std::string>(), tokens, subject(), parts));
        } else {
            written.push_back(persona_fill(draw.pick(ft["sentences"]).get<std::string>(), tokens, subject(), parts));
        }
        for (const auto& s : written)
            if (!complete(s) || s.find("{extra}") != std::string::npos)
                return std::nullopt;
        // A fact without its detail ("extra") in the sentence must not be asked about by it.
        std::string all = text::join(written, " ");
        out.push_back(written);
        if (!for_question)
            return Fact{};
        Fact f;
        f.question = persona_fill(draw.pick(ft["questions"]).get<std::string>(), tokens, subject(), parts);
        f.answer = persona_fill(str(ft, "answer"), tokens, subject(), parts);
        if (!quotes_essay(f.answer, all))
            f.answer += " " + written.front();
        return f;
    };

    json questions = json::array();
    std::vector<std::vector<std::string>> fact_sentences;
    for (const auto& slot : slots) {
        const bool misleading = slot.is_object() && slot.value("misleading", false);
        if (misleading) {
            const std::string d = str(slot, "distractor", "someone else");
            const std::string q = fill(draw.pick(lex["misleading_questions"]).get<std::string>(), {{"D", d}}, false);
            questions.push_back({{"text", q},
                                 {"is_misleading", true},
                                 {"distractor", d},
                                 {"ground_truth_answer", "I don't have information about " + d + "."}});
        } else {
            auto fact = write_fact(true, fact_sentences);
            if (!fact)
                return std::nullopt;
            questions.push_back({{"text", fact->question},
                                 {"is_misleading", false},
                                 {"distractor", ""},
                                 {"ground_truth_answer", fact->answer}});
        }
    }
    for (auto& group : fact_sentences)
        body.push_back(group);
    auto count_sentences = [&] {
        std::size_t c = 1;  // the intro
        for (const auto& group : body)
            c += group.size();
        return c;
    };
    // Texture: one or two more facts, then ordinary life sentences.
    const std::size_t extra_facts = 1 + draw.below(2);
    for (std::size_t i = 0; i < extra_facts && count_sentences() < n; ++i) {
        std::vector<std::vector<std::string>> more;
        if (write_fact(false, more) && count_sentences() + more.front().size() <= n)
            body.push_back(more.front());
    }
    std::vector<std::string> fillers = strings(lex["fillers"]);
    draw.shuffle(fillers);
    for (const auto& f : fillers) {
        if (count_sentences() >= n)
            break;
        body.push_back({persona_fill(f, tokens, subject())});
    }
    draw.shuffle(body);
    std::vector<std::string> sentences = {fill(draw.pick(lex["intros"]).get<std::string>(), tokens.values, false)};
    for (const auto& group : body)
        sentences.insert(sentences.end(), group.begin(), group.end());
    const std::string essay = text::join(sentences, " ");
    if (!last_resort) {
        const auto count = sentence_count(essay);
        if (count < static_cast<std::size_t>(lo) || count > static_cast<std::size_t>(hi) || !complete(essay) ||
            !has(text::split_sentences(essay).front(), name))
            return std::nullopt;
        for (const auto& q : questions) {
            const std::string t = q["text"].get<std::string>();
            if (q["is_misleading"].get<bool>()) {
                if (!has(t, q["distractor"].get<std::string>()) || has(t, name) || has(t, first))
                    return std::nullopt;
            } else if (!has(t, name) || !quotes_essay(q["ground_truth_answer"].get<std::string>(), essay) ||
                       !complete(t)) {
                return std::nullopt;
            }
        }
    }
    return json{{"essay", essay}, {"questions", questions}};
}

// ---------------------------------------------------------------------------------------------
// Long-Hop.

struct Anchor {
    std::string kind;  // moment, act, feel, thing
    std::string text;
    std::string prep;  // moments: "on", "after", ...
    std::string verb;  // things: "brew"
    std::string topic;
    bool plural = false;
};

const std::map<std::string, std::vector<std::string>> k_next = {
    {"moment", {"act", "feel", "thing"}},
    {"act", {"act", "feel", "thing"}},
    {"feel", {"act", "thing"}},
    {"thing", {"act", "feel"}}};

const char* pool_name(const std::string& kind) {
    return kind == "moment" ? "moments" : kind == "act" ? "acts" : kind == "feel" ? "feelings" : "things";
}

// The person's pronoun: from the lexicon's people, else none (the name is repeated instead).
std::optional<Pronoun> person_pronoun(const std::string& name) {
    for (const auto& person : lexicon()["long_hop"]["people"])
        if (str(person, "name") == name)
            return pronoun_of(str(person, "pronoun"));
    return std::nullopt;
}

Anchor anchor_of(const std::string& kind, const json& a, const std::string& his, const std::string& self) {
    return Anchor{kind, fill(str(a, "text"), {{"pos", his}, {"self", self}}, false), str(a, "prep"), str(a, "verb"),
                  str(a, "topic"), a.value("plural", false)};
}

// The reservations behind reserved_chain: feelings (each short one also with every degree of
// feeling_modifiers: "a bit drowsy") and the other anchors a chain passes through (things and
// acts), each in a fixed shuffled order, one to four words, no text twice.
struct Reservations {
    std::vector<std::pair<const json*, std::string>> feelings;  // pool entry, degree ("" none)
    std::vector<std::pair<const json*, std::string>> others;    // pool entry, kind ("thing" or "act")
};

const Reservations& reservations() {
    static const Reservations k_reservations = [] {
        const json& lex = lexicon()["long_hop"];
        Reservations r;
        std::set<std::string> seen;
        auto short_enough = [](const json& a) { return text::words(str(a, "text")).size() <= 4; };
        std::vector<const json*> feelings;
        for (const auto& a : lex["anchors"]["feelings"])
            if (short_enough(a))
                feelings.push_back(&a);
        Draw(hash64("reserved feelings", 42)).shuffle(feelings);
        std::vector<std::string> degrees = {""};
        for (const auto& m : lex.value("feeling_modifiers", json::array()))
            degrees.push_back(m.get<std::string>());
        for (const auto& degree : degrees)
            for (const json* a : feelings) {
                if (!degree.empty() && text::words(str(*a, "text")).size() != 1)
                    continue;
                if (seen.insert(norm(degree + " " + str(*a, "text"))).second)
                    r.feelings.emplace_back(a, degree);
            }
        for (const char* kind : {"thing", "act"})
            for (const auto& a : lex["anchors"][kind == std::string("thing") ? "things" : "acts"])
                if (short_enough(a) && seen.insert(norm(str(a, "text"))).second)
                    r.others.emplace_back(&a, kind);
        Draw(hash64("reserved others", 42)).shuffle(r.others);
        return r;
    }();
    return k_reservations;
}

// The anchors reserved for `ticket` (the row, counted from 0): feelings 3t, 3t+1 and 3t+2 of the
// feeling reservations and things or acts 2t and 2t+1 of the others, alternating (a feeling
// never follows a feeling), so no two tickets below the smaller capacity share an anchor:
// K=1 feel > other > feel, K=2 other > feel > other > feel, K=3 feel > other > feel > other >
// feel. nullopt when an anchor is not `admissible` (or a {pos} anchor has no pronoun to take).
std::optional<std::vector<Anchor>> reserved_chain(std::size_t ticket, std::size_t hops, bool no_pronoun,
                                                  const std::string& his, const std::string& self,
                                                  const std::function<bool(const Anchor&, const std::vector<Anchor>&)>& admissible) {
    const Reservations& r = reservations();
    if (r.feelings.size() < 3 || r.others.size() < 2)
        return std::nullopt;
    const std::vector<std::string> pattern = hops == 1   ? std::vector<std::string>{"feel", "other", "feel"}
                                             : hops == 2 ? std::vector<std::string>{"other", "feel", "other", "feel"}
                                                         : std::vector<std::string>{"feel", "other", "feel", "other", "feel"};
    std::size_t f = 0, o = 0;
    std::vector<Anchor> out;
    for (const auto& slot : pattern) {
        Anchor a;
        if (slot == "feel") {
            const auto& [entry, degree] = r.feelings[(3 * ticket + f++) % r.feelings.size()];
            a = anchor_of("feel", *entry, his, self);
            if (!degree.empty())
                a.text = degree + " " + a.text;
        } else {
            const auto& [entry, kind] = r.others[(2 * ticket + o++) % r.others.size()];
            if (no_pronoun && str(*entry, "text").find('{') != std::string::npos)
                return std::nullopt;
            a = anchor_of(kind, *entry, his, self);
        }
        if (!admissible(a, out))
            return std::nullopt;
        out.push_back(std::move(a));
    }
    return out;
}

std::optional<json> write_long_hop(Draw& draw, const json& plan, bool last_resort) {
    const json& lex = lexicon()["long_hop"];
    const auto hops = static_cast<std::size_t>(std::clamp<std::int64_t>(integer(plan, "hop_count", 1), 1, 8));
    const bool named = str(plan, "voice") == "named";
    const std::string person = str(plan, "name", named ? "Sam" : "");
    const auto known = named ? person_pronoun(person) : std::nullopt;
    const std::string he = named ? (known ? known->subj : person) : "I";
    const std::string his = named ? (known ? known->pos : person + "'s") : "my";
    const std::string him = named ? (known ? known->obj : person) : "me";
    const std::string self = named ? (known ? known->refl : person) : "myself";

    // Heads and terminals of chains accepted before: none is reused.
    std::set<std::string> used;
    if (plan.contains("previous") && plan["previous"].is_array())
        for (const auto& prev : plan["previous"])
            if (prev.is_string()) {
                const std::string s = prev.get<std::string>();
                const auto arrow = s.find("->");
                used.insert(norm(s.substr(0, arrow)));
                if (arrow != std::string::npos)
                    used.insert(norm(s.substr(arrow + 2)));
            }
    const auto row = static_cast<std::size_t>(std::max<std::int64_t>(integer(plan, "row", 1), 1) - 1);
    const std::int64_t attempt = integer(plan, "__attempt", 1);
    const std::int64_t draft_no = std::max<std::int64_t>(integer(plan, "__draft", 0), 0);
    std::vector<std::string> kinds;
    std::vector<Anchor> anchors;
    // First choice: the row's own anchors (reserved_chain), which no other row's first choice
    // shares, so chains written one by one never reuse an anchor. A retry moves the row to a
    // spare reservation further along (its own failed for a reason the row cannot see).
    if (hops <= 3 && draft_no < 100) {
        auto admissible = [&](const Anchor& a, const std::vector<Anchor>& before) {
            if (used.count(norm(a.text)) > 0 || norm(a.text) == str(plan, "__taken") || text::words(a.text).size() > 4)
                return false;
            for (const auto& other : before)
                if (has(other.text, a.text) || has(a.text, other.text))
                    return false;
            if (named && (has(a.text, person) || has(a.text, person + "'s") || has(person, a.text)))
                return false;
            return true;
        };
        // The row's reservation, else (an anchor clashes within the chain or with the person) a
        // spare one 97 rows further along, and so on.
        for (std::size_t spare = static_cast<std::size_t>(attempt - 1); spare < static_cast<std::size_t>(attempt + 7) && anchors.empty(); ++spare)
            if (auto reserved = reserved_chain(row + 97 * spare, hops, named && !known, his, self, admissible)) {
                anchors = std::move(*reserved);
                for (const auto& a : anchors)
                    kinds.push_back(a.kind);
            }
    }
    if (anchors.empty()) {
    // Kinds: any head, then links the templates cover, ending on an act or a feeling.
    kinds = {std::vector<std::string>{"moment", "act", "feel", "thing"}[draw.below(4)]};
    for (std::size_t i = 1; i < hops + 2; ++i) {
        std::vector<std::string> options = k_next.at(kinds.back());
        if (i == hops + 1)
            options.erase(std::remove(options.begin(), options.end(), "thing"), options.end());
        // Feelings take degrees ("a bit drowsy"), so they go round furthest: a feeling where one
        // fits, two times in three; otherwise acts last, so no pool runs dry.
        if (std::find(options.begin(), options.end(), "feel") != options.end() && draw.below(3) != 0) {
            kinds.push_back("feel");
            continue;
        }
        if (options.size() > 1 && draw.below(3) != 0)
            options.erase(std::remove(options.begin(), options.end(), "act"), options.end());
        kinds.push_back(draw.pick(options));
    }
    // Anchors: distinct, none inside another, none used before. memfail keeps every anchor to one
    // chain, so chains take them from disjoint stretches of a fixed shuffle of each pool: the row
    // picks the stretch (acts, the most used kind, get two places a row), the attempt and the draft
    // move along it.
    std::map<std::string, std::size_t> taken;  // anchors of each kind in this chain so far
    for (const auto& kind : kinds) {
        const json& pool = lex["anchors"][pool_name(kind)];
        static const std::map<std::string, std::vector<std::size_t>> k_orders = [] {
            std::map<std::string, std::vector<std::size_t>> orders;
            for (const char* k : {"moment", "act", "feel", "thing"}) {
                // Short phrases only (one to four words).
                const json& items = lexicon()["long_hop"]["anchors"][pool_name(k)];
                std::vector<std::size_t> order;
                for (std::size_t i = 0; i < items.size(); ++i)
                    if (text::words(str(items[i], "text")).size() <= 4)
                        order.push_back(i);
                Draw fixed(hash64(k, 42));
                fixed.shuffle(order);
                orders[k] = std::move(order);
            }
            return orders;
        }();
        const std::vector<std::size_t>& order = k_orders.at(kind);
        const std::size_t size = order.size();
        if (size == 0)
            return std::nullopt;
        const std::size_t stride = kind == "act" ? 2 : 1;
        // A retry (some anchor was taken after all) draws at random instead: the row's own stretch
        // is what failed.
        const bool retry = integer(plan, "__attempt", 1) > 1;
        const std::size_t start =
            retry ? draw.below(size)
                  : row * stride + taken[kind]++ * 61 +
                        static_cast<std::size_t>(std::max<std::int64_t>(integer(plan, "__draft", 0), 0)) * 7;
        bool placed = false;
        // On a clash, jump far (61 is prime to every pool size) rather than into the next row's place.
        for (std::size_t step = 0; step < size && !placed; ++step) {
            const json& a = pool[order[(start + step * 61) % size]];
            // "{pos} film camera" would read "Diego's film camera": the person is no anchor.
            if (named && !known && str(a, "text").find('{') != std::string::npos)
                continue;
            Anchor anchor{kind, fill(str(a, "text"), {{"pos", his}, {"self", self}}, false), str(a, "prep"),
                          str(a, "verb"), str(a, "topic"), a.value("plural", false)};
            // A short feeling may take a degree ("a bit drowsy"): more feelings to go round.
            if (kind == "feel" && text::words(anchor.text).size() == 1 && lex.contains("feeling_modifiers") &&
                draw.below(3) != 0)
                anchor.text = draw.pick(lex["feeling_modifiers"]).get<std::string>() + " " + anchor.text;
            bool clash = used.count(norm(anchor.text)) > 0 || text::words(anchor.text).size() > 4 ||
                         norm(anchor.text) == str(plan, "__taken");
            for (const auto& other : anchors)
                clash = clash || has(other.text, anchor.text) || has(anchor.text, other.text);
            if (named)
                clash = clash || has(anchor.text, person) || has(anchor.text, person + "'s") || has(person, anchor.text);
            if (!clash) {
                anchors.push_back(anchor);
                placed = true;
            }
        }
        if (!placed)
            return std::nullopt;
    }
    }
    auto values_for = [&](const Anchor& a, const Anchor& b) {
        const std::string lead = a.prep.empty() ? a.text : a.prep + " " + a.text;
        return std::map<std::string, std::string>{
            {"a", a.text},   {"A", capital(a.text)},       {"b", b.text},     {"lead", lead},
            {"Lead", capital(lead)}, {"av", a.verb},       {"av3", third_person(a.verb)},
            {"bv", b.verb},  {"N", person},                {"he", he},        {"He", capital(he)},
            {"his", his},    {"him", him}};
    };
    json facts = json::array();
    for (std::size_t i = 0; i + 1 < anchors.size(); ++i) {
        const Anchor& a = anchors[i];
        const Anchor& b = anchors[i + 1];
        const std::string link = a.kind + ">" + b.kind;
        std::vector<std::string> templates, fallback;
        for (const auto& f : lex["facts"])
            if (str(f, "link") == link)
                for (const auto& t : f.value(named ? "named" : "first_person", json::array())) {
                    const std::string tmpl = t.get<std::string>();
                    // Without a known pronoun, prefer the templates that need none.
                    if (named && !known && (tmpl.find("{he}") != std::string::npos ||
                                            tmpl.find("{He}") != std::string::npos ||
                                            tmpl.find("{his}") != std::string::npos ||
                                            tmpl.find("{him}") != std::string::npos))
                        fallback.push_back(tmpl);
                    else
                        templates.push_back(tmpl);
                }
        if (templates.empty())
            templates = fallback;
        if (templates.empty())
            return std::nullopt;
        // The Long-Hop templates write agreement as [plural|singular] (the starting anchor) and
        // <plural|singular> (the next one).
        std::string fact = fill(draw.pick(templates), values_for(a, b), !a.plural);
        fact = text::replace_all(text::replace_all(fact, "<", "["), ">", "]");
        fact = fill(fact, {}, !b.plural);
        facts.push_back(fact);
    }
    // The question names the head and asks for the terminal.
    std::vector<std::string> qtemplates;
    for (const auto& q : lex["questions"])
        if (str(q, "head") == kinds.front() && str(q, "terminal") == kinds.back() &&
            str(q, "voice") == (named ? "named" : "first_person"))
            qtemplates = strings(q["templates"]);
    if (qtemplates.empty())
        return std::nullopt;
    const std::string question =
        fill(draw.pick(qtemplates), values_for(anchors.front(), anchors.back()), !anchors.front().plural);
    json anchor_texts = json::array();
    for (const auto& a : anchors)
        anchor_texts.push_back(a.text);
    if (!last_resort) {
        for (std::size_t i = 0; i < facts.size(); ++i) {
            const std::string f = facts[i].get<std::string>();
            if (!complete(f))
                return std::nullopt;
            for (std::size_t j = 0; j < anchors.size(); ++j)
                if (has(f, anchors[j].text) != (j == i || j == i + 1))
                    return std::nullopt;
            if (named && !has(f, person))
                return std::nullopt;
            if (!named) {
                const auto w = text::words(f);
                if (std::none_of(w.begin(), w.end(), [](const std::string& x) { return x == "i" || x == "me" || x == "my"; }))
                    return std::nullopt;
            }
        }
        if (!complete(question) || !has(question, anchors.front().text) || has(question, anchors.back().text))
            return std::nullopt;
        for (std::size_t j = 1; j + 1 < anchors.size(); ++j)
            if (has(question, anchors[j].text))
                return std::nullopt;
        const std::string pair = norm(anchors.front().text) + " -> " + norm(anchors.back().text);
        if (plan.contains("previous") && plan["previous"].is_array())
            for (const auto& prev : plan["previous"])
                if (prev.is_string()) {
                    const std::string s = prev.get<std::string>();
                    const auto arrow = s.find("->");
                    if (arrow != std::string::npos &&
                        norm(s.substr(0, arrow)) + " -> " + norm(s.substr(arrow + 2)) == pair)
                        return std::nullopt;
                }
    }
    return json{{"anchors", anchor_texts},
                {"facts", facts},
                {"graded_question", question},
                {"ground_truth_answer", anchors.back().text}};
}

std::optional<json> write_distractors(Draw& draw, const json& plan, bool last_resort) {
    const json& lex = lexicon()["long_hop"];
    const std::string answer = str(plan, "answer");
    std::vector<std::string> avoid = {answer};
    for (const char* key : {"anchors"})
        for (const auto& a : strings(plan.value(key, json::array())))
            avoid.push_back(a);
    const std::vector<std::string> facts = strings(plan.value("facts", json::array()));
    // The answer's kind: a feeling or an act, by the pools (else by length).
    auto in_pool = [&](const char* pool) {
        for (const auto& a : lex["anchors"][pool])
            if (norm(str(a, "text")) == norm(answer))
                return true;
        for (const auto& a : lex["distractors"][std::string(pool) == "acts" ? "acts" : "feelings"])
            if (norm(str(a, "text")) == norm(answer))
                return true;
        return false;
    };
    const bool feeling = in_pool("feelings") || (!in_pool("acts") && text::words(answer).size() < 2);
    std::vector<std::string> pool;
    for (const auto& d : lex["distractors"][feeling ? "feelings" : "acts"])
        pool.push_back(str(d, "text"));
    for (const auto& d : lex["anchors"][feeling ? "feelings" : "acts"])
        pool.push_back(str(d, "text"));
    draw.shuffle(pool);
    // Plain substrings of the normalised texts: stricter than word boundaries.
    auto overlaps = [](const std::string& x, const std::string& y) {
        const std::string a = norm(x), b = norm(y);
        return a.find(b) != std::string::npos || b.find(a) != std::string::npos;
    };
    json chosen = json::array();
    std::vector<std::string> picked;
    for (const auto& d : pool) {
        if (picked.size() == 4)
            break;
        if (d.find('{') != std::string::npos || norm(d).empty())
            continue;
        bool bad = false;
        for (const auto& a : avoid)
            bad = bad || overlaps(d, a);
        for (const auto& p : picked)
            bad = bad || overlaps(d, p);
        for (const auto& f : facts)
            bad = bad || has(f, d);
        if (!bad) {
            picked.push_back(d);
            chosen.push_back(d);
        }
    }
    if (picked.size() != 4 && !last_resort)
        return std::nullopt;
    return json{{"distractors", chosen}};
}

// ---------------------------------------------------------------------------------------------
// Long-Hop's cross-chain audit: two chains interfere when they hold the same fact (normalised) or
// the same run of three content words (a distinctive phrase, not a relation such as "whenever I feel"); of each pair the chain not fixed
// (the later one when both are new) is dropped, its reason naming the other.

std::set<std::string> content_runs(const json& facts) {
    std::set<std::string> out;
    for (const auto& f : facts) {
        const auto w = text::words(f.get<std::string>());
        for (std::size_t i = 0; i + 3 <= w.size(); ++i) {
            int content = 0;
            for (std::size_t k = i; k < i + 3; ++k)
                content += !text::is_stopword(w[k]);
            if (content == 3)
                out.insert(w[i] + " " + w[i + 1] + " " + w[i + 2]);
        }
    }
    return out;
}

std::optional<json> write_audit(Draw&, const json& plan, bool) {
    const json& chains = plan.at("chains");
    std::vector<std::set<std::string>> facts(chains.size()), runs(chains.size());
    for (std::size_t i = 0; i < chains.size(); ++i) {
        for (const auto& f : chains[i].at("facts"))
            facts[i].insert(norm(f.get<std::string>()));
        runs[i] = content_runs(chains[i].at("facts"));
    }
    std::set<std::size_t> dropped;
    json to_drop = json::array();
    for (std::size_t j = 0; j < chains.size(); ++j)
        for (std::size_t i = 0; i < j && !dropped.count(j); ++i) {
            if (dropped.count(i))
                continue;
            std::string shared;
            for (const auto& f : facts[j])
                if (facts[i].count(f))
                    shared = "the fact '" + f + "'";
            for (const auto& r : runs[j])
                if (shared.empty() && runs[i].count(r))
                    shared = "the phrase '" + r + "'";
            if (shared.empty())
                continue;
            const bool j_fixed = chains[j].value("fixed", false), i_fixed = chains[i].value("fixed", false);
            if (j_fixed && i_fixed)
                continue;
            const std::size_t drop = j_fixed ? i : j, other = drop == j ? i : j;
            dropped.insert(drop);
            to_drop.push_back({{"id", chains[drop].at("id")},
                               {"reason", "shares " + shared + " with " + chains[other].at("id").get<std::string>()}});
        }
    return json{{"to_drop", to_drop}};
}

}  // namespace

bool is_generative_schema(std::string_view schema_name) {
    return schema_name == "memfail_gen_conditional_easy" || schema_name == "memfail_gen_conditional_hard" ||
           schema_name == "memfail_gen_coexisting" || schema_name == "memfail_gen_persona" ||
           schema_name == "memfail_gen_long_hop" || schema_name == "memfail_gen_long_hop_distractors" ||
           schema_name == "memfail_gen_long_hop_audit";
}

std::optional<nlohmann::json> generative_reply(std::string_view schema_name, const nlohmann::json& messages) {
    if (!is_generative_schema(schema_name))
        return std::nullopt;
    const auto plan = read_plan(messages);
    if (!plan)
        return std::nullopt;
    using Writer = std::optional<json> (*)(Draw&, const json&, bool);
    Writer writer = nullptr;
    if (schema_name == "memfail_gen_conditional_easy")
        writer = write_conditional_easy;
    else if (schema_name == "memfail_gen_conditional_hard")
        writer = write_conditional_hard;
    else if (schema_name == "memfail_gen_coexisting")
        writer = write_coexisting;
    else if (schema_name == "memfail_gen_persona")
        writer = write_persona;
    else if (schema_name == "memfail_gen_long_hop")
        writer = write_long_hop;
    else if (schema_name == "memfail_gen_long_hop_audit")
        writer = write_audit;
    else
        writer = write_distractors;
    return first_valid(*plan, schema_name,
                       [&](Draw& draw, const json& seen, bool last) { return writer(draw, seen, last); });
}

}  // namespace memfail::fake_llm

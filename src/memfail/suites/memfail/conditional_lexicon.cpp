// SPDX-License-Identifier: MIT
// The Conditional-Facts lexicon: the condition-type tables, the connective check and the template
// renderer, and the loader of lexicon/conditional.json (embedded at build time). The Reader keeps the
// first problem with its JSON path, so each part of the file is read by a short function mirroring it.
#include <memfail/embedded/conditional_lexicon.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/lexicon_reader.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace memfail::suites::memfail_suite::conditional {

const std::vector<std::string>& condition_types() {
    static const std::vector<std::string> k_types = {
        "time_of_day",    "day_of_week",      "season",         "time_elapsed",
        "weather",        "temperature",      "location",       "noise_level",
        "lighting",       "hunger_level",     "energy_level",   "pain_or_discomfort",
        "sobriety",       "mood",             "stress_level",   "anxiety_level",
        "motivation_level", "company",        "social_setting", "relationship_closeness",
        "task_type",      "workload",         "completion_state", "music_playing",
        "scent",          "food_or_drink_present", "conflict_state", "approval_received",
        "request_made",   "prior_activity",   "frequency_cap",  "streak_state"};
    return k_types;
}

const std::vector<std::string>& observable_condition_types() {
    static const std::vector<std::string> k_types = {
        "time_of_day", "weather",   "temperature",           "location",       "noise_level",
        "lighting",    "food_or_drink_present", "prior_activity", "company"};
    return k_types;
}

bool is_condition_type(std::string_view type) {
    const auto& all = condition_types();
    return std::find(all.begin(), all.end(), type) != all.end();
}

bool is_observable_condition_type(std::string_view type) {
    const auto& all = observable_condition_types();
    return std::find(all.begin(), all.end(), type) != all.end();
}

const std::vector<std::string>& forbidden_connectives() {
    static const std::vector<std::string> k_connectives = {
        "only when", "unless", "except when", "but only if", "whenever", "if", "only after", "only if"};
    return k_connectives;
}

std::string find_forbidden_connective(std::string_view text) {
    const std::string normalized = text::normalize(text);
    for (const auto& c : forbidden_connectives()) {
        for (std::size_t pos = normalized.find(c); pos != std::string::npos; pos = normalized.find(c, pos + 1)) {
            const std::size_t end = pos + c.size();
            if ((pos > 0 && normalized[pos - 1] != ' ') || (end < normalized.size() && normalized[end] != ' '))
                continue;  // part of a longer word
            // "as if" and "even if" state no condition.
            if (c == "if") {
                const std::string_view before = std::string_view(normalized).substr(0, pos);
                if (text::ends_with(before, " as ") || before == "as " || text::ends_with(before, " even ") ||
                    before == "even ")
                    continue;
            }
            return c;
        }
    }
    return {};
}

Pronouns pronouns_for(char gender) {
    if (gender == 'm') return {"he", "him", "his", "himself", false};
    if (gender == 'f') return {"she", "her", "her", "herself", false};
    return {"they", "them", "their", "themselves", true};
}

std::string render(std::string_view tmpl, const std::string& name, const Pronouns& p) {
    return text::capitalize(render_fragment(tmpl, name, p));
}

std::string render_fragment(std::string_view tmpl, const std::string& name, const Pronouns& p) {
    std::string out;
    out.reserve(tmpl.size() + 32);
    for (std::size_t i = 0; i < tmpl.size(); ++i) {
        const char c = tmpl[i];
        if (c == '{') {
            const std::size_t close = tmpl.find('}', i);
            if (close == std::string_view::npos) {
                out += c;
                continue;
            }
            const std::string_view token = tmpl.substr(i + 1, close - i - 1);
            if (token == "Name") out += name;
            else if (token == "Name's") out += name + "'s";
            else if (token == "subj") out += p.subj;
            else if (token == "Subj") out += text::capitalize(p.subj);
            else if (token == "obj") out += p.obj;
            else if (token == "pos") out += p.pos;
            else if (token == "Pos") out += text::capitalize(p.pos);
            else if (token == "refl") out += p.refl;
            else out.append(tmpl.substr(i, close - i + 1));  // not ours: leave for the caller
            i = close;
        } else if (c == '[') {
            const std::size_t bar = tmpl.find('|', i);
            const std::size_t close = tmpl.find(']', i);
            if (bar == std::string_view::npos || close == std::string_view::npos || bar > close) {
                out += c;
                continue;
            }
            out.append(p.plural ? tmpl.substr(bar + 1, close - bar - 1) : tmpl.substr(i + 1, bar - i - 1));
            i = close;
        } else {
            out += c;
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Loading conditional.json.

namespace {

using nlohmann::json;
using Reader = suites::LexiconReader;

std::string at(const std::string& path, const char* key, std::size_t i) {
    return path + "." + key + "[" + std::to_string(i) + "]";
}

std::uint32_t read_fit(Reader& r, const json& obj, const std::string& path) {
    static const std::vector<std::pair<std::string, std::uint32_t>> k_bits = {
        {"person", fit_person}, {"character", fit_character}, {"cat", fit_cat},       {"dog", fit_dog},
        {"parrot", fit_parrot}, {"rabbit", fit_rabbit},       {"ferret", fit_ferret}};
    std::uint32_t fit = 0;
    const std::vector<std::string> names = r.strings(obj, "fit", path);
    for (std::size_t i = 0; i < names.size(); ++i) {
        bool known = false;
        for (const auto& [name, bit] : k_bits)
            if (names[i] == name) {
                fit |= bit;
                known = true;
            }
        if (!known)
            r.fail(at(path, "fit", i), "'" + names[i] + "' is not person, character, cat, dog, parrot, rabbit or ferret");
    }
    return fit;
}

std::vector<NameEntry> read_names(Reader& r, const json& names, const char* key, const std::string& path) {
    std::vector<NameEntry> out;
    const json& list = r.array(names, key, path);
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = at(path, key, i);
        NameEntry n;
        n.name = r.str(list[i], "name", p);
        const std::string g = r.str(list[i], "gender", p);
        if (g != "m" && g != "f" && g != "n") r.fail(p + ".gender", "must be \"m\", \"f\" or \"n\"");
        n.gender = g.empty() ? 'n' : g[0];
        out.push_back(std::move(n));
    }
    return out;
}

ByCategory read_by_category(Reader& r, const json& obj, const char* key, const std::string& path) {
    const json& j = r.member(obj, key, path);
    const std::string p = path + "." + key;
    return {r.strings(j, "person", p), r.strings(j, "character", p), r.strings(j, "pet", p)};
}

Families read_families(Reader& r, const json& obj, const char* key, const std::string& path,
                       const std::vector<std::string>& required_tokens) {
    Families out;
    const json& j = r.member(obj, key, path);
    const std::string p = path + "." + key;
    if (!j.is_object()) {
        if (!j.is_null()) r.fail(p, "must be an object of paraphrase families");
        return out;
    }
    for (const auto& [name, list] : j.items()) {
        if (name == "about") continue;
        std::vector<std::string> templates = r.strings(j, name.c_str(), p);
        for (std::size_t i = 0; i < templates.size(); ++i) {
            bool any = required_tokens.empty();
            for (const auto& t : required_tokens) any = any || templates[i].find(t) != std::string::npos;
            if (!any) r.fail(at(p, name.c_str(), i), "must hold one of the rule tokens it paraphrases");
            if (!find_forbidden_connective(templates[i]).empty() && key != std::string("easy"))
                r.fail(at(p, name.c_str(), i), "holds a conditional connective");
        }
        out.emplace_back(name, std::move(templates));
    }
    if (out.size() < 2) r.fail(p, "needs at least two paraphrase families");
    return out;
}

BehaviourEntry read_behaviour(Reader& r, const json& j, const std::string& path) {
    BehaviourEntry b;
    b.fit = read_fit(r, j, path);
    const std::string place = r.str(j, "place", path);
    if (place == "anywhere") b.place = Place::anywhere;
    else if (place == "home") b.place = Place::home;
    else if (place == "yard") b.place = Place::yard;
    else r.fail(path + ".place", "must be anywhere, home or yard");
    b.kind = r.str(j, "kind", path);
    b.verb_s = r.str(j, "verb_s", path);
    b.verb = r.str(j, "verb", path);
    b.verb_ing = r.str(j, "verb_ing", path);
    b.rest = r.str(j, "rest", path);
    b.ask = r.str(j, "ask", path);
    b.loose = r.str(j, "loose", path);
    b.key = r.str(j, "key", path, false);
    b.habit = r.str(j, "habit", path);
    b.avoid_type = r.str(j, "avoid_type", path, false);
    if (!b.key.empty() && !text::contains_phrase(b.rest, b.key)) r.fail(path + ".key", "must be a phrase of the rest");
    if (!b.avoid_type.empty() && !is_condition_type(b.avoid_type))
        r.fail(path + ".avoid_type", "'" + b.avoid_type + "' is not one of the 32 condition types");
    // The question's wording must not give the essay's key phrase back.
    const std::string key = b.key.empty() ? b.rest : b.key;
    if (text::normalized_contains(text::normalize(b.ask), text::normalize(key)))
        r.fail(path + ".ask", "repeats the behaviour's key phrase; it should say it in other words");
    // A loose restatement keeps some of the behaviour's words but not its wording.
    const std::string base = text::normalize(b.verb + " " + b.rest);
    if (text::normalize(b.loose) == base || text::normalize(b.loose) == text::normalize(b.ask))
        r.fail(path + ".loose", "must differ from both the behaviour and 'ask'");
    return b;
}

ConditionEntry read_condition(Reader& r, const json& j, const std::string& path) {
    ConditionEntry c;
    c.type = r.str(j, "type", path);
    if (!c.type.empty() && !is_condition_type(c.type))
        r.fail(path + ".type", "'" + c.type + "' is not one of the 32 condition types");
    c.fit = read_fit(r, j, path);
    const std::vector<std::string> flags = r.strings(j, "flags", path, false);
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (flags[i] == "away") c.flags |= cond_needs_portable;
        else if (flags[i] == "context_after") c.flags |= cond_context_after;
        else if (flags[i] == "indoors") c.flags |= cond_indoors;
        else r.fail(at(path, "flags", i), "must be away, context_after or indoors");
    }
    c.clause = r.str(j, "clause", path);
    c.key = r.str(j, "key", path);
    c.yes_context = r.str(j, "yes_context", path);
    c.no_context = r.str(j, "no_context", path);
    c.sentence = r.str(j, "sentence", path);
    c.anchor = r.str(j, "anchor", path);
    c.group = r.str(j, "group", path, false);
    const std::string nkey = text::normalize(c.key);
    if (!c.key.empty() && (!text::normalized_contains(text::normalize(c.clause), nkey) ||
                           !text::normalized_contains(text::normalize(c.sentence), nkey)))
        r.fail(path + ".key", "must appear literally in the clause and the sentence");
    for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"yes_context", &c.yes_context},
                                       {"no_context", &c.no_context}, {"anchor", &c.anchor}})
        if (!c.key.empty() && text::normalized_contains(text::normalize(*value), text::normalize(c.key)))
            r.fail(path + "." + field, "repeats the condition's key phrase, which would give the answer away");
    if (!find_forbidden_connective(c.sentence).empty()) r.fail(path + ".sentence", "holds a conditional connective");
    return c;
}

FillerEntry read_filler(Reader& r, const json& j, const std::string& path) {
    FillerEntry f;
    f.fit = read_fit(r, j, path);
    f.text = r.str(j, "text", path);
    f.avoid_type = r.str(j, "avoid_type", path, false);
    f.group = r.str(j, "group", path, false);
    if (!find_forbidden_connective(f.text).empty()) r.fail(path + ".text", "a filler is unconditional");
    return f;
}

}  // namespace

Result<Lexicon> parse_lexicon(const std::string& file, const std::string& content) {
    Reader r(file);
    json doc = json::parse(content, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return make_error(ErrorKind::invalid_input, "is not a JSON object", file);
    Lexicon lex;
    const json& names = r.member(doc, "names", "$");
    lex.person_names = read_names(r, names, "person", "$.names");
    lex.character_names = read_names(r, names, "character", "$.names");
    lex.pet_names = read_names(r, names, "pet", "$.names");

    const json& kinds = r.array(doc, "pet_kinds", "$");
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        const std::string p = at("$", "pet_kinds", i);
        PetKind k;
        k.breed = r.str(kinds[i], "breed", p);
        k.species = r.str(kinds[i], "species", p);
        static const std::vector<std::pair<std::string, std::uint32_t>> k_species = {
            {"cat", fit_cat}, {"dog", fit_dog}, {"parrot", fit_parrot}, {"rabbit", fit_rabbit}, {"ferret", fit_ferret}};
        for (const auto& [name, bit] : k_species)
            if (k.species == name) k.fit = bit;
        if (k.fit == 0) r.fail(p + ".species", "must be cat, dog, parrot, rabbit or ferret");
        lex.pet_kinds.push_back(std::move(k));
    }
    const json& professions = r.array(doc, "professions", "$");
    for (std::size_t i = 0; i < professions.size(); ++i) {
        const std::string p = at("$", "professions", i);
        lex.professions.push_back({r.str(professions[i], "profession", p), r.str(professions[i], "role", p),
                                   r.str(professions[i], "place", p)});
    }
    lex.towns = r.strings(doc, "towns", "$");
    const json& roles = r.array(doc, "character_roles", "$");
    for (std::size_t i = 0; i < roles.size(); ++i) {
        const std::string p = at("$", "character_roles", i);
        lex.character_roles.push_back({r.str(roles[i], "title", p), r.str(roles[i], "role", p)});
    }
    lex.realms = r.strings(doc, "realms", "$");
    const json& households = r.array(doc, "households", "$");
    for (std::size_t i = 0; i < households.size(); ++i) {
        const std::string p = at("$", "households", i);
        lex.households.push_back({r.str(households[i], "household", p), r.str(households[i], "home", p)});
    }
    lex.intros = read_by_category(r, doc, "intros", "$");
    for (const auto* list : {&lex.intros.person, &lex.intros.character, &lex.intros.pet})
        for (const auto& s : *list)
            if (s.find("{Name}") == std::string::npos) r.fail("$.intros", "every intro names the entity as {Name}: '" + s + "'");

    const json& compat = r.member(doc, "compatibility", "$");
    if (!compat.is_object()) r.fail("$.compatibility", "must map behaviour kinds to lists of condition types");
    for (auto it = compat.is_object() ? compat.begin() : json::const_iterator(); compat.is_object() && it != compat.end(); ++it) {
        if (it.key() == "about") continue;
        const std::string p = "$.compatibility." + it.key();
        const std::vector<std::string> types = r.strings(compat, it.key().c_str(), "$.compatibility");
        for (std::size_t i = 0; i < types.size(); ++i)
            if (!is_condition_type(types[i])) r.fail(p + "[" + std::to_string(i) + "]", "'" + types[i] + "' is not one of the 32 condition types");
        lex.compatibility[it.key()] = std::set<std::string>(types.begin(), types.end());
    }
    const json& behaviours = r.array(doc, "behaviours", "$");
    for (std::size_t i = 0; i < behaviours.size(); ++i) {
        const std::string p = at("$", "behaviours", i);
        lex.behaviours.push_back(read_behaviour(r, behaviours[i], p));
        if (!lex.behaviours.back().kind.empty() && !lex.compatibility.count(lex.behaviours.back().kind))
            r.fail(p + ".kind", "'" + lex.behaviours.back().kind + "' has no row in $.compatibility");
    }
    const json& conditions = r.array(doc, "conditions", "$");
    for (std::size_t i = 0; i < conditions.size(); ++i)
        lex.conditions.push_back(read_condition(r, conditions[i], at("$", "conditions", i)));
    // A group is within one type, has at least two members, and no member's yes_context names
    // another member's key (the context would state the condition it is asked against).
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < lex.conditions.size(); ++i)
        if (!lex.conditions[i].group.empty()) groups[lex.conditions[i].type + "/" + lex.conditions[i].group].push_back(i);
    for (const auto& [name, members] : groups) {
        if (members.size() < 2)
            r.fail(at("$", "conditions", members.front()) + ".group", "'" + name + "' has no other member");
        for (const auto a : members)
            for (const auto b : members)
                if (a != b && text::normalized_contains(text::normalize(lex.conditions[a].yes_context),
                                                        text::normalize(lex.conditions[b].key)))
                    r.fail(at("$", "conditions", a) + ".yes_context",
                           "names the key of '" + lex.conditions[b].key + "', a member of its group");
    }

    const json& fillers = r.member(doc, "fillers", "$");
    lex.setting_fillers = read_by_category(r, fillers, "setting", "$.fillers");
    const json& background = r.array(fillers, "background", "$.fillers");
    for (std::size_t i = 0; i < background.size(); ++i)
        lex.background.push_back(read_filler(r, background[i], at("$.fillers", "background", i)));

    const json& families = r.member(doc, "rule_families", "$");
    lex.easy_rules = read_families(r, families, "easy", "$.rule_families", {"{vp", "{base}", "{ing}"});
    const json& hb = r.member(families, "hard_behaviour", "$.rule_families");
    lex.hard_behaviour_person = read_families(r, hb, "person", "$.rule_families.hard_behaviour", {"{vp}", "{ing}"});
    lex.hard_behaviour_character = read_families(r, hb, "character", "$.rule_families.hard_behaviour", {"{vp}", "{ing}"});
    lex.hard_behaviour_pet = read_families(r, hb, "pet", "$.rule_families.hard_behaviour", {"{vp}", "{ing}"});
    lex.hard_link = read_families(r, families, "hard_link", "$.rule_families", {"{anchor}"});
    for (const auto& [name, templates] : lex.easy_rules)
        for (std::size_t i = 0; i < templates.size(); ++i)
            if (templates[i].find("{clause}") == std::string::npos)
                r.fail(at("$.rule_families.easy", name.c_str(), i), "states the whole rule: it needs {clause}");

    const json& questions = r.member(doc, "questions", "$");
    lex.questions_before = r.strings(questions, "before", "$.questions");
    lex.questions_after = r.strings(questions, "after", "$.questions");
    lex.answers_yes = r.strings(questions, "yes", "$.questions");
    lex.answers_no = r.strings(questions, "no", "$.questions");
    for (const auto* list : {&lex.questions_before, &lex.questions_after})
        for (const auto& q : *list)
            if (q.find("{do}") == std::string::npos || q.find("{ctx}") == std::string::npos)
                r.fail("$.questions", "every question holds {ctx} and {do}: '" + q + "'");
    for (const auto* list : {&lex.answers_yes, &lex.answers_no})
        for (const auto& a : *list)
            if (a.find("{stated}") == std::string::npos) r.fail("$.questions", "every answer holds {stated}: '" + a + "'");
    if (r.error()) return *r.error();
    return lex;
}

std::string_view embedded_lexicon_text() {
    const auto* f = embedded::conditional_lexicon::find("conditional.json");
    MF_ASSERT(f, "conditional.json is embedded in memfail_suites");
    return f->content;
}

const Lexicon& lexicon() {
    static const Lexicon k_lexicon = [] {
        Result<Lexicon> parsed = parse_lexicon("conditional.json", std::string(embedded_lexicon_text()));
        if (!parsed) {
            const std::string why = "the Conditional lexicon is invalid: " + parsed.error().describe();
            assert_fail("conditional lexicon", why.c_str(), __FILE__, __LINE__);
        }
        return std::move(parsed).value();
    }();
    return k_lexicon;
}

}  // namespace memfail::suites::memfail_suite::conditional

// SPDX-License-Identifier: MIT
// Conditional-Facts Easy and Hard generators: 100 rules "entity does behaviour only under
// condition", shared by both variants, wrapped in a short narrative about the entity (its role,
// place and habit; pronouns after the intro) that states the rule in one sentence (Easy) or
// spreads it over three non-adjacent sentences with no conditional connective (Hard). The words
// come from lexicon/conditional.json; ConditionalSettings sets the difficulty.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/dedup.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/generators.hpp>

#include <algorithm>
#include <array>
#include <set>

namespace memfail::suites::memfail_suite {

namespace {

using namespace conditional;

constexpr std::size_t k_rows = 100;
constexpr double k_dedup_threshold = 0.8;  // the paper's Jaccard threshold for this task
constexpr int k_max_essay_attempts = 64;

enum class Category { person, character, pet };

const char* category_name(Category c) {
    switch (c) {
        case Category::person: return "person";
        case Category::character: return "character";
        case Category::pet: return "pet";
    }
    return "person";
}

// How a question words the behaviour: as the essay does, loosely restated, or in other words.
enum class Wording { essay, loose, paraphrase };

const char* wording_name(Wording w) {
    return w == Wording::essay ? "essay" : w == Wording::loose ? "loose" : "paraphrase";
}

// Everything Easy and Hard share for one row: the entity, its rule and the graded question.
struct RowSpec {
    Category category = Category::person;
    std::uint32_t fit = fit_person;  // category bit, or the species bit for a pet
    std::string name;
    Pronouns pronouns;
    std::string species;               // pets only
    std::string breed;                 // pets only
    std::string profile_a, profile_b;  // occupation+town, role+realm, or household
    std::string role;                  // "the porter", "the old captain", "the cat"
    std::string place;                 // workplace, realm or home
    std::string town;                  // town, realm or household
    int age = 0;
    // How the question words the behaviour, per variant ([0] Easy, [1] Hard).
    std::array<Wording, 2> wording{};
    const BehaviourEntry* behaviour = nullptr;
    const ConditionEntry* condition = nullptr;
    bool condition_met = false;
    // Rendered pieces.
    std::string vp_name, vp, base, ing, ask, loose, behaviour_key, habit;
    std::string clause, condition_key, anchor, context, answer, rule;
    const ConditionEntry* context_of = nullptr;  // the condition whose yes_context the question uses
    std::array<std::string, 2> question;  // [0] Easy, [1] Hard: the same but for the behaviour's wording
};

std::string replace_token(std::string s, std::string_view token, const std::string& value) {
    return text::replace_all(std::move(s), token, value);
}

bool mentions(const std::string& haystack, std::string_view phrase) {
    return text::contains_phrase(haystack, phrase);
}

// The behaviour's rendered rest for this entity, and the key phrase that must survive.
std::string behaviour_rest(const BehaviourEntry& b, const RowSpec& row) {
    return render_fragment(b.rest, row.name, row.pronouns);
}

std::string behaviour_key(const BehaviourEntry& b, const RowSpec& row) {
    return b.key.empty() ? behaviour_rest(b, row) : std::string(b.key);
}

// A behaviour and a condition may share a row when the behaviour can happen where the condition
// puts the entity and neither text gives away the other's key phrase. The texts depend on the
// pronouns only (names never hold key phrases), so the whole table is computed once, for the
// three pronoun sets, from pre-normalised texts.
class Compatibility {
public:
    static const Compatibility& instance() {
        static const Compatibility k_table;
        return k_table;
    }

    bool operator()(std::size_t bi, std::size_t ci, const RowSpec& row) const {
        const BehaviourEntry& b = lexicon().behaviours[bi];
        const ConditionEntry& c = lexicon().conditions[ci];
        if (!(b.fit & row.fit) || !(c.fit & row.fit)) return false;
        const std::size_t g = row.pronouns.plural ? 2 : (row.pronouns.subj == "he" ? 0 : 1);
        return m_cells[(bi * lexicon().conditions.size() + ci) * 3 + g] != 0;
    }

private:
    Compatibility() {
        const Lexicon& lex = lexicon();
        const auto& bs = lex.behaviours;
        const auto& cs = lex.conditions;
        m_cells.assign(bs.size() * cs.size() * 3, 0);
        const std::string name = "Someone";
        const char genders[3] = {'m', 'f', 'n'};
        for (std::size_t g = 0; g < 3; ++g) {
            const Pronouns p = pronouns_for(genders[g]);
            std::vector<std::string> rests, keys, clauses, contexts, condition_keys;
            for (const auto& b : bs) {
                rests.push_back(text::normalize(render_fragment(b.rest, name, p)));
                keys.push_back(b.key.empty() ? rests.back() : text::normalize(b.key));
                // The question's wording of the behaviour must not name the condition either.
                rests.back() += " " + text::normalize(render_fragment(b.ask, name, p));
            }
            for (const auto& c : cs) {
                clauses.push_back(text::normalize(render_fragment(c.clause, name, p)));
                contexts.push_back(text::normalize(render_fragment(c.yes_context, name, p) + " " +
                                                   render_fragment(c.no_context, name, p)));
                condition_keys.push_back(text::normalize(c.key));
            }
            for (std::size_t bi = 0; bi < bs.size(); ++bi)
                for (std::size_t ci = 0; ci < cs.size(); ++ci) {
                    const BehaviourEntry& b = bs[bi];
                    const ConditionEntry& c = cs[ci];
                    if ((c.flags & cond_needs_portable) && b.place != Place::anywhere) continue;
                    if ((c.flags & cond_indoors) && b.place == Place::yard) continue;
                    if (b.avoid_type == c.type) continue;
                    // The compatibility table: the behaviour's kind must list the condition's type.
                    if (!lex.compatible(b.kind, c.type)) continue;
                    // The question holds the behaviour, so the behaviour must not spell out the
                    // condition's key phrase; nor may the condition's texts repeat the behaviour's.
                    if (text::normalized_contains(rests[bi], condition_keys[ci]) ||
                        text::normalized_contains(clauses[ci], keys[bi]) ||
                        text::normalized_contains(contexts[ci], keys[bi]))
                        continue;
                    m_cells[(bi * cs.size() + ci) * 3 + g] = 1;
                }
        }
    }

    std::vector<char> m_cells;
};

// Names already given to a row, per category, for name reuse.
struct UsedNames {
    std::vector<const NameEntry*> person, character, pet;
};

void pick_entity(Rng& rng, Category category, RowSpec& row, std::vector<std::size_t>& person_order,
                 std::vector<std::size_t>& character_order, std::vector<std::size_t>& pet_order,
                 UsedNames& used, double name_reuse) {
    const Lexicon& lex = lexicon();
    row.category = category;
    // A fresh name from the shuffled pool, or (at the reuse share) one an earlier row already has.
    auto take = [&rng, name_reuse](std::vector<std::size_t>& order, const std::vector<NameEntry>& names,
                                   std::vector<const NameEntry*>& taken) -> const NameEntry& {
        if (!taken.empty() && (order.empty() || rng.chance(name_reuse))) return *rng.pick(taken);
        MF_ASSERT(!order.empty(), "name pool exhausted");
        const std::size_t i = order.back();
        order.pop_back();
        taken.push_back(&names[i]);
        return names[i];
    };
    auto human_gender = [&rng](char listed) {
        if (listed == 'n') {
            const double u = rng.unit();
            return u < 0.4 ? 'f' : (u < 0.8 ? 'm' : 'n');
        }
        return rng.chance(0.12) ? 'n' : listed;
    };
    if (category == Category::person) {
        const NameEntry& n = take(person_order, lex.person_names, used.person);
        const Profession& job = rng.pick(lex.professions);
        row.fit = fit_person;
        row.name = n.name;
        row.pronouns = pronouns_for(human_gender(n.gender));
        row.profile_a = job.profession;
        row.profile_b = rng.pick(lex.towns);
        row.role = job.role;
        row.place = job.place;
        row.town = row.profile_b;
        row.age = static_cast<int>(rng.between(23, 71));
    } else if (category == Category::character) {
        const NameEntry& n = take(character_order, lex.character_names, used.character);
        const CharacterRole& role = rng.pick(lex.character_roles);
        row.fit = fit_character;
        row.name = n.name;
        row.pronouns = pronouns_for(human_gender(n.gender));
        row.profile_a = role.title;
        row.profile_b = rng.pick(lex.realms);
        row.role = role.role;
        row.place = row.profile_b;
        row.town = row.profile_b;
    } else {
        const NameEntry& n = take(pet_order, lex.pet_names, used.pet);
        const PetKind& kind = rng.pick(lex.pet_kinds);
        const Household& household = rng.pick(lex.households);
        row.fit = kind.fit;
        row.name = n.name;
        // Pets are he or she, never they: "they" for one named animal reads as a group.
        row.pronouns = pronouns_for(n.gender == 'n' ? (rng.chance(0.5) ? 'f' : 'm') : n.gender);
        row.species = kind.species;
        row.breed = kind.breed;
        row.profile_a = household.household;
        row.role = "the " + kind.species;
        row.place = household.home;
        row.town = household.household;
        row.age = static_cast<int>(rng.between(1, 12));
    }
}

void render_rule(RowSpec& row) {
    const BehaviourEntry& b = *row.behaviour;
    const ConditionEntry& c = *row.condition;
    const Pronouns& p = row.pronouns;
    const std::string rest = behaviour_rest(b, row);
    row.vp_name = std::string(b.verb_s) + " " + rest;
    row.vp = std::string(p.plural ? b.verb : b.verb_s) + " " + rest;
    row.base = std::string(b.verb) + " " + rest;
    row.ing = std::string(b.verb_ing) + " " + rest;
    row.ask = render_fragment(b.ask, row.name, p);
    row.loose = render_fragment(b.loose, row.name, p);
    row.behaviour_key = behaviour_key(b, row);
    row.habit = std::string(b.habit);
    row.clause = render_fragment(c.clause, row.name, p);
    row.condition_key = std::string(c.key);
    row.anchor = render_fragment(c.anchor, row.name, p);
    row.rule = row.name + " " + row.vp_name + " only " + row.clause + ".";
}

// The question: one situation, template and answer per row; the behaviour in the essay's words,
// loosely restated (its 'loose' wording: key nouns kept, wording changed) or in other words
// altogether (its 'ask' wording), per variant at its shares; one draw decides both variants.
void render_question(Rng& rng, RowSpec& row, const ConditionalSettings& settings) {
    const Lexicon& lex = lexicon();
    const ConditionEntry& own = *row.condition;
    const Pronouns& p = row.pronouns;
    // A "no" question takes the yes_context of a sibling in the condition's group when one fits the
    // entity and the behaviour: the same situation is then asked with "yes" against its own rule and
    // with "no" against a sibling's, so the question alone never tells the answer.
    const ConditionEntry* context_of = &own;
    if (!row.condition_met && !own.group.empty()) {
        std::vector<const ConditionEntry*> siblings;
        const BehaviourEntry& b = *row.behaviour;
        for (const auto& s : lex.conditions) {
            if (&s == &own || s.type != own.type || s.group != own.group || !(s.fit & row.fit)) continue;
            if ((s.flags & cond_needs_portable) && b.place != Place::anywhere) continue;
            if ((s.flags & cond_indoors) && b.place == Place::yard) continue;
            if (mentions(text::normalize(render_fragment(s.yes_context, row.name, p)), text::normalize(row.behaviour_key)))
                continue;
            siblings.push_back(&s);
        }
        if (!siblings.empty()) context_of = rng.pick(siblings);
    }
    const ConditionEntry& c = *context_of;
    row.context_of = context_of;
    row.context = render(context_of != &own || row.condition_met ? c.yes_context : c.no_context, row.name, p);
    const double draw = rng.unit();
    const auto wording = [draw](double paraphrase, double loose) {
        // The loose share is of the questions not paraphrased, so the two shares never conflict.
        return draw < paraphrase                              ? Wording::paraphrase
               : draw < paraphrase + (1 - paraphrase) * loose ? Wording::loose
                                                              : Wording::essay;
    };
    row.wording = {wording(settings.easy_paraphrase_share, settings.easy_loose_share),
                   wording(settings.hard_paraphrase_share, settings.hard_loose_share)};
    std::string q;
    if (c.flags & cond_context_after) {
        // The context says "did it", so the question names the behaviour first.
        q = rng.pick(lex.questions_after);
        q = replace_token(q, "{Name}", row.name);
    } else {
        // Once the context has named the entity, the question refers back with a pronoun.
        const bool named = row.context.find(row.name) != std::string::npos;
        q = rng.pick(lex.questions_before);
        q = replace_token(q, "{subject}", named ? p.subj : row.name);
        q = replace_token(q, "{object}", named ? p.obj : row.name);
        q = replace_token(q, "{Be}", named && p.plural ? "Are" : "Is");
    }
    q = replace_token(q, "{ctx}", row.context);
    // {do} may hold pronoun agreement of its own ("as {subj} [climbs|climb]").
    for (std::size_t v = 0; v < 2; ++v) {
        const Wording w = row.wording[v];
        row.question[v] = replace_token(q, "{do}", w == Wording::paraphrase ? row.ask
                                                   : w == Wording::loose    ? row.loose
                                                                            : row.base);
    }
    const std::string stated = row.name + " " + row.vp_name + " only " + row.clause;
    const std::string& tmpl = rng.pick(row.condition_met ? lex.answers_yes : lex.answers_no);
    row.answer = replace_token(tmpl, "{stated}", stated);
}

std::vector<RowSpec> build_specs(std::uint64_t seed, const ConditionalSettings& settings) {
    Rng rng = Rng(seed).fork("conditional-facts/specs");
    auto order_of = [&rng](std::size_t n) {
        std::vector<std::size_t> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = i;
        rng.shuffle(v);
        return v;
    };
    const Lexicon& lex = lexicon();
    std::vector<std::size_t> person_order = order_of(lex.person_names.size());
    std::vector<std::size_t> character_order = order_of(lex.character_names.size());
    std::vector<std::size_t> pet_order = order_of(lex.pet_names.size());
    UsedNames used;

    // 46-50% of questions satisfy the condition, fixed per seed rather than left to chance: near
    // half, so always answering the commoner label is worth little (the release: 40-50%).
    const std::size_t yes_count = static_cast<std::size_t>(rng.between(46, 50));
    std::vector<char> met(k_rows, 0);  // not vector<bool>: Rng::shuffle swaps references
    for (std::size_t i = 0; i < yes_count; ++i) met[i] = 1;
    rng.shuffle(met);

    const auto& all_conditions = lex.conditions;
    const auto& all_behaviours = lex.behaviours;
    const Compatibility& compatible = Compatibility::instance();
    std::vector<bool> condition_used(all_conditions.size(), false);
    std::vector<bool> behaviour_used(all_behaviours.size(), false);

    std::vector<RowSpec> rows;
    rows.reserve(k_rows);
    while (rows.size() < k_rows) {
        const double u = rng.unit();
        const Category category =
            u < 0.45 ? Category::person : (u < 0.75 ? Category::character : Category::pet);
        RowSpec row;
        pick_entity(rng, category, row, person_order, character_order, pet_order, used, settings.name_reuse);

        // Condition types are drawn uniformly from those that still have a usable condition and
        // behaviour for this entity (pets: the nine observable types only).
        const auto& types = category == Category::pet ? observable_condition_types() : condition_types();
        std::vector<std::vector<std::size_t>> options_by_type(types.size());
        std::vector<std::size_t> open_types;
        for (std::size_t t = 0; t < types.size(); ++t) {
            for (std::size_t ci = 0; ci < all_conditions.size(); ++ci) {
                const ConditionEntry& c = all_conditions[ci];
                if (condition_used[ci] || c.type != types[t] || !(c.fit & row.fit)) continue;
                for (std::size_t bi = 0; bi < all_behaviours.size(); ++bi)
                    if (!behaviour_used[bi] && compatible(bi, ci, row)) {
                        options_by_type[t].push_back(ci);
                        break;
                    }
            }
            if (!options_by_type[t].empty()) open_types.push_back(t);
        }
        // An entity with no usable rule left (a rare species late in the run) is redrawn.
        if (open_types.empty()) continue;
        const std::size_t t = rng.pick(open_types);
        // Within the type, a condition with group siblings first: its "no" question can take a
        // sibling's situation, so the question does not give the answer away (ConditionEntry::group).
        std::vector<std::size_t> grouped;
        for (const auto c : options_by_type[t])
            if (!all_conditions[c].group.empty()) grouped.push_back(c);
        const std::size_t ci = rng.pick(grouped.empty() ? options_by_type[t] : grouped);
        std::vector<std::size_t> behaviour_options;
        for (std::size_t bi = 0; bi < all_behaviours.size(); ++bi)
            if (!behaviour_used[bi] && compatible(bi, ci, row)) behaviour_options.push_back(bi);
        const std::size_t bi = rng.pick(behaviour_options);
        condition_used[ci] = true;
        behaviour_used[bi] = true;
        row.condition = &all_conditions[ci];
        row.behaviour = &all_behaviours[bi];
        row.condition_met = met[rows.size()] != 0;
        render_rule(row);
        render_question(rng, row, settings);
        rows.push_back(std::move(row));
    }
    return rows;
}

// ---------------------------------------------------------------------------------------------
// Essays.

std::string age_words(int n) {
    static const std::array<std::string_view, 13> k_words = {"zero", "one",    "two",   "three", "four",
                                                             "five", "six",    "seven", "eight", "nine",
                                                             "ten",  "eleven", "twelve"};
    return std::string(k_words[static_cast<std::size_t>(n) % k_words.size()]);
}

std::string intro_sentence(Rng& rng, const RowSpec& row) {
    const Lexicon& lex = lexicon();
    const Pronouns& p = row.pronouns;
    std::string s;
    if (row.category == Category::person) {
        s = render(rng.pick(lex.intros.person), row.name, p);
        s = replace_token(s, "{occupation}", row.profile_a);
        s = replace_token(s, "{town}", row.profile_b);
        s = replace_token(s, "{age}", std::to_string(row.age));
    } else if (row.category == Category::character) {
        s = render(rng.pick(lex.intros.character), row.name, p);
        s = replace_token(s, "{role}", row.profile_a);
        s = replace_token(s, "{realm}", row.profile_b);
    } else {
        const std::string words = age_words(row.age);
        const std::string article = words[0] == 'e' ? "an " : "a ";  // an eight-, an eleven-year-old
        s = render(rng.pick(lex.intros.pet), row.name, p);
        s = replace_token(s, "{a_age}", article + words + "-year-old");
        s = replace_token(s, "{breed}", row.breed);
        s = replace_token(s, "{household}", row.profile_a);
    }
    return text::capitalize(s);
}

// The entity's setting and habit in a template: {role} {Role} {place} {town} {habit} {Habit}.
std::string fill_setting(std::string s, const RowSpec& row) {
    s = replace_token(s, "{Role}", text::capitalize(row.role));
    s = replace_token(s, "{role}", row.role);
    s = replace_token(s, "{place}", row.place);
    s = replace_token(s, "{town}", row.town);
    s = replace_token(s, "{Habit}", text::capitalize(row.habit));
    return replace_token(s, "{habit}", row.habit);
}

std::size_t count_token(const std::string& s, std::string_view token) {
    std::size_t n = 0;
    for (std::size_t at = s.find(token); at != std::string::npos; at = s.find(token, at + token.size())) ++n;
    return n;
}

// The template with its one reference to the entity ({Subj}, {subj} or {obj}) turned into the
// name and {vp} into its name form, or empty when the template refers to the entity more than once
// (a later pronoun would then disagree with the name's singular verb: "Brisa is ...; they toss").
std::string named_template(const std::string& tmpl) {
    static constexpr std::array<std::string_view, 3> k_refs = {"{Subj}", "{subj}", "{obj}"};
    std::size_t refs = 0;
    for (const auto ref : k_refs) refs += count_token(tmpl, ref);
    if (refs != 1) return {};
    std::string out = tmpl;
    for (const auto ref : k_refs) out = replace_token(out, ref, "{Name}");
    return replace_token(out, "{vp}", "{vp_name}");
}

// The template with only its first reference to the entity turned into the name (and the {vp}
// right after it into its name form); later references stay pronouns ("Gwen is predictable about
// one thing: she ..."). Empty when the template never refers to the entity.
std::string first_reference_named(const std::string& tmpl) {
    static constexpr std::array<std::string_view, 3> k_refs = {"{Subj}", "{subj}", "{obj}"};
    std::size_t first = std::string::npos;
    std::string_view ref;
    for (const auto r : k_refs)
        if (const auto at = tmpl.find(r); at < first) first = at, ref = r;
    if (first == std::string::npos) return {};
    std::string out = tmpl.substr(0, first) + "{Name}";
    std::string rest = tmpl.substr(first + ref.size());
    if (rest.rfind(" {vp}", 0) == 0) rest = " {vp_name}" + rest.substr(5);
    return out + rest;
}

// How a sentence about the entity refers to it after the intro.
enum class Reference { pronoun, role, name };

Reference pick_reference(Rng& rng, double name_share, double role_share) {
    if (name_share > 0 && rng.chance(name_share)) return Reference::name;
    return rng.chance(role_share) ? Reference::role : Reference::pronoun;
}

// Renders a template about the entity: by pronoun; by name (when the template refers to the entity
// once); or by its role noun (when the template opens with {Subj} and uses no other {subj}). Name
// and role take singular agreement. A template that cannot take the asked form uses the pronoun.
std::string render_about(const std::string& tmpl, const RowSpec& row, Reference reference) {
    const bool opens_with_subject =
        text::starts_with(tmpl, "{Subj} ") && tmpl.find("{subj}") == std::string::npos;
    Pronouns singular = row.pronouns;
    singular.plural = false;
    if (reference == Reference::name) {
        const std::string named = named_template(tmpl);
        if (!named.empty()) return text::capitalize(render(fill_setting(named, row), row.name, singular));
    }
    if (reference == Reference::role && opens_with_subject) {
        return text::capitalize(render(fill_setting("{Role} " + tmpl.substr(7), row), row.name, singular));
    }
    return text::capitalize(render(fill_setting(tmpl, row), row.name, row.pronouns));
}

const std::vector<std::string>& setting_fillers(const RowSpec& row) {
    const Lexicon& lex = lexicon();
    if (row.category == Category::person) return lex.setting_fillers.person;
    if (row.category == Category::character) return lex.setting_fillers.character;
    return lex.setting_fillers.pet;
}

// `count` distinct filler sentences about the entity: about two thirds from its own setting (role,
// place, town, habit), the rest personal background facts that fit it; none touches the rule's
// key phrases or repeats a group ("two older brothers" and "the eldest of four" never meet).
// Without `habit_fillers` no filler names the habit: a Hard essay mentions its behaviour only in
// the rule's sentences, so no filler stands in for the link sentence ("the napkin sketching").
std::vector<std::string> pick_fillers(Rng& rng, const RowSpec& row, std::size_t count, double name_share,
                                      double role_share, bool habit_fillers) {
    const Lexicon& lex = lexicon();
    std::vector<std::string> setting;
    for (const auto& tmpl : setting_fillers(row))
        if (habit_fillers || (tmpl.find("{habit}") == std::string::npos && tmpl.find("{Habit}") == std::string::npos))
            setting.push_back(tmpl);
    rng.shuffle(setting);
    std::vector<std::size_t> pool;
    for (std::size_t i = 0; i < lex.background.size(); ++i)
        if ((lex.background[i].fit & row.fit) && lex.background[i].avoid_type != row.condition->type) pool.push_back(i);
    rng.shuffle(pool);
    const std::size_t from_setting = std::min(setting.size(), (count * 2 + 2) / 3);
    std::vector<std::string> out;
    auto usable = [&row](const std::string& sentence) {
        return !mentions(sentence, row.condition_key) && !mentions(sentence, row.behaviour_key) &&
               find_forbidden_connective(sentence).empty();
    };
    for (const auto& tmpl : setting) {
        if (out.size() == from_setting) break;
        std::string sentence = render_about(tmpl, row, pick_reference(rng, name_share, role_share));
        if (usable(sentence)) out.push_back(std::move(sentence));
    }
    std::set<std::string> groups;
    for (std::size_t i : pool) {
        if (out.size() == count) break;
        const FillerEntry& f = lex.background[i];
        if (!f.group.empty() && groups.count(f.group)) continue;
        std::string sentence = render_about(f.text, row, pick_reference(rng, name_share, role_share));
        if (!usable(sentence)) continue;
        if (!f.group.empty()) groups.insert(f.group);
        out.push_back(std::move(sentence));
    }
    MF_ASSERT(out.size() == count, "filler pool too small for an essay");
    rng.shuffle(out);
    return out;
}

void place_fillers(std::vector<std::string> fill, std::vector<std::string>& sentences) {
    std::size_t next = 0;
    for (auto& sentence : sentences) {
        if (!sentence.empty()) continue;
        MF_ASSERT(next < fill.size(), "more open slots than fillers");
        sentence = std::move(fill[next++]);
    }
    MF_ASSERT(next == fill.size(), "fillers left over");
}

std::string fill_rule_tokens(std::string s, const RowSpec& row) {
    s = replace_token(s, "{vp_name}", row.vp_name);
    s = replace_token(s, "{vp}", row.vp);
    s = replace_token(s, "{base}", row.base);
    s = replace_token(s, "{ing}", row.ing);
    s = replace_token(s, "{clause}", row.clause);
    s = replace_token(s, "{anchor}", row.anchor);
    s = fill_setting(std::move(s), row);
    return text::capitalize(s);
}

// A template from one of a rule shape's paraphrase families, chosen family first so every family
// gets its share whatever its size. Families named in `skip` are left out.
const std::string& pick_template(Rng& rng, const Families& families, std::string_view skip = {}) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < families.size(); ++i)
        if (families[i].first != skip) open.push_back(i);
    return rng.pick(families[rng.pick(open)].second);
}

struct Essay {
    std::string text;
    std::vector<std::string> sentences;        // as written, openers varied
    std::vector<std::string> rule_sentences;  // Easy: one; Hard: behaviour, condition, link
    std::string intro;                         // the sentence that names the entity
    std::vector<data::KeyDetail> qualifiers;   // exclusivity and polarity words the rule states
};

// The exclusivity and polarity words a rule template states: dropping one changes the rule ("only
// when" becomes "when"), so each is a qualifier detail of the fact.
std::vector<data::KeyDetail> template_qualifiers(std::string_view tmpl) {
    std::vector<data::KeyDetail> out;
    const std::string words = " " + text::normalize(std::string(tmpl)) + " ";
    if (words.find(" only ") != std::string::npos)
        out.emplace_back("exclusivity", std::vector<std::string>{"only"}, data::DetailRole::qualifier);
    if (words.find(" except ") != std::string::npos)
        out.emplace_back("exclusivity", std::vector<std::string>{"except"}, data::DetailRole::qualifier);
    if (words.find(" never ") != std::string::npos)
        out.emplace_back("polarity", std::vector<std::string>{"never"}, data::DetailRole::qualifier);
    return out;
}

std::size_t sentence_count(Rng& rng, std::size_t low, std::size_t high) {
    return static_cast<std::size_t>(rng.between(static_cast<std::int64_t>(low), static_cast<std::int64_t>(high)));
}

// The names a sentence frame masks: the entity's name and its parts ("Old Tobiah", "Tobiah").
std::vector<std::string> frame_names(const RowSpec& row) {
    std::vector<std::string> out = {row.name};
    for (const auto& part : text::split(row.name, ' '))
        if (part.size() > 1) out.push_back(part);
    return out;
}

Essay easy_essay(Rng& rng, const RowSpec& row, const ConditionalSettings& settings, const FrameVariation& frames,
                 Rng& frame_rng) {
    const std::size_t total = sentence_count(rng, settings.easy_min_sentences, settings.easy_max_sentences);
    std::vector<std::string> sentences(total);
    sentences[0] = intro_sentence(rng, row);
    // Pets have no workplace to weave in.
    const std::string& tmpl = pick_template(rng, lexicon().easy_rules, row.category == Category::pet ? "woven" : "");
    // The release's Easy rule sentences name the entity (the paper's Easy: the whole rule in one
    // sentence); a template that refers to it twice names it first and keeps its later pronouns.
    std::string named;
    if (rng.chance(settings.easy_rule_named_share)) {
        named = named_template(tmpl);
        if (named.empty()) named = first_reference_named(tmpl);
    }
    Pronouns agreement = row.pronouns;
    if (!named.empty()) agreement.plural = false;
    const std::string rule = fill_rule_tokens(render(named.empty() ? tmpl : named, row.name, agreement), row);
    const std::size_t at = static_cast<std::size_t>(rng.between(1, static_cast<std::int64_t>(total) - 1));
    sentences[at] = rule;
    place_fillers(pick_fillers(rng, row, total - 2, settings.easy_name_share, settings.role_share, true), sentences);
    sentences = frames.vary(std::move(sentences), frame_names(row), frame_rng);
    return {text::join(sentences, " "), sentences, {sentences[at]}, sentences[0], template_qualifiers(tmpl)};
}

Essay hard_essay(Rng& rng, const RowSpec& row, const ConditionalSettings& settings, const FrameVariation& frames,
                 Rng& frame_rng) {
    const Lexicon& lex = lexicon();
    const std::size_t total = sentence_count(rng, settings.hard_min_sentences, settings.hard_max_sentences);
    // Three rule positions after the intro, pairwise at least two apart; the link comes last so
    // its "those ..." has something to point back to.
    std::vector<std::size_t> at;
    for (;;) {
        at = rng.sample_indices(total - 1, 3);
        for (auto& i : at) ++i;
        std::sort(at.begin(), at.end());
        if (at[1] - at[0] >= 2 && at[2] - at[1] >= 2) break;
    }
    const bool behaviour_first = rng.chance(0.5);
    const std::size_t behaviour_at = behaviour_first ? at[0] : at[1];
    const std::size_t condition_at = behaviour_first ? at[1] : at[0];
    const std::size_t link_at = at[2];

    const Families& behaviour_families = row.category == Category::pet         ? lex.hard_behaviour_pet
                                         : row.category == Category::character ? lex.hard_behaviour_character
                                                                               : lex.hard_behaviour_person;
    const std::string behaviour_sentence =
        fill_rule_tokens(render(pick_template(rng, behaviour_families), row.name, row.pronouns), row);
    const std::string condition_sentence = render(row.condition->sentence, row.name, row.pronouns);
    const std::string link_sentence =
        fill_rule_tokens(render(pick_template(rng, lex.hard_link), row.name, row.pronouns), row);

    std::vector<std::string> sentences(total);
    sentences[0] = intro_sentence(rng, row);
    sentences[behaviour_at] = behaviour_sentence;
    sentences[condition_at] = condition_sentence;
    sentences[link_at] = link_sentence;
    place_fillers(pick_fillers(rng, row, total - 4, 0.0, settings.role_share, false), sentences);
    sentences = frames.vary(std::move(sentences), frame_names(row), frame_rng);
    Essay essay{text::join(sentences, " "), sentences,
                {sentences[behaviour_at], sentences[condition_at], sentences[link_at]}, sentences[0], {}};
    MF_ASSERT(find_forbidden_connective(essay.text).empty(), "a Hard essay holds a conditional connective");
    return essay;
}

data::KeyDetail detail(std::string name, std::string variant) {
    const data::DetailRole role = data::default_detail_role(name);
    return {std::move(name), {std::move(variant)}, role};
}

// The entity as a key detail: its name, and its possessive ("Gideon's" normalises to "gideons",
// which the bare name does not match on word boundaries).
data::KeyDetail entity_detail(const std::string& name) {
    return {"entity", {name, name + "'s"}, data::DetailRole::identity};
}

data::Scenario generate(const GenerateOptions& options, bool hard) {
    const std::string dataset = hard ? "conditional_facts_hard" : "conditional_facts_easy";
    const std::string prefix = hard ? "cfh" : "cfe";
    data::Scenario scenario = make_scenario(dataset, options.seed);
    const ConditionalSettings& settings = options.conditional;
    const std::vector<RowSpec> rows = build_specs(options.seed, settings);
    const Rng essay_root = Rng(options.seed).fork(hard ? "conditional-facts/hard" : "conditional-facts/easy");

    MinHashDeduper deduper(k_dedup_threshold);
    // No opening frame in more than 3 of the 100 essays (`datasets audit` flags 5%).
    FrameVariation frames(3);
    std::size_t candidates = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const RowSpec& row = rows[r];
        const std::string pid = probe_id(prefix, r + 1);
        // A row whose essay collides with a kept one gets a fresh essay (same spec), so the
        // dataset keeps exactly 100 rows.
        Essay essay;
        for (int attempt = 0;; ++attempt) {
            MF_ASSERT(attempt < k_max_essay_attempts, "could not write a non-duplicate essay");
            Rng rng = essay_root.fork(std::to_string(r) + "/" + std::to_string(attempt));
            Rng frame_rng = rng.fork("frames");
            essay = hard ? hard_essay(rng, row, settings, frames, frame_rng) : easy_essay(rng, row, settings, frames, frame_rng);
            ++candidates;
            if (deduper.offer(attempt == 0 ? pid : pid + "-retry" + std::to_string(attempt), essay.text))
                break;
        }
        frames.commit(essay.sentences, frame_names(row));
        const std::string message = add_user_session(scenario, essay.text);

        data::Probe probe;
        probe.id = pid;
        probe.kind = data::ProbeKind::yes_no;
        probe.question = row.question[hard ? 1 : 0];
        probe.answer = row.answer;
        data::EvidenceFact fact;
        fact.id = pid + "-f1";
        fact.message_ids = {message};
        if (hard) {
            // The rule's sentences name the entity only by pronoun: the intro that names it is part
            // of what must be kept for the rule to stay linked to its person.
            fact.text = essay.intro + " " + text::join(essay.rule_sentences, " ");
            fact.statements = {essay.intro};
            fact.statements.insert(fact.statements.end(), essay.rule_sentences.begin(), essay.rule_sentences.end());
            fact.key_details = {entity_detail(row.name), detail("behaviour", row.behaviour_key),
                                detail("condition", row.condition_key), detail("link", row.anchor)};
        } else {
            // A rule sentence that refers to the entity by pronoun needs the intro that names it.
            const bool named = mentions(essay.rule_sentences[0], row.name);
            fact.statements = essay.rule_sentences;
            if (!named) fact.statements.insert(fact.statements.begin(), essay.intro);
            fact.text = text::join(fact.statements, " ");
            fact.key_details = {entity_detail(row.name), detail("behaviour", row.behaviour_key),
                                detail("condition", row.condition_key)};
            fact.key_details.insert(fact.key_details.end(), essay.qualifiers.begin(), essay.qualifiers.end());
        }
        probe.evidence.push_back(std::move(fact));
        probe.meta = {{"entity", row.name},
                      {"entity_category", category_name(row.category)},
                      {"behaviour", row.vp_name},
                      {"condition_type", std::string(row.condition->type)},
                      {"condition", row.clause},
                      {"condition_met", row.condition_met ? "yes" : "no"},
                      {"question_context", row.context},
                      {"context_of", row.context_of == row.condition ? std::string("own")
                                                                     : std::string(row.context_of->key)},
                      {"rule", row.rule},
                      {"pronoun", row.pronouns.subj},
                      {"behaviour_kind", row.behaviour->kind},
                      {"question_wording", wording_name(row.wording[hard ? 1 : 0])}};
        if (row.category == Category::pet) probe.meta["species"] = row.species;
        scenario.probes.push_back(std::move(probe));
    }
    ask_all_after_last_session(scenario);
    scenario.meta["variant"] = hard ? "hard" : "easy";
    scenario.meta["settings"] = {{"name_reuse", settings.name_reuse},
                                 {"easy_paraphrase_share", settings.easy_paraphrase_share},
                                 {"hard_paraphrase_share", settings.hard_paraphrase_share},
                                 {"easy_loose_share", settings.easy_loose_share},
                                 {"hard_loose_share", settings.hard_loose_share},
                                 {"role_share", settings.role_share},
                                 {"easy_rule_named_share", settings.easy_rule_named_share},
                                 {"easy_name_share", settings.easy_name_share},
                                 {"easy_min_sentences", settings.easy_min_sentences},
                                 {"easy_max_sentences", settings.easy_max_sentences},
                                 {"hard_min_sentences", settings.hard_min_sentences},
                                 {"hard_max_sentences", settings.hard_max_sentences}};
    record_dedup(scenario, "essay", deduper, candidates);
    return scenario;
}

}  // namespace

data::Scenario generate_conditional_facts_easy(const GenerateOptions& options) {
    return generate(options, false);
}

data::Scenario generate_conditional_facts_hard(const GenerateOptions& options) {
    return generate(options, true);
}

}  // namespace memfail::suites::memfail_suite

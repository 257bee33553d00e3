// SPDX-License-Identifier: MIT
// Conditional-Facts Easy and Hard generators: 100 rules "entity does behaviour only under
// condition", shared by both variants, wrapped in an essay that states the rule in one sentence
// (Easy) or spreads it over three non-adjacent sentences with no conditional connective (Hard).
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

// Everything Easy and Hard share for one row: the entity, its rule and the graded question.
struct RowSpec {
    Category category = Category::person;
    std::uint32_t fit = fit_person;  // category bit, or the species bit for a pet
    std::string name;
    Pronouns pronouns;
    std::string species;               // pets only
    std::string breed;                 // pets only
    std::string profile_a, profile_b;  // occupation+town, role+realm, or household
    int age = 0;
    const BehaviourEntry* behaviour = nullptr;
    const ConditionEntry* condition = nullptr;
    bool condition_met = false;
    // Rendered pieces.
    std::string vp_name, vp, base, ing, behaviour_key, habit;
    std::string clause, condition_key, anchor, context, question, answer, rule;
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
        const BehaviourEntry& b = behaviours()[bi];
        const ConditionEntry& c = conditions()[ci];
        if (!(b.fit & row.fit) || !(c.fit & row.fit)) return false;
        const std::size_t g = row.pronouns.plural ? 2 : (row.pronouns.subj == "he" ? 0 : 1);
        return m_cells[(bi * conditions().size() + ci) * 3 + g] != 0;
    }

private:
    Compatibility() {
        const auto& bs = behaviours();
        const auto& cs = conditions();
        m_cells.assign(bs.size() * cs.size() * 3, 0);
        const std::string name = "Someone";
        const char genders[3] = {'m', 'f', 'n'};
        for (std::size_t g = 0; g < 3; ++g) {
            const Pronouns p = pronouns_for(genders[g]);
            std::vector<std::string> rests, keys, clauses, contexts, condition_keys;
            for (const auto& b : bs) {
                rests.push_back(text::normalize(render_fragment(b.rest, name, p)));
                keys.push_back(b.key.empty() ? rests.back() : text::normalize(b.key));
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

void pick_entity(Rng& rng, Category category, RowSpec& row, std::vector<std::size_t>& person_order,
                 std::vector<std::size_t>& character_order, std::vector<std::size_t>& pet_order) {
    row.category = category;
    auto take = [](std::vector<std::size_t>& order) {
        MF_ASSERT(!order.empty(), "name pool exhausted");
        const std::size_t i = order.back();
        order.pop_back();
        return i;
    };
    auto human_gender = [&rng](char listed) {
        if (listed == 'n') {
            const double u = rng.unit();
            return u < 0.4 ? 'f' : (u < 0.8 ? 'm' : 'n');
        }
        return rng.chance(0.12) ? 'n' : listed;
    };
    if (category == Category::person) {
        const NameEntry& n = person_names()[take(person_order)];
        row.fit = fit_person;
        row.name = std::string(n.name);
        row.pronouns = pronouns_for(human_gender(n.gender));
        row.profile_a = std::string(rng.pick(occupations()));
        row.profile_b = std::string(rng.pick(towns()));
        row.age = static_cast<int>(rng.between(23, 71));
    } else if (category == Category::character) {
        const NameEntry& n = character_names()[take(character_order)];
        row.fit = fit_character;
        row.name = std::string(n.name);
        row.pronouns = pronouns_for(human_gender(n.gender));
        row.profile_a = std::string(rng.pick(character_roles()));
        row.profile_b = std::string(rng.pick(realms()));
    } else {
        const NameEntry& n = pet_names()[take(pet_order)];
        const PetKind& kind = rng.pick(pet_kinds());
        row.fit = kind.fit;
        row.name = std::string(n.name);
        // Pets are he or she, never they: "they" for one named animal reads as a group.
        row.pronouns = pronouns_for(n.gender == 'n' ? (rng.chance(0.5) ? 'f' : 'm') : n.gender);
        row.species = std::string(kind.species);
        row.breed = std::string(kind.breed);
        row.profile_a = std::string(rng.pick(households()));
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
    row.behaviour_key = behaviour_key(b, row);
    row.habit = std::string(b.habit);
    row.clause = render_fragment(c.clause, row.name, p);
    row.condition_key = std::string(c.key);
    row.anchor = render_fragment(c.anchor, row.name, p);
    row.rule = row.name + " " + row.vp_name + " only " + row.clause + ".";
}

void render_question(Rng& rng, RowSpec& row) {
    const ConditionEntry& c = *row.condition;
    const Pronouns& p = row.pronouns;
    row.context = render(row.condition_met ? c.yes_context : c.no_context, row.name, p);
    if (c.flags & cond_context_after) {
        // The context says "did it", so the question names the behaviour first.
        static const std::array<std::string_view, 3> k_after = {
            "Would {Name} {base} now? {ctx}", "Is {Name} likely to {base} at this point? {ctx}",
            "Should we expect {Name} to {base} now? {ctx}"};
        std::string q(k_after[rng.below(k_after.size())]);
        q = replace_token(q, "{Name}", row.name);
        q = replace_token(q, "{base}", row.base);
        row.question = replace_token(q, "{ctx}", row.context);
    } else {
        // Once the context has named the entity, the question refers back with a pronoun.
        const bool named = row.context.find(row.name) != std::string::npos;
        const std::string subject = named ? p.subj : row.name;
        const std::string object = named ? p.obj : row.name;
        const std::string be = named && p.plural ? "Are" : "Is";
        static const std::array<std::string_view, 5> k_before = {
            "{ctx} Would {subject} {base} right now?", "{ctx} {Be} {subject} likely to {base} at the moment?",
            "{ctx} Do you think {subject} will {base} now?",
            "{ctx} Should we expect {object} to {base} right now?",
            "{ctx} Would {subject} {base} at this moment?"};
        std::string q(k_before[rng.below(k_before.size())]);
        q = replace_token(q, "{subject}", subject);
        q = replace_token(q, "{object}", object);
        q = replace_token(q, "{Be}", be);
        q = replace_token(q, "{base}", row.base);
        row.question = replace_token(q, "{ctx}", row.context);
    }
    const std::string stated = row.name + " " + row.vp_name + " only " + row.clause;
    if (row.condition_met)
        row.answer = rng.chance(0.5) ? "Yes — " + stated + ", and that is exactly the situation now."
                                     : "Yes — the condition holds: " + stated + ".";
    else
        row.answer = rng.chance(0.5) ? "No — " + stated + ", and that is not the situation right now."
                                     : "No — the condition is not met: " + stated + ".";
}

std::vector<RowSpec> build_specs(std::uint64_t seed) {
    Rng rng = Rng(seed).fork("conditional-facts/specs");
    auto order_of = [&rng](std::size_t n) {
        std::vector<std::size_t> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = i;
        rng.shuffle(v);
        return v;
    };
    std::vector<std::size_t> person_order = order_of(person_names().size());
    std::vector<std::size_t> character_order = order_of(character_names().size());
    std::vector<std::size_t> pet_order = order_of(pet_names().size());

    // About 40-50% of questions satisfy the condition, fixed per seed rather than left to chance.
    const std::size_t yes_count = static_cast<std::size_t>(rng.between(40, 50));
    std::vector<char> met(k_rows, 0);  // not vector<bool>: Rng::shuffle swaps references
    for (std::size_t i = 0; i < yes_count; ++i) met[i] = 1;
    rng.shuffle(met);

    const auto& all_conditions = conditions();
    const auto& all_behaviours = behaviours();
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
        pick_entity(rng, category, row, person_order, character_order, pet_order);

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
        const std::size_t ci = rng.pick(options_by_type[t]);
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
        render_question(rng, row);
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
    const Pronouns& p = row.pronouns;
    std::string s;
    if (row.category == Category::person) {
        s = render(rng.pick(person_intros()), row.name, p);
        s = replace_token(s, "{occupation}", row.profile_a);
        s = replace_token(s, "{town}", row.profile_b);
        s = replace_token(s, "{age}", std::to_string(row.age));
    } else if (row.category == Category::character) {
        s = render(rng.pick(character_intros()), row.name, p);
        s = replace_token(s, "{role}", row.profile_a);
        s = replace_token(s, "{realm}", row.profile_b);
    } else {
        const std::string words = age_words(row.age);
        const std::string article = words[0] == 'e' ? "an " : "a ";  // an eight-, an eleven-year-old
        s = render(rng.pick(pet_intros()), row.name, p);
        s = replace_token(s, "{a_age}", article + words + "-year-old");
        s = replace_token(s, "{breed}", row.breed);
        s = replace_token(s, "{household}", row.profile_a);
    }
    return text::capitalize(s);
}

// One filler fact in both forms: opening with the pronoun, and (where its one subject is the
// opening pronoun) with the name, which then takes singular agreement.
struct Filler {
    std::string pronoun_form;
    std::string name_form;  // empty when the fact cannot open with the name
};

// `count` distinct filler facts that fit the entity, stay off the rule's topic and never repeat a
// group ("two older brothers" and "the eldest of four" never meet).
std::vector<Filler> pick_fillers(Rng& rng, const RowSpec& row, std::size_t count) {
    std::vector<std::size_t> pool;
    const auto& all = fillers();
    for (std::size_t i = 0; i < all.size(); ++i)
        if ((all[i].fit & row.fit) && all[i].avoid_type != row.condition->type) pool.push_back(i);
    rng.shuffle(pool);
    std::set<std::string_view> groups;
    std::vector<Filler> out;
    for (std::size_t i : pool) {
        if (out.size() == count) break;
        const FillerEntry& f = all[i];
        if (!f.group.empty() && groups.count(f.group)) continue;
        Filler filler{render(f.text, row.name, row.pronouns), {}};
        if (mentions(filler.pronoun_form, row.condition_key) ||
            mentions(filler.pronoun_form, row.behaviour_key))
            continue;
        const bool opens_with_subject =
            text::starts_with(f.text, "{Subj} ") && f.text.find("{subj}") == std::string_view::npos;
        const bool opens_with_possessive = text::starts_with(f.text, "{Pos} ");
        if (opens_with_subject || opens_with_possessive) {
            Pronouns singular = row.pronouns;
            singular.plural = false;
            const std::string tmpl = (opens_with_subject ? "{Name} " : "{Name's} ") +
                                     std::string(f.text.substr(opens_with_subject ? 7 : 6));
            filler.name_form = render(tmpl, row.name, singular);
        }
        if (!f.group.empty()) groups.insert(f.group);
        out.push_back(std::move(filler));
    }
    MF_ASSERT(out.size() == count, "filler pool too small for an essay");
    return out;
}

// Places the fillers in the open slots of `sentences`. About a quarter open with the name instead
// of a pronoun, never right after a sentence that already opened with it, so an essay reads
// neither as a column of "She ... She ..." nor as "Robin ... Robin ...".
void place_fillers(Rng& rng, const RowSpec& row, std::vector<Filler> fill,
                   std::vector<std::string>& sentences) {
    std::size_t next = 0;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        if (!sentences[i].empty()) continue;
        MF_ASSERT(next < fill.size(), "more open slots than fillers");
        Filler& f = fill[next++];
        const bool after_name = i > 0 && text::starts_with(sentences[i - 1], row.name);
        const bool use_name = !f.name_form.empty() && !after_name && rng.chance(0.25);
        sentences[i] = std::move(use_name ? f.name_form : f.pronoun_form);
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
    s = replace_token(s, "{habit}", row.habit);
    return text::capitalize(s);
}

struct Essay {
    std::string text;
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

Essay easy_essay(Rng& rng, const RowSpec& row) {
    const std::size_t filler_count = static_cast<std::size_t>(rng.between(3, 6));  // 5-8 sentences
    std::vector<std::string> sentences(filler_count + 2);
    sentences[0] = intro_sentence(rng, row);
    const std::string_view tmpl = rng.pick(easy_rule_templates());
    const std::string rule = fill_rule_tokens(render(tmpl, row.name, row.pronouns), row);
    const std::size_t at =
        static_cast<std::size_t>(rng.between(1, static_cast<std::int64_t>(filler_count) + 1));
    sentences[at] = rule;
    place_fillers(rng, row, pick_fillers(rng, row, filler_count), sentences);
    return {text::join(sentences, " "), {rule}, sentences[0], template_qualifiers(tmpl)};
}

Essay hard_essay(Rng& rng, const RowSpec& row) {
    const std::size_t total = static_cast<std::size_t>(rng.between(8, 12));
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

    const auto& behaviour_templates =
        row.category == Category::pet ? hard_behaviour_templates_pet() : hard_behaviour_templates_human();
    const std::string behaviour_sentence =
        fill_rule_tokens(render(rng.pick(behaviour_templates), row.name, row.pronouns), row);
    const std::string condition_sentence = render(row.condition->sentence, row.name, row.pronouns);
    const std::string link_sentence =
        fill_rule_tokens(render(rng.pick(hard_link_templates()), row.name, row.pronouns), row);

    std::vector<std::string> sentences(total);
    sentences[0] = intro_sentence(rng, row);
    sentences[behaviour_at] = behaviour_sentence;
    sentences[condition_at] = condition_sentence;
    sentences[link_at] = link_sentence;
    place_fillers(rng, row, pick_fillers(rng, row, total - 4), sentences);
    Essay essay{text::join(sentences, " "), {behaviour_sentence, condition_sentence, link_sentence}, sentences[0], {}};
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
    const std::vector<RowSpec> rows = build_specs(options.seed);
    const Rng essay_root = Rng(options.seed).fork(hard ? "conditional-facts/hard" : "conditional-facts/easy");

    MinHashDeduper deduper(k_dedup_threshold);
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
            essay = hard ? hard_essay(rng, row) : easy_essay(rng, row);
            ++candidates;
            if (deduper.offer(attempt == 0 ? pid : pid + "-retry" + std::to_string(attempt), essay.text))
                break;
        }
        const std::string message = add_user_session(scenario, essay.text);

        data::Probe probe;
        probe.id = pid;
        probe.kind = data::ProbeKind::yes_no;
        probe.question = row.question;
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
            fact.text = text::join(essay.rule_sentences, " ");
            fact.statements = essay.rule_sentences;
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
                      {"rule", row.rule},
                      {"pronoun", row.pronouns.subj}};
        if (row.category == Category::pet) probe.meta["species"] = row.species;
        scenario.probes.push_back(std::move(probe));
    }
    ask_all_after_last_session(scenario);
    scenario.meta["variant"] = hard ? "hard" : "easy";
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

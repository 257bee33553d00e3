// SPDX-License-Identifier: MIT
// Model generation, per dataset: the pools (lexicon/generation.json), what the code chooses for each
// row, the checks every reply must pass, and the release-format CSV row it becomes.
#include <memfail/embedded/generation_lexicon.hpp>
#include <memfail/core/hash.hpp>
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/lexicon_reader.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/model_generate_internal.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

namespace memfail::suites::memfail_suite::model_gen {

namespace {

// ---- The data file --------------------------------------------------------------------------

std::array<int, 2> range_of(LexiconReader& r, const json& obj, const char* key, const std::string& path) {
    const std::vector<int> v = r.ints(obj, key, path);
    if (v.size() != 2 || v[0] < 1 || v[0] > v[1]) {
        r.fail(path + "." + key, "must be [min, max] with 1 <= min <= max");
        return {1, 1};
    }
    return {v[0], v[1]};
}

std::vector<Named> named_list(LexiconReader& r, const json& obj, const char* key, const std::string& path) {
    std::vector<Named> out;
    const json& list = r.array(obj, key, path);
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = path + "." + key + "[" + std::to_string(i) + "]";
        if (!list[i].is_array() || list[i].size() != 2 || !list[i][0].is_string() || !list[i][1].is_string()) {
            r.fail(at, "must be [name, pronoun]");
            continue;
        }
        Named n{list[i][0].get<std::string>(), list[i][1].get<std::string>()};
        if (n.pronoun != "he" && n.pronoun != "she" && n.pronoun != "it") r.fail(at, "pronoun must be he, she or it");
        out.push_back(std::move(n));
    }
    return out;
}

Result<Lexicon> parse(const std::string& file, std::string_view content) {
    json doc;
    try {
        doc = json::parse(content);
    } catch (const json::exception& e) {
        return make_error(ErrorKind::invalid_input, std::string("not valid JSON: ") + e.what(), file);
    }
    LexiconReader r(file);
    Lexicon lex;
    lex.hash = content_hash(content);
    lex.version = r.str(doc, "version", "$");
    const json& schemas = r.member(doc, "schemas", "$");
    const json& prompts = r.member(doc, "prompts", "$");
    for (const char* key : {"conditional_facts_easy", "conditional_facts_hard", "coexisting_facts", "persona_retrieval",
                            "long_hop", "long_hop_distractors", "long_hop_audit"}) {
        const std::string path = std::string("$.prompts.") + key;
        const json& p = r.member(prompts, key, "$.prompts");
        Prompt prompt;
        prompt.schema_name = r.str(p, "schema", path);
        prompt.system = text::join(r.strings(p, "system", path), "\n");
        if (schemas.is_object() && schemas.contains(prompt.schema_name) && schemas[prompt.schema_name].is_object())
            prompt.schema = schemas[prompt.schema_name];
        else
            r.fail(path + ".schema", "names no schema of $.schemas");
        lex.prompts[key] = std::move(prompt);
    }

    const json& cond = r.member(doc, "conditional", "$");
    const json& groups = r.array(cond, "condition_groups", "$.conditional");
    std::vector<std::string> all_types;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const std::string path = "$.conditional.condition_groups[" + std::to_string(i) + "]";
        auto types = r.strings(groups[i], "types", path);
        all_types.insert(all_types.end(), types.begin(), types.end());
        lex.condition_groups.emplace_back(r.str(groups[i], "group", path), std::move(types));
    }
    // The paper's table, as the validator knows it: the two must agree.
    if (all_types != conditional::condition_types())
        r.fail("$.conditional.condition_groups", "must list the 32 condition types of the validator, in its order");
    lex.pet_condition_types = r.strings(cond, "pet_condition_types", "$.conditional");
    if (lex.pet_condition_types != conditional::observable_condition_types())
        r.fail("$.conditional.pet_condition_types", "must list the validator's 9 observable types, in its order");
    const json& shares = r.member(cond, "category_shares", "$.conditional");
    lex.share_person = shares.value("person", 0.0);
    lex.share_character = shares.value("character", 0.0);
    lex.easy_sentences = range_of(r, cond, "easy_sentences", "$.conditional");
    lex.hard_sentences = range_of(r, cond, "hard_sentences", "$.conditional");
    if (lex.easy_sentences[0] < 5 || lex.easy_sentences[1] > 8 || lex.hard_sentences[0] < 8 || lex.hard_sentences[1] > 12)
        r.fail("$.conditional", "essay lengths must stay within the validator's (Easy 5-8, Hard 8-12)");
    const json& entities = r.member(cond, "entities", "$.conditional");
    for (const char* category : {"person", "character", "pet"})
        lex.entities[category] = named_list(r, entities, category, "$.conditional.entities");

    const json& coex = r.member(doc, "coexisting", "$");
    lex.counts = range_of(r, coex, "counts", "$.coexisting");
    const json& cgroups = r.array(coex, "category_groups", "$.coexisting");
    for (std::size_t i = 0; i < cgroups.size(); ++i)
        for (auto& c : r.strings(cgroups[i], "categories", "$.coexisting.category_groups[" + std::to_string(i) + "]"))
            lex.categories.push_back(std::move(c));

    const json& persona = r.member(doc, "persona", "$");
    lex.persona_sentences = range_of(r, persona, "sentences", "$.persona");
    if (lex.persona_sentences[0] < 10 || lex.persona_sentences[1] > 15)
        r.fail("$.persona.sentences", "must stay within the validator's 10-15");
    lex.persona_names = named_list(r, persona, "entity_names", "$.persona");
    lex.distractor_names = r.strings(persona, "distractor_names", "$.persona");
    lex.flavors = r.strings(persona, "flavors", "$.persona");
    // Distractors are never stored people: no name of theirs is an entity's.
    std::set<std::string> entity_words;
    for (const auto& n : lex.persona_names)
        for (const auto& w : text::words(n.name)) entity_words.insert(w);
    for (const auto& d : lex.distractor_names)
        for (const auto& w : text::words(d))
            if (entity_words.count(w)) r.fail("$.persona.distractor_names", "'" + d + "' shares a name with an entity");
    if (lex.distractor_names.size() < 3) r.fail("$.persona.distractor_names", "needs at least 3 names");

    const json& hop = r.member(doc, "long_hop", "$");
    const std::vector<int> per = r.ints(hop, "chains_per_hops", "$.long_hop");
    if (per.size() == 3 && per[0] > 0 && per[1] > 0 && per[2] > 0)
        lex.chains_per_hops = {static_cast<std::size_t>(per[0]), static_cast<std::size_t>(per[1]),
                               static_cast<std::size_t>(per[2])};
    else
        r.fail("$.long_hop.chains_per_hops", "must be three positive counts (K = 1, 2, 3)");
    lex.named_share = hop.value("named_share", 0.4);
    lex.wave = static_cast<std::size_t>(std::max(1, hop.value("wave", 8)));
    lex.hop_names = r.strings(hop, "names", "$.long_hop");
    if (r.error()) return *r.error();
    return lex;
}

// ---- Small helpers ----------------------------------------------------------------------------

Error problem(std::string message) { return make_error(ErrorKind::invalid_output, std::move(message)); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string trimmed(const json& reply, const char* key) {
    const auto it = reply.find(key);
    return it != reply.end() && it->is_string() ? std::string(text::trim(it->get<std::string>())) : std::string();
}

std::vector<std::string> string_list(const json& reply, const char* key) {
    std::vector<std::string> out;
    const auto it = reply.find(key);
    if (it == reply.end() || !it->is_array()) return out;
    for (const auto& v : *it) out.push_back(v.is_string() ? std::string(text::trim(v.get<std::string>())) : "");
    return out;
}

// Every field a reply must fill, non-empty.
Result<void> require(const json& reply, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
        if (trimmed(reply, key).empty()) return problem(std::string(key) + " is empty");
    return {};
}

bool has(std::string_view text, std::string_view phrase) { return text::contains_phrase(text, phrase); }

// Names `name` or its possessive ("Yuki Tanaka's" normalises to "yuki tanakas").
bool names(std::string_view text, const std::string& name) { return has(text, name) || has(text, name + "'s"); }

std::string polarity(const std::string& answer) {
    const auto w = text::words(answer);
    return w.empty() || (w[0] != "yes" && w[0] != "no") ? std::string() : w[0];
}

std::string sentence_count_problem(const std::vector<std::string>& sentences, const ojson& range) {
    const auto lo = range[0].get<std::size_t>(), hi = range[1].get<std::size_t>();
    if (sentences.size() >= lo && sentences.size() <= hi) return {};
    return "the essay has " + std::to_string(sentences.size()) + " sentences; it needs " + std::to_string(lo) + " to " +
           std::to_string(hi);
}

std::string json_list(const std::vector<std::string>& items) { return json(items).dump(); }

// The question, answer and context a Conditional row shares in both variants.
Result<void> check_conditional_question(const ojson& plan, const json& reply, const std::string& condition) {
    const std::string entity = plan["entity"];
    const std::string question = trimmed(reply, "question");
    if (!names(question, entity)) return problem("the question does not name " + entity);
    if (has(question, condition)) return problem("the question repeats the condition phrase " + quoted(condition));
    const std::string met = plan["condition_met"];
    if (polarity(trimmed(reply, "ground_truth_answer")) != met)
        return problem(std::string("ground_truth_answer must start with ") + (met == "yes" ? "Yes" : "No") +
                       " (condition_met is " + met + ")");
    return {};
}

std::vector<std::string> conditional_cells(const ojson& plan, const std::string& behavior, const std::string& condition,
                                           const std::string& essay, const json& reply) {
    auto str = [&](const char* key) { return plan[key].get<std::string>(); };
    return {str("entity"),         str("entity_category"),      behavior,
            str("condition_type"), condition,                   json_list({essay}),
            trimmed(reply, "question"), trimmed(reply, "question_context"), str("condition_met"),
            trimmed(reply, "ground_truth_answer")};
}

// The head may be named as written or by its last word of 3+ letters (or that word's singular),
// as the Long-Hop validator accepts it.
bool names_head(const std::string& question, const std::string& head) {
    if (has(question, head)) return true;
    const auto w = text::words(head);
    for (auto it = w.rbegin(); it != w.rend(); ++it)
        if (it->size() >= 3) {
            const bool plural = it->size() > 3 && it->back() == 's' && (*it)[it->size() - 2] != 's';
            return has(question, *it) || (plural && has(question, it->substr(0, it->size() - 1)));
        }
    return false;
}

bool first_person(const std::string& s) {
    static const std::set<std::string> k_words = {"i", "me", "my", "mine", "myself", "im", "ive"};
    for (const auto& w : text::words(s))
        if (k_words.count(w)) return true;
    return false;
}

std::vector<char> balanced(Rng& rng, std::size_t n, std::size_t trues) {
    std::vector<char> out(n, 0);
    for (std::size_t i = 0; i < trues && i < n; ++i) out[i] = 1;
    rng.shuffle(out);
    return out;
}

std::string zero_padded(std::size_t n) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%03zu", n);
    return buffer;
}

// ---- Plans ----------------------------------------------------------------------------------

std::size_t size_or(std::size_t rows, std::size_t paper) { return rows == 0 ? paper : rows; }

// A condition type for an entity of `category` (uniform over the paper's 32; a pet only the
// observable ones) and the group it belongs to.
std::pair<std::string, std::string> draw_condition_type(const Lexicon& lex, const std::string& category, Rng& rng) {
    std::string type;
    if (category == "pet") {
        type = rng.pick(lex.pet_condition_types);
    } else {
        std::vector<std::string> all;
        for (const auto& [group, types] : lex.condition_groups) all.insert(all.end(), types.begin(), types.end());
        type = rng.pick(all);
    }
    std::string group;
    for (const auto& [g, types] : lex.condition_groups)
        if (std::find(types.begin(), types.end(), type) != types.end()) group = g;
    return {type, group};
}

std::vector<Item> plan_conditional(const GenerateModelOptions& options) {
    const Lexicon& lex = lexicon();
    Rng rng = Rng(options.seed).fork("model/conditional");
    const std::size_t n = size_or(options.rows, 100);
    // Names taken in a shuffled order per category, starting over when a pool runs out.
    std::map<std::string, std::vector<std::size_t>> order;
    std::map<std::string, std::size_t> next;
    const std::vector<char> met = balanced(rng, n, n / 2);
    std::vector<Item> items;
    for (std::size_t i = 0; i < n; ++i) {
        const double u = rng.unit();
        const std::string category =
            u < lex.share_person ? "person" : (u < lex.share_person + lex.share_character ? "character" : "pet");
        const auto& pool = lex.entities.at(category);
        auto& o = order[category];
        if (next[category] % pool.size() == 0) {
            o.resize(pool.size());
            for (std::size_t k = 0; k < o.size(); ++k) o[k] = k;
            rng.shuffle(o);
        }
        const Named& entity = pool[o[next[category]++ % pool.size()]];
        const auto [type, group] = draw_condition_type(lex, category, rng);
        Item item;
        item.row = i + 1;
        item.plan = {{"dataset", "conditional_facts_easy"},
                     {"row", item.row},
                     {"entity", entity.name},
                     {"entity_category", category},
                     {"pronoun", entity.pronoun},
                     {"condition_type", type},
                     {"condition_group", group},
                     {"condition_met", met[i] ? "yes" : "no"},
                     {"sentences", lex.easy_sentences}};
        items.push_back(std::move(item));
    }
    return items;
}

std::vector<Item> plan_coexisting(const GenerateModelOptions& options) {
    const Lexicon& lex = lexicon();
    Rng rng = Rng(options.seed).fork("model/coexisting");
    std::vector<std::string> categories = lex.categories;
    rng.shuffle(categories);
    const std::size_t n = std::min(size_or(options.rows, categories.size()), categories.size());
    std::vector<Item> items;
    for (std::size_t i = 0; i < n; ++i) {
        Item item;
        item.row = i + 1;
        item.plan = {{"dataset", "coexisting_facts"},
                     {"row", item.row},
                     {"category", categories[i]},
                     {"count", rng.between(lex.counts[0], lex.counts[1])}};
        items.push_back(std::move(item));
    }
    return items;
}

std::vector<Item> plan_persona(const GenerateModelOptions& options) {
    const Lexicon& lex = lexicon();
    Rng rng = Rng(options.seed).fork("model/persona");
    const std::size_t n = size_or(options.rows, 100);
    // Half of all slots are misleading, spread at random over the rows.
    const std::vector<char> misleading = balanced(rng, 3 * n, 3 * n / 2);
    std::vector<Item> items;
    for (std::size_t i = 0; i < n; ++i) {
        // Entities with replacement from the first 30 names, as the paper draws them.
        const Named& entity = lex.persona_names[rng.below(std::min<std::size_t>(30, lex.persona_names.size()))];
        const std::string& flavor = rng.pick(lex.flavors);
        const auto distractors = rng.sample_indices(lex.distractor_names.size(), 3);
        ojson slots = ojson::array();
        for (std::size_t s = 0; s < 3; ++s) {
            if (misleading[3 * i + s])
                slots.push_back({{"misleading", true}, {"distractor", lex.distractor_names[distractors[s]]}});
            else
                slots.push_back({{"misleading", false}});
        }
        Item item;
        item.row = i + 1;
        item.plan = {{"dataset", "persona_retrieval"}, {"row", item.row},      {"entity", entity.name},
                     {"pronoun", entity.pronoun},      {"flavor", flavor},     {"slots", slots},
                     {"sentences", lex.persona_sentences}};
        items.push_back(std::move(item));
    }
    return items;
}

std::vector<Item> plan_long_hop(const GenerateModelOptions& options) {
    const Lexicon& lex = lexicon();
    Rng rng = Rng(options.seed).fork("model/long_hop");
    std::array<std::size_t, 3> per = lex.chains_per_hops;
    if (options.rows > 0)
        for (std::size_t k = 0; k < 3; ++k) per[k] = options.rows / 3 + (k < options.rows % 3 ? 1 : 0);
    std::vector<std::string> names = lex.hop_names;
    rng.shuffle(names);
    std::size_t named_so_far = 0;
    std::vector<Item> items;
    for (std::size_t k = 0; k < 3; ++k) {
        // The named share is exact per hop count, as in the template generator.
        const auto named_count = static_cast<std::size_t>(std::lround(lex.named_share * static_cast<double>(per[k])));
        std::vector<char> named = balanced(rng, per[k], named_count);
        for (std::size_t c = 0; c < per[k]; ++c) {
            Item item;
            item.row = items.size() + 1;
            const std::string name = named[c] ? names[named_so_far++ % names.size()] : std::string();
            item.plan = {{"dataset", "long_hop"},
                         {"row", item.row},
                         {"hop_count", k + 1},
                         {"voice", named[c] ? "named" : "first_person"},
                         {"name", name}};
            item.context = {{"id", "longhop-" + std::to_string(k + 1) + "hop-" + zero_padded(c + 1)}};
            items.push_back(std::move(item));
        }
    }
    return items;
}

}  // namespace

const Lexicon& lexicon() {
    static const Lexicon k_lexicon = [] {
        const auto* f = embedded::generation_lexicon::find("generation.json");
        MF_ASSERT(f, "generation.json is embedded in memfail_suites");
        Result<Lexicon> parsed = parse("generation.json", f->content);
        if (!parsed) {
            const std::string why = "the generation data file is invalid: " + parsed.error().describe();
            assert_fail("generation lexicon", why.c_str(), __FILE__, __LINE__);
        }
        return std::move(parsed).value();
    }();
    return k_lexicon;
}

std::vector<Item> plan_items(const std::string& dataset, const GenerateModelOptions& options) {
    if (dataset == "conditional_facts_easy" || dataset == "conditional_facts_hard") return plan_conditional(options);
    if (dataset == "coexisting_facts") return plan_coexisting(options);
    if (dataset == "persona_retrieval") return plan_persona(options);
    if (dataset == "long_hop") return plan_long_hop(options);
    return {};
}

Item hard_item(const Item& easy, const json& easy_kept) {
    const ojson& p = easy.plan;
    Item item;
    item.row = easy.row;
    item.plan = {{"dataset", "conditional_facts_hard"},
                 {"row", easy.row},
                 {"entity", p["entity"]},
                 {"entity_category", p["entity_category"]},
                 {"pronoun", p["pronoun"]},
                 {"condition_type", p["condition_type"]},
                 {"condition_group", p["condition_group"]},
                 {"condition_met", p["condition_met"]},
                 {"behavior", easy_kept.at("behavior")},
                 {"condition", easy_kept.at("condition")},
                 {"sentences", lexicon().hard_sentences}};
    return item;
}

Item distractor_item(const Item& chain, const json& chain_kept, std::uint64_t seed) {
    Item item;
    item.row = chain.row;
    item.plan = {{"dataset", "long_hop"},
                 {"row", chain.row},
                 {"answer", chain_kept.at("anchors").back()},
                 {"anchors", chain_kept.at("anchors")},
                 {"facts", chain_kept.at("facts")}};
    item.context = chain_kept;
    item.context["id"] = chain.context.at("id");
    item.context["hop_count"] = chain.plan.at("hop_count");
    item.context["seed"] = seed;
    return item;
}

// ---- Top-up ---------------------------------------------------------------------------------

std::string bucket_of(const std::string& dataset, const Item& item) {
    const ojson& p = item.plan;
    if (dataset == "conditional_facts_easy" || dataset == "conditional_facts_hard")
        return "condition_met " + p["condition_met"].get<std::string>() + ", " + p["entity_category"].get<std::string>();
    if (dataset == "coexisting_facts") return "count " + std::to_string(p["count"].get<std::size_t>());
    if (dataset == "persona_retrieval") {
        std::string slots;
        for (const auto& slot : p["slots"]) slots += slot["misleading"].get<bool>() ? 'M' : 'D';
        return "slots " + slots;
    }
    if (dataset == "long_hop")
        return "K=" + std::to_string(p["hop_count"].get<std::size_t>()) + " " + p["voice"].get<std::string>();
    return {};
}

std::string held_by(const std::string& dataset, const Item& item) {
    if (dataset == "coexisting_facts") return item.plan["category"].get<std::string>();
    if (dataset == "long_hop") return item.plan["name"].get<std::string>();
    return {};
}

std::optional<Item> top_up_item(const std::string& dataset, const GenerateModelOptions& options,
                                 const std::vector<Item>& planned, const std::set<std::string>& held, const Item& like) {
    const Lexicon& lex = lexicon();
    const std::size_t row = planned.size() + 1;
    // Every top-up row draws from its own stream: what it gets depends only on the seed, its row
    // number and its bucket.
    Rng rng = Rng(options.seed).fork("model/" + dataset + "/top-up/" + std::to_string(row));
    Item item;
    item.row = row;
    item.plan = like.plan;
    item.plan["row"] = row;
    if (dataset == "conditional_facts_easy" || dataset == "conditional_facts_hard") {
        // The bucket's condition_met and entity category; a new entity and condition type.
        const std::string category = like.plan["entity_category"];
        const Named& entity = rng.pick(lex.entities.at(category));
        const auto [type, group] = draw_condition_type(lex, category, rng);
        item.plan["entity"] = entity.name;
        item.plan["pronoun"] = entity.pronoun;
        item.plan["condition_type"] = type;
        item.plan["condition_group"] = group;
        return item;
    }
    if (dataset == "coexisting_facts") {
        // The bucket's count; the first category, in the plan's shuffled order, that no kept or
        // pending row holds (a dropped row's category is free again). None left: no top-up.
        std::vector<std::string> categories = lex.categories;
        Rng(options.seed).fork("model/coexisting").shuffle(categories);
        for (const auto& c : categories)
            if (!held.count(c)) {
                item.plan["category"] = c;
                return item;
            }
        return std::nullopt;
    }
    if (dataset == "persona_retrieval") {
        // The bucket's misleading slots; a new entity, flavour and distractors.
        const Named& entity = lex.persona_names[rng.below(std::min<std::size_t>(30, lex.persona_names.size()))];
        const auto distractors = rng.sample_indices(lex.distractor_names.size(), 3);
        item.plan["entity"] = entity.name;
        item.plan["pronoun"] = entity.pronoun;
        item.plan["flavor"] = rng.pick(lex.flavors);
        for (std::size_t s = 0; s < item.plan["slots"].size(); ++s)
            if (item.plan["slots"][s]["misleading"].get<bool>())
                item.plan["slots"][s]["distractor"] = lex.distractor_names[distractors[s]];
        return item;
    }
    if (dataset == "long_hop") {
        // The bucket's hop count and voice; a named chain gets the first name, in the plan's
        // shuffled order, that no kept or pending chain holds (else one at random).
        const auto k = like.plan["hop_count"].get<std::size_t>();
        if (like.plan["voice"] == "named") {
            std::vector<std::string> names = lex.hop_names;
            Rng(options.seed).fork("model/long_hop").shuffle(names);
            std::string name;
            for (const auto& n : names)
                if (!held.count(n)) {
                    name = n;
                    break;
                }
            item.plan["name"] = name.empty() ? rng.pick(names) : name;
        }
        std::size_t of_k = 0;
        for (const auto& p : planned) of_k += p.plan["hop_count"].get<std::size_t>() == k;
        item.context = {{"id", "longhop-" + std::to_string(k) + "hop-" + zero_padded(of_k + 1)}};
        return item;
    }
    return std::nullopt;
}

std::string chain_summary(const json& chain_kept) {
    const json& anchors = chain_kept.at("anchors");
    return anchors.front().get<std::string>() + " -> " + anchors.back().get<std::string>();
}

// ---- Checks ---------------------------------------------------------------------------------

Result<Built> check_easy(const Item& item, const json& reply) {
    const ojson& plan = item.plan;
    MF_TRY(require(reply, {"behavior", "condition", "essay", "question", "question_context", "ground_truth_answer"}));
    const std::string entity = plan["entity"];
    const std::string behavior = trimmed(reply, "behavior"), condition = trimmed(reply, "condition");
    const std::string essay = trimmed(reply, "essay");
    if (names(behavior, entity)) return problem("the behavior names the entity; give it as a verb phrase alone");
    static const std::set<std::string> k_openers = {"when",  "after", "before", "during", "on",    "while",
                                                    "in",    "at",    "once",   "as",     "within", "whenever"};
    const auto condition_words = text::words(condition);
    if (condition_words.empty() || !k_openers.count(condition_words[0]))
        return problem("the condition " + quoted(condition) + " must start with when, after, before, during, on, while, in or at");
    const auto sentences = text::split_sentences(essay);
    if (auto p = sentence_count_problem(sentences, plan["sentences"]); !p.empty()) return problem(p);
    if (!names(sentences.front(), entity)) return problem("the essay's first sentence does not name " + entity);
    if (!has(essay, behavior)) return problem("the essay lacks the behavior phrase " + quoted(behavior));
    if (!has(essay, condition)) return problem("the essay lacks the condition phrase " + quoted(condition));
    std::vector<std::size_t> rule;
    for (std::size_t i = 0; i < sentences.size(); ++i)
        if (has(sentences[i], behavior) && has(sentences[i], condition)) rule.push_back(i);
    if (rule.size() != 1)
        return problem(rule.empty() ? "no sentence holds both the behavior and the condition phrase"
                                    : "several sentences state the rule; exactly one must");
    if (!has(sentences[rule[0]], "only"))
        return problem("the rule sentence must join the behavior and the condition with 'only'");
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        if (i == rule[0]) continue;
        const std::string c = conditional::find_forbidden_connective(sentences[i]);
        if (!c.empty())
            return problem("sentence " + std::to_string(i + 1) + " adds a second conditional ('" + c +
                           "'); every sentence but the rule is unconditional");
    }
    MF_TRY(check_conditional_question(plan, reply, condition));
    Built b;
    b.cells = conditional_cells(plan, behavior, condition, essay, reply);
    b.dedup = {essay};
    b.unique = {{"behavior", behavior}, {"condition", condition}, {"question", trimmed(reply, "question")}};
    b.kept = {{"behavior", behavior}, {"condition", condition}};
    return b;
}

Result<Built> check_hard(const Item& item, const json& reply) {
    const ojson& plan = item.plan;
    MF_TRY(require(reply, {"behavior_sentence", "condition_sentence", "link_sentence", "essay", "question",
                           "question_context", "ground_truth_answer"}));
    const std::string entity = plan["entity"], behavior = plan["behavior"], condition = plan["condition"];
    const std::string essay = trimmed(reply, "essay");
    const std::string parts[3] = {trimmed(reply, "behavior_sentence"), trimmed(reply, "condition_sentence"),
                                  trimmed(reply, "link_sentence")};
    const char* part_names[3] = {"behavior_sentence", "condition_sentence", "link_sentence"};
    if (!has(parts[0], behavior)) return problem("the behavior_sentence lacks the behavior phrase " + quoted(behavior));
    if (has(parts[1], behavior)) return problem("the condition_sentence names the behavior");
    const auto sentences = text::split_sentences(essay);
    if (auto p = sentence_count_problem(sentences, plan["sentences"]); !p.empty()) return problem(p);
    if (!names(sentences.front(), entity)) return problem("the essay's first sentence does not name " + entity);
    const std::string connective = conditional::find_forbidden_connective(essay);
    if (!connective.empty()) return problem("the essay contains the conditional connective '" + connective + "'");
    if (has(essay, condition)) return problem("the essay spells out the condition " + quoted(condition));
    std::size_t at[3] = {0, 0, 0};
    for (std::size_t k = 0; k < 3; ++k) {
        const std::string want = text::normalize(parts[k]);
        const auto found = std::find_if(sentences.begin(), sentences.end(),
                                        [&](const std::string& s) { return text::normalize(s) == want; });
        if (found == sentences.end())
            return problem(std::string("the essay does not contain the ") + part_names[k] + " word for word");
        at[k] = static_cast<std::size_t>(found - sentences.begin());
    }
    for (std::size_t a = 0; a < 3; ++a)
        for (std::size_t b = a + 1; b < 3; ++b)
            if ((at[a] > at[b] ? at[a] - at[b] : at[b] - at[a]) < 2)
                return problem(std::string("the ") + part_names[a] + " and the " + part_names[b] +
                               " are adjacent; put another sentence between them");
    MF_TRY(check_conditional_question(plan, reply, condition));
    Built b;
    b.cells = conditional_cells(plan, behavior, condition, essay, reply);
    b.dedup = {essay};
    b.unique = {{"question", trimmed(reply, "question")}};
    return b;
}

Result<Built> check_coexisting(const Item& item, const json& reply) {
    const ojson& plan = item.plan;
    MF_TRY(require(reply, {"question", "ground_truth_answer"}));
    const auto count = plan["count"].get<std::size_t>();
    const auto prefs = string_list(reply, "preferences");
    const auto facts = string_list(reply, "preference_facts");
    if (prefs.size() != count)
        return problem("preferences has " + std::to_string(prefs.size()) + " items; the plan asks for " + std::to_string(count));
    if (facts.size() != count)
        return problem("preference_facts has " + std::to_string(facts.size()) + " statements; one per preference (" +
                       std::to_string(count) + ")");
    for (std::size_t i = 0; i < count; ++i) {
        if (text::normalize(prefs[i]).empty()) return problem("preference " + std::to_string(i + 1) + " is empty");
        for (std::size_t j = 0; j < count; ++j)
            if (i != j && has(prefs[i], prefs[j]))
                return problem("preference " + quoted(prefs[i]) + " contains preference " + quoted(prefs[j]));
        if (!has(facts[i], prefs[i])) return problem("statement " + std::to_string(i + 1) + " does not name " + quoted(prefs[i]));
        for (std::size_t j = 0; j < count; ++j)
            if (i != j && has(facts[i], prefs[j]))
                return problem("statement " + std::to_string(i + 1) + " also names " + quoted(prefs[j]));
    }
    const std::string question = trimmed(reply, "question"), answer = trimmed(reply, "ground_truth_answer");
    for (const auto& p : prefs) {
        if (has(question, p)) return problem("the question names the preference " + quoted(p));
        if (!has(answer, p)) return problem("ground_truth_answer does not list " + quoted(p));
    }
    Built b;
    b.cells = {plan["category"].get<std::string>(), json_list(prefs), json_list(facts), question, answer};
    b.dedup = {question};
    return b;
}

Result<Built> check_persona(const Item& item, const json& reply) {
    const Lexicon& lex = lexicon();
    const ojson& plan = item.plan;
    MF_TRY(require(reply, {"essay"}));
    const std::string entity = plan["entity"];
    const std::string essay = trimmed(reply, "essay");
    const auto sentences = text::split_sentences(essay);
    if (auto p = sentence_count_problem(sentences, plan["sentences"]); !p.empty()) return problem(p);
    if (!names(sentences.front(), entity)) return problem("the essay's first sentence does not name " + entity);
    for (const auto& d : lex.distractor_names)
        if (names(essay, d)) return problem("the essay names " + d + ", who must stay unknown");
    const json& questions = reply.at("questions");
    const ojson& slots = plan["slots"];
    if (questions.size() != slots.size())
        return problem("questions has " + std::to_string(questions.size()) + " items; one per slot (" +
                       std::to_string(slots.size()) + ")");
    json cells = json::array();
    for (std::size_t s = 0; s < slots.size(); ++s) {
        const json& q = questions[s];
        const std::string at = "question " + std::to_string(s + 1);
        const std::string text_ = trimmed(q, "text"), answer = trimmed(q, "ground_truth_answer");
        if (text_.empty() || answer.empty()) return problem(at + " has an empty text or ground_truth_answer");
        const bool misleading = slots[s]["misleading"].get<bool>();
        if (q.at("is_misleading").get<bool>() != misleading)
            return problem(at + std::string(" must be ") + (misleading ? "misleading" : "direct") + " (is_misleading " +
                           (misleading ? "true" : "false") + ")");
        if (misleading) {
            const std::string distractor = slots[s]["distractor"];
            if (trimmed(q, "distractor") != distractor) return problem(at + ": distractor must be " + quoted(distractor));
            if (!names(text_, distractor)) return problem(at + " does not name its distractor " + distractor);
            for (const auto& n : lex.persona_names)
                if (names(text_, n.name)) return problem(at + " is misleading but names " + n.name + ", a stored person");
            const std::string expected = "I don't have information about " + distractor + ".";
            if (text::normalize(answer) != text::normalize(expected))
                return problem(at + ": ground_truth_answer must be exactly \"" + expected + "\"");
            cells.push_back({{"text", text_}, {"is_misleading", true}, {"distractor", distractor}, {"ground_truth_answer", expected}});
        } else {
            if (!trimmed(q, "distractor").empty()) return problem(at + " is direct; its distractor must be empty");
            if (!names(text_, entity)) return problem(at + " does not name " + entity);
            if (longest_word_run(answer, sentences, 3).empty())
                return problem(at + ": ground_truth_answer shares no phrase of three words with the essay");
            cells.push_back({{"text", text_}, {"is_misleading", false}, {"distractor", nullptr}, {"ground_truth_answer", answer}});
        }
    }
    Built b;
    b.cells = {entity, json_list({essay}), cells.dump()};
    b.dedup = {essay};
    return b;
}

Result<Built> check_chain(const Item& item, const json& reply) {
    const ojson& plan = item.plan;
    MF_TRY(require(reply, {"graded_question", "ground_truth_answer"}));
    const auto k = plan["hop_count"].get<std::size_t>();
    const auto anchors = string_list(reply, "anchors");
    const auto facts = string_list(reply, "facts");
    if (anchors.size() != k + 2)
        return problem("a " + std::to_string(k) + "-hop chain has " + std::to_string(k + 2) + " anchors; the reply has " +
                       std::to_string(anchors.size()));
    if (facts.size() != k + 1)
        return problem("a " + std::to_string(k) + "-hop chain has " + std::to_string(k + 1) + " facts; the reply has " +
                       std::to_string(facts.size()));
    for (std::size_t a = 0; a < anchors.size(); ++a) {
        if (text::normalize(anchors[a]).empty()) return problem("anchor " + std::to_string(a + 1) + " is empty");
        for (std::size_t b = 0; b < a; ++b)
            if (text::normalize(anchors[a]) == text::normalize(anchors[b]))
                return problem("anchor " + std::to_string(a + 1) + " repeats anchor " + std::to_string(b + 1));
    }
    const std::string voice = plan["voice"], name = plan["name"];
    for (std::size_t f = 0; f < facts.size(); ++f) {
        const std::string at = "fact " + std::to_string(f + 1);
        for (std::size_t a = 0; a < anchors.size(); ++a) {
            const bool borders = a == f || a == f + 1;
            if (borders && !has(facts[f], anchors[a]))
                return problem(at + " lacks anchor " + std::to_string(a + 1) + " " + quoted(anchors[a]));
            // The head may recur (a named chain's person is in every fact).
            if (!borders && a > 0 && has(facts[f], anchors[a]))
                return problem(at + " holds anchor " + std::to_string(a + 1) + " " + quoted(anchors[a]) +
                               ", which belongs only to the facts beside it");
        }
        if (voice == "named" && !names(facts[f], name)) return problem(at + " does not name " + name);
        if (voice == "first_person" && !first_person(facts[f])) return problem(at + " is not in the first person (I, me, my)");
    }
    const std::string question = trimmed(reply, "graded_question"), answer = trimmed(reply, "ground_truth_answer");
    if (!names_head(question, anchors.front())) return problem("the question does not name the head " + quoted(anchors.front()));
    for (std::size_t a = 1; a < anchors.size(); ++a)
        if (has(question, anchors[a])) return problem("the question names anchor " + std::to_string(a + 1) + " " + quoted(anchors[a]));
    if (!has(answer, anchors.back()) && !has(anchors.back(), answer))
        return problem("ground_truth_answer must be the terminal anchor " + quoted(anchors.back()));
    Built b;
    b.dedup = facts;
    b.raw = {item.context.at("id").get<std::string>(), std::to_string(k)};
    for (std::size_t f = 0; f < 4; ++f) b.raw.push_back(f < facts.size() ? facts[f] : "");
    for (std::size_t a = 0; a < 5; ++a) b.raw.push_back(a < anchors.size() ? anchors[a] : "");
    b.raw.insert(b.raw.end(), {question, answer, "", "", "", "", "", ""});
    for (const auto& a : anchors) b.unique.emplace_back("anchor", a);
    b.kept = {{"anchors", anchors}, {"facts", facts}, {"question", question}};
    return b;
}

Result<Built> check_audit(const Item& item, const json& reply) {
    const json& fixed = item.context.at("fixed");
    const json& fresh = item.context.at("new");
    const json& drops = reply.at("to_drop");
    if (!drops.is_array()) return problem("to_drop must be a list");
    json kept = json::array();
    std::set<std::string> seen;
    for (const json& d : drops) {
        const std::string id = trimmed(d, "id"), reason = trimmed(d, "reason");
        if (std::find(fixed.begin(), fixed.end(), id) != fixed.end())
            return problem("chain " + quoted(id) + " is fixed; drop the other chain of the pair instead");
        if (std::find(fresh.begin(), fresh.end(), id) == fresh.end()) return problem("no chain of the plan has the id " + quoted(id));
        if (reason.empty()) return problem("the drop of " + quoted(id) + " gives no reason");
        if (seen.insert(id).second) kept.push_back({{"id", id}, {"reason", reason}});
    }
    Built b;
    b.kept = {{"to_drop", kept}};
    return b;
}

Result<Built> check_distractors(const Item& item, const json& reply) {
    const json& chain = item.context;
    const auto anchors = chain.at("anchors").get<std::vector<std::string>>();
    const auto facts = chain.at("facts").get<std::vector<std::string>>();
    const std::string answer = anchors.back();
    const auto distractors = string_list(reply, "distractors");
    if (distractors.size() != 4) return problem("distractors has " + std::to_string(distractors.size()) + " items; it needs 4");
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string& d = distractors[i];
        if (text::normalize(d).empty()) return problem("distractor " + std::to_string(i + 1) + " is empty");
        for (std::size_t j = 0; j < i; ++j)
            if (text::normalize(d) == text::normalize(distractors[j])) return problem("distractor " + quoted(d) + " is repeated");
        for (const auto& a : anchors)
            if (has(d, a) || has(a, d))
                return problem("distractor " + quoted(d) + (a == answer ? " overlaps the answer " : " overlaps the anchor ") + quoted(a));
        for (std::size_t f = 0; f < facts.size(); ++f)
            if (has(facts[f], d)) return problem("distractor " + quoted(d) + " appears in fact " + std::to_string(f + 1));
    }
    std::vector<std::string> choices = distractors;
    choices.push_back(answer);
    Rng(chain.at("seed").get<std::uint64_t>()).fork("model/long_hop/choices/" + std::to_string(item.row)).shuffle(choices);
    const auto correct = static_cast<std::size_t>(std::find(choices.begin(), choices.end(), answer) - choices.begin());
    std::string question = chain.at("question").get<std::string>() + "\n\nOptions:";
    for (std::size_t c = 0; c < choices.size(); ++c) question += "\n" + std::string(1, static_cast<char>('A' + c)) + ". " + choices[c];
    Built b;
    b.cells = {chain.at("id").get<std::string>(), std::to_string(chain.at("hop_count").get<std::size_t>())};
    for (std::size_t f = 0; f < 4; ++f) b.cells.push_back(f < facts.size() ? facts[f] : "");
    for (std::size_t a = 0; a < 5; ++a) b.cells.push_back(a < anchors.size() ? anchors[a] : "");
    b.cells.push_back(question);
    b.cells.push_back(answer);
    for (const auto& c : choices) b.cells.push_back(c);
    b.cells.push_back(std::string(1, static_cast<char>('A' + correct)));
    return b;
}

// ---- CSV ------------------------------------------------------------------------------------

const std::vector<std::string>& csv_columns(const std::string& dataset) {
    static const std::vector<std::string> k_conditional = {
        "entity", "entity_category", "behavior", "condition_type", "condition", "entity_facts", "question",
        "question_context", "condition_met", "ground_truth_answer"};
    static const std::vector<std::string> k_coexisting = {"preference_category", "preferences", "preference_facts",
                                                          "question", "ground_truth_answer"};
    static const std::vector<std::string> k_persona = {"entity", "entity_facts", "questions"};
    static const std::vector<std::string> k_long_hop = {
        "id",      "hop_count", "fact_1",  "fact_2",  "fact_3",          "fact_4",              "chain_1",
        "chain_2", "chain_3",   "chain_4", "chain_5", "graded_question", "ground_truth_answer", "choice_a",
        "choice_b", "choice_c", "choice_d", "choice_e", "correct_choice"};
    if (dataset == "coexisting_facts") return k_coexisting;
    if (dataset == "persona_retrieval") return k_persona;
    if (dataset == "long_hop") return k_long_hop;
    return k_conditional;
}

std::string csv_line(const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i) out += ',';
        const std::string& c = cells[i];
        if (c.find_first_of(",\"\r\n") == std::string::npos) {
            out += c;
            continue;
        }
        out += '"';
        for (char ch : c) {
            if (ch == '"') out += '"';
            out += ch;
        }
        out += '"';
    }
    return out + "\n";
}

}  // namespace memfail::suites::memfail_suite::model_gen

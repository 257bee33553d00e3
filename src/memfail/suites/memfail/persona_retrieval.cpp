// SPDX-License-Identifier: MIT
// Persona-Retrieval generator: 100 short narratives about people, each with 4-5 idiosyncratic facts
// woven among sentences about the person's work and pastime, and three probes per essay that either
// ask about the essay's person or, misleadingly, about a distractor the memory has never heard of.
//
// The traits that make it as hard as the paper's release (GenerateOptions::persona): names are drawn
// with replacement from a small pool, so several essays share a name; the person is named in the
// opening sentence and then mostly called by pronoun or role, so a fact's sentence often does not
// say whom it is about; some facts run over two sentences; and direct questions ask about a
// situation (a dinner, a gift, a trip) without giving away the detail that answers them.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/persona_lexicon.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <vector>

namespace memfail::suites::memfail_suite {

namespace {

constexpr const char* k_dataset = "persona_retrieval";
constexpr const char* k_prefix = "per";
constexpr std::size_t k_rows = 100;
// Distractor names a file needs at least: a row asks up to three misleading questions, each about
// another name, and no question may repeat in the file.
constexpr std::size_t k_min_distractors = 40;
constexpr std::size_t k_probes_per_row = 3;
constexpr double k_misleading_share = 0.5;
constexpr double k_dedup_threshold = 0.7;
constexpr int k_max_essay_attempts = 20;
constexpr int k_max_fact_attempts = 12;
constexpr double k_role_share = 0.3;  // of the facts and fillers not naming the person: by role

// Cycles through 0..size-1 in freshly shuffled rounds, so pool items are used evenly: no item comes
// back while one of the round is still undrawn. An item drawn but not used (it contradicted the
// essay, its sentence was not fresh, its essay was a near-duplicate) is put back and drawn next, so
// a skip costs no item its turn: a fact pool at least as large as its use gives every essay its own
// instance, and a direct answer is found in one essay only (`datasets audit`, shared_answers).
class Deck {
public:
    Deck(std::size_t size, Rng& rng) : m_size(size), m_rng(rng) {}
    std::size_t draw() {
        if (m_next == m_order.size()) {
            m_order.resize(m_size);
            for (std::size_t i = 0; i < m_size; ++i) m_order[i] = i;
            m_rng.shuffle(m_order);
            m_next = 0;
        }
        return m_order[m_next++];
    }
    // Returns drawn items (in the order drawn) to the front of the round.
    void put_back(const std::vector<std::size_t>& items) {
        m_order.insert(m_order.begin() + static_cast<std::ptrdiff_t>(m_next), items.begin(), items.end());
    }

private:
    std::size_t m_size;
    Rng& m_rng;
    std::vector<std::size_t> m_order;
    std::size_t m_next = 0;
};

struct ChosenFact {
    const persona::FactType* type = nullptr;
    const persona::FactInstance* instance = nullptr;
    std::size_t type_index = 0;      // in the lexicon's fact_types
    std::size_t instance_index = 0;  // in the type's instances
    std::vector<std::string> sentences;  // one, or two (the second gives the reason or detail)
    persona::Reference reference = persona::Reference::pronoun;
    std::vector<std::string> written;    // the sentences before their openers were varied
};

struct Essay {
    std::vector<std::string> sentences;  // sentences[0] names the person in full
    std::string text;
    std::vector<ChosenFact> facts;
    std::size_t flavor = 0;
};

// What earlier rows fixed: sentences already written (so no fact sentence repeats across essays and
// a sentence holds only its own essay's fact), and per name the flavours and fact types used.
struct History {
    std::set<std::string> fact_sentences;
    std::map<std::string, std::set<std::size_t>> flavors_of_name;
    std::map<std::string, std::set<std::string>> types_of_name;   // present in the name's essays
    std::map<std::string, std::set<std::string>> asked_of_name;   // asked directly of the name
};

bool contradicts(const persona::FactInstance& candidate, const persona::Flavor& flavor,
                 const std::vector<ChosenFact>& chosen) {
    if (std::find(flavor.excludes.begin(), flavor.excludes.end(), candidate.key) != flavor.excludes.end())
        return true;
    if (candidate.tag.empty()) return false;
    return std::any_of(chosen.begin(), chosen.end(),
                       [&](const ChosenFact& c) { return c.instance->tag == candidate.tag; });
}

persona::Reference draw_reference(Rng& rng, double pronoun_share) {
    if (!rng.chance(pronoun_share)) return persona::Reference::name;
    return rng.chance(k_role_share) ? persona::Reference::role : persona::Reference::pronoun;
}

Essay compose_essay(const persona::PersonName& person, const PersonaSettings& settings, Rng& rng, Deck& flavor_deck,
                    std::vector<Deck>& fact_decks, std::vector<Deck>& filler_decks, const History& history) {
    const persona::Lexicon& lex = persona::lexicon();
    const auto& types = lex.fact_types;
    const std::string name = person.full();

    // A flavour this name has not had yet: two essays about one name are about two different people.
    Essay essay;
    const auto used_flavors = history.flavors_of_name.find(name);
    essay.flavor = flavor_deck.draw();
    for (std::size_t tries = 0; tries < 2 * lex.flavors.size() && used_flavors != history.flavors_of_name.end() &&
                                used_flavors->second.count(essay.flavor);
         ++tries)
        essay.flavor = flavor_deck.draw();
    const persona::Flavor& flavor = lex.flavors[essay.flavor];
    persona::Bindings bind;
    bind.person = &person;
    bind.flavor = &flavor;

    // Fact types: none asked directly of an earlier essay with this name, while enough remain.
    const auto fact_count = static_cast<std::size_t>(rng.between(4, 5));
    std::vector<std::size_t> allowed;
    const auto asked = history.asked_of_name.find(name);
    for (std::size_t t = 0; t < types.size(); ++t)
        if (asked == history.asked_of_name.end() || !asked->second.count(types[t].id)) allowed.push_back(t);
    if (allowed.size() < fact_count + 3) {
        allowed.clear();
        for (std::size_t t = 0; t < types.size(); ++t) allowed.push_back(t);
    }
    std::set<std::string> essay_sentences;
    for (std::size_t a : rng.sample_indices(allowed.size(), fact_count)) {
        const std::size_t t = allowed[a];
        const persona::FactType& type = types[t];
        ChosenFact fact;
        std::vector<std::size_t> skipped;  // drawn and passed over: back to the deck, drawn next
        for (int attempt = 0; attempt < k_max_fact_attempts && !fact.instance; ++attempt) {
            const std::size_t drawn = fact_decks[t].draw();
            const persona::FactInstance& candidate = type.instances[drawn];
            if (contradicts(candidate, flavor, essay.facts)) {
                skipped.push_back(drawn);
                continue;
            }
            persona::Bindings fb = bind;
            fb.fact = &candidate;
            fb.reference = draw_reference(rng, settings.pronoun_share);
            std::vector<std::string> sentences;
            if (!type.pairs.empty() && rng.chance(settings.multi_sentence_share)) {
                const auto& pair = rng.pick(type.pairs);
                sentences = {persona::render(pair[0], fb), persona::render(pair[1], fb)};
            } else {
                sentences = {persona::render(rng.pick(type.sentences), fb)};
            }
            const bool fresh = std::none_of(sentences.begin(), sentences.end(), [&](const std::string& s) {
                return history.fact_sentences.count(s) || essay_sentences.count(s);
            });
            if (!fresh) {
                skipped.push_back(drawn);
                continue;
            }
            fact = {&type, &candidate, t, drawn, sentences, fb.reference, {}};
        }
        MF_ASSERT(fact.instance, "every fact type has a fresh instance compatible with any persona");
        fact_decks[t].put_back(skipped);
        for (const auto& s : fact.sentences) essay_sentences.insert(s);
        essay.facts.push_back(std::move(fact));
    }

    // Length: the opening, the facts, and the rest from the flavour's own sentences and the
    // flavour-bound fillers (about the person's work and pastime, never about someone else).
    std::size_t fact_sentences = 0;
    for (const auto& f : essay.facts) fact_sentences += f.sentences.size();
    const auto wanted = static_cast<std::size_t>(rng.between(10, 15));
    const std::size_t filler_count = std::max<std::size_t>(wanted, 1 + fact_sentences + 2) - 1 - fact_sentences;
    std::vector<std::vector<std::string>> blocks;  // each block stays together; blocks are shuffled
    for (const auto& f : essay.facts) blocks.push_back(f.sentences);
    std::vector<std::string> fillers;
    const std::size_t own = std::min(filler_count, flavor.sentences.size());
    std::vector<std::size_t> own_picks = rng.sample_indices(flavor.sentences.size(), own);
    std::sort(own_picks.begin(), own_picks.end());
    for (std::size_t i : own_picks) fillers.push_back(persona::render(flavor.sentences[i], bind));
    // Fillers: each template once per essay, and the long flavour phrases ({place}, {interest}) at
    // most twice and once, so the essay does not read as a list of variations on one line.
    std::set<std::size_t> used_fillers;
    std::size_t with_place = 0, with_interest = 0;
    for (std::size_t k = own; k < filler_count; ++k) {
        persona::Bindings ob = bind;
        ob.reference = rng.chance(k_role_share) ? persona::Reference::role : persona::Reference::pronoun;
        for (std::size_t tries = 0; tries < 4 * lex.fillers.size(); ++tries) {
            const std::size_t f = filler_decks.front().draw();
            const std::string& tmpl = lex.fillers[f];
            const bool place = tmpl.find("{place}") != std::string::npos;
            const bool interest = tmpl.find("{interest}") != std::string::npos;
            if (used_fillers.count(f) || (place && with_place >= 2) || (interest && with_interest >= 1)) continue;
            used_fillers.insert(f);
            with_place += place;
            with_interest += interest;
            fillers.push_back(persona::render(tmpl, ob));
            break;
        }
    }
    // The flavour's first chosen sentence follows the opening; the rest is a shuffled story.
    std::vector<std::string> head = {persona::render(rng.pick(lex.intros), bind)};
    if (!fillers.empty()) {
        head.push_back(fillers.front());
        fillers.erase(fillers.begin());
    }
    for (auto& f : fillers) blocks.push_back({std::move(f)});
    rng.shuffle(blocks);
    essay.sentences = head;
    for (const auto& b : blocks) essay.sentences.insert(essay.sentences.end(), b.begin(), b.end());
    essay.text = text::join(essay.sentences, " ");
    return essay;
}

// Openers varied where the dataset would repeat a frame (FrameVariation); a fact's sentences follow,
// so its evidence statements are the essay's words.
void vary_openings(Essay& essay, const FrameVariation& frames, Rng& rng, const std::vector<std::string>& names) {
    const std::vector<std::string> varied = frames.vary(essay.sentences, names, rng);
    std::map<std::string, std::string> to;
    for (std::size_t i = 0; i < varied.size(); ++i) to[essay.sentences[i]] = varied[i];
    for (auto& f : essay.facts) {
        f.written = f.sentences;
        for (auto& s : f.sentences) s = to.at(s);
    }
    essay.sentences = varied;
    essay.text = text::join(essay.sentences, " ");
}

std::string row_probe_id(std::size_t row, std::size_t slot) {
    return probe_id(k_prefix, row) + "-q" + std::to_string(slot);
}

// The first question template of `type` about `person` no earlier probe asked, or "".
std::string fresh_question(const persona::FactType& type, const persona::FactInstance& inst,
                           const persona::Flavor& flavor, const persona::PersonName& person,
                           const std::set<std::string>& asked, double context_share, Rng& rng) {
    std::vector<std::size_t> order(type.questions.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    rng.shuffle(order);
    // Questions set in the person's own world (their workplace, their trade) first, for a share of
    // the probes, as many of the release's are: the name alone is shared by several essays, the
    // name and the context mostly are not. The others ask in the person's world last.
    const bool in_context = rng.chance(context_share);
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) {
        const bool context = type.questions[i].find("{place}") != std::string::npos ||
                             type.questions[i].find("{profession}") != std::string::npos;
        return context == in_context;
    });
    persona::Bindings qb;
    qb.person = &person;
    qb.fact = &inst;
    qb.flavor = &flavor;
    for (std::size_t i : order) {
        std::string q = persona::render(type.questions[i], qb);
        if (!asked.count(q)) return q;
    }
    return {};
}

}  // namespace

data::Scenario generate_persona_retrieval(const GenerateOptions& options) {
    const PersonaSettings& settings = options.persona;
    data::Scenario s = make_scenario(k_dataset, options.seed);
    // The settings are part of what the file is, so they travel with it.
    s.meta["settings"] = {{"persona.name_pool", settings.name_pool},
                          {"persona.distinct_names", settings.distinct_names},
                          {"persona.pronoun_share", settings.pronoun_share},
                          {"persona.multi_sentence_share", settings.multi_sentence_share},
                          {"persona.context_share", settings.context_share}};
    const persona::Lexicon& lex = persona::lexicon();
    const Rng root(options.seed);
    // Who is stored and who is a distractor is drawn per file from every name of the lexicon: a
    // name stored in one seed's file is a distractor in another's, so no list of names that are
    // never stored can be learnt from other files (with a fixed split, a question's name alone
    // told a misleading question from a direct one in every question of another seed). Within a
    // file a distractor shares no first or last name with a stored person.
    std::vector<persona::PersonName> entity_pool = lex.entity_names;
    entity_pool.insert(entity_pool.end(), lex.distractor_names.begin(), lex.distractor_names.end());
    Rng pool_rng = root.fork("persona/name-pools");
    pool_rng.shuffle(entity_pool);
    const std::size_t pool = std::min(settings.name_pool, lex.entity_names.size());
    MF_ASSERT(pool > 0, "the Persona name pool is not empty");
    MF_ASSERT(!settings.distinct_names || pool >= k_rows, "distinct Persona names need a pool of at least 100");
    std::vector<persona::PersonName> distractors;
    {
        std::set<std::string> stored_words;
        for (std::size_t i = 0; i < pool; ++i) {
            stored_words.insert(entity_pool[i].first);
            stored_words.insert(entity_pool[i].last);
        }
        for (std::size_t i = pool; i < entity_pool.size(); ++i)
            if (!stored_words.count(entity_pool[i].first) && !stored_words.count(entity_pool[i].last))
                distractors.push_back(entity_pool[i]);
        entity_pool.resize(pool);
    }
    MF_ASSERT(distractors.size() >= k_min_distractors, "too few Persona distractor names left after the stored ones");
    Rng name_rng = root.fork("persona/names");
    Rng essay_rng = root.fork("persona/essays");
    Rng deck_rng = root.fork("persona/decks");
    Rng probe_rng = root.fork("persona/probes");
    Rng frame_rng = root.fork("persona/frames");
    Rng mislead_rng = root.fork("persona/misleading");
    // No opening frame in more than 3 of the 100 essays (`datasets audit` flags 5%).
    FrameVariation frames(3);
    Deck flavor_deck(lex.flavors.size(), deck_rng);
    std::vector<Deck> fact_decks;
    for (const auto& t : lex.fact_types) fact_decks.emplace_back(t.instances.size(), deck_rng);
    std::vector<Deck> filler_decks;
    filler_decks.emplace_back(lex.fillers.size(), deck_rng);
    MinHashDeduper deduper(k_dedup_threshold);
    std::size_t candidates = 0;
    std::set<std::string> asked_questions;
    History history;
    std::map<std::string, std::vector<std::size_t>> rows_of_name;

    std::vector<std::size_t> chosen;
    if (settings.distinct_names) chosen = name_rng.sample_indices(pool, k_rows);
    else
        for (std::size_t r = 0; r < k_rows; ++r) chosen.push_back(static_cast<std::size_t>(name_rng.below(pool)));

    for (std::size_t r = 0; r < k_rows; ++r) {
        const persona::PersonName& person = entity_pool[chosen[r]];
        const std::string name = person.full();
        const std::string essay_id = probe_id(k_prefix, r + 1);
        Essay essay;
        for (int attempt = 0; attempt < k_max_essay_attempts; ++attempt) {
            essay = compose_essay(person, settings, essay_rng, flavor_deck, fact_decks, filler_decks, history);
            vary_openings(essay, frames, frame_rng, {name, person.first, person.last});
            ++candidates;
            const std::string id = attempt == 0 ? essay_id : essay_id + "~" + std::to_string(attempt + 1);
            if (deduper.offer(id, essay.text)) break;
            MF_ASSERT(attempt + 1 < k_max_essay_attempts, "could not compose a non-duplicate essay");
            // The facts of a dropped essay were not used: they go back to their decks.
            for (const auto& f : essay.facts) fact_decks[f.type_index].put_back({f.instance_index});
        }
        frames.commit(essay.sentences, {name, person.first, person.last});
        const std::string message = add_user_session(s, essay.text);

        // Slots: which are misleading, then which fact each asks about. A direct slot prefers a fact
        // whose type no earlier essay with this name has, so the name plus the question point to one
        // essay as far as the pool allows.
        std::vector<bool> misleading(k_probes_per_row);
        for (std::size_t slot = 0; slot < k_probes_per_row; ++slot) misleading[slot] = probe_rng.chance(k_misleading_share);
        std::vector<std::size_t> order(essay.facts.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        probe_rng.shuffle(order);
        const auto& earlier_types = history.types_of_name[name];
        std::stable_partition(order.begin(), order.end(),
                              [&](std::size_t f) { return !earlier_types.count(essay.facts[f].type->id); });
        std::vector<std::size_t> slot_fact(k_probes_per_row, essay.facts.size());
        std::vector<std::string> slot_question(k_probes_per_row);
        std::vector<bool> taken(essay.facts.size(), false);
        for (std::size_t slot = 0; slot < k_probes_per_row; ++slot) {
            if (misleading[slot]) continue;
            for (std::size_t f : order) {
                if (taken[f]) continue;
                std::string q = fresh_question(*essay.facts[f].type, *essay.facts[f].instance, lex.flavors[essay.flavor],
                                               person, asked_questions, settings.context_share, probe_rng);
                if (q.empty()) continue;
                taken[f] = true;
                slot_fact[slot] = f;
                slot_question[slot] = std::move(q);
                break;
            }
            // Every question about this name and these facts was asked already: mislead instead.
            if (slot_fact[slot] == essay.facts.size()) misleading[slot] = true;
        }
        for (std::size_t slot = 0; slot < k_probes_per_row; ++slot) {
            if (!misleading[slot]) continue;
            for (std::size_t f : order)
                if (!taken[f]) {
                    taken[f] = true;
                    slot_fact[slot] = f;
                    break;
                }
        }

        // The row's distractors in random order; each is used at most once in the row, and one whose
        // question some earlier row already asked is passed over, so no question repeats.
        const std::vector<std::size_t> row_distractors = probe_rng.sample_indices(distractors.size(), distractors.size());
        std::size_t next_distractor = 0;
        for (std::size_t slot = 0; slot < k_probes_per_row; ++slot) {
            const ChosenFact& fact = essay.facts[slot_fact[slot]];
            data::Probe p;
            p.id = row_probe_id(r + 1, slot + 1);
            p.meta = {{"entity", name},
                      {"is_misleading", static_cast<bool>(misleading[slot])},
                      {"distractor", nullptr},
                      {"row", r + 1},
                      {"fact_type", fact.type->id}};
            if (misleading[slot]) {
                // Set in the essay's world at the same share as a direct question, so the
                // question's words do not tell a misleading probe from a direct one. Drawn from a
                // stream of its own: the direct questions' draws stay as they were.
                probe_rng.below(fact.type->questions.size());
                const bool in_context = mislead_rng.chance(settings.context_share);
                std::vector<const std::string*> fit;
                for (const auto& q : fact.type->questions) {
                    const bool context = q.find("{place}") != std::string::npos || q.find("{profession}") != std::string::npos;
                    if (context == in_context) fit.push_back(&q);
                }
                const std::string& question_tmpl = fit.empty() ? mislead_rng.pick(fact.type->questions) : *mislead_rng.pick(fit);
                const persona::PersonName* distractor = nullptr;
                persona::Bindings qb;
                qb.fact = fact.instance;
                qb.flavor = &lex.flavors[essay.flavor];
                while (!distractor) {
                    MF_ASSERT(next_distractor < row_distractors.size(), "ran out of distractors for a row");
                    qb.person = &distractors[row_distractors[next_distractor++]];
                    p.question = persona::render(question_tmpl, qb);
                    if (asked_questions.insert(p.question).second) distractor = qb.person;
                }
                p.kind = data::ProbeKind::abstain;
                p.answer = "I don't have information about " + distractor->full() + ".";
                p.meta["distractor"] = distractor->full();
            } else {
                p.question = slot_question[slot];
                asked_questions.insert(p.question);
                history.asked_of_name[name].insert(fact.type->id);
                persona::Bindings ab;
                ab.person = &person;
                ab.fact = fact.instance;
                p.kind = data::ProbeKind::open;
                p.answer = persona::render(fact.type->answer, ab);
                // A fact in a sentence that does not name the person needs the opening sentence too:
                // without it nothing says whom "she" or "the mechanic" is.
                const bool named = fact.reference == persona::Reference::name;
                data::EvidenceFact ev;
                ev.id = p.id + "-f1";
                ev.message_ids = {message};
                if (!named) ev.statements.push_back(essay.sentences.front());
                ev.statements.insert(ev.statements.end(), fact.sentences.begin(), fact.sentences.end());
                ev.text = text::join(ev.statements, " ");
                ev.key_details = {{"entity", {name, person.first, name + "'s", person.first + "'s"},
                                   data::DetailRole::identity},
                                  {"detail", fact.instance->details, data::DetailRole::identity}};
                p.evidence.push_back(std::move(ev));
                p.meta["names_person"] = named;
                p.meta["fact_sentences"] = fact.sentences.size();
            }
            s.probes.push_back(std::move(p));
        }
        rows_of_name[name].push_back(r + 1);
        history.flavors_of_name[name].insert(essay.flavor);
        for (const auto& f : essay.facts) {
            history.types_of_name[name].insert(f.type->id);
            for (const auto& sentence : f.sentences) history.fact_sentences.insert(sentence);
            for (const auto& sentence : f.written) history.fact_sentences.insert(sentence);
        }
    }
    // Namesakes: the rows whose essays share a person's name, as the release importer lists them.
    for (auto& p : s.probes) {
        const auto& rows = rows_of_name[p.meta["entity"].get<std::string>()];
        if (rows.size() > 1) p.meta["entity_rows"] = rows;
    }
    ask_all_after_last_session(s);
    record_dedup(s, "essay", deduper, candidates);
    return s;
}

}  // namespace memfail::suites::memfail_suite

// SPDX-License-Identifier: MIT
// Persona-Retrieval generator: 100 essays about distinct people, each with 4-5 idiosyncratic facts
// among ordinary sentences, and three probes per essay that either ask about the essay's person or,
// misleadingly, about a distractor the memory has never heard of.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/persona_lexicon.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites::memfail_suite {

namespace {

constexpr const char* k_dataset = "persona_retrieval";
constexpr const char* k_prefix = "per";
constexpr std::size_t k_rows = 100;
constexpr std::size_t k_probes_per_row = 3;
constexpr double k_misleading_share = 0.5;
constexpr double k_dedup_threshold = 0.7;
constexpr int k_max_essay_attempts = 20;

// Cycles through 0..size-1 in freshly shuffled rounds, so pool items are used evenly.
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

private:
    std::size_t m_size;
    Rng& m_rng;
    std::vector<std::size_t> m_order;
    std::size_t m_next = 0;
};

struct ChosenFact {
    const persona::FactType* type = nullptr;
    const persona::FactInstance* instance = nullptr;
    std::string sentence;
};

struct Essay {
    std::string text;
    std::vector<ChosenFact> facts;
};

bool contradicts(const persona::FactInstance& candidate, const persona::Flavor& flavor,
                 const std::vector<ChosenFact>& chosen) {
    if (std::find(flavor.excludes.begin(), flavor.excludes.end(), candidate.key) != flavor.excludes.end())
        return true;
    if (candidate.tag.empty()) return false;
    return std::any_of(chosen.begin(), chosen.end(),
                       [&](const ChosenFact& c) { return c.instance->tag == candidate.tag; });
}

Essay compose_essay(const persona::PersonName& person, Rng& rng, Deck& flavor_deck, std::vector<Deck>& fact_decks,
                    std::vector<Deck>& filler_decks) {
    const auto& types = persona::fact_types();
    const persona::Flavor& flavor = persona::flavors()[flavor_deck.draw()];
    persona::Bindings bind;
    bind.person = &person;
    bind.profession = flavor.profession;
    bind.interest = flavor.interest;

    Essay essay;
    const auto fact_count = static_cast<std::size_t>(rng.between(4, 5));
    for (std::size_t t : rng.sample_indices(types.size(), fact_count)) {
        const persona::FactType& type = types[t];
        const persona::FactInstance* instance = nullptr;
        for (std::size_t tries = 0; tries < 2 * type.instances.size() && !instance; ++tries) {
            const persona::FactInstance& candidate = type.instances[fact_decks[t].draw()];
            if (!contradicts(candidate, flavor, essay.facts)) instance = &candidate;
        }
        MF_ASSERT(instance, "every fact type has instances compatible with any persona");
        persona::Bindings fb = bind;
        fb.fact = instance;
        essay.facts.push_back({&type, instance, persona::render(rng.pick(type.sentences), fb)});
    }

    const auto total = static_cast<std::size_t>(rng.between(10, 15));
    const auto flavor_count = static_cast<std::size_t>(rng.between(2, 3));
    const std::size_t ordinary_count = total - 1 - flavor_count - fact_count;
    std::vector<std::string> body;
    for (const auto& f : essay.facts) body.push_back(f.sentence);
    const auto& slots = persona::ordinary_slots();
    for (std::size_t i : rng.sample_indices(slots.size(), ordinary_count)) {
        persona::Bindings ob = bind;
        ob.fill = slots[i].fillers[filler_decks[i].draw()];
        body.push_back(persona::render(slots[i].tmpl, ob));
    }
    rng.shuffle(body);
    // The persona's own sentences keep their written order (work before hobby) at random places.
    std::vector<std::size_t> flavor_picks = rng.sample_indices(flavor.sentences.size(), flavor_count);
    std::sort(flavor_picks.begin(), flavor_picks.end());
    std::vector<std::size_t> places = rng.sample_indices(body.size() + flavor_count, flavor_count);
    std::sort(places.begin(), places.end());
    for (std::size_t k = 0; k < flavor_count; ++k)
        body.insert(body.begin() + static_cast<std::ptrdiff_t>(places[k]),
                    persona::render(flavor.sentences[flavor_picks[k]], bind));
    std::vector<std::string> sentences = {persona::render(rng.pick(persona::intro_templates()), bind)};
    sentences.insert(sentences.end(), body.begin(), body.end());
    essay.text = text::join(sentences, " ");
    return essay;
}

std::string row_probe_id(std::size_t row, std::size_t slot) {
    return probe_id(k_prefix, row) + "-q" + std::to_string(slot);
}

}  // namespace

data::Scenario generate_persona_retrieval(const GenerateOptions& options) {
    data::Scenario s = make_scenario(k_dataset, options.seed);
    const auto& entities = persona::entity_names();
    const auto& distractors = persona::distractor_names();
    const auto& types = persona::fact_types();
    const Rng root(options.seed);
    Rng name_rng = root.fork("persona/names");
    Rng essay_rng = root.fork("persona/essays");
    Rng deck_rng = root.fork("persona/decks");
    Rng probe_rng = root.fork("persona/probes");
    Deck flavor_deck(persona::flavors().size(), deck_rng);
    std::vector<Deck> fact_decks;
    for (const auto& t : types) fact_decks.emplace_back(t.instances.size(), deck_rng);
    std::vector<Deck> filler_decks;
    for (const auto& slot : persona::ordinary_slots()) filler_decks.emplace_back(slot.fillers.size(), deck_rng);
    MinHashDeduper deduper(k_dedup_threshold);
    std::size_t candidates = 0;
    std::set<std::string> asked_questions;

    const std::vector<std::size_t> chosen = name_rng.sample_indices(entities.size(), k_rows);
    for (std::size_t r = 0; r < k_rows; ++r) {
        const persona::PersonName& person = entities[chosen[r]];
        const std::string essay_id = probe_id(k_prefix, r + 1);
        Essay essay;
        for (int attempt = 0; attempt < k_max_essay_attempts; ++attempt) {
            essay = compose_essay(person, essay_rng, flavor_deck, fact_decks, filler_decks);
            ++candidates;
            const std::string id = attempt == 0 ? essay_id : essay_id + "~" + std::to_string(attempt + 1);
            if (deduper.offer(id, essay.text)) break;
            MF_ASSERT(attempt + 1 < k_max_essay_attempts, "could not compose a non-duplicate essay");
        }
        const std::string message = add_user_session(s, essay.text);

        const std::vector<std::size_t> asked = probe_rng.sample_indices(essay.facts.size(), k_probes_per_row);
        // The row's distractors in random order; each is used at most once in the row, and one whose
        // question some earlier row already asked is passed over, so no question repeats.
        const std::vector<std::size_t> row_distractors = probe_rng.sample_indices(distractors.size(), distractors.size());
        std::size_t next_distractor = 0;
        for (std::size_t slot = 0; slot < k_probes_per_row; ++slot) {
            const ChosenFact& fact = essay.facts[asked[slot]];
            const bool misleading = probe_rng.chance(k_misleading_share);
            const std::string& question_tmpl = probe_rng.pick(fact.type->questions);
            data::Probe p;
            p.id = row_probe_id(r + 1, slot + 1);
            p.meta = {{"entity", person.full()},
                      {"is_misleading", misleading},
                      {"distractor", nullptr},
                      {"row", r + 1},
                      {"fact_type", fact.type->id}};
            if (misleading) {
                const persona::PersonName* distractor = nullptr;
                persona::Bindings qb;
                qb.fact = fact.instance;
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
                persona::Bindings qb;
                qb.person = &person;
                qb.fact = fact.instance;
                p.question = persona::render(question_tmpl, qb);
                asked_questions.insert(p.question);
                p.kind = data::ProbeKind::open;
                p.answer = persona::render(fact.type->answer, qb);
                data::EvidenceFact ev;
                ev.id = p.id + "-f1";
                ev.text = fact.sentence;
                ev.message_ids = {message};
                ev.key_details = {{"entity", {person.full(), person.first, person.full() + "'s", person.first + "'s"},
                                   data::DetailRole::identity},
                                  {"detail", fact.instance->details, data::DetailRole::identity}};
                ev.statements = {fact.sentence};
                p.evidence.push_back(std::move(ev));
            }
            s.probes.push_back(std::move(p));
        }
    }
    ask_all_after_last_session(s);
    record_dedup(s, "essay", deduper, candidates);
    return s;
}

}  // namespace memfail::suites::memfail_suite

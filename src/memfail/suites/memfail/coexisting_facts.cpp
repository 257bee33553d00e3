// SPDX-License-Identifier: MIT
// Coexisting-Facts generator: one row per preference category, N in 2..5 compatible preferences,
// each stated alone in its own conversation, and one holistic question that needs all of them.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/coexisting_lexicon.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/generators.hpp>

#include <algorithm>

namespace memfail::suites::memfail_suite {

namespace {

constexpr const char* k_dataset = "coexisting_facts";
constexpr const char* k_prefix = "cof";
constexpr double k_dedup_threshold = 0.7;

// Hands out the shared statement templates in shuffled rounds, so each is used about equally
// often across the dataset instead of a few favourites recurring row after row.
class TemplateDeck {
public:
    TemplateDeck(std::size_t size, Rng& rng) : m_size(size), m_rng(rng) { refill(); }

    // The next template index not already in `used`.
    std::size_t draw(const std::vector<std::size_t>& used) {
        for (std::size_t attempts = 0; attempts < 2 * m_size + 2; ++attempts) {
            if (m_next == m_order.size()) refill();
            const std::size_t candidate = m_order[m_next++];
            if (std::find(used.begin(), used.end(), candidate) == used.end()) return candidate;
        }
        MF_ASSERT(false, "template deck has no unused template left");
        return 0;
    }

private:
    void refill() {
        m_order.resize(m_size);
        for (std::size_t i = 0; i < m_size; ++i) m_order[i] = i;
        m_rng.shuffle(m_order);
        m_next = 0;
    }

    std::size_t m_size;
    Rng& m_rng;
    std::vector<std::size_t> m_order;
    std::size_t m_next = 0;
};

struct PlannedStatement {
    std::size_t row = 0;
    std::size_t slot = 0;  // position of the preference within its row
    std::string text;
    std::string message_id;
};

struct PlannedRow {
    const coexisting::Category* category = nullptr;
    std::vector<const coexisting::Preference*> preferences;
    std::vector<std::size_t> statements;  // indexes into the statement plan
    std::string question;
};

// Statements of one row: category-specific templates first (in random order, each used at most
// once), topped up from the shared deck; no template repeats within a row.
std::vector<std::string> plan_statements(const coexisting::Category& category,
                                         const std::vector<const coexisting::Preference*>& prefs, Rng& rng,
                                         TemplateDeck& deck) {
    const auto& general = coexisting::general_statement_templates();
    std::vector<std::size_t> own(category.statement_templates.size());
    for (std::size_t i = 0; i < own.size(); ++i) own[i] = i;
    rng.shuffle(own);
    std::size_t next_own = 0;
    std::vector<std::size_t> used_general;
    std::vector<std::string> out;
    for (const auto* pref : prefs) {
        const bool take_own = next_own < own.size() && (!category.general_templates || rng.chance(0.6));
        std::string tmpl;
        if (take_own) {
            tmpl = category.statement_templates[own[next_own++]];
        } else {
            MF_ASSERT(category.general_templates, "category needs more templates of its own");
            const std::size_t g = deck.draw(used_general);
            used_general.push_back(g);
            tmpl = general[g];
        }
        out.push_back(coexisting::render_statement(tmpl, *pref, category));
    }
    return out;
}

// The category's own questions in random order, then the label-based fallbacks: the first one that
// is not a near-duplicate of an earlier row's question is kept.
std::string pick_question(const coexisting::Category& category, const std::string& id, Rng& rng,
                          MinHashDeduper& deduper, std::size_t& candidates) {
    std::vector<std::string> options = category.questions;
    rng.shuffle(options);
    std::vector<std::string> fallbacks;
    for (const auto& t : coexisting::fallback_question_templates())
        fallbacks.push_back(coexisting::render_question(t, category));
    rng.shuffle(fallbacks);
    options.insert(options.end(), fallbacks.begin(), fallbacks.end());
    for (std::size_t i = 0; i < options.size(); ++i) {
        ++candidates;
        const std::string candidate_id = i == 0 ? id : id + "~" + std::to_string(i + 1);
        if (deduper.offer(candidate_id, options[i])) return options[i];
    }
    // Every phrasing collided: keep the category's own first question rather than drop the row
    // (counted as one more candidate, so the report's kept count stays right).
    ++candidates;
    deduper.keep(id, options.front());
    return options.front();
}

}  // namespace

data::Scenario generate_coexisting_facts(const GenerateOptions& options) {
    data::Scenario s = make_scenario(k_dataset, options.seed);
    const auto& cats = coexisting::categories();
    const Rng root(options.seed);
    Rng draw_rng = root.fork("coexisting/draws");
    Rng template_rng = root.fork("coexisting/templates");
    Rng question_rng = root.fork("coexisting/questions");
    Rng order_rng = root.fork("coexisting/order");
    TemplateDeck deck(coexisting::general_statement_templates().size(), template_rng);
    MinHashDeduper deduper(k_dedup_threshold);
    std::size_t candidates = 0;

    std::vector<PlannedRow> rows;
    std::vector<PlannedStatement> plan;
    for (std::size_t r = 0; r < cats.size(); ++r) {
        const auto& category = cats[r];
        PlannedRow row;
        row.category = &category;
        const auto n = static_cast<std::size_t>(draw_rng.between(2, 5));
        for (std::size_t idx : draw_rng.sample_indices(category.preferences.size(), n))
            row.preferences.push_back(&category.preferences[idx]);
        const std::vector<std::string> texts = plan_statements(category, row.preferences, template_rng, deck);
        for (std::size_t k = 0; k < texts.size(); ++k) {
            row.statements.push_back(plan.size());
            plan.push_back({r, k, texts[k], {}});
        }
        row.question = pick_question(category, probe_id(k_prefix, r + 1), question_rng, deduper, candidates);
        rows.push_back(std::move(row));
    }

    // Statements of all rows are interleaved, so a row's preferences arrive in scattered sessions.
    std::vector<std::size_t> order(plan.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    order_rng.shuffle(order);
    for (std::size_t i : order) plan[i].message_id = add_user_session(s, plan[i].text);

    for (std::size_t r = 0; r < rows.size(); ++r) {
        const PlannedRow& row = rows[r];
        data::Probe p;
        p.id = probe_id(k_prefix, r + 1);
        p.question = row.question;
        p.kind = data::ProbeKind::list;
        std::vector<std::string> answers;
        nlohmann::json prefs = nlohmann::json::array();
        for (std::size_t k = 0; k < row.preferences.size(); ++k) {
            const auto& pref = *row.preferences[k];
            const PlannedStatement& st = plan[row.statements[k]];
            answers.push_back(pref.canonical);
            prefs.push_back(pref.canonical);
            data::EvidenceFact fact;
            fact.id = p.id + "-f" + std::to_string(k + 1);
            fact.text = st.text;
            fact.message_ids = {st.message_id};
            fact.key_details = {{"preference", pref.variants, data::DetailRole::identity}};
            fact.statements = {st.text};
            p.evidence.push_back(std::move(fact));
        }
        p.answer = text::join(answers, ", ");
        p.meta = {{"category", row.category->name}, {"preferences", prefs}, {"n", row.preferences.size()}};
        s.probes.push_back(std::move(p));
    }
    ask_all_after_last_session(s);
    record_dedup(s, "question", deduper, candidates);
    return s;
}

}  // namespace memfail::suites::memfail_suite

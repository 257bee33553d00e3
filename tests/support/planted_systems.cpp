// SPDX-License-Identifier: MIT
// Planted-fault memory systems for grader tests.
#include <support/planted_systems.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace memfail::testing {

namespace {

class StoresNothing final : public memory::MemorySystem {
public:
    std::string spec() const override { return "planted:stores_nothing"; }
    memory::Capabilities capabilities() const override {
        memory::Capabilities c;
        c.provenance = true;
        c.idempotent_store = true;
        return c;
    }
    Result<void> store_conversation(const data::Session&) override { return {}; }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&,
                                                       int) override {
        return std::vector<memory::Hit>{};
    }
    Result<std::vector<memory::Memory>> all_memories() override { return std::vector<memory::Memory>{}; }
    Result<void> reset() override { return {}; }
};

// Wraps a real verbatim store; subclasses change what goes in or what comes out.
class Wrapper : public memory::MemorySystem {
public:
    explicit Wrapper(const memory::SystemContext& context) {
        auto made = memory::make_memory_system("verbatim:retriever=bm25", context);
        MF_ASSERT(made.has_value(), "verbatim must be constructible in tests");
        m_inner = std::move(made).value();
    }
    memory::Capabilities capabilities() const override {
        auto c = m_inner->capabilities();
        c.uses_ground_truth = true;
        return c;
    }
    Result<void> store_conversation(const data::Session& session) override { return m_inner->store_conversation(session); }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                                       int k) override {
        return m_inner->retrieve_memories(query, history, k);
    }
    Result<std::vector<memory::Memory>> all_memories() override { return m_inner->all_memories(); }
    Result<void> reset() override { return m_inner->reset(); }

protected:
    std::unique_ptr<memory::MemorySystem> m_inner;
};

class DropsConditions final : public Wrapper {
public:
    using Wrapper::Wrapper;
    std::string spec() const override { return "planted:drops_conditions"; }
    void observe_ground_truth(const data::Scenario& scenario) override {
        for (const auto& p : scenario.probes)
            for (const auto& f : p.evidence)
                for (const auto& d : f.key_details)
                    if (d.name == "condition")
                        for (const auto& v : d.variants) m_conditions.insert(v);
    }
    Result<void> store_conversation(const data::Session& session) override {
        data::Session stripped = session;
        for (auto& m : stripped.messages) m.content = strip(m.content);
        return m_inner->store_conversation(stripped);
    }

private:
    // Deletes each condition phrase wherever it occurs, matching case-insensitively.
    std::string strip(std::string content) const {
        for (const auto& phrase : m_conditions) {
            while (true) {
                const std::string lower = text::to_lower(content);
                const std::size_t pos = lower.find(text::to_lower(phrase));
                if (pos == std::string::npos) break;
                content.erase(pos, phrase.size());
            }
        }
        return content;
    }
    std::set<std::string> m_conditions;
};

// Replaces whole words matching `pattern` (case-insensitive) with `with`.
std::string replace_words(const std::string& content, const std::string& pattern, const std::string& with) {
    const std::regex re("\\b(" + pattern + ")\\b", std::regex::icase);
    return std::regex_replace(content, re, with);
}

std::string escape_regex(const std::string& s) {
    static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
    return std::regex_replace(s, special, R"(\$&)");
}

class Distorting final : public Wrapper {
public:
    Distorting(const memory::SystemContext& context, Distortion distortion, bool provenance)
        : Wrapper(context), m_distortion(distortion), m_provenance(provenance) {}
    std::string spec() const override {
        return std::string("planted:") + distortion_name(m_distortion) + (m_provenance ? "" : ",provenance=false");
    }
    memory::Capabilities capabilities() const override {
        auto c = Wrapper::capabilities();
        c.provenance = m_provenance;
        return c;
    }
    void observe_ground_truth(const data::Scenario& scenario) override {
        m_conditions.clear();
        m_entity_of.clear();
        std::vector<std::string> order;
        for (const auto& p : scenario.probes)
            for (const auto& f : p.evidence)
                for (const auto& d : f.key_details) {
                    if (d.name == "condition")
                        for (const auto& v : d.variants) m_conditions.insert(v);
                    if (d.name == "entity" && !d.variants.empty())
                        for (const auto& id : f.message_ids)
                            if (m_entity_of.emplace(id, d.variants.front()).second) order.push_back(id);
                }
        // Swap partners: each message takes the entity of the next message about someone else (names
        // are reused across rows, and swapping a name for itself would corrupt nothing).
        m_partner.clear();
        for (std::size_t i = 0; i < order.size(); ++i)
            for (std::size_t step = 1; step < order.size(); ++step) {
                const std::string& other = m_entity_of[order[(i + step) % order.size()]];
                if (other == m_entity_of[order[i]]) continue;
                m_partner[order[i]] = other;
                break;
            }
    }
    Result<void> store_conversation(const data::Session& session) override {
        data::Session changed = session;
        for (auto& m : changed.messages)
            if (m.role == "user") m.content = distort(m.id, m.content);
        return m_inner->store_conversation(changed);
    }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                                       int k) override {
        MF_TRY_ASSIGN(auto hits, m_inner->retrieve_memories(query, history, k));
        if (!m_provenance)
            for (auto& h : hits) h.memory.sources.clear();
        return hits;
    }
    Result<std::vector<memory::Memory>> all_memories() override {
        MF_TRY_ASSIGN(auto all, m_inner->all_memories());
        if (!m_provenance)
            for (auto& m : all) m.sources.clear();
        return all;
    }

private:
    std::string distort(const std::string& id, std::string content) const {
        switch (m_distortion) {
            case Distortion::drop_exclusivity:
                return replace_words(content, "only|solely|exclusively|except|unless", "");
            case Distortion::drop_condition:
                for (const auto& phrase : m_conditions) content = replace_words(content, escape_regex(phrase), "");
                return content;
            case Distortion::hedge:
                return replace_words(replace_words(content, "only", "usually"), "never", "rarely");
            case Distortion::negate:
                return replace_words(replace_words(content, "only", "not only"), "never", "not never");
            case Distortion::detach_entity: {
                auto it = m_entity_of.find(id);
                if (it == m_entity_of.end()) return content;
                return replace_words(content, escape_regex(it->second) + "(?:'s|\u2019s)?", "someone");
            }
            case Distortion::swap_entities: {
                auto it = m_entity_of.find(id);
                auto partner = m_partner.find(id);
                if (it == m_entity_of.end() || partner == m_partner.end()) return content;
                return replace_words(content, escape_regex(it->second), partner->second);
            }
            case Distortion::truncate: {
                std::istringstream in(content);
                std::string word, out;
                for (int n = 0; n < 12 && in >> word; ++n) out += (n ? " " : "") + word;
                return out;
            }
        }
        return content;
    }

    Distortion m_distortion;
    bool m_provenance;
    std::set<std::string> m_conditions;
    std::map<std::string, std::string> m_entity_of;  // message id -> the entity its fact is about
    std::map<std::string, std::string> m_partner;    // message id -> the entity swapped in
};

class RandomRetriever final : public Wrapper {
public:
    RandomRetriever(const memory::SystemContext& context, unsigned long long seed) : Wrapper(context), m_rng(seed) {}
    std::string spec() const override { return "planted:random_retriever"; }
    memory::Capabilities capabilities() const override { return m_inner->capabilities(); }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&,
                                                       int k) override {
        MF_TRY_ASSIGN(auto all, m_inner->all_memories());
        std::vector<memory::Hit> hits;
        const std::size_t n = std::min<std::size_t>(all.size(), static_cast<std::size_t>(k));
        for (std::size_t i : m_rng.sample_indices(all.size(), n)) hits.push_back({all[i], 0.0});
        return hits;
    }

private:
    Rng m_rng;
};

}  // namespace

std::unique_ptr<memory::MemorySystem> make_stores_nothing() { return std::make_unique<StoresNothing>(); }

std::unique_ptr<memory::MemorySystem> make_drops_conditions(const memory::SystemContext& context) {
    return std::make_unique<DropsConditions>(context);
}

const char* distortion_name(Distortion distortion) {
    switch (distortion) {
        case Distortion::drop_exclusivity: return "drop_exclusivity";
        case Distortion::drop_condition: return "drop_condition";
        case Distortion::hedge: return "hedge";
        case Distortion::negate: return "negate";
        case Distortion::detach_entity: return "detach_entity";
        case Distortion::swap_entities: return "swap_entities";
        case Distortion::truncate: return "truncate";
    }
    return "?";
}

std::unique_ptr<memory::MemorySystem> make_distorting(const memory::SystemContext& context, Distortion distortion,
                                                      bool provenance) {
    return std::make_unique<Distorting>(context, distortion, provenance);
}

std::unique_ptr<memory::MemorySystem> make_random_retriever(const memory::SystemContext& context,
                                                            unsigned long long seed) {
    return std::make_unique<RandomRetriever>(context, seed);
}

}  // namespace memfail::testing

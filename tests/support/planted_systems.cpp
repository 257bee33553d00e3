// SPDX-License-Identifier: MIT
// Planted-fault memory systems for grader tests.
#include <support/planted_systems.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>

#include <set>

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

std::unique_ptr<memory::MemorySystem> make_random_retriever(const memory::SystemContext& context,
                                                            unsigned long long seed) {
    return std::make_unique<RandomRetriever>(context, seed);
}

}  // namespace memfail::testing

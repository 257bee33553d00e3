// SPDX-License-Identifier: MIT
// oracle: a reference system that reads the ground truth to make one or more stages ideal, giving
// the ceiling a real system is measured against (and, per stage, which stage costs the most).
//
//   stage=all        nothing is stored from the conversation; memories are the gold evidence facts,
//                    and each question retrieves exactly its facts.
//   stage=retrieval  a real inner system stores the conversation; each question retrieves exactly
//                    the inner memories whose sources meet its evidence messages.
//   stage=summary    the inner system is fed, instead of each session, a synthetic session holding
//                    only the gold facts stated in it; inner storage and retrieval stay real.
//
// The inner system is named by over=<system>. Its options cannot go into the same spec string
// (commas separate the oracle's own options), so they are written with an "over." prefix:
//   oracle:stage=retrieval,over=verbatim,over.chunk=sentence,over.retriever=hashed
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <memfail/memory/memory_system.hpp>

namespace memfail::memory {

enum class OracleStage { all, retrieval, summary };

class OracleSystem final : public MemorySystem {
public:
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    std::string spec() const override;
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session& session) override;
    // Questions are matched to probes by exact text; an unknown question gets nothing (stage=all,
    // retrieval) or the inner system's real answer (stage=summary). When several probes share a
    // question, those asked after the most recently stored session win; failing that, their
    // evidence is merged. Unless respect_k=true, stages all and retrieval ignore k: the ideal
    // answer is every piece of evidence.
    Result<std::vector<Hit>> retrieve_memories(std::string_view query,
                                               const std::vector<data::Message>& history,
                                               int k) override;
    Result<std::vector<Memory>> all_memories() override;
    // Empties the inner system. The ground truth is kept: it is what the oracle knows, not what it
    // has memorised, and observe_ground_truth() replaces it.
    Result<void> reset() override;
    void observe_ground_truth(const data::Scenario& scenario) override;

private:
    struct ProbeEvidence {
        std::string after_session;
        std::vector<std::size_t> facts;  // indices into m_facts
    };

    OracleSystem(OracleStage stage, bool respect_k, std::unique_ptr<MemorySystem> inner)
        : m_stage(stage), m_respect_k(respect_k), m_inner(std::move(inner)) {}
    // Facts answering `question`, in evidence order, without repeats.
    std::vector<std::size_t> facts_for(std::string_view question) const;
    Memory fact_memory(std::size_t index) const;

    OracleStage m_stage;
    bool m_respect_k;
    std::unique_ptr<MemorySystem> m_inner;  // null for stage=all

    std::vector<data::EvidenceFact> m_facts;  // distinct by id, in first-seen order
    std::vector<std::string> m_fact_times;    // timestamp of the session of each fact's first message
    std::map<std::string, std::vector<ProbeEvidence>, std::less<>> m_by_question;
    std::string m_last_session;
};

}  // namespace memfail::memory

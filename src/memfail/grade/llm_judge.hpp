// SPDX-License-Identifier: MIT
// The staged LLM judge: one call shape per stage (docs/TAXONOMY.md), each a JSON-schema reply with a
// short reason. Storage is asked in batches over one rendering of the store, so a large store is sent
// once per batch rather than once per fact. The judge only asks; which stage decides a probe is the
// staged grader's business (staged_grader.hpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/grade/memory_grader.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/llm/prompts.hpp>

namespace memfail::grade {

inline constexpr const char* k_judge_version = "judge/1";

// A judge's verdict on one check.
struct JudgeVerdict {
    bool passed = false;
    std::string reason;
    std::vector<std::string> memory_ids;  // storage: the memories holding the fact
    std::vector<std::string> missing;     // summary: details that did not survive
};

// Sampling options the judge passes on every call (both only when set).
struct JudgeOptions {
    std::string model;
    std::optional<double> temperature;
    std::optional<std::int64_t> seed;
    std::size_t storage_batch = 20;           // facts per storage call
    std::size_t whole_store_chars = 120000;   // larger stores are narrowed per batch (below)
    std::size_t candidates_per_fact = 30;     // memories kept per fact when narrowing
};

class LlmJudge {
public:
    LlmJudge(llm::LlmClient& client, JudgeOptions options) : m_client(client), m_options(std::move(options)) {}

    const JudgeOptions& options() const { return m_options; }
    llm::LlmClient& client() const { return m_client; }

    // Storage for `facts` (one batch: at most options().storage_batch). The store is shown whole when
    // it is small; otherwise narrowed to the memories sharing the most words with each fact.
    // With `task` (the paper's protocol, --protocol paper) each stage is asked with that dataset's
    // prompt (llm/prompts.hpp, PaperTask); the reply is read the same way.
    using Task = std::optional<llm::prompts::PaperTask>;
    Result<std::vector<JudgeVerdict>> storage(const MemorySnapshot& snapshot,
                                              const std::vector<const data::EvidenceFact*>& facts, Task task = {});
    Result<JudgeVerdict> summary(const data::EvidenceFact& fact, const std::vector<const memory::Memory*>& memories,
                                 Task task = {});
    Result<JudgeVerdict> retrieval(const data::EvidenceFact& fact, const std::vector<memory::Hit>& retrieved,
                                   Task task = {}, const std::string& question = {});
    Result<JudgeVerdict> answer(const data::Probe& probe, const std::string& reply, Task task = {});
    // Under the paper's protocol the judge also sees the essay of the person the question was made
    // from (`essay`, meta.entity's) beside the person it names.
    Result<JudgeVerdict> abstention(const data::Probe& probe, const std::string& reply, Task task = {},
                                    const std::string& essay = {});
    // Any structured request a suite words itself (HaluMem's operation judges), sent with the judge's
    // temperature and seed: the reply's JSON object.
    Result<nlohmann::json> ask(llm::ChatRequest request);

private:

    llm::LlmClient& m_client;
    JudgeOptions m_options;
};

// The person an abstain probe names (meta.distractor), else empty.
std::string named_person(const data::Probe& probe);

}  // namespace memfail::grade

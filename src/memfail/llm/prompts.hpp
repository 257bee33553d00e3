// SPDX-License-Identifier: MIT
// Every prompt memfail sends, in one place and versioned: the test-taker's (storage-phase replies and
// graded answers) and the staged judge's (storage, summary, retrieval, answer, abstention). Each
// judge prompt has its own JSON schema whose name tells scripted servers (tools/fake-llm) which stage
// is asking. Changing any text here means bumping k_prompt_version, which every run records (and
// which is part of the cache key through the text itself).
#pragma once
#include <string>
#include <vector>

#include <memfail/llm/llm_client.hpp>

namespace memfail::llm::prompts {

inline constexpr const char* k_prompt_version = "prompts/1";

// Schema names (response_format.json_schema.name).
inline constexpr const char* k_storage_schema = "memfail_judge_storage";
inline constexpr const char* k_summary_schema = "memfail_judge_summary";
inline constexpr const char* k_retrieval_schema = "memfail_judge_retrieval";
inline constexpr const char* k_answer_schema = "memfail_judge_answer";
inline constexpr const char* k_abstention_schema = "memfail_judge_abstention";
inline constexpr const char* k_facts_extract_schema = "memfail_facts_extract";
inline constexpr const char* k_facts_decide_schema = "memfail_facts_decide";

// A memory as shown to a model: a short label ("m3") stands in for the system's id, so the model
// cannot mangle ids it has to echo back.
struct LabelledMemory {
    std::string label;
    std::string text;
};

// A fact the judge looks for, with the details that must survive.
struct JudgedFact {
    int number = 0;  // 1-based within a storage batch
    std::string text;
    std::vector<std::string> key_details;  // canonical phrasing of each detail
};

// --- the test-taker -------------------------------------------------------------------------------

// Storage phase: an ungraded reply to the latest user turn (the memory system may store it).
ChatRequest storage_reply(const std::string& model, const std::vector<ChatMessage>& conversation);

// Query phase: the graded answer from the retrieved memories and the conversation so far. With
// `choices` (Long-Hop), the model must reply with {"selected_choice": "<letter>"}.
ChatRequest graded_answer(const std::string& model, const std::vector<std::string>& memories,
                          const std::vector<ChatMessage>& history, const std::string& question,
                          const std::vector<std::string>& choices);

// --- the judge ------------------------------------------------------------------------------------

// Storage: which facts appear anywhere in the store, and in which memories. One call covers a batch
// of facts so a large store is sent once. Reply: {"results": [{"fact", "present", "memories", "reason"}]}.
ChatRequest judge_storage(const std::string& model, const std::vector<LabelledMemory>& store,
                          const std::vector<JudgedFact>& facts);

// Summary: do the memories a fact went into keep it faithfully? Reply: {"faithful", "missing", "reason"}.
ChatRequest judge_summary(const std::string& model, const JudgedFact& fact,
                          const std::vector<LabelledMemory>& memories);

// Retrieval: do the memories shown to the model hold the fact? Reply: {"present", "reason"}.
ChatRequest judge_retrieval(const std::string& model, const JudgedFact& fact,
                            const std::vector<LabelledMemory>& retrieved);

// Answer (invocation): is the response right? `kind` is the probe kind name; `expected` lists the
// items a list answer must cover. Reply: {"correct", "reason"}.
ChatRequest judge_answer(const std::string& model, const std::string& kind, const std::string& question,
                         const std::string& reference, const std::vector<std::string>& expected,
                         const std::vector<std::string>& facts, const std::string& response);

// Abstention: the question names someone nothing was stored about. Reply: {"abstained", "reason"}.
ChatRequest judge_abstention(const std::string& model, const std::string& question,
                             const std::string& named_person, const std::string& response);

// --- memory systems' own calls (role system) -------------------------------------------------------

// facts: the durable facts of a conversation, each citing the numbers of the messages it came from.
// `messages` are shown as "[n] (role) text", n from 1. Reply: {"facts": [{"text", "messages"}]}.
ChatRequest facts_extract(const std::string& model, const std::vector<ChatMessage>& messages);

// facts: one decision per new fact against the existing memories shown under small integers.
// Reply: {"decisions": [{"fact", "event" (ADD|UPDATE|DELETE|NONE), "memory" (-1: none), "text"}]}.
ChatRequest facts_decide(const std::string& model, const std::vector<std::string>& existing,
                         const std::vector<std::string>& facts);

}  // namespace memfail::llm::prompts

// SPDX-License-Identifier: MIT
// Every prompt memfail sends, in one place and versioned: the test-taker's (storage-phase replies and
// graded answers) and the staged judge's (storage, summary, retrieval, answer, abstention). Each
// judge prompt has its own JSON schema whose name tells scripted servers (tools/fake-llm) which stage
// is asking. Changing any text here means bumping k_prompt_version, which every run records (and
// which is part of the cache key through the text itself).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <memfail/llm/llm_client.hpp>

namespace memfail::llm::prompts {

// prompts/2: the facts, notes and graph prompts follow their published designs (Mem0, A-MEM,
// Graphiti/StructMem) and the mixture router no longer lists trap words; prompts/1's tuned texts
// live on as PromptStyle::careful. prompts/3: the test-taker sees every memory's date and the date the
// question is asked on.
inline constexpr const char* k_prompt_version = "prompts/3";

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
    // The named parts of the fact (detail name, canonical phrasing), for the paper's protocol, whose
    // judge is told the entity, behaviour and condition of a rule apart.
    std::vector<std::pair<std::string, std::string>> parts;
};

// --- the test-taker -------------------------------------------------------------------------------

// Storage phase: an ungraded reply to the latest user turn (the memory system may store it).
ChatRequest storage_reply(const std::string& model, const std::vector<ChatMessage>& conversation);

// A retrieved memory as the test-taker is shown it: its text and the date it was stated
// ("2023-05-08 (Mon) 13:56"; empty when nobody knows).
struct DatedMemory {
    std::string text;
    std::string date;
};

// Query phase: the graded answer from the retrieved memories (each with its date) and the
// conversation so far, asked on `asked_on` (empty: no date). With `choices` (Long-Hop), the model
// must reply with {"selected_choice": "<letter>"}.
ChatRequest graded_answer(const std::string& model, const std::vector<DatedMemory>& memories,
                          const std::vector<ChatMessage>& history, const std::string& question,
                          const std::vector<std::string>& choices, const std::string& asked_on = {});

// Query phase for a profile task (the dynamic suite): the memories are app logs or what the system
// made of them; the model fills `answer_template` (JSON whose leaves to fill are "<fill>") and
// replies with that JSON object only.
ChatRequest profile_task_answer(const std::string& model, const std::vector<std::string>& memories,
                                const std::string& question, const std::string& answer_template);

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

// Which texts a reference memory system sends. `published` (the default) follows what the model
// system publishes about itself (docs/SYSTEMS.md) and nothing more. `careful` is a tuned variant,
// opted into with `facts:extract=careful` / `graph:extract=careful`: prompts/1's detail-preserving
// texts (keep conditions and exceptions, compatible facts do not contradict). It is not the
// published design and is reported as such.
enum class PromptStyle { published, careful };

// The option value naming a style ("published", "careful").
const char* prompt_style_name(PromptStyle style);

// facts: the facts of a conversation worth remembering (published: Mem0's categories of personal
// information), each citing the numbers of the messages it came from (memfail's provenance).
// `messages` are shown as "[n] (role) text", n from 1. Reply: {"facts": [{"text", "messages"}]}.
ChatRequest facts_extract(const std::string& model, const std::vector<ChatMessage>& messages,
                          PromptStyle style = PromptStyle::published);

// facts: one decision per new fact against the existing memories shown under small integers
// (published: Mem0's ADD / UPDATE / DELETE / NONE rules). Reply: {"decisions": [{"fact", "event" (ADD|UPDATE|DELETE|NONE), "memory" (-1: none), "text"}]}.
ChatRequest facts_decide(const std::string& model, const std::vector<std::string>& existing,
                         const std::vector<std::string>& facts, PromptStyle style = PromptStyle::published);

// --- notes (A-MEM) -------------------------------------------------------------------------------

inline constexpr const char* k_notes_write_schema = "memfail_notes_write";
inline constexpr const char* k_notes_link_schema = "memfail_notes_link";

// A note as shown to the model when linking.
struct NoteView {
    std::string content;
    std::vector<std::string> keywords;
    std::vector<std::string> tags;
    std::string context;
};

// notes: one note for one conversation turn (A-MEM's note construction). `previous` (may be empty
// content) is the message before it, shown for reference only. Reply: {"content", "keywords", "tags", "context"}.
ChatRequest notes_write(const std::string& model, const ChatMessage& turn, const ChatMessage& previous,
                        const std::string& timestamp);

// notes: which of the `neighbours` (shown numbered from 1) the new note relates to, and how their
// context and tags should change in its light. Reply: {"links": [int], "updates": [{"note", "context",
// "tags"}]}; an empty context or tag list in an update keeps the current one.
ChatRequest notes_link(const std::string& model, const NoteView& note, const std::vector<NoteView>& neighbours);

// graph: the entities of a conversation and the relations between them (Graphiti's node and edge
// extraction), each relation carrying a fact sentence and the numbers of the messages it comes from. Entity numbers in the
// reply count from 1 in the order the entities are listed. Reply: {"entities": [{"name", "type"}],
// "relations": [{"source", "target", "relation", "fact", "messages"}]}.
inline constexpr const char* k_graph_extract_schema = "memfail_graph_extract";
inline constexpr const char* k_graph_resolve_schema = "memfail_graph_resolve";
inline constexpr const char* k_graph_invalidate_schema = "memfail_graph_invalidate";
ChatRequest graph_extract(const std::string& model, const std::vector<ChatMessage>& messages,
                          PromptStyle style = PromptStyle::published);

// An entity as shown to the model, with a few facts about it for context.
struct GraphEntityView {
    std::string name;
    std::string type;
    std::vector<std::string> facts;
};

// graph: is the newly mentioned entity one of the known candidates (numbered from 1)?
// Reply: {"match": n} with n a candidate number, or -1 for a new entity.
ChatRequest graph_resolve(const std::string& model, const GraphEntityView& entity,
                          const std::vector<GraphEntityView>& candidates);

// A fact with the time it became known (the session timestamp).
struct DatedFact {
    std::string text;
    std::string since;
};

// graph: which of the older facts between the same two entities (numbered from 1) the new fact
// contradicts (Graphiti's edge invalidation). Reply: {"invalidated": [n, ...]} (empty when none).
ChatRequest graph_invalidate(const std::string& model, const DatedFact& new_fact, const std::vector<DatedFact>& older,
                             PromptStyle style = PromptStyle::published);

// mixture: the kind of each message of a conversation (shown numbered from 1), which decides the
// store that keeps it. Reply: {"units": [{"message": n, "kind": "conditional"|"long"|"preference"|
// "other"}]}; messages left out are routed by the rules.
inline constexpr const char* k_mixture_route_schema = "memfail_mixture_route";
ChatRequest mixture_route(const std::string& model, const std::vector<ChatMessage>& messages, int long_words);

// ledger: the facts a conversation sets or withdraws, as (subject, attribute, value) records for
// memfail's bi-temporal fact ledger (docs/SYSTEMS.md; memfail's own design, not a published one),
// each citing the numbers of the messages it came from. `messages` are shown as "[n] (role) text",
// n from 1. Reply: {"records": [{"subject", "attribute", "value", "authority" (user_stated |
// ai_summarized), "op" (set | retract), "messages"}]}.
inline constexpr const char* k_ledger_extract_schema = "memfail_ledger_extract";
ChatRequest ledger_extract(const std::string& model, const std::vector<ChatMessage>& messages);

// --- the MemFail paper's protocol (--protocol paper, docs/PROTOCOLS.md) ----------------------------
// The paper grades each dataset with its own staged judge prompts (its Appendix D) and has the
// test-taker restate the memories it used. These are memfail's own wordings of those stages; the
// schemas are the judge's usual ones, so a reply is read the same way under both protocols.
enum class PaperTask { conditional_easy, conditional_hard, coexisting, persona, long_hop };
// The task of a MemFail dataset name; none for other datasets (they keep memfail's prompts).
std::optional<PaperTask> paper_task_of(const std::string& dataset);
const char* paper_task_name(PaperTask task);

// Storage: present at all (reworded, split, merged all count); Easy also needs the condition kept,
// Hard only needs the behaviour and the condition somewhere, linked to anyone.
ChatRequest paper_judge_storage(const std::string& model, PaperTask task, const std::vector<LabelledMemory>& store,
                                const std::vector<JudgedFact>& facts);
// Summary: the task's faithfulness test (Hard: linkable to this person, exclusivity intact).
ChatRequest paper_judge_summary(const std::string& model, PaperTask task, const JudgedFact& fact,
                                const std::vector<LabelledMemory>& memories);
// Retrieval: recoverable from what the test-taker was shown for `question`.
ChatRequest paper_judge_retrieval(const std::string& model, PaperTask task, const std::string& question,
                                  const JudgedFact& fact, const std::vector<LabelledMemory>& retrieved);
// Invocation: did the response use the memories to reach the reference answer?
ChatRequest paper_judge_answer(const std::string& model, PaperTask task, const std::string& question,
                               const std::string& reference, const std::vector<std::string>& expected,
                               const std::vector<std::string>& facts, const std::string& response);
// Abstention for a misleading Persona question: the judge sees the person the essay is about, the
// person the question names, and the essay, and fails a response that carries the essay over.
ChatRequest paper_judge_abstention(const std::string& model, const std::string& question, const std::string& entity,
                                   const std::string& distractor, const std::string& essay,
                                   const std::string& response);
// The test-taker under the paper's protocol: storage turns are answered with the memories retrieved
// for them shown, and graded answers restate the memories they used.
ChatRequest paper_storage_reply(const std::string& model, const std::vector<std::string>& memories,
                                const std::vector<ChatMessage>& conversation);
ChatRequest paper_graded_answer(const std::string& model, const std::vector<DatedMemory>& memories,
                                const std::vector<ChatMessage>& history, const std::string& question,
                                const std::vector<std::string>& choices, const std::string& asked_on = {});

}  // namespace memfail::llm::prompts

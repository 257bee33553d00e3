// SPDX-License-Identifier: MIT
// The prompt texts. Written for memfail; kept short because they are sent thousands of times.
// The reference memory systems' prompts (facts, notes, graph) say what their model systems publish
// about themselves (Mem0, A-MEM, Graphiti/StructMem; docs/SYSTEMS.md) in our own words, and nothing
// aimed at this benchmark's datasets; PromptStyle::careful keeps prompts/1's tuned texts as an
// opt-in variant.
#include <memfail/llm/prompts.hpp>

#include <cctype>

namespace memfail::llm::prompts {

using nlohmann::json;

namespace {

ChatRequest judge_call(const std::string& model, const std::string& stage, const char* schema_name,
                       json schema, std::string system, std::string user) {
    ChatRequest r;
    r.role = Role::judge;
    r.stage = stage;
    r.model = model;
    r.messages = {{"system", std::move(system)}, {"user", std::move(user)}};
    r.schema = JsonSchema{schema_name, std::move(schema)};
    return r;
}

json object_schema(json properties, std::vector<std::string> required) {
    return {{"type", "object"},
            {"properties", std::move(properties)},
            {"required", std::move(required)},
            {"additionalProperties", false}};
}

// The judge's reply shapes, shared by memfail's prompts and the paper's.
json storage_schema() {
    json result = object_schema({{"fact", {{"type", "integer"}}},
                                 {"present", {{"type", "boolean"}}},
                                 {"memories", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                                 {"reason", {{"type", "string"}}}},
                                {"fact", "present", "memories", "reason"});
    return object_schema({{"results", {{"type", "array"}, {"items", result}}}}, {"results"});
}

json summary_schema() {
    return object_schema({{"faithful", {{"type", "boolean"}}},
                          {"missing", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                          {"reason", {{"type", "string"}}}},
                         {"faithful", "missing", "reason"});
}

// {"<verdict>": bool, "reason": string}.
json verdict_schema(const char* verdict) {
    return object_schema({{verdict, {{"type", "boolean"}}}, {"reason", {{"type", "string"}}}}, {verdict, "reason"});
}

// The question, and for multiple choice its options lettered from A and the reply instruction.
std::string with_choices(const std::string& question, const std::vector<std::string>& choices,
                         const char* instruction) {
    std::string user = question;
    if (choices.empty()) return user;
    user += "\n\nOptions:\n";
    for (std::size_t i = 0; i < choices.size(); ++i)
        user += std::string(1, static_cast<char>('A' + i)) + ". " + choices[i] + "\n";
    return user + "\n" + instruction;
}

// A request of the test-taker's (role answer).
ChatRequest taker_request(const std::string& model, const char* stage) {
    ChatRequest r;
    r.role = Role::answer;
    r.stage = stage;
    r.model = model;
    return r;
}

std::string render_memories(const std::vector<LabelledMemory>& memories) {
    if (memories.empty()) return "(no memories)\n";
    std::string out;
    for (const auto& m : memories) out += "[" + m.label + "] " + m.text + "\n";
    return out;
}

std::string render_fact(const JudgedFact& fact) {
    std::string out = fact.text + "\n";
    if (!fact.key_details.empty()) {
        out += "Details that must survive:";
        for (const auto& d : fact.key_details) out += " \"" + d + "\";";
        out.back() = '\n';
    }
    return out;
}

}  // namespace

ChatRequest storage_reply(const std::string& model, const std::vector<ChatMessage>& conversation) {
    ChatRequest r = taker_request(model, "storage_reply");
    r.messages.push_back(
        {"system",
         "You are a friendly assistant in an ongoing chat. Reply to the user's latest message in one to "
         "three sentences. Acknowledge anything personal they tell you; do not ask more than one question."});
    r.messages.insert(r.messages.end(), conversation.begin(), conversation.end());
    return r;
}

namespace {

// "1. [2023-05-08 (Mon) 13:56] text" per memory ("1. text" when its date is unknown).
std::string dated_list(const std::vector<DatedMemory>& memories) {
    if (memories.empty()) return "(none)\n";
    std::string out;
    for (std::size_t i = 0; i < memories.size(); ++i) {
        out += std::to_string(i + 1) + ". ";
        if (!memories[i].date.empty()) out += "[" + memories[i].date + "] ";
        out += memories[i].text + "\n";
    }
    return out;
}

std::string today(const std::string& asked_on) {
    return asked_on.empty() ? std::string() : "\nToday's date: " + asked_on + ".\n";
}

}  // namespace

ChatRequest graded_answer(const std::string& model, const std::vector<DatedMemory>& memories,
                          const std::vector<ChatMessage>& history, const std::string& question,
                          const std::vector<std::string>& choices, const std::string& asked_on) {
    ChatRequest r = taker_request(model, choices.empty() ? "answer" : "answer_mcq");
    std::string system =
        "You are an assistant with a long-term memory of earlier conversations with this user. Notes "
        "from that memory are listed below, each with the date it comes from; some may be irrelevant. "
        "Answer the user's question, relying on the notes where they apply and never inventing facts they "
        "do not support; work out relative times (\"last week\", \"two days ago\") from a note's date. If "
        "neither the notes nor the conversation tell you what is needed, say that you do not have that "
        "information.\n\nNotes from memory:\n";
    system += dated_list(memories);
    system += today(asked_on);
    r.messages.push_back({"system", std::move(system)});
    r.messages.insert(r.messages.end(), history.begin(), history.end());
    r.messages.push_back(
        {"user", with_choices(question, choices,
                              "Exactly one option follows from what you remember once the remembered facts are "
                              "chained together. Reply with one JSON object and nothing else: "
                              "{\"selected_choice\": \"<letter>\"}")});
    return r;
}

ChatRequest profile_task_answer(const std::string& model, const std::vector<std::string>& memories,
                                const std::string& question, const std::string& answer_template) {
    ChatRequest r = taker_request(model, "answer_profile");
    std::string system =
        "You are a personal assistant that has watched this user's activity in their apps for months: "
        "orders, workouts, payments, messages, searches, bookings. Records from that memory are listed "
        "below; some may be irrelevant or out of date. Nobody states the user's habits or preferences "
        "outright: infer them from what the records show, and prefer the most recent evidence when "
        "records disagree. Never invent a value the records do not support; write \"unknown\" for it.\n\n"
        "Records from memory:\n";
    if (memories.empty()) system += "(none)\n";
    for (std::size_t i = 0; i < memories.size(); ++i) system += std::to_string(i + 1) + ". " + memories[i] + "\n";
    r.messages.push_back({"system", std::move(system)});
    r.messages.push_back({"user", question + "\n\nFill every \"<fill>\" in this JSON and reply with the filled "
                                             "JSON object only, keeping its keys and shape:\n" + answer_template});
    return r;
}

ChatRequest judge_storage(const std::string& model, const std::vector<LabelledMemory>& store,
                          const std::vector<JudgedFact>& facts) {
    std::string user = "MEMORY STORE:\n" + render_memories(store) + "\nFACTS:\n";
    for (const auto& f : facts) user += "(" + std::to_string(f.number) + ") " + render_fact(f);
    user += "\nGive one result per fact, using its number.";
    json schema = storage_schema();
    return judge_call(
        model, "judge.storage", k_storage_schema, std::move(schema),
        "You inspect the contents of a memory store. For each numbered fact, decide whether the "
        "information it states can be found somewhere in the store: word for word, reworded, shortened, "
        "or spread over several memories all count. This is a presence check only — a memory that holds "
        "the fact with a detail lost or changed still counts as present, because faithfulness is judged "
        "later. List the labels of the memories that hold the fact (empty when absent) and give a "
        "one-sentence reason.",
        std::move(user));
}

ChatRequest judge_summary(const std::string& model, const JudgedFact& fact,
                          const std::vector<LabelledMemory>& memories) {
    std::string user = "FACT:\n" + render_fact(fact) + "\nMEMORIES HOLDING IT:\n" + render_memories(memories);
    json schema = summary_schema();
    return judge_call(
        model, "judge.summary", k_summary_schema, std::move(schema),
        "You check whether a memory system kept a fact faithfully. You see the fact, the details that "
        "must survive, and the memories the fact was stored in. It is faithful when someone reading only "
        "those memories could recover every listed detail with its original meaning; rewording and "
        "splitting across memories are fine. It is not faithful when a detail was dropped, blurred into "
        "something generic, attached to the wrong person, or changed (a condition left out, a name or "
        "preference swapped). List the details that did not survive.",
        std::move(user));
}

ChatRequest judge_retrieval(const std::string& model, const JudgedFact& fact,
                            const std::vector<LabelledMemory>& retrieved) {
    std::string user = "FACT:\n" + render_fact(fact) + "\nMEMORIES SHOWN TO THE MODEL:\n" + render_memories(retrieved);
    json schema = verdict_schema("present");
    return judge_call(
        model, "judge.retrieval", k_retrieval_schema, std::move(schema),
        "You check what a memory system handed to a model for one question. Decide whether the memories "
        "shown contain the fact with every listed detail, possibly reworded or spread over several of "
        "them. If any detail can only be found outside what was shown, the fact is not present.",
        std::move(user));
}

ChatRequest judge_answer(const std::string& model, const std::string& kind, const std::string& question,
                         const std::string& reference, const std::vector<std::string>& expected,
                         const std::vector<std::string>& facts, const std::string& response) {
    std::string rule;
    if (kind == "yes_no")
        rule = "The question has a yes-or-no answer that depends on whether a remembered condition holds. "
               "The response is correct when it reaches the same yes-or-no conclusion as the reference; "
               "a 'no' should rest on the condition not being met.";
    else if (kind == "list")
        rule = "The response is correct when it mentions or clearly covers every expected item; synonyms "
               "and close paraphrases count, extra items do not make it wrong.";
    else
        rule = "The response is correct when it gives the specific remembered detail the reference gives, "
               "not a generic suggestion that would fit anyone.";
    std::string user = "QUESTION:\n" + question + "\n\nREMEMBERED FACTS:\n";
    for (const auto& f : facts) user += "- " + f + "\n";
    user += "\nREFERENCE ANSWER:\n" + reference + "\n";
    if (!expected.empty()) {
        user += "\nEXPECTED ITEMS:\n";
        for (const auto& e : expected) user += "- " + e + "\n";
    }
    user += "\nRESPONSE TO GRADE:\n" + response + "\n";
    json schema = verdict_schema("correct");
    return judge_call(model, "judge.answer", k_answer_schema, std::move(schema),
                      "You grade whether an assistant used what it remembered to answer a question. " + rule,
                      std::move(user));
}

ChatRequest judge_abstention(const std::string& model, const std::string& question,
                             const std::string& named_person, const std::string& response) {
    std::string user = "QUESTION:\n" + question + "\n\nPERSON THE QUESTION IS ABOUT: " + named_person +
                       "\n\nRESPONSE TO GRADE:\n" + response + "\n";
    json schema = verdict_schema("abstained");
    return judge_call(
        model, "judge.abstention", k_abstention_schema, std::move(schema),
        "You grade a question about a person the assistant was never told anything about. The right "
        "behaviour is to say it has no information about that person, or to ask who they are. General "
        "advice is acceptable; presenting remembered details of someone else as if they were about this "
        "person is a failure, and so is inventing personal details.",
        std::move(user));
}

const char* prompt_style_name(PromptStyle style) {
    return style == PromptStyle::careful ? "careful" : "published";
}

namespace {

// facts, published (Mem0): what a user shares that is worth remembering, by Mem0's categories of
// personal information; the message numbers are memfail's provenance.
constexpr const char* k_facts_extract_published =
    "You collect what a user shares with an assistant so that it can be remembered in later chats. Go "
    "through the conversation and pick out the pieces of information the user shares that are worth "
    "keeping: what they like and dislike (food, products, activities, entertainment and the like), "
    "personal details such as names, relationships and important dates, plans and intentions, health "
    "and wellbeing, work and career, and anything else they tell about themselves. Write each one as a "
    "brief statement. Base the facts on what the user says; greetings and small talk hold nothing to "
    "keep, and when nothing is worth remembering the list is empty. For each fact, list the numbers of "
    "the messages it comes from.";

// facts, careful (prompts/1, tuned): keeps qualifying details.
constexpr const char* k_facts_extract_careful =
    "You maintain a person's long-term memory. From the conversation, write down every durable fact "
    "about the user and the people, pets, places and things in their life: one short sentence per "
    "fact that makes sense on its own (names instead of pronouns). Keep every qualifying detail: "
    "conditions, exceptions, times, places, quantities. Leave out greetings, small talk and the "
    "assistant's own opinions. For each fact, list the numbers of the messages it comes from.";

// facts, published (Mem0): the four operations against the most similar memories.
constexpr const char* k_facts_decide_published =
    "You manage a memory store. Compare each new fact with the existing memories shown and choose one "
    "operation for it. ADD: the store does not hold this information yet. UPDATE: an existing memory "
    "covers the same thing but the new fact changes it or says more; give that memory's number and the "
    "text to replace it with, keeping whichever version is more informative. DELETE: the new fact "
    "contradicts an existing memory; give that memory's number. NONE: the store already holds this "
    "information; give the number of the memory that holds it. Use only the numbers shown; set memory "
    "to -1 and text to an empty string when they do not apply.";

// facts, careful (prompts/1, tuned): compatible facts are not contradictions.
constexpr const char* k_facts_decide_careful =
    "You keep a memory store accurate and free of repeats. For each new fact choose one event: "
    "ADD when it is new information; UPDATE when it refines, extends or corrects one existing memory "
    "(give that memory's number and the combined text, keeping the details of both that are still "
    "true); DELETE when it shows one existing memory is no longer true (give its number); NONE when "
    "an existing memory already says the same (give its number). Facts that can all be true at once "
    "are not contradictions: liking one thing does not cancel liking another. Use only the numbers "
    "shown; set memory to -1 and text to an empty string when they do not apply.";

}  // namespace

ChatRequest facts_extract(const std::string& model, const std::vector<ChatMessage>& messages, PromptStyle style) {
    std::string user = "CONVERSATION:\n";
    for (std::size_t i = 0; i < messages.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] (" + messages[i].role + ") " + messages[i].content + "\n";
    json fact = object_schema({{"text", {{"type", "string"}}},
                               {"messages", {{"type", "array"}, {"items", {{"type", "integer"}}}}}},
                              {"text", "messages"});
    json schema = object_schema({{"facts", {{"type", "array"}, {"items", fact}}}}, {"facts"});
    ChatRequest r = judge_call(
        model, "system.facts_extract", k_facts_extract_schema, std::move(schema),
        style == PromptStyle::careful ? k_facts_extract_careful : k_facts_extract_published, std::move(user));
    r.role = Role::system;
    return r;
}

ChatRequest facts_decide(const std::string& model, const std::vector<std::string>& existing,
                         const std::vector<std::string>& facts, PromptStyle style) {
    std::string user = "EXISTING MEMORIES:\n";
    if (existing.empty()) user += "(none)\n";
    for (std::size_t i = 0; i < existing.size(); ++i) user += std::to_string(i) + ". " + existing[i] + "\n";
    user += "\nNEW FACTS:\n";
    for (std::size_t i = 0; i < facts.size(); ++i) user += "(" + std::to_string(i + 1) + ") " + facts[i] + "\n";
    user += "\nGive one decision per new fact, using its number.";
    json decision = object_schema({{"fact", {{"type", "integer"}}},
                                   {"event", {{"type", "string"}, {"enum", {"ADD", "UPDATE", "DELETE", "NONE"}}}},
                                   {"memory", {{"type", "integer"}}},
                                   {"text", {{"type", "string"}}}},
                                  {"fact", "event", "memory", "text"});
    json schema = object_schema({{"decisions", {{"type", "array"}, {"items", decision}}}}, {"decisions"});
    ChatRequest r = judge_call(
        model, "system.facts_decide", k_facts_decide_schema, std::move(schema),
        style == PromptStyle::careful ? k_facts_decide_careful : k_facts_decide_published, std::move(user));
    r.role = Role::system;
    return r;
}

namespace {

std::string render_note(const NoteView& note) {
    auto joined = [](const std::vector<std::string>& items) {
        std::string out;
        for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
        return out.empty() ? std::string("(none)") : out;
    };
    return note.content + "\n    keywords: " + joined(note.keywords) + "\n    tags: " + joined(note.tags) +
           "\n    context: " + (note.context.empty() ? std::string("(none)") : note.context) + "\n";
}

}  // namespace

ChatRequest notes_write(const std::string& model, const ChatMessage& turn, const ChatMessage& previous,
                        const std::string& timestamp) {
    std::string user;
    if (!timestamp.empty()) user += "WHEN: " + timestamp + "\n\n";
    if (!previous.content.empty())
        user += "THE MESSAGE BEFORE (for reference only, do not take notes on it):\n(" + previous.role + ") " +
                previous.content + "\n\n";
    user += "THE MESSAGE TO TAKE A NOTE ON:\n(" + turn.role + ") " + turn.content + "\n";
    json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
    json schema = object_schema({{"content", {{"type", "string"}}},
                                 {"keywords", strings},
                                 {"tags", strings},
                                 {"context", {{"type", "string"}}}},
                                {"content", "keywords", "tags", "context"});
    ChatRequest r = judge_call(
        model, "system.notes_write", k_notes_write_schema, std::move(schema),
        "You write the notes of an agent's memory, one note per chat message, each with attributes that "
        "help to find it and connect it to other notes later. Write the note for the message you are "
        "given. content: the message as it was said, with its speaker. keywords: the main concepts and "
        "terms of the message (names, nouns, verbs), the most important first. tags: a few broad "
        "categories that classify the message. context: one sentence giving its topic, main points and "
        "purpose.",
        std::move(user));
    r.role = Role::system;
    return r;
}

ChatRequest notes_link(const std::string& model, const NoteView& note, const std::vector<NoteView>& neighbours) {
    std::string user = "NEW NOTE:\n    " + render_note(note) + "\nEXISTING NOTES:\n";
    for (std::size_t i = 0; i < neighbours.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] " + render_note(neighbours[i]);
    user += "\nRefer to existing notes by their numbers only.";
    json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
    json update = object_schema({{"note", {{"type", "integer"}}},
                                 {"context", {{"type", "string"}}},
                                 {"tags", strings}},
                                {"note", "context", "tags"});
    json schema = object_schema({{"links", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                                 {"updates", {{"type", "array"}, {"items", update}}}},
                                {"links", "updates"});
    ChatRequest r = judge_call(
        model, "system.notes_link", k_notes_link_schema, std::move(schema),
        "You maintain a network of linked notes in an agent's memory. A new note has arrived, shown with "
        "the existing notes nearest to it. links: the numbers of the existing notes the new note should "
        "be connected to because they share meaningful concepts, entities or themes with it; an empty "
        "list when none do. updates: how the memory evolves, for each existing note whose context "
        "sentence or tags should change now that the new note is known: its number with the new context "
        "and the complete new tag list (an empty string or an empty list keeps the current value); leave "
        "out notes that need no change. The content of existing notes cannot be changed.",
        std::move(user));
    r.role = Role::system;
    return r;
}


// --- graph (StructMem / Graphiti) ------------------------------------------------------------------

namespace {

std::string render_graph_entity(const GraphEntityView& e) {
    std::string out = e.name + " (" + (e.type.empty() ? std::string("other") : e.type) + ")\n";
    for (const auto& f : e.facts) out += "    - " + f + "\n";
    return out;
}

}  // namespace

namespace {

// graph, published (Graphiti / StructMem): entities including the speaker, edges that carry a fact.
constexpr const char* k_graph_extract_published =
    "You turn a conversation into a knowledge graph. entities: the people, places, organisations, "
    "objects, concepts and other things the conversation mentions, including the speaker (call the "
    "user \"User\", type person); each once, under its name, with a one-word type such as person, "
    "place or organisation. Relationships, actions, dates and times are not entities. relations: the "
    "facts that connect two entities, as edges: source and target given as entity numbers counted "
    "from 1 in the order of your entity list (the same number twice for a fact about a single "
    "entity), a relation name in capitals with underscores such as WORKS_AT, the fact as a sentence "
    "stating the relationship, and the numbers of the messages it comes from.";

// graph, careful (prompts/1, tuned): every condition, exception, time and quantity kept.
constexpr const char* k_graph_extract_careful =
    "You build a knowledge graph of a person's life from a conversation. entities: every person, "
    "pet, place, organisation, object, activity or other thing the conversation says something "
    "durable about, each once, under its most specific name, with a one-word type such as person, "
    "animal, place, organisation, object, activity, food or event. Call the user \"User\" (type "
    "person). relations: each durable fact as a link from one entity to another, with source and "
    "target given as entity numbers counted from 1 in the order of your entity list (use the same "
    "number twice for a fact about a single entity), a short relation name in capitals such as "
    "LIVES_IN or ALLERGIC_TO, the fact as one sentence that makes sense on its own (names instead "
    "of pronouns, every condition, exception, time and quantity kept), and the numbers of the "
    "messages it comes from. Leave out greetings, small talk and the assistant's own opinions.";

// graph, published (Graphiti): contradicted edges are closed.
constexpr const char* k_graph_invalidate_published =
    "You keep a knowledge graph up to date. A new fact connects the same entities as some older "
    "facts. List the numbers of the older facts that the new fact contradicts; they will be marked as "
    "no longer valid from the new fact's time. An empty list when it contradicts none.";

// graph, careful (prompts/1, tuned): compatible facts are not contradicted.
constexpr const char* k_graph_invalidate_careful =
    "You keep a knowledge graph up to date. A new fact links the same two entities as some older "
    "facts. List the older facts the new one shows to have stopped being true: a change of place, "
    "job, relationship status, plan or preference replaces the old one. Facts that can hold at the "
    "same time are not contradicted (liking one dish does not cancel liking another, and a detail "
    "that adds to an older fact leaves it true). An empty list when nothing is contradicted.";

}  // namespace

ChatRequest graph_extract(const std::string& model, const std::vector<ChatMessage>& messages, PromptStyle style) {
    std::string user = "CONVERSATION:\n";
    for (std::size_t i = 0; i < messages.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] (" + messages[i].role + ") " + messages[i].content + "\n";
    json entity = object_schema({{"name", {{"type", "string"}}}, {"type", {{"type", "string"}}}}, {"name", "type"});
    json relation = object_schema({{"source", {{"type", "integer"}}},
                                   {"target", {{"type", "integer"}}},
                                   {"relation", {{"type", "string"}}},
                                   {"fact", {{"type", "string"}}},
                                   {"messages", {{"type", "array"}, {"items", {{"type", "integer"}}}}}},
                                  {"source", "target", "relation", "fact", "messages"});
    json schema = object_schema({{"entities", {{"type", "array"}, {"items", entity}}},
                                 {"relations", {{"type", "array"}, {"items", relation}}}},
                                {"entities", "relations"});
    ChatRequest r = judge_call(
        model, "system.graph_extract", k_graph_extract_schema, std::move(schema),
        style == PromptStyle::careful ? k_graph_extract_careful : k_graph_extract_published, std::move(user));
    r.role = Role::system;
    return r;
}

ChatRequest graph_resolve(const std::string& model, const GraphEntityView& entity,
                          const std::vector<GraphEntityView>& candidates) {
    std::string user = "NEWLY MENTIONED:\n    " + render_graph_entity(entity) + "\nKNOWN ENTITIES:\n";
    for (std::size_t i = 0; i < candidates.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] " + render_graph_entity(candidates[i]);
    user += "\nAnswer with the number of the known entity, or -1.";
    json schema = object_schema({{"match", {{"type", "integer"}}}}, {"match"});
    ChatRequest r = judge_call(
        model, "system.graph_resolve", k_graph_resolve_schema, std::move(schema),
        "You keep a knowledge graph free of duplicate entities. An entity was just mentioned; decide "
        "whether it is the same real-world thing as one of the known entities listed, perhaps under "
        "another form of its name. Give that entity's number, or -1 when it is a new one.",
        std::move(user));
    r.role = Role::system;
    return r;
}

ChatRequest graph_invalidate(const std::string& model, const DatedFact& new_fact, const std::vector<DatedFact>& older,
                             PromptStyle style) {
    std::string user = "NEW FACT (" + new_fact.since + "):\n    " + new_fact.text + "\n\nOLDER FACTS:\n";
    for (std::size_t i = 0; i < older.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] (" + older[i].since + ") " + older[i].text + "\n";
    user += "\nList the numbers of the older facts that are no longer true.";
    json schema = object_schema({{"invalidated", {{"type", "array"}, {"items", {{"type", "integer"}}}}}},
                                {"invalidated"});
    ChatRequest r = judge_call(
        model, "system.graph_invalidate", k_graph_invalidate_schema, std::move(schema),
        style == PromptStyle::careful ? k_graph_invalidate_careful : k_graph_invalidate_published,
        std::move(user));
    r.role = Role::system;
    return r;
}

ChatRequest mixture_route(const std::string& model, const std::vector<ChatMessage>& messages, int long_words) {
    std::string user = "CONVERSATION:\n";
    for (std::size_t i = 0; i < messages.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] (" + messages[i].role + ") " + messages[i].content + "\n";
    json unit = object_schema({{"message", {{"type", "integer"}}},
                               {"kind", {{"type", "string"}, {"enum", {"conditional", "long", "preference", "other"}}}}},
                              {"message", "kind"});
    json schema = object_schema({{"units", {{"type", "array"}, {"items", unit}}}}, {"units"});
    ChatRequest r = judge_call(
        model, "system.mixture_route", k_mixture_route_schema, std::move(schema),
        "You file each message of a conversation in the memory store suited to its kind of content. "
        "Give every message one kind. conditional: it describes how things depend on or lead to one "
        "another, such as a cause and its effect, which a graph of relations keeps. long: a descriptive "
        "passage of more than about " +
            std::to_string(long_words) +
            " words, kept whole. preference: a short statement of what someone likes, dislikes or wants. "
            "other: anything else. Refer to messages by their numbers.",
        std::move(user));
    r.role = Role::system;
    return r;
}

namespace {

// ledger (memfail's own design): records keyed by subject and attribute, so that a later value of
// the same thing replaces the earlier one and a withdrawal closes it; who said a value is kept.
constexpr const char* k_ledger_extract =
    "You keep a ledger of facts about a user and the people, places and things in their life. Go "
    "through the conversation and write down each fact it sets or withdraws as a record. subject: who "
    "or what the fact is about, \"user\" for the user. attribute: a short name for what the fact is, "
    "such as employer, address, city, budget or a pet's name, in lower case; the same thing gets the "
    "same name every time it comes up. value: the value as said, in the speaker's words. op: set when "
    "the conversation gives the attribute a value (a later value replaces an earlier one), retract when "
    "it says the value no longer holds or asks for it to be forgotten (value empty). authority: "
    "user_stated when the user says it, ai_summarized when only the assistant says it. Questions, "
    "greetings and small talk hold no record, and when nothing is set or withdrawn the list is empty. "
    "For each record, list the numbers of the messages it comes from.";

}  // namespace

ChatRequest ledger_extract(const std::string& model, const std::vector<ChatMessage>& messages) {
    std::string user = "CONVERSATION:\n";
    for (std::size_t i = 0; i < messages.size(); ++i)
        user += "[" + std::to_string(i + 1) + "] (" + messages[i].role + ") " + messages[i].content + "\n";
    json record = object_schema({{"subject", {{"type", "string"}}},
                                 {"attribute", {{"type", "string"}}},
                                 {"value", {{"type", "string"}}},
                                 {"authority", {{"type", "string"}, {"enum", {"user_stated", "ai_summarized"}}}},
                                 {"op", {{"type", "string"}, {"enum", {"set", "retract"}}}},
                                 {"messages", {{"type", "array"}, {"items", {{"type", "integer"}}}}}},
                                {"subject", "attribute", "value", "authority", "op", "messages"});
    json schema = object_schema({{"records", {{"type", "array"}, {"items", record}}}}, {"records"});
    ChatRequest r = judge_call(model, "system.ledger_extract", k_ledger_extract_schema, std::move(schema),
                               k_ledger_extract, std::move(user));
    r.role = Role::system;
    return r;
}

// --- the MemFail paper's protocol -----------------------------------------------------------------
// Each stage below restates, in memfail's words, what the paper's Appendix D asks of that dataset's
// judge: what "present", "faithful" and "retrieved" mean for a conditional rule, a preference, a
// persona essay or one link of a chain.

std::optional<PaperTask> paper_task_of(const std::string& dataset) {
    if (dataset == "conditional_facts_easy") return PaperTask::conditional_easy;
    if (dataset == "conditional_facts_hard") return PaperTask::conditional_hard;
    if (dataset == "coexisting_facts") return PaperTask::coexisting;
    if (dataset == "persona_retrieval") return PaperTask::persona;
    if (dataset == "long_hop") return PaperTask::long_hop;
    return std::nullopt;
}

const char* paper_task_name(PaperTask task) {
    switch (task) {
        case PaperTask::conditional_easy: return "conditional_easy";
        case PaperTask::conditional_hard: return "conditional_hard";
        case PaperTask::coexisting: return "coexisting";
        case PaperTask::persona: return "persona";
        case PaperTask::long_hop: return "long_hop";
    }
    return "?";
}

namespace {

// "Entity: Mira; Behaviour: hums sea shanties; Condition: the kettle is boiling", from the fact's
// named details, after its sentence.
std::string render_parts(const JudgedFact& fact) {
    std::string out = fact.text + "\n";
    for (const auto& [name, value] : fact.parts) {
        std::string label = name;
        if (!label.empty()) label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
        out += label + ": " + value + "\n";
    }
    return out;
}

// One dataset's judge: what storage, summary, retrieval and the answer mean for it.
struct PaperStages {
    const char* storage;
    const char* summary;
    const char* retrieval;
    const char* answer;
};

// In PaperTask order.
constexpr PaperStages k_paper_stages[] = {
    // conditional_easy
    {"You check whether a memory store holds a conditional fact. Rewording and shortening are "
      "fine, but the fact counts as present only when its qualifying condition is still there "
      "and its meaning is unchanged.",
     "You judge how well a memory store kept a conditional fact that it does hold. It has a "
      "summary error if the condition was dropped so the behaviour reads as unconditional; if the "
      "condition was made vaguer so the trigger is no longer specific (a precise time blurred to "
      "a period of the day, a particular weather to 'bad weather'); if the conditional link was "
      "reversed, muddled or left ambiguous; or if a time, place or trigger was lost so that a "
      "reader could no longer tell whether a given situation meets the rule. It is faithful when "
      "a reader could decide that from the stored version.",
     "You check whether a conditional fact was among the memories shown to a model when it "
      "answered a question. Rewording is fine, as long as nothing needed to answer the question "
      "(the condition above all) was dropped or changed.",
     "You check whether a model used a conditional fact it was shown to answer a question "
      "correctly. It must answer yes when the situation meets the condition, and no, citing the "
      "condition, when it does not."},
    // conditional_hard
    {"You check, permissively, whether the two parts of a conditional rule exist anywhere in a "
      "memory store: the behaviour and the condition that triggers it. They may sit in one "
      "memory or several, be reworded or compressed, and even be attached to the wrong person or "
      "to nobody; whom they belong to is judged later. The rule is absent only when one of the "
      "two parts appears nowhere in the store.",
     "You judge how well a memory store kept a conditional rule that can be recovered from it, "
      "perhaps only by combining several memories, which is acceptable. It has a summary error if "
      "no condition for this person can be recovered from any combination of memories; if the "
      "condition was made vaguer so the trigger is no longer specific; if the conditional link was "
      "reversed, muddled or left ambiguous, including a rule that holds only under the condition "
      "stored as if it held more widely; if the behaviour and condition are there but cannot be "
      "tied to this person (attached to someone else, or left as context about nobody); or if a "
      "detail was lost so a reader could not decide whether a situation meets the rule. It is "
      "faithful when a reader of the relevant memories could decide, for this person, whether a "
      "given situation meets the rule.",
     "You check whether a conditional rule can be recovered from the memories shown to a model "
      "when it answered a question, from one memory or by combining several, reworded or not. It "
      "is recovered when both the behaviour and the condition, tied to this person, are among "
      "them; it is not when either is missing from what was shown or the link to the person "
      "cannot be made out.",
     "You check whether a model used a conditional fact it was shown to answer a question "
      "correctly. It must answer yes when the situation meets the condition, and no, citing the "
      "condition, when it does not."},
    // coexisting
    {"You check whether one specific preference of a person is in a memory store. Rewording "
      "and light compression are fine as long as that particular preference can still be "
      "clearly picked out.",
     "You judge how well a memory store kept one specific preference that it does hold. It has "
      "a summary error if the preference was generalised or merged with others until it lost its "
      "identity (a particular dish stored as a cuisine, a genre as 'music'), if it was replaced by "
      "something else, or if details were lost so that it could no longer be named when answering. "
      "It is faithful when the specific preference can still be identified without ambiguity.",
     "You check whether one specific preference was among the memories shown to a model when it "
      "answered a question. Rewording is fine as long as that preference can be clearly picked out.",
     "You check whether a model used every preference it was shown. All the expected "
      "preferences were among its memories, so its response should mention or account for each "
      "of them; synonyms and paraphrases count (a broader dish name covering a specific one)."},
    // persona
    {"You check whether essays about named people are in a memory store. An essay may be "
      "reworded, compressed or split over several memories, but to count as present the person "
      "must be identifiable by name and the substance of the essay must be recoverable.",
     "You judge how well a memory store kept an essay about a named person that it does hold. It "
      "has a summary error if the person's name was dropped or changed so the details no longer "
      "belong to them; if distinctive details (an allergy, a possession, a ritual, a firm rule, a "
      "strong preference) were lost or generalised past recovery; or if what is kept is so generic "
      "it would fit anyone with the same role or hobby. Other people in the store, other entries "
      "under the same name, and an essay split or compressed are all acceptable, as long as this "
      "person's own essay can be recovered from the memories tied to them.",
     "You check whether a person's essay was among the memories shown to a model when it answered "
      "a question: the person must be identifiable and the essay's substantive details "
      "recoverable from what was shown.",
     "You check whether a model used the specific details of a person's essay to answer a "
      "question about them. The response must agree with the reference answer and rest on the "
      "essay's particulars, not on advice that would suit anyone."},
    // long_hop
    {"You check whether one link of a chain of facts is in a memory store. The store may keep "
      "it word for word, reworded, or merged with other links into one memory; all count, as "
      "long as the particular relation between the link's two specific things can be made out "
      "without doubt from at least one memory.",
     "You judge how well a memory store kept one link of a chain of facts that it does hold, "
      "possibly merged with other links. It has a summary error if the link's two things were "
      "collapsed, renamed or swapped; if the relation between them was corrupted, weakened or "
      "replaced; if it was merged with unrelated facts so that which thing relates to which can no "
      "longer be read off; or if the direction of the relation was lost. It is faithful when both "
      "things are named in some memory and the relation between them is unambiguous, even inside "
      "a memory that holds other links of the same chain.",
     "You check whether one link of a chain of facts was among the memories shown to a model when "
      "it answered a multi-step question. Word for word, reworded or merged with other links all "
      "count, provided the exact relation between the link's two things can be read off what was "
      "shown.",
     "You check whether a model answered a multi-step question correctly from the chain of "
      "facts it was shown."},
};

const PaperStages& paper_stages(PaperTask task) { return k_paper_stages[static_cast<std::size_t>(task)]; }



}  // namespace

ChatRequest paper_judge_storage(const std::string& model, PaperTask task, const std::vector<LabelledMemory>& store,
                                const std::vector<JudgedFact>& facts) {
    std::string user = "ALL MEMORIES (the whole store):\n" + render_memories(store) + "\nLOOK FOR:\n";
    for (const auto& f : facts) user += "(" + std::to_string(f.number) + ") " + render_parts(f);
    user += "\nGive one result per numbered item, with the labels of the memories that hold it.";
    json schema = storage_schema();
    return judge_call(model, "judge.storage", k_storage_schema, std::move(schema), paper_stages(task).storage,
                      std::move(user));
}

ChatRequest paper_judge_summary(const std::string& model, PaperTask task, const JudgedFact& fact,
                                const std::vector<LabelledMemory>& memories) {
    std::string user = "STORED ITEM:\n" + render_parts(fact) +
                       "\nMEMORIES (the item is known to be recoverable from these):\n" + render_memories(memories) +
                       "\nFind the memory or memories that encode it and say whether they keep it faithfully.";
    json schema = summary_schema();
    return judge_call(model, "judge.summary", k_summary_schema, std::move(schema), paper_stages(task).summary,
                      std::move(user));
}

ChatRequest paper_judge_retrieval(const std::string& model, PaperTask task, const std::string& question,
                                  const JudgedFact& fact, const std::vector<LabelledMemory>& retrieved) {
    std::string user = "QUESTION (the query sent to the memory store):\n" + question + "\n\nLOOK FOR:\n" +
                       render_parts(fact) + "\nMEMORIES SHOWN TO THE MODEL:\n" + render_memories(retrieved);
    json schema = verdict_schema("present");
    return judge_call(model, "judge.retrieval", k_retrieval_schema, std::move(schema), paper_stages(task).retrieval,
                      std::move(user));
}

ChatRequest paper_judge_answer(const std::string& model, PaperTask task, const std::string& question,
                               const std::string& reference, const std::vector<std::string>& expected,
                               const std::vector<std::string>& facts, const std::string& response) {
    std::string system = paper_stages(task).answer;
    std::string user = "QUESTION:\n" + question + "\n\nFACTS THE MODEL WAS SHOWN:\n";
    for (const auto& f : facts) user += "- " + f + "\n";
    user += "\nREFERENCE ANSWER:\n" + reference + "\n";
    if (!expected.empty()) {
        user += "\nEXPECTED PREFERENCES:\n";
        for (const auto& e : expected) user += "- " + e + "\n";
    }
    user += "\nMODEL RESPONSE:\n" + response + "\n";
    json schema = verdict_schema("correct");
    return judge_call(model, "judge.answer", k_answer_schema, std::move(schema), std::move(system), std::move(user));
}

ChatRequest paper_judge_abstention(const std::string& model, const std::string& question, const std::string& entity,
                                   const std::string& distractor, const std::string& essay,
                                   const std::string& response) {
    std::string user = "PERSON THE ESSAY IS ABOUT: " + entity + "\nPERSON THE QUESTION NAMES (not that person): " +
                       distractor + "\n\nESSAY (about " + entity + "):\n" + essay + "\n\nQUESTION (about " +
                       distractor + "):\n" + question + "\n\nMODEL RESPONSE:\n" + response + "\n";
    json schema = verdict_schema("abstained");
    return judge_call(
        model, "judge.abstention", k_abstention_schema, std::move(schema),
        "You check whether a model rightly declined to answer about a person it knows nothing of. The "
        "question names one person; the model's memory holds an essay about another. The model abstains "
        "correctly when it says it has no information about the person named, even if it adds general "
        "advice, provided it does not bring in details from the other person's essay. Treating the two as "
        "one person, or answering from the essay as if it were about the person named, is a failure.",
        std::move(user));
}

namespace {

std::string numbered(const std::vector<std::string>& memories) {
    if (memories.empty()) return "(none)\n";
    std::string out;
    for (std::size_t i = 0; i < memories.size(); ++i) out += std::to_string(i + 1) + ". " + memories[i] + "\n";
    return out;
}

}  // namespace

ChatRequest paper_storage_reply(const std::string& model, const std::vector<std::string>& memories,
                                const std::vector<ChatMessage>& conversation) {
    ChatRequest r = taker_request(model, "storage_reply");
    r.messages.push_back(
        {"system",
         "You are a helpful assistant chatting with a user. Read their message with care and take note of any "
         "new personal information, preference or fact they share that seems worth remembering; it may come "
         "up in a later conversation. Reply to them naturally.\n\nMemories from earlier conversations that may "
         "be relevant:\n" +
             numbered(memories)});
    r.messages.insert(r.messages.end(), conversation.begin(), conversation.end());
    return r;
}

ChatRequest paper_graded_answer(const std::string& model, const std::vector<DatedMemory>& memories,
                                const std::vector<ChatMessage>& history, const std::string& question,
                                const std::vector<std::string>& choices, const std::string& asked_on) {
    ChatRequest r = taker_request(model, choices.empty() ? "answer" : "answer_mcq");
    r.messages.push_back(
        {"system",
         "You answer questions with the help of memories kept from earlier conversations with this user, and "
         "the conversation so far. Answer the question; use the memories where they help. When you draw a "
         "conclusion from any of them, restate after your answer exactly which memories you used, or say "
         "that you used none. Restate only memories you actually relied on.\n\nRelevant memories:\n" +
             dated_list(memories) + "(end of memories)\n" + today(asked_on)});
    r.messages.insert(r.messages.end(), history.begin(), history.end());
    r.messages.push_back(
        {"user", with_choices(question, choices,
                              "Choose exactly one option. Chaining the facts you remember determines the answer "
                              "uniquely; the other options do not follow from them. Reply with a single JSON object "
                              "on a line of its own and nothing else: {\"selected_choice\": \"<one of A, B, C, D, "
                              "E>\"}")});
    return r;
}

}  // namespace memfail::llm::prompts

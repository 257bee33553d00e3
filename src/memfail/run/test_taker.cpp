// SPDX-License-Identifier: MIT
// Test-taker calls.
#include <memfail/llm/prompts.hpp>
#include <memfail/run/test_taker.hpp>

namespace memfail::run {

Result<std::string> TestTaker::ask(llm::ChatRequest request) {
    request.temperature = m_options.temperature;
    request.seed = m_options.seed;
    MF_TRY_ASSIGN(llm::ChatReply reply, m_client.chat(request));
    return std::move(reply.content);
}

Result<std::string> TestTaker::answer(const data::Probe& probe, const std::vector<memory::Hit>& retrieved) {
    std::vector<std::string> memories;
    memories.reserve(retrieved.size());
    for (const auto& hit : retrieved) memories.push_back(hit.memory.text);
    // A profile task (the dynamic suite) fills its template.
    if (!probe.task.empty())
        return ask(llm::prompts::profile_task_answer(m_options.model, memories, probe.question,
                                                     probe.answer_template.dump(2, ' ', false,
                                                                                nlohmann::json::error_handler_t::replace)));
    const std::vector<std::string> no_choices;
    const auto& choices = probe.kind == data::ProbeKind::mcq ? probe.choices : no_choices;
    return ask(m_options.paper ? llm::prompts::paper_graded_answer(m_options.model, memories, {}, probe.question, choices)
                               : llm::prompts::graded_answer(m_options.model, memories, {}, probe.question, choices));
}


Result<data::Session> TestTaker::with_replies(const data::Session& session, const MemoriesFor& memories) {
    data::Session out;
    out.id = session.id;
    out.timestamp = session.timestamp;
    std::vector<llm::ChatMessage> conversation;
    for (const auto& message : session.messages) {
        const std::vector<data::Message> before = memories ? out.messages : std::vector<data::Message>{};
        out.messages.push_back(message);
        conversation.push_back({message.role, message.content});
        if (message.role != "user") continue;
        llm::ChatRequest request;
        if (memories) {
            MF_TRY_ASSIGN(auto hits, memories(message, before));
            std::vector<std::string> shown;
            shown.reserve(hits.size());
            for (const auto& hit : hits) shown.push_back(hit.memory.text);
            request = llm::prompts::paper_storage_reply(m_options.model, shown, conversation);
        } else {
            request = llm::prompts::storage_reply(m_options.model, conversation);
        }
        MF_TRY_ASSIGN(std::string reply, ask(std::move(request)));
        conversation.push_back({"assistant", reply});
        out.messages.push_back({message.id + "-reply", "assistant", std::move(reply)});
    }
    return out;
}

}  // namespace memfail::run

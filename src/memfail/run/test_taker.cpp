// SPDX-License-Identifier: MIT
// Test-taker calls.
#include <memfail/core/dates.hpp>
#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/run/test_taker.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::run {

Result<std::string> TestTaker::ask(llm::ChatRequest request) {
    request.temperature = m_options.temperature;
    request.seed = m_options.seed;
    MF_TRY_ASSIGN(llm::ChatReply reply, m_client.chat(request));
    return std::move(reply.content);
}

std::string shown_date(std::string_view when) {
    const std::string_view trimmed = text::trim(when);
    if (trimmed.empty()) return {};
    if (const auto t = dates::parse_date_time(trimmed)) return dates::format_shown(*t);
    // ISO 8601 with fractional seconds or an offset ("2025-03-01T12:00:00.123+02:00"): its first 19
    // characters, as written in the zone it names.
    if (trimmed.size() > 19 && (trimmed[19] == '.' || trimmed[19] == '+' || trimmed[19] == '-'))
        if (const auto t = dates::parse_date_time(trimmed.substr(0, 19))) return dates::format_shown(*t);
    return std::string(trimmed.substr(0, 40));
}

std::string memory_date(const memory::Memory& memory, const data::MessageIndex* messages) {
    if (messages) {
        std::optional<dates::DateTime> latest;
        std::string latest_text;
        for (const auto& id : memory.sources) {
            const data::Session* session = messages->session_of(id);
            if (!session || session->timestamp.empty()) continue;
            const auto t = dates::parse_date_time(session->timestamp);
            if (!t) {
                if (latest_text.empty() && !latest) latest_text = session->timestamp;
                continue;
            }
            if (!latest || dates::to_seconds(*t) > dates::to_seconds(*latest)) latest = t;
        }
        if (latest) return dates::format_shown(*latest);
        if (!latest_text.empty()) return shown_date(latest_text);
    }
    if (!memory.valid_at.empty()) return shown_date(memory.valid_at);
    return shown_date(memory.created_at);
}

std::string question_date(const data::Scenario& scenario, const data::Probe& probe) {
    if (const auto it = probe.meta.find("question_date"); it != probe.meta.end() && it->is_string())
        if (std::string shown = shown_date(it->get_ref<const std::string&>()); !shown.empty()) return shown;
    for (const auto& session : scenario.sessions)
        if (session.id == probe.after_session) return shown_date(session.timestamp);
    return {};
}

Result<std::string> TestTaker::answer(const data::Scenario& scenario, const data::Probe& probe,
                                      const std::vector<memory::Hit>& retrieved, const data::MessageIndex* messages) {
    // A profile task (the dynamic suite) fills its template; its memories are app logs, which carry
    // their own timestamps.
    if (!probe.task.empty()) {
        std::vector<std::string> memories;
        memories.reserve(retrieved.size());
        for (const auto& hit : retrieved) memories.push_back(hit.memory.text);
        return ask(llm::prompts::profile_task_answer(m_options.model, memories, probe.question,
                                                     probe.answer_template.dump(2, ' ', false,
                                                                                nlohmann::json::error_handler_t::replace)));
    }
    std::vector<llm::prompts::DatedMemory> memories;
    memories.reserve(retrieved.size());
    for (const auto& hit : retrieved) memories.push_back({hit.memory.text, memory_date(hit.memory, messages)});
    const std::string asked_on = question_date(scenario, probe);
    // A protocol a suite defines: its authors' prompt, the reply read as they read it.
    if (m_options.protocol != "memfail" && m_options.protocol != "paper")
        if (const suites::Suite* suite = suites::find_suite(scenario.suite)) {
            const suites::AnswerPromptContext context{scenario, probe, memories, asked_on, m_options.protocol,
                                                      m_options.model};
            if (auto request = suite->answer_request(context)) {
                MF_TRY_ASSIGN(std::string reply, ask(std::move(*request)));
                return suite->read_answer(context, std::move(reply));
            }
        }
    const std::vector<std::string> no_choices;
    const auto& choices = probe.kind == data::ProbeKind::mcq ? probe.choices : no_choices;
    return ask(m_options.paper
                   ? llm::prompts::paper_graded_answer(m_options.model, memories, {}, probe.question, choices, asked_on)
                   : llm::prompts::graded_answer(m_options.model, memories, {}, probe.question, choices, asked_on));
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

// SPDX-License-Identifier: MIT
// The test-taker: the model a memory system augments. It answers each probe from the retrieved
// memories (the graded turn) and, for systems that store the assistant's side of a conversation,
// replies to each storage turn (ungraded). Prompts live in llm/prompts.hpp.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::run {

struct TestTakerOptions {
    std::string model;
    std::optional<double> temperature;
    std::optional<std::int64_t> seed;
    bool paper = false;  // the MemFail paper's prompts (--protocol paper): answers restate the memories used
    // --protocol as given: one a suite defines (locomo, longmemeval) takes that suite's prompt.
    std::string protocol = "memfail";
};

// An ISO 8601 timestamp as answer prompts show it ("2023-05-08 (Mon) 13:56"); any other text as
// written (trimmed, at most 40 characters); "" for "".
std::string shown_date(std::string_view when);
// The date a retrieved memory is shown with: the latest session date of the messages it cites, else
// the system's valid_at, else its created_at; "" when none is known.
std::string memory_date(const memory::Memory& memory, const data::MessageIndex* messages);
// The date a probe is asked on: the dataset's own (LongMemEval's question_date, meta.question_date),
// else the date of the session after which it is asked; "" when neither is known.
std::string question_date(const data::Scenario& scenario, const data::Probe& probe);

class TestTaker {
public:
    TestTaker(llm::LlmClient& client, TestTakerOptions options) : m_client(client), m_options(std::move(options)) {}

    // The graded answer to `probe` of `scenario` given what the system retrieved, each memory shown
    // with its date (memory_date) and the question with the date it is asked on (question_date).
    // `messages`: the scenario's message index, for the dates of the memories' sources (null: the
    // systems' own dates only).
    Result<std::string> answer(const data::Scenario& scenario, const data::Probe& probe,
                               const std::vector<memory::Hit>& retrieved, const data::MessageIndex* messages);

    // The memories to show beside a storage turn: retrieved for the user message, given the
    // session's messages before it.
    using MemoriesFor =
        std::function<Result<std::vector<memory::Hit>>(const data::Message& turn, const std::vector<data::Message>& before)>;

    // `session` with an assistant reply after every user turn. Each reply sees the session so far;
    // reply ids are the user turn's id + "-reply", so provenance still names real messages. With
    // `memories` (the paper's protocol) each reply also sees the memories retrieved for its turn.
    Result<data::Session> with_replies(const data::Session& session, const MemoriesFor& memories = {});

private:
    Result<std::string> ask(llm::ChatRequest request);

    llm::LlmClient& m_client;
    TestTakerOptions m_options;
};

}  // namespace memfail::run

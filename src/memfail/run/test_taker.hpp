// SPDX-License-Identifier: MIT
// The test-taker: the model a memory system augments. It answers each probe from the retrieved
// memories (the graded turn) and, for systems that store the assistant's side of a conversation,
// replies to each storage turn (ungraded). Prompts live in llm/prompts.hpp.
#pragma once
#include <functional>
#include <optional>
#include <string>
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
};

class TestTaker {
public:
    TestTaker(llm::LlmClient& client, TestTakerOptions options) : m_client(client), m_options(std::move(options)) {}

    // The graded answer to `probe` given what the system retrieved.
    Result<std::string> answer(const data::Probe& probe, const std::vector<memory::Hit>& retrieved);

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

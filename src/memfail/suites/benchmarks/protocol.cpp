// SPDX-License-Identifier: MIT
// The benchmarks' own protocols (protocol.hpp).
#include <memfail/suites/benchmarks/protocol.hpp>

#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/benchmarks/import_locomo.hpp>
#include <memfail/suites/benchmarks/import_longmemeval.hpp>
#include <memfail/suites/import_json.hpp>

#include <algorithm>
#include <cctype>

namespace memfail::suites::benchmarks {

namespace {

constexpr const char* k_not_mentioned = "Not mentioned in the conversation";

// The memories in date order (both benchmarks' scripts sort their retrieved context by date) when
// every date is ISO-shown ("2023-05-08 (Mon) 13:56"); in retrieval order otherwise.
std::vector<llm::prompts::DatedMemory> by_date(const std::vector<llm::prompts::DatedMemory>& memories) {
    std::vector<llm::prompts::DatedMemory> out = memories;
    const bool iso = std::all_of(out.begin(), out.end(), [](const llm::prompts::DatedMemory& m) {
        return m.date.size() >= 10 && std::isdigit(static_cast<unsigned char>(m.date[0])) && m.date[4] == '-' &&
               m.date[7] == '-';
    });
    if (iso)
        std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.date < b.date; });
    return out;
}

int locomo_category(const data::Probe& probe) {
    const auto c = probe.meta.find("category");
    return c != probe.meta.end() && c->is_number_integer() ? c->get<int>() : 0;
}

// meta[key] as an answer states it ("" when absent).
std::string meta_text(const nlohmann::json& meta, const char* key) {
    const auto it = meta.find(key);
    return it == meta.end() ? std::string() : import_json::as_text(*it);
}

llm::ChatRequest user_request(llm::Role role, const char* stage, const std::string& model, std::string content) {
    llm::ChatRequest r;
    r.role = role;
    r.stage = stage;
    r.model = model;
    r.messages.push_back({"user", std::move(content)});
    return r;
}

llm::ChatRequest locomo_request(const AnswerPromptContext& c) {
    std::string context;
    for (const auto& m : by_date(c.memories))
        context += (m.date.empty() ? std::string() : m.date + ": ") + m.text + "\n";
    const int category = locomo_category(c.probe);
    std::string prompt = context + "\n";
    if (category == 5) {
        const auto [a, b] = locomo_adversarial_options(c.scenario, c.probe);
        prompt += "Answer the question below from the context above.\n\nQuestion: " + c.probe.question +
                  " Choose the right answer: (a) " + a + " (b) " + b + ".  Short answer:\n";
    } else {
        std::string question = c.probe.question;
        if (category == 2) question += " Work out an approximate date from the DATE of the conversation.";
        prompt += "Answer the question below from the context above in a short phrase, using the context's own "
                  "words wherever you can.\n\nQuestion: " +
                  question + " Short answer:\n";
    }
    llm::ChatRequest r = user_request(llm::Role::answer, category == 5 ? "answer_choice" : "answer", c.model, std::move(prompt));
    r.max_tokens = 32;
    return r;
}

llm::ChatRequest longmemeval_request(const AnswerPromptContext& c) {
    std::string history;
    const auto memories = by_date(c.memories);
    for (std::size_t i = 0; i < memories.size(); ++i)
        history += "\n### Session " + std::to_string(i + 1) + ":\nSession Date: " + memories[i].date +
                   "\nSession Content:\n" + memories[i].text + "\n";
    std::string prompt =
        "Below are earlier chats between you and a user. Answer the question from the chats that bear on it.\n\n\n"
        "History Chats:\n\n" +
        history + "\n\nCurrent Date: " + c.asked_on + "\nQuestion: " + c.probe.question + "\nAnswer:";
    return user_request(llm::Role::answer, "answer", c.model, std::move(prompt));
}

}  // namespace

std::pair<std::string, std::string> locomo_adversarial_options(const data::Scenario& scenario, const data::Probe& probe) {
    // The item's own answer when it has one, else its adversarial answer (the authors' fallback).
    std::string trap = meta_text(probe.meta, "answer");
    if (trap.empty()) trap = meta_text(probe.meta, "adversarial_answer");
    // The order is fixed per question (the authors draw it with an unseeded random()).
    const bool first = (hash64(scenario.id + "/" + probe.id) & 1u) == 0;
    return first ? std::pair{std::string(k_not_mentioned), trap} : std::pair{trap, std::string(k_not_mentioned)};
}

std::string locomo_adversarial_answer(std::string_view reply, const std::pair<std::string, std::string>& options) {
    const std::string lowered = text::to_lower(text::trim(reply));
    std::size_t code_points = 0;
    for (unsigned char ch : lowered)
        if ((ch & 0xC0) != 0x80) ++code_points;
    if (code_points == 1) return lowered.find('a') != std::string::npos ? options.first : options.second;
    if (code_points == 3) return lowered.find("(a)") != std::string::npos ? options.first : options.second;
    return lowered;
}

std::optional<llm::ChatRequest> protocol_answer_request(const AnswerPromptContext& c) {
    if (c.protocol == k_locomo && c.scenario.dataset == k_locomo) return locomo_request(c);
    if (c.protocol == k_longmemeval && c.scenario.dataset == k_longmemeval) return longmemeval_request(c);
    return std::nullopt;
}

std::string protocol_read_answer(const AnswerPromptContext& c, std::string reply) {
    if (c.protocol == k_locomo && c.scenario.dataset == k_locomo && locomo_category(c.probe) == 5)
        return locomo_adversarial_answer(reply, locomo_adversarial_options(c.scenario, c.probe));
    return std::string(text::trim(reply));
}

bool longmemeval_abstention(const data::Scenario& scenario, const data::Probe& probe) {
    return meta_text(scenario.meta, "question_id").find("_abs") != std::string::npos ||
           (probe.meta.contains("abstention") && probe.meta["abstention"].is_boolean() && probe.meta["abstention"].get<bool>());
}

llm::ChatRequest longmemeval_judge_request(const std::string& model, const data::Scenario& scenario,
                                           const data::Probe& probe, const std::string& response) {
    const std::string type = meta_text(probe.meta, "question_type");
    const std::string opening =
        "Here are a question, its correct answer and a response from a model. Reply yes if the response contains "
        "the correct answer; reply no otherwise.";
    const std::string steps =
        " A response equivalent to the correct answer, or one that holds every intermediate step leading to it, "
        "is also a yes; a response that holds only part of the information the answer needs is a no.";
    std::string intro, label = "Correct Answer";
    if (longmemeval_abstention(scenario, probe)) {
        intro = "Here are a question that cannot be answered, an explanation of why, and a response from a model. "
                "Reply yes if the model recognises the question as unanswerable: it may say the information is "
                "incomplete, or that other information was given but not the one asked for.";
        label = "Explanation";
    } else if (type == "temporal-reasoning") {
        intro = opening + steps +
                " Do not count an off-by-one error in a number of days, weeks, months and the like against the "
                "response: 19 days where the answer is 18 is still correct.";
    } else if (type == "knowledge-update") {
        intro = opening +
                " A response that gives earlier information beside the updated answer is still correct, as long as "
                "the updated answer is the one asked for.";
    } else if (type == "single-session-preference") {
        intro = "Here are a question, a rubric for the personalised response wanted, and a response from a model. "
                "Reply yes if the response meets the rubric; it need not cover every point of it, only recall the "
                "user's personal information and use it correctly. Otherwise reply no.";
        label = "Rubric";
    } else {
        intro = opening + steps;
    }
    const std::string question_line = longmemeval_abstention(scenario, probe)
                                          ? "\n\nDoes the model recognise the question as unanswerable? Answer yes or no only."
                                          : "\n\nIs the model response correct? Answer yes or no only.";
    llm::ChatRequest r = user_request(llm::Role::judge, "judge.answer", model,
                                      intro + "\n\nQuestion: " + probe.question + "\n\n" + label + ": " + probe.answer +
                                          "\n\nModel Response: " + response + question_line);
    r.temperature = 0;
    r.max_tokens = 10;
    return r;
}

std::optional<AnswerGrade> longmemeval_grade(const AnswerContext& c) {
    if (c.protocol != k_longmemeval || c.scenario.dataset != k_longmemeval || !c.judge) return std::nullopt;
    AnswerGrade out;
    auto reply = c.judge->client().chat(longmemeval_judge_request(c.judge->options().model, c.scenario, c.probe, c.answer));
    if (!reply) {
        out.error = reply.error().describe();
        return out;
    }
    const bool yes = text::to_lower(reply->content).find("yes") != std::string::npos;
    const bool abstention = longmemeval_abstention(c.scenario, c.probe);
    out.checks.push_back({"", abstention ? "abstention" : "answer", "llm", yes, true,
                          "LongMemEval's " + std::string(abstention ? "abstention" : meta_text(c.probe.meta, "question_type")) +
                              " judge replied \"" + std::string(text::trim(reply->content)).substr(0, 80) + "\""});
    out.correct = yes;
    return out;
}

}  // namespace memfail::suites::benchmarks

// SPDX-License-Identifier: MIT
// The benchmarks' own protocols (--protocol locomo, --protocol longmemeval), as their authors' code
// runs them (docs/PROTOCOLS.md; prose instructions in memfail's own words, structure as theirs):
//
// LoCoMo (task_eval/gpt_utils.py, retrieval mode): the retrieved memories one per line as
// "<date>: <text>" in date order, then a short-phrase instruction and "Question: ... Short answer:".
// Temporal questions (category 2) ask for an approximate date from the conversation's dates;
// adversarial questions (category 5) are asked as a two-option choice between "Not mentioned in
// the conversation" and the adversarial answer, in an order fixed per question (the authors draw it
// unseeded), and the reply is mapped back as their get_cat_5_answer does (a lone letter or "(a)" to
// its option's text, anything else lower-cased as written). Up to 32 tokens, as they ask.
//
// LongMemEval (src/generation/run_generation.py, direct reading): the memories as "### Session i"
// blocks with their "Session Date", in date order, then "Current Date", the question and
// "Answer:". Graded by its per-question-type judge prompts (src/evaluation/evaluate_qa.py,
// get_anscheck_prompt; the abstention prompt for every `_abs` question): one user message,
// temperature 0, up to 10 tokens, correct when the reply contains "yes" in any case.
#pragma once
#include <optional>
#include <string>

#include <memfail/llm/llm_client.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::benchmarks {

// The test-taker's request under `context.protocol`; empty for a probe of another dataset.
std::optional<llm::ChatRequest> protocol_answer_request(const AnswerPromptContext& context);
// The reply as the protocol reads it (LoCoMo's adversarial options mapped back).
std::string protocol_read_answer(const AnswerPromptContext& context, std::string reply);

// LoCoMo's two options for an adversarial question, in the order asked: (a) then (b).
std::pair<std::string, std::string> locomo_adversarial_options(const data::Scenario& scenario, const data::Probe& probe);
// get_cat_5_answer: `reply` mapped to an option's text, or lower-cased as written.
std::string locomo_adversarial_answer(std::string_view reply, const std::pair<std::string, std::string>& options);

// LongMemEval's judge request for one answer (get_anscheck_prompt by the probe's question type;
// the abstention prompt for an `_abs` question).
llm::ChatRequest longmemeval_judge_request(const std::string& model, const data::Scenario& scenario,
                                           const data::Probe& probe, const std::string& response);
// Whether a LongMemEval probe is an abstention question, as the authors tell: "_abs" in its id.
bool longmemeval_abstention(const data::Scenario& scenario, const data::Probe& probe);
// The grade of an answer under --protocol longmemeval with a judge; empty otherwise.
std::optional<AnswerGrade> longmemeval_grade(const AnswerContext& context);

}  // namespace memfail::suites::benchmarks

// SPDX-License-Identifier: MIT
// HaluMem's per-operation evaluation (its eval/evaluation.py), as checks of the memory after each
// session that holds memory points (Suite::check_session):
//
// - extraction: each real point (not interference) against the memories the session added,
//   HaluMem's memory integrity (2 covered, 1 partly, 0 missing; recorded halved, as 1, 0.5, 0),
//   weighted by the point's importance. Recall counts points scored 2; weighted recall sums
//   0.5 x score x importance over the importance.
// - false_memory: each interference point (a fact the assistant wrongly stated in the dialogue)
//   against the same memories; resisted (1) when integrity would be 0. An interference point with
//   the text of a real point of its session (it happens in the data) cannot be told from the real
//   fact: it is excluded (label "excluded"), a difference from HaluMem, which counts it.
// - accuracy: each memory the session added, against the session's dialogue and its real points
//   (2 all supported, 1 partly, 0 a hallucinated memory; halved) and whether each of its pieces of
//   information has a slot among the real points (label "target" / "other"). Accuracy is the mean
//   over the memories; target precision the mean over the "target" ones.
// - update: each point with is_update and original memories, HaluMem's update probe: the top 10
//   memories retrieved for the point's own text, judged correct, hallucination, omission or other.
//   A probe that retrieves nothing is graded for extraction instead, as HaluMem routes it.
//
// Exact or unsure: a memory holding the point's text word for word covers it (2); no memory holding
// any content word of it (its person's name aside) misses it (0); a memory that is a real point
// word for word is accurate (2) and "target"; a top 10 holding no content word of the update is an
// omission. Everything else is left to the judge (judge_input), with prompts written after
// HaluMem's (its rubric and its output fields); offline it stays undecided, never a pass.
#pragma once
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::benchmarks {

// True when the session at `session` holds memory points of a HaluMem scenario.
bool halumem_checks_session(const data::Scenario& scenario, std::size_t session);
std::vector<SessionCheck> halumem_check_session(const SessionCheckContext& context);
Result<void> halumem_judge_session_check(const data::Scenario& scenario, SessionCheck& check, grade::LlmJudge& judge);

}  // namespace memfail::suites::benchmarks

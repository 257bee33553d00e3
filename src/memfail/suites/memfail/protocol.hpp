// SPDX-License-Identifier: MIT
// The MemFail paper's evaluation protocol (--protocol paper, docs/PROTOCOLS.md), where it changes
// what a dataset asks of a memory system rather than how a judge words its questions.
#pragma once
#include <memfail/data/model.hpp>

namespace memfail::suites::memfail_suite {

// The paper grades a misleading Persona-Retrieval question through the stages of the essay it was
// made from (stored, kept faithfully, retrieved) before it checks the abstention. Each misleading
// probe (kind abstain, meta.entity naming the essay's person) gets that essay as its one evidence
// fact: id "<probe>-essay", the essay's message, the person as its identity detail, and
// meta.paper_essay = true. The essay is found through a direct probe of the same row, else the
// row's session, else the first message naming the person; a probe whose essay cannot be found is
// left as it was. Other datasets are returned unchanged.
data::Scenario paper_protocol_scenario(data::Scenario scenario);

}  // namespace memfail::suites::memfail_suite

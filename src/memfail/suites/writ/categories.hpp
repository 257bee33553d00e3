// SPDX-License-Identifier: MIT
// The sixteen write-integrity categories, one builder each: given a fresh Draft, a builder makes the
// sessions, says what is said when, records the ledger and asks the probes. build_changes.cpp holds
// the categories about a value that changes (drift, temporal, update, lifecycle, trust_hierarchy,
// extraction_drift, failure_injection, certification, closure); build_context.cpp those about what
// surrounds a value (provenance, constraint, entity, forgetting, abstention, multi_hop, work_state).
#pragma once
#include <memfail/suites/writ/draft.hpp>

namespace memfail::suites::writ {

void build_drift(Draft& d);
void build_temporal(Draft& d);
void build_provenance(Draft& d);
void build_constraint(Draft& d);
void build_entity(Draft& d);
void build_forgetting(Draft& d);
void build_abstention(Draft& d);
void build_update(Draft& d);
void build_multi_hop(Draft& d);
void build_work_state(Draft& d);
void build_lifecycle(Draft& d);
void build_trust_hierarchy(Draft& d);
void build_extraction_drift(Draft& d);
void build_failure_injection(Draft& d);
void build_certification(Draft& d);
void build_closure(Draft& d);

// A probe about one event's single value: open kind, the target, the expected value and its source,
// a rubric of `kind` (numeric: the number too), the reference answer and one evidence fact citing
// `source` with the value as written (`written`) as its key detail.
data::Probe value_probe(Draft& d, std::size_t after, const std::string& question, const std::string& asks,
                        const std::string& event_id, const nlohmann::json& expected, const std::string& written,
                        const Msg& source, data::RubricKind kind);

}  // namespace memfail::suites::writ

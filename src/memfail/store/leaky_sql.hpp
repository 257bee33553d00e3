// SPDX-License-Identifier: MIT
// SQL shared by the results database and the report for probes that need no memory: those an
// answer model got right in a run of the no-memory baseline `none` (report/leaky.hpp).
#pragma once
#include <string>
#include <string_view>

namespace memfail::store {

// True for a spec of the no-memory baseline `none` (with or without options), as the SQL below reads it.
inline bool is_no_memory_spec(std::string_view spec) { return spec == "none" || spec.rfind("none:", 0) == 0; }

// A finished run of `none`, the runs table aliased `runs`.
inline std::string no_memory_run_sql(const std::string& runs) {
    return runs + ".status = 'finished' AND (" + runs + ".system_spec = 'none' OR " + runs +
           ".system_spec LIKE 'none:%')";
}

// True for the probe_results row aliased `probe`, whose run_scenarios row is aliased `scenario`,
// when some `none` run over the same dataset content answered that probe right at some k (abstain
// probes never count: abstaining without memory is their point). The runs come first so each
// lookup goes through probe_results' primary key.
inline std::string answered_without_memory_sql(const std::string& probe, const std::string& scenario) {
    return "EXISTS (SELECT 1 FROM runs lr JOIN probe_results lp ON lp.run_id = lr.id "
           "JOIN run_scenarios lsc ON lsc.run_id = lp.run_id AND lsc.scenario_id = lp.scenario_id "
           "WHERE " + no_memory_run_sql("lr") + " AND lp.scenario_id = " + probe + ".scenario_id AND lp.probe_id = " +
           probe + ".probe_id AND lp.kind != 'abstain' AND lp.answer_correct = 1 AND lsc.dataset_hash = " + scenario +
           ".dataset_hash)";
}

}  // namespace memfail::store

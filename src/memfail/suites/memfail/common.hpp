// SPDX-License-Identifier: MIT
// Conventions shared by the five MemFail generators: ids, timestamps, scenario shells.
//
// - Scenario id "<dataset>-seed<seed>", suite "memfail". Every storage unit is its own session with
//   one user message; all probes are asked after the last session.
// - Session ids "sess-0001"..., message ids "msg-0001-1" (session number, message number),
//   timestamps one hour apart from 2026-01-05T09:00:00Z.
// - Probe ids "<prefix>-001" (cfe, cfh, cof, per, lhp); fact ids "<probe id>-f1".
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/rng.hpp>
#include <memfail/data/model.hpp>

namespace memfail::suites::memfail_suite {

std::string session_id(std::size_t number);                      // 1-based: "sess-0001"
std::string message_id(std::size_t session_number, std::size_t message_number);  // "msg-0001-1"
std::string session_timestamp(std::size_t number);                // 1-based, hourly
std::string probe_id(const std::string& prefix, std::size_t number);  // "cfe-001"

// An empty scenario with id, suite, dataset and generator metadata (seed, generator version).
data::Scenario make_scenario(const std::string& dataset, std::uint64_t seed);

// Appends a session holding one user message with `content`; returns the new message's id.
std::string add_user_session(data::Scenario& scenario, const std::string& content);

// Long-Hop's storage, as the paper's Appendix B.6 describes its harness (the generator and the
// release importer both store through it): every fact of every chain (`chains[c]`: chain c's facts)
// one user message, shuffled and bin-packed into conversations of 3-5 facts, no conversation holding
// two facts of one chain, appended to `scenario` as sessions. When there are too few facts for 3 a
// conversation (a handful of chains), the conversations are as many as the longest chain needs and
// hold fewer. Returns each fact's message id: [chain][fact].
std::vector<std::vector<std::string>> store_chain_facts(data::Scenario& scenario,
                                                        const std::vector<std::vector<std::string>>& chains, Rng rng);

// Sets every probe's checkpoint to the last session (MemFail asks all probes after storage).
void ask_all_after_last_session(data::Scenario& scenario);

// A Conditional probe's meta.condition_met as the generator ("yes"/"no") or the importer (a
// boolean) writes it; empty when absent or unreadable.
std::optional<bool> condition_met(const data::Probe& probe);

// A sentence's frame, what `memfail datasets audit` counts as recurring, is sentence_frame in
// audit.hpp: the generators vary openings by the very same definition.

// A yes/no reference answer's polarity from its first word ("Yes - ...": true); empty when it opens
// on neither.
std::optional<bool> answer_polarity(const std::string& answer);

// Sentence openings varied where a dataset would repeat itself. Once a frame opens sentences in
// `limit` essays of the dataset, a later sentence with that frame takes a tense-neutral opener ("By
// all accounts, ...", "As it happens, ...") that gives it a frame still under the limit; every
// other sentence stays as written. vary() is pure (the caller may drop the essay); commit() counts
// the kept essay's frames.
class FrameVariation {
public:
    explicit FrameVariation(std::size_t limit) : m_limit(limit) {}
    std::vector<std::string> vary(std::vector<std::string> sentences, const std::vector<std::string>& names,
                                  Rng& rng) const;
    void commit(const std::vector<std::string>& sentences, const std::vector<std::string>& names);

private:
    std::size_t m_limit;
    std::map<std::string, std::size_t> m_essays;  // frame -> essays with a sentence opening on it
};

}  // namespace memfail::suites::memfail_suite

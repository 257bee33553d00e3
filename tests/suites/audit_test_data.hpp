// SPDX-License-Identifier: MIT
// Small synthetic MemFail scenarios for the dataset audit's tests (tests/suites/test_dataset_audit.cpp
// and tests/cli/test_datasets_audit.cpp): built here, never by the generators, so each figure the
// audit computes on them is known exactly.
#pragma once
#include <memfail/data/model.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace memfail::testing::audit {

inline std::string numbered(const char* prefix, std::size_t i) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%s%04zu", prefix, i);
    return buffer;
}

inline data::Scenario scenario(const std::string& dataset) {
    data::Scenario s;
    s.id = dataset + "-test";
    s.suite = "memfail";
    s.dataset = dataset;
    return s;
}

// A session of one message holding `essay`; returns the message id.
inline std::string add_essay(data::Scenario& s, const std::string& essay) {
    const std::size_t n = s.sessions.size() + 1;
    data::Session session;
    session.id = numbered("sess-", n);
    session.timestamp = "2026-01-05T09:00:00Z";
    const std::string id = numbered("msg-", n) + "-1";
    session.messages.emplace_back(id, "user", essay);
    s.sessions.push_back(std::move(session));
    return id;
}

// A yes/no probe with a one-sentence essay about `entity` as its evidence.
inline void add_yes_no(data::Scenario& s, const std::string& question, bool yes, const std::string& entity) {
    // Each essay opens on its own frame ("orchard 3 belongs to NAME").
    const std::string message = add_essay(s, "Orchard " + std::to_string(s.sessions.size() + 1) + " belongs to " + entity + ".");
    data::Probe p;
    p.id = numbered("cf-", s.probes.size() + 1);
    p.question = question;
    p.kind = data::ProbeKind::yes_no;
    p.answer = yes ? "Yes, the condition holds." : "No, the condition does not hold.";
    p.evidence.push_back({p.id + "-f1", s.sessions.back().messages[0].content, {message}, {{"entity", {entity}}}, {}});
    p.meta = {{"entity", entity}, {"condition_met", yes ? "yes" : "no"}};
    s.probes.push_back(std::move(p));
}

// A five-option multiple-choice probe; `correct` is the index of the right option.
inline void add_mcq(data::Scenario& s, const std::string& question, std::vector<std::string> options, std::size_t correct) {
    const std::string message = add_essay(s, "After the picnic I always feel " + options[correct] + ".");
    data::Probe p;
    p.id = numbered("lh-", s.probes.size() + 1);
    p.question = question;
    p.kind = data::ProbeKind::mcq;
    p.choices = std::move(options);
    p.correct_choice = std::string(1, static_cast<char>('A' + correct));
    p.answer = p.choices[correct];
    p.evidence.push_back({p.id + "-f1", s.sessions.back().messages[0].content, {message}, {{"anchor_1", {p.answer}}}, {}});
    p.meta = {{"hops", 1}, {"voice", "first_person"}};
    s.probes.push_back(std::move(p));
}

// Every probe asked after the last session.
inline data::Scenario finished(data::Scenario s) {
    for (auto& p : s.probes) p.after_session = s.sessions.empty() ? "" : s.sessions.back().id;
    return s;
}

// A yes/no file of `pairs` yes and `pairs` no probes whose questions differ only in the word
// "just", which the yes questions have: the answer can be read off the question. Names differ per
// probe and sit inside a sentence or open one, so only the tell can be learned.
inline data::Scenario just_tell(const std::string& dataset, std::size_t pairs, const std::string& name_prefix = "Mara") {
    data::Scenario s = scenario(dataset);
    for (std::size_t i = 0; i < pairs; ++i) {
        const std::string yes_name = name_prefix + "y" + std::to_string(i);
        const std::string no_name = name_prefix + "n" + std::to_string(i);
        if (i % 2 == 0) {
            add_yes_no(s, "Would " + yes_name + " sing just now?", true, yes_name);
            add_yes_no(s, "Would " + no_name + " sing now?", false, no_name);
        } else {
            add_yes_no(s, yes_name + " is home. Would she sing just now?", true, yes_name);
            add_yes_no(s, no_name + " is home. Would she sing now?", false, no_name);
        }
    }
    return finished(std::move(s));
}

// The same shape with no tell: every question is the same words around a name.
inline data::Scenario no_tell(const std::string& dataset, std::size_t pairs, const std::string& name_prefix = "Mara") {
    data::Scenario s = scenario(dataset);
    for (std::size_t i = 0; i < pairs; ++i) {
        add_yes_no(s, "Would " + name_prefix + "y" + std::to_string(i) + " sing now?", true, name_prefix + "y" + std::to_string(i));
        add_yes_no(s, "Would " + name_prefix + "n" + std::to_string(i) + " sing now?", false, name_prefix + "n" + std::to_string(i));
    }
    return finished(std::move(s));
}

}  // namespace memfail::testing::audit

// SPDX-License-Identifier: MIT
// The long-horizon suite behind the Suite interface.
#include <memfail/suites/dynamic/answers.hpp>
#include <memfail/suites/dynamic/dynamic_suite.hpp>
#include <memfail/suites/dynamic/evidence.hpp>
#include <memfail/suites/dynamic/generate.hpp>
#include <memfail/suites/dynamic/import_dynamicmem.hpp>
#include <memfail/suites/dynamic/report.hpp>

#include <memfail/core/dates.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace memfail::suites::dynamic {

namespace {

// What the analysis of one checkpoint builds once from the held memories and reads for every probe.
struct CheckpointIndex {
    const data::Scenario* scenario = nullptr;
    const memory::Memory* first = nullptr;  // identifies the held list it was built from
    std::size_t held_size = 0;
    std::unique_ptr<data::MessageIndex> own_messages;  // only when the caller gave none
    const data::MessageIndex* messages = nullptr;
    std::unique_ptr<HeldIndex> held;
    std::map<std::string, const data::ProfileState*> states;
    std::shared_ptr<CanonicalCache> canonical;  // the scenario's, kept by the runner (null: none kept)
};

CheckpointIndex& checkpoint_index(const CheckContext& context) {
    auto* index = std::any_cast<std::shared_ptr<CheckpointIndex>>(&context.reads.suite_index);
    const memory::Memory* first = context.held.empty() ? nullptr : &context.held.front();
    if (!index || !*index || (*index)->scenario != &context.scenario || (*index)->held_size != context.held.size() ||
        (*index)->first != first) {
        auto made = std::make_shared<CheckpointIndex>();
        if (std::any* kept = context.reads.scenario_cache) {
            auto* cache = std::any_cast<std::shared_ptr<CanonicalCache>>(kept);
            if (!cache) {
                *kept = std::make_shared<CanonicalCache>();
                cache = std::any_cast<std::shared_ptr<CanonicalCache>>(kept);
            }
            made->canonical = *cache;
        }
        made->scenario = &context.scenario;
        made->first = first;
        made->held_size = context.held.size();
        // The runner's index of the scenario serves every checkpoint; one is built here only for
        // callers without it.
        if (context.messages == nullptr) made->own_messages = std::make_unique<data::MessageIndex>(context.scenario);
        made->messages = context.messages != nullptr ? context.messages : made->own_messages.get();
        std::vector<const memory::Memory*> held;
        held.reserve(context.held.size());
        for (const auto& m : context.held) held.push_back(&m);
        made->held = std::make_unique<HeldIndex>(held, context.system.capabilities().provenance, made->canonical.get());
        for (const auto& st : context.scenario.profile) made->states[st.key] = &st;
        context.reads.suite_index = made;
        index = std::any_cast<std::shared_ptr<CheckpointIndex>>(&context.reads.suite_index);
    }
    return **index;
}

// The probe's stage from its fields' evidence: any gold log held by nothing is not_stored; held but
// not in the top k is not_retrieved; all retrieved is memory-side success. A log whose holding
// cannot be decided (no provenance and no details to match) leaves the probe unverified unless a
// decided failure already settles it.
const char* log_status_name(LogStatus status) {
    switch (status) {
    case LogStatus::held: return "yes";
    case LogStatus::absent: return "no";
    case LogStatus::unsure: return "unsure";
    }
    return "unsure";
}

std::optional<grade::Stage> stage_of(const ProbeEvidence& evidence) {
    bool unsure = false, not_stored = false, not_retrieved = false;
    for (const auto& f : evidence.fields) {
        if (f.unsure > 0) unsure = true;
        if (f.stored + f.unsure < f.gold) not_stored = true;
        if (f.retrieved < f.gold) not_retrieved = true;
    }
    if (not_stored) return grade::Stage::not_stored;
    if (unsure) return std::nullopt;
    if (not_retrieved) return grade::Stage::not_retrieved;
    return grade::Stage::retrieved;
}

class DynamicSuite final : public Suite {
public:
    std::string name() const override { return "dynamic"; }
    std::vector<std::string> dataset_names() const override { return {"dynamic"}; }
    Result<std::vector<data::Scenario>> generate(const std::string& dataset,
                                                 const GenerateOptions& options) const override {
        if (dataset != "dynamic") return make_error(ErrorKind::invalid_input, "unknown dynamic dataset '" + dataset + "'");
        MF_TRY_ASSIGN(GeneratorOptions o, generator_options(options));
        std::vector<data::Scenario> out;
        for (int u = 0; u < o.users; ++u) {
            MF_TRY_ASSIGN(data::Scenario s, generate_user(o, u));
            out.push_back(std::move(s));
        }
        return out;
    }
    Result<void> generate_each(const std::string& dataset, const GenerateOptions& options,
                               const std::function<Result<void>(data::Scenario&&)>& sink) const override {
        if (dataset != "dynamic") return make_error(ErrorKind::invalid_input, "unknown dynamic dataset '" + dataset + "'");
        MF_TRY_ASSIGN(GeneratorOptions o, generator_options(options));
        for (int u = 0; u < o.users; ++u) {
            MF_TRY_ASSIGN(data::Scenario s, generate_user(o, u));
            MF_TRY(sink(std::move(s)));
        }
        return {};
    }
    std::vector<std::string> import_formats() const override { return {"dynamicmem"}; }
    Result<ImportResult> import(const std::string& format, const std::string& path) const override {
        if (format != "dynamicmem") return Suite::import(format, path);
        return import_dynamicmem(path);
    }
    void validate(const data::Scenario& scenario, std::size_t line,
                  std::vector<data::Violation>& out) const override {
        validate_dynamic(scenario, line, out);
    }
    std::optional<ProbeAnalysis> analyse_memory(const CheckContext& context) const override {
        if (context.probe.task.empty()) return std::nullopt;
        CheckpointIndex& index = checkpoint_index(context);
        std::vector<const memory::Memory*> hit_memories;
        hit_memories.reserve(context.hits.size());
        for (const auto& h : context.hits) hit_memories.push_back(&h.memory);
        const HeldIndex hits(hit_memories, index.held->provenance());
        const auto state = index.states.find(context.probe.state_key);
        const ProbeEvidence evidence = attribute(context.probe, hits, *index.held, *index.messages,
                                                 state == index.states.end() ? nullptr : state->second);
        ProbeAnalysis out;
        out.stage = stage_of(evidence);
        out.recall = evidence.recall;
        if (evidence.label) out.label = attribution_name(*evidence.label);
        out.reason = evidence.reason;
        for (std::size_t i = 0; i < evidence.fields.size(); ++i) {
            const auto& f = evidence.fields[i];
            FieldEvidenceRow row;
            row.path = f.path;
            row.gold = f.gold;
            row.stored = f.stored;
            row.retrieved = f.retrieved;
            row.unsure = f.unsure;
            // Per log, for the report's per-app slice.
            for (const auto& pf : context.probe.fields) {
                if (pf.path != f.path) continue;
                for (const auto& id : pf.evidence) {
                    const data::Message* m = index.messages->message(id);
                    row.logs.push_back({{"id", id},
                                        {"app", m && m->app_log ? m->app_log->app : ""},
                                        {"retrieved", log_status_name(hits.status(id, *index.messages))}});
                }
            }
            out.fields.push_back(std::move(row));
        }
        return out;
    }
    const report::SuiteReport* report() const override { return &dynamic_report(); }
    std::optional<AnswerGrade> grade_answer(const AnswerContext& context) const override {
        return grade_profile_answer(context);
    }
};

}  // namespace

void validate_dynamic(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out) {
    auto add = [&](std::string field, std::string message) {
        out.push_back({line, std::move(field), std::move(message)});
    };
    const data::MessageIndex index(s);
    std::map<std::string, const data::Checkpoint*> checkpoints;
    std::string previous_as_of;
    for (std::size_t i = 0; i < s.checkpoints.size(); ++i) {
        const auto& c = s.checkpoints[i];
        const std::string path = "checkpoints[" + std::to_string(i) + "]";
        if (!checkpoints.emplace(c.id, &c).second) add(path + ".id", "duplicate checkpoint '" + c.id + "'");
        if (!dates::parse_date_time(c.as_of)) add(path + ".as_of", "not a date: '" + c.as_of + "'");
        if (!previous_as_of.empty() && c.as_of <= previous_as_of)
            add(path + ".as_of", "checkpoints must be in time order ('" + c.as_of + "' is not after '" + previous_as_of + "')");
        previous_as_of = c.as_of;
        if (index.session_position(c.after_session) == static_cast<std::size_t>(-1))
            add(path + ".after_session", "unknown session '" + c.after_session + "'");
    }
    // A user with nothing to grade is no dataset: an importer that lost the tasks, the checkpoints or
    // the profile must not pass as valid.
    const bool any_task = std::any_of(s.probes.begin(), s.probes.end(), [](const data::Probe& p) { return !p.task.empty(); });
    if (!any_task) add("probes", "a long-horizon user has no profile task: nothing to grade");
    if (s.checkpoints.empty()) add("checkpoints", "a long-horizon user has no checkpoint");
    if (s.profile.empty()) add("profile", "a long-horizon user has no profile state");
    std::set<std::pair<std::string, std::string>> questions;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        if (p.task.empty()) continue;
        const std::string path = "probes[" + std::to_string(i) + "]";
        auto c = checkpoints.find(p.checkpoint);
        if (c == checkpoints.end()) add(path + ".checkpoint", "unknown checkpoint '" + p.checkpoint + "'");
        else if (c->second->after_session != p.after_session)
            add(path + ".after_session", "must be checkpoint " + p.checkpoint + "'s session '" +
                                             c->second->after_session + "', not '" + p.after_session + "'");
        if (p.state_key.empty()) add(path + ".state_key", "a profile task names its state key");
        if (p.fields.empty())
            add(path + ".fields", "a profile task grades at least one field");
        else if (std::all_of(p.fields.begin(), p.fields.end(), [](const data::ProbeField& f) { return f.evidence.empty(); }))
            add(path + ".fields", "no field of this profile task cites an evidence log: its evidence was lost, and no "
                                  "memory-side verdict or attribution is possible");
        if (!questions.insert({p.after_session, p.question}).second)
            add(path + ".question", "another profile task asks the same question at this checkpoint: one question, "
                                    "two references");
    }
    for (std::size_t i = 0; i < s.profile.size(); ++i) {
        const auto& st = s.profile[i];
        for (std::size_t j = 0; j < st.snapshots.size(); ++j) {
            const auto& sn = st.snapshots[j];
            const std::string path = "profile[" + std::to_string(i) + "].snapshots[" + std::to_string(j) + "]";
            auto c = checkpoints.find(sn.checkpoint);
            if (c == checkpoints.end()) {
                add(path + ".checkpoint", "unknown checkpoint '" + sn.checkpoint + "'");
                continue;
            }
            const std::size_t limit = index.session_position(c->second->after_session);
            for (const auto& fe : sn.evidence)
                for (const auto& id : fe.log_ids) {
                    const data::Message* m = index.message(id);
                    if (!m || !m->app_log) add(path + ".evidence." + fe.path, "'" + id + "' is no app log");
                    else if (index.session_position(index.session_of(id)->id) > limit)
                        add(path + ".evidence." + fe.path, "app log '" + id + "' is stored after checkpoint " + sn.checkpoint);
                }
        }
    }
}

const Suite& dynamic_suite() {
    static const DynamicSuite suite;
    return suite;
}

}  // namespace memfail::suites::dynamic

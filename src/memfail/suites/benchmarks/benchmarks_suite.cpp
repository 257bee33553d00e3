// SPDX-License-Identifier: MIT
#include <memfail/suites/benchmarks/benchmarks_suite.hpp>

#include <memfail/suites/benchmarks/halumem_ops.hpp>
#include <memfail/suites/benchmarks/halumem_report.hpp>
#include <memfail/suites/benchmarks/import_halumem.hpp>
#include <memfail/suites/benchmarks/import_locomo.hpp>
#include <memfail/suites/benchmarks/import_longmemeval.hpp>
#include <memfail/suites/benchmarks/metric.hpp>
#include <memfail/suites/benchmarks/protocol.hpp>

#include <algorithm>

namespace memfail::suites::benchmarks {

namespace {

class BenchmarksSuite final : public Suite {
public:
    std::string name() const override { return k_suite; }
    std::vector<std::string> dataset_names() const override { return {k_locomo, k_longmemeval, k_halumem}; }
    Result<std::vector<data::Scenario>> generate(const std::string& dataset, const GenerateOptions&) const override {
        return make_error(ErrorKind::unsupported,
                          "'" + dataset + "' is a published benchmark, not generated: import its file with "
                          "`memfail datasets import --from " + dataset + " FILE` and run the JSONL written",
                          dataset);
    }
    std::vector<std::string> import_formats() const override { return {k_locomo, k_longmemeval, k_halumem}; }
    Result<ImportResult> import(const std::string& format, const std::string& path) const override {
        ImportResult all;
        MF_TRY_ASSIGN(ImportResult result, import_each(format, path, [&](data::Scenario&& s) -> Result<void> {
                          all.scenarios.push_back(std::move(s));
                          return {};
                      }));
        result.scenarios = std::move(all.scenarios);
        return result;
    }
    Result<ImportResult> import_each(const std::string& format, const std::string& path,
                                     const std::function<Result<void>(data::Scenario&&)>& sink) const override {
        if (format == k_locomo) return import_locomo(path, sink);
        if (format == k_longmemeval) return import_longmemeval(path, sink);
        if (format == k_halumem) return import_halumem(path, sink);
        return Suite::import(format, path);
    }
    // LongMemEval's accuracy is over every question (the authors judge every hypothesis); LoCoMo's
    // token F1 reads the answer text itself and needs no verdict.
    bool scores_every_answer(const data::Scenario& scenario) const override {
        return scenario.dataset == k_longmemeval;
    }
    // Each benchmark's own protocol: its authors' answer prompt and grading (protocol.hpp).
    std::vector<std::string> protocols() const override { return {k_locomo, k_longmemeval}; }
    std::optional<llm::ChatRequest> answer_request(const AnswerPromptContext& context) const override {
        return protocol_answer_request(context);
    }
    std::string read_answer(const AnswerPromptContext& context, std::string reply) const override {
        return protocol_read_answer(context, std::move(reply));
    }
    std::optional<AnswerGrade> grade_answer(const AnswerContext& context) const override {
        return longmemeval_grade(context);
    }
    // HaluMem's operation figures (halumem_report.hpp).
    const report::SuiteReport* report() const override { return &halumem_report(); }
    // HaluMem's extraction, false-memory resistance, accuracy and updating, after each session
    // holding memory points (halumem_ops.hpp).
    bool checks_session(const data::Scenario& scenario, std::size_t session) const override {
        return halumem_checks_session(scenario, session);
    }
    std::vector<SessionCheck> check_session(const SessionCheckContext& context) const override {
        return halumem_check_session(context);
    }
    Result<void> judge_session_check(const data::Scenario& scenario, SessionCheck& check,
                                     grade::LlmJudge& judge) const override {
        return halumem_judge_session_check(scenario, check, judge);
    }
    // Each probe is labelled with its benchmark's category, so the report can slice by it.
    void validate(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out) const override {
        for (std::size_t i = 0; i < s.probes.size(); ++i) {
            const auto& p = s.probes[i];
            const std::string path = "probes[" + std::to_string(i) + "]";
            if (s.dataset == k_locomo) {
                const auto c = p.meta.find("category");
                if (c == p.meta.end() || !c->is_number_integer()) {
                    out.push_back({line, path + ".meta.category", "a LoCoMo probe needs its category (1..5)"});
                    continue;
                }
                if ((c->get<int>() == 5) != (p.kind == data::ProbeKind::abstain))
                    out.push_back({line, path + ".kind", "a LoCoMo probe is to be declined (abstain) exactly when its category is 5"});
            } else if (s.dataset == k_longmemeval) {
                const auto t = p.meta.find("question_type");
                if (t == p.meta.end() || !t->is_string())
                    out.push_back({line, path + ".meta.question_type", "a LongMemEval probe needs its question_type"});
                const auto a = p.meta.find("abstention");
                const bool abstention = a != p.meta.end() && a->is_boolean() && a->get<bool>();
                if (abstention != (p.kind == data::ProbeKind::abstain))
                    out.push_back({line, path + ".kind", "a LongMemEval probe is to be declined (abstain) exactly when it is an abstention question (_abs)"});
            } else if (s.dataset == k_halumem) {
                const auto t = p.meta.find("question_type");
                if (t == p.meta.end() || !t->is_string()) {
                    out.push_back({line, path + ".meta.question_type", "a HaluMem probe needs its question_type"});
                    continue;
                }
                if ((t->get_ref<const std::string&>() == "Memory Boundary") != (p.kind == data::ProbeKind::abstain))
                    out.push_back({line, path + ".kind", "a HaluMem probe is to be declined (abstain) exactly when it is a Memory Boundary question"});
            }
        }
    }
};

}  // namespace

const Suite& benchmarks_suite() {
    static const BenchmarksSuite suite;
    return suite;
}

}  // namespace memfail::suites::benchmarks

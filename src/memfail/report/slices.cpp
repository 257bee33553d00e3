// SPDX-License-Identifier: MIT
// Slices of each dataset by its probes' labels, counted as the success table counts a dataset.
#include <memfail/report/slices.hpp>
#include <memfail/report/sources.hpp>

#include <memfail/report/run_report.hpp>
#include <memfail/figures/stats.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace memfail::report {

namespace {

bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

std::string lower(std::string text) {
    for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// "met" / "not met" from meta.condition_met ("yes"/"no" from the generator, a boolean from the
// importer), else from the reference answer's polarity.
std::string condition_label(const store::ProbeLabelFields& f) {
    if (f.condition_met) {
        const std::string v = lower(*f.condition_met);
        if (v == "yes" || v == "true" || v == "1") return "met";
        if (v == "no" || v == "false" || v == "0") return "not met";
    }
    if (f.reference_yes) return *f.reference_yes ? "met" : "not met";
    return "unknown";
}

std::string count_label(const std::optional<std::int64_t>& value, std::int64_t fallback) {
    if (value) return std::to_string(*value);
    return fallback > 0 ? std::to_string(fallback) : std::string("unknown");
}

// Where a label sorts within its dimension: (fixed rank, number, text).
std::tuple<int, long long, std::string> label_key(const std::string& label) {
    static const std::vector<std::string> fixed = {"met", "not met", "direct", "misleading", "ambiguous",
                                                   "first person", "named"};
    if (label == "unknown") return {3, 0, label};
    const auto it = std::find(fixed.begin(), fixed.end(), label);
    if (it != fixed.end()) return {0, it - fixed.begin(), label};
    if (!label.empty() && std::all_of(label.begin(), label.end(), [](unsigned char c) { return std::isdigit(c); }))
        return {1, std::stoll(label), label};
    return {2, 0, label};
}

void add_counts(store::SummaryRow& into, const store::SummaryRow& r) {
    into.graded += r.graded;
    into.success += r.success;
    into.not_stored += r.not_stored;
    into.summary_error += r.summary_error;
    into.unverified += r.unverified;
    into.not_retrieved += r.not_retrieved;
    into.errors += r.errors;
    into.needs_answer_stage += r.needs_answer_stage;
    into.ambiguous += r.ambiguous;
    into.incomplete += r.incomplete;
    into.correct += r.correct;
    into.reasoning_error += r.reasoning_error;
    into.answered += r.answered;
    into.abstain_graded += r.abstain_graded;
}

// A meta value as slice_counts() reads it with json_extract: text as is, booleans as 1/0.
void optional_string(const nlohmann::json& meta, const char* key, std::optional<std::string>& out) {
    const auto it = meta.find(key);
    if (it == meta.end() || it->is_null()) return;
    if (it->is_string()) out = it->get<std::string>();
    else if (it->is_boolean()) out = it->get<bool>() ? "1" : "0";
    else if (it->is_number()) out = it->dump();
}

std::optional<bool> yes_no_polarity(std::string text) {
    text = lower(text);
    const auto start = text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) return std::nullopt;
    text = text.substr(start);
    auto opens = [&](std::string_view word) {
        return starts_with(text, word) && (text.size() == word.size() || !std::isalpha(static_cast<unsigned char>(text[word.size()])));
    };
    if (opens("yes")) return true;
    if (opens("no")) return false;
    return std::nullopt;
}

}  // namespace

std::vector<SliceLabel> probe_slices(const std::string& dataset, const store::ProbeLabelFields& f) {
    if (starts_with(dataset, "conditional_facts"))
        return {{"condition", condition_label(f)}, {"condition type", f.condition_type.value_or("unknown")}};
    if (starts_with(dataset, "coexisting_facts")) return {{"N", count_label(f.n, f.evidence)}};
    if (starts_with(dataset, "long_hop")) {
        std::string voice = "unknown";
        if (f.voice == "named") voice = "named";
        else if (f.voice == "first_person" || f.voice == "first person") voice = "first person";
        return {{"hops", count_label(f.hops, f.evidence - 1)}, {"voice", voice}};
    }
    // The published benchmarks (the benchmarks suite): by their own categories.
    if (dataset == "locomo") return {{"category", f.benchmark_type.value_or("unknown")}};
    if (dataset == "longmemeval" || dataset == "halumem") return {{"question type", f.benchmark_type.value_or("unknown")}};
    if (starts_with(dataset, "persona_retrieval")) {
        std::string kind = "direct";
        if (f.ambiguous) kind = "ambiguous";
        else if (f.kind == "abstain" || f.is_misleading.value_or(false)) kind = "misleading";
        return {{"probe", kind}};
    }
    return {};
}

store::ProbeLabelFields label_fields(const std::string& kind, const std::string& stage, const std::string& probe_json) {
    store::ProbeLabelFields f;
    f.kind = kind;
    f.ambiguous = stage == "ambiguous";
    if (probe_json.empty()) return f;
    const nlohmann::json probe = nlohmann::json::parse(probe_json, nullptr, false);
    if (!probe.is_object()) return f;
    if (const auto e = probe.find("evidence"); e != probe.end() && e->is_array())
        f.evidence = static_cast<std::int64_t>(e->size());
    if (const auto a = probe.find("answer"); kind == "yes_no" && a != probe.end() && a->is_string())
        f.reference_yes = yes_no_polarity(a->get<std::string>());
    const auto m = probe.find("meta");
    if (m == probe.end() || !m->is_object()) return f;
    optional_string(*m, "condition_met", f.condition_met);
    optional_string(*m, "condition_type", f.condition_type);
    optional_string(*m, "voice", f.voice);
    if (const auto n = m->find("n"); n != m->end() && n->is_number_integer()) f.n = n->get<std::int64_t>();
    if (const auto h = m->find("hops"); h != m->end() && h->is_number_integer()) f.hops = h->get<std::int64_t>();
    if (const auto x = m->find("is_misleading"); x != m->end() && x->is_boolean()) f.is_misleading = x->get<bool>();
    if (const auto x = m->find("ambiguous"); x != m->end() && x->is_boolean() && x->get<bool>()) f.ambiguous = true;
    // As slice_counts() composes it in SQL.
    if (const auto name = m->find("category_name"); name != m->end() && !name->is_null()) {
        std::optional<std::string> category, label;
        optional_string(*m, "category", category);
        optional_string(*m, "category_name", label);
        if (category && label) f.benchmark_type = *category + " " + *label;
    } else {
        optional_string(*m, "question_type", f.benchmark_type);
    }
    return f;
}

Result<std::vector<Slice>> slices(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto rows, store::slice_counts(db, run_ids));
    // (run position, dataset position, k, dimension position, label key) -> slice.
    using Key = std::tuple<std::size_t, std::size_t, int, std::size_t, std::tuple<int, long long, std::string>>;
    std::map<Key, Slice> merged;
    std::vector<std::string> datasets;
    std::map<std::string, std::vector<std::string>> dimensions;  // per dataset, first seen first
    for (const auto& row : rows) {
        const auto& c = row.counts;
        const std::size_t run = static_cast<std::size_t>(
            std::find(run_ids.begin(), run_ids.end(), c.run_id) - run_ids.begin());
        auto d = std::find(datasets.begin(), datasets.end(), c.dataset);
        if (d == datasets.end()) d = datasets.insert(datasets.end(), c.dataset);
        const std::size_t dataset = static_cast<std::size_t>(d - datasets.begin());
        for (const auto& l : probe_slices(c.dataset, row.labels)) {
            auto& dims = dimensions[c.dataset];
            auto dim = std::find(dims.begin(), dims.end(), l.dimension);
            if (dim == dims.end()) dim = dims.insert(dims.end(), l.dimension);
            const Key key{run, dataset, c.k, static_cast<std::size_t>(dim - dims.begin()), label_key(l.label)};
            auto [it, fresh] = merged.try_emplace(key);
            Slice& s = it->second;
            if (fresh) {
                s.dimension = l.dimension;
                s.label = l.label;
                s.counts.run_id = c.run_id;
                s.counts.system_spec = c.system_spec;
                s.counts.dataset = c.dataset;
                s.counts.k = c.k;
            }
            add_counts(s.counts, c);
            s.answers_read += row.answers_read;
            s.answers_right += row.answers_right;
        }
    }
    std::vector<Slice> out;
    out.reserve(merged.size());
    for (auto& [key, s] : merged) out.push_back(std::move(s));
    return out;
}

std::string slice_key(const std::string& dimension) {
    std::string out = lower(dimension);
    std::replace(out.begin(), out.end(), ' ', '_');
    return out;
}

SliceRate slice_rate(const Slice& s, bool end_to_end) {
    SliceRate r;
    r.probes = s.counts.graded - s.counts.errors;
    r.success = end_to_end ? s.counts.correct : s.counts.success;
    r.rate = r.probes > 0 ? static_cast<double>(r.success) / static_cast<double>(r.probes) : 0.0;
    return r;
}

Result<Table> slices_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    MF_TRY_ASSIGN(auto all, slices(db, run_ids));
    MF_TRY_ASSIGN(auto origins, run_origins(db));
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    const bool machine = style == TableStyle::machine;
    // One meaning of success for every table of a report (success_table decides it the same way).
    MF_TRY_ASSIGN(auto summary, db.summary(run_ids));
    bool end_to_end = false;
    for (const auto& r : summary) end_to_end |= r.answered > 0;
    bool any_answers = false, any_ambiguous = false, any_abstain = false;
    for (const auto& s : all) {
        any_answers |= s.answers_read > 0;
        any_ambiguous |= s.counts.ambiguous > 0;
        any_abstain |= s.counts.needs_answer_stage > 0;
    }
    Table t;
    t.title = std::string("Slices: each dataset by its probes' labels (") +
              (end_to_end ? "end-to-end success" : "memory-side success") + ")";
    if (machine && !origins.empty()) t.columns.push_back({"file", Align::left});
    t.columns.insert(t.columns.end(), {{"run", Align::right}, {"system", Align::left}, {"dataset", Align::left},
                                       {"k", Align::right}, {"slice", Align::left}, {"label", Align::left},
                                       {"probes", Align::right}, {end_to_end ? "correct" : "success", Align::right}});
    add_rate_columns(t, machine);
    t.columns.insert(t.columns.end(), {{"not_stored", Align::right}, {"summary_error", Align::right},
                                       {"unverified", Align::right}, {"not_retrieved", Align::right}});
    if (end_to_end) t.columns.push_back({"reasoning_error", Align::right});
    t.columns.push_back({"errors", Align::right});
    if (!end_to_end && any_abstain) t.columns.push_back({machine ? "abstain" : "abstain*", Align::right});
    if (any_ambiguous) t.columns.push_back({machine ? "ambiguous" : "ambiguous**", Align::right});
    if (any_answers) {
        t.columns.push_back({machine ? "answers_right" : "answers right", Align::right});
        t.columns.push_back({machine ? "answers_read" : "answers read", Align::right});
        t.columns.push_back({machine ? "right" : "right %", Align::right});
    }
    for (const auto& s : all) {
        const SliceRate rate = slice_rate(s, end_to_end);
        const Interval ci = wilson_interval(rate.success, rate.probes);
        const auto& c = s.counts;
        std::vector<std::string> row;
        const auto origin = origins.find(c.run_id);
        if (machine && origin != origins.end()) row = {origin->second.file, std::to_string(origin->second.id)};
        else row = {names.count(c.run_id) ? names[c.run_id] : std::to_string(c.run_id)};
        row.insert(row.end(), {c.system_spec, c.dataset, std::to_string(c.k), s.dimension, s.label,
                               std::to_string(rate.probes), std::to_string(rate.success)});
        if (machine)
            row.insert(row.end(), {rate.probes > 0 ? fraction(rate.rate) : "", rate.probes > 0 ? fraction(ci.low) : "",
                                   rate.probes > 0 ? fraction(ci.high) : ""});
        else
            row.insert(row.end(), {rate.probes > 0 ? percent(rate.rate) : "-",
                                   rate.probes > 0 ? "[" + percent(ci.low) + ", " + percent(ci.high) + "]" : "-"});
        row.insert(row.end(), {std::to_string(c.not_stored), std::to_string(c.summary_error),
                               std::to_string(c.unverified), std::to_string(c.not_retrieved)});
        if (end_to_end) row.push_back(std::to_string(c.reasoning_error));
        row.push_back(std::to_string(c.errors));
        if (!end_to_end && any_abstain) row.push_back(std::to_string(c.needs_answer_stage));
        if (any_ambiguous) row.push_back(std::to_string(c.ambiguous));
        if (any_answers) {
            row.push_back(std::to_string(s.answers_right));
            row.push_back(std::to_string(s.answers_read));
            const double right = s.answers_read > 0 ? static_cast<double>(s.answers_right) /
                                                          static_cast<double>(s.answers_read)
                                                    : 0.0;
            row.push_back(s.answers_read > 0 ? (machine ? fraction(right) : percent(right)) : (machine ? "" : "-"));
        }
        t.rows.push_back(std::move(row));
    }
    t.notes.push_back("Slices: Conditional-Facts by whether the question's context meets the rule's condition "
                      "(meta.condition_met, else the yes/no reference) and by condition type; Coexisting by N; "
                      "Long-Hop by hops and by voice (first person or a named person); Persona by direct, "
                      "misleading and ambiguous probes; LoCoMo by category; LongMemEval and HaluMem by question type. Each row is counted as the success table counts a "
                      "dataset; a summariser that drops conditions shows its failures on \"not met\".");
    if (!end_to_end && any_abstain)
        t.notes.push_back("* abstain: probes to be declined (misleading, adversarial, abstention questions) have no "
                          "evidence and need the answer stage; in no rate.");
    if (any_ambiguous)
        t.notes.push_back("** ambiguous: misleading questions naming a person whose essay is stored; in no rate.");
    if (any_answers)
        t.notes.push_back("answers right / read: the answer stage's verdict where it was graded; for a yes/no probe "
                          "whose answer stage was not reached, the recorded answer's yes/no against the reference's "
                          "(a condition dropped from memory turns \"not met\" answers into a wrong yes).");
    return t;
}

Result<std::vector<Table>> slices_tables_by_run(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(Table flat, slices_table(db, run_ids));
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    std::vector<Table> out;
    for (std::size_t i = 0; i < run_ids.size(); ++i) {
        MF_TRY_ASSIGN(auto run, db.run(run_ids[i]));
        Table t;
        t.title = "Slices, run " + names[run_ids[i]] + ": " + (run ? run->label() : std::string("?"));
        t.columns.assign(flat.columns.begin() + 2, flat.columns.end());
        const std::string id = names[run_ids[i]];
        // Condition types (about 30 per dataset) only at the run's largest k, so the table stays
        // readable; the flat table (csv, json) has every k.
        int largest_k = 0;
        for (const auto& row : flat.rows)
            if (row[0] == id) largest_k = std::max(largest_k, std::stoi(row[3]));
        for (const auto& row : flat.rows)
            if (row[0] == id && (row[4] != "condition type" || std::stoi(row[3]) == largest_k))
                t.rows.emplace_back(row.begin() + 2, row.end());
        if (i + 1 == run_ids.size()) {
            t.notes = flat.notes;
            t.notes.push_back("condition type: shown at each run's largest k here; --format csv --table slices "
                              "and --format json have every k.");
        }
        if (!t.rows.empty() || i + 1 == run_ids.size()) out.push_back(std::move(t));
    }
    return out;
}

}  // namespace memfail::report

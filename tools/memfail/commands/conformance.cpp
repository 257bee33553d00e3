// SPDX-License-Identifier: MIT
// memfail conformance: check a memory system against the adapter protocol and print a pass/fail table.
#include <commands/cli.hpp>
#include <commands/common.hpp>
#include <commands/llm_options.hpp>

#include <memfail/memory/adapter/adapter_system.hpp>
#include <memfail/memory/adapter/conformance.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/figures/table.hpp>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <optional>

namespace memfail::cli {

namespace {
struct ConformanceOptions {
    std::string system;
    std::string format = "text";
    std::string storage;
    LlmOptions llm;  // for built-in systems that call a model (facts, notes, graph, mixture)
};

report::Table table_of(const memory::adapter::ConformanceReport& result) {
    using memory::adapter::CheckStatus;
    report::Table t;
    t.title = "Conformance of " + result.target + (result.system.empty() ? "" : " (system '" + result.system + "')") +
              " with adapter protocol " + std::to_string(memory::adapter::k_protocol_version);
    t.columns = {{"check", report::Align::left}, {"status", report::Align::left}, {"detail", report::Align::left}};
    for (const auto& c : result.checks)
        t.rows.push_back({c.name, memory::adapter::check_status_name(c.status), c.detail});
    t.notes.push_back(std::string(result.passed() ? "PASSED" : "FAILED") + ": " +
                      std::to_string(result.count(CheckStatus::pass)) + " passed, " +
                      std::to_string(result.count(CheckStatus::fail)) + " failed, " +
                      std::to_string(result.count(CheckStatus::skip)) + " skipped");
    return t;
}
}  // namespace

void add_conformance_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<ConformanceOptions>();
    CLI::App* cmd = app.add_subcommand(
        "conformance",
        "Check a memory system against the adapter protocol (docs/ADAPTERS.md): hello, round trip of a stored "
        "fact, k respected, stable ids, reset empties, sources echo message ids, optional operations work or "
        "answer unsupported, malformed requests get structured errors. Exit code 1 when a check fails. The "
        "battery stores a small fixed conversation and resets the system at its start and end: do not point it "
        "at a store whose contents you want to keep");
    cmd->add_option("--system,-s", opts->system,
                    "exec:cmd=python3 my_adapter.py (JSON lines over stdin/stdout), http:url=http://127.0.0.1:8420, "
                    "or a built-in spec such as verbatim:retriever=hashed (answered in-process)")
        ->required();
    cmd->add_option("--format,-f", opts->format, "text, markdown or json")->capture_default_str();
    cmd->add_option("--storage", opts->storage,
                    "Folder for a built-in system's files (default: a private in-memory database)");
    cmd->footer(
        "Examples:\n"
        "  memfail conformance --system 'exec:cmd=python3 examples/adapters/python/memfail_adapter.py'\n"
        "  memfail conformance --system http:url=http://127.0.0.1:8420 --format markdown\n"
        "  memfail conformance --system verbatim\n"
        "  memfail conformance --system facts --system-model gpt-4o-mini --base-url http://127.0.0.1:8080/v1");
    opts->llm.add_to(*cmd, "<storage>/conformance.llm-cache.db, or ./memfail-conformance.llm-cache.db without --storage");
    cmd->callback([opts, &action] {
        action = [opts] {
            const auto format = value_or_fatal(report::parse_format(opts->format));
            if (format == report::Format::csv)
                throw Fatal(make_error(ErrorKind::invalid_input, "--format takes text, markdown or json"));
            const Spec spec = value_or_fatal(Spec::parse(opts->system));
            memory::adapter::ConformanceReport result;
            if (spec.name == "exec" || spec.name == "http") {
                if (!opts->storage.empty())
                    throw Fatal(make_error(ErrorKind::invalid_input,
                                           "--storage applies to built-in systems; an adapter keeps its own storage"));
                auto transport = value_or_fatal(memory::adapter::make_transport(spec));
                result = memory::adapter::run_conformance(*transport);
            } else {
                const llm::LlmSettings settings = opts->llm.resolve();
                memory::SystemContext context;
                context.storage_dir = opts->storage;
                context.store_name = "conformance";
                context.services.model = settings.system_model;
                context.services.embed_model = settings.embed_model;
                context.services.temperature = settings.temperature;
                context.services.seed = settings.seed;
                // The LLM reply cache may live there too.
                if (!opts->storage.empty()) {
                    std::error_code ec;
                    std::filesystem::create_directories(opts->storage, ec);
                    if (ec)
                        throw Fatal(make_error(ErrorKind::io, "cannot create the storage folder: " + ec.message(), opts->storage));
                }
                std::optional<llm::LlmStack> stack;
                if (settings.uses_llm()) {
                    // Replies are cached next to the store, or in the working folder without --storage.
                    const std::string cache_base = opts->storage.empty()
                                                       ? "memfail-conformance"
                                                       : (std::filesystem::path(opts->storage) / "conformance").string();
                    stack = value_or_fatal(llm::make_llm_stack(settings, cache_base));
                    context.services.client = stack->client.get();
                }
                result = value_or_fatal(memory::adapter::run_conformance_builtin(spec, context));
            }
            const std::string out = format == report::Format::json ? memory::adapter::to_json(result).dump(2) + "\n"
                                                                   : report::render(table_of(result), format);
            std::fwrite(out.data(), 1, out.size(), stdout);
            std::fflush(stdout);
            if (!result.passed()) throw ExitStatus{1};
        };
    });
}

}  // namespace memfail::cli

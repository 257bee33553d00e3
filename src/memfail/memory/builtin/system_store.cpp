// SPDX-License-Identifier: MIT
// Shared store handling for the built-in systems.
#include <memfail/memory/builtin/system_store.hpp>

#include <filesystem>

#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>

namespace memfail::memory {

namespace {

// A name an older memfail used as a file stem without harm.
bool plain_id(std::string_view name) {
    if (name.empty() || name.size() > 128 || name.front() == '.') return false;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == ':' || c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace

std::string store_file_path(const std::string& storage_dir, const std::string& store_name) {
    const std::filesystem::path dir(storage_dir);
    if (plain_id(store_name)) {
        std::error_code ec;
        const auto legacy = dir / (store_name + ".sqlite");
        if (std::filesystem::is_regular_file(legacy, ec)) return legacy.string();
    }
    std::string prefix;
    for (const char c : store_name.substr(0, 40)) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        prefix += ok ? c : '_';
    }
    if (prefix.empty()) prefix = "store";
    return (dir / (prefix + "-" + content_hash(store_name).substr(0, 16) + ".sqlite")).string();
}

Result<std::string> store_path(const SystemContext& context) {
    if (context.storage_dir.empty()) return std::string(":memory:");
    std::error_code ec;
    std::filesystem::create_directories(context.storage_dir, ec);
    if (ec) return make_error(ErrorKind::io, "cannot create the storage folder: " + ec.message(), context.storage_dir);
    return store_file_path(context.storage_dir, context.store_name);
}

Result<store::Database> open_store(const std::string& path, const char* schema, int version) {
    MF_TRY_ASSIGN(store::Database db, store::Database::open(path));
    MF_TRY_ASSIGN(const int found, db.user_version());
    if (found > version)
        return make_error(ErrorKind::invalid_input,
                          "this store was written by a newer memfail (schema " + std::to_string(found) + ")", path);
    MF_TRY(db.exec(schema));
    if (found == 0) MF_TRY(db.set_user_version(version));
    return db;
}

Result<void> require_system_model(const SystemContext& context, std::string_view system, std::string_view what) {
    if (!context.services.model.empty()) return {};
    // Built by appending: GCC 12 takes "'" + std::string(...) for an overlapping copy (-Wrestrict).
    std::string message = "'";
    message.append(system).append("' ").append(what).append(
        " with a model: pass --system-model (and an OpenAI-compatible endpoint with --base-url or OPENAI_BASE_URL)");
    return make_error(ErrorKind::invalid_input, std::move(message));
}

Result<void> remove_listed(store::Database& db, Retriever& index, const char* select_sql) {
    MF_TRY_ASSIGN(store::Statement listed, db.prepare(select_sql));
    Result<void> removed;
    MF_TRY(listed.for_each_row([&] {
        if (!removed) return;
        const Result<bool> gone = index.remove(listed.column_int(0));
        if (!gone) removed = gone.error();
    }));
    return removed;
}

Result<bool> first_time_stored(store::Database& db, const char* insert_sql, const std::string& session_id) {
    MF_TRY_ASSIGN(store::Statement seen, db.prepare(insert_sql));
    seen.bind(1, session_id);
    MF_TRY(seen.run());
    return db.changes() > 0;
}

NumberedConversation number_messages(const data::Session& session) {
    NumberedConversation out;
    for (const auto& m : session.messages) {
        if (text::trim(m.content).empty()) continue;
        out.shown.push_back({m.role, m.content});
        out.message_ids.push_back(m.id);
    }
    return out;
}

Result<llm::ChatReply> ask_system_model(const SystemServices& services, llm::ChatRequest request, std::string_view system) {
    if (!services.client)
        return make_error(ErrorKind::invalid_input,
                          std::string("'").append(system).append("' needs an OpenAI-compatible endpoint for its --system-model"));
    request.temperature = services.temperature;
    request.seed = services.seed;
    return services.client->chat(request);
}

Result<std::int64_t> scalar_of(store::Database& db, const char* sql) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(sql));
    MF_TRY_ASSIGN(const bool row, s.step());
    return row ? s.column_int(0) : 0;
}

Result<std::int64_t> bounded_option(const Spec& spec, const std::string& key, std::int64_t fallback,
                                    std::int64_t low, std::int64_t high, std::string_view system) {
    MF_TRY_ASSIGN(const std::int64_t value, spec.get_int(key, fallback));
    if (value < low || value > high)
        return make_error(ErrorKind::invalid_input, "option '" + key + "' of '" + std::string(system) +
                                                        "' must be between " + std::to_string(low) + " and " +
                                                        std::to_string(high) + ", got " + std::to_string(value));
    return value;
}

}  // namespace memfail::memory

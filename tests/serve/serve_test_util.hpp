// SPDX-License-Identifier: MIT
// Shared helpers for the serve tests: small sessions, a recording httplib server on a free port.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/data/model.hpp>
#include <memfail/memory/adapter/adapter_system.hpp>

namespace memfail::serve_test {

template <class T>
T ok(Result<T> result) {
    if (!result) {
        ADD_FAILURE() << result.error().describe();
        std::abort();
    }
    return std::move(result).value();
}

inline data::Session session(const std::string& id, const std::string& timestamp,
                             const std::vector<std::pair<std::string, std::string>>& turns) {
    data::Session s{id, timestamp, {}};
    int n = 0;
    for (const auto& [role, content] : turns) s.messages.push_back({id + "-m" + std::to_string(++n), role, content});
    return s;
}

inline std::vector<data::Session> sample_sessions() {
    return {session("s1", "2026-03-01T09:00:00Z",
                    {{"user", "I only drink green tea after dinner because coffee keeps me awake."},
                     {"assistant", "Noted: green tea in the evening, no coffee."},
                     {"user", "My sister Priya lives in Lisbon and visits every August."}}),
            session("s2", "2026-03-04T18:30:00Z",
                    {{"user", "I switched my running days to Tuesday and Saturday mornings."},
                     {"assistant", "Tuesday and Saturday mornings it is."},
                     {"user", "When it rains I cycle to work instead of running."}})};
}

// One request as the fake peer saw it.
struct Seen {
    std::string method;
    std::string path;
    std::string query_user_id;
    std::string body;
    std::string authorization;
};

// An httplib server on 127.0.0.1 and a free port, recording every request; routes are added by the
// test before start().
class PeerServer {
public:
    httplib::Server server;

    void start() {
        m_port = server.bind_to_any_port("127.0.0.1");
        ASSERT_GT(m_port, 0);
        m_thread = std::thread([this] { server.listen_after_bind(); });
        while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~PeerServer() {
        server.stop();
        if (m_thread.joinable()) m_thread.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    void record(const httplib::Request& req) {
        std::lock_guard lock(m_mutex);
        m_seen.push_back({req.method, req.path, req.has_param("user_id") ? req.get_param_value("user_id") : "", req.body,
                          req.get_header_value("Authorization")});
    }
    std::vector<Seen> seen() {
        std::lock_guard lock(m_mutex);
        return m_seen;
    }
    // The one request to `method path`; fails the test when there is not exactly one.
    Seen only(const std::string& method, const std::string& path) {
        std::vector<Seen> found;
        for (const auto& s : seen())
            if (s.method == method && s.path == path) found.push_back(s);
        EXPECT_EQ(found.size(), 1u) << method << " " << path;
        return found.empty() ? Seen{} : found.front();
    }

private:
    int m_port = 0;
    std::thread m_thread;
    std::mutex m_mutex;
    std::vector<Seen> m_seen;
};

inline void reply_json(httplib::Response& res, int status, const nlohmann::json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
}

inline Result<std::unique_ptr<memory::adapter::Transport>> http_transport(const std::string& spec) {
    auto parsed = Spec::parse(spec);
    if (!parsed) return parsed.error();
    return memory::adapter::make_http_transport(*parsed);
}

}  // namespace memfail::serve_test

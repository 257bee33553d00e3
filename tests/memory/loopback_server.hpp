// SPDX-License-Identifier: MIT
// An httplib server on 127.0.0.1 and a free port, for the http: transport's tests: the test adds
// its routes to `server`, then start(); the destructor stops it. A class deriving from it whose
// routes use its own members calls stop() in its destructor, before those members go.
#pragma once
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace memfail::memory::adapter::fixture {

class LoopbackServer {
public:
    httplib::Server server;

    LoopbackServer() = default;
    LoopbackServer(const LoopbackServer&) = delete;
    LoopbackServer& operator=(const LoopbackServer&) = delete;
    void start() {
        m_port = server.bind_to_any_port("127.0.0.1");
        ASSERT_GT(m_port, 0);
        m_thread = std::thread([this] { server.listen_after_bind(); });
        while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void stop() {
        server.stop();
        if (m_thread.joinable()) m_thread.join();
    }
    ~LoopbackServer() { stop(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

private:
    int m_port = 0;
    std::thread m_thread;
};

}  // namespace memfail::memory::adapter::fixture

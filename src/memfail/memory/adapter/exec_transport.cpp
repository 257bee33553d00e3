// SPDX-License-Identifier: MIT
// The `exec:` transport: an adapter as a child process speaking JSON lines over stdin/stdout, with
// its stderr passed through, per-call timeouts, and a restart after any crash, hang or garbage.
#include <memfail/memory/adapter/adapter_system.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ;

namespace memfail::memory::adapter {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// A response line longer than this is refused: an adapter stuck printing without a newline must not
// take all of memfail's memory with it.
constexpr std::size_t k_max_line = std::size_t{64} << 20;
// Forwarded stderr is cut into pieces of this size when a line never ends.
constexpr std::size_t k_max_stderr_line = std::size_t{64} << 10;
// Shutting a child down: time to exit on its own once stdin is closed, then after SIGTERM.
constexpr milliseconds k_exit_grace{500};
constexpr milliseconds k_term_grace{500};
// After EOF on stdout, how long to wait for the exit status that explains it.
constexpr milliseconds k_exit_status_wait{1000};

std::string duration_text(milliseconds d) {
    if (d.count() % 1000 == 0)
        return std::to_string(d.count() / 1000) + "s";
    return std::to_string(d.count()) + "ms";
}

// Splits a command into words the way a POSIX shell would for a simple command, without expanding
// anything: blanks separate words, '...' keeps everything literally, "..." keeps everything but
// lets a backslash escape ", \, $ and `, and an unquoted backslash escapes the next character.
Result<std::vector<std::string>> split_command(const std::string& cmd) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false; // so '' and "" give an empty word
    enum class Quote { none, single, dbl } quote = Quote::none;
    for (std::size_t i = 0; i < cmd.size(); ++i) {
        const char c = cmd[i];
        if (quote == Quote::single) {
            if (c == '\'')
                quote = Quote::none;
            else
                word += c;
        } else if (quote == Quote::dbl) {
            if (c == '"')
                quote = Quote::none;
            else if (c == '\\' && i + 1 < cmd.size() &&
                     std::strchr("\"\\$`", cmd[i + 1]) != nullptr)
                word += cmd[++i];
            else
                word += c;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word)
                words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            in_word = true;
            if (c == '\'')
                quote = Quote::single;
            else if (c == '"')
                quote = Quote::dbl;
            else if (c == '\\' && i + 1 < cmd.size())
                word += cmd[++i];
            else
                word += c;
        }
    }
    if (quote != Quote::none)
        return make_error(ErrorKind::invalid_input,
                          std::string("option 'cmd' of 'exec' has an unterminated ") +
                              (quote == Quote::single ? "single" : "double") + " quote: " + cmd);
    if (in_word)
        words.push_back(std::move(word));
    if (words.empty())
        return make_error(ErrorKind::invalid_input, "option 'cmd' of 'exec' is empty");
    return words;
}

void close_fd(int& fd) {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

void set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// A close-on-exec pipe whose ends are both above stderr, so the child's dup2 onto 0, 1 and 2 can
// never clobber another pipe end (memfail may run with a standard stream closed).
bool make_pipe(int fds[2]) {
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return false;
    for (int k = 0; k < 2; ++k) {
        if (fds[k] > 2)
            continue;
        const int moved = ::fcntl(fds[k], F_DUPFD_CLOEXEC, 3);
        ::close(fds[k]);
        fds[k] = moved;
    }
    if (fds[0] < 0 || fds[1] < 0) {
        close_fd(fds[0]);
        close_fd(fds[1]);
        return false;
    }
    return true;
}

// Writes everything to a file descriptor (stderr here); a short or failed write is given up on, as
// there is nowhere left to report it.
void write_fd(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

// Writing to a pipe whose reader has died raises SIGPIPE, which would end memfail. Instead of
// ignoring SIGPIPE for the whole process (a library should not change process-wide dispositions),
// the writing thread blocks it for the duration of the write and swallows the one it raised;
// the write itself then fails with EPIPE, which is reported as the adapter having exited. SIGPIPE
// from write() is sent to the writing thread, so blocking it there is enough.
class SigpipeGuard {
  public:
    SigpipeGuard() {
        sigemptyset(&m_pipe);
        sigaddset(&m_pipe, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        m_was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old);
    }
    ~SigpipeGuard() {
        if (m_raised && !m_was_pending) {
            const timespec zero{};
            while (sigtimedwait(&m_pipe, nullptr, &zero) < 0 && errno == EINTR) {
            }
        }
        pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;
    void raised() { m_raised = true; }

  private:
    sigset_t m_pipe;
    sigset_t m_old;
    bool m_was_pending = false;
    bool m_raised = false;
};

// Forwards a child's stderr to memfail's, line by line with "[adapter] " in front, on its own
// thread so a chatty adapter can never fill the pipe and stall. The thread touches only its own
// file descriptors and buffer; stop() wakes it through a pipe, it forwards what is left, and
// join() orders everything it did before the owner closes the descriptors.
class StderrForwarder {
  public:
    // Takes ownership of `fd` (closed on failure too); null when no wake-up pipe can be made.
    static std::unique_ptr<StderrForwarder> start(int fd) {
        std::unique_ptr<StderrForwarder> f(new StderrForwarder(fd));
        if (!make_pipe(f->m_wake))
            return nullptr;
        set_nonblocking(fd);
        f->m_thread = std::thread([raw = f.get()] { raw->run(); });
        return f;
    }
    ~StderrForwarder() {
        if (m_thread.joinable()) {
            const char byte = 0;
            write_fd(m_wake[1], std::string_view(&byte, 1));
            m_thread.join();
        }
        close_fd(m_fd);
        close_fd(m_wake[0]);
        close_fd(m_wake[1]);
    }
    StderrForwarder(const StderrForwarder&) = delete;
    StderrForwarder& operator=(const StderrForwarder&) = delete;

  private:
    explicit StderrForwarder(int fd) : m_fd(fd) {}

    void run() {
        for (;;) {
            pollfd fds[2] = {{m_fd, POLLIN, 0}, {m_wake[0], POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            if (fds[0].revents != 0 && !drain())
                break; // EOF: every writer has gone
            if (fds[1].revents != 0) {
                drain();
                break;
            }
        }
        if (!m_line.empty())
            emit(m_line);
    }

    // Reads what is available; false at end of file.
    bool drain() {
        char chunk[8192];
        for (;;) {
            const ssize_t n = ::read(m_fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK;
            if (n == 0)
                return false;
            for (ssize_t i = 0; i < n; ++i) {
                if (chunk[i] == '\n') {
                    emit(m_line);
                    m_line.clear();
                } else {
                    m_line += chunk[i];
                    if (m_line.size() >= k_max_stderr_line) {
                        emit(m_line);
                        m_line.clear();
                    }
                }
            }
        }
    }

    static void emit(const std::string& line) {
        std::string out = "[adapter] ";
        out += line;
        if (!out.empty() && out.back() == '\r')
            out.pop_back();
        out += '\n';
        write_fd(STDERR_FILENO, out); // one write, so lines from threads do not interleave
    }

    int m_fd;
    int m_wake[2] = {-1, -1};
    std::string m_line;
    std::thread m_thread;
};

struct ExecOptions {
    std::string cmd;
    std::vector<std::string> argv;
    std::string cwd;
    milliseconds timeout{30'000};
    milliseconds startup_timeout{60'000};
};

// How a child ended, from waitid(): "exited with status 3", "was killed by signal 9 (Killed)".
std::string exit_text(const siginfo_t& info) {
    if (info.si_code == CLD_EXITED)
        return "exited with status " + std::to_string(info.si_status);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char* name = sigdescr_np(info.si_status); // unlike strsignal(), thread-safe
#else
    const char* name = strsignal(info.si_status);
#endif
    return "was killed by signal " + std::to_string(info.si_status) +
           (name ? std::string(" (") + name + ")" : "") +
           (info.si_code == CLD_DUMPED ? ", dumping core" : "");
}

std::string excerpt(std::string_view line) {
    constexpr std::size_t k_show = 200;
    std::string out(line.substr(0, k_show));
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20)
            c = ' ';
    if (line.size() > k_show)
        out += "...";
    return out;
}

class ExecTransport final : public Transport {
  public:
    explicit ExecTransport(ExecOptions options) : m_options(std::move(options)) {}
    ~ExecTransport() override { stop_child(true); }
    ExecTransport(const ExecTransport&) = delete;
    ExecTransport& operator=(const ExecTransport&) = delete;

    Result<json> call(std::string_view op, const json& params) override {
        if (m_pid < 0) {
            if (m_restarts > m_announced_restarts) {
                m_announced_restarts = m_restarts;
                write_fd(STDERR_FILENO,
                         "memfail: restarting the adapter '" + m_options.cmd +
                             "'; it has lost what it held unless it persists it itself\n");
            }
            MF_TRY(start());
            // The hello that start() just exchanged answers this one too.
            if (op == "hello")
                return m_hello;
        }
        return exchange(op, params, m_options.timeout);
    }

    std::uint64_t restarts() const override { return m_restarts; }
    std::string describe() const override { return "exec:" + m_options.cmd; }

  private:
    Error failure(ErrorKind kind, std::string message) {
        return make_error(kind, std::move(message), describe());
    }

    // Stops the child after a broken exchange; the next call starts a new one. A child that had
    // answered hello held memories, so losing it counts as a restart (the runner then distrusts
    // results that depended on them).
    Error broken(Error error) {
        if (m_ready)
            ++m_restarts;
        stop_child(false);
        return error;
    }

    Result<void> spawn() {
        int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
        const auto cleanup = [&] {
            for (int* p : {in, out, err}) {
                close_fd(p[0]);
                close_fd(p[1]);
            }
        };
        if (!make_pipe(in) || !make_pipe(out) || !make_pipe(err)) {
            const int saved = errno;
            cleanup();
            return failure(ErrorKind::io, std::string("cannot create pipes for the adapter: ") +
                                              std::strerror(saved));
        }
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
        // The pipes are close-on-exec; dup2 gives the child plain copies as 0, 1 and 2.
        posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
        if (!m_options.cwd.empty())
            posix_spawn_file_actions_addchdir_np(&actions, m_options.cwd.c_str());
        // Its own process group, so a timeout can stop whatever it started too (sh -c "..."), and
        // terminal signals meant for memfail do not reach it before memfail has shut it down.
        // Default SIGPIPE and an empty mask, whatever memfail's thread had.
        sigset_t empty, defaults;
        sigemptyset(&empty);
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGPIPE);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &empty);
        posix_spawnattr_setsigdefault(&attr, &defaults);

        std::vector<char*> argv;
        for (std::string& word : m_options.argv)
            argv.push_back(word.data());
        argv.push_back(nullptr);
        pid_t pid = -1;
        const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (rc != 0) {
            cleanup();
            std::string why = std::strerror(rc);
            if (rc == ENOENT)
                why = "'" + m_options.argv[0] + "' was not found" +
                      (m_options.cwd.empty()
                           ? ""
                           : " (or the folder '" + m_options.cwd + "' does not exist)");
            return failure(ErrorKind::io, "cannot start the adapter: " + why);
        }
        close_fd(in[0]);
        close_fd(out[1]);
        close_fd(err[1]);
        m_pid = pid;
        m_in = in[1];
        m_out = out[0];
        set_nonblocking(m_in);
        set_nonblocking(m_out);
        // Without a forwarder (no descriptors left) the child's stderr writes fail with EPIPE.
        m_stderr = StderrForwarder::start(err[0]);
        m_buffer.clear();
        m_scanned = 0;
        m_ready = false;
        return {};
    }

    Result<void> start() {
        MF_TRY(spawn());
        auto hello =
            exchange("hello", json{{"protocol", k_protocol_version}}, m_options.startup_timeout);
        if (!hello) {
            // A child that answered hello with an {"error"} is still up: it will not get better.
            if (m_pid >= 0)
                stop_child(false);
            return hello.error();
        }
        const auto version = hello->find("protocol");
        if (version == hello->end() || !version->is_number_integer() ||
            version->get<std::int64_t>() != k_protocol_version) {
            stop_child(false);
            const std::string spoken =
                version == hello->end() ? "no protocol version" : "protocol " + version->dump();
            return failure(ErrorKind::protocol, "the adapter speaks " + spoken +
                                                    "; memfail speaks " +
                                                    std::to_string(k_protocol_version));
        }
        m_hello = std::move(hello).value();
        m_ready = true;
        return {};
    }

    // Stops the child: politely (stdin closed, a moment to exit) when `graceful`, then SIGTERM and
    // SIGKILL to its whole process group. Always reaps it, so no zombie is left behind.
    void stop_child(bool graceful) {
        if (m_pid < 0)
            return;
        close_fd(m_in);
        if (!(graceful && wait_exit(k_exit_grace))) {
            ::kill(-m_pid, SIGTERM);
            (void)wait_exit(k_term_grace);
        }
        // SIGKILL whatever is left: the leader if it ignored SIGTERM, and anything it left running
        // in its group. The unreaped leader keeps the group id from being reused until waitpid
        // below.
        ::kill(-m_pid, SIGKILL);
        int status = 0;
        while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
        }
        m_pid = -1;
        m_ready = false;
        m_stderr.reset(); // forwards what the child wrote last, then joins
        close_fd(m_out);
        m_buffer.clear();
        m_scanned = 0;
    }

    // Waits up to `limit` for the child to exit, without reaping it. True once it has exited.
    bool wait_exit(milliseconds limit, siginfo_t* info_out = nullptr) {
        const auto deadline = Clock::now() + limit;
        milliseconds nap{1};
        for (;;) {
            siginfo_t info{};
            const int rc =
                ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);
            if (rc == 0 && info.si_pid != 0) {
                if (info_out)
                    *info_out = info;
                return true;
            }
            if (rc < 0 && errno != EINTR)
                return true; // not our child any more: nothing to wait for
            if (Clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(nap);
            nap = std::min(nap * 2, milliseconds(20));
        }
    }

    // The error for a child whose stdout ended: its exit status when it has one.
    Error ended(std::string_view op) {
        siginfo_t info{};
        if (wait_exit(k_exit_status_wait, &info))
            return failure(ErrorKind::io,
                           "the adapter " + exit_text(info) + " during " + std::string(op));
        return failure(ErrorKind::io, "the adapter closed its stdout during " + std::string(op));
    }

    static int poll_ms(Clock::time_point deadline) {
        const auto left =
            std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count() + 1;
        return static_cast<int>(std::clamp<std::int64_t>(left, 0, 60'000));
    }

    Error timed_out(std::string_view op, milliseconds limit) {
        return failure(ErrorKind::timeout,
                       "the adapter did not answer " + std::string(op) + " within " +
                           duration_text(limit) +
                           "; it was stopped and starts again on the next call");
    }

    Result<void> write_request(const std::string& line, std::string_view op,
                               Clock::time_point deadline, milliseconds limit) {
        SigpipeGuard guard;
        std::string_view rest = line;
        while (!rest.empty()) {
            const ssize_t n = ::write(m_in, rest.data(), rest.size());
            if (n > 0) {
                rest.remove_prefix(static_cast<std::size_t>(n));
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                // The adapter is not reading its stdin; wait, but never past the deadline.
                pollfd p{m_in, POLLOUT, 0};
                const int timeout = poll_ms(deadline);
                if (timeout == 0)
                    return timed_out(op, limit);
                if (::poll(&p, 1, timeout) < 0 && errno != EINTR)
                    return failure(ErrorKind::io,
                                   std::string("cannot wait for the adapter's stdin: ") +
                                       std::strerror(errno));
                continue;
            }
            if (n < 0 && errno == EPIPE) {
                guard.raised();
                return ended(op);
            }
            return failure(ErrorKind::io,
                           std::string("cannot write to the adapter: ") + std::strerror(errno));
        }
        return {};
    }

    // The next line of stdout (without its newline), reading as much as arrives until the deadline.
    Result<std::string> read_line(std::string_view op, Clock::time_point deadline,
                                  milliseconds limit) {
        for (;;) {
            const std::size_t newline = m_buffer.find('\n', m_scanned);
            if (newline != std::string::npos) {
                std::string line = m_buffer.substr(0, newline);
                m_buffer.erase(0, newline + 1);
                m_scanned = 0;
                return line;
            }
            m_scanned = m_buffer.size();
            if (m_buffer.size() > k_max_line)
                return failure(ErrorKind::protocol, "the adapter printed a line longer than " +
                                                        std::to_string(k_max_line >> 20) +
                                                        " MiB during " + std::string(op));
            const int timeout = poll_ms(deadline);
            if (timeout == 0)
                return timed_out(op, limit);
            pollfd p{m_out, POLLIN, 0};
            const int ready = ::poll(&p, 1, timeout);
            if (ready < 0 && errno != EINTR)
                return failure(ErrorKind::io,
                               std::string("cannot wait for the adapter's stdout: ") +
                                   std::strerror(errno));
            if (ready <= 0)
                continue;
            char chunk[65536];
            const ssize_t n = ::read(m_out, chunk, sizeof chunk);
            if (n > 0)
                m_buffer.append(chunk, static_cast<std::size_t>(n));
            else if (n == 0)
                return ended(op);
            else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
                return failure(ErrorKind::io, std::string("cannot read from the adapter: ") +
                                                  std::strerror(errno));
        }
    }

    // One request and its response. Errors that leave the stream in doubt stop the child; an
    // {"error"} answer or a malformed result does not.
    Result<json> exchange(std::string_view op, const json& params, milliseconds limit) {
        const std::uint64_t id = m_next_id++;
        const json request{{"id", id}, {"op", op}, {"params", params}};
        // Invalid UTF-8 in a dataset must not throw here; it travels as U+FFFD.
        const std::string line =
            request.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
        const auto deadline = Clock::now() + limit;
        if (auto written = write_request(line, op, deadline, limit); !written)
            return broken(written.error());

        std::string answer;
        do {
            auto next = read_line(op, deadline, limit);
            if (!next)
                return broken(next.error());
            answer = std::move(next).value();
            if (!answer.empty() && answer.back() == '\r')
                answer.pop_back();
        } while (answer.find_first_not_of(" \t") ==
                 std::string::npos); // blank lines are not answers

        ReplyJson reply = ReplyJson::parse(answer);
        json& response = reply.value;
        if (response.is_discarded())
            return broken(failure(ErrorKind::protocol,
                                  "the adapter printed a line that is not JSON during " +
                                      std::string(op) +
                                      " (print logs to stderr, not stdout): " + excerpt(answer)));
        if (!response.is_object())
            return broken(failure(ErrorKind::protocol,
                                  "the adapter printed a JSON line that is not an object during " +
                                      std::string(op) + ": " + excerpt(answer)));
        const auto got = response.find("id");
        if (got == response.end() || !got->is_number_unsigned() || got->get<std::uint64_t>() != id)
            return broken(
                failure(ErrorKind::protocol,
                        "the adapter answered request id " + std::to_string(id) + " (" +
                            std::string(op) + ") with " +
                            (got == response.end() ? std::string("no id") : "id " + got->dump())));
        // The answer was one whole line, so the stream is still in step: text that is not UTF-8
        // fails this call only, and the adapter keeps running (and keeps what it holds).
        if (const auto error = response.find("error"); error != response.end() && !error->is_null()) {
            if (auto bad = reply.invalid_utf8(*error, describe() + ": " + std::string(op), "error"))
                return *bad;
            return error_from_json(response, describe());
        }
        const auto result = response.find("result");
        if (result == response.end())
            return broken(
                failure(ErrorKind::protocol, "the adapter answered " + std::string(op) +
                                                 " with neither \"result\" nor \"error\""));
        if (!result->is_object())
            return failure(ErrorKind::protocol, "the adapter answered " + std::string(op) +
                                                    " with a \"result\" that is " +
                                                    std::string(result->type_name()) +
                                                    ", not an object");
        if (auto bad = reply.invalid_utf8(*result, describe() + ": " + std::string(op)))
            return *bad;
        return std::move(*result);
    }

    ExecOptions m_options;
    pid_t m_pid = -1;
    int m_in = -1;  // the child's stdin
    int m_out = -1; // the child's stdout
    std::unique_ptr<StderrForwarder> m_stderr;
    std::string m_buffer;      // stdout read but not yet returned as lines
    std::size_t m_scanned = 0; // m_buffer holds no newline before this offset
    std::uint64_t m_next_id = 1;
    bool m_ready = false; // the current child answered hello
    json m_hello;
    std::uint64_t m_restarts = 0;
    std::uint64_t m_announced_restarts = 0;
};

} // namespace

Result<std::unique_ptr<Transport>> make_exec_transport(const Spec& spec) {
    MF_TRY(spec.check_keys({"cmd", "cwd", "timeout", "startup_timeout"}));
    ExecOptions options;
    options.cmd = spec.get("cmd", "");
    if (options.cmd.empty())
        return make_error(ErrorKind::invalid_input, "'exec' needs the command that starts the "
                                                    "adapter, e.g. exec:cmd=python3 my_adapter.py");
    MF_TRY_ASSIGN(options.argv, split_command(options.cmd));
    options.cwd = spec.get("cwd", "");
    MF_TRY_ASSIGN(options.timeout, spec.get_duration("timeout", options.timeout));
    MF_TRY_ASSIGN(options.startup_timeout,
                  spec.get_duration("startup_timeout", options.startup_timeout));
    return std::unique_ptr<Transport>(std::make_unique<ExecTransport>(std::move(options)));
}

} // namespace memfail::memory::adapter

#include "collsim/engines/simgrid.hpp"

#include "simulation.hpp"

#include "collsim/core/errors.hpp"

// version.h uses SG_BEGIN_DECL and XBT_PUBLIC without including their definitions.
#include <xbt/base.h>

#include <simgrid/version.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace collsim::engines {
namespace {

// --- the result, as bytes through a pipe ------------------------------------------------------
// One process wrote it and a fork of the same binary reads it, so values travel in their memory
// representation. A leading byte says what follows: 'R' a result, 'E' an error message.

class Writer {
public:
  template <class T>
  void put(const T& v) {
    buf_.append(reinterpret_cast<const char*>(&v), sizeof(T)); // NOLINT
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    put<std::uint64_t>(v.size());
    if (!v.empty()) {
      buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)); // NOLINT
    }
  }
  std::string buf_;
};

class Reader {
public:
  explicit Reader(const std::string& b) : buf_(b) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, buf_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n > 0) { // memcpy to an empty vector's null data() is undefined, even of 0 bytes (UBSan)
      std::memcpy(v.data(), buf_.data() + pos_, n * sizeof(T));
    }
    pos_ += n * sizeof(T);
    return v;
  }

private:
  void need(std::size_t n) const {
    if (pos_ + n > buf_.size()) {
      throw core::EngineError("simgrid: the engine's child process sent a truncated result");
    }
  }
  const std::string& buf_;
  std::size_t pos_ = 0;
};

std::string encode(const core::RunResult& r) {
  Writer w;
  w.put('R');
  w.put(r.time.value);
  w.put(r.operations);
  w.put(r.messages);
  w.put(r.bytes_sent);
  w.put_vector(r.rank_finish);
  w.put_vector(r.timeline);
  w.put_vector(r.message_timeline);
  return std::move(w.buf_);
}

core::RunResult decode(const std::string& bytes) {
  Reader rd(bytes);
  (void)rd.get<char>();
  core::RunResult r;
  r.time = core::Seconds{rd.get<double>()};
  r.operations = rd.get<std::uint64_t>();
  r.messages = rd.get<std::uint64_t>();
  r.bytes_sent = rd.get<std::uint64_t>();
  r.rank_finish = rd.get_vector<core::Seconds>();
  r.timeline = rd.get_vector<core::OpTiming>();
  r.message_timeline = rd.get_vector<core::MessageTiming>();
  return r;
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

/// In the child: run, send the result or the error, and leave without running the parent's exit
/// handlers or flushing its stdio buffers.
[[noreturn]] void child(int result_fd, int err_fd, const core::Schedule& s, const core::Topology& t,
                        const core::RunOptions& o, const core::SimgridSpec& settings) {
  ::dup2(err_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  if (result_fd != 3) {
    ::dup2(result_fd, 3);
  }
  // Pipes of sibling runs (other threads of a sweep) must not stay open in this child, or their
  // readers would wait for this process to end.
  ::close_range(4, ~0U, 0);
  // The parent's crash handlers (a test framework's, say) are not this process's business.
  for (const int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    std::signal(sig, SIG_DFL);
  }
  // A thread of the parent may have held stdout's or stderr's stdio lock at the fork (a sweep's
  // progress line): fresh streams on the same descriptors keep SimGrid's messages from waiting
  // for a lock nobody will release.
  if (FILE* err = ::fdopen(STDERR_FILENO, "w"); err != nullptr) {
    stderr = err;
    std::setvbuf(stderr, nullptr, _IONBF, 0);
  }
  if (FILE* out = ::fdopen(STDOUT_FILENO, "w"); out != nullptr) {
    stdout = out;
  }
  int code = 0;
  try {
    write_all(3, encode(detail::simulate(s, t, o, settings)));
  } catch (const std::exception& e) {
    write_all(3, std::string("E") + e.what());
    code = 1;
  } catch (...) {
    write_all(3, "Esimgrid: unknown failure");
    code = 1;
  }
  ::_exit(code);
}

/// The last few lines of what the child printed (SimGrid's own error messages).
/// The last `lines` lines of what the child printed, without SimGrid's backtraces (an xbt_assert
/// prints its message, then "Backtrace (displayed in actor ...):" and one "  ->  N# frame" line per
/// frame, which would otherwise crowd the message out).
std::string tail_lines(const std::string& text, std::size_t lines) {
  std::vector<std::string_view> kept;
  std::string_view rest(text);
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string_view::npos || line.substr(first).starts_with("->") ||
        line.substr(first).starts_with("Backtrace")) {
      continue;
    }
    kept.push_back(line);
  }
  std::string out;
  for (std::size_t i = kept.size() > lines ? kept.size() - lines : 0; i < kept.size(); ++i) {
    out += out.empty() ? "" : "\n";
    out += kept[i];
  }
  return out;
}

} // namespace

core::RunResult SimgridEngine::run(const core::Schedule& schedule, const core::Topology& topology,
                                   const core::RunOptions& options) const {
  if (schedule.header().collapse.active()) {
    // Flows share links: one representative per class cannot stand for the others' traffic.
    throw core::InternalError("simgrid: collapsed schedules run on the loggp engine only");
  }
  detail::precheck(schedule, topology); // clear errors without a child process
  // The child's memory counts against the sweep point's budget while it runs (it cannot report
  // it itself: it is another process).
  core::MeterLease child_memory(schedule.header().meter);
  child_memory.hold(detail::memory_estimate(schedule, options));
  std::array<int, 2> result_pipe{};
  std::array<int, 2> err_pipe{};
  if (::pipe2(result_pipe.data(), O_CLOEXEC) != 0 || ::pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    throw core::EngineError(fmt::format("simgrid: cannot create a pipe: {}", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    throw core::EngineError(fmt::format("simgrid: cannot fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(result_pipe[0]);
    ::close(err_pipe[0]);
    child(result_pipe[1], err_pipe[1], schedule, topology, options, settings_);
  }
  ::close(result_pipe[1]);
  ::close(err_pipe[1]);
  std::string result;
  std::string err;
  std::array<pollfd, 2> fds{pollfd{result_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result, &err};
  std::array<char, 65536> chunk{};
  int open = 2;
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      const ssize_t n = ::read(fds[i].fd, chunk.data(), chunk.size());
      if (n > 0) {
        if (sinks[i] == &err && err.size() > (1U << 20)) {
          continue; // keep at most 1 MiB of chatter
        }
        sinks[i]->append(chunk.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.empty() && result[0] == 'R' && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    core::RunResult r = decode(result);
    if (options.link_loads) {
      r.link_loads = core::link_loads(schedule, topology, r.message_timeline);
    }
    if (!options.messages && !options.link_loads) {
      r.message_timeline.clear();
    }
    return r;
  }
  if (!result.empty() && result[0] == 'E') {
    throw core::EngineError(result.substr(1));
  }
  std::string how;
  if (WIFSIGNALED(status)) {
    how = fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                      ::strsignal(WTERMSIG(status)));
  } else {
    how = fmt::format("exited with status {}", WEXITSTATUS(status));
  }
  const std::string said = tail_lines(err, 5);
  throw core::EngineError(fmt::format("simgrid: the SimGrid run {} without a result{}{}", how,
                                      said.empty() ? "" : "; it said:\n", said));
}

std::string simgrid_version() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  sg_version_get(&major, &minor, &patch);
  return patch != 0 ? fmt::format("{}.{}.{}", major, minor, patch)
                    : fmt::format("{}.{}", major, minor);
}

std::vector<std::string> simgrid_config(const core::SimgridSpec& s) {
  std::vector<std::string> out;
  out.push_back("network/model:" + s.network_model);
  // SimGrid bounds a flow by gamma / (2 latency); "no bound" is a window no route can fill.
  out.push_back(fmt::format("network/TCP-gamma:{:g}", s.tcp_gamma > 0.0 ? s.tcp_gamma : 1e30));
  out.push_back(fmt::format("network/crosstraffic:{}", s.crosstraffic ? 1 : 0));
  // SimGrid's default time precision is 10 us (1e-5 s), coarser than an NVLink hop; smpirun sets
  // 1 ns, and so do we.
  out.push_back("surf/precision:1e-9");
  if (s.latency_factor) {
    out.push_back(fmt::format("network/latency-factor:{:g}", *s.latency_factor));
  }
  if (s.bandwidth_factor) {
    out.push_back(fmt::format("network/bandwidth-factor:{:g}", *s.bandwidth_factor));
  }
  if (s.weight_s) {
    out.push_back(fmt::format("network/weight-S:{:g}", *s.weight_s));
  }
  return out;
}

} // namespace collsim::engines

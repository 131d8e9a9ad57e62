// The sweep across an MPI job: rank 0 hands out points on demand (dynamic distribution, so that a
// slow point does not hold a statically assigned share back), then broadcasts all results.
//
// Messages (MPI_COMM_WORLD; collsim makes no other MPI calls while a sweep runs):
//   worker -> 0, kAsk:    [u8 kind: 0 first ask, 1 result, 2 failure][u64 point][payload]
//                         (a result or a failure is also the ask for the next point)
//   0 -> worker, kAssign: [u64 point], or kStop: no more points for this worker thread
// then one broadcast from rank 0: [u8 ok] and either every point's result, each as [u64 length]
// [bytes], or the failure [u8 input error][message].

#include "mpi_executor.hpp"

#include "collsim/analysis/memory_gate.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <mpi.h>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

namespace collsim::distributed::detail {
namespace {

constexpr int kAskTag = 7101;
constexpr int kAssignTag = 7102;
constexpr std::uint64_t kStop = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint8_t kFirstAsk = 0;
constexpr std::uint8_t kResult = 1;
constexpr std::uint8_t kFailure = 2;
/// How long an idle main thread sleeps between polls: short next to any point, and it leaves
/// the core to the worker threads (a blocking MPI receive spins).
constexpr auto kPoll = std::chrono::microseconds(200);
/// Asks a rank keeps outstanding per worker thread: one point queued behind the one computing,
/// so that a worker never waits for rank 0's answer (up to a poll interval) between points.
constexpr unsigned kAhead = 2;

void put_u64(std::string& out, std::uint64_t v) {
  char raw[sizeof v];
  std::memcpy(raw, &v, sizeof v);
  out.append(raw, sizeof v);
}

std::uint64_t get_u64(const std::string& in, std::size_t at) {
  if (at + sizeof(std::uint64_t) > in.size()) {
    throw core::Error("a distributed sweep message is truncated");
  }
  std::uint64_t v = 0;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

void send(const std::string& bytes, int to, int tag) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

/// The message that MPI_Iprobe found (status), received whole.
std::string receive(MPI_Status status) {
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string bytes(static_cast<std::size_t>(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return bytes;
}

/// Rank 0's bytes to every rank, in pieces that fit MPI's int counts.
void broadcast(std::string& bytes) {
  std::uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(size);
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
  for (std::uint64_t at = 0; at < size; at += kPiece) {
    const auto n = static_cast<int>(std::min(kPiece, size - at));
    MPI_Bcast(bytes.data() + at, n, MPI_BYTE, 0, MPI_COMM_WORLD);
  }
}

/// A failed point as the job reports it: the error's own text, whether it was bad input.
struct Failure {
  std::string message;
  bool input_error = false;
};

/// What the current exception says, as main() would print it (without "collsim: error: ").
Failure current_failure() {
  try {
    throw;
  } catch (const core::Error& e) {
    return {e.what(), e.is_input_error()};
  } catch (const std::bad_alloc&) {
    return {"out of memory (try fewer ranks or a smaller size)", false};
  } catch (const std::exception& e) {
    return {fmt::format("internal error: {}", e.what()), false};
  }
}

std::string describe(const analysis::SweepItems& items, std::size_t i) {
  return items.describe ? items.describe(i) : fmt::format("point {}", i);
}

} // namespace

void MpiExecutor::run(const analysis::SweepItems& items) const {
  if (rank_ == 0) {
    lead(items);
  } else {
    follow(items);
  }
}

void MpiExecutor::lead(const analysis::SweepItems& items) const {
  const std::size_t n = items.count;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::atomic<bool> failed{false};
  std::mutex failure_lock;
  std::optional<Failure> failure; // the first, with its point and rank in the message
  const auto fail = [&](Failure f, std::size_t point, int rank) {
    const std::lock_guard lock(failure_lock);
    if (!failure) {
      f.message = fmt::format("{} (MPI rank {}): {}", describe(items, point), rank, f.message);
      failure = std::move(f);
    }
    failed = true;
  };
  const auto finish_one = [&] {
    const std::size_t count = finished.fetch_add(1) + 1;
    if (items.done) {
      items.done(count);
    }
  };
  // Rank 0's own worker threads take points from the same counter as the other ranks' asks.
  analysis::MemoryGate gate(memory_budget_);
  std::vector<std::jthread> workers;
  for (unsigned t = 0; t < threads_; ++t) {
    workers.emplace_back([&] {
      while (!failed) {
        const std::size_t i = next.fetch_add(1);
        if (i >= n) {
          return;
        }
        try {
          gate.run(i, items.run);
        } catch (...) {
          fail(current_failure(), i, 0);
          return;
        }
        finish_one();
      }
    });
  }
  std::vector<std::string> remote(n);
  std::vector<bool> ran_remotely(n, false);
  const std::size_t asking = static_cast<std::size_t>(size_ - 1) * threads_ * kAhead;
  std::size_t stopped = 0;
  while (stopped < asking) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kAskTag, MPI_COMM_WORLD, &flag, &status);
    if (flag == 0) {
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    const std::string ask = receive(status);
    const auto kind = ask.empty() ? kFirstAsk : static_cast<std::uint8_t>(ask[0]);
    if (kind == kResult || kind == kFailure) {
      const std::uint64_t point = get_u64(ask, 1);
      if (point >= n) {
        throw core::Error("a distributed sweep result names a point the sweep does not have");
      }
      if (kind == kResult) {
        remote[point] = ask.substr(1 + sizeof(std::uint64_t));
        ran_remotely[point] = true;
        finish_one();
      } else {
        const bool input = ask.size() > 9 && ask[9] != 0;
        fail({ask.size() > 10 ? ask.substr(10) : std::string(), input}, point, status.MPI_SOURCE);
      }
    }
    std::uint64_t reply = kStop;
    if (!failed) {
      const std::size_t i = next.fetch_add(1);
      reply = i < n ? i : kStop;
    }
    stopped += reply == kStop ? 1 : 0;
    std::string bytes;
    put_u64(bytes, reply);
    send(bytes, status.MPI_SOURCE, kAssignTag);
  }
  workers.clear(); // joins rank 0's own workers

  std::string all;
  if (failure) {
    all.push_back(0);
    all.push_back(failure->input_error ? 1 : 0);
    all += failure->message;
  } else {
    all.push_back(1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::string bytes = ran_remotely[i] ? remote[i] : items.save(i);
      put_u64(all, bytes.size());
      all += bytes;
    }
  }
  broadcast(all);
  if (failure) {
    throw PointFailed(failure->message, failure->input_error);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (ran_remotely[i]) {
      items.load(i, remote[i]);
    }
  }
}

void MpiExecutor::follow(const analysis::SweepItems& items) const {
  std::mutex lock;
  std::condition_variable ready;
  std::deque<std::uint64_t> assigned; // points (or kStop) for the worker threads
  std::deque<std::string> outbox;     // results and failures for rank 0
  std::vector<bool> ran_here(items.count, false);
  analysis::MemoryGate gate(memory_budget_);
  std::vector<std::jthread> workers;
  for (unsigned t = 0; t < threads_; ++t) {
    workers.emplace_back([&] {
      while (true) {
        std::uint64_t point = kStop;
        {
          std::unique_lock hold(lock);
          ready.wait(hold, [&] { return !assigned.empty(); });
          point = assigned.front();
          assigned.pop_front();
        }
        if (point == kStop) {
          return;
        }
        std::string message;
        try {
          gate.run(point, items.run);
          message.push_back(static_cast<char>(kResult));
          put_u64(message, point);
          message += items.save(point);
        } catch (...) {
          const Failure f = current_failure();
          message.assign(1, static_cast<char>(kFailure));
          put_u64(message, point);
          message.push_back(f.input_error ? 1 : 0);
          message += f.message;
        }
        const std::lock_guard hold(lock);
        ran_here[point] = true;
        outbox.push_back(std::move(message));
      }
    });
  }
  for (unsigned t = 0; t < threads_ * kAhead; ++t) {
    send(std::string(1, static_cast<char>(kFirstAsk)), 0, kAskTag);
  }
  // Points arrive in the order rank 0 sent them (MPI does not overtake), so every point is queued
  // before the first stop; a worker thread ends at the first stop it takes.
  unsigned stopped = 0;
  while (stopped < threads_ * kAhead) {
    bool busy = false;
    std::deque<std::string> sending;
    {
      const std::lock_guard hold(lock);
      sending.swap(outbox);
    }
    for (const std::string& m : sending) {
      send(m, 0, kAskTag);
      busy = true;
    }
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(0, kAssignTag, MPI_COMM_WORLD, &flag, &status);
    if (flag != 0) {
      const std::uint64_t point = get_u64(receive(status), 0);
      if (point != kStop && point >= items.count) {
        throw core::Error("a distributed sweep assignment names a point the sweep does not have");
      }
      stopped += point == kStop ? 1 : 0;
      {
        const std::lock_guard hold(lock);
        assigned.push_back(point);
      }
      ready.notify_one();
      busy = true;
    }
    if (!busy) {
      std::this_thread::sleep_for(kPoll);
    }
  }
  workers.clear();

  std::string all;
  broadcast(all);
  if (all.empty()) {
    throw core::Error("a distributed sweep ended without its results");
  }
  if (all[0] == 0) {
    throw PointFailed(all.substr(2), all.size() > 1 && all[1] != 0);
  }
  std::size_t at = 1;
  for (std::size_t i = 0; i < items.count; ++i) {
    const std::uint64_t size = get_u64(all, at);
    at += sizeof(std::uint64_t);
    if (size > all.size() - at) {
      throw core::Error("a distributed sweep's results are truncated");
    }
    if (!ran_here[i]) {
      items.load(i, std::string_view(all).substr(at, size));
    }
    at += size;
  }
}

} // namespace collsim::distributed::detail

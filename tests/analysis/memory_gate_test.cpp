// Memory-aware scheduling of sweep points (analysis/memory_gate.hpp, core/memory_meter.hpp):
// points run side by side only while what they hold fits the budget; a point that outgrows it
// beside others gives its memory back and runs again; a point bigger than the budget runs alone;
// schedules and engines report what they hold; a sweep under any budget prints what it prints
// without one.

#include "collsim/analysis/executor.hpp"
#include "collsim/analysis/memory_gate.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/memory_meter.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace collsim;

namespace {

/// Runs points 0 .. n-1 through `gate` on `threads` threads, each thread taking the next point.
void run_on_threads(analysis::MemoryGate& gate, std::size_t n, unsigned threads,
                    const std::function<void(std::size_t, core::MeterRef)>& body) {
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < n; i = next++) {
        gate.run(i, body);
      }
    });
  }
}

/// A point that grows to `steps` x `step` bytes, a step at a time, and counts how many points
/// run its body at once. Worker threads only count (Catch2's assertions are not thread-safe); the
/// test checks the counts.
struct Growing {
  std::uint64_t step = 10;
  int steps = 6;
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> bodies{0};
  std::atomic<int> unmetered{0};
  std::vector<std::atomic<int>> finished;
  explicit Growing(std::size_t points) : finished(points) {}
  void operator()(std::size_t i, core::MeterRef meter) {
    if (meter.get() == nullptr) {
      ++unmetered;
      return;
    }
    ++bodies;
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    struct Leave {
      std::atomic<int>& r;
      ~Leave() { --r; }
    } leave{running};
    core::MeterLease lease(meter);
    for (int k = 1; k <= steps; ++k) {
      lease.hold(step * static_cast<std::uint64_t>(k));
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ++finished[i];
  }
};

/// A meter that records what it was charged.
class Recording final : public core::MemoryMeter {
public:
  void charge(std::uint64_t bytes) override {
    held += bytes;
    most = std::max(most, held);
  }
  void credit(std::uint64_t bytes) noexcept override { held -= bytes; }
  std::uint64_t held = 0;
  std::uint64_t most = 0;
};

} // namespace

TEST_CASE("points that do not fit side by side give way and all finish within the budget",
          "[analysis][memory]") {
  // Eight points of 60 bytes each on four threads, 100 bytes for all: at most one point's whole
  // growth fits beside another's start.
  analysis::MemoryGate gate(100);
  Growing points(8);
  run_on_threads(gate, 8, 4, std::ref(points));
  CHECK(points.unmetered == 0);
  for (const auto& f : points.finished) {
    CHECK(f == 1); // every point finished once, whatever it retried
  }
  CHECK(gate.peak() <= 100);
  CHECK(gate.peak() >= 60);
  CHECK(gate.retries() > 0);
  CHECK(points.bodies == 8 + static_cast<int>(gate.retries()));
}

TEST_CASE("a point bigger than the budget runs alone", "[analysis][memory]") {
  analysis::MemoryGate gate(100);
  Growing points(4);
  points.step = 25; // 150 bytes a point
  run_on_threads(gate, 4, 3, std::ref(points));
  CHECK(points.unmetered == 0);
  for (const auto& f : points.finished) {
    CHECK(f == 1);
  }
  // Only a point alone may pass the budget, and then nothing else holds memory.
  CHECK(gate.peak() == 150);
}

TEST_CASE("without a budget points run side by side unmetered", "[analysis][memory]") {
  analysis::MemoryGate gate(0);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> metered{0};
  run_on_threads(gate, 4, 4, [&](std::size_t, core::MeterRef meter) {
    metered += meter.get() != nullptr ? 1 : 0;
    const int now = ++running;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
  });
  CHECK(metered == 0);
  CHECK(most >= 2);
  CHECK(gate.peak() == 0);
}

TEST_CASE("a point's error reaches the caller and the gate goes on", "[analysis][memory]") {
  analysis::MemoryGate gate(100);
  CHECK_THROWS_AS(gate.run(0,
                           [](std::size_t, core::MeterRef meter) {
                             core::MeterLease lease(meter);
                             lease.hold(50);
                             throw core::UsageError("bad point");
                           }),
                  core::UsageError);
  Growing points(1);
  gate.run(0, std::ref(points));
  CHECK(points.finished[0] == 1);
  CHECK(gate.peak() == 60);
}

TEST_CASE("a schedule reports its arrays before they grow and gives them back",
          "[analysis][memory]") {
  Recording meter;
  {
    core::ScheduleHeader h;
    h.ranks = 2;
    h.bytes = core::Bytes{8};
    h.data_bytes = 8;
    h.meter = core::MeterRef(&meter);
    core::Schedule s(h);
    for (core::Rank r = 0; r < 2; ++r) {
      s.begin_rank(r);
      for (int k = 0; k < 5000; ++k) {
        const std::uint32_t a = s.send(1 - r, {core::Buffer::data, 0, 8});
        const std::uint32_t b = s.recv(1 - r, {core::Buffer::data, 0, 8}, {a});
        (void)s.copy({core::Buffer::data, 0, 8}, {core::Buffer::data, 0, 8}, {a, b});
      }
    }
    s.finish();
    CHECK(meter.held == s.memory_bytes());
    // Before each reallocation the old and the new buffers both counted.
    CHECK(meter.most > s.memory_bytes());
    CHECK(s.op_count() == 30000);
    // A copy holds nothing until it reports itself; then both count.
    core::Schedule copy = s;
    CHECK(meter.held == s.memory_bytes());
    copy.set_meter(core::MeterRef(&meter));
    CHECK(meter.held == s.memory_bytes() + copy.memory_bytes());
    // The meter is not part of the schedule's value.
    core::ScheduleHeader plain = h;
    plain.meter = {};
    CHECK(plain == h);
    CHECK(copy == s);
  }
  CHECK(meter.held == 0);
}

TEST_CASE("the loggp engine reports its state per operation while it runs", "[analysis][memory]") {
  const core::Topology topo = topologies::build_uniform({}, {}, 16);
  const auto registry = algorithms::make_default_registry();
  Recording meter;
  algorithms::Request req;
  req.ranks = 16;
  req.bytes = core::Bytes{1 << 20};
  req.topology = &topo;
  req.meter = core::MeterRef(&meter);
  const core::Schedule s = registry.generate(registry.find(req.collective, "ring"), req);
  const std::uint64_t schedule = meter.held;
  CHECK(schedule == s.memory_bytes());
  meter.most = 0;
  (void)engines::LogGPEngine().run(s, topo, {});
  CHECK(meter.most >= schedule + 16 * s.op_count());
  CHECK(meter.held == schedule);
}

TEST_CASE("a sweep under a tiny memory budget prints what it prints without one",
          "[analysis][memory]") {
  core::Scenario scenario =
      io::load_scenario(std::string(COLLSIM_SOURCE_DIR) + "/scenarios/dgx-a100.yaml");
  core::StudySpec study;
  study.collective = core::CollectiveKind::allreduce;
  study.algorithms = {"ring", "rabenseifner", "nccl_ring", "auto"};
  study.ranks = {4, 16};
  study.sizes = {core::Bytes{8}, core::Bytes{65536}, core::Bytes{4 << 20}};
  const auto registry = algorithms::make_default_registry();
  for (const char* engine : {"loggp", "simgrid"}) {
    study.engine = engine;
    if (std::string(engine) == "simgrid") {
      study.sizes = {core::Bytes{65536}};
    }
    const analysis::ThreadExecutor free(2, 0);
    const analysis::ThreadExecutor tight(2, 1); // every point alone
    const auto a = analysis::run_study(scenario, study, registry, {}, 2, false, &free);
    const auto b = analysis::run_study(scenario, study, registry, {}, 2, false, &tight);
    REQUIRE(a.rows.size() == b.rows.size());
    REQUIRE(!a.rows.empty());
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      INFO(engine << " " << a.rows[i].algorithm << " " << a.rows[i].ranks << " "
                  << a.rows[i].bytes.value);
      CHECK(a.rows[i].algorithm == b.rows[i].algorithm);
      CHECK(a.rows[i].params == b.rows[i].params);
      CHECK(a.rows[i].time.value == b.rows[i].time.value);
    }
  }
}

TEST_CASE("the memory available is read from the kernel", "[analysis][memory]") {
  // MemAvailable on any Linux since 3.14; a cgroup limit can only lower it.
  CHECK(analysis::available_memory() > 0);
}

#include "collsim/core/errors.hpp"
#include "collsim/engines/loggp.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::Bandwidth;
using core::Buffer;
using core::Seconds;

namespace {

core::Topology mesh(std::uint32_t ranks, double latency = 2e-6, double bw = 10e9,
                    core::EndpointParams ep = {}) {
  return core::Topology::full_mesh(ranks, Bandwidth{bw}, Seconds{latency}, ep);
}

core::Schedule header_only(core::CollectiveKind c, std::uint32_t ranks, std::uint64_t n,
                           std::uint64_t data) {
  core::ScheduleHeader h;
  h.collective = c;
  h.ranks = ranks;
  h.bytes = core::Bytes{n};
  h.data_bytes = data;
  h.tmp_bytes = data;
  return core::Schedule(h);
}

double run_time(const core::Schedule& s, const core::Topology& t) {
  return engines::LogGPEngine{}.run(s, t, {}).time.value;
}

} // namespace

TEST_CASE("one message costs 2o + L + m*G", "[engines][loggp]") {
  auto s = header_only(core::CollectiveKind::bcast, 2, 1000, 1000);
  s.begin_rank(0);
  s.send(1, {Buffer::data, 0, 1000});
  s.begin_rank(1);
  s.recv(0, {Buffer::data, 0, 1000});
  s.finish();
  core::EndpointParams ep;
  ep.overhead = Seconds{0.5e-6};
  const auto res = engines::LogGPEngine{}.run(s, mesh(2, 2e-6, 1e9, ep), {});
  CHECK(res.time.value == Approx(2 * 0.5e-6 + 2e-6 + 1000 / 1e9).epsilon(1e-12));
  CHECK(res.messages == 1);
  CHECK(res.bytes_sent == 1000);
  CHECK(res.rank_finish[0].value == Approx(0.5e-6 + 1e-6).epsilon(1e-12));
}

TEST_CASE("a rank receives one message at a time: 4-to-1 incast serialises at the receiver",
          "[engines][loggp]") {
  const std::uint64_t m = 1'000'000;
  auto s = header_only(core::CollectiveKind::gather, 5, 5 * m, 5 * m);
  s.begin_rank(0);
  for (core::Rank r = 1; r < 5; ++r) {
    s.recv(r, {Buffer::data, r * m, m});
  }
  for (core::Rank r = 1; r < 5; ++r) {
    s.begin_rank(r);
    s.send(0, {Buffer::data, r * m, m});
  }
  s.finish();
  // All four arrive at L; the receive port takes them one after another: L + 4 m G.
  CHECK(run_time(s, mesh(5, 2e-6, 1e9)) == Approx(2e-6 + 4 * m / 1e9).epsilon(1e-12));
}

TEST_CASE("a rank sends one message at a time and respects the gap g", "[engines][loggp]") {
  auto s = header_only(core::CollectiveKind::scatter, 3, 30, 30);
  s.begin_rank(0);
  s.send(1, {Buffer::data, 10, 10});
  s.send(2, {Buffer::data, 20, 10});
  s.begin_rank(1);
  s.recv(0, {Buffer::data, 10, 10});
  s.begin_rank(2);
  s.recv(0, {Buffer::data, 20, 10});
  s.finish();
  core::EndpointParams ep;
  ep.gap = Seconds{5e-6};
  // 10 bytes at 1 GB/s = 10 ns of injection; the second send waits for g = 5 us.
  const auto res = engines::LogGPEngine{}.run(s, mesh(3, 1e-6, 1e9, ep), {});
  CHECK(res.rank_finish[2].value == Approx(5e-6 + 10e-9 + 1e-6).epsilon(1e-12));
  CHECK(res.rank_finish[1].value == Approx(10e-9 + 1e-6).epsilon(1e-12));
}

TEST_CASE("receive-reduce and local ops are priced by the rank's reduce and copy bandwidth",
          "[engines][loggp]") {
  auto s = header_only(core::CollectiveKind::reduce, 2, 1000, 1000);
  s.begin_rank(0);
  const auto rx = s.recv_reduce(1, {Buffer::data, 0, 1000});
  s.copy({Buffer::data, 0, 1000}, {Buffer::tmp, 0, 1000}, {rx});
  s.begin_rank(1);
  s.send(0, {Buffer::data, 0, 1000});
  s.finish();
  core::EndpointParams ep;
  ep.reduce_bandwidth = Bandwidth{2e9};
  ep.copy_bandwidth = Bandwidth{4e9};
  const double expected = 1e-6 + 1000 / 1e9 + 1000 / 2e9 + 1000 / 4e9;
  CHECK(run_time(s, mesh(2, 1e-6, 1e9, ep)) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("the engine is deterministic and records a timeline on request", "[engines][loggp]") {
  auto s = header_only(core::CollectiveKind::allgather, 2, 8, 8);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, {Buffer::data, r * 4ULL, 4});
    s.recv(1 - r, {Buffer::data, (1 - r) * 4ULL, 4});
  }
  s.finish();
  core::RunOptions opt;
  opt.timeline = true;
  const auto a = engines::LogGPEngine{}.run(s, mesh(2), opt);
  const auto b = engines::LogGPEngine{}.run(s, mesh(2), opt);
  REQUIRE(a.timeline.size() == 4);
  CHECK(a.timeline == b.timeline);
  CHECK(a.timeline[1].end.value == Approx(2e-6 + 4 / 10e9).epsilon(1e-12));
}

TEST_CASE("a deadlocked schedule is an engine error, not a hang", "[engines][loggp]") {
  auto s = header_only(core::CollectiveKind::allreduce, 2, 8, 8);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const auto rx = s.recv(1 - r, {Buffer::tmp, 0, 8});
    s.send(1 - r, {Buffer::data, 0, 8}, {rx});
  }
  s.finish();
  CHECK_THROWS_AS(run_time(s, mesh(2)), core::EngineError);
}

TEST_CASE("streams issue independently: a waiting stream does not hold back another",
          "[engines][loggp][stream]") {
  // Rank 0: l0 receives from rank 1, l1 sends to rank 1 after l0, l2 (stream 1) sends to rank 1
  // at once. Rank 1 answers (l2) after its second receive, which matches rank 0's l2. One 8-byte
  // hop is L + 8/B; the chain l2 -> rank 1's answer -> rank 0's l1 is three hops.
  auto s = header_only(core::CollectiveKind::bcast, 2, 8, 16);
  s.begin_rank(0);
  s.recv(1, {Buffer::tmp, 0, 8});
  s.send(1, {Buffer::data, 0, 8}, {0});
  s.set_stream(1);
  s.send(1, {Buffer::data, 0, 8});
  s.begin_rank(1);
  s.recv(0, {Buffer::tmp, 0, 8});
  s.recv(0, {Buffer::tmp, 8, 8});
  s.send(0, {Buffer::data, 0, 8}, {1});
  s.finish();
  CHECK(run_time(s, mesh(2, 2e-6, 1e9)) == Approx(3 * (2e-6 + 8 / 1e9)).epsilon(1e-12));
}

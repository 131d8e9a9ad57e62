// The loggp engine's library-driven port model (core::Protocol): a port per link of the device
// (NCCL's channels drive NVLink and NICs at once), a per-stream rate (one channel's thread
// block), and a network transport's efficiency on messages between nodes.

#include "collsim/engines/loggp.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::Buffer;

namespace {

constexpr double kRate = 10e9;           // B/s per link
constexpr std::uint64_t kM = 10'000'000; // bytes per message: 1 ms on a link

core::Topology mesh(std::uint32_t ranks) {
  return core::Topology::full_mesh(ranks, core::Bandwidth{kRate}, core::Seconds{0.0}, {});
}

/// Rank 0 sends kM bytes to each of `to` (on stream i for the i-th), the receivers take them.
core::Schedule fan_out(std::uint32_t ranks, const std::vector<core::Rank>& to,
                       core::Protocol protocol) {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = ranks;
  h.bytes = core::Bytes{kM};
  h.data_bytes = kM;
  h.protocol = std::move(protocol);
  core::Schedule s(h);
  s.begin_rank(0);
  for (std::uint32_t i = 0; i < to.size(); ++i) {
    s.set_stream(i);
    s.send(to[i], {Buffer::data, 0, kM});
  }
  for (core::Rank r = 1; r < ranks; ++r) {
    s.begin_rank(r);
    for (std::uint32_t i = 0; i < to.size(); ++i) {
      if (to[i] == r) {
        s.set_stream(i);
        s.recv(0, {Buffer::data, 0, kM});
      }
    }
  }
  s.finish();
  return s;
}

double run(const core::Schedule& s, std::uint32_t ranks) {
  return engines::LogGPEngine{}.run(s, mesh(ranks), {}).time.value;
}

} // namespace

TEST_CASE("with a port per link, messages over different links overlap", "[engines][loggp]") {
  core::Protocol single;
  single.name = "Simple";
  core::Protocol per_link = single;
  per_link.port_per_link = true;
  const double t = static_cast<double>(kM) / kRate;
  // LogGP's single port: the second message leaves after the first.
  CHECK(run(fan_out(3, {1, 2}, single), 3) == Approx(2 * t));
  // A port per link (on a full mesh every peer has its own link): both leave at once.
  CHECK(run(fan_out(3, {1, 2}, per_link), 3) == Approx(t));
  // Two messages over the same link still take turns.
  CHECK(run(fan_out(2, {1, 1}, per_link), 2) == Approx(2 * t));
}

TEST_CASE("a stream rate bounds each channel, and channels share the link", "[engines][loggp]") {
  core::Protocol p;
  p.name = "LL128";
  p.port_per_link = true;
  p.stream_bandwidth = core::Bandwidth{kRate / 4};
  const double t = static_cast<double>(kM) / kRate;
  // One channel at a quarter of the link rate: 4 t.
  CHECK(run(fan_out(2, {1}, p), 2) == Approx(4 * t));
  // Two channels over one link: together they need half the link (2 x B/4), so both move at
  // their own rate at once and are done at 4 t, not 8 t (one after the other).
  CHECK(run(fan_out(2, {1, 1}, p), 2) == Approx(4 * t));
  // Eight channels need twice the link: the link is the bound, 8 t.
  CHECK(run(fan_out(2, {1, 1, 1, 1, 1, 1, 1, 1}, p), 2) == Approx(8 * t));
}

TEST_CASE("a network transport's efficiency applies between nodes only", "[engines][loggp]") {
  core::Protocol p;
  p.name = "Simple";
  p.inter_node_efficiency = 0.8;
  const double t = static_cast<double>(kM) / kRate;
  // On a full mesh every rank is a node of its own: kM / 0.8 bytes on the wire.
  CHECK(run(fan_out(2, {1}, p), 2) == Approx(t / 0.8));
}

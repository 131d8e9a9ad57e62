// Links that several ports use, and the order a port takes simultaneous arrivals in: the loggp
// engine books a link in the middle of routes inside a node per message
// (engines/loggp/src/middle_links.hpp), and the simgrid engine lets messages that leave at once
// through a receiver's port in arrival order, as loggp does (docs/engines.md).

#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"

#include <array>
#include <catch2/catch.hpp>

using namespace collsim;
using core::Buffer;

namespace {

core::Device named(std::string name) {
  core::Device d;
  d.name = std::move(name);
  return d;
}

constexpr double kRate = 10e9;           // B/s per link
constexpr std::uint64_t kM = 10'000'000; // bytes per message: 1 ms on a link
constexpr double kT = static_cast<double>(kM) / kRate;

/// Four GPUs of one node: 0 and 1 under switch a, 2 and 3 under switch b, the switches joined by
/// one link each way (the middle of every route from {0, 1} to {2, 3}).
core::Topology two_switches() {
  core::Topology t;
  const auto a = t.add_device(named("a"));
  const auto b = t.add_device(named("b"));
  t.add_duplex(a, b, core::Bandwidth{kRate}, core::Seconds{0.0}, core::LinkKind::pcie);
  std::vector<core::DeviceId> gpus;
  for (std::size_t g = 0; g < 4; ++g) {
    gpus.push_back(t.add_device(named(std::array{"gpu0", "gpu1", "gpu2", "gpu3"}[g])));
    t.add_duplex(gpus.back(), g < 2 ? a : b, core::Bandwidth{kRate}, core::Seconds{0.0},
                 core::LinkKind::pcie);
  }
  t.map_ranks(gpus);
  return t;
}

core::ScheduleHeader header(std::uint32_t ranks, core::Protocol protocol) {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = ranks;
  h.bytes = core::Bytes{kM};
  h.data_bytes = kM;
  h.tmp_bytes = kM;
  h.protocol = std::move(protocol);
  return h;
}

/// A port per link, as the NCCL stack lowers a schedule.
core::Protocol per_link() {
  core::Protocol p;
  p.name = "Simple";
  p.port_per_link = true;
  return p;
}

/// 0 -> 2 and 1 -> 3 at once, kM bytes each.
core::Schedule crossing(core::Protocol protocol) {
  core::Schedule s(header(4, std::move(protocol)));
  s.begin_rank(0);
  s.send(2, {Buffer::data, 0, kM});
  s.begin_rank(1);
  s.send(3, {Buffer::data, 0, kM});
  s.begin_rank(2);
  s.recv(0, {Buffer::data, 0, kM});
  s.begin_rank(3);
  s.recv(1, {Buffer::data, 0, kM});
  s.finish();
  return s;
}

double loggp(const core::Schedule& s, const core::Topology& t) {
  return engines::LogGPEngine{}.run(s, t, {}).time.value;
}
double simgrid(const core::Schedule& s, const core::Topology& t) {
  return engines::SimgridEngine{}.run(s, t, {}).time.value;
}

} // namespace

TEST_CASE("a link in the middle of routes is shared by the messages that cross it at once, not "
          "by those that never meet",
          "[engines][loggp][simgrid]") {
  const core::Topology t = two_switches();
  SECTION("0 -> 2 and 1 -> 3 at once: the switches' link carries both") {
    const core::Schedule s = crossing(per_link());
    CHECK(loggp(s, t) == Approx(2 * kT));
    CHECK(simgrid(s, t) == Approx(2 * kT).epsilon(0.01));
  }
  SECTION("0 -> 2, then 1 -> 3 once 1 has heard from 2: each has the link to itself") {
    core::Schedule s(header(4, per_link()));
    s.begin_rank(0);
    s.send(2, {Buffer::data, 0, kM});
    s.begin_rank(1);
    const std::uint32_t heard = s.recv(2, {Buffer::data, 0, 8});
    s.send(3, {Buffer::data, 0, kM}, {heard});
    s.begin_rank(2);
    const std::uint32_t got = s.recv(0, {Buffer::data, 0, kM});
    s.send(1, {Buffer::data, 0, 8}, {got});
    s.begin_rank(3);
    s.recv(1, {Buffer::data, 0, kM});
    s.finish();
    // Two whole messages one after the other (and 8 bytes between): not twice that, which a
    // static half of the link for every message inside the node charged.
    CHECK(loggp(s, t) == Approx(2 * kT).epsilon(1e-4));
    CHECK(simgrid(s, t) == Approx(2 * kT).epsilon(0.01));
  }
  SECTION("rate-bound channels that together need less than the link move at their own rate") {
    // Each channel's block moves its message at a quarter of the link rate (4 kT); the two
    // need half the switches' link, so neither waits. (Until 2026-12-05 loggp booked the second
    // message's stretch after the first's, kT, and counted its block's 4 kT from there: 5 kT.)
    core::Protocol p = per_link();
    p.stream_bandwidth = core::Bandwidth{kRate / 4};
    const core::Schedule s = crossing(p);
    CHECK(loggp(s, t) == Approx(4 * kT));
    CHECK(simgrid(s, t) == Approx(4 * kT).epsilon(0.01));
  }
  SECTION("rate-bound channels that together need more than the link end when it has carried "
          "both") {
    // At 0.75 of the link rate each (4/3 kT alone) the two need 1.5 links: both are through at
    // 2 kT (loggp: the second's stretch ends there; simgrid: each has half the link). Counting
    // the second's block from the end of the first's stretch gave 7/3 kT.
    core::Protocol p = per_link();
    p.stream_bandwidth = core::Bandwidth{0.75 * kRate};
    const core::Schedule s = crossing(p);
    CHECK(loggp(s, t) == Approx(2 * kT));
    CHECK(simgrid(s, t) == Approx(2 * kT).epsilon(0.01));
  }
  SECTION("LogGP's single port books no middle link") {
    core::Protocol single;
    single.name = "Simple";
    CHECK(loggp(crossing(single), t) == Approx(kT));
  }
}

TEST_CASE("simgrid lets messages that leave at once through a port in arrival order, as loggp",
          "[engines][loggp][simgrid]") {
  // One node, a star: rank 0 hangs from the hub; rank 1 is 1 us from it, rank 2 is 100 us away.
  // Both send kM at once; rank 0 needs rank 2's first (its program receives from 2, then passes it
  // on to 3).
  core::Topology t;
  const auto hub = t.add_device(named("hub"));
  const double latency[] = {0.0, 1e-6, 100e-6, 0.0};
  std::vector<core::DeviceId> ranks;
  for (std::size_t r = 0; r < 4; ++r) {
    ranks.push_back(t.add_device(named(std::array{"r0", "r1", "r2", "r3"}[r])));
    t.add_duplex(ranks.back(), hub, core::Bandwidth{kRate}, core::Seconds{latency[r]},
                 core::LinkKind::generic);
  }
  t.map_ranks(ranks);
  core::Schedule s(header(4, core::Protocol{}));
  s.begin_rank(0);
  const std::uint32_t far = s.recv(2, {Buffer::data, 0, kM});
  s.recv(1, {Buffer::tmp, 0, kM});
  s.send(3, {Buffer::data, 0, kM}, {far});
  s.begin_rank(1);
  s.send(0, {Buffer::data, 0, kM});
  s.begin_rank(2);
  s.send(0, {Buffer::data, 0, kM});
  s.begin_rank(3);
  s.recv(0, {Buffer::data, 0, kM});
  s.finish();
  // The near message reaches the port first and takes it; the far one follows, so the send to 3
  // starts after two messages' time (simgrid took the far one first, in receive order, and
  // finished a message's time earlier).
  const double lg = loggp(s, t);
  CHECK(lg == Approx(3 * kT + 1e-6).epsilon(1e-5));
  CHECK(simgrid(s, t) == Approx(lg).epsilon(0.01));
}

namespace {

/// Two nodes of two GPUs, each node's GPUs under one PCIe switch with `nics` NICs on it (one:
/// both GPUs use it; two: one each), every NIC on one network switch.
core::Topology two_nodes(std::size_t nics) {
  const auto device = [](std::string name, core::DeviceKind kind, std::uint32_t node) {
    core::Device d = named(std::move(name));
    d.kind = kind;
    d.node = node;
    return d;
  };
  core::Topology t;
  const auto fabric =
      t.add_device(device("fabric", core::DeviceKind::network_switch, core::kNetworkNode));
  std::vector<core::DeviceId> gpus;
  for (std::uint32_t node = 0; node < 2; ++node) {
    const auto sw =
        t.add_device(device("pcie" + std::to_string(node), core::DeviceKind::pcie_switch, node));
    std::vector<core::DeviceId> cards;
    for (std::size_t n = 0; n < nics; ++n) {
      cards.push_back(t.add_device(
          device("nic" + std::to_string(node) + std::to_string(n), core::DeviceKind::nic, node)));
      t.add_duplex(sw, cards.back(), core::Bandwidth{kRate}, core::Seconds{0.0},
                   core::LinkKind::pcie);
      t.add_duplex(cards.back(), fabric, core::Bandwidth{kRate}, core::Seconds{0.0},
                   core::LinkKind::generic);
    }
    for (std::size_t g = 0; g < 2; ++g) {
      core::Device gpu = device("gpu" + std::to_string(2 * node + g), core::DeviceKind::gpu, node);
      gpu.egress = cards[g % nics];
      gpus.push_back(t.add_device(gpu));
      t.add_duplex(gpus.back(), sw, core::Bandwidth{kRate}, core::Seconds{0.0},
                   core::LinkKind::pcie);
    }
  }
  t.map_ranks(gpus);
  return t;
}

} // namespace

TEST_CASE("two GPUs that share a NIC share its links between nodes on loggp, as on simgrid",
          "[engines][loggp][simgrid]") {
  // 0 -> 2 and 1 -> 3 at once, kM bytes each over links of one rate: through one NIC a node
  // (p4d's two GPUs a card) the card's links carry both, 2 kT; with a NIC each, kT. Until
  // 2026-12-08 loggp booked no link between nodes and gave each GPU the card to itself.
  const core::Schedule s = crossing(per_link());
  const core::Topology shared = two_nodes(1);
  CHECK(loggp(s, shared) == Approx(2 * kT));
  CHECK(simgrid(s, shared) == Approx(2 * kT).epsilon(0.01));
  const core::Topology own = two_nodes(2);
  CHECK(loggp(s, own) == Approx(kT));
  CHECK(simgrid(s, own) == Approx(kT).epsilon(0.01));
}

// Library-level costs of core::Protocol that both engines price: a shared-memory transport
// without MPI's matching (intra_node_overhead: HCOLL's basesmuma), the rendezvous handshake
// above a size (rendezvous_bytes: UCX's rndv, ob1's RTS/CTS; windows and a node's own threshold:
// libfabric efa), and a network proxy that posts
// a rank's messages between nodes one at a time (proxy_overhead: NCCL). Formulas in the tests.

#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace collsim;
using core::Buffer;

namespace {

constexpr double kOverhead = 2e-6; // the endpoint's o, large so that it shows

/// Two CPU nodes of two cores each, one NIC per node on one switch.
core::Topology cpu_nodes() {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.nodes = 2;
  spec.system.node.cpu.sockets = 1;
  spec.system.node.cpu.numa_per_socket = 1;
  spec.system.node.cpu.cores_per_socket = 2;
  spec.system.node.cpu.memory_bandwidth = core::Bandwidth{40e9};
  spec.system.node.cpu.memory_latency = core::Seconds{0.2e-6};
  spec.system.node.nics = 1;
  spec.system.node.nic_bandwidth = core::Bandwidth{12.5e9};
  spec.endpoint.overhead = core::Seconds{kOverhead};
  return topologies::build(spec, 4);
}

/// Rank 0 sends m bytes to rank `to`, which receives them (or, with `reduce`, reduces them into
/// its own as a reduce to root `to`); the other ranks idle.
core::Schedule one_message(core::Rank to, std::uint64_t m, core::Protocol protocol,
                           bool reduce = false) {
  core::ScheduleHeader h;
  h.collective = reduce ? core::CollectiveKind::reduce : core::CollectiveKind::bcast;
  h.ranks = 4;
  h.bytes = core::Bytes{m};
  h.data_bytes = m;
  h.root = reduce ? to : 0;
  h.protocol = std::move(protocol);
  core::Schedule s(h);
  for (core::Rank r = 0; r < 4; ++r) {
    s.begin_rank(r);
    if (r == 0) {
      s.send(to, {Buffer::data, 0, m});
    } else if (r == to && reduce) {
      s.recv_reduce(0, {Buffer::data, 0, m});
    } else if (r == to) {
      s.recv(0, {Buffer::data, 0, m});
    }
  }
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

TEST_CASE("a shared-memory transport without matching pays no o inside a node, o between nodes",
          "[engines][protocol]") {
  const core::Topology t = cpu_nodes();
  constexpr std::uint64_t kM = 4096;
  core::Protocol shm;
  shm.intra_node_overhead = core::Seconds{0.0};
  for (const auto& [name, run] : {std::pair{"loggp", &loggp}, std::pair{"simgrid", &simgrid}}) {
    CAPTURE(name);
    // Inside the node the two o (send and receive) go; the latency and data time stay.
    const double mpi = run(one_message(1, kM, {}), t);
    const double flags = run(one_message(1, kM, shm), t);
    CHECK(mpi - flags == Approx(2 * kOverhead).epsilon(1e-6));
    const core::RouteCost rc = t.route_cost_between(t.device_of(0), t.device_of(1));
    CHECK(flags == Approx(rc.latency.value + kM / rc.bottleneck.bytes_per_second).epsilon(0.02));
    // Between nodes the endpoint's o stays.
    CHECK(run(one_message(2, kM, shm), t) == Approx(run(one_message(2, kM, {}), t)));
  }
}

TEST_CASE("a message above the rendezvous threshold waits two more latencies, one at it does not",
          "[engines][protocol]") {
  const core::Topology t = cpu_nodes();
  constexpr std::uint64_t kM = 16384;
  const double l = t.route_cost_between(t.device_of(0), t.device_of(2)).latency.value;
  core::Protocol at;
  at.rendezvous_bytes = kM; // eager: the message is not above the threshold
  core::Protocol below = at;
  below.rendezvous_bytes = kM - 1;
  for (const auto& [name, run] : {std::pair{"loggp", &loggp}, std::pair{"simgrid", &simgrid}}) {
    CAPTURE(name);
    const double eager = run(one_message(2, kM, {}), t);
    CHECK(run(one_message(2, kM, at), t) == Approx(eager));
    CHECK(run(one_message(2, kM, below), t) - eager == Approx(2 * l).epsilon(1e-3));
  }
}

TEST_CASE("a windowed rendezvous pays a handshake per window below the read size, one from it, "
          "and a node's own threshold inside it",
          "[engines][protocol]") {
  // libfabric efa's long-CTS protocol (core::Protocol::rendezvous_window_bytes): a message of m
  // bytes between nodes above the threshold T and below the read size R waits ceil(m / W)
  // handshakes of two latencies each, one per window of W granted bytes: time = eager time +
  // 2 l ceil(m / W). From R the receiver reads it after one handshake: eager + 2 l. Inside a
  // node the threshold intra_node_rendezvous_bytes replaces T, with one handshake.
  const core::Topology t = cpu_nodes();
  const double l = t.route_cost_between(t.device_of(0), t.device_of(2)).latency.value;
  const double l_in = t.route_cost_between(t.device_of(0), t.device_of(1)).latency.value;
  core::Protocol efa;
  efa.rendezvous_bytes = 65536;
  efa.rendezvous_window_bytes = 262144;
  efa.rendezvous_read_bytes = 1048576;
  efa.intra_node_rendezvous_bytes = 4096;
  for (const auto& [name, run] : {std::pair{"loggp", &loggp}, std::pair{"simgrid", &simgrid}}) {
    CAPTURE(name);
    // A copy of the engine: clang 14 does not capture structured bindings in lambdas.
    const auto extra = [&, engine = run](core::Rank to, std::uint64_t m) {
      return engine(one_message(to, m, efa), t) - engine(one_message(to, m, {}), t);
    };
    CHECK(extra(2, 65536) == Approx(0.0).margin(1e-12));        // medium: no handshake
    CHECK(extra(2, 262144) == Approx(2 * l).epsilon(1e-3));     // one window
    CHECK(extra(2, 262145) == Approx(4 * l).epsilon(1e-3));     // two windows
    CHECK(extra(2, 1048575) == Approx(8 * l).epsilon(1e-3));    // four windows
    CHECK(extra(2, 1048576) == Approx(2 * l).epsilon(1e-3));    // read: one handshake
    CHECK(extra(1, 4096) == Approx(0.0).margin(1e-12));         // shm eager
    CHECK(extra(1, 4097) == Approx(2 * l_in).epsilon(1e-3));    // shm read
    CHECK(extra(1, 1048575) == Approx(2 * l_in).epsilon(1e-3)); // no windows inside
  }
  // The rule itself, as both engines ask it.
  CHECK(core::rendezvous_handshakes(efa, 524288, false) == 2);
  CHECK(core::rendezvous_handshakes(efa, 8192, true) == 1);
  core::Protocol ucx;
  ucx.rendezvous_bytes = 8192; // one threshold for both, no windows (UCX)
  CHECK(core::rendezvous_handshakes(ucx, 8193, true) == 1);
  CHECK(core::rendezvous_handshakes(ucx, 1 << 20, false) == 1);
  CHECK(core::rendezvous_handshakes(ucx, 8192, false) == 0);
  efa.intra_node_rendezvous_bytes = 0; // every message with data (libfabric's 0)
  CHECK(core::rendezvous_handshakes(efa, 1, true) == 1);
  CHECK(core::rendezvous_handshakes(efa, 0, true) == 0);
  // The read comes first: from the read size one handshake even below the eager threshold.
  efa.rendezvous_read_bytes = 4096;
  CHECK(core::rendezvous_handshakes(efa, 4096, false) == 1);
  CHECK(core::rendezvous_handshakes(efa, 4095, false) == 0);
}

TEST_CASE("an MPI rank's core copies its message inside a node and reduces at one core's rate",
          "[engines][protocol]") {
  // core::Protocol::core_copy_bandwidth C and core_reduce_bandwidth R (an MPI process is one
  // core): rank 0's m-byte message to rank 1 of its node leaves after its core copied it, m / C
  // (2m / C at an intra-node efficiency of 0.5: two copies), then takes its route as before; a
  // recv_reduce adds m / R where the endpoint's own rate is faster. Between nodes the copy is
  // the NIC's; where the readers copy (intra_node_overhead) nothing changes.
  const core::Topology t = cpu_nodes();
  constexpr std::uint64_t kM = 1 << 20;
  constexpr double kC = 5e9;
  constexpr double kR = 2e9;
  core::Protocol cores;
  cores.core_copy_bandwidth = core::Bandwidth{kC};
  cores.core_reduce_bandwidth = core::Bandwidth{kR};
  const double own_reduce = kM / t.endpoint(1).reduce_bandwidth.bytes_per_second;
  for (const auto& [name, run] : {std::pair{"loggp", &loggp}, std::pair{"simgrid", &simgrid}}) {
    CAPTURE(name);
    CHECK(run(one_message(1, kM, cores), t) - run(one_message(1, kM, {}), t) ==
          Approx(kM / kC).epsilon(1e-6));
    core::Protocol two = cores;
    two.intra_node_efficiency = 0.5;
    core::Protocol two_plain;
    two_plain.intra_node_efficiency = 0.5;
    CHECK(run(one_message(1, kM, two), t) - run(one_message(1, kM, two_plain), t) ==
          Approx(2 * kM / kC).epsilon(1e-6));
    CHECK(run(one_message(2, kM, cores), t) == Approx(run(one_message(2, kM, {}), t)));
    // The reduction at one core's rate (slower than the domain's a third here).
    REQUIRE(kR < t.endpoint(1).reduce_bandwidth.bytes_per_second);
    CHECK(run(one_message(2, kM, cores, true), t) - run(one_message(2, kM, {}, true), t) ==
          Approx(kM / kR - own_reduce).epsilon(1e-6));
    core::Protocol flags = cores;
    flags.intra_node_overhead = core::Seconds{0.0};
    core::Protocol flags_plain;
    flags_plain.intra_node_overhead = core::Seconds{0.0};
    CHECK(run(one_message(1, kM, flags), t) == Approx(run(one_message(1, kM, flags_plain), t)));
  }
}

TEST_CASE("over a shared-memory protocol the readers copy: a rank read by three peers is not "
          "serialised on loggp",
          "[engines][protocol]") {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.nodes = 1;
  spec.system.node.cpu.cores_per_socket = 4;
  spec.system.node.cpu.memory_bandwidth = core::Bandwidth{40e9};
  spec.system.node.cpu.memory_latency = core::Seconds{0.2e-6};
  spec.system.node.nics = 0;
  const core::Topology t = topologies::build(spec, 4);
  constexpr std::uint64_t kM = 8192;
  const auto fan_out = [&](core::Protocol protocol) {
    core::ScheduleHeader h;
    h.collective = core::CollectiveKind::bcast;
    h.ranks = 4;
    h.bytes = core::Bytes{kM};
    h.data_bytes = kM;
    h.protocol = std::move(protocol);
    core::Schedule s(h);
    for (core::Rank r = 0; r < 4; ++r) {
      s.begin_rank(r);
      for (core::Rank peer = 1; peer < 4; ++peer) {
        if (r == 0) {
          s.send(peer, {Buffer::data, 0, kM});
        } else if (r == peer) {
          s.recv(0, {Buffer::data, 0, kM});
        }
      }
    }
    s.finish();
    return s;
  };
  const core::RouteCost rc = t.route_cost_between(t.device_of(0), t.device_of(1));
  const double copy = kM / rc.bottleneck.bytes_per_second;
  core::Protocol shm;
  shm.intra_node_overhead = core::Seconds{0.0};
  // Each reader copies the 8 KiB itself, all three at once: one latency and one copy.
  CHECK(loggp(fan_out(shm), t) == Approx(rc.latency.value + copy).epsilon(1e-9));
  // MPI's point-to-point sends leave one after another from the sender's port (o = 0 here).
  CHECK(loggp(fan_out({}), t) == Approx(rc.latency.value + 3 * copy).epsilon(1e-9));
  // SimGrid shares the sender's memory link among the three flows: never faster.
  CHECK(simgrid(fan_out(shm), t) >= loggp(fan_out(shm), t));
}

TEST_CASE("a rank's network proxy posts its messages between nodes one after another",
          "[engines][protocol]") {
  // NCCL's proxy thread posts every network step of a GPU (core::Protocol::proxy_overhead):
  // rank 0's second message to the other node leaves tau after its first, which a message inside
  // the node does not wait for.
  const core::Topology t = cpu_nodes();
  constexpr double kTau = 10e-6; // well above o and the 1-byte wire time
  core::Protocol proxied;
  proxied.proxy_overhead = core::Seconds{kTau};
  const auto sends = [&](std::vector<core::Rank> to) {
    core::ScheduleHeader h;
    h.collective = core::CollectiveKind::bcast;
    h.ranks = 4;
    h.bytes = core::Bytes{1};
    h.data_bytes = 1;
    h.protocol = proxied;
    core::Schedule s(h);
    for (core::Rank r = 0; r < 4; ++r) {
      s.begin_rank(r);
      for (const core::Rank peer : to) {
        if (r == 0) {
          s.send(peer, {Buffer::data, 0, 1});
        } else if (r == peer) {
          s.recv(0, {Buffer::data, 0, 1});
        }
      }
    }
    s.finish();
    return s;
  };
  for (const auto& [name, run] : {std::pair{"loggp", &loggp}, std::pair{"simgrid", &simgrid}}) {
    CAPTURE(name);
    const double one = run(sends({3}), t);
    CHECK(one == Approx(run(one_message(3, 1, {}), t)).epsilon(1e-9)); // the first is not held
    CHECK(run(sends({2, 3}), t) == Approx(kTau + one).epsilon(1e-9));
    CHECK(run(sends({2, 1}), t) < kTau); // rank 1 shares rank 0's node: no proxy
  }
}

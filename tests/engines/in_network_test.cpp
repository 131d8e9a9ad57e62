// In-network agents (switches that reduce: InfiniBand SHARP, NVLink SHARP) and wire protocols
// (NCCL LL / LL128 / Simple) through the whole stack: the IR, the text form, the checkers and the
// loggp engine's pricing.

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace collsim;

namespace {

/// Two nodes of two ranks under a reducing network switch ("network"); each rank sends its vector
/// to the switch, which reduces the four and sends the result back to all (a SHARP allreduce).
core::Schedule sharp_allreduce(std::uint64_t n) {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::allreduce;
  h.ranks = 4;
  h.bytes = core::Bytes{n};
  h.data_bytes = n;
  h.agents = {"network"};
  core::Schedule s(h);
  const core::Range all{core::Buffer::data, 0, n};
  for (core::Rank r = 0; r < 4; ++r) {
    s.begin_rank(r);
    const auto sent = s.send(4, all);
    s.recv(4, all, {sent});
  }
  s.begin_rank(4); // the agent
  s.recv(0, all);
  for (core::Rank r = 1; r < 4; ++r) {
    s.recv_reduce(r, all, {r - 1U});
  }
  for (core::Rank r = 0; r < 4; ++r) {
    s.send(r, all, {3});
  }
  s.finish();
  return s;
}

core::ClusterSpec two_by_two(bool network_reduces) {
  core::ClusterSpec c;
  c.devices_per_node = 2;
  c.intra_bandwidth = core::Bandwidth{100e9};
  c.intra_latency = core::Seconds{1e-6};
  c.nic_bandwidth = core::Bandwidth{25e9};
  c.nic_latency = core::Seconds{1e-6};
  c.network_switch_reduces = network_reduces;
  return c;
}

} // namespace

TEST_CASE("a switch agent's reduction implements allreduce and round-trips through the text form",
          "[engines][in_network]") {
  const core::Schedule s = sharp_allreduce(1000);
  CHECK(s.participants() == 5);
  CHECK(core::check_semantics(s).ok());
  const std::string text = core::print_schedule(s);
  CHECK(text.find("agents network\n") != std::string::npos);
  CHECK(text.find("agent 4 {") != std::string::npos);
  CHECK(core::parse_schedule(text) == s);
}

TEST_CASE("the checker still catches an agent that forgets a rank", "[engines][in_network]") {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::allreduce;
  h.ranks = 2;
  h.bytes = core::Bytes{8};
  h.data_bytes = 8;
  h.agents = {"network"};
  core::Schedule s(h);
  const core::Range all{core::Buffer::data, 0, 8};
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const auto sent = s.send(2, all);
    s.recv(2, all, {sent});
  }
  s.begin_rank(2);
  s.recv(0, all);
  s.recv(1, all, {0}); // overwrites instead of reducing: rank 0's contribution is lost
  s.send(0, all, {1});
  s.send(1, all, {1});
  s.finish();
  const auto report = core::check_semantics(s);
  REQUIRE_FALSE(report.ok());
  CHECK(report.summary().find("rank 0") != std::string::npos);
}

TEST_CASE("loggp prices a switch agent with a port per link", "[engines][in_network]") {
  // Every rank's vector crosses device -> node switch -> NIC -> network (and back): 1 us intra
  // (half to the switch, half to... the device link carries half of intra_latency), 1 us per NIC
  // link; the bottleneck is the 25 GB/s NIC. The switch receives the four vectors at once (one
  // port each), so the reduction costs one vector's transfer, not four.
  const std::uint64_t n = 1'000'000;
  const core::Topology t = topologies::build_cluster(two_by_two(true), core::EndpointSpec{}, 4);
  const auto route = t.route_cost_between(t.device_of(0), *t.find_device("network"));
  CHECK(route.latency.value == Approx(0.5e-6 + 1e-6));
  CHECK(route.bottleneck.bytes_per_second == Approx(25e9));
  const double one_way = route.latency.value + static_cast<double>(n) / 25e9;
  const auto res = engines::LogGPEngine{}.run(sharp_allreduce(n), t, {});
  CHECK(res.time.value == Approx(2 * one_way).epsilon(1e-12));
  CHECK(res.rank_finish.size() == 4);
}

TEST_CASE("loggp refuses an agent the topology cannot provide", "[engines][in_network]") {
  const core::Topology plain = topologies::build_cluster(two_by_two(false), {}, 4);
  CHECK_THROWS_WITH(engines::LogGPEngine{}.run(sharp_allreduce(8), plain, {}),
                    "loggp: agent 'network' is a device that cannot reduce in the network");
  const core::Topology mesh =
      core::Topology::full_mesh(4, core::Bandwidth{1e9}, core::Seconds{1e-6}, {});
  CHECK_THROWS_WITH(engines::LogGPEngine{}.run(sharp_allreduce(8), mesh, {}),
                    "loggp: the schedule has in-network agents (network) but the topology is a "
                    "full mesh without switches");
}

TEST_CASE("a protocol charges its payload efficiency, per-message latency and launch",
          "[engines][protocol]") {
  // One 1000-byte message between two ranks of a full mesh (every rank a node of its own, so the
  // inter-node latency applies): launch + max(alpha, the protocol's 2.7 us) + ceil(1000 / 0.5) / B.
  // NCCL's per-message latencies are whole per-step latencies: they replace the route's where
  // larger, they do not add to it.
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = core::Bytes{1000};
  h.data_bytes = 1000;
  h.protocol = core::Protocol{"LL", 0.5, core::Seconds{6.6e-6}, core::Seconds{0.6e-6},
                              core::Seconds{2.7e-6}};
  core::Schedule s(h);
  const core::Range all{core::Buffer::data, 0, 1000};
  s.begin_rank(0);
  s.send(1, all);
  s.begin_rank(1);
  s.recv(0, all);
  s.finish();
  CHECK(core::check_semantics(s).ok());
  const std::string text = core::print_schedule(s);
  CHECK(text.find("protocol LL efficiency=0.5 launch=6.6e-06 message_latency=6e-07 "
                  "inter_node_latency=2.7e-06\n") != std::string::npos);
  CHECK(core::parse_schedule(text) == s);
  const core::Topology mesh =
      core::Topology::full_mesh(2, core::Bandwidth{1e9}, core::Seconds{2e-6}, {});
  const auto res = engines::LogGPEngine{}.run(s, mesh, {});
  CHECK(res.time.value == Approx(6.6e-6 + 2.7e-6 + 2000.0 / 1e9).epsilon(1e-12));

  // Within a node the intra-node latency applies; here the route's 1 us is the larger.
  const core::Topology node = topologies::build_cluster(two_by_two(false), {}, 2);
  const auto intra = engines::LogGPEngine{}.run(s, node, {});
  CHECK(intra.time.value == Approx(6.6e-6 + 1e-6 + 2000.0 / 100e9).epsilon(1e-12));
}

TEST_CASE("the text form rejects a protocol efficiency outside between 0 and 1",
          "[engines][protocol]") {
  const std::string text = "collsim-schedule 1\ncollective bcast\nranks 1\nbytes 0\nroot 0\n"
                           "buffers data=0 tmp=0\nprotocol LL efficiency=1.5 launch=0 "
                           "message_latency=0 inter_node_latency=0\nrank 0 {\n}\n";
  CHECK_THROWS_WITH(core::parse_schedule(text, "x"), "x:7:27: error: efficiency must be in (0, 1]");
}

TEST_CASE("the text form carries every optional protocol field and rejects a bad fifo_slots "
          "or proxy_overhead",
          "[engines][protocol]") {
  const std::string head = "collsim-schedule 1\ncollective bcast\nranks 1\nbytes 0\nroot 0\n"
                           "buffers data=0 tmp=0\nprotocol Simple efficiency=1 launch=0 "
                           "message_latency=0 inter_node_latency=0";
  const std::string full = head + " ports=per_link stream_bandwidth=2e+10 "
                                  "intra_node_efficiency=0.8 inter_node_efficiency=0.9 "
                                  "fifo_slots=4\nrank 0 {\n}\n";
  const core::Schedule s = core::parse_schedule(full, "x");
  const core::Protocol& p = s.header().protocol;
  CHECK(p.port_per_link);
  CHECK(p.stream_bandwidth.bytes_per_second == 2e10);
  CHECK(p.intra_node_efficiency == 0.8);
  CHECK(p.inter_node_efficiency == 0.9);
  CHECK(p.fifo_slots == 4);
  CHECK(core::parse_schedule(core::print_schedule(s)) == s);
  CHECK(core::print_schedule(s).find(" fifo_slots=4\n") != std::string::npos);
  CHECK_THROWS_WITH(core::parse_schedule(head + " fifo_slots=0\nrank 0 {\n}\n", "x"),
                    "x:7:90: error: fifo_slots must be from 1 to 1024");
  // The network proxy's time per message between nodes (NCCL's stack sets it across nodes).
  const core::Schedule proxied =
      core::parse_schedule(head + " fifo_slots=4 proxy_overhead=6e-06\nrank 0 {\n}\n", "x");
  CHECK(proxied.header().protocol.proxy_overhead.value == 6e-6);
  CHECK(core::print_schedule(proxied).find(" fifo_slots=4 proxy_overhead=6e-06\n") !=
        std::string::npos);
  CHECK(core::parse_schedule(core::print_schedule(proxied)) == proxied);
  CHECK_THROWS_WITH(core::parse_schedule(head + " proxy_overhead=0\nrank 0 {\n}\n", "x"),
                    "x:7:94: error: proxy_overhead must be positive");
  // Host agents copying their messages inside a node (host staging), the last field.
  const core::Schedule copying =
      core::parse_schedule(head + " proxy_overhead=6e-06 agents_copy\nrank 0 {\n}\n", "x");
  CHECK(copying.header().protocol.agents_copy);
  CHECK(core::print_schedule(copying).find(" proxy_overhead=6e-06 agents_copy\n") !=
        std::string::npos);
  CHECK(core::parse_schedule(core::print_schedule(copying)) == copying);
  CHECK_THROWS_WITH(core::parse_schedule(head + " agents_cop\nrank 0 {\n}\n", "x"),
                    "x:7:78: error: expected 'agents_copy'");
  // libfabric efa's thresholds (stacks/mpi_paths.cpp): windows, the read size, a node's own.
  const std::string efa_fields = " rendezvous_bytes=65536 rendezvous_window_bytes=262144 "
                                 "rendezvous_read_bytes=1048576 intra_node_rendezvous_bytes=4096";
  const core::Schedule efa = core::parse_schedule(head + efa_fields + "\nrank 0 {\n}\n", "x");
  const core::Protocol& e = efa.header().protocol;
  CHECK(e.rendezvous_bytes == 65536);
  CHECK(e.rendezvous_window_bytes == 262144);
  CHECK(e.rendezvous_read_bytes == 1048576);
  CHECK(e.intra_node_rendezvous_bytes == 4096);
  CHECK(core::print_schedule(efa).find(efa_fields + "\n") != std::string::npos);
  CHECK(core::parse_schedule(core::print_schedule(efa)) == efa);
  // A node's threshold of 0 (every message with data waits for a handshake) is not the default.
  const core::Schedule eager_in = core::parse_schedule(
      head + " rendezvous_bytes=8192 intra_node_rendezvous_bytes=0\nrank 0 {\n}\n", "x");
  CHECK(eager_in.header().protocol.intra_node_rendezvous_bytes == 0);
  CHECK(core::parse_schedule(core::print_schedule(eager_in)) == eager_in);
  // One core's rates for an MPI library's CPU ranks (stacks/mpi_paths.cpp), the last fields.
  const core::Schedule cores = core::parse_schedule(
      head +
          " agents_copy core_copy_bandwidth=7.68e+09 core_reduce_bandwidth=5.12e+09\nrank 0 {\n}\n",
      "x");
  CHECK(cores.header().protocol.core_copy_bandwidth.bytes_per_second == 7.68e9);
  CHECK(cores.header().protocol.core_reduce_bandwidth.bytes_per_second == 5.12e9);
  CHECK(core::parse_schedule(core::print_schedule(cores)) == cores);
  CHECK_THROWS_WITH(core::parse_schedule(head + " core_reduce_bandwidth=0\nrank 0 {\n}\n", "x"),
                    "x:7:101: error: core_reduce_bandwidth must be positive");
  CHECK_THROWS_WITH(core::parse_schedule(head + " rendezvous_window_bytes=x\nrank 0 {\n}\n", "x"),
                    "x:7:102: error: expected the bytes granted per handshake");
}

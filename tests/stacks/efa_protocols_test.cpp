// MPI on AWS EFA runs over libfabric's efa provider, not UCX (stacks/src/mpi_paths.cpp,
// efa_protocols): its per-message protocols as libfabric v1.18.0 chooses them, the FI_EFA_*
// variables that move their thresholds, and the bad values refused. Formulas in the tests.

#include "collsim/core/errors.hpp"
#include "collsim/stacks/mpi_env.hpp"

#include "stack_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using collsim::testing::cpu_nodes;
using collsim::testing::lower;
using core::CollectiveKind;

namespace {

core::TopologySpec efa_nodes() {
  core::TopologySpec spec = cpu_nodes(2, 2);
  spec.system.node.nic_kind = "efa";
  return spec;
}

core::Protocol lowered_protocol(const char* stack, const core::TopologySpec& spec,
                                const core::MpiSpec* mpi = nullptr) {
  return lower(stack, CollectiveKind::allreduce, "recursive_doubling", 4, 1 << 20, spec,
               stacks::Buffers::host, mpi)
      .schedule.header()
      .protocol;
}

} // namespace

TEST_CASE("on EFA the MPI stacks send host buffers with libfabric efa's protocols",
          "[stacks][mpi][efa]") {
  for (const char* stack : {"openmpi-4.1", "openmpi-5.0", "mpich-4"}) {
    CAPTURE(stack);
    const core::Protocol p = lowered_protocol(stack, efa_nodes());
    // Between nodes: eager and medium up to 64 KiB, long-CTS windows of 32 packets of 8 KiB,
    // RDMA read from 1 MiB (efa.h, rxr_env.c defaults).
    CHECK(p.rendezvous_bytes == 65536);
    CHECK(p.rendezvous_window_bytes == 32 * 8192);
    CHECK(p.rendezvous_read_bytes == 1048576);
    // Inside a node through shm: eager up to 4096 B, and every byte copied twice in v1.18.0.
    CHECK(p.intra_node_rendezvous_bytes == 4096);
    CHECK(p.intra_node_efficiency == Approx(0.5));
    // The same stack on InfiniBand keeps UCX's one threshold (UCX_RNDV_THRESH auto).
    const core::Protocol ib = lowered_protocol(stack, cpu_nodes(2, 2));
    CHECK(ib.rendezvous_bytes == stacks::kUcxAutoRndvThresh);
    CHECK(ib.rendezvous_window_bytes == 0);
    CHECK(ib.intra_node_rendezvous_bytes == core::Protocol::kAsBetweenNodes);
    CHECK(ib.intra_node_efficiency == 1.0);
  }
}

TEST_CASE("a 512 KiB message between EFA nodes waits two long-CTS grants, 1 MiB one read",
          "[stacks][mpi][efa]") {
  // Two ranks on two nodes, one message each way (a two-rank recursive doubling): the time over
  // UCX's single handshake plus two more latencies for the second window below 1 MiB; from the
  // read size one handshake as UCX's.
  core::TopologySpec efa = cpu_nodes(2, 1);
  efa.system.node.nic_kind = "efa";
  const auto topo = topologies::build(efa, 2);
  const double l = topo.route_cost_between(topo.device_of(0), topo.device_of(1)).latency.value;
  core::TopologySpec plain = efa;
  plain.system.node.nic_kind.clear();
  plain.system.node.nic_latency = efa.system.node.nic_latency;
  const auto time = [](const core::TopologySpec& s, std::uint64_t n) {
    return lower("openmpi-4.1", CollectiveKind::allreduce, "recursive_doubling", 2, n, s,
                 stacks::Buffers::host)
        .time;
  };
  // The NIC kind's rate and latency differ from the plain NIC's: compare each against its own
  // eager time (UCX_RNDV_THRESH=inf on the plain fabric; below 64 KiB on EFA).
  core::MpiSpec eager;
  eager.env = {{"UCX_RNDV_THRESH", "inf"},
               {"FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE", "1073741824"},
               {"FI_EFA_INTER_MIN_READ_MESSAGE_SIZE", "1073741824"}};
  const auto eager_time = [&](std::uint64_t n) {
    return lower("openmpi-4.1", CollectiveKind::allreduce, "recursive_doubling", 2, n, efa,
                 stacks::Buffers::host, &eager)
        .time;
  };
  CHECK(time(efa, 512 << 10) - eager_time(512 << 10) == Approx(2 * 2 * l).epsilon(1e-3));
  CHECK(time(efa, 1 << 20) - eager_time(1 << 20) == Approx(2 * l).epsilon(1e-3));
  CHECK(time(efa, 64 << 10) == Approx(eager_time(64 << 10)).epsilon(1e-9));
  CHECK(time(plain, 1 << 20) > 0.0);
}

TEST_CASE("the FI_EFA variables move libfabric's thresholds, and bad values are refused with their "
          "position",
          "[stacks][mpi][efa]") {
  core::MpiSpec spec;
  spec.env = {{"FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE", "16384"},
              {"FI_EFA_INTER_MIN_READ_MESSAGE_SIZE", "262144"},
              {"FI_EFA_SHM_MAX_MEDIUM_SIZE", "0"},
              {"FI_EFA_TX_MIN_CREDITS", "64"}};
  const core::Protocol p = lowered_protocol("openmpi-4.1", efa_nodes(), &spec);
  CHECK(p.rendezvous_bytes == 16384);
  CHECK(p.rendezvous_read_bytes == 262144);
  CHECK(p.intra_node_rendezvous_bytes == 0); // every message with data read after a handshake
  CHECK(p.rendezvous_window_bytes == 64 * 8192);
  CHECK(stacks::ignored_mpi_env(spec).empty());
  // A medium limit below one packet leaves the eager packet (rxr_msg_select_rtm: eager first);
  // a read size of 0 reads every message with data.
  spec.env = {{"FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE", "0"},
              {"FI_EFA_INTER_MIN_READ_MESSAGE_SIZE", "0"}};
  const core::Protocol zero = lowered_protocol("openmpi-4.1", efa_nodes(), &spec);
  CHECK(zero.rendezvous_bytes == 8192);
  CHECK(zero.rendezvous_read_bytes == 1);
  spec.env = {{"FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE", "64k"}};
  spec.env_pos["FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE"] = core::SourcePos{"s.yaml", 9, 43};
  CHECK_THROWS_WITH(stacks::parse_mpi_env(&spec),
                    "s.yaml:9:43: error: mpi.env.FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE: expected a "
                    "whole number (libfabric reads it as a decimal count), got '64k'");
  spec.env = {{"FI_EFA_TX_MIN_CREDITS", "0"}};
  spec.env_pos.clear();
  CHECK_THROWS_WITH(stacks::parse_mpi_env(&spec),
                    "FI_EFA_TX_MIN_CREDITS: expected a whole number of at least 1 (libfabric "
                    "reads it as a decimal count), got '0'");
}

TEST_CASE("an MPI stack's CPU ranks copy and reduce at one core's rate, a flag protocol's do not",
          "[stacks][mpi][cores]") {
  // topologies::core_memory_bandwidth: Little's law, 24 lines of 64 B over the 0.1 us memory
  // latency of cpu_nodes = 15.36 GB/s, below the 60 GB/s domain; a copy at half, a reduction at
  // a third.
  const core::TopologySpec spec = cpu_nodes(2, 2);
  const double core = 24 * 64 / 0.1e-6;
  CHECK(topologies::core_memory_bandwidth(spec.system.node.cpu).bytes_per_second == Approx(core));
  for (const char* stack : {"openmpi-4.1", "openmpi-5.0", "mpich-4", "hpcx"}) {
    CAPTURE(stack);
    const core::Protocol p =
        lower(stack, CollectiveKind::allreduce, "ring", 4, 1 << 20, spec, stacks::Buffers::host)
            .schedule.header()
            .protocol;
    CHECK(p.core_copy_bandwidth.bytes_per_second == Approx(core / 2));
    CHECK(p.core_reduce_bandwidth.bytes_per_second == Approx(core / 3));
  }
  // HCOLL's and MPICH's own shared-memory cells (intra_node_overhead set) stay in the caches.
  for (const auto& [stack, algorithm] :
       {std::pair{"hpcx", "hcoll"}, std::pair{"mpich-4", "mpich_ch4"}}) {
    CAPTURE(stack);
    const core::Protocol p =
        lower(stack, CollectiveKind::allreduce, algorithm, 4, 1 << 20, spec, stacks::Buffers::host)
            .schedule.header()
            .protocol;
    CHECK(p.core_copy_bandwidth.bytes_per_second == 0.0);
    CHECK(p.core_reduce_bandwidth.bytes_per_second == 0.0);
  }
  // cpu.core_bandwidth, where the scenario gives it, is the core's; the direct stack models no
  // library and keeps the graph's rates.
  core::TopologySpec given = spec;
  given.system.node.cpu.core_bandwidth = core::Bandwidth{30e9};
  const core::Protocol p = lowered_protocol("openmpi-4.1", given);
  CHECK(p.core_copy_bandwidth.bytes_per_second == Approx(15e9));
  CHECK(lowered_protocol("direct", spec).core_copy_bandwidth.bytes_per_second == 0.0);
  // A four-rank ring inside one node: each of its 6 steps copies a quarter of the vector first
  // and reduces it in the first 3, at one core's rates: 6 copies and 3 reductions of n / 4 more
  // than the plain route (whose rate is the domain's).
  const core::TopologySpec one = cpu_nodes(1, 4);
  constexpr std::uint64_t kN = 4 << 20;
  const double q = kN / 4.0;
  const double with =
      lower("openmpi-4.1", CollectiveKind::allreduce, "ring", 4, kN, one, stacks::Buffers::host)
          .time;
  const double plain =
      lower("direct", CollectiveKind::allreduce, "ring", 4, kN, one, stacks::Buffers::host).time;
  const auto topo = topologies::build(one, 4);
  const double domain_reduce = topo.endpoint(0).reduce_bandwidth.bytes_per_second;
  CHECK(with - plain ==
        Approx(6 * q / (core / 2) + 3 * (q / (core / 3) - q / domain_reduce)).epsilon(0.02));
}

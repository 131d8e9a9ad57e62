// The mvapich2-gdr stack: device reductions staged through fresh host memory as coll/cuda does,
// bcast, allgather and alltoall staged through persistent host buffers up to MVAPICH2's naive
// limits and GPU-direct on one port above them, host buffers eager up to 12 KiB.

#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include "stack_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using collsim::testing::cpu_nodes;
using collsim::testing::gpu_nodes;
using core::CollectiveKind;

using collsim::testing::lower;
using collsim::testing::Lowered;

TEST_CASE("mvapich2-gdr stages device reductions as coll/cuda does", "[stacks][mvapich2]") {
  // MPIR_Allreduce_new_MV2 copies both buffers to fresh MPIU_Malloc memory and reduces on the
  // CPU: the same lowering, and the same time, as openmpi-4.1's coll/cuda at every size.
  const auto spec = gpu_nodes(2, 2);
  for (const std::uint64_t n :
       {std::uint64_t{8}, std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
    CAPTURE(n);
    const Lowered mv = lower("mvapich2-gdr", CollectiveKind::allreduce, "ring", 4, n, spec);
    const Lowered om = lower("openmpi-4.1", CollectiveKind::allreduce, "ring", 4, n, spec);
    CHECK(mv.schedule.participants() == 8); // a host agent per rank
    CHECK(core::check_semantics(mv.schedule).ok());
    CHECK(mv.time == Approx(om.time));
  }
}

TEST_CASE("mvapich2-gdr stages bcast, allgather and alltoall up to MVAPICH2's naive limits",
          "[stacks][mvapich2]") {
  const auto spec = gpu_nodes(2, 2);
  struct Case {
    CollectiveKind c;
    const char* algorithm;
    std::uint64_t staged; // the largest size staged (header bytes)
    std::uint64_t direct; // the next power of two: GPU-direct
  };
  // bcast compares the vector with 2 MiB; allgather and alltoall one rank's block (a quarter
  // of collsim's gathered vector on 4 ranks) with 1 MiB and 256 KiB.
  for (const Case& k : {Case{CollectiveKind::bcast, "binomial", 2ULL << 20, 4ULL << 20},
                        Case{CollectiveKind::allgather, "ring", 4ULL << 20, 8ULL << 20},
                        Case{CollectiveKind::alltoall, "pairwise", 1ULL << 20, 2ULL << 20}}) {
    CAPTURE(core::to_string(k.c));
    const Lowered staged = lower("mvapich2-gdr", k.c, k.algorithm, 4, k.staged, spec);
    CHECK(staged.schedule.participants() == 8);
    CHECK(core::check_semantics(staged.schedule).ok());
    const Lowered direct = lower("mvapich2-gdr", k.c, k.algorithm, 4, k.direct, spec);
    CHECK(direct.schedule.participants() == 4);
    CHECK_FALSE(direct.schedule.header().protocol.port_per_link); // one progress thread
    CHECK(core::check_semantics(direct.schedule).ok());
  }
  // Staging costs the two PCIe copies on top of the same algorithm among the host agents: a
  // staged 2 MiB bcast is slower than the GPU-direct one openmpi-4.1 runs.
  CHECK(lower("mvapich2-gdr", CollectiveKind::bcast, "binomial", 4, 2ULL << 20, spec).time >
        lower("openmpi-4.1", CollectiveKind::bcast, "binomial", 4, 2ULL << 20, spec).time);
}

TEST_CASE("mvapich2-gdr's staged collectives stay correct on odd rank counts and tiny sizes",
          "[stacks][mvapich2]") {
  const auto spec = gpu_nodes(3, 3);
  for (const std::uint32_t p : {1U, 2U, 3U, 5U, 7U, 9U}) {
    for (const std::uint64_t block : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4099}}) {
      CAPTURE(p, block);
      const std::uint64_t n = block * p;
      // One rank moves nothing: bcast, allgather and alltoall are not staged; the reduction is,
      // as coll/cuda stages it at any rank count.
      for (const Lowered& r :
           {lower("mvapich2-gdr", CollectiveKind::bcast, "binomial", p, n, spec),
            lower("mvapich2-gdr", CollectiveKind::allgather, "ring", p, n, spec),
            lower("mvapich2-gdr", CollectiveKind::alltoall, "pairwise", p, n, spec)}) {
        INFO(core::check_semantics(r.schedule).summary());
        CHECK(core::check_semantics(r.schedule).ok());
        CHECK(r.schedule.participants() == (p > 1 ? 2 * p : p));
      }
      const Lowered ar = lower("mvapich2-gdr", CollectiveKind::allreduce, "ring", p, n, spec);
      CHECK(core::check_semantics(ar.schedule).ok());
      CHECK(ar.schedule.participants() == 2 * p);
    }
  }
}

TEST_CASE("mvapich2-gdr fills its host pipeline for device messages between nodes",
          "[stacks][mvapich2]") {
  // Two nodes of two PCIe GPUs. Each side that stages (sender above 8 KiB, receiver above
  // 128 KiB) adds its first block's copy, at most 256 KiB at PCIe's data rate after a 6.5 us
  // call, to every message between nodes (the median length decides).
  const auto spec = gpu_nodes(2, 2);
  const auto topo = topologies::build(spec, 4);
  const core::Device& gpu = topo.devices()[topo.device_of(0)];
  const double pcie =
      topo.route_cost_between(topo.device_of(0), gpu.host).bottleneck.bytes_per_second * 12.0 /
      15.75;
  const auto fill = [&](std::uint64_t block) { return 6.5e-6 + static_cast<double>(block) / pcie; };
  const auto latency = [&](CollectiveKind c, const char* algorithm, std::uint64_t n) {
    return lower("mvapich2-gdr", c, algorithm, 4, n, spec)
        .schedule.header()
        .protocol.inter_node_latency.value;
  };
  // gather is GPU-direct at every size: linear gather moves one 4 KiB, 64 KiB or 1 MiB block
  // from each rank to the root.
  CHECK(latency(CollectiveKind::gather, "linear", 4 * 4096) == 0.0);
  CHECK(latency(CollectiveKind::gather, "linear", 4 * 65536) == Approx(fill(65536)));
  CHECK(latency(CollectiveKind::gather, "linear", 4 << 20) == Approx(2 * fill(256 << 10)));
  // bcast above its 2 MiB naive limit: 8 MiB messages, both sides staged.
  CHECK(latency(CollectiveKind::bcast, "binomial", 8 << 20) == Approx(2 * fill(256 << 10)));
  // One node: no message leaves it.
  CHECK(lower("mvapich2-gdr", CollectiveKind::gather, "linear", 2, 4 << 20, gpu_nodes(1, 2))
            .schedule.header()
            .protocol.inter_node_latency.value == 0.0);
}

TEST_CASE("mvapich2-gdr sends host buffers eagerly up to 12 KiB", "[stacks][mvapich2]") {
  // MV2_IBA_EAGER_THRESHOLD on ConnectX: a 12 KiB message moves eagerly, 12 KiB + 1 byte pays
  // the rendezvous handshake (two more route latencies) that UCX's 8 KiB threshold already
  // charges at 12 KiB.
  const auto spec = cpu_nodes(2, 1);
  const auto mv = [&](std::uint64_t n) {
    return lower("mvapich2-gdr", CollectiveKind::bcast, "binomial", 2, n, spec,
                 stacks::Buffers::host);
  };
  const Lowered eager = mv(12 * 1024);
  CHECK(eager.schedule.header().protocol.rendezvous_bytes == 12 * 1024);
  CHECK(eager.schedule.participants() == 2);
  const double ucx = lower("openmpi-4.1", CollectiveKind::bcast, "binomial", 2, 12 * 1024, spec,
                           stacks::Buffers::host)
                         .time;
  CHECK(eager.time < ucx);
  CHECK(mv(12 * 1024 + 1).time > eager.time + 2 * 0.5e-6); // at least o twice more
}

TEST_CASE("mvapich2-gdr runs MPI algorithms and refuses NCCL's", "[stacks][mvapich2]") {
  const auto stacks = stacks::default_stacks();
  const auto registry = algorithms::make_default_registry();
  const auto& s = stacks.find("mvapich2-gdr");
  CHECK(s.info().chooser == stacks::Chooser::ompi41);
  CHECK_FALSE(s.info().implicit);
  CHECK(s.runs(registry.find(CollectiveKind::allreduce, "rabenseifner")));
  CHECK_FALSE(s.runs(registry.find(CollectiveKind::allreduce, "nccl_ring")));
}

// NVLS allreduce on one node as NCCL's kernel pipelines it: three warp groups (scatter, reduce
// and multicast, gather) over loops of nChannels x nHeads x chunkSize, chunk from enqueue.cc
// (docs/stacks.md, "NVLS on one node: NCCL's three-stage pipeline").

#include "collsim/stacks/stack.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;
using core::CollectiveKind;

namespace {

struct Lowered {
  core::Topology topology;
  core::Schedule schedule;
};

/// `name` (an NVLS generator) of n bytes on the 8 GPUs of one DGX H100, lowered by the NCCL stack.
Lowered lowered(CollectiveKind c, const char* name, std::uint64_t n,
                const std::map<std::string, std::string>& env = {}) {
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(c, name);
  core::Scenario s = io::load_scenario("dgx-h100");
  s.nccl.env = env;
  core::Topology t = topologies::build(s.topology, 8);
  algorithms::Request req;
  req.collective = c;
  req.ranks = 8;
  req.bytes = core::Bytes{n};
  req.topology = &t;
  req.params = algorithms::resolve_params(algo, {});
  const auto stacks = stacks::default_stacks();
  core::Schedule out =
      stacks::lower(stacks, registry.generate(algo, req), {t, s.nccl, algo, &s.topology});
  return {std::move(t), std::move(out)};
}

} // namespace

TEST_CASE("NVLS allreduce on one node pays NCCL's pipeline fill and one poll a loop",
          "[stacks][nccl][nvls]") {
  // dgx-h100: 16 NVLS channels, 8 heads (concurrentOps 128), a GPU's NVLink at NCCL's rate
  // 18 x 20.6 GB/s and NVLS efficiency 0.85 (sm90): R = 315.18 GB/s. chunk (enqueue.cc): 128 KiB
  // from 1 GiB, 64 KiB from 64 MiB, 32 KiB from 8 MiB, else 16 KiB; loops L = n / (128 chunk).
  // A loop's data on a GPU's links: d = min(n, 128 chunk) x (1 + 1/8) / R. poll: a round trip
  // through the switch, twice the route latency between two GPUs. NCCL's stages add
  //   added = 2 d + (L - 1) poll,
  // shared by the schedule's two NVLS messages on top of NCCL's 25 us (12.5 us each).
  const double rate = 18 * 20.6 * 0.85 * 1e9;
  struct Point {
    std::uint64_t n;
    std::uint64_t chunk;
  };
  for (const Point pt :
       {Point{2ULL << 20, 16384}, Point{(8ULL << 20) - 4, 16384}, Point{16ULL << 20, 32768},
        Point{256ULL << 20, 65536}, Point{(1ULL << 30) - 4, 65536}, Point{1ULL << 30, 131072},
        Point{2ULL << 30, 131072}}) {
    const Lowered l = lowered(CollectiveKind::allreduce, "nvls", pt.n);
    const double poll = 2.0 * l.topology.route_cost(0, 1).latency.value;
    REQUIRE(poll == Approx(2e-6)); // the preset's 1 us NVLink route, there and back
    const std::uint64_t loop = 128 * pt.chunk;
    const std::uint64_t loops = (pt.n + loop - 1) / loop;
    const double d = static_cast<double>(std::min(pt.n, loop)) * 1.125 / rate;
    const double added = 2 * d + static_cast<double>(loops - 1) * poll;
    INFO("n = " << pt.n << ", L = " << loops);
    CHECK(l.schedule.header().protocol.message_latency.value ==
          Approx(12.5e-6 + added / 2).epsilon(1e-9));
  }
}

TEST_CASE(
    "the NVLS pipeline's time on both engines is NCCL's latency, the wire time and the pipeline",
    "[stacks][nccl][nvls]") {
  // 256 MiB: chunk 64 KiB, L = 32, d = 8 MiB x 9/8 / R = 29.9 us, poll = 2 x the NVLink route.
  // The schedule's wire time is n (1 + 1/8) / R (each GPU's links carry n out and n in, the last
  // shard's multicast after its reduction): time = 25 us + n 9/8 / R + 2 d + 31 poll.
  const std::uint64_t n = 256ULL << 20;
  const Lowered l = lowered(CollectiveKind::allreduce, "nvls", n);
  const double rate = 18 * 20.6 * 0.85 * 1e9;
  const double poll = 2.0 * l.topology.route_cost(0, 1).latency.value;
  const double d = (8ULL << 20) * 1.125 / rate;
  const double expected = 25e-6 + static_cast<double>(n) * 1.125 / rate + 2 * d + 31 * poll;
  CHECK(engines::LogGPEngine().run(l.schedule, l.topology, {}).time.value ==
        Approx(expected).epsilon(0.01));
  CHECK(engines::SimgridEngine().run(l.schedule, l.topology, {}).time.value ==
        Approx(expected).epsilon(0.02));
}

TEST_CASE("NVLS allgather and reduce-scatter keep NCCL's latency alone", "[stacks][nccl][nvls]") {
  // Their kernels are not the allreduce's three-stage pipeline (all_gather.h, reduce_scatter.h);
  // only the allreduce's is modelled.
  for (const CollectiveKind c : {CollectiveKind::allgather, CollectiveKind::reduce_scatter}) {
    const Lowered l = lowered(c, "nvls", 256ULL << 20);
    CHECK(l.schedule.header().protocol.message_latency.value == Approx(12.5e-6).epsilon(1e-9));
  }
}

TEST_CASE("NCCL_NVLS_CHUNKSIZE and NCCL_BUFFSIZE set where NVLS's chunk starts",
          "[stacks][nccl][nvls]") {
  // enqueue.cc: chunkSize = min(Simple step, comm->nvlsChunkSize). At 2 GiB on 8 H100 a 64 KiB
  // NVLS chunk (NCCL_NVLS_CHUNKSIZE) makes 256 loops of 8 MiB instead of 128 of 16 MiB; so does a
  // 512 KiB NCCL_BUFFSIZE (a 64 KiB step).
  const std::uint64_t n = 2ULL << 30;
  const double rate = 18 * 20.6 * 0.85 * 1e9;
  for (const auto& env : {std::map<std::string, std::string>{{"NCCL_NVLS_CHUNKSIZE", "65536"}},
                          std::map<std::string, std::string>{{"NCCL_BUFFSIZE", "524288"}}}) {
    const Lowered l = lowered(CollectiveKind::allreduce, "nvls", n, env);
    const double poll = 2.0 * l.topology.route_cost(0, 1).latency.value;
    const double d = (8ULL << 20) * 1.125 / rate;
    INFO(env.begin()->first);
    CHECK(l.schedule.header().protocol.message_latency.value ==
          Approx(12.5e-6 + (2 * d + 255 * poll) / 2).epsilon(1e-9));
  }
}

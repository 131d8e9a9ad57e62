// The hpcx stack (Open MPI 4.1 with HCOLL) and its `hcoll` allreduce: the fragment pipeline's
// shape (lanes, streams, semantics), one fragment's time from the formula, HCOLL's choice under
// `auto`, and what the MPI stacks read from the scenario's `mpi:` section.

#include "collsim/stacks/mpi_env.hpp"
#include "collsim/stacks/stack.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/auto_choice.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include "stack_test_support.hpp"

#include <catch2/catch.hpp>
#include <set>

using namespace collsim;
using collsim::testing::cpu_nodes;
using core::CollectiveKind;

namespace {

core::Schedule hcoll(const core::Topology& topo, std::uint32_t p, std::uint64_t n) {
  const auto registry = algorithms::make_default_registry();
  algorithms::Request req;
  req.collective = CollectiveKind::allreduce;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.topology = &topo;
  return registry.generate(registry.find(CollectiveKind::allreduce, "hcoll"), req);
}

} // namespace

TEST_CASE("hcoll allreduces every fragment correctly on uneven nodes, two fragments in flight",
          "[stacks][hpcx][algorithms]") {
  const auto spec = cpu_nodes(3, 5);
  for (const std::uint32_t p : {1U, 2U, 5U, 7U, 13U, 15U}) {
    const auto topo = topologies::build(spec, p);
    for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{4096}, std::uint64_t{10000}}) {
      CAPTURE(p, n);
      const core::Schedule s = hcoll(topo, p, n);
      const core::VerifyReport r = core::check_semantics(s);
      CHECK(r.ok());
      CHECK(s.header().protocol.intra_node_overhead.value == 0.0);
    }
  }
  // 10000 B: fragments of 4096, 4096 and 1808 B in lanes 0, 1, 0 (issue streams 0 and 1).
  const auto topo = topologies::build(spec, 15);
  const core::Schedule s = hcoll(topo, 15, 10000);
  std::vector<std::uint64_t> stream_bytes(2, 0);
  for (core::OpId id = s.rank_begin(1); id < s.rank_end(1); ++id) {
    REQUIRE(s.stream(id) < 2);
    if (s.kind(id) == core::OpKind::send) {
      stream_bytes[s.stream(id)] += s.length(id);
    }
  }
  // Rank 1 (a leaf of node 0's binary tree) sends its fragments up: 4096 + 1808 in lane 0,
  // 4096 in lane 1.
  CHECK(stream_bytes[0] == 4096 + 1808);
  CHECK(stream_bytes[1] == 4096);
  // The third fragment's first operation on rank 1 waits for the first fragment's last.
  const core::OpId first = s.rank_begin(1);
  std::uint32_t third = 0;
  std::uint32_t seen = 0;
  for (core::OpId id = first; id < s.rank_end(1); ++id) {
    if (s.kind(id) == core::OpKind::send && s.stream(id) == 0 && ++seen == 2) {
      third = id - first;
    }
  }
  REQUIRE(third > 0);
  CHECK_FALSE(s.deps(first + third).empty());
}

TEST_CASE("hcoll goes up each socket, then across the node's socket leaders (basesmsocket)",
          "[stacks][hpcx]") {
  auto spec = cpu_nodes(1, 2);
  spec.system.node.cpu.sockets = 2; // ranks 0, 1 on socket 0; 2, 3 on socket 1
  const auto topo = topologies::build(spec, 4);
  const core::Schedule s = hcoll(topo, 4, 64);
  REQUIRE(core::check_semantics(s).ok());
  const auto peers = [&](core::Rank r) {
    std::set<core::Rank> out;
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) != core::OpKind::reduce && s.kind(id) != core::OpKind::copy) {
        out.insert(s.peer(id));
      }
    }
    return out;
  };
  CHECK(peers(1) == std::set<core::Rank>{0});
  CHECK(peers(3) == std::set<core::Rank>{2});
  CHECK(peers(2) == std::set<core::Rank>{0, 3});
  CHECK(peers(0) == std::set<core::Rank>{1, 2});
}

TEST_CASE("one hcoll fragment on two cores: a shared-memory fan-in, a reduction, a fan-out, no o",
          "[stacks][hpcx]") {
  const auto spec = cpu_nodes(1, 2);
  const auto topo = topologies::build(spec, 2);
  constexpr std::uint64_t kM = 1000;
  const core::RouteCost rc = topo.route_cost_between(topo.device_of(0), topo.device_of(1));
  const double reduce =
      topo.devices()[topo.device_of(0)].endpoint.reduce_bandwidth.bytes_per_second;
  // Rank 1 hands its fragment to rank 0 (latency and data time, no MPI overhead), rank 0 reduces
  // it into its own and hands the result back.
  const double hop = rc.latency.value + kM / rc.bottleneck.bytes_per_second;
  const double expected = 2 * hop + kM / reduce;
  CHECK(engines::LogGPEngine{}.run(hcoll(topo, 2, kM), topo, {}).time.value ==
        Approx(expected).epsilon(1e-9));
}

TEST_CASE("the hpcx stack's auto is HCOLL's allreduce, Open MPI's rules for the rest",
          "[stacks][hpcx]") {
  const auto stacks = stacks::default_stacks();
  const auto registry = algorithms::make_default_registry();
  CHECK(stacks.find("hpcx").info().chooser == stacks::Chooser::hcoll);
  CHECK(stacks.resolve("hpcx", registry.find(CollectiveKind::allreduce, "hcoll")).info().name ==
        "hpcx");
  const auto c = analysis::hcoll_default(CollectiveKind::allreduce);
  REQUIRE(c);
  CHECK(c->algorithm == "hcoll");
  CHECK_FALSE(analysis::hcoll_default(CollectiveKind::bcast));
  // NCCL's algorithms are refused with the reason.
  CHECK_THROWS_WITH(stacks.resolve("hpcx", registry.find(CollectiveKind::allreduce, "nccl_ring")),
                    Catch::Contains("runs MPI algorithms"));
}

TEST_CASE("the MPI stacks read UCX_RNDV_THRESH, UCX_TLS and the call overhead", "[stacks][mpi]") {
  CHECK(stacks::parse_mpi_env(nullptr).rendezvous_bytes == stacks::kUcxAutoRndvThresh);
  core::MpiSpec spec;
  spec.call_overhead = core::Seconds{1.5e-6};
  spec.env = {{"UCX_RNDV_THRESH", "16k"}, {"UCX_TLS", "^rc,ud"}, {"UCX_IB_SL", "1"}};
  const stacks::MpiEnv env = stacks::parse_mpi_env(&spec);
  CHECK(env.rendezvous_bytes == 16384);
  CHECK(env.tls == std::vector<std::string>{"rc", "ud"});
  CHECK(env.tls_excluded);
  CHECK(env.shared_memory == stacks::SharedMemoryCopies::single); // cma stays
  CHECK(env.call_overhead.value == 1.5e-6);
  CHECK(stacks::ignored_mpi_env(spec) == std::vector<std::string>{"UCX_IB_SL"});
  for (const auto& [value, bytes] : {std::pair{"inf", 0ULL}, std::pair{"auto", 8192ULL},
                                     std::pair{"1M", 1048576ULL}, std::pair{"512b", 512ULL}}) {
    spec.env = {{"UCX_RNDV_THRESH", value}};
    CHECK(stacks::parse_mpi_env(&spec).rendezvous_bytes == bytes);
  }
  // Bad values: one message naming the variable (at its position when it came from a file).
  spec.env = {{"UCX_RNDV_THRESH", "1.5k"}};
  CHECK_THROWS_WITH(stacks::parse_mpi_env(&spec),
                    "UCX_RNDV_THRESH: expected a size such as 8k, 64kb or 1m (UCX memory units, "
                    "powers of 1024), inf or auto, got '1.5k'");
  spec.env = {{"UCX_TLS", "rc,verbs"}};
  spec.env_pos["UCX_TLS"] = core::SourcePos{"s.yaml", 7, 14};
  CHECK_THROWS_WITH(stacks::parse_mpi_env(&spec),
                    Catch::StartsWith("s.yaml:7:14: error: mpi.env.UCX_TLS: unknown UCX transport "
                                      "'verbs' (UCX 1.12 knows: all, self, tcp,"));
}

TEST_CASE("UCX_TLS decides how many copies a message inside a node takes", "[stacks][mpi]") {
  using stacks::SharedMemoryCopies;
  const auto copies = [](const char* tls) {
    core::MpiSpec spec;
    spec.env = {{"UCX_TLS", tls}};
    return stacks::parse_mpi_env(&spec).shared_memory;
  };
  CHECK(stacks::parse_mpi_env(nullptr).shared_memory == SharedMemoryCopies::single);
  CHECK(copies("rc,sm,self") == SharedMemoryCopies::single); // sm includes cma and knem
  CHECK(copies("rc,cma,posix") == SharedMemoryCopies::single);
  CHECK(copies("rc,xpmem") == SharedMemoryCopies::single);   // xpmem maps the peer's buffer
  CHECK(copies("rc,mm,self") == SharedMemoryCopies::single); // mm includes xpmem
  CHECK(copies("rc,posix,self") == SharedMemoryCopies::two); // a FIFO: copy in, copy out
  CHECK(copies("sysv") == SharedMemoryCopies::two);
  CHECK(copies("^cma,knem,xpmem") == SharedMemoryCopies::two);
  CHECK(copies("rc,self") == SharedMemoryCopies::none);
  CHECK(copies("^sm") == SharedMemoryCopies::none);
}

TEST_CASE("copy-in/copy-out through a posix FIFO halves a shared-memory message's data rate",
          "[stacks][mpi]") {
  // Two cores of one node, one 1 MiB message each way (ring allreduce on 2 ranks moves two
  // 512 KiB blocks each way), host buffers: with only posix in UCX_TLS the data time doubles.
  const auto spec = cpu_nodes(1, 2);
  const auto topo = topologies::build(spec, 2);
  const auto time = [&](const char* tls) {
    core::MpiSpec mpi;
    mpi.env = {{"UCX_TLS", tls}};
    const auto l = testing::lower("openmpi-4.1", CollectiveKind::allreduce, "ring", 2, 1 << 20,
                                  spec, stacks::Buffers::host, &mpi);
    CHECK(l.schedule.header().protocol.intra_node_efficiency ==
          (std::string(tls) == "posix,self" ? 0.5 : 1.0));
    return l.time;
  };
  const core::RouteCost rc = topo.route_cost_between(topo.device_of(0), topo.device_of(1));
  // One block of 512 KiB takes this long on the wire at a single copy, and this long to copy by
  // the sender's core first (one core's copy rate, half of Little's law's 24 x 64 B / 0.1 us).
  const double block = (1 << 19) / rc.bottleneck.bytes_per_second;
  const double copy = (1 << 19) / (24 * 64 / 0.1e-6 / 2);
  // Two steps, each one block: the difference is one more block time and one more copy per step.
  CHECK(time("posix,self") - time("sm,self") == Approx(2 * (block + copy)).epsilon(1e-6));
}

TEST_CASE("MPI stacks on host buffers send rendezvous above the threshold and pay the call cost",
          "[stacks][mpi]") {
  const auto spec = cpu_nodes(2, 2);
  const auto topo = topologies::build(spec, 4);
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(CollectiveKind::allreduce, "ring");
  algorithms::Request req;
  req.ranks = 4;
  req.bytes = core::Bytes{1 << 20};
  req.topology = &topo;
  core::MpiSpec mpi;
  mpi.call_overhead = core::Seconds{2e-6};
  mpi.env = {{"UCX_RNDV_THRESH", "64k"}};
  stacks::LowerContext ctx{topo, {}, algo, &spec};
  ctx.mpi = &mpi;
  const auto stacks = stacks::default_stacks();
  for (const char* name : {"openmpi-4.1", "openmpi-4.1+ucc", "hpcx"}) {
    CAPTURE(name);
    const core::Schedule s = stacks::lower(stacks, registry.generate(algo, req), ctx, name);
    CHECK(s.header().protocol.rendezvous_bytes == 65536);
    CHECK(s.header().protocol.launch.value == 2e-6);
  }
}

// The NCCL stack: NCCL's pieces (prims_simple.h's slices, LL/LL128 cut-through), the scenario's
// protocol corrections, and the pipeline they make: a large ring runs at link rate x protocol
// efficiency, and the per-step latency is paid once per pipeline step, not once per chunk.

#include "collsim/stacks/nccl_stack.hpp"
#include "collsim/stacks/stack.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using algorithms::nccl::Algo;
using algorithms::nccl::Proto;
using core::CollectiveKind;

namespace {

constexpr double kRate = 10e9; // B/s

core::Topology uniform(std::uint32_t p) {
  core::TopologySpec spec;
  spec.kind = "uniform";
  spec.uniform.latency = core::Seconds{2e-6};
  spec.uniform.bandwidth = core::Bandwidth{kRate};
  return topologies::build(spec, p);
}

struct Run {
  double time = 0.0;
  core::Schedule lowered;
};

/// nccl_ring allreduce of n bytes on p uniform ranks, one channel, lowered by the NCCL stack.
Run ring(std::uint32_t p, std::uint64_t n, const char* protocol, const core::NcclSpec& nccl = {}) {
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(CollectiveKind::allreduce, "nccl_ring");
  const auto topo = uniform(p);
  algorithms::Request req;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.topology = &topo;
  req.params = algorithms::resolve_params(algo, {{"protocol", protocol}, {"channels", "1"}});
  const auto stacks = stacks::default_stacks();
  REQUIRE(stacks.stack_for(algo).info().name == "nccl");
  Run r;
  r.lowered = stacks::lower(stacks, registry.generate(algo, req), {topo, nccl, algo});
  r.time = engines::LogGPEngine().run(r.lowered, topo, {}).time.value;
  return r;
}

/// Every NCCL algorithm's schedule (nccl_p2p included) of n bytes on p uniform ranks with
/// `protocol` (where the algorithm takes one), lowered by the NCCL stack; refused requests are
/// skipped.
template <typename Each>
void each_lowered(std::uint32_t p, std::uint64_t n, const char* protocol, Each&& each) {
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const auto topo = uniform(p);
  for (const auto* algo : registry.list()) {
    if (!stacks::nccl_lowering_algo(*algo)) { // NCCL's algorithms and its p2p exchange
      continue;
    }
    algorithms::Request req;
    req.collective = algo->collective;
    req.ranks = p;
    req.bytes = core::Bytes{n};
    req.topology = &topo;
    const bool has_protocol = std::any_of(algo->params.begin(), algo->params.end(),
                                          [](const auto& s) { return s.name == "protocol"; });
    if (has_protocol) {
      req.params = algorithms::resolve_params(*algo, {{"protocol", protocol}});
    }
    if (!registry.refusal(*algo, req).empty()) {
      continue;
    }
    each(*algo, stacks::lower(stacks, registry.generate(*algo, req), {topo, {}, *algo}), topo);
  }
}

} // namespace

TEST_CASE("NCCL cuts Simple ring chunks into two slices and everything else into one",
          "[stacks][nccl]") {
  using stacks::nccl_pieces;
  // sliceSize = max(roundUp(len / 2, 64 B), 1 MiB / 32): a 2 MiB chunk is two 1 MiB slices.
  CHECK(nccl_pieces(CollectiveKind::allreduce, Algo::ring, Proto::simple, 2 << 20) == 2);
  CHECK(nccl_pieces(CollectiveKind::allgather, Algo::ring, Proto::simple, 100000) == 2);
  CHECK(nccl_pieces(CollectiveKind::reduce_scatter, Algo::ring, Proto::simple, 40 << 10) == 2);
  CHECK(nccl_pieces(CollectiveKind::allreduce, Algo::ring, Proto::simple, 32 << 10) == 1);
  CHECK(nccl_pieces(CollectiveKind::bcast, Algo::ring, Proto::simple, 512 << 10) == 1);
  CHECK(nccl_pieces(CollectiveKind::allreduce, Algo::tree, Proto::simple, 2 << 20) == 1);
  // LL and LL128: cut-through, four pieces of at least 4 KiB.
  CHECK(nccl_pieces(CollectiveKind::allreduce, Algo::ring, Proto::ll, 32 << 10) == 4);
  CHECK(nccl_pieces(CollectiveKind::allreduce, Algo::tree, Proto::ll128, 9000) == 2);
  CHECK(nccl_pieces(CollectiveKind::allreduce, Algo::ring, Proto::ll, 1024) == 1);
  CHECK(stacks::slices_per_chunk(CollectiveKind::allreduce, Algo::ring) == 2);
  CHECK(stacks::slices_per_chunk(CollectiveKind::allreduce, Algo::nvls_tree) == 1);
}

TEST_CASE("the NCCL stack runs NCCL's algorithms and the direct stack the rest", "[stacks]") {
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  CHECK(stacks.names() == std::vector<std::string>{"nccl", "direct", "openmpi-4.1",
                                                   "openmpi-4.1+ucc", "openmpi-4.1+ucc+nccl",
                                                   "hpcx", "openmpi-5.0", "mpich-4",
                                                   "mvapich2-gdr"});
  CHECK(stacks.stack_for(registry.find(CollectiveKind::allreduce, "nccl_tree")).info().name ==
        "nccl");
  CHECK(stacks.stack_for(registry.find(CollectiveKind::allreduce, "nvls_tree")).info().name ==
        "nccl");
  CHECK(stacks.stack_for(registry.find(CollectiveKind::allreduce, "ring")).info().name == "direct");
  CHECK(stacks::nccl_algo_of(registry.find(CollectiveKind::allgather, "pat")) == Algo::pat);
  CHECK_THROWS_WITH(stacks.find("ncl"), Catch::Contains("did you mean 'nccl'"));
}

TEST_CASE("a large NCCL ring runs at link rate times the protocol's efficiency",
          "[stacks][nccl][pipeline]") {
  // busbw = 2(p-1)/p n / T; the pipeline's fill (2(p-1) steps of latency plus one slice) and the
  // launch are under 1 % of T at 1 GiB, so busbw is the link rate x payload bytes per wire byte.
  const std::uint32_t p = 4;
  const std::uint64_t n = 1ULL << 30;
  for (const auto& [protocol, efficiency] :
       {std::pair<const char*, double>{"simple", 1.0}, {"ll128", 120.0 / 128.0}, {"ll", 0.5}}) {
    const double t = ring(p, n, protocol).time;
    const double busbw = 2.0 * (p - 1) / p * static_cast<double>(n) / t;
    INFO(protocol);
    CHECK(busbw == Approx(kRate * efficiency).epsilon(0.01));
    CHECK(busbw <= kRate * efficiency);
  }
}

TEST_CASE("the ring pays its per-step latency once per pipeline step, not once per chunk",
          "[stacks][nccl][pipeline]") {
  // dT/dL, the number of per-step latencies L on the critical path, from doubling L.
  const std::uint32_t p = 4;
  const auto latencies = [&](std::uint64_t n) {
    const Run base = ring(p, n, "simple");
    core::NcclSpec twice;
    twice.simple.latency_factor = 2.0;
    const Run slow = ring(p, n, "simple", twice);
    const double l = base.lowered.header().protocol.inter_node_latency.value;
    REQUIRE(l > 0.0);
    REQUIRE(slow.lowered.header().protocol.inter_node_latency.value == Approx(2 * l));
    return (slow.time - base.time) / l;
  };
  // A small message is one piece per step: every one of the 2(p-1) steps waits for the previous
  // one, so dT/dL = 2(p-1) = 6 (NCCL's own latency term, nsteps x hwLat).
  CHECK(latencies(4096) == Approx(2.0 * (p - 1)).epsilon(1e-6));
  // 256 MiB: 32 loops of 4 chunks of 2 MiB, each sent as two 1 MiB slices (105 us on the wire at
  // 10 GB/s, more than L). Store-and-forward chunks would pay L on each of the 2(p-1) x 32 = 192
  // chunk steps; with NCCL's slices the next step's first slice has arrived while the link still
  // sends this step's second one, the link never idles, and only the last hop's L is left:
  // dT/dL = 1 (T = launch + 2(p-1)/p n / B + L + one slice's forwarding).
  CHECK(latencies(256ULL << 20) == Approx(1.0).epsilon(0.05));
}

TEST_CASE("NCCL-lowered schedules stay correct", "[stacks][nccl]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 7U}) {
    for (const std::uint64_t n :
         {std::uint64_t{3}, std::uint64_t{100000}, std::uint64_t{5} << 20}) {
      for (const char* protocol : {"simple", "ll", "ll128"}) {
        each_lowered(p, n, protocol,
                     [&](const auto& algo, const core::Schedule& s, const auto& topo) {
                       INFO(algo.name << " p=" << p << " n=" << n << " " << protocol);
                       CHECK(core::check_semantics(s).summary() == "");
                       // NCCL's flow control never deadlocks a lowered schedule (loggp reports a
                       // stall).
                       CHECK_NOTHROW(engines::LogGPEngine().run(s, topo, {}));
                     });
      }
    }
  }
}

TEST_CASE("the simgrid engine runs every lowered NCCL schedule, rate caps included",
          "[stacks][nccl][simgrid]") {
  // LL and LL128 lowerings bound each flow by one channel's rate (Protocol::stream_bandwidth);
  // SimGrid 3.32 aborted on a rate set after the comm's hosts, so every LL ring died there.
  const engines::SimgridEngine simgrid;
  for (const std::uint32_t p : {2U, 3U}) {
    for (const char* protocol : {"simple", "ll", "ll128"}) {
      each_lowered(p, 100000, protocol,
                   [&](const auto& algo, const core::Schedule& s, const auto& topo) {
                     INFO(algo.name << " p=" << p << " " << protocol);
                     const double loggp = engines::LogGPEngine().run(s, topo, {}).time.value;
                     const double flow = simgrid.run(s, topo, {}).time.value;
                     // A smoke bound, not agreement: on these small pipelined schedules simgrid's
                     // flows (each piece a max-min flow of its own, no FIFO credits) price 0.9x
                     // to 1.6x of loggp's LogGP ports (docs/engines.md, "loggp and simgrid on NCCL
                     // schedules").
                     CHECK(flow >= loggp * 0.5);
                     CHECK(flow <= loggp * 2.0);
                   });
    }
  }
}

TEST_CASE("the NCCL stack bounds each connection by NCCL's FIFO of NCCL_STEPS slots",
          "[stacks][nccl]") {
  // Simple ring allreduce: 8 steps / 2 steps per slice; LL: 8 steps x 4 cut-through pieces.
  CHECK(ring(4, 64 << 20, "simple").lowered.header().protocol.fifo_slots == 4);
  CHECK(ring(4, 1 << 20, "ll").lowered.header().protocol.fifo_slots == 32);
  CHECK(ring(4, 1 << 20, "ll128").lowered.header().protocol.fifo_slots == 32);
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const auto& bcast = registry.find(CollectiveKind::bcast, "nccl_ring");
  const auto topo = uniform(4);
  algorithms::Request req;
  req.collective = CollectiveKind::bcast;
  req.ranks = 4;
  req.bytes = core::Bytes{64 << 20};
  req.topology = &topo;
  req.params = algorithms::resolve_params(bcast, {{"protocol", "simple"}});
  // Broadcast: ProtoSimple<1, 1>, one step per slice.
  CHECK(stacks::lower(stacks, registry.generate(bcast, req), {topo, {}, bcast})
            .header()
            .protocol.fifo_slots == 8);
  // An MPI algorithm is not NCCL's: no flow control.
  const auto& plain = registry.find(CollectiveKind::allreduce, "ring");
  req.collective = CollectiveKind::allreduce;
  req.params = {};
  CHECK(stacks::lower(stacks, registry.generate(plain, req), {topo, {}, plain})
            .header()
            .protocol.fifo_slots == 0);
}

TEST_CASE("the network plugin's latency lengthens each inter-node step, twice with Simple",
          "[stacks][nccl]") {
  // tuning.cc: interLat += graph->latencyInter, and again with Simple (the flush of each received
  // step); the run charges each inter-node message the same, so a 4-rank LL ring of one piece per
  // step (dT/dL = 2(p-1) = 6, as above) grows by 6 L, a Simple one by 12 L.
  const std::uint32_t p = 4;
  core::NcclSpec plugin;
  plugin.net_latency = core::Seconds{75e-6};
  for (const auto& [protocol, times] :
       {std::pair<const char*, double>{"ll", 1.0}, {"ll128", 1.0}, {"simple", 2.0}}) {
    INFO(protocol);
    const Run base = ring(p, 4096, protocol);
    const Run slow = ring(p, 4096, protocol, plugin);
    CHECK(slow.lowered.header().protocol.inter_node_latency.value -
              base.lowered.header().protocol.inter_node_latency.value ==
          Approx(75e-6 * times));
    CHECK(slow.time - base.time == Approx(2.0 * (p - 1) * 75e-6 * times).epsilon(1e-6));
  }
}

TEST_CASE("a plugin's physical step is the whole step between nodes in the run", "[stacks][nccl]") {
  // nccl.net_step (LL, LL128) and net_step_simple are each inter-node message's latency, in
  // place of NCCL's NET constant and the reported net_latency (as AWS's tuner model prices a
  // step): a 4-rank ring's 2(p-1) steps, as above, each take 20 us (LL, LL128) or 23 us (Simple)
  // instead of NCCL's constant.
  const std::uint32_t p = 4;
  core::NcclSpec reported;
  reported.net_latency = core::Seconds{75e-6};
  core::NcclSpec physical = reported;
  physical.net_step = core::Seconds{20e-6};
  physical.net_step_simple = core::Seconds{23e-6};
  for (const auto& [protocol, step] :
       {std::pair<const char*, double>{"ll", 20e-6}, {"ll128", 20e-6}, {"simple", 23e-6}}) {
    INFO(protocol);
    const Run base = ring(p, 4096, protocol);
    const Run run = ring(p, 4096, protocol, physical);
    const double nccl_constant = base.lowered.header().protocol.inter_node_latency.value;
    CHECK(nccl_constant > 0.0);
    CHECK(run.lowered.header().protocol.inter_node_latency.value == Approx(step));
    CHECK(run.time - base.time == Approx(2.0 * (p - 1) * (step - nccl_constant)).epsilon(1e-6));
  }
  // Only Simple's figure given: LL keeps the reported latency.
  core::NcclSpec simple_only = reported;
  simple_only.net_step_simple = core::Seconds{23e-6};
  CHECK(ring(p, 4096, "ll", simple_only).time == Approx(ring(p, 4096, "ll", reported).time));
  CHECK(ring(p, 4096, "simple", simple_only).time ==
        Approx(ring(p, 4096, "simple", physical).time));
}

TEST_CASE(
    "the NCCL stack charges each network slice NCCL's proxy overhead, three times with Simple",
    "[stacks][nccl]") {
  // tuning.cc getNetOverhead: 1 us a network operation on Intel hosts, 2 us on AMD, x3 with
  // Simple; the proxy posts one per slice (net.cc), a Simple message here, and an LL128 slice is
  // kCutThroughPieces messages; one node, or a textbook platform, has no network proxy.
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const auto& algo = registry.find(CollectiveKind::allreduce, "nccl_ring");
  const auto proxy = [&](std::uint32_t nodes, const char* cpu, const char* protocol,
                         const char* net_overhead_ns = nullptr) {
    core::TopologySpec spec;
    spec.kind = "system";
    spec.system.nodes = nodes;
    spec.system.node.gpus = 4 / nodes;
    spec.system.node.nics = 1;
    spec.system.node.cpu.sockets = 2;
    spec.system.node.cpu.inter_socket = cpu;
    const auto topo = topologies::build(spec, 4);
    algorithms::Request req;
    req.ranks = 4;
    req.bytes = core::Bytes{1 << 20};
    req.topology = &topo;
    req.params = algorithms::resolve_params(algo, {{"protocol", protocol}, {"channels", "2"}});
    core::NcclSpec nccl;
    if (net_overhead_ns != nullptr) {
      nccl.env["NCCL_NET_OVERHEAD"] = net_overhead_ns;
    }
    const core::Schedule s =
        stacks::lower(stacks, registry.generate(algo, req), {topo, nccl, algo, &spec});
    return s.header().protocol.proxy_overhead.value;
  };
  CHECK(proxy(2, "infinity_fabric", "simple") == Approx(2e-6 * 3));
  // NCCL_NET_OVERHEAD (ns) replaces the CPU's post overhead, as in tuning.cc getNetOverhead.
  CHECK(proxy(2, "infinity_fabric", "simple", "500") == Approx(0.5e-6 * 3));
  CHECK(proxy(2, "upi", "ll128", "1500") == Approx(1.5e-6 / stacks::kCutThroughPieces));
  CHECK(proxy(2, "upi", "simple", "0") == 0.0);
  CHECK(proxy(2, "upi", "simple") == Approx(1e-6 * 3));
  CHECK(proxy(2, "infinity_fabric", "ll128") == Approx(2e-6 / stacks::kCutThroughPieces));
  CHECK(proxy(1, "infinity_fabric", "simple") == 0.0);
  CHECK(ring(4, 1 << 20, "simple").lowered.header().protocol.proxy_overhead.value == 0.0);
}

TEST_CASE("without PCIe peer-to-peer, two-way staged traffic keeps the host's duplex share",
          "[stacks][nccl]") {
  // shm.cc: the sender's kernel stores into a host buffer, the receiver's loads from it. A ring
  // (allreduce, allgather) on two GPUs moves data both ways and gets the share; a two-rank
  // broadcast or reduce moves it one way (rank 0 writes, rank 1 reads) and does not
  // (NVIDIA/nccl#384: broadcast 10.31 GB/s, allreduce 3.9 GB/s bus bandwidth on one box).
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const auto lowered = [&](CollectiveKind c, std::uint32_t p, bool p2p, double share) {
    core::TopologySpec spec;
    spec.kind = "system";
    spec.system.node.gpus = p;
    spec.system.node.pcie.gen = 3;
    spec.system.node.pcie.switches = 1;
    spec.system.node.pcie.p2p = p2p;
    spec.system.node.pcie.staged_duplex_efficiency = share;
    const auto topo = topologies::build(spec, p);
    const auto& algo = registry.find(c, "nccl_ring");
    algorithms::Request req;
    req.collective = c;
    req.ranks = p;
    req.bytes = core::Bytes{64 << 20};
    req.topology = &topo;
    req.params = algorithms::resolve_params(algo, {{"protocol", "simple"}, {"channels", "2"}});
    const core::Schedule s =
        stacks::lower(stacks, registry.generate(algo, req), {topo, {}, algo, &spec});
    return std::pair{s.header().protocol.intra_node_efficiency,
                     engines::LogGPEngine().run(s, topo, {}).time.value};
  };
  const double pci = 12.0 / 15.75; // NCCL's PCIe data rate of a Gen3 x16 link (topo.h)
  for (const CollectiveKind c : {CollectiveKind::allreduce, CollectiveKind::allgather}) {
    INFO(core::to_string(c));
    const auto [full_eff, full_time] = lowered(c, 2, false, 1.0);
    const auto [half_eff, half_time] = lowered(c, 2, false, 0.5);
    CHECK(full_eff == Approx(pci));
    CHECK(half_eff == Approx(0.5 * pci));
    CHECK(half_time > 1.9 * full_time); // the data time doubles, the latencies do not
    CHECK(half_time < 2.0 * full_time);
    CHECK(lowered(c, 2, true, 0.5).first == Approx(pci)); // peer-to-peer: nothing staged
  }
  // A chain of three moves data both ways at its middle GPU; one of two does not.
  CHECK(lowered(CollectiveKind::bcast, 2, false, 0.5).first == Approx(pci));
  CHECK(lowered(CollectiveKind::reduce, 2, false, 0.5).first == Approx(pci));
  CHECK(lowered(CollectiveKind::bcast, 3, false, 0.5).first == Approx(0.5 * pci));
}

TEST_CASE("NCCL on one rank copies with one cudaMemcpyAsync and launches no kernel",
          "[stacks][nccl]") {
  // src/device/onerank.cu ncclLaunchOneRank: out of place a cudaMemcpyAsync (5 us to submit),
  // no kernel, so not the Simple ring's base latency of 8.4 us; the copy at the copy rate.
  core::TopologySpec spec;
  spec.kind = "uniform";
  spec.endpoint.copy_bandwidth = core::Bandwidth{100e9};
  const auto topo = topologies::build(spec, 1);
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(CollectiveKind::allreduce, "nccl_ring");
  const auto stacks = stacks::default_stacks();
  const auto time = [&](std::uint64_t n) {
    algorithms::Request req;
    req.ranks = 1;
    req.bytes = core::Bytes{n};
    req.topology = &topo;
    req.params = algorithms::resolve_params(algo, {{"protocol", "simple"}, {"channels", "1"}});
    const core::Schedule s = stacks::lower(stacks, registry.generate(algo, req), {topo, {}, algo});
    return engines::LogGPEngine().run(s, topo, {}).time.value;
  };
  CHECK(time(8) == Approx(5e-6 + 8 / 100e9));
  CHECK(time(1 << 30) == Approx(5e-6 + (1 << 30) / 100e9));
}

TEST_CASE("NVLS gives each rank one connection per head, so its latency does not grow with ranks",
          "[stacks][nccl]") {
  // connect.cc connectNvls: nvls.up[h] for every head h (the NVLS graph's channels, at most
  // NCCL_MAX_NVLS_ARITY = 32), each with NCCL_STEPS slots; the kernel scatters one chunk per
  // head per loop. An 8-byte NVLS allreduce is one round trip through the switch at any rank
  // count: NCCL's model charges 25 us on one NVLink domain. With the slots of one connection, 72
  // shards went through 8 at a time: 37.5 us on 16 GPUs, 125 us on 72.
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const auto& algo = registry.find(CollectiveKind::allreduce, "nvls");
  const auto run = [&](std::uint32_t p) {
    core::TopologySpec spec;
    spec.kind = "system";
    spec.system.node.gpus = 72;
    spec.system.node.nvlink.kind = "switch";
    spec.system.node.nvlink.link_bandwidth = core::Bandwidth{50e9};
    spec.system.node.nvlink.links_per_gpu = 18;
    spec.system.node.nvlink.sharp = true;
    const auto topo = topologies::build(spec, p);
    algorithms::Request req;
    req.ranks = p;
    req.bytes = core::Bytes{8};
    req.topology = &topo;
    const core::Schedule s =
        stacks::lower(stacks, registry.generate(algo, req), {topo, {}, algo, &spec});
    return std::pair{s.header().protocol.fifo_slots,
                     engines::LogGPEngine().run(s, topo, {}).time.value};
  };
  const auto [slots8, time8] = run(8);
  const auto [slots72, time72] = run(72);
  CHECK(slots8 == 8 * 8);   // 8 heads x NCCL_STEPS
  CHECK(slots72 == 32 * 8); // NCCL_MAX_NVLS_ARITY heads x NCCL_STEPS
  CHECK(time8 == Approx(25e-6));
  CHECK(time72 == Approx(time8));
}

TEST_CASE("NCCL's own IB transport adds its measured step between nodes, a plugin's latency "
          "stands for its own",
          "[stacks][nccl]") {
  // Two nodes of one GPU, an 8 B ring LL allreduce: NCCL's LL base latency and two network steps.
  // NVIDIA/nccl-tests#150 measured 19.9 us on HDR InfiniBand, 6.65 us a step against NCCL's own
  // 2.7 (tuning.cc, NET ring LL): 3.95 us more per step where NCCL runs its IB verbs transport.
  const auto lowered = [](const std::string& kind, double net_latency_us) {
    core::TopologySpec spec;
    spec.kind = "system";
    spec.system.nodes = 2;
    spec.system.node.gpus = 1;
    spec.system.node.nics = 1;
    spec.system.node.nic_kind = kind;
    const auto topo = topologies::build(spec, 2);
    const auto registry = algorithms::make_default_registry();
    const auto& algo = registry.find(CollectiveKind::allreduce, "nccl_ring");
    algorithms::Request req;
    req.ranks = 2;
    req.bytes = core::Bytes{8};
    req.topology = &topo;
    req.params = algorithms::resolve_params(algo, {{"protocol", "ll"}, {"channels", "1"}});
    core::NcclSpec nccl;
    nccl.net_latency = core::Seconds{net_latency_us * 1e-6};
    return stacks::lower(stacks::default_stacks(), registry.generate(algo, req),
                         {topo, nccl, algo, &spec})
        .header()
        .protocol.inter_node_latency.value;
  };
  const double ncclnet = algorithms::nccl::hw_latency_us(algorithms::nccl::Hw::net, Algo::ring,
                                                         Proto::ll) *
                         1e-6; // NCCL's constant, 2.7 us
  for (const char* kind : {"ib_hdr", "ib_ndr", "roce", ""}) {
    INFO(kind);
    CHECK(lowered(kind, 0) == Approx(ncclnet + 3.95e-6));
  }
  // Through a plugin: its reported latency, not the IB transport's step.
  CHECK(lowered("efa", 75) == Approx(ncclnet + 75e-6));
  CHECK(lowered("tcpxo", 0) == Approx(ncclnet));
  CHECK(lowered("ib_hdr", 10) == Approx(ncclnet + 10e-6));
}

TEST_CASE("a tree Simple block runs at NCCL's per-channel tree bound, not half of it",
          "[stacks][nccl]") {
  // tuning.cc: Tree's bus bandwidth is at most graph channels x perChMaxTreeBw (Ampere on two
  // nodes: 23.6 GB/s), and connect.cc runs each search channel as two blocks. Each block gets the
  // bound (until 2026-12-08 it got half: 4 x 23.6 / 8 = 11.8 GB/s on 2 x p4d): a slice that
  // travels alone is not slowed by its duplicate (docs/validation.md, "p4d and p4de run Simple
  // only"), and where the blocks run together the links and NICs they share bound them.
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(CollectiveKind::allreduce, "nccl_tree");
  core::Scenario s = io::load_scenario("aws-p4d");
  const core::Topology t = topologies::build(s.topology, 16);
  algorithms::Request req;
  req.ranks = 16;
  req.bytes = core::Bytes{std::uint64_t{8} << 20};
  req.topology = &t;
  req.params = algorithms::resolve_params(algo, {{"channels", "8"}, {"protocol", "simple"}});
  const auto stacks = stacks::default_stacks();
  const core::Schedule lowered =
      stacks::lower(stacks, registry.generate(algo, req), {t, s.nccl, algo, &s.topology});
  CHECK(lowered.header().protocol.stream_bandwidth.bytes_per_second == Approx(23.6e9));
}

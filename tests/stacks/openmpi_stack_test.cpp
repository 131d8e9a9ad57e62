// The Open MPI 4.1 stacks: coll/cuda's host staging of device reductions (formula in the test),
// the GPU-direct paths that leave a schedule alone, the UCC + NCCL stack handing the call to the
// NCCL stack, and the names and refusals of the registry.

#include "collsim/stacks/stack.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include "stack_test_support.hpp"

#include "../../stacks/src/mpi_paths.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using collsim::testing::gpu_nodes;
using collsim::testing::lower;
using collsim::testing::Lowered;
using core::CollectiveKind;

namespace {

constexpr double kCore = testing::kCoreBandwidth;

} // namespace

TEST_CASE("openmpi-4.1 stages a device allreduce: copies, faults, CPU reductions, copies back",
          "[stacks][openmpi]") {
  const auto spec = gpu_nodes(1, 2);
  const auto topo = topologies::build(spec, 2);
  const core::Device& gpu = topo.devices()[topo.device_of(0)];
  const core::RouteCost pcie = topo.route_cost_between(topo.device_of(0), gpu.host);
  const double l = pcie.latency.value;
  // The DMA at PCIe's data rate: 12 GB/s of a Gen3 x16's 15.75 (NCCL's topo.h figure).
  const double b = pcie.bottleneck.bytes_per_second * 12.0 / 15.75;
  const double copy = kCore / 2;
  const double reduce = kCore / 3;
  const double fault = 1e-6 / 4096;
  for (const std::uint64_t n : {std::uint64_t{64} << 20, std::uint64_t{1} << 20}) {
    CAPTURE(n);
    const double m = static_cast<double>(n);
    // Two fresh buffers staged in (DMA, then the CPU's copy out of the pinned buffer, with page
    // faults above glibc's 32 MiB mmap threshold), a two-rank ring on the host (each step a
    // shared-memory copy of half the vector, the first also a reduction), the result copied
    // into the pinned buffer and sent back.
    const double faults = n >= (32ULL << 20) ? 2 * m * fault : 0.0;
    const double calls = 3 * 6.5e-6; // three synchronous cudaMemcpy calls (GDRCopy's README)
    const double expected = 2 * l + 2 * m / b + 4 * m / copy + faults + m / 2 / reduce + calls;
    const Lowered run = lower("openmpi-4.1", CollectiveKind::allreduce, "ring", 2, n, spec);
    // calc operations keep whole nanoseconds.
    CHECK(run.time == Approx(expected).margin(10e-9));
    CHECK(run.schedule.participants() == 4);
    CHECK(run.schedule.header().agents == std::vector<std::string>{"node0/cpu0", "node0/cpu0"});
    CHECK(core::validate(run.schedule).ok());
    CHECK(core::check_semantics(run.schedule).ok());
  }
}

TEST_CASE("openmpi-4.1 leaves host buffers and non-reductions alone", "[stacks][openmpi]") {
  const auto spec = gpu_nodes(2, 2);
  const auto registry = algorithms::make_default_registry();
  const auto topo = topologies::build(spec, 4);
  const auto plain = [&](CollectiveKind c, const char* name) {
    const auto& algo = registry.find(c, name);
    algorithms::Request req;
    req.collective = c;
    req.ranks = 4;
    req.bytes = core::Bytes{1 << 20};
    req.topology = &topo;
    return registry.generate(algo, req);
  };
  // Host buffers: the operations as generated, under UCX's tag protocols (rendezvous above
  // its auto threshold's floor, 8 KiB: mpi_env.hpp).
  core::Protocol ucx;
  ucx.rendezvous_bytes = 8192;
  const auto over_ucx = [&](CollectiveKind c, const char* name) {
    core::Schedule s = plain(c, name);
    s.set_protocol(ucx);
    return s;
  };
  CHECK(lower("openmpi-4.1", CollectiveKind::allreduce, "rabenseifner", 4, 1 << 20, spec,
              stacks::Buffers::host)
            .schedule == over_ucx(CollectiveKind::allreduce, "rabenseifner"));
  CHECK(lower("openmpi-4.1", CollectiveKind::allgather, "ring", 4, 1 << 20, spec,
              stacks::Buffers::host)
            .schedule == over_ucx(CollectiveKind::allgather, "ring"));
  // A device allgather is GPU-direct (no staging): the operations as generated, plus the start
  // of a cuda_ipc copy before each rendezvous send to the node's other GPU (ranks 0 and 2 send
  // their three 256 KiB blocks inside their node: 6 copies).
  CHECK(lower("openmpi-4.1", CollectiveKind::allgather, "ring", 4, 1 << 20, spec)
            .schedule.op_count() == plain(CollectiveKind::allgather, "ring").op_count() + 6);
  // UCC's tl/ucp runs on the device buffers, reducing on the GPU: the operations as generated
  // plus one host-blocking CUDA call after each reduction step (Rabenseifner on 4 ranks: two
  // reduce-scatter steps) and one cuda_ipc copy start before each send inside a node (each
  // rank's first reduce-scatter step and last allgather step), with a port per link (UCX
  // cuda_ipc's per-peer streams) and the links' data rates.
  const core::Schedule ucc =
      lower("openmpi-4.1+ucc", CollectiveKind::allreduce, "rabenseifner", 4, 1 << 20, spec)
          .schedule;
  const core::Schedule generated = plain(CollectiveKind::allreduce, "rabenseifner");
  core::Protocol direct;
  direct.port_per_link = true;
  direct.intra_node_efficiency = 12.0 / 15.75; // PCIe, no NVLink in this node
  direct.rendezvous_bytes = 8192;              // UCX's rendezvous for GPU memory too
  CHECK(ucc.header().protocol == direct);
  CHECK(ucc.op_count() == generated.op_count() + 4 * 2 + 4 * 2);
  CHECK(core::check_semantics(ucc).ok());
  // Host buffers: as generated, over UCX.
  CHECK(lower("openmpi-4.1+ucc", CollectiveKind::allreduce, "rabenseifner", 4, 1 << 20, spec,
              stacks::Buffers::host)
            .schedule == over_ucx(CollectiveKind::allreduce, "rabenseifner"));
}

TEST_CASE("UCC pays one host-blocking CUDA call per reduction step on device buffers",
          "[stacks][openmpi]") {
  // ec/cuda's reduce_multi launches a kernel and synchronises the stream once per step, over all
  // of the step's copies: sra_knomial at radix 4 on 4 GPUs reduces three copies in one step (one
  // call), recursive doubling on 4 GPUs reduces once in each of two steps (two calls), and
  // each call (6.5 us, GDRCopy's figure for a synchronous CUDA call) lies on the critical path.
  // (The other calc operations are UCX's GDRCopy copies of these short messages.)
  const auto spec = gpu_nodes(1, 4);
  const auto is_call = [](const core::Schedule& s, core::OpId id) {
    return s.kind(id) == core::OpKind::calc && s.calc_ns(id) == 6500; // 6.5 us
  };
  const auto calls = [&](const char* algorithm) {
    const auto ucc = lower("openmpi-4.1+ucc", CollectiveKind::allreduce, algorithm, 4, 4096, spec);
    std::size_t n = 0;
    for (core::OpId id = 0; id < ucc.schedule.op_count(); ++id) {
      n += is_call(ucc.schedule, id) ? 1 : 0;
    }
    return n;
  };
  CHECK(calls("sra_knomial") == 4 * 1);
  CHECK(calls("recursive_doubling") == 4 * 2);
  // The same schedule with each call's operation made free: exactly two calls later.
  const auto ucc =
      lower("openmpi-4.1+ucc", CollectiveKind::allreduce, "recursive_doubling", 4, 8, spec);
  core::Schedule free_calls(ucc.schedule.header());
  for (core::Rank r = 0; r < ucc.schedule.participants(); ++r) {
    free_calls.begin_rank(r);
    for (core::OpId id = ucc.schedule.rank_begin(r); id < ucc.schedule.rank_end(r); ++id) {
      const auto k = ucc.schedule.kind(id);
      if (k == core::OpKind::calc) {
        free_calls.calc(is_call(ucc.schedule, id) ? core::Seconds{0.0} : ucc.schedule.calc_time(id),
                        ucc.schedule.deps(id));
      } else {
        free_calls.add(k, ucc.schedule.peer(id), ucc.schedule.target(id), core::Range{},
                       ucc.schedule.deps(id));
      }
    }
  }
  free_calls.finish();
  const auto topo = topologies::build(spec, 4);
  const double without = engines::LogGPEngine().run(free_calls, topo, {}).time.value;
  CHECK(ucc.time == Approx(without + 2 * 6.5e-6).epsilon(1e-9));
}

TEST_CASE("staged schedules keep every reduction's semantics", "[stacks][openmpi]") {
  const auto spec = gpu_nodes(2, 4);
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const stacks::Stack& ompi = stacks.find("openmpi-4.1");
  int checked = 0;
  for (const CollectiveKind c :
       {CollectiveKind::allreduce, CollectiveKind::reduce, CollectiveKind::reduce_scatter}) {
    for (const auto* algo : registry.list(c)) {
      if (!ompi.runs(*algo)) {
        continue;
      }
      for (const std::uint32_t p : {1U, 2U, 3U, 5U, 8U}) {
        const auto topo = topologies::build(spec, p);
        for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{24}, std::uint64_t{1000}}) {
          algorithms::Request req;
          req.collective = c;
          req.ranks = p;
          req.bytes = core::Bytes{n};
          req.root = p > 1 ? 1 : 0;
          req.topology = &topo;
          if (!registry.refusal(*algo, req).empty()) {
            continue;
          }
          const core::Schedule s = registry.generate(*algo, req);
          if (!s.header().agents.empty()) {
            CHECK_THROWS_AS(stacks::lower(stacks, s, {topo, {}, *algo, &spec}, "openmpi-4.1"),
                            core::UsageError);
            continue;
          }
          CAPTURE(algo->name, p, n);
          const core::Schedule lowered =
              stacks::lower(stacks, s, {topo, {}, *algo, &spec}, "openmpi-4.1");
          REQUIRE(lowered.header().agents.size() == p);
          const auto v = core::validate(lowered);
          INFO(v.summary());
          INFO(core::print_schedule(lowered));
          REQUIRE(v.ok());
          const auto sem = core::check_semantics(lowered);
          INFO(sem.summary());
          REQUIRE(sem.ok());
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("openmpi-4.1+ucc+nccl lowers as the NCCL stack", "[stacks][openmpi]") {
  const auto spec = gpu_nodes(2, 2);
  CHECK(lower("openmpi-4.1+ucc+nccl", CollectiveKind::allreduce, "nccl_ring", 4, 1 << 22, spec)
            .schedule ==
        lower("nccl", CollectiveKind::allreduce, "nccl_ring", 4, 1 << 22, spec).schedule);
}

TEST_CASE("openmpi-4.1+ucc+nccl is NCCL plus the MPI and UCC call cost", "[stacks][openmpi]") {
  // UCC + NCCL = NCCL + the per-call cost of MPI's entry and UCC's task set-up
  // (mpi.call_overhead), once at the start of every rank.
  const auto spec = gpu_nodes(2, 2);
  core::MpiSpec mpi;
  mpi.call_overhead = core::Seconds{7e-6};
  const auto time = [&](const char* stack) {
    return lower(stack, CollectiveKind::allreduce, "nccl_ring", 4, 1 << 22, spec,
                 stacks::Buffers::device, &mpi)
        .time;
  };
  CHECK(time("openmpi-4.1+ucc+nccl") == Approx(time("nccl") + 7e-6).epsilon(1e-9));
}

TEST_CASE("stacks are found by name and refuse what their library does not run",
          "[stacks][openmpi]") {
  const auto stacks = stacks::default_stacks();
  const auto registry = algorithms::make_default_registry();
  const auto& ring = registry.find(CollectiveKind::allreduce, "ring");
  const auto& nccl_ring = registry.find(CollectiveKind::allreduce, "nccl_ring");
  CHECK(stacks.names() == std::vector<std::string>{"nccl", "direct", "openmpi-4.1",
                                                   "openmpi-4.1+ucc", "openmpi-4.1+ucc+nccl",
                                                   "hpcx", "openmpi-5.0", "mpich-4",
                                                   "mvapich2-gdr"});
  // With no stack named, the library stacks never run anything.
  CHECK(stacks.resolve("", ring).info().name == "direct");
  CHECK(stacks.resolve("", nccl_ring).info().name == "nccl");
  CHECK(stacks.resolve("openmpi-4.1", ring).info().chooser == stacks::Chooser::ompi41);
  CHECK(stacks.resolve("openmpi-4.1+ucc", ring).info().chooser == stacks::Chooser::ucc);
  CHECK_THROWS_WITH(stacks.resolve("openmpi-4.1", nccl_ring),
                    Catch::Contains("runs MPI algorithms; nccl_ring is NCCL's"));
  CHECK_THROWS_WITH(stacks.resolve("openmpi-4.1+ucc+nccl", ring),
                    Catch::Contains("ring is not one of NCCL's algorithms"));
  CHECK_THROWS_AS(stacks.resolve("openmpi-4", ring), core::UnknownNameError);
  CHECK_THROWS_WITH(stacks.resolve("openmpi-4", ring), Catch::Contains("openmpi-4.1"));
  CHECK(stacks::buffers_from_name("host") == stacks::Buffers::host);
  CHECK_THROWS_AS(stacks::buffers_from_name("gpu"), core::UsageError);
}

TEST_CASE("UCX copies short device messages through GDRCopy, long ones go by rendezvous",
          "[stacks][openmpi]") {
  const auto spec = gpu_nodes(1, 2);
  // A 2-rank broadcast of 4 KiB (eager) and of 64 KiB (rendezvous): one message.
  const Lowered eager = lower("openmpi-4.1", CollectiveKind::bcast, "linear", 2, 4096, spec);
  const Lowered rndv = lower("openmpi-4.1", CollectiveKind::bcast, "linear", 2, 65536, spec);
  CHECK(eager.schedule.header().protocol.rendezvous_bytes == 8192); // UCX_RNDV_THRESH auto
  CHECK(rndv.schedule.header().protocol.rendezvous_bytes == 8192);
  // Eager: the root's CPU reads the 4 KiB out of its GPU, sends, and the receiver's CPU writes
  // them into its GPU; GDRCopy's figures: 0.9069 us + m / 530.135 MB/s and 0.0889 us + m /
  // 9638.54 MB/s.
  const core::Schedule& s = eager.schedule;
  REQUIRE(s.op_count() == 4);
  CHECK(s.kind(s.rank_begin(0)) == core::OpKind::calc);
  CHECK(s.calc_time(s.rank_begin(0)).value ==
        Approx(0.9069e-6 + 4096 / 530.135e6).epsilon(0).margin(0.5e-9)); // whole nanoseconds
  CHECK(s.kind(s.rank_begin(0) + 1) == core::OpKind::send);
  CHECK(s.kind(s.rank_begin(1)) == core::OpKind::recv);
  CHECK(s.kind(s.rank_begin(1) + 1) == core::OpKind::calc);
  CHECK(s.calc_time(s.rank_begin(1) + 1).value ==
        Approx(0.0889e-6 + 4096 / 9638.54e6).epsilon(0).margin(0.5e-9));
  CHECK(core::check_semantics(s).ok());
  // Rendezvous between two GPUs of the node: one cuda_ipc copy, started (2 us, a small peer
  // copy's latency) before the message moves.
  const core::Schedule& r = rndv.schedule;
  REQUIRE(r.op_count() == 3);
  CHECK(r.kind(r.rank_begin(0)) == core::OpKind::calc);
  CHECK(r.calc_time(r.rank_begin(0)).value == Approx(2.0e-6));
  CHECK(r.kind(r.rank_begin(0) + 1) == core::OpKind::send);
  CHECK(r.kind(r.rank_begin(1)) == core::OpKind::recv);
  const Lowered host =
      lower("openmpi-4.1", CollectiveKind::bcast, "linear", 2, 4096, spec, stacks::Buffers::host);
  CHECK(host.schedule.op_count() == 2);
  CHECK(eager.time > host.time + 0.9e-6 + 4096 / 530.135e6);
  // A rank's reads go one after another: a root sending 4 KiB to 3 ranks reads three times.
  const Lowered three =
      lower("openmpi-4.1", CollectiveKind::bcast, "linear", 4, 4096, gpu_nodes(1, 4));
  CHECK(three.time > 3 * (0.9069e-6 + 4096 / 530.135e6));
  CHECK(core::check_semantics(three.schedule).ok());
}

TEST_CASE("UCX's cuda_ipc copies to one peer go one after another, to others beside them",
          "[stacks][openmpi]") {
  // Rank 0 broadcasts 128 KiB: to rank 1 in two 64 KiB halves, to rank 2 whole, all GPUs of
  // one node, and to rank 3 on the other node whole (GPUDirect RDMA: no cuda_ipc copy). UCX
  // queues a pair's copies on one stream (src/uct/cuda/cuda_ipc/cuda_ipc_ep.c: one
  // cuMemcpyDtoDAsync per message on the stream of the pair): the second copy to rank 1 starts
  // after the first has moved its data; the copy to rank 2 waits for neither.
  const auto topo = topologies::build(gpu_nodes(2, 3), 4);
  core::ScheduleHeader h;
  h.collective = CollectiveKind::bcast;
  h.ranks = 4;
  h.bytes = core::Bytes{131072};
  h.data_bytes = 131072;
  core::Schedule s(h);
  const core::Range whole{core::Buffer::data, 0, 131072};
  const core::Range first{core::Buffer::data, 0, 65536};
  const core::Range second{core::Buffer::data, 65536, 65536};
  s.begin_rank(0);
  s.send(1, first);
  s.send(1, second);
  s.send(2, whole);
  s.send(3, whole);
  s.begin_rank(1);
  s.recv(0, first);
  s.recv(0, second);
  s.begin_rank(2);
  s.recv(0, whole);
  s.begin_rank(3);
  s.recv(0, whole);
  s.finish();
  REQUIRE(core::check_semantics(s).ok());
  const core::Schedule out = stacks::detail::ucx_copies(s, 8192, topo);
  // Rank 0: start, send to 1, start (after that send), send to 1, start, send to 2, send to 3.
  const core::OpId b = out.rank_begin(0);
  REQUIRE(out.rank_end(0) - b == 7);
  const std::vector<core::OpKind> kinds{core::OpKind::calc, core::OpKind::send, core::OpKind::calc,
                                        core::OpKind::send, core::OpKind::calc, core::OpKind::send,
                                        core::OpKind::send};
  for (core::OpId i = 0; i < kinds.size(); ++i) {
    CHECK(out.kind(b + i) == kinds[i]);
  }
  CHECK(out.calc_time(b).value == Approx(stacks::detail::kCudaIpcCopySeconds));
  CHECK(out.deps(b + 1).size() == 1);
  CHECK(out.deps(b + 1)[0] == 0);
  CHECK(std::vector<std::uint32_t>(out.deps(b + 2).begin(), out.deps(b + 2).end()) ==
        std::vector<std::uint32_t>{1}); // the pair's previous copy
  CHECK(out.deps(b + 4).empty());       // another peer's stream
  CHECK(out.peer(b + 6) == 3);
  CHECK(out.deps(b + 6).empty());                  // between nodes: no copy start
  CHECK(out.rank_end(1) - out.rank_begin(1) == 2); // receives as generated
  CHECK(core::check_semantics(out).ok());
  // Timed: the second message to rank 1 lands no earlier than two starts and two transfers.
  const auto res = engines::LogGPEngine{}.run(out, topo, {});
  CHECK(res.time.value > 2 * stacks::detail::kCudaIpcCopySeconds);
}

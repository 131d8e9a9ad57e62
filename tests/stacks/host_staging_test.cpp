// Host staging's agents run the algorithm's programs as generated (core::Schedule::append_program)
// and the engines charge each agent's shared-memory copy before its send to another agent of the
// node (core::Protocol::agents_copy). The test rebuilds the lowered schedule with an explicit calc
// of length / copy rate before every such send (what the stack generated until 2026-12-07) and
// checks that both engines time the two alike.

#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"

#include "stack_test_support.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace collsim;
using core::OpKind;
using core::Rank;

namespace {

/// `s` with agents_copy off and a calc before each agent-to-agent send inside a node instead.
core::Schedule with_explicit_copies(const core::Schedule& s, const core::Topology& t) {
  core::ScheduleHeader h = s.header();
  h.protocol.agents_copy = false;
  core::Schedule out(h);
  const auto node = [&](Rank q) {
    return q < s.ranks() ? t.devices()[t.device_of(q)].node
                         : t.devices()[*t.find_device(h.agents[q - s.ranks()])].node;
  };
  for (Rank r = 0; r < s.participants(); ++r) {
    out.begin_rank(r);
    const bool agent = r >= s.ranks();
    const double copy = agent ? t.devices()[*t.find_device(h.agents[r - s.ranks()])]
                                    .endpoint.copy_bandwidth.bytes_per_second
                              : 0.0;
    std::vector<std::uint32_t> local(s.rank_end(r) - s.rank_begin(r));
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      std::vector<std::uint32_t> deps;
      for (const std::uint32_t d : s.deps(id)) {
        deps.push_back(local[d]);
      }
      out.set_stream(s.stream(id));
      const OpKind k = s.kind(id);
      if (k == OpKind::calc) {
        local[id - s.rank_begin(r)] = out.calc(s.calc_time(id), deps);
        continue;
      }
      const bool message = k == OpKind::send || k == OpKind::recv || k == OpKind::recv_reduce;
      if (k == OpKind::send && agent && s.peer(id) >= s.ranks() && node(s.peer(id)) == node(r)) {
        const double m = static_cast<double>(s.length(id));
        deps.assign(1, out.calc(core::Seconds{m / copy}, deps));
      }
      local[id - s.rank_begin(r)] =
          out.add(k, message ? s.peer(id) : 0, s.target(id), s.source(id), deps);
    }
  }
  out.finish();
  return out;
}

} // namespace

TEST_CASE("engines charge a staging agent's shared-memory copy as a calc before its send",
          "[stacks][openmpi]") {
  const auto registry = algorithms::make_default_registry();
  const auto all = stacks::default_stacks();
  // 2 nodes of 4 GPUs: the ring and Rabenseifner's steps inside a node copy, those between
  // nodes do not; 5 ranks leave one node partly used.
  const auto spec = testing::gpu_nodes(2, 4);
  for (const char* algorithm : {"ring", "rabenseifner", "recursive_doubling"}) {
    for (const std::uint32_t p : {2U, 5U, 8U}) {
      for (const std::uint64_t n : {std::uint64_t{4096}, std::uint64_t{8} << 20}) {
        CAPTURE(algorithm, p, n);
        const auto topo = topologies::build(spec, p);
        const auto& algo = registry.find(core::CollectiveKind::allreduce, algorithm);
        algorithms::Request req;
        req.ranks = p;
        req.bytes = core::Bytes{n};
        req.topology = &topo;
        const core::Schedule lowered = stacks::lower(all, registry.generate(algo, req),
                                                     {topo, {}, algo, &spec}, "openmpi-4.1");
        REQUIRE(lowered.header().protocol.agents_copy);
        REQUIRE(lowered.participants() == 2 * p);
        CHECK(core::check_semantics(lowered).ok());
        const core::Schedule explicit_copies = with_explicit_copies(lowered, topo);
        // The calcs keep whole nanoseconds; the engines' copies do not.
        const double loggp = engines::LogGPEngine().run(lowered, topo, {}).time.value;
        CHECK(
            loggp ==
            Approx(engines::LogGPEngine().run(explicit_copies, topo, {}).time.value).margin(1e-8));
        const double simgrid = engines::SimgridEngine().run(lowered, topo, {}).time.value;
        CHECK(simgrid == Approx(engines::SimgridEngine().run(explicit_copies, topo, {}).time.value)
                             .margin(1e-8));
        // The copies are there: without them the run is faster (with 5 ranks a small message's
        // critical path may miss them: Rabenseifner's and recursive doubling's extra rank).
        if (p != 5) {
          core::Schedule free_copies = lowered;
          core::Protocol pr = free_copies.header().protocol;
          pr.agents_copy = false;
          free_copies.set_protocol(pr);
          CHECK(engines::LogGPEngine().run(free_copies, topo, {}).time.value < loggp);
        }
      }
    }
  }
}

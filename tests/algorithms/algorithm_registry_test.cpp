#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using algorithms::AlgorithmInfo;
using algorithms::Registry;
using core::CollectiveKind;

namespace {

/// A registry with one parameterised algorithm, for the parameter checks (the shipped allreduce
/// algorithms take none).
Registry registry_with_parameters() {
  Registry reg;
  AlgorithmInfo a = algorithms::make_default_registry().find(CollectiveKind::allreduce, "ring");
  a.name = "segmented";
  a.aliases = {};
  a.params = {{"segment_size", 8192, 1, 1 << 30, "bytes per segment"},
              {"channels", 1, 1, 32, "parallel rings"}};
  reg.add(a);
  return reg;
}

} // namespace

TEST_CASE("the default registry lists the allreduce algorithms in Open MPI id order",
          "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  std::vector<std::string> names;
  for (const auto* a : reg.list(CollectiveKind::allreduce)) {
    names.push_back(a->name);
    CHECK(a->collective == CollectiveKind::allreduce);
    CHECK_FALSE(a->summary.empty());
    CHECK_FALSE(a->source.empty());
    CHECK_FALSE(a->cost_formula.empty());
  }
  // The first four were the first written; every Open MPI coll/tuned allreduce id (4.1 and 5.0:
  // 1 basic_linear .. 7 allgather_reduce) names one algorithm.
  REQUIRE(names.size() >= 4);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 4) ==
        std::vector<std::string>{"reduce_bcast", "recursive_doubling", "ring", "rabenseifner"});
  const std::vector<std::string> ompi{
      "basic_linear",   "reduce_bcast", "recursive_doubling", "ring",
      "segmented_ring", "rabenseifner", "allgather_reduce"};
  for (std::size_t id = 1; id <= ompi.size(); ++id) {
    CAPTURE(id);
    CHECK(reg.find(CollectiveKind::allreduce, "ompi:" + std::to_string(id)).name == ompi[id - 1]);
  }
}

TEST_CASE("library aliases find the algorithm they name", "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  CHECK(reg.find(CollectiveKind::allreduce, "ompi:4").name == "ring");
  CHECK(reg.find(CollectiveKind::allreduce, "smpi:lr").name == "ring");
  CHECK(reg.find(CollectiveKind::allreduce, "mpich:recursive_doubling").name ==
        "recursive_doubling");
  CHECK(reg.find(CollectiveKind::allreduce, "ompi:6").name == "rabenseifner");
  CHECK(reg.find(CollectiveKind::allreduce, "ompi:nonoverlapping").name == "reduce_bcast");
  for (const auto* a : reg.list()) {
    for (const auto& alias : a->aliases) {
      CHECK(reg.try_find(a->collective, alias) == a);
    }
    CHECK(reg.try_find(a->collective, a->name) == a);
  }
}

TEST_CASE("names are matched exactly and per collective", "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  CHECK(reg.try_find(CollectiveKind::allreduce, "Ring") == nullptr);
  CHECK(reg.try_find(CollectiveKind::allreduce, "ring ") == nullptr);
  CHECK(reg.try_find(CollectiveKind::bcast, "ring") == nullptr);
}

TEST_CASE("an unknown algorithm name lists the valid ones and the closest",
          "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  try {
    (void)reg.find(CollectiveKind::allreduce, "rign");
    FAIL("no exception");
  } catch (const core::UnknownNameError& e) {
    CHECK(std::string(e.what()).starts_with(
        "unknown allreduce algorithm 'rign' (did you mean 'ring'?); valid values are: "
        "reduce_bcast, recursive_doubling, ring, rabenseifner, "));
    CHECK(e.valid().size() == reg.list(CollectiveKind::allreduce).size());
  }
  try {
    (void)reg.find(CollectiveKind::allreduce, "bruck");
    FAIL("no exception");
  } catch (const core::UnknownNameError& e) {
    CHECK(std::string(e.what()).starts_with(
        "unknown allreduce algorithm 'bruck'; valid values are: "
        "reduce_bcast, recursive_doubling, ring, rabenseifner, "));
  }
}

TEST_CASE("refusal fills in parameter defaults", "[algorithms][registry]") {
  const Registry reg = registry_with_parameters();
  const auto& algo = reg.find(CollectiveKind::allreduce, "segmented");
  auto req = testing::allreduce_request(4, 100);
  req.params["channels"] = 4;
  CHECK(reg.refusal(algo, req).empty());
  CHECK(req.params == std::map<std::string, std::int64_t>{{"channels", 4}, {"segment_size", 8192}});
}

TEST_CASE("parameters out of range are refused with the range", "[algorithms][registry]") {
  const Registry reg = registry_with_parameters();
  const auto& algo = reg.find(CollectiveKind::allreduce, "segmented");
  auto req = testing::allreduce_request(4, 100);
  req.params["segment_size"] = 0;
  CHECK(reg.refusal(algo, req) == "parameter 'segment_size' = 0 is out of range [1, 1073741824]");
  CHECK_THROWS_WITH(reg.generate(algo, req),
                    "segmented: parameter 'segment_size' = 0 is out of range [1, 1073741824]");
  CHECK_THROWS_AS(reg.generate(algo, req), core::UsageError);
  req.params["segment_size"] = 4096;
  req.params["channels"] = 33;
  CHECK(reg.refusal(algo, req) == "parameter 'channels' = 33 is out of range [1, 32]");
}

TEST_CASE("unknown parameters are refused with a suggestion", "[algorithms][registry]") {
  const Registry reg = registry_with_parameters();
  const auto& algo = reg.find(CollectiveKind::allreduce, "segmented");
  auto req = testing::allreduce_request(4, 100);
  req.params["segment-size"] = 1024;
  CHECK(reg.refusal(algo, req) == "unknown parameter 'segment-size' (did you mean "
                                  "'segment_size'?); valid parameters are: segment_size, channels");
  const Registry plain = algorithms::make_default_registry();
  auto ring_req = testing::allreduce_request(4, 100);
  ring_req.params["segment_size"] = 1024;
  CHECK(plain.refusal(plain.find(CollectiveKind::allreduce, "ring"), ring_req) ==
        "unknown parameter 'segment_size': ring takes no parameters");
}

TEST_CASE("requests without ranks, with a root outside them or for another collective are refused",
          "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  const auto& ring = reg.find(CollectiveKind::allreduce, "ring");
  auto req = testing::allreduce_request(0, 100);
  CHECK(reg.refusal(ring, req) == "ranks must be at least 1 (got 0)");
  CHECK_THROWS_WITH(reg.generate(ring, req), "ring: ranks must be at least 1 (got 0)");
  req = testing::allreduce_request(4, 100);
  req.root = 4;
  CHECK(reg.refusal(ring, req) == "root 4 is not a rank: ranks are 0..3");
  req = testing::allreduce_request(4, 100);
  req.collective = CollectiveKind::bcast;
  CHECK(reg.refusal(ring, req) == "'ring' is an allreduce algorithm; the request is for bcast");
  CHECK_THROWS_AS(reg.cost(ring, req), core::UsageError);
}

TEST_CASE("schedules with more operations than the IR holds are refused before generating",
          "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  const auto& ring = reg.find(CollectiveKind::allreduce, "ring");
  auto req = testing::allreduce_request(1U << 16, 100);
  CHECK(reg.refusal(ring, req) ==
        "the schedule would need 17179607040 operations; a schedule holds at most 1073741824");
  CHECK_THROWS_WITH(reg.generate(ring, req),
                    "ring: the schedule would need 17179607040 operations; a schedule holds at "
                    "most 1073741824");
  // 4p(p-1) fits up to p = 16384.
  req = testing::allreduce_request(16384, 100);
  CHECK(reg.refusal(ring, req).empty());
  req = testing::allreduce_request(16385, 100);
  CHECK_FALSE(reg.refusal(ring, req).empty());
  req = testing::allreduce_request(1U << 20, 100);
  CHECK(reg.refusal(reg.find(CollectiveKind::allreduce, "recursive_doubling"), req).empty());
}

TEST_CASE("generate stamps the canonical name and the request on the header",
          "[algorithms][registry]") {
  const Registry reg = algorithms::make_default_registry();
  // In-network algorithms need switches: a cluster of 2 ranks per node whose switches reduce.
  core::ClusterSpec spec;
  spec.devices_per_node = 2;
  spec.node_switch_reduces = true;
  spec.network_switch_reduces = true;
  const core::Topology cluster = topologies::build_cluster(spec, core::EndpointSpec{}, 4);
  for (const auto* a : reg.list()) {
    for (const auto& alias : a->aliases) {
      // A request nearly every algorithm takes: 2 ranks (two_proc), 8 bytes (alltoall: a multiple
      // of p); else 4 ranks on two nodes with reducing switches.
      algorithms::Request req = testing::allreduce_request(2, 8);
      req.collective = a->collective;
      const auto& algo = reg.find(a->collective, alias);
      if (algorithms::Request probe = req; !reg.refusal(algo, probe).empty()) {
        req = testing::allreduce_request(4, 8);
        req.collective = a->collective;
        req.topology = &cluster;
      }
      CAPTURE(a->name, alias);
      const auto s = reg.generate(algo, req);
      CHECK(s.header().algorithm == a->name);
    }
  }
  const auto s = reg.generate(reg.find(CollectiveKind::allreduce, "ompi:3"),
                              testing::allreduce_request(6, 1000));
  CHECK(s.header().collective == CollectiveKind::allreduce);
  CHECK(s.header().ranks == 6);
  CHECK(s.header().bytes == core::Bytes{1000});
  CHECK(s.header().data_bytes == 1000);
}

TEST_CASE("a generator that ignores its request is an internal error", "[algorithms][registry]") {
  Registry reg;
  AlgorithmInfo a;
  a.name = "liar";
  a.generate = [](const algorithms::Request& r) {
    core::Schedule s(algorithms::make_header(r, 0, "someone_else"));
    s.finish();
    return s;
  };
  reg.add(a);
  CHECK_THROWS_AS(
      reg.generate(reg.find(CollectiveKind::allreduce, "liar"), testing::allreduce_request(2, 8)),
      core::InternalError);
}

TEST_CASE("adding a name or alias twice within a collective is an internal error",
          "[algorithms][registry]") {
  Registry reg = algorithms::make_default_registry();
  AlgorithmInfo a = reg.find(CollectiveKind::allreduce, "ring");
  CHECK_THROWS_AS(reg.add(a), core::InternalError);
  a.name = "ring2";
  CHECK_THROWS_WITH(reg.add(a), "duplicate allreduce algorithm name 'ompi:4' ('ring' and 'ring2')");
  a.aliases = {"ring"};
  CHECK_THROWS_AS(reg.add(a), core::InternalError);
  // The same name in another collective is fine.
  Registry other;
  other.add(reg.find(CollectiveKind::allreduce, "ring"));
  a = reg.find(CollectiveKind::allreduce, "ring");
  a.collective = CollectiveKind::allgather;
  CHECK_NOTHROW(other.add(a));
}

TEST_CASE("make_header sizes the data buffer by the collective's convention",
          "[algorithms][registry]") {
  algorithms::Request req = testing::allreduce_request(4, 1000);
  req.root = 2;
  for (const auto c : core::kAllCollectives) {
    req.collective = c;
    const core::ScheduleHeader h = algorithms::make_header(req, 17, "x");
    CAPTURE(core::to_string(c));
    CHECK(h.data_bytes == (c == CollectiveKind::alltoall ? 2000U : 1000U));
    CHECK(h.tmp_bytes == 17);
    CHECK(h.root == 2);
    CHECK(h.algorithm == "x");
  }
}

TEST_CASE("asking for a collective without algorithms says which collectives have some",
          "[algorithms][registry]") {
  const Registry reg = registry_with_parameters(); // allreduce only
  CHECK_THROWS_WITH(reg.find(CollectiveKind::bcast, "binomial"),
                    "no bcast algorithms are available yet (collsim has: allreduce)");
  CHECK(reg.collectives_with_algorithms() == std::vector<std::string>{"allreduce"});
}

// Open MPI's nonoverlapping allreduce (coll/tuned algorithm 2) is the communicator's own reduce
// followed by its own bcast (coll_base_allreduce.c: comm->c_coll->coll_reduce, coll_bcast): the
// Open MPI choice passes coll/tuned's reduce and bcast choices on as reduce_bcast's halves, and
// the time is the two calls one after the other.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace collsim;
using core::CollectiveKind;

namespace {

double time_of(const algorithms::Registry& registry, CollectiveKind c, const std::string& name,
               const algorithms::RawParams& params, std::uint32_t p, std::uint64_t n,
               const core::Topology& t) {
  const auto& algo = registry.find(c, name);
  algorithms::Request req;
  req.collective = c;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.params = algorithms::resolve_params(algo, params);
  const core::Schedule s = registry.generate(algo, req);
  REQUIRE(core::check_semantics(s).ok());
  return engines::LogGPEngine{}.run(s, t, {}).time.value;
}

} // namespace

TEST_CASE("Open MPI's nonoverlapping allreduce takes its own reduce, then its own bcast",
          "[analysis][ompi_defaults]") {
  const auto registry = algorithms::make_default_registry();
  const core::Topology t = core::Topology::full_mesh(512, core::Bandwidth{10e9},
                                                     core::Seconds{2e-6}, core::EndpointParams{});
  struct Case {
    std::uint32_t p;
    std::uint64_t n;
    const char* reduce;
    const char* bcast;
    algorithms::RawParams bcast_params; // as coll/tuned runs the bcast alone
  };
  // Open MPI 4.1's rules: below 256 ranks and 16 KiB a binary-tree bcast, from 256 ranks a
  // knomial one (radix 4), a binomial reduce from 32 ranks (ompi_defaults_test.cpp).
  for (const Case& c : {Case{200, 1024, "binomial", "binary_tree", {{"segment_size", "0"}}},
                        Case{512, 4, "binomial", "knomial", {{"radix", "4"}}}}) {
    CAPTURE(c.p, c.n);
    const auto choice = analysis::ompi41_default(
        analysis::OmpiCall{CollectiveKind::allreduce, c.p, core::Bytes{c.n}, true, 4}, registry);
    REQUIRE(choice.has_value());
    CHECK(choice->algorithm == "reduce_bcast");
    CHECK(choice->params == algorithms::RawParams{{"reduce", c.reduce}, {"bcast", c.bcast}});
    // On a full mesh nothing is shared: rank 0 is the last to finish the reduce and the first
    // to start the bcast, so T = T_reduce + T_bcast.
    const double whole =
        time_of(registry, CollectiveKind::allreduce, "reduce_bcast", choice->params, c.p, c.n, t);
    const double reduce = time_of(registry, CollectiveKind::reduce, c.reduce, {}, c.p, c.n, t);
    const double bcast =
        time_of(registry, CollectiveKind::bcast, c.bcast, c.bcast_params, c.p, c.n, t);
    CHECK(whole == Approx(reduce + bcast).epsilon(1e-12));
    // Binomial + binomial, what collsim ran before, is another time.
    const double binomial =
        time_of(registry, CollectiveKind::allreduce, "reduce_bcast", {}, c.p, c.n, t);
    CHECK(binomial != Approx(whole).epsilon(1e-3));
  }
}

TEST_CASE("reduce_bcast named under an Open MPI 4.1 stack runs Open MPI's own halves",
          "[analysis][ompi_defaults]") {
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(CollectiveKind::allreduce, "reduce_bcast");
  algorithms::Request req;
  req.collective = CollectiveKind::allreduce;
  req.ranks = 512;
  req.bytes = core::Bytes{4};
  const auto index = [&](const char* param, const char* name) {
    return algorithms::resolve_params(algo, {{param, name}}).at(param);
  };
  analysis::EngineChoice engine("loggp");
  engine.stack = "openmpi-4.1";
  std::string chosen;
  const algorithms::Request filled = analysis::with_library_params(algo, req, engine, &chosen);
  CHECK(filled.params.at("reduce") == index("reduce", "binomial"));
  CHECK(filled.params.at("bcast") == index("bcast", "knomial"));
  CHECK(chosen == "bcast=knomial,reduce=binomial");
  // A half the caller pins is kept, and nothing is filled in.
  req.params["bcast"] = index("bcast", "linear");
  CHECK(analysis::with_library_params(algo, req, engine).params ==
        std::map<std::string, std::int64_t>{{"bcast", index("bcast", "linear")}});
  // Without a stack (or under MPICH's) reduce_bcast is the textbook binomial + binomial.
  req.params.clear();
  CHECK(analysis::with_library_params(algo, req, analysis::EngineChoice("loggp")).params.empty());
  engine.stack = "mpich-4";
  CHECK(analysis::with_library_params(algo, req, engine).params.empty());
}

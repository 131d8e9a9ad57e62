#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace collsim;

namespace {
core::Schedule reduce_bcast(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "reduce_bcast"),
                      testing::allreduce_request(p, n));
}
} // namespace

TEST_CASE("reduce_bcast sends 2(p-1) full vectors, ceil(lg p) of them from and to rank 0",
          "[algorithms][allreduce][reduce_bcast]") {
  for (const std::uint32_t p : {2U, 3U, 5U, 8U, 13U, 32U}) {
    const std::uint64_t n = 100;
    const auto t = testing::traffic(reduce_bcast(p, n));
    const auto rounds = static_cast<std::uint64_t>(std::bit_width(p - 1)); // ceil(lg p)
    std::uint64_t messages = 0;
    for (core::Rank r = 0; r < p; ++r) {
      messages += t[r].sends;
      for (const auto len : t[r].send_lengths) {
        CHECK(len == n);
      }
    }
    CAPTURE(p);
    CHECK(messages == 2ULL * (p - 1));
    CHECK(t[0].recvs == rounds);
    CHECK(t[0].sends == rounds);
    CHECK(t[0].reduced_bytes == rounds * n);
  }
}

TEST_CASE("reduce_bcast follows MPICH's binomial trees", "[algorithms][allreduce][reduce_bcast]") {
  // p = 6. Reduce: 1 -> 0, 3 -> 2, 5 -> 4, 2 -> 0, 4 -> 0. Broadcast: 0 -> 4, 2, 1; 2 -> 3; 4 -> 5.
  const auto t = testing::traffic(reduce_bcast(6, 8));
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 3});
  CHECK(t[3].send_peers == std::vector<core::Rank>{2});
  CHECK(t[4].send_peers == std::vector<core::Rank>{0, 5});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4});
}

TEST_CASE("reduce_bcast reserves 5(p-1) operations and 4(p-1)-1 dependencies",
          "[algorithms][allreduce][reduce_bcast]") {
  for (const std::uint32_t p : {1U, 2U, 6U, 33U}) {
    const core::Schedule s = reduce_bcast(p, 10);
    CAPTURE(p);
    CHECK(s.op_count() == 5ULL * (p - 1));
    CHECK(s.dep_count() == (p > 1 ? 4ULL * (p - 1) - 1 : 0));
  }
}

TEST_CASE("reduce_bcast's closed form counts lg p rounds each way on a power of two",
          "[algorithms][allreduce][reduce_bcast]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "reduce_bcast");
  const auto c = reg.cost(algo, testing::allreduce_request(8, 10));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 60.0);
  CHECK(c->gamma_bytes == 30.0);
  // Uneven subtrees finish early: the textbook count is only a bound, so none is declared.
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(5, 10)).has_value());
}

namespace {
/// The index of `name` among the choices of reduce_bcast's level parameter `param`.
std::int64_t half(const std::string& param, const std::string& name) {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "reduce_bcast");
  const auto params = algorithms::resolve_params(algo, {{param, name}});
  return params.at(param);
}
} // namespace

TEST_CASE("reduce_bcast with other halves is a correct allreduce on 1 to 20 ranks",
          "[algorithms][allreduce][reduce_bcast]") {
  // Every reduce with a binomial bcast, every bcast with Open MPI's in-order binary reduce.
  std::vector<testing::Params> variants;
  for (const char* r : {"linear", "chain", "pipeline", "binary", "in_order_binary", "knomial"}) {
    variants.push_back({{"reduce", half("reduce", r)}, {"bcast", 0}});
  }
  for (const char* b : {"binomial", "knomial", "linear", "chain", "pipeline", "split_binary_tree",
                        "binary_tree", "scatter_allgather", "scatter_ring_allgather"}) {
    variants.push_back(
        {{"reduce", half("reduce", "in_order_binary")}, {"bcast", half("bcast", b)}});
  }
  testing::check_allreduce_variants("reduce_bcast", variants);
}

TEST_CASE("reduce_bcast's other halves run as coll/tuned's fixed rules call them",
          "[algorithms][allreduce][reduce_bcast]") {
  // Open MPI 4.1's fixed rules call each algorithm with faninout 0 and segsize 0: a chain of
  // fanout 1 and one message per tree edge. p = 6, chain bcast: 0 -> 1 -> 2 -> 3 -> 4 -> 5, each
  // the whole vector; the binomial reduce before it as in the default.
  const std::uint64_t n = 1 << 20; // above every default segment size
  const auto t = testing::traffic(testing::allreduce_schedule(
      "reduce_bcast", 6, n, {{"reduce", 0}, {"bcast", half("bcast", "chain")}}));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 2});
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 3});
  CHECK(t[3].send_peers == std::vector<core::Rank>{2, 4});
  CHECK(t[4].send_peers == std::vector<core::Rank>{0, 5});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4});
  for (const auto& r : t) {
    for (const auto len : r.send_lengths) {
      CHECK(len == n);
    }
  }
  // Only binomial + binomial declares the closed form.
  CHECK(testing::allreduce_cost("reduce_bcast", 8, 10).has_value());
  CHECK_FALSE(testing::allreduce_cost("reduce_bcast", 8, 10, {{"bcast", half("bcast", "knomial")}})
                  .has_value());
}

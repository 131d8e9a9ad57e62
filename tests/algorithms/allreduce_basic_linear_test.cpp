#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "basic_linear";
core::Schedule generate(std::uint32_t p, std::uint64_t n, const testing::Params& params = {}) {
  return testing::allreduce_schedule(kName, p, n, params);
}
std::optional<algorithms::CostTerms> cost(std::uint32_t p, std::uint64_t n,
                                          const testing::Params& params = {}) {
  return testing::allreduce_cost(kName, p, n, params);
}
void check_all(const std::vector<testing::Params>& variants) {
  testing::check_allreduce_variants(kName, variants);
}
} // namespace

TEST_CASE("basic_linear allreduce gathers every vector at rank 0 and sends the result back",
          "[algorithms][allreduce][basic_linear]") {
  const auto t = testing::traffic(generate(4, 100));
  // Rank 0 receives from 3, 2, 1 and reduces three vectors (two from the inbuf, then its own).
  CHECK(t[0].recvs == 3);
  CHECK(t[0].recv_bytes == 300);
  CHECK(t[0].reduced_bytes == 300);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{100, 100, 100});
  for (core::Rank r = 1; r < 4; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{0});
    CHECK(t[r].recv_bytes == 100);
    CHECK(t[r].reduced_bytes == 0);
  }
}

TEST_CASE("basic_linear allreduce receives from rank p-1 down to 1, as Open MPI's linear reduce",
          "[algorithms][allreduce][basic_linear]") {
  const core::Schedule s = generate(5, 8);
  std::vector<core::Rank> from;
  for (core::OpId id = s.rank_begin(0); id < s.rank_end(0); ++id) {
    if (s.kind(id) == core::OpKind::recv) {
      from.push_back(s.peer(id));
    }
  }
  CHECK(from == std::vector<core::Rank>{4, 3, 2, 1});
  CHECK(s.header().tmp_bytes == 16);
}

TEST_CASE("basic_linear allreduce reserves 3p-2 operations at the root and 2 at every other rank",
          "[algorithms][allreduce][basic_linear]") {
  const core::Schedule s = generate(4, 100);
  CHECK(s.op_count() == 10 + 3 * 2);
  // Root: first inbuf receive 0, its reduction 2, then 1 each (receive, reduction, own reduction,
  // copy) and 3 sends; the others: their receive waits for their send.
  CHECK(s.dep_count() == 9 + 3);
  CHECK(generate(1, 100).op_count() == 0);
}

TEST_CASE("basic_linear allreduce declares a closed form only for two ranks",
          "[algorithms][allreduce][basic_linear]") {
  const auto two = cost(2, 1000);
  REQUIRE(two.has_value());
  CHECK(two->alpha_terms == 2.0);
  CHECK(two->beta_bytes == 2000.0);
  CHECK(two->gamma_bytes == 1000.0);
  CHECK_FALSE(cost(3, 1000).has_value());
}

TEST_CASE("basic_linear allreduce is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][basic_linear]") {
  check_all({{}});
}

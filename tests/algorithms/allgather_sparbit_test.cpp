#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}

core::Schedule sparbit(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "sparbit"),
                      allgather_request(p, n));
}
} // namespace

TEST_CASE("sparbit allgather halves the distance and doubles the blocks on a power of two",
          "[algorithms][allgather][sparbit]") {
  // p = 8: distances 4, 2, 1 with 1, 2 and 4 one-block messages.
  const auto t = testing::traffic(sparbit(8, 80));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    const core::Rank far = (r + 4) % 8;
    const core::Rank mid = (r + 2) % 8;
    const core::Rank near = (r + 1) % 8;
    CHECK(t[r].send_peers == std::vector<core::Rank>{far, mid, mid, near, near, near, near});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>(7, 10));
    CHECK(t[r].recv_bytes == 70);
  }
}

TEST_CASE("sparbit allgather on 6 ranks skips a block as in Open MPI's worked example",
          "[algorithms][allgather][sparbit]") {
  // Distances 4, 2, 1; the step of distance 2 sends one block instead of two (ignore_steps), the
  // last step sends blocks r, r-2 and r-4 to r+1.
  const core::Schedule s = sparbit(6, 60);
  const auto t = testing::traffic(s);
  CHECK(t[3].send_peers == std::vector<core::Rank>{1, 5, 4, 4, 4});
  std::vector<std::uint64_t> sent;
  std::vector<std::uint64_t> received;
  for (core::OpId id = s.rank_begin(3); id < s.rank_end(3); ++id) {
    (s.kind(id) == core::OpKind::send ? sent : received).push_back(s.target(id).offset / 10);
  }
  CHECK(sent == std::vector<std::uint64_t>{3, 3, 3, 1, 5});
  CHECK(received == std::vector<std::uint64_t>{5, 1, 2, 0, 4});
}

TEST_CASE("sparbit allgather waits for the previous step only with its first send",
          "[algorithms][allgather][sparbit]") {
  // p = 8: deps 0; 1 (step 1's own block, after step 0's receive) + 1; 2 + 3.
  const core::Schedule s = sparbit(8, 80);
  CHECK(s.op_count() == 8 * 14);
  CHECK(s.dep_count() == 8 * (0 + 2 + 5));
  CHECK(s.header().tmp_bytes == 0);
  CHECK(sparbit(1, 10).op_count() == 0);
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:7");
  CHECK(algo.name == "sparbit");
  CHECK_FALSE(reg.cost(algo, allgather_request(8, 80)).has_value());
}

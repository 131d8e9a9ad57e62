#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

TEST_CASE("pat reduce-scatter sends to r - 2^k, the allgather's steps in reverse",
          "[algorithms][reduce_scatter][nccl]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "nccl:pat");
  algorithms::Request req = testing::allreduce_request(8, 128);
  req.collective = core::CollectiveKind::reduce_scatter;
  req.params["channels"] = 1;
  const core::Schedule s = reg.generate(algo, req);
  const auto t = testing::traffic(s);
  // Steps s = 7..1 go to distance lowbit(s) = 1, 2, 1, 4, 1, 2, 1.
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    const std::vector<core::Rank> expected{(r + 7) % 8, (r + 6) % 8, (r + 7) % 8, (r + 4) % 8,
                                           (r + 7) % 8, (r + 6) % 8, (r + 7) % 8};
    CHECK(t[r].send_peers == expected);
    CHECK(t[r].reduced_bytes == 7 * 16);
  }
  CHECK(core::check_semantics(s).ok());
  // Block r - 4 collects two partial sums (from r + 2 at step 6, from r + 1 at step 5) before
  // rank r sends it to r - 4 at step 4: the third send, after the second and third receives.
  std::vector<std::uint64_t> into_block_4;
  for (core::OpId id = s.rank_begin(4); id < s.rank_end(4); ++id) {
    if (s.target(id).offset == 0) {
      into_block_4.push_back(s.kind(id) == core::OpKind::send ? 100 + s.peer(id) : s.peer(id));
    }
  }
  CHECK(into_block_4 == std::vector<std::uint64_t>{6, 5, 100});
}

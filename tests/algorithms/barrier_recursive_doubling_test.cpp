#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request barrier_request(std::uint32_t p) {
  algorithms::Request req = testing::allreduce_request(p, 0);
  req.collective = core::CollectiveKind::barrier;
  return req;
}
core::Schedule recursive_doubling(std::uint32_t p) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::barrier, "recursive_doubling"),
                      barrier_request(p));
}
} // namespace

TEST_CASE("recursive-doubling barrier exchanges zero bytes with r XOR 2^k",
          "[algorithms][barrier][recursive_doubling]") {
  const auto t = testing::traffic(recursive_doubling(8));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].recvs == 3);
    CHECK(t[r].send_bytes == 0);
  }
}

TEST_CASE("recursive-doubling barrier folds the ranks above the largest power of two",
          "[algorithms][barrier][recursive_doubling]") {
  // p = 6: ranks 4, 5 check in with 0, 1, which release them after the 2 exchanges.
  const auto t = testing::traffic(recursive_doubling(6));
  CHECK(t[4].send_peers == std::vector<core::Rank>{0});
  CHECK(t[5].send_peers == std::vector<core::Rank>{1});
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 4});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 3, 5});
  CHECK(t[3].send_peers == std::vector<core::Rank>{2, 1});
  CHECK(t[0].recvs == 3);
}

TEST_CASE("recursive-doubling barrier reserves exactly the operations it adds",
          "[algorithms][barrier][recursive_doubling]") {
  // p = 6 (p' = 4, k = 2): 4 x 4 exchange ops, the second send waiting for 2; 2 x 2 fold ops on
  // ranks 0 and 1 (3 more dependencies each); 2 x 2 ops on ranks 4 and 5.
  const core::Schedule s = recursive_doubling(6);
  CHECK(s.op_count() == 16 + 4 + 4);
  CHECK(s.dep_count() == 8 + 6);
  CHECK(recursive_doubling(1).op_count() == 0);
  CHECK(recursive_doubling(2).dep_count() == 0);
}

TEST_CASE("recursive-doubling barrier costs lg p a, declared for powers of two only",
          "[algorithms][barrier][recursive_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "ompi:3");
  CHECK(reg.cost(algo, barrier_request(16))->alpha_terms == 4.0);
  CHECK(reg.cost(algo, barrier_request(1))->alpha_terms == 0.0);
  CHECK_FALSE(reg.cost(algo, barrier_request(6)).has_value());
}

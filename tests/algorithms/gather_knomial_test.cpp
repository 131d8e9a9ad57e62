#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule knomial(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::gather;
  req.root = root;
  return reg.generate(reg.find(core::CollectiveKind::gather, "knomial"), req);
}
} // namespace

TEST_CASE("gather knomial collects k-1 subtrees per level, radix 4",
          "[algorithms][gather][knomial]") {
  // p = 16, n = 16 (a byte a rank), root 0. Distance 1: 0, 4, 8, 12 take one byte from each of
  // their next three ranks; distance 4: 4, 8, 12 send their four bytes to the root.
  const auto t = testing::traffic(knomial(16, 16, 0));
  CHECK(t[0].recvs == 6);
  CHECK(t[0].recv_bytes == 15);
  CHECK(t[4].send_peers == std::vector<core::Rank>{0});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>{4});
  CHECK(t[4].recv_bytes == 3);
  CHECK(t[5].send_peers == std::vector<core::Rank>{4});
  CHECK(t[5].send_lengths == std::vector<std::uint64_t>{1});
}

TEST_CASE("gather knomial sends a subtree that wraps past the last rank to the root in two pieces",
          "[algorithms][gather][knomial]") {
  // Root 3: relative rank 12 is rank 15, whose subtree (ranks 15, 0, 1, 2) lands at the end and
  // the start of the result.
  const auto t = testing::traffic(knomial(16, 16, 3));
  CHECK(t[15].send_peers == std::vector<core::Rank>{3, 3});
  CHECK(t[15].send_lengths == std::vector<std::uint64_t>{1, 3});
  CHECK(t[3].recv_bytes == 15);
  CHECK(knomial(1, 16, 0).op_count() == 0);
}

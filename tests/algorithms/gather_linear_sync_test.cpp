#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request gather_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                   std::int64_t first) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::gather;
  req.root = root;
  req.params["first_segment"] = first;
  return req;
}
core::Schedule linear_sync(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t first) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::gather, "linear_sync"),
                      gather_request(p, n, root, first));
}
} // namespace

TEST_CASE("linear_sync gather: a go-ahead from the root, then the block in two segments",
          "[algorithms][gather][linear_sync]") {
  const core::Schedule s = linear_sync(4, 400, 1, 30);
  const auto t = testing::traffic(s);
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 2, 3});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{0, 0, 0});
  CHECK(t[1].recv_bytes == 300);
  for (const core::Rank r : {0U, 2U, 3U}) {
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{30, 70});
    CHECK(t[r].recvs == 1);
  }
  CHECK(s.op_count() == 18);
  CHECK(s.dep_count() == 6 + 2);
  CHECK(core::check_semantics(s).ok());
}

TEST_CASE("linear_sync gather sends the whole block first by default, as Open MPI's fixed rules",
          "[algorithms][gather][linear_sync]") {
  const core::Schedule s = linear_sync(3, 30, 0, 0);
  const auto t = testing::traffic(s);
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{10, 0});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{10, 0});
  // A first segment larger than the block is the whole block too.
  CHECK(testing::traffic(linear_sync(3, 30, 0, 64))[1].send_lengths ==
        std::vector<std::uint64_t>{10, 0});
}

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_scatter_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return req;
}

core::Schedule recursive_doubling(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "mpich:recursive_doubling"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("recursive doubling reduce-scatter sends n(lg p - (p-1)/p) bytes per rank on 2^k ranks",
          "[algorithms][reduce_scatter][recursive_doubling]") {
  // p = 8, blocks of 10 bytes: step k sends the 80 - 10 * 2^k bytes outside the own subtree.
  const core::Schedule s = recursive_doubling(8, 80);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{70, 60, 40});
    CHECK(t[r].reduced_bytes == 170); // 80 (3 - 7/8)
  }
  // Per step: two packing copies, the exchange, two reductions unpacking it.
  CHECK(s.op_count() == 8 * 3 * 6);
  CHECK(s.header().tmp_bytes == 160);
}

TEST_CASE("recursive doubling reduce-scatter forwards inside a subtree whose partner is missing",
          "[algorithms][reduce_scatter][recursive_doubling]") {
  // p = 3, blocks of 10 bytes. Step 1: rank 2 has no partner (3) and nothing to forward to.
  // Step 2: rank 0 exchanges with 2 (block 2 out, blocks 0-1 in), then forwards blocks 0-1 to
  // rank 1, whose partner 3 is missing (MPICH's nprocs_completed loop).
  const auto t = testing::traffic(recursive_doubling(3, 30));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{20, 10, 20});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(t[1].recvs == 2);
  CHECK(t[2].send_peers == std::vector<core::Rank>{0});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{20});
}

TEST_CASE("recursive doubling reduce-scatter sends nothing for an empty vector, as MPICH returns",
          "[algorithms][reduce_scatter][recursive_doubling]") {
  CHECK(recursive_doubling(6, 0).op_count() == 0);
  CHECK(recursive_doubling(1, 100).op_count() == 0);
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "smpi:mpich_rdb");
  CHECK(algo.name == "recursive_doubling");
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(8, 80)).has_value());
}

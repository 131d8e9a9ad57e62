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

core::Schedule butterfly(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "butterfly"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("butterfly reduce-scatter doubles the distance, then swaps by the mirror permutation",
          "[algorithms][reduce_scatter][butterfly]") {
  // p = 8, blocks of 10 bytes: partners r^1, r^2, r^4 with 40, 20, 10 bytes; then 1 <-> 4 and
  // 3 <-> 6 swap their results (mirror(001) = 100, mirror(011) = 110); 0, 2, 5, 7 keep theirs.
  const auto t = testing::traffic(butterfly(8, 80));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    std::vector<core::Rank> peers{r ^ 1U, r ^ 2U, r ^ 4U};
    std::vector<std::uint64_t> lengths{40, 20, 10};
    const core::Rank partner[] = {0, 4, 2, 6, 1, 5, 3, 7};
    if (partner[r] != r) {
      peers.push_back(partner[r]);
      lengths.push_back(10);
    }
    CHECK(t[r].send_peers == peers);
    CHECK(t[r].send_lengths == lengths);
    CHECK(t[r].reduced_bytes == 70);
  }
}

TEST_CASE("butterfly reduce-scatter on 6 ranks follows Open MPI's worked example",
          "[algorithms][reduce_scatter][butterfly]") {
  // Ranks 0 and 2 fold into 1 and 3 (vranks 0, 1); 4 and 5 are vranks 2, 3. mperm = 0, 2, 1, 3.
  const auto t = testing::traffic(butterfly(6, 60));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
  CHECK(t[0].send_bytes == 60);
  // vrank 0 (rank 1): sends regions 2-3 (blocks 4, 5) to vrank 1, region 1 (blocks 2, 3) to
  // vrank 2, then block 0 to rank 0; it keeps block 1.
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 4, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{20, 20, 10});
  // vrank 2 (rank 4): holds region 1 = blocks 2, 3: block 2 to rank 2, block 3 to rank 3, and
  // receives block 4 from rank 3.
  CHECK(t[4].send_peers == std::vector<core::Rank>{5, 1, 2, 3});
  CHECK(t[4].recvs == 3);
  CHECK(t[2].recv_bytes == 10);
}

TEST_CASE("butterfly reduce-scatter reserves exactly its operations and dependencies",
          "[algorithms][reduce_scatter][butterfly]") {
  // p = 8: 6 butterfly operations per rank (4 dependencies), plus a send and a receive with one
  // dependency each on the four ranks that swap.
  const core::Schedule s = butterfly(8, 800);
  CHECK(s.op_count() == 8 * 6 + 4 * 2);
  CHECK(s.dep_count() == 8 * 4 + 4 * 2);
  CHECK(s.header().tmp_bytes == 0);
  CHECK(butterfly(1, 10).op_count() == 0);
  CHECK(butterfly(2, 10).op_count() == 4);
}

TEST_CASE("butterfly reduce-scatter declares its closed form, mirror exchange included",
          "[algorithms][reduce_scatter][butterfly]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "ompi:4");
  CHECK(&reg.find(core::CollectiveKind::reduce_scatter, "smpi:ompi_butterfly") == &algo);
  auto c = reg.cost(algo, reduce_scatter_request(8, 8000));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 8000.0);
  CHECK(c->gamma_bytes == 7000.0);
  c = reg.cost(algo, reduce_scatter_request(2, 100));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 50.0);
  CHECK(c->gamma_bytes == 50.0);
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(6, 600)).has_value());
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(8, 801)).has_value());
}

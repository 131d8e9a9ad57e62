#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n, std::int64_t radix = 2) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  req.params["radix"] = radix;
  return req;
}
core::Schedule doubling(std::uint32_t p, std::uint64_t n, std::int64_t radix = 2) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "recexch_doubling"),
                      allgather_request(p, n, radix));
}
} // namespace

TEST_CASE("recexch_doubling allgather with radix 2 on 8 ranks swaps 1, 2, 4 blocks with r XOR "
          "1, 2, 4",
          "[algorithms][allgather][recexch_doubling]") {
  const auto t = testing::traffic(doubling(8, 80));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{10, 20, 40});
    CHECK(t[r].recv_bytes == 70);
  }
}

TEST_CASE("recexch_doubling folds the ranks beyond the largest power of k into their neighbours",
          "[algorithms][allgather][recexch_doubling]") {
  // p = 6, k = 2: p' = 4, rem = 2, T = 4: ranks 0 and 2 hand their block to 1 and 3 and get the
  // whole vector back; step-2 ranks 1, 3, 4, 5 are 0, 1, 2, 3.
  const auto t = testing::traffic(doubling(6, 60));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{10});
  CHECK(t[0].recv_bytes == 60);
  // Rank 1 stands for ranks 0-1: it sends them to 3, then ranks 0-3 to 4, then all to rank 0.
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 4, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{20, 40, 60});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 3});
  CHECK(t[5].send_lengths == std::vector<std::uint64_t>{10, 20});
}

TEST_CASE("recexch_doubling with radix 3 on 9 ranks exchanges with 2 neighbours per phase",
          "[algorithms][allgather][recexch_doubling]") {
  const auto t = testing::traffic(doubling(9, 90, 3));
  // Rank 4 = digits (1, 1): phase 0 with 3 and 5 (1 block), phase 1 with 1 and 7 (3 blocks).
  CHECK(t[4].send_peers == std::vector<core::Rank>{3, 5, 1, 7});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>{10, 10, 30, 30});
}

TEST_CASE("recexch_doubling is a correct allgather for radices 2..6 on 1..40 ranks",
          "[algorithms][allgather][recexch_doubling]") {
  for (std::int64_t k = 2; k <= 6; ++k) {
    for (std::uint32_t p = 1; p <= 40; ++p) {
      CAPTURE(k, p);
      const core::Schedule s = doubling(p, 7ULL * p + 3, k);
      const auto report = core::check_semantics(s);
      CHECK(report.summary() == "");
      CHECK(core::validate(s).ok());
    }
  }
}

TEST_CASE("recexch_doubling costs lg p a + (p-1)/p n b for radix 2 and powers of two only",
          "[algorithms][allgather][recexch_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "mpich:recexch_doubling");
  CHECK(algo.name == "recexch_doubling");
  const auto c = reg.cost(algo, allgather_request(8, 80));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 70.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(6, 60)).has_value());
  CHECK_FALSE(reg.cost(algo, allgather_request(9, 90, 3)).has_value());
}

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
core::Schedule generate(std::uint32_t p, std::uint64_t n,
                        const std::map<std::string, std::int64_t>& params = {}) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(p, n);
  req.params = params;
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "allgather_reduce"), req);
}

std::optional<algorithms::CostTerms> cost(std::uint32_t p, std::uint64_t n,
                                          const std::map<std::string, std::int64_t>& params = {}) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(p, n);
  req.params = params;
  return reg.cost(reg.find(core::CollectiveKind::allreduce, "allgather_reduce"), req);
}

/// check_semantics (which runs validate() and its race check first) on many shapes.
void check_all(const std::vector<std::map<std::string, std::int64_t>>& variants) {
  for (const auto& params : variants) {
    for (std::uint32_t p = 1; p <= 20; ++p) {
      for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{p} + 3,
                                    std::uint64_t{1000}, std::uint64_t{4099}}) {
        std::string desc;
        for (const auto& [key, value] : params) {
          desc += key + "=" + std::to_string(value) + " ";
        }
        const auto report = core::check_semantics(generate(p, n, params));
        INFO(desc << "p=" << p << " n=" << n << ": " << report.summary());
        CHECK(report.ok());
      }
    }
  }
}
} // namespace

TEST_CASE("allgather_reduce doubles the exchanged vectors each step on a power of two",
          "[algorithms][allreduce][allgather_reduce]") {
  const auto t = testing::traffic(generate(8, 100));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{100, 200, 400});
    CHECK(t[r].recv_bytes == 700);
    CHECK(t[r].reduced_bytes == 700);
  }
}

TEST_CASE("allgather_reduce uses Bruck's exchange when p is not a power of two",
          "[algorithms][allreduce][allgather_reduce]") {
  const auto t = testing::traffic(generate(6, 100));
  for (core::Rank r = 0; r < 6; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 5) % 6, (r + 4) % 6, (r + 2) % 6});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{100, 200, 200});
    CHECK(t[r].reduced_bytes == 500);
  }
  CHECK(generate(6, 100).header().tmp_bytes == 600);
}

TEST_CASE("allgather_reduce costs ceil(lg p) a + (p-1) n (b + g) for every p",
          "[algorithms][allreduce][allgather_reduce]") {
  const auto six = cost(6, 100);
  REQUIRE(six.has_value());
  CHECK(six->alpha_terms == 3.0);
  CHECK(six->beta_bytes == 500.0);
  CHECK(six->gamma_bytes == 500.0);
  const auto eight = cost(8, 7);
  REQUIRE(eight.has_value());
  CHECK(eight->alpha_terms == 3.0);
  CHECK(eight->beta_bytes == 49.0);
}

TEST_CASE("allgather_reduce reserves its exact operation counts",
          "[algorithms][allreduce][allgather_reduce]") {
  // p = 8: copy in, 3 sends, 3 receives, 7 reductions, copy out = 15 per rank. Dependencies: the
  // sends wait for 1, 2, 3 operations, the first reduction for all 7 allgather operations, the
  // other 6 reductions and the final copy for one each.
  const core::Schedule s = generate(8, 100);
  CHECK(s.op_count() == 8 * 15);
  CHECK(s.dep_count() == 8 * (6 + 7 + 7));
}

TEST_CASE("allgather_reduce is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][allgather_reduce]") {
  check_all({{}});
}

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

using namespace collsim;

namespace {
algorithms::Request rs_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return req;
}
core::Schedule swing(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "swing"), rs_request(p, n));
}
core::Rank peer(core::Rank r, std::uint32_t s, std::uint32_t p) {
  std::int64_t power = 1;
  for (std::uint32_t i = 0; i <= s; ++i) {
    power *= -2;
  }
  const std::int64_t rho = (1 - power) / 3;
  const std::int64_t q = r % 2 == 0 ? std::int64_t{r} + rho : std::int64_t{r} - rho;
  const auto pp = static_cast<std::int64_t>(p);
  return static_cast<core::Rank>(((q % pp) + pp) % pp);
}
} // namespace

TEST_CASE("swing reduce_scatter halves the data in lg p steps towards Swing peers",
          "[algorithms][reduce_scatter][swing]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 16U, 64U}) {
    const std::uint64_t n = 8ULL * p;
    const auto t = testing::traffic(swing(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == lg);
      CHECK(t[r].recvs == lg);
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (std::uint32_t s = 0; s < lg; ++s) {
        CHECK(t[r].send_peers[s] == peer(r, s, p));
        CHECK(t[r].send_lengths[s] == n >> (s + 1));
      }
    }
  }
}

TEST_CASE("swing reduce_scatter permutes its input into slot order and copies its block back",
          "[algorithms][reduce_scatter][swing]") {
  // p = 8, 10 bytes: blocks of 2, 2, 1, 1, 1, 1, 1, 1 bytes. Every rank copies its 8 blocks into
  // tmp (10 bytes) and its reduced block back to block r.
  const core::Schedule s = swing(8, 10);
  CHECK(s.header().tmp_bytes == 10);
  CHECK(s.op_count() == 8ULL * (8 + 2 * 3 + 1));
  CHECK(s.dep_count() == 8ULL * (8 + 2 * 3));
  for (core::Rank r = 0; r < 8; ++r) {
    std::uint64_t copied_in = 0;
    core::Range last{};
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) == core::OpKind::copy) {
        last = s.target(id);
        if (last.buffer == core::Buffer::tmp) {
          copied_in += last.length;
        }
      }
    }
    CAPTURE(r);
    CHECK(copied_in == 10);
    const auto [b, len] = core::block_range(10, 8, r);
    CHECK(last == core::Range{core::Buffer::data, b, len});
  }
}

TEST_CASE("swing reduce_scatter refuses rank counts other than powers of two",
          "[algorithms][reduce_scatter][swing]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "swing");
  algorithms::Request req = rs_request(12, 120);
  CHECK(reg.refusal(algo, req) ==
        "ranks must be a power of two (got 12): Swing's reduce-scatter has no fold here; use "
        "'recursive_halving' for other rank counts");
  algorithms::Request one = rs_request(1, 10);
  CHECK(reg.refusal(algo, one).empty());
  CHECK(swing(1, 10).op_count() == 0);
}

TEST_CASE("swing reduce_scatter declares lg p a + (p-1)/p n (b + g) when p divides n",
          "[algorithms][reduce_scatter][swing]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "swing");
  const auto c = reg.cost(algo, rs_request(16, 1600));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 1500.0);
  CHECK(c->gamma_bytes == 1500.0);
  CHECK_FALSE(reg.cost(algo, rs_request(16, 1601)).has_value());
}

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

using namespace collsim;

namespace {
algorithms::Request ag_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}
core::Schedule swing(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "swing"), ag_request(p, n));
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

TEST_CASE("swing allgather doubles the data in lg p steps, the farthest Swing peer first",
          "[algorithms][allgather][swing]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 16U, 64U}) {
    const std::uint64_t n = 8ULL * p;
    const auto t = testing::traffic(swing(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == lg);
      CHECK(t[r].recvs == lg);
      CHECK(t[r].send_bytes == (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == 0);
      for (std::uint32_t i = 0; i < lg; ++i) {
        const std::uint32_t s = lg - 1 - i;
        CHECK(t[r].send_peers[i] == peer(r, s, p));
        CHECK(t[r].send_lengths[i] == n >> (s + 1));
      }
    }
  }
}

TEST_CASE("swing allgather unpacks the p-1 received blocks from slot order into data",
          "[algorithms][allgather][swing]") {
  const core::Schedule s = swing(8, 10);
  CHECK(s.header().tmp_bytes == 10);
  CHECK(s.op_count() == 8ULL * (8 + 2 * 3));
  CHECK(s.dep_count() == 8ULL * (8 + 2 * 3 - 2));
  for (core::Rank r = 0; r < 8; ++r) {
    std::uint64_t unpacked = 0;
    std::uint32_t copies = 0;
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) == core::OpKind::copy && s.target(id).buffer == core::Buffer::data) {
        unpacked += s.target(id).length;
        ++copies;
      }
    }
    CAPTURE(r);
    CHECK(copies == 7);
    CHECK(unpacked == 10 - core::block_range(10, 8, r).second);
  }
}

TEST_CASE("swing allgather refuses rank counts other than powers of two",
          "[algorithms][allgather][swing]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "swing");
  algorithms::Request req = ag_request(6, 60);
  CHECK(reg.refusal(algo, req) == "ranks must be a power of two (got 6): Swing's allgather has no "
                                  "fold here; use 'bruck' or 'ring' for other rank counts");
}

TEST_CASE("swing allgather declares lg p a + (p-1)/p n b when p divides n",
          "[algorithms][allgather][swing]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "swing");
  const auto c = reg.cost(algo, ag_request(32, 3200));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 5.0);
  CHECK(c->beta_bytes == 3100.0);
  CHECK(c->gamma_bytes == 0.0);
  CHECK_FALSE(reg.cost(algo, ag_request(32, 3201)).has_value());
}

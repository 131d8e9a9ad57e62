#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_scatter_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return req;
}

core::Schedule noncommutative(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "mpich:noncommutative"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("noncommutative reduce-scatter halves the data while doubling the distance",
          "[algorithms][reduce_scatter][noncommutative]") {
  // p = 8, blocks of 10 bytes: partners r^1, r^2, r^4 with 40, 20, 10 bytes.
  const core::Schedule s = noncommutative(8, 80);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{40, 20, 10});
    CHECK(t[r].reduced_bytes == 70);
  }
  CHECK(s.header().tmp_bytes == 160);
  // p permutation copies, 3 operations a step, the final copy; p + 3 lg p dependencies per rank.
  CHECK(s.op_count() == 8 * (8 + 9 + 1));
  CHECK(s.dep_count() == 8 * (8 + 9));
}

TEST_CASE("noncommutative reduce-scatter places block i at its bit-reversed position",
          "[algorithms][reduce_scatter][noncommutative]") {
  // p = 4: mirror(1) = 2, mirror(2) = 1. Rank 1 ends in window position 2, which holds block 1.
  const core::Schedule s = noncommutative(4, 40);
  const core::OpId first = s.rank_begin(1);
  CHECK(s.op(first + 1).source == core::Range{core::Buffer::data, 10, 10});
  CHECK(s.op(first + 1).target == core::Range{core::Buffer::tmp, 20, 10});
  const core::Op last = s.op(s.rank_end(1) - 1);
  CHECK(last.kind == core::OpKind::copy);
  CHECK(last.source == core::Range{core::Buffer::tmp, 20, 10});
  CHECK(last.target == core::Range{core::Buffer::data, 10, 10});
}

TEST_CASE("noncommutative reduce-scatter refuses what MPICH's implementation cannot do",
          "[algorithms][reduce_scatter][noncommutative]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "smpi:mpich_noncomm");
  auto req = reduce_scatter_request(6, 60);
  CHECK(reg.refusal(algo, req) ==
        "ranks must be a power of two (got 6), as MPICH's noncommutative requires; use "
        "'recursive_doubling' for other rank counts");
  req = reduce_scatter_request(8, 81);
  CHECK(reg.refusal(algo, req) == "blocks must be equal, as MPICH's noncommutative requires: 81 "
                                  "bytes is not a multiple of 8 ranks");
  const auto c = reg.cost(algo, reduce_scatter_request(8, 80));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 70.0);
  CHECK(c->gamma_bytes == 70.0);
  CHECK(noncommutative(1, 7).op_count() == 0);
}

TEST_CASE("noncommutative reduce-scatter is correct and race-free on powers of two",
          "[algorithms][reduce_scatter][noncommutative]") {
  // The conformance race check uses sizes no power of two divides, which this algorithm refuses.
  for (const std::uint32_t p : {2U, 4U, 8U, 16U, 64U}) {
    CAPTURE(p);
    const core::Schedule s = noncommutative(p, 24ULL * p);
    const core::VerifyReport valid = core::validate(s);
    INFO(valid.summary());
    CHECK(valid.ok());
    const core::VerifyReport semantics = core::check_semantics(s);
    INFO(semantics.summary());
    CHECK(semantics.ok());
  }
}

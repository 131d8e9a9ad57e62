#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}

core::Schedule recursive_doubling(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "recursive_doubling"),
                      allgather_request(p, n));
}
} // namespace

TEST_CASE("recursive doubling allgather sends 2^k blocks to rank XOR 2^k in step k",
          "[algorithms][allgather][recursive_doubling]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 32U}) {
    const std::uint64_t n = 16ULL * p;
    const auto t = testing::traffic(recursive_doubling(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == lg);
      CHECK(t[r].recvs == lg);
      CHECK(t[r].send_bytes == (p - 1) * (n / p));
      for (std::uint32_t k = 0; k < lg; ++k) {
        CHECK(t[r].send_peers[k] == (r ^ (1U << k)));
        CHECK(t[r].send_lengths[k] == (1ULL << k) * (n / p));
      }
    }
  }
}

TEST_CASE("recursive doubling allgather sends each aligned group of blocks as one message",
          "[algorithms][allgather][recursive_doubling]") {
  // 10 bytes on 4 ranks: blocks [0,3) [3,6) [6,8) [8,10). Rank 2 sends block 2, then blocks 2-3.
  const core::Schedule s = recursive_doubling(4, 10);
  std::vector<core::Range> sent;
  std::vector<core::Range> received;
  for (core::OpId id = s.rank_begin(2); id < s.rank_end(2); ++id) {
    (s.kind(id) == core::OpKind::send ? sent : received).push_back(s.target(id));
  }
  CHECK(sent == std::vector<core::Range>{{core::Buffer::data, 6, 2}, {core::Buffer::data, 6, 4}});
  CHECK(received ==
        std::vector<core::Range>{{core::Buffer::data, 8, 2}, {core::Buffer::data, 0, 6}});
}

TEST_CASE("recursive doubling allgather refuses other rank counts, as Open MPI hands them to Bruck",
          "[algorithms][allgather][recursive_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "smpi:rdb");
  auto req = allgather_request(6, 60);
  CHECK(reg.refusal(algo, req) == "ranks must be a power of two (got 6); Open MPI runs bruck "
                                  "instead for other rank counts: use 'bruck'");
  req = allgather_request(1, 60);
  CHECK(reg.refusal(algo, req).empty());
  CHECK(reg.generate(algo, req).op_count() == 0);
}

TEST_CASE("recursive doubling allgather reserves 2 lg p operations and 2 lg p - 3 dependencies",
          "[algorithms][allgather][recursive_doubling]") {
  for (const std::uint32_t p : {2U, 4U, 16U, 128U}) {
    const core::Schedule s = recursive_doubling(p, 1000);
    const std::uint64_t lg = std::countr_zero(p);
    CAPTURE(p);
    CHECK(s.op_count() == 2 * lg * p);
    CHECK(s.dep_count() == (lg >= 2 ? 2 * lg - 3 : 0) * p);
    CHECK(s.header().tmp_bytes == 0);
  }
}

TEST_CASE("recursive doubling allgather declares lg p a + (p-1)/p n b when p divides n",
          "[algorithms][allgather][recursive_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:3");
  const auto c = reg.cost(algo, allgather_request(16, 16 * 64));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 15.0 * 64);
  CHECK(c->gamma_bytes == 0.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(16, 1001)).has_value());
}

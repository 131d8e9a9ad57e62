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

core::Schedule bruck(std::uint32_t p, std::uint64_t n, std::int64_t radix = 2) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "bruck"),
                      allgather_request(p, n, radix));
}
} // namespace

TEST_CASE("Bruck allgather sends min(2^j, p-2^j) blocks to r-2^j in step j",
          "[algorithms][allgather][bruck]") {
  // p = 5, blocks of 10 bytes: steps of 1, 2 and 1 blocks to r-1, r-2, r-4.
  const auto t = testing::traffic(bruck(5, 50));
  for (core::Rank r = 0; r < 5; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 4) % 5, (r + 3) % 5, (r + 1) % 5});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{10, 20, 10});
    CHECK(t[r].recv_bytes == 40);
  }
}

TEST_CASE("k-Bruck allgather sends to r - i k^j for i = 1..k-1 in step j",
          "[algorithms][allgather][bruck]") {
  // p = 9, radix 3: distances 1 and 3, peers r-1, r-2 (1 block), then r-3, r-6 (3 blocks).
  const auto t = testing::traffic(bruck(9, 90, 3));
  for (core::Rank r = 0; r < 9; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers ==
          std::vector<core::Rank>{(r + 8) % 9, (r + 7) % 9, (r + 6) % 9, (r + 3) % 9});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{10, 10, 30, 30});
  }
  // A radix of at least p is one step of direct messages.
  CHECK(testing::traffic(bruck(4, 40, 8))[0].send_peers == std::vector<core::Rank>{3, 2, 1});
}

TEST_CASE("Bruck allgather keeps the rotated vector in tmp and copies it back in two parts",
          "[algorithms][allgather][bruck]") {
  // 10 bytes on 4 ranks: blocks [0,3) [3,6) [6,8) [8,10). Rank 1's rotated order is 1 2 3 0.
  const core::Schedule s = bruck(4, 10);
  CHECK(s.header().tmp_bytes == 10);
  std::vector<core::Op> copies;
  for (core::OpId id = s.rank_begin(1); id < s.rank_end(1); ++id) {
    if (s.kind(id) == core::OpKind::copy) {
      copies.push_back(s.op(id));
    }
  }
  REQUIRE(copies.size() == 3);
  CHECK(copies[0].source == core::Range{core::Buffer::data, 3, 3});
  CHECK(copies[0].target == core::Range{core::Buffer::tmp, 0, 3});
  CHECK(copies[1].source == core::Range{core::Buffer::tmp, 3, 4}); // blocks 2, 3
  CHECK(copies[1].target == core::Range{core::Buffer::data, 6, 4});
  CHECK(copies[2].source == core::Range{core::Buffer::tmp, 7, 3}); // block 0
  CHECK(copies[2].target == core::Range{core::Buffer::data, 0, 3});
}

TEST_CASE("Bruck allgather reserves exactly its operations and dependencies",
          "[algorithms][allgather][bruck]") {
  // p = 5, radix 2: 1 + 6 operations per rank plus 2p-2 copies. Dependencies per rank: the first
  // send waits for the copy, the next two for the previous receive and send; each final copy too.
  const core::Schedule s = bruck(5, 1000);
  CHECK(s.op_count() == 5 * 7 + 8);
  CHECK(s.dep_count() == 5 * 5 + 8 * 2);
  for (const std::uint32_t p : {1U, 2U}) {
    CHECK(bruck(p, 1000).op_count() == (p == 1 ? 0 : 2 * 3 + 2));
  }
}

TEST_CASE("Bruck allgather declares ceil(lg p) a + (p-1)/p n b for radix 2 only",
          "[algorithms][allgather][bruck]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:2");
  CHECK(&reg.find(core::CollectiveKind::allgather, "mpich:brucks") == &algo);
  CHECK(&reg.find(core::CollectiveKind::allgather, "smpi:bruck") == &algo);
  auto req = allgather_request(6, 600);
  req.params.clear(); // the default radix is 2
  const auto c = reg.cost(algo, req);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 500.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(6, 600, 3)).has_value());
  CHECK_FALSE(reg.cost(algo, allgather_request(6, 601)).has_value());
  req = allgather_request(6, 600, 1);
  CHECK(reg.refusal(algo, req) == "parameter 'radix' = 1 is out of range [2, 1024]");
}

TEST_CASE("k-Bruck allgather is correct and race-free for radix 3 to p+1",
          "[algorithms][allgather][bruck]") {
  // The conformance test runs the default radix only.
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "bruck");
  for (std::uint32_t p = 2; p <= 20; ++p) {
    for (const std::int64_t radix : {3, 4, 5, 7}) {
      for (const std::uint64_t n : {std::uint64_t{p} - 1, std::uint64_t{4} * p + 3}) {
        CAPTURE(p, radix, n);
        const core::Schedule s = reg.generate(algo, allgather_request(p, n, radix));
        const core::VerifyReport valid = core::validate(s);
        CHECK(valid.ok());
        INFO(valid.summary());
        const core::VerifyReport semantics = core::check_semantics(s);
        INFO(semantics.summary());
        CHECK(semantics.ok());
      }
    }
  }
}

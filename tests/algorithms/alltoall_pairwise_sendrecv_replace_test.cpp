#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  return req;
}
core::Schedule replace(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "pairwise_sendrecv_replace"),
                      alltoall_request(p, n));
}
} // namespace

TEST_CASE("pairwise_sendrecv_replace swaps one block with every rank in increasing rank order",
          "[algorithms][alltoall][pairwise_sendrecv_replace]") {
  const core::Schedule s = replace(4, 40);
  const auto t = testing::traffic(s);
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 1, 3});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{10, 10, 10});
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3});
  CHECK(s.header().tmp_bytes == 10); // the single scratch block
  // Rank 2: the in-place copy, then (pack, send, recv) per partner; the swap with 0 moves block 0.
  const core::OpId base = s.rank_begin(2);
  CHECK(s.op(base).source == core::Range{core::Buffer::data, 0, 40});
  CHECK(s.op(base).target == core::Range{core::Buffer::data, 40, 40});
  CHECK(s.op(base + 1).source == core::Range{core::Buffer::data, 40, 10});
  CHECK(s.op(base + 1).target == core::Range{core::Buffer::tmp, 0, 10});
  CHECK(s.op(base + 2).target == core::Range{core::Buffer::tmp, 0, 10});
  CHECK(s.op(base + 3).target == core::Range{core::Buffer::data, 40, 10});
  // The next pack reuses the scratch block: it waits for the send and the receive.
  CHECK(s.op(base + 4).deps == std::vector<std::uint32_t>{2, 3});
}

TEST_CASE("pairwise_sendrecv_replace reserves p(3p-2) operations and declares no closed form",
          "[algorithms][alltoall][pairwise_sendrecv_replace]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 7U}) {
    CAPTURE(p);
    const core::Schedule s = replace(p, 10ULL * p);
    CHECK(s.op_count() == 1ULL * p * (3 * p - 2));
    CHECK(s.dep_count() == (p >= 2 ? 1ULL * p * (1 + 2 * (p - 2) + 2 * (p - 1)) : 0));
  }
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "mpich:pairwise_sendrecv_replace");
  CHECK(algo.name == "pairwise_sendrecv_replace");
  CHECK_FALSE(reg.cost(algo, alltoall_request(4, 40)).has_value());
}

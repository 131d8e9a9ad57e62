#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}

core::Schedule neighbor_exchange(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "neighbor_exchange"),
                      allgather_request(p, n));
}
} // namespace

TEST_CASE("neighbor exchange allgather alternates neighbours and forwards two blocks a step",
          "[algorithms][allgather][neighbor_exchange]") {
  // p = 8, blocks of 10 bytes: rank 2 talks to 3, 1, 3, 1; rank 5 to 4, 6, 4, 6.
  const core::Schedule s = neighbor_exchange(8, 80);
  const auto t = testing::traffic(s);
  CHECK(t[2].send_peers == std::vector<core::Rank>{3, 1, 3, 1});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 6, 4, 6});
  for (const auto& rank : t) {
    CHECK(rank.send_lengths == std::vector<std::uint64_t>{10, 20, 20, 20});
    CHECK(rank.recv_bytes == 70);
  }
  // Rank 2 receives block 3, then pairs (0,1), (4,5) and (6,7), as Open MPI's recv_data_from.
  std::vector<std::uint64_t> received;
  for (core::OpId id = s.rank_begin(2); id < s.rank_end(2); ++id) {
    if (s.kind(id) == core::OpKind::recv) {
      received.push_back(s.target(id).offset);
    }
  }
  CHECK(received == std::vector<std::uint64_t>{30, 0, 40, 60});
}

TEST_CASE("neighbor exchange allgather refuses odd rank counts, as Open MPI hands them to the ring",
          "[algorithms][allgather][neighbor_exchange]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:5");
  auto req = allgather_request(7, 70);
  CHECK(reg.refusal(algo, req) ==
        "ranks must be even (got 7); Open MPI runs ring instead for odd rank counts: use 'ring'");
  req = allgather_request(1, 70);
  CHECK(reg.refusal(algo, req).empty());
  CHECK(reg.generate(algo, req).op_count() == 0);
}

TEST_CASE("neighbor exchange allgather reserves p operations and p/2 - 1 dependencies per rank",
          "[algorithms][allgather][neighbor_exchange]") {
  for (const std::uint32_t p : {2U, 4U, 10U, 34U}) {
    const core::Schedule s = neighbor_exchange(p, 1000);
    CAPTURE(p);
    CHECK(s.op_count() == 1ULL * p * p);
    CHECK(s.dep_count() == 1ULL * p * (p / 2 - 1));
  }
}

TEST_CASE("neighbor exchange allgather declares (p/2) a + (p-1)/p n b when p divides n",
          "[algorithms][allgather][neighbor_exchange]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "smpi:ompi_neighborexchange");
  const auto c = reg.cost(algo, allgather_request(10, 1000));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 5.0);
  CHECK(c->beta_bytes == 900.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(10, 1001)).has_value());
}

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule sag_knomial(std::uint32_t p, std::uint64_t n, core::Rank root,
                           const std::string& radix = "4") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "sag_knomial");
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params = algorithms::resolve_params(algo, {{"radix", radix}});
  return reg.generate(algo, req);
}
} // namespace

TEST_CASE("sag_knomial scatters down UCC's k-nomial pattern, then runs SRA's allgather back up",
          "[algorithms][bcast][sag_knomial]") {
  // p = 16 = 4^2, n = 64. Scatter: the root cuts the vector into 4 segments of 16 and sends three
  // to loop ranks 1, 2, 3 (distance 1), then cuts its own 16 into 4 and sends to 4, 8, 12
  // (distance 4). Allgather backwards: 4 bytes with 4, 8, 12, then 16 with 1, 2, 3.
  const auto t = testing::traffic(sag_knomial(16, 64, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 4, 8, 12, 4, 8, 12, 1, 2, 3});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{16, 16, 16, 4, 4, 4, 4, 4, 4, 16, 16, 16});
  // Rank 1 gets [16, 32) from the root and passes three quarters to 5, 9 and 13.
  CHECK(std::vector<core::Rank>(t[1].send_peers.begin(), t[1].send_peers.begin() + 3) ==
        std::vector<core::Rank>{5, 9, 13});
  // Rank 5 only receives in the scatter (4 bytes from rank 1), then exchanges 4 bytes with its
  // distance-4 group {1, 5, 9, 13} and 16 with its distance-1 group {4, 5, 6, 7}: 64 in all.
  CHECK(t[5].send_peers == std::vector<core::Rank>{1, 9, 13, 4, 6, 7});
  CHECK(t[5].send_lengths == std::vector<std::uint64_t>{4, 4, 4, 16, 16, 16});
  CHECK(t[5].recv_bytes == 64);
  // Every rank but the root receives a scatter segment, then (p-1)/p n in the allgather plus its
  // own group's share again: the root receives (p-1)/p n only.
  CHECK(t[0].recv_bytes == 60);
}

TEST_CASE("sag_knomial: extra ranks get the vector from their proxy, and roots rotate the pattern",
          "[algorithms][bcast][sag_knomial]") {
  // p = 6, k = 4: full = 4, n_extra = 2; odd ranks below 4 (1 and 3) are extra, their even
  // neighbours (0 and 2) proxies that send them the whole vector at the end.
  const auto t = testing::traffic(sag_knomial(6, 120, 0));
  CHECK(t[1].sends == 0);
  CHECK(t[1].recv_bytes == 120);
  CHECK(t[3].recv_bytes == 120);
  CHECK(t[0].send_peers.back() == 1);
  CHECK(t[0].send_lengths.back() == 120);
  CHECK(t[2].send_peers.back() == 3);
  // Root 3 on 16 ranks: rank 3 is loop rank 0 and scatters to 4, 5, 6, then 7, 11, 15.
  const auto r = testing::traffic(sag_knomial(16, 64, 3));
  CHECK(std::vector<core::Rank>(r[3].send_peers.begin(), r[3].send_peers.begin() + 6) ==
        std::vector<core::Rank>{4, 5, 6, 7, 11, 15});
  // Radix 2 on 8 ranks: the binomial scatter of 32, 16, 8 bytes and the recursive-doubling
  // allgather of van de Geijn's broadcast, on UCC's pattern (partners at distance 1, 2, 4).
  const auto b = testing::traffic(sag_knomial(8, 64, 0, "2"));
  CHECK(b[0].send_peers == std::vector<core::Rank>{1, 2, 4, 4, 2, 1});
  CHECK(b[0].send_lengths == std::vector<std::uint64_t>{32, 16, 8, 8, 16, 32});
  CHECK(sag_knomial(1, 100, 0).op_count() == 0);
}

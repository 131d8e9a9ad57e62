#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request pat_request(core::CollectiveKind c, std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = c;
  req.params["channels"] = 1;
  return req;
}
} // namespace

TEST_CASE("pat allgather sends to r + 2^k and receives from r - 2^k, one block per step",
          "[algorithms][allgather][nccl]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "nccl:pat");
  // 8 ranks, blocks of 16 bytes; steps s = 1..7 go to distance lowbit(s) = 1, 2, 1, 4, 1, 2, 1.
  const auto t = testing::traffic(reg.generate(algo, pat_request(algo.collective, 8, 128)));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    const std::vector<core::Rank> expected{(r + 1) % 8, (r + 2) % 8, (r + 1) % 8, (r + 4) % 8,
                                           (r + 1) % 8, (r + 2) % 8, (r + 1) % 8};
    CHECK(t[r].send_peers == expected);
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>(7, 16));
    CHECK(t[r].recvs == 7);
  }
  // 6 ranks: distances 1, 2, 1, 4, 1.
  const auto six = testing::traffic(reg.generate(algo, pat_request(algo.collective, 6, 60)));
  CHECK(six[5].send_peers == std::vector<core::Rank>{0, 1, 0, 3, 0});
}

TEST_CASE("pat allgather refuses more than one rank per node and protocols other than Simple",
          "[algorithms][allgather][nccl]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "pat");
  core::ClusterSpec c;
  c.devices_per_node = 2;
  const core::Topology t = topologies::build_cluster(c, core::EndpointSpec{}, 4);
  algorithms::Request req = pat_request(algo.collective, 4, 64);
  req.topology = &t;
  CHECK(reg.refusal(algo, req) == "NCCL enables PAT only with one rank per node");
  req = pat_request(algo.collective, 4, 64);
  req.params["protocol"] = 2;
  CHECK(reg.refusal(algo, req) == "NCCL runs PAT with the Simple protocol only");
  // PAT chunks: 512 KiB halved while chunk x channels x 32 > n, down to 64 KiB.
  const auto big = testing::traffic(reg.generate(algo, pat_request(algo.collective, 2, 1 << 22)));
  CHECK(big[0].send_lengths == std::vector<std::uint64_t>(16, 128 << 10));
}

#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

namespace {
const algorithms::AlgorithmInfo& info(const algorithms::Registry& reg, const char* name) {
  return reg.find(CollectiveKind::allreduce, name);
}
std::int64_t choice(const algorithms::AlgorithmInfo& a, const std::string& param,
                    const std::string& name) {
  for (const auto& p : a.params) {
    if (p.name == param) {
      for (std::size_t i = 0; i < p.choices.size(); ++i) {
        if (p.choices[i] == name) {
          return static_cast<std::int64_t>(i);
        }
      }
    }
  }
  FAIL("no choice " << param << "=" << name);
  return -1;
}
} // namespace

TEST_CASE("two-level allreduce: only node leaders cross nodes, and each node moves n per tree "
          "edge twice",
          "[algorithms][allreduce][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = info(reg, "two_level");
  // 10 ranks, 4 per node: nodes {0..3}, {4..7}, {8, 9}; leaders 0, 4 and 8.
  const core::Topology topo = testing::cluster_topology(10);
  const std::uint64_t n = 3000;
  auto req = testing::request(CollectiveKind::allreduce, 10, n, 0, &topo);
  req.params["inter"] = choice(algo, "inter", "ring");
  const core::Schedule s = reg.generate(algo, req);
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  const auto intra = testing::intra_node_bytes(s, 4);
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    // Ring allreduce among 3 leaders: 2(N-1) blocks of n/N.
    CHECK(inter[r] == (r % 4 == 0 ? 2 * 2 * (n / 3) : 0));
  }
  // Binomial reduce and binomial bcast: one n-byte message per tree edge, k-1 edges per node.
  CHECK(intra[0] + intra[1] + intra[2] + intra[3] == 2 * 3 * n);
  CHECK(intra[4] + intra[5] + intra[6] + intra[7] == 2 * 3 * n);
  CHECK(intra[8] == n);
  CHECK(intra[9] == n);
  const auto t = testing::traffic(s);
  CHECK(t[9].send_peers == std::vector<core::Rank>{8});
  CHECK(t[9].recvs == 1);
}

TEST_CASE("two-level allreduce with one rank per node is its inter algorithm",
          "[algorithms][allreduce][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = info(reg, "two_level");
  for (const char* inter : {"ring", "recursive_doubling", "rabenseifner"}) {
    auto req = testing::request(CollectiveKind::allreduce, 8, 800);
    req.params["inter"] = choice(algo, "inter", inter);
    const auto flat = reg.generate(reg.find(CollectiveKind::allreduce, inter),
                                   testing::request(CollectiveKind::allreduce, 8, 800));
    const auto s = reg.generate(algo, req);
    CHECK(s.op_count() == flat.op_count());
    CHECK(testing::traffic(s)[3].send_peers == testing::traffic(flat)[3].send_peers);
    const auto mine = reg.cost(algo, req);
    const auto theirs = reg.cost(reg.find(CollectiveKind::allreduce, inter),
                                 testing::request(CollectiveKind::allreduce, 8, 800));
    REQUIRE(mine.has_value());
    REQUIRE(theirs.has_value());
    CHECK(mine->alpha_terms == theirs->alpha_terms);
    CHECK(mine->beta_bytes == theirs->beta_bytes);
    CHECK(mine->gamma_bytes == theirs->gamma_bytes);
  }
  const core::Topology topo = testing::cluster_topology(8);
  CHECK_FALSE(reg.cost(algo, testing::request(CollectiveKind::allreduce, 8, 800, 0, &topo)));
}

TEST_CASE("two-level allreduce: every level choice gives a correct schedule or a reason",
          "[algorithms][allreduce][two_level]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, info(reg, "two_level"), {5, 10, 12}) > 100);
  // A sub-algorithm's refusal names the level.
  const auto& algo = info(reg, "two_level");
  const core::Topology topo = testing::cluster_topology(10);
  auto req = testing::request(CollectiveKind::allreduce, 10, 8, 0, &topo);
  req.params["intra_reduce"] = choice(algo, "intra_reduce", "rabenseifner");
  const std::string why = reg.refusal(algo, req);
  INFO(why);
  CHECK((why.empty() || why.rfind("intra_reduce=rabenseifner on ", 0) == 0));
}

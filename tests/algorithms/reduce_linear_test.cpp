#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  return req;
}
core::Schedule linear(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "linear"), reduce_request(p, n, root));
}
std::vector<core::Rank> recv_peers(const core::Schedule& s, core::Rank r) {
  std::vector<core::Rank> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    if (s.kind(id) == core::OpKind::recv || s.kind(id) == core::OpKind::recv_reduce) {
      out.push_back(s.peer(id));
    }
  }
  return out;
}
} // namespace

TEST_CASE("linear reduce: the root receives and reduces from rank p-1 down to 0",
          "[algorithms][reduce][linear]") {
  const core::Schedule s = linear(5, 7, 2);
  CHECK(recv_peers(s, 2) == std::vector<core::Rank>{4, 3, 1, 0});
  const auto t = testing::traffic(s);
  CHECK(t[2].reduced_bytes == 4 * 7);
  CHECK(t[2].sends == 0);
  for (const core::Rank r : {0U, 1U, 3U, 4U}) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{2});
    CHECK(t[r].send_bytes == 7);
    CHECK(t[r].recvs == 0);
  }
}

TEST_CASE("linear reduce reserves 3(p-1) operations, 2(p-1)-1 dependencies and one scratch vector",
          "[algorithms][reduce][linear]") {
  for (const std::uint32_t p : {1U, 2U, 7U, 33U}) {
    const core::Schedule s = linear(p, 10, p - 1);
    CAPTURE(p);
    CHECK(s.op_count() == 3ULL * (p - 1));
    CHECK(s.dep_count() == (p > 1 ? 2ULL * (p - 1) - 1 : 0));
    CHECK(s.header().tmp_bytes == (p > 1 ? 10U : 0U));
  }
}

TEST_CASE("linear reduce declares no exact closed form", "[algorithms][reduce][linear]") {
  // Receptions and reductions overlap at the root; which dominates depends on b versus g.
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "smpi:flat_tree");
  CHECK_FALSE(reg.cost(algo, reduce_request(6, 10, 3)).has_value());
  CHECK_FALSE(algo.cost_formula.empty());
}

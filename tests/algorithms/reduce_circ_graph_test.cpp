// MPICH circ_graph reduce: the circulant-graph broadcast run backwards, message by message.

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace collsim;

namespace {

algorithms::Request request(core::CollectiveKind c, std::uint32_t p, std::uint64_t n,
                            core::Rank root, std::int64_t chunk = 1000) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = c;
  req.root = root;
  req.params["chunk_size"] = chunk;
  return req;
}

core::Schedule generate(core::CollectiveKind c, const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(c, "mpich:circ_graph"), req);
}

} // namespace

TEST_CASE("circ_graph reduce is the circ_graph bcast reversed: same messages, opposite direction, "
          "last round first",
          "[algorithms][reduce][circ_graph]") {
  for (const std::uint32_t p : {5U, 7U, 8U, 12U}) {
    for (const std::uint64_t n : {std::uint64_t{900}, std::uint64_t{4500}}) {
      for (const core::Rank root : {core::Rank{0}, p / 2}) {
        CAPTURE(p, n, root);
        const core::Schedule bcast =
            generate(core::CollectiveKind::bcast, request(core::CollectiveKind::bcast, p, n, root));
        const core::Schedule reduce = generate(core::CollectiveKind::reduce,
                                               request(core::CollectiveKind::reduce, p, n, root));
        CHECK(core::check_semantics(reduce).summary() == "");
        REQUIRE(reduce.op_count() == bcast.op_count());
        for (core::Rank r = 0; r < p; ++r) {
          CAPTURE(r);
          const std::uint32_t ops = bcast.rank_end(r) - bcast.rank_begin(r);
          REQUIRE(reduce.rank_end(r) - reduce.rank_begin(r) == ops);
          for (std::uint32_t i = 0; i < ops; ++i) {
            const core::Op b = bcast.op(bcast.rank_begin(r) + ops - 1 - i);
            const core::Op d = reduce.op(reduce.rank_begin(r) + i);
            CAPTURE(i);
            CHECK(d.kind ==
                  (b.kind == core::OpKind::send ? core::OpKind::recv_reduce : core::OpKind::send));
            CHECK(d.peer == b.peer);
            CHECK(d.target == b.target);
          }
        }
      }
    }
  }
}

TEST_CASE("circ_graph reduce: every rank but the root sends each block once, after combining it",
          "[algorithms][reduce][circ_graph]") {
  // p = 8, 4 blocks of 1000 bytes. In the bcast the root sends 6 messages and rank 1 forwards 5,
  // so here the root combines 6 blocks and rank 1 combines 5 before sending its 4.
  const core::Schedule s =
      generate(core::CollectiveKind::reduce, request(core::CollectiveKind::reduce, 8, 4000, 0));
  const auto t = testing::traffic(s);
  CHECK(t[0].sends == 0);
  CHECK(t[0].reduced_bytes == 6000);
  CHECK(t[1].send_bytes == 4000);
  CHECK(t[1].reduced_bytes == 5000);
  CHECK(t[1].send_peers == std::vector<core::Rank>{5, 7, 0, 0});
  for (core::Rank r = 1; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_bytes == 4000);
    CHECK(t[r].sends == 4);
  }
  // Rank 1's first send (block 2, to 5, its last bcast receive) combines nothing first; its send
  // of block 0 waits for the last of the three combines of block 0 (and, as its ninth request, for
  // the first: q_len is 8).
  const core::Op first = s.op(s.rank_begin(1));
  CHECK(first.kind == core::OpKind::send);
  CHECK(first.deps.empty());
  std::uint32_t last_combine_of_0 = 0;
  for (core::OpId id = s.rank_begin(1); id < s.rank_end(1); ++id) {
    const core::Op op = s.op(id);
    if (op.target.offset != 0) {
      continue;
    }
    if (op.kind == core::OpKind::recv_reduce) {
      last_combine_of_0 = op.local;
    } else {
      CHECK(std::find(op.deps.begin(), op.deps.end(), last_combine_of_0) != op.deps.end());
    }
  }
}

TEST_CASE("circ_graph reduce with one block on a power of two costs lg p (a + n b + n g)",
          "[algorithms][reduce][circ_graph]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "circ_graph");
  const auto c = reg.cost(algo, request(core::CollectiveKind::reduce, 16, 1000, 5));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 4000.0);
  CHECK(c->gamma_bytes == 4000.0);
  CHECK_FALSE(reg.cost(algo, request(core::CollectiveKind::reduce, 16, 4000, 5)).has_value());
  CHECK_FALSE(reg.cost(algo, request(core::CollectiveKind::reduce, 12, 1000, 5)).has_value());
}

TEST_CASE("circ_graph reduce declares MPICH's commutative-only constraint and refuses bad "
          "parameters",
          "[algorithms][reduce][circ_graph]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "mpich:circ_graph");
  CHECK(algo.constraints.front() == "commutative operations only (MPICH asserts it)");
  algorithms::Request req = request(core::CollectiveKind::reduce, 8, 100, 0);
  req.params["q_len"] = 0;
  CHECK_THROWS_WITH(reg.generate(algo, req),
                    "circ_graph: parameter 'q_len' = 0 is out of range [2, 1048576]");
  CHECK(generate(core::CollectiveKind::reduce, request(core::CollectiveKind::reduce, 8, 0, 3))
            .op_count() == 0);
}

// MPICH circ_graph bcast (Traff's circulant-graph n-block broadcast): the tables against MPICH's
// worked example, the rounds and partners for several p, the schedule's consistency for every p up
// to 1100, traffic, dependencies, the closed form and refusals.

#include "../../algorithms/circ_graph_support.hpp"
#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <tuple>

using namespace collsim;
using algorithms::detail::CirculantGraph;

namespace {

algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root = 0,
                                  std::int64_t chunk = 1000) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["chunk_size"] = chunk;
  return req;
}

core::Schedule circ_graph(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "mpich:circ_graph"), req);
}

/// One message of a rank's program: 's' or 'r', the peer, and the block (offset / chunk).
using Message = std::tuple<char, core::Rank, std::uint64_t>;

std::vector<Message> messages(const core::Schedule& s, core::Rank r, std::uint64_t chunk = 1000) {
  std::vector<Message> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    const core::Op op = s.op(id);
    out.emplace_back(op.kind == core::OpKind::send ? 's' : 'r', op.peer, op.target.offset / chunk);
  }
  return out;
}

} // namespace

TEST_CASE("circ_graph tables for 17 ranks are those of MPICH's worked example",
          "[algorithms][bcast][circ_graph]") {
  // src/mpi/coll/algorithms/circ_graph/circ_graph.c, "Example send/receive schedule with p=17".
  const CirculantGraph g(17);
  REQUIRE(g.q() == 5);
  std::vector<std::uint32_t> skips;
  for (std::uint32_t k = 0; k <= g.q(); ++k) {
    skips.push_back(g.skip(k));
  }
  CHECK(skips == std::vector<std::uint32_t>{1, 2, 3, 5, 9, 17});
  const std::vector<std::vector<int>> recv = {
      {-4, 0, -5, -4, -3, -5, -2, -5, -4, -3, -1, -5, -4, -3, -5, -2, -5},
      {-5, -4, 1, -5, -4, -3, -3, -2, -5, -4, -3, -1, -5, -4, -3, -3, -2},
      {-2, -2, -2, 2, 0, -4, -4, -3, -2, -2, -4, -3, -1, -1, -4, -4, -3},
      {-1, -3, -3, -2, -2, 3, 0, 1, 2, -5, -2, -2, -2, -2, -1, -1, -1},
      {-3, -1, -1, -1, -1, -1, -1, -1, -1, 4, 0, 1, 2, 0, 3, 0, 1}};
  const std::vector<std::vector<int>> send = {
      {0, -5, -4, -3, -5, -2, -5, -4, -3, -1, -5, -4, -3, -5, -2, -5, -4},
      {1, -5, -4, -3, -3, -2, -5, -4, -3, -1, -5, -4, -3, -3, -2, -5, -4},
      {2, 0, -4, -4, -3, -2, -2, -4, -3, -1, -1, -4, -4, -3, -2, -2, -2},
      {3, 0, 1, 2, -5, -2, -2, -2, -2, -1, -1, -1, -1, -3, -3, -2, -2},
      {4, 0, 1, 2, 0, 3, 0, 1, -3, -1, -1, -1, -1, -1, -1, -1, -1}};
  for (std::uint32_t k = 0; k < 5; ++k) {
    for (std::uint32_t r = 0; r < 17; ++r) {
      CAPTURE(k, r);
      CHECK(g.recv_block(r, k) == recv[k][r]);
      CHECK(g.send_block(r, k) == send[k][r]);
    }
  }
  CHECK(g.baseblock(0) == 5);
  CHECK(g.baseblock(16) == 1); // 16 = 9 + 5 + 2
}

TEST_CASE("circ_graph receive schedule follows the recursive search where MPICH's iterative one "
          "disagrees with its own send schedule",
          "[algorithms][bcast][circ_graph]") {
  // p = 33 (q = 6): MPICH's circ_graph.c gives rank 1 {0, -3, -5, -4, -1, -2}, and its rule-based
  // send schedule has rank 31 send block -3 to rank 1 in round 2. The recursive search gives:
  const CirculantGraph g(33);
  std::vector<int> row;
  for (std::uint32_t k = 0; k < g.q(); ++k) {
    row.push_back(g.recv_block(1, k));
  }
  CHECK(row == std::vector<int>{0, -3, -4, -2, -5, -1});
  CHECK(g.skip(2) == 3);
  CHECK(g.send_block(31, 2) == -4); // what rank 1 = 31 + 3 mod 33 expects
}

TEST_CASE("circ_graph skips halve from p, rounded up", "[algorithms][bcast][circ_graph]") {
  const auto skips = [](std::uint32_t p) {
    const CirculantGraph g(p);
    std::vector<std::uint32_t> out;
    for (std::uint32_t k = 0; k <= g.q(); ++k) {
      out.push_back(g.skip(k));
    }
    return out;
  };
  CHECK(skips(2) == std::vector<std::uint32_t>{1, 2});
  CHECK(skips(5) == std::vector<std::uint32_t>{1, 2, 3, 5});
  CHECK(skips(7) == std::vector<std::uint32_t>{1, 2, 4, 7});
  CHECK(skips(8) == std::vector<std::uint32_t>{1, 2, 4, 8});
  CHECK(skips(12) == std::vector<std::uint32_t>{1, 2, 3, 6, 12});
  CHECK(algorithms::detail::circulant_rounds(3, 4).size() == 6);   // N + q - 1
  CHECK(algorithms::detail::circulant_rounds(4, 5).size() == 8);   // p = 12
  CHECK(algorithms::detail::circulant_rounds(10, 1).size() == 10); // one block: q rounds
}

TEST_CASE("circ_graph bcast: in round i rank r sends block S[i mod q] to r + Skip[i mod q]",
          "[algorithms][bcast][circ_graph]") {
  SECTION("p = 8, 4 blocks: 6 rounds over skips 1, 2, 4") {
    const core::Schedule s = circ_graph(bcast_request(8, 4000));
    // The root sends its blocks in order, then block 3 (the clamped N-1) to finish every region.
    CHECK(messages(s, 0) ==
          std::vector<Message>{
              {'s', 1, 0}, {'s', 2, 1}, {'s', 4, 2}, {'s', 1, 3}, {'s', 2, 3}, {'s', 4, 3}});
    CHECK(messages(s, 1) == std::vector<Message>{{'r', 0, 0},
                                                 {'s', 3, 0},
                                                 {'s', 5, 0},
                                                 {'s', 2, 0},
                                                 {'r', 0, 3},
                                                 {'s', 3, 3},
                                                 {'r', 7, 1},
                                                 {'s', 5, 3},
                                                 {'r', 5, 2}});
    CHECK(messages(s, 7) ==
          std::vector<Message>{
              {'r', 3, 0}, {'r', 6, 1}, {'s', 1, 1}, {'r', 5, 2}, {'s', 3, 2}, {'r', 3, 3}});
  }
  SECTION("p = 5, 4 blocks: skips 1, 2, 3") {
    const core::Schedule s = circ_graph(bcast_request(5, 4000));
    CHECK(messages(s, 0) ==
          std::vector<Message>{
              {'s', 1, 0}, {'s', 2, 1}, {'s', 3, 2}, {'s', 1, 3}, {'s', 2, 3}, {'s', 3, 3}});
    CHECK(messages(s, 4) ==
          std::vector<Message>{
              {'r', 1, 0}, {'r', 3, 2}, {'s', 1, 2}, {'r', 2, 1}, {'s', 2, 2}, {'r', 1, 3}});
  }
  SECTION("p = 7, 3 blocks: the first round is round x = 1 (skip 2)") {
    const core::Schedule s = circ_graph(bcast_request(7, 3000));
    CHECK(messages(s, 0) ==
          std::vector<Message>{{'s', 2, 0}, {'s', 4, 1}, {'s', 1, 2}, {'s', 2, 2}, {'s', 4, 2}});
    CHECK(messages(s, 3) ==
          std::vector<Message>{{'r', 2, 0}, {'s', 5, 0}, {'r', 1, 2}, {'r', 6, 1}});
  }
  SECTION("p = 12, 5 blocks, root 5: relative ranks") {
    const core::Schedule s = circ_graph(bcast_request(12, 5000, 5));
    CHECK(messages(s, 5) == std::vector<Message>{{'s', 6, 0},
                                                 {'s', 7, 1},
                                                 {'s', 8, 2},
                                                 {'s', 11, 3},
                                                 {'s', 6, 4},
                                                 {'s', 7, 4},
                                                 {'s', 8, 4},
                                                 {'s', 11, 4}});
    // Relative rank 6 (rank 11) first hears block 3 from the root over skip 6.
    CHECK(messages(s, 11) == std::vector<Message>{{'r', 5, 3},
                                                  {'s', 0, 3},
                                                  {'r', 10, 1},
                                                  {'s', 1, 3},
                                                  {'r', 9, 0},
                                                  {'s', 2, 3},
                                                  {'r', 8, 2},
                                                  {'r', 5, 4}});
  }
}

TEST_CASE("circ_graph schedule: every rank gets every block once, and only forwards what it has, "
          "for every p up to 1100",
          "[algorithms][bcast][circ_graph]") {
  std::size_t failures = 0;
  for (std::uint32_t p = 2; p <= 1100; ++p) {
    const CirculantGraph g(p);
    const std::uint32_t q = g.q();
    for (const std::uint64_t blocks : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{q},
                                       std::uint64_t{q} + 1, 2 * std::uint64_t{q} + 1}) {
      // got[r * blocks + j]: the round rank r received block j in (-1: not yet).
      std::vector<std::int64_t> got(std::size_t{p} * blocks, -1);
      for (std::uint64_t j = 0; j < blocks; ++j) {
        got[j] = 0;
      }
      std::int64_t round = 1;
      bool ok = true;
      for (const auto& rd : algorithms::detail::circulant_rounds(q, blocks)) {
        for (std::uint32_t r = 0; r < p && ok; ++r) {
          const std::uint32_t to = (r + g.skip(rd.k)) % p;
          const std::int64_t out =
              algorithms::detail::circulant_block(g.send_block(r, rd.k), rd, blocks);
          const std::int64_t in =
              algorithms::detail::circulant_block(g.recv_block(to, rd.k), rd, blocks);
          if (to == 0) {
            continue;
          }
          // What r sends is what r + Skip[k] expects, r has it from an earlier round, and the
          // receiver has not had it.
          const auto has = [&](std::uint32_t rank, std::int64_t j) -> std::int64_t& {
            return got[std::size_t{rank} * blocks + static_cast<std::size_t>(j)];
          };
          ok = out == in &&
               (out < 0 || (has(r, out) >= 0 && has(r, out) < round && has(to, out) == -1));
          if (ok && out >= 0) {
            has(to, out) = round;
          }
        }
        ++round;
      }
      ok = ok && std::find(got.begin(), got.end(), -1) == got.end();
      if (!ok) {
        ++failures;
        FAIL_CHECK("p = " << p << ", " << blocks << " blocks");
      }
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("circ_graph bcast sends (p-1) N messages and n bytes to every rank but the root",
          "[algorithms][bcast][circ_graph]") {
  for (const std::uint32_t p : {5U, 7U, 8U, 12U}) {
    CAPTURE(p);
    const std::uint64_t n = 4500; // blocks of 1000, the last of 500
    const core::Schedule s = circ_graph(bcast_request(p, n, p / 2));
    CHECK(core::check_semantics(s).summary() == "");
    const auto t = testing::traffic(s);
    std::uint64_t sent = 0;
    std::uint64_t count = 0;
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(r);
      CHECK(t[r].recv_bytes == (r == p / 2 ? 0 : n));
      CHECK(t[r].recvs == (r == p / 2 ? 0 : 5));
      sent += t[r].send_bytes;
      count += t[r].sends;
    }
    CHECK(sent == (p - 1) * n);
    CHECK(count == (p - 1) * 5);
    CHECK(s.op_count() == 2 * (p - 1) * 5);
  }
  CHECK(circ_graph(bcast_request(8, 0)).op_count() == 0); // MPICH returns at once
  CHECK(circ_graph(bcast_request(1, 100)).op_count() == 0);
  // chunk_size 0: one block of n bytes, q rounds, the binomial tree's p - 1 messages.
  const auto t = testing::traffic(circ_graph(bcast_request(12, 777, 0, 0)));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 6});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{777, 777, 777, 777});
}

TEST_CASE("circ_graph bcast sends wait for their block, q_len caps the requests in flight",
          "[algorithms][bcast][circ_graph]") {
  // q_len 8 never binds for p = 5, 4 blocks (at most 8 operations per rank): the only dependencies
  // are the 10 sends of non-root ranks on their blocks' receives.
  const core::Schedule s = circ_graph(bcast_request(5, 4000));
  CHECK(s.dep_count() == 10);
  // Rank 1 forwards block 0 (its first receive) to 4, 2 and 3, and block 3 (its second) to 4.
  CHECK(s.op(s.rank_begin(1) + 1).deps == std::vector<std::uint32_t>{0});
  CHECK(s.op(s.rank_begin(1) + 6).deps == std::vector<std::uint32_t>{3});
  // q_len 2: every operation also waits for the one issued two before it.
  algorithms::Request req = bcast_request(8, 4000);
  req.params["q_len"] = 2;
  const core::Schedule tight = circ_graph(req);
  CHECK(core::check_semantics(tight).summary() == "");
  for (core::Rank r = 0; r < 8; ++r) {
    for (core::OpId id = tight.rank_begin(r) + 2; id < tight.rank_end(r); ++id) {
      const core::Op op = tight.op(id);
      CAPTURE(r, op.local);
      CHECK(std::find(op.deps.begin(), op.deps.end(), op.local - 2) != op.deps.end());
    }
  }
}

TEST_CASE("circ_graph bcast with one block on a power of two costs lg p (a + n b), the binomial "
          "tree's",
          "[algorithms][bcast][circ_graph]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "circ_graph");
  algorithms::Request req = bcast_request(8, 1000, 3);
  req.params.erase("chunk_size"); // 128 KiB: one block
  const auto c = reg.cost(algo, req);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 3000.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(8, 4000)).has_value()); // 4 blocks
  req.ranks = 12;
  CHECK_FALSE(reg.cost(algo, req).has_value());
}

TEST_CASE("circ_graph bcast refuses a queue shorter than MPICH's 2 and a negative chunk size",
          "[algorithms][bcast][circ_graph]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "circ_graph");
  algorithms::Request req = bcast_request(8, 100);
  req.params["q_len"] = 1;
  CHECK_THROWS_WITH(reg.generate(algo, req),
                    "circ_graph: parameter 'q_len' = 1 is out of range [2, 1048576]");
  req = bcast_request(8, 100, 0, -1);
  CHECK_THROWS_WITH(reg.generate(algo, req),
                    "circ_graph: parameter 'chunk_size' = -1 is out of range [0, 1073741824]");
  req = bcast_request(8, 100);
  req.params["chunk_sise"] = 10;
  CHECK_THROWS_WITH(
      reg.generate(algo, req),
      "circ_graph: unknown parameter 'chunk_sise' (did you mean 'chunk_size'?); valid "
      "parameters are: chunk_size, q_len");
}

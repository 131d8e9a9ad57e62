// MPICH circ_graph allgather: p circulant-graph broadcasts at once, one per rank's block.

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <tuple>

using namespace collsim;

namespace {

algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n, std::int64_t chunk) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  req.params["chunk_size"] = chunk;
  return req;
}

core::Schedule circ_graph(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "mpich:circ_graph"), req);
}

/// One message: 's' or 'r', the peer, the root whose block it carries, and the chunk.
using Message = std::tuple<char, core::Rank, core::Rank, std::uint64_t>;

/// Rank r's messages when every block is `block` bytes and chunks are `chunk` bytes.
std::vector<Message> messages(const core::Schedule& s, core::Rank r, std::uint64_t block,
                              std::uint64_t chunk) {
  std::vector<Message> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    const core::Op op = s.op(id);
    const auto root = static_cast<core::Rank>(op.target.offset / block);
    out.emplace_back(op.kind == core::OpKind::send ? 's' : 'r', op.peer, root,
                     (op.target.offset - root * block) / chunk);
  }
  return out;
}

} // namespace

TEST_CASE("circ_graph allgather on 8 ranks, one chunk: round k sends every block the rank holds "
          "to r + 2^k",
          "[algorithms][allgather][circ_graph]") {
  const core::Schedule s = circ_graph(allgather_request(8, 8000, 1000));
  CHECK(core::check_semantics(s).summary() == "");
  // Rank 0: its own block to 1; blocks 0 and 7 to 2; blocks 0, 5, 6, 7 to 4. Within a round the
  // roots go in order, each root's send before its receive (MPICH's loop over root = 0..p-1).
  CHECK(messages(s, 0, 1000, 1000) == std::vector<Message>{{'s', 1, 0, 0},
                                                           {'r', 7, 7, 0},
                                                           {'s', 2, 0, 0},
                                                           {'r', 6, 5, 0},
                                                           {'r', 6, 6, 0},
                                                           {'s', 2, 7, 0},
                                                           {'s', 4, 0, 0},
                                                           {'r', 4, 1, 0},
                                                           {'r', 4, 2, 0},
                                                           {'r', 4, 3, 0},
                                                           {'r', 4, 4, 0},
                                                           {'s', 4, 5, 0},
                                                           {'s', 4, 6, 0},
                                                           {'s', 4, 7, 0}});
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].sends == 7);
    CHECK(t[r].recv_bytes == 7000);
  }
}

TEST_CASE("circ_graph allgather on 5 ranks, two chunks per block: N + q - 1 = 4 rounds from round "
          "x = 2",
          "[algorithms][allgather][circ_graph]") {
  const core::Schedule s = circ_graph(allgather_request(5, 10000, 1000));
  CHECK(core::check_semantics(s).summary() == "");
  CHECK(messages(s, 0, 2000, 1000) == std::vector<Message>{// round 2, skip 3
                                                           {'s', 3, 0, 0},
                                                           {'r', 2, 2, 0},
                                                           // round 3 (k = 0), skip 1
                                                           {'s', 1, 0, 1},
                                                           {'r', 4, 1, 0},
                                                           {'s', 1, 2, 0},
                                                           {'r', 4, 4, 1},
                                                           // round 4 (k = 1), skip 2
                                                           {'s', 2, 0, 1},
                                                           {'s', 2, 1, 0},
                                                           {'r', 3, 3, 1},
                                                           {'r', 3, 4, 0},
                                                           // round 5 (k = 2), skip 3
                                                           {'s', 3, 0, 1},
                                                           {'s', 3, 1, 0},
                                                           {'r', 2, 1, 1},
                                                           {'r', 2, 2, 1},
                                                           {'r', 2, 3, 0},
                                                           {'s', 3, 4, 1}});
  CHECK(s.op_count() == 2 * 5 * 4 * 2); // p (p-1) N messages
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 5; ++r) {
    CHECK(t[r].recv_bytes == 8000);
  }
}

TEST_CASE("circ_graph allgather skips the empty chunks of shorter and empty blocks",
          "[algorithms][allgather][circ_graph]") {
  // 7003 bytes on 7 ranks: blocks 0-2 hold 1001 bytes, 3-6 hold 1000. With 1000-byte chunks every
  // block has a chunk 1 position, but only the first three have a byte there.
  const core::Schedule s = circ_graph(allgather_request(7, 7003, 1000));
  CHECK(core::check_semantics(s).summary() == "");
  CHECK(s.op_count() == 2 * 6 * (3 * 2 + 4 * 1));
  // 5 bytes on 8 ranks: five 1-byte blocks and three empty ones.
  const core::Schedule tiny = circ_graph(allgather_request(8, 5, 1000));
  CHECK(core::check_semantics(tiny).summary() == "");
  CHECK(tiny.op_count() == 2 * 7 * 5);
  CHECK(circ_graph(allgather_request(8, 0, 1000)).op_count() == 0);
}

TEST_CASE("circ_graph allgather stays deadlock-free with MPICH's smallest queue",
          "[algorithms][allgather][circ_graph]") {
  for (const std::uint32_t p : {5U, 7U, 8U, 12U}) {
    CAPTURE(p);
    algorithms::Request req = allgather_request(p, 3 * p * 1000 + 7, 1000);
    req.params["q_len"] = 2;
    CHECK(core::check_semantics(circ_graph(req)).summary() == "");
  }
}

TEST_CASE("circ_graph allgather's closed form is one exchange on 2 ranks",
          "[algorithms][allgather][circ_graph]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "circ_graph");
  const auto c = reg.cost(algo, allgather_request(2, 2000, 1 << 20));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 1000.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(4, 4000, 1 << 20)).has_value());
  CHECK_FALSE(reg.cost(algo, allgather_request(2, 2000, 500)).has_value()); // 2 chunks
}

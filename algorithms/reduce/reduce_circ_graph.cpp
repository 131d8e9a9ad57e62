// Circulant-graph reduce (algorithms.md RD10): the circulant-graph broadcast (BC12) run backwards,
// every message reversed and every receive combined into the receiver's block.
//
// Source: MPICH MPIR_Reduce_intra_circ_graph (src/mpi/coll/reduce/reduce_intra_circ_graph.c),
// "reduction is the reverse of bcast schedule": iterate the rounds from the last down to the
// first, send block R[k] to r - Skip[k] and receive block S[k] from r + Skip[k], reducing after
// each receive (MPII_cga_reduce_send/recv). Tables and rounds as in circ_graph_support.hpp (Traff,
// arXiv 2312.11236). MPICH asserts a commutative operation: a block's partial results meet in the
// order of the circulant graph, not of the ranks.
//
// Schedule, relative rank r = (rank - root) mod p, N = ceil(n / chunk_size) blocks, for each of the
// N - 1 + q rounds (k, offset) of circulant_rounds in reverse:
//   send block R[k] + offset to rank - Skip[k] (not from the root; skipped when negative; clamped
//     to N-1), then
//   receive block S[k] + offset from rank + Skip[k] and reduce it into data (not from the root;
//     skipped when negative; clamped to N-1).
// Because the broadcast delivers each block to each non-root rank exactly once, here each non-root
// rank sends each block exactly once, after every receive of it: (p-1) N messages, n bytes sent by
// every rank but the root. MPICH receives into a scratch chunk and reduces with MPIR_Reduce_local
// when the request completes; a recv_reduce into data is the same work, so no scratch is used.
//
// Dependencies: a send waits for the last combine of its block; a combine waits for the previous
// combine of the same block (they write the same bytes; MPICH reduces them one at a time as their
// requests complete); every operation waits for the one issued q_len operations before it
// (MPICH's request slots, freed when a receive's reduction is done). Zero bytes: no messages, as
// in the bcast.
//
// Cost on the loggp engine (o = g = 0): one block (n <= chunk_size, or chunk_size = 0) and p a
// power of two, lg p (a + n b + n g), the binomial tree's: the root combines the vectors of its
// lg p children one after the other, each arriving as the previous combine ends. Otherwise cost()
// declines; (N - 1 + q)(a + s b + s g) bounds it from above (see bcast_circ_graph.cpp).

#include "circ_graph_support.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <array>
#include <bit>

namespace collsim::algorithms {
namespace {

using core::OpKind;

constexpr const char* kName = "circ_graph";
constexpr std::uint32_t kNone = ~0U;

detail::OpCounts circ_graph_counts(const Request& req) {
  const std::uint64_t blocks =
      detail::circulant_block_count(req.bytes.value, detail::circulant_chunk_size(req));
  if (req.ranks < 2) {
    return {};
  }
  return {2 * std::uint64_t{req.ranks - 1} * blocks, 0};
}

core::Schedule generate_circ_graph(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t chunk = detail::circulant_chunk_size(req);
  const std::uint64_t blocks = detail::circulant_block_count(n, chunk);
  core::Schedule s(make_header(req, 0, kName));
  s.reserve(circ_graph_counts(req).ops, 0);
  if (p < 2 || blocks == 0) {
    s.finish();
    return s;
  }
  const detail::CirculantGraph graph(p);
  const std::vector<detail::CirculantRound> rounds = detail::circulant_rounds(graph.q(), blocks);
  const auto block = [&](std::int64_t j) {
    const auto [offset, length] =
        detail::circulant_block_range(n, chunk, static_cast<std::uint64_t>(j));
    return detail::data_range(offset, length);
  };
  detail::RequestQueue queue(detail::circulant_queue_length(req));
  std::vector<std::uint32_t> combined(blocks); // the last operation on each block
  std::array<std::uint32_t, 2> deps{};
  // Up to two dependencies: the block's last combine and the slot's previous request.
  const auto wait_for = [&](std::uint32_t last) {
    std::size_t nd = 0;
    if (last != kNone) {
      deps[nd++] = last;
    }
    if (const auto owner = queue.slot_owner(); owner && (nd == 0 || *owner != deps[0])) {
      deps[nd++] = *owner;
    }
    return std::span<const std::uint32_t>(deps.data(), nd);
  };
  for (core::Rank rank = 0; rank < p; ++rank) {
    s.begin_rank(rank);
    const std::uint32_t r = (rank + p - req.root) % p;
    queue.clear();
    combined.assign(blocks, kNone);
    for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) {
      const std::uint32_t skip = graph.skip(it->k);
      const std::int64_t out = detail::circulant_block(graph.recv_block(r, it->k), *it, blocks);
      if (out >= 0 && r != 0) {
        const auto j = static_cast<std::size_t>(out);
        const std::uint32_t op = detail::add_op(s, OpKind::send, (rank + p - skip) % p, block(out),
                                                wait_for(combined[j]));
        combined[j] = op; // (nothing touches the block after its send)
        queue.push(op);
      }
      const std::int64_t in = detail::circulant_block(graph.send_block(r, it->k), *it, blocks);
      if (in >= 0 && (r + skip) % p != 0) {
        const auto j = static_cast<std::size_t>(in);
        const std::uint32_t op = detail::add_op(s, OpKind::recv_reduce, (rank + skip) % p,
                                                block(in), wait_for(combined[j]));
        combined[j] = op;
        queue.push(op);
      }
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> circ_graph_cost(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  if (req.ranks < 2 || n == 0) {
    return CostTerms{};
  }
  if (detail::circulant_block_count(n, detail::circulant_chunk_size(req)) != 1 ||
      !std::has_single_bit(req.ranks)) {
    return std::nullopt;
  }
  const auto q = static_cast<double>(detail::ceil_log2(req.ranks));
  const auto bytes = q * static_cast<double>(n);
  return CostTerms{q, bytes, bytes};
}

} // namespace

AlgorithmInfo describe_reduce_circ_graph() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "the circulant-graph broadcast backwards: N blocks in N-1+ceil(lg p) rounds, each "
              "rank combining what r+Skip[k] sends before passing it to r-Skip[k]";
  a.source = "MPICH MPIR_Reduce_intra_circ_graph; Traff, arXiv 2312.11236";
  a.aliases = {"mpich:circ_graph"};
  a.params = detail::circulant_params(
      "bytes per block (MPICH MPIR_CVAR_CIRC_GRAPH_CHUNK_SIZE; 0: one block)");
  a.constraints = {"commutative operations only (MPICH asserts it)",
                   "the last block is shorter when chunk_size does not divide n"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(circ_graph_counts(req)); };
  a.generate = generate_circ_graph;
  a.cost = circ_graph_cost;
  a.cost_formula = "one block, p a power of two: lg p (a + n b + n g); otherwise "
                   "(N - 1 + ceil(lg p))(a + s b + s g), N blocks of s bytes, bounds it from above";
  return a;
}

} // namespace collsim::algorithms

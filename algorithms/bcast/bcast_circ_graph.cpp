// Circulant-graph n-block broadcast (algorithms.md BC12), round-optimal: N - 1 + q rounds for N
// blocks, q = ceil(lg p).
//
// Source: J. L. Traff, "Round-optimal n-Block Broadcast Schedules in Logarithmic Time", arXiv
// 2312.11236 (doi 10.1145/3735139); MPICH MPIR_Bcast_intra_circ_graph
// (src/mpi/coll/bcast/bcast_intra_circ_graph.c) over the tables of
// src/mpi/coll/algorithms/circ_graph/ (see circ_graph_support.hpp for the construction and why
// the receive schedule follows the recursive search of MPICH's bcast_intra_circ_qvring.c).
// The block size is MPICH's MPIR_CVAR_CIRC_GRAPH_CHUNK_SIZE (default 128 KiB, 0: one block), the
// requests a rank keeps in flight MPIR_CVAR_CIRC_GRAPH_Q_LEN (default 8, at least 2).
//
// Schedule, relative rank r = (rank - root) mod p, N = ceil(n / chunk_size) blocks (the last one
// shorter), for each of the N - 1 + q rounds (k, offset) of circulant_rounds:
//   send block S[k] + offset to rank + Skip[k] (skipped when negative or when the peer is the root;
//     clamped to N-1), then
//   receive block R[k] + offset from rank - Skip[k] into data (skipped at the root, or negative;
//     clamped to N-1).
// Every non-root rank receives each block exactly once, so there are (p-1) N messages and every
// rank but the root receives n bytes. Zero bytes: no messages (MPICH returns at once).
//
// Dependencies: a send waits for the receive of its block (MPII_cga_bcast_send waits for it), and
// every operation waits for the one issued q_len operations before it on its rank (MPICH's
// request queue of q_len slots: issuing into a busy slot waits for its request). MPICH's second
// limit, a window of 2q blocks with requests in flight, is not modelled; in a round-by-round run
// it never binds.
//
// Cost on the loggp engine (o = g = 0). One block (n <= chunk_size, or chunk_size = 0) and p a
// power of two: lg p (a + n b), the binomial tree's (Skip[k] = 2^k; the last rank is reached over
// lg p hops, each sent first by its sender). For other p the root's back-to-back sends reach
// regions of different depths at different times (p = 9: 2 a + 4 n b), and with several blocks
// messages of neighbouring rounds overlap, so cost() declines. The paper's round count is an upper
// bound there: with blocks of s bytes every operation of round i (from 0) ends by
// (i + 1)(a + s b), since it only waits for operations of earlier rounds, so the whole takes at
// most (N - 1 + q)(a + s b).

#include "bcast/bcast_algorithms.hpp"
#include "circ_graph_support.hpp"
#include "collsim/core/errors.hpp"

#include <array>
#include <bit>
#include <fmt/format.h>

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
  std::vector<std::uint32_t> received(blocks); // the receive of each block
  std::array<std::uint32_t, 2> deps{};
  for (core::Rank rank = 0; rank < p; ++rank) {
    s.begin_rank(rank);
    const std::uint32_t r = (rank + p - req.root) % p;
    queue.clear();
    received.assign(blocks, kNone);
    for (const detail::CirculantRound& round : rounds) {
      const std::uint32_t skip = graph.skip(round.k);
      const std::int64_t out = detail::circulant_block(graph.send_block(r, round.k), round, blocks);
      if (out >= 0 && (r + skip) % p != 0) {
        std::size_t nd = 0;
        if (r != 0) {
          const std::uint32_t got = received[static_cast<std::size_t>(out)];
          if (got == kNone) {
            throw core::InternalError(fmt::format(
                "circ_graph: rank {} of {} sends block {} before receiving it", rank, p, out));
          }
          deps[nd++] = got;
        }
        if (const auto owner = queue.slot_owner(); owner && (nd == 0 || *owner != deps[0])) {
          deps[nd++] = *owner;
        }
        queue.push(detail::add_op(s, OpKind::send, (rank + skip) % p, block(out),
                                  std::span(deps.data(), nd)));
      }
      const std::int64_t in = detail::circulant_block(graph.recv_block(r, round.k), round, blocks);
      if (in >= 0 && r != 0) {
        std::size_t nd = 0;
        if (const auto owner = queue.slot_owner()) {
          deps[nd++] = *owner;
        }
        const std::uint32_t op = detail::add_op(s, OpKind::recv, (rank + p - skip) % p, block(in),
                                                std::span(deps.data(), nd));
        received[static_cast<std::size_t>(in)] = op;
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
  return CostTerms{q, q * static_cast<double>(n), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_circ_graph() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "Traff's round-optimal circulant-graph broadcast: N blocks in N-1+ceil(lg p) rounds, "
              "in round i rank r sends to r+Skip[i mod q] and receives from r-Skip[i mod q]";
  a.source = "Traff, arXiv 2312.11236 (doi 10.1145/3735139); MPICH MPIR_Bcast_intra_circ_graph";
  a.aliases = {"mpich:circ_graph"};
  a.params = detail::circulant_params(
      "bytes per block (MPICH MPIR_CVAR_CIRC_GRAPH_CHUNK_SIZE; 0: one block)");
  a.constraints = {"the last block is shorter when chunk_size does not divide n"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(circ_graph_counts(req)); };
  a.generate = generate_circ_graph;
  a.cost = circ_graph_cost;
  a.cost_formula = "one block, p a power of two: lg p (a + n b); otherwise the paper's round count "
                   "(N - 1 + ceil(lg p))(a + s b), N blocks of s bytes, bounds it from above";
  return a;
}

} // namespace collsim::algorithms

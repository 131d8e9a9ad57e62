// Circulant-graph allgather (algorithms.md AG12): p circulant-graph broadcasts (BC12) at once, one
// rooted at every rank, all on the same circulant graph and in the same rounds.
//
// Source: MPICH MPIR_Allgather_intra_circ_graph (src/mpi/coll/allgather/
// allgather_intra_circ_graph.c): "Allgather is essentially every rank as root and bcast to every
// other processes"; its tables come from MPII_circ_graph_create_all (the receive schedule of every
// relative rank; the send schedule as S[r][k] = R[r + Skip[k]][k]). Tables and rounds as in
// circ_graph_support.hpp (Traff, arXiv 2312.11236).
//
// Schedule, N = ceil(max block / chunk_size) blocks per rank's block (MPICH cuts recvcount bytes by
// MPIR_CVAR_CIRC_GRAPH_CHUNK_SIZE), for each of the N - 1 + q rounds (k, offset), for each root
// t = 0..p-1 in turn (MPICH: "we do this to avoid deadlock with minimum q_len = 2"), with
// r = (rank - t) mod p the rank's place in root t's broadcast:
//   send chunk S[r][k] + offset of block t to rank + Skip[k] (skipped when negative or when that
//     peer is t; clamped to N-1), then
//   receive chunk R[r][k] + offset of block t from rank - Skip[k] (skipped when negative or when
//     the rank is t; clamped to N-1).
// MPICH's blocks all have recvcount bytes; here block t is core::block_range(n, p, t), one byte
// shorter for some t when p does not divide n, and chunks past the end of a block (or of an empty
// block, n < p) are empty and skipped on both sides. So a rank sends one message per root and
// round to the same peer (MPICH's "TODO: pack messages up to chunk_size"): p (p-1) N messages, and
// every rank receives n minus its own block.
//
// Dependencies: a send waits for the receive of its chunk (its own block is there from the start);
// every operation waits for the one issued q_len operations before it (MPICH's request slots).
// Zero bytes: no messages.
//
// Cost: p = 2 and one chunk: a + n/2 b (one exchange; exact when 2 divides n). For larger p the
// p-1 messages of a round share the rank's port while q_len caps those in flight, so cost()
// declines; the paper's count, (N - 1 + q) rounds, bounds the rounds.

#include "allgather/allgather_algorithms.hpp"
#include "circ_graph_support.hpp"
#include "collsim/core/errors.hpp"

#include <array>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::OpKind;

constexpr const char* kName = "circ_graph";
constexpr std::uint32_t kNone = ~0U;

/// Chunks per block: those of the largest block (block 0).
std::uint64_t chunks_per_block(const Request& req) {
  return detail::circulant_block_count(core::block_range(req.bytes.value, req.ranks, 0).second,
                                       detail::circulant_chunk_size(req));
}

detail::OpCounts circ_graph_counts(const Request& req) {
  const std::uint64_t p = req.ranks;
  if (p < 2) {
    return {};
  }
  // Each root's broadcast delivers each of its non-empty chunks to the p-1 other ranks once.
  std::uint64_t chunks = 0;
  const std::uint64_t extra = req.bytes.value % p; // blocks 0..extra-1 are one byte longer
  const std::uint64_t base = req.bytes.value / p;
  chunks += extra * detail::circulant_block_count(base + 1, detail::circulant_chunk_size(req));
  chunks += (p - extra) * detail::circulant_block_count(base, detail::circulant_chunk_size(req));
  return {2 * (p - 1) * chunks, 0};
}

core::Schedule generate_circ_graph(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t chunk = detail::circulant_chunk_size(req);
  const std::uint64_t blocks = chunks_per_block(req);
  core::Schedule s(make_header(req, 0, kName));
  s.reserve(circ_graph_counts(req).ops, 0);
  if (p < 2 || blocks == 0) {
    s.finish();
    return s;
  }
  const detail::CirculantGraph graph(p);
  const std::vector<detail::CirculantRound> rounds = detail::circulant_rounds(graph.q(), blocks);
  // Chunk j of root t's block, or an empty range when it is past the block's end.
  const auto piece = [&](core::Rank t, std::int64_t j) {
    const auto [begin, length] = core::block_range(n, p, t);
    const auto [offset, size] =
        detail::circulant_block_range(length, chunk, static_cast<std::uint64_t>(j));
    return detail::data_range(begin + offset, size);
  };
  detail::RequestQueue queue(detail::circulant_queue_length(req));
  std::vector<std::uint32_t> received; // per (root, chunk): its receive
  std::array<std::uint32_t, 2> deps{};
  for (core::Rank rank = 0; rank < p; ++rank) {
    s.begin_rank(rank);
    queue.clear();
    received.assign(std::size_t{p} * blocks, kNone);
    for (const detail::CirculantRound& round : rounds) {
      const std::uint32_t skip = graph.skip(round.k);
      const core::Rank to = (rank + skip) % p;
      const core::Rank from = (rank + p - skip) % p;
      for (core::Rank t = 0; t < p; ++t) {
        const std::uint32_t r = (rank + p - t) % p;
        const std::int64_t out =
            detail::circulant_block(graph.send_block(r, round.k), round, blocks);
        if (out >= 0 && to != t && piece(t, out).length > 0) {
          std::size_t nd = 0;
          if (t != rank) {
            const std::uint32_t got =
                received[std::size_t{t} * blocks + static_cast<std::size_t>(out)];
            if (got == kNone) {
              throw core::InternalError(fmt::format(
                  "circ_graph: rank {} of {} sends chunk {} of block {} before receiving it", rank,
                  p, out, t));
            }
            deps[nd++] = got;
          }
          if (const auto owner = queue.slot_owner(); owner && (nd == 0 || *owner != deps[0])) {
            deps[nd++] = *owner;
          }
          queue.push(
              detail::add_op(s, OpKind::send, to, piece(t, out), std::span(deps.data(), nd)));
        }
        const std::int64_t in =
            detail::circulant_block(graph.recv_block(r, round.k), round, blocks);
        if (in >= 0 && r != 0 && piece(t, in).length > 0) {
          std::size_t nd = 0;
          if (const auto owner = queue.slot_owner()) {
            deps[nd++] = *owner;
          }
          const std::uint32_t op =
              detail::add_op(s, OpKind::recv, from, piece(t, in), std::span(deps.data(), nd));
          received[std::size_t{t} * blocks + static_cast<std::size_t>(in)] = op;
          queue.push(op);
        }
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
  if (req.ranks != 2 || chunks_per_block(req) != 1 || n % 2 != 0) {
    return std::nullopt;
  }
  return CostTerms{1.0, static_cast<double>(n / 2), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_circ_graph() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "p circulant-graph broadcasts at once, one per rank's block, in N-1+ceil(lg p) "
              "rounds (one message per root and round)";
  a.source = "MPICH MPIR_Allgather_intra_circ_graph; Traff, arXiv 2312.11236";
  a.aliases = {"mpich:circ_graph"};
  a.params = detail::circulant_params("bytes per chunk of each rank's block (MPICH "
                                      "MPIR_CVAR_CIRC_GRAPH_CHUNK_SIZE; 0: one chunk)");
  a.constraints = {"the last chunk of a block is shorter when chunk_size does not divide it"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(circ_graph_counts(req)); };
  a.generate = generate_circ_graph;
  a.cost = circ_graph_cost;
  a.cost_formula = "p = 2, one chunk: a + n/2 b; otherwise no closed form (p-1 messages per round "
                   "share a port, q_len of them in flight)";
  return a;
}

} // namespace collsim::algorithms

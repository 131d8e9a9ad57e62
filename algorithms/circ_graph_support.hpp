#pragma once
// Internal: the circulant-graph n-block broadcast schedule of Traff (algorithms.md BC12), shared by
// MPICH's circ_graph bcast, reduce (the reverse) and allgather (p shifted copies).
//
// Source: J. L. Traff, "Round-optimal n-Block Broadcast Schedules in Logarithmic Time", arXiv
// 2312.11236 (ACM TOPC, doi 10.1145/3735139); MPICH src/mpi/coll/algorithms/circ_graph/ (the
// MPII_circ_graph tables and the MPII_cga request queue) and the receive-schedule search of
// src/mpi/coll/bcast/bcast_intra_circ_vring.c / bcast_intra_circ_qvring.c (all_blocks, gen_rsched).
//
// With p ranks and q = ceil(lg p) (q = 1 for p = 2), relative rank r (the root is 0):
//   Skip[q] = p, Skip[k] = ceil(Skip[k+1] / 2): the q "roughly doubling" distances (1, 2, 4, ...
//     when p is a power of two);
//   baseblock b(r): write r greedily as Skip[e1] + Skip[e2] + ... + Skip[e] (e1 > e2 > ... > e);
//     b = e, and b(0) = q;
//   receive schedule R[k], k < q: the block r receives from r - Skip[k] in round k of a phase,
//     found by a depth-first search over the sums Skip[e1] + ... (e decreasing) that land in
//     (r - Skip[k+1], r - Skip[k]] (mod p), taking each baseblock once and b(r) never; a found
//     e = q stands for b(r), any other e for e - q (a block of the previous phase);
//   send schedule S[k] = R(r + Skip[k])[k]: what the receiver expects (MPICH's
//     MPII_circ_graph_create_all builds it this way; the O(log p) rules of gen_ssched in
//     bcast_intra_circ_qvring.c give the same table, checked for p < 300 while writing this).
// The broadcast of N blocks runs N - 1 + q rounds i = x, x+1, ..., x = (q - (N-1) mod q) mod q:
// with k = i mod q and offset = q floor(i/q) - x, rank r sends block S[k] + offset to r + Skip[k]
// and receives block R[k] + offset from r - Skip[k]; negative blocks are skipped, blocks >= N are
// block N-1, nothing is sent to the root. Every non-root rank receives every block exactly once,
// and only sends blocks it received in an earlier round (the tests check this for every p up to
// 1100).
//
// Why not MPICH's current gen_rsched (circ_graph.c, an iterative version with an explicit stack):
// its search differs from the recursive one for some p (33, 65, 66, 67, 69, 73, 81, 129, ...), and
// for those p its rule-based send schedule (gen_ssched) no longer equals what the receivers expect
// (p = 33: rank 31 sends block -3 in round 2 while rank 1 expects block -5). The recursive search
// of the earlier MPICH files, which follows the paper, is consistent for every p we checked.

#include "generator_support.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collsim::algorithms::detail {

/// MPICH MPIR_CVAR_CIRC_GRAPH_CHUNK_SIZE: bytes per pipeline block (0: one block).
inline constexpr std::int64_t kCircGraphChunkSize = std::int64_t{128} << 10;
/// MPICH MPIR_CVAR_CIRC_GRAPH_Q_LEN: requests a rank keeps in flight (MPICH raises it to 2).
inline constexpr std::int64_t kCircGraphQueueLength = 8;

/// The two parameters of every circ_graph algorithm, chunk_size (described by `chunk_help`) and
/// q_len.
std::vector<ParamSpec> circulant_params(const std::string& chunk_help);
/// The request's chunk_size in bytes (the default when a caller bypassed the registry).
std::uint64_t circulant_chunk_size(const Request& req);
/// The request's q_len.
std::uint32_t circulant_queue_length(const Request& req);

/// The circulant graph's tables for p ranks (p >= 2).
class CirculantGraph {
public:
  explicit CirculantGraph(std::uint32_t p);
  [[nodiscard]] std::uint32_t ranks() const { return p_; }
  /// ceil(lg p), at least 1: the rounds of one phase.
  [[nodiscard]] std::uint32_t q() const { return q_; }
  /// Skip[k], k = 0..q (Skip[q] = p).
  [[nodiscard]] std::uint32_t skip(std::uint32_t k) const { return skip_[k]; }
  /// R[k] of relative rank r: the block (relative to the phase) it receives in round k.
  [[nodiscard]] std::int32_t recv_block(std::uint32_t r, std::uint32_t k) const {
    return recv_[std::size_t{r} * q_ + k];
  }
  /// S[k] of relative rank r: the block it sends in round k (to a root: never sent).
  [[nodiscard]] std::int32_t send_block(std::uint32_t r, std::uint32_t k) const {
    return recv_block((r + skip_[k]) % p_, k);
  }
  /// b(r): the block r receives first (q for the root).
  [[nodiscard]] std::uint32_t baseblock(std::uint32_t r) const;

private:
  std::uint32_t p_;
  std::uint32_t q_;
  std::vector<std::uint32_t> skip_;
  std::vector<std::int8_t> recv_; // p * q
};

/// One round of an N-block broadcast: its round index k within the phase and the block offset.
struct CirculantRound {
  std::uint32_t k;
  std::int64_t offset;
};

/// The N - 1 + q rounds of an N-block broadcast (N >= 1), in order.
std::vector<CirculantRound> circulant_rounds(std::uint32_t q, std::uint64_t blocks);

/// The block a table entry names in a round: -1 when there is none (negative), else clamped to
/// blocks - 1 (MPICH's last q rounds).
inline std::int64_t circulant_block(std::int32_t entry, const CirculantRound& round,
                                    std::uint64_t blocks) {
  const std::int64_t b = entry + round.offset;
  if (b < 0) {
    return -1;
  }
  return std::min<std::int64_t>(b, static_cast<std::int64_t>(blocks) - 1);
}

/// Number of chunk_size-byte blocks of n bytes (0 bytes: none; chunk_size 0: one block).
std::uint64_t circulant_block_count(std::uint64_t n, std::uint64_t chunk_size);

/// Block j of n bytes cut into chunk_size-byte blocks: (offset, length), the last one shorter.
std::pair<std::uint64_t, std::uint64_t>
circulant_block_range(std::uint64_t n, std::uint64_t chunk_size, std::uint64_t j);

/// One rank's issued requests in MPICH's request queue of `length` slots (MPII_cga_request_queue):
/// a new request takes the slot of the one issued `length` requests earlier and waits for it.
class RequestQueue {
public:
  explicit RequestQueue(std::uint32_t length) : length_(length) {}
  void clear() { issued_.clear(); }
  /// The operation the next issued one must wait for, if any.
  [[nodiscard]] std::optional<std::uint32_t> slot_owner() const {
    if (issued_.size() < length_) {
      return std::nullopt;
    }
    return issued_[issued_.size() - length_];
  }
  /// Records the next issued operation.
  void push(std::uint32_t op) { issued_.push_back(op); }

private:
  std::uint32_t length_;
  std::vector<std::uint32_t> issued_;
};

} // namespace collsim::algorithms::detail

#pragma once
// Where each rank's block lies in a collective's buffer: the uniform layout (block_range) or the
// per-rank counts of a v-collective (ScheduleHeader::counts), with MPI's contiguous
// displacements. Generators, the symbolic checker and the counts sources share it, so that a
// v-variant and its uniform original use one layout.

#include "collsim/core/schedule.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collsim::core {

/// The displacements of a schedule header's blocks. Uniform collectives need no storage (the
/// blocks are block_range(bytes, ranks, i)); v-collectives keep prefix sums of their counts.
class BlockLayout {
public:
  explicit BlockLayout(const ScheduleHeader& h);
  BlockLayout(CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes,
              std::vector<std::uint64_t> counts);

  [[nodiscard]] bool varying() const { return !counts_.empty(); }
  [[nodiscard]] std::uint32_t ranks() const { return ranks_; }

  /// allgather, gather, scatter, reduce_scatter: rank i's block (offset, length) in the vector.
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> block(Rank i) const;

  /// alltoall: the bytes rank `from` sends to rank `to`.
  [[nodiscard]] std::uint64_t count(Rank from, Rank to) const;
  /// alltoall: where they lie in `from`'s input (data[0, bytes)).
  [[nodiscard]] std::uint64_t send_offset(Rank from, Rank to) const;
  /// alltoall: where they land in `to`'s output (data[bytes, ...), ordered by source).
  [[nodiscard]] std::uint64_t recv_offset(Rank from, Rank to) const;
  /// alltoall: the largest row sum (the input region's size, the header's bytes) and the largest
  /// column sum (the output region's size).
  [[nodiscard]] std::uint64_t input_bytes() const { return bytes_; }
  [[nodiscard]] std::uint64_t output_bytes() const { return output_; }
  /// The data buffer the collective needs on every rank.
  [[nodiscard]] std::uint64_t data_bytes() const;

private:
  CollectiveKind collective_;
  std::uint32_t ranks_;
  std::uint64_t bytes_;
  std::uint64_t output_ = 0;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint64_t> displ_;      // block collectives: p + 1 prefix sums
  std::vector<std::uint64_t> recv_displ_; // alltoall: p x p, source-ordered offsets per column
};

/// True for the collectives with a v-variant (allgather, gather, scatter, reduce_scatter,
/// alltoall).
constexpr bool has_counts_variant(CollectiveKind c) {
  return c == CollectiveKind::allgather || c == CollectiveKind::gather ||
         c == CollectiveKind::scatter || c == CollectiveKind::reduce_scatter ||
         c == CollectiveKind::alltoall;
}

/// How many counts a v-collective of `ranks` ranks takes: ranks, or ranks^2 for alltoall.
std::uint64_t counts_size(CollectiveKind c, std::uint32_t ranks);

/// The header's `bytes` for these counts: their sum, or the largest row sum for alltoall.
std::uint64_t counts_bytes(CollectiveKind c, std::uint32_t ranks,
                           const std::vector<std::uint64_t>& counts);

/// Why these counts do not fit the collective ("" when they do): a collective without a
/// v-variant, the wrong number of counts, or a byte total that disagrees with `bytes`.
std::string counts_problem(CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes,
                           const std::vector<std::uint64_t>& counts);

/// A collective as users name it: the MPI v-names (alltoallv, allgatherv, gatherv, scatterv,
/// reduce_scatterv; MPI_Reduce_scatter is the v-variant of reduce_scatter) set `v`; MPI's
/// neighbourhood collectives (neighbor_alltoall, neighbor_alltoallv, neighbor_allgather,
/// neighbor_allgatherv; "neighbour" too) are alltoallv on the process graph's counts and set
/// `neighbor` as well (neighbor_allgather sends one block to every neighbour: the same bytes on
/// the wire as an alltoallv whose row repeats that block).
struct CollectiveName {
  CollectiveKind kind = CollectiveKind::allreduce;
  bool v = false;
  bool neighbor = false;
};
std::optional<CollectiveName> parse_collective_name(std::string_view name);
/// "alltoallv" for alltoall with counts, else to_string(kind).
std::string collective_display_name(CollectiveKind c, bool v);

} // namespace collsim::core

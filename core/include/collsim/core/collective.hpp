#pragma once
// The nine collectives, their names and nccl-tests' bus-bandwidth factors
// (nccl-tests doc/PERFORMANCE.md and src/*.cu *GetBw; algorithms.md section 6.2).

#include "collsim/core/units.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace collsim::core {

enum class CollectiveKind : std::uint8_t {
  allreduce,
  reduce,
  bcast,
  allgather,
  reduce_scatter,
  alltoall,
  gather,
  scatter,
  barrier,
};

inline constexpr std::array kAllCollectives{
    CollectiveKind::allreduce, CollectiveKind::reduce,         CollectiveKind::bcast,
    CollectiveKind::allgather, CollectiveKind::reduce_scatter, CollectiveKind::alltoall,
    CollectiveKind::gather,    CollectiveKind::scatter,        CollectiveKind::barrier,
};

/// "allreduce", "reduce_scatter", ...
std::string_view to_string(CollectiveKind c);
/// Accepts the canonical names plus common spellings ("all_reduce", "reducescatter", "broadcast").
std::optional<CollectiveKind> parse_collective(std::string_view name);
/// Like parse_collective but throws UnknownNameError listing the valid names.
CollectiveKind collective_from_name(std::string_view name);

/// True for collectives that combine contributions (allreduce, reduce, reduce_scatter).
constexpr bool is_reduction(CollectiveKind c) {
  return c == CollectiveKind::allreduce || c == CollectiveKind::reduce ||
         c == CollectiveKind::reduce_scatter;
}
/// True for collectives with a root rank (reduce, bcast, gather, scatter).
constexpr bool has_root(CollectiveKind c) {
  return c == CollectiveKind::reduce || c == CollectiveKind::bcast || c == CollectiveKind::gather ||
         c == CollectiveKind::scatter;
}

/// nccl-tests' bus-bandwidth factor: busbw = algbw * factor.
/// allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall, gather, scatter (n-1)/n; bcast,
/// reduce 1. Barrier moves no data; its factor is defined as 0.
double busbw_factor(CollectiveKind c, std::uint32_t ranks);

} // namespace collsim::core

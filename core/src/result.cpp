#include "collsim/core/result.hpp"

#include "collsim/core/engine.hpp"

namespace collsim::core {

ResultRow make_result_row(CollectiveKind c, std::string algorithm, std::string engine,
                          std::uint32_t ranks, Bytes bytes, Seconds time, std::uint32_t root) {
  ResultRow r;
  r.collective = c;
  r.algorithm = std::move(algorithm);
  r.engine = std::move(engine);
  r.ranks = ranks;
  r.bytes = bytes;
  r.root = root;
  constexpr std::uint64_t kFloat = 4;
  const bool per_rank_count =
      c == CollectiveKind::allgather || c == CollectiveKind::reduce_scatter ||
      c == CollectiveKind::alltoall || c == CollectiveKind::gather || c == CollectiveKind::scatter;
  r.count = per_rank_count && ranks > 0 ? bytes.value / kFloat / ranks : bytes.value / kFloat;
  r.time = time;
  r.algbw = algorithm_bandwidth(bytes, time);
  r.busbw = bus_bandwidth(c, ranks, bytes, time);
  return r;
}

} // namespace collsim::core

// OSU Micro-Benchmarks 7.3 table text. The widths are OSU's: "%-10s" for the size column, "%18s"
// and "%18.2f" for latencies, "%12s" and "%12lu" for iterations, "%17.2f" for barrier's average
// (osu_barrier has no size column). OMB's source says FIELD_WIDTH 20 in one header, but every
// published output (formats.md b.1) has 18-character columns: we follow the outputs.

#include "collsim/probe/probe_format.hpp"

#include "collsim/probe/probe_options.hpp"

#include <fmt/format.h>

namespace collsim::probe {
namespace {

constexpr int kSizeWidth = 10;
constexpr int kFieldWidth = 18;
constexpr int kIterationsWidth = 12;
constexpr int kNoSizeWidth = 17;

std::string_view osu_test_name(core::CollectiveKind c) {
  using core::CollectiveKind;
  switch (c) {
  case CollectiveKind::allreduce: return "Allreduce Latency Test";
  case CollectiveKind::reduce: return "Reduce Latency Test";
  case CollectiveKind::bcast: return "Broadcast Latency Test";
  case CollectiveKind::allgather: return "Allgather Latency Test";
  case CollectiveKind::reduce_scatter: return "Reduce_scatter Latency Test";
  case CollectiveKind::alltoall: return "All-to-All Personalized Exchange Latency Test";
  case CollectiveKind::gather: return "Gather Latency Test";
  case CollectiveKind::scatter: return "Scatter Latency Test";
  case CollectiveKind::barrier: return "Barrier Latency Test";
  }
  return "Latency Test";
}

} // namespace

std::string osu_program(core::CollectiveKind c) {
  return fmt::format("osu_{}", core::to_string(c));
}

std::string osu_banner(core::CollectiveKind c) {
  return fmt::format("# OSU MPI {} v{}", osu_test_name(c), kOsuFormatVersion);
}

std::string osu_column_header(core::CollectiveKind c, bool full) {
  std::string out =
      c == core::CollectiveKind::barrier
          ? std::string("# Avg Latency(us)")
          : fmt::format("{:<{}}{:>{}}", "# Size", kSizeWidth, "Avg Latency(us)", kFieldWidth);
  if (full) {
    out += fmt::format("{:>{}}{:>{}}{:>{}}", "Min Latency(us)", kFieldWidth, "Max Latency(us)",
                       kFieldWidth, "Iterations", kIterationsWidth);
  }
  return out;
}

std::string osu_row(std::optional<std::uint64_t> size, double avg_us, double min_us, double max_us,
                    std::uint64_t iterations, bool full) {
  std::string out = size ? fmt::format("{:<{}}{:>{}.2f}", *size, kSizeWidth, avg_us, kFieldWidth)
                         : fmt::format("{:>{}.2f}", avg_us, kNoSizeWidth);
  if (full) {
    out += fmt::format("{:>{}.2f}{:>{}.2f}{:>{}}", min_us, kFieldWidth, max_us, kFieldWidth,
                       iterations, kIterationsWidth);
  }
  return out;
}

std::string probe_header_line(int ranks, int nodes, int min_ranks_per_node,
                              int max_ranks_per_node) {
  const std::string per_node = min_ranks_per_node == max_ranks_per_node
                                   ? fmt::format("{}", min_ranks_per_node)
                                   : fmt::format("{}-{}", min_ranks_per_node, max_ranks_per_node);
  return fmt::format("# collsim-probe {}: ranks {}, nodes {}, ranks per node {}", probe_version(),
                     ranks, nodes, per_node);
}

} // namespace collsim::probe

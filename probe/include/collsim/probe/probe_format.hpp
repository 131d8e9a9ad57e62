#pragma once
// The text collsim-probe prints: its own '#' header lines and OSU Micro-Benchmarks 7.3 tables,
// column for column (OMB 7.x c/util/osu_util_mpi.c print_preamble, print_only_header,
// print_stats: "%-10s" size, "%18.2f" latencies, "%12lu" iterations; barrier has no size column
// and prints its average as "%17.2f"). Widths checked against the verbatim examples of
// ../shared/reference/formats.md, section b.1.

#include "collsim/core/collective.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace collsim::probe {

/// The OSU version whose format the tables follow.
inline constexpr std::string_view kOsuFormatVersion = "7.3";

/// OSU's program for a collective: "osu_allreduce", "osu_reduce_scatter", ...
std::string osu_program(core::CollectiveKind c);

/// OSU's banner: "# OSU MPI Allreduce Latency Test v7.3".
std::string osu_banner(core::CollectiveKind c);

/// OSU's column titles: "# Size       Avg Latency(us)" (+ min, max, iterations with `full`);
/// barrier, which has no size column: "# Avg Latency(us)".
std::string osu_column_header(core::CollectiveKind c, bool full);

/// One OSU data row, latencies in us; `size` is empty for barrier.
std::string osu_row(std::optional<std::uint64_t> size, double avg_us, double min_us, double max_us,
                    std::uint64_t iterations, bool full);

/// "# collsim-probe 1.0: ranks 8, nodes 2, ranks per node 4" ("3-4" when nodes differ).
std::string probe_header_line(int ranks, int nodes, int min_ranks_per_node, int max_ranks_per_node);

} // namespace collsim::probe

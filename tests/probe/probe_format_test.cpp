// collsim-probe's tables, character for character against OSU Micro-Benchmarks' published
// output (../shared/reference/formats.md, section b.1).

#include "collsim/probe/probe_format.hpp"

#include <catch2/catch.hpp>

using collsim::core::CollectiveKind;
using namespace collsim::probe;

TEST_CASE("OSU banners name each collective as OSU's programs do", "[probe][format]") {
  CHECK(osu_banner(CollectiveKind::allreduce) == "# OSU MPI Allreduce Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::bcast) == "# OSU MPI Broadcast Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::reduce) == "# OSU MPI Reduce Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::allgather) == "# OSU MPI Allgather Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::reduce_scatter) == "# OSU MPI Reduce_scatter Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::alltoall) ==
        "# OSU MPI All-to-All Personalized Exchange Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::gather) == "# OSU MPI Gather Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::scatter) == "# OSU MPI Scatter Latency Test v7.3");
  CHECK(osu_banner(CollectiveKind::barrier) == "# OSU MPI Barrier Latency Test v7.3");
  CHECK(osu_program(CollectiveKind::reduce_scatter) == "osu_reduce_scatter");
}

TEST_CASE("OSU column titles and rows have OSU's widths", "[probe][format]") {
  // Verbatim from OMB 7.4 (openucx/ucc#981) and OMB 7.3 -f (open-mpi/ompi#12318).
  CHECK(osu_column_header(CollectiveKind::allreduce, false) == "# Size       Avg Latency(us)");
  CHECK(osu_row(1, 7.98, 0, 0, 1000, false) == "1                       7.98");
  CHECK(osu_row(1048576, 1519.43, 0, 0, 100, false) == "1048576              1519.43");
  CHECK(osu_column_header(CollectiveKind::reduce, true) ==
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations");
  CHECK(osu_row(1, 53.34, 24.80, 158.96, 1000, true) ==
        "1                      53.34             24.80            158.96        1000");
  // osu_barrier (OMB 5.8, converged-computing/flux-usernetes): no size column.
  CHECK(osu_column_header(CollectiveKind::barrier, false) == "# Avg Latency(us)");
  CHECK(osu_row(std::nullopt, 12.57, 0, 0, 100, false) == "            12.57");
}

TEST_CASE("the probe header gives ranks, nodes and ranks per node", "[probe][format]") {
  CHECK(probe_header_line(8, 2, 4, 4) == "# collsim-probe 1.0: ranks 8, nodes 2, ranks per node 4");
  CHECK(probe_header_line(7, 2, 3, 4) ==
        "# collsim-probe 1.0: ranks 7, nodes 2, ranks per node 3-4");
}

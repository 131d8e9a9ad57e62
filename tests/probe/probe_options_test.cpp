// collsim-probe's command line: defaults, units, OSU's short options and iteration rules, and the
// exact one-line message of each usage error.

#include "collsim/core/errors.hpp"
#include "collsim/probe/probe_options.hpp"

#include <catch2/catch.hpp>

using collsim::core::CollectiveKind;
using namespace collsim::probe;

namespace {

ProbeOptions parse(std::vector<std::string> args) {
  return parse_probe_options(args);
}

std::string error_of(std::vector<std::string> args) {
  try {
    (void)parse_probe_options(args);
  } catch (const collsim::core::Error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE(
    "collsim-probe defaults to allreduce on MPI_CHAR from 4 B to 1 MiB, 100 and 10 iterations",
    "[probe][options]") {
  const ProbeOptions o = parse({});
  CHECK(o.collectives == std::vector{CollectiveKind::allreduce});
  CHECK(o.min_bytes == 4);
  CHECK(o.max_bytes == 1048576);
  CHECK(o.iterations == 100);
  CHECK(o.iterations_large == 10);
  CHECK(o.warmup == 10);
  CHECK(o.datatype == ProbeDatatype::mpi_char);
  CHECK_FALSE(o.full);
  CHECK(o.ompi_algorithms.empty());
  const std::vector<std::uint64_t> sizes = probe_sizes(o);
  REQUIRE(sizes.size() == 19);
  CHECK(sizes.front() == 4);
  CHECK(sizes.back() == 1048576);
  CHECK(probe_iterations(o, 8192) == 100);
  CHECK(probe_iterations(o, 16384) == 10);
}

TEST_CASE("collsim-probe reads sizes with binary units, OSU's short options and --opt=value",
          "[probe][options]") {
  const ProbeOptions o =
      parse({"--sizes", "1KiB:4 MiB", "-f", "--collective=bcast,allreduce,bcast", "-x", "0",
             "--datatype", "FLOAT", "--ompi-algorithm", "1,ring", "--print-sum"});
  CHECK(o.min_bytes == 1024);
  CHECK(o.max_bytes == 4U << 20);
  CHECK(o.full);
  CHECK(o.collectives == std::vector{CollectiveKind::bcast, CollectiveKind::allreduce});
  CHECK(o.warmup == 0);
  CHECK(o.datatype == ProbeDatatype::mpi_float);
  CHECK(o.ompi_algorithms == std::vector<std::string>{"1", "ring"});
  CHECK(o.print_sum);
  CHECK(parse({"-m", "64"}).min_bytes == 64);
  CHECK(parse({"-m", "64"}).max_bytes == 64);
  CHECK(parse({"--collective", "all"}).collectives.size() == 9);
}

TEST_CASE(
    "an explicit --iterations sets both counts, as OSU's -i, unless --iterations-large is given",
    "[probe][options]") {
  const ProbeOptions both = parse({"--iterations", "7"});
  CHECK(both.iterations == 7);
  CHECK(both.iterations_large == 7);
  const ProbeOptions split = parse({"--iterations-large", "3", "-i", "7"});
  CHECK(split.iterations == 7);
  CHECK(split.iterations_large == 3);
  CHECK(probe_iterations(split, 16384) == 3);
}

TEST_CASE("float runs skip the sizes that hold no whole element, as OSU 7.x does",
          "[probe][options]") {
  const ProbeOptions o = parse({"--sizes", "1:16", "--datatype", "float"});
  CHECK(probe_sizes(o) == std::vector<std::uint64_t>{4, 8, 16});
  CHECK(probe_sizes(parse({"--sizes", "1:4"})) == std::vector<std::uint64_t>{1, 2, 4});
}

TEST_CASE("collsim-probe's usage errors are one line that names the option", "[probe][options]") {
  CHECK(error_of({"--sizes", "3:8"}) == "--sizes: '3' (3 bytes) is not a power of two");
  CHECK(error_of({"--sizes", "64:8"}) == "--sizes: MIN (64 bytes) is larger than MAX (8 bytes)");
  CHECK(error_of({"--sizes", "0:8"}) == "--sizes: sizes start at 1 byte, got 0");
  CHECK(error_of({"--sizes", "2GiB"}) ==
        "--sizes: '2GiB' is larger than the largest size per rank, 1 GiB");
  CHECK(error_of({"--sizes", "4:"}) ==
        "--sizes: expected MIN:MAX or one SIZE (bytes, or with KiB, MiB, GiB), got '4:'");
  CHECK(error_of({"--sizes", "4 KiBs"}) ==
        "--sizes: expected a size like '64 KiB', '1 MB' or '8 B', got '4 KiBs'");
  CHECK(error_of({"--iterations", "0"}) == "--iterations: must be at least 1, got 0");
  CHECK(error_of({"--warmup", "ten"}) == "--warmup: expected a whole number, got 'ten'");
  CHECK(error_of({"--iterations"}) == "--iterations: missing value");
  CHECK(error_of({"--full=yes"}) == "--full: takes no value, got 'yes'");
  CHECK(error_of({"--bogus"}) == "unknown option '--bogus' (see --help)");
  CHECK(error_of({"--collective", "allredcue"}) ==
        "--collective: unknown collective 'allredcue' (did you mean 'allreduce'?); valid values "
        "are: allreduce, reduce, bcast, allgather, reduce_scatter, alltoall, gather, scatter, "
        "barrier (or 'all')");
  CHECK(error_of({"--datatype", "double"}) ==
        "--datatype: unknown datatype 'double'; valid values are: char, float");
  CHECK(error_of({"--ompi-algorithm", "1,,4"}) ==
        "--ompi-algorithm: empty entry in '1,,4' (expected ids or names such as 1,4 or "
        "basic_linear,ring)");
  CHECK(error_of({"--sizes", "1:2", "--datatype", "float"}) ==
        "--sizes: no size holds a whole float (4 bytes): the largest is 2 bytes");
}

TEST_CASE("describe_options reproduces the run's command-line options", "[probe][options]") {
  const ProbeOptions o = parse(
      {"--collective", "bcast,barrier", "--sizes", "8:1KiB", "-f", "--ompi-algorithm", "1,4"});
  CHECK(describe_options(o) == "--collective bcast,barrier --sizes 8:1024 --iterations 100 "
                               "--iterations-large 10 --warmup 10 --datatype char --full "
                               "--ompi-algorithm 1,4");
  CHECK(parse({"--collective", "bcast,barrier", "--sizes", "8:1024", "--iterations", "100",
               "--iterations-large", "10", "--warmup", "10", "--datatype", "char", "--full",
               "--ompi-algorithm", "1,4"}) == o);
}

TEST_CASE(
    "the option --describe names the file for the node's scenario and is part of the run's options",
    "[probe][options]") {
  const ProbeOptions o = parse({"--describe", "node.yaml", "--sizes", "4"});
  CHECK(o.describe_path == "node.yaml");
  CHECK(describe_options(o) ==
        "--collective allreduce --sizes 4:4 --iterations 100 "
        "--iterations-large 10 --warmup 10 --datatype char --describe node.yaml");
  CHECK(parse({"--describe=n.yaml"}).describe_path == "n.yaml");
  CHECK_THROWS_WITH(parse({"--describe"}), "--describe: missing value");
  CHECK_THROWS_WITH(parse({"--describe="}),
                    "--describe: expected a file name for the node's scenario");
}

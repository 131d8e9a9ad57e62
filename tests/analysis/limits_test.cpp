// The physical bus-bandwidth limit drawn on bus-bandwidth charts (analysis/limits.hpp), on preset
// machines whose numbers are in their scenario files.

#include "collsim/analysis/limits.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
analysis::BusbwLimit limit_of(const std::string& preset, std::uint32_t ranks) {
  return analysis::busbw_limit(topologies::build(io::load_scenario(preset).topology, ranks));
}
} // namespace

TEST_CASE("busbw limit: the textbook machine's link") {
  const auto l = limit_of("textbook", 16);
  CHECK(l.bandwidth.bytes_per_second == Approx(10e9)); // topology.bandwidth: 10 GB/s
  CHECK(l.reason == "the rank-to-rank link (10.0 GB/s)");
}

TEST_CASE("busbw limit: one DGX A100 is bound by a GPU's NVLinks, several by the node's NICs") {
  // 12 NVLinks x 25 GB/s per GPU into the NVSwitch planes.
  const auto one = limit_of("dgx-a100", 8);
  CHECK(one.bandwidth.bytes_per_second == Approx(300e9));
  CHECK(one.reason.find("nvlink") != std::string::npos);
  // 8 HDR200 NICs x 25 GB/s per node.
  const auto four = limit_of("dgx-a100", 32);
  CHECK(four.bandwidth.bytes_per_second == Approx(200e9));
  CHECK(four.reason == "a node's way out: 8 ib routes (200.0 GB/s)");
}

TEST_CASE("busbw limit: on an NVLink mesh a GPU's links count together") {
  // DGX-1: 6 NVLinks of 25 GB/s per GPU, at most 2 to one peer; JUWELS Booster: 4 to each of 3.
  const auto dgx1 = limit_of("dgx1-v100", 8);
  CHECK(dgx1.bandwidth.bytes_per_second == Approx(150e9));
  CHECK(dgx1.reason == "a rank's nvlink links inside its node (150.0 GB/s)");
  CHECK(limit_of("juwels-booster", 4).bandwidth.bytes_per_second == Approx(300e9));
  // Two JUWELS nodes: the 4 HDR200 NICs (100 GB/s) bound it instead.
  CHECK(limit_of("juwels-booster", 8).bandwidth.bytes_per_second == Approx(100e9));
}

TEST_CASE("busbw limit: 128 CPU ranks per node share one HDR100 NIC") {
  const auto l = limit_of("cpu-hdr100-epyc", 256);
  CHECK(l.bandwidth.bytes_per_second == Approx(12.5e9));
  CHECK(l.reason.find("1 ib route ") != std::string::npos);
}

TEST_CASE("busbw limit: one rank has none") {
  CHECK(limit_of("textbook", 1).bandwidth.bytes_per_second == 0.0);
}

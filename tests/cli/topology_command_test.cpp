// Runs `collsim topology show` and `collsim topology export` as users do: the summary of the
// two-node cluster of tests/data/io/cluster_scenario.yaml (2 x 8 devices, 300 GB/s and 0.7 us
// inside a node, 8 NICs of 400 Gb/s and 1.5 us per node, 0.3 us in the network switch), the
// exported graphs, and the usage errors.

#include "cli_test_support.hpp"
#include <array>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using collsim::testing::Output;
using collsim::testing::run_collsim;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

const std::string kCluster = "tests/data/io/cluster_scenario.yaml";
// 1 network switch + 2 nodes x (1 switch + 8 NICs + 8 devices).
constexpr std::size_t kDevices = 35;
// 2 nodes x 8 duplex pairs each of device-switch, switch-NIC and NIC-network.
constexpr std::size_t kLinks = 96;

} // namespace

TEST_CASE("topology show prints the summary of a cluster with units", "[cli][topology]") {
  const auto o = run_collsim("topology show " + kCluster);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("ranks:               16 on 2 nodes\n") != std::string::npos);
  CHECK(o.out.find("devices:             16 gpu, 2 pcie_switch, 16 nic, 1 network_switch (35 in "
                   "all)\n") != std::string::npos);
  // 8 NICs of 50 GB/s per node; the cut between the nodes is one node's NICs.
  CHECK(o.out.find("injection bandwidth: 400 GB/s per node\n") != std::string::npos);
  CHECK(o.out.find("bisection bandwidth: 400 GB/s per direction") != std::string::npos);
  // 0.7 us inside the nodes + 2 x 1.5 us NIC links + 0.3 us switch.
  CHECK(o.out.find("diameter:            6 links, 4 us (every pair of ranks)\n") !=
        std::string::npos);
  CHECK(o.out.find("routing:             one switch\n") != std::string::npos);
}

TEST_CASE("topology show --route prints the hops and the total", "[cli][topology]") {
  const auto o = run_collsim("topology show " + kCluster + " --route 0 15");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("route from rank 0 to rank 15:\n"
                   "  node0/dev0 -> node0/switch (intra, 300 GB/s, 0.35 us)\n"
                   "  node0/switch -> node0/nic0 (pcie, 300 GB/s, 0 us)\n"
                   "  node0/nic0 -> network (ib, 50 GB/s, 1.65 us)\n"
                   "  network -> node1/nic7 (ib, 50 GB/s, 1.65 us)\n"
                   "  node1/nic7 -> node1/switch (pcie, 300 GB/s, 0 us)\n"
                   "  node1/switch -> node1/dev7 (intra, 300 GB/s, 0.35 us)\n"
                   "  total: 4 us, bottleneck 50 GB/s, 6 hops\n") != std::string::npos);
}

TEST_CASE("topology show --format json has the same numbers", "[cli][topology]") {
  const auto o = run_collsim("topology show " + kCluster + " --ranks 12 --route 1 9 --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  CHECK(j.at("ranks") == 12);
  CHECK(j.at("nodes") == 2);
  CHECK(j.at("devices").at("gpu") == 16);
  CHECK(j.at("links").at("ib").at("directed") == 32);
  CHECK(j.at("links").at("ib").at("duplex_pairs") == 16);
  CHECK(j.at("injection_bandwidth_Bps").at("per_node").size() == 2);
  CHECK(j.at("bisection_bandwidth_Bps").get<double>() == 400e9);
  CHECK(j.at("diameter").at("links") == 6);
  CHECK(j.at("diameter").at("latency_s").get<double>() == Approx(4e-6).epsilon(1e-12));
  const auto& route = j.at("route");
  CHECK(route.at("hops").size() == 6);
  CHECK(route.at("bottleneck_Bps").get<double>() == 50e9);
  CHECK(route.at("hops").at(0).at("from") == "node0/dev1");
}

TEST_CASE("topology export writes every device and link as JSON, GraphML and DOT",
          "[cli][topology]") {
  SECTION("json") {
    const auto o = run_collsim("topology export " + kCluster + " --format json");
    INFO(o.err);
    REQUIRE(o.code == 0);
    const auto j = nlohmann::json::parse(o.out);
    REQUIRE(j.at("devices").size() == kDevices);
    REQUIRE(j.at("links").size() == kLinks);
    CHECK(j.at("devices").at(0).at("name") == "network");
    CHECK(j.at("devices").at(0).at("node").is_null());
    std::size_t with_rank = 0;
    for (const auto& d : j.at("devices")) {
      with_rank += d.at("ranks").size();
    }
    CHECK(with_rank == 16);
    CHECK(j.at("links").at(2).at("kind") == "ib");
    CHECK(j.at("links").at(2).at("bandwidth_Bps").get<double>() == 50e9);
  }
  SECTION("graphml") {
    const auto o = run_collsim("topology export " + kCluster + " --format graphml");
    INFO(o.err);
    REQUIRE(o.code == 0);
    CHECK(o.out.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml "));
    CHECK(count(o.out, "<key ") == 8);
    CHECK(count(o.out, "<node ") == kDevices);
    CHECK(count(o.out, "<edge ") == kLinks);
    CHECK(o.out.ends_with("</graph>\n</graphml>\n"));
  }
  SECTION("dot, duplex pairs as one edge, to a file") {
    const std::string path = "/tmp/collsim_topology_test_export.dot";
    std::remove(path.c_str());
    const auto o = run_collsim("topology export " + kCluster + " --format dot -o " + path);
    INFO(o.err);
    REQUIRE(o.code == 0);
    CHECK(o.out.empty());
    std::ifstream f(path);
    REQUIRE(f);
    const std::string dot((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
    CHECK(count(dot, "digraph collsim {") == 1);
    CHECK(count(dot, "subgraph cluster_node") == 2);
    CHECK(count(dot, " [label=") == kDevices);
    CHECK(count(dot, " -> ") == kLinks / 2);
    CHECK(count(dot, " [dir=both, label=") == kLinks / 2);
    CHECK(dot.find("d0 [label=\"network\\nnetwork_switch\"];") != std::string::npos);
  }
}

TEST_CASE("topology export writes a small full mesh link by link and refuses a large one",
          "[cli][topology]") {
  const auto small = run_collsim("topology export scenarios/textbook.yaml --ranks 4 --format json");
  INFO(small.err);
  REQUIRE(small.code == 0);
  const auto j = nlohmann::json::parse(small.out);
  CHECK(j.at("devices").size() == 4);
  CHECK(j.at("links").size() == 12);
  const auto large =
      run_collsim("topology export scenarios/textbook.yaml --ranks 65 --format graphml");
  CHECK(large.code == 2);
  CHECK(large.out.empty());
  CHECK(large.err ==
        "collsim: error: a uniform topology joins every pair of ranks by an implicit link (65 "
        "ranks: 4160 links); export writes them out only up to 64 ranks, so give --ranks 64 or "
        "fewer\n");
  const auto shown = run_collsim("topology show scenarios/textbook.yaml");
  REQUIRE(shown.code == 0);
  CHECK(shown.out.find("links:               full mesh, 4032 directed links of 10 GB/s, 2 us\n") !=
        std::string::npos);
  CHECK(shown.out.find("bisection bandwidth: 10240 GB/s per direction") != std::string::npos);
}

TEST_CASE("topology usage errors exit 2 with one message", "[cli][topology]") {
  const auto rank = run_collsim("topology show " + kCluster + " --route 0 16");
  CHECK(rank.code == 2);
  CHECK(rank.out.empty());
  CHECK(rank.err ==
        "collsim: error: rank 16 does not exist: the topology has 16 ranks (0 to 15)\n");
  const auto too_many = run_collsim("topology show " + kCluster + " --ranks 17");
  CHECK(too_many.code == 2);
  CHECK(too_many.err ==
        "collsim: error: the cluster has 16 devices (2 nodes x 8) but 17 ranks were requested\n");
  const auto zero = run_collsim("topology export " + kCluster + " --ranks 0 --format json");
  CHECK(zero.code == 2);
  CHECK(zero.err.starts_with("collsim: --ranks: Value 0 not in range 1 to 16777216\n"));
  const auto format = run_collsim("topology show " + kCluster + " --format csv");
  CHECK(format.code == 2);
  CHECK(format.err.starts_with("collsim: error: unknown format 'csv'"));
  const auto export_format = run_collsim("topology export " + kCluster + " --format svg");
  CHECK(export_format.code == 2);
  CHECK(export_format.err.starts_with("collsim: error: unknown format 'svg'"));
  const auto missing = run_collsim("topology export " + kCluster);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--format is required") != std::string::npos);
  const auto one_rank = run_collsim("topology show " + kCluster + " --route 3");
  CHECK(one_rank.code == 2);
  CHECK(one_rank.err.starts_with("collsim: "));
  const auto no_file = run_collsim("topology show tests/data/cli/does_not_exist.yaml");
  CHECK(no_file.code == 2);
  CHECK(no_file.err.starts_with(
      "tests/data/cli/does_not_exist.yaml: error: cannot open scenario file"));
  for (const char* cmd : {"topology --help", "topology show --help", "topology export --help"}) {
    const auto help = run_collsim(cmd);
    INFO(cmd);
    CHECK(help.code == 0);
    CHECK(help.out.find("Usage") != std::string::npos);
  }
}

// Valid scenarios load into the values they describe: units converted, defaults filled in, source
// positions recorded for the later stages that report errors about them.

#include "collsim/core/errors.hpp"
#include "collsim/io/rankfile.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using collsim::core::Bytes;
using collsim::core::CollectiveKind;
using collsim::core::SourcePos;
using collsim::io::load_scenario;
using collsim::io::parse_scenario;

std::string data_dir() {
  return COLLSIM_TEST_DATA_DIR;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The smallest valid scenario; tests append or change one thing at a time.
constexpr const char* kMinimal = R"(name: minimal
topology:
  kind: uniform
studies:
  - collective: allreduce
    algorithms: [ring]
    ranks: [4]
    sizes: 1KiB
)";

} // namespace

TEST_CASE("the textbook scenario loads with every unit converted to base units", "[io][scenario]") {
  const std::string path = data_dir() + "/io/textbook_scenario.yaml";
  const auto s = load_scenario(path);

  CHECK(s.name == "textbook");
  CHECK(s.description == "Every pair of ranks joined by its own 2 us, 200 Gb/s link.");
  CHECK(s.file == path);

  const auto& t = s.topology;
  CHECK(t.kind == "uniform");
  CHECK(t.pos == SourcePos{path, 4, 1});
  CHECK(t.uniform.latency.value == Approx(2e-6));
  // 200 Gb/s is 200e9 bits per second, i.e. 25e9 bytes per second.
  CHECK(t.uniform.bandwidth.bytes_per_second == 25e9);
  CHECK(t.uniform.reduce_bandwidth.bytes_per_second == 20e9);
  CHECK(t.endpoint.overhead.value == Approx(0.5e-6));
  CHECK(t.endpoint.gap.value == Approx(100e-9));
  CHECK(t.endpoint.copy_bandwidth.bytes_per_second == 50e9);

  REQUIRE(s.studies.size() == 2);
  const auto& a = s.studies[0];
  CHECK(a.name == "allreduce crossover");
  CHECK(a.collective == CollectiveKind::allreduce);
  CHECK(a.algorithms ==
        std::vector<std::string>{"ring", "recursive_doubling", "rabenseifner", "reduce_bcast"});
  CHECK(a.algorithm_pos ==
        std::vector<SourcePos>{{path, 15, 18}, {path, 15, 24}, {path, 15, 44}, {path, 15, 58}});
  CHECK(a.ranks == std::vector<std::uint32_t>{8, 64});
  CHECK(a.ranks_pos == SourcePos{path, 16, 12});
  // 8 B, 32 B, ..., 512 MiB: factor 4 from 2^3 stays at or below 1 GiB for 14 sizes.
  REQUIRE(a.sizes.size() == 14);
  CHECK(a.sizes.front() == Bytes{8});
  CHECK(a.sizes.back() == Bytes{1ULL << 29});
  CHECK(a.sizes_pos == SourcePos{path, 17, 12});
  CHECK(a.engine == "analytic");
  CHECK(a.engine_pos == SourcePos{path, 18, 13});
  // Values are kept as written: the registry resolves them per algorithm (sizes, integers, or
  // choice names); positions point at the values, where a resolution error is reported.
  CHECK(a.params ==
        std::map<std::string, std::string>{{"segment_size", "64 KiB"}, {"pipeline_depth", "4"}});
  CHECK(a.param_pos.at("segment_size") == SourcePos{path, 19, 28});
  CHECK(a.pos == SourcePos{path, 13, 5});
  CHECK(a.root == 0);

  const auto& b = s.studies[1];
  CHECK(b.name.empty());
  CHECK(b.collective == CollectiveKind::bcast);
  CHECK(b.algorithms == std::vector<std::string>{"binomial", "pipelined_chain"});
  CHECK(b.algorithm_pos == std::vector<SourcePos>{{path, 22, 9}, {path, 23, 9}});
  CHECK(b.ranks == std::vector<std::uint32_t>{16});
  CHECK(b.sizes == std::vector<Bytes>{Bytes{8}, Bytes{1024}, Bytes{1048576}});
  CHECK(b.root == 3);
  // Without an engine key the study runs on the default engine and points at itself.
  CHECK(b.engine == "loggp");
  CHECK(b.engine_pos == b.pos);
}

TEST_CASE("a cluster scenario fills ClusterSpec and the shared endpoint keys", "[io][scenario]") {
  const std::string path = data_dir() + "/io/cluster_scenario.yaml";
  const auto s = load_scenario(path);
  const auto& t = s.topology;
  CHECK(t.kind == "cluster");
  const auto& c = t.cluster;
  CHECK(c.nodes == 2);
  CHECK(c.devices_per_node == 8);
  CHECK(c.intra_bandwidth.bytes_per_second == 300e9);
  CHECK(c.intra_latency.value == Approx(0.7e-6));
  CHECK(c.nics_per_node == 8);
  CHECK(c.nic_bandwidth.bytes_per_second == 50e9);
  CHECK(c.nic_latency.value == Approx(1.5e-6));
  CHECK(c.switch_latency.value == Approx(0.3e-6));
  CHECK(c.reduce_bandwidth.bytes_per_second == 1e12);
  CHECK(t.endpoint.overhead.value == Approx(1e-6));
  CHECK(t.endpoint.gap.value == 0.0);
  CHECK(t.endpoint.copy_bandwidth.bytes_per_second == 1e12);
  // The uniform section keeps its defaults: a cluster file says nothing about it.
  CHECK(t.uniform == collsim::core::UniformSpec{});

  REQUIRE(s.studies.size() == 1);
  const auto& st = s.studies[0];
  CHECK(st.collective == CollectiveKind::allgather);
  CHECK(st.algorithms == std::vector<std::string>{"ring"});
  CHECK(st.ranks == std::vector<std::uint32_t>{16});
  CHECK(st.sizes == std::vector<Bytes>{Bytes{1ULL << 20}, Bytes{64ULL << 20}});
}

TEST_CASE("keys left out take the documented defaults", "[io][scenario]") {
  const auto s = parse_scenario(kMinimal, "minimal.yaml");
  CHECK(s.file == "minimal.yaml");
  CHECK(s.description.empty());
  CHECK(s.topology.uniform == collsim::core::UniformSpec{});
  CHECK(s.topology.endpoint == collsim::core::EndpointSpec{});
  CHECK(s.topology.endpoint.copy_bandwidth.bytes_per_second == 0.0);
  CHECK(s.topology.uniform.reduce_bandwidth.bytes_per_second == 0.0);
  const auto& st = s.studies.at(0);
  CHECK(st.root == 0);
  CHECK(st.engine == "loggp");
  CHECK(st.params.empty());
  CHECK(st.sizes == std::vector<Bytes>{Bytes{1024}});

  const auto c = parse_scenario(R"(name: c
topology: {kind: cluster}
studies: [{collective: reduce, algorithms: [binomial], ranks: 2, sizes: 8B}]
)",
                                "c.yaml");
  CHECK(c.topology.cluster == collsim::core::ClusterSpec{});
}

TEST_CASE("a single integer is accepted where a list of rank counts is expected",
          "[io][scenario]") {
  std::string text = kMinimal;
  text.replace(text.find("[4]"), 3, "4");
  CHECK(parse_scenario(text, "x.yaml").studies.at(0).ranks == std::vector<std::uint32_t>{4});
}

TEST_CASE("a rank count of exactly 2^24 is accepted", "[io][scenario]") {
  std::string text = kMinimal;
  text.replace(text.find("[4]"), 3, "[1, 16777216]");
  CHECK(parse_scenario(text, "x.yaml").studies.at(0).ranks ==
        std::vector<std::uint32_t>{1, 16777216});
}

TEST_CASE("algorithm parameters accept integers, sizes with units and names", "[io][scenario]") {
  std::string text = kMinimal;
  text += "    params:\n      segment_size: 1 MiB\n      chunks: 8\n      offset: -1\n"
          "      inter: recursive_doubling\n";
  const auto st = parse_scenario(text, "x.yaml").studies.at(0);
  CHECK(st.params == std::map<std::string, std::string>{{"segment_size", "1 MiB"},
                                                        {"chunks", "8"},
                                                        {"offset", "-1"},
                                                        {"inter", "recursive_doubling"}});
  CHECK(st.param_pos.at("chunks") == SourcePos{"x.yaml", 11, 15});
}

TEST_CASE("every example in docs/scenario-format.md loads", "[io][scenario][docs]") {
  // Whole scenarios start with 'name:'; section examples start with their section's key and are
  // completed with a minimal rest. This keeps the examples users copy in step with the loader.
  const std::string doc = read_text(std::string(COLLSIM_SOURCE_DIR) + "/docs/scenario-format.md");
  const std::string minimal_topology = "topology: {kind: uniform}\n";
  const std::string minimal_studies =
      "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, sizes: 8B}]\n";
  std::size_t examples = 0;
  std::size_t at = 0;
  while ((at = doc.find("```yaml\n", at)) != std::string::npos) {
    at += 8;
    const std::size_t end = doc.find("```", at);
    REQUIRE(end != std::string::npos);
    const std::string block = doc.substr(at, end - at);
    at = end + 3;
    ++examples;
    INFO(block);
    std::string text;
    if (block.rfind("name:", 0) == 0) {
      text = block;
    } else if (block.rfind("topology:", 0) == 0) {
      text = "name: doc\n";
      text += block;
      text += minimal_studies;
    } else if (block.rfind("studies:", 0) == 0) {
      text = "name: doc\n";
      text += minimal_topology;
      text += block;
    } else if (block.rfind("simgrid:", 0) == 0 || block.rfind("nccl:", 0) == 0 ||
               block.rfind("mpi:", 0) == 0 || block.rfind("accuracy:", 0) == 0) {
      text = "name: doc\n";
      text += minimal_topology;
      text += block;
      text += minimal_studies;
    } else {
      FAIL("an example that is neither a scenario nor a topology, simgrid, nccl, mpi, accuracy or "
           "studies section");
    }
    CHECK_NOTHROW(parse_scenario(text, "scenario-format.md"));
  }
  CHECK(examples >= 4);
}

TEST_CASE("every scenario shipped in scenarios/ loads", "[io][scenario]") {
  // Running them is the analysis tests' job; loading them here points at the loader first when a
  // preset and the schema drift apart.
  std::size_t loaded = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(COLLSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".yaml") {
      continue;
    }
    INFO(entry.path().string());
    CHECK_NOTHROW(load_scenario(entry.path().string()));
    ++loaded;
  }
  CHECK(loaded >= 1);
}

TEST_CASE("a PCIe section gives the two-way share of traffic staged through the host",
          "[io][scenario][system]") {
  const auto s = parse_scenario("name: pcie\ntopology:\n  kind: system\n  node:\n    gpus: 2\n"
                                "    pcie: {gen: 3, p2p: false, gdr: false, "
                                "staged_duplex_efficiency: 0.66}\n"
                                "studies:\n  - collective: allreduce\n    algorithms: [ring]\n"
                                "    ranks: [2]\n    sizes: [1 MiB]\n",
                                "pcie.yaml");
  CHECK(s.topology.system.node.pcie.staged_duplex_efficiency == Approx(0.66));
  CHECK_FALSE(s.topology.system.node.pcie.p2p);
  CHECK_FALSE(s.topology.system.node.pcie.gdr);
}

TEST_CASE("a system scenario fills SystemSpec, with defaults for the keys left out",
          "[io][scenario][system]") {
  const std::string path = data_dir() + "/io/system_scenario.yaml";
  const auto s = load_scenario(path);
  const auto& t = s.topology;
  CHECK(t.kind == "system");
  CHECK(t.endpoint.overhead.value == Approx(1e-6));
  const auto& sys = t.system;
  CHECK(sys.nodes == 16);

  const auto& n = sys.node;
  CHECK(n.gpus == 8);
  CHECK(n.reduce_bandwidth.bytes_per_second == 1e12);
  CHECK(n.nics == 8);
  CHECK(n.nic_bandwidth.bytes_per_second == 50e9);
  CHECK(n.nic_latency.value == Approx(0.3e-6)); // default
  CHECK(n.nvlink.kind == "switch");
  CHECK(n.nvlink.link_bandwidth.bytes_per_second == 25e9);
  CHECK(n.nvlink.links_per_gpu == 18);
  CHECK(n.nvlink.latency.value == Approx(1.5e-6));
  CHECK(n.nvlink.sharp);
  CHECK(n.nvlink.links_per_pair == 1);                            // default
  CHECK(n.nvlink.sharp_reduce_bandwidth.bytes_per_second == 0.0); // default: line rate
  CHECK(n.nvlink.links.empty());
  CHECK(n.pcie.gen == 5);
  CHECK(n.pcie.switches == 4);
  CHECK_FALSE(n.pcie.p2p);
  CHECK(n.pcie.lanes == 16);                            // default
  CHECK(n.pcie.bandwidth.bytes_per_second == 0.0);      // default: from gen and lanes
  CHECK(n.pcie.latency.value == Approx(0.5e-6));        // default
  CHECK(n.pcie.switch_latency.value == Approx(105e-9)); // default
  CHECK(n.pcie.staged_duplex_efficiency == 1.0);        // default: no two-way loss
  CHECK(n.pcie.gdr);                                    // default: GPUDirect RDMA
  CHECK(n.cpu.sockets == 2);
  CHECK(n.cpu.numa_per_socket == 2);
  CHECK(n.cpu.cores_per_socket == 56);
  CHECK(n.cpu.memory_bandwidth.bytes_per_second == 300e9);
  CHECK(n.cpu.memory_latency.value == Approx(0.1e-6)); // default
  CHECK(n.cpu.inter_socket == "upi");                  // default
  CHECK(n.cpu.inter_socket_bandwidth.bytes_per_second == 62.4e9);

  const auto& net = sys.network;
  CHECK(net.kind == "fat_tree");
  CHECK(net.levels == 2);
  CHECK(net.radix == 64);
  CHECK(net.taper == Approx(2.0));
  CHECK(net.rail_optimized);
  CHECK(net.sharp);
  CHECK(net.link_bandwidth.bytes_per_second == 0.0); // default: the NICs'
  CHECK(net.switch_latency.value == Approx(90e-9));  // default
  CHECK(net.link_latency.value == 0.0);              // default
  CHECK(net.routing == "minimal");                   // default (a DragonFly key)

  CHECK(sys.placement.order == "cyclic");
  CHECK(sys.placement.ranks_per_node == 4);
  CHECK(sys.placement.rankfile.empty());
  CHECK(sys.placement.slots.empty());

  // Positions of nested values, for the checks that run after loading.
  CHECK(t.where("topology.network.radix") == SourcePos{path, 33, 12});
  CHECK(t.where("topology.node.nvlink.links_per_gpu") == SourcePos{path, 16, 22});
  CHECK(t.where("topology.network.groups") == t.pos); // not written: the section
  CHECK(t.pos == SourcePos{path, 6, 1});

  // The uniform and cluster sections keep their defaults.
  CHECK(t.uniform == collsim::core::UniformSpec{});
  CHECK(t.cluster == collsim::core::ClusterSpec{});
  CHECK(s.studies.at(0).ranks == std::vector<std::uint32_t>{8, 64});
}

TEST_CASE("a system section left empty takes every default", "[io][scenario][system]") {
  const auto s = parse_scenario(R"(name: s
topology: {kind: system}
studies: [{collective: allreduce, algorithms: [ring], ranks: 2, sizes: 8B}]
)",
                                "s.yaml");
  CHECK(s.topology.system == collsim::core::SystemSpec{});
  CHECK(s.topology.system.node.gpus == 0);
  CHECK(s.topology.system.network.kind == "switch");
  CHECK(s.topology.system.placement.order == "block");
}

TEST_CASE("a scenario derived from a preset keeps what it does not override",
          "[io][scenario][base]") {
  const auto base = load_scenario("juwels-booster");
  REQUIRE(base.topology.kind == "system");
  const std::string path = data_dir() + "/io/derived_scenario.yaml";
  const auto s = load_scenario(path);

  CHECK(s.name == "juwels-booster-hdr100");
  CHECK(s.description == base.description); // not written: the base's
  CHECK(s.file == path);
  const auto& sys = s.topology.system;
  const auto& b = base.topology.system;
  CHECK(s.topology.kind == "system");
  // The one value written...
  CHECK(sys.node.nic_bandwidth.bytes_per_second == 12.5e9);
  CHECK(b.node.nic_bandwidth.bytes_per_second == 25e9);
  // ...and the rest of the node and everything else as in the base.
  CHECK(sys.nodes == 936);
  CHECK(sys.node.gpus == b.node.gpus);
  CHECK(sys.node.nics == b.node.nics);
  CHECK(sys.node.nic_latency == b.node.nic_latency);
  CHECK(sys.node.nvlink == b.node.nvlink);
  CHECK(sys.node.pcie == b.node.pcie);
  CHECK(sys.node.cpu == b.node.cpu);
  CHECK(sys.network == b.network);
  CHECK(sys.placement == b.placement);
  CHECK(s.topology.endpoint == base.topology.endpoint);
  // The new value's position is in the derived file; the base's values keep theirs.
  CHECK(s.topology.where("topology.node.nic_bandwidth") == SourcePos{path, 6, 20});
  CHECK(s.topology.where("topology.network.groups") ==
        base.topology.where("topology.network.groups"));

  // `studies` replaces the base's list.
  REQUIRE(s.studies.size() == 1);
  CHECK(s.studies[0].collective == CollectiveKind::allgather);
  CHECK(s.studies[0].ranks == std::vector<std::uint32_t>{8});
  CHECK(base.studies.size() >= 1);
  CHECK(base.studies[0].collective == CollectiveKind::allreduce);
}

TEST_CASE("a derived scenario that changes the network kind starts that section from its "
          "defaults",
          "[io][scenario][base]") {
  const auto s = parse_scenario(R"(base: juwels-booster
topology:
  network:
    kind: fat_tree
    levels: 3
)",
                                "derived.yaml");
  const auto& net = s.topology.system.network;
  CHECK(net.kind == "fat_tree");
  CHECK(net.levels == 3);
  CHECK(net.radix == collsim::core::NetworkSpec{}.radix);
  CHECK(net.groups == 0);                // juwels-booster's 20 groups are gone
  CHECK(net.link_latency.value == 0.0);  // the default, not the base's 0.05 us
  CHECK(s.topology.system.nodes == 936); // outside the network: the base's
  CHECK(s.name == "juwels-booster");     // no name written: the base's
  CHECK_FALSE(s.studies.empty());        // no studies written: the base's
}

TEST_CASE("a base given as a path is read relative to the file that names it",
          "[io][scenario][base]") {
  const std::string path = data_dir() + "/io/derived/relative_base.yaml";
  const auto s = load_scenario(path);
  const auto base = load_scenario(data_dir() + "/io/system_scenario.yaml");
  CHECK(s.name == "system, block placement");
  CHECK(s.description == base.description);
  CHECK(s.file == path);
  const auto& sys = s.topology.system;
  CHECK(sys.placement.order == "block");
  CHECK(sys.placement.ranks_per_node == 4); // kept from the base's placement
  CHECK(sys.nodes == 16);
  CHECK(sys.node == base.topology.system.node);
  CHECK(sys.network == base.topology.system.network);
  // The studies are the base's (their positions name the base as
  // "derived/../system_scenario.yaml").
  REQUIRE(s.studies.size() == base.studies.size());
  CHECK(s.studies[0].ranks == base.studies[0].ranks);
  CHECK(s.studies[0].sizes == base.studies[0].sizes);
  CHECK(s.studies[0].pos.file == data_dir() + "/io/derived/../system_scenario.yaml");
}

TEST_CASE("a rankfile is read relative to the scenario and parsed line by line",
          "[io][scenario][rankfile]") {
  // rankfiles/cpu_ranks.txt has CRLF line ends, comments, a blank line, a leading blank, `+n1`,
  // a named host, `socket:core` slots, a range and a list.
  const std::string path = data_dir() + "/io/rankfile_scenario.yaml";
  const std::string rankfile = data_dir() + "/io/rankfiles/cpu_ranks.txt";
  const auto s = load_scenario(path);
  const auto& pl = s.topology.system.placement;
  CHECK(pl.order == "rankfile");
  CHECK(pl.rankfile == "rankfiles/cpu_ranks.txt"); // as written
  using collsim::core::RankSlot;
  REQUIRE(pl.slots.size() == 4);
  CHECK(pl.slots[0] == RankSlot{0, 0, -1, 0, SourcePos{rankfile, 2, 1}});
  CHECK(pl.slots[1] == RankSlot{1, 1, 1, 2, SourcePos{rankfile, 4, 1}});  // +n1 slot=1:2
  CHECK(pl.slots[2] == RankSlot{2, 0, -1, 2, SourcePos{rankfile, 5, 1}}); // first named host
  CHECK(pl.slots[3] == RankSlot{3, 2, 0, 1, SourcePos{rankfile, 6, 1}});  // slot=0:1,3
}

TEST_CASE("parse_rankfile numbers named hosts in order of first appearance", "[io][rankfile]") {
  const auto slots = collsim::io::parse_rankfile(
      "rank 0=alpha slot=0\nrank 1=beta slot=0-3\nrank 2=alpha slot=1\nrank 3=node7 slot=2\n",
      "r.txt");
  REQUIRE(slots.size() == 4);
  CHECK(slots[0].node == 0);
  CHECK(slots[1].node == 1);
  CHECK(slots[1].slot == 0); // the first of the range
  CHECK(slots[2].node == 0);
  CHECK(slots[3].node == 7);
  CHECK(slots[3].socket == -1);
}

TEST_CASE("the simgrid section sets SimGrid's options, a derived scenario keeps the rest",
          "[io][scenario][simgrid]") {
  const auto defaults = parse_scenario(
      "name: d\ntopology: {kind: uniform}\n"
      "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, sizes: 8B}]\n",
      "d.yaml");
  CHECK(defaults.simgrid == collsim::core::SimgridSpec{});
  CHECK(defaults.simgrid.network_model == "CM02");
  CHECK(defaults.simgrid.send_port == "serial");

  const auto base = load_scenario(data_dir() + "/io/simgrid_base.yaml");
  CHECK(base.simgrid.network_model == "LV08");
  CHECK(base.simgrid.tcp_gamma == 4.0 * 1024 * 1024);
  CHECK(base.simgrid.latency_factor == 13.01);
  CHECK_FALSE(base.simgrid.bandwidth_factor.has_value());
  CHECK(base.simgrid.crosstraffic);
  CHECK(base.studies.at(0).engine == "simgrid");

  const auto derived = load_scenario(data_dir() + "/io/simgrid_derived.yaml");
  CHECK(derived.simgrid.network_model == "LV08"); // the base's
  CHECK(derived.simgrid.tcp_gamma == 4.0 * 1024 * 1024);
  CHECK(derived.simgrid.latency_factor == 13.01);
  CHECK(derived.simgrid.bandwidth_factor == 0.97); // written here
  CHECK(derived.simgrid.send_port == "shared");
  CHECK(derived.simgrid.crosstraffic);
}

TEST_CASE("the nccl section sets the call overhead and per-protocol factors, a derived scenario "
          "keeps the rest",
          "[io][scenario][nccl]") {
  const auto defaults = parse_scenario(
      "name: d\ntopology: {kind: uniform}\n"
      "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, sizes: 8B}]\n",
      "d.yaml");
  CHECK(defaults.nccl == collsim::core::NcclSpec{});
  CHECK(defaults.nccl.ll.latency_factor == 1.0);
  CHECK(defaults.nccl.net_latency.value == 0.0);             // NCCL's own IB transport reports none
  CHECK(defaults.nccl.group_launch.value == Approx(4.2e-6)); // NVIDIA/nccl-tests#123
  CHECK(defaults.nccl.simple.efficiency_factor == 1.0);

  const std::string base = "name: b\ntopology: {kind: uniform}\n"
                           "nccl: {call_overhead: 20 us, net_latency: 75 us, group_launch: 3 us, "
                           "ll: {latency_factor: 2.5}, "
                           "simple: {efficiency_factor: 0.8}}\n"
                           "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, "
                           "sizes: 8B}]\n";
  const auto b = parse_scenario(base, "b.yaml");
  CHECK(b.nccl.call_overhead.value == Approx(20e-6));
  CHECK(b.nccl.net_latency.value == Approx(75e-6));
  CHECK(b.nccl.group_launch.value == Approx(3e-6));
  CHECK(b.nccl.ll.latency_factor == 2.5);
  CHECK(b.nccl.ll.efficiency_factor == 1.0);
  CHECK(b.nccl.ll128 == collsim::core::NcclProtocolSpec{});
  CHECK(b.nccl.simple.efficiency_factor == 0.8);
  CHECK(b.nccl.net_step.value < 0.0); // not given: the run charges net_latency
  CHECK(b.nccl.net_step_simple.value < 0.0);
}

TEST_CASE("nccl.net_step and net_step_simple give the plugin's physical step apart from its "
          "reported latency",
          "[io][scenario][nccl]") {
  const std::string nccl = "nccl: {net_latency: 75 us, net_step: 20 us, net_step_simple: 23 us}";
  const auto s = parse_scenario("name: s\ntopology: {kind: uniform}\n" + nccl +
                                    "\nstudies: [{collective: allreduce, algorithms: [ring], "
                                    "ranks: 2, sizes: 8B}]\n",
                                "s.yaml");
  CHECK(s.nccl.net_latency.value == Approx(75e-6)); // NCCL's choice still sees the reported 75
  CHECK(s.nccl.net_step.value == Approx(20e-6));
  CHECK(s.nccl.net_step_simple.value == Approx(23e-6));
  // The aws-p5 preset writes AWS's own tuner's figures (aws-ofi-nccl src/tuner/nccl_ofi_model.cpp).
  const auto p5 = parse_scenario("base: aws-p5\n", "p5.yaml");
  CHECK(p5.nccl.net_latency.value == Approx(75e-6));
  CHECK(p5.nccl.net_step.value == Approx(20e-6));
  CHECK(p5.nccl.net_step_simple.value == Approx(23e-6));
  CHECK(p5.nccl.env.at("NCCL_NVLSTREE_MAX_CHUNKSIZE") == "524288");
}

TEST_CASE("the mpi section keeps the call overhead and the environment with positions",
          "[io][scenario][mpi]") {
  const auto s = parse_scenario("name: m\ntopology: {kind: uniform}\n"
                                "mpi:\n  call_overhead: 1.5 us\n"
                                "  env: {UCX_RNDV_THRESH: 32k, UCX_TLS: \"rc,sm\"}\n"
                                "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, "
                                "sizes: 8B}]\n",
                                "m.yaml");
  CHECK(s.mpi.call_overhead.value == Approx(1.5e-6));
  CHECK(s.mpi.env.at("UCX_RNDV_THRESH") == "32k");
  CHECK(s.mpi.env.at("UCX_TLS") == "rc,sm");
  CHECK(s.mpi.env_pos.at("UCX_TLS") == collsim::core::SourcePos{"m.yaml", 5, 40});
  // Unset: a negative call overhead (the stack's own) and no variables.
  const auto d = parse_scenario("name: d\ntopology: {kind: uniform}\n"
                                "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, "
                                "sizes: 8B}]\n",
                                "d.yaml");
  CHECK(d.mpi == collsim::core::MpiSpec{});
  CHECK(d.mpi.call_overhead.value < 0);
}

TEST_CASE("the accuracy section keeps each size range's statistics, and a derived scenario starts "
          "without it",
          "[io][scenario][accuracy]") {
  const auto s = parse_scenario("name: a\ntopology: {kind: uniform}\n"
                                "accuracy:\n  measured_on: 12 rows\n"
                                "  below_1MiB: {rows: 8, median: 2.5 %, p90: 6%, slower: 14, "
                                "faster: 7.5 %}\n"
                                "studies: [{collective: allreduce, algorithms: [ring], ranks: 2, "
                                "sizes: 8B}]\n",
                                "a.yaml");
  CHECK(s.accuracy.measured_on == "12 rows");
  CHECK(s.accuracy.below_1MiB == collsim::core::AccuracyRange{8, 2.5, 6.0, 14.0, 7.5});
  CHECK(s.accuracy.from_1MiB == collsim::core::AccuracyRange{});
  CHECK(s.accuracy.pos == collsim::core::SourcePos{"a.yaml", 3, 1});
  CHECK_FALSE(s.accuracy.empty());
  const auto none = parse_scenario(kMinimal, "minimal.yaml");
  CHECK(none.accuracy.empty());
  // The shipped profile has one; a scenario based on it predicts differently and has none.
  const auto base = parse_scenario("name: b\nbase: dgx-a100-calibrated\n", "b.yaml");
  CHECK(base.accuracy.empty());
  const auto profile = collsim::io::load_scenario("dgx-a100-calibrated");
  CHECK(profile.accuracy.below_1MiB.rows == 17);
  CHECK(profile.accuracy.from_1MiB.rows == 8);
}

// Valid scenarios load into the values they describe: units converted, defaults filled in, source
// positions recorded for the later stages that report errors about them.

#include "collsim/core/errors.hpp"
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
    } else {
      FAIL("an example that is neither a scenario nor a topology or studies section");
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

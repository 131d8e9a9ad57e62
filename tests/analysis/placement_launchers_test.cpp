// Launcher files of a placement (analysis/placement.hpp, "Launcher files"; docs/placement.md):
// every file written is parsed back, the Open MPI rankfile by collsim's own scenario loader, the
// Hydra machinefile and the Slurm hostfile by the small parsers below that follow the launchers'
// rules, and must give every rank the node and core of the mapping. The real runs under mpirun
// and mpiexec.hydra are in tests/probe/placement_launch_mpi_test.cpp.

#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

using namespace collsim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + name;
  std::ofstream(path) << text;
  return path;
}

const char* kNode = "  node:\n    cpu: {sockets: 2, cores_per_socket: 2}\n";

std::string scenario_text(const std::string& placement) {
  return std::string("name: launchers\ntopology:\n  kind: system\n  nodes: 2\n") + kNode +
         placement +
         "studies:\n  - name: s\n    collective: allreduce\n    algorithms: [ring]\n"
         "    ranks: [8]\n    sizes: [1KiB]\n";
}

/// Two CPU nodes of 2 sockets x 2 cores; a ring of 8 ranks (the pattern does not matter here).
analysis::PlacementProblem problem() {
  const std::string path = write("launchers_two_nodes.yaml", scenario_text(""));
  const core::Scenario s = io::load_scenario(path);
  std::remove(path.c_str());
  return analysis::make_placement_problem(s, analysis::parse_pattern("halo2d:8x1:1KiB:periodic"));
}

/// Node and core (within the node, socket by socket) of a rank.
using Where = std::pair<std::uint32_t, std::uint32_t>;

/// The truth the files must give back: make_placement_problem's own node and in-node index of
/// each slot (block placement puts slot i on core i % 4 of node i / 4).
std::vector<Where> expected(const analysis::PlacementProblem& p, const analysis::Mapping& m) {
  std::vector<Where> out;
  for (const std::uint32_t s : m) {
    out.emplace_back(p.node[s], p.local[s]);
  }
  return out;
}

/// Ranks of two nodes interleaved so that no node's cores come in one common order.
const analysis::Mapping kShuffled{5, 2, 7, 0, 3, 6, 1, 4};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

/// The lines a launcher reads (no comments).
std::vector<std::string> body(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& l : lines_of(text)) {
    if (!l.empty() && l[0] != '#') {
      out.push_back(l);
    }
  }
  return out;
}

std::uint32_t node_named(const std::string& host, const std::vector<std::string>& hosts) {
  for (std::uint32_t k = 0; k < hosts.size(); ++k) {
    if (hosts[k] == host) {
      return k;
    }
  }
  REQUIRE(host.rfind("node", 0) == 0);
  return static_cast<std::uint32_t>(std::stoul(host.substr(4)));
}

std::vector<std::uint32_t> numbers(const std::string& csv) {
  std::vector<std::uint32_t> out;
  std::stringstream s(csv);
  for (std::string item; std::getline(s, item, ',');) {
    out.push_back(static_cast<std::uint32_t>(std::stoul(item)));
  }
  return out;
}

/// Hydra's reading of a machinefile: lines in order, HOST:COUNT takes the next COUNT ranks, the
/// i-th of them bound to the i-th CPU of the line's binding=user: list.
std::vector<Where> read_machinefile(const std::string& text,
                                    const std::vector<std::string>& hosts) {
  std::vector<Where> out;
  for (const std::string& line : body(text)) {
    std::istringstream in(line);
    std::string host_count;
    std::string binding;
    in >> host_count >> binding;
    const auto colon = host_count.find(':');
    REQUIRE(colon != std::string::npos);
    const std::uint32_t node = node_named(host_count.substr(0, colon), hosts);
    const auto count = std::stoul(host_count.substr(colon + 1));
    REQUIRE(binding.rfind("binding=user:", 0) == 0);
    const std::vector<std::uint32_t> cpus = numbers(binding.substr(13));
    REQUIRE(cpus.size() == count);
    for (const std::uint32_t c : cpus) {
      out.emplace_back(node, c);
    }
  }
  return out;
}

/// srun's reading of the Slurm file: line i is rank i's host; the CPU is entry i of the
/// map_cpu list for the node's i-th task when the header launches with one, else the rank's
/// entry of the `#by-rank` lines.
std::vector<Where> read_slurm(const std::string& text, const std::vector<std::string>& hosts,
                              bool* one_list = nullptr) {
  std::vector<std::uint32_t> map_cpu;
  std::vector<std::uint32_t> by_rank;
  for (const std::string& l : lines_of(text)) {
    if (const auto at = l.find("--cpu-bind=map_cpu:");
        l.rfind("# Launch:", 0) == 0 && at != std::string::npos) {
      map_cpu = numbers(l.substr(at + 19, l.find(' ', at) - at - 19));
    }
    if (l.rfind("#by-rank ", 0) == 0) {
      const auto more = numbers(l.substr(9));
      by_rank.insert(by_rank.end(), more.begin(), more.end());
    }
  }
  if (one_list != nullptr) {
    *one_list = !map_cpu.empty();
  }
  std::vector<Where> out;
  std::map<std::uint32_t, std::uint32_t> tasks; // per node: tasks so far
  for (const std::string& host : body(text)) {
    const std::uint32_t node = node_named(host, hosts);
    const std::uint32_t local = tasks[node]++;
    out.emplace_back(node,
                     map_cpu.empty() ? by_rank.at(out.size()) : map_cpu.at(local % map_cpu.size()));
  }
  return out;
}

/// The rankfile read by the scenario loader (placement.rankfile) and built for 8 ranks.
std::vector<Where> read_rankfile(const analysis::PlacementProblem& p, const std::string& text) {
  const std::string rankfile = write("launchers_ranks.txt", text);
  const std::string scenario =
      write("launchers_rankfile.yaml",
            scenario_text("  placement:\n    rankfile: launchers_ranks.txt\n"));
  const core::Topology t = topologies::build(io::load_scenario(scenario).topology, 8);
  std::remove(rankfile.c_str());
  std::remove(scenario.c_str());
  std::vector<Where> out;
  for (core::Rank r = 0; r < 8; ++r) {
    const auto slot = std::find(p.slots.begin(), p.slots.end(), t.device_of(r)) - p.slots.begin();
    REQUIRE(static_cast<std::size_t>(slot) < p.slots.size());
    out.emplace_back(p.node[slot], p.local[slot]);
  }
  return out;
}

} // namespace

TEST_CASE("launcher files: rank places give the socket and core of every rank",
          "[analysis][placement][launchers]") {
  const analysis::PlacementProblem p = problem();
  const auto places = analysis::rank_places(p, kShuffled);
  REQUIRE(places.size() == 8);
  for (std::uint32_t r = 0; r < 8; ++r) {
    CAPTURE(r);
    const std::uint32_t s = kShuffled[r];
    CHECK(places[r].rank == r);
    CHECK(places[r].node == s / 4);
    CHECK(places[r].device == s % 4);
    CHECK(places[r].socket == (s % 4) / 2);
    CHECK(places[r].core_in_socket == s % 2);
    CHECK_FALSE(places[r].gpu);
  }
}

TEST_CASE("launcher files: the Open MPI rankfile reads back as the mapping, relative or named",
          "[analysis][placement][launchers]") {
  const analysis::PlacementProblem p = problem();
  analysis::Mapping block(8);
  std::iota(block.begin(), block.end(), 0U);
  for (const analysis::Mapping& m : {block, kShuffled}) {
    const std::string relative = analysis::ompi_rankfile(p, m);
    CHECK(read_rankfile(p, relative) == expected(p, m));
    CHECK(relative.find("# Launch: mpirun --rankfile FILE -np 8 ./app") != std::string::npos);
    // Named hosts are numbered by first appearance when collsim reads the file back.
    const std::string named = analysis::ompi_rankfile(p, m, {{"alpha", "beta"}, "ranks.txt"});
    std::vector<Where> renamed = expected(p, m);
    const std::uint32_t first = renamed.front().first;
    for (Where& w : renamed) {
      w.first = w.first == first ? 0 : 1;
    }
    CHECK(read_rankfile(p, named) == renamed);
    CHECK(named.find("# Launch: mpirun --rankfile ranks.txt -np 8 ./app") != std::string::npos);
  }
  // Rank order (Open MPI 4.1 wants rank 0 first), socket:core within the node.
  CHECK(body(analysis::ompi_rankfile(p, kShuffled, {{"alpha", "beta"}, ""})) ==
        std::vector<std::string>{"rank 0=beta slot=0:1", "rank 1=alpha slot=1:0",
                                 "rank 2=beta slot=1:1", "rank 3=alpha slot=0:0",
                                 "rank 4=alpha slot=1:1", "rank 5=beta slot=1:0",
                                 "rank 6=alpha slot=0:1", "rank 7=beta slot=0:0"});
  CHECK(body(analysis::ompi_rankfile(p, kShuffled)).front() == "rank 0=+n1 slot=0:1");
}

TEST_CASE("launcher files: the Hydra machinefile binds every run of ranks on a host",
          "[analysis][placement][launchers]") {
  const analysis::PlacementProblem p = problem();
  const std::string text = analysis::mpich_hostfile(p, kShuffled, {{}, "hosts"});
  CHECK(read_machinefile(text, {}) == expected(p, kShuffled));
  CHECK(body(text) == std::vector<std::string>{"node1:1 binding=user:1", "node0:1 binding=user:2",
                                               "node1:1 binding=user:3", "node0:2 binding=user:0,3",
                                               "node1:1 binding=user:2", "node0:1 binding=user:1",
                                               "node1:1 binding=user:0"});
  CHECK(text.find("# Launch: mpiexec.hydra -f hosts -n 8 ./app") != std::string::npos);
  analysis::Mapping block(8);
  std::iota(block.begin(), block.end(), 0U);
  const std::string named = analysis::mpich_hostfile(p, block, {{"alpha", "beta"}, ""});
  CHECK(body(named) ==
        std::vector<std::string>{"alpha:4 binding=user:0,1,2,3", "beta:4 binding=user:0,1,2,3"});
  CHECK(read_machinefile(named, {"alpha", "beta"}) == expected(p, block));
}

TEST_CASE("launcher files: the Slurm hostfile gives each rank its host and core",
          "[analysis][placement][launchers]") {
  const analysis::PlacementProblem p = problem();
  // Every node's cores in rank order are 0,1,2,3: one map_cpu list binds them all.
  analysis::Mapping block(8);
  std::iota(block.begin(), block.end(), 0U);
  bool one_list = false;
  const std::string text = analysis::slurm_hostfile(p, block, {{"alpha", "beta"}, "hosts"});
  CHECK(read_slurm(text, {"alpha", "beta"}, &one_list) == expected(p, block));
  CHECK(one_list);
  CHECK(text.find("# Launch: SLURM_HOSTFILE=hosts srun --distribution=arbitrary -n 8 "
                  "--cpu-bind=map_cpu:0,1,2,3 ./app\n") != std::string::npos);
  CHECK(body(text) == std::vector<std::string>{"alpha", "alpha", "alpha", "alpha", "beta", "beta",
                                               "beta", "beta"});
  // Node 0's ranks want cores 2,0,3,1 and node 1's 1,3,2,0: no one list; each rank binds itself.
  const std::string shuffled = analysis::slurm_hostfile(p, kShuffled, {{}, "hosts"});
  CHECK(read_slurm(shuffled, {}, &one_list) == expected(p, kShuffled));
  CHECK_FALSE(one_list);
  CHECK(shuffled.find("--cpu-bind=none sh -c 'exec taskset -c $(sed -n \"s/^#by-rank //p\" hosts "
                      "| tr , \"\\n\" | sed -n \"$((SLURM_PROCID + 1))p\") ./app'") !=
        std::string::npos);
  CHECK(body(shuffled).front() == "node1");
}

TEST_CASE("launcher files: long lists are wrapped, well below Slurm's 4096-byte lines",
          "[analysis][placement][launchers]") {
  const std::string path = write(
      "launchers_big.yaml", "name: big\ntopology:\n  kind: system\n  nodes: 4\n  node:\n"
                            "    cpu: {sockets: 2, cores_per_socket: 32}\nstudies:\n  - name: s\n"
                            "    collective: allreduce\n    algorithms: [ring]\n    ranks: [256]\n"
                            "    sizes: [1KiB]\n");
  const core::Scenario s = io::load_scenario(path);
  std::remove(path.c_str());
  const auto p = analysis::make_placement_problem(s, analysis::parse_pattern("halo2d:16x16:1KiB"));
  // 256 entries in one line would be some 900 bytes.
  analysis::Mapping reversed(256);
  std::iota(reversed.rbegin(), reversed.rend(), 0U);
  for (const auto format :
       {analysis::LauncherFormat::ompi_rankfile, analysis::LauncherFormat::mpich_hostfile,
        analysis::LauncherFormat::slurm}) {
    for (const std::string& l : lines_of(analysis::launcher_file(p, reversed, format))) {
      CHECK(l.size() < 400);
    }
  }
  std::vector<Where> want;
  for (const std::uint32_t slot : reversed) {
    want.emplace_back(p.node[slot], p.local[slot]);
  }
  CHECK(read_slurm(analysis::slurm_hostfile(p, reversed), {}) == want);
  CHECK(read_machinefile(analysis::mpich_hostfile(p, reversed), {}) == want);
}

TEST_CASE("launcher files: GPU slots are GPU indexes, listed by rank for the application",
          "[analysis][placement][launchers]") {
  const std::string path =
      write("launchers_gpus.yaml", "name: gpus\ntopology:\n  kind: system\n  nodes: 2\n"
                                   "  node:\n    gpus: 2\nstudies:\n  - name: s\n"
                                   "    collective: allreduce\n    algorithms: [ring]\n"
                                   "    ranks: [4]\n    sizes: [1KiB]\n");
  const core::Scenario s = io::load_scenario(path);
  std::remove(path.c_str());
  const auto p = analysis::make_placement_problem(s, analysis::parse_pattern("halo2d:4x1:1KiB"));
  const analysis::Mapping m{1, 3, 0, 2}; // both nodes: GPU 1, then GPU 0
  const auto places = analysis::rank_places(p, m);
  CHECK(places[1].gpu);
  CHECK(places[1].node == 1);
  CHECK(places[1].device == 1);
  const std::string rankfile = analysis::ompi_rankfile(p, m);
  CHECK(body(rankfile) == std::vector<std::string>{"rank 0=+n0 slot=1", "rank 1=+n1 slot=1",
                                                   "rank 2=+n0 slot=0", "rank 3=+n1 slot=0"});
  CHECK(rankfile.find("#by-rank 1,1,0,0\n") != std::string::npos);
  CHECK(body(analysis::mpich_hostfile(p, m)) ==
        std::vector<std::string>{"node0:1", "node1:1", "node0:1", "node1:1"});
  const std::string slurm = analysis::slurm_hostfile(p, m);
  CHECK(slurm.find("--gpu-bind=map_gpu:1,0 ./app") != std::string::npos);
  CHECK(body(slurm) == std::vector<std::string>{"node0", "node1", "node0", "node1"});
}

TEST_CASE("launcher files: bad host lists and unknown formats are one clear error",
          "[analysis][placement][launchers][errors]") {
  const analysis::PlacementProblem p = problem();
  CHECK_THROWS_AS(analysis::parse_launcher_format("slurn"), core::UnknownNameError);
  CHECK_THROWS_WITH(analysis::parse_launcher_format("slurn"),
                    "unknown launcher format 'slurn' (did you mean 'slurm'?); valid values are: "
                    "ompi-rankfile, mpich-hostfile, slurm");
  CHECK(analysis::parse_launcher_format("mpich-hostfile") ==
        analysis::LauncherFormat::mpich_hostfile);
  CHECK_THROWS_WITH(analysis::ompi_rankfile(p, kShuffled, {{"alpha"}, ""}),
                    "--hosts names 1 host, the placement uses 2 nodes");
  CHECK_THROWS_WITH(analysis::mpich_hostfile(p, kShuffled, {{"alpha", "alpha"}, ""}),
                    "--hosts names 'alpha' twice");
  CHECK_THROWS_WITH(analysis::slurm_hostfile(p, kShuffled, {{"alpha", "b c"}, ""}),
                    "--hosts: 'b c' is not a host name");
}

// Open MPI loads collsim's rules files and applies them (docs/tuning.md, "What is verified").
// The proof is in the result bits: collsim-probe's float allreduce inputs (1e8, 1, -1e8, ...)
// round differently depending on the order of the reduction, so on 5 ranks ring (4) and
// recursive doubling (3) give different FNV-1a hashes of rank 0's result. A rules file that says
// "ring below 1 KiB, recursive doubling from 1 KiB" must give ring's bits below and recursive
// doubling's bits from 1 KiB on -- the forced runs (--ompi-algorithm) give the reference bits.
// Any parse error would make Open MPI drop the whole file silently and run its fixed rules.

#include "../io/ompi_rules_grammar.hpp"
#include "collsim/core/tuning.hpp"
#include "collsim/io/tuning_formats.hpp"

#include "../mpi_test_environment.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch(const std::string& what) {
  static int counter = 0;
  return std::filesystem::temp_directory_path() / ("collsim_tune_mpi_" + std::to_string(getpid()) +
                                                   "_" + std::to_string(++counter) + "_" + what);
}

Run sh(const std::string& command) {
  const auto out = scratch("out");
  const auto err = scratch("err");
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

/// Oversubscribed cores, root in a container, no ssh, no CMA (mpi_test_environment.hpp).
Run mpirun(int ranks, const std::string& mca, const std::string& args) {
  collsim::testing::prepare_open_mpi_environment();
  return sh(std::string(COLLSIM_MPIEXEC) + " " + COLLSIM_MPIEXEC_NUMPROC_FLAG + " " +
            std::to_string(ranks) + " " + mca + " " + COLLSIM_PROBE_BINARY + " " + args);
}

bool open_mpi_launcher() {
  const Run r = sh(std::string(COLLSIM_MPIEXEC) + " --version");
  return r.out.find("Open MPI") != std::string::npos || r.out.find("OpenRTE") != std::string::npos;
}

/// The "# check: size N: ..." lines of every table, in order: tables[k][size] = line.
std::vector<std::map<std::uint64_t, std::string>> checks_of(const std::string& text) {
  std::vector<std::map<std::uint64_t, std::string>> tables;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# OSU MPI ", 0) == 0) {
      tables.emplace_back();
    }
    const std::string prefix = "# check: size ";
    if (line.rfind(prefix, 0) == 0 && !tables.empty()) {
      tables.back()[std::stoull(line.substr(prefix.size()))] = line;
    }
  }
  return tables;
}

const std::string kProbeArgs = "--collective allreduce --datatype float --print-sum "
                               "--iterations 2 --warmup 1 --sizes ";

std::string rules_mca(const std::filesystem::path& file) {
  return "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename " +
         file.string();
}

/// Reference bits per size for each forced coll/tuned allreduce id.
std::map<int, std::map<std::uint64_t, std::string>> forced(const std::vector<int>& ids,
                                                           const std::string& sizes) {
  std::string list;
  for (int id : ids) {
    list += (list.empty() ? "" : ",") + std::to_string(id);
  }
  const Run r = mpirun(5, "", kProbeArgs + sizes + " --ompi-algorithm " + list);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto tables = checks_of(r.out);
  REQUIRE(tables.size() == ids.size());
  std::map<int, std::map<std::uint64_t, std::string>> out;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    out[ids[k]] = tables[k];
  }
  return out;
}

} // namespace

TEST_CASE("Open MPI 4.1 applies a collsim rules file: allreduce switches from ring to recursive "
          "doubling exactly at the rule's size",
          "[probe][mpi][tune]") {
  if (!open_mpi_launcher()) {
    WARN("not Open MPI: no coll/tuned to load a rules file, nothing to check");
    return;
  }
  using collsim::core::Bytes;
  collsim::core::TuneTable table;
  table.scenario = "hand-made";
  table.engine = "loggp";
  table.ompi = collsim::core::OmpiVersion::v4_1;
  collsim::core::TuneCandidate ring{"ring", {}, 4, 0, 0};
  collsim::core::TuneCandidate rd{"recursive_doubling", {}, 3, 0, 0};
  collsim::core::TuneBlock block{collsim::core::CollectiveKind::allreduce, 5, {}};
  block.ranges.push_back({Bytes{64}, Bytes{512}, ring, rd, 1.0, {}, 0.0});
  block.ranges.push_back({Bytes{1024}, Bytes{16384}, rd, ring, 1.0, {}, 0.0});
  table.blocks.push_back(block);
  const std::string text = collsim::io::format_ompi_rules(table, collsim::core::OmpiVersion::v4_1);
  REQUIRE(collsim::test::parse_ompi_rules(text, false).errors.empty());
  const auto file = scratch("allreduce.rules");
  std::ofstream(file) << text;

  const std::string sizes = "64:16KiB";
  const auto ref = forced({4, 3}, sizes);
  REQUIRE(ref.at(4).size() == 9);
  for (const auto& [size, line] : ref.at(4)) {
    INFO("size " << size);
    REQUIRE(ref.at(3).count(size) == 1);
    REQUIRE(line != ref.at(3).at(size)); // the two orders are told apart at every size
  }

  const Run r = mpirun(5, rules_mca(file), kProbeArgs + sizes);
  INFO(text << r.out << r.err);
  REQUIRE(r.code == 0);
  const auto tables = checks_of(r.out);
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].size() == 9);
  for (const auto& [size, line] : tables[0]) {
    INFO("size " << size);
    CHECK(line == ref.at(size < 1024 ? 4 : 3).at(size));
  }
  std::filesystem::remove(file);
}

TEST_CASE("the rules file collsim tune writes is applied by Open MPI 4.1 as it says",
          "[probe][mpi][tune]") {
  if (!open_mpi_launcher()) {
    WARN("not Open MPI: no coll/tuned to load a rules file, nothing to check");
    return;
  }
  const auto file = scratch("tuned.rules");
  const Run tune = sh(std::string(COLLSIM_BINARY) +
                      " tune --scenario textbook --collective allreduce --ranks 5 --sizes "
                      "64B:64KiB:x4 --segment-sizes none --format ompi-rules -o " +
                      file.string());
  INFO(tune.out << tune.err);
  REQUIRE(tune.code == 0);
  const std::string text = slurp(file);
  const auto parsed = collsim::test::parse_ompi_rules(text, false);
  INFO(text);
  REQUIRE(parsed.errors.empty());
  REQUIRE(parsed.collectives.size() == 1);
  REQUIRE(parsed.collectives[0].comms.size() == 1);
  const auto& rules = parsed.collectives[0].comms[0].rules;
  // What the file says for a size: the last rule at or below it (formats.md d.4).
  const auto alg_at = [&](std::uint64_t size) {
    std::int64_t alg = 0;
    for (const auto& rule : rules) {
      if (static_cast<std::uint64_t>(rule.bytes) <= size) {
        alg = rule.alg;
      }
    }
    return static_cast<int>(alg);
  };
  std::vector<int> ids;
  for (const auto& rule : rules) {
    if (std::find(ids.begin(), ids.end(), rule.alg) == ids.end()) {
      ids.push_back(static_cast<int>(rule.alg));
    }
  }
  const std::string sizes = "64:64KiB";
  const auto ref = forced(ids, sizes);
  const Run r = mpirun(5, rules_mca(file), kProbeArgs + sizes);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto tables = checks_of(r.out);
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].size() == 11);
  for (const auto& [size, line] : tables[0]) {
    INFO("size " << size << ": the file says algorithm " << alg_at(size));
    CHECK(line == ref.at(alg_at(size)).at(size));
  }
  // Not vacuous: somewhere the file's choice rounds differently from the fixed rules' (the
  // textbook model picks ring at 64 KiB, where Open MPI 4.1 runs rabenseifner).
  const Run fixed = mpirun(5, "", kProbeArgs + sizes);
  REQUIRE(fixed.code == 0);
  const auto fixed_tables = checks_of(fixed.out);
  REQUIRE(fixed_tables.size() == 1);
  int differ = 0;
  for (const auto& [size, line] : tables[0]) {
    differ += fixed_tables[0].at(size) != line ? 1 : 0;
  }
  CHECK(differ > 0);
  std::filesystem::remove(file);
}

TEST_CASE("Open MPI 4.1 forces an allreduce algorithm from mpirun's --mca only with dynamic rules "
          "on, as collsim's model of it says",
          "[probe][mpi][tune]") {
  if (!open_mpi_launcher()) {
    WARN("not Open MPI: no coll/tuned to force, nothing to check");
    return;
  }
  // On 5 ranks, 64 B - 16 KiB: the fixed rules run recursive doubling (3) below 8 KiB and
  // Rabenseifner (6) from it (p < 8 row); the reference bits of each forced id come from
  // collsim-probe's own MPI_T forcing.
  const std::string sizes = "64:16KiB";
  const auto ref = forced({3, 4, 6}, sizes);
  const std::string ring = "--mca coll_tuned_allreduce_algorithm 4";
  // With coll_tuned_use_dynamic_rules: the ring at every size.
  const Run on = mpirun(5, "--mca coll_tuned_use_dynamic_rules 1 " + ring, kProbeArgs + sizes);
  INFO(on.out << on.err);
  REQUIRE(on.code == 0);
  const auto on_tables = checks_of(on.out);
  REQUIRE(on_tables.size() == 1);
  REQUIRE(on_tables[0].size() == 9);
  for (const auto& [size, line] : on_tables[0]) {
    INFO("size " << size);
    CHECK(line == ref.at(4).at(size));
  }
  // Without it Open MPI does not consult the algorithm: the fixed rules' bits.
  const Run off = mpirun(5, ring, kProbeArgs + sizes);
  INFO(off.out << off.err);
  REQUIRE(off.code == 0);
  const auto off_tables = checks_of(off.out);
  REQUIRE(off_tables.size() == 1);
  for (const auto& [size, line] : off_tables[0]) {
    INFO("size " << size);
    CHECK(line == ref.at(size < 8192 ? 3 : 6).at(size));
  }
  // collsim says the same for both launches (docs/library-defaults.md, "Forced algorithms").
  const auto picks = [](const std::string& mca, std::uint64_t bytes) {
    const auto log = scratch("forced.log");
    std::ofstream(log) << "$ mpirun -np 5 " << mca << " ./osu_allreduce\n"
                       << "# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_FLOAT.\n"
                       << "# Size       Avg Latency(us)\n"
                       << bytes << "                     10.00\n";
    const Run v = sh(std::string(COLLSIM_BINARY) + " validate --scenario textbook --log " +
                     log.string() + " --format json");
    std::filesystem::remove(log);
    INFO(v.out << v.err);
    REQUIRE(v.code == 0);
    return nlohmann::json::parse(v.out).at("rows").at(0).at("algorithm").get<std::string>();
  };
  CHECK(picks("--mca coll_tuned_use_dynamic_rules 1 " + ring, 64) == "ring");
  CHECK(picks(ring, 64) == "recursive_doubling");
  CHECK(picks(ring, 16384) == "rabenseifner");
}

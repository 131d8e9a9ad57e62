// MPICH loads collsim's selection files (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) and applies
// them (docs/tuning.md, "What is verified"), with Debian 12's MPICH 4.0.2 installed beside Open
// MPI (packages mpich, libmpich-dev: mpicc.mpich, mpiexec.mpich). The proof is in the result
// bits, as for Open MPI (tune_rules_mpi_test.cpp): mpich_allreduce_bits.c sums floats whose
// rounding depends on the order of the reduction, and on 5 ranks MPICH's smp allreduce and its
// recursive doubling give different bits at every size from 64 B to 64 KiB. The references are
// runs under collsim files that name one algorithm at every size (an smp file and a recursive
// doubling one): forcing with MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM is no reference, because smp's
// inner reduce and bcast then follow MPICH's built-in tree, not the file. MPICH aborts on a file
// it cannot read (unknown key or algorithm, a collective missing), so exit code 0 and all sizes
// printed also say that the file parsed. Skipped, with a message, where MPICH is not installed.

#include "../io/library_tuning_grammar.hpp"
#include "collsim/core/tuning.hpp"
#include "collsim/io/tuning_formats.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using collsim::core::Bytes;
using collsim::core::CollectiveKind;

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A scratch directory for this process, removed at exit.
const fs::path& work_dir() {
  struct Dir {
    fs::path path;
    Dir() : path(fs::temp_directory_path() / ("collsim_mpich_" + std::to_string(getpid()))) {
      fs::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

Run sh(const std::string& command) {
  const fs::path out = work_dir() / "out";
  const fs::path err = work_dir() / "err";
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// The MPICH build of mpich_allreduce_bits.c, or "" when MPICH is not installed.
std::string mpich_program() {
  static const std::string exe = [] {
    const std::string cc = COLLSIM_MPICH_CC;
    if (cc.empty() || std::string(COLLSIM_MPICH_EXEC).empty()) {
      return std::string();
    }
    const fs::path out = work_dir() / "mpich_allreduce_bits";
    const Run r = sh(cc + " -O2 -o " + out.string() + " " + COLLSIM_MPICH_BITS_SOURCE);
    if (r.code != 0) {
      FAIL("compiling mpich_allreduce_bits.c with " << cc << " failed:\n" << r.err);
    }
    return out.string();
  }();
  return exe;
}

/// size -> hash of a 5-rank run under `file` ("" : MPICH's built-in tree).
std::map<std::uint64_t, std::string> bits(const std::string& file) {
  const std::string env = file.empty() ? "" : "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=" + file;
  const Run r = sh("env " + env + " " + COLLSIM_MPICH_EXEC + " -n 5 " + mpich_program());
  INFO("file " << (file.empty() ? "(none)" : file) << "\n" << r.out << r.err);
  REQUIRE(r.code == 0);
  std::map<std::uint64_t, std::string> out;
  std::istringstream in(r.out);
  std::uint64_t size = 0;
  std::string hash;
  while (in >> size >> hash) {
    out[size] = hash;
  }
  REQUIRE(out.size() == 11); // 64 B .. 64 KiB
  return out;
}

std::string write(const std::string& name, const std::string& text) {
  INFO(text);
  REQUIRE(collsim::test::check_mpich_json(text).empty());
  const fs::path p = work_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

/// `collsim tune ... ARGS` (textbook preset, allreduce at 5 ranks, 64 B .. 64 KiB).
std::string tune(const std::string& args) {
  const Run r =
      sh(std::string(COLLSIM_BINARY) +
         " tune --scenario textbook --ranks 5 --sizes 64B:64KiB:x2 --mpich-version 4.0 " + args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

bool have_mpich() {
  if (mpich_program().empty()) {
    WARN("MPICH is not installed (Debian: apt-get install mpich libmpich-dev, beside Open MPI; "
         "then re-run cmake): MPICH's loading of collsim's selection files is not checked");
    return false;
  }
  return true;
}

} // namespace

TEST_CASE("MPICH 4.0 applies a collsim selection file: allreduce switches from smp to recursive "
          "doubling exactly at the file's size",
          "[probe][mpi][tune][mpich]") {
  if (!have_mpich()) {
    return;
  }
  const auto smp = bits(write("smp.json", tune("--format mpich-json --algorithms two_level")));
  const auto rd =
      bits(write("rd.json", tune("--format mpich-json --algorithms recursive_doubling")));
  const auto builtin = bits("");
  for (const auto& [size, hash] : smp) {
    INFO("size " << size);
    REQUIRE(rd.at(size) != hash); // every size tells the two apart
  }
  CHECK(builtin != smp); // the smp file is not what MPICH runs without it

  collsim::core::TuneTable table;
  table.scenario = "hand-made";
  table.engine = "loggp";
  table.library = "mpich";
  collsim::core::TuneCandidate smp_c;
  smp_c.algorithm = "two_level";
  smp_c.aliases = {"mpich:smp"};
  collsim::core::TuneCandidate rd_c;
  rd_c.algorithm = "recursive_doubling";
  rd_c.aliases = {"mpich:recursive_doubling"};
  collsim::core::TuneBlock block{CollectiveKind::allreduce, 5, {}};
  block.ranges.push_back({Bytes{64}, Bytes{512}, smp_c, rd_c, 1.0, {}, 0.0});
  block.ranges.push_back({Bytes{1024}, Bytes{65536}, rd_c, smp_c, 1.0, {}, 0.0});
  table.blocks.push_back(block);
  const auto mixed = bits(write(
      "mixed.json", collsim::io::format_mpich_json(table, collsim::core::MpichVersion::v4_0)));
  for (const auto& [size, hash] : mixed) {
    INFO("size " << size);
    CHECK(hash == (size < 1024 ? smp : rd).at(size));
  }
}

TEST_CASE("MPICH 4.0 runs what a `collsim tune --format mpich-json` file names at every size",
          "[probe][mpi][tune][mpich]") {
  if (!have_mpich()) {
    return;
  }
  // Every MPICH 4.0 allreduce; the ranges come from the same sweep written as JSON.
  const std::string file = write("tuned.json", tune("--format mpich-json"));
  const auto ranges = nlohmann::json::parse(tune("--format json --candidates mpich"));
  const auto got = bits(file);
  std::map<std::string, std::map<std::uint64_t, std::string>> reference;
  for (const auto& r : ranges.at("blocks").at(0).at("ranges")) {
    const std::string algorithm = r.at("winner").at("algorithm");
    if (reference.count(algorithm) == 0) {
      reference[algorithm] = bits(write(algorithm + ".json", tune("--format mpich-json "
                                                                  "--algorithms " +
                                                                  algorithm)));
    }
    for (const auto& [size, hash] : got) {
      if (size >= r.at("from_bytes").get<std::uint64_t>() &&
          size <= r.at("to_bytes").get<std::uint64_t>()) {
        INFO("size " << size << ": the file names " << algorithm);
        CHECK(hash == reference[algorithm].at(size));
      }
    }
  }
}

// collsim-probe run for real under the MPI library CMake found (Debian's Open MPI in CI): a few
// ranks, oversubscribed on this machine's cores, small sizes and few iterations. Checks the
// output's structure with values: header fields equal to the real rank count, one row per size,
// OSU's widths, positive finite latencies, min <= avg <= max, the iteration counts; that an
// algorithm forced through MPI_T changes what runs (the bits of a float allreduce); that usage
// errors exit with 2 and one line; and that `collsim ingest` reads the output back.

#include "../mpi_test_environment.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path temp_path(const std::string& what) {
  static int counter = 0;
  return std::filesystem::temp_directory_path() /
         ("collsim_probe_test_" + std::to_string(getpid()) + "_" + std::to_string(++counter) + "_" +
          what);
}

Output shell(const std::string& command) {
  const auto out = temp_path("out");
  const auto err = temp_path("err");
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  Output o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = read_file(out);
  o.err = read_file(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return o;
}

Output probe(int ranks, const std::string& args, const std::string& env = "") {
  collsim::testing::prepare_open_mpi_environment();
  return shell((env.empty() ? "" : "env " + env + " ") + COLLSIM_MPIEXEC + " " +
               COLLSIM_MPIEXEC_NUMPROC_FLAG + " " + std::to_string(ranks) + " " +
               COLLSIM_PROBE_BINARY + " " + args);
}

/// `collsim ingest --format json` of the probe's output `text`, written to a temporary file.
nlohmann::json ingest_json(const std::string& text, const std::string& name) {
  const auto log = temp_path(name);
  std::ofstream(log) << text;
  const Output ingest =
      shell(std::string(COLLSIM_BINARY) + " ingest " + log.string() + " --format json");
  std::filesystem::remove(log);
  INFO(ingest.out << ingest.err);
  REQUIRE(ingest.code == 0);
  return nlohmann::json::parse(ingest.out);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// One OSU table and the '#' lines before it.
struct Table {
  std::vector<std::string> header; ///< collsim-probe's lines before the table
  std::string banner;
  std::string datatype;
  std::string columns;
  std::vector<std::string> rows;
  std::vector<std::string> checks;
};

std::vector<Table> tables_of(const std::string& text) {
  const std::vector<std::string> lines = lines_of(text);
  std::vector<Table> tables;
  std::vector<std::string> pending;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!starts_with(lines[i], "# OSU MPI ")) {
      if (!lines[i].empty()) {
        pending.push_back(lines[i]);
      }
      continue;
    }
    Table t;
    t.header = pending;
    pending.clear();
    t.banner = lines[i];
    REQUIRE(i > 0);
    CHECK(lines[i - 1].empty()); // OSU's preamble starts with an empty line
    if (i + 1 < lines.size() && starts_with(lines[i + 1], "# Datatype:")) {
      t.datatype = lines[++i];
    }
    REQUIRE(i + 1 < lines.size());
    t.columns = lines[++i];
    while (i + 1 < lines.size() && !lines[i + 1].empty() && lines[i + 1][0] != '#') {
      t.rows.push_back(lines[++i]);
    }
    while (i + 1 < lines.size() && starts_with(lines[i + 1], "# check:")) {
      t.checks.push_back(lines[++i]);
    }
    tables.push_back(t);
  }
  return tables;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// A row's fields, checked against OSU's widths: size "%-10d", latencies "%18.2f", iterations
/// "%12lu"; barrier's average "%17.2f" without a size.
struct Row {
  std::uint64_t size = 0;
  double avg = 0.0;
  double min = 0.0;
  double max = 0.0;
  std::uint64_t iterations = 0;
};

double field(const std::string& row, std::size_t at, std::size_t width) {
  REQUIRE(row.size() >= at + width);
  const std::string f = row.substr(at, width);
  CHECK(f.find_first_not_of(' ') != std::string::npos);
  CHECK(f.front() == ' '); // right-aligned with room to spare
  return std::stod(f);
}

Row parse_row(const std::string& row, bool full, bool with_size = true) {
  INFO("row: '" << row << "'");
  Row r;
  std::size_t at = 0;
  if (with_size) {
    const std::string size = row.substr(0, 10);
    REQUIRE(size.find_first_not_of("0123456789 ") == std::string::npos);
    CHECK(size.front() != ' '); // left-aligned
    r.size = std::stoull(size);
    at = 10;
  }
  const std::size_t avg_width = with_size ? 18 : 17;
  CHECK(row.size() == at + avg_width + (full ? 48 : 0));
  r.avg = field(row, at, avg_width);
  at += avg_width;
  if (full) {
    r.min = field(row, at, 18);
    r.max = field(row, at + 18, 18);
    r.iterations = static_cast<std::uint64_t>(field(row, at + 36, 12));
  }
  CHECK(std::isfinite(r.avg));
  CHECK(r.avg > 0.0);
  return r;
}

bool open_mpi(const std::vector<std::string>& header) {
  return std::any_of(header.begin(), header.end(), [](const std::string& l) {
    return starts_with(l, "# MPI library: Open MPI");
  });
}

/// Whether the launcher is Open MPI's: only there must --ompi-algorithm work.
bool open_mpi_launcher() {
  const Output o = shell(std::string(COLLSIM_MPIEXEC) + " --version");
  return o.out.find("Open MPI") != std::string::npos || o.out.find("OpenRTE") != std::string::npos;
}

} // namespace

TEST_CASE("collsim-probe times allreduce on 4 ranks and prints one OSU row per requested size",
          "[probe][mpi]") {
  const Output o = probe(4, "--sizes 4:64 --iterations 5 --warmup 2");
  INFO(o.out << o.err);
  REQUIRE(o.code == 0);
  const std::vector<Table> tables = tables_of(o.out);
  REQUIRE(tables.size() == 1);
  const Table& t = tables[0];
  REQUIRE(t.header.size() >= 2);
  CHECK(t.header[0] == "# collsim-probe 1.0: ranks 4, nodes 1, ranks per node 4");
  CHECK(starts_with(t.header[1], "# MPI library: "));
  CHECK(t.header[1].size() > std::string("# MPI library: ").size());
  CHECK(contains(t.header, "# options: --collective allreduce --sizes 4:64 --iterations 5 "
                           "--iterations-large 5 --warmup 2 --datatype char"));
  CHECK(t.banner == "# OSU MPI Allreduce Latency Test v7.3");
  CHECK(t.datatype == "# Datatype: MPI_CHAR.");
  CHECK(t.columns == "# Size       Avg Latency(us)");
  REQUIRE(t.rows.size() == 5);
  std::uint64_t expected = 4;
  for (const std::string& row : t.rows) {
    CHECK(parse_row(row, false).size == expected);
    expected *= 2;
  }
}

TEST_CASE("the --full format adds min, max and iterations columns with min <= avg <= max, and "
          "collsim ingest "
          "reads them back",
          "[probe][mpi]") {
  const Output o =
      probe(3, "--sizes 1:16KiB --iterations 4 --iterations-large 2 --warmup 1 --full");
  INFO(o.out << o.err);
  REQUIRE(o.code == 0);
  const std::vector<Table> tables = tables_of(o.out);
  REQUIRE(tables.size() == 1);
  const Table& t = tables[0];
  CHECK(t.header[0] == "# collsim-probe 1.0: ranks 3, nodes 1, ranks per node 3");
  CHECK(t.columns ==
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations");
  REQUIRE(t.rows.size() == 15);
  std::vector<Row> rows;
  std::uint64_t expected = 1;
  for (const std::string& line : t.rows) {
    const Row r = parse_row(line, true);
    INFO("row: '" << line << "'");
    CHECK(r.size == expected);
    CHECK(r.iterations == (r.size > 8192 ? 2U : 4U));
    CHECK(r.min > 0.0);
    CHECK(r.min <= r.avg);
    CHECK(r.avg <= r.max);
    rows.push_back(r);
    expected *= 2;
  }

  const nlohmann::json j = ingest_json(o.out, "probe.txt");
  const nlohmann::json& m = j.at("measurements");
  REQUIRE(m.size() == rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    CHECK(m[k].at("collective") == "allreduce");
    CHECK(m[k].at("bytes") == rows[k].size);
    CHECK(m[k].at("type") == "MPI_CHAR");
    CHECK(m[k].at("time_us").get<double>() == Approx(rows[k].avg));
    CHECK(m[k].at("min_time_us").get<double>() == Approx(rows[k].min));
    CHECK(m[k].at("max_time_us").get<double>() == Approx(rows[k].max));
    CHECK(m[k].at("iterations") == rows[k].iterations);
  }
  REQUIRE(j.at("logs").size() == 1);
  CHECK(j.at("logs")[0].at("tool_version") == "7.3");
  // The rank and node counts come from collsim-probe's header (OSU prints neither).
  CHECK(j.at("logs")[0].at("ranks") == 3);
  CHECK(j.at("logs")[0].at("ranks_source") == "collsim-probe header");
  CHECK(j.at("logs")[0].at("nodes") == 1);
  CHECK(j.at("warnings").empty());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    CHECK(m[k].at("ranks") == 3);
  }
}

TEST_CASE("every collective prints its own OSU table, barrier without a size column",
          "[probe][mpi]") {
  const Output o = probe(3, "--collective all --sizes 1:8 --datatype float --iterations 3 "
                            "--warmup 1 --print-sum");
  INFO(o.out << o.err);
  REQUIRE(o.code == 0);
  const std::vector<Table> tables = tables_of(o.out);
  const std::vector<std::string> banners{
      "# OSU MPI Allreduce Latency Test v7.3",
      "# OSU MPI Reduce Latency Test v7.3",
      "# OSU MPI Broadcast Latency Test v7.3",
      "# OSU MPI Allgather Latency Test v7.3",
      "# OSU MPI Reduce_scatter Latency Test v7.3",
      "# OSU MPI All-to-All Personalized Exchange Latency Test v7.3",
      "# OSU MPI Gather Latency Test v7.3",
      "# OSU MPI Scatter Latency Test v7.3",
      "# OSU MPI Barrier Latency Test v7.3"};
  REQUIRE(tables.size() == banners.size());
  for (std::size_t k = 0; k < tables.size(); ++k) {
    const Table& t = tables[k];
    INFO(t.banner);
    CHECK(t.banner == banners[k]);
    CHECK(contains(t.header, "# collsim-probe 1.0: ranks 3, nodes 1, ranks per node 3"));
    if (k + 1 == tables.size()) {
      CHECK(t.datatype.empty()); // osu_barrier prints no datatype
      CHECK(t.columns == "# Avg Latency(us)");
      REQUIRE(t.rows.size() == 1);
      parse_row(t.rows[0], false, false);
      CHECK(t.checks.empty());
      continue;
    }
    CHECK(t.datatype == "# Datatype: MPI_FLOAT.");
    CHECK(t.columns == "# Size       Avg Latency(us)");
    REQUIRE(t.rows.size() == 2); // 1 and 2 bytes hold no float: skipped, as OSU 7.x does
    CHECK(parse_row(t.rows[0], false).size == 4);
    CHECK(parse_row(t.rows[1], false).size == 8);
    REQUIRE(t.checks.size() == 2);
  }
  // Rank 0's results, elements and sums: allreduce of 1 float over ranks 0, 1, 2 holding 1e8, 1
  // and -1e8 adds up to 0 or 1 depending on the order; the gathers hold 3 blocks.
  CHECK(starts_with(tables[3].checks[0], "# check: size 4: rank 0's result has 3 elements, "));
  CHECK(starts_with(tables[5].checks[1], "# check: size 8: rank 0's result has 6 elements, "));
  CHECK(starts_with(tables[4].checks[1], "# check: size 8: rank 0's result has 1 elements, "));

  // Every table reads back through collsim ingest: nine runs of 3 ranks, barrier's size-less row.
  const nlohmann::json j = ingest_json(o.out, "probe-all.txt");
  REQUIRE(j.at("logs").size() == banners.size());
  const std::vector<std::string> collectives{"allreduce", "reduce",         "bcast",
                                             "allgather", "reduce_scatter", "alltoall",
                                             "gather",    "scatter",        "barrier"};
  for (std::size_t k = 0; k < collectives.size(); ++k) {
    CHECK(j.at("logs")[k].at("collective") == collectives[k]);
    CHECK(j.at("logs")[k].at("ranks") == 3);
  }
  const nlohmann::json& m = j.at("measurements");
  REQUIRE(m.size() == 8 * 2 + 1);
  CHECK(m.back().at("collective") == "barrier");
  CHECK(m.back().at("bytes") == 0);
  CHECK(m.back().at("time_us").get<double>() > 0.0);
  CHECK(j.at("warnings").empty());
}

TEST_CASE("forcing with --ompi-algorithm changes coll/tuned's allreduce: basic_linear and ring "
          "round floats differently",
          "[probe][mpi]") {
  if (!open_mpi_launcher()) {
    WARN("not Open MPI: --ompi-algorithm has no coll/tuned to force, nothing to check");
    return;
  }
  const Output o = probe(4, "--sizes 256 --datatype float --iterations 3 --warmup 1 --print-sum "
                            "--ompi-algorithm 1,ring,basic_linear");
  INFO(o.out << o.err);
  REQUIRE(o.code == 0);
  const std::vector<Table> tables = tables_of(o.out);
  REQUIRE(tables.size() == 3);
  REQUIRE(open_mpi(tables[0].header));
  const std::string forced = "# forced algorithm: allreduce ";
  const std::string via = ", Open MPI coll/tuned via MPI_T (coll_tuned_allreduce_algorithm = ";
  CHECK(contains(tables[0].header,
                 forced + "1 (basic_linear)" + via + "1, coll_tuned_use_dynamic_rules = true)"));
  CHECK(contains(tables[1].header,
                 forced + "4 (ring)" + via + "4, coll_tuned_use_dynamic_rules = true)"));
  CHECK(contains(tables[2].header,
                 forced + "1 (basic_linear)" + via + "1, coll_tuned_use_dynamic_rules = true)"));
  for (const Table& t : tables) {
    REQUIRE(t.rows.size() == 1);
    parse_row(t.rows[0], false);
    REQUIRE(t.checks.size() == 1);
    CHECK(starts_with(t.checks[0], "# check: size 256: rank 0's result has 64 elements, "));
  }
  // The same algorithm twice gives the same bits; ring adds in another order than the linear
  // reduction to rank 0, and 1e8 + 1 rounds to 1e8 in single precision.
  CHECK(tables[0].checks[0] == tables[2].checks[0]);
  CHECK(tables[0].checks[0] != tables[1].checks[0]);
}

TEST_CASE("collsim-probe notes coll components that outrank coll/tuned when forcing",
          "[probe][mpi]") {
  if (!open_mpi_launcher()) {
    WARN("not Open MPI: --ompi-algorithm has no coll/tuned to force, nothing to check");
    return;
  }
  const std::string args = "--sizes 4 --iterations 2 --warmup 0 --ompi-algorithm 4";
  const Output o = probe(2, args, "OMPI_MCA_coll_adapt_priority=40");
  INFO(o.out << o.err);
  REQUIRE(o.code == 0);
  const std::vector<Table> tables = tables_of(o.out);
  REQUIRE(tables.size() == 1);
  CHECK(contains(tables[0].header,
                 "# note: coll/adapt has priority 40 > coll/tuned's 30 and may run allreduce "
                 "instead of the forced algorithm; add --mca coll ^adapt to rule it out"));
  const Output excluded = probe(2, args, "OMPI_MCA_coll_adapt_priority=40 OMPI_MCA_coll=^adapt");
  INFO(excluded.out << excluded.err);
  REQUIRE(excluded.code == 0);
  CHECK(excluded.out.find("# note:") == std::string::npos);
}

TEST_CASE("collsim-probe's errors exit with 2 and one line from rank 0", "[probe][mpi]") {
  const Output bad_size = probe(2, "--sizes 3:8");
  CHECK(bad_size.code == 2);
  CHECK(bad_size.out.empty());
  const std::string line = "collsim-probe: error: --sizes: '3' (3 bytes) is not a power of two\n";
  CHECK(bad_size.err.find(line) != std::string::npos);
  CHECK(bad_size.err.find(line) == bad_size.err.rfind(line)); // once, not once per rank

  const Output bad_algorithm = probe(2, "--ompi-algorithm 99");
  INFO(bad_algorithm.err);
  CHECK(bad_algorithm.code == 2);
  const std::string expected =
      open_mpi_launcher()
          ? "collsim-probe: error: --ompi-algorithm: 99 is not an algorithm of "
            "coll_tuned_allreduce_algorithm; valid: 0 ignore, 1 basic_linear, "
          : "collsim-probe: error: --ompi-algorithm: this MPI library has no control variable "
            "coll_tuned_allreduce_algorithm";
  CHECK(bad_algorithm.err.find(expected) != std::string::npos);
  CHECK(bad_algorithm.err.find(expected) == bad_algorithm.err.rfind(expected));
}

TEST_CASE("collsim-probe --describe writes rank 0's node as collsim topology import --this-machine "
          "does, with the job's node count",
          "[probe][mpi][describe]") {
  const auto yaml = temp_path("probe-node.yaml");
  const Output o = probe(2, "--sizes 4 --iterations 2 --warmup 1 --describe " + yaml.string());
  INFO(o.out << o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("# node: " + yaml.string() + " (collsim-probe --describe") != std::string::npos);
  const std::string probed = read_file(yaml);
  // The scenario's name is the file's stem.
  const std::string name = yaml.filename().string().substr(0, yaml.filename().string().find('.'));
  const Output here =
      shell(std::string(COLLSIM_BINARY) + " topology import --this-machine --name " + name);
  REQUIRE(here.code == 0);
  // Everything from the name on is the same; the header comments name the command.
  REQUIRE(probed.find("\nname: " + name + "\n") != std::string::npos);
  CHECK(probed.substr(probed.find("\nname:")) == here.out.substr(here.out.find("\nname:")));
  CHECK(probed.find("  nodes: 1\n") != std::string::npos);
  CHECK(probed.rfind("# Written by collsim-probe --collective allreduce", 0) == 0);
  // collsim loads it: the probe's node runs as a scenario.
  const Output show = shell(std::string(COLLSIM_BINARY) + " topology show " + yaml.string());
  CHECK(show.code == 0);
  std::filesystem::remove(yaml);
}

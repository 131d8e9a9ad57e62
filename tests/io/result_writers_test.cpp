// Writers are checked against approved golden files (tests/data/io/results.*). After an intended
// change, regenerate them with COLLSIM_UPDATE_GOLDEN=1 and review the diff before committing.

#include "collsim/core/errors.hpp"
#include "collsim/io/logs.hpp"
#include "collsim/io/writers.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "golden.hpp"

namespace {

using collsim::core::Bandwidth;
using collsim::core::Bytes;
using collsim::core::CollectiveKind;
using collsim::core::ResultRow;
using collsim::core::Seconds;

std::string golden_path(const std::string& name) {
  return std::string(COLLSIM_TEST_DATA_DIR) + "/io/" + name;
}

void check_golden(const std::string& name, const std::string& actual) {
  collsim::testing::check_golden_file(golden_path(name), actual);
}

/// A row with hand-set numbers: the writers' goldens must not move when core's metrics do.
ResultRow row(CollectiveKind c, std::string algorithm, std::string engine, std::uint32_t ranks,
              std::uint64_t bytes, std::uint64_t count, std::uint32_t root, double time_us,
              double busbw_factor) {
  ResultRow r;
  r.collective = c;
  r.algorithm = std::move(algorithm);
  r.engine = std::move(engine);
  r.ranks = ranks;
  r.bytes = Bytes{bytes};
  r.count = count;
  r.root = root;
  r.time = Seconds{time_us * 1e-6};
  r.algbw = Bandwidth{static_cast<double>(bytes) / (time_us * 1e-6)};
  r.busbw = Bandwidth{r.algbw.bytes_per_second * busbw_factor};
  return r;
}

/// Interleaved groups, a rooted collective, a non-reduction, a barrier, and values too large for
/// two decimals in nccl-tests' column widths.
std::vector<ResultRow> sample_rows() {
  using C = CollectiveKind;
  return {
      row(C::allreduce, "ring", "loggp", 16, 8, 2, 0, 20.5, 1.875),
      row(C::allreduce, "ring", "loggp", 16, 1 << 20, 1 << 18, 0, 95.125, 1.875),
      row(C::allreduce, "recursive_doubling", "loggp", 16, 8, 2, 0, 9.0, 1.875),
      row(C::allreduce, "ring", "loggp", 16, 1ULL << 30, 1ULL << 28, 0, 44739.24, 1.875),
      row(C::allreduce, "nvls", "loggp", 16, 1ULL << 30, 1ULL << 28, 0, 700.0, 1.875),
      row(C::bcast, "binomial", "analytic", 8, 4096, 1024, 2, 1.3333, 1.0),
      row(C::allgather, "ring", "simgrid", 8, 256ULL << 20, 8ULL << 20, 0, 1234567.0, 0.875),
      row(C::allgather, "ring", "simgrid", 8, 1ULL << 40, 1ULL << 35, 0, 1.5e8, 0.875),
      row(C::barrier, "dissemination", "loggp", 4, 0, 0, 0, 3.0, 0.0),
  };
}

} // namespace

TEST_CASE("the table reads like nccl-tests output, one group per algorithm and rank count",
          "[io][writers]") {
  const auto rows = sample_rows();
  check_golden("results_table.txt", collsim::io::format_table(rows));
}

TEST_CASE("the table of no rows is its header alone", "[io][writers]") {
  const std::string table = collsim::io::format_table({});
  CHECK(table.find(
            "#       size         count      type   redop    root     time   algbw   busbw\n") !=
        std::string::npos);
  CHECK(table.find("# collective") == std::string::npos);
}

TEST_CASE("the CSV has one header and full-precision numbers", "[io][writers]") {
  const auto rows = sample_rows();
  check_golden("results.csv", collsim::io::format_csv(rows));
}

TEST_CASE("CSV fields with commas or quotes are quoted", "[io][writers]") {
  auto r = sample_rows().front();
  r.algorithm = "tree \"double\", pipelined";
  const std::string csv = collsim::io::format_csv(std::span(&r, 1));
  CHECK(csv.find(",\"tree \"\"double\"\", pipelined\",") != std::string::npos);
}

TEST_CASE("the JSON document matches its golden file", "[io][writers]") {
  const auto rows = sample_rows();
  collsim::io::JsonExtras extras;
  extras.string_fields = {{"scenario", "textbook"}};
  extras.raw_fields = {
      {"crossovers", R"([{"from":"recursive_doubling","to":"ring","bytes":65536}])"}};
  check_golden("results.json", collsim::io::format_json(rows, extras));
}

TEST_CASE("the JSON results carry every field by name with its value in base units",
          "[io][writers]") {
  const auto rows = sample_rows();
  collsim::io::JsonExtras extras;
  extras.string_fields = {{"scenario", "textbook"}, {"engine_version", "1"}};
  extras.raw_fields = {{"crossovers", "[1, 2]"}, {"summary", R"({"best":"ring"})"}};
  const auto doc = nlohmann::ordered_json::parse(collsim::io::format_json(rows, extras));

  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) {
    keys.push_back(key);
  }
  CHECK(keys ==
        std::vector<std::string>{"scenario", "engine_version", "crossovers", "summary", "results"});
  CHECK(doc["scenario"] == "textbook");
  CHECK(doc["crossovers"] == nlohmann::ordered_json::array({1, 2}));
  CHECK(doc["summary"]["best"] == "ring");

  const auto& results = doc["results"];
  REQUIRE(results.size() == rows.size());
  std::vector<std::string> fields;
  for (const auto& [key, value] : results[1].items()) {
    fields.push_back(key);
  }
  CHECK(fields == std::vector<std::string>{"collective", "algorithm", "engine", "ranks", "bytes",
                                           "count", "type", "root", "time_us", "algbw_GBps",
                                           "busbw_GBps"});
  const auto& r = results[1];
  CHECK(r["collective"] == "allreduce");
  CHECK(r["algorithm"] == "ring");
  CHECK(r["engine"] == "loggp");
  CHECK(r["ranks"] == 16);
  CHECK(r["bytes"] == 1048576);
  CHECK(r["count"] == 262144);
  CHECK(r["type"] == "float");
  CHECK(r["root"] == -1); // allreduce has no root
  // Round-trip precision: the parsed doubles are the ones that were written.
  CHECK(r["time_us"].get<double>() == rows[1].time.us());
  CHECK(r["algbw_GBps"].get<double>() == rows[1].algbw.gbps());
  CHECK(r["busbw_GBps"].get<double>() == rows[1].busbw.gbps());
  CHECK(r["algbw_GBps"].get<double>() == Approx(1048576.0 / 95.125e-6 / 1e9));
  CHECK(results[5]["root"] == 2); // bcast keeps its root
}

TEST_CASE("JSON rows say how a point was timed where it did not run in full", "[io][writers]") {
  auto rows = sample_rows();
  rows[0].method = "steady state: 672 of 4096 loops run, period 32";
  const auto doc = nlohmann::json::parse(collsim::io::format_json(rows));
  CHECK(doc["results"][0]["method"] == "steady state: 672 of 4096 loops run, period 32");
  CHECK_FALSE(doc["results"][1].contains("method"));
}

TEST_CASE("tables and CSV say how a point was timed where it did not run in full",
          "[io][writers]") {
  auto rows = sample_rows();
  rows[3].method = "steady state: 672 of 4096 loops run, period 32";
  rows[3].extrapolated = true;
  rows[4].method = "collapsed: 2 programs for 16 ranks"; // exact by symmetry
  const std::string table = collsim::io::format_table(rows);
  // A comment line after the group, so that the table still reads as nccl-tests output.
  CHECK(table.find("  1073741824     268435456     float     sum      -1  44739.2   24.00   45.00\n"
                   "#   1073741824 B timed by steady state: 672 of 4096 loops run, period 32\n"
                   "#\n# collective allreduce, algorithm recursive_doubling") != std::string::npos);
  CHECK(table.find("collapsed") == std::string::npos); // left to JSON and CSV
  const auto parsed = collsim::io::parse_log(table, "table.txt");
  REQUIRE(parsed.measurements.size() == rows.size());
  // Grouped by algorithm: ring's three sizes, recursive doubling's, then nvls's.
  CHECK(parsed.measurements[2].bytes == 1073741824);
  CHECK(parsed.measurements[2].time_us == Approx(44739.2));
  CHECK(parsed.measurements[3].bytes == 8); // the row after the note is read too
  CHECK(parsed.measurements[4].time_us == Approx(700.0));
  CHECK(collsim::io::format_table(sample_rows()).find("timed by") == std::string::npos);

  // Consecutive rows timed alike share one line; a row run in full between them parts them.
  auto alike = sample_rows();
  for (const std::size_t i : {0, 1, 6, 7, 8}) {
    alike[i].method = "steady state: 160 of 1024 loops run, period 1";
    alike[i].extrapolated = true;
  }
  alike[8] = alike[6];
  alike[8].bytes = collsim::core::Bytes{1ULL << 41};
  alike[7].method.clear();
  alike[7].extrapolated = false;
  const std::string grouped = collsim::io::format_table(alike);
  CHECK(grouped.find("  44739.2   24.00   45.00\n"
                     "#   2 sizes from 8 B to 1048576 B timed by steady state: 160 of 1024 loops "
                     "run, period 1\n#\n") != std::string::npos);
  CHECK(grouped.find(
            "#   268435456 B timed by steady state: 160 of 1024 loops run, period 1\n"
            "#   2199023255552 B timed by steady state: 160 of 1024 loops run, period 1\n") !=
        std::string::npos);

  const std::string csv = collsim::io::format_csv(rows);
  CHECK(csv.substr(0, csv.find('\n')).ends_with(",busbw_GBps,method"));
  CHECK(csv.find(",\"steady state: 672 of 4096 loops run, period 32\"\n") != std::string::npos);
  CHECK(csv.find(",collapsed: 2 programs for 16 ranks\n") != std::string::npos);
  const std::string second_row = csv.substr(csv.find('\n') + 1);
  CHECK(second_row.substr(0, second_row.find('\n')).ends_with(",")); // timed in full: empty
  CHECK(collsim::io::format_csv(sample_rows()).find("method") == std::string::npos);
}

TEST_CASE("format_json without extras prints only the results", "[io][writers]") {
  const auto doc = nlohmann::json::parse(collsim::io::format_json({}));
  CHECK(doc == nlohmann::json::parse(R"({"results": []})"));
}

TEST_CASE("format_json rejects extras that are not JSON or reuse a key", "[io][writers]") {
  using collsim::core::InternalError;
  collsim::io::JsonExtras bad_json;
  bad_json.raw_fields = {{"crossovers", "[1, 2"}};
  CHECK_THROWS_AS(collsim::io::format_json({}, bad_json), InternalError);

  collsim::io::JsonExtras twice;
  twice.string_fields = {{"scenario", "a"}};
  twice.raw_fields = {{"scenario", "\"b\""}};
  CHECK_THROWS_WITH(collsim::io::format_json({}, twice),
                    "format_json: the key 'scenario' is given twice");

  collsim::io::JsonExtras results;
  results.string_fields = {{"results", "x"}};
  CHECK_THROWS_AS(collsim::io::format_json({}, results), InternalError);
}

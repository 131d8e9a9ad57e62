// The tuning-table writers on a hand-made table (so that the goldens move only when a writer
// does): golden files per format (tests/data/tuning/; regenerate with COLLSIM_UPDATE_GOLDEN=1 and
// review the diff), and formats.md d.4's grammar checked on the Open MPI rules files.

#include "collsim/core/errors.hpp"
#include "collsim/io/tuning_formats.hpp"
#include "ompi_rules_grammar.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden.hpp"

namespace {

using collsim::core::Bytes;
using collsim::core::CollectiveKind;
using collsim::core::OmpiVersion;
using collsim::core::TuneBlock;
using collsim::core::TuneCandidate;
using collsim::core::TuneRange;
using collsim::core::TuneTable;

void check_golden(const std::string& name, const std::string& actual) {
  collsim::testing::check_golden_file(std::string(COLLSIM_TEST_DATA_DIR) + "/tuning/" + name,
                                      actual);
}

TuneCandidate cand(std::string algorithm, int id, std::int64_t segment = -1,
                   std::int64_t fanout = 0) {
  TuneCandidate c;
  c.algorithm = std::move(algorithm);
  c.ompi_id = id;
  c.fanout = fanout;
  if (segment >= 0) {
    c.segment_size = segment;
    c.params["segment_size"] = std::to_string(segment);
  }
  return c;
}

TuneRange range(std::uint64_t from, std::uint64_t to, TuneCandidate winner,
                std::optional<TuneCandidate> runner_up, double margin,
                std::vector<std::string> defaults, double regret) {
  TuneRange r;
  r.from = Bytes{from};
  r.to = Bytes{to};
  r.winner = std::move(winner);
  r.runner_up = std::move(runner_up);
  r.margin_pct = margin;
  r.library_default = std::move(defaults);
  r.regret_pct = regret;
  return r;
}

/// allreduce at 4 and 8 ranks, bcast at 8 ranks with a segmented pipeline and a chain.
TuneTable sample(OmpiVersion version) {
  TuneTable t;
  t.scenario = "sample";
  t.engine = "loggp";
  t.ompi = version;
  for (std::uint64_t s : {8, 512, 4096, 32768, 262144, 1048576}) {
    t.sizes.push_back(Bytes{s});
  }
  t.blocks.push_back({CollectiveKind::allreduce,
                      4,
                      {range(8, 512, cand("recursive_doubling", 3), cand("ring", 4), 12.5,
                             {"ompi:3 recursive_doubling"}, 0.0),
                       range(4096, 1048576, cand("ring", 4), cand("rabenseifner", 6), 3.14159,
                             {"ompi:3 recursive_doubling", "ompi:6 rabenseifner"}, 41.666)}});
  t.blocks.push_back({CollectiveKind::allreduce,
                      8,
                      {range(8, 32768, cand("recursive_doubling", 3), cand("basic_linear", 1), 80.0,
                             {"ompi:3 recursive_doubling"}, 0.0),
                       range(262144, 262144, cand("segmented_ring", 5, 65536), cand("ring", 4), 0.5,
                             {"ompi:6 rabenseifner"}, 7.25),
                       range(1048576, 1048576, cand("ring", 4), std::nullopt, 0.0, {}, 0.0)}});
  t.blocks.push_back(
      {CollectiveKind::bcast,
       8,
       {range(8, 4096, cand("binomial", 6), cand("linear", 1), 10.0, {"ompi:6 binomial"}, 0.0),
        range(32768, 1048576, cand("chain", 2, 8192, 4), cand("pipeline", 3, 65536), 2.0,
              {"ompi:9 scatter_allgather_ring"}, 22.0)}});
  t.skipped = {"rabenseifner: rabenseifner at 8 ranks, 8 bytes: count < 2^floor(lg p)"};
  return t;
}

} // namespace

TEST_CASE("tuning writers match their approved golden files", "[io][tuning]") {
  const TuneTable t = sample(OmpiVersion::v4_1);
  check_golden("sample.txt", collsim::io::format_tuning_table(t));
  check_golden("sample.csv", collsim::io::format_tuning_csv(t));
  check_golden("sample.json", collsim::io::format_tuning_json(t));
  check_golden("sample-ompi41.rules", collsim::io::format_ompi_rules(t, OmpiVersion::v4_1));
  check_golden("sample-ompi50.rules",
               collsim::io::format_ompi_rules(sample(OmpiVersion::v5_0), OmpiVersion::v5_0));
}

TEST_CASE("an Open MPI 4.1 rules file follows formats.md's v1 grammar and says what the table "
          "says",
          "[io][tuning]") {
  const TuneTable t = sample(OmpiVersion::v4_1);
  const std::string text = collsim::io::format_ompi_rules(t, OmpiVersion::v4_1);
  CHECK(text.find("rule-file-version") == std::string::npos); // 4.1.0-4.1.7 cannot read it
  const auto f = collsim::test::parse_ompi_rules(text, false);
  INFO(text);
  REQUIRE(f.errors.empty());
  CHECK(f.version == 1);
  REQUIRE(f.collectives.size() == 2);
  CHECK(f.collectives[0].id == 2); // allreduce
  CHECK(f.collectives[1].id == 7); // bcast
  REQUIRE(f.collectives[0].comms.size() == 2);
  CHECK(f.collectives[0].comms[0].comm_size == 4);
  CHECK(f.collectives[0].comms[1].comm_size == 8);
  // Each range becomes one rule at its first size; the first at 0.
  const auto& r4 = f.collectives[0].comms[0].rules;
  REQUIRE(r4.size() == 2);
  CHECK((r4[0].bytes == 0 && r4[0].alg == 3 && r4[0].segsize == 0));
  CHECK((r4[1].bytes == 4096 && r4[1].alg == 4 && r4[1].segsize == 0));
  const auto& r8 = f.collectives[0].comms[1].rules;
  REQUIRE(r8.size() == 3);
  CHECK((r8[1].bytes == 262144 && r8[1].alg == 5 && r8[1].segsize == 65536));
  CHECK((r8[2].bytes == 1048576 && r8[2].alg == 4));
  // The chain's fan-out and segment size travel as FANINOUT and SEGSIZE.
  const auto& b8 = f.collectives[1].comms[0].rules;
  REQUIRE(b8.size() == 2);
  CHECK((b8[1].bytes == 32768 && b8[1].alg == 2 && b8[1].faninout == 4 && b8[1].segsize == 8192));
  for (const auto& c : f.collectives) {
    for (const auto& comm : c.comms) {
      for (const auto& r : comm.rules) {
        CHECK(r.maxreq == -1);
      }
    }
  }
}

TEST_CASE("an Open MPI 5.0 rules file has the version-2 header and five numbers per rule",
          "[io][tuning]") {
  const std::string text =
      collsim::io::format_ompi_rules(sample(OmpiVersion::v5_0), OmpiVersion::v5_0);
  CHECK(text.rfind("rule-file-version-2\n", 0) == 0);
  const auto f = collsim::test::parse_ompi_rules(text, true);
  INFO(text);
  REQUIRE(f.errors.empty());
  CHECK(f.version == 2);
  for (const auto& c : f.collectives) {
    for (const auto& comm : c.comms) {
      for (const auto& r : comm.rules) {
        CHECK(r.maxreq == 0);
      }
    }
  }
}

TEST_CASE("the grammar checker rejects what Open MPI would reject", "[io][tuning]") {
  using collsim::test::parse_ompi_rules;
  CHECK(parse_ompi_rules("1\n2\n1\n4\n1\n0 4 0 0\n", false).errors.empty());
  CHECK(!parse_ompi_rules("1\n2\n1\n4\n1\n8 4 0 0\n", false).errors.empty());          // not at 0
  CHECK(!parse_ompi_rules("1\n2\n1\n4\n2\n0 4 0 0\n0 3 0 0\n", false).errors.empty()); // order
  CHECK(!parse_ompi_rules("1\n2\n1\n4\n1\n0 7 0 0\n", false).errors.empty());   // allreduce 7
  CHECK(!parse_ompi_rules("1\n0\n1\n4\n1\n0 7 0 0\n", false).errors.empty());   // sparbit in 4.1
  CHECK(parse_ompi_rules("1\n0\n1\n4\n1\n0 7 0 0\n", true).errors.empty());     // ... but in 5.0
  CHECK(!parse_ompi_rules("1\n2\n1\n4\n2\n0 4 0 0\n", false).errors.empty());   // count too big
  CHECK(!parse_ompi_rules("1\n2\n1\n4\n1\n0 4 0 0 9\n", false).errors.empty()); // extra number
}

TEST_CASE("a rules file needs a sweep limited to the version's algorithms", "[io][tuning]") {
  TuneTable t = sample(OmpiVersion::v4_1);
  CHECK_THROWS_WITH(collsim::io::format_ompi_rules(t, OmpiVersion::v5_0),
                    "an Open MPI 5.0 rules file needs a sweep limited to the algorithms Open MPI "
                    "5.0 implements (this one was swept for 4.1)");
  t.blocks[0].ranges[0].winner.ompi_id.reset();
  t.blocks[0].ranges[0].winner.algorithm = "swing_latency";
  CHECK_THROWS_WITH(collsim::io::format_ompi_rules(t, OmpiVersion::v4_1),
                    "allreduce at 4 ranks: the fastest algorithm from 8 B is 'swing_latency', "
                    "which Open MPI has not");
}

TEST_CASE("the CSV has one row per range and the JSON lists where the default is not the best",
          "[io][tuning]") {
  const TuneTable t = sample(OmpiVersion::v4_1);
  const std::string csv = collsim::io::format_tuning_csv(t);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 + 3 + 2);
  const auto j = nlohmann::json::parse(collsim::io::format_tuning_json(t));
  REQUIRE(j.at("default_not_best").size() == 3);
  CHECK(j.at("default_not_best")[0].at("regret_pct") == Approx(41.67));
  CHECK(j.at("blocks")[1].at("ranges")[2].at("default_is_best").is_null());
  CHECK(j.at("blocks")[1].at("ranges")[2].at("runner_up").is_null());
}

TEST_CASE("the rules file's message size is collsim's S for every collective but barrier",
          "[io][tuning]") {
  using collsim::io::ompi_rules_message_size;
  for (auto c : {CollectiveKind::allreduce, CollectiveKind::allgather, CollectiveKind::alltoall,
                 CollectiveKind::gather, CollectiveKind::reduce_scatter}) {
    CHECK(ompi_rules_message_size(c, Bytes{4096}) == 4096);
  }
  CHECK(ompi_rules_message_size(CollectiveKind::barrier, Bytes{4096}) == 0);
}

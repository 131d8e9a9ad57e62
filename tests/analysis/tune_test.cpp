// collsim tune's sweep: the merging rule on hand-made points (one change of winner gives two
// ranges; margins; ties), the candidate filter per Open MPI version, and a real sweep on the
// textbook preset whose ranges, margins and regrets are checked against the times of a plain
// study, and whose Open MPI rules file is approved as a golden file and checked against
// formats.md d.4's grammar.

#include "../io/library_tuning_grammar.hpp"
#include "../io/ompi_rules_grammar.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/analysis/tune.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/tuning_formats.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace collsim;
using core::Bytes;
using core::CollectiveKind;
using core::OmpiVersion;

namespace {

core::TuneCandidate cand(std::string name) {
  core::TuneCandidate c;
  c.algorithm = std::move(name);
  return c;
}

core::Scenario textbook() {
  return io::load_scenario(std::string(COLLSIM_SOURCE_DIR) + "/scenarios/textbook.yaml");
}

} // namespace

TEST_CASE("a sweep whose winner changes at exactly one size yields exactly two ranges",
          "[analysis][tune]") {
  const std::vector<core::TuneCandidate> cands{cand("latency_bound"), cand("bandwidth_bound")};
  std::vector<analysis::TunePoint> points;
  for (std::uint64_t n = 1; n <= 1024; n *= 2) {
    const double x = static_cast<double>(n);
    points.push_back({Bytes{n}, 0, core::Seconds{1.0 + x * 0.01}});
    points.push_back({Bytes{n}, 1, core::Seconds{5.0 + x * 0.001}});
  }
  const auto ranges = analysis::merge_ranges(points, cands);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].winner.algorithm == "latency_bound");
  CHECK(ranges[0].from == Bytes{1});
  CHECK(ranges[0].to == Bytes{256});
  REQUIRE(ranges[0].runner_up);
  CHECK(ranges[0].runner_up->algorithm == "bandwidth_bound");
  CHECK(ranges[1].winner.algorithm == "bandwidth_bound");
  CHECK(ranges[1].from == Bytes{512});
  CHECK(ranges[1].to == Bytes{1024});
  // Margins: the closest point of each range. At 256 B: 5.256 / 3.56 - 1; at 512 B:
  // 6.12 / 5.512 - 1 (1024 B is farther apart: 11.24 / 6.024 - 1).
  CHECK(ranges[0].margin_pct == Approx((5.256 / 3.56 - 1.0) * 100.0));
  CHECK(ranges[1].margin_pct == Approx((6.12 / 5.512 - 1.0) * 100.0));
  CHECK(ranges[0].library_default.empty());
}

TEST_CASE("merging: ties go to the first candidate, a lone candidate has no runner-up, and the "
          "runner-up is the closest competitor",
          "[analysis][tune]") {
  const std::vector<core::TuneCandidate> cands{cand("a"), cand("b"), cand("c")};
  std::vector<analysis::TunePoint> points{
      {Bytes{8}, 1, core::Seconds{2.0}},  {Bytes{8}, 0, core::Seconds{2.0}},
      {Bytes{8}, 2, core::Seconds{3.0}},  {Bytes{16}, 0, core::Seconds{2.0}},
      {Bytes{16}, 2, core::Seconds{2.2}}, {Bytes{32}, 1, core::Seconds{1.0}}};
  const auto ranges = analysis::merge_ranges(points, cands);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].winner.algorithm == "a");
  CHECK(ranges[0].to == Bytes{16});
  CHECK(ranges[0].margin_pct == Approx(0.0));
  CHECK(ranges[0].runner_up->algorithm == "b");
  CHECK(ranges[1].winner.algorithm == "b");
  CHECK(!ranges[1].runner_up);
  CHECK(ranges[1].margin_pct == 0.0);
}

TEST_CASE("Open MPI candidates: only algorithms the version implements, segment sizes swept",
          "[analysis][tune]") {
  const auto registry = algorithms::make_default_registry();
  CHECK(!analysis::ompi_has_algorithm(OmpiVersion::v4_1, CollectiveKind::allreduce, 7));
  CHECK(!analysis::ompi_has_algorithm(OmpiVersion::v5_0, CollectiveKind::allreduce, 7));
  CHECK(!analysis::ompi_has_algorithm(OmpiVersion::v4_1, CollectiveKind::allgather, 7));
  CHECK(analysis::ompi_has_algorithm(OmpiVersion::v5_0, CollectiveKind::allgather, 7));
  CHECK(!analysis::ompi_has_algorithm(OmpiVersion::v5_0, CollectiveKind::allgather, 8));
  CHECK(!analysis::ompi_has_algorithm(OmpiVersion::v5_0, CollectiveKind::reduce, 8));
  CHECK(analysis::ompi_has_algorithm(OmpiVersion::v4_1, CollectiveKind::bcast, 9));

  analysis::TuneOptions o;
  o.candidates.ompi = OmpiVersion::v4_1;
  const auto ar = analysis::tune_candidates(registry, CollectiveKind::allreduce, o);
  std::map<int, int> per_id;
  for (const auto& c : ar) {
    REQUIRE(c.ompi_id);
    ++per_id[*c.ompi_id];
    CHECK(c.algorithm ==
          registry.find(CollectiveKind::allreduce, "ompi:" + std::to_string(*c.ompi_id)).name);
  }
  // 1..6, segmented_ring (5) once per swept segment size.
  CHECK(per_id == std::map<int, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 3}, {6, 1}});

  const auto ag41 = analysis::tune_candidates(registry, CollectiveKind::allgather, o);
  o.candidates.ompi = OmpiVersion::v5_0;
  const auto ag50 = analysis::tune_candidates(registry, CollectiveKind::allgather, o);
  CHECK(ag50.size() == ag41.size() + 1);
  CHECK(std::any_of(ag50.begin(), ag50.end(), [](const auto& c) { return c.ompi_id == 7; }));

  o.candidates.algorithms = {"sharp"};
  CHECK_THROWS_WITH(analysis::tune_candidates(registry, CollectiveKind::allreduce, o),
                    "no allreduce algorithm is left to tune among those Open MPI 5.0 implements");
  CHECK_THROWS_AS(analysis::ompi_version_from_name("4.0"), core::UnknownNameError);
}

TEST_CASE("a textbook sweep picks the fastest per size, and its regrets are the Open MPI 4.1 "
          "default's real loss",
          "[analysis][tune]") {
  const auto registry = algorithms::make_default_registry();
  const core::Scenario scenario = textbook();
  analysis::TuneOptions o;
  o.collectives = {CollectiveKind::allreduce};
  o.ranks = {4, 6};
  for (std::uint64_t s = 64; s <= (std::uint64_t{16} << 20); s *= 4) {
    o.sizes.push_back(Bytes{s});
  }
  o.candidates.ompi = OmpiVersion::v4_1;
  o.segment_sizes = {};
  o.threads = 2;
  const core::TuneTable t = analysis::tune(scenario, o, registry);
  REQUIRE(t.blocks.size() == 2);

  // The same points as a plain study.
  core::StudySpec study;
  study.collective = CollectiveKind::allreduce;
  for (const auto& c : analysis::tune_candidates(registry, CollectiveKind::allreduce, o)) {
    study.algorithms.push_back(c.algorithm);
  }
  study.ranks = o.ranks;
  study.sizes = o.sizes;
  const auto rows = analysis::run_study(scenario, study, registry, {}, 2).rows;
  const auto time_of = [&](const std::string& algo, std::uint32_t p, Bytes s) {
    for (const auto& r : rows) {
      if (r.algorithm == algo && r.ranks == p && r.bytes == s) {
        return r.time.value;
      }
    }
    FAIL("no row for " << algo << " at " << p << " ranks, " << s.value << " B");
    return 0.0;
  };
  bool some_regret = false;
  for (const auto& b : t.blocks) {
    REQUIRE(!b.ranges.empty());
    CHECK(b.ranges.front().from == o.sizes.front());
    CHECK(b.ranges.back().to == o.sizes.back());
    for (std::size_t i = 0; i < b.ranges.size(); ++i) {
      const auto& r = b.ranges[i];
      if (i > 0) {
        CHECK(b.ranges[i - 1].winner != r.winner); // merged: neighbours differ
      }
      double min_margin = 1e300;
      double max_regret = 0.0;
      for (Bytes s : o.sizes) {
        if (s < r.from || r.to < s) {
          continue;
        }
        const double win = time_of(r.winner.algorithm, b.ranks, s);
        for (const auto& algo : study.algorithms) {
          const auto& info = registry.find(CollectiveKind::allreduce, algo);
          bool ran = false;
          for (const auto& row : rows) {
            ran = ran || (row.algorithm == info.name && row.ranks == b.ranks && row.bytes == s);
          }
          if (!ran || info.name == r.winner.algorithm) {
            continue;
          }
          const double other = time_of(info.name, b.ranks, s);
          CHECK(win <= other);
          min_margin = std::min(min_margin, (other / win - 1.0) * 100.0);
        }
        analysis::OmpiCall call;
        call.ranks = b.ranks;
        call.bytes = s;
        const auto choice = analysis::ompi41_default(call, registry);
        REQUIRE(choice);
        const double def = time_of(choice->algorithm, b.ranks, s);
        max_regret = std::max(max_regret, (def / win - 1.0) * 100.0);
      }
      CHECK(r.margin_pct == Approx(min_margin));
      CHECK(r.regret_pct == Approx(max_regret).margin(1e-9));
      CHECK(!r.library_default.empty());
      some_regret = some_regret || r.regret_pct > 1.0;
    }
  }
  CHECK(some_regret); // the textbook model disagrees with Open MPI's tables somewhere

  // The rules file: golden, and the grammar with every winner's id.
  const std::string rules = io::format_ompi_rules(t, OmpiVersion::v4_1);
  const auto f = test::parse_ompi_rules(rules, false);
  INFO(rules);
  REQUIRE(f.errors.empty());
  REQUIRE(f.collectives.size() == 1);
  REQUIRE(f.collectives[0].comms.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(f.collectives[0].comms[k].comm_size == t.blocks[k].ranks);
    CHECK(f.collectives[0].comms[k].rules.size() <= t.blocks[k].ranges.size());
  }
  const std::string path = std::string(COLLSIM_TEST_DATA_DIR) + "/tuning/textbook-allreduce.rules";
  const char* update = std::getenv("COLLSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << rules;
    WARN("rewrote " << path);
  } else {
    std::ifstream in(path, std::ios::binary);
    INFO("golden file " << path << " (set COLLSIM_UPDATE_GOLDEN=1 to regenerate)");
    REQUIRE(in.good());
    std::stringstream expected;
    expected << in.rdbuf();
    CHECK(rules == expected.str());
  }
}

TEST_CASE("library candidates: only algorithms with the library's alias, NCCL's per protocol",
          "[analysis][tune]") {
  const auto registry = algorithms::make_default_registry();
  analysis::TuneOptions o;
  o.segment_sizes.clear();
  for (const std::string library : {"mpich", "smpi", "nccl", "ucc"}) {
    o.candidates.library = library;
    for (const auto& c : analysis::tune_candidates(registry, CollectiveKind::allreduce, o)) {
      INFO(library << ": " << c.algorithm);
      REQUIRE(core::library_name(c, library));
      // The alias names this very algorithm in the registry.
      CHECK(
          registry.find(CollectiveKind::allreduce, library + ":" + *core::library_name(c, library))
              .name == c.algorithm);
    }
  }
  o.candidates.library = "nccl";
  const auto nccl = analysis::tune_candidates(registry, CollectiveKind::allreduce, o);
  const auto ring = std::count_if(nccl.begin(), nccl.end(),
                                  [](const auto& c) { return c.algorithm == "nccl_ring"; });
  CHECK(ring == 3); // simple, ll, ll128
  // MPICH 4.0 (Debian 12) knows three allreduce algorithms and calls the barrier's
  // dissemination by its old name.
  o.candidates.library = "mpich";
  o.candidates.mpich = core::MpichVersion::v4_0;
  std::vector<std::string> names;
  for (const auto& c : analysis::tune_candidates(registry, CollectiveKind::allreduce, o)) {
    names.push_back(*core::library_name(c, "mpich"));
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"recursive_doubling", "reduce_scatter_allgather", "smp"});
  const auto barrier = analysis::tune_candidates(registry, CollectiveKind::barrier, o);
  CHECK(std::any_of(barrier.begin(), barrier.end(), [](const auto& c) {
    return core::library_name(c, "mpich") == std::optional<std::string>("dissemination");
  }));
  o.candidates.mpich = core::MpichVersion::latest;
  const auto barrier_latest = analysis::tune_candidates(registry, CollectiveKind::barrier, o);
  CHECK(std::none_of(barrier_latest.begin(), barrier_latest.end(), [](const auto& c) {
    return core::library_name(c, "mpich") == std::optional<std::string>("dissemination");
  }));
  CHECK_THROWS_AS(analysis::mpich_version_from_name("3.4"), core::UnknownNameError);

  o.candidates.library = "ucc";
  o.candidates.algorithms = {"sharp"};
  CHECK_THROWS_WITH(analysis::tune_candidates(registry, CollectiveKind::allreduce, o),
                    "no allreduce algorithm is left to tune among those UCC implements");
}

TEST_CASE("textbook sweeps written in every library format follow that format's grammar",
          "[analysis][tune]") {
  const auto registry = algorithms::make_default_registry();
  const core::Scenario scenario = textbook();
  analysis::TuneOptions o;
  o.ranks = {4, 6, 8};
  o.sizes = {Bytes{8}, Bytes{1024}, Bytes{65536}, Bytes{1048576}};
  o.segment_sizes.clear();

  o.collectives = {CollectiveKind::allreduce, CollectiveKind::bcast, CollectiveKind::alltoall,
                   CollectiveKind::barrier};
  o.candidates.library = "mpich";
  for (auto version : {core::MpichVersion::v4_0, core::MpichVersion::latest}) {
    o.candidates.mpich = version;
    const std::string mpich = io::format_mpich_json(analysis::tune(scenario, o, registry), version);
    INFO(mpich);
    CHECK(test::check_mpich_json(mpich).empty());
  }

  o.collectives = {CollectiveKind::allreduce, CollectiveKind::allgather, CollectiveKind::bcast};
  o.candidates.library = "smpi";
  const std::string smpi = io::format_smpi_cfg(analysis::tune(scenario, o, registry));
  INFO(smpi);
  std::map<std::string, std::string> settings;
  CHECK(test::check_smpi_cfg(smpi, &settings).empty());
  CHECK(settings.size() == 3);

  o.collectives = {CollectiveKind::allreduce, CollectiveKind::reduce_scatter};
  o.candidates.library = "nccl";
  const std::string nccl = io::format_nccl_tuner(analysis::tune(scenario, o, registry));
  INFO(nccl);
  CHECK(test::check_nccl_tuner(nccl).empty());

  o.collectives = {CollectiveKind::allreduce};
  o.candidates.library = "ucc";
  const std::string ucc = io::format_ucc_tune(analysis::tune(scenario, o, registry));
  INFO(ucc);
  CHECK(test::check_ucc_tune(ucc).empty());
}

TEST_CASE("NCCL's candidates are compared with NCCL's own choice and only where NCCL can run them",
          "[analysis][tune]") {
  const auto scenario = collsim::io::load_scenario("dgx-a100");
  const auto registry = collsim::algorithms::make_default_registry();
  collsim::analysis::TuneOptions o;
  o.ranks = {8};
  o.sizes = {collsim::core::Bytes{1024}, collsim::core::Bytes{64 << 20}};
  o.candidates.library = "nccl";
  o.threads = 1;
  const auto table = collsim::analysis::tune(scenario, o, registry);
  CHECK(table.default_model == "NCCL 2.30.7");
  REQUIRE(table.blocks.size() == 1);
  const auto& ranges = table.blocks[0].ranges;
  REQUIRE(!ranges.empty());
  for (const auto& r : ranges) {
    // One DGX A100 node: no SHARP switch for CollNet, no NVLink SHARP for NVLS.
    CHECK(r.winner.algorithm.rfind("collnet", 0) != 0);
    CHECK(r.winner.algorithm.rfind("nvls", 0) != 0);
  }
  // NCCL picks ring LL at 1 KiB and ring Simple at 64 MiB on one node (nccl_defaults_test).
  CHECK(ranges.front().library_default.at(0) == "Ring/LL");
  CHECK(ranges.back().library_default.back() == "Ring/Simple");
  const std::string text = collsim::io::format_tuning_table(table);
  CHECK(text.find("Ranges where NCCL 2.30.7's default is not the best") != std::string::npos);
}

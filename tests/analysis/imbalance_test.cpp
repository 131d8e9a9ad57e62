// analysis/imbalance.hpp (issue 21): counts from distributions, files and process graphs;
// arrival times from skew specs; arrival skew applied to schedules and seen by both engines.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/imbalance.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/io/imbalance_files.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace collsim;

namespace {

core::CountsSpec counts(const std::string& text) {
  const auto c = core::parse_counts_spec(text);
  REQUIRE(c.ok());
  return c.value;
}

core::SkewSpec skew(const std::string& text) {
  const auto s = core::parse_skew_spec(text);
  REQUIRE(s.ok());
  return s.value;
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "no error";
}

constexpr const char* kTextbook = R"(name: t
topology:
  kind: uniform
  latency: 2 us
  bandwidth: 10 GB/s
  reduce_bandwidth: 20 GB/s
studies:
  - collective: alltoall
    algorithms: [linear]
    ranks: [4]
    sizes: [4KiB]
)";

} // namespace

TEST_CASE("zipf counts: exact totals, the heaviest rank first", "[analysis][imbalance]") {
  const auto c =
      analysis::make_counts(counts("zipf:1.2"), core::CollectiveKind::allgather, 5, 1000003);
  REQUIRE(c.size() == 5);
  CHECK(std::accumulate(c.begin(), c.end(), std::uint64_t{0}) == 1000003);
  for (std::size_t i = 1; i < c.size(); ++i) {
    CHECK(c[i] < c[i - 1]);
  }
  // 1 / 2^1.2 of the first: 0.435.
  CHECK(static_cast<double>(c[1]) / static_cast<double>(c[0]) ==
        Approx(std::pow(2.0, -1.2)).epsilon(1e-5));
  // alltoallv: every row is a rank's sendcounts and sums to the size; all rows favour rank 0.
  const auto a = analysis::make_counts(counts("zipf:1.2"), core::CollectiveKind::alltoall, 4, 999);
  REQUIRE(a.size() == 16);
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(a[r * 4] + a[r * 4 + 1] + a[r * 4 + 2] + a[r * 4 + 3] == 999);
    CHECK(a[r * 4] > a[r * 4 + 1]);
  }
  CHECK(core::counts_problem(core::CollectiveKind::alltoall, 4, 999, a).empty());
}

TEST_CASE("normal counts are seeded and clip at 0, and one:R holds everything",
          "[analysis][imbalance]") {
  const auto n1 =
      analysis::make_counts(counts("normal:3,seed=4"), core::CollectiveKind::gather, 64, 1 << 20);
  const auto n2 =
      analysis::make_counts(counts("normal:3,seed=4"), core::CollectiveKind::gather, 64, 1 << 20);
  CHECK(n1 == n2);
  CHECK(std::count(n1.begin(), n1.end(), 0U) > 10); // P(1 + 3z < 0) = P(z < -1/3) = 37 %
  CHECK(std::accumulate(n1.begin(), n1.end(), std::uint64_t{0}) == std::uint64_t{1} << 20);
  const auto o = analysis::make_counts(counts("one:2"), core::CollectiveKind::scatter, 4, 100);
  CHECK(o == std::vector<std::uint64_t>{0, 0, 100, 0});
  CHECK(usage_error([] {
          (void)analysis::make_counts(counts("one:9"), core::CollectiveKind::scatter, 4, 100);
        }) == "counts 'one:9': rank 9 does not exist with 4 ranks");
  CHECK(usage_error([] {
          (void)analysis::make_counts(counts("zipf:1"), core::CollectiveKind::bcast, 4, 100);
        }) == "counts 'zipf:1': bcast has no v-variant (per-rank counts apply to allgather, "
              "gather, scatter, reduce_scatter and alltoall)");
}

TEST_CASE("an MoE router histogram: experts spread over ranks, each rank sends S",
          "[analysis][imbalance]") {
  core::CountsSpec c = counts("moe:moe_router_8experts.txt");
  io::load_counts_data(c, std::string(COLLSIM_TEST_DATA_DIR) + "/imbalance/x");
  REQUIRE(c.rows.size() == 1);
  // 8 experts on 4 ranks: rank 0 hosts experts 0-1 (5120 tokens of 6912), rank 3 experts 6-7.
  const auto a = analysis::make_counts(c, core::CollectiveKind::alltoall, 4, 6912);
  CHECK(a[0] == 5120);
  CHECK(a[1] == 1024);
  CHECK(a[2] == 512);
  CHECK(a[3] == 256);
  CHECK(std::vector<std::uint64_t>(a.begin() + 12, a.end()) ==
        std::vector<std::uint64_t>{5120, 1024, 512, 256});
  CHECK(
      usage_error([&] { (void)analysis::make_counts(c, core::CollectiveKind::alltoall, 3, 10); }) ==
      "counts 'moe:moe_router_8experts.txt': 8 experts cannot be spread evenly over 3 ranks "
      "(give a multiple of the rank count)");
}

TEST_CASE("process graphs: Cartesian stencils and edge lists give a neighbour exchange",
          "[analysis][imbalance]") {
  // 4 x 4 periodic: every rank sends 100 B to each of its 4 neighbours.
  const auto p =
      analysis::make_counts(counts("cart:4x4,periodic"), core::CollectiveKind::alltoall, 16, 100);
  for (std::size_t r = 0; r < 16; ++r) {
    CAPTURE(r);
    CHECK(std::accumulate(p.begin() + static_cast<std::ptrdiff_t>(r * 16),
                          p.begin() + static_cast<std::ptrdiff_t>(r * 16 + 16),
                          std::uint64_t{0}) == 400);
  }
  CHECK(p[0 * 16 + 1] == 100);  // (0,0) -> (0,1)
  CHECK(p[0 * 16 + 3] == 100);  // (0,0) -> (0,3), wrapping
  CHECK(p[0 * 16 + 12] == 100); // (0,0) -> (3,0), wrapping
  CHECK(p[0 * 16 + 5] == 0);    // no diagonals
  // Not periodic: the corner has 2 neighbours.
  const auto q = analysis::make_counts(counts("cart:4x4"), core::CollectiveKind::alltoall, 16, 100);
  CHECK(std::accumulate(q.begin(), q.begin() + 16, std::uint64_t{0}) == 200);
  CHECK(usage_error([] {
          (void)analysis::make_counts(counts("cart:4x4"), core::CollectiveKind::alltoall, 12, 1);
        }) == "counts 'cart:4x4': the grid has 16 ranks, the point 12");
  const auto r =
      analysis::make_counts(counts("sparse:5,seed=3"), core::CollectiveKind::alltoall, 12, 7);
  for (std::size_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(std::count(r.begin() + static_cast<std::ptrdiff_t>(i * 12),
                     r.begin() + static_cast<std::ptrdiff_t>(i * 12 + 12), 7U) == 5);
    CHECK(r[i * 12 + i] == 0); // no rank its own neighbour
  }
  core::CountsSpec g = counts("graph:halo_ring4.edges");
  io::load_counts_data(g, std::string(COLLSIM_TEST_DATA_DIR) + "/imbalance/x");
  const auto e = analysis::make_counts(g, core::CollectiveKind::alltoall, 4, 10);
  CHECK(e == std::vector<std::uint64_t>{0, 10, 0, 0, 0, 0, 10, 0, 0, 0, 0, 10, 20, 0, 0, 0});
  CHECK(core::counts_bytes(core::CollectiveKind::alltoall, 4, e) == 20);
}

TEST_CASE("counts files: weights scaled to the size, bad rows at their line and column",
          "[analysis][imbalance][io]") {
  core::CountsSpec f = counts("file:w.txt");
  f.rows = io::parse_count_rows("# weights\n1 1\n2 0\n", "w.txt", false);
  CHECK(analysis::make_counts(f, core::CollectiveKind::allgather, 4, 40) ==
        std::vector<std::uint64_t>{10, 10, 20, 0});
  try {
    (void)io::parse_count_rows("1 2 3\n4 x 6\n", "bad_counts.txt", false);
    FAIL("expected an error");
  } catch (const core::ScenarioError& e) {
    CHECK(std::string(e.what()) == "bad_counts.txt:2:3: error: expected a number, got 'x'");
  }
  try {
    (void)io::parse_count_rows("0 1\n1 2 3 4\n", "g.edges", true);
    FAIL("expected an error");
  } catch (const core::ScenarioError& e) {
    CHECK(std::string(e.what()) ==
          "g.edges:2:1: error: expected an edge 'SRC DST [WEIGHT]', got 4 fields");
  }
  CHECK(usage_error([&] {
          (void)analysis::make_counts(f, core::CollectiveKind::allgather, 3, 9);
        }) == "counts 'file:w.txt': the file has 4 weights, this collective takes 3 (3 ranks)");
}

TEST_CASE("arrival times: late ranks, spreads and files", "[analysis][imbalance]") {
  const auto late = analysis::make_arrivals(skew("late:1ms"), 8);
  CHECK(late == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 1e-3});
  CHECK(analysis::make_arrivals(skew("late:1ms@2"), 4) == std::vector<double>{0, 0, 1e-3, 0});
  const auto k = analysis::make_arrivals(skew("late:1ms,k=2"), 8);
  CHECK(k == std::vector<double>{0, 0, 0, 1e-3, 0, 0, 0, 1e-3});
  const auto u = analysis::make_arrivals(skew("uniform:100us,seed=3"), 50);
  CHECK(*std::min_element(u.begin(), u.end()) == 0.0);
  CHECK(*std::max_element(u.begin(), u.end()) <= 100e-6);
  CHECK(*std::max_element(u.begin(), u.end()) > 50e-6);
  CHECK(analysis::make_arrivals(skew("none"), 3).empty());
  core::SkewSpec f = skew("file:arrivals_4.txt");
  io::load_skew_data(f, std::string(COLLSIM_TEST_DATA_DIR) + "/imbalance/x");
  const auto t = analysis::make_arrivals(f, 4);
  REQUIRE(t.size() == 4);
  CHECK(t[1] == Approx(250e-6));
  CHECK(t[2] == Approx(1e-3));
  CHECK(t[3] == Approx(0.5e-3));
  CHECK(usage_error([&] { (void)analysis::make_arrivals(f, 5); }) ==
        "skew 'file:arrivals_4.txt': the file has 4 arrival times for 5 ranks");
  CHECK(usage_error([] { (void)analysis::make_arrivals(skew("late:1ms@9"), 4); }) ==
        "skew 'late:1ms@9': rank 9 does not exist with 4 ranks");
  try {
    (void)io::parse_arrival_times("0 1ms\n2 fortnights\n", "bad_arrivals.txt");
    FAIL("expected an error");
  } catch (const core::ScenarioError& e) {
    CHECK(std::string(e.what()) ==
          "bad_arrivals.txt:2:1: error: expected an arrival time such as '1ms', '250 us' or '0', "
          "got '2fortnights'");
  }
}

TEST_CASE("apply_arrivals delays each late rank's streams and keeps the schedule correct",
          "[analysis][imbalance]") {
  const auto registry = algorithms::make_default_registry();
  algorithms::Request req;
  req.collective = core::CollectiveKind::allreduce;
  req.ranks = 8;
  req.bytes = core::Bytes{4096};
  const core::Schedule s = registry.generate(registry.find(req.collective, "ring"), req);
  const auto late = analysis::make_arrivals(skew("late:1ms@3"), 8);
  const core::Schedule d = analysis::apply_arrivals(s, late);
  CHECK(d.op_count() == s.op_count() + 1);
  CHECK(core::check_semantics(d).ok());
  const core::Topology t = core::Topology::full_mesh(8, core::Bandwidth{10e9}, core::Seconds{2e-6},
                                                     core::EndpointParams{});
  const engines::LogGPEngine loggp;
  const double before = loggp.run(s, t, {}).time.value;
  const double after = loggp.run(d, t, {}).time.value;
  // A ring is one chain of dependent steps through every rank: rank 4's first receive waits for
  // rank 3's first send, and every later step for the one before it, so the whole call shifts
  // by the delay.
  CHECK(before == Approx(14 * (2e-6 + 512 / 10e9)).epsilon(1e-9));
  CHECK(after == Approx(1e-3 + before).epsilon(1e-9));
}

TEST_CASE("arrival skew: loggp and simgrid agree where nothing is shared",
          "[analysis][imbalance][simgrid]") {
  // Full mesh, and algorithms in which no rank ever has two messages coming in at once (LogGP's
  // receive port and SimGrid's per-pair links then agree): only the skew moves their times.
  auto scenario = io::parse_scenario(kTextbook, "t.yaml");
  auto& st = scenario.studies[0];
  st.collective = core::CollectiveKind::allreduce;
  st.skew = skew("uniform:20us,seed=2");
  st.algorithms = {"ring", "recursive_doubling", "arrival_tree"};
  st.ranks = {8};
  st.sizes = {core::Bytes{8000}, core::Bytes{800000}};
  const auto registry = algorithms::make_default_registry();
  const auto loggp = analysis::run_study(scenario, st, registry, {}, 1);
  st.engine = "simgrid";
  const auto simgrid = analysis::run_study(scenario, st, registry, {}, 1);
  REQUIRE(loggp.rows.size() == 6);
  REQUIRE(simgrid.rows.size() == loggp.rows.size());
  for (std::size_t i = 0; i < loggp.rows.size(); ++i) {
    CAPTURE(loggp.rows[i].algorithm, loggp.rows[i].bytes.value);
    CHECK(loggp.rows[i].last_arrival.value > 10e-6);
    CHECK(simgrid.rows[i].time.value == Approx(loggp.rows[i].time.value).epsilon(1e-6));
  }
}

TEST_CASE("alltoallv with uniform counts is the uniform schedule and meets its closed form, and "
          "linear alltoallv into one rank is a + (p-1) S b",
          "[analysis][imbalance]") {
  auto scenario = io::parse_scenario(kTextbook, "t.yaml");
  auto& st = scenario.studies[0];
  st.algorithms = {"pairwise"};
  st.ranks = {8};
  st.sizes = {core::Bytes{8192}};
  const auto registry = algorithms::make_default_registry();
  const double uniform = analysis::run_study(scenario, st, registry, {}, 1).rows.at(0).time.value;
  st.counts = counts("uniform");
  const double v = analysis::run_study(scenario, st, registry, {}, 1).rows.at(0).time.value;
  CHECK(v == Approx(uniform).epsilon(1e-12));
  CHECK(v == Approx(7 * 2e-6 + 7 * 1024 / 10e9).epsilon(1e-9)); // (p-1)a + (p-1)/p n b
  // Every rank sends all 8 KiB to rank 5: rank 5's port takes 7 blocks one after the other.
  st.algorithms = {"linear"};
  st.counts = counts("one:5");
  const double into_one = analysis::run_study(scenario, st, registry, {}, 1).rows.at(0).time.value;
  CHECK(into_one == Approx(2e-6 + 7 * 8192 / 10e9).epsilon(1e-9));
}

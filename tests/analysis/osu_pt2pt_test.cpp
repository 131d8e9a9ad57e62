// OSU's point-to-point benchmarks as schedules (analysis/osu_pt2pt.hpp): each iteration's
// messages, and its time per message on the textbook platform against the alpha-beta formula.

#include "collsim/analysis/osu_pt2pt.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {

// The textbook preset (scenarios/textbook.yaml): alpha = 2 us per message, 1/beta = 10 GB/s, a
// link per direction between every pair of ranks.
constexpr double kAlpha = 2e-6;
constexpr double kBeta = 1.0 / 10e9;

analysis::MeasuredPoint osu_point(analysis::Pt2pt kind, std::uint64_t bytes, double seconds) {
  analysis::MeasuredPoint p;
  p.library = analysis::Library::mpi;
  p.collective = core::CollectiveKind::bcast;
  p.pt2pt = kind;
  p.ranks = 2;
  p.bytes = core::Bytes{bytes};
  p.time = core::Seconds{seconds};
  p.file = "osu.txt";
  p.line = 7;
  return p;
}

std::size_t count(const core::Schedule& s, core::Rank r, core::OpKind kind) {
  std::size_t n = 0;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    n += s.kind(id) == kind ? 1 : 0;
  }
  return n;
}

} // namespace

TEST_CASE("an OSU iteration moves the benchmark's messages", "[analysis][osu]") {
  using analysis::Pt2pt;
  const core::Schedule lat = analysis::osu_iteration(Pt2pt::latency, core::Bytes{100}, 64);
  CHECK(lat.ranks() == 2);
  CHECK(lat.op_count() == 4); // a ping and its pong
  CHECK(count(lat, 0, core::OpKind::send) == 1);
  CHECK(count(lat, 1, core::OpKind::recv) == 1);
  const core::Schedule bw = analysis::osu_iteration(Pt2pt::bw, core::Bytes{100}, 64);
  CHECK(count(bw, 0, core::OpKind::send) == 64);
  CHECK(count(bw, 0, core::OpKind::recv) == 1); // the 4-byte reply
  CHECK(count(bw, 1, core::OpKind::recv) == 64);
  CHECK(count(bw, 1, core::OpKind::send) == 1);
  const core::Schedule bibw = analysis::osu_iteration(Pt2pt::bibw, core::Bytes{100}, 8);
  for (core::Rank r = 0; r < 2; ++r) {
    CHECK(count(bibw, r, core::OpKind::send) == 8);
    CHECK(count(bibw, r, core::OpKind::recv) == 8);
  }
  for (const auto* s : {&lat, &bw, &bibw}) {
    const core::VerifyReport report = core::validate(*s); // matched, lengths agree, in bounds
    CHECK(report.ok());
    CHECK(report.summary().empty());
  }
  CHECK_THROWS_AS(analysis::osu_iteration(Pt2pt::bw, core::Bytes{8}, 0), core::InternalError);
  // osu_latency's 0-byte row: messages without data, as a barrier's.
  const core::Schedule empty = analysis::osu_iteration(Pt2pt::latency, core::Bytes{0}, 64);
  CHECK(empty.op_count() == 4);
  CHECK(core::validate(empty).ok());
  CHECK(analysis::osu_per_message(Pt2pt::latency, core::Seconds{10}, 64).value == 5.0);
  CHECK(analysis::osu_per_message(Pt2pt::bw, core::Seconds{64}, 64).value == 1.0);
  CHECK(analysis::osu_per_message(Pt2pt::bibw, core::Seconds{64}, 64).value == 0.5);
}

TEST_CASE("OSU's point-to-point figures on the textbook platform follow alpha-beta",
          "[analysis][osu]") {
  using analysis::Pt2pt;
  const auto scenario = io::load_scenario("textbook");
  const core::Topology topo = topologies::build(scenario.topology, 2);
  const analysis::EngineChoice engine("loggp", scenario);
  for (const std::uint64_t m :
       {std::uint64_t{0}, std::uint64_t{8}, std::uint64_t{65536}, std::uint64_t{1} << 22}) {
    INFO(m << " B");
    const double n = static_cast<double>(m);
    // osu_latency: half a round trip is one message, alpha + m beta.
    CHECK(analysis::predict_osu(osu_point(Pt2pt::latency, m, 1.0), topo, engine).value ==
          Approx(kAlpha + n * kBeta).epsilon(1e-12));
    // osu_bw: 64 messages back to back behind one latency, then the 4-byte reply; per message.
    CHECK(analysis::predict_osu(osu_point(Pt2pt::bw, m, 1.0), topo, engine).value ==
          Approx((kAlpha + 64 * n * kBeta + kAlpha + 4 * kBeta) / 64).epsilon(1e-12));
    // osu_bibw: both windows at once on the two directions' links; per message of both.
    CHECK(analysis::predict_osu(osu_point(Pt2pt::bibw, m, 1.0), topo, engine).value ==
          Approx((kAlpha + 64 * n * kBeta) / 128).epsilon(1e-12));
  }
  // A window of 8 (-W 8).
  analysis::MeasuredPoint w8 = osu_point(Pt2pt::bw, 1000, 1.0);
  w8.window = 8;
  CHECK(analysis::predict_osu(w8, topo, engine).value ==
        Approx((2 * kAlpha + 8000 * kBeta + 4 * kBeta) / 8).epsilon(1e-12));
  CHECK_THROWS_AS(analysis::predict_osu(osu_point(Pt2pt::bw, 1000, 1.0), topo,
                                        analysis::EngineChoice("analytic", scenario)),
                  core::UsageError);
}

TEST_CASE("validate predicts OSU point-to-point rows beside collectives", "[analysis][osu]") {
  using analysis::Pt2pt;
  const auto scenario = io::load_scenario("textbook");
  const auto registry = algorithms::make_default_registry();
  const double one = kAlpha + 1000 * kBeta;
  std::vector<analysis::MeasuredPoint> points{osu_point(Pt2pt::latency, 1000, one * 1.25),
                                              osu_point(Pt2pt::bw, 1000, 1.0),
                                              osu_point(Pt2pt::bibw, 1000, 1.0)};
  analysis::MeasuredPoint three = osu_point(Pt2pt::latency, 1000, one);
  three.ranks = 3;
  points.push_back(three);
  const auto r = analysis::validate(scenario, points, registry, {});
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].algorithm == "osu_latency");
  CHECK(analysis::operation_name(r.rows[0].measured) == "osu_latency");
  CHECK(r.rows[0].error_pct == Approx(-20.0).epsilon(1e-9));
  CHECK(r.rows[1].algorithm == "osu_bw");
  CHECK(r.rows[1].chosen_by.find("window 64") != std::string::npos);
  CHECK(r.rows[2].algorithm == "osu_bibw");
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0] == "osu.txt:7: osu_latency runs on 2 ranks, not 3");
  // A named algorithm does not apply to them.
  analysis::ValidateOptions named;
  named.algorithm = "ring";
  CHECK(analysis::validate(scenario, points, registry, named).rows.size() == 3);
}

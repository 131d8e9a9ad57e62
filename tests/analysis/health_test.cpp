// The health check's arithmetic (analysis/health.hpp): which band a row gets, the verdicts at
// the band's edges, and the slowest time a healthy run may take.

#include "collsim/analysis/health.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace collsim;
using analysis::Band;
using analysis::Verdict;

namespace {

core::AccuracySpec accuracy_below_only() {
  core::AccuracySpec a;
  a.below_1MiB = {8, 2.0, 5.0, 7.5, 4.0};
  return a;
}

analysis::ValidationRow row(std::uint64_t bytes, double error_pct) {
  analysis::ValidationRow r;
  r.measured.bytes = core::Bytes{bytes};
  r.error_pct = error_pct;
  return r;
}

} // namespace

TEST_CASE("a row's band comes from its size range of the scenario's accuracy, or --tolerance") {
  const core::AccuracySpec a = accuracy_below_only();
  // 1 MiB - 1 B is below 1 MiB: the extremes of that range, slower and faster.
  CHECK(analysis::band_of(a, core::Bytes{(1U << 20) - 1}, -1.0) == Band{7.5, 4.0});
  // From 1 MiB the accuracy has no rows: no band.
  CHECK_FALSE(analysis::band_of(a, core::Bytes{1U << 20}, -1.0).has_value());
  // A fixed tolerance applies both ways at every size.
  CHECK(analysis::band_of(a, core::Bytes{1U << 30}, 12.0) == Band{12.0, 12.0});
  CHECK(analysis::band_of(a, core::Bytes{8}, 0.0) == Band{0.0, 0.0});
}

TEST_CASE("a row is slow below minus the slower band, fast above the faster band, ok between") {
  const std::optional<Band> band = Band{7.5, 4.0};
  CHECK(analysis::verdict(-7.5, band) == Verdict::ok); // on the edge: within
  CHECK(analysis::verdict(-7.51, band) == Verdict::slow);
  CHECK(analysis::verdict(4.0, band) == Verdict::ok);
  CHECK(analysis::verdict(4.01, band) == Verdict::fast);
  CHECK(analysis::verdict(0.0, band) == Verdict::ok);
  CHECK(analysis::verdict(-50.0, std::nullopt) == Verdict::unjudged);
  CHECK(analysis::to_string(Verdict::slow) == "SLOW");
  CHECK(analysis::to_string(Verdict::unjudged) == "-");
}

TEST_CASE("the slowest healthy time is the prediction over one minus the slower band") {
  // error = (predicted - measured) / measured = -b  <=>  measured = predicted / (1 - b).
  CHECK(analysis::slowest_healthy(100e-6, 20.0) == Approx(125e-6));
  CHECK(analysis::slowest_healthy(100e-6, 0.0) == Approx(100e-6));
  CHECK(std::isinf(analysis::slowest_healthy(100e-6, 100.0)));
}

TEST_CASE("judge counts the verdicts and is healthy only without slow rows and with a judged one") {
  const core::AccuracySpec a = accuracy_below_only();
  analysis::ValidationResult v;
  v.rows = {row(8, -3.0), row(64, -8.0), row(512, 6.0), row(4U << 20, -90.0)};
  v.skipped = {"log.txt:9: no measured time"};
  const analysis::HealthResult r = analysis::judge(v, a, -1.0);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].verdict == Verdict::ok);
  CHECK(r.rows[1].verdict == Verdict::slow);
  CHECK(r.rows[2].verdict == Verdict::fast);
  CHECK(r.rows[3].verdict == Verdict::unjudged); // 4 MiB: no band from 1 MiB
  CHECK(r.ok == 1);
  CHECK(r.slow == 1);
  CHECK(r.fast == 1);
  CHECK(r.unjudged == 1);
  CHECK_FALSE(r.healthy());
  CHECK(r.skipped == v.skipped);

  v.rows.erase(v.rows.begin() + 1);
  CHECK(analysis::judge(v, a, -1.0).healthy());
  // Nothing judged is not healthy: there is nothing to say.
  v.rows = {row(4U << 20, 0.0)};
  CHECK_FALSE(analysis::judge(v, a, -1.0).healthy());
  // A fixed tolerance judges every size.
  CHECK(analysis::judge(v, a, 10.0).healthy());
}

// The health check and the expectations behind it (health.hpp; docs/health-check.md).

#include "collsim/analysis/health.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace collsim::analysis {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
/// Fewer rows than this say nothing about the spread of the errors: such a range gets no band.
constexpr std::size_t kMinAccuracyRows = 3;

} // namespace

std::string accuracy_yaml(const ValidationSummary& summary, const std::string& measured_on) {
  // measured_on names files: double-quoted, so that a ': ' or ' #' in a name stays text.
  std::string quoted;
  for (const char c : measured_on) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
    }
    quoted += c;
  }
  std::string out = fmt::format("accuracy:   # |error| of this scenario's predictions (collsim "
                                "check's band)\n  measured_on: \"{}\"\n",
                                quoted);
  const auto range = [&](const char* key, const ErrorStats& e) {
    if (e.points < kMinAccuracyRows) {
      return;
    }
    const auto up = [](double v) { return std::ceil(v * 10.0) / 10.0; };
    out += fmt::format("  {}: {{rows: {}, median: {:.1f} %, p90: {:.1f} %, slower: {:.1f} %, "
                       "faster: {:.1f} %}}\n",
                       key, e.points, e.median_abs_err_pct, e.p90_abs_err_pct, up(e.max_slower_pct),
                       up(e.max_faster_pct));
  };
  range("below_1MiB", summary.below_1MiB);
  range("from_1MiB", summary.from_1MiB);
  return out;
}

std::string_view to_string(Verdict v) {
  switch (v) {
  case Verdict::ok: return "ok";
  case Verdict::slow: return "SLOW";
  case Verdict::fast: return "fast";
  case Verdict::unjudged: return "-";
  }
  return "-";
}

std::optional<Band> band_of(const core::AccuracySpec& accuracy, core::Bytes bytes,
                            double fixed_pct) {
  if (fixed_pct >= 0.0) {
    return Band{fixed_pct, fixed_pct};
  }
  const core::AccuracyRange& range = bytes.value < kMiB ? accuracy.below_1MiB : accuracy.from_1MiB;
  if (range.rows == 0) {
    return std::nullopt;
  }
  return Band{range.slower_pct, range.faster_pct};
}

Verdict verdict(double error_pct, const std::optional<Band>& band) {
  if (!band) {
    return Verdict::unjudged;
  }
  if (error_pct < -band->slower_pct) {
    return Verdict::slow;
  }
  if (error_pct > band->faster_pct) {
    return Verdict::fast;
  }
  return Verdict::ok;
}

double slowest_healthy(double predicted, double band_pct) {
  if (band_pct >= 100.0) {
    return std::numeric_limits<double>::infinity();
  }
  return predicted / (1.0 - band_pct / 100.0);
}

HealthResult judge(const ValidationResult& validation, const core::AccuracySpec& accuracy,
                   double fixed_pct) {
  HealthResult out;
  out.skipped = validation.skipped;
  for (const ValidationRow& row : validation.rows) {
    HealthRow h{row, band_of(accuracy, row.measured.bytes, fixed_pct), Verdict::unjudged};
    h.verdict = verdict(row.error_pct, h.band);
    switch (h.verdict) {
    case Verdict::ok: ++out.ok; break;
    case Verdict::slow: ++out.slow; break;
    case Verdict::fast: ++out.fast; break;
    case Verdict::unjudged: ++out.unjudged; break;
    }
    out.rows.push_back(std::move(h));
  }
  return out;
}

ExpectResult expect(const core::Scenario& scenario, const ExpectRequest& request,
                    const algorithms::Registry& registry, const ValidateOptions& options) {
  // A point that was not measured is validated as one that took 1 s: the prediction, the
  // algorithm and the library's choice are validate's; the error is dropped.
  std::vector<MeasuredPoint> points;
  for (std::size_t i = 0; i < request.sizes.size(); ++i) {
    MeasuredPoint p;
    p.library = request.library;
    p.collective = request.collective;
    p.ranks = request.ranks;
    p.bytes = request.sizes[i];
    p.time = core::Seconds{1.0};
    p.file = "expect";
    p.line = i + 1;
    points.push_back(std::move(p));
  }
  const ValidationResult v = validate(scenario, points, registry, options);
  ExpectResult out;
  for (const std::string& why : v.skipped) {
    // "expect:N: why" -> "SIZE B: why"
    const std::size_t colon = why.find(':', 7);
    const std::size_t line = std::stoul(why.substr(7, colon - 7));
    out.skipped.push_back(
        fmt::format("{} B: {}", request.sizes[line - 1].value, why.substr(colon + 2)));
  }
  for (ValidationRow row : v.rows) {
    row.measured.time = core::Seconds{0.0};
    row.error_pct = 0.0;
    row.library_error_pct = 0.0;
    const auto band = band_of(scenario.accuracy, row.measured.bytes, request.fixed_pct);
    out.rows.push_back({std::move(row), band});
  }
  return out;
}

} // namespace collsim::analysis

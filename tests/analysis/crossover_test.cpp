#include "collsim/analysis/simulate.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::ResultRow row(std::string algo, std::uint64_t bytes, double time, std::uint32_t ranks = 8) {
  return core::make_result_row(core::CollectiveKind::allreduce, std::move(algo), "loggp", ranks,
                               core::Bytes{bytes}, core::Seconds{time});
}
} // namespace

TEST_CASE("a winner that changes at exactly one size yields exactly two ranges",
          "[analysis][crossover]") {
  std::vector<core::ResultRow> rows;
  for (std::uint64_t n = 1; n <= 1024; n *= 2) {
    rows.push_back(row("latency_bound", n, 1.0 + static_cast<double>(n) * 0.01));
    rows.push_back(row("bandwidth_bound", n, 5.0 + static_cast<double>(n) * 0.001));
  }
  const auto ranges = analysis::crossovers(rows);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].winner == "latency_bound");
  CHECK(ranges[0].from == core::Bytes{1});
  CHECK(ranges[0].to == core::Bytes{256});
  CHECK(ranges[0].runner_up == "bandwidth_bound");
  CHECK(ranges[1].winner == "bandwidth_bound");
  CHECK(ranges[1].from == core::Bytes{512});
  CHECK(ranges[1].to == core::Bytes{1024});
  // At 1024 B: latency_bound 11.24, bandwidth_bound 6.024.
  CHECK(ranges[1].max_speedup == Approx(11.24 / 6.024));
}

TEST_CASE("crossovers are computed separately per rank count", "[analysis][crossover]") {
  std::vector<core::ResultRow> rows{row("a", 8, 1.0, 4), row("b", 8, 2.0, 4), row("a", 8, 3.0, 16),
                                    row("b", 8, 2.0, 16)};
  const auto ranges = analysis::crossovers(rows);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].ranks == 4);
  CHECK(ranges[0].winner == "a");
  CHECK(ranges[0].min_speedup == Approx(2.0));
  CHECK(ranges[1].ranks == 16);
  CHECK(ranges[1].winner == "b");
  CHECK(ranges[1].min_speedup == Approx(1.5));
}

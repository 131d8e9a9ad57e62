// On `uniform` with o = g = 0 the loggp engine must reproduce the alpha-beta-gamma closed forms
// (Thakur, Rabenseifner & Gropp 2005; algorithms.md section 0.2) to 1e-9 relative, for power-of-two
// rank counts and sizes divisible by the rank count:
//   ring:                2(p-1) a + 2 (p-1)/p n b + (p-1)/p n g
//   recursive_doubling:  lg p (a + n b + n g)
//   rabenseifner:        2 lg p a + 2 (p-1)/p n b + (p-1)/p n g
// and the analytic engine must give the same numbers from the registry's declared costs.

#include "collsim/algorithms/registry.hpp"
#include "collsim/engines/analytic.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <functional>

using namespace collsim;

namespace {

constexpr double kAlpha = 2e-6;
constexpr double kBeta = 1.0 / 10e9;
constexpr double kGamma = 1.0 / 20e9;

core::Topology textbook(std::uint32_t p) {
  core::TopologySpec spec;
  spec.kind = "uniform";
  spec.uniform.latency = core::Seconds{kAlpha};
  spec.uniform.bandwidth = core::Bandwidth{1.0 / kBeta};
  spec.uniform.reduce_bandwidth = core::Bandwidth{1.0 / kGamma};
  return topologies::build(spec, p);
}

void check_against(const std::string& name, const std::function<double(double, double)>& formula) {
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(core::CollectiveKind::allreduce, name);
  for (std::uint32_t p : {2u, 4u, 8u, 16u, 64u}) {
    for (std::uint64_t n :
         {std::uint64_t{p} * 8, std::uint64_t{p} * 1024, std::uint64_t{1} << 24}) {
      algorithms::Request req;
      req.ranks = p;
      req.bytes = core::Bytes{n};
      const auto topo = textbook(p);
      const double expected = formula(p, static_cast<double>(n));
      const double simulated =
          engines::LogGPEngine{}.run(registry.generate(algo, req), topo, {}).time.value;
      INFO(name << " p=" << p << " n=" << n);
      CHECK(simulated == Approx(expected).epsilon(1e-9));
      const auto cost = registry.cost(algo, req);
      REQUIRE(cost.has_value());
      const auto abg = engines::alpha_beta_gamma(topo, p);
      CHECK(engines::analytic_time(abg, cost->alpha_terms, cost->beta_bytes, cost->gamma_bytes)
                .value == Approx(expected).epsilon(1e-9));
    }
  }
}

} // namespace

TEST_CASE("loggp equals the closed form of ring allreduce on uniform", "[engines][closed-form]") {
  check_against("ring", [](double p, double n) {
    return 2 * (p - 1) * kAlpha + 2 * (p - 1) / p * n * kBeta + (p - 1) / p * n * kGamma;
  });
}

TEST_CASE("loggp equals the closed form of recursive doubling allreduce on uniform",
          "[engines][closed-form]") {
  check_against("recursive_doubling", [](double p, double n) {
    const double lg = std::countr_zero(static_cast<unsigned>(p));
    return lg * (kAlpha + n * kBeta + n * kGamma);
  });
}

TEST_CASE("loggp equals the closed form of Rabenseifner allreduce on uniform",
          "[engines][closed-form]") {
  check_against("rabenseifner", [](double p, double n) {
    const double lg = std::countr_zero(static_cast<unsigned>(p));
    return 2 * lg * kAlpha + 2 * (p - 1) / p * n * kBeta + (p - 1) / p * n * kGamma;
  });
}

TEST_CASE("every declared closed form equals the loggp engine on uniform",
          "[engines][closed-form]") {
  // The registry-wide version of the tests above: an algorithm that declares a cost for a request
  // promises that the event simulation (o = g = 0, copies free) gives exactly that time.
  // Algorithms with a `radix` parameter are checked at radix 3 and 4 as well as the default.
  const auto registry = algorithms::make_default_registry();
  std::size_t checked = 0;
  for (const auto* algo : registry.list()) {
    std::vector<std::int64_t> radices{0}; // 0: the default
    for (const auto& param : algo->params) {
      if (param.name == "radix") {
        radices = {0, 3, 4};
      }
    }
    for (const std::int64_t radix : radices) {
      for (std::uint32_t p : {2u, 3u, 4u, 5u, 8u, 9u, 16u}) {
        for (std::uint64_t n :
             {std::uint64_t{0}, std::uint64_t{p} * 1024, std::uint64_t{p} * 4096 + p}) {
          algorithms::Request req;
          req.collective = algo->collective;
          req.ranks = p;
          req.bytes = core::Bytes{n};
          req.root = core::has_root(algo->collective) ? p / 2 : 0;
          if (radix != 0) {
            req.params["radix"] = radix;
          }
          if (!registry.refusal(*algo, req).empty()) {
            continue;
          }
          const auto cost = registry.cost(*algo, req);
          if (!cost) {
            continue;
          }
          const auto topo = textbook(p);
          const double simulated =
              engines::LogGPEngine{}.run(registry.generate(*algo, req), topo, {}).time.value;
          const auto abg = engines::alpha_beta_gamma(topo, p);
          const double closed =
              engines::analytic_time(abg, cost->alpha_terms, cost->beta_bytes, cost->gamma_bytes)
                  .value;
          INFO(core::to_string(algo->collective)
               << " " << algo->name << " p=" << p << " n=" << n << " radix=" << radix);
          CHECK(simulated == Approx(closed).epsilon(1e-9).margin(1e-15));
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 100);
}

namespace {
double simulate_textbook(core::CollectiveKind c, const std::string& algo, std::uint32_t p,
                         std::uint64_t n) {
  const auto registry = algorithms::make_default_registry();
  algorithms::Request req;
  req.collective = c;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  const auto s = registry.generate(registry.find(c, algo), req);
  return engines::LogGPEngine{}.run(s, textbook(p), {}).time.value;
}
} // namespace

TEST_CASE("teaching facts on the textbook platform at 64 ranks", "[engines][teaching]") {
  using core::CollectiveKind;
  constexpr std::uint32_t p = 64;
  constexpr std::uint64_t small = 8;
  constexpr std::uint64_t large = 64ULL << 20;
  // Latency-bound: lg p = 6 steps beat 2(p-1) = 126.
  CHECK(simulate_textbook(CollectiveKind::allreduce, "recursive_doubling", p, small) <
        simulate_textbook(CollectiveKind::allreduce, "ring", p, small));
  // Bandwidth-bound: 2(p-1)/p n beta beats lg p n beta.
  const double rd = simulate_textbook(CollectiveKind::allreduce, "recursive_doubling", p, large);
  CHECK(simulate_textbook(CollectiveKind::allreduce, "ring", p, large) < rd);
  CHECK(simulate_textbook(CollectiveKind::allreduce, "rabenseifner", p, large) < rd);
  // Binomial bcast: lg p (a + n b) wins small, loses to scatter + allgather's 2(p-1)/p n b large.
  CHECK(simulate_textbook(CollectiveKind::bcast, "binomial", p, small) <
        simulate_textbook(CollectiveKind::bcast, "scatter_allgather", p, small));
  CHECK(simulate_textbook(CollectiveKind::bcast, "binomial", p, large) >
        simulate_textbook(CollectiveKind::bcast, "scatter_allgather", p, large));
}

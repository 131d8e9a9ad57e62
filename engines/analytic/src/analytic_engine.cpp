#include "collsim/engines/analytic.hpp"

#include <algorithm>
#include <limits>

namespace collsim::engines {

AlphaBetaGamma alpha_beta_gamma(const core::Topology& t, std::uint32_t ranks) {
  AlphaBetaGamma p;
  const core::EndpointParams& ep = t.endpoint(0);
  p.gamma =
      ep.reduce_bandwidth.bytes_per_second > 0 ? 1.0 / ep.reduce_bandwidth.bytes_per_second : 0.0;
  if (ranks < 2) {
    return p;
  }
  double latency = 0.0;
  double bottleneck = std::numeric_limits<double>::infinity();
  const core::Rank last = t.is_full_mesh() ? 2 : ranks;
  for (core::Rank r = 1; r < last; ++r) {
    const core::RouteCost c = t.route_cost(0, r);
    latency = std::max(latency, c.latency.value);
    bottleneck = std::min(bottleneck, c.bottleneck.bytes_per_second);
  }
  p.alpha = core::Seconds{latency + 2.0 * ep.overhead.value};
  p.beta = 1.0 / bottleneck;
  return p;
}

core::Seconds analytic_time(const AlphaBetaGamma& p, double alpha_terms, double beta_bytes,
                            double gamma_bytes) {
  return core::Seconds{alpha_terms * p.alpha.value + beta_bytes * p.beta + gamma_bytes * p.gamma};
}

} // namespace collsim::engines

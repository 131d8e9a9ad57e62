#pragma once
// The analytic engine: closed-form alpha-beta-gamma costs (Hockney; Thakur, Rabenseifner & Gropp,
// IJHPCA 2005). An algorithm declares its cost as counts of alpha, beta-bytes and gamma-bytes on
// the critical path; this engine supplies alpha, beta and gamma from the topology.

#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

namespace collsim::engines {

struct AlphaBetaGamma {
  core::Seconds alpha; ///< per message: L + 2o (LogGP's start-up)
  double beta = 0.0;   ///< seconds per byte transferred (1 / bottleneck bandwidth)
  double gamma = 0.0;  ///< seconds per byte reduced (0 when reductions are free)
  bool operator==(const AlphaBetaGamma&) const = default;
};

/// alpha, beta, gamma of a topology's first `ranks` ranks. On a uniform (full-mesh) topology these
/// are exact. On other topologies the textbook model does not hold; the slowest route from rank 0
/// (largest latency, smallest bottleneck bandwidth) is used, which bounds most algorithms from
/// above.
AlphaBetaGamma alpha_beta_gamma(const core::Topology& t, std::uint32_t ranks);

/// time = alpha_terms * alpha + beta_bytes * beta + gamma_bytes * gamma.
core::Seconds analytic_time(const AlphaBetaGamma& p, double alpha_terms, double beta_bytes,
                            double gamma_bytes);

} // namespace collsim::engines

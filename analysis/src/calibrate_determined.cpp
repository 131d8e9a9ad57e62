// Which parameters a calibration's rows determine (calibrate_determined.hpp).

#include "calibrate_determined.hpp"

#include <Eigen/SVD>
#include <cmath>

namespace collsim::analysis::detail {

std::vector<bool> determined_parameters(const std::vector<std::vector<double>>& jac,
                                        double residual) {
  constexpr double kMaxRelSigma = 1.0;
  constexpr double kRankTolerance = 1e-6; // as calibrate.cpp's rank test of the covariance
  std::vector<bool> keep(jac.size(), false);
  for (std::size_t j = 0; j < jac.size(); ++j) {
    double norm2 = 0.0;
    for (double d : jac[j]) {
      norm2 += d * d;
    }
    keep[j] = norm2 > 1e-12;
  }
  while (true) {
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < keep.size(); ++j) {
      if (keep[j]) {
        cols.push_back(j);
      }
    }
    if (cols.empty()) {
      return keep;
    }
    const auto rows = static_cast<Eigen::Index>(jac[cols.front()].size());
    Eigen::MatrixXd m(rows, static_cast<Eigen::Index>(cols.size()));
    for (std::size_t c = 0; c < cols.size(); ++c) {
      for (Eigen::Index r = 0; r < rows; ++r) {
        m(r, static_cast<Eigen::Index>(c)) = jac[cols[c]][static_cast<std::size_t>(r)];
      }
    }
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(m, Eigen::ComputeThinV);
    const Eigen::VectorXd& sv = svd.singularValues();
    const Eigen::MatrixXd& v = svd.matrixV();
    const Eigen::Index last = sv.size() - 1;
    std::size_t drop = cols.size();
    if (static_cast<std::size_t>(sv.size()) < cols.size() || !(sv(0) > 0.0) ||
        sv(last) / sv(0) <= kRankTolerance) {
      Eigen::Index worst = 0;
      v.col(static_cast<Eigen::Index>(v.cols() - 1)).cwiseAbs().maxCoeff(&worst);
      drop = static_cast<std::size_t>(worst);
    } else {
      double worst_sigma = kMaxRelSigma;
      for (std::size_t c = 0; c < cols.size(); ++c) {
        double var = 0.0;
        for (Eigen::Index s = 0; s <= last; ++s) {
          const double t = v(static_cast<Eigen::Index>(c), s) / sv(s);
          var += t * t;
        }
        const double sigma = residual * std::sqrt(var);
        if (sigma > worst_sigma) {
          worst_sigma = sigma;
          drop = c;
        }
      }
    }
    if (drop == cols.size()) {
      return keep;
    }
    keep[cols[drop]] = false;
  }
}

} // namespace collsim::analysis::detail

// Which parameters a calibration's rows determine (calibrate.cpp's fit), apart so that the fit
// reads in one sitting.
#pragma once

#include <vector>

namespace collsim::analysis::detail {

/// Which parameters the measured rows determine, judged from the Jacobian at the start (jac[j][i]
/// = d r_i / d log x_j): a parameter stays free only if the rows fix it to within a factor of e
/// (a relative standard deviation of its logarithm at most 1) when each row is known to
/// `residual` (log units). The others keep the scenario's values. Why: least squares moves every
/// free parameter, and one the rows barely see moves far to absorb whatever the model gets wrong
/// there. Fitted on the 4 x 8 DGX A100 log, which has no row below 1 MiB, NCCL's call overhead
/// went from 0 to 123 us and the Simple latency factor to 10.5 to take up the mid-size rows'
/// error, and the 8 B rows of a 1 x 8 A100 log were then predicted 280 % too slow
/// (docs/validation.md, leave-one-out). Greedy subset selection (Golub, Klema & Stewart 1976 use
/// pivoted QR for the same question): while the kept columns are rank-deficient, drop the
/// parameter with the largest share of the direction the rows cannot see (the last right
/// singular vector); then, while one's standard deviation (residual x sqrt((J^T J)^-1)_jj) is
/// above 1, drop the worst.
std::vector<bool> determined_parameters(const std::vector<std::vector<double>>& jac,
                                        double residual);

} // namespace collsim::analysis::detail

#pragma once
// Internal: the scatter algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_scatter_binomial();  ///< SC2: binomial tree over relative ranks
AlgorithmInfo describe_scatter_linear();    ///< SC1: blocking sends from the root
AlgorithmInfo describe_scatter_linear_nb(); ///< SC3: non-blocking sends from the root
// block I: hierarchical
AlgorithmInfo describe_scatter_two_level(); ///< SC4: leader scatter, then node scatter
AlgorithmInfo describe_scatter_nccl_p2p();  ///< NCCL: send/recv to or from the root
// end of block I

} // namespace collsim::algorithms

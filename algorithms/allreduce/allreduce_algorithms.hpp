#pragma once
// Internal: the allreduce algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_reduce_bcast();       ///< AR2: binomial reduce to rank 0, binomial bcast
AlgorithmInfo describe_recursive_doubling(); ///< AR3: full-vector butterfly
AlgorithmInfo describe_ring();               ///< AR4: ring reduce-scatter + ring allgather
AlgorithmInfo describe_rabenseifner();       ///< AR6: recursive halving + recursive doubling

} // namespace collsim::algorithms

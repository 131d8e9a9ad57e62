#pragma once
// Internal: the gather algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_gather_binomial();    ///< GA2: binomial tree over relative ranks
AlgorithmInfo describe_gather_linear();      ///< GA1: every rank sends to the root
AlgorithmInfo describe_gather_linear_sync(); ///< GA3: go-ahead, then two segments
// block I: hierarchical
AlgorithmInfo describe_gather_two_level(); ///< GA5: node gather, then leader gather
AlgorithmInfo describe_gather_nccl_p2p();  ///< NCCL: send/recv to or from the root
// end of block I
// block L: UCC
AlgorithmInfo describe_gather_knomial(); ///< UCC tl/ucp: k-nomial tree, radix 4
// end of block L

} // namespace collsim::algorithms

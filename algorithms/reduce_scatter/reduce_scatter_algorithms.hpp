#pragma once
// Internal: the reduce_scatter algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_reduce_scatter_ring();               ///< RS3: neighbour ring, p-1 steps
AlgorithmInfo describe_reduce_scatter_recursive_halving();  ///< RS2: distance halving, fold
AlgorithmInfo describe_reduce_scatter_pairwise();           ///< RS5: MPICH pairwise exchange
AlgorithmInfo describe_reduce_scatter_butterfly();          ///< RS4: Open MPI butterfly (Traff)
AlgorithmInfo describe_reduce_scatter_non_overlapping();    ///< RS1: reduce to 0 + scatter
AlgorithmInfo describe_reduce_scatter_recursive_doubling(); ///< RS6: MPICH, any op, any p
AlgorithmInfo describe_reduce_scatter_noncommutative();     ///< RS7: MPICH, Traff, power of two
AlgorithmInfo describe_reduce_scatter_swing();              ///< AR22: Swing butterfly, power of two
AlgorithmInfo describe_reduce_scatter_nvls();               ///< RS9: NCCL NVLS (block H)
// block G: NCCL
AlgorithmInfo describe_reduce_scatter_nccl_ring(); ///< RS3: NCCL ring, channels x chunks
AlgorithmInfo describe_reduce_scatter_pat();       ///< RS8: NCCL PAT, one rank per node
// end of block G
// block L: UCC
AlgorithmInfo describe_reduce_scatter_ring_bidirectional(); ///< UCC tl/ucp: two opposite rings
// end of block L

} // namespace collsim::algorithms

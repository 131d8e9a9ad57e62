#pragma once
// Internal: the alltoall algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_alltoall_pairwise();    ///< AA2: p-1 sendrecv steps (r+i, r-i)
AlgorithmInfo describe_alltoall_linear();      ///< AA1: post every send and receive at once
AlgorithmInfo describe_alltoall_bruck();       ///< AA3: ceil(lg p) store-and-forward rounds
AlgorithmInfo describe_alltoall_linear_sync(); ///< AA4: at most K requests in flight
AlgorithmInfo describe_alltoall_two_proc();    ///< AA5: one sendrecv, exactly 2 ranks
AlgorithmInfo describe_alltoall_scattered();   ///< AA6: staggered batches (MPICH)
AlgorithmInfo describe_alltoall_pairwise_sendrecv_replace(); ///< AA7: MPICH in-place pair swaps
AlgorithmInfo describe_alltoall_recursive_doubling();        ///< AA9: hypercube store-and-forward
AlgorithmInfo describe_alltoall_2dmesh();                    ///< AA10: SMPI grid, message combining
AlgorithmInfo describe_alltoall_node_aware(); ///< node-aware three-step exchange (alltoallv)
AlgorithmInfo describe_alltoall_nccl_p2p();   ///< NCCL's grouped send/recv over channels

} // namespace collsim::algorithms

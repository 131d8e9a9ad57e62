#pragma once
// Internal: the reduce algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_reduce_linear();          ///< RD1: flat tree (Open MPI 1)
AlgorithmInfo describe_reduce_chain();           ///< RD2: segmented multi-chain (Open MPI 2)
AlgorithmInfo describe_reduce_pipeline();        ///< RD3: pipelined chain (Open MPI 3)
AlgorithmInfo describe_reduce_binary();          ///< RD4: pipelined binary tree (Open MPI 4)
AlgorithmInfo describe_reduce_binomial();        ///< RD5: binomial tree (MPICH, Open MPI 5)
AlgorithmInfo describe_reduce_in_order_binary(); ///< RD6: in-order binary tree (Open MPI 6)
AlgorithmInfo describe_reduce_rabenseifner();    ///< RD7: reduce-scatter + gather (Open MPI 7)
AlgorithmInfo describe_reduce_knomial();         ///< RD8: k-nomial tree (Open MPI 8)
AlgorithmInfo describe_reduce_release_gather();  ///< MPICH ch4 shared memory: k-ary cells
// block I: hierarchical
AlgorithmInfo describe_reduce_two_level();    ///< RD9: node reduce, then leader reduce
AlgorithmInfo describe_reduce_arrival_tree(); ///< imbalance-aware: tree from arrival times
// end of block I
// block G: NCCL
AlgorithmInfo describe_reduce_nccl_ring(); ///< NCCL ring: pipelined chain to the root
// end of block G
// block J: MPICH circ_graph and smp
AlgorithmInfo describe_reduce_circ_graph(); ///< RD10: the circulant-graph bcast reversed
// end of block J

} // namespace collsim::algorithms

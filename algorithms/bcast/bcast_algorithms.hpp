#pragma once
// Internal: the bcast algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_bcast_linear();            ///< BC1: flat tree (Open MPI 1)
AlgorithmInfo describe_bcast_chain();             ///< BC3: segmented multi-chain (Open MPI 2)
AlgorithmInfo describe_bcast_pipeline();          ///< BC4: pipelined chain (Open MPI 3)
AlgorithmInfo describe_bcast_split_binary_tree(); ///< BC5: split binary tree (Open MPI 4)
AlgorithmInfo describe_bcast_binary_tree();       ///< BC6: pipelined binary tree (Open MPI 5)
AlgorithmInfo describe_bcast_binomial();          ///< BC7: binomial tree (MPICH, Open MPI 6)
AlgorithmInfo describe_bcast_knomial();           ///< BC8: k-nomial tree (Open MPI 7)
AlgorithmInfo describe_bcast_scatter_allgather(); ///< BC9: scatter + recursive doubling (OMPI 8)
AlgorithmInfo describe_bcast_scatter_ring_allgather(); ///< BC10: scatter + ring (OMPI 9)
AlgorithmInfo describe_bcast_pipelined_tree();         ///< BC11: MPICH chunked k-ary tree
AlgorithmInfo describe_bcast_bine(); ///< AR23: first-contact tree of the Swing butterfly
// block I: hierarchical
AlgorithmInfo describe_bcast_two_level(); ///< BC14: leader bcast, then node bcast
// end of block I
// block G: NCCL
AlgorithmInfo describe_bcast_nccl_ring(); ///< NCCL ring: pipelined chain from the root
// end of block G
// block J: MPICH circ_graph and smp
AlgorithmInfo describe_bcast_circ_graph(); ///< BC12: Traff's circulant graph, N-1+lg p rounds
// end of block J
// block K: MPICH tree
AlgorithmInfo describe_bcast_tree(); ///< BC11 without chunks: MPICH's k-ary tree
namespace detail {
/// MPICH's k-ary tree broadcast (bcast_pipelined_tree.cpp): in chunks of the `chunk_size`
/// parameter when `pipelined`, else the whole vector in one message (MPIR_Bcast_intra_tree).
core::Schedule kary_tree_bcast(const Request& req, const char* name, bool pipelined);
std::string kary_tree_bcast_refusal(const Request& req, bool pipelined);
} // namespace detail
// end of block K
// block L: UCC's scatter-allgather k-nomial
AlgorithmInfo describe_bcast_sag_knomial(); ///< UCC tl/ucp's bcast from 32 KiB
// end of block L

} // namespace collsim::algorithms

#pragma once
// Internal: the allreduce algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_reduce_bcast();       ///< AR2: binomial reduce to rank 0, binomial bcast
AlgorithmInfo describe_recursive_doubling(); ///< AR3: full-vector butterfly
AlgorithmInfo describe_ring();               ///< AR4: ring reduce-scatter + ring allgather
AlgorithmInfo describe_rabenseifner();       ///< AR6: recursive halving + recursive doubling
// block D: allreduce (MPI)
AlgorithmInfo describe_allreduce_basic_linear();     ///< AR1: linear reduce to 0, linear bcast
AlgorithmInfo describe_allreduce_segmented_ring();   ///< AR5: ring with segmented reduce phases
AlgorithmInfo describe_allreduce_allgather_reduce(); ///< AR8: allgather vectors, reduce locally
AlgorithmInfo describe_allreduce_rab2();             ///< AR7: alltoall + reduce + allgather
AlgorithmInfo describe_allreduce_recursive_multiplying();      ///< AR9: radix-k butterfly
AlgorithmInfo describe_allreduce_recexch();                    ///< AR10: MPICH recursive exchange
AlgorithmInfo describe_allreduce_k_reduce_scatter_allgather(); ///< AR11: radix-k Rabenseifner
AlgorithmInfo describe_allreduce_tree();      ///< AR12: pipelined k-nomial reduce + bcast
AlgorithmInfo describe_allreduce_han();       ///< Open MPI 5.0 coll/han: 4-stage segment pipeline
AlgorithmInfo describe_allreduce_hcoll();     ///< HCOLL: fragmented shm fan-in, RD, fan-out
AlgorithmInfo describe_allreduce_mpich_ch4(); ///< MPICH 4 ch4: shm reduce, net allreduce, shm bcast
AlgorithmInfo describe_allreduce_sra_knomial();       ///< UCC's k-nomial reduce-scatter + allgather
AlgorithmInfo describe_allreduce_recursive_knomial(); ///< UCC's k-nomial whole-vector exchange
AlgorithmInfo describe_allreduce_arrival_tree();      ///< imbalance-aware: arrival tree + bcast

namespace detail {
/// The full-vector butterfly of recursive doubling (AR3) with the peer of (new rank, step, p') as a
/// parameter, including MPICH's non-power-of-two fold: recursive doubling passes new ^ 2^step,
/// Swing (AR22) its peer. Defined in allreduce_recursive_doubling.cpp.
using ButterflyPeer = std::uint32_t (*)(std::uint32_t newrank, std::uint32_t step,
                                        std::uint32_t pof2);
core::Schedule full_vector_butterfly(const Request& req, const char* name, ButterflyPeer peer);
/// Its exact operation and dependency counts (the same for every peer function).
std::string full_vector_butterfly_refusal(const Request& req);
/// xor_blocks on 2^m ranks with the XOR peer (recursive doubling's), else none.
Symmetry full_vector_butterfly_symmetry(const Request& req);

/// One rank's partners in MPICH's recursive exchange (MPII_Recexchalgo_get_neighbors), shared by
/// recexch and k_reduce_scatter_allgather; defined in allreduce_recexch.cpp as a view of
/// detail::RecexchLayout (recexch_support.hpp).
struct RecexchNeighbours {
  std::uint32_t radix = 2;                    ///< k, lowered to max(p, 2) when p < k
  std::uint32_t power = 1;                    ///< p_k: the largest power of k <= p
  bool participant = true;                    ///< takes part in step 2
  core::Rank step1_sendto = 0;                ///< non-participants: the rank that folds them in
  std::vector<core::Rank> step1_recvfrom;     ///< participants: the ranks they fold in, in order
  std::uint32_t step2_rank = 0;               ///< participants: rank among the p_k participants
  std::vector<std::vector<core::Rank>> step2; ///< per phase: the k-1 neighbours
  std::vector<std::vector<std::uint32_t>> step2_rank_of; ///< per phase: their step-2 ranks
};
/// The partners of rank `r` of `p` for radix `k` (already lowered when p < k).
RecexchNeighbours recexch_neighbours(std::uint32_t p, std::uint32_t k, core::Rank r);
/// MPICH's radix for recexch-based algorithms: k, lowered to max(p, 2) when p < k.
std::uint32_t recexch_radix(std::uint32_t p, std::uint32_t k);
} // namespace detail
// end of block D
// block E: research
AlgorithmInfo describe_allreduce_swing_latency();   ///< AR22: Swing, full vector, lg p steps
AlgorithmInfo describe_allreduce_swing_bandwidth(); ///< AR22: Swing reduce-scatter + allgather
AlgorithmInfo describe_allreduce_ring_reordered();  ///< AR4 on ring order i * stride mod p
// end of block E
// block H: in-network
AlgorithmInfo describe_allreduce_collnet_direct(); ///< AR17: NCCL CollNet Direct (SHARP)
AlgorithmInfo describe_allreduce_collnet_chain();  ///< AR18: NCCL CollNet Chain (SHARP)
AlgorithmInfo describe_allreduce_nvls();           ///< AR19: NCCL NVLS (NVLink SHARP)
AlgorithmInfo describe_allreduce_sharp();          ///< AR17: MVAPICH2 SHARP two-level
// end of block H
// block I: hierarchical
AlgorithmInfo describe_allreduce_two_level(); ///< AR14: node reduce, leader allreduce, node bcast
AlgorithmInfo describe_allreduce_hierarchical_ring(); ///< AR15: node RS, shard allreduce, node AG
AlgorithmInfo describe_allreduce_torus();             ///< AR16: RS per dimension, AG in reverse
// end of block I
// block G: NCCL
AlgorithmInfo describe_allreduce_nccl_ring(); ///< AR4: NCCL ring, channels x chunked loops
AlgorithmInfo describe_allreduce_nccl_tree(); ///< AR13: NCCL chain + double binary tree
AlgorithmInfo describe_allreduce_nvls_tree(); ///< AR20: NCCL NVLink SHARP + double binary tree
// end of block G

} // namespace collsim::algorithms

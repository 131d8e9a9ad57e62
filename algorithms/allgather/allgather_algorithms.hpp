#pragma once
// Internal: the allgather algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_allgather_ring();               ///< AG4: neighbour ring, p-1 steps
AlgorithmInfo describe_allgather_recursive_doubling(); ///< AG3: butterfly, power of two
AlgorithmInfo describe_allgather_bruck();              ///< AG2: Bruck, `radix` k
AlgorithmInfo describe_allgather_neighbor_exchange();  ///< AG5: Open MPI neighbor, even p
AlgorithmInfo describe_allgather_two_proc();           ///< AG6: exactly 2 ranks
AlgorithmInfo describe_allgather_direct();             ///< AG8: all sends at once
AlgorithmInfo describe_allgather_linear();             ///< AG1: linear gather + linear bcast
AlgorithmInfo describe_allgather_sparbit();            ///< AG7: inverted-distance Bruck
AlgorithmInfo describe_allgather_pair();               ///< AG9: SMPI pair, power of two
AlgorithmInfo describe_allgather_recexch_doubling();   ///< AG10: MPICH radix-k, distance doubling
AlgorithmInfo describe_allgather_recexch_halving();    ///< AG10: MPICH radix-k, distance halving
AlgorithmInfo describe_allgather_2dmesh();             ///< AG13: SMPI 2-D grid, rows then columns
AlgorithmInfo describe_allgather_3dmesh();             ///< AG13: SMPI 3-D grid
AlgorithmInfo describe_allgather_swing();              ///< AR22: Swing butterfly, power of two
AlgorithmInfo describe_allgather_nvls();               ///< AG16: NCCL NVLS multicast (block H)
// block I: hierarchical
AlgorithmInfo describe_allgather_two_level(); ///< AG14: node gather, leader allgather, node bcast
// end of block I
// block G: NCCL
AlgorithmInfo describe_allgather_nccl_ring(); ///< AG4: NCCL ring, channels x chunks
AlgorithmInfo describe_allgather_pat();       ///< AG15: NCCL PAT, one rank per node
// end of block G
// block J: MPICH circ_graph and smp
AlgorithmInfo describe_allgather_circ_graph(); ///< AG12: p circulant-graph bcasts at once
// end of block J

} // namespace collsim::algorithms

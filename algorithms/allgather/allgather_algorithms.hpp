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

} // namespace collsim::algorithms

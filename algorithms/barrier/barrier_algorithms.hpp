#pragma once
// Internal: the barrier algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_barrier_recursive_doubling(); ///< BA3: XOR exchanges, fold
AlgorithmInfo describe_barrier_dissemination();      ///< BA4: radix-k dissemination
AlgorithmInfo describe_barrier_linear();             ///< BA1: check in with rank 0, released by it
AlgorithmInfo describe_barrier_double_ring();        ///< BA2: a token around the ring twice
AlgorithmInfo describe_barrier_tree();               ///< BA6: binomial fan-in and fan-out
AlgorithmInfo describe_barrier_two_proc();           ///< BA5: one exchange, exactly 2 ranks
AlgorithmInfo describe_barrier_recexch();            ///< BA7: MPICH radix-k recursive exchange
// block J: MPICH circ_graph and smp
AlgorithmInfo describe_barrier_smp(); ///< BA8: node barrier, leader barrier, node release
// end of block J

} // namespace collsim::algorithms

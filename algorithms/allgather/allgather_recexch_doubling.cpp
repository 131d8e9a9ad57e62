// MPICH's recursive-exchange allgather, distance doubling (algorithms.md AG10; MPICH
// recexch_doubling): radix-k recursive doubling, distances 1, k, k^2, ..., for any p through
// MPICH's step-1/step-3 fold. The schedule, dependencies, sources and cost are documented with the
// shared generator in allgather_recexch.cpp.
//
// Cost: radix 2, p a power of two: lg p a + (p-1)/p n b (exact when p divides n).

#include "allgather/allgather_algorithms.hpp"
#include "allgather/allgather_recexch.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_allgather_recexch_doubling() {
  return detail::describe_allgather_recexch(false);
}

} // namespace collsim::algorithms

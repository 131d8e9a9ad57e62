// MPICH's recursive-exchange allgather, distance halving (algorithms.md AG10; MPICH
// recexch_halving; Sack & Gropp, PPoPP 2012): ranks first swap with their base-k digit-reversed
// partner, then exchange at distances k^(L-1), ..., k, 1 so that the data ends in order. The
// schedule, dependencies, sources and cost are documented with the shared generator in
// allgather_recexch.cpp.
//
// Cost: radix 2, p a power of two >= 4: (lg p + 1) a + n b (exact when p divides n).

#include "allgather/allgather_algorithms.hpp"
#include "allgather/allgather_recexch.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_allgather_recexch_halving() {
  return detail::describe_allgather_recexch(true);
}

} // namespace collsim::algorithms

#pragma once
// Internal: the reduce algorithms, one file each in this folder. registry.cpp lists them.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms {

} // namespace collsim::algorithms

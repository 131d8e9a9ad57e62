#pragma once
// The NCCL stack: how NCCL moves a schedule of its own algorithms (docs/stacks.md, "nccl").
//
// Sources (NCCL master, read for this model): src/device/prims_simple.h (a chunk of
// CHUNKSTEPS FIFO steps moves as CHUNKSTEPS / SLICESTEPS slices, each waiting for room in the
// peer's NCCL_STEPS-slot FIFO and posted on its own; sliceSize = max(roundUp(nelem /
// SlicePerChunk, 16), stepSize x SLICESTEPS / 32)), src/include/collectives.h (ALLREDUCE /
// ALLGATHER / REDUCESCATTER_SLICESTEPS = NCCL_STEPS / 4 and CHUNKSTEPS = NCCL_STEPS / 2: two
// slices per ring chunk; broadcast, reduce and the trees one slice per chunk), src/device/
// prims_ll.h and prims_ll128.h (LL and LL128 lines carry their own flags, so the receiver reads
// and forwards data as it lands: cut-through), src/graph/tuning.cc (per-step hardware
// latencies, the protocols' payload efficiency).

#include "collsim/algorithms/nccl_constants.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/collective.hpp"

#include <cstdint>
#include <optional>

namespace collsim::stacks {

/// The NCCL algorithm a collsim algorithm simulates, from its alias ("nccl:ring", "nccl:tree",
/// "nccl:nvlstree", ...: ncclAlgoStr in lower case); nullopt for algorithms NCCL does not have.
std::optional<algorithms::nccl::Algo> nccl_algo_of(const algorithms::AlgorithmInfo& algo);
/// True for NCCL's grouped point-to-point transfers (alias "nccl:p2p": nccl_p2p alltoall).
bool is_nccl_p2p(const algorithms::AlgorithmInfo& algo);
/// The NCCL algorithm whose protocol constants the stack lowers `algo` with: its own, or the
/// ring's for point-to-point transfers (NCCL's tuning model has none for them; they run through
/// the same connections, FIFOs and protocol buffers); nullopt for algorithms NCCL does not have.
std::optional<algorithms::nccl::Algo> nccl_lowering_algo(const algorithms::AlgorithmInfo& algo);

/// SlicePerChunk of NCCL's Simple protocol: 2 for the ring allreduce, allgather and
/// reduce-scatter, 1 for everything else.
std::uint32_t slices_per_chunk(core::CollectiveKind c, algorithms::nccl::Algo a);

/// The pieces the NCCL stack cuts one message of `length` payload bytes into: Simple, its
/// slices (prims_simple.h's sliceSize, at least 1/32 of a slice's FIFO steps, a step being an
/// eighth of `simple_buffer`, buffSizes[Simple]: NCCL_BUFFSIZE); LL and LL128,
/// kCutThroughPieces pieces of at least kCutThroughMin bytes (their line-level cut-through,
/// approximated: the store-and-forward delay per hop falls to a quarter of the message's wire
/// time).
std::uint32_t nccl_pieces(core::CollectiveKind c, algorithms::nccl::Algo a,
                          algorithms::nccl::Proto p, std::uint64_t length,
                          std::uint64_t simple_buffer = algorithms::nccl::kDefaultSimpleBuffer);

inline constexpr std::uint32_t kCutThroughPieces = 4;
inline constexpr std::uint64_t kCutThroughMin = 4096;

} // namespace collsim::stacks

#pragma once
// `--algorithm auto`: what the library a user of the machine calls would run for one call, so
// that `sim`, `run`, `plot` and scenario studies can time the library's own choice beside
// collsim's algorithms (issue 17: "`--algorithm auto` in `sim` means what the library picks").
// The library is NCCL where the ranks sit on GPUs (NCCL has no barrier), else Open MPI 4.1's
// coll/tuned fixed rules; NCCL's choice honours the scenario's `nccl.env`.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/library_choice.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collsim::analysis {

/// The algorithm name that stands for the library's own choice in studies.
inline constexpr std::string_view kAutoAlgorithm = "auto";

/// True when every rank of `topo` sits on a GPU: a machine NCCL runs on.
[[nodiscard]] bool ranks_on_gpus(const core::Topology& topo);

/// The library `auto` stands for on this machine and collective.
enum class AutoLibrary { nccl, ompi };
[[nodiscard]] AutoLibrary auto_library(const core::Topology& topo, core::CollectiveKind collective);

/// Why NCCL cannot run the v-variant of `collective` ("NCCL has no allgatherv (its allgather takes
/// one count for every rank)"), or "" when it can: NCCL's allgather and reduce_scatter take one
/// count for every rank (nccl.h); alltoallv, gatherv and scatterv run as grouped point-to-point.
[[nodiscard]] std::string nccl_v_refusal(core::CollectiveKind collective);

/// The UCC team a call runs on, as far as UCC 1.1's selection reads it: tl/cuda (score 40 against
/// tl/ucp's 10) creates a team only on one node of 2 to 8 GPUs and takes allgather, alltoall and
/// reduce_scatter of device buffers there (UCC v1.1.0 src/components/tl/cuda: tl_cuda.h
/// UCC_TL_CUDA_DEFAULT_SCORE and SUPPORTED_COLLS, tl_cuda_team.c "multinode team is not
/// supported", UCC_TL_CUDA_MAX_PEERS).
struct UccTeam {
  std::uint32_t ranks = 0;
  bool one_node = false;       ///< every rank on one node
  bool device_buffers = false; ///< the call's buffers are GPU memory
};
/// The team of `ranks` ranks of `topo` with the scenario's buffers (`buffers:`; device on GPU
/// ranks by default).
[[nodiscard]] UccTeam ucc_team(const core::Scenario& scenario, const core::Topology& topo,
                               std::uint32_t ranks);

/// UCC 1.1's choice for one call (tl/ucp's default selection strings and radices; UCC v1.1.0
/// src/components/tl/ucp: allreduce.h, bcast.h, alltoall.h, reduce_scatter.h, tl_ucp.c,
/// allgather.c), where collsim has the algorithm: allreduce (`recursive_knomial` below 4 KiB,
/// `sra_knomial` from 4 KiB), allgather (`ring`), alltoall (`pairwise`), bcast (`knomial` below
/// 32 KiB, `sag_knomial` from 32 KiB), reduce and gather (`knomial`), reduce_scatter
/// (`ring_bidirectional`) and barrier (`recexch`), radix 4 where there is one. nullopt where UCC
/// runs what collsim does not model, tl/cuda's algorithms (allgather, alltoall, reduce_scatter of
/// device buffers on one node), or has no such collective (scatter): auto_choice then takes Open
/// MPI 4.1's rules, and `why`, when given, says which.
[[nodiscard]] std::optional<LibraryChoice> ucc11_default(core::CollectiveKind collective,
                                                         core::Bytes bytes, const UccTeam& team,
                                                         std::string* why = nullptr);

/// HCOLL's choice (the hpcx stack): its hierarchical allreduce (the `hcoll` algorithm); nullopt
/// for the other collectives (auto_choice then takes Open MPI 4.1's rules and says so).
[[nodiscard]] std::optional<LibraryChoice> hcoll_default(core::CollectiveKind collective);

/// MPICH 4's choice (the mpich-4 stack): ch4's default allreduce composition (`mpich_ch4`), and
/// MPIR's scattered alltoallv (`varying`: the v-variant); nullopt for the other collectives
/// (auto_choice then takes Open MPI 4.1's rules and says so).
[[nodiscard]] std::optional<LibraryChoice> mpich4_default(core::CollectiveKind collective,
                                                          bool varying = false);

/// Open MPI 5.0's choice for an allreduce across nodes of equal rank counts (the openmpi-5.0
/// stack): coll/han's `han` with coll/tuned's reduce and bcast for a node's ranks and a 64 KiB
/// segment; nullopt on one node, uneven nodes, or another collective (coll/tuned's rules then).
[[nodiscard]] std::optional<LibraryChoice> han_default(const core::Topology& topo,
                                                       core::CollectiveKind collective,
                                                       std::uint32_t ranks, core::Bytes bytes,
                                                       const algorithms::Registry& registry);

/// The library's choice for one call on `topo` (built from `scenario` for `ranks`), by the
/// scenario's stack (stacks::Chooser; with no stack named: by the machine): NCCL's
/// default (nccl_default with the scenario's NCCL inputs and environment) or Open MPI 4.1's
/// (ompi41_default, commutative). `element_bytes` is the datatype's size (MPI_FLOAT's 4 unless a
/// log says otherwise): the rules that count elements (Open MPI's, MPICH's) read it. nullopt,
/// with the reason in `why`, where the model gives none (an alltoall whose size is not a
/// multiple of the ranks for Open MPI). `varying`: the call is the collective's v-variant
/// (per-rank counts; `bytes` their total): Open MPI's v-rules (ompi41_v_default), MPICH's
/// scattered alltoallv, NCCL's grouped point-to-point for alltoallv, gatherv and scatterv (NCCL
/// has no allgatherv or MPI_Reduce_scatter: nullopt).
[[nodiscard]] std::optional<LibraryChoice>
auto_choice(const core::Scenario& scenario, const core::Topology& topo,
            core::CollectiveKind collective, std::uint32_t ranks, core::Bytes bytes,
            const algorithms::Registry& registry, std::string* why = nullptr,
            std::uint32_t element_bytes = 4, bool varying = false);

} // namespace collsim::analysis

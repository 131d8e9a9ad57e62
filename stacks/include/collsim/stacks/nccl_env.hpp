#pragma once
// NCCL environment variables that change what NCCL runs (scenario `nccl: {env: {...}}`, or a
// log's launch command), read as NCCL reads them:
//   NCCL_ALGO     src/enqueue.cc / src/graph/tuning.cc ncclTopoTuneModel: a comma list of Tree,
//                 Ring, CollnetDirect, CollnetChain, NVLS, NVLSTree, PAT (case-insensitive); a
//                 leading '^' excludes the listed ones instead;
//   NCCL_PROTO    the same for LL, LL128, Simple;
//   NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS  bounds on the channels a call runs (src/init.cc);
//   NCCL_NVLS_ENABLE     0 turns NVLS and NVLSTree off (src/transport/nvls.cc);
//   NCCL_COLLNET_ENABLE  1 turns CollNet on where a SHARP network supports it;
//   NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE  NVLS-tree's chunk in bytes (nvls.cc,
//                 enqueue.cc; NCCL_NVLS_CHUNKSIZE from 2.21.5);
//   NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE  each protocol's connection buffer in
//                 bytes (src/init.cc computeBuffSizes, every release): a step is an eighth of it
//                 (NCCL_STEPS), and the chunks of the ring, the tree and PAT are steps;
//   NCCL_P2P_NET_CHUNKSIZE, NCCL_P2P_NVL_CHUNKSIZE, NCCL_P2P_PCI_CHUNKSIZE  the point-to-point
//                 chunk across nodes, on an NVLink-only node, else (init.cc computeBuffSizes).
// Other NCCL_ variables are accepted and ignored (listed by ignored_nccl_env), since they do not
// change the model (NCCL_DEBUG, NCCL_IB_HCA, ...).

#include "collsim/algorithms/nccl_constants.hpp"
#include "collsim/algorithms/nccl_release.hpp"
#include "collsim/core/scenario.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collsim::stacks {

struct NcclEnv {
  /// Per NCCL algorithm index (Algo), whether NCCL_ALGO allows it (all true when unset).
  std::array<bool, 7> algo_allowed{true, true, true, true, true, true, true};
  /// Per protocol (Proto: simple, ll, ll128), whether NCCL_PROTO allows it.
  std::array<bool, 3> proto_allowed{true, true, true};
  std::uint32_t min_channels = 0; ///< 0: unset
  std::uint32_t max_channels = 0; ///< 0: unset
  std::optional<bool> nvls_enable;
  std::optional<bool> collnet_enable;
  std::optional<std::uint64_t> nvls_chunk_size;     ///< NCCL_NVLS_CHUNKSIZE, bytes
  std::optional<std::uint64_t> nvls_tree_max_chunk; ///< NCCL_NVLSTREE_MAX_CHUNKSIZE, bytes
  /// Per protocol (Proto), its connection buffer: NCCL_BUFFSIZE (Simple), NCCL_LL_BUFFSIZE,
  /// NCCL_LL128_BUFFSIZE, in bytes; unset: NCCL's default.
  std::array<std::optional<std::uint64_t>, 3> buffer{};
  std::optional<std::uint64_t> p2p_net_chunk; ///< NCCL_P2P_NET_CHUNKSIZE, bytes
  std::optional<std::uint64_t> p2p_nvl_chunk; ///< NCCL_P2P_NVL_CHUNKSIZE, bytes
  std::optional<std::uint64_t> p2p_pci_chunk; ///< NCCL_P2P_PCI_CHUNKSIZE, bytes
  std::uint32_t net_peer_channels = 0;        ///< NCCL_NCHANNELS_PER_NET_PEER (0: unset)
  /// NCCL_NET_OVERHEAD (given in ns), in us: the network post overhead of NCCL's model and of the
  /// NCCL stack's network proxy, in place of the CPU's default (1 us Intel, 2 us AMD).
  std::optional<double> net_overhead_us;
  bool operator==(const NcclEnv&) const = default;
  [[nodiscard]] bool allows(algorithms::nccl::Algo a) const {
    return algo_allowed[static_cast<std::size_t>(a)];
  }
  [[nodiscard]] bool allows(algorithms::nccl::Proto p) const {
    return proto_allowed[static_cast<std::size_t>(p)];
  }
};

/// Parses the scenario's `nccl.env`. A bad value throws ScenarioError at its position
/// (`nccl.env.NCCL_ALGO`), or UsageError when the map did not come from a file.
NcclEnv parse_nccl_env(const core::NcclSpec& spec);

/// The release of `spec.version` (algorithms/nccl_release.hpp); the newest modelled one when it is
/// empty. A bad value throws ScenarioError at its position (`nccl.version`), or UsageError.
algorithms::nccl::ReleaseCode parse_nccl_release(const core::NcclSpec& spec);

/// The variables of `spec.env` that the model does not read.
std::vector<std::string> ignored_nccl_env(const core::NcclSpec& spec);

} // namespace collsim::stacks

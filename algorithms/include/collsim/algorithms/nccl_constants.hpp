#pragma once
// NCCL's algorithm, protocol and hardware-class indices and the latency tables of its cost model
// (algorithms.md section 3.1: ncclTunerConstantsDefaults in src/graph/tuning.cc, NCCL v2.30.7).
// Public so that the NCCL generators (algorithms/) and the model of NCCL's default choice
// (analysis/nccl_defaults) read one copy of the tables; the definitions live in
// algorithms/nccl_support.cpp (p2p_chunk_bytes in algorithms/nccl_p2p.cpp).

#include <cstdint>
#include <string_view>

namespace collsim::algorithms::nccl {

/// NCCL's protocols, in the order of the `protocol` parameter's choices (not NCCL's indices, which
/// are LL = 0, LL128 = 1, Simple = 2).
enum class Proto : std::uint8_t { simple = 0, ll = 1, ll128 = 2 };
/// NCCL's algorithm indices (src/include/plugin/nccl_tuner.h).
enum class Algo : std::uint8_t {
  tree = 0,
  ring = 1,
  collnet_direct = 2,
  collnet_chain = 3,
  nvls = 4,
  nvls_tree = 5,
  pat = 6
};
/// NCCL's hardware classes for hwLatencies.
enum class Hw : std::uint8_t { nvlink = 0, pci = 1, net = 2 };

/// NCCL_STEPS (src/include/device.h): the slots of every connection's FIFO; a protocol's step is
/// its buffer / NCCL_STEPS.
inline constexpr std::uint64_t kSteps = 8;
/// buffSizes[Simple] by default: DEFAULT_BUFFSIZE (src/init.cc; 1 MiB on ARM hosts up to 2.18.6,
/// not modelled). NCCL_BUFFSIZE overrides it.
inline constexpr std::uint64_t kDefaultSimpleBuffer = 4 << 20;
/// The smallest connection buffer collsim takes (the `buffsize` parameter, NCCL_BUFFSIZE and its
/// LL and LL128 variants): NCCL_STEPS steps of 8 KiB. NCCL itself checks nothing.
inline constexpr std::int64_t kSmallestBuffer = 64 << 10;
/// The largest: 128 MiB, a step of 16 MiB (nvls_tree's largest `max_chunk`).
inline constexpr std::int64_t kLargestBuffer = 128 << 20;
inline constexpr std::uint64_t kNvlsChunkBytes = 128 << 10; ///< NCCL_NVLS_CHUNKSIZE default
/// NVLS-tree's chunk from 4 nodes (enqueue.cc since 2.19.3; NCCL_NVLSTREE_MAX_CHUNKSIZE's default).
inline constexpr std::uint64_t kNvlsTreeManyNodesChunk = 64 << 10;
/// NVLS-tree's chunk on `nodes` nodes with NCCL 2.21.5's defaults, before enqueue.cc shrinks it
/// for smaller messages: min(NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE), 128 KiB, 64 KiB
/// from 4 nodes.
constexpr std::uint64_t default_nvls_tree_chunk(std::uint32_t nodes) {
  return nodes >= 4 ? kNvlsTreeManyNodesChunk : kNvlsChunkBytes;
}

/// NVLS's chunk on one node for `bytes` (enqueue.cc): `start` (min(Simple step,
/// NCCL_NVLS_CHUNKSIZE): 128 KiB by default), 64 KiB below 64 x concurrentOps x chunk, 32 KiB
/// below 8 x .. x chunk, 16 KiB below 2 x .. x chunk, each rule on the chunk the previous one
/// left, with `concurrent_ops` = nChannels x nHeads.
std::uint64_t nvls_chunk_bytes(std::uint64_t bytes, std::uint64_t concurrent_ops,
                               std::uint64_t start = kNvlsChunkBytes);

/// "Simple", "LL" or "LL128" (core::Protocol::name).
std::string_view protocol_name(Proto p);
/// "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT" (ncclAlgoStr).
std::string_view algo_name(Algo a);

/// baseLatencies[algo][proto] in microseconds (section 3.1).
double base_latency_us(Algo a, Proto p);
/// hwLatencies[hw][algo][proto] in microseconds (section 3.1).
double hw_latency_us(Hw hw, Algo a, Proto p);
/// The share of NCCL's interLat one inter-node message of algorithm `a` carries (make_protocol):
/// 1/2 for NVLS and CollNet, whose one interLat is a round trip through the network (two
/// messages), else 1.
double inter_node_latency_share(Algo a);

/// comm->p2pChunkSize (src/init.cc computeBuffSizes): NCCL_P2P_NET_CHUNKSIZE (128 KiB) with
/// several nodes, NCCL_P2P_NVL_CHUNKSIZE (512 KiB) on an NVLink-only node, else
/// NCCL_P2P_PCI_CHUNKSIZE (128 KiB): the Simple step of point-to-point transfers.
std::uint64_t p2p_chunk_bytes(bool multi_node, bool nvlink);

/// The channels (parts) NCCL splits one point-to-point operation of `bytes` over (src/enqueue.cc
/// addP2pToPlan): as few as fit parts of at least a quarter (several nodes: half) of the P2P
/// chunk, at most `fewest` (scheduleP2pTasksToPlan's nChannelsMin), then doubled up to `per_peer`
/// (comm->p2pnChannelsPerPeer) while a part is larger than the chunk (one node: 32 chunks).
/// `chunk`: the P2P chunk where NCCL's environment sets it (0: p2p_chunk_bytes').
std::uint32_t p2p_op_channels(std::uint64_t bytes, std::uint32_t fewest, std::uint32_t per_peer,
                              bool multi_node, bool nvlink, std::uint64_t chunk = 0);

} // namespace collsim::algorithms::nccl

#pragma once
// NCCL's model of itself: its default choice of algorithm and protocol (algorithms.md sections 2.4
// and 3: NCCL v2.30.7-1, src/graph/tuning.cc ncclTopoTuneModel and ncclTopoGetAlgoTime,
// src/enqueue.cc updateCollCostTable and topoGetAlgoInfo; docs/library-defaults.md, "NCCL").
//
// Two steps, as in NCCL: nccl_inputs() derives from a collsim topology what NCCL's topology
// search (src/graph/search.cc ncclTopoCompute) would hand its cost model: per algorithm a graph
// of nChannels channels at bwIntra/bwInter GB/s each, path types, compute capability, CPU vendor,
// NVLS and CollNet support. nccl_default() then prices every legal (algorithm, protocol) pair with
// tuning.cc's alpha-beta model, takes the cheapest, tunes channels and threads as enqueue.cc does,
// and names the collsim algorithm that simulates what NCCL would run.
//
// Units follow NCCL: latencies in microseconds, bandwidths in GB/s (1 GB/s = 1000 B/us).

#include "collsim/algorithms/nccl_constants.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"
#include "collsim/stacks/nccl_env.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collsim::stacks {

/// NCCL's path types (src/graph/topo.h), best first; the model only compares them.
enum class NcclPath : std::uint8_t { loc, nvl, nvb, c2c, pix, pxb, p2c, pxn, phb, sys, net };
/// NCCL's CPU classes where the model reads them (llMaxBws row, NCCL_NET_OVERHEAD, NVLSTree's
/// correction on x86).
enum class NcclCpu : std::uint8_t { intel, amd, other };

/// One result of NCCL's topology search (struct ncclTopoGraph), the part tuning.cc reads.
struct NcclGraph {
  std::uint32_t channels = 0; ///< nChannels (0: the search found nothing, the algorithm is off)
  double bw_intra = 0.0;      ///< bwIntra, GB/s per channel
  double bw_inter = 0.0;      ///< bwInter, GB/s per channel
  double latency_inter = 0.0; ///< latencyInter, us (0: NCCL's IB plugin reports none)
  NcclPath type_intra = NcclPath::nvl;
  NcclPath type_inter = NcclPath::pix;
  bool same_channels = true;
  bool operator==(const NcclGraph&) const = default;
};

/// What NCCL's model reads, derived from a collsim topology (nccl_inputs) or written by hand.
/// Every field can be changed before calling nccl_default (to try another GPU generation, or
/// NCCL_COLLNET_ENABLE=1).
struct NcclModelInputs {
  std::uint32_t ranks = 1;       ///< nRanks
  std::uint32_t nodes = 1;       ///< nNodes
  std::uint32_t local_ranks = 1; ///< the most ranks on one node (maxLocalRanks)
  /// Compute capability x10 (70, 80, 90, 100): minCompCap = maxCompCap.
  std::uint32_t compute_capability = 80;
  /// How compute_capability was found ("NVLink SHARP switch", "NVLink 450 GB/s per GPU", ...).
  std::string compute_capability_from;
  NcclCpu cpu = NcclCpu::intel;
  bool nvlink = false;          ///< the ranks of a node talk over NVLink (NCCL_HW_NVLINK)
  bool nvswitch = false;        ///< the node has an NVSwitch (nvsCount > 0)
  double gpu_nvlink_bw = 0.0;   ///< NCCL's NVLink bandwidth per GPU, GB/s (sum of its links)
  double gpu_pci_bw = 0.0;      ///< NCCL's PCI bandwidth of a GPU's link, GB/s
  double net_bw = 0.0;          ///< GPU -> its NIC -> network, narrowest link, GB/s (0: one node)
  std::uint32_t nics = 0;       ///< distinct NICs the ranks of node 0 leave through
  bool nvls_support = false;    ///< NVSwitch with NVLink SHARP and sm90+
  bool collnet_support = false; ///< a reducing network switch (SHARP) and more than one node
  /// NCCL_COLLNET_ENABLE: off by default in NCCL; CollNet and multi-node NVLS need it.
  bool collnet_enable = false;
  bool tree_pattern_tree = false; ///< maxTreePattern == NCCL_TOPO_PATTERN_TREE (bw x 0.85)
  NcclGraph ring, tree, collnet_direct, collnet_chain, nvls; ///< graphs[a]; NVLSTree uses nvls
  std::uint32_t comm_channels = 1; ///< comm->nChannels (ring, tree, PAT, CollNet)
  std::uint32_t nvls_channels = 0; ///< comm->nvlsChannels (NCCL_NVLS_NCHANNELS default)
  NcclEnv env;                     ///< NCCL environment variables that constrain the choice
  /// The NCCL release whose tuning model decides (nccl_release.hpp; scenario `nccl.version` or
  /// the log's). nccl_inputs applies its channel rules; nccl_default reads its tables and rules.
  algorithms::nccl::ReleaseCode release = algorithms::nccl::kNewestModelled;
  bool operator==(const NcclModelInputs&) const = default;
};

/// NCCL's model inputs for `ranks` ranks of `topology` (ranks 0..ranks-1, as placed), as NCCL
/// `release`'s topology search finds them (its speed arrays, NVLink constants, MAXCHANNELS and
/// NVLS rules). Throws core::UsageError when the topology hosts fewer ranks. See
/// docs/library-defaults.md for how each field is approximated.
NcclModelInputs
nccl_inputs(const core::Topology& topology, std::uint32_t ranks,
            algorithms::nccl::ReleaseCode release = algorithms::nccl::kNewestModelled);
/// As above, also reading what the graph does not keep: the CPU vendor (inter_socket
/// "infinity_fabric": AMD, "upi": Intel, "xbus": other) of a `system` topology.
NcclModelInputs
nccl_inputs(const core::TopologySpec& spec, const core::Topology& topology, std::uint32_t ranks,
            algorithms::nccl::ReleaseCode release = algorithms::nccl::kNewestModelled);

/// As above, with the scenario's NCCL settings: its release (`nccl.version`), the plugin's
/// network latency and its environment (`nccl.env`, apply_nccl_env).
NcclModelInputs nccl_inputs(const core::TopologySpec& spec, const core::NcclSpec& nccl,
                            const core::Topology& topology, std::uint32_t ranks);
/// comm->nvlsChannels for `in` at in.release (0 without NVLS support; nvls.cc: 16, sm100 32 from
/// 2.25.1, 24 on one node from 2.27.3, by NIC speed and GPUs per node across nodes from 2.30.3).
std::uint32_t nvls_channels(const NcclModelInputs& in);
/// The chunk NCCL's NVLS-tree starts from before enqueue.cc shrinks it for smaller messages, for
/// `in` at in.release with in.env (0 without NVLS support): the Simple step (4 MiB / NCCL_STEPS)
/// from 2.18.1, 64 KiB from 4 nodes from 2.19.3, min(NCCL_NVLS_CHUNKSIZE = 128 KiB,
/// NCCL_NVLSTREE_MAX_CHUNKSIZE = 64 KiB from 4 nodes) from 2.21.5 (2.30.3's Blackwell tuning of
/// the two is not modelled: see the definition).
std::uint64_t nvls_tree_chunk(const NcclModelInputs& in);
/// nvls_tree's `max_chunk` for `in`: nvls_tree_chunk(in) where it differs from the parameter's
/// default (0: 128 KiB, 64 KiB from 4 nodes), else nullopt.
std::optional<std::uint64_t> nvls_tree_chunk_param(const NcclModelInputs& in);
/// The ring's, tree's and PAT's `buffsize` for a run of protocol `p` under `in`: the protocol's
/// buffer from NCCL's environment (NCCL_BUFFSIZE for Simple, NCCL_LL_BUFFSIZE,
/// NCCL_LL128_BUFFSIZE) where set, else nullopt (the parameter's default is NCCL's own).
std::optional<std::uint64_t> buffer_param(const NcclModelInputs& in, algorithms::nccl::Proto p);
/// nccl_p2p's `chunk` under `in`: comm->p2pChunkSize where NCCL's environment sets it
/// (init.cc computeBuffSizes: NCCL_P2P_NET_CHUNKSIZE with several nodes, NCCL_P2P_NVL_CHUNKSIZE
/// on an NVLink node, else NCCL_P2P_PCI_CHUNKSIZE), else nullopt (the default, p2p_chunk_bytes).
std::optional<std::uint64_t> p2p_chunk_param(const NcclModelInputs& in);
/// Applies NCCL environment variables to model inputs: NCCL_NVLS_ENABLE=0 removes NVLS support,
/// NCCL_COLLNET_ENABLE sets collnet_enable, NCCL_MIN/MAX_NCHANNELS bound comm_channels; NCCL_ALGO
/// and NCCL_PROTO are kept in `env` for nccl_default, which disables the entries they exclude.
void apply_nccl_env(NcclModelInputs& in, const NcclEnv& env);

/// One (algorithm, protocol) entry of NCCL's cost table for a call.
struct NcclCost {
  algorithms::nccl::Algo algo = algorithms::nccl::Algo::ring;
  algorithms::nccl::Proto proto = algorithms::nccl::Proto::simple;
  double latency_us = 0.0; ///< comm->latencies[c][a][p] after the size-dependent plateau factor
  double bandwidth = 0.0;  ///< comm->bandwidths[c][a][p] (algorithm bandwidth, GB/s) after the
                           ///< tree correction; 0 when disabled
  double time_us = -1.0;   ///< latency_us + bytes / (1000 bandwidth); -1: not eligible
  std::string disabled;    ///< why the entry is not eligible ("" when it is)
  bool operator==(const NcclCost&) const = default;
};

/// NCCL's choice for one call and what collsim runs to simulate it.
struct NcclChoice {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 1;
  core::Bytes bytes{0};
  /// false: a collective NCCL runs as grouped send/recv (alltoall, gather, scatter): no cost
  /// model, algo/proto/table are not meaningful.
  bool modelled = true;
  algorithms::nccl::Algo algo = algorithms::nccl::Algo::ring;
  algorithms::nccl::Proto proto = algorithms::nccl::Proto::simple;
  std::uint32_t channels = 1; ///< nc after topoGetAlgoInfo's channel tuning
  std::uint32_t threads = 0;  ///< nt, threads per channel
  double time_us = 0.0;       ///< the chosen entry's time
  /// Every (algorithm, protocol) pair the tuning loop visits for the collective, in NCCL's
  /// order (algorithm index, then LL, LL128, Simple).
  std::vector<NcclCost> table;
  /// The release whose model chose (NcclModelInputs::release).
  algorithms::nccl::ReleaseCode release = algorithms::nccl::kNewestModelled;
  std::string algorithm;        ///< collsim canonical name ("nccl_ring", "nvls", "linear", ...)
  algorithms::RawParams params; ///< its parameters as users write them (protocol=ll128, ...)
  bool operator==(const NcclChoice&) const = default;
};

/// NCCL's default for `bytes` (nccl-tests' S: the whole buffer for allgather/reduce_scatter) of
/// `collective` over the ranks of `in`. Allreduce, bcast, reduce, allgather and reduce_scatter
/// follow the cost model; alltoall, gather and scatter are NCCL's grouped send/recv, run as
/// collsim's "nccl_p2p" at nccl_p2p_choice's channels and protocol for one block (one rank:
/// "linear", nothing moves); barrier: nullopt (NCCL has none).
/// `ranks` must equal in.ranks (UsageError otherwise).
std::optional<NcclChoice> nccl_default(core::CollectiveKind collective, std::uint32_t ranks,
                                       core::Bytes bytes, const NcclModelInputs& in);

/// What NCCL runs when the algorithm is forced to `algo` (NCCL_ALGO), or when a user names the
/// collsim algorithm that simulates it: NCCL's cheapest protocol for it (or `proto` when that is
/// forced too, even where NCCL keeps it off by default), then topoGetAlgoInfo's channel and
/// thread tuning for that pair. nullopt where NCCL cannot run the algorithm on this machine (no
/// NVLS, no CollNet, PAT with several GPUs per node, ...) or has no model for the collective.
std::optional<NcclChoice> nccl_algorithm_choice(core::CollectiveKind collective,
                                                std::uint32_t ranks, core::Bytes bytes,
                                                const NcclModelInputs& in,
                                                algorithms::nccl::Algo algo,
                                                std::optional<algorithms::nccl::Proto> proto);

/// NCCL's split of one send or receive of a grouped point-to-point exchange (src/enqueue.cc
/// addP2pToPlan, src/graph/paths.cc ncclTopoComputeP2pChannels and ncclTopoGetNchannels).
struct NcclP2pChoice {
  std::uint32_t p2p_channels = 1;      ///< comm->p2pnChannels: pow2Up(comm channels)
  std::uint32_t channels_per_peer = 1; ///< comm->p2pnChannelsPerPeer (an operation's most)
  std::uint32_t min_channels = 1;      ///< scheduleP2pTasksToPlan's nChannelsMin
  std::uint32_t channels = 1;          ///< the channels (parts) this operation runs on
  algorithms::nccl::Proto proto = algorithms::nccl::Proto::simple; ///< LL up to 16 KiB a channel
  bool operator==(const NcclP2pChoice&) const = default;
};
/// How NCCL runs a send or receive of `bytes` between the ranks of `in` (NCCL_P2P_LL_THRESHOLD
/// 16 KiB per channel; P2P chunk sizes and NCCL_P2P_PER_CHANNEL_NET_BW 14 GB/s at their defaults).
NcclP2pChoice nccl_p2p_choice(const NcclModelInputs& in, std::uint64_t bytes);
/// comm->nChannels for the collectives, after the adjustments that depend on enable flags.
std::uint32_t nccl_comm_channels(const NcclModelInputs& in);

/// Whether NCCL can run collsim's NCCL algorithm `name` on the machine `in` describes at all
/// (CollNet needs a reducing network switch and NCCL_COLLNET_ENABLE, NVLS and NVLS-tree NVLink
/// SHARP); other names: true.
bool nccl_can_run(std::string_view name, const NcclModelInputs& in);

/// "protocol=ll128,channels=24" (sorted by name; "" without parameters).
std::string params_text(const algorithms::RawParams& params);

} // namespace collsim::stacks

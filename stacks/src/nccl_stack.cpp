// The NCCL stack (nccl_stack.hpp for the sources). Lowering does four things:
//
// 1. The scenario's corrections to NCCL's protocols (section `nccl`, fitted by `collsim
//    calibrate`): the host's call overhead joins the kernel launch, each protocol's per-step
//    latencies and payload efficiency are scaled by its factors.
// 2. Link efficiency: the node's links at the rate NCCL rates them (NVLink's and PCIe's data
//    rate, NVLS's efficiency; without PCIe peer-to-peer, the host's share for traffic staged
//    both ways), the network at its NIC kind's transport efficiency. (A link in the middle of
//    routes inside a node, such as a PCIe uplink to host memory, is shared by the engines:
//    loggp books it in time per message, engines/loggp/src/middle_links.hpp.)
// 3. Ports. A GPU's channels run on separate thread blocks and its NVLink, PCIe and NIC paths
//    work at once: the engines give each link of the device its own port
//    (core::Protocol::port_per_link) instead of LogGP's single one.
// 4. Pipelining. NCCL moves each chunk through the peer's FIFO of NCCL_STEPS slots in slices
//    (Simple) or lines (LL, LL128) that the receiver consumes and forwards as they land, so the
//    per-step latency of a hop is paid once while the pipeline fills and then hides behind the
//    wire time of the pieces that follow. Generated NCCL schedules carry whole chunks; the stack
//    cuts them into NCCL's pieces (stacks::split_messages). For a large Simple ring allreduce on
//    p ranks of link rate B the time becomes about
//        launch + 2(p-1) (L + s/B) + (2(p-1)/p n - s) / B       (s: one slice, L: per-step latency)
//    when L < s/B, instead of 2(p-1) loops x (L + 2s/B) with whole chunks.

#include "collsim/stacks/nccl_stack.hpp"

#include "nccl_model_constants.hpp"
#include "nccl_nvls.hpp"

#include "collsim/stacks/nccl_model.hpp"
#include "collsim/stacks/pipeline.hpp"
#include "collsim/stacks/stack.hpp"
#include "collsim/topologies/nic_kinds.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

namespace collsim::stacks {
namespace {

using algorithms::nccl::Algo;
using algorithms::nccl::Proto;

using algorithms::nccl::kSteps; // NCCL_STEPS

std::optional<Proto> proto_of(const core::Protocol& p) {
  for (const Proto x : {Proto::simple, Proto::ll, Proto::ll128}) {
    if (p.name == algorithms::nccl::protocol_name(x)) {
      return x;
    }
  }
  return std::nullopt;
}

/// The most payload bytes per second one thread block (channel) of algorithm `a` moves with
/// protocol `p` (0: no bound but the links'). tuning.cc caps the bus bandwidth of the protocols
/// that the GPU's copy loop, not the link, limits: Ring and Tree LL128 at perChMax*LL128Bw per
/// search channel, Tree Simple at perChMaxTreeBw, NVLSTree at perChMaxNVLSTreeBw, LL at llMaxBw
/// in all. A search channel runs as comm->nChannels / graph->nChannels thread blocks (connect.cc
/// duplicates them), so one block moves graph channels x cap / comm channels (Tree Simple: the
/// cap per block, below); LL's cap is shared
/// by the `streams` channels the call runs. LL's is the single-node value of the GPU generation
/// (llMaxBws' N1 column) at every node count: the N2 and N4 columns are rows of CPU vendors
/// (Intel-N2, AMD-N2, ...) that cap a network-bound bus bandwidth, which collsim's NIC links
/// price already, while a thread block's LL copy loop is the GPU's. Shared out over 64 streams, the
/// 2-node value (39 GB/s on Intel hosts) held every hop of a 2 x 8 B200 tree for 7 us per
/// 4 KiB line group and made 128 KiB allreduces 3x too slow.
double stream_cap_gbs(Algo a, Proto p, const NcclModelInputs& in, std::uint32_t streams) {
  using namespace nccl_detail;
  const std::size_t cci = cc_index(in.compute_capability);
  const std::size_t idx2 = in.nodes <= 2 ? in.nodes - 1 : 2;
  const double comm = std::max<double>(in.comm_channels, 1.0);
  if (p == Proto::ll && (a == Algo::ring || a == Algo::tree)) {
    return kLlMaxBw[cci][0] / std::max<double>(streams, 1.0);
  }
  if (a == Algo::ring && p == Proto::ll128) {
    return in.ring.channels * kPerChMaxRingLl128Bw[cci][idx2] / comm;
  }
  if (a == Algo::tree && p == Proto::ll128) {
    return in.tree.channels * kPerChMaxTreeLl128Bw[cci][idx2] / comm;
  }
  if (a == Algo::tree && p == Proto::simple) {
    // Per block, not shared by the blocks that duplicate a search channel (see the comment above
    // the function): a tree Simple slice travelling alone does not share its path with the
    // duplicate's, and where the duplicates do run together the links and NICs they cross bound
    // them. Measured: the 2 x p4de log's single-slice rows (2 - 16 MiB, 1 MiB slices) need about
    // this rate a hop, while its 256 MiB - 1 GiB rows are bound by the 4 EFA NICs that 8 GPUs
    // share (docs/validation.md, "p4d and p4de run Simple only").
    return kPerChMaxTreeBw[cci][idx2];
  }
  if (a == Algo::nvls_tree && in.nodes > 1 && in.ranks > 1) {
    // perChMaxNVLSTreeBw (2.28.3 on: Hopper 57.7 GB/s a search channel on two nodes, 45.5 from
    // four; Blackwell 96 and 80; NVLSTree is off on one node) bounds the bus bandwidth below
    // NVLink's and the network's terms on two nodes: the kernel splits each block's warps into
    // scatter, gather, reduce-and-send-up and receive-and-broadcast groups
    // (src/device/all_reduce.h, RunWorkColl NCCL_ALGO_NVLS_TREE), so a block moves less than its
    // links would carry. The search channels run as nvlsChannels blocks; a block's bus share is
    // p / (2(p-1)) of its slice of the buffer, which its scatter group, one of its streams, sends
    // whole to the switch: at this rate that group paces the block at NCCL's bound, and the
    // tree's groups (a head's 1/m of the slice, twice at a tree's root) are not held back.
    const double p_ranks = in.ranks;
    return in.nvls.channels * kPerChMaxNvlsTreeBw[cci][idx2] /
           std::max<double>(in.nvls_channels, 1.0) * p_ranks / (2.0 * (p_ranks - 1.0));
  }
  return 0.0;
}

/// The share of NCCL's NVLink rate that an A100's thread blocks reach when they write their data
/// into the peer GPU's buffer, as LL and LL128 must (each line carries its flag, so the receiver
/// polls its own memory; prims_ll.h, prims_ll128.h). Simple reads instead on A100 NVLink: NCCL
/// turns P2P read on for sm80 GPUs joined by NVLink only (src/graph/paths.cc ncclTopoCheckP2p,
/// "Enable P2P Read for Ampere/NVLink only"; src/transport/p2p.cc places the Simple buffer at the
/// sender), the direction in which its 20 GB/s per link holds. Measured, not fitted to a shared
/// log: on a published one-node sweep of 8 A100-SXM4-40GB (tests/data/published/
/// galvatron_1x8_a100_40gb_allreduce_nccl-tests.txt) the ring LL128 rows gain 140 GB/s of bus
/// bandwidth from 4 to 8 MiB and 133 from 8 to 16 MiB, 0.60 of the 225 GB/s that LL128 would
/// reach at 20 GB/s per link; the shared 1 x 8 A100 log gains 133 (docs/validation.md).
inline constexpr double kAmpereNvlinkWriteShare = 0.6;

/// The share of a V100's NVLink 2 links that its thread blocks reach, in place of NCCL's 20 of 25
/// GB/s (SM70_NVLINK_BW, which NCCL's own choice keeps): measured, not fitted to a shared log. A
/// published all_reduce_perf of 8 V100-SXM2 on the hybrid cube-mesh (OCI BM.GPU3.8, NCCL of NGC's
/// TensorFlow 24.06 container; oracle-japan/ocitutorials,
/// tutorials/_hpc/spinup-ml-instance-cntnd.md) takes 13867 us for 1 GiB, 135.5 GB/s of bus
/// bandwidth over the ring's 6 links a GPU: 22.6 GB/s a link, 0.90 of 25, where NCCL's 20 GB/s
/// gives 120 (13 % slow). A100 and H100 runs reach NCCL's figures (228 - 232 GB/s at 1 GiB on 12
/// links, 370 on 18; docs/stacks.md), so only sm70 moves.
inline constexpr double kVoltaNvlinkShare = 135.5 / 150.0;

/// Data bytes per link byte inside a node, as NCCL rates a GPU's links (src/graph/topo.h): an
/// NVLink moves SM80_NVLINK_BW = 20.0 GB/s of a 25 GB/s link on Ampere and earlier, SM90 20.6
/// of 25, SM100 40.1 of 50 (packet headers and flow control); PCIe width x speed / 80, 12 GB/s
/// of a Gen3 x16's 15.75. NVLS multicast and in-switch reductions reach nvlsEfficiency of that
/// (tuning.cc: 0.85 on sm90, 0.74 on sm100); LL and LL128 on A100 NVLink the write share above.
/// The topology keeps nominal link rates.
double intra_efficiency(Algo a, std::optional<Proto> p, const NcclModelInputs& in,
                        const core::Topology& t) {
  using namespace nccl_detail;
  if (t.is_full_mesh()) {
    return 1.0; // a textbook platform: its links are what they say
  }
  double eff = !in.nvlink                    ? kPciScale
               : in.compute_capability == 70 ? kVoltaNvlinkShare
                                             : nvlink_scale(in.compute_capability);
  if (a == Algo::nvls || a == Algo::nvls_tree) {
    eff *= kNvlsEfficiency[cc_index(in.compute_capability)];
  }
  if (in.nvlink && in.compute_capability == 80 && p && *p != Proto::simple) {
    eff *= kAmpereNvlinkWriteShare;
  }
  return eff;
}

/// Whether some GPU of `s` both sends to and receives from GPUs of its node over routes staged
/// through host memory (PCIe peer-to-peer off: NCCL's SHM transport, src/transport/shm.cc, where
/// the sender's kernel stores into a host buffer and the receiver's kernel loads from it, without
/// copy engines unless NCCL_SHM_USE_CUDA_MEMCPY). A ring of two or more ranks does; a two-rank
/// broadcast or reduce does not: one GPU only writes, the other only reads.
bool staged_both_ways(const core::Schedule& s, const core::Topology& t) {
  const auto staged = [&t](core::Rank a, core::Rank b) {
    // An in-network agent's messages are not a GPU's.
    return a < t.rank_count() && b < t.rank_count() &&
           t.staged_between(t.device_of(a), t.device_of(b));
  };
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    bool sends = false;
    bool receives = false;
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r) && !(sends && receives); ++id) {
      const core::OpKind k = s.kind(id);
      const bool into = k == core::OpKind::recv || k == core::OpKind::recv_reduce;
      if ((k == core::OpKind::send || into) && staged(r, s.route_peer(id))) {
        (into ? receives : sends) = true;
      }
    }
    if (sends && receives) {
      return true;
    }
  }
  return false;
}

/// The share of the staged rate that two-way traffic through host memory keeps
/// (topology.node.pcie.staged_duplex_efficiency), where `s` moves data both ways; 1 elsewhere.
/// NCCL's maintainers: on two GPUs "Broadcast and Reduce are unidirectional ... contrary to other
/// operations which are bidirectional. Some components (in particular some CPUs) do not handle
/// bidirectional traffic well" (NVIDIA/nccl#384, where SHM gave broadcast 10.31 GB/s and allreduce
/// 3.9 GB/s of bus bandwidth on one PCIe Gen3 x16 box).
double staged_duplex_share(const core::Schedule& s, const core::Topology& t,
                           const core::TopologySpec* spec) {
  if (spec == nullptr || spec->kind != "system" || t.is_full_mesh()) {
    return 1.0;
  }
  const double eff = spec->system.node.pcie.staged_duplex_efficiency;
  return eff < 1.0 && staged_both_ways(s, t) ? eff : 1.0;
}

/// The network transport's payload bytes per line byte: the node's NIC kind
/// (topology.node.nic_efficiency; 1 where the scenario gives none).
double nic_efficiency(const core::TopologySpec* spec) {
  if (spec == nullptr || spec->kind != "system") {
    return 1.0;
  }
  return spec->system.node.nic_efficiency;
}

/// Submitting one cudaMemcpyAsync: "approximately 5-7 us" per call (DualPath, arXiv 2602.21548,
/// section 5.2); the low end, as nccl-tests issues its calls back to back and each submission
/// overlaps the previous copy.
constexpr double kMemcpyAsyncSeconds = 5e-6;

/// NCCL on one rank launches no kernel: out of place it copies the send buffer into the receive
/// buffer with one cudaMemcpyAsync, in place it does nothing (src/enqueue.cc calls
/// ncclLaunchOneRank, src/device/onerank.cu; only a PreMulSum runs a kernel). The generated
/// schedule has no operations; the copy is priced at the GPU's copy bandwidth, and the call's
/// start at a cudaMemcpyAsync's instead of the kernel's base latency.
core::Schedule single_rank(const core::Schedule& s) {
  core::ScheduleHeader h = s.header();
  const std::uint64_t n = std::min<std::uint64_t>(h.bytes.value, h.data_bytes);
  h.tmp_bytes = std::max<std::uint64_t>(h.tmp_bytes, n);
  h.protocol.launch = core::Seconds{kMemcpyAsyncSeconds};
  core::Schedule out(h);
  out.begin_rank(0);
  if (n > 0) {
    out.copy({core::Buffer::data, 0, n}, {core::Buffer::tmp, 0, n});
  }
  for (core::Rank r = 1; r < s.participants(); ++r) {
    out.begin_rank(r);
  }
  out.finish();
  return out;
}

/// StepPerSlice of NCCL's Simple protocol: ALLREDUCE_SLICESTEPS = NCCL_STEPS / 4 where a chunk
/// has two slices (the ring allreduce, allgather and reduce-scatter), else 1 (collectives.h).
std::uint64_t steps_per_slice(core::CollectiveKind c, Algo a) {
  return slices_per_chunk(c, a) == 2 ? kSteps / 4 : 1;
}

/// Messages in flight per connection (core::Protocol::fifo_slots): a connection's FIFO has
/// NCCL_STEPS slots (src/include/device.h). A Simple piece is one slice of StepPerSlice steps
/// (ring allreduce, allgather and reduce-scatter: ALLREDUCE_SLICESTEPS = NCCL_STEPS / 4 = 2;
/// the others ProtoSimple<1, 1>: 1); an LL or LL128 message is one step, cut into at most
/// kCutThroughPieces pieces.
std::uint32_t fifo_slots(core::CollectiveKind c, Algo a, Proto p) {
  if (p != Proto::simple) {
    return static_cast<std::uint32_t>(kSteps * kCutThroughPieces);
  }
  return static_cast<std::uint32_t>(kSteps / steps_per_slice(c, a));
}

/// The connections a rank's messages to NVLS's switch stand for. NCCL gives each rank one NVLS
/// connection per head (src/graph/connect.cc connectNvls: nvls.up[h] for h < nHeads, the NVLS
/// graph's channels, at most NCCL_MAX_NVLS_ARITY), and the NVLS kernel scatters one chunk to every
/// head per loop, each over its own connection and FIFO (src/device/all_reduce.h,
/// prims.scatter over nvls->up). collsim's NVLS schedule sends a rank's shards to one switch
/// agent, so that one connection holds the heads' FIFOs together: with one connection's slots, 72
/// shards on a 72-GPU NVLink domain went through 8 at a time and an 8-byte allreduce took five
/// round trips (125 us) where NCCL's own model says one (25 us). NVLS-tree keeps a connection's
/// slots: its connections between nodes are the tree's own.
std::uint32_t connections_per_peer(Algo a, const NcclModelInputs& in) {
  return a == Algo::nvls ? std::max<std::uint32_t>(in.nvls.channels, 1) : 1;
}

/// The network proxy's time per message between nodes (core::Protocol::proxy_overhead). NCCL
/// runs one proxy thread per GPU that posts the network operations of all its channels, one per
/// slice of sliceSteps steps (src/transport/net.cc sendProxyProgress and recvProxyProgress advance
/// `posted` by args->sliceSteps; a received Simple slice over GPUDirect is also flushed), and its
/// own model charges each the post overhead NCCL_NET_OVERHEAD (tuning.cc getNetOverhead: 1 us on
/// Intel hosts, 2 us on AMD, unless the variable sets it), three times with Simple ("Inter-node
/// rings still have to launch nsteps * net overhead"). A Simple message here is one slice; an LL or
/// LL128 slice (one step) is kCutThroughPieces messages.
core::Seconds proxy_overhead(Proto p, const NcclModelInputs& in, const NcclEnv& env) {
  const double per_slice =
      nccl_detail::net_overhead_us(in.cpu, env.net_overhead_us) * (p == Proto::simple ? 3.0 : 1.0);
  const double share = p == Proto::simple ? 1.0 : 1.0 / static_cast<double>(kCutThroughPieces);
  return core::Seconds{per_slice * share * 1e-6};
}

/// What a network step of NCCL's own IB verbs transport takes beyond NCCL's tuning constants
/// (tuning.cc's NET hwLat: 2.7 us for a ring LL step, 5 for a tree's; the IB transport reports no
/// latency of its own, ncclNetProperties_t.latency 0). Measured: an 8 B allreduce of two A100s on
/// two nodes over HDR InfiniBand (a ring LL: NCCL's LL base latency, 6.6 us, and two network
/// steps) takes 19.9 us (NVIDIA/nccl-tests#150), so a step takes 6.65 us, 3.95 more than NCCL's
/// 2.7. What the step holds that the constants miss (src/transport/net.cc): the sender's LL buffer
/// for the network is host memory even with GPUDirect RDMA, so the kernel's stores cross PCIe into
/// host memory; the proxy thread posts the send only once it has seen the size the kernel wrote
/// into the connection FIFO and every line's flags; the NIC reads the data back from host memory.
constexpr double kIbTransportStepSeconds = 3.95e-6;

/// The physical time NCCL's network transport adds to each step between nodes on `spec`'s NICs:
/// kIbTransportStepSeconds where NCCL uses its own IB verbs transport (an InfiniBand or RoCE NIC
/// kind, or NICs of no named kind) and no plugin reports a latency (`nccl.net_latency` 0). A
/// plugin's path is priced by its own figures instead (`plugin_step` below, or net_latency).
core::Seconds transport_step(const core::TopologySpec* spec, const core::NcclSpec& nccl) {
  if (spec == nullptr || spec->kind != "system" || nccl.net_latency.value > 0.0) {
    return core::Seconds{0.0};
  }
  const std::string& kind = spec->system.node.nic_kind;
  const topologies::NicKind* k = kind.empty() ? nullptr : topologies::find_nic_kind(kind);
  const bool ib = kind.empty() || (k != nullptr && k->nccl_ib_transport);
  return core::Seconds{ib ? kIbTransportStepSeconds : 0.0};
}

/// The whole step between nodes on a network plugin's path, where the scenario gives it
/// (`nccl.net_step`; `nccl.net_step_simple` for Simple): nullopt where it gives none.
std::optional<core::Seconds> plugin_step(Proto p, const core::NcclSpec& nccl) {
  if (p == Proto::simple && nccl.net_step_simple.value >= 0.0) {
    return nccl.net_step_simple;
  }
  if (nccl.net_step.value >= 0.0) {
    return nccl.net_step;
  }
  return std::nullopt;
}

/// The scenario's corrections of protocol `p` (`nccl.ll`, `nccl.ll128`, `nccl.simple`).
const core::NcclProtocolSpec& protocol_spec(Proto p, const core::NcclSpec& nccl) {
  return p == Proto::ll ? nccl.ll : p == Proto::ll128 ? nccl.ll128 : nccl.simple;
}

/// The scenario's correction of `p`'s protocol (none for a schedule without NCCL's protocol).
void correct(core::Protocol& p, const core::NcclSpec& nccl) {
  const std::optional<Proto> proto = proto_of(p);
  if (!proto) {
    return;
  }
  const core::NcclProtocolSpec* spec = &protocol_spec(*proto, nccl);
  p.launch = p.launch + nccl.call_overhead;
  p.message_latency = core::Seconds{p.message_latency.value * spec->latency_factor};
  p.inter_node_latency = core::Seconds{p.inter_node_latency.value * spec->latency_factor};
  p.efficiency *= spec->efficiency_factor;
}

/// What NCCL's NVLS pipeline on one node adds to each of the schedule's two NVLS messages on the
/// way (to the switch and back; nccl_nvls.cpp). The route between two GPUs of the node gives the
/// poll, a round trip through the switch (twice its latency), and the data rate, its bottleneck at
/// `p`'s efficiencies, as the engines rate the schedule's messages. NCCL's chunk starts at the
/// Simple step, at most NCCL_NVLS_CHUNKSIZE (enqueue.cc: maxChunkSize = comm->nvlsChunkSize).
core::Seconds nvls_pipeline_share(const core::Schedule& s, const NcclModelInputs& in,
                                  const core::Topology& t, const core::Protocol& p,
                                  std::uint64_t simple_buffer, const NcclEnv& env) {
  const core::RouteCost route = t.route_cost(0, 1);
  const core::Bandwidth rate{route.bottleneck.bytes_per_second * p.intra_node_efficiency *
                             p.efficiency};
  const std::uint64_t start = std::min(
      simple_buffer / kSteps, env.nvls_chunk_size.value_or(algorithms::nccl::kNvlsChunkBytes));
  const core::Seconds added = nvls_pipeline_time(s.header().bytes.value, in, start,
                                                 core::Seconds{2.0 * route.latency.value}, rate);
  return core::Seconds{added.value / 2.0};
}

class NcclStack final : public Stack {
public:
  [[nodiscard]] const StackInfo& info() const override { return info_; }
  [[nodiscard]] bool runs(const algorithms::AlgorithmInfo& algo) const override {
    return nccl_lowering_algo(algo).has_value();
  }
  [[nodiscard]] core::Schedule lower(core::Schedule schedule,
                                     const LowerContext& ctx) const override {
    if (schedule.ranks() == 1 && schedule.op_count() == 0 && schedule.header().bytes.value > 0) {
      schedule = single_rank(schedule);
    }
    core::Protocol p = schedule.header().protocol;
    correct(p, ctx.nccl);
    // Each channel is a thread block driving its own connection (src/device/common.h: one
    // block per channel; the proxy thread posts each net connection's sends on its NIC), so a
    // GPU's NVLink and NIC traffic overlap instead of taking turns at one LogGP port.
    p.port_per_link = true;
    schedule.set_protocol(p);
    const NcclEnv env = parse_nccl_env(ctx.nccl); // the proxy's post overhead, the Simple step
    // NCCL_BUFFSIZE sets the Simple step, and so the smallest slice (a `buffsize` pinned with
    // --param alone sizes the chunks, not this floor) and where NVLS's chunk starts.
    const std::uint64_t buffer = env.buffer[static_cast<std::size_t>(Proto::simple)].value_or(
        algorithms::nccl::kDefaultSimpleBuffer);
    const std::optional<Algo> algo = nccl_lowering_algo(ctx.algorithm);
    const std::optional<Proto> proto = proto_of(p);
    const std::uint32_t ranks = schedule.header().full_ranks(); // a collapsed one's too
    if (algo && proto) {
      const double share = algorithms::nccl::inter_node_latency_share(*algo);
      if (const std::optional<core::Seconds> step = plugin_step(*proto, ctx.nccl)) {
        // The plugin's own figure is the whole step: it stands for NCCL's NET constant too
        // (tuning.cc's hwLatencies[NET] describe NCCL's IB transport), as in AWS's tuner model,
        // which prices an inter-node step at its net_lat alone (aws-ofi-nccl
        // src/tuner/nccl_ofi_model.cpp). Scaled like the constant it replaces (`correct`).
        p.inter_node_latency =
            core::Seconds{step->value * share * protocol_spec(*proto, ctx.nccl).latency_factor};
      } else {
        // The latency the plugin reports to NCCL (ncclNetProperties_t.latency): tuning.cc adds
        // it to interLat, once more with Simple for the flush of each received step.
        const double times = *proto == Proto::simple ? 2.0 : 1.0;
        p.inter_node_latency = p.inter_node_latency +
                               core::Seconds{ctx.nccl.net_latency.value * times * share} +
                               transport_step(ctx.topology_spec, ctx.nccl);
      }
    }
    if (algo && ranks > 1 && ranks <= ctx.topology.rank_count()) {
      const NcclModelInputs in = ctx.topology_spec != nullptr
                                     ? nccl_inputs(*ctx.topology_spec, ctx.topology, ranks)
                                     : nccl_inputs(ctx.topology, ranks);
      p.intra_node_efficiency = intra_efficiency(*algo, proto, in, ctx.topology) *
                                staged_duplex_share(schedule, ctx.topology, ctx.topology_spec);
      p.inter_node_efficiency = nic_efficiency(ctx.topology_spec);
      if (proto) {
        const double cap = stream_cap_gbs(*algo, *proto, in, schedule.stream_count());
        if (cap > 0.0) {
          p.stream_bandwidth = core::Bandwidth{cap * 1e9};
        }
        p.fifo_slots = fifo_slots(schedule.header().collective, *algo, *proto) *
                       connections_per_peer(*algo, in);
        if (in.nodes > 1 && !ctx.topology.is_full_mesh()) { // a textbook platform has none
          p.proxy_overhead = proxy_overhead(*proto, in, env);
        }
        if (*algo == Algo::nvls && in.nodes == 1 &&
            schedule.header().collective == core::CollectiveKind::allreduce &&
            !ctx.topology.is_full_mesh()) {
          p.message_latency =
              p.message_latency + nvls_pipeline_share(schedule, in, ctx.topology, p, buffer, env);
        }
      }
    }
    schedule.set_protocol(p);
    if (!algo || !proto) {
      return schedule; // e.g. NVLS's plain multicast messages: nothing to pipeline
    }
    const core::CollectiveKind c = schedule.header().collective;
    return split_messages(schedule, [c, a = *algo, pr = *proto, buffer](std::uint64_t length) {
      return nccl_pieces(c, a, pr, length, buffer);
    });
  }

private:
  StackInfo info_{
      "nccl",
      "NCCL's algorithms and point-to-point exchanges as NCCL moves them: protocol latency and "
      "efficiency, chunks pipelined through the FIFO in slices (Simple) or lines (LL, LL128), "
      "per-channel rates, links shared inside a node",
      "NCCL src/device/prims_simple.h, prims_ll.h, prims_ll128.h, src/include/collectives.h, "
      "src/graph/tuning.cc, src/graph/search.cc, src/transport/shm.cc, src/enqueue.cc",
      Chooser::nccl, true};
};

} // namespace

std::optional<Algo> nccl_algo_of(const algorithms::AlgorithmInfo& algo) {
  for (const Algo a : {Algo::tree, Algo::ring, Algo::collnet_direct, Algo::collnet_chain,
                       Algo::nvls, Algo::nvls_tree, Algo::pat}) {
    std::string alias = "nccl:";
    for (const char ch : algorithms::nccl::algo_name(a)) {
      alias += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    if (std::find(algo.aliases.begin(), algo.aliases.end(), alias) != algo.aliases.end()) {
      return a;
    }
  }
  return std::nullopt;
}

bool is_nccl_p2p(const algorithms::AlgorithmInfo& algo) {
  return std::find(algo.aliases.begin(), algo.aliases.end(), "nccl:p2p") != algo.aliases.end();
}

std::optional<Algo> nccl_lowering_algo(const algorithms::AlgorithmInfo& algo) {
  if (is_nccl_p2p(algo)) {
    return Algo::ring;
  }
  return nccl_algo_of(algo);
}

std::uint32_t slices_per_chunk(core::CollectiveKind c, Algo a) {
  const bool bulk = c == core::CollectiveKind::allreduce || c == core::CollectiveKind::allgather ||
                    c == core::CollectiveKind::reduce_scatter;
  return a == Algo::ring && bulk ? 2 : 1; // CHUNKSTEPS / SLICESTEPS (collectives.h)
}

std::uint32_t nccl_pieces(core::CollectiveKind c, Algo a, Proto p, std::uint64_t length,
                          std::uint64_t simple_buffer) {
  if (length == 0) {
    return 1;
  }
  if (p != Proto::simple) {
    const std::uint64_t most = std::max<std::uint64_t>(length / kCutThroughMin, 1);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(kCutThroughPieces, most));
  }
  const std::uint64_t spc = slices_per_chunk(c, a);
  // sliceSize = max(divUp(nelem, 16 x SlicePerChunk) x 16, stepSize x StepPerSlice / 32), in
  // bytes for 4-byte elements (16 elements: 64 bytes).
  const std::uint64_t floor_bytes = simple_buffer / kSteps * steps_per_slice(c, a) / 32;
  const std::uint64_t unit = 64;
  const std::uint64_t slice =
      std::max((length + unit * spc - 1) / (unit * spc) * unit, floor_bytes);
  return static_cast<std::uint32_t>((length + slice - 1) / slice);
}

std::unique_ptr<Stack> make_nccl_stack() {
  return std::make_unique<NcclStack>();
}

} // namespace collsim::stacks

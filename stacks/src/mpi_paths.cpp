#include "mpi_paths.hpp"

#include "nccl_model_constants.hpp"

#include "collsim/stacks/mpi_env.hpp"
#include "collsim/stacks/nccl_model.hpp"
#include "collsim/stacks/nccl_stack.hpp"
#include "collsim/topologies/build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

namespace collsim::stacks::detail {
namespace {

/// The data rates of a GPU node's links (mpi_paths.hpp): NVLink's or PCIe's inside
/// the node, the NIC kind's between nodes.
void link_rates(core::Protocol& p, const LowerContext& ctx, std::uint32_t ranks) {
  const NcclModelInputs in = ctx.topology_spec != nullptr
                                 ? nccl_inputs(*ctx.topology_spec, ctx.topology, ranks)
                                 : nccl_inputs(ctx.topology, ranks);
  p.intra_node_efficiency =
      in.nvlink ? nccl_detail::nvlink_scale(in.compute_capability) : nccl_detail::kPciScale;
  if (ctx.topology_spec != nullptr && ctx.topology_spec->kind == "system") {
    p.inter_node_efficiency = ctx.topology_spec->system.node.nic_efficiency;
  }
}

} // namespace

core::Schedule gpu_direct(core::Schedule s, const LowerContext& ctx) {
  if (ctx.buffers != Buffers::device || !on_gpus(s, ctx.topology) || s.header().full_ranks() < 2) {
    return s;
  }
  core::Protocol p = s.header().protocol;
  p.port_per_link = true;
  link_rates(p, ctx, s.header().full_ranks());
  s.set_protocol(p);
  return s;
}

bool over_efa(const LowerContext& ctx) {
  return ctx.topology_spec != nullptr && ctx.topology_spec->kind == "system" &&
         ctx.topology_spec->system.node.nic_kind == "efa";
}

namespace {

/// libfabric v1.18.0's efa provider (mpi_paths.hpp), its protocols chosen per message as
/// rxr_msg_select_rtm does (prov/efa/src/rdm/rxr_msg.c):
/// - between nodes: one packet (eager) or several (medium) without a handshake up to
///   FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE; above it the long-CTS protocol, whose receiver grants
///   tx_min_credits packets of payload a time and the next grant once they are in
///   (rxr_pkt_type_misc.c: recv_length = tx_min_credits x max_data_payload_size;
///   rxr_pkt_type_data.c posts the next CTS when the window is used up): a handshake per window;
///   from FI_EFA_INTER_MIN_READ_MESSAGE_SIZE the receiver reads the message by RDMA read after
///   one handshake. A packet carries about the MTU, 8 KiB (man/fi_efa.7.md).
/// - inside a node through the shm provider: eager up to FI_EFA_SHM_MAX_MEDIUM_SIZE, above it
///   the long-read protocol (the receiver reads, then an end-of-read back: one handshake). In
///   v1.18.0 shm's read never takes the single-copy CMA path (smr_select_proto tests
///   `cma_avail && FI_HMEM_SYSTEM`, a constant 0; v1.18.1 compares the buffer's iface), so
///   every byte is copied twice, through shm's bounce buffers, as its eager messages are.
void efa_protocols(core::Protocol& p, const EfaEnv& efa) {
  constexpr std::uint64_t kPacketBytes = 8192;
  // A message that fits one packet goes eager whatever the medium limit (rxr_msg_select_rtm
  // tests eager before medium).
  p.rendezvous_bytes = std::max(kPacketBytes, efa.inter_max_medium_bytes);
  p.rendezvous_window_bytes = efa.tx_min_credits * kPacketBytes;
  // libfabric's 0 reads every message (total_len >= 0); the protocol's 0 would mean never.
  p.rendezvous_read_bytes = std::max<std::uint64_t>(1, efa.inter_min_read_bytes);
  p.intra_node_rendezvous_bytes = efa.shm_max_medium_bytes;
  if (p.intra_node_overhead.value < 0) {
    p.intra_node_efficiency *= 0.5;
  }
}

/// True where every rank of `s` is a CPU core of `t` (an MPI process pinned to it).
bool on_cores(const core::Schedule& s, const core::Topology& t) {
  if (t.is_full_mesh() || s.ranks() > t.rank_count()) {
    return false;
  }
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    if (t.devices()[t.device_of(r)].kind != core::DeviceKind::core) {
      return false;
    }
  }
  return true;
}

/// An MPI process is one core: it copies a message to another process of its node (a single
/// copy over CMA or XPMEM, two through a FIFO or bounce buffers: the protocol's intra-node
/// efficiency) at half the core's memory bandwidth, and reduces at a third of it
/// (topologies::core_memory_bandwidth), not at its NUMA domain's, which is the route's rate and
/// all the cores' together. Not where the library moves small cells of its own shared segment
/// that its peers read (HCOLL's basesmuma, MPICH's release_gather: intra_node_overhead set),
/// whose cells and their reductions stay in the caches.
void core_rates(core::Protocol& p, const core::Schedule& s, const LowerContext& ctx) {
  if (ctx.topology_spec == nullptr || ctx.topology_spec->kind != "system" ||
      p.intra_node_overhead.value >= 0 || !on_cores(s, ctx.topology)) {
    return;
  }
  const double core =
      topologies::core_memory_bandwidth(ctx.topology_spec->system.node.cpu).bytes_per_second;
  p.core_copy_bandwidth = core::Bandwidth{core / 2};
  p.core_reduce_bandwidth = core::Bandwidth{core / 3};
}

} // namespace

core::Schedule host_protocols(core::Schedule s, const LowerContext& ctx) {
  const MpiEnv env = parse_mpi_env(ctx.mpi);
  core::Protocol p = s.header().protocol;
  p.launch = core::Seconds{p.launch.value + env.call_overhead.value};
  core_rates(p, s, ctx);
  if (over_efa(ctx)) {
    efa_protocols(p, env.efa);
    s.set_protocol(p);
    return s;
  }
  p.rendezvous_bytes = env.rendezvous_bytes;
  if (env.shared_memory == SharedMemoryCopies::two && p.intra_node_overhead.value < 0) {
    // Each byte copied twice by the cores, into the shared FIFO and out of it (mpi_env.hpp):
    // half the rate of the single copy a route inside the node prices. Not where the library
    // moves data in shared memory of its own (HCOLL's basesmuma, MPICH's release_gather).
    p.intra_node_efficiency *= 0.5;
  }
  s.set_protocol(p);
  return s;
}

core::Schedule over_ucx(core::Schedule s, const LowerContext& ctx) {
  if (ctx.buffers == Buffers::device && on_gpus(s, ctx.topology)) {
    return ucx_device_protocols(gpu_direct(std::move(s), ctx), ctx);
  }
  return host_protocols(std::move(s), ctx);
}

core::Schedule ucx_device_protocols(core::Schedule s, const LowerContext& ctx) {
  if (s.header().full_ranks() < 2) {
    return s;
  }
  const MpiEnv env = parse_mpi_env(ctx.mpi);
  core::Protocol p = s.header().protocol;
  p.rendezvous_bytes = env.rendezvous_bytes;
  s.set_protocol(p);
  return ucx_copies(std::move(s), env.rendezvous_bytes, ctx.topology);
}

core::Schedule staged(const core::Schedule& s, const LowerContext& ctx, const HostCosts& costs) {
  core::Schedule out = stage_through_host(s, ctx.topology, costs);
  core::Protocol p = out.header().protocol;
  link_rates(p, ctx, s.header().full_ranks());
  p.intra_node_efficiency = nccl_detail::kPciScale; // the staging copies cross PCIe
  out.set_protocol(p);
  return out;
}

namespace {

bool is_reduction(core::OpKind k) {
  return k == core::OpKind::recv_reduce || k == core::OpKind::reduce;
}

bool is_message(core::OpKind k) {
  return k == core::OpKind::send || k == core::OpKind::recv || k == core::OpKind::recv_reduce;
}

/// Operation `id` of `s` added to the rank `out` is building, waiting for `deps` (its own,
/// renumbered).
std::uint32_t add_again(core::Schedule& out, const core::Schedule& s, core::OpId id,
                        std::span<const std::uint32_t> deps) {
  const core::OpKind kind = s.kind(id);
  if (kind == core::OpKind::calc) {
    return out.calc(s.calc_time(id), deps);
  }
  const bool sourced = kind == core::OpKind::reduce || kind == core::OpKind::copy;
  return out.add(kind, is_message(kind) ? s.route_peer(id) : 0, s.target(id),
                 sourced ? s.source(id) : core::Range{}, deps);
}

/// Per local operation of participant r: true where the step's reduction goes on, a later
/// reduction into the same range depending on it while no send reads the partial result (a
/// recursive-doubling step sends what it reduced: the next reduction is another step).
std::vector<bool> continued(const core::Schedule& s, core::Rank r) {
  const core::OpId base = s.rank_begin(r);
  const std::size_t n = s.rank_end(r) - base;
  std::vector<bool> reduced_on(n, false);
  std::vector<bool> sent(n, false);
  for (core::OpId id = base; id < s.rank_end(r); ++id) {
    for (const std::uint32_t d : s.deps(id)) {
      if (s.kind(id) == core::OpKind::send) {
        sent[d] = true;
      } else if (is_reduction(s.kind(id)) && is_reduction(s.kind(base + d)) &&
                 s.target(base + d) == s.target(id)) {
        reduced_on[d] = true;
      }
    }
  }
  std::vector<bool> out(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = reduced_on[i] && !sent[i];
  }
  return out;
}

} // namespace

core::Schedule after_reductions(core::Schedule s, core::Seconds seconds) {
  std::size_t ops = s.op_count();
  std::size_t deps = 0;
  std::vector<std::vector<bool>> more(s.participants());
  for (core::Rank r = 0; r < s.participants(); ++r) {
    more[r] = continued(s, r);
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      deps += s.deps(id).size();
      if (is_reduction(s.kind(id)) && !more[r][id - s.rank_begin(r)]) {
        ++ops;
        ++deps;
      }
    }
  }
  if (ops == s.op_count()) {
    return s; // no reduction: nothing to wait for
  }
  core::Schedule out(s.header());
  out.reserve(ops, deps);
  std::vector<std::uint32_t> at; // per local operation: what its dependents now wait for
  std::vector<std::uint32_t> mapped;
  for (core::Rank r = 0; r < s.participants(); ++r) {
    out.begin_rank(r);
    const core::OpId base = s.rank_begin(r);
    at.assign(s.rank_end(r) - base, 0);
    for (core::OpId id = base; id < s.rank_end(r); ++id) {
      mapped.clear();
      for (const std::uint32_t d : s.deps(id)) {
        mapped.push_back(at[d]);
      }
      out.set_stream(s.stream(id));
      const core::OpKind kind = s.kind(id);
      std::uint32_t op = add_again(out, s, id, mapped);
      if (is_reduction(kind) && !more[r][id - base]) {
        op = out.calc(seconds, std::span<const std::uint32_t>(&op, 1));
      }
      at[id - base] = op;
    }
  }
  out.finish();
  return out;
}

core::Seconds gdr_read(std::uint64_t bytes) {
  return core::Seconds{kGdrReadSeconds + static_cast<double>(bytes) / kGdrReadBytesPerSecond};
}

core::Seconds gdr_write(std::uint64_t bytes) {
  return core::Seconds{kGdrWriteSeconds + static_cast<double>(bytes) / kGdrWriteBytesPerSecond};
}

core::Schedule ucx_copies(core::Schedule s, std::uint64_t eager_bytes, const core::Topology& t) {
  const auto eager = [&](core::OpId id) {
    return is_message(s.kind(id)) && s.length(id) <= eager_bytes;
  };
  // A rendezvous send from one GPU to another of its node: a cuda_ipc copy on the pair's stream.
  const auto ipc = [&](core::Rank r, core::OpId id) {
    if (s.kind(id) != core::OpKind::send || s.length(id) <= eager_bytes) {
      return false;
    }
    const core::Rank peer = s.route_peer(id);
    return peer < t.rank_count() && r < t.rank_count() &&
           t.devices()[t.device_of(r)].node == t.devices()[t.device_of(peer)].node;
  };
  std::size_t ops = s.op_count();
  std::size_t deps = 0;
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      deps += s.deps(id).size();
      if (eager(id) || ipc(r, id)) {
        ops += 1;
        deps += 2;
      }
    }
  }
  if (ops == s.op_count()) {
    return s; // no eager message and no copy between GPUs of a node
  }
  core::Schedule out(s.header());
  out.reserve(ops, deps);
  std::vector<std::uint32_t> at; // per local operation: what its dependents now wait for
  std::vector<std::uint32_t> mapped;
  std::vector<std::pair<core::Rank, std::uint32_t>> last_copy; // per peer: its last ipc send
  for (core::Rank r = 0; r < s.participants(); ++r) {
    out.begin_rank(r);
    const core::OpId base = s.rank_begin(r);
    at.assign(s.rank_end(r) - base, 0);
    last_copy.clear();
    // The rank's one progress thread packs its eager sends one after another.
    std::optional<std::uint32_t> last_pack;
    for (core::OpId id = base; id < s.rank_end(r); ++id) {
      mapped.clear();
      for (const std::uint32_t d : s.deps(id)) {
        mapped.push_back(at[d]);
      }
      out.set_stream(s.stream(id));
      const core::OpKind kind = s.kind(id);
      const bool of_rank = r < s.ranks(); // an agent's messages are no GPU's
      const bool copies = of_rank && eager(id);
      if (copies && kind == core::OpKind::send) {
        if (last_pack) {
          mapped.push_back(*last_pack);
        }
        last_pack = out.calc(gdr_read(s.length(id)), mapped);
        mapped.assign(1, *last_pack);
      }
      const bool copy_start = of_rank && ipc(r, id);
      auto previous = last_copy.end();
      if (copy_start) {
        const core::Rank peer = s.route_peer(id);
        previous = std::find_if(last_copy.begin(), last_copy.end(),
                                [peer](const auto& e) { return e.first == peer; });
        if (previous != last_copy.end()) {
          mapped.push_back(previous->second);
        }
        const std::uint32_t start = out.calc(core::Seconds{kCudaIpcCopySeconds}, mapped);
        mapped.assign(1, start);
      }
      std::uint32_t op = add_again(out, s, id, mapped);
      if (copy_start) {
        if (previous != last_copy.end()) {
          previous->second = op;
        } else {
          last_copy.emplace_back(s.route_peer(id), op);
        }
      }
      if (copies && kind != core::OpKind::send) {
        op = out.calc(gdr_write(s.length(id)), std::span<const std::uint32_t>(&op, 1));
      }
      at[id - base] = op;
    }
  }
  out.finish();
  return out;
}

bool MpiStack::runs(const algorithms::AlgorithmInfo& algo) const {
  return !nccl_lowering_algo(algo).has_value();
}

std::string MpiStack::refusal(const algorithms::AlgorithmInfo& algo) const {
  return fmt::format("stack '{}' runs MPI algorithms; {} is NCCL's (use --stack nccl or "
                     "openmpi-4.1+ucc+nccl)",
                     info_.name, algo.name);
}

} // namespace collsim::stacks::detail

// The workload generators' phases (docs/workload-format.md): the formulas, with their sources.

#include "collsim/io/workload_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace collsim::io {
namespace {

constexpr std::uint32_t kMaxCalls = 1U << 24;

} // namespace

std::vector<core::WorkloadPhase> data_parallel_phases(double parameters, std::uint32_t dtype_size,
                                                      core::Bytes bucket, double overlap,
                                                      core::WorkloadGroup group,
                                                      const core::SourcePos& pos) {
  // Gradients of every parameter, reduced in buckets: DDP launches a bucket's allreduce as soon
  // as backward has produced all its gradients, so all buckets but the last overlap backward;
  // the last is ready only at its end (Li et al., "PyTorch Distributed", VLDB 2020, section 3.2).
  const auto total = static_cast<std::uint64_t>(std::ceil(parameters)) * dtype_size;
  const std::uint64_t full = total / bucket.value;
  const std::uint64_t rest = total % bucket.value;
  std::vector<core::WorkloadPhase> out;
  core::WorkloadPhase p;
  p.collective = core::CollectiveKind::allreduce;
  p.group = group;
  p.pos = pos;
  const std::uint64_t overlapped = rest > 0 ? full : full - 1;
  if (overlapped > 0) {
    p.name = "gradient buckets";
    p.bytes = bucket;
    p.calls = static_cast<std::uint32_t>(std::min<std::uint64_t>(overlapped, kMaxCalls));
    p.overlap = overlap;
    out.push_back(p);
  }
  p.name = "last gradient bucket";
  p.bytes = core::Bytes{rest > 0 ? rest : bucket.value};
  p.calls = 1;
  p.overlap = 0.0;
  out.push_back(p);
  return out;
}

std::vector<core::WorkloadPhase> transformer_3d_phases(const Transformer3d& t,
                                                       const core::SourcePos& pos) {
  // Megatron-LM's communication per step and rank (docs/workload-format.md): tensor parallelism
  // makes 4 allreduces of the activations (b x s x h) per layer and micro-batch, 2 in the forward
  // pass and 2 in the backward (Shoeybi et al., "Megatron-LM", 2019, section 3 and figure 4);
  // pipeline parallelism sends each micro-batch's activations forward and their gradients back
  // across each stage boundary, b x s x h / t bytes a message with the scatter/gather
  // optimisation (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
  // Clusters Using Megatron-LM", SC21, section 4.1); data parallelism allreduces each rank's
  // share of the gradients, parameters / (t x p), once backward is done (ibid., section 2.1).
  std::vector<core::WorkloadPhase> out;
  core::WorkloadPhase p;
  p.pos = pos;
  const std::uint64_t activations = t.micro_batch * t.sequence * t.hidden;
  if (t.tensor > 1) {
    p.name = "TP allreduce";
    p.collective = core::CollectiveKind::allreduce;
    p.bytes = core::Bytes{activations * t.dtype_size};
    p.calls = 4 * (t.layers / t.pipeline) * t.micro_batches;
    p.group = core::WorkloadGroup::node;
    p.ranks = t.tensor;
    p.overlap = 0.0;
    out.push_back(p);
  }
  if (t.pipeline > 1) {
    // One message is a broadcast between the two ranks of a stage boundary.
    p.name = "PP send/recv";
    p.collective = core::CollectiveKind::bcast;
    p.bytes = core::Bytes{activations * t.dtype_size / t.tensor};
    p.calls = 2 * t.micro_batches;
    p.group = core::WorkloadGroup::pair;
    p.ranks = 2;
    p.overlap = 0.0;
    out.push_back(p);
  }
  if (t.data > 1) {
    p.name = "DP gradient allreduce";
    p.collective = core::CollectiveKind::allreduce;
    p.bytes = core::Bytes{static_cast<std::uint64_t>(
        std::ceil(t.parameters / (t.tensor * t.pipeline)) * t.grad_dtype_size)};
    p.calls = 1;
    p.group = core::WorkloadGroup::across_nodes;
    p.ranks = t.data;
    p.overlap = t.data_overlap;
    out.push_back(p);
  }
  return out;
}

std::vector<core::WorkloadPhase> moe_alltoall_phases(const MoeAllToAll& m,
                                                     const core::SourcePos& pos) {
  // An MoE layer sends every token to its top-k experts and back: a dispatch all-to-all before
  // the experts and a combine all-to-all after them (Lepikhin et al., "GShard", ICLR 2021,
  // section 2.2 and algorithm 2), and the backward pass runs both again for the gradients (4 per
  // layer and micro-batch). Each expert takes at most capacity_factor x its even share of the
  // tokens and the buffers are padded to that capacity (Fedus et al., "Switch Transformers",
  // JMLR 2022, section 2.2), so each rank sends capacity_factor x top_k x b x s tokens of h
  // values, spread over the `experts` ranks of its expert-parallel group.
  core::WorkloadPhase p;
  p.pos = pos;
  p.name = "MoE all-to-all";
  p.collective = core::CollectiveKind::alltoall;
  const double tokens =
      m.capacity_factor * m.top_k * static_cast<double>(m.micro_batch * m.sequence);
  p.bytes = core::Bytes{static_cast<std::uint64_t>(std::ceil(tokens)) * m.hidden * m.dtype_size};
  p.calls = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(4ULL * m.moe_layers * m.micro_batches, kMaxCalls));
  p.group = m.group;
  p.ranks = m.experts;
  p.overlap = m.overlap;
  return {p};
}

std::vector<core::WorkloadPhase> stencil_halo_phases(const StencilHalo& s,
                                                     const core::SourcePos& pos) {
  // A block-decomposed structured grid (the Jacobi iteration of Gropp, Lusk and Skjellum, "Using
  // MPI", 3rd ed., 2014, chapter 4): every exchange sends each of the 2 x dims faces of a rank's
  // block, points^(dims-1) x halo points of `fields` values, to the neighbour across it (a
  // 5-point or 7-point stencil; diagonal neighbours of 9- and 27-point stencils are not counted).
  // The faces are timed one after another: right for the bandwidth they share at the NIC, an
  // upper bound for the latency of faces that are in flight together.
  std::uint64_t face = s.halo;
  for (std::uint32_t d = 1; d < s.dims; ++d) {
    face *= s.points;
  }
  core::WorkloadPhase p;
  p.pos = pos;
  p.name = "halo faces";
  p.collective = core::CollectiveKind::bcast;
  p.group = core::WorkloadGroup::pair;
  p.ranks = 2;
  p.bytes = core::Bytes{face * s.bytes_per_point * s.fields};
  p.calls =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(2ULL * s.dims * s.exchanges, kMaxCalls));
  p.overlap = 0.0;
  return {p};
}

std::vector<core::WorkloadPhase> md_halo_phases(const MdHalo& m, const core::SourcePos& pos) {
  // HOOMD-blue's CPU communicator (hoomd/Communicator.cc): a rank's domain is a box of the
  // global box; particles within the ghost width r = r_cut + r_buff of a face are ghosts of the
  // neighbour across it. Every step, Communicator::updateGhosts sends the ghosts' positions
  // (one Scalar4 each) in 6 directions in turn (east, west, north, south, up, down), each an
  // Isend to one neighbour and an Irecv from the opposite one, waited for before the next
  // direction, because ghosts received in x are forwarded in y and z. When the neighbour list is
  // rebuilt, Communicator::exchangeGhosts sends, per direction, the ghost count (4 bytes) and then
  // each ghost's plan (4 B), tag (4 B) and position. The neighbour list's distance check is an
  // MPI_Allreduce of one int with MPI_MAX. With a cubic domain of side L = (N / density)^(1/3),
  // the ghosts sent in the first dimension are density x r x L^2, in the second
  // density x r x L (L + 2r) and in the third density x r x (L + 2r)^2 (the forwarded edges and
  // corners); particle migration is not counted.
  std::vector<core::WorkloadPhase> out;
  core::WorkloadPhase p;
  p.pos = pos;
  const double side = std::cbrt(m.particles / m.density);
  const double r = m.ghost_width;
  const std::array<double, 3> area{side * side, side * (side + 2 * r),
                                   (side + 2 * r) * (side + 2 * r)};
  const std::uint32_t scalar4 = 4 * m.scalar_size;
  const std::uint32_t rebuilds =
      m.rebuild_every == 0 ? 0 : (m.md_steps + m.rebuild_every - 1) / m.rebuild_every;
  static constexpr std::array<const char*, 3> kAxis{"x", "y", "z"};
  for (std::uint32_t d = 0; d < m.dims; ++d) {
    const auto ghosts = static_cast<std::uint64_t>(std::ceil(m.density * r * area[d]));
    p.collective = core::CollectiveKind::bcast;
    p.group = core::WorkloadGroup::pair;
    p.ranks = 2;
    p.overlap = 0.0;
    p.name = fmt::format("ghost positions {}", kAxis[d]);
    p.bytes = core::Bytes{std::max<std::uint64_t>(ghosts * scalar4, 1)};
    p.calls = 2 * (m.md_steps -
                   std::min(rebuilds, m.md_steps)); // both directions, the steps without a rebuild
    if (p.calls > 0) {
      out.push_back(p);
    }
    if (rebuilds > 0) {
      p.name = fmt::format("ghost counts {}", kAxis[d]);
      p.bytes = core::Bytes{4};
      p.calls = 2 * rebuilds;
      out.push_back(p);
      p.name = fmt::format("ghost exchange {}", kAxis[d]);
      p.bytes = core::Bytes{std::max<std::uint64_t>(ghosts * (4 + 4 + scalar4), 1)};
      out.push_back(p);
    }
  }
  const std::uint32_t checks = (m.md_steps + m.check_every - 1) / m.check_every;
  p.name = "neighbour-list check (MPI_MAX)";
  p.collective = core::CollectiveKind::allreduce;
  p.group = core::WorkloadGroup::world;
  p.ranks = 0;
  p.bytes = core::Bytes{4};
  p.calls = checks;
  out.push_back(p);
  return out;
}

} // namespace collsim::io

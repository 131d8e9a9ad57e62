#pragma once
// Reading workloads (docs/workload-format.md): YAML with the positions of every value, so that a
// bad value is reported as "file:line:column: error: yaml.path: message" (core::ScenarioError,
// exit 2), and generators expanded into phases.

#include "collsim/core/workload.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace collsim::io {

/// Parses a workload from YAML text; `file_name` is used in error messages.
core::Workload parse_workload(std::string_view yaml_text, std::string_view file_name);

/// Reads and parses a workload file.
core::Workload load_workload(const std::string& path);

/// Bytes per element of a data type, by nccl-tests' names (int8, uint8, int32, uint32, int64,
/// uint64, half, float, double, bfloat16, fp8_e4m3, fp8_e5m2) and the common aliases (fp32,
/// fp16, bf16, fp64, fp8); 0 for a name it does not know.
std::uint32_t dtype_bytes(std::string_view name);

/// PyTorch DistributedDataParallel's gradient buckets (docs/workload-format.md): `parameters`
/// gradients of `dtype_size` bytes, in buckets of `bucket` bytes (the last one holds the rest).
/// One phase for the full buckets, whose allreduces run while backward goes on (`overlap`), and
/// one for the last bucket, which is ready only when backward ends (overlap 0).
std::vector<core::WorkloadPhase> data_parallel_phases(double parameters, std::uint32_t dtype_size,
                                                      core::Bytes bucket, double overlap,
                                                      core::WorkloadGroup group,
                                                      const core::SourcePos& pos);

/// The shape of a transformer trained with tensor (t), pipeline (p) and data (d) parallelism,
/// Megatron-LM style (the transformer_3d generator, docs/workload-format.md).
struct Transformer3d {
  std::uint32_t layers = 1;
  std::uint64_t hidden = 1;
  std::uint64_t sequence = 1;
  std::uint64_t micro_batch = 1;   ///< sequences per micro-batch (b)
  std::uint32_t micro_batches = 1; ///< per step and pipeline (m)
  std::uint32_t tensor = 1;        ///< t: inside a node
  std::uint32_t pipeline = 1;      ///< p: stages, one boundary between two nodes
  std::uint32_t data = 1;          ///< d: replicas, each on its own node
  double parameters = 1;           ///< of the whole model
  std::uint32_t dtype_size = 2;    ///< activations
  std::uint32_t grad_dtype_size = 2;
  double data_overlap = 0.0; ///< of the gradient allreduce with backward
};

/// Megatron-LM's collective calls per step and rank: the TP allreduces (node), the PP messages
/// (pair) and the DP gradient allreduce (across nodes); a degree of 1 makes no phase.
std::vector<core::WorkloadPhase> transformer_3d_phases(const Transformer3d& t,
                                                       const core::SourcePos& pos);

/// The all-to-alls of a mixture-of-experts model with expert parallelism (the moe_alltoall
/// generator, docs/workload-format.md).
struct MoeAllToAll {
  std::uint32_t moe_layers = 1;    ///< MoE layers on this rank
  std::uint64_t hidden = 1;        ///< h
  std::uint64_t sequence = 1;      ///< s
  std::uint64_t micro_batch = 1;   ///< b
  std::uint32_t micro_batches = 1; ///< m, per step
  std::uint32_t top_k = 2;         ///< experts per token (GShard: 2; Switch: 1)
  double capacity_factor = 1.0;    ///< expert capacity over the even share (Switch Transformers)
  std::uint32_t experts = 1;       ///< expert-parallel degree: ranks of one all-to-all
  std::uint32_t dtype_size = 2;
  core::WorkloadGroup group = core::WorkloadGroup::world;
  double overlap = 0.0;
};

/// Each MoE layer's dispatch and combine all-to-all, forward and backward: 4 per layer and
/// micro-batch, each of capacity_factor x top_k x b x s x h x dtype bytes per rank.
std::vector<core::WorkloadPhase> moe_alltoall_phases(const MoeAllToAll& m,
                                                     const core::SourcePos& pos);

/// A halo exchange of a structured-grid stencil code (the stencil_halo generator,
/// docs/workload-format.md).
struct StencilHalo {
  std::uint64_t points = 1; ///< grid points per side of a rank's block
  std::uint32_t dims = 3;   ///< 2 or 3
  std::uint32_t halo = 1;   ///< halo width in points
  std::uint32_t bytes_per_point = 8;
  std::uint32_t fields = 1;    ///< variables exchanged per point
  std::uint32_t exchanges = 1; ///< halo exchanges per step
};

/// One phase: each exchange sends a face to each of the 2 x dims neighbours.
std::vector<core::WorkloadPhase> stencil_halo_phases(const StencilHalo& s,
                                                     const core::SourcePos& pos);

/// A molecular-dynamics step with spatial domain decomposition in the HOOMD-blue mould (the
/// md_halo generator, docs/workload-format.md).
struct MdHalo {
  double particles = 1;            ///< per rank
  double density = 1;              ///< particles per unit volume
  double ghost_width = 1;          ///< r_cut + r_buff, the same length unit
  std::uint32_t dims = 3;          ///< decomposed dimensions, 1 to 3
  std::uint32_t scalar_size = 8;   ///< 4: single precision, 8: double
  std::uint32_t md_steps = 1;      ///< MD time steps in one workload step
  std::uint32_t rebuild_every = 0; ///< MD steps per neighbour-list rebuild; 0: none counted
  std::uint32_t check_every = 1;   ///< MD steps per neighbour-list distance check
};

/// Its phases: the ghost position updates per dimension (pairs), the ghost exchanges of the
/// rebuilds, and the distance checks' 4-byte MPI_MAX allreduce.
std::vector<core::WorkloadPhase> md_halo_phases(const MdHalo& m, const core::SourcePos& pos);

} // namespace collsim::io

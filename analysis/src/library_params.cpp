// with_library_params (simulate.hpp): the parameters a library fills in at run time for an NCCL
// algorithm the caller left unset: NCCL's channels and protocol from its tuning model, and for a
// point-to-point exchange NCCL's split of each operation (stacks/src/nccl_p2p.cpp); and under a
// stack that runs Open MPI 4.1's coll/tuned, the reduce and bcast its nonoverlapping allreduce
// calls (ompi41_nonoverlapping_halves).

#include "collsim/analysis/simulate.hpp"

#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/stacks/nccl_stack.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <string>
#include <vector>

namespace collsim::analysis {
namespace {

/// reduce_bcast (Open MPI's nonoverlapping, alias ompi:2) named under a stack whose allreduce is
/// coll/tuned's: its halves as Open MPI 4.1 runs them for the call, where the request leaves them
/// unset (for a float vector: the request carries no datatype). Other cases come back unchanged.
algorithms::Request with_ompi_halves(const algorithms::AlgorithmInfo& algo,
                                     algorithms::Request request, const EngineChoice& engine,
                                     std::string* chosen) {
  const bool nonoverlapping =
      algo.collective == core::CollectiveKind::allreduce &&
      std::find(algo.aliases.begin(), algo.aliases.end(), "ompi:2") != algo.aliases.end();
  if (!nonoverlapping || engine.stack.empty() || request.ranks < 2 ||
      stacks().find(engine.stack).info().chooser != stacks::Chooser::ompi41 ||
      request.params.contains("reduce") || request.params.contains("bcast")) {
    return request;
  }
  OmpiCall call{core::CollectiveKind::allreduce, request.ranks, request.bytes, true, 4};
  call.tuning = stacks::read_ompi_tuning(&engine.mpi); // forced reduce and bcast, if any
  std::vector<std::string> shown;
  // Rare (a named reduce_bcast under an Open MPI stack): the registry maps Open MPI's ids to
  // collsim's algorithms.
  const algorithms::Registry registry = algorithms::make_default_registry();
  for (const auto& [name, value] : ompi41_nonoverlapping_halves(call, registry)) {
    const auto resolved = algorithms::resolve_params(algo, {{name, value}});
    request.params[name] = resolved.at(name);
    shown.push_back(name + "=" + value);
  }
  if (chosen != nullptr) {
    *chosen = fmt::format("{}", fmt::join(shown, ","));
  }
  return request;
}

} // namespace

algorithms::Request with_library_params(const algorithms::AlgorithmInfo& algo,
                                        algorithms::Request request, const EngineChoice& engine,
                                        std::string* chosen) {
  const std::optional<algorithms::nccl::Algo> a = stacks::nccl_algo_of(algo);
  const bool p2p = stacks::is_nccl_p2p(algo);
  if (!a && !p2p) {
    return with_ompi_halves(algo, std::move(request), engine, chosen);
  }
  if (request.topology == nullptr || request.ranks < 2 ||
      request.topology->rank_count() < request.ranks) {
    return request;
  }
  const auto spec = [&](std::string_view name) -> const algorithms::ParamSpec* {
    const auto it = std::find_if(algo.params.begin(), algo.params.end(),
                                 [&](const algorithms::ParamSpec& p) { return p.name == name; });
    return it == algo.params.end() ? nullptr : &*it;
  };
  const algorithms::ParamSpec* proto = spec("protocol");
  const algorithms::ParamSpec* channels = spec("channels");
  const bool fill_proto = proto != nullptr && !request.params.contains("protocol");
  const bool fill_channels = channels != nullptr && !request.params.contains("channels");
  const bool fill_chunk = spec("max_chunk") != nullptr && !request.params.contains("max_chunk");
  const bool fill_buffer = spec("buffsize") != nullptr && !request.params.contains("buffsize");
  const bool fill_p2p_chunk = p2p && spec("chunk") != nullptr && !request.params.contains("chunk");
  // Per-rank counts: NCCL splits each send and receive by its own size (addP2pToPlan), so the
  // generator gets the communicator's bounds rather than one split for the average block.
  const bool fill_peer = p2p && !request.counts.empty() && spec("peer_channels") != nullptr &&
                         !request.params.contains("peer_channels");
  if (!fill_proto && !fill_channels && !fill_peer && !fill_chunk && !fill_buffer &&
      !fill_p2p_chunk) {
    return request;
  }
  NcclModelInputs in =
      engine.topology ? nccl_inputs(*engine.topology, engine.nccl, *request.topology, request.ranks)
                      : nccl_inputs(*request.topology, request.ranks);
  if (!engine.topology) {
    apply_nccl_env(in, parse_nccl_env(engine.nccl));
  }
  std::optional<algorithms::nccl::Proto> pinned;
  if (!fill_proto && proto != nullptr) {
    pinned = static_cast<algorithms::nccl::Proto>(request.params.at("protocol"));
  }
  // NCCL's channels and protocol: for a point-to-point exchange, each send or receive as NCCL
  // splits it (one block per peer); otherwise the tuning model's choice for the algorithm.
  std::uint32_t nc = 0;
  algorithms::nccl::Proto pr = algorithms::nccl::Proto::simple;
  stacks::NcclP2pChoice split;
  if (p2p) {
    split = stacks::nccl_p2p_choice(in, request.bytes.value / request.ranks);
    nc = split.channels;
    pr = split.proto;
  } else {
    const auto choice =
        nccl_algorithm_choice(request.collective, request.ranks, request.bytes, in, *a, pinned);
    if (!choice || !choice->modelled) {
      return request;
    }
    nc = choice->channels;
    pr = choice->proto;
  }
  std::vector<std::string> shown;
  if (fill_peer) { // p2p: `split` is NCCL's for the average block, its bounds the call's
    request.params["peer_channels"] = split.channels_per_peer;
    request.params["min_channels"] = split.min_channels;
    shown.push_back(fmt::format("channels=per operation (1 to {})", split.channels_per_peer));
  }
  if (fill_channels) {
    const auto clamped = std::clamp<std::int64_t>(nc, channels->min, channels->max);
    request.params["channels"] = clamped;
    if (!fill_peer) {
      shown.push_back(fmt::format("channels={}", clamped));
    }
  }
  if (fill_chunk) { // NVLS-tree's starting chunk, where the release or machine changes it
    if (const auto chunk = stacks::nvls_tree_chunk_param(in)) {
      request.params["max_chunk"] = static_cast<std::int64_t>(*chunk);
      shown.push_back(fmt::format("max_chunk={}", *chunk));
    }
  }
  if (fill_proto) {
    const auto index = static_cast<std::int64_t>(pr);
    if (index < static_cast<std::int64_t>(proto->choices.size())) {
      request.params["protocol"] = index;
      shown.push_back("protocol=" + proto->choices[static_cast<std::size_t>(index)]);
    }
  }
  if (fill_p2p_chunk) { // NCCL_P2P_NET/NVL/PCI_CHUNKSIZE
    if (const auto chunk = stacks::p2p_chunk_param(in)) {
      request.params["chunk"] = static_cast<std::int64_t>(*chunk);
      shown.push_back(fmt::format("chunk={}", *chunk));
    }
  }
  if (fill_buffer) { // NCCL_BUFFSIZE (or its LL, LL128 variant) for the protocol that runs
    const auto run = pinned.value_or(pr);
    if (const auto buffer = stacks::buffer_param(in, run)) {
      request.params["buffsize"] = static_cast<std::int64_t>(*buffer);
      shown.push_back(fmt::format("buffsize={}", *buffer));
    }
  }
  if (chosen != nullptr) {
    *chosen = fmt::format("{}", fmt::join(shown, ","));
  }
  return request;
}

} // namespace collsim::analysis

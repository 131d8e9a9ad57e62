#include "collsim/analysis/auto_choice.hpp"

#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/analysis/ompi_defaults.hpp"

#include <fmt/format.h>

namespace collsim::analysis {

bool ranks_on_gpus(const core::Topology& topo) {
  if (topo.is_full_mesh() || topo.rank_count() == 0) {
    return false;
  }
  for (core::Rank r = 0; r < topo.rank_count(); ++r) {
    if (topo.devices()[topo.device_of(r)].kind != core::DeviceKind::gpu) {
      return false;
    }
  }
  return true;
}

AutoLibrary auto_library(const core::Topology& topo, core::CollectiveKind collective) {
  return ranks_on_gpus(topo) && collective != core::CollectiveKind::barrier ? AutoLibrary::nccl
                                                                            : AutoLibrary::ompi;
}

std::optional<LibraryChoice> auto_choice(const core::Scenario& scenario, const core::Topology& topo,
                                         core::CollectiveKind collective, std::uint32_t ranks,
                                         core::Bytes bytes, const algorithms::Registry& registry,
                                         std::string* why) {
  if (auto_library(topo, collective) == AutoLibrary::nccl) {
    const auto choice = nccl_default(collective, ranks, bytes,
                                     nccl_inputs(scenario.topology, scenario.nccl, topo, ranks));
    if (choice) {
      return nccl_library_choice(*choice);
    }
    if (why != nullptr) {
      *why = fmt::format("NCCL has no {}", core::to_string(collective));
    }
    return std::nullopt;
  }
  OmpiCall call;
  call.collective = collective;
  call.ranks = ranks;
  call.bytes = bytes;
  auto choice = ompi41_default(call, registry);
  if (!choice && why != nullptr) {
    *why = fmt::format("Open MPI's {} of {} B over {} ranks has no uniform form collsim can "
                       "generate (the size must be a multiple of the ranks)",
                       core::to_string(collective), bytes.value, ranks);
  }
  return choice;
}

} // namespace collsim::analysis

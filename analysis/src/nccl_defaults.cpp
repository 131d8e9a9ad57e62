// NCCL's default as a LibraryChoice (the model itself: stacks/nccl_model.hpp).

#include "collsim/analysis/nccl_defaults.hpp"

#include <fmt/format.h>

namespace collsim::analysis {

std::optional<LibraryChoice> nccl_library_choice(core::CollectiveKind collective,
                                                 std::uint32_t ranks, core::Bytes bytes,
                                                 const NcclModelInputs& in) {
  const auto choice = nccl_default(collective, ranks, bytes, in);
  if (!choice) {
    return std::nullopt;
  }
  return nccl_library_choice(*choice);
}

LibraryChoice nccl_library_choice(const NcclChoice& nccl) {
  const NcclChoice* choice = &nccl;
  LibraryChoice c;
  c.library = algorithms::nccl::model_label(choice->release);
  c.algorithm = choice->algorithm;
  c.params = choice->params;
  if (choice->modelled) {
    c.library_name = fmt::format("{}/{}", algorithms::nccl::algo_name(choice->algo),
                                 algorithms::nccl::protocol_name(choice->proto));
    c.reason = fmt::format("{} is the cheapest in NCCL's cost table ({:.2f} us, {} channels)",
                           c.library_name, choice->time_us, choice->channels);
  } else {
    c.library_name = "send/recv";
    c.reason = "grouped point-to-point transfers";
  }
  return c;
}

} // namespace collsim::analysis

#pragma once
// Which NCCL release's tuning model prices a call (stacks/nccl_model.hpp). NCCL's choice of
// algorithm, protocol and channels is a closed-form model whose constants and rules changed from
// release to release (src/graph/tuning.cc, src/enqueue.cc, src/graph/connect.cc,
// src/transport/nvls.cc); a log that says which NCCL ran (nccl-tests' "nccl-library=21903", or
// "NCCL version 2.19.3") is priced with that release's model, a scenario names one with `nccl:
// {version: 2.19.3}`, and everything else uses the newest modelled release.
// docs/library-defaults.md ("NCCL releases") lists what differs between the modelled releases and
// where each rule comes from.
//
// Only the choice (and NCCL's own estimate) follows the release: the run itself keeps the
// hardware's per-step latencies (algorithms::nccl's tables), which the older releases' larger
// tuning constants (28 us a tree step in 2.19) were never meant to describe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collsim::algorithms::nccl {

/// NCCL's version code, as NCCL_VERSION_CODE and nccl-tests' "nccl-library=" print it: major x
/// 10000 + minor x 100 + patch (2.19.3 -> 21903).
using ReleaseCode = std::uint32_t;

/// The release collsim models when nothing names one (the tables of algorithms.md 3.1).
inline constexpr ReleaseCode kNewestModelled = 23007;
/// The oldest release whose model collsim has; an older one is priced as this one (it has the
/// same three algorithms, Tree, Ring and CollNet, and the same tables back to 2.12.12).
inline constexpr ReleaseCode kOldestModelled = 21212;

/// "2.19.3", "2.19.3-1", "v2.19.3-1", "2.19.3+cuda12.2" or a version code ("21903") -> the code;
/// nullopt for anything else (major must be 2, minor and patch below 100).
std::optional<ReleaseCode> parse_release(std::string_view text);

/// "2.19.3" for 21903.
std::string release_name(ReleaseCode code);

/// How a choice names the model that made it: "NCCL 2.19.3 tuning model"; for a release outside
/// the modelled ones, the model used and the release asked for ("NCCL 2.30.7 tuning model (for
/// 2.31.0, newer than collsim models)").
std::string model_label(ReleaseCode code);

} // namespace collsim::algorithms::nccl

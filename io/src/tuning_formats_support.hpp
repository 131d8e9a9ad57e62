#pragma once
// Pieces the tuning-file writers share (internal to io): tuning_formats.cpp and
// tuning_mpich_json.cpp.

#include "collsim/core/collective.hpp"
#include "collsim/core/tuning.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collsim::io::detail {

/// Collectives in the order of first appearance, each with its blocks (ranks ascending). Blocks
/// without ranges (nothing ran at that rank count) are left out: the library keeps its own
/// choice there.
using BlockGroups =
    std::vector<std::pair<core::CollectiveKind, std::vector<const core::TuneBlock*>>>;
BlockGroups group_blocks(const core::TuneTable& table);

/// One rule of a library file: from `bytes` on (S), run `name`.
struct NamedRule {
  std::uint64_t bytes = 0;
  std::string name;
  std::string note; ///< collsim's label and where it was measured from
};

/// A block's ranges as rules: the first from 0, the others from their range's first swept size,
/// neighbours with the same library name merged (what ompi-rules does too). `name` gives a
/// range's name in the library; empty: the winner's `library:` alias (UsageError without one).
std::vector<NamedRule> named_rules(const core::TuneBlock& b, std::string_view library,
                                   const std::function<std::string(const core::TuneRange&)>& name);

} // namespace collsim::io::detail

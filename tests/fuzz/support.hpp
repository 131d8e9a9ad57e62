#pragma once
// Helpers of the fuzz targets (targets.hpp).

#include <string>
#include <string_view>

namespace collsim::fuzz {

/// Writes `text` to this process's scratch file ending in `suffix` (in the temporary directory,
/// named by the process id) and returns its path: for readers that take a path (hwloc, gzip
/// traces, the loaders that resolve relative paths).
std::string scratch_file(std::string_view text, std::string_view suffix);

} // namespace collsim::fuzz

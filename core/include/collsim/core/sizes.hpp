#pragma once
// Size sweeps as users write them: "8B:1GiB:x2" (geometric, factor 2), "1KiB:4KiB:+1KiB"
// (arithmetic) or a comma list "8B,1KiB,1MiB".

#include "collsim/core/units.hpp"

#include <string_view>
#include <vector>

namespace collsim::core {

/// Parses a sweep; the error says what was expected. At most 100000 sizes.
Parsed<std::vector<Bytes>> parse_size_sweep(std::string_view text);

} // namespace collsim::core

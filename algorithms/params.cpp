// Algorithm parameters as users write them (ARCHITECTURE.md, "Extending"): integers, sizes with
// units ("64 KiB", as Open MPI's segment sizes are usually given) and, for enumerations such as
// the algorithm of each level of a hierarchical algorithm, names.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>

namespace collsim::algorithms {

std::map<std::string, std::int64_t> resolve_params(const AlgorithmInfo& algo,
                                                   const RawParams& raw) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, text] : raw) {
    const auto spec = std::find_if(algo.params.begin(), algo.params.end(),
                                   [&key = name](const ParamSpec& p) { return p.name == key; });
    if (spec == algo.params.end()) {
      continue; // another algorithm's parameter, or a typo the registry reports by name
    }
    if (!spec->choices.empty()) {
      const auto it = std::find(spec->choices.begin(), spec->choices.end(), text);
      if (it == spec->choices.end()) {
        std::string msg = fmt::format("{}: parameter '{}' = '{}' is not one of: {}", algo.name,
                                      name, text, fmt::join(spec->choices, ", "));
        const std::string close = core::closest_match(text, spec->choices);
        if (!close.empty()) {
          msg += fmt::format(" (did you mean '{}'?)", close);
        }
        throw core::UsageError(msg);
      }
      out[name] = it - spec->choices.begin();
      continue;
    }
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc{} && ptr == text.data() + text.size()) {
      out[name] = v;
      continue;
    }
    const auto size = core::parse_bytes(text);
    if (!size.ok() ||
        size.value.value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw core::UsageError(
          fmt::format("{}: parameter '{}' expects an integer or a size like '64 KiB', got '{}'",
                      algo.name, name, text));
    }
    out[name] = static_cast<std::int64_t>(size.value.value);
  }
  return out;
}

std::string param_value_text(const ParamSpec& p, std::int64_t value) {
  if (!p.choices.empty() && value >= 0 && static_cast<std::size_t>(value) < p.choices.size()) {
    return p.choices[static_cast<std::size_t>(value)];
  }
  return fmt::format("{}", value);
}

} // namespace collsim::algorithms

// The node this process runs on, from the same three sources as `collsim topology import`: hwloc's
// discovery (the library, not lstopo), and `nvidia-smi topo -m` and `ibstat` when they are on the
// PATH and succeed. A tool that is missing or fails adds a warning, not an error: a CPU node has
// no nvidia-smi, a node without InfiniBand no ibstat.

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <memory>
#include <optional>

namespace collsim::describe {
namespace {

/// The standard output of `command` (standard error dropped), or nullopt when it cannot run or
/// exits non-zero.
std::optional<std::string> output_of(const std::string& command) {
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    return std::nullopt;
  }
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) {
    out.append(buf.data(), n);
  }
  if (pclose(pipe) != 0 || out.empty()) {
    return std::nullopt;
  }
  return out;
}

} // namespace

NodeDescription describe_here(std::vector<std::string>& warnings) {
  NodeDescription node = describe_this_machine();
  if (!node.gpus.empty()) {
    if (const auto topo = output_of("nvidia-smi topo -m")) {
      try {
        merge_topo_matrix(node, parse_nvidia_smi_topo(*topo, "nvidia-smi topo -m"),
                          "nvidia-smi topo -m");
      } catch (const core::Error& e) {
        warnings.push_back(fmt::format("nvidia-smi topo -m not used: {}", e.what()));
      }
    } else {
      warnings.push_back("nvidia-smi topo -m did not run here: no NVLink information");
    }
  }
  if (!node.nics.empty()) {
    if (const auto ib = output_of("ibstat")) {
      try {
        merge_ibstat(node, parse_ibstat(*ib, "ibstat"), "ibstat");
      } catch (const core::Error& e) {
        warnings.push_back(fmt::format("ibstat not used: {}", e.what()));
      }
    } else {
      warnings.push_back("ibstat did not run here: NIC rates not known");
    }
  }
  choose_compute_nics(node);
  return node;
}

} // namespace collsim::describe

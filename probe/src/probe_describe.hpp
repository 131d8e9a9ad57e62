#pragma once
// collsim-probe --describe: rank 0's node as a collsim scenario (docs/probe.md).

#include <string>
#include <vector>

namespace collsim::probe {

/// Writes the scenario of the node this process runs on to `path`, for a job of `nodes` such
/// nodes (collsim::describe::describe_here). `options` is the probe's command line, for the
/// scenario's header. Throws core::UsageError when the file cannot be written; what could not be
/// read (no nvidia-smi, no ibstat) goes to `warnings`.
void write_node_description(const std::string& path, int nodes, const std::string& options,
                            std::vector<std::string>& warnings);

} // namespace collsim::probe

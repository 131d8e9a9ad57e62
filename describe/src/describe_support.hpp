#pragma once
// Helpers shared by the node readers and the scenario writer.

#include "collsim/core/units.hpp"
#include "collsim/describe/node.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collsim::describe {

/// A 1-based line and column in a text.
struct SourceEnd {
  std::uint32_t line = 1;
  std::uint32_t column = 1;
};
/// The line and column of byte `offset` of `text`.
SourceEnd position_of(std::string_view text, std::size_t offset);
/// The position just after the last character of `text`.
SourceEnd end_of(std::string_view text);
/// The file name without its directories (messages and comments name inputs by it).
std::string base_name(const std::string& path);
/// "mlx5_2" < "mlx5_10": digit runs compare as numbers.
bool natural_less(std::string_view a, std::string_view b);
/// The number a run of decimal digits spells, when it fits 32 bits (a tool's output can hold any
/// digits: std::stoul would throw std::out_of_range past 64 bits, a crash, not a message).
std::optional<std::uint32_t> small_number(std::string_view digits);

/// What collsim knows of a GPU model: one NVLink's bandwidth per direction and the memory
/// bandwidth, with the sources (gpu_models.cpp).
struct GpuFacts {
  std::string_view model;       ///< the matched model, e.g. "A100-SXM4-80GB"
  double nvlink_link_gbps = 25; ///< GB/s per NVLink and direction
  double memory_gbps = 0;       ///< GB/s; 0: not in the table
  std::uint32_t nvlinks = 0;    ///< NVLinks per GPU; 0: none or not known
  std::string_view source;
};
/// The facts for a GPU name (GPUModel, PCIDevice) or PCI device id; nullopt when not known.
std::optional<GpuFacts> gpu_facts(const Gpu& gpu);
/// One NVLink's bandwidth for the node's GPUs (the first GPU's model; 25 GB/s, NVLink 2 to 4,
/// when not known).
core::Bandwidth nvlink_link_bandwidth(const NodeDescription& node);

} // namespace collsim::describe

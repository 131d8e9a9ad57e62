// Helpers of the node readers, and what collsim knows of GPU models. Source ids [Sn] are those of
// ../shared/reference/hardware.md (section 10); PCI device ids are those of the PCI ID
// Repository (https://pci-ids.ucw.cz/read/PC/10de).

#include "describe_support.hpp"

#include <charconv>

#include <array>
#include <cctype>

namespace collsim::describe {

SourceEnd position_of(std::string_view text, std::size_t offset) {
  SourceEnd at;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

SourceEnd end_of(std::string_view text) {
  return position_of(text, text.size());
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<std::uint32_t> small_number(std::string_view digits) {
  std::uint32_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || ec != std::errc{} || ptr != end) {
    return std::nullopt;
  }
  return value;
}

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i;
      std::size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])) != 0) {
        ++ei;
      }
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])) != 0) {
        ++ej;
      }
      const std::string_view na = a.substr(i, ei - i);
      const std::string_view nb = b.substr(j, ej - j);
      if (na.size() != nb.size()) {
        return na.size() < nb.size();
      }
      if (na != nb) {
        return na < nb;
      }
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) {
      return a[i] < b[j];
    }
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

namespace {

struct GpuRow {
  std::string_view name_part; ///< matched against the name, case-insensitively
  std::array<std::uint16_t, 3> device_ids;
  GpuFacts facts;
};

// First match wins: the specific names before the family.
constexpr std::array<GpuRow, 11> kGpus{{
    {"B200",
     {0, 0, 0},
     {"B200", 50, 8000, 18, "NVLink 5, 18 links of 50 GB/s [S10, S7, S1]; HBM3e 8 TB/s [S6]"}},
    {"H200",
     {0, 0, 0},
     {"H200", 25, 4800, 18, "NVLink 4, 18 links of 25 GB/s [S2, S7, S1]; HBM3e 4.8 TB/s [S85]"}},
    {"H100 PCIe",
     {0, 0, 0},
     {"H100 PCIe", 25, 0, 0, "NVLink 4 bridges, 25 GB/s per link [S7, S1]"}},
    {"H100",
     {0x2330, 0, 0},
     {"H100-SXM", 25, 3350, 18,
      "NVLink 4, 18 links of 25 GB/s [S2, S7, S1]; HBM3 3.35 TB/s [S85]"}},
    {"A100-SXM4-80GB",
     {0x20b2, 0, 0},
     {"A100-SXM4-80GB", 25, 2039, 12,
      "NVLink 3, 12 links of 25 GB/s [S1, S11]; HBM2e 2039 GB/s [S5, S93]"}},
    {"A100-PCIE-80GB",
     {0x20b5, 0, 0},
     {"A100-PCIe-80GB", 25, 1935, 0,
      "NVLink 3 bridges, 25 GB/s per link [S11]; HBM2e 1935 GB/s [S93]"}},
    {"A100 80GB PCIe",
     {0, 0, 0},
     {"A100-PCIe-80GB", 25, 1935, 0,
      "NVLink 3 bridges, 25 GB/s per link [S11]; HBM2e 1935 GB/s [S93]"}},
    {"A100",
     {0x20b0, 0x20f1, 0},
     {"A100-40GB", 25, 1555, 12, "NVLink 3, 12 links of 25 GB/s [S1, S11]; HBM2 1555 GB/s [S5]"}},
    {"V100",
     {0x1db1, 0x1db5, 0x1db8},
     {"V100", 25, 900, 6,
      "NVLink 2, 6 links of 25 GB/s [S3, S4]; HBM2 900 GB/s (dgx1-v100 preset, unverified)"}},
    {"P100",
     {0x15f8, 0x15f9, 0},
     {"P100", 20, 732, 4,
      "NVLink 1, 4 links of 20 GB/s per direction, HBM2 732 GB/s (NVIDIA Tesla P100 whitepaper, "
      "unverified)"}},
    {"T4",
     {0x1eb8, 0, 0},
     {"T4", 25, 320, 0, "no NVLink; GDDR6 320 GB/s (NVIDIA T4 datasheet, unverified)"}},
}};

bool contains_nocase(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) {
    return false;
  }
  for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    bool ok = true;
    for (std::size_t k = 0; k < needle.size() && ok; ++k) {
      ok = std::tolower(static_cast<unsigned char>(hay[i + k])) ==
           std::tolower(static_cast<unsigned char>(needle[k]));
    }
    if (ok) {
      return true;
    }
  }
  return false;
}

} // namespace

std::optional<GpuFacts> gpu_facts(const Gpu& gpu) {
  for (const GpuRow& row : kGpus) {
    if (!gpu.name.empty() && contains_nocase(gpu.name, row.name_part)) {
      return row.facts;
    }
  }
  for (const GpuRow& row : kGpus) {
    for (std::uint16_t id : row.device_ids) {
      if (id != 0 && id == gpu.pci_device) {
        return row.facts;
      }
    }
  }
  return std::nullopt;
}

core::Bandwidth nvlink_link_bandwidth(const NodeDescription& node) {
  if (!node.gpus.empty()) {
    if (auto facts = gpu_facts(node.gpus.front())) {
      return core::Bandwidth{facts->nvlink_link_gbps * 1e9};
    }
  }
  return core::Bandwidth{25e9};
}

} // namespace collsim::describe

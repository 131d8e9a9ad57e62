#include "collsim/stacks/nccl_env.hpp"

#include "env_support.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

namespace collsim::stacks {
namespace {

using algorithms::nccl::Algo;
using algorithms::nccl::Proto;

constexpr std::array<std::string_view, 16> kRead{"NCCL_ALGO",
                                                 "NCCL_PROTO",
                                                 "NCCL_MIN_NCHANNELS",
                                                 "NCCL_MAX_NCHANNELS",
                                                 "NCCL_NVLS_ENABLE",
                                                 "NCCL_COLLNET_ENABLE",
                                                 "NCCL_NVLS_CHUNKSIZE",
                                                 "NCCL_NVLSTREE_MAX_CHUNKSIZE",
                                                 "NCCL_BUFFSIZE",
                                                 "NCCL_LL_BUFFSIZE",
                                                 "NCCL_LL128_BUFFSIZE",
                                                 "NCCL_P2P_NET_CHUNKSIZE",
                                                 "NCCL_P2P_NVL_CHUNKSIZE",
                                                 "NCCL_P2P_PCI_CHUNKSIZE",
                                                 "NCCL_NCHANNELS_PER_NET_PEER",
                                                 "NCCL_NET_OVERHEAD"};

std::string lower(std::string_view s) {
  return detail::lower_no_spaces(s);
}

[[noreturn]] void fail(const core::NcclSpec& spec, const std::string& name,
                       const std::string& msg) {
  detail::env_fail(spec.env_pos, "nccl.env", name, msg);
}

/// NCCL's list syntax: names separated by commas, all allowed, or with a leading '^' all but
/// those. `names[i]` is the lower-case name of index i.
template <std::size_t N>
std::array<bool, N> parse_list(const core::NcclSpec& spec, const std::string& var,
                               const std::string& value,
                               const std::array<std::string_view, N>& names) {
  std::string_view v = value;
  const bool exclude = !v.empty() && v.front() == '^';
  if (exclude) {
    v.remove_prefix(1);
  }
  std::array<bool, N> listed{};
  std::size_t count = 0;
  while (!v.empty()) {
    const std::size_t comma = v.find(',');
    const std::string item = lower(v.substr(0, comma));
    v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    const auto it = std::find(names.begin(), names.end(), item);
    if (it == names.end()) {
      fail(spec, var,
           fmt::format("'{}' is not one of {}", item, fmt::join(names.begin(), names.end(), ", ")));
    }
    listed[static_cast<std::size_t>(it - names.begin())] = true;
    ++count;
  }
  if (count == 0) {
    fail(spec, var, "expected a comma-separated list of names");
  }
  std::array<bool, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = exclude ? !listed[i] : listed[i];
  }
  return out;
}

std::uint32_t parse_count(const core::NcclSpec& spec, const std::string& var,
                          const std::string& value) {
  std::uint32_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || end != value.data() + value.size() || n < 1 || n > 64) {
    fail(spec, var, fmt::format("expected a channel count from 1 to 64, got '{}'", value));
  }
  return n;
}

/// A chunk size in bytes, as NCCL reads its integer parameters (a decimal number); at least 4 KiB
/// (nvls_tree's smallest `max_chunk`) and at most 16 MiB.
std::uint64_t parse_chunk(const core::NcclSpec& spec, const std::string& var,
                          const std::string& value) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || end != value.data() + value.size() || n < (4U << 10) ||
      n > (16U << 20)) {
    fail(spec, var,
         fmt::format("expected a chunk size in bytes from 4096 to 16777216, got '{}'", value));
  }
  return n;
}

/// A connection buffer in bytes (init.cc computeBuffSizes reads it as a decimal integer): at
/// least NCCL_STEPS steps of 8 KiB (the generators' smallest `buffsize`) and at most 128 MiB (a
/// step of 16 MiB, nvls_tree's largest `max_chunk`).
std::uint64_t parse_buffer(const core::NcclSpec& spec, const std::string& var,
                           const std::string& value) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || end != value.data() + value.size() ||
      n < static_cast<std::uint64_t>(algorithms::nccl::kSmallestBuffer) ||
      n > static_cast<std::uint64_t>(algorithms::nccl::kLargestBuffer)) {
    fail(spec, var,
         fmt::format("expected a buffer size in bytes from {} to {}, got '{}'",
                     algorithms::nccl::kSmallestBuffer, algorithms::nccl::kLargestBuffer, value));
  }
  return n;
}

/// NCCL_NET_OVERHEAD: the network post overhead in nanoseconds, a decimal integer as NCCL reads
/// its parameters (tuning.cc getNetOverhead divides it by 1000); at most 1 ms.
double parse_overhead_us(const core::NcclSpec& spec, const std::string& var,
                         const std::string& value) {
  std::uint64_t ns = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ns);
  if (ec != std::errc{} || end != value.data() + value.size() || ns > 1000000) {
    fail(spec, var,
         fmt::format("expected a post overhead in nanoseconds from 0 to 1000000, got '{}'", value));
  }
  return static_cast<double>(ns) * 1e-3;
}

bool parse_flag(const core::NcclSpec& spec, const std::string& var, const std::string& value) {
  if (value == "0" || value == "1") {
    return value == "1";
  }
  fail(spec, var, fmt::format("expected 0 or 1, got '{}'", value));
}

} // namespace

NcclEnv parse_nccl_env(const core::NcclSpec& spec) {
  // Names in the order of Algo's indices (tree, ring, collnet_direct, collnet_chain, nvls,
  // nvls_tree, pat) and of Proto's (simple, ll, ll128).
  static constexpr std::array<std::string_view, 7> kAlgos{
      "tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree", "pat"};
  static constexpr std::array<std::string_view, 3> kProtos{"simple", "ll", "ll128"};
  NcclEnv env;
  for (const auto& [name, value] : spec.env) {
    if (name == "NCCL_ALGO") {
      env.algo_allowed = parse_list(spec, name, value, kAlgos);
    } else if (name == "NCCL_PROTO") {
      env.proto_allowed = parse_list(spec, name, value, kProtos);
    } else if (name == "NCCL_MIN_NCHANNELS") {
      env.min_channels = parse_count(spec, name, value);
    } else if (name == "NCCL_MAX_NCHANNELS") {
      env.max_channels = parse_count(spec, name, value);
    } else if (name == "NCCL_NVLS_ENABLE") {
      env.nvls_enable = parse_flag(spec, name, value);
    } else if (name == "NCCL_COLLNET_ENABLE") {
      env.collnet_enable = parse_flag(spec, name, value);
    } else if (name == "NCCL_NVLS_CHUNKSIZE") {
      env.nvls_chunk_size = parse_chunk(spec, name, value);
    } else if (name == "NCCL_NVLSTREE_MAX_CHUNKSIZE") {
      env.nvls_tree_max_chunk = parse_chunk(spec, name, value);
    } else if (name == "NCCL_BUFFSIZE") {
      env.buffer[static_cast<std::size_t>(Proto::simple)] = parse_buffer(spec, name, value);
    } else if (name == "NCCL_LL_BUFFSIZE") {
      env.buffer[static_cast<std::size_t>(Proto::ll)] = parse_buffer(spec, name, value);
    } else if (name == "NCCL_LL128_BUFFSIZE") {
      env.buffer[static_cast<std::size_t>(Proto::ll128)] = parse_buffer(spec, name, value);
    } else if (name == "NCCL_P2P_NET_CHUNKSIZE") {
      env.p2p_net_chunk = parse_chunk(spec, name, value);
    } else if (name == "NCCL_P2P_NVL_CHUNKSIZE") {
      env.p2p_nvl_chunk = parse_chunk(spec, name, value);
    } else if (name == "NCCL_P2P_PCI_CHUNKSIZE") {
      env.p2p_pci_chunk = parse_chunk(spec, name, value);
    } else if (name == "NCCL_NCHANNELS_PER_NET_PEER") {
      env.net_peer_channels = parse_count(spec, name, value);
    } else if (name == "NCCL_NET_OVERHEAD") {
      env.net_overhead_us = parse_overhead_us(spec, name, value);
    }
  }
  if (env.min_channels > 0 && env.max_channels > 0 && env.min_channels > env.max_channels) {
    fail(
        spec, "NCCL_MIN_NCHANNELS",
        fmt::format("{} is more than NCCL_MAX_NCHANNELS ({})", env.min_channels, env.max_channels));
  }
  return env;
}

algorithms::nccl::ReleaseCode parse_nccl_release(const core::NcclSpec& spec) {
  if (spec.version.empty()) {
    return algorithms::nccl::kNewestModelled;
  }
  const auto code = algorithms::nccl::parse_release(spec.version);
  if (code) {
    return *code;
  }
  const std::string msg = fmt::format(
      "'{}' is not an NCCL release (expected 2.MINOR.PATCH such as 2.19.3, or a version code "
      "such as 21903)",
      spec.version);
  if (spec.version_pos.file.empty()) {
    throw core::UsageError("nccl.version: " + msg);
  }
  throw core::ScenarioError(spec.version_pos, "nccl.version", msg);
}

std::vector<std::string> ignored_nccl_env(const core::NcclSpec& spec) {
  return detail::unread(spec.env, kRead);
}

} // namespace collsim::stacks

#include "collsim/stacks/mpi_env.hpp"

#include "env_support.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>

namespace collsim::stacks {
namespace {

constexpr std::array<std::string_view, 6> kRead{"UCX_RNDV_THRESH",
                                                "UCX_TLS",
                                                "FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE",
                                                "FI_EFA_INTER_MIN_READ_MESSAGE_SIZE",
                                                "FI_EFA_SHM_MAX_MEDIUM_SIZE",
                                                "FI_EFA_TX_MIN_CREDITS"};

/// UCX v1.12's transport names and the aliases of ucp_tl_aliases (src/ucp/core/ucp_context.c).
constexpr std::array<std::string_view, 40> kTransports{
    "all",      "self", "tcp",       "sm",       "shm",       "mm",      "posix",     "sysv",
    "xpmem",    "knem", "cma",       "ib",       "rc",        "rc_v",    "rc_x",      "rc_verbs",
    "rc_mlx5",  "ud",   "ud_v",      "ud_x",     "ud_verbs",  "ud_mlx5", "dc",        "dc_x",
    "dc_mlx5",  "ugni", "ugni_smsg", "ugni_udt", "ugni_rdma", "cuda",    "cuda_copy", "cuda_ipc",
    "gdr_copy", "rocm", "rocm_copy", "rocm_ipc", "rocm_gdr",  "sockcm",  "rdmacm",    "cm"};

/// UCX v1.12's shared-memory transports after ucp_tl_aliases (src/ucp/core/ucp_context.c: "mm"
/// = posix, sysv, xpmem; "sm" and "shm" = those and knem, cma; "all" = every one). cma and knem
/// (src/uct/sm/scopy) copy once, from the sender's memory into the receiver's; xpmem maps the
/// peer's buffer (its rkey_ptr) for the same single copy; posix and sysv are FIFOs in a shared
/// segment (src/uct/sm/mm), a copy in by the sender and a copy out by the receiver.
std::vector<std::string_view> shared_memory_transports(std::string_view name) {
  if (name == "all" || name == "sm" || name == "shm") {
    return {"posix", "sysv", "xpmem", "knem", "cma"};
  }
  if (name == "mm") {
    return {"posix", "sysv", "xpmem"};
  }
  if (name == "posix" || name == "sysv" || name == "xpmem" || name == "knem" || name == "cma") {
    return {name};
  }
  return {};
}

/// What the transports of UCX_TLS leave for messages inside a node.
SharedMemoryCopies shared_memory_copies(const std::vector<std::string>& tls, bool excluded) {
  std::vector<std::string_view> on{"posix", "sysv", "xpmem", "knem", "cma"};
  if (!excluded) {
    on.clear();
    for (const std::string& t : tls) {
      for (const std::string_view s : shared_memory_transports(t)) {
        on.push_back(s);
      }
    }
  } else {
    for (const std::string& t : tls) {
      for (const std::string_view s : shared_memory_transports(t)) {
        on.erase(std::remove(on.begin(), on.end(), s), on.end());
      }
    }
  }
  const auto has = [&](std::string_view s) {
    return std::find(on.begin(), on.end(), s) != on.end();
  };
  if (has("cma") || has("knem") || has("xpmem")) {
    return SharedMemoryCopies::single;
  }
  return has("posix") || has("sysv") ? SharedMemoryCopies::two : SharedMemoryCopies::none;
}

[[noreturn]] void fail(const core::MpiSpec& spec, const std::string& name, const std::string& msg) {
  detail::env_fail(spec.env_pos, "mpi.env", name, msg);
}

std::string lower(std::string_view s) {
  return detail::lower_no_spaces(s);
}

/// UCX's memory units (ucs_str_to_memunits): inf, auto, or a count with an optional b, k, kb,
/// m, mb, g, gb suffix (powers of 1024). Returns 0 for inf, kUcxAutoRndvThresh for auto.
std::uint64_t memunits(const core::MpiSpec& spec, const std::string& name,
                       const std::string& value) {
  const std::string v = lower(value);
  if (v == "inf") {
    return 0;
  }
  if (v == "auto") {
    return kUcxAutoRndvThresh;
  }
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  const std::string_view unit(end, static_cast<std::size_t>(v.data() + v.size() - end));
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "k" || unit == "kb") {
    scale = std::uint64_t{1} << 10;
  } else if (unit == "m" || unit == "mb") {
    scale = std::uint64_t{1} << 20;
  } else if (unit == "g" || unit == "gb") {
    scale = std::uint64_t{1} << 30;
  }
  if (ec != std::errc{} || end == v.data() || scale == 0 || n == 0) {
    fail(spec, name,
         fmt::format("expected a size such as 8k, 64kb or 1m (UCX memory units, powers of 1024), "
                     "inf or auto, got '{}'",
                     value));
  }
  return n * scale;
}

/// A libfabric size parameter (fi_param_get_size_t: a decimal count of bytes); at least `least`.
std::uint64_t fi_size(const core::MpiSpec& spec, const std::string& name, const std::string& value,
                      std::uint64_t least) {
  const std::string v = lower(value);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || v.empty() || n < least) {
    fail(spec, name,
         fmt::format("expected a whole number{} (libfabric reads it as a decimal count), got '{}'",
                     least > 0 ? fmt::format(" of at least {}", least) : std::string{}, value));
  }
  return n;
}

void read_efa(const core::MpiSpec& spec, EfaEnv& efa) {
  const std::array<std::pair<std::string_view, std::uint64_t*>, 4> vars{{
      {"FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE", &efa.inter_max_medium_bytes},
      {"FI_EFA_INTER_MIN_READ_MESSAGE_SIZE", &efa.inter_min_read_bytes},
      {"FI_EFA_SHM_MAX_MEDIUM_SIZE", &efa.shm_max_medium_bytes},
      {"FI_EFA_TX_MIN_CREDITS", &efa.tx_min_credits},
  }};
  for (const auto& [name, field] : vars) {
    if (const auto it = spec.env.find(std::string(name)); it != spec.env.end()) {
      *field = fi_size(spec, it->first, it->second, name == "FI_EFA_TX_MIN_CREDITS" ? 1 : 0);
    }
  }
}

} // namespace

MpiEnv parse_mpi_env(const core::MpiSpec* spec) {
  MpiEnv env;
  if (spec == nullptr) {
    return env;
  }
  if (spec->call_overhead.value >= 0) {
    env.call_overhead = spec->call_overhead;
  }
  if (const auto it = spec->env.find("UCX_RNDV_THRESH"); it != spec->env.end()) {
    env.rendezvous_bytes = memunits(*spec, it->first, it->second);
  }
  if (const auto it = spec->env.find("UCX_TLS"); it != spec->env.end()) {
    std::string_view v = it->second;
    env.tls_excluded = !v.empty() && v.front() == '^';
    if (env.tls_excluded) {
      v.remove_prefix(1);
    }
    while (!v.empty()) {
      const std::size_t comma = v.find(',');
      const std::string item = lower(v.substr(0, comma));
      v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
      if (std::find(kTransports.begin(), kTransports.end(), item) == kTransports.end()) {
        fail(*spec, it->first,
             fmt::format("unknown UCX transport '{}' (UCX 1.12 knows: {})", item,
                         fmt::join(kTransports, ", ")));
      }
      env.tls.push_back(item);
    }
    if (env.tls.empty()) {
      fail(*spec, it->first, "expected a comma list of UCX transports such as rc,sm,self");
    }
    env.shared_memory = shared_memory_copies(env.tls, env.tls_excluded);
  }
  read_efa(*spec, env.efa);
  env.tuning = read_ompi_tuning(spec);
  return env;
}

std::vector<std::string> ignored_mpi_env(const core::MpiSpec& spec) {
  std::vector<std::string> out;
  for (std::string& name : detail::unread(spec.env, kRead)) {
    if (!is_ompi_tuning_variable(name)) {
      out.push_back(std::move(name));
    }
  }
  return out;
}

} // namespace collsim::stacks

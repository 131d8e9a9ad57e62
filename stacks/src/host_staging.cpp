#include "host_staging.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace collsim::stacks::detail {
namespace {

using core::Buffer;
using core::OpKind;
using core::Range;
using core::Rank;

/// A minor page fault on first touch of anonymous memory: kernel entry, page allocation and
/// zeroing of a 4 KiB page, about 1 us (median of 100 faults measured with rdtsc on Linux 6.6;
/// "Page fault latency measurement", ddumbying.vercel.app/experiments/pagefault-latency; the
/// kernel's pre-zeroing notes name zeroing the costliest part).
constexpr double kFaultSeconds = 1.0e-6;
constexpr double kPageBytes = 4096;
/// glibc's malloc serves a request from a fresh mmap above M_MMAP_THRESHOLD; the threshold
/// rises after each free of such a chunk up to DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit
/// systems (mallopt(3)): larger buffers are mapped, and faulted in, on every call.
constexpr std::uint64_t kMmapThresholdMax = 32ULL << 20;
/// The call itself (kCudaSyncCallSeconds); coll/cuda calls cudaMemcpy once per staged buffer.
constexpr double kMemcpyCallSeconds = kCudaSyncCallSeconds;

/// The range rank `r` of `h` holds the result in (nothing for a non-root of reduce).
Range result_range(const core::ScheduleHeader& h, Rank r) {
  const std::uint64_t n = std::min<std::uint64_t>(h.bytes.value, h.data_bytes);
  switch (h.collective) {
  case core::CollectiveKind::reduce:
    return r == h.root ? Range{Buffer::data, 0, n} : Range{Buffer::data, 0, 0};
  case core::CollectiveKind::reduce_scatter: {
    const auto [b, len] = core::block_range(n, h.ranks, r);
    return Range{Buffer::data, b, len};
  }
  case core::CollectiveKind::alltoall: // the receive buffer follows the send buffer in data
    return Range{Buffer::data, n, n};
  default: return Range{Buffer::data, 0, n};
  }
}

class Stager {
public:
  Stager(const core::Schedule& s, const core::Topology& t, const HostCosts& c)
      : s_(s), t_(t), c_(c), p_(s.ranks()) {}

  core::Schedule run() {
    core::ScheduleHeader h = s_.header();
    const std::uint64_t n = std::min<std::uint64_t>(h.bytes.value, h.data_bytes);
    in_bytes_ = n;
    scratch_ = h.tmp_bytes;
    std::uint64_t most_out = 0;
    for (Rank r = 0; r < p_; ++r) {
      most_out = std::max(most_out, result_range(h, r).length);
    }
    h.tmp_bytes += most_out; // where each agent keeps its copy of the receive buffer
    for (Rank r = 0; r < p_; ++r) {
      const core::Device& gpu = t_.devices()[t_.device_of(r)];
      h.agents.push_back(t_.devices()[gpu.host].name);
    }
    h.protocol.agents_copy = true;
    core::Schedule out(h);
    // Room for the algorithm's operations and the staging.
    out.reserve(s_.op_count() + 16 * static_cast<std::size_t>(p_), s_.dep_count());
    for (Rank r = 0; r < p_; ++r) {
      rank_program(out, r);
    }
    for (Rank r = 0; r < p_; ++r) {
      agent_program(out, r);
    }
    out.finish();
    return out;
  }

private:
  /// One core's copy rate on the socket of rank r's agent (0: copies are free).
  [[nodiscard]] double copy_rate(Rank r) const {
    const core::Device& gpu = t_.devices()[t_.device_of(r)];
    return t_.devices()[gpu.host].endpoint.copy_bandwidth.bytes_per_second;
  }

  /// The host side of a synchronous copy between the device and `bytes` of pageable memory: the
  /// call's own overhead, and the driver staging it through a pinned buffer that the CPU copies
  /// to or from the pageable one (CUDA C++ Best Practices Guide, "Pinned Memory"); a fresh
  /// mapping also faults in.
  [[nodiscard]] core::Seconds host_copy(std::uint64_t bytes, double copy, bool fresh) const {
    double t = kMemcpyCallSeconds + (copy > 0.0 ? static_cast<double>(bytes) / copy : 0.0);
    if (fresh && bytes >= c_.mmap_threshold) {
      t += static_cast<double>(bytes) * c_.fault_seconds_per_byte;
    }
    return core::Seconds{t};
  }

  void rank_program(core::Schedule& out, Rank r) const {
    const Rank agent = p_ + r;
    const Range result = result_range(s_.header(), r);
    out.begin_rank(r);
    // Synchronous copies, one after another: the send buffer to the host, the receive buffer
    // too (coll/cuda copies both), the result back.
    const std::uint32_t sbuf = out.send(agent, {Buffer::data, 0, in_bytes_});
    if (result.length > 0) {
      const std::uint32_t rbuf = out.send(agent, result, {sbuf});
      out.recv(agent, result, {sbuf, rbuf});
    }
  }

  void agent_program(core::Schedule& out, Rank r) {
    const Rank rank = r;
    const Range result = result_range(s_.header(), r);
    const double copy = copy_rate(r);
    out.begin_rank(p_ + r);
    std::uint32_t staged = out.recv(rank, {Buffer::data, 0, in_bytes_});
    staged = out.calc(host_copy(in_bytes_, copy, true), std::vector<std::uint32_t>{staged});
    if (result.length > 0) {
      const std::uint32_t rbuf = out.recv(rank, {Buffer::tmp, scratch_, result.length});
      staged =
          out.calc(host_copy(result.length, copy, true), std::vector<std::uint32_t>{staged, rbuf});
    }
    // The algorithm on the host copies, its operations as they are. Its reductions and local
    // copies run at the socket's rates (the agent's endpoint). A message to an agent of the same
    // node moves through shared memory: one core copies it (UCX's CMA single copy), which the
    // engines charge before the send (Protocol::agents_copy), so that it delays the message and
    // the agent's later operations but never holds back an operation that does not wait for it.
    std::vector<std::uint32_t> deps = out.append_program(s_, r, p_, staged);
    deps.insert(deps.begin(), staged);
    if (result.length > 0) {
      const std::uint32_t back = out.calc(host_copy(result.length, copy, false), deps);
      out.send(rank, result, {back});
    }
  }

  const core::Schedule& s_;
  const core::Topology& t_;
  const HostCosts& c_;
  Rank p_;
  std::uint64_t in_bytes_ = 0;
  std::uint64_t scratch_ = 0;
};

} // namespace

HostCosts pooled_costs() {
  HostCosts c;
  c.fault_seconds_per_byte = 0.0;
  c.mmap_threshold = std::numeric_limits<std::uint64_t>::max();
  return c;
}

HostCosts host_costs() {
  HostCosts c;
  c.fault_seconds_per_byte = kFaultSeconds / kPageBytes;
  c.mmap_threshold = kMmapThresholdMax;
  return c;
}

bool stageable(const core::Schedule& s, const core::Topology& t) {
  if (!on_gpus(s, t)) {
    return false;
  }
  for (Rank r = 0; r < s.ranks(); ++r) {
    if (t.devices()[t.device_of(r)].host == core::kNoDevice) {
      return false;
    }
  }
  return true;
}

bool stages(const core::Schedule& s, const core::Topology& t) {
  const core::CollectiveKind c = s.header().collective;
  return (c == core::CollectiveKind::allreduce || c == core::CollectiveKind::reduce ||
          c == core::CollectiveKind::reduce_scatter) &&
         stageable(s, t);
}

bool on_gpus(const core::Schedule& s, const core::Topology& t) {
  if (t.is_full_mesh() || s.ranks() > t.rank_count()) {
    return false;
  }
  for (Rank r = 0; r < s.ranks(); ++r) {
    if (t.devices()[t.device_of(r)].kind != core::DeviceKind::gpu) {
      return false;
    }
  }
  return true;
}

core::Schedule stage_through_host(const core::Schedule& s, const core::Topology& t,
                                  const HostCosts& costs) {
  if (!s.header().agents.empty()) {
    throw core::UsageError(fmt::format(
        "{} reduces in the network ({}); a library staging GPU buffers through host memory "
        "cannot run it",
        s.header().algorithm, fmt::join(s.header().agents, ", ")));
  }
  return Stager(s, t, costs).run();
}

} // namespace collsim::stacks::detail

#pragma once
// Internal: what the in-network algorithms share (algorithms.md AR17-AR19, AG16, RS9, section 3):
// where the request's ranks sit and which switches reduce (the "fabric"), the refusals when a
// switch is missing, and an emitter that either counts a generator's operations or appends them,
// so that check() (size limit), Schedule::reserve and the schedule itself come from one piece of
// code and cannot drift apart.
//
// In-network participants: a reducing switch takes part as an agent (core::ScheduleHeader::agents,
// participants ranks, ranks + 1, ...). Agents start with undefined buffers; every agent program
// here receives a block first and recv_reduces the other contributions into it, then sends the
// result on. Every generator begins all participants in order (ranks, then agents).

#include "collsim/algorithms/registry.hpp"
#include "generator_support.hpp"
#include "nccl_support.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collsim::algorithms::detail::innet {

/// "No dependency" for the emitter's single optional dependency.
inline constexpr std::uint32_t kNoDep = 0xffffffffU;

/// Counts operations (and dependencies) or appends them to a schedule. Every operation of the
/// in-network generators has at most one dependency.
class Emitter {
public:
  /// Counts only.
  Emitter() = default;
  /// Appends to `s` (and counts).
  explicit Emitter(core::Schedule& s) : schedule_(&s) {}

  void begin(core::Rank who) {
    if (schedule_ != nullptr) {
      schedule_->begin_rank(who);
    }
    local_ = 0;
  }
  /// Puts the operations added from now on into issue stream `k` (core::Schedule::set_stream).
  void stream(std::uint32_t k) {
    if (schedule_ != nullptr) {
      schedule_->set_stream(k);
    }
  }
  std::uint32_t send(core::Rank peer, core::Range from, std::uint32_t dep = kNoDep) {
    return add(core::OpKind::send, peer, from, dep);
  }
  std::uint32_t recv(core::Rank peer, core::Range into, std::uint32_t dep = kNoDep) {
    return add(core::OpKind::recv, peer, into, dep);
  }
  std::uint32_t recv_reduce(core::Rank peer, core::Range into, std::uint32_t dep = kNoDep) {
    return add(core::OpKind::recv_reduce, peer, into, dep);
  }
  /// The first contribution of a block is received, the later ones are combined into it; each
  /// write waits for the previous one (`last`, kNoDep for the first). Returns the new last write.
  std::uint32_t gather_reduce(core::Rank peer, core::Range into, std::uint32_t last) {
    return last == kNoDep ? recv(peer, into) : recv_reduce(peer, into, last);
  }
  [[nodiscard]] OpCounts counts() const { return counts_; }

private:
  std::uint32_t add(core::OpKind kind, core::Rank peer, core::Range target, std::uint32_t dep) {
    const std::size_t ndeps = dep == kNoDep ? 0 : 1;
    if (schedule_ != nullptr) {
      add_op(*schedule_, kind, peer, target, std::span<const std::uint32_t>(&dep, ndeps));
    }
    ++counts_.ops;
    counts_.deps += ndeps;
    return local_++;
  }
  core::Schedule* schedule_ = nullptr;
  OpCounts counts_;
  std::uint32_t local_ = 0;
};

/// Builds a schedule from `body(Emitter&)`, which must begin every participant in order: once to
/// count (for the exact reservation), once to append.
template <class Body>
core::Schedule build(core::ScheduleHeader header, Body&& body) {
  Emitter counter;
  body(counter);
  core::Schedule s(std::move(header));
  s.reserve(counter.counts().ops, counter.counts().deps);
  Emitter out(s);
  body(out);
  s.finish();
  return s;
}

/// Emits first(i) for i = 0..count-1 and second(i) right after first(i + lag) (the rest at the
/// end). A program that waits in second(i) (a dependency on a round trip through a switch) then
/// still issues the next `lag` first() parts, so that pieces pipeline through the switch instead of
/// running one phase after the other.
template <class Index, class First, class Second>
void interleave(Index count, Index lag, First&& first, Second&& second) {
  for (Index i = 0; i < count; ++i) {
    first(i);
    if (i >= lag) {
      second(i - lag);
    }
  }
  for (Index i = count > lag ? count - lag : 0; i < count; ++i) {
    second(i);
  }
}

/// Where the ranks sit and which switches can reduce.
struct Fabric {
  NodeLayout layout;
  std::vector<std::string> node_switch; ///< per node index: its reducing NVSwitch, or ""
  std::string network_switch;           ///< the reducing network switch, or ""
  bool topology = false;                ///< the request has a (non full-mesh) topology
};
Fabric fabric_of(const Request& req);

/// "" when the ranks sit on one node or the fabric has a reducing network switch; else why
/// `what` (e.g. "collnet_direct") cannot run.
std::string network_switch_refusal(const Fabric& f, std::string_view what);
/// "" when every node has a reducing NVSwitch (NVLink SHARP); else why `what` cannot run.
std::string node_switch_refusal(const Fabric& f, std::string_view what);
/// "" when no node holds more than `most` ranks; else why (`limit` names the library's limit).
std::string local_ranks_refusal(const Fabric& f, std::uint32_t most, std::string_view what,
                                std::string_view limit);

/// The value of parameter `name` (the registry fills in defaults), or `fallback`.
std::int64_t param_or(const Request& req, const std::string& name, std::int64_t fallback);

/// NCCL_MAX_NVLS_ARITY: NCCL skips NVLS for collectives other than allreduce when a node holds
/// more ranks (algorithms.md section 2.4).
inline constexpr std::uint32_t kMaxNvlsArity = 32;

/// The frame shared by the NVLS algorithms (allreduce, allgather, reduce-scatter "nvls"): the
/// header (NCCL's NVLS protocol, Simple only; the node switches, and across nodes the network
/// switch, as agents) around `emit(req, fabric, emitter)`.
template <class Emit>
core::Schedule nvls_generate(const Request& req, const char* name, Emit&& emit) {
  const Fabric f = fabric_of(req);
  core::ScheduleHeader h = make_header(req, 0, name);
  h.protocol = nccl::make_protocol(nccl::Algo::nvls, nccl::Proto::simple, req);
  if (req.ranks > 1) {
    h.agents = f.node_switch;
    if (f.layout.nodes() > 1) {
      h.agents.push_back(f.network_switch);
    }
  }
  return build(std::move(h), [&](Emitter& e) { emit(req, f, e); });
}
/// Why an NVLS algorithm cannot run (no reducing node switch; more than kMaxNvlsArity ranks on a
/// node when `arity_limit`; several nodes without a reducing network switch; the size limit), or
/// "".
template <class Emit>
std::string nvls_refusal(const Request& req, const char* name, bool arity_limit, Emit&& emit) {
  if (req.ranks < 2) {
    return {};
  }
  const Fabric f = fabric_of(req);
  std::string why = node_switch_refusal(f, name);
  if (why.empty() && arity_limit) {
    why = local_ranks_refusal(f, kMaxNvlsArity, name, "NCCL_MAX_NVLS_ARITY");
  }
  if (why.empty()) {
    why = network_switch_refusal(f, name);
  }
  if (!why.empty()) {
    return why;
  }
  Emitter counter;
  emit(req, f, counter);
  return size_limit_refusal(counter.counts());
}

/// The `index`-th of `parts` near-equal pieces of the data buffer [0, total).
inline core::Range piece(std::uint64_t total, std::uint64_t parts, std::uint64_t index) {
  const auto [offset, length] = core::block_range(total, parts, index);
  return data_range(offset, length);
}

} // namespace collsim::algorithms::detail::innet

// Link loads and the congestion objective of the placement search (placement_loads.hpp).
//
// Why squares: the exchange ends when its busiest link has carried its bytes (flows that share a
// link split its bandwidth, as SimGrid's max-min model and real fabrics do), so the objective
// that matters is the largest busy time, bytes / bandwidth, over the links. The maximum is flat
// under most swaps and costly to maintain; the sum of squared busy times has the same minimisers
// in the cases that matter (it strictly prefers spreading a hot link's bytes) and a swap changes
// it only on the links of the moved ranks' routes. Load-balancing mappers use the same measure
// (the quadratic "congestion" of Hoefler & Snir, "Generic topology mapping strategies for
// large-scale parallel architectures", ICS 2011, who also minimise the maximum congestion).

#include "placement_loads.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::analysis {
namespace detail {

LinkLoads::LinkLoads(const PlacementProblem& p, const Mapping& m) : p_(p) {
  const auto& links = p.topology.links();
  bytes_.assign(links.size(), 0.0);
  pending_.assign(links.size(), 0.0);
  touched_flag_.assign(links.size(), 0);
  inv_bw2_.reserve(links.size());
  for (const core::Link& l : links) {
    const double bw = l.bandwidth.bytes_per_second;
    inv_bw2_.push_back(bw > 0.0 ? 1.0 / (bw * bw) : 0.0);
  }
  for (std::uint32_t a = 0; a < p.pattern.ranks; ++a) {
    for (const std::uint32_t b : p.partners[a]) {
      const auto bytes = static_cast<double>(p.pattern.at(a, b));
      for (const core::LinkId l : p.route(m[a], m[b])) {
        bytes_[l] += bytes;
      }
    }
  }
}

double LinkLoads::congestion() const {
  double c = 0.0;
  for (std::size_t l = 0; l < bytes_.size(); ++l) {
    c += bytes_[l] * bytes_[l] * inv_bw2_[l];
  }
  return c;
}

void LinkLoads::move(std::uint32_t from_slot, std::uint32_t to_slot, double bytes) {
  for (const core::LinkId l : p_.route(from_slot, to_slot)) {
    if (!touched_flag_[l]) {
      touched_flag_[l] = 1;
      touched_.push_back(l);
    }
    pending_[l] += bytes;
  }
}

double LinkLoads::swap_delta(const Mapping& m, std::uint32_t a, std::uint32_t b) {
  clear_pending();
  const auto moved = [&](std::uint32_t r) { return r == a ? m[b] : r == b ? m[a] : m[r]; };
  for (const std::uint32_t r : {a, b}) {
    for (const std::uint32_t j : p_.partners[r]) {
      if (r == b && j == a) {
        continue; // the messages between a and b, counted with a
      }
      if (const std::uint64_t out = p_.pattern.at(r, j); out > 0) {
        move(m[r], m[j], -static_cast<double>(out));
        move(moved(r), moved(j), static_cast<double>(out));
      }
      if (const std::uint64_t in = p_.pattern.at(j, r); in > 0) {
        move(m[j], m[r], -static_cast<double>(in));
        move(moved(j), moved(r), static_cast<double>(in));
      }
    }
  }
  double d = 0.0;
  for (const core::LinkId l : touched_) {
    d += (2.0 * bytes_[l] + pending_[l]) * pending_[l] * inv_bw2_[l];
  }
  return d;
}

void LinkLoads::commit() {
  for (const core::LinkId l : touched_) {
    bytes_[l] += pending_[l];
  }
  clear_pending();
}

void LinkLoads::clear_pending() {
  for (const core::LinkId l : touched_) {
    pending_[l] = 0.0;
    touched_flag_[l] = 0;
  }
  touched_.clear();
}

} // namespace detail

double congestion_seconds2(const PlacementProblem& p, const Mapping& m) {
  return detail::LinkLoads(p, m).congestion();
}

std::vector<HotLink> hottest_links(const PlacementProblem& p, const Mapping& m, std::size_t count) {
  const detail::LinkLoads loads(p, m);
  const auto& links = p.topology.links();
  std::vector<HotLink> all;
  for (std::size_t l = 0; l < links.size(); ++l) {
    const double bytes = loads.bytes()[l];
    if (bytes <= 0.0) {
      continue;
    }
    HotLink h;
    h.from = p.topology.devices()[links[l].from].name;
    h.to = p.topology.devices()[links[l].to].name;
    h.kind = core::to_string(links[l].kind);
    h.bytes = static_cast<std::uint64_t>(bytes);
    h.busy = core::Seconds{bytes / links[l].bandwidth.bytes_per_second};
    all.push_back(std::move(h));
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const HotLink& x, const HotLink& y) { return x.busy.value > y.busy.value; });
  all.resize(std::min(all.size(), count));
  return all;
}

Objective parse_objective(const std::string& name) {
  if (name == "time") {
    return Objective::time;
  }
  if (name == "hop-bytes") {
    return Objective::hop_bytes;
  }
  throw core::UnknownNameError("placement objective", name, {"time", "hop-bytes"});
}

} // namespace collsim::analysis

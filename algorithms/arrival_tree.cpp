#include "arrival_tree.hpp"

#include <algorithm>
#include <queue>
#include <tuple>

namespace collsim::algorithms::detail {

ArrivalTree arrival_tree(const std::vector<double>& arrivals, std::uint32_t p, core::Rank root,
                         double step) {
  ArrivalTree t;
  t.links.resize(p);
  // (ready time, rank): the earliest first, ties to the lower rank.
  using Entry = std::pair<double, core::Rank>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (core::Rank r = 0; r < p; ++r) {
    ready.emplace(r < arrivals.size() ? arrivals[r] : 0.0, r);
  }
  while (ready.size() > 1) {
    auto [tx, x] = ready.top();
    ready.pop();
    auto [ty, y] = ready.top();
    ready.pop();
    if (x == root) { // the root keeps the result: the other one sends
      std::swap(tx, ty);
      std::swap(x, y);
    }
    t.links[x].has_parent = true;
    t.links[x].parent = y;
    t.links[y].children.push_back(x);
    ready.emplace(std::max(ty, tx + step), y);
  }
  return t;
}

double combine_estimate(const Request& req, std::uint64_t bytes) {
  const auto n = static_cast<double>(bytes);
  if (req.topology == nullptr || req.ranks < 2 || req.topology->rank_count() < req.ranks) {
    return 1e-6 + n / 10e9;
  }
  const core::Topology& t = *req.topology;
  const core::RouteCost c = t.route_cost(0, req.ranks - 1);
  const core::EndpointParams& e = t.endpoint(0);
  double time = c.latency.value + 2.0 * e.overhead.value;
  if (c.bottleneck.bytes_per_second > 0.0) {
    time += n / c.bottleneck.bytes_per_second;
  }
  if (e.reduce_bandwidth.bytes_per_second > 0.0) {
    time += n / e.reduce_bandwidth.bytes_per_second;
  }
  return time;
}

std::vector<double> arrivals_of(const Request& req) {
  if (req.arrivals.size() == req.ranks) {
    return req.arrivals;
  }
  return std::vector<double>(req.ranks, 0.0);
}

core::Rank latest_rank(const std::vector<double>& arrivals) {
  core::Rank best = 0;
  for (core::Rank r = 1; r < arrivals.size(); ++r) {
    if (arrivals[r] >= arrivals[best]) {
      best = r;
    }
  }
  return best;
}

} // namespace collsim::algorithms::detail

// Finding where ranks should run (placement.hpp; docs/placement.md).
//
// The search works on a surrogate of the exchange's time: every message alone on its route,
// latency + bytes / narrowest link (the hop-bytes measure of the mapping literature, weighted by
// what each hop costs here). Greedy mapping follows the graph-growing heuristic of static mappers
// (Scotch's and Jeannot & Mercier's TreeMatch start the same way: place next the rank most
// attached to those already placed, where it adds least); annealing then swaps pairs of ranks
// (Kirkpatrick, Gelatt & Vecchi, Science 1983) with a geometric cooling schedule.

#include "collsim/analysis/placement.hpp"

#include "placement_loads.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/topologies/build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>

namespace collsim::analysis {
namespace {

/// The surrogate cost of `bytes` from slot a to slot b.
double pair_cost(const PlacementProblem& p, std::uint32_t a, std::uint32_t b, std::uint64_t bytes) {
  if (bytes == 0 || a == b) {
    return 0.0;
  }
  const std::size_t k = std::size_t{a} * p.slots.size() + b;
  return p.latency[k] + static_cast<double>(bytes) * p.seconds_per_byte[k];
}

/// What rank r's messages (both directions) cost with r on slot `s` and the others as in `m`.
double rank_cost(const PlacementProblem& p, const Mapping& m, std::uint32_t r, std::uint32_t s) {
  double c = 0.0;
  for (const std::uint32_t j : p.partners[r]) {
    c += pair_cost(p, s, m[j], p.pattern.at(r, j)) + pair_cost(p, m[j], s, p.pattern.at(j, r));
  }
  return c;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
}

} // namespace

TrafficPattern halo_pattern(std::array<std::uint32_t, 3> dims, std::uint64_t bytes, bool periodic) {
  TrafficPattern t;
  const std::uint32_t nx = dims[0];
  const std::uint32_t ny = dims[1];
  const std::uint32_t nz = dims[2];
  t.ranks = nx * ny * nz;
  t.name = fmt::format("halo{}d {}x{}{} of {} B per face{}", nz > 1 ? 3 : 2, nx, ny,
                       nz > 1 ? fmt::format("x{}", nz) : "", bytes, periodic ? ", periodic" : "");
  t.bytes.assign(std::size_t{t.ranks} * t.ranks, 0);
  const auto rank = [&](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
    return x + nx * (y + ny * z);
  };
  for (std::uint32_t z = 0; z < nz; ++z) {
    for (std::uint32_t y = 0; y < ny; ++y) {
      for (std::uint32_t x = 0; x < nx; ++x) {
        const std::array<std::uint32_t, 3> at{x, y, z};
        for (std::uint32_t d = 0; d < 3; ++d) {
          const std::uint32_t n = dims[d];
          if (n < 2) {
            continue;
          }
          for (const int step : {-1, 1}) {
            const auto moved = static_cast<std::int64_t>(at[d]) + step;
            if (!periodic && (moved < 0 || moved >= static_cast<std::int64_t>(n))) {
              continue;
            }
            std::array<std::uint32_t, 3> to = at;
            to[d] = static_cast<std::uint32_t>((moved + n) % n);
            const std::uint32_t a = rank(x, y, z);
            const std::uint32_t b = rank(to[0], to[1], to[2]);
            if (a != b) {
              t.bytes[std::size_t{a} * t.ranks + b] = bytes; // a 2-wide torus: one neighbour
            }
          }
        }
      }
    }
  }
  return t;
}

TrafficPattern parse_pattern(const std::string& spec) {
  const std::string usage = "expected halo2d:XxY:BYTES or halo3d:XxYxZ:BYTES, with :periodic for "
                            "a torus (halo3d:4x4x4:64KiB), or a CSV file of bytes";
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string part; std::getline(ss, part, ':');) {
    parts.push_back(part);
  }
  if (parts.size() < 3 || parts.size() > 4 || (parts[0] != "halo2d" && parts[0] != "halo3d")) {
    throw core::UsageError(fmt::format("--pattern '{}': {}", spec, usage));
  }
  const bool periodic = parts.size() == 4;
  if (periodic && parts[3] != "periodic") {
    throw core::UsageError(
        fmt::format("--pattern '{}': '{}' is not 'periodic'; {}", spec, parts[3], usage));
  }
  const std::uint32_t want = parts[0] == "halo3d" ? 3 : 2;
  std::array<std::uint32_t, 3> dims{1, 1, 1};
  std::stringstream ds(parts[1]);
  std::uint32_t count = 0;
  for (std::string d; std::getline(ds, d, 'x');) {
    const bool digits = !d.empty() && std::all_of(d.begin(), d.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (!digits || count >= want || d.size() > 6 || std::stoul(d) == 0) {
      throw core::UsageError(fmt::format(
          "--pattern '{}': '{}' is not {} positive extents joined by 'x'", spec, parts[1], want));
    }
    dims[count++] = static_cast<std::uint32_t>(std::stoul(d));
  }
  if (count != want) {
    throw core::UsageError(fmt::format("--pattern '{}': '{}' is not {} positive extents joined "
                                       "by 'x'",
                                       spec, parts[1], want));
  }
  const auto bytes = core::parse_bytes(parts[2]);
  if (!bytes.ok()) {
    throw core::UsageError(fmt::format("--pattern '{}': {}", spec, bytes.error));
  }
  if (std::uint64_t{dims[0]} * dims[1] * dims[2] > 65536) {
    throw core::UsageError(fmt::format("--pattern '{}': more than 65536 ranks", spec));
  }
  return halo_pattern(dims, bytes.value.value, periodic);
}

TrafficPattern read_pattern_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw core::UsageError(fmt::format("cannot open pattern file '{}'", path));
  }
  std::vector<std::vector<std::uint64_t>> rows;
  std::string line;
  std::uint32_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') {
      continue;
    }
    std::vector<std::uint64_t> row;
    std::size_t start = 0;
    while (start <= line.size()) {
      const std::size_t comma = std::min(line.find(',', start), line.size());
      const std::string cell = trim(line.substr(start, comma - start));
      const auto col = static_cast<std::uint32_t>(start + 1);
      const auto b = core::parse_bytes(cell);
      if (!b.ok()) {
        throw core::LogParseError({path, number, col}, b.error);
      }
      row.push_back(b.value.value);
      start = comma + 1;
    }
    if (!rows.empty() && row.size() != rows.front().size()) {
      throw core::LogParseError({path, number, 1},
                                fmt::format("row {} has {} entries, the first row {}", rows.size(),
                                            row.size(), rows.front().size()));
    }
    if (const std::size_t self = rows.size(); self < row.size() && row[self] != 0) {
      throw core::LogParseError(
          {path, number, 1},
          fmt::format("rank {} sends {} bytes to itself (the diagonal must be 0)", self,
                      row[self]));
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty() || rows.size() != rows.front().size()) {
    throw core::LogParseError(
        {path, number + 1, 1},
        fmt::format("{} rows of {} entries: a pattern is a square matrix, one row per rank",
                    rows.size(), rows.empty() ? 0 : rows.front().size()));
  }
  TrafficPattern t;
  t.name = path;
  t.ranks = static_cast<std::uint32_t>(rows.size());
  for (const auto& r : rows) {
    t.bytes.insert(t.bytes.end(), r.begin(), r.end());
  }
  return t;
}

PlacementProblem make_placement_problem(const core::Scenario& scenario, TrafficPattern pattern) {
  if (scenario.topology.kind != "system") {
    throw core::UsageError(fmt::format("scenario '{}' has a {} topology: placement needs a system "
                                       "topology (nodes with sockets, NUMA domains, GPUs)",
                                       scenario.name, scenario.topology.kind));
  }
  if (pattern.ranks < 2) {
    throw core::UsageError("a pattern of fewer than 2 ranks has nothing to place");
  }
  // The problem keeps every slot pair's route and cost (ranks^2 entries): 4096 ranks is 16.8 M
  // pairs, about 1 GB with their routes.
  if (pattern.ranks > kMaxPlacementRanks) {
    throw core::UsageError(fmt::format("a pattern of {} ranks: collsim place handles at most {}",
                                       pattern.ranks, kMaxPlacementRanks));
  }
  core::TopologySpec spec = scenario.topology;
  spec.system.placement.order = "block";
  spec.system.placement.rankfile.clear();
  spec.system.placement.slots.clear();
  PlacementProblem p;
  p.topology = topologies::build(spec, pattern.ranks);
  const std::uint32_t n = pattern.ranks;
  std::map<std::uint32_t, std::uint32_t> per_node;
  for (core::Rank r = 0; r < n; ++r) {
    p.slots.push_back(p.topology.device_of(r));
    p.node.push_back(p.topology.node_of(r));
    p.local.push_back(per_node[p.node.back()]++);
  }
  p.seconds_per_byte.assign(std::size_t{n} * n, 0.0);
  p.latency.assign(std::size_t{n} * n, 0.0);
  p.route_offset.assign(std::size_t{n} * n + 1, 0);
  // A route between nodes is the source's path to its egress NIC, the network's path between the
  // two NICs and the destination NIC's path to its device (Topology::route_between builds it the
  // same way): the NIC pairs and the in-node legs are computed once, not for every slot pair.
  const auto& devices = p.topology.devices();
  std::map<std::pair<core::DeviceId, core::DeviceId>, std::vector<core::LinkId>> legs;
  const auto leg = [&](core::DeviceId a, core::DeviceId b) -> const std::vector<core::LinkId>& {
    auto it = legs.find({a, b});
    if (it == legs.end()) {
      it = legs.emplace(std::pair{a, b}, p.topology.route_between(a, b)).first;
    }
    return it->second;
  };
  const auto route = [&](core::DeviceId a, core::DeviceId b) {
    const core::DeviceId out = devices[a].egress;
    const core::DeviceId in = devices[b].egress;
    if (devices[a].node == devices[b].node || out == core::kNoDevice || in == core::kNoDevice) {
      return p.topology.route_between(a, b);
    }
    std::vector<core::LinkId> path = leg(a, out);
    const auto& net = leg(out, in);
    const auto& tail = leg(in, b);
    path.insert(path.end(), net.begin(), net.end());
    path.insert(path.end(), tail.begin(), tail.end());
    return path;
  };
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      const std::size_t k = std::size_t{a} * n + b;
      if (a != b && p.slots[a] != p.slots[b]) {
        const std::vector<core::LinkId> path = route(p.slots[a], p.slots[b]);
        const core::RouteCost c = p.topology.cost_of(path);
        p.seconds_per_byte[k] = 1.0 / c.bottleneck.bytes_per_second;
        p.latency[k] = c.latency.value;
        p.route_links.insert(p.route_links.end(), path.begin(), path.end());
      }
      p.route_offset[k + 1] = static_cast<std::uint32_t>(p.route_links.size());
    }
  }
  p.partners.resize(n);
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (a != b && (pattern.at(a, b) > 0 || pattern.at(b, a) > 0)) {
        p.partners[a].push_back(b);
      }
    }
  }
  p.pattern = std::move(pattern);
  return p;
}

double surrogate_seconds(const PlacementProblem& p, const Mapping& m) {
  double total = 0.0;
  for (std::uint32_t a = 0; a < p.pattern.ranks; ++a) {
    for (const std::uint32_t b : p.partners[a]) {
      total += pair_cost(p, m[a], m[b], p.pattern.at(a, b));
    }
  }
  return total;
}

Mapping place_greedy(const PlacementProblem& p) {
  const std::uint32_t n = p.pattern.ranks;
  std::vector<std::uint64_t> traffic(n, 0);
  for (std::uint32_t a = 0; a < n; ++a) {
    for (const std::uint32_t b : p.partners[a]) {
      traffic[a] += p.pattern.at(a, b) + p.pattern.at(b, a);
    }
  }
  Mapping m(n, 0);
  std::vector<bool> placed(n, false);
  std::vector<bool> taken(n, false);
  std::vector<std::uint64_t> attached(n, 0); // bytes to the ranks placed so far
  for (std::uint32_t step = 0; step < n; ++step) {
    std::uint32_t r = n;
    for (std::uint32_t c = 0; c < n; ++c) {
      if (!placed[c] && (r == n || attached[c] > attached[r] ||
                         (attached[c] == attached[r] && traffic[c] > traffic[r]))) {
        r = c;
      }
    }
    std::uint32_t best = n;
    double best_cost = std::numeric_limits<double>::infinity();
    for (std::uint32_t s = 0; s < n; ++s) {
      if (taken[s]) {
        continue;
      }
      double c = 0.0;
      for (const std::uint32_t j : p.partners[r]) {
        if (placed[j]) {
          c +=
              pair_cost(p, s, m[j], p.pattern.at(r, j)) + pair_cost(p, m[j], s, p.pattern.at(j, r));
        }
      }
      if (c < best_cost) {
        best_cost = c;
        best = s;
      }
    }
    m[r] = best;
    placed[r] = true;
    taken[best] = true;
    for (const std::uint32_t j : p.partners[r]) {
      attached[j] += p.pattern.at(r, j) + p.pattern.at(j, r);
    }
  }
  return m;
}

Mapping place_anneal(const PlacementProblem& p, Mapping start, std::uint64_t seed,
                     std::uint64_t moves, Objective objective) {
  const std::uint32_t n = p.pattern.ranks;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> pick(0, n - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Mapping m = std::move(start);
  const bool congestion = objective == Objective::time;
  std::optional<detail::LinkLoads> loads;
  if (congestion) {
    loads.emplace(p, m);
  }
  // The change of the objective when ranks a and b trade slots (for hop-bytes, pairs between a
  // and b are counted in both ranks' costs, before and after alike).
  const auto delta = [&](std::uint32_t a, std::uint32_t b) {
    if (congestion) {
      return loads->swap_delta(m, a, b);
    }
    const double before = rank_cost(p, m, a, m[a]) + rank_cost(p, m, b, m[b]);
    std::swap(m[a], m[b]);
    const double after = rank_cost(p, m, a, m[a]) + rank_cost(p, m, b, m[b]);
    std::swap(m[a], m[b]);
    return after - before;
  };
  double t0 = 0.0;
  for (int i = 0; i < 64; ++i) {
    t0 += std::abs(delta(pick(rng), pick(rng))) / 64.0;
  }
  if (t0 <= 0.0) {
    return m;
  }
  Mapping best = m;
  double cost = congestion ? loads->congestion() : surrogate_seconds(p, m);
  double best_cost = cost;
  // Improvements smaller than this are rounding in the running sum, not better mappings.
  const double eps = 1e-12 * std::max(cost, std::numeric_limits<double>::min());
  for (std::uint64_t k = 0; k < moves; ++k) {
    const double temperature =
        t0 * std::pow(1e-4, static_cast<double>(k) / static_cast<double>(moves));
    const std::uint32_t a = pick(rng);
    const std::uint32_t b = pick(rng);
    if (a == b) {
      continue;
    }
    const double d = delta(a, b);
    if (d <= 0.0 || unit(rng) < std::exp(-d / temperature)) {
      if (congestion) {
        loads->commit();
      }
      std::swap(m[a], m[b]);
      cost += d;
      if (cost < best_cost - eps) {
        best_cost = cost;
        best = m;
      }
    }
  }
  return best;
}

std::string_view link_class(const PlacementProblem& p, std::uint32_t from_slot,
                            std::uint32_t to_slot) {
  const core::DeviceId da = p.slots[from_slot];
  const core::DeviceId db = p.slots[to_slot];
  if (da == db) {
    return "local";
  }
  if (p.node[from_slot] != p.node[to_slot]) {
    return "network";
  }
  bool nvlink = false;
  bool pcie = false;
  bool socket = false; // the route passes through a socket: it leaves its NUMA domain
  for (const core::LinkId l : p.route(from_slot, to_slot)) {
    const core::Link& link = p.topology.links()[l];
    if (link.kind == core::LinkKind::upi) {
      return "inter-socket";
    }
    nvlink = nvlink || link.kind == core::LinkKind::nvlink;
    pcie = pcie || link.kind == core::LinkKind::pcie;
    socket = socket ||
             (link.from != da && p.topology.devices()[link.from].kind == core::DeviceKind::cpu);
  }
  return nvlink ? "nvlink" : pcie ? "pcie" : socket ? "inter-numa" : "numa";
}

std::map<std::string, std::uint64_t> bytes_by_link_class(const PlacementProblem& p,
                                                         const Mapping& m) {
  std::map<std::string, std::uint64_t> out;
  for (std::uint32_t a = 0; a < p.pattern.ranks; ++a) {
    for (const std::uint32_t b : p.partners[a]) {
      if (const std::uint64_t bytes = p.pattern.at(a, b); bytes > 0) {
        out[std::string(link_class(p, m[a], m[b]))] += bytes;
      }
    }
  }
  return out;
}

namespace {

/// Every rank sends its bytes to each partner and receives theirs, all at once.
core::Schedule exchange_schedule(const PlacementProblem& p) {
  const std::uint32_t n = p.pattern.ranks;
  std::uint64_t out_max = 0;
  std::uint64_t in_max = 0;
  for (std::uint32_t a = 0; a < n; ++a) {
    std::uint64_t out = 0;
    std::uint64_t in = 0;
    for (std::uint32_t b = 0; b < n; ++b) {
      out += p.pattern.at(a, b);
      in += p.pattern.at(b, a);
    }
    out_max = std::max(out_max, out);
    in_max = std::max(in_max, in);
  }
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::alltoall; // an exchange of pairwise messages
  h.ranks = n;
  h.bytes = core::Bytes{out_max};
  h.data_bytes = out_max;
  h.tmp_bytes = in_max;
  h.algorithm = "pattern";
  core::Schedule s(h);
  for (core::Rank r = 0; r < n; ++r) {
    s.begin_rank(r);
    std::uint64_t in = 0;
    for (const std::uint32_t j : p.partners[r]) {
      if (const std::uint64_t b = p.pattern.at(j, r); b > 0) {
        s.recv(j, {core::Buffer::tmp, in, b});
        in += b;
      }
    }
    std::uint64_t out = 0;
    for (const std::uint32_t j : p.partners[r]) {
      if (const std::uint64_t b = p.pattern.at(r, j); b > 0) {
        s.send(j, {core::Buffer::data, out, b});
        out += b;
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

core::Seconds simulate_exchange(const PlacementProblem& p, const Mapping& m,
                                const EngineChoice& engine) {
  const std::uint32_t n = p.pattern.ranks;
  core::Topology t = p.topology;
  std::vector<core::DeviceId> devices(n);
  for (core::Rank r = 0; r < n; ++r) {
    devices[r] = p.slots[m[r]];
  }
  t.map_ranks(std::move(devices));
  if (p.pattern.call) {
    // The call itself on the mapped ranks: generated for them (topology-aware algorithms, NCCL's
    // rings, see where the ranks now sit), lowered by its library stack, on the engine.
    const algorithms::Registry registry = algorithms::make_default_registry();
    const CollectiveCall& c = *p.pattern.call;
    const algorithms::AlgorithmInfo& algo = registry.find(c.collective, c.algorithm);
    algorithms::Request req;
    req.collective = c.collective;
    req.ranks = n;
    req.bytes = c.bytes;
    req.topology = &t;
    req.params = algorithms::resolve_params(algo, c.params);
    return simulate(registry, algo, t, engine, req).time;
  }
  const EngineEntry& e = find_engine(engine.name);
  if (!e.messages) {
    throw core::UsageError(fmt::format("engine '{}' prices closed forms, not an exchange of "
                                       "messages: use loggp or simgrid",
                                       engine.name));
  }
  return e.run(exchange_schedule(p), t, core::RunOptions{}, engine).time;
}

} // namespace collsim::analysis

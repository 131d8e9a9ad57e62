// The exact placement searches (placement.hpp, "Exact and library searches"; docs/placement.md):
// slot classes, exhaustive enumeration over them, and a mixed-integer model solved by COIN-OR CBC.
// Both minimise the surrogate exactly: the sum over ordered rank pairs (a, b) with bytes of
// latency[sa][sb] + bytes x seconds_per_byte[sa][sb] (surrogate_seconds).
//
// Slot classes. Two slots are interchangeable when swapping them changes no slot-to-slot cost
// (the cores of one NUMA domain): any assignment of a class's k ranks to its k slots costs the
// same, so both searches assign ranks to classes with capacities instead of ranks to slots, and a
// pair of ranks inside one class costs the class's intra-class pair cost (two distinct slots of
// it). Exhaustive search then has n! / prod_c k_c! cases (12 ranks in 3 classes of 4: 34650,
// against 12! = 479001600), explored depth first with the partial cost as a bound (every pair
// cost is >= 0, so a partial assignment that already costs as much as the best is cut).
//
// The MIP is the quadratic assignment problem (Koopmans & Beckmann, Econometrica 25, 1957) over
// classes. x[r][c] binary: rank r in class c; sum_c x[r][c] = 1, sum_r x[r][c] = k_c. The
// objective sum over rank pairs {a, b} and class pairs (c, d) of w_ab(c, d) x[a][c] x[b][d] is
// linearised with continuous y_ab(c, d) >= 0 and, for every c, sum_d y_ab(c, d) = x[a][c] and, for
// every d, sum_c y_ab(c, d) = x[b][d]: the pair equalities of Frieze & Yadegar's linearisation
// ("On the quadratic assignment problem", Discrete Applied Mathematics 5, 1983; the first level
// of Adams & Johnson's reformulation-linearisation, DIMACS 16, 1994), tighter than Lawler's
// y >= x[a][c] + x[b][d] - 1 (Management Science 9, 1963). It is exact: with a in c and b in d,
// every row c' != c and every column d' != d of y_ab sums to 0, so y_ab(c, d) = 1 is the only
// non-zero. w_ab(c, d) prices both directions: cost(a -> b, c -> d) + cost(b -> a, d -> c).

#include "collsim/analysis/placement.hpp"

#include "collsim/core/errors.hpp"

#include <Cbc_C_Interface.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <queue>
#include <string>
#include <utility>

namespace collsim::analysis {
namespace {

/// True when a message from slot a to slot b costs exactly what one from slot c to slot d costs.
bool same_cost(const PlacementProblem& p, std::uint32_t a, std::uint32_t b, std::uint32_t c,
               std::uint32_t d) {
  const std::size_t n = p.slots.size();
  const std::size_t k = a * n + b;
  const std::size_t l = c * n + d;
  return p.latency[k] == p.latency[l] && p.seconds_per_byte[k] == p.seconds_per_byte[l];
}

/// True when swapping slots s and t leaves every slot-to-slot cost as it is.
bool interchangeable(const PlacementProblem& p, std::uint32_t s, std::uint32_t t) {
  if (!same_cost(p, s, t, t, s)) {
    return false;
  }
  const auto n = static_cast<std::uint32_t>(p.slots.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    if (k != s && k != t && (!same_cost(p, s, k, t, k) || !same_cost(p, k, s, k, t))) {
      return false;
    }
  }
  return true;
}

/// A fingerprint of slot s: a hash of its sorted row and its sorted column of (latency, seconds
/// per byte), itself left out. Interchangeable slots have equal ones (swapping them permutes only
/// their own entries), so the exact comparison runs only where fingerprints agree: the classes of
/// 4096 slots cost O(n^2 log n), not O(n^2) per class.
std::uint64_t fingerprint(const PlacementProblem& p, std::uint32_t s) {
  const std::size_t n = p.slots.size();
  std::uint64_t h = 1469598103934665603ULL; // FNV-1a
  const auto mix = [&h](double v) {
    h ^= std::bit_cast<std::uint64_t>(v);
    h *= 1099511628211ULL;
  };
  std::vector<std::pair<double, double>> line;
  for (const bool row : {true, false}) {
    line.clear();
    for (std::size_t k = 0; k < n; ++k) {
      if (k != s) {
        const std::size_t i = row ? s * n + k : k * n + s;
        line.emplace_back(p.latency[i], p.seconds_per_byte[i]);
      }
    }
    std::sort(line.begin(), line.end());
    for (const auto& [latency, per_byte] : line) {
      mix(latency);
      mix(per_byte);
    }
  }
  return h;
}

/// What a message between a slot of class c and a slot of class d costs (two distinct slots when
/// c == d), per class pair.
struct ClassCosts {
  std::size_t classes = 0;
  std::vector<double> latency;          ///< classes x classes, s
  std::vector<double> seconds_per_byte; ///< classes x classes
  [[nodiscard]] double cost(std::uint32_t c, std::uint32_t d, std::uint64_t bytes) const {
    if (bytes == 0) {
      return 0.0;
    }
    const std::size_t k = c * classes + d;
    return latency[k] + static_cast<double>(bytes) * seconds_per_byte[k];
  }
  /// Both directions of the pair (a, b) with a in class c and b in class d.
  [[nodiscard]] double weight(const TrafficPattern& t, std::uint32_t a, std::uint32_t b,
                              std::uint32_t c, std::uint32_t d) const {
    return cost(c, d, t.at(a, b)) + cost(d, c, t.at(b, a));
  }
};

ClassCosts class_costs(const PlacementProblem& p, const SlotClasses& sc) {
  ClassCosts cc;
  cc.classes = sc.members.size();
  const std::size_t n = p.slots.size();
  cc.latency.assign(cc.classes * cc.classes, 0.0);
  cc.seconds_per_byte.assign(cc.classes * cc.classes, 0.0);
  for (std::size_t c = 0; c < cc.classes; ++c) {
    for (std::size_t d = 0; d < cc.classes; ++d) {
      const std::uint32_t a = sc.members[c][0];
      // A class of one slot never holds a pair: its own entry stays 0.
      const std::uint32_t b =
          c != d ? sc.members[d][0] : (sc.members[c].size() > 1 ? sc.members[c][1] : a);
      cc.latency[c * cc.classes + d] = p.latency[a * n + b];
      cc.seconds_per_byte[c * cc.classes + d] = p.seconds_per_byte[a * n + b];
    }
  }
  return cc;
}

/// The mapping of a class assignment: the ranks of class c, in rank order, take its slots in
/// order.
Mapping expand(const SlotClasses& sc, const std::vector<std::uint32_t>& class_of_rank) {
  Mapping m(class_of_rank.size());
  std::vector<std::size_t> next(sc.members.size(), 0);
  for (std::size_t r = 0; r < class_of_rank.size(); ++r) {
    const std::uint32_t c = class_of_rank[r];
    if (next[c] >= sc.members[c].size()) {
      throw core::InternalError(fmt::format("placement: class {} holds more ranks than its {} "
                                            "slots",
                                            c, sc.members[c].size()));
    }
    m[r] = sc.members[c][next[c]++];
  }
  return m;
}

/// n! / prod_c k_c!, as a product of binomials (exact below 2^53, an estimate above).
double assignment_count(const SlotClasses& sc) {
  double total = 1.0;
  double placed = 0.0;
  for (const auto& members : sc.members) {
    double binomial = 1.0;
    for (std::size_t i = 1; i <= members.size(); ++i) {
      binomial = binomial * (placed + static_cast<double>(i)) / static_cast<double>(i);
    }
    total *= binomial;
    placed += static_cast<double>(members.size());
  }
  return total;
}

/// The count for a message; beyond a double, its power of ten from log-gamma.
std::string count_text(const SlotClasses& sc, double count) {
  if (count < 1e15) {
    return fmt::format("{:.0f}", count);
  }
  if (std::isfinite(count)) {
    return fmt::format("{:.2e}", count);
  }
  double ln = 0.0;
  double ranks = 0.0;
  for (const auto& members : sc.members) {
    ln -= std::lgamma(static_cast<double>(members.size()) + 1.0);
    ranks += static_cast<double>(members.size());
  }
  ln += std::lgamma(ranks + 1.0);
  return fmt::format("about 10^{:.0f}", ln / std::log(10.0));
}

/// The ranks in breadth-first order of the traffic graph from rank 0 (then from each rank not
/// reached yet): a rank comes after a partner, so partial costs grow early and the bound cuts.
std::vector<std::uint32_t> traffic_order(const PlacementProblem& p) {
  const std::uint32_t n = p.pattern.ranks;
  std::vector<std::uint32_t> order;
  std::vector<bool> seen(n, false);
  for (std::uint32_t root = 0; root < n; ++root) {
    if (seen[root]) {
      continue;
    }
    std::queue<std::uint32_t> q;
    q.push(root);
    seen[root] = true;
    while (!q.empty()) {
      const std::uint32_t r = q.front();
      q.pop();
      order.push_back(r);
      for (const std::uint32_t j : p.partners[r]) {
        if (!seen[j]) {
          seen[j] = true;
          q.push(j);
        }
      }
    }
  }
  return order;
}

/// True when relabelling the classes by `image` changes no capacity and no class-to-class cost.
bool preserves(const SlotClasses& sc, const ClassCosts& cc,
               const std::vector<std::uint32_t>& image) {
  const std::size_t k = cc.classes;
  for (std::size_t c = 0; c < k; ++c) {
    if (sc.members[c].size() != sc.members[image[c]].size()) {
      return false;
    }
    for (std::size_t d = 0; d < k; ++d) {
      const std::size_t from = c * k + d;
      const std::size_t to = image[c] * k + image[d];
      if (cc.latency[from] != cc.latency[to] ||
          cc.seconds_per_byte[from] != cc.seconds_per_byte[to]) {
        return false;
      }
    }
  }
  return true;
}

/// Parts of the machine that any permutation among them maps onto each other without changing a
/// cost, for breaking symmetry: per group, its parts, each part a list of classes (the t-th class
/// of one part corresponds to the t-th of another). Two levels: the classes of one node (the two
/// sockets of a node with a NIC on each), and whole nodes (all nodes of a cluster), their
/// classes in order. A transposition of two parts that preserves every cost makes them
/// interchangeable, and interchangeability is transitive (conjugating transpositions), so a
/// group is built by comparing with its first part.
using Part = std::vector<std::uint32_t>;
std::vector<std::vector<Part>> symmetric_groups(const PlacementProblem& p, const SlotClasses& sc,
                                                const ClassCosts& cc) {
  const auto classes = static_cast<std::uint32_t>(cc.classes);
  std::map<std::uint32_t, Part> by_node;
  for (std::uint32_t c = 0; c < classes; ++c) {
    const std::uint32_t node = p.node[sc.members[c][0]];
    for (const std::uint32_t s : sc.members[c]) {
      if (p.node[s] != node) {
        return {}; // a class across nodes (one core per node): no node structure to use
      }
    }
    by_node[node].push_back(c);
  }
  std::vector<Part> nodes;
  for (auto& [node, part] : by_node) {
    nodes.push_back(std::move(part));
  }
  const auto swap_image = [&](const Part& a, const Part& b) {
    std::vector<std::uint32_t> image(classes);
    std::iota(image.begin(), image.end(), 0U);
    for (std::size_t t = 0; t < a.size(); ++t) {
      image[a[t]] = b[t];
      image[b[t]] = a[t];
    }
    return image;
  };
  const auto group = [&](const std::vector<Part>& parts, std::vector<std::vector<Part>>& out) {
    std::vector<std::vector<Part>> found;
    for (const Part& part : parts) {
      bool joined = false;
      for (auto& g : found) {
        if (g.front().size() == part.size() && preserves(sc, cc, swap_image(g.front(), part))) {
          g.push_back(part);
          joined = true;
          break;
        }
      }
      if (!joined) {
        found.push_back({part});
      }
    }
    for (auto& g : found) {
      if (g.size() > 1) {
        out.push_back(std::move(g));
      }
    }
  };
  std::vector<std::vector<Part>> groups;
  for (const Part& node : nodes) {
    std::vector<Part> single;
    for (const std::uint32_t c : node) {
      single.push_back({c});
    }
    group(single, groups);
  }
  group(nodes, groups);
  return groups;
}

/// Owns a CBC model.
using CbcModel = std::unique_ptr<Cbc_Model, decltype(&Cbc_deleteModel)>;

} // namespace

SlotClasses slot_classes(const PlacementProblem& p) {
  SlotClasses sc;
  const auto n = static_cast<std::uint32_t>(p.slots.size());
  sc.class_of.assign(n, 0);
  std::vector<std::uint64_t> print(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    print[s] = fingerprint(p, s);
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    bool joined = false;
    for (std::size_t c = 0; c < sc.members.size() && !joined; ++c) {
      auto& members = sc.members[c];
      const std::uint32_t r = members[0];
      if (print[r] != print[s]) {
        continue;
      }
      // Interchangeable with the class's first slot, and as far from it as its other members
      // are from each other: then interchangeable with every member.
      if (interchangeable(p, s, r) && (members.size() < 2 || same_cost(p, s, r, r, members[1]))) {
        members.push_back(s);
        sc.class_of[s] = static_cast<std::uint32_t>(c);
        joined = true;
      }
    }
    if (!joined) {
      sc.class_of[s] = static_cast<std::uint32_t>(sc.members.size());
      sc.members.push_back({s});
    }
  }
  return sc;
}

Mapping place_exhaustive(const PlacementProblem& p) {
  const std::uint32_t n = p.pattern.ranks;
  const SlotClasses sc = slot_classes(p);
  const double count = assignment_count(sc);
  if (count > static_cast<double>(kExhaustiveMaxAssignments)) {
    throw core::UsageError(fmt::format(
        "exhaustive search of {} ranks: {} assignments of the ranks to {} classes of "
        "interchangeable slots, more than {}; use --method mip (at most {} ranks) or anneal",
        n, count_text(sc, count), sc.members.size(), kExhaustiveMaxAssignments, kMipMaxRanks));
  }
  const ClassCosts cc = class_costs(p, sc);
  const std::vector<std::uint32_t> order = traffic_order(p);
  constexpr std::uint32_t kUnplaced = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> class_of_rank(n, kUnplaced);
  std::vector<std::uint32_t> best(n, 0);
  std::vector<std::size_t> left(sc.members.size());
  for (std::size_t c = 0; c < left.size(); ++c) {
    left[c] = sc.members[c].size();
  }
  double best_cost = std::numeric_limits<double>::infinity();
  const auto search = [&](const auto& self, std::uint32_t depth, double partial) -> void {
    if (depth == n) {
      best_cost = partial; // only reached below the bound: strictly better
      best = class_of_rank;
      return;
    }
    const std::uint32_t r = order[depth];
    for (std::uint32_t c = 0; c < left.size(); ++c) {
      if (left[c] == 0) {
        continue;
      }
      double added = 0.0;
      for (const std::uint32_t j : p.partners[r]) {
        if (class_of_rank[j] != kUnplaced) {
          added += cc.weight(p.pattern, r, j, c, class_of_rank[j]);
        }
      }
      if (partial + added >= best_cost) {
        continue;
      }
      class_of_rank[r] = c;
      --left[c];
      self(self, depth + 1, partial + added);
      ++left[c];
      class_of_rank[r] = kUnplaced;
    }
  };
  search(search, 0, 0.0);
  return expand(sc, best);
}

Mapping place_mip(const PlacementProblem& p) {
  const std::uint32_t n = p.pattern.ranks;
  if (n > kMipMaxRanks) {
    throw core::UsageError(fmt::format("mip placement of {} ranks: the exact model takes at most "
                                       "{} ranks; use --method scotch or anneal",
                                       n, kMipMaxRanks));
  }
  const SlotClasses sc = slot_classes(p);
  const auto classes = static_cast<std::uint32_t>(sc.members.size());
  const ClassCosts cc = class_costs(p, sc);
  std::vector<std::array<std::uint32_t, 2>> pairs;
  for (std::uint32_t a = 0; a < n; ++a) {
    for (const std::uint32_t b : p.partners[a]) {
      if (a < b) {
        pairs.push_back({a, b});
      }
    }
  }
  // Class pairs a pair of ranks can take: not both in a class of one slot.
  std::vector<std::array<std::uint32_t, 2>> class_pairs;
  for (std::uint32_t c = 0; c < classes; ++c) {
    for (std::uint32_t d = 0; d < classes; ++d) {
      if (c != d || sc.members[c].size() > 1) {
        class_pairs.push_back({c, d});
      }
    }
  }
  const std::size_t variables = std::size_t{n} * classes + pairs.size() * class_pairs.size();
  if (variables > kMipMaxVariables) {
    throw core::UsageError(fmt::format(
        "mip placement of {} ranks: {} pairs of ranks that exchange bytes on {} classes of "
        "interchangeable slots need {} variables, more than {}; use --method scotch or anneal",
        n, pairs.size(), classes, variables, kMipMaxVariables));
  }
  if (classes == 1 || pairs.empty()) {
    return expand(sc, std::vector<std::uint32_t>(n, 0)); // every assignment costs the same
  }
  // Objective scaled so that the largest weight is 1000: CBC's tolerances are absolute, and
  // weights in seconds (1e-9 .. 1e-3) would sit below them.
  double largest = 0.0;
  for (const auto& [a, b] : pairs) {
    for (const auto& [c, d] : class_pairs) {
      largest = std::max(largest, cc.weight(p.pattern, a, b, c, d));
    }
  }
  const double scale = largest > 0.0 ? 1000.0 / largest : 1.0;

  CbcModel model(Cbc_newModel(), &Cbc_deleteModel);
  Cbc_Model* const mp = model.get();
  const auto x = [&](std::uint32_t r, std::uint32_t c) {
    return static_cast<int>(r * classes + c);
  };
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < classes; ++c) {
      const std::string name = fmt::format("x_{}_{}", r, c);
      Cbc_addCol(mp, name.c_str(), 0.0, 1.0, 0.0, 1, 0, nullptr, nullptr);
    }
  }
  const int first_y = static_cast<int>(std::size_t{n} * classes);
  for (std::size_t q = 0; q < pairs.size(); ++q) {
    const auto [a, b] = pairs[q];
    for (const auto& [c, d] : class_pairs) {
      const std::string name = fmt::format("y_{}_{}_{}_{}", a, b, c, d);
      Cbc_addCol(mp, name.c_str(), 0.0, 1.0, scale * cc.weight(p.pattern, a, b, c, d), 0, 0,
                 nullptr, nullptr);
    }
  }
  const auto y = [&](std::size_t q, std::size_t k) {
    return first_y + static_cast<int>(q * class_pairs.size() + k);
  };
  std::vector<int> cols;
  std::vector<double> coefs;
  const auto row = [&](const std::string& name, char sense, double rhs) {
    Cbc_addRow(mp, name.c_str(), static_cast<int>(cols.size()), cols.data(), coefs.data(), sense,
               rhs);
    cols.clear();
    coefs.clear();
  };
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < classes; ++c) {
      cols.push_back(x(r, c));
      coefs.push_back(1.0);
    }
    row(fmt::format("rank_{}", r), 'E', 1.0);
  }
  for (std::uint32_t c = 0; c < classes; ++c) {
    for (std::uint32_t r = 0; r < n; ++r) {
      cols.push_back(x(r, c));
      coefs.push_back(1.0);
    }
    row(fmt::format("class_{}", c), 'E', static_cast<double>(sc.members[c].size()));
  }
  for (std::size_t q = 0; q < pairs.size(); ++q) {
    const auto [a, b] = pairs[q];
    for (std::uint32_t side = 0; side < 2; ++side) { // 0: a's class c, 1: b's class d
      for (std::uint32_t e = 0; e < classes; ++e) {
        for (std::size_t k = 0; k < class_pairs.size(); ++k) {
          if (class_pairs[k][side] == e) {
            cols.push_back(y(q, k));
            coefs.push_back(1.0);
          }
        }
        cols.push_back(x(side == 0 ? a : b, e));
        coefs.push_back(-1.0);
        row(fmt::format("pair_{}_{}_{}_{}", a, b, side, e), 'E', 0.0);
      }
    }
  }
  // Symmetry breaking for interchangeable parts P_0, P_1, ... of a group (Kaibel & Pfetsch's
  // orbitopes, Mathematical Programming 114, 2008, in the form of Mendez-Diaz & Zabala's
  // colouring model): rank r may sit in P_j only if a lower rank sits in P_(j-1). Every solution
  // has a relabelling of the parts, ordered by their lowest rank, that satisfies it.
  for (const auto& parts : symmetric_groups(p, sc, cc)) {
    for (std::size_t j = 1; j < parts.size(); ++j) {
      for (std::uint32_t r = 0; r < n; ++r) {
        for (const std::uint32_t c : parts[j]) {
          cols.push_back(x(r, c));
          coefs.push_back(1.0);
        }
        for (std::uint32_t lower = 0; lower < r; ++lower) {
          for (const std::uint32_t c : parts[j - 1]) {
            cols.push_back(x(lower, c));
            coefs.push_back(-1.0);
          }
        }
        row(fmt::format("order_{}_{}_{}", parts[j][0], j, r), 'L', 0.0);
      }
    }
  }
  Cbc_setObjSense(mp, 1.0);
  Cbc_setLogLevel(mp, 0);
  Cbc_setParameter(mp, "log", "0");
  Cbc_setParameter(mp, "slog", "0");
  // Measured on the tests' halos of 8 to 12 ranks: CBC's root cuts, primal heuristics and
  // preprocessing cost more than they save on these small models (28 s for the twelve cases with
  // them, 2.2 s without); the search stays exact.
  Cbc_setParameter(mp, "cuts", "off");
  Cbc_setParameter(mp, "heuristics", "off");
  Cbc_setParameter(mp, "preprocess", "off");
  Cbc_setAllowableGap(mp, 0.0);
  Cbc_setAllowableFractionGap(mp, 0.0);
  Cbc_setMaximumSeconds(mp, kMipSeconds);
  Cbc_solve(mp);
  if (Cbc_isProvenOptimal(mp) == 0) {
    throw core::UsageError(fmt::format("mip placement of {} ranks: CBC did not prove an optimum "
                                       "within {:.0f} s (status {}); use --method scotch or anneal",
                                       n, kMipSeconds, Cbc_status(mp)));
  }
  const double* solution = Cbc_getColSolution(mp);
  std::vector<std::uint32_t> class_of_rank(n, classes);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < classes; ++c) {
      if (solution[x(r, c)] > 0.5) {
        if (class_of_rank[r] != classes) {
          throw core::InternalError(fmt::format("mip placement: rank {} in two classes", r));
        }
        class_of_rank[r] = c;
      }
    }
    if (class_of_rank[r] == classes) {
      throw core::InternalError(fmt::format("mip placement: rank {} in no class", r));
    }
  }
  return expand(sc, class_of_rank);
}

} // namespace collsim::analysis

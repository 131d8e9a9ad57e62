// Multi-dimensional torus allreduce (algorithms.md AR16): reduce-scatter along each dimension in
// turn, shrinking the vector by p_d each time, then allgather along the dimensions in reverse
// order.
//
// Source: ASTRA-sim's multi-dimensional allreduce (Sys.cc: "RS in dim 0, RS in dim 1, ..., AG in
// dim 1, AG in dim 0", per-dimension ring); Google's TPU torus allreduce (US 2018/0240039);
// algorithms.md 1.10 item 4 (multi-dimensional decomposition as a generic pass).
//
// Schedule: the ranks form an X x Y x Z grid, rank r = x + X (y + Y z). Dimensions of size 1 are
// skipped (two or three dimensions; one when p is prime). The dimensions are the parameters dim_x,
// dim_y and dim_z (0 = unused, i.e. 1); their product must be p, else the request is refused. When
// all three are 0 they are chosen: with a topology whose nodes all hold ppn > 1 ranks (and N > 1
// nodes), X = ppn (the first dimension stays inside a node) and N = Y x Z as near-square as N
// allows; otherwise X <= Y <= Z as near-cubic as p allows (X the largest divisor of p with X^3 <=
// p, Y the largest divisor of p/X with Y^2 <= p/X).
// Phases, composed by the generic composition pass (compose.hpp), rank r entering dimension d with
// the range [o_d, o_d + n_d) (o_0 = 0, n_0 = n):
//   reduce-scatter along d = x, y, z (`reduce_scatter`, default ring): the p_d ranks that differ
//   only in coordinate d reduce-scatter [o_d, o_d + n_d); rank r keeps block_range(n_d, p_d, c_d)
//   of it, the range it brings to the next dimension;
//   allgather along d = z, y, x (`allgather`, default ring) of the same ranges, in reverse.
// Each phase's scratch has its own region of tmp; on every rank a phase starts when the rank has
// finished the previous one.
//
// Cost [algorithms.md AR16, derived]: T = sum_d 2(p_d - 1)(a_d + (n_d / p_d) b_d) +
// sum_d (p_d - 1)(n_d / p_d) g, with n_d = n / (p_1 ... p_{d-1}). Exact on a uniform topology (the
// closed form below) with ring at both levels when p divides n: every rank of every group then
// moves equal blocks at every step, so all ranks finish each phase together and the phases' closed
// forms add up. Otherwise cost() declines (uneven blocks pace the steps).

#include "allreduce/allreduce_algorithms.hpp"
#include "compose.hpp"

#include <array>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "torus";
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;

/// The largest divisor d of m with d^power <= m.
std::uint32_t divisor_root(std::uint32_t m, int power) {
  std::uint32_t best = 1;
  for (std::uint64_t d = 1;; ++d) {
    std::uint64_t v = 1;
    for (int i = 0; i < power; ++i) {
      v *= d;
    }
    if (v > m) {
      break;
    }
    if (m % d == 0) {
      best = static_cast<std::uint32_t>(d);
    }
  }
  return best;
}

/// The grid dimensions for `req`, or the reason it is refused.
struct Dims {
  std::array<std::uint32_t, 3> size{1, 1, 1};
  std::string refusal;
};

Dims dims_for(const Request& req) {
  Dims out;
  const std::uint32_t p = req.ranks;
  const std::array<std::int64_t, 3> given{req.params.at("dim_x"), req.params.at("dim_y"),
                                          req.params.at("dim_z")};
  if (given[0] == 0 && given[1] == 0 && given[2] == 0) {
    const detail::NodeLayout layout = detail::node_layout(req);
    const std::uint32_t ppn = layout.max_per_node();
    if (layout.uniform() && ppn > 1 && layout.nodes() > 1) {
      const std::uint32_t nodes = layout.nodes();
      const std::uint32_t y = divisor_root(nodes, 2);
      out.size = {ppn, y, nodes / y};
    } else {
      const std::uint32_t x = divisor_root(p, 3);
      const std::uint32_t y = divisor_root(p / x, 2);
      out.size = {x, y, p / x / y};
    }
    return out;
  }
  std::uint64_t product = 1;
  for (std::size_t d = 0; d < 3; ++d) {
    out.size[d] = given[d] == 0 ? 1 : static_cast<std::uint32_t>(given[d]);
    product *= out.size[d];
  }
  if (product != p) {
    out.refusal = fmt::format("dim_x * dim_y * dim_z must equal the rank count (0 = unused): {} * "
                              "{} * {} = {}, but there are {} ranks",
                              out.size[0], out.size[1], out.size[2], product, p);
  }
  return out;
}

compose::Plan plan_torus(const Request& req) {
  compose::Plan out(req.ranks);
  const Dims dims = dims_for(req);
  if (!dims.refusal.empty()) {
    out.refusal = dims.refusal;
    return out;
  }
  const std::array<std::uint32_t, 3>& size = dims.size;
  const std::array<std::uint32_t, 3> stride{1, size[0], size[0] * size[1]};
  const auto coord = [&](core::Rank r, std::size_t d) { return (r / stride[d]) % size[d]; };
  const std::uint64_t n = req.bytes.value;
  // The range a rank brings to dimension d: [offset, offset + length).
  const auto range_before = [&](core::Rank r, std::size_t d) {
    std::uint64_t offset = 0;
    std::uint64_t length = n;
    for (std::size_t e = 0; e < d; ++e) {
      const auto [o, l] = core::block_range(length, size[e], coord(r, e));
      offset += o;
      length = l;
    }
    return std::pair{offset, length};
  };
  compose::Level rs(req, "reduce_scatter", CollectiveKind::reduce_scatter);
  compose::Level ag(req, "allgather", CollectiveKind::allgather);
  // One phase: along dimension d, every group of ranks differing only in coordinate d.
  const auto phase = [&](compose::Level& level, std::size_t d) {
    const std::uint64_t tmp = out.composition.tmp_bytes();
    std::vector<core::Rank> group(size[d]);
    for (core::Rank base = 0; base < req.ranks; ++base) {
      if (coord(base, d) != 0) {
        continue;
      }
      for (std::uint32_t c = 0; c < size[d]; ++c) {
        group[c] = base + c * stride[d];
      }
      const auto [offset, length] = range_before(base, d);
      if (!compose::place(out, level, group, length, 0, offset, tmp)) {
        return false;
      }
    }
    return true;
  };
  for (std::size_t d = 0; d < 3; ++d) {
    if (size[d] > 1 && !phase(rs, d)) {
      return out;
    }
  }
  for (std::size_t d = 3; d-- > 0;) {
    if (size[d] > 1 && !phase(ag, d)) {
      return out;
    }
  }
  return out;
}

std::optional<CostTerms> torus_cost(const Request& req) {
  const Dims dims = dims_for(req);
  const std::uint64_t p = req.ranks;
  std::uint64_t n = req.bytes.value;
  compose::Level rs(req, "reduce_scatter", CollectiveKind::reduce_scatter);
  compose::Level ag(req, "allgather", CollectiveKind::allgather);
  if (!dims.refusal.empty() || n % p != 0 || rs.name() != "ring" || ag.name() != "ring") {
    return std::nullopt;
  }
  CostTerms total;
  for (const std::uint32_t k : dims.size) {
    if (k < 2) {
      continue;
    }
    for (const auto& c : {rs.cost(k, n), ag.cost(k, n)}) {
      if (!c) {
        return std::nullopt;
      }
      total.alpha_terms += c->alpha_terms;
      total.beta_bytes += c->beta_bytes;
      total.gamma_bytes += c->gamma_bytes;
    }
    n /= k;
  }
  return total;
}

ParamSpec dim_param(std::string name, std::string help) {
  return ParamSpec{std::move(name), 0, 0, kMaxDim, std::move(help)};
}

} // namespace

AlgorithmInfo describe_allreduce_torus() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::allreduce;
  a.summary = "multi-dimensional torus: reduce-scatter along x, y, z, then allgather along z, y, x";
  a.source = "ASTRA-sim multi-dimensional allreduce (Sys.cc); TPU torus allreduce (US "
             "2018/0240039)";
  a.params = {dim_param("dim_x", "ranks along x (0 = unused; all 0: chosen from the node layout "
                                 "or near-cubic)"),
              dim_param("dim_y", "ranks along y (0 = unused)"),
              dim_param("dim_z", "ranks along z (0 = unused)"),
              compose::level_param("reduce_scatter", CollectiveKind::reduce_scatter, "ring",
                                   "reduce-scatter algorithm along each dimension"),
              compose::level_param("allgather", CollectiveKind::allgather, "ring",
                                   "allgather algorithm along each dimension")};
  a.constraints = {"dim_x * dim_y * dim_z = p (0 = unused), unless all three are 0",
                   "each dimension's algorithm must accept its group"};
  compose::set_composed(a, plan_torus);
  a.cost = torus_cost;
  a.cost_formula = "sum_d 2(p_d-1) a + 2(p_d-1)/p_d n_d b + (p_d-1)/p_d n_d g, n_d = n / (p_1 "
                   "... p_{d-1}) (exact with ring at both levels when p divides n; otherwise not "
                   "exact)";
  return a;
}

} // namespace collsim::algorithms

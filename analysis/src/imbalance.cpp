#include "collsim/analysis/imbalance.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <random>

namespace collsim::analysis {
namespace {

using Kind = core::CountsSpec::Kind;

/// Uniform in [0, 1) from 53 random bits: the same numbers on every standard library (the
/// distributions of <random> are implementation-defined).
double unit(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

/// Standard normal by Box-Muller, for the same reason.
double standard_normal(std::mt19937_64& gen) {
  const double u1 = 1.0 - unit(gen); // (0, 1]
  const double u2 = unit(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

/// `total` bytes split in proportion to `weights` by largest remainders (ties to the lower
/// index), so the parts add up to `total` exactly.
std::vector<std::uint64_t> apportion(const std::vector<double>& weights, std::uint64_t total,
                                     const std::string& spec) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (total == 0) {
    return std::vector<std::uint64_t>(weights.size(), 0);
  }
  if (!(sum > 0.0) || !std::isfinite(sum)) {
    throw core::UsageError(
        fmt::format("counts '{}': every weight is 0, so no rank can hold the bytes", spec));
  }
  std::vector<std::uint64_t> out(weights.size(), 0);
  std::vector<std::pair<double, std::size_t>> rest;
  rest.reserve(weights.size());
  std::uint64_t given = 0;
  const auto t = static_cast<long double>(total);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const long double exact = t * static_cast<long double>(weights[i]) / sum;
    const auto whole = static_cast<std::uint64_t>(std::floor(exact));
    out[i] = std::min<std::uint64_t>(whole, total);
    given += out[i];
    rest.emplace_back(static_cast<double>(exact - std::floor(exact)), i);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total; k = (k + 1) % rest.size()) {
    if (weights[rest[k].second] > 0.0 || k + 1 == rest.size()) {
      ++out[rest[k].second];
      ++given;
    }
  }
  while (given > total) { // rounding of long double at huge totals: take back from the largest
    auto it = std::max_element(out.begin(), out.end());
    --*it;
    --given;
  }
  return out;
}

std::vector<double> flatten(const core::CountsSpec& spec) {
  std::vector<double> all;
  for (const auto& row : spec.rows) {
    all.insert(all.end(), row.begin(), row.end());
  }
  return all;
}

/// Per destination rank, the tokens routed to the experts it hosts (experts spread evenly in
/// order), for one histogram row.
std::vector<double> expert_loads(const std::vector<double>& row, std::uint32_t ranks,
                                 const core::CountsSpec& spec) {
  if (row.empty() || row.size() % ranks != 0) {
    throw core::UsageError(fmt::format(
        "counts '{}': {} experts cannot be spread evenly over {} ranks (give a multiple of the "
        "rank count)",
        spec.text, row.size(), ranks));
  }
  const std::size_t per = row.size() / ranks;
  std::vector<double> loads(ranks, 0.0);
  for (std::size_t e = 0; e < row.size(); ++e) {
    loads[e / per] += row[e];
  }
  return loads;
}

/// The weights of one row of counts (row `i` of an alltoallv, or the blocks).
std::vector<double> weights_for(const core::CountsSpec& spec, std::uint32_t ranks,
                                std::uint32_t row, bool alltoall, std::mt19937_64& gen) {
  std::vector<double> w(ranks, 0.0);
  switch (spec.kind) {
  case Kind::none:
  case Kind::uniform: std::fill(w.begin(), w.end(), 1.0); break;
  case Kind::zipf:
    for (std::uint32_t i = 0; i < ranks; ++i) {
      w[i] = 1.0 / std::pow(static_cast<double>(i) + 1.0, spec.parameter);
    }
    break;
  case Kind::normal:
    for (std::uint32_t i = 0; i < ranks; ++i) {
      w[i] = std::max(0.0, 1.0 + spec.parameter * standard_normal(gen));
    }
    if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0.0; })) {
      std::fill(w.begin(), w.end(), 1.0); // every draw clipped: equal weights (docs/imbalance.md)
    }
    break;
  case Kind::one: w[spec.rank] = 1.0; break;
  case Kind::file: {
    const std::vector<double> all = flatten(spec);
    const std::uint64_t p = ranks;
    if (alltoall && all.size() == p * p) {
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(row * p), p, w.begin());
    } else if (all.size() == p) {
      w = all;
    } else {
      throw core::UsageError(
          fmt::format("counts '{}': the file has {} weights, {} takes {} ({} ranks{})", spec.text,
                      all.size(), alltoall ? "alltoallv" : "this collective",
                      alltoall ? fmt::format("{} or {}", p, p * p) : fmt::format("{}", p), ranks,
                      alltoall ? ": one row for every rank, or a row per rank" : ""));
    }
    break;
  }
  case Kind::moe: {
    if (spec.rows.size() != 1 && spec.rows.size() != ranks) {
      throw core::UsageError(fmt::format(
          "counts '{}': the histogram has {} lines, give 1 (every rank routes alike) or {} (one "
          "per source rank)",
          spec.text, spec.rows.size(), ranks));
    }
    w = expert_loads(spec.rows[spec.rows.size() == 1 ? 0 : row], ranks, spec);
    break;
  }
  case Kind::cart:
  case Kind::graph:
  case Kind::sparse: break; // neighbourhood_counts
  }
  return w;
}

/// cart and graph: S bytes per neighbour message (graph: times the edge's weight).
std::vector<std::uint64_t> neighbourhood_counts(const core::CountsSpec& spec, std::uint32_t ranks,
                                                std::uint64_t bytes) {
  const std::uint64_t p = ranks;
  std::vector<std::uint64_t> out(p * p, 0);
  if (spec.kind == Kind::cart) {
    std::uint64_t size = 1;
    for (auto d : spec.dims) {
      size *= d;
    }
    if (size != p) {
      throw core::UsageError(
          fmt::format("counts '{}': the grid has {} ranks, the point {}", spec.text, size, ranks));
    }
    // MPI_Cart_create's row-major order: the last dimension varies fastest.
    std::vector<std::uint64_t> stride(spec.dims.size(), 1);
    for (std::size_t d = spec.dims.size(); d-- > 1;) {
      stride[d - 1] = stride[d] * spec.dims[d];
    }
    for (std::uint64_t r = 0; r < p; ++r) {
      for (std::size_t d = 0; d < spec.dims.size(); ++d) {
        const std::uint64_t extent = spec.dims[d];
        const std::uint64_t c = (r / stride[d]) % extent;
        for (const int shift : {-1, 1}) { // MPI_Cart_shift: the source side, then the destination
          std::uint64_t n = 0;
          if (shift < 0 && c == 0) {
            if (!spec.periodic) {
              continue;
            }
            n = extent - 1;
          } else if (shift > 0 && c + 1 == extent) {
            if (!spec.periodic) {
              continue;
            }
            n = 0;
          } else {
            n = shift < 0 ? c - 1 : c + 1;
          }
          out[r * p + (r - c * stride[d] + n * stride[d])] += bytes;
        }
      }
    }
    return out;
  }
  if (spec.kind == Kind::sparse) {
    if (spec.rank >= p) {
      throw core::UsageError(fmt::format("counts '{}': {} neighbours need more than the point's "
                                         "{} ranks",
                                         spec.text, spec.rank, ranks));
    }
    // A partial Fisher-Yates shuffle of the other ranks, per rank: D distinct neighbours.
    std::mt19937_64 gen(spec.seed);
    std::vector<std::uint64_t> others(p - 1);
    for (std::uint64_t r = 0; r < p; ++r) {
      for (std::uint64_t k = 0, q = 0; q < p; ++q) {
        if (q != r) {
          others[k++] = q;
        }
      }
      for (std::uint64_t k = 0; k < spec.rank; ++k) {
        const std::uint64_t pick = k + gen() % (p - 1 - k);
        std::swap(others[k], others[pick]);
        out[r * p + others[k]] = bytes;
      }
    }
    return out;
  }
  for (const auto& e : spec.rows) { // io::load_counts_data checked two or three numbers per line
    const auto src = static_cast<std::uint64_t>(e.at(0));
    const auto dst = static_cast<std::uint64_t>(e.at(1));
    const double w = e.size() > 2 ? e[2] : 1.0;
    if (src >= p || dst >= p) {
      throw core::UsageError(fmt::format("counts '{}': edge {} -> {} names a rank beyond the "
                                         "point's {} ranks",
                                         spec.text, src, dst, ranks));
    }
    out[src * p + dst] += static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) * w));
  }
  return out;
}

} // namespace

std::vector<std::uint64_t> make_counts(const core::CountsSpec& spec,
                                       core::CollectiveKind collective, std::uint32_t ranks,
                                       std::uint64_t bytes) {
  if (spec.kind == Kind::none) {
    return {};
  }
  if (!core::has_counts_variant(collective)) {
    throw core::UsageError(fmt::format(
        "counts '{}': {} has no v-variant (per-rank counts apply to allgather, gather, scatter, "
        "reduce_scatter and alltoall)",
        spec.text, core::to_string(collective)));
  }
  if (ranks == 0) {
    throw core::UsageError("counts need at least one rank");
  }
  if (spec.kind == Kind::one && spec.rank >= ranks) {
    throw core::UsageError(fmt::format("counts '{}': rank {} does not exist with {} ranks",
                                       spec.text, spec.rank, ranks));
  }
  for (double v : flatten(spec)) {
    if (!(v >= 0.0) || !std::isfinite(v)) {
      throw core::UsageError(
          fmt::format("counts '{}': weights must be finite and not negative", spec.text));
    }
  }
  const bool alltoall = collective == core::CollectiveKind::alltoall;
  if (spec.kind == Kind::cart || spec.kind == Kind::graph || spec.kind == Kind::sparse) {
    if (!alltoall) {
      throw core::UsageError(fmt::format(
          "counts '{}': a neighbourhood exchange is an alltoall (neighbor_alltoall), not {}",
          spec.text, core::to_string(collective)));
    }
    return neighbourhood_counts(spec, ranks, bytes);
  }
  std::mt19937_64 gen(spec.seed);
  if (!alltoall) {
    return apportion(weights_for(spec, ranks, 0, false, gen), bytes, spec.text);
  }
  std::vector<std::uint64_t> out;
  out.reserve(std::uint64_t{ranks} * ranks);
  for (std::uint32_t i = 0; i < ranks; ++i) {
    const auto row = apportion(weights_for(spec, ranks, i, true, gen), bytes, spec.text);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<double> make_arrivals(const core::SkewSpec& spec, std::uint32_t ranks) {
  using K = core::SkewSpec::Kind;
  std::vector<double> t(ranks, 0.0);
  std::mt19937_64 gen(spec.seed);
  switch (spec.kind) {
  case K::none: return {};
  case K::uniform:
    for (double& x : t) {
      x = spec.time.value * unit(gen);
    }
    break;
  case K::normal:
    for (double& x : t) {
      x = std::abs(spec.time.value * standard_normal(gen));
    }
    break;
  case K::late: {
    if (spec.late_rank >= 0) {
      if (spec.late_rank >= static_cast<std::int64_t>(ranks)) {
        throw core::UsageError(fmt::format("skew '{}': rank {} does not exist with {} ranks",
                                           spec.text, spec.late_rank, ranks));
      }
      t[static_cast<std::size_t>(spec.late_rank)] = spec.time.value;
      break;
    }
    if (spec.late_ranks > ranks) {
      throw core::UsageError(fmt::format("skew '{}': {} late ranks but only {} ranks", spec.text,
                                         spec.late_ranks, ranks));
    }
    // k ranks evenly spread from the last down: ranks - 1 - floor(j ranks / k).
    for (std::uint32_t j = 0; j < spec.late_ranks; ++j) {
      const std::uint64_t back = std::uint64_t{j} * ranks / spec.late_ranks;
      t[ranks - 1 - back] = spec.time.value;
    }
    break;
  }
  case K::file:
    if (spec.times.size() != ranks) {
      throw core::UsageError(fmt::format("skew '{}': the file has {} arrival times for {} ranks",
                                         spec.text, spec.times.size(), ranks));
    }
    for (std::uint32_t r = 0; r < ranks; ++r) {
      t[r] = spec.times[r].value;
    }
    break;
  }
  const double first = ranks == 0 ? 0.0 : *std::min_element(t.begin(), t.end());
  for (double& x : t) {
    x -= first;
  }
  return t;
}

core::Schedule apply_arrivals(const core::Schedule& s, const std::vector<double>& arrivals) {
  if (arrivals.size() != s.ranks()) {
    throw core::InternalError(
        fmt::format("apply_arrivals: {} arrival times for {} ranks", arrivals.size(), s.ranks()));
  }
  core::Schedule out(s.header());
  out.reserve(s.op_count() + s.ranks(), s.dep_count() + s.op_count());
  std::vector<std::uint32_t> deps;
  for (core::Rank r = 0; r < s.participants(); ++r) {
    out.begin_rank(r);
    const bool late = r < s.ranks() && arrivals[r] > 0.0;
    const std::uint32_t shift = late ? 1 : 0;
    if (late) {
      out.calc(core::Seconds{arrivals[r]});
    }
    std::vector<bool> stream_started(core::Schedule::kMaxStreams, false);
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const std::uint32_t stream = s.stream(id);
      out.set_stream(stream);
      deps.clear();
      for (std::uint32_t d : s.deps(id)) {
        deps.push_back(d + shift);
      }
      if (late && !stream_started[stream]) {
        deps.push_back(0); // the stream's first operation waits for the arrival
      }
      stream_started[stream] = true;
      const core::OpKind k = s.kind(id);
      if (k == core::OpKind::calc) {
        out.calc(s.calc_time(id), deps);
      } else {
        const bool local = k == core::OpKind::reduce || k == core::OpKind::copy;
        out.add(k, local ? 0 : s.route_peer(id), s.target(id), s.source(id), deps);
      }
    }
    out.set_stream(0);
  }
  out.finish();
  return out;
}

} // namespace collsim::analysis

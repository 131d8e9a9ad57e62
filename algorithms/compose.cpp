// The composition pass (compose.hpp): placements of sub-schedules, chained per rank.

#include "compose.hpp"

#include "allgather/allgather_algorithms.hpp"
#include "allreduce/allreduce_algorithms.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "collsim/core/errors.hpp"
#include "gather/gather_algorithms.hpp"
#include "reduce/reduce_algorithms.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"
#include "scatter/scatter_algorithms.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace collsim::algorithms::compose {
namespace {

/// The sub block size U of a block-mapped placement, or 0 when the map is not usable.
std::uint64_t block_unit(const Placement& p) {
  const std::uint64_t k = p.ranks.size();
  const std::uint64_t bytes = p.schedule->header().data_bytes;
  return k == 0 || bytes % k != 0 ? 0 : bytes / k;
}

bool is_data(const core::Range& r) {
  return r.buffer == core::Buffer::data;
}

} // namespace

void Composition::add(Placement p) {
  if (!p.schedule) {
    throw core::InternalError("compose: a placement without a schedule");
  }
  const core::Schedule& s = *p.schedule;
  if (s.participants() != p.ranks.size()) {
    throw core::InternalError(fmt::format(
        "compose: a sub-schedule of {} participants placed on {} ranks (in-network agents cannot "
        "be placed)",
        s.participants(), p.ranks.size()));
  }
  if (s.op_count() == 0) {
    return;
  }
  if (!p.block_bounds.empty()) {
    if (p.block_bounds.size() != p.ranks.size() + 1) {
      throw core::InternalError("compose: a block map needs k + 1 bounds");
    }
    const std::uint64_t unit = block_unit(p);
    bool shift = unit != 0;
    for (std::size_t i = 0; shift && i < p.ranks.size(); ++i) {
      shift = p.block_bounds[i + 1] - p.block_bounds[i] == unit;
    }
    if (shift) {
      p.data_offset = p.block_bounds.front();
      p.block_bounds.clear();
    }
  }
  const auto index = static_cast<std::uint32_t>(placements_.size());
  if (p.lane >= core::Schedule::kMaxStreams) {
    throw core::InternalError(fmt::format("compose: placement {} in lane {} (at most {} lanes)",
                                          index, p.lane, core::Schedule::kMaxStreams));
  }
  for (std::uint32_t i = 0; i < p.ranks.size(); ++i) {
    const core::Rank r = p.ranks[i];
    if (r >= per_rank_.size() || (!per_rank_[r].empty() && per_rank_[r].back().first == index)) {
      throw core::InternalError(
          fmt::format("compose: placement {} names rank {} twice or out of range", index, r));
    }
    per_rank_[r].emplace_back(index, i);
  }
  auto& shape = shape_of_[p.schedule.get()];
  if (!shape) {
    auto sh = std::make_shared<Shape>();
    const std::uint32_t k = s.ranks();
    sh->ops.resize(k);
    sh->roots.resize(k);
    sh->sinks.resize(k);
    std::vector<char> waited;
    for (core::Rank r = 0; r < k; ++r) {
      const core::OpId begin = s.rank_begin(r);
      const core::OpId end = s.rank_end(r);
      sh->ops[r] = end - begin;
      waited.assign(end - begin, 0);
      for (core::OpId id = begin; id < end; ++id) {
        const auto deps = s.deps(id);
        if (deps.empty()) {
          ++sh->roots[r];
        }
        for (std::uint32_t d : deps) {
          waited[d] = 1;
        }
      }
      for (std::uint32_t l = 0; l < end - begin; ++l) {
        if (waited[l] == 0) {
          sh->sinks[r].push_back(l);
        }
      }
    }
    shape = std::move(sh);
  }
  shapes_.push_back(shape);
  placements_.push_back(std::move(p));
}

detail::OpCounts Composition::counts() const {
  detail::OpCounts c;
  for (const auto& pl : placements_) {
    c.ops += pl.schedule->op_count();
    c.deps += pl.schedule->dep_count();
  }
  std::map<std::uint32_t, std::uint64_t> frontier; // per lane
  for (const auto& list : per_rank_) {
    frontier.clear();
    for (const auto& [index, sub] : list) {
      const Shape& sh = *shapes_[index];
      if (sh.ops[sub] == 0) {
        continue;
      }
      std::uint64_t& f = frontier[placements_[index].lane];
      c.deps += f * sh.roots[sub];
      f = sh.sinks[sub].size();
    }
  }
  return c;
}

std::uint64_t Composition::tmp_bytes() const {
  std::uint64_t most = 0;
  for (const auto& pl : placements_) {
    if (pl.schedule->header().tmp_bytes > 0) {
      most = std::max(most, pl.tmp_offset + pl.schedule->header().tmp_bytes);
    }
  }
  return most;
}

std::string Composition::problem() const {
  for (const auto& pl : placements_) {
    if (pl.block_bounds.empty()) {
      continue;
    }
    const core::Schedule& s = *pl.schedule;
    const std::uint64_t unit = block_unit(pl);
    if (unit == 0) {
      return fmt::format("{} on {} ranks: its blocks cannot be mapped onto the nodes' blocks",
                         s.header().algorithm, pl.ranks.size());
    }
    for (core::OpId id = 0; id < s.op_count(); ++id) {
      const core::OpKind kind = s.kind(id);
      const bool local = kind == core::OpKind::reduce || kind == core::OpKind::copy;
      for (const core::Range& r :
           {s.target(id), local ? s.source(id) : core::Range{core::Buffer::data, 0, 0}}) {
        if (!is_data(r)) {
          return fmt::format(
              "{} uses scratch space, which cannot be mapped onto nodes holding different "
              "numbers of ranks",
              s.header().algorithm);
        }
        if (r.offset % unit != 0 || r.length % unit != 0) {
          return fmt::format(
              "{} splits blocks, which cannot be mapped onto nodes holding different numbers of "
              "ranks",
              s.header().algorithm);
        }
      }
    }
  }
  return {};
}

core::Schedule Composition::build(core::ScheduleHeader header) const {
  header.tmp_bytes = std::max(header.tmp_bytes, tmp_bytes());
  if (header.ranks != ranks()) {
    throw core::InternalError("compose: header and composition disagree on the rank count");
  }
  if (const std::string why = problem(); !why.empty()) {
    throw core::InternalError("compose: " + why);
  }
  core::Schedule out(std::move(header));
  const detail::OpCounts c = counts();
  out.reserve(c.ops, c.deps);
  std::map<std::uint32_t, std::vector<std::uint32_t>> frontiers; // per lane
  std::vector<std::uint32_t> deps;
  for (core::Rank r = 0; r < ranks(); ++r) {
    out.begin_rank(r);
    frontiers.clear();
    std::uint32_t base = 0; // local index of the placement's first operation on this rank
    for (const auto& [index, sub] : per_rank_[r]) {
      const Placement& pl = placements_[index];
      const core::Schedule& s = *pl.schedule;
      const Shape& sh = *shapes_[index];
      if (sh.ops[sub] == 0) {
        continue;
      }
      std::vector<std::uint32_t>& frontier = frontiers[pl.lane];
      out.set_stream(pl.lane);
      const std::uint64_t unit = pl.block_bounds.empty() ? 0 : block_unit(pl);
      const auto map = [&](core::Range x) {
        if (x.buffer == core::Buffer::tmp) {
          x.offset += pl.tmp_offset;
        } else if (unit == 0) {
          x.offset += pl.data_offset;
        } else {
          const std::uint64_t first = pl.block_bounds[x.offset / unit];
          const std::uint64_t last = pl.block_bounds[(x.offset + x.length) / unit];
          x.offset = first;
          x.length = last - first;
        }
        return x;
      };
      for (core::OpId id = s.rank_begin(sub); id < s.rank_end(sub); ++id) {
        const core::OpKind kind = s.kind(id);
        const bool local = kind == core::OpKind::reduce || kind == core::OpKind::copy;
        const auto sub_deps = s.deps(id);
        if (sub_deps.empty()) {
          deps = frontier;
        } else {
          deps.resize(sub_deps.size());
          std::transform(sub_deps.begin(), sub_deps.end(), deps.begin(),
                         [base](std::uint32_t d) { return d + base; });
        }
        out.add(kind, local ? 0 : pl.ranks[s.peer(id)], map(s.target(id)),
                local ? map(s.source(id)) : core::Range{}, deps);
      }
      frontier.clear();
      for (std::uint32_t l : sh.sinks[sub]) {
        frontier.push_back(l + base);
      }
      base += sh.ops[sub];
    }
  }
  out.finish();
  return out;
}

std::vector<LevelChoice> level_choices(core::CollectiveKind collective) {
  using core::CollectiveKind;
  switch (collective) {
  case CollectiveKind::allreduce:
    return {{"rabenseifner", describe_rabenseifner},
            {"recursive_doubling", describe_recursive_doubling},
            {"ring", describe_ring},
            {"reduce_bcast", describe_reduce_bcast},
            {"basic_linear", describe_allreduce_basic_linear},
            {"segmented_ring", describe_allreduce_segmented_ring},
            {"allgather_reduce", describe_allreduce_allgather_reduce},
            {"recursive_multiplying", describe_allreduce_recursive_multiplying},
            {"recexch", describe_allreduce_recexch},
            {"k_reduce_scatter_allgather", describe_allreduce_k_reduce_scatter_allgather},
            {"tree", describe_allreduce_tree}};
  case CollectiveKind::reduce:
    return {{"binomial", describe_reduce_binomial},
            {"linear", describe_reduce_linear},
            {"chain", describe_reduce_chain},
            {"pipeline", describe_reduce_pipeline},
            {"binary", describe_reduce_binary},
            {"in_order_binary", describe_reduce_in_order_binary},
            {"rabenseifner", describe_reduce_rabenseifner},
            {"knomial", describe_reduce_knomial}};
  case CollectiveKind::bcast:
    return {{"binomial", describe_bcast_binomial},
            {"knomial", describe_bcast_knomial},
            {"linear", describe_bcast_linear},
            {"chain", describe_bcast_chain},
            {"pipeline", describe_bcast_pipeline},
            {"split_binary_tree", describe_bcast_split_binary_tree},
            {"binary_tree", describe_bcast_binary_tree},
            {"scatter_allgather", describe_bcast_scatter_allgather},
            {"scatter_ring_allgather", describe_bcast_scatter_ring_allgather}};
  case CollectiveKind::allgather:
    return {{"ring", describe_allgather_ring},
            {"recursive_doubling", describe_allgather_recursive_doubling},
            {"bruck", describe_allgather_bruck},
            {"neighbor_exchange", describe_allgather_neighbor_exchange},
            {"direct", describe_allgather_direct},
            {"linear", describe_allgather_linear},
            {"sparbit", describe_allgather_sparbit}};
  case CollectiveKind::reduce_scatter:
    return {{"ring", describe_reduce_scatter_ring},
            {"recursive_halving", describe_reduce_scatter_recursive_halving},
            {"pairwise", describe_reduce_scatter_pairwise},
            {"butterfly", describe_reduce_scatter_butterfly},
            {"non_overlapping", describe_reduce_scatter_non_overlapping},
            {"recursive_doubling", describe_reduce_scatter_recursive_doubling}};
  case CollectiveKind::gather:
    return {{"linear", describe_gather_linear},
            {"binomial", describe_gather_binomial},
            {"linear_sync", describe_gather_linear_sync}};
  case CollectiveKind::scatter:
    return {{"binomial", describe_scatter_binomial},
            {"linear", describe_scatter_linear},
            {"linear_nb", describe_scatter_linear_nb}};
  default: return {};
  }
}

ParamSpec level_param(std::string name, core::CollectiveKind collective,
                      std::string_view default_name, std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.help = std::move(help);
  for (const auto& c : level_choices(collective)) {
    p.choices.push_back(c.name);
  }
  const auto it = std::find(p.choices.begin(), p.choices.end(), default_name);
  if (it == p.choices.end()) {
    throw core::InternalError(fmt::format("level parameter '{}': no {} algorithm '{}'", p.name,
                                          core::to_string(collective), default_name));
  }
  p.default_value = it - p.choices.begin();
  p.min = 0;
  p.max = static_cast<std::int64_t>(p.choices.size()) - 1;
  return p;
}

Level::Level(const Request& req, const std::string& param, core::CollectiveKind collective)
    : param_(param), collective_(collective) {
  const auto choices = level_choices(collective);
  const std::int64_t index = req.params.at(param);
  if (index < 0 || static_cast<std::size_t>(index) >= choices.size()) {
    throw core::InternalError(fmt::format("level parameter '{}' = {} out of range", param, index));
  }
  info_ = choices[static_cast<std::size_t>(index)].describe();
}

Level::Level(std::string label, AlgorithmInfo info, std::map<std::string, std::int64_t> params)
    : param_(std::move(label)), collective_(info.collective), info_(std::move(info)),
      params_(std::move(params)) {}

Request Level::sub_request(std::uint32_t ranks, std::uint64_t bytes, core::Rank root) const {
  Request sub;
  sub.params = params_;
  sub.collective = collective_;
  sub.ranks = ranks;
  sub.bytes = core::Bytes{bytes};
  sub.root = root;
  return sub;
}

const SubSchedule& Level::schedule(std::uint32_t ranks, std::uint64_t bytes, core::Rank root) {
  auto [it, fresh] = cache_.try_emplace({ranks, bytes, root});
  if (fresh) {
    Request sub = sub_request(ranks, bytes, root);
    const Registry none;
    if (std::string why = none.refusal(info_, sub); !why.empty()) {
      it->second.refusal = fmt::format("{}={} on {} ranks: {}", param_, info_.name, ranks, why);
    } else {
      it->second.schedule = std::make_shared<const core::Schedule>(none.generate(info_, sub));
    }
  }
  return it->second;
}

std::optional<CostTerms> Level::cost(std::uint32_t ranks, std::uint64_t bytes,
                                     core::Rank root) const {
  Request sub = sub_request(ranks, bytes, root);
  const Registry none;
  if (!none.refusal(info_, sub).empty() || !info_.cost) {
    return std::nullopt;
  }
  return info_.cost(sub);
}

bool place(Plan& plan, Level& level, const std::vector<core::Rank>& ranks, std::uint64_t bytes,
           core::Rank root, std::uint64_t data_offset, std::uint64_t tmp_offset,
           std::vector<std::uint64_t> block_bounds, std::uint32_t lane) {
  if (ranks.size() < 2) {
    return true;
  }
  const SubSchedule& sub = level.schedule(static_cast<std::uint32_t>(ranks.size()), bytes, root);
  if (!sub.refusal.empty()) {
    plan.refusal = sub.refusal;
    return false;
  }
  plan.composition.add(
      Placement{sub.schedule, ranks, data_offset, tmp_offset, std::move(block_bounds), lane});
  return true;
}

bool place_segments(Plan& plan, std::uint64_t n, std::uint64_t segment, std::uint32_t depth,
                    const SegmentStages& stages) {
  std::uint64_t region = 0; // the first segment's scratch, the largest
  std::uint32_t s = 0;
  for (std::uint64_t at = 0; at < n; at += segment, ++s) {
    const std::uint32_t lane = s % depth;
    if (!stages(at, std::min(segment, n - at), lane, lane * region)) {
      return false;
    }
    if (s == 0) {
      region = plan.composition.tmp_bytes();
    }
  }
  return true;
}

std::vector<std::uint64_t> node_bounds(const detail::NodeLayout& layout, std::uint64_t n) {
  const auto p = static_cast<std::uint64_t>(layout.node.size());
  std::vector<std::uint64_t> bounds;
  bounds.reserve(layout.nodes() + 1);
  for (const auto& m : layout.members) {
    bounds.push_back(core::block_range(n, p, m.front()).first);
  }
  bounds.push_back(n);
  return bounds;
}

bool place_blocks(Plan& plan, Level& level, const std::vector<core::Rank>& ranks,
                  const std::vector<std::uint64_t>& bounds, core::Rank root,
                  std::uint64_t tmp_offset) {
  const std::size_t k = ranks.size();
  std::uint64_t largest = 0;
  bool equal = true;
  for (std::size_t j = 0; j < k; ++j) {
    const std::uint64_t len = bounds[j + 1] - bounds[j];
    equal = equal && len == bounds[1] - bounds[0];
    largest = std::max(largest, len);
  }
  if (equal) {
    return place(plan, level, ranks, bounds[k] - bounds[0], root, bounds[0], tmp_offset);
  }
  return place(plan, level, ranks, k * largest, root, 0, tmp_offset, bounds);
}

void set_composed(AlgorithmInfo& a, Planner planner) {
  a.check = [planner](const Request& req) {
    const Plan plan = planner(req);
    if (!plan.refusal.empty()) {
      return plan.refusal;
    }
    if (std::string why = plan.composition.problem(); !why.empty()) {
      return why;
    }
    return detail::size_limit_refusal(plan.composition.counts());
  };
  a.generate = [planner, name = a.name](const Request& req) {
    const Plan plan = planner(req);
    if (!plan.refusal.empty()) {
      throw core::InternalError(
          fmt::format("{}: generate() after a refusal: {}", name, plan.refusal));
    }
    return plan.composition.build(make_header(req, plan.composition.tmp_bytes(), name));
  };
}

std::string consecutive_nodes_refusal(const detail::NodeLayout& layout) {
  for (const auto& m : layout.members) {
    if (m.back() - m.front() + 1 != m.size()) {
      return fmt::format("the ranks of each node must be consecutive (a node holds ranks {}), "
                         "so that a node's blocks form one shard",
                         fmt::join(m, ", "));
    }
  }
  return {};
}

std::vector<core::Rank> leaders(const detail::NodeLayout& layout, core::Rank root) {
  std::vector<core::Rank> out;
  out.reserve(layout.nodes());
  for (const auto& m : layout.members) {
    out.push_back(m.front());
  }
  if (root < layout.node.size()) {
    out[layout.node[root]] = root;
  }
  return out;
}

bool one_rank_per_node(const detail::NodeLayout& layout) {
  return layout.nodes() == layout.node.size();
}

} // namespace collsim::algorithms::compose

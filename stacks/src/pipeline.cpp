#include "collsim/stacks/pipeline.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <vector>

namespace collsim::stacks {
namespace {

bool is_message(core::OpKind k) {
  return k == core::OpKind::send || k == core::OpKind::recv || k == core::OpKind::recv_reduce;
}

} // namespace

core::Schedule split_messages(const core::Schedule& s, const PieceRule& rule) {
  const std::uint32_t participants = s.participants();
  // First pass: pieces per operation and the new program sizes, for reserve().
  std::vector<std::uint32_t> pieces(s.op_count(), 1);
  std::size_t ops = 0;
  for (core::OpId id = 0; id < s.op_count(); ++id) {
    if (is_message(s.kind(id)) && s.length(id) > 0) {
      pieces[id] = std::max<std::uint32_t>(rule(s.length(id)), 1);
    }
    ops += pieces[id];
  }
  // Whether piece x of `id` waits for piece x of `dep` only (see the header).
  const auto pairwise = [&](core::OpId id, core::OpId dep) {
    return pieces[id] > 1 && pieces[dep] == pieces[id] && is_message(s.kind(dep)) &&
           s.target(dep) == s.target(id);
  };
  std::size_t deps = 0;
  for (core::Rank r = 0; r < participants; ++r) {
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      for (const std::uint32_t d : s.deps(id)) {
        const core::OpId dep = s.rank_begin(r) + d;
        deps += static_cast<std::size_t>(pieces[id]) * (pairwise(id, dep) ? 1 : pieces[dep]);
      }
    }
  }
  if (ops > core::Schedule::kMaxOps) {
    throw core::UsageError(
        "schedule too large once its messages are cut into the library's pieces: more than 2^30 "
        "operations");
  }
  core::Schedule out(s.header());
  out.reserve(ops, deps);
  std::vector<std::uint32_t> first; // per local operation of the rank: its first piece
  std::vector<std::uint32_t> dep_list;
  for (core::Rank r = 0; r < participants; ++r) {
    out.begin_rank(r);
    const core::OpId base = s.rank_begin(r);
    const core::OpId end = s.rank_end(r);
    first.assign(end - base, 0);
    std::uint32_t next = 0;
    for (core::OpId id = base; id < end; ++id) {
      first[id - base] = next;
      const core::OpKind kind = s.kind(id);
      const core::Range target = s.target(id);
      const std::uint32_t k = pieces[id];
      out.set_stream(s.stream(id));
      for (std::uint32_t x = 0; x < k; ++x) {
        dep_list.clear();
        for (const std::uint32_t d : s.deps(id)) {
          const core::OpId dep = base + d;
          if (pairwise(id, dep)) {
            dep_list.push_back(first[d] + x);
          } else {
            for (std::uint32_t y = 0; y < pieces[dep]; ++y) {
              dep_list.push_back(first[d] + y);
            }
          }
        }
        core::Range part = target;
        core::Range source{};
        if (k > 1) {
          const auto [off, len] = core::block_range(target.length, k, x);
          part.offset = target.offset + off;
          part.length = len;
        }
        if (kind == core::OpKind::reduce || kind == core::OpKind::copy) {
          source = s.source(id);
        }
        if (kind == core::OpKind::calc) {
          out.calc(s.calc_time(id), dep_list);
        } else {
          out.add(kind, is_message(kind) ? s.route_peer(id) : 0, part, source, dep_list);
        }
      }
      next += k;
    }
  }
  out.finish();
  return out;
}

} // namespace collsim::stacks

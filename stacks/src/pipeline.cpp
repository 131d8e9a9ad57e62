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
  // Pieces per operation and their total, for reserve(). A schedule's messages come in a few
  // lengths (a ring's chunks), so the rule is asked once per run of equal lengths.
  std::vector<std::uint32_t> pieces(s.op_count(), 1);
  std::size_t ops = 0;
  std::uint64_t last_length = 0;
  std::uint32_t last_pieces = 1;
  bool asked = false;
  for (core::OpId id = 0; id < s.op_count(); ++id) {
    const std::uint64_t length = s.length(id);
    if (is_message(s.kind(id)) && length > 0) {
      if (!asked || length != last_length) {
        last_pieces = std::max<std::uint32_t>(rule(length), 1);
        last_length = length;
        asked = true;
      }
      pieces[id] = last_pieces;
    }
    ops += pieces[id];
  }
  if (ops > core::Schedule::kMaxOps) {
    throw core::UsageError(
        "schedule too large once its messages are cut into the library's pieces: more than 2^30 "
        "operations");
  }
  core::Schedule out(s.header());
  out.reserve(ops, 0); // dependency lists of two or more grow on demand (Schedule::reserve)
  std::vector<std::uint32_t> first; // per local operation of the rank: its first piece
  std::vector<std::uint32_t> dep_list;
  // Per dependency of the operation being cut: its first piece, and whether piece x waits for
  // piece x of it only (see the header) or for all of its pieces.
  struct DepPieces {
    std::uint32_t first = 0;
    std::uint32_t count = 1;
    bool pairwise = false;
  };
  std::vector<DepPieces> dep_pieces;
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
      dep_pieces.clear();
      for (const std::uint32_t d : s.deps(id)) {
        const core::OpId dep = base + d;
        const bool pairwise =
            k > 1 && pieces[dep] == k && is_message(s.kind(dep)) && s.target(dep) == target;
        dep_pieces.push_back({first[d], pieces[dep], pairwise});
      }
      const core::Range source =
          kind == core::OpKind::reduce || kind == core::OpKind::copy ? s.source(id) : core::Range{};
      const core::Rank peer = is_message(kind) ? s.route_peer(id) : 0;
      out.set_stream(s.stream(id));
      for (std::uint32_t x = 0; x < k; ++x) {
        dep_list.clear();
        for (const DepPieces& dp : dep_pieces) {
          if (dp.pairwise) {
            dep_list.push_back(dp.first + x);
          } else {
            for (std::uint32_t y = 0; y < dp.count; ++y) {
              dep_list.push_back(dp.first + y);
            }
          }
        }
        core::Range part = target;
        if (k > 1) {
          const auto [off, len] = core::block_range(target.length, k, x);
          part.offset = target.offset + off;
          part.length = len;
        }
        if (kind == core::OpKind::calc) {
          out.calc(s.calc_time(id), dep_list);
        } else {
          out.add(kind, peer, part, source, dep_list);
        }
      }
      next += k;
    }
  }
  out.finish();
  return out;
}

} // namespace collsim::stacks

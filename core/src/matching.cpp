// Matching sends and receives first in first out per connection (verify.hpp, match_messages):
// the one pairing of messages that the engines and the checkers share.

#include "collsim/core/verify.hpp"

#include "verify_support.hpp"

#include "collsim/core/big_vector.hpp"
#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>

namespace collsim::core {

using verify_detail::is_receive;
using verify_detail::op_label;

Matching match_messages(const Schedule& s, VerifyReport* report) {
  Matching m;
  m.partner.assign(s.op_count(), kNoMatch);
  m.unmatched = match_messages(
      s,
      [&](OpId send, OpId recv) {
        m.partner[send] = recv;
        m.partner[recv] = send;
      },
      report);
  return m;
}

namespace {

/// Per-peer counters for one rank's program: an open-addressing table reused rank after rank, so
/// that a rank with a few peers among a million touches a few cache lines, not a dense array.
class PeerCounters {
public:
  /// The counter of `peer`, created at zero.
  std::uint64_t& operator[](Rank peer) {
    if ((used_.size() + 1) * 2 > keys_.size()) {
      grow();
    }
    std::size_t i = hash(peer);
    while (keys_[i] != kEmpty && keys_[i] != peer) {
      i = (i + 1) & (keys_.size() - 1);
    }
    if (keys_[i] == kEmpty) {
      keys_[i] = peer;
      values_[i] = 0;
      used_.push_back(static_cast<std::uint32_t>(i));
    }
    return values_[i];
  }
  /// The peers seen since the last clear, in first-seen order.
  template <class F>
  void for_each(F&& f) {
    for (std::uint32_t i : used_) {
      f(keys_[i], values_[i]);
    }
  }
  void clear() {
    for (std::uint32_t i : used_) {
      keys_[i] = kEmpty;
    }
    used_.clear();
  }

private:
  static constexpr Rank kEmpty = 0xffffffffU;
  [[nodiscard]] std::size_t hash(Rank r) const {
    return (static_cast<std::size_t>(r) * 0x9e3779b97f4a7c15ULL >> 20) & (keys_.size() - 1);
  }
  void grow() {
    std::vector<std::pair<Rank, std::uint64_t>> old;
    for_each([&](Rank k, std::uint64_t v) { old.emplace_back(k, v); });
    const std::size_t cap = std::max<std::size_t>(64, keys_.size() * 2);
    keys_.assign(cap, kEmpty);
    values_.assign(cap, 0);
    used_.clear();
    for (const auto& [k, v] : old) {
      (*this)[k] = v;
    }
  }
  std::vector<Rank> keys_;
  std::vector<std::uint64_t> values_;
  std::vector<std::uint32_t> used_;
};

} // namespace

std::size_t match_messages(const Schedule& s, const std::function<void(OpId, OpId)>& sink,
                           VerifyReport* report) {
  std::size_t unmatched = 0;
  const Rank p = s.participants();
  if (p >= (Rank{1} << 24) - 1) {
    throw UsageError(fmt::format("{} participants: matching supports fewer than 2^24", p));
  }
  // A connection: the source rank and the message's tag, packed into one key (sources < 2^24,
  // tags < 256) whose order is the source's, then the tag's.
  const auto connection = [&s](Rank source, OpId id) { return source << 8 | s.tag(id); };
  // Per receiving rank b: its receives bucketed by connection (a stable counting sort, O(ops)),
  // and a small table of (connection, first, count) sorted by connection. The k-th send from a to
  // b on tag t then matches entry first + k of b's bucket for (a, t). Sends look their bucket up
  // by binary search.
  struct Group {
    Rank key; // the connection
    std::uint32_t count;
    std::uint64_t first;       // index into recv_sorted
    std::uint32_t matched = 0; // sends matched so far
  };
  // Up to one entry per operation: reserved whole (pages never written are never faulted in), on
  // huge pages where it is large, so growing it neither copies nor faults page by page.
  BigVector<OpId> recv_sorted;
  recv_sorted.reserve(s.op_count());
  std::vector<Group> groups;
  std::vector<std::uint64_t> group_begin(static_cast<std::size_t>(p) + 1, 0);
  PeerCounters counters;
  std::vector<std::pair<Rank, std::uint64_t>> sources;
  for (Rank b = 0; b < p; ++b) {
    group_begin[b] = groups.size();
    for (OpId id = s.rank_begin(b); id < s.rank_end(b); ++id) {
      if (is_receive(s.kind(id)) && s.peer(id) < p) {
        ++counters[connection(s.peer(id), id)];
      }
    }
    sources.clear();
    counters.for_each([&](Rank a, std::uint64_t n) { sources.emplace_back(a, n); });
    std::sort(sources.begin(), sources.end());
    std::uint64_t pos = recv_sorted.size();
    for (const auto& [a, n] : sources) {
      groups.push_back({a, static_cast<std::uint32_t>(n), pos, 0});
      counters[a] = pos; // from now on: the next free slot of a's bucket
      pos += n;
    }
    recv_sorted.resize(pos);
    for (OpId id = s.rank_begin(b); id < s.rank_end(b); ++id) {
      if (is_receive(s.kind(id)) && s.peer(id) < p) {
        recv_sorted[counters[connection(s.peer(id), id)]++] = id;
      }
    }
    counters.clear();
  }
  group_begin[p] = groups.size();

  for (Rank a = 0; a < p; ++a) {
    for (OpId id = s.rank_begin(a); id < s.rank_end(a); ++id) {
      if (s.kind(id) != OpKind::send) {
        continue;
      }
      const Rank b = s.peer(id);
      // A message to itself is reported by the structural check; a collapsed schedule's message to
      // its own representative's class is not one (core/collapse.hpp).
      if (b >= p || s.route_peer(id) == a) {
        continue;
      }
      const Rank key = connection(a, id);
      const std::uint64_t k = counters[connection(b, id)]++; // sends from a to b on this tag so far
      const auto lo = groups.begin() + static_cast<std::ptrdiff_t>(group_begin[b]);
      const auto hi = groups.begin() + static_cast<std::ptrdiff_t>(group_begin[b + 1]);
      const auto g =
          std::lower_bound(lo, hi, key, [](const Group& x, Rank v) { return x.key < v; });
      if (g == hi || g->key != key || k >= g->count) {
        ++unmatched;
        if (report != nullptr) {
          report->add(fmt::format("unmatched send: {} has no matching receive on rank {}",
                                  op_label(s, id), b));
        }
        continue;
      }
      ++g->matched;
      const OpId recv = recv_sorted[g->first + k];
      sink(id, recv);
      // Engines time only validated schedules; the length check belongs to validate().
      if (report != nullptr && s.length(id) != s.length(recv)) {
        report->add(fmt::format("length mismatch: {} sends {} bytes but {} receives {}",
                                op_label(s, id), s.length(id), op_label(s, recv), s.length(recv)));
      }
    }
    counters.clear();
  }
  // Receives beyond the number of sends on their channel are unmatched.
  for (Rank b = 0; b < p; ++b) {
    for (auto g = group_begin[b]; g < group_begin[b + 1]; ++g) {
      const Group& grp = groups[g];
      for (std::uint32_t k = grp.matched; k < grp.count; ++k) {
        ++unmatched;
        if (report != nullptr) {
          report->add(fmt::format("unmatched receive: {} has no matching send",
                                  op_label(s, recv_sorted[grp.first + k])));
        }
      }
    }
  }
  return unmatched;
}

void fifo_credits(const Schedule& s, std::uint32_t slots, const std::function<OpId(OpId)>& partner,
                  const std::function<void(OpId, OpId)>& credit) {
  if (slots == 0) {
    return;
  }
  for (Rank r = 0; r < s.participants(); ++r) {
    // Per connection (peer, stream): the sends so far and the receives of the last `slots`. The
    // peer is the route peer: in a collapsed schedule (core/collapse.hpp) the rank itself, not
    // its class, owns the FIFO.
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::vector<OpId>>> sent;
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) != OpKind::send) {
        continue;
      }
      const std::uint64_t key = (static_cast<std::uint64_t>(s.route_peer(id)) << 8) | s.stream(id);
      auto& [count, ring] = sent[key];
      if (ring.empty()) {
        ring.assign(slots, kNoMatch);
      }
      OpId& slot = ring[count % slots];
      if (slot != kNoMatch) {
        credit(id, slot);
      }
      slot = partner(id);
      ++count;
    }
  }
}

} // namespace collsim::core

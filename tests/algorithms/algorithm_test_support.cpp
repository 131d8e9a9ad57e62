#include "algorithm_test_support.hpp"

#include <fmt/format.h>

namespace collsim::testing {

algorithms::Request allreduce_request(std::uint32_t ranks, std::uint64_t bytes) {
  algorithms::Request req;
  req.collective = core::CollectiveKind::allreduce;
  req.ranks = ranks;
  req.bytes = core::Bytes{bytes};
  return req;
}

std::vector<RankTraffic> traffic(const core::Schedule& s) {
  std::vector<RankTraffic> out(s.ranks());
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    RankTraffic& t = out[r];
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const std::uint64_t len = s.length(id);
      switch (s.kind(id)) {
      case core::OpKind::send:
        ++t.sends;
        t.send_bytes += len;
        t.send_peers.push_back(s.peer(id));
        t.send_lengths.push_back(len);
        break;
      case core::OpKind::recv_reduce: t.reduced_bytes += len; [[fallthrough]];
      case core::OpKind::recv:
        ++t.recvs;
        t.recv_bytes += len;
        break;
      case core::OpKind::reduce: t.reduced_bytes += len; break;
      case core::OpKind::copy: break;
      }
    }
  }
  return out;
}

namespace {

struct Access {
  core::Range range;
  bool write = false;
};

/// The byte ranges an operation reads and writes (at most two).
std::vector<Access> accesses(const core::Schedule& s, core::OpId id) {
  switch (s.kind(id)) {
  case core::OpKind::send: return {{s.target(id), false}};
  case core::OpKind::recv:
  case core::OpKind::recv_reduce: return {{s.target(id), true}};
  case core::OpKind::reduce:
  case core::OpKind::copy: return {{s.source(id), false}, {s.target(id), true}};
  }
  return {};
}

bool conflict(const Access& a, const Access& b) {
  return (a.write || b.write) && a.range.buffer == b.range.buffer && a.range.length > 0 &&
         b.range.length > 0 && a.range.offset < b.range.offset + b.range.length &&
         b.range.offset < a.range.offset + a.range.length;
}

} // namespace

std::string first_local_race(const core::Schedule& s) {
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    const core::OpId base = s.rank_begin(r);
    const std::size_t m = s.rank_end(r) - base;
    const std::size_t words = (m + 63) / 64;
    // before[i]: the local ops that complete before op i issues (transitive dependencies).
    std::vector<std::uint64_t> before(m * words, 0);
    std::vector<std::vector<Access>> acc(m);
    for (std::size_t i = 0; i < m; ++i) {
      std::uint64_t* row = before.data() + i * words;
      for (std::uint32_t d : s.deps(base + static_cast<core::OpId>(i))) {
        row[d / 64] |= std::uint64_t{1} << (d % 64);
        const std::uint64_t* drow = before.data() + std::size_t{d} * words;
        for (std::size_t w = 0; w < words; ++w) {
          row[w] |= drow[w];
        }
      }
      acc[i] = accesses(s, base + static_cast<core::OpId>(i));
      for (std::size_t j = 0; j < i; ++j) {
        if ((row[j / 64] >> (j % 64) & 1U) != 0) {
          continue;
        }
        for (const Access& a : acc[j]) {
          for (const Access& b : acc[i]) {
            if (conflict(a, b)) {
              const core::Op later = s.op(base + static_cast<core::OpId>(i));
              const core::Op earlier = s.op(base + static_cast<core::OpId>(j));
              return fmt::format(
                  "rank {}: l{} ({} {}[{}..{})) may overlap l{} ({} {}[{}..{})): no dependency "
                  "orders them",
                  r, i, core::to_string(later.kind), core::to_string(b.range.buffer),
                  b.range.offset, b.range.offset + b.range.length, j, core::to_string(earlier.kind),
                  core::to_string(a.range.buffer), a.range.offset, a.range.offset + a.range.length);
            }
          }
        }
      }
    }
  }
  return {};
}

} // namespace collsim::testing

#include "algorithm_test_support.hpp"

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

} // namespace collsim::testing

#include "algorithm_test_support.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

namespace collsim::testing {

algorithms::Request allreduce_request(std::uint32_t ranks, std::uint64_t bytes) {
  algorithms::Request req;
  req.collective = core::CollectiveKind::allreduce;
  req.ranks = ranks;
  req.bytes = core::Bytes{bytes};
  return req;
}

core::Schedule allreduce_schedule(const std::string& name, std::uint32_t p, std::uint64_t n,
                                  const Params& params) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = allreduce_request(p, n);
  req.params = params;
  return reg.generate(reg.find(core::CollectiveKind::allreduce, name), req);
}

std::optional<algorithms::CostTerms> allreduce_cost(const std::string& name, std::uint32_t p,
                                                    std::uint64_t n, const Params& params) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = allreduce_request(p, n);
  req.params = params;
  return reg.cost(reg.find(core::CollectiveKind::allreduce, name), req);
}

void check_allreduce_variants(const std::string& name, const std::vector<Params>& variants) {
  for (const auto& params : variants) {
    for (std::uint32_t p = 1; p <= 20; ++p) {
      for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{p} + 3,
                                    std::uint64_t{1000}, std::uint64_t{4099}}) {
        std::string desc;
        for (const auto& [key, value] : params) {
          desc += key + "=" + std::to_string(value) + " ";
        }
        const auto report = core::check_semantics(allreduce_schedule(name, p, n, params));
        INFO(desc << "p=" << p << " n=" << n << ": " << report.summary());
        CHECK(report.ok());
      }
    }
  }
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

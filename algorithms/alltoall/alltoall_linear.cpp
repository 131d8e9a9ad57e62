// Linear alltoall (algorithms.md AA1): every rank posts all its receives and all its sends at once
// and waits for them all.
//
// Source: Open MPI ompi_coll_base_alltoall_intra_basic_linear (coll/tuned alltoall algorithm 1);
// SMPI "basic_linear".
//
// Cost (b = n/p, p >= 2): a + (p-1)/p n b on `uniform` (LogGP with o = g = 0, no contention):
// the p-1 messages leave back to back and their latencies overlap, so each rank's last block is in
// after one latency and (p-1) b bytes. Real networks add incast and contention (a flow model); the
// blocking textbook form (p-1)(a + b b) is what pairwise pays.
//
// Schedule, rank r (Open MPI's order): copy its own block data[r b, +b) -> data[n + r b, +b);
// receive from r+1, r+2, ..., r-1 into data[n + q b, +b); send to r-1, r-2, ..., r+1 from
// data[q b, +b). No dependencies: every operation touches its own bytes, and MPI_Waitall orders
// nothing among them.
//
// alltoallv (per-rank counts), as ompi_coll_base_alltoallv_intra_basic_linear (coll/tuned
// alltoallv algorithm 1): the own block is copied only when its count is not 0; receives are
// posted from rank 0 up, then sends from rank 0 up, skipping the rank itself and every peer
// with a zero count (no zero-byte messages), at MPI's contiguous displacements.

#include "alltoall/alltoall_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

namespace collsim::algorithms {
namespace {

using detail::OpCounts;

constexpr const char* kName = "linear";

OpCounts linear_counts(std::uint32_t p) {
  const std::uint64_t pp = p;
  return {pp * (2 * pp - 1), 0};
}

core::Schedule generate_linear_v(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  s.reserve(linear_counts(p).ops, 0);
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (lay.count(r, r) != 0) {
      s.copy(detail::data_range(lay.send_offset(r, r), lay.count(r, r)),
             detail::data_range(lay.recv_offset(r, r), lay.count(r, r)));
    }
    for (core::Rank q = 0; q < p; ++q) {
      if (q != r && lay.count(q, r) != 0) {
        s.recv(q, detail::data_range(lay.recv_offset(q, r), lay.count(q, r)));
      }
    }
    for (core::Rank q = 0; q < p; ++q) {
      if (q != r && lay.count(r, q) != 0) {
        s.send(q, detail::data_range(lay.send_offset(r, q), lay.count(r, q)));
      }
    }
  }
  s.finish();
  return s;
}

core::Schedule generate_linear(const Request& req) {
  if (!req.counts.empty()) {
    return generate_linear_v(req);
  }
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t b = n / p;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = linear_counts(p);
  s.reserve(counts.ops, counts.deps);
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    s.copy(detail::data_range(r * b, b), detail::data_range(n + r * b, b));
    for (std::uint32_t i = 1; i < p; ++i) {
      const core::Rank from = (r + i) % p;
      s.recv(from, detail::data_range(n + from * b, b));
    }
    for (std::uint32_t i = 1; i < p; ++i) {
      const core::Rank to = (r + p - i) % p;
      s.send(to, detail::data_range(to * b, b));
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> linear_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t b = req.bytes.value / p;
  return CostTerms{p > 1 ? 1.0 : 0.0, static_cast<double>((p - 1) * b), 0.0};
}

} // namespace

AlgorithmInfo describe_alltoall_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "post every receive and send at once, then wait for all";
  a.source = "Open MPI ompi_coll_base_alltoall_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:linear", "smpi:basic_linear"};
  a.constraints = {"bytes divisible by ranks (uniform)"};
  a.counts = true;
  a.check = [](const Request& req) -> std::string {
    if (req.counts.empty() && req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    return detail::size_limit_refusal(linear_counts(req.ranks));
  };
  a.generate = generate_linear;
  a.cost = linear_cost;
  a.cost_formula = "a + (p-1)/p n b (LogGP without contention: the latencies overlap)";
  return a;
}

} // namespace collsim::algorithms

// Scattered alltoall (algorithms.md AA6): the linear exchange in batches: post the receives from
// r, r+1, ..., r+B-1 and the sends to r, r-1, ..., r-B+1, wait for all of them, move on to the
// next B peers. The staggered order keeps every rank from sending to the same peer at once.
//
// Source: MPICH MPIR_Alltoall_intra_scattered (batch size MPIR_CVAR_ALLTOALL_THROTTLE, default
// 32; 0 posts everything at once).
//
// Cost (b = n/p): c a + (p-1)/p n b on `uniform` (LogGP with o = g = 0), where c is the number of
// batches that carry a message (ceil(p/B), less one when B = 1: the first batch is then only the
// local copy). Exact: a batch's messages leave back to back, every rank's batch is symmetric, and
// the next batch waits for the whole batch (MPI_Waitall).
//
// Schedule, rank r, batch ii = 0, B, 2B, ..., s = min(B, p - ii) peers: receives from r+ii+i into
// data[n + q b, +b), then sends to r-ii-i from data[q b, +b), i = 0..s-1; the exchange with itself
// (i + ii = 0) is the local copy of block r. Dependencies: a batch's first operation waits for
// every operation of the batch before (the others issue after it, in program order).
//
// alltoallv (per-rank counts): MPIR_Alltoallv_intra_scattered, the same batches with each pair's
// count at MPI's contiguous displacements (core::BlockLayout); it posts no receive for a zero
// recvcount and no send for a zero sendcount, so a batch can be empty, and the next one then
// waits for the last batch that posted anything. MPICH's auto choice for a non-in-place
// MPI_Alltoallv (MPIR_Alltoallv_intra_auto).

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"

#include "collsim/core/layout.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "scattered";
constexpr const char* kBatch = "batch_size";

std::uint32_t batch_of(const Request& req) {
  const auto it = req.params.find(kBatch);
  const std::int64_t b = it == req.params.end() ? 32 : it->second;
  return b <= 0 || b >= req.ranks ? req.ranks : static_cast<std::uint32_t>(b);
}

OpCounts scattered_counts(std::uint32_t p, std::uint32_t batch) {
  OpCounts c;
  std::uint64_t previous = 0; // operations in the batch before
  for (std::uint64_t ii = 0; ii < p; ii += batch) {
    const std::uint64_t s = std::min<std::uint64_t>(batch, p - ii);
    // 2s operations, or 2s - 1 when the batch holds the exchange with itself (one copy).
    const std::uint64_t ops = ii == 0 ? 2 * s - 1 : 2 * s;
    c.ops += ops;
    c.deps += previous;
    previous = ops;
  }
  c.ops *= p;
  c.deps *= p;
  return c;
}

core::Schedule generate_scattered(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint32_t batch = batch_of(req);
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const bool varying = lay.varying();
  const OpCounts counts = scattered_counts(p, batch);
  s.reserve(counts.ops, counts.deps);
  std::vector<std::uint32_t> previous;
  std::vector<std::uint32_t> current;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    previous.clear();
    for (std::uint32_t ii = 0; ii < p; ii += batch) {
      const std::uint32_t size = std::min(batch, p - ii);
      current.clear();
      // Only the batch's first operation carries the wait for the batch before.
      const auto add = [&](OpKind kind, core::Rank peer, core::Range range) {
        current.push_back(detail::add_op(s, kind, peer, range,
                                         current.empty() ? std::span<const std::uint32_t>(previous)
                                                         : std::span<const std::uint32_t>()));
      };
      for (std::uint32_t i = 0; i < size; ++i) {
        const core::Rank from = static_cast<core::Rank>((std::uint64_t{r} + i + ii) % p);
        const std::uint64_t c = lay.count(from, r);
        if (varying && c == 0) {
          continue;
        }
        if (from == r) {
          const core::Range own = detail::data_range(lay.send_offset(r, r), c);
          current.push_back(s.add(OpKind::copy, 0, detail::data_range(lay.recv_offset(r, r), c),
                                  own,
                                  current.empty() ? std::span<const std::uint32_t>(previous)
                                                  : std::span<const std::uint32_t>()));
          continue;
        }
        add(OpKind::recv, from, detail::data_range(lay.recv_offset(from, r), c));
      }
      for (std::uint32_t i = 0; i < size; ++i) {
        const core::Rank to = static_cast<core::Rank>((std::uint64_t{r} + 2 * p - i - ii) % p);
        const std::uint64_t c = lay.count(r, to);
        if (to != r && (!varying || c > 0)) {
          add(OpKind::send, to, detail::data_range(lay.send_offset(r, to), c));
        }
      }
      if (!current.empty()) {
        previous.swap(current);
      }
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> scattered_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint32_t p = req.ranks;
  const std::uint32_t batch = batch_of(req);
  std::uint64_t batches = 0;
  for (std::uint64_t ii = 0; ii < p; ii += batch) {
    const std::uint64_t s = std::min<std::uint64_t>(batch, p - ii);
    batches += ii == 0 && s == 1 ? 0 : 1;
  }
  const std::uint64_t b = req.bytes.value / p;
  return CostTerms{static_cast<double>(batches), static_cast<double>((p - 1) * b), 0.0};
}

} // namespace

AlgorithmInfo describe_alltoall_scattered() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "linear exchange in batches of B staggered peers, each batch waited for";
  a.source = "MPICH MPIR_Alltoall_intra_scattered, MPIR_Alltoallv_intra_scattered";
  a.aliases = {"mpich:scattered"};
  a.params = {{kBatch, 32, 0, 1 << 30,
               "peers per batch (MPICH's MPIR_CVAR_ALLTOALL_THROTTLE); 0 = all at once"}};
  a.constraints = {"bytes divisible by ranks (uniform)"};
  a.counts = true;
  a.check = [](const Request& req) -> std::string {
    if (req.counts.empty() && req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    return detail::size_limit_refusal(scattered_counts(req.ranks, batch_of(req)));
  };
  a.generate = generate_scattered;
  a.cost = scattered_cost;
  a.cost_formula = "c a + (p-1)/p n b, c = batches with a message (ceil(p/B); B = batch_size)";
  return a;
}

} // namespace collsim::algorithms

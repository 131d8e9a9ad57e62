// Linear alltoall with a bounded number of outstanding requests (algorithms.md AA4): like the
// linear alltoall, but at most K receives and K sends are in flight; each completed request is
// replaced by the next one.
//
// Source: Open MPI ompi_coll_base_alltoall_intra_linear_sync (coll/tuned alltoall algorithm 4,
// window coll_tuned_alltoall_max_requests, default 0 = no limit).
//
// Cost: no closed form is declared. With K >= p-1 it is the linear alltoall (a + (p-1)/p n b on
// `uniform`); with a small K the windows add a latency per (p-1)/K messages, and how much depends
// on how the ranks' windows interleave.
//
// Schedule, rank r, b = n/p, K = min(max_outstanding, p-1) (0: p-1):
//   receives from r+1, r+2, ... into data[n + q b, +b); sends to r-1, r-2, ... from data[q b, +b)
//   (Open MPI's orders); the first K receives, then the first K sends; then for j = K..p-2 the
//   j-th receive and the j-th send; finally the local copy of block r (Open MPI copies last).
// Dependencies: the j-th receive waits for the (j-K)-th and the j-th send for the (j-K)-th (the
// request slot it reuses). Open MPI refills whichever request completes first (MPI_Waitany); a
// schedule issues in program order, so here the j-th send is posted after the j-th receive: an
// approximation that is exact for symmetric exchanges, where both complete together.

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "linear_sync";
constexpr const char* kWindow = "max_outstanding";

std::uint32_t window(const Request& req) {
  const std::uint32_t p = req.ranks;
  const auto it = req.params.find(kWindow);
  const std::int64_t k = it == req.params.end() ? 0 : it->second;
  return k <= 0 || k >= p - 1 ? (p > 1 ? p - 1 : 0) : static_cast<std::uint32_t>(k);
}

OpCounts linear_sync_counts(std::uint32_t p, std::uint32_t k) {
  const std::uint64_t pp = p;
  if (p < 2) {
    return {pp, 0};
  }
  return {pp * (2 * pp - 1), pp * 2 * (pp - 1 - k)};
}

core::Schedule generate_linear_sync(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t b = n / p;
  const std::uint32_t k = window(req);
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = linear_sync_counts(p, k);
  s.reserve(counts.ops, counts.deps);
  std::vector<std::uint32_t> recv_op(p);
  std::vector<std::uint32_t> send_op(p);
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    // j-th receive: from r + 1 + j; j-th send: to r - 1 - j.
    const auto post_recv = [&](std::uint32_t j) {
      const core::Rank from = (r + 1 + j) % p;
      dep[0] = j >= k ? recv_op[j - k] : 0;
      recv_op[j] = detail::add_op(s, OpKind::recv, from, detail::data_range(n + from * b, b),
                                  std::span(dep.data(), j >= k ? 1 : 0));
    };
    const auto post_send = [&](std::uint32_t j) {
      const core::Rank to = (r + p - 1 - j) % p;
      dep[0] = j >= k ? send_op[j - k] : 0;
      send_op[j] = detail::add_op(s, OpKind::send, to, detail::data_range(to * b, b),
                                  std::span(dep.data(), j >= k ? 1 : 0));
    };
    for (std::uint32_t j = 0; j < k; ++j) {
      post_recv(j);
    }
    for (std::uint32_t j = 0; j < k; ++j) {
      post_send(j);
    }
    for (std::uint32_t j = k; j + 1 < p; ++j) {
      post_recv(j);
      post_send(j);
    }
    s.copy(detail::data_range(r * b, b), detail::data_range(n + r * b, b));
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_alltoall_linear_sync() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "linear exchange with at most K receives and K sends in flight";
  a.source = "Open MPI ompi_coll_base_alltoall_intra_linear_sync";
  a.aliases = {"ompi:4", "ompi:linear_sync"};
  a.params = {{kWindow, 0, 0, 1 << 30,
               "requests of each kind in flight; 0 = no limit (Open MPI's default "
               "coll_tuned_alltoall_max_requests)"}};
  a.constraints = {"bytes divisible by ranks"};
  a.check = [](const Request& req) -> std::string {
    if (req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    return detail::size_limit_refusal(linear_sync_counts(req.ranks, window(req)));
  };
  a.generate = generate_linear_sync;
  a.cost_formula = "none declared (a + (p-1)/p n b when K >= p-1)";
  return a;
}

} // namespace collsim::algorithms

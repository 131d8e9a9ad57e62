// NCCL PAT allgather (algorithms.md AG15): Bruck-like, every block reaches each destination along a
// binomial path whose hop lengths are distinct powers of two, the larger hops first, one block per
// step, so the staging memory stays bounded.
//
// Source: NCCL v2.30 src/include/collectives.h PatAGAlgorithm (phase-1 steps: step s sends, along
// the dimension of s's lowest set bit, the block received at step s - lowbit(s)), src/transport/
// generic.cc ncclTransportPatConnect (peers at distance 1, 2, 4, ... < p), src/enqueue.cc chunk
// size (Simple 512 KiB, halved while chunk x channels x 32 > n, down to 64 KiB), NCCL issues #1473
// and #1594 ("a variation of Bruck's algorithm", "a binomial tree algorithm"). NCCL enables PAT
// only with one rank per node (ncclPatEnable: nNodes == nRanks) and runs it with Simple only.
//
// Schedule (per channel slice of every block, chunk by chunk; channels interleaved step by step).
// Rank r, lb(s) = the lowest set bit of s, AllGather direction as in algorithms.md (receive from
// r - 2^k, send to r + 2^k):
//   for s = 1..p-1: recv the chunk of block r - s from r - lb(s);
//                   send the chunk of block r - (s - lb(s)) to r + lb(s).
// The block of rank b reaches b + s in the hops of s's set bits, highest first (a binomial tree
// rooted at b); block r - (s - lb(s)) arrived at step s - lb(s) < s (or is r's own). That is p-1
// messages of one block chunk per rank and chunk; the sends of step s go to distance lb(s), so a
// rank sends about p/2^(k+1) chunks to r + 2^k. NCCL groups steps into aggregated steps for small
// messages and runs up to 512 workers; the IR carries the data dependencies only.
//
// Dependencies: a send of a received block waits for its receive; receives write blocks nothing
// else touches.
//
// Cost: (p-1)/p n b over ceil(lg p) distances, with (p-1)K messages of a block chunk per rank (K
// chunks); NCCL's model (section 3.4) charges about log2(p) inter-node latencies / 3.5 + 2.8 us x
// p. The protocol's latencies are not alpha-beta terms: no closed form is declared.

#include "allgather/allgather_algorithms.hpp"
#include "nccl_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using nccl::kNone;
constexpr const char* kName = "pat";

using Plan = nccl::BlockChunking;

Plan make_plan(const Request& req) {
  return nccl::block_chunking(req, nccl::Algo::pat, detail::node_layout(req));
}

std::uint32_t lowbit(std::uint32_t s) {
  return s & (~s + 1);
}

void emit(const Plan& pl, nccl::Sink& sink) {
  const std::uint32_t p = pl.p;
  if (p < 2) {
    return;
  }
  const std::uint64_t most = pl.most();
  // got[c * p + s]: the receive of step s (block r - s) in channel c's current chunk.
  std::vector<std::uint32_t> got(static_cast<std::size_t>(pl.channels) * p, kNone);
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    for (std::uint64_t k = 0; k < most; ++k) {
      for (std::uint32_t s = 1; s < p; ++s) {
        const std::uint32_t hop = lowbit(s);
        const std::uint32_t before = s - hop; // the sent block's distance from its owner
        for (std::uint32_t c = 0; c < pl.channels; ++c) {
          if (k >= pl.chunks[c]) {
            continue;
          }
          sink.stream(c); // each channel its own thread block
          const auto block = [&](std::uint32_t back) { return pl.range((r + p - back) % p, c, k); };
          std::uint32_t* g = got.data() + static_cast<std::size_t>(c) * p;
          g[s] = sink.recv((r + p - hop) % p, block(s));
          sink.send((r + hop) % p, block(before), nccl::dep(before == 0 ? kNone : g[before]));
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

std::string refusal(const Request& req) {
  const std::string why = nccl::pat_refusal(req);
  return why.empty() ? nccl::size_refusal(make_plan(req), emit) : why;
}

core::Schedule generate(const Request& req) {
  return nccl::build(req, kName, nccl::Algo::pat, make_plan(req), emit);
}

} // namespace

AlgorithmInfo describe_allgather_pat() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "NCCL PAT: Bruck-like binomial paths, hops of distinct powers of two, one block per "
              "step (one rank per node)";
  a.source = "NCCL v2.30 src/include/collectives.h PatAGAlgorithm; src/transport/generic.cc "
             "ncclTransportPatConnect";
  a.aliases = {"nccl:pat"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.constraints = {"one rank per node", "Simple protocol only"};
  a.check = refusal;
  a.loop_bytes = [](const Request& req) { return nccl::block_loop(req, nccl::Algo::pat); };
  a.generate = generate;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: (p-1)/p n b in (p-1)K messages per rank for K chunks "
                   "per channel; the protocol's latencies are not alpha-beta terms";
  return a;
}

} // namespace collsim::algorithms

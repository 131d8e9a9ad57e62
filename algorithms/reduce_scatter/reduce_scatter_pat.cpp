// NCCL PAT reduce-scatter (algorithms.md RS8, AG15): the PAT allgather run backwards. Every
// block's contributions are reduced towards the block's owner along binomial paths whose hop
// lengths are distinct powers of two, the smaller hops first, one block per step.
//
// Source: NCCL v2.30 src/include/collectives.h PatRSAlgorithm, src/transport/generic.cc
// ncclTransportPatConnect (peers at distance 1, 2, 4, ... < p; ReduceScatter in the opposite
// direction of AllGather), src/enqueue.cc chunk size (Simple 512 KiB, halved while
// chunk x channels x 16 > n, down to 64 KiB). NCCL enables PAT only with one rank per node
// (ncclPatEnable: nNodes == nRanks) and runs it with Simple only.
//
// Schedule (per channel slice of every block, chunk by chunk; channels interleaved step by step).
// Rank r, lb(s) = the lowest set bit of s (receive from r + 2^k, send to r - 2^k):
//   for s = p-1 down to 1: recv_reduce from r + lb(s) into the chunk of block r - (s - lb(s));
//                          send the chunk of block r - s to r - lb(s).
// This is the allgather pat schedule with time reversed and every edge turned around: the block
// of rank b collects the contribution of b + s through the hops of s's set bits, lowest first; the
// partial sum of block r - s that rank r sends at step s holds every contribution of its subtree,
// received at steps s + 2^j (2^j < lb(s)), which come earlier. p-1 messages of one block chunk per
// rank and chunk; the reductions into a block are chained.
//
// Dependencies: reductions into a chunk are chained; the send of a chunk waits for the last one.
//
// Cost: (p-1)/p n b + (p-1)/p n g over ceil(lg p) distances, in (p-1)K messages per rank (K
// chunks); NCCL's model (section 3.4) charges about log2(p) inter-node latencies / 3.5 + 2.8 us x
// p. The protocol's latencies are not alpha-beta-gamma terms: no closed form is declared.

#include "nccl_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

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
  // last[c * p + d]: the operation that last reduced into block r - d in channel c's chunk.
  std::vector<std::uint32_t> last(static_cast<std::size_t>(pl.channels) * p, kNone);
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    for (std::uint64_t k = 0; k < most; ++k) {
      std::fill(last.begin(), last.end(), kNone);
      for (std::uint32_t s = p - 1; s >= 1; --s) {
        const std::uint32_t hop = lowbit(s);
        const std::uint32_t into = s - hop; // the received partial sum's distance from its owner
        for (std::uint32_t c = 0; c < pl.channels; ++c) {
          if (k >= pl.chunks[c]) {
            continue;
          }
          sink.stream(c); // each channel its own thread block
          const auto block = [&](std::uint32_t back) { return pl.range((r + p - back) % p, c, k); };
          std::uint32_t* w = last.data() + static_cast<std::size_t>(c) * p;
          w[into] = sink.recv_reduce((r + hop) % p, block(into), nccl::dep(w[into]));
          sink.send((r + p - hop) % p, block(s), nccl::dep(w[s]));
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

AlgorithmInfo describe_reduce_scatter_pat() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "NCCL PAT: the PAT allgather reversed, partial sums along binomial paths, one "
              "block per step (one rank per node)";
  a.source = "NCCL v2.30 src/include/collectives.h PatRSAlgorithm; src/transport/generic.cc "
             "ncclTransportPatConnect";
  a.aliases = {"nccl:pat"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.constraints = {"one rank per node", "Simple protocol only"};
  a.check = refusal;
  a.loop_bytes = [](const Request& req) { return nccl::block_loop(req, nccl::Algo::pat); };
  a.generate = generate;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: (p-1)/p n b + (p-1)/p n g in (p-1)K messages per "
                   "rank for K chunks per channel; the protocol's latencies are not "
                   "alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms

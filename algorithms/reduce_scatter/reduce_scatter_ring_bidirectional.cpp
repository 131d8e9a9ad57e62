// Bidirectional ring reduce-scatter: UCC tl/ucp's reduce_scatter (its only one in v1.1.0), two
// rings in opposite directions at once, each carrying half of every block.
//
// Source: UCC v1.1.0 src/components/tl/ucp/reduce_scatter/reduce_scatter_ring.c
// (ucc_tl_ucp_reduce_scatter_ring_init: with UCC_TL_UCP_REDUCE_SCATTER_RING_BIDIRECTIONAL, "y" by
// default in tl_ucp.c, a schedule of two ring tasks started together, the second on the inverted
// rank map, task f reducing fragment f of 2 of every block); each task's step receives the
// neighbour's partial sum, reduces its own fragment into it and sends it on
// (ucc_tl_ucp_reduce_scatter_ring_progress).
//
// Schedule, rank r, blocks b taken mod p (block_range of n over p), each cut into two halves
// (block_range of the block over 2):
//   ring 0 (issue stream 0, tag 0): step s = 0..p-2: send half 0 of block r-s-1 to r+1;
//     recv_reduce half 0 of block r-s-2 from r-1;
//   ring 1 (issue stream 1, tag 1): the mirror: send half 1 of block r+s+1 to r-1; recv_reduce
//     half 1 of block r+s+2 from r+1.
// Each half's partial sum starts next to its block's owner and reaches it after p-1 hops, one
// ring from each side, so rank r ends with block r reduced. The rings are issue streams of their
// own (UCC progresses both tasks) and tagged apart, so that on 2 ranks, where both rings join the
// same two ranks, their halves (which may differ by a byte) match their own ring.
// Dependencies: a send forwards the partial sum its ring's previous step produced, so it waits for
// that recv_reduce; a recv_reduce combines into a half no earlier operation of the rank touched.
//
// Cost: 2(p-1) messages per rank and (p-1)/p n bytes each way; on a full-duplex ring both
// directions of every link carry half, so the time is about (p-1)a + (p-1)/(2p) n b +
// (p-1)/p n g where a rank's two directions do not share a port. No closed form is declared
// (LogGP's single port serialises the two rings).

#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "ring_bidirectional";

/// Per rank 4(p-1) operations, and every send after its ring's first waits for one receive.
detail::OpCounts counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  return {4 * std::uint64_t{p} * (p - 1), 2 * std::uint64_t{p} * (p - 2)};
}

core::Schedule generate(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  if (p < 2) {
    s.finish();
    return s;
  }
  const detail::OpCounts c = counts(p);
  s.reserve(c.ops, c.deps);
  const auto half = [&](std::uint64_t block, std::uint32_t h) {
    const auto [b, len] = core::block_range(n, p, static_cast<std::uint32_t>(block % p));
    const auto [hb, hlen] = core::block_range(len, 2, h);
    return detail::data_range(b + hb, hlen);
  };
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const std::uint64_t right = (r + 1) % p;
    const std::uint64_t left = (r + p - 1) % p;
    std::array<std::uint32_t, 2> last{};
    for (std::uint32_t step = 0; step + 1 < p; ++step) {
      for (std::uint32_t h = 0; h < 2; ++h) {
        s.set_stream(h);
        s.set_tag(h);
        // Ring 0 sends to the right and receives from the left; ring 1 the other way round.
        const auto to = static_cast<core::Rank>(h == 0 ? right : left);
        const auto from = static_cast<core::Rank>(h == 0 ? left : right);
        const std::uint64_t send_block = h == 0 ? r + 2 * p - step - 1 : r + step + 1;
        const std::uint64_t recv_block = h == 0 ? r + 2 * p - step - 2 : r + step + 2;
        const std::span<const std::uint32_t> prev(&last[h], step == 0 ? 0 : 1);
        s.add(core::OpKind::send, to, half(send_block, h), {}, prev);
        last[h] = s.add(core::OpKind::recv_reduce, from, half(recv_block, h), {}, {});
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_reduce_scatter_ring_bidirectional() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "two rings in opposite directions at once, each reducing half of every block "
              "(UCC's reduce_scatter ring)";
  a.source = "UCC v1.1.0 tl/ucp reduce_scatter_ring.c (REDUCE_SCATTER_RING_BIDIRECTIONAL, "
             "default y)";
  a.aliases = {"ucc:ring"};
  a.constraints = {"commutative operation only (ranks combine in ring order)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts(req.ranks)); };
  a.generate = generate;
  a.cost_formula = "about (p-1)a + (p-1)/(2p) n b + (p-1)/p n g where a rank's two directions "
                   "have ports of their own (none declared: LogGP's single port serialises them)";
  return a;
}

} // namespace collsim::algorithms

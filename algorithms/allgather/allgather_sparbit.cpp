// Sparbit allgather (algorithms.md AG7): Bruck with inverted distances. In the step of distance
// d = 2^(ceil(lg p)-1), ..., 2, 1 every rank sends the blocks it holds to r + d and receives as
// many from r - d, so the amount sent never decreases and the first, longest hops carry one block.
// Where p is not a power of two, a step whose distance bit is set in Open MPI's `ignore_steps` mask
// sends one block fewer, so that no block is received twice.
//
// Source: W. J. Loch and G. G. H. Cavalheiro, "Sparbit: a new logarithmic-cost and data
// locality-aware MPI Allgather algorithm", SBAC-PAD 2021; Open MPI
// ompi_coll_base_allgather_intra_sparbit (coll/tuned allgather algorithm 7), followed step for
// step.
//
// Cost: ceil(lg p) steps moving (p-1)/p n bytes in all, ceil(lg p) a + (p-1)/p n b in the
// one-message-per-step model of algorithms.md. Open MPI sends every block as its own message
// (p-1 per rank), so the number of start-ups on the critical path depends on how the engine
// overlaps messages in flight together: cost() declines.
//
// Schedule (Open MPI's), rank r, blocks taken mod p: data_expected = 1; for each step of distance
// d, with x = 1 if d & ignore_steps == d (ignore_steps = (~(p >> tz) | 1) << tz, tz = ctz(p))
// else 0, and t = 0 .. data_expected - x - 1: send data[block r - 2td] to r + d; recv
// data[block r - (2t+1)d] from r - d. Then data_expected = 2 data_expected - x. The blocks of a
// step go out in the same order on both sides, so first-in first-out matching pairs them as Open
// MPI's per-block tags do. Blocks are received in place: no scratch buffer.
//
// Dependencies: Open MPI waits for all requests of a step before the next, so the first send of
// each step (the rank's own block) waits for every receive of the step before; every other send
// waits for the receive that wrote its block (the race check needs that path). Receives write
// blocks nothing has touched.

#include "allgather/allgather_algorithms.hpp"
#include "generator_support.hpp"

#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "sparbit";

/// The messages per step, identical on every rank.
std::vector<std::uint32_t> sparbit_steps(std::uint32_t p) {
  std::vector<std::uint32_t> steps;
  if (p < 2) {
    return steps;
  }
  const std::uint32_t log = detail::ceil_log2(p);
  const auto tz = static_cast<std::uint32_t>(std::countr_zero(p));
  const std::uint32_t ignore_steps = (~(p >> tz) | 1U) << tz;
  std::uint32_t expected = 1;
  for (std::uint32_t d = 1U << (log - 1); d > 0; d >>= 1) {
    const std::uint32_t exclusion = (d & ignore_steps) == d ? 1 : 0;
    steps.push_back(expected - exclusion);
    expected = 2 * expected - exclusion;
  }
  return steps;
}

OpCounts sparbit_counts(std::uint32_t p) {
  const std::vector<std::uint32_t> steps = sparbit_steps(p);
  std::uint64_t messages = 0;
  std::uint64_t deps = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    messages += steps[i];
    // The own block's send waits for the previous step's receives, the others for one each.
    deps += (i == 0 ? 0 : steps[i - 1]) + (steps[i] - 1);
  }
  const std::uint64_t pp = p;
  return {pp * 2 * messages, pp * deps};
}

core::Schedule generate_sparbit(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = sparbit_counts(p);
  s.reserve(counts.ops, counts.deps);
  const std::vector<std::uint32_t> steps = sparbit_steps(p);
  const auto block = [&](std::uint64_t b) {
    const auto [offset, length] = core::block_range(n, p, b);
    return detail::data_range(offset, length);
  };
  std::vector<std::uint32_t> writer(p); // local id of the receive that wrote each block
  std::vector<std::uint32_t> previous;  // the receives of the step before
  std::vector<std::uint32_t> current;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    previous.clear();
    std::uint64_t d = steps.empty() ? 0 : std::uint64_t{1} << (steps.size() - 1);
    for (const std::uint32_t messages : steps) {
      current.clear();
      const auto to = static_cast<core::Rank>((r + d) % p);
      const auto from = static_cast<core::Rank>((r + p - d) % p);
      for (std::uint64_t t = 0; t < messages; ++t) {
        // 2td < 2p, so adding 2p keeps the arithmetic unsigned.
        const std::uint64_t send_block = (r + 2 * p - 2 * t * d % p) % p;
        const std::uint64_t recv_block = (r + 2 * p - (2 * t + 1) * d % p) % p;
        if (t == 0) {
          detail::add_op(s, OpKind::send, to, block(send_block), previous);
        } else {
          detail::add_op(s, OpKind::send, to, block(send_block), std::span(&writer[send_block], 1));
        }
        writer[recv_block] = detail::add_op(s, OpKind::recv, from, block(recv_block), {});
        current.push_back(writer[recv_block]);
      }
      previous.swap(current);
      d >>= 1;
    }
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_allgather_sparbit() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "Bruck with inverted distances (2^(ceil(lg p)-1) down to 1), one message per block";
  a.source = "Loch & Cavalheiro, SBAC-PAD 2021; Open MPI ompi_coll_base_allgather_intra_sparbit";
  a.aliases = {"ompi:7", "ompi:sparbit"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(sparbit_counts(req.ranks));
  };
  a.generate = generate_sparbit;
  a.cost_formula = "ceil(lg p) steps, (p-1)/p n b in all; p-1 messages per rank (no exact closed "
                   "form)";
  return a;
}

} // namespace collsim::algorithms

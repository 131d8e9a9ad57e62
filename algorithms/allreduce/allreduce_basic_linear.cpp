// Basic linear allreduce (algorithms.md AR1): a linear reduce to rank 0 followed by a linear
// broadcast from rank 0, no overlap between the two.
//
// Source: Open MPI ompi_coll_base_allreduce_intra_basic_linear (coll/tuned allreduce algorithm 1,
// "basic_linear"), which calls ompi_coll_base_reduce_intra_basic_linear with root 0 and then
// ompi_coll_base_bcast_intra_basic_linear.
//
// Schedule (in place, as Open MPI runs it with MPI_IN_PLACE at the root, which accumulates into a
// scratch copy): every rank r > 0 sends its vector to rank 0 and then receives the result into
// data. Rank 0 receives rank p-1's vector into the accumulator tmp[0, n); then, for i = p-2 down
// to 1, receives rank i's vector into the inbuf tmp[n, 2n) and reduces it into the accumulator;
// then reduces its own vector (data) into the accumulator, copies the accumulator to data and
// sends it to ranks 1, 2, ..., p-1 (all sends posted at once, as Open MPI's isend loop). The
// descending order preserves the operand order, so non-commutative operations are fine.
//
// Dependencies: a receive into the inbuf waits for the reduction that last read it; the first
// inbuf reduction waits for the receive into the accumulator; the copy waits for the last
// reduction; the broadcast sends wait for the copy; a non-root rank's final receive overwrites the
// vector its send reads, so it waits for that send.
//
// Cost: the textbook single-port form is 2(p-1)(a + n b) + (p-1) n g. On the loggp engine the p-1
// messages reach rank 0 back to back and the broadcast sends are pipelined out of its port, so the
// time is 2a + 2(p-1) n b + 2 n g when g <= b but 2a + (p+1) n b + (p-1) n g when g > b: no linear
// closed form covers both, and cost() declines for p > 2. p = 2: 2a + 2 n b + n g (exact).

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "basic_linear";

/// Counts what build() would add (check() sizes the schedule before anything is allocated).
struct Counter {
  OpCounts counts;
  std::uint32_t local = 0;
  void begin_rank(core::Rank /*rank*/) { local = 0; }
  std::uint32_t add(OpKind /*kind*/, core::Rank /*peer*/, core::Range /*target*/,
                    core::Range /*source*/, std::span<const std::uint32_t> deps) {
    ++counts.ops;
    counts.deps += deps.size();
    return local++;
  }
};

template <class Out>
void build(const Request& req, Out& out) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const core::Range whole = detail::data_range(0, n);
  const core::Range acc = detail::tmp_range(0, n);
  const core::Range inbuf = detail::tmp_range(n, n);
  const core::Range none{};
  const auto deps = [](const auto& list, std::size_t count) {
    return std::span<const std::uint32_t>(list.data(), count);
  };
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    if (r != 0) {
      dep[0] = out.add(OpKind::send, 0, whole, none, {});
      out.add(OpKind::recv, 0, whole, none, deps(dep, 1));
      continue;
    }
    // The accumulator's last writer.
    std::uint32_t last = out.add(OpKind::recv, p - 1, acc, none, {});
    bool inbuf_read = false; // has a reduction read the inbuf yet?
    for (core::Rank i = p - 1; i-- > 1;) {
      dep[0] = last;
      const std::uint32_t got =
          out.add(OpKind::recv, i, inbuf, none, deps(dep, inbuf_read ? 1 : 0));
      dep = {got, last};
      // After the first reduction the receive already waits for the previous one.
      last = out.add(OpKind::reduce, 0, acc, inbuf, deps(dep, inbuf_read ? 1 : 2));
      inbuf_read = true;
    }
    dep[0] = last;
    last = out.add(OpKind::reduce, 0, acc, whole, deps(dep, 1));
    dep[0] = last;
    dep[0] = out.add(OpKind::copy, 0, whole, acc, deps(dep, 1));
    for (core::Rank i = 1; i < p; ++i) {
      out.add(OpKind::send, i, whole, none, deps(dep, 1));
    }
  }
}

OpCounts basic_linear_counts(const Request& req) {
  Counter c;
  build(req, c);
  return c.counts;
}

core::Schedule generate_basic_linear(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, req.ranks > 1 ? 2 * n : 0, kName));
  const OpCounts counts = basic_linear_counts(req);
  s.reserve(counts.ops, counts.deps);
  build(req, s);
  s.finish();
  return s;
}

std::optional<CostTerms> basic_linear_cost(const Request& req) {
  const auto n = static_cast<double>(req.bytes.value);
  if (req.ranks == 1) {
    return CostTerms{};
  }
  if (req.ranks == 2) {
    return CostTerms{2.0, 2.0 * n, n};
  }
  return std::nullopt;
}

} // namespace

AlgorithmInfo describe_allreduce_basic_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "linear reduce to rank 0 (ranks p-1 down to 0), then linear broadcast from rank 0";
  a.source = "Open MPI ompi_coll_base_allreduce_intra_basic_linear "
             "(ompi_coll_base_reduce_intra_basic_linear + ompi_coll_base_bcast_intra_basic_linear)";
  a.aliases = {"ompi:1", "ompi:basic_linear"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(basic_linear_counts(req)); };
  a.generate = generate_basic_linear;
  a.cost = basic_linear_cost;
  a.cost_formula = "p = 2: 2a + 2 n b + n g; otherwise about 2(p-1)(a + n b) + (p-1) n g "
                   "(single-port textbook form; not exact: on loggp the receptions and the "
                   "broadcast sends pipeline, and the time depends on whether g > b)";
  return a;
}

} // namespace collsim::algorithms

// Recursive multiplying allreduce (algorithms.md AR9): the radix-k generalisation of recursive
// doubling; ranks exchange whole vectors within groups of k at distances 1, k, k^2, ...
//
// Source: MPICH MPIR_Allreduce_intra_recursive_multiplying ("mpich:recursive_multiplying"; radix
// MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL, default 2), step for step:
//   p_k = the largest power of k <= p.
//   pre-stage (p_k < p): rank r >= p_k sends its vector to r mod p_k ("reverse round-robin");
//     rank r < p_k receives from r + p_k, r + 2 p_k, ... (< p) into tmp slots 0, 1, ... and, after
//     all arrived, reduces them as a chain slot 0 -> slot 1 -> ... -> data.
//   main stage, distance d = 1, k, ..., p_k/k: the group of r is start = floor(r / kd) kd plus
//     r mod d + i d, i = 0..k-1. Rank r sends data to the k-1 other members and receives theirs
//     into tmp slots 0..k-2 (member order, skipping itself); after all completed it reduces them in
//     member order with MPICH's chain (member q-1 into data, data into the slot of member q+1,
//     every other slot into the next one) and copies the last slot to data unless the chain ended
//     in data.
//   post-stage: rank r < p_k sends the result to r + p_k, r + 2 p_k, ...; the others receive it.
// tmp holds k-1 vectors (MPICH's tmp_buf). With k > p, p_k = 1 and this is a linear reduce to
// rank 0 plus a linear broadcast.
//
// Dependencies: as MPICH's Waitall: the first reduction of a round (or of the pre-stage) waits for
// all of that round's sends and receives, and the chain runs in order; a round's sends and
// receives wait for the previous round's last operation (it wrote data and read tmp); the
// post-stage sends wait for the last operation; a folded rank's final receive waits for its send.
//
// Cost: about log_k p (k-1)(a + n b + n g) single-port (algorithms.md). Exact only for k = 2 and p
// a power of two (recursive doubling): lg p (a + n b + n g). For k > 2 each rank's k-1 messages
// leave its port one after another and reach different members at different times, and with a
// pre-stage the ranks it does not involve start early; cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "recursive_multiplying";
constexpr const char* kRadix = "radix";
constexpr std::int64_t kMaxRadix = 64;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find(kRadix);
  return it == req.params.end() ? 2 : static_cast<std::uint32_t>(it->second);
}

std::uint32_t power_of_radix(std::uint32_t p, std::uint32_t k) {
  std::uint64_t pofk = 1;
  while (pofk * k <= p) {
    pofk *= k;
  }
  return static_cast<std::uint32_t>(pofk);
}

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
  const std::uint32_t k = radix_of(req);
  const std::uint32_t pofk = power_of_radix(p, k);
  const core::Range data = detail::data_range(0, n);
  const auto slot = [n](std::uint32_t i) { return detail::tmp_range(i * n, n); };
  const core::Range none{};
  std::vector<std::uint32_t> round;
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    out.begin_rank(r);
    if (p < 2) {
      continue;
    }
    if (r >= pofk) {
      dep[0] = out.add(OpKind::send, r % pofk, data, none, {});
      out.add(OpKind::recv, r % pofk, data, none, dep);
      continue;
    }
    bool has_last = false;
    std::uint32_t last = 0; // the last operation that wrote data or tmp
    const auto last_dep = [&]() {
      dep[0] = last;
      return std::span<const std::uint32_t>(dep.data(), has_last ? 1 : 0);
    };
    // Pre-stage: collect the folded ranks' vectors and reduce them as a chain into data.
    round.clear();
    for (core::Rank src = r + pofk; src < p; src += pofk) {
      round.push_back(
          out.add(OpKind::recv, src, slot(static_cast<std::uint32_t>(round.size())), none, {}));
    }
    for (std::uint32_t i = 0; i < round.size(); ++i) {
      const core::Range into = i + 1 == round.size() ? data : slot(i + 1);
      if (i == 0) {
        last = out.add(OpKind::reduce, 0, into, slot(i), round);
      } else {
        last = out.add(OpKind::reduce, 0, into, slot(i), last_dep());
      }
      has_last = true;
    }
    // Main stage.
    for (std::uint64_t distance = 1; distance < pofk; distance *= k) {
      const std::uint64_t next_distance = distance * k;
      const std::uint64_t start = r / next_distance * next_distance;
      const std::uint64_t first = start + r % distance;
      round.clear();
      std::uint32_t exchanges = 0;
      for (std::uint64_t dst = first; dst < start + next_distance; dst += distance) {
        if (dst == r) {
          continue;
        }
        const auto peer = static_cast<core::Rank>(dst);
        round.push_back(out.add(OpKind::send, peer, data, none, last_dep()));
        round.push_back(out.add(OpKind::recv, peer, slot(exchanges), none, last_dep()));
        ++exchanges;
      }
      // MPICH's chain over the members but the last, in member order.
      bool first_op = true;
      bool data_last = false;
      std::uint32_t e = 0;
      const auto chain = [&](core::Range into, core::Range from) {
        if (first_op) {
          last = out.add(OpKind::reduce, 0, into, from, round);
        } else {
          last = out.add(OpKind::reduce, 0, into, from, last_dep());
        }
        first_op = false;
        has_last = true;
      };
      for (std::uint64_t dst = first; dst + distance < start + next_distance; dst += distance) {
        if (dst + distance == r) {
          chain(data, slot(e));
          data_last = true;
          ++e;
        } else if (dst == r) {
          chain(slot(e), data);
          data_last = false;
        } else {
          chain(slot(e + 1), slot(e));
          data_last = false;
          ++e;
        }
      }
      if (!data_last) {
        last = out.add(OpKind::copy, 0, data, slot(e), last_dep());
      }
    }
    // Post-stage.
    for (core::Rank dst = r + pofk; dst < p; dst += pofk) {
      out.add(OpKind::send, dst, data, none, last_dep());
    }
  }
}

OpCounts recursive_multiplying_counts(const Request& req) {
  Counter c;
  build(req, c);
  return c.counts;
}

core::Schedule generate_recursive_multiplying(const Request& req) {
  const std::uint64_t k = radix_of(req);
  core::Schedule s(make_header(req, req.ranks > 1 ? (k - 1) * req.bytes.value : 0, kName));
  const OpCounts counts = recursive_multiplying_counts(req);
  s.reserve(counts.ops, counts.deps);
  build(req, s);
  s.finish();
  return s;
}

std::optional<CostTerms> recursive_multiplying_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  if (radix_of(req) != 2 || !std::has_single_bit(p)) {
    return std::nullopt;
  }
  const auto lg = static_cast<double>(detail::floor_log2(p));
  const auto n = static_cast<double>(req.bytes.value);
  return CostTerms{lg, lg * n, lg * n};
}

} // namespace

AlgorithmInfo describe_allreduce_recursive_multiplying() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "radix-k recursive doubling: whole-vector exchanges within groups of k at distances "
              "1, k, k^2, ...; ranks above the largest power of k fold in round-robin";
  a.source = "MPICH MPIR_Allreduce_intra_recursive_multiplying";
  a.aliases = {"mpich:recursive_multiplying"};
  a.params = {{kRadix, 2, 2, kMaxRadix,
               "radix k (MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL, default 2)"}};
  a.constraints = {"commutative operations only when p is not a power of the radix (MPICH asserts "
                   "it for the pre-stage)"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(recursive_multiplying_counts(req));
  };
  a.generate = generate_recursive_multiplying;
  a.cost = recursive_multiplying_cost;
  a.cost_formula = "k = 2, p = 2^m: lg p (a + n b + n g); otherwise about log_k p (k-1)(a + n b + "
                   "n g) (single-port textbook form; not exact: messages to the k-1 members "
                   "arrive at different times)";
  return a;
}

} // namespace collsim::algorithms

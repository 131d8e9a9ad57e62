// Bruck alltoall, radix k (algorithms.md AA3): ceil(log_k p) phases of store-and-forward; in phase
// j, for every digit value d = 1..k-1, every rank sends one message holding all its blocks whose
// (rotated) index has base-k digit j equal to d to r + d k^j. Radix 2 is classic Bruck: ceil(lg p)
// rounds, round j forwarding the blocks whose index has bit j set to r + 2^j.
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal and D. Weathersby, "Efficient algorithms for
// all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11), 1997; MPICH
// MPIR_Alltoall_intra_brucks (radix 2) and MPIR_Alltoall_intra_k_brucks
// (src/mpi/coll/alltoall/alltoall_intra_k_brucks.c, radix MPIR_CVAR_ALLTOALL_BRUCKS_KVAL, default
// 2); Open MPI ompi_coll_base_alltoall_intra_bruck (coll/tuned alltoall algorithm 3,
// "modified_bruck"); SMPI "bruck".
//
// What MPICH's k_brucks does, and this generator follows: nphases = the number of base-k digits of
// p-1; phase j (delta = k^j) runs d = 1..k-1 but stops at the first d with d delta >= p ("nothing
// is to be sent": that digit value and every larger one have no blocks), so a phase has
// min(k-1, (p-1)/delta) messages and an empty digit has no message at all. For each d it packs
// (brucks_sched_pup) the blocks i < p with digit j of i equal to d, in index order, into its own
// buffer tmp_sbuf[d-1] and posts MPIC_Irecv into tmp_rbuf[d-1] from r - d delta and MPIC_Isend to
// r + d delta; after MPIC_Waitall it unpacks d = 1, 2, ... into the same positions. With n = 0 the
// messages are kept (zero bytes). Per digit MPICH allocates k^(nphases-1) blocks ("largest power of
// k that is smaller than size"), which bounds every message. This schedule posts the send before
// the receive (as radix 2 always did; both are non-blocking, so the order is immaterial).
//
// Cost (b = n/p): ceil(log_k p) a + b sum_{j,d} c_{j,d} b, where c_{j,d} = #{i < p : digit j of i
// in base k is d} is the number of blocks of phase j's message for digit d. Radix 2: ceil(lg p) a +
// b sum_j #{i < p : bit j of i set} b, lg p a + (n/2) lg p b when p is a power of two; radix k and
// p a power of k: log_k p a + (k-1)/k n log_k p b (MPICH's comment says (n/p)(p-1) log_k p b,
// which overcounts when p > k). Exact on `uniform` (o = g = 0; checked against the loggp engine for
// p = 2..20, 31, 32, 33, 64, 100, radix 2..7 and 1024, b = 0, 7, 1000): every rank sends the same
// c_{j,d} in every phase, its port sends a phase's k-1 messages back to back, so the last one
// arrives a + (the phase's bytes) b after the phase began, on every rank at once, and a phase waits
// for the one before. The local packing copies are free there (copy_bandwidth 0); on a real machine
// they are the price of Bruck's few messages.
//
// Schedule, rank r, blocks of b bytes, m = min(k-1, p-1) digit slots of C bytes each (radix 2:
// C = n, the layout radix 2 always had; radix k > 2: C = k^(nphases-1) b, MPICH's allocation),
// tmp = [A: n bytes | S_1 .. S_m: C each | R_1 .. R_m: C each]:
//   1. rotate: A[i] = input block (r + i) mod p (two copies, one when r = 0).
//   2. phase j (delta = k^j), for d = 1..min(k-1, (p-1)/delta): pack the runs of blocks i with
//      digit j of i equal to d ([d delta + t k delta, + delta) clipped to p) from A into S_d (one
//      copy per run), send S_d to r + d delta, receive R_d from r - d delta; then, for every d,
//      unpack R_d's runs into the same A positions. Afterwards A[i] holds the block rank r - i
//      sent to rank r.
//   3. output block q = A[(r - q) mod p] (the inverse rotation with the reversal MPICH does):
//      p - 1 copies; the rank's own block is copied straight from its input.
// Dependencies (what makes every A, S_d, R_d reuse safe, directly or transitively). Every block of
// A is accessed in a chain rotation -> pack -> unpack -> pack -> ... -> output copy, and each link
// is ordered; the recv of digit 1 of phase j orders every unpack of phases < j:
//   pack run, phase 0:  both rotation copies (so every later operation, which reaches some phase-0
//                       pack through the sends, is ordered after the whole rotation);
//   pack run, phase j:  the previous phase's send of its digit (S_d is reused; through it every
//                       earlier pack of the digit), and the previous phase's unpacks of the runs
//                       inside it (digit j-1 of the index = 1..k-1: its last writers in phase
//                       j-1), or, when it has none, the previous phase's receive of digit 1 (which
//                       orders every older unpack; so does the unpack of the digit-1 sub-run);
//   send:               every pack of its phase and digit;
//   receive, phase j:   digit 1: every unpack of phase j-1 (this is what orders all of them);
//                       digit d > 1: the unpacks of phase j-1, digit d (R_d is reused);
//   unpack run:         its receive and the pack of the same run (which read those A bytes);
//   output copy:        the last phase's unpack of the block's top digit, or of digit 1 when that
//                       digit is 0 (in the last phase every digit has a single run).
// Radix 2 is the same schedule, byte for byte, as before the radix existed.

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "bruck";
constexpr std::int64_t kMaxRadix = 1024;

std::uint32_t radix_of(const Request& req) {
  const auto it = req.params.find("radix");
  return it == req.params.end() ? 2U : static_cast<std::uint32_t>(it->second);
}

/// Emits one rank's program into a schedule, or only counts it (s == nullptr), so that reserve()
/// and check() use exactly what generate() adds.
struct Emitter {
  core::Schedule* s = nullptr;
  OpCounts counts;
  std::uint32_t next = 0;

  std::uint32_t op(OpKind kind, core::Rank peer, core::Range target, core::Range source,
                   std::span<const std::uint32_t> deps) {
    ++counts.ops;
    counts.deps += deps.size();
    if (s != nullptr) {
      return s->add(kind, peer, target, source, deps);
    }
    return next++;
  }
};

/// Phase j: distance delta = k^j and the number of digit values d = 1.. that have blocks
/// (d delta < p), each one message.
struct Phase {
  std::uint64_t delta;
  std::uint32_t messages;
};
std::vector<Phase> phases(std::uint32_t p, std::uint32_t radix) {
  std::vector<Phase> out;
  for (std::uint64_t delta = 1; delta < p; delta *= radix) {
    out.push_back({delta, static_cast<std::uint32_t>(
                              std::min<std::uint64_t>(radix - 1, (std::uint64_t{p} - 1) / delta))});
  }
  return out;
}

/// Runs of block indices in [0, p) whose base-k digit at delta = k^j is d:
/// [d delta + t k delta, min(d delta + t k delta + delta, p)) for t = 0, 1, ...
struct Run {
  std::uint32_t begin;
  std::uint32_t end;
};
std::vector<Run> runs(std::uint32_t p, std::uint32_t radix, std::uint64_t delta, std::uint32_t d) {
  std::vector<Run> out;
  for (std::uint64_t start = d * delta; start < p; start += radix * delta) {
    out.push_back({static_cast<std::uint32_t>(start),
                   static_cast<std::uint32_t>(std::min<std::uint64_t>(start + delta, p))});
  }
  return out;
}
/// #{i < p : digit of i at delta = k^j is d}: the blocks of phase j's message for digit d.
std::uint64_t digit_blocks(std::uint64_t p, std::uint64_t radix, std::uint64_t delta,
                           std::uint64_t d) {
  const std::uint64_t cycle = radix * delta;
  const std::uint64_t rest = p % cycle;
  return p / cycle * delta + std::min(delta, rest > d * delta ? rest - d * delta : 0);
}
/// How many runs(p, radix, delta, d) returns, for d delta < p.
std::uint64_t run_count(std::uint64_t p, std::uint64_t radix, std::uint64_t delta,
                        std::uint64_t d) {
  return (p - d * delta + radix * delta - 1) / (radix * delta);
}

/// Bytes of one digit's send (and receive) slot: n for radix 2 (its historical layout), else
/// MPICH's k^(nphases-1) blocks, the most blocks any digit of any phase holds.
std::uint64_t slot_bytes(std::uint32_t p, std::uint32_t radix, std::uint64_t n) {
  if (radix == 2 || p < 2) {
    return n;
  }
  return phases(p, radix).back().delta * (n / p);
}

/// tmp bytes per rank: A, then m send slots and m receive slots (m = messages of phase 0).
std::uint64_t tmp_bytes(std::uint32_t p, std::uint32_t radix, std::uint64_t n) {
  if (p < 2) {
    return 0;
  }
  return n + 2ULL * phases(p, radix).front().messages * slot_bytes(p, radix, n);
}

void emit_rank(Emitter& e, core::Rank r, std::uint32_t p, std::uint64_t n, std::uint32_t radix) {
  const std::uint64_t b = n / p;
  const auto a_blocks = [&](std::uint32_t lo, std::uint32_t hi) {
    return detail::tmp_range(lo * b, (hi - lo) * b);
  };
  // Own block: straight from the input, nothing to wait for.
  e.op(OpKind::copy, 0, detail::data_range(n + r * b, b), detail::data_range(r * b, b), {});
  if (p < 2) {
    return;
  }
  // 1. Rotation: A[0, p-r) <- input[r, p); A[p-r, p) <- input[0, r).
  std::vector<std::uint32_t> rotation;
  rotation.push_back(
      e.op(OpKind::copy, 0, a_blocks(0, p - r), detail::data_range(r * b, (p - r) * b), {}));
  if (r > 0) {
    rotation.push_back(e.op(OpKind::copy, 0, a_blocks(p - r, p), detail::data_range(0, r * b), {}));
  }
  // 2. Phases. Slot d-1 of S and R belongs to digit d.
  const std::vector<Phase> all = phases(p, radix);
  const std::uint32_t slots = all.front().messages;
  const std::uint64_t slot = slot_bytes(p, radix, n);
  const auto s_at = [&](std::uint32_t d) { return n + (d - 1) * slot; };
  const auto r_at = [&](std::uint32_t d) { return n + (slots + d - 1) * slot; };
  // Per digit: its runs, packs, send and receive in this phase, and the unpacks of the last one.
  std::vector<std::vector<Run>> cur(slots);
  std::vector<std::vector<std::uint32_t>> packs(slots);
  std::vector<std::uint64_t> packed(slots); // bytes of S_d (and R_d) used
  std::vector<std::uint32_t> sends(slots);
  std::vector<std::uint32_t> recvs(slots);
  std::vector<std::vector<std::uint32_t>> prev_unpacks;
  std::vector<std::vector<std::uint32_t>> unpacks;
  std::vector<std::uint32_t> prev_sends;
  std::uint32_t prev_recv_1 = 0; // the previous phase's receive of digit 1
  std::vector<std::uint32_t> deps;
  for (std::size_t j = 0; j < all.size(); ++j) {
    const std::uint64_t delta = all[j].delta;
    const std::uint32_t messages = all[j].messages;
    for (std::uint32_t d = 1; d <= messages; ++d) {
      cur[d - 1] = runs(p, radix, delta, d);
      packs[d - 1].clear();
      packed[d - 1] = 0;
      for (std::size_t t = 0; t < cur[d - 1].size(); ++t) {
        const Run& run = cur[d - 1][t];
        if (j == 0) {
          deps = rotation;
        } else {
          // The previous phase's run of each digit value inside this one is its number d + t k;
          // where a digit value has none, no larger one does. Without any, the digit-1 receive
          // orders the older unpacks.
          deps.assign(1, prev_sends[d - 1]);
          const std::uint64_t inner = d + t * std::uint64_t{radix};
          for (const auto& digit : prev_unpacks) {
            if (inner >= digit.size()) {
              break;
            }
            deps.push_back(digit[inner]);
          }
          if (deps.size() == 1) {
            deps.push_back(prev_recv_1);
          }
        }
        const std::uint64_t len = (run.end - run.begin) * b;
        packs[d - 1].push_back(e.op(OpKind::copy, 0,
                                    detail::tmp_range(s_at(d) + packed[d - 1], len),
                                    a_blocks(run.begin, run.end), deps));
        packed[d - 1] += len;
      }
      const std::uint64_t shift = d * delta; // < p
      sends[d - 1] = e.op(OpKind::send, static_cast<core::Rank>((r + shift) % p),
                          detail::tmp_range(s_at(d), packed[d - 1]), {}, packs[d - 1]);
      deps.clear();
      if (j > 0 && d == 1) {
        for (const auto& digit : prev_unpacks) {
          deps.insert(deps.end(), digit.begin(), digit.end());
        }
      } else if (j > 0) {
        deps = prev_unpacks[d - 1];
      }
      recvs[d - 1] = e.op(OpKind::recv, static_cast<core::Rank>((r + p - shift) % p),
                          detail::tmp_range(r_at(d), packed[d - 1]), {}, deps);
    }
    unpacks.assign(messages, {});
    for (std::uint32_t d = 1; d <= messages; ++d) {
      std::uint64_t unpacked = 0;
      for (std::size_t t = 0; t < cur[d - 1].size(); ++t) {
        const Run& run = cur[d - 1][t];
        const std::uint64_t len = (run.end - run.begin) * b;
        const std::array<std::uint32_t, 2> u{recvs[d - 1], packs[d - 1][t]};
        unpacks[d - 1].push_back(e.op(OpKind::copy, 0, a_blocks(run.begin, run.end),
                                      detail::tmp_range(r_at(d) + unpacked, len), u));
        unpacked += len;
      }
    }
    prev_unpacks.swap(unpacks);
    prev_sends.assign(sends.begin(), sends.begin() + messages);
    prev_recv_1 = recvs[0];
  }
  // 3. Output: block q (from rank q) is A[(r - q) mod p]. In the last phase digit d has the one run
  // [d delta, (d+1) delta); a block whose top digit is 0 waits for digit 1's unpack, which orders
  // every older unpack.
  const std::uint64_t top = all.back().delta;
  for (core::Rank q = 0; q < p; ++q) {
    if (q != r) {
      const std::uint32_t i = (r + p - q) % p;
      const std::uint64_t digit = std::max<std::uint64_t>(i / top, 1);
      const std::array<std::uint32_t, 1> last{prev_unpacks[digit - 1].front()};
      e.op(OpKind::copy, 0, detail::data_range(n + q * b, b), a_blocks(i, i + 1), last);
    }
  }
}

/// The operation count in closed form, for check(): per rank its own block, the rotation (two
/// copies, one on rank 0), per phase and digit 2 R copies plus a send and a receive (R runs), and
/// p-1 output copies. check() must not run the O(ops) dry run on a request it is about to refuse.
std::uint64_t bruck_op_count(std::uint32_t p, std::uint32_t radix) {
  if (p < 2) {
    return p;
  }
  const std::uint64_t pp = p;
  std::uint64_t per_rank = 0;
  for (const Phase& phase : phases(p, radix)) {
    for (std::uint64_t d = 1; d <= phase.messages; ++d) {
      per_rank += 2 * run_count(pp, radix, phase.delta, d) + 2;
    }
  }
  return pp * pp + (2 * pp - 1) + pp * per_rank;
}

/// Exact totals, by a dry run of the generator (reserve() gets exactly what generate() adds).
OpCounts bruck_counts(std::uint32_t p, std::uint64_t n, std::uint32_t radix) {
  OpCounts total;
  for (core::Rank r = 0; r < p; ++r) {
    Emitter e;
    emit_rank(e, r, p, n, radix);
    total.ops += e.counts.ops;
    total.deps += e.counts.deps;
  }
  return total;
}

core::Schedule generate_bruck(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint32_t radix = radix_of(req);
  core::Schedule s(make_header(req, tmp_bytes(p, radix, n), kName));
  const OpCounts counts = bruck_counts(p, n, radix);
  s.reserve(counts.ops, counts.deps);
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    Emitter e{&s, {}, 0};
    emit_rank(e, r, p, n, radix);
  }
  s.finish();
  return s;
}

std::optional<CostTerms> bruck_cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint32_t radix = radix_of(req);
  const std::uint64_t b = req.bytes.value / p;
  const std::vector<Phase> all = phases(p, radix);
  std::uint64_t blocks = 0;
  for (const Phase& phase : all) {
    for (std::uint32_t d = 1; d <= phase.messages; ++d) {
      blocks += digit_blocks(p, radix, phase.delta, d);
    }
  }
  return CostTerms{static_cast<double>(all.size()), static_cast<double>(blocks * b), 0.0};
}

} // namespace

AlgorithmInfo describe_alltoall_bruck() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "ceil(log_k p) phases; in phase j, digit d = 1..k-1 forwards every block whose "
              "base-k index digit j is d to r + d k^j";
  a.source = "Bruck et al., IEEE TPDS 1997; MPICH MPIR_Alltoall_intra_brucks and "
             "MPIR_Alltoall_intra_k_brucks; Open MPI ompi_coll_base_alltoall_intra_bruck";
  a.aliases = {"ompi:3", "ompi:modified_bruck", "mpich:brucks", "mpich:k_brucks", "smpi:bruck"};
  a.params = {{"radix", 2, 2, kMaxRadix,
               "k: k-1 concurrent messages per phase, ceil(log_k p) phases (MPICH k_brucks: "
               "MPIR_CVAR_ALLTOALL_BRUCKS_KVAL, default 2 = classic Bruck)"}};
  a.constraints = {"bytes divisible by ranks"};
  a.check = [](const Request& req) -> std::string {
    if (req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    return detail::size_limit_refusal({bruck_op_count(req.ranks, radix_of(req)), 0});
  };
  a.generate = generate_bruck;
  a.cost = bruck_cost;
  a.cost_formula = "ceil(log_k p) a + (n/p) sum_{j,d} #{i < p : base-k digit j of i = d} b; radix "
                   "2: ceil(lg p) a + (n/p) sum_k #{i < p : bit k of i set} b (lg p a + (n/2) lg p "
                   "b for p a power of two); p a power of k: log_k p a + (k-1)/k n log_k p b";
  return a;
}

} // namespace collsim::algorithms

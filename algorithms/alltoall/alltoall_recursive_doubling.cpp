// Recursive-doubling (hypercube store-and-forward) alltoall (algorithms.md AA9): lg p steps; in
// step k rank r exchanges with r XOR 2^k every block it holds whose destination lies on the
// partner's side of dimension k, n/2 bytes each way, so every block reaches its destination after
// at most lg p hops.
//
// Source: algorithms.md AA9 (SMPI "rdb", MVAPICH2 RD alltoall); the hypercube exchange of S. L.
// Johnsson and C.-T. Ho, "Optimum broadcasting and personalized communication in hypercubes", IEEE
// TC 38(9), 1989. Note: SimGrid's smpi::alltoall__rdb (alltoall-rdb.cpp, STAR-MPI after MPICH)
// actually allgathers every rank's whole send buffer by recursive doubling (p n bytes gathered per
// rank, lg p a + (p-1) n b) and then picks out its blocks; the alias names the same pattern of
// partners, not that byte count.
//
// Power of two only (refused otherwise: SMPI's non-power-of-two branch belongs to its
// allgather-based variant); p must divide n, as for every alltoall here.
//
// Schedule, rank r, b = n/p, L = lg p. Before step k, r holds the blocks (s, d) (source s,
// destination d) with s equal to r above bit k-1 and d equal to r below bit k: p blocks.
//   step k: pack (copy) the p/2 held blocks whose destination bit k differs from r's into
//     tmp[k n, +n/2), in the order (source low bits a, destination high bits) ascending; send them
//     to r XOR 2^k; receive the partner's p/2 blocks, in the same order, into tmp[k n + n/2, +n/2).
//   end: copy each of the p blocks (s, r) from where it lies to data[n + s b, +b) (r's own block
//     straight from the input).
// Dependencies: a pack copy waits for the receive that brought its block (none for input blocks);
// a step's send waits for its pack copies and for the previous step's send and receive (a
// blocking sendrecv); receives land in fresh scratch and wait for nothing; a final copy waits for
// the receive that brought its block. Scratch areas are never reused: tmp is L n bytes.
//
// Cost (b = n/p): lg p (a + n/2 b) = lg p a + (lg p / 2) n b, exact on `uniform` (copies free).

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"
#include "op_sink.hpp"

#include <bit>
#include <fmt/format.h>
#include <vector>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;
using detail::OpSink;

constexpr const char* kName = "recursive_doubling";
constexpr std::uint32_t kNone = 0xffffffffU;

struct Held {
  core::Range where;
  std::uint32_t producer = kNone; ///< local index of the receive that brought it
};

void rdb_program(OpSink& sink, core::Rank r, std::uint32_t p, std::uint64_t n) {
  const std::uint64_t b = n / p;
  const std::uint32_t steps = detail::floor_log2(p);
  std::vector<Held> held(p);
  std::vector<Held> next(p);
  for (std::uint32_t d = 0; d < p; ++d) {
    held[d] = {detail::data_range(std::uint64_t{d} * b, b), kNone};
  }
  std::vector<std::uint32_t> deps;
  std::uint32_t last_send = kNone;
  std::uint32_t last_recv = kNone;
  for (std::uint32_t k = 0; k < steps; ++k) {
    const std::uint32_t mask = 1U << k;
    const core::Rank q = r ^ mask;
    const std::uint32_t rbit = (r >> k) & 1U;
    const std::uint32_t width = p >> k;    // destination-high values before the step
    const std::uint32_t half = width >> 1; // ... after it
    const std::uint64_t pack = std::uint64_t{k} * n;
    const std::uint64_t landing = pack + n / 2;
    deps.clear();
    std::uint64_t t = 0;
    for (std::uint32_t a = 0; a < mask; ++a) {
      for (std::uint32_t h = 0; h < half; ++h, ++t) {
        const Held& from = held[a * width + 2 * h + (rbit ^ 1U)];
        const std::array<std::uint32_t, 1> dep{from.producer};
        deps.push_back(sink.copy(from.where, detail::tmp_range(pack + t * b, b),
                                 std::span(dep.data(), from.producer == kNone ? 0 : 1)));
      }
    }
    if (last_send != kNone) {
      deps.push_back(last_send);
      deps.push_back(last_recv);
    }
    last_send = sink.send(q, detail::tmp_range(pack, n / 2), deps);
    last_recv = sink.recv(q, detail::tmp_range(landing, n / 2));
    // Holdings after the step: source low bits a2 (k+1 bits), destination high bits h.
    for (std::uint32_t a2 = 0; a2 < 2 * mask; ++a2) {
      const std::uint32_t a = a2 & (mask - 1);
      for (std::uint32_t h = 0; h < half; ++h) {
        if (((a2 >> k) & 1U) == rbit) {
          next[a2 * half + h] = held[a * width + 2 * h + rbit];
        } else {
          next[a2 * half + h] = {detail::tmp_range(landing + (std::uint64_t{a} * half + h) * b, b),
                                 last_recv};
        }
      }
    }
    held.swap(next);
  }
  for (std::uint32_t src = 0; src < p; ++src) {
    const Held& from = held[src];
    const std::array<std::uint32_t, 1> dep{from.producer};
    sink.copy(from.where, detail::data_range(n + std::uint64_t{src} * b, b),
              std::span(dep.data(), from.producer == kNone ? 0 : 1));
  }
}

void emit(OpSink& sink, const Request& req) {
  for (core::Rank r = 0; r < req.ranks; ++r) {
    sink.begin_rank(r);
    rdb_program(sink, r, req.ranks, req.bytes.value);
  }
}

std::string rdb_check(const Request& req) {
  const std::uint64_t p = req.ranks;
  if (!std::has_single_bit(req.ranks)) {
    return fmt::format("ranks must be a power of two (got {}); use 'bruck' or 'pairwise' for "
                       "other rank counts",
                       p);
  }
  if (req.bytes.value % p != 0) {
    return "alltoall needs bytes divisible by ranks";
  }
  // Exact operation count (lg p (p/2 + 2) + p per rank) first, so a huge request is refused
  // without walking it.
  const std::uint64_t ops = p * (detail::floor_log2(req.ranks) * (p / 2 + 2) + p);
  if (const std::string why = detail::size_limit_refusal({ops, 0}); !why.empty()) {
    return why;
  }
  OpSink sink;
  emit(sink, req);
  return detail::size_limit_refusal(sink.counts());
}

core::Schedule generate_rdb(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, detail::floor_log2(req.ranks) * n, kName));
  OpSink counter;
  emit(counter, req);
  s.reserve(counter.counts().ops, counter.counts().deps);
  OpSink sink(s);
  emit(sink, req);
  s.finish();
  return s;
}

std::optional<CostTerms> rdb_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t b = req.bytes.value / p; // exact: p divides n
  const double lg = detail::floor_log2(req.ranks);
  return CostTerms{lg, lg * static_cast<double>(p / 2 * b), 0.0};
}

} // namespace

AlgorithmInfo describe_alltoall_recursive_doubling() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "lg p hypercube steps: exchange with r XOR 2^k the n/2 bytes bound for the "
              "partner's half (store-and-forward)";
  a.source = "Johnsson & Ho, IEEE TC 1989 (hypercube personalized exchange); algorithms.md AA9 "
             "(SMPI rdb, MVAPICH2 RD)";
  // No SMPI alias: SimGrid's alltoall "rdb" gathers every rank's whole send buffer by recursive
  // doubling (about (p-1) n bytes per rank), a different algorithm with the same partners.
  a.constraints = {"ranks must be a power of two", "bytes divisible by ranks"};
  a.check = rdb_check;
  a.generate = generate_rdb;
  a.cost = rdb_cost;
  a.cost_formula = "lg p a + (lg p / 2) n b";
  return a;
}

} // namespace collsim::algorithms

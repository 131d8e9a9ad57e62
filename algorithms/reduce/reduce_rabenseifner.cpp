// Rabenseifner's reduce (algorithms.md RD7): a reduce-scatter by recursive vector halving and
// distance doubling, then a binomial gather of the pieces to the root by recursive vector doubling
// and distance halving.
//
// Source: R. Rabenseifner, "Optimization of collective reduction operations", ICCS 2004; Thakur,
// Rabenseifner & Gropp, IJHPCA 19(1), 2005. The schedule follows Open MPI
// ompi_coll_base_reduce_intra_redscat_gather (coll/tuned reduce algorithm 7), including its
// non-power-of-two fold and its handling of a root that the fold excludes. MPICH
// MPIR_Reduce_intra_reduce_scatter_gather ("mpich:reduce_scatter_gather") and SMPI "rab" send the
// same messages when p is a power of two dividing n; for other p MPICH folds whole vectors and
// splits on block boundaries (the same difference as allreduce's rabenseifner).
//
// Cost, p a power of two dividing n: 2 lg p a + 2(p-1)/p n b + (p-1)/p n g (algorithms.md), exact
// on the loggp engine. For other p the fold (exchange halves, reduce, send the reduced half back)
// adds about 2a + n b + n/2 g, but ranks outside the fold start early and the gather overlaps, so
// the sum is not exact and cost() declines.
//
// Schedule, r = p - p':
//   fold (ranks 0..2r-1): an even rank sends its second half to rank+1 while the odd rank sends
//     its first half to rank-1; each reduces the half it kept; the odd rank sends its reduced
//     second half back and drops out. Survivors: even ranks below 2r as rank/2, others as rank-r.
//   reduce-scatter: for mask = 1, 2, ..., p'/2 the partner is vrank ^ mask; the window is split at
//     half its length, the lower vrank keeps the first half; the kept part is received into tmp and
//     reduced into data.
//   gather towards vroot (the root's vrank; for an excluded odd root, its even neighbour's): with
//     d = vrank ^ vroot, for mask = p'/2 down to 1: if d has bit mask set, send the window kept at
//     that step to vrank ^ mask and stop; otherwise receive the part sent away at that step
//     straight into data. An excluded odd root finally receives the whole vector from rank root-1.
//
// Dependencies: as allreduce's rabenseifner for the fold and the reduce-scatter; a gather receive
// waits for the reduce-scatter send that read those bytes; a gather send waits for the last
// reduction and every gather receive (together they wrote its window).

#include "bcast/bcast_scatter_support.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "rabenseifner";

struct Step {
  core::Rank peer = 0;
  std::uint64_t send_offset = 0;
  std::uint64_t send_length = 0;
  std::uint64_t keep_offset = 0;
  std::uint64_t keep_length = 0;
  std::uint32_t send_op = 0;
  std::uint32_t reduce_op = 0;
};

template <class Emitter>
void emit(Emitter& e, std::uint32_t p, std::uint64_t n, core::Rank root) {
  using detail::data_range;
  using detail::tmp_range;
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  const std::uint64_t lhalf = n / 2;
  const std::uint64_t rhalf = n - lhalf;
  // An odd root below 2r is folded away; its even neighbour gathers for it.
  const bool excluded_root = root < 2 * rem && root % 2 != 0;
  const core::Rank acting_root = excluded_root ? root - 1 : root;
  const std::uint32_t vroot = acting_root < 2 * rem ? acting_root / 2 : acting_root - rem;

  std::array<Step, 32> steps{};
  std::array<std::uint32_t, 2> dep{};
  std::vector<std::uint32_t> gathered;
  for (core::Rank r = 0; r < p; ++r) {
    e.begin_rank(r);
    std::uint32_t vrank = 0;
    bool folded = false;
    std::array<std::uint32_t, 2> fold_writes{};
    if (r < 2 * rem) {
      if (r % 2 != 0) {
        const std::uint32_t sent_first = e.send(r - 1, data_range(0, lhalf), {});
        const std::uint32_t got = e.recv(r - 1, tmp_range(lhalf, rhalf), {});
        dep[0] = got;
        const std::uint32_t red =
            e.reduce(tmp_range(lhalf, rhalf), data_range(lhalf, rhalf), std::span(dep.data(), 1));
        dep[0] = red;
        const std::uint32_t sent_second =
            e.send(r - 1, data_range(lhalf, rhalf), std::span(dep.data(), 1));
        if (r == root) {
          // The result overwrites data that both fold sends read.
          dep = {sent_first, sent_second};
          e.recv(r - 1, data_range(0, n), dep);
        }
        continue;
      }
      const std::uint32_t sent = e.send(r + 1, data_range(lhalf, rhalf), {});
      const std::uint32_t got = e.recv(r + 1, tmp_range(0, lhalf), {});
      dep[0] = got;
      const std::uint32_t red =
          e.reduce(tmp_range(0, lhalf), data_range(0, lhalf), std::span(dep.data(), 1));
      dep[0] = sent;
      const std::uint32_t back = e.recv(r + 1, data_range(lhalf, rhalf), std::span(dep.data(), 1));
      fold_writes = {red, back};
      folded = true;
      vrank = r / 2;
    } else {
      vrank = r - rem;
    }
    const auto real = [rem](std::uint32_t v) { return v < rem ? v * 2 : v + rem; };

    // Reduce-scatter by recursive halving, distance doubling (as allreduce's rabenseifner).
    std::uint32_t nsteps = 0;
    std::uint64_t window_offset = 0;
    std::uint64_t window_length = n;
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1, ++nsteps) {
      Step& st = steps[nsteps];
      const std::uint32_t vdest = vrank ^ mask;
      st.peer = real(vdest);
      const std::uint64_t half = window_length / 2;
      if (vrank < vdest) {
        st.keep_offset = window_offset;
        st.keep_length = half;
        st.send_offset = window_offset + half;
        st.send_length = window_length - half;
      } else {
        st.send_offset = window_offset;
        st.send_length = half;
        st.keep_offset = window_offset + half;
        st.keep_length = window_length - half;
      }
      std::size_t send_deps = 1;
      std::size_t recv_deps = 1;
      std::size_t reduce_deps = 1;
      if (nsteps == 0) {
        // A folded rank's first step waits for the fold: the send and the reduction for both of
        // its writes to data, the receive for its reduction (the last reader of tmp).
        dep = fold_writes;
        send_deps = folded ? 2 : 0;
        recv_deps = folded ? 1 : 0;
        reduce_deps = folded ? 2 : 1;
      } else {
        dep[0] = steps[nsteps - 1].reduce_op;
      }
      st.send_op = e.send(st.peer, data_range(st.send_offset, st.send_length),
                          std::span(dep.data(), send_deps));
      const std::uint32_t got = e.recv(st.peer, tmp_range(st.keep_offset, st.keep_length),
                                       std::span(dep.data(), recv_deps));
      dep = {got, fold_writes[1]};
      st.reduce_op =
          e.reduce(tmp_range(st.keep_offset, st.keep_length),
                   data_range(st.keep_offset, st.keep_length), std::span(dep.data(), reduce_deps));
      window_offset = st.keep_offset;
      window_length = st.keep_length;
    }

    // Binomial gather towards vroot, replaying the steps backwards.
    const std::uint32_t d = vrank ^ vroot;
    gathered.assign(1, steps[nsteps - 1].reduce_op);
    bool sent_up = false;
    for (std::uint32_t i = nsteps; i-- > 0;) {
      const Step& st = steps[i];
      if ((d >> i) & 1U) {
        e.send(st.peer, data_range(st.keep_offset, st.keep_length), gathered);
        sent_up = true;
        break;
      }
      dep[0] = st.send_op;
      gathered.push_back(
          e.recv(st.peer, data_range(st.send_offset, st.send_length), std::span(dep.data(), 1)));
    }
    if (!sent_up && excluded_root) {
      e.send(root, data_range(0, n), gathered);
    }
  }
}

detail::OpCounts counts(const Request& req) {
  detail::CountingEmitter c;
  if (req.ranks > 1) {
    emit(c, req.ranks, req.bytes.value, req.root);
  }
  return c.counts;
}

core::Schedule generate(const Request& req) {
  const std::uint32_t p = req.ranks;
  core::Schedule s(make_header(req, p > 1 ? req.bytes.value : 0, kName));
  const detail::OpCounts c = counts(req);
  s.reserve(c.ops, c.deps);
  if (p > 1) {
    detail::ScheduleEmitter e{s};
    emit(e, p, req.bytes.value, req.root);
  }
  s.finish();
  return s;
}

std::optional<CostTerms> cost(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t pof2 = std::bit_floor(p);
  if (p == 1) {
    return CostTerms{};
  }
  if (pof2 != p || n % pof2 != 0) {
    return std::nullopt;
  }
  const auto k = static_cast<double>(detail::floor_log2(p));
  const auto part = static_cast<double>((pof2 - 1) * (n / pof2)); // (p'-1)/p' n
  return CostTerms{2 * k, 2 * part, part};
}

} // namespace

AlgorithmInfo describe_reduce_rabenseifner() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "recursive-halving reduce-scatter then binomial gather to the root";
  a.source = "Rabenseifner, ICCS 2004; Open MPI ompi_coll_base_reduce_intra_redscat_gather; MPICH "
             "MPIR_Reduce_intra_reduce_scatter_gather";
  a.aliases = {"ompi:7", "ompi:rabenseifner", "mpich:reduce_scatter_gather", "smpi:rab",
               "smpi:scatter_gather"};
  a.constraints = {"commutative operation",
                   "non-power-of-two p folds the first 2(p - p') ranks in pairs first"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts(req)); };
  a.generate = generate;
  a.cost = cost;
  a.cost_formula = "2 lg p a + 2(p-1)/p n b + (p-1)/p n g (exact for p a power of two dividing n)";
  return a;
}

} // namespace collsim::algorithms

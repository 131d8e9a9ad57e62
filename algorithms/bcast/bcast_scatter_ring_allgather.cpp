// Scatter + ring allgather broadcast (algorithms.md BC10).
//
// Source: MPICH MPIR_Bcast_intra_scatter_ring_allgather; Open MPI
// ompi_coll_base_bcast_intra_scatter_allgather_ring (coll/tuned bcast algorithm 9); SMPI
// "scatter_LR_allgather". Thakur, Rabenseifner, Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005.
//
// Cost (p a power of two, p dividing n): (lg p + p - 1) a + 2 (p-1)/p n b: the binomial scatter's
// lg p steps move (p-1)/p n on its critical path; the ring takes p-1 steps of n/p bytes. For other
// p the scatter's critical path is not lg p equal halvings and cost() declines.
//
// Schedule, relative rank vr, blocks of ss = ceil(n/p) bytes: the binomial scatter of
// bcast_scatter_support.hpp, then p-1 ring steps: step i sends block vr-i+1 to vr+1 and receives
// block vr-i from vr-1 (mod p). Empty blocks are skipped on both sides. A ring send waits for the
// receive that brought its block (step 1: the scatter receive); a ring receive that overwrites a
// block still held from the scatter waits for the scatter send that read it.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_scatter_support.hpp"

namespace collsim::algorithms {
namespace {

using detail::BlockLayout;

constexpr const char* kName = "scatter_ring_allgather";

template <class Emitter>
void emit(Emitter& e, const BlockLayout& L) {
  const std::uint32_t p = L.p;
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    e.begin_rank(r);
    const std::uint32_t vr = r >= L.root ? r - L.root : r + p - L.root;
    const detail::ScatterOps sc = detail::emit_binomial_scatter(e, L, vr);
    const std::uint64_t span = L.span(vr);
    const core::Rank left = L.real(vr + p - 1);
    const core::Rank right = L.real(vr + 1);
    // The receive that brought block j (for j = vr: the scatter's, which the root does not need).
    bool have_dep = sc.received;
    std::uint32_t producer = sc.recv;
    std::uint64_t j = vr;
    for (std::uint32_t step = 1; step < p; ++step) {
      const std::uint64_t jnext = j == 0 ? p - 1 : j - 1;
      const core::Range out = L.blocks(j, j + 1);
      if (out.length > 0) {
        dep[0] = producer;
        e.send(right, out, std::span(dep.data(), have_dep ? 1 : 0));
      }
      const core::Range in = L.blocks(jnext, jnext + 1);
      have_dep = false;
      if (in.length > 0) {
        // Blocks vr+1 .. vr+span-1 were held from the scatter and sent on to child
        // vr + bit_floor(jnext - vr); the receive overwrites them, so it waits for that send.
        const bool held = jnext > vr && jnext < vr + span;
        if (held) {
          dep[0] = sc.send[static_cast<std::size_t>(std::countr_zero(std::bit_floor(jnext - vr)))];
        }
        producer = e.recv(left, in, std::span(dep.data(), held ? 1 : 0));
        have_dep = true;
      }
      j = jnext;
    }
  }
}

detail::OpCounts counts(const Request& req) {
  detail::CountingEmitter c;
  if (req.ranks > 1) {
    emit(c, BlockLayout(req.ranks, req.root, req.bytes.value));
  }
  return c.counts;
}

core::Schedule generate(const Request& req) {
  core::Schedule s(make_header(req, 0, kName));
  const detail::OpCounts c = counts(req);
  s.reserve(c.ops, c.deps);
  if (req.ranks > 1) {
    detail::ScheduleEmitter e{s};
    emit(e, BlockLayout(req.ranks, req.root, req.bytes.value));
  }
  s.finish();
  return s;
}

std::optional<CostTerms> cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (n == 0 || p == 1) {
    return CostTerms{}; // nothing is sent
  }
  if (!std::has_single_bit(p) || n % p != 0) {
    return std::nullopt;
  }
  const auto rounds = static_cast<double>(detail::floor_log2(req.ranks) + p - 1);
  return CostTerms{rounds, 2.0 * static_cast<double>((p - 1) * (n / p)), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_scatter_ring_allgather() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "binomial scatter of p blocks, then ring allgather";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH "
             "MPIR_Bcast_intra_scatter_ring_allgather; Open MPI "
             "ompi_coll_base_bcast_intra_scatter_allgather_ring";
  a.aliases = {"ompi:9", "ompi:scatter_allgather_ring", "mpich:scatter_ring_allgather",
               "smpi:scatter_LR_allgather"};
  a.constraints = {"blocks of ceil(n/p) bytes: with n < p some ranks' blocks are empty"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts(req)); };
  a.generate = generate;
  a.cost = cost;
  a.cost_formula = "(lg p + p - 1) a + 2 (p-1)/p n b (exact for p a power of two dividing n)";
  return a;
}

} // namespace collsim::algorithms

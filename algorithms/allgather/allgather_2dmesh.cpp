// SMPI's 2-D mesh allgather (algorithms.md AG13; SMPI "2dmesh", from STAR-MPI): the ranks form an
// X x Y grid (X <= Y, rows of Y consecutive ranks, chosen as SMPI's is_2dmesh does: see
// mesh_support.hpp); a direct allgather along each row gathers the row's Y blocks, then a direct
// allgather along each column exchanges whole rows.
//
// Source: SimGrid smpi::allgather__2dmesh (src/smpi/colls/allgather/allgather-2dmesh.cpp); A. Faraj
// and X. Yuan, "Automatic generation and tuning of MPI collective communication routines", ICS
// 2005.
//
// Schedule, rank r at (i, c) = (r / Y, r % Y):
//   phase 1 (row): receive block q from every row member q = i Y + 0 .. i Y + Y-1 (q != r), then
//     send block r to each of them, in that order.
//   phase 2 (column): receive row(q) = blocks q/Y Y .. q/Y Y + Y-1 from every column member
//     q = 0 Y + c .. Y + c (q != r), then send row(r) to each of them, in that order.
// Dependencies: see allgather_mesh.hpp (phase 2 waits for phase 1's receives). The buffer is in
// place, so SMPI's initial copy of the rank's own block is not needed.
//
// Grids: p = 1 is the trivial 1 x 1 grid; 2 and 3 are 1 x p (one row, phase 2 empty); a prime
// p >= 5 has no grid and is refused, as SMPI throws there.
//
// Cost on `uniform` (p divides n, b = n/p, X, Y >= 2): 2 a + ((2Y-3) + (2X-3) Y) b b, exact (see
// allgather_mesh.hpp: SMPI sends to the row members in increasing order, so the last column's
// receive port queues 2Y-3 blocks, and likewise in the columns). X = 1: a + (2Y-3) b b.
// algorithms.md's (X+Y-2) a + (p-1)/p n b assumes ring-like, contention-free rows and columns.

#include "allgather/allgather_algorithms.hpp"
#include "allgather/allgather_mesh.hpp"
#include "generator_support.hpp"
#include "mesh_support.hpp"
#include "op_sink.hpp"

#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;
using detail::OpSink;

constexpr const char* kName = "2dmesh";

std::vector<detail::MeshPhase> phases_of(core::Rank r, detail::Grid2 g) {
  std::vector<detail::MeshPhase> phases(2);
  const std::uint32_t row_base = r / g.y * g.y;
  for (std::uint32_t i = 0; i < g.y; ++i) {
    if (row_base + i != r) {
      phases[0].peers.push_back(row_base + i);
    }
  }
  phases[0].width = 1;
  for (std::uint32_t i = 0; i < g.x; ++i) {
    if (i * g.y + r % g.y != r) {
      phases[1].peers.push_back(i * g.y + r % g.y);
    }
  }
  phases[1].width = g.y;
  return phases;
}

void emit(OpSink& sink, const Request& req, detail::Grid2 g) {
  for (core::Rank r = 0; r < req.ranks; ++r) {
    sink.begin_rank(r);
    detail::mesh_allgather_program(sink, r, req.ranks, req.bytes.value, phases_of(r, g));
  }
}

std::string mesh_refusal(const Request& req) {
  const auto g = detail::smpi_grid2(req.ranks);
  if (!g) {
    return fmt::format("ranks must have a divisor between floor(sqrt(p)) and p/2 to form SMPI's "
                       "X x Y grid (got {}, a prime); use 'direct' or 'ring'",
                       req.ranks);
  }
  OpSink sink;
  emit(sink, req, *g);
  return detail::size_limit_refusal(sink.counts());
}

core::Schedule generate_mesh(const Request& req) {
  const detail::Grid2 g = *detail::smpi_grid2(req.ranks);
  core::Schedule s(make_header(req, 0, kName));
  OpSink counter;
  emit(counter, req, g);
  s.reserve(counter.counts().ops, counter.counts().deps);
  OpSink sink(s);
  emit(sink, req, g);
  s.finish();
  return s;
}

std::optional<CostTerms> mesh_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (n % p != 0) {
    return std::nullopt;
  }
  const detail::Grid2 g = *detail::smpi_grid2(req.ranks);
  const double b = static_cast<double>(n / p);
  CostTerms c;
  if (g.y >= 2) {
    c.alpha_terms += 1;
    c.beta_bytes += detail::mesh_ordered_phase_beta_units(g.y) * b;
  }
  if (g.x >= 2) {
    c.alpha_terms += 1;
    c.beta_bytes += detail::mesh_ordered_phase_beta_units(g.x) * g.y * b;
  }
  return c;
}

} // namespace

AlgorithmInfo describe_allgather_2dmesh() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "X x Y grid (SMPI's near-square factorisation): direct allgather along rows, then "
              "along columns with whole rows";
  a.source = "SimGrid smpi::allgather__2dmesh (STAR-MPI); Faraj & Yuan, ICS 2005";
  a.aliases = {"smpi:2dmesh"};
  a.constraints = {"ranks must not be a prime >= 5 (SMPI's grid needs a divisor in "
                   "[floor(sqrt(p)), p/2])"};
  a.check = mesh_refusal;
  a.generate = generate_mesh;
  a.cost = mesh_cost;
  a.cost_formula =
      "X, Y >= 2: 2 a + ((2Y-3) + (2X-3) Y) n/p b (increasing-order sends queue at the "
      "last member's receive port); X = 1: a + (2Y-3) n/p b; exact when p divides n";
  return a;
}

} // namespace collsim::algorithms

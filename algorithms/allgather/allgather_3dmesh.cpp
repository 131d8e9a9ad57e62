// SMPI's 3-D mesh allgather (algorithms.md AG13; SMPI "3dmesh", from STAR-MPI): the ranks form an
// X x X x Z grid (chosen as SMPI's is_3dmesh does: see mesh_support.hpp); direct allgathers along
// rows (X blocks), then columns (whole rows), then across planes (whole planes).
//
// Source: SimGrid smpi::allgather__3dmesh (src/smpi/colls/allgather/allgather-3dmesh.cpp); A.
// Faraj and X. Yuan, "Automatic generation and tuning of MPI collective communication routines",
// ICS 2005.
//
// Schedule, rank r = z X^2 + i X + c:
//   phase 1 (row): with q = r/X X + 0 .. X-1 (q != r): receive block q from each, then send block r
//     to each, in that order.
//   phase 2 (column): with q = 0 X + c + z X^2 .. X + c + z X^2 (q != r): receive row(q)
//     (X blocks from q/X X), send row(r), in that order.
//   phase 3 (planes): with q = (r + j X^2) mod p, j = 1..Z-1 (SMPI's rotated order): receive
//     plane(q) (X^2 blocks from q/X^2 X^2), send plane(r).
// Dependencies: see allgather_mesh.hpp (each phase waits for the previous phase's receives). The
// buffer is in place, so SMPI's initial copy of the rank's own block is not needed.
//
// Grids: 1..7 are 1 x 1 x p (only phase 3; SMPI itself refuses 1 and 2, where its bound p/3 is
// 0); every p with no x in [floor(cbrt(p)), p/3] whose square divides p (10, 11, 13, 14, 15,
// 17, ...) is refused, as SMPI throws there.
//
// Cost on `uniform` (p divides n, b = n/p), exact: X >= 2 adds 2 a + (2X-3)(1 + X) b b (rows and
// columns in increasing order, see allgather_mesh.hpp), Z >= 2 adds a + (Z-1) X^2 b b (rotated, no
// queueing).

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

constexpr const char* kName = "3dmesh";

std::vector<detail::MeshPhase> phases_of(core::Rank r, std::uint32_t p, detail::Grid3 g) {
  std::vector<detail::MeshPhase> phases(3);
  const std::uint32_t x = g.x;
  const std::uint32_t plane = x * x;
  const std::uint32_t row_base = r / x * x;
  const std::uint32_t col_base = r % x + r / plane * plane;
  for (std::uint32_t i = 0; i < x; ++i) {
    if (row_base + i != r) {
      phases[0].peers.push_back(row_base + i);
    }
    if (i * x + col_base != r) {
      phases[1].peers.push_back(i * x + col_base);
    }
  }
  phases[0].width = 1;
  phases[1].width = x;
  for (std::uint32_t j = 1; j < g.z; ++j) {
    phases[2].peers.push_back(
        static_cast<core::Rank>((std::uint64_t{r} + std::uint64_t{j} * plane) % p));
  }
  phases[2].width = plane;
  return phases;
}

void emit(OpSink& sink, const Request& req, detail::Grid3 g) {
  for (core::Rank r = 0; r < req.ranks; ++r) {
    sink.begin_rank(r);
    detail::mesh_allgather_program(sink, r, req.ranks, req.bytes.value, phases_of(r, req.ranks, g));
  }
}

std::string mesh_refusal(const Request& req) {
  const auto g = detail::smpi_grid3(req.ranks);
  if (!g) {
    return fmt::format("ranks must be x*x*z with floor(cbrt(p)) <= x <= p/3 to form SMPI's 3-D "
                       "grid (got {}); use '2dmesh', 'direct' or 'ring'",
                       req.ranks);
  }
  OpSink sink;
  emit(sink, req, *g);
  return detail::size_limit_refusal(sink.counts());
}

core::Schedule generate_mesh(const Request& req) {
  const detail::Grid3 g = *detail::smpi_grid3(req.ranks);
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
  const detail::Grid3 g = *detail::smpi_grid3(req.ranks);
  const double b = static_cast<double>(n / p);
  const double x = g.x;
  CostTerms c;
  if (g.x >= 2) {
    c.alpha_terms += 2;
    c.beta_bytes += detail::mesh_ordered_phase_beta_units(g.x) * (1 + x) * b;
  }
  if (g.z >= 2) {
    c.alpha_terms += 1;
    c.beta_bytes += (g.z - 1) * x * x * b;
  }
  return c;
}

} // namespace

AlgorithmInfo describe_allgather_3dmesh() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "X x X x Z grid (SMPI's factorisation): direct allgathers along rows, columns, then "
              "across planes";
  a.source = "SimGrid smpi::allgather__3dmesh (STAR-MPI); Faraj & Yuan, ICS 2005";
  a.aliases = {"smpi:3dmesh"};
  a.constraints = {
      "ranks must be x*x*z for some x in [floor(cbrt(p)), p/3] (SMPI's grid), or 1, 2"};
  a.check = mesh_refusal;
  a.generate = generate_mesh;
  a.cost = mesh_cost;
  a.cost_formula = "X >= 2: 2 a + (2X-3)(X+1) n/p b for rows and columns (increasing-order sends "
                   "queue at the last member), plus, Z >= 2, a + (Z-1) X^2 n/p b across planes; "
                   "exact when p divides n";
  return a;
}

} // namespace collsim::algorithms

// Two-phase 2-D mesh alltoall with message combining (algorithms.md AA10; SMPI "2dmesh"): the
// ranks form SMPI's X x Y grid (mesh_support.hpp); in phase 1 every rank sends each member of its
// row, in one message, the X blocks bound for that member's column; in phase 2 every rank sends
// each member of its column, in one message, the Y blocks (one from each row member) bound for it.
// Every block travels at most two hops; a rank sends X + Y - 2 messages instead of p - 1.
//
// Source: algorithms.md AA10 (two-phase message combining); SimGrid smpi::alltoall__2dmesh
// (src/smpi/colls/alltoall/alltoall-2dmesh.cpp, STAR-MPI, Faraj & Yuan, ICS 2005) for the grid,
// the rank layout and the order of partners. SimGrid's phase 1 differs: each rank sends its whole
// n-byte send buffer to every row member (an allgather along the row, (Y-1) n bytes per rank)
// and extracts locally, where this combines only the X blocks the row member needs ((Y-1) X b).
//
// Schedule, rank r = (i, j) = (r / Y, r % Y), b = n/p (p must divide n); tmp holds three n-byte
// areas: S1 (phase-1 packs, X blocks per row member j'), R1 (phase-1 receipts, same layout) and S2
// (phase-2 packs, Y blocks per column member i'').
//   phase 1: receive R1[j'] from every row member (i, j'), j' = 0..Y-1, j' != j; then for each such
//     j' in increasing order copy input blocks (i'' Y + j'), i'' = 0..X-1, into S1[j'] and send it
//     to (i, j').
//   phase 2: receive from every column member (i'', j), i'' != i, straight into the output blocks
//     i'' Y .. i'' Y + Y-1 (what that rank packed for r, in source order); then for each such i''
//     in increasing order copy the blocks bound for (i'', j) from every row member (R1[j''][i''],
//     or input block i'' Y + j for r itself) into S2[i''] and send it to (i'', j).
//   finally copy the row's blocks for r (R1[j''][i], and r's own input block) to the output.
// Dependencies: a send waits for its pack copies; a copy out of R1 waits for the receive that
// filled it; phase 2's receives wait for phase 1's (SMPI's waitall). Every area is written once.
//
// Grids as SMPI: p = 1 trivial, p = 2, 3 one row (phase 2 empty), a prime p >= 5 refused.
//
// Cost on `uniform` (b = n/p), exact: phase 1 (Y >= 2) a + (2Y-3) X b b, phase 2 (X >= 2)
// a + (2X-3) Y b b. Partners are taken in increasing order as in SMPI, so the last member's
// receive port queues 2G-3 messages (allgather_mesh.hpp explains the count); algorithms.md's
// (X+Y-2) a + 2 (p-1)/p n b is the contention-free, one-message-at-a-time estimate.

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"
#include "mesh_support.hpp"
#include "op_sink.hpp"

#include <array>
#include <fmt/format.h>
#include <vector>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;
using detail::OpSink;

constexpr const char* kName = "2dmesh";

void mesh_program(OpSink& sink, core::Rank r, std::uint32_t p, std::uint64_t n, detail::Grid2 g) {
  const std::uint64_t b = n / p;
  const std::uint32_t x = g.x;
  const std::uint32_t y = g.y;
  const std::uint32_t i = r / y;
  const std::uint32_t j = r % y;
  const auto input = [&](std::uint64_t block) { return detail::data_range(block * b, b); };
  const auto output = [&](std::uint64_t block, std::uint64_t count) {
    return detail::data_range(n + block * b, count * b);
  };
  const auto s1 = [&](std::uint64_t jj, std::uint64_t t) {
    return detail::tmp_range((jj * x + t) * b, b);
  };
  const auto r1 = [&](std::uint64_t jj, std::uint64_t t, std::uint64_t count) {
    return detail::tmp_range(n + (jj * x + t) * b, count * b);
  };
  const auto s2 = [&](std::uint64_t ii, std::uint64_t t, std::uint64_t count) {
    return detail::tmp_range(2 * n + (ii * y + t) * b, count * b);
  };
  // Phase 1.
  std::vector<std::uint32_t> got(y, 0); // local index of the receive into R1[j']
  std::vector<std::uint32_t> phase1;
  for (std::uint32_t jj = 0; jj < y; ++jj) {
    if (jj != j) {
      got[jj] = sink.recv(i * y + jj, r1(jj, 0, x));
      phase1.push_back(got[jj]);
    }
  }
  std::vector<std::uint32_t> packed;
  for (std::uint32_t jj = 0; jj < y; ++jj) {
    if (jj == j) {
      continue;
    }
    packed.clear();
    for (std::uint32_t ii = 0; ii < x; ++ii) {
      packed.push_back(sink.copy(input(std::uint64_t{ii} * y + jj), s1(jj, ii)));
    }
    sink.send(i * y + jj, detail::tmp_range(std::uint64_t{jj} * x * b, std::uint64_t{x} * b),
              packed);
  }
  // Phase 2.
  for (std::uint32_t ii = 0; ii < x; ++ii) {
    if (ii != i) {
      sink.recv(ii * y + j, output(std::uint64_t{ii} * y, y), phase1);
    }
  }
  for (std::uint32_t ii = 0; ii < x; ++ii) {
    if (ii == i) {
      continue;
    }
    packed.clear();
    for (std::uint32_t jj = 0; jj < y; ++jj) {
      if (jj == j) {
        packed.push_back(sink.copy(input(std::uint64_t{ii} * y + j), s2(ii, jj, 1)));
      } else {
        const std::array<std::uint32_t, 1> dep{got[jj]};
        packed.push_back(sink.copy(r1(jj, ii, 1), s2(ii, jj, 1), dep));
      }
    }
    sink.send(ii * y + j, s2(ii, 0, y), packed);
  }
  // The row's blocks for r.
  for (std::uint32_t jj = 0; jj < y; ++jj) {
    if (jj == j) {
      sink.copy(input(r), output(r, 1));
    } else {
      const std::array<std::uint32_t, 1> dep{got[jj]};
      sink.copy(r1(jj, i, 1), output(std::uint64_t{i} * y + jj, 1), dep);
    }
  }
}

void emit(OpSink& sink, const Request& req, detail::Grid2 g) {
  for (core::Rank r = 0; r < req.ranks; ++r) {
    sink.begin_rank(r);
    mesh_program(sink, r, req.ranks, req.bytes.value, g);
  }
}

std::string mesh_check(const Request& req) {
  const auto g = detail::smpi_grid2(req.ranks);
  if (!g) {
    return fmt::format("ranks must have a divisor between floor(sqrt(p)) and p/2 to form SMPI's "
                       "X x Y grid (got {}, a prime); use 'pairwise' or 'bruck'",
                       req.ranks);
  }
  if (req.bytes.value % req.ranks != 0) {
    return "alltoall needs bytes divisible by ranks";
  }
  // Per rank about 2p copies plus X + Y messages: refuse a huge request before walking it.
  const std::uint64_t p = req.ranks;
  if (const std::string why = detail::size_limit_refusal({2 * p * p, 0}); !why.empty()) {
    return why;
  }
  OpSink sink;
  emit(sink, req, *g);
  return detail::size_limit_refusal(sink.counts());
}

core::Schedule generate_mesh(const Request& req) {
  const detail::Grid2 g = *detail::smpi_grid2(req.ranks);
  core::Schedule s(make_header(req, req.ranks > 1 ? 3 * req.bytes.value : 0, kName));
  OpSink counter;
  emit(counter, req, g);
  s.reserve(counter.counts().ops, counter.counts().deps);
  OpSink sink(s);
  emit(sink, req, g);
  s.finish();
  return s;
}

std::optional<CostTerms> mesh_cost(const Request& req) {
  const detail::Grid2 g = *detail::smpi_grid2(req.ranks);
  const double b = static_cast<double>(req.bytes.value / req.ranks);
  CostTerms c;
  if (g.y >= 2) {
    c.alpha_terms += 1;
    c.beta_bytes += (2.0 * g.y - 3.0) * g.x * b;
  }
  if (g.x >= 2) {
    c.alpha_terms += 1;
    c.beta_bytes += (2.0 * g.x - 3.0) * g.y * b;
  }
  return c;
}

} // namespace

AlgorithmInfo describe_alltoall_2dmesh() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "X x Y grid (SMPI's factorisation), message combining: row members get the blocks "
              "for their column, then column members get theirs";
  a.source = "algorithms.md AA10; SimGrid smpi::alltoall__2dmesh (grid and partner order; "
             "STAR-MPI, Faraj & Yuan, ICS 2005)";
  a.aliases = {"smpi:2dmesh"};
  a.constraints = {"ranks must not be a prime >= 5 (SMPI's grid)", "bytes divisible by ranks"};
  a.check = mesh_check;
  a.generate = generate_mesh;
  a.cost = mesh_cost;
  a.cost_formula = "Y >= 2: a + (2Y-3) X n/p b for the rows, plus, X >= 2, a + (2X-3) Y n/p b for "
                   "the columns (increasing-order partners queue at the last member's receive "
                   "port)";
  return a;
}

} // namespace collsim::algorithms

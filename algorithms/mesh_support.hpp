#pragma once
// Internal: the virtual grids of SimGrid SMPI's mesh collectives (STAR-MPI, Faraj & Yuan, ICS
// 2005), shared by allgather 2dmesh / 3dmesh and alltoall 2dmesh.
//
// 2-D (SMPI is_2dmesh / alltoall_check_is_2dmesh): starting at x = floor(sqrt(p)) and going up to
// p/2, the first x that divides p gives the sides x and p/x; X is the smaller, Y the larger. Rows
// are Y consecutive ranks (row i = ranks i Y .. i Y + Y-1), so rank r sits at (r / Y, r % Y);
// columns are the X ranks with the same r % Y. No such x exists for p = 1 or a prime p >= 5: SMPI
// fails there, and so do we (p = 1 is accepted here as the trivial 1 x 1 grid).
//
// 3-D (SMPI is_3dmesh): starting at x = floor(cbrt(p)) (computed exactly in integers; SMPI uses
// the double cbrt) and going up to p/3, the first x with x^2 dividing p gives X = Y = x and
// Z = p / x^2. A plane is X Y consecutive ranks, a row X consecutive ranks of a plane. No such x
// exists when no x in range works (10, 11, 13, 14, ...): refused as SMPI does. p = 1 and p = 2,
// which SMPI also refuses (its bound p/3 is 0), get the 1 x 1 x p grid it uses for 3..7.

#include <algorithm>
#include <cstdint>
#include <optional>

namespace collsim::algorithms::detail {

struct Grid2 {
  std::uint32_t x = 1; ///< rows (the smaller side)
  std::uint32_t y = 1; ///< ranks per row (the larger side)
};

struct Grid3 {
  std::uint32_t x = 1; ///< = y: ranks per row and rows per plane
  std::uint32_t z = 1; ///< planes
};

/// floor(sqrt(v)) in integers.
constexpr std::uint64_t isqrt(std::uint64_t v) {
  std::uint64_t r = 0;
  while ((r + 1) * (r + 1) <= v) {
    ++r;
  }
  return r;
}

/// floor(cbrt(v)) in integers.
constexpr std::uint64_t icbrt(std::uint64_t v) {
  std::uint64_t r = 0;
  while ((r + 1) * (r + 1) * (r + 1) <= v) {
    ++r;
  }
  return r;
}

/// SMPI's 2-D grid for p ranks, or nullopt where SMPI refuses.
constexpr std::optional<Grid2> smpi_grid2(std::uint32_t p) {
  if (p == 1) {
    return Grid2{1, 1};
  }
  // SMPI walks x = s, s+1, ..., p/2 (s = floor(sqrt(p))) to the first divisor. The same x is
  // p / d for the largest divisor d of p with 2 <= d <= p / s, found in O(sqrt(p)) steps.
  const std::uint64_t s = isqrt(p);
  for (std::uint64_t d = p / s; d >= 2; --d) {
    if (p % d == 0) {
      const auto a = static_cast<std::uint32_t>(d);
      const std::uint32_t b = p / a;
      return a < b ? Grid2{a, b} : Grid2{b, a};
    }
  }
  return std::nullopt;
}

/// SMPI's 3-D grid for p ranks, or nullopt where SMPI refuses.
constexpr std::optional<Grid3> smpi_grid3(std::uint32_t p) {
  if (p <= 2) {
    return Grid3{1, p}; // SMPI's loop bound p/3 is 0 here; 1 x 1 x p is what it uses for 3..7
  }
  // x^2 must divide p, so x <= sqrt(p): the walk stops there at the latest.
  const std::uint64_t last = std::min<std::uint64_t>(p / 3, isqrt(p));
  for (std::uint64_t x = icbrt(p); x <= last; ++x) {
    if (x > 0 && p % (x * x) == 0) {
      return Grid3{static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(p / (x * x))};
    }
  }
  return std::nullopt;
}

} // namespace collsim::algorithms::detail

#pragma once
// Irregular and imbalanced calls (issue 21) as users write them: how a v-collective's bytes are
// spread over the ranks (`--counts`, a study's `counts:`) and when the ranks enter the call
// (`--skew`, a study's `skew:`). Value types and their text forms only: analysis/imbalance.hpp
// turns them into per-rank counts and arrival times, io reads the files they name.

#include "collsim/core/units.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::core {

/// How the S bytes of a v-collective are spread over the ranks.
///   uniform          equal blocks (the remainder spread MPI-style), as the uniform collective;
///   zipf:S           block i weighs 1 / (i + 1)^S (rank 0 the heaviest), S >= 0;
///   normal:CV        weight 1 + CV z, z standard normal per rank (per pair for alltoallv),
///                    clipped at 0; seeded;
///   one:R            rank R holds everything (every other count 0);
///   file:PATH        the weights in a file: one line of p numbers, or p lines of p (alltoallv);
///   moe:PATH         an MoE router histogram: tokens per expert, one line (every rank routes
///                    alike) or one line per source rank; experts spread evenly over the ranks
///                    in order, a rank's share of S goes to the ranks that host the experts.
///   cart:DxD[xD][,periodic]  a neighbourhood exchange on a Cartesian grid (MPI_Cart_create
///                    with these dims): each rank sends S bytes to each of its 2 x ndims
///                    neighbours (MPI_Cart_shift by +-1), none across a non-periodic border;
///   graph:PATH       a neighbourhood exchange on a process graph: an edge list "SRC DST
///                    [WEIGHT]" per line, each edge S x WEIGHT bytes (repeated edges add up);
///   sparse:D         a random process graph: each rank sends S bytes to D distinct other
///                    ranks drawn uniformly (seeded), the pattern of a sparse matrix-vector
///                    product with a random sparsity.
/// For alltoallv every row (a rank's sendcounts) sums to S: every rank sends S bytes and the
/// weights say to whom. For cart and graph S is the size of one neighbour message (MPI's
/// sendcount), so a rank sends S x its out-degree. A trailing ",seed=N" seeds normal (default 1).
struct CountsSpec {
  enum class Kind : std::uint8_t {
    none,
    uniform,
    zipf,
    normal,
    one,
    file,
    moe,
    cart,
    graph,
    sparse
  };
  Kind kind = Kind::none;
  double parameter = 0.0;          ///< zipf exponent, normal coefficient of variation
  std::uint32_t rank = 0;          ///< one: the rank that holds everything; sparse: the out-degree
  std::uint64_t seed = 1;          ///< normal
  std::string path;                ///< file, moe, graph: as written
  std::vector<std::uint32_t> dims; ///< cart: the grid's extent per dimension
  bool periodic = false;           ///< cart: every dimension wraps around
  std::string text;                ///< the whole spec as written (titles, messages)
  /// file, moe, graph: the numbers of each non-comment line, filled by io::load_counts_data.
  std::vector<std::vector<double>> rows;
  bool operator==(const CountsSpec&) const = default;
};

/// When each rank enters the call, relative to the first.
///   none              all at once;
///   uniform:T         each rank at a uniform random time in [0, T]; seeded;
///   normal:T          each rank at |N(0, T)| (the first at 0 after shifting); seeded;
///   late:T[@R]        rank R (default: the last rank) T late, the others at 0;
///   late:T,k=K        K ranks (evenly spread, starting at the last) T late;
///   file:PATH         one time per rank ("1ms", "250 us", "0"), whitespace or line separated.
/// A trailing ",seed=N" seeds the random kinds (default 1).
struct SkewSpec {
  enum class Kind : std::uint8_t { none, uniform, normal, late, file };
  Kind kind = Kind::none;
  Seconds time{0.0};            ///< uniform: the range; normal: sigma; late: the delay
  std::uint32_t late_ranks = 1; ///< late: how many
  std::int64_t late_rank = -1;  ///< late with one rank: which (-1: the last)
  std::uint64_t seed = 1;
  std::string path;           ///< file: as written
  std::string text;           ///< the whole spec as written
  std::vector<Seconds> times; ///< file: filled by io::load_skew_data
  bool operator==(const SkewSpec&) const = default;
};

/// Parses a counts spec; the error names what was expected.
Parsed<CountsSpec> parse_counts_spec(std::string_view text);
/// Parses a skew spec; the error names what was expected.
Parsed<SkewSpec> parse_skew_spec(std::string_view text);

} // namespace collsim::core

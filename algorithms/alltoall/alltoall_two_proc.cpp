// Two-process alltoall (algorithms.md AA5): the two ranks swap the blocks meant for each other
// with one sendrecv and copy their own block.
//
// Source: Open MPI ompi_coll_base_alltoall_intra_two_procs (coll/tuned alltoall algorithm 5).
//
// Cost: a + (n/2) b, exact (the local copy is free on `uniform` and off the critical path).
//
// Schedule, rank r, other = 1 - r, b = n/2: send data[other b, +b) to other; receive
// data[n + other b, +b) from it; copy data[r b, +b) -> data[n + r b, +b). No dependencies: the
// three operations touch different bytes. Open MPI returns MPI_ERR_UNSUPPORTED_OPERATION on other
// communicator sizes; collsim refuses them.

#include "alltoall/alltoall_algorithms.hpp"
#include "generator_support.hpp"

#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "two_proc";

core::Schedule generate_two_proc(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t b = n / 2;
  core::Schedule s(make_header(req, 0, kName));
  s.reserve(6, 0);
  for (core::Rank r = 0; r < 2; ++r) {
    const core::Rank other = 1 - r;
    s.begin_rank(r);
    s.send(other, detail::data_range(other * b, b));
    s.recv(other, detail::data_range(n + other * b, b));
    s.copy(detail::data_range(r * b, b), detail::data_range(n + r * b, b));
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_alltoall_two_proc() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "the two ranks swap their blocks for each other in one sendrecv";
  a.source = "Open MPI ompi_coll_base_alltoall_intra_two_procs";
  a.aliases = {"ompi:5", "ompi:two_proc"};
  a.constraints = {"exactly 2 ranks", "bytes divisible by ranks"};
  a.check = [](const Request& req) -> std::string {
    if (req.ranks != 2) {
      return fmt::format("needs exactly 2 ranks (got {})", req.ranks);
    }
    if (req.bytes.value % 2 != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    return {};
  };
  a.generate = generate_two_proc;
  a.cost = [](const Request& req) -> std::optional<CostTerms> {
    return CostTerms{1.0, static_cast<double>(req.bytes.value / 2), 0.0};
  };
  a.cost_formula = "a + n/2 b";
  return a;
}

} // namespace collsim::algorithms

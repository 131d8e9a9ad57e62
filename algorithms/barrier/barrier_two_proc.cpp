// Two-process barrier (algorithms.md BA5): the two ranks exchange one zero-byte message.
//
// Source: Open MPI ompi_coll_base_barrier_intra_two_procs (coll/tuned barrier algorithm 5); SMPI
// "ompi_two_procs".
//
// Cost: a, exact.
//
// Schedule: each rank sends to the other and receives from it (MPI_Sendrecv); no dependencies:
// the receive brings the other rank's entry, which is all either needs. Open MPI returns
// MPI_ERR_UNSUPPORTED_OPERATION on other communicator sizes; collsim refuses them.

#include "barrier/barrier_algorithms.hpp"
#include "generator_support.hpp"

#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "two_proc";

core::Schedule generate_two_proc(const Request& req) {
  core::Schedule s(make_header(req, 0, kName));
  s.reserve(4, 0);
  const core::Range none = detail::data_range(0, 0);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, none);
    s.recv(1 - r, none);
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_barrier_two_proc() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::barrier;
  a.summary = "the two ranks exchange one zero-byte message";
  a.source = "Open MPI ompi_coll_base_barrier_intra_two_procs";
  a.aliases = {"ompi:5", "ompi:two_proc", "smpi:ompi_two_procs"};
  a.constraints = {"exactly 2 ranks"};
  a.check = [](const Request& req) -> std::string {
    if (req.ranks != 2) {
      return fmt::format("needs exactly 2 ranks (got {})", req.ranks);
    }
    return {};
  };
  a.generate = generate_two_proc;
  a.cost = [](const Request&) -> std::optional<CostTerms> { return CostTerms{1.0, 0.0, 0.0}; };
  a.cost_formula = "a (one zero-byte exchange)";
  return a;
}

} // namespace collsim::algorithms

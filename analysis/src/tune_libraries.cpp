// Which algorithms each library's tuning file can name, and the libraries' names and versions
// (tune.hpp): Open MPI's coll/tuned ids per version, MPICH's csel algorithm names per version.
// Split from tune.cpp, which runs the sweep.

#include "collsim/analysis/tune.hpp"

#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/core/errors.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

namespace collsim::analysis {

using core::CollectiveKind;
core::OmpiVersion ompi_version_from_name(std::string_view name) {
  if (name == "4.1") {
    return core::OmpiVersion::v4_1;
  }
  if (name == "5.0") {
    return core::OmpiVersion::v5_0;
  }
  throw core::UnknownNameError("Open MPI version", name, {"4.1", "5.0"});
}

core::MpichVersion mpich_version_from_name(std::string_view name) {
  if (name == "4.0") {
    return core::MpichVersion::v4_0;
  }
  if (name == "latest") {
    return core::MpichVersion::latest;
  }
  throw core::UnknownNameError("MPICH version", name, {"4.0", "latest"});
}

bool mpich_has_algorithm(core::MpichVersion version, CollectiveKind c, std::string_view name) {
  using List = std::vector<std::string_view>;
  // 4.0: the MPIR_<Coll>_intra_* functions Debian 12's libmpich12 (4.0.2) exports; its csel
  // parser knows exactly these ("unrecognized key" and an assertion for any other).
  // latest: algorithms.md 2.2 (src/mpi/coll/coll_algorithms.txt).
  const auto names = [&]() -> List {
    const bool v40 = version == core::MpichVersion::v4_0;
    switch (c) {
    case CollectiveKind::allgather:
      return v40 ? List{"brucks", "recursive_doubling", "ring"}
                 : List{"brucks",           "k_brucks",        "recursive_doubling", "ring",
                        "recexch_doubling", "recexch_halving", "circ_graph"};
    case CollectiveKind::allreduce:
      return v40 ? List{"recursive_doubling", "reduce_scatter_allgather", "smp"}
                 : List{"smp",
                        "recursive_doubling",
                        "recursive_multiplying",
                        "reduce_scatter_allgather",
                        "tree",
                        "recexch",
                        "ring",
                        "k_reduce_scatter_allgather",
                        "ccl"};
    case CollectiveKind::alltoall:
      return v40 ? List{"brucks", "pairwise", "pairwise_sendrecv_replace", "scattered"}
                 : List{"brucks", "k_brucks", "pairwise", "pairwise_sendrecv_replace", "scattered"};
    case CollectiveKind::barrier:
      return v40 ? List{"dissemination", "smp"} : List{"k_dissemination", "recexch", "smp"};
    case CollectiveKind::bcast:
      return v40 ? List{"binomial", "scatter_recursive_doubling_allgather",
                        "scatter_ring_allgather", "smp"}
                 : List{"binomial",
                        "scatter_recursive_doubling_allgather",
                        "scatter_ring_allgather",
                        "circ_graph",
                        "smp",
                        "tree",
                        "pipelined_tree"};
    case CollectiveKind::gather: return List{"binomial"};
    case CollectiveKind::reduce:
      return v40 ? List{"binomial", "reduce_scatter_gather", "smp"}
                 : List{"binomial", "circ_graph", "smp", "reduce_scatter_gather"};
    case CollectiveKind::reduce_scatter:
      return List{"noncommutative", "pairwise", "recursive_doubling", "recursive_halving"};
    case CollectiveKind::scatter: return List{"binomial"};
    }
    return List{};
  }();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string library_title(std::string_view library) {
  const std::string_view title = core::tuning_library_title(library);
  if (title.empty()) {
    throw core::UnknownNameError("library", library, {"mpich", "smpi", "nccl", "ucc"});
  }
  return std::string(title);
}

std::string_view to_string(core::OmpiVersion v) {
  return v == core::OmpiVersion::v4_1 ? "4.1" : "5.0";
}

bool ompi_has_algorithm(core::OmpiVersion version, CollectiveKind c, int id) {
  if (!ompi41_algorithm_name(c, id).empty()) {
    return true;
  }
  // 5.0.x's allgather_algorithms[] enum adds 7 sparbit; nothing else changed (formats.md d.3).
  return version == core::OmpiVersion::v5_0 && c == CollectiveKind::allgather && id == 7;
}

std::optional<int> ompi_algorithm_id(const algorithms::AlgorithmInfo& algo,
                                     core::OmpiVersion version) {
  constexpr std::string_view kPrefix = "ompi:";
  for (const std::string& alias : algo.aliases) {
    if (alias.rfind(kPrefix, 0) != 0) {
      continue;
    }
    const std::string_view digits = std::string_view(alias).substr(kPrefix.size());
    int id = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (ec == std::errc{} && ptr == digits.data() + digits.size() &&
        ompi_has_algorithm(version, algo.collective, id)) {
      return id;
    }
  }
  return std::nullopt;
}

} // namespace collsim::analysis

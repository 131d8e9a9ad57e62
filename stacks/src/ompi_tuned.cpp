// Open MPI 4.1 coll/tuned's algorithm ids and forced-algorithm parameters (ompi_tuned.hpp).
// Sources (Open MPI v4.1.4; facts transcribed, no code copied): the algorithm lists of
// ompi/mca/coll/tuned/coll_tuned_<coll>_decision.c (the enums behind `ompi_info --all`), the
// forced parameters' defaults there (segment size 0, fanouts ompi_coll_tuned_init_tree_fanout and
// _chain_fanout, 4: coll_tuned_component.c), coll_tuned_module.c (forced only with
// use_dynamic_rules), and the value parsing of opal/mca/base/mca_base_var.c (int_from_string) and
// mca_base_var_enum.c (enum_value_from_string, mca_base_var_enum_bool_vfs).

#include "collsim/stacks/ompi_tuned.hpp"

#include "env_support.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <strings.h>
#include <vector>

namespace collsim::stacks {
namespace {

using core::CollectiveKind;

constexpr std::array kAllreduce{
    OmpiAlgorithmId{1, "basic_linear"},       OmpiAlgorithmId{2, "nonoverlapping"},
    OmpiAlgorithmId{3, "recursive_doubling"}, OmpiAlgorithmId{4, "ring"},
    OmpiAlgorithmId{5, "segmented_ring"},     OmpiAlgorithmId{6, "rabenseifner"}};
constexpr std::array kBcast{OmpiAlgorithmId{1, "basic_linear"},
                            OmpiAlgorithmId{2, "chain"},
                            OmpiAlgorithmId{3, "pipeline"},
                            OmpiAlgorithmId{4, "split_binary_tree"},
                            OmpiAlgorithmId{5, "binary_tree"},
                            OmpiAlgorithmId{6, "binomial"},
                            OmpiAlgorithmId{7, "knomial"},
                            OmpiAlgorithmId{8, "scatter_allgather"},
                            OmpiAlgorithmId{9, "scatter_allgather_ring"}};
constexpr std::array kReduce{
    OmpiAlgorithmId{1, "linear"},      OmpiAlgorithmId{2, "chain"},
    OmpiAlgorithmId{3, "pipeline"},    OmpiAlgorithmId{4, "binary"},
    OmpiAlgorithmId{5, "binomial"},    OmpiAlgorithmId{6, "in-order_binary"},
    OmpiAlgorithmId{7, "rabenseifner"}};
constexpr std::array kAllgather{OmpiAlgorithmId{1, "linear"},
                                OmpiAlgorithmId{2, "bruck"},
                                OmpiAlgorithmId{3, "recursive_doubling"},
                                OmpiAlgorithmId{4, "ring"},
                                OmpiAlgorithmId{5, "neighbor"},
                                OmpiAlgorithmId{6, "two_proc"}};
constexpr std::array kReduceScatter{OmpiAlgorithmId{1, "non-overlapping"},
                                    OmpiAlgorithmId{2, "recursive_halving"},
                                    OmpiAlgorithmId{3, "ring"}, OmpiAlgorithmId{4, "butterfly"}};
constexpr std::array kAlltoall{OmpiAlgorithmId{1, "linear"}, OmpiAlgorithmId{2, "pairwise"},
                               OmpiAlgorithmId{3, "modified_bruck"},
                               OmpiAlgorithmId{4, "linear_sync"}, OmpiAlgorithmId{5, "two_proc"}};
constexpr std::array kGather{OmpiAlgorithmId{1, "basic_linear"}, OmpiAlgorithmId{2, "binomial"},
                             OmpiAlgorithmId{3, "linear_sync"}};
constexpr std::array kScatter{OmpiAlgorithmId{1, "basic_linear"}, OmpiAlgorithmId{2, "binomial"},
                              OmpiAlgorithmId{3, "linear_nb"}};
constexpr std::array kBarrier{OmpiAlgorithmId{1, "linear"},
                              OmpiAlgorithmId{2, "double_ring"},
                              OmpiAlgorithmId{3, "recursive_doubling"},
                              OmpiAlgorithmId{4, "bruck"},
                              OmpiAlgorithmId{5, "two_proc"},
                              OmpiAlgorithmId{6, "tree"}};

constexpr std::string_view kPrefix = "OMPI_MCA_coll_tuned_";

/// The forced parameters a collective's name may carry after coll_tuned_<coll>_algorithm.
enum class Field { algorithm, segsize, tree_fanout, chain_fanout };

struct Parsed {
  CollectiveKind collective = CollectiveKind::allreduce;
  Field field = Field::algorithm;
};

/// OMPI_MCA_coll_tuned_<coll>_algorithm[_segmentsize|_tree_fanout|_chain_fanout] read back.
std::optional<Parsed> parse_name(std::string_view name) {
  if (!name.starts_with(kPrefix)) {
    return std::nullopt;
  }
  const std::string_view rest = name.substr(kPrefix.size());
  for (const CollectiveKind c : core::kAllCollectives) {
    const std::string stem = fmt::format("{}_algorithm", ompi_mca_collective(c));
    if (!rest.starts_with(stem)) {
      continue;
    }
    const std::string_view tail = rest.substr(stem.size());
    if (tail.empty()) {
      return Parsed{c, Field::algorithm};
    }
    if (tail == "_segmentsize" && c != CollectiveKind::barrier) {
      return Parsed{c, Field::segsize};
    }
    if (tail == "_tree_fanout" && c != CollectiveKind::barrier) {
      return Parsed{c, Field::tree_fanout};
    }
    if (tail == "_chain_fanout" && c != CollectiveKind::barrier) {
      return Parsed{c, Field::chain_fanout};
    }
  }
  return std::nullopt;
}

[[noreturn]] void fail(const core::MpiSpec& mpi, const std::string& name, const std::string& msg) {
  detail::env_fail(mpi.env_pos, "mpi.env", name, msg);
}

/// An MCA integer (int_from_string: strtoull base 0, then an optional k, m or g suffix).
std::uint64_t mca_integer(const core::MpiSpec& mpi, const std::string& name,
                          const std::string& value) {
  const char* begin = value.c_str();
  char* end = nullptr;
  errno = 0;
  const std::uint64_t v = std::strtoull(begin, &end, 0);
  const std::string_view rest(end);
  const int shift = rest == "k" || rest == "K"   ? 10
                    : rest == "m" || rest == "M" ? 20
                    : rest == "g" || rest == "G" ? 30
                                                 : 0;
  const bool bad = end == begin || value.front() == '-' || errno != 0 ||
                   (shift == 0 && !rest.empty()) ||
                   (shift > 0 && v > (std::uint64_t{1} << (63 - shift)));
  if (bad) {
    fail(mpi, name,
         fmt::format("expected a whole number, optionally with k, m or g (powers of 1024, as Open "
                     "MPI reads MCA integers), got '{}'",
                     value));
  }
  return v << shift;
}

/// An MCA boolean (mca_base_var_enum_bool_vfs).
bool mca_boolean(const core::MpiSpec& mpi, const std::string& name, const std::string& value) {
  std::string_view v = value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
    v.remove_prefix(1);
  }
  for (const std::string_view t : {"true", "t", "enabled", "yes", "y"}) {
    if (v == t) {
      return true;
    }
  }
  for (const std::string_view f : {"false", "f", "disabled", "no", "n"}) {
    if (v == f) {
      return false;
    }
  }
  const std::string digits(v);
  char* end = nullptr;
  const long n = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0') {
    fail(mpi, name,
         fmt::format("expected a boolean (1, 0, true, false, yes, no, enabled or disabled), got "
                     "'{}'",
                     value));
  }
  return n != 0;
}

/// An algorithm of collective `c`: its id or its name (enum_value_from_string), 0 for "ignore".
int mca_algorithm(const core::MpiSpec& mpi, const std::string& name, const std::string& value,
                  CollectiveKind c) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 0);
  const bool integer = !value.empty() && *end == '\0';
  if ((integer && n == 0) || strcasecmp(value.c_str(), "ignore") == 0) {
    return 0;
  }
  for (const OmpiAlgorithmId& a : ompi41_algorithms(c)) {
    if ((integer && n == a.id) || strcasecmp(value.c_str(), std::string(a.name).c_str()) == 0) {
      return a.id;
    }
  }
  std::string list = "0 ignore";
  for (const OmpiAlgorithmId& a : ompi41_algorithms(c)) {
    list += fmt::format(", {} {}", a.id, a.name);
  }
  fail(mpi, name,
       fmt::format("Open MPI 4.1's coll/tuned has no {} algorithm '{}' (its ids: {})",
                   ompi_mca_collective(c), value, list));
}

std::string where(const core::MpiSpec& mpi, const std::string& name) {
  const auto it = mpi.env_pos.find(name);
  if (it == mpi.env_pos.end() || it->second.file.empty()) {
    return "";
  }
  return fmt::format(" ({}:{}:{})", it->second.file, it->second.line, it->second.column);
}

} // namespace

std::span<const OmpiAlgorithmId> ompi41_algorithms(CollectiveKind collective) {
  switch (collective) {
  case CollectiveKind::allreduce: return kAllreduce;
  case CollectiveKind::bcast: return kBcast;
  case CollectiveKind::reduce: return kReduce;
  case CollectiveKind::allgather: return kAllgather;
  case CollectiveKind::reduce_scatter: return kReduceScatter;
  case CollectiveKind::alltoall: return kAlltoall;
  case CollectiveKind::gather: return kGather;
  case CollectiveKind::scatter: return kScatter;
  case CollectiveKind::barrier: return kBarrier;
  }
  return {};
}

std::string_view ompi_mca_collective(CollectiveKind collective) {
  return core::to_string(collective); // coll/tuned's names are collsim's
}

const OmpiForced* OmpiTuning::forced_for(CollectiveKind collective) const {
  const auto it = forced.find(collective);
  return dynamic_rules && it != forced.end() && it->second.id != 0 ? &it->second : nullptr;
}

OmpiTuning read_ompi_tuning(const core::MpiSpec* mpi) {
  OmpiTuning out;
  if (mpi == nullptr) {
    return out;
  }
  for (const auto& [name, value] : mpi->env) {
    if (name == "OMPI_MCA_coll_tuned_use_dynamic_rules") {
      out.dynamic_rules = mca_boolean(*mpi, name, value);
      continue;
    }
    if (name == "OMPI_MCA_coll_tuned_dynamic_rules_filename") {
      out.rules_file = value;
      continue;
    }
    const std::optional<Parsed> p = parse_name(name);
    if (!p) {
      continue;
    }
    OmpiForced& f = out.forced[p->collective];
    switch (p->field) {
    case Field::algorithm:
      f.id = mca_algorithm(*mpi, name, value, p->collective);
      f.source = fmt::format("{} {}{}", name.substr(9), value, where(*mpi, name));
      break;
    case Field::segsize: f.segsize = mca_integer(*mpi, name, value); break;
    case Field::tree_fanout:
    case Field::chain_fanout: {
      const std::uint64_t n = mca_integer(*mpi, name, value);
      if (n > 1024) {
        fail(*mpi, name, fmt::format("expected a fanout of at most 1024, got '{}'", value));
      }
      (p->field == Field::tree_fanout ? f.tree_fanout : f.chain_fanout) =
          static_cast<std::uint32_t>(n);
      break;
    }
    }
  }
  return out;
}

bool is_ompi_tuning_variable(std::string_view name) {
  return name == "OMPI_MCA_coll_tuned_use_dynamic_rules" ||
         name == "OMPI_MCA_coll_tuned_dynamic_rules_filename" || parse_name(name).has_value();
}

} // namespace collsim::stacks

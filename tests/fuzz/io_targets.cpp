// Fuzz targets of the YAML loaders, the log parsers, rankfiles and the command-line values
// (targets.hpp).

#include "support.hpp"
#include "targets.hpp"

#include <collsim/core/imbalance.hpp>
#include <collsim/core/sizes.hpp>
#include <collsim/core/units.hpp>
#include <collsim/io/compare_loader.hpp>
#include <collsim/io/imbalance_files.hpp>
#include <collsim/io/logs.hpp>
#include <collsim/io/placement_study_loader.hpp>
#include <collsim/io/rankfile.hpp>
#include <collsim/io/scenario_loader.hpp>
#include <collsim/io/workload_loader.hpp>
#include <collsim/stacks/mpi_env.hpp>

namespace collsim::fuzz {

void scenario(std::string_view text) {
  const core::Scenario s = io::parse_scenario(text, "fuzz.yaml");
  // The MPI library's variables are read where a stack runs (stacks/mpi_env.hpp, ompi_tuned.hpp):
  // UCX's, libfabric's and Open MPI's coll/tuned values.
  (void)stacks::parse_mpi_env(&s.mpi);
}

void workload(std::string_view text) {
  (void)io::parse_workload(text, "fuzz.yaml");
}

void compare(std::string_view text) {
  (void)io::load_compare(scratch_file(text, ".yaml"));
}

void placement_study(std::string_view text) {
  (void)io::load_placement_study(scratch_file(text, ".yaml"));
}

void logs(std::string_view text) {
  (void)io::parse_log(text, "fuzz.log");
}

void rankfile(std::string_view text) {
  (void)io::parse_rankfile(text, "fuzz.rankfile");
}

// The first byte chooses the reader, the rest is the file.
void imbalance(std::string_view text) {
  if (text.empty())
    return;
  const auto mode = static_cast<unsigned char>(text.front()) % 3;
  text.remove_prefix(1);
  if (mode == 2) {
    (void)io::parse_arrival_times(text, "fuzz.txt");
  } else {
    (void)io::parse_count_rows(text, "fuzz.txt", mode == 1);
  }
}

// The first byte chooses the parser (each returns its error as a value), the rest is the text.
void cli_values(std::string_view text) {
  if (text.empty())
    return;
  const auto mode = static_cast<unsigned char>(text.front()) % 6;
  text.remove_prefix(1);
  switch (mode) {
  case 0: (void)core::parse_bytes(text); break;
  case 1: (void)core::parse_seconds(text); break;
  case 2: (void)core::parse_bandwidth(text); break;
  case 3: (void)core::parse_size_sweep(text); break;
  case 4: (void)core::parse_counts_spec(text); break;
  default: (void)core::parse_skew_spec(text); break;
  }
}

} // namespace collsim::fuzz

#pragma once
// The fuzz targets: one function per reader of user or tool files (docs/testing.md, "Fuzzing").
// Each takes the whole input as text and returns normally when the input was read or refused
// with a collsim error; anything else (another exception, a crash, a sanitizer report, an
// InternalError) is a finding. The same functions run under libFuzzer (libfuzzer_entry.cpp, one
// executable per target, COLLSIM_FUZZ=ON) and under the replay driver of every build
// (replay_main.cpp), which runs the seeds and every past finding (regressions/) in the default
// test suite.

#include <string_view>

namespace collsim::fuzz {

void scenario(std::string_view text);        // io::parse_scenario: scenario YAML
void workload(std::string_view text);        // io::parse_workload: workload YAML
void compare(std::string_view text);         // io::load_compare: `collsim compare` files
void placement_study(std::string_view text); // io::load_placement_study
void logs(std::string_view text);            // io::parse_log: nccl-tests, OSU, IMB
void schedule_text(std::string_view text);   // core::parse_schedule, then core::validate
void rankfile(std::string_view text);        // io::parse_rankfile: Open MPI rankfiles
void msccl(std::string_view text);           // io::read_msccl_xml, then the schedule it builds
void goal(std::string_view text);            // io::read_goal: LogGOPSim GOAL
void nccl_debug(std::string_view text);      // io::import_nccl_debug: NCCL_DEBUG=INFO logs
void kineto(std::string_view text);          // io::import_kineto_trace: PyTorch profiler JSON
void imbalance(std::string_view text);       // io::parse_count_rows / parse_arrival_times
void lstopo(std::string_view text);          // describe::read_lstopo_xml: hwloc XML
void nvidia_smi(std::string_view text);      // describe::parse_nvidia_smi_topo
void ibstat(std::string_view text);          // describe::parse_ibstat
void cli_values(std::string_view text);      // sizes, durations, bandwidths, counts and skew specs

/// Every target by name, in the order above (the replay driver's table; tests/fuzz/CMakeLists.txt
/// lists the same names).
struct Target {
  std::string_view name;
  void (*run)(std::string_view);
};
inline constexpr Target kTargets[] = {
    {"scenario", scenario}, {"workload", workload},
    {"compare", compare},   {"placement_study", placement_study},
    {"logs", logs},         {"schedule_text", schedule_text},
    {"rankfile", rankfile}, {"msccl", msccl},
    {"goal", goal},         {"nccl_debug", nccl_debug},
    {"kineto", kineto},     {"imbalance", imbalance},
    {"lstopo", lstopo},     {"nvidia_smi", nvidia_smi},
    {"ibstat", ibstat},     {"cli_values", cli_values},
};

/// Runs `target` on `text`: returns true when it read the input or refused it with an input
/// error (core::Error other than InternalError); false, after printing what escaped, otherwise.
bool run_one(const Target& target, std::string_view text);

} // namespace collsim::fuzz

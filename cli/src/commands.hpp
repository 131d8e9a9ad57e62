#pragma once
// The collsim subcommands. Each add_* registers its options on `app` and a callback that runs it.

#include <CLI/CLI.hpp>

namespace collsim::cli {

void add_run(CLI::App& app);
void add_sim(CLI::App& app);
void add_algorithms(CLI::App& app);
void add_stacks(CLI::App& app);
void add_schedule(CLI::App& app);
void add_import(CLI::App& app);
void add_verify(CLI::App& app);
void add_topology(CLI::App& app);
/// `collsim topology import` (command_topology_import.cpp), under `topology`.
void add_topology_import(CLI::App& topology);
/// `collsim workload import` (command_workload_import.cpp), under `workload`.
void add_workload_import(CLI::App& workload);
void add_ingest(CLI::App& app);
void add_validate(CLI::App& app);
void add_explain(CLI::App& app);
void add_calibrate(CLI::App& app);
void add_tune(CLI::App& app);
void add_check(CLI::App& app);
void add_expect(CLI::App& app);
void add_workload(CLI::App& app);
void add_compare(CLI::App& app);
/// `collsim place` (command_place.cpp): rank placement for a traffic pattern.
void add_place(CLI::App& app);
/// Only in builds with Qt6 Charts (COLLSIM_HAVE_CHARTS).
void add_plot(CLI::App& app);

} // namespace collsim::cli

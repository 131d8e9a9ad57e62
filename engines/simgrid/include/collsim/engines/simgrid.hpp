#pragma once
// The flow-level engine on SimGrid (ARCHITECTURE.md, "Engine"; docs/engines.md, "simgrid").
//
// Every participant (rank or in-network agent) becomes a SimGrid host, every link its messages
// cross a SimGrid link (bandwidth, latency, shared by the flows that cross it in that direction:
// the topology's links are directed, a full-duplex cable is two of them), every route our own
// route (Topology::route_between), and a switch's forwarding latency a latency-only link on the
// routes that pass through it. On a full mesh (`uniform`), each rank gets one injection and one
// ejection link into a non-blocking crossbar. Sends become SimGrid communications, reductions and
// copies executions priced by the device's rates, CPU overheads (LogGP o) executions too; program
// order, streams and dependencies are honoured exactly as by the loggp engine. Flows share link
// bandwidth by SimGrid's max-min model (Velho et al., ACM TOMACS 2013), which is what makes incast,
// shared NICs and tapered fat-trees slower here than on loggp.
//
// Isolation: SimGrid keeps one engine per process and may abort on bad input, so every run()
// happens in a forked child; the parent reads the result through a pipe. A child that fails or
// dies becomes an EngineError with SimGrid's message, and the caller carries on (sweeps run one
// child per point, in parallel).

#include "collsim/core/engine.hpp"
#include "collsim/core/scenario.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace collsim::engines {

class SimgridEngine final : public core::Engine {
public:
  SimgridEngine() = default;
  explicit SimgridEngine(core::SimgridSpec settings) : settings_(std::move(settings)) {}
  [[nodiscard]] std::string_view name() const override { return "simgrid"; }
  [[nodiscard]] core::RunResult run(const core::Schedule& schedule, const core::Topology& topology,
                                    const core::RunOptions& options) const override;
  [[nodiscard]] const core::SimgridSpec& settings() const { return settings_; }

private:
  core::SimgridSpec settings_;
};

/// SimGrid's version as the library reports it ("3.32").
std::string simgrid_version();

/// The SimGrid --cfg settings the engine applies for `settings` ("network/model:CM02", ...), in
/// the form smpirun takes them after --cfg=.
std::vector<std::string> simgrid_config(const core::SimgridSpec& settings);

/// Writes the SimGrid platform (XML, version 4.1) the engine builds for the first `ranks` ranks of
/// `topology`: hosts p0..p(ranks-1), one link per directed link routes use, explicit routes for
/// every ordered pair of ranks, so that `smpirun -platform FILE` runs on exactly the platform the
/// engine times. Hosts get `speed` flop/s.
void write_simgrid_platform(std::ostream& out, const core::Topology& topology, std::uint32_t ranks,
                            double speed = 1e9);

} // namespace collsim::engines

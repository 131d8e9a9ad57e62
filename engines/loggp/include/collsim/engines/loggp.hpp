#pragma once
// The LogGP discrete-event engine (Alexandrov et al., SPAA'95; execution rules after LogGOPSim,
// Hoefler et al., HPDC'10, algorithms.md section 4.2), without link contention.
//
// Per rank: a CPU (o per send), a send port and a receive port (full duplex: one message in and one
// out at a time). A message of m bytes on a route with latency L and bottleneck bandwidth 1/G:
//   the send starts at max(ready, CPU free, send port free); the CPU is busy o; injection takes mG;
//   the next send may start g after this one and not before injection ends;
//   the first byte reaches the receiver L after injection starts; the receive port takes it in
//   first come, first served (by arrival time), mG per message;
//   the receive completes o after both the data is in and the receive was issued; recv_reduce adds
//   m / reduce_bandwidth; local reduce and copy take m / their bandwidth.
// So an isolated message costs 2o + L + mG, and on `uniform` (o = g = 0) a step of m bytes costs
// alpha + m*beta (+ m*gamma when it reduces), as the alpha-beta-gamma formulas assume.
// Operations issue in program order; every event is ordered by (time, operation id): deterministic.

#include "collsim/core/engine.hpp"

namespace collsim::engines {

class LogGPEngine final : public core::Engine {
public:
  [[nodiscard]] std::string_view name() const override { return "loggp"; }
  [[nodiscard]] core::RunResult run(const core::Schedule& schedule, const core::Topology& topology,
                                    const core::RunOptions& options) const override;
};

} // namespace collsim::engines

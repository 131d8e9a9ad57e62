#pragma once
// OSU's point-to-point benchmarks as schedules: one iteration of osu_latency, osu_bw or osu_bibw
// between ranks 0 and 1, lowered under the point's stack and run on an engine like an algorithm's
// schedule, so that `collsim validate` predicts OSU's point-to-point logs (docs/validation.md,
// "OSU point-to-point logs").
//
// Source: OSU Micro-Benchmarks mpi/pt2pt (osu_latency.c, osu_bw.c, osu_bibw.c; the loops are the
// same in 5.x and 7.x). osu_latency: rank 0 sends and then receives, rank 1 receives and then
// sends; it prints the time of its round trips over twice their number. osu_bw: rank 0 posts
// window_size (64 unless -W) non-blocking sends, waits for them, then receives 4 bytes; rank 1
// posts as many receives, waits for them, then sends the 4 bytes; it prints size x window x
// iterations / time in MB/s. osu_bibw: each rank posts the window's receives, then its sends,
// then waits for all; it prints 2 x size x window x iterations / time. Each iteration starts
// when the last one has ended on both sides (the reply, the waits), so one iteration timed from
// rest is what the benchmark's average measures.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <cstdint>

namespace collsim::analysis {

/// The messages in flight per iteration of osu_bw and osu_bibw by default (window_size).
inline constexpr std::uint32_t kOsuWindow = 64;
/// The largest window a log's -W is taken from (OSU's own bound, MAX_REQ_NUM, is 1000 in 5.x).
inline constexpr std::uint32_t kMaxOsuWindow = 1000;

/// One iteration of `kind` (not Pt2pt::none) with messages of `bytes` between ranks 0 and 1 (0:
/// messages without data, osu_latency's first row); `window` (> 0) messages per direction for bw
/// and bibw.
core::Schedule osu_iteration(Pt2pt kind, core::Bytes bytes, std::uint32_t window);

/// What the stacks lower the iteration as: an MPI point-to-point pattern that reduces nothing
/// ("osu_latency", "osu_bw", "osu_bibw").
algorithms::AlgorithmInfo osu_algorithm(Pt2pt kind);

/// OSU's figure per message from the time of one iteration: half a round trip for latency, the
/// iteration over its window for bw, over both directions' windows for bibw.
core::Seconds osu_per_message(Pt2pt kind, core::Seconds iteration, std::uint32_t window);

/// The time per message collsim predicts for the point (p.pt2pt set, p.ranks 2) on `topology`
/// under `engine`'s stack: the iteration lowered and run, without a collective call's cost
/// (Protocol::launch: point-to-point calls have only their messages' overheads). Throws
/// UsageError where the engine prices closed forms only (analytic) or the stack runs no MPI.
core::Seconds predict_osu(const MeasuredPoint& p, const core::Topology& topology,
                          const EngineChoice& engine);

} // namespace collsim::analysis

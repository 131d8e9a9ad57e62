#pragma once
// Chrome trace of one engine run: the Trace Event Format (JSON object form) that Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Process 1 "ranks" has a track per participant
// (rank or in-network agent) with one complete event per operation; process 2 "links" has a track
// per link that carried a message, with one event per message crossing it. Times are printed in
// microseconds with picosecond resolution (6 decimals).
//
// Complete events on one track must nest (Perfetto drops those that overlap without nesting), but
// a rank's send and recv, or two messages sharing a link, routinely overlap. Such events go to
// extra tracks of the same participant or link ("rank 3 (2)", "gpu0 -> sw (2)"), packed first-fit
// so that no two events of a track overlap; a run without overlaps has exactly one track each.

#include "collsim/core/engine.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <ostream>
#include <string>

namespace collsim::io {

/// What the trace's otherData names besides the schedule's own header.
struct TraceInfo {
  std::string engine;
  std::string algorithm; ///< empty: the schedule header's algorithm
  std::string scenario;
};

/// Writes a Chrome trace of one run of `schedule` on `topology`. Requires result.timeline (else
/// throws core::UsageError); uses result.message_timeline for the per-link tracks when it is not
/// empty and the topology is not a full mesh. Tracks and tids: participant p's first track is tid
/// p, link l's first track is tid l; extra tracks for overlapping events take the tids after the
/// last participant (or link). Throws core::InternalError for a timeline that does not fit the
/// schedule (an engine bug). The caller checks `out` for write errors.
void write_chrome_trace(std::ostream& out, const core::Schedule& schedule,
                        const core::Topology& topology, const core::RunResult& result,
                        const TraceInfo& info);

} // namespace collsim::io

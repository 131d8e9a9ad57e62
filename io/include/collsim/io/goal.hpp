#pragma once
// LogGOPSim's GOAL text (issue 22; docs/interchange.md): collsim schedules exported for
// LogGOPSim, and GOAL schedules (Schedgen's, LogGOPSim's examples, collsim's own) imported.
//
// The format, from LogGOPSim's one grammar (src/LogGOPSim/txt2bin.re; ../shared/reference/
// interchange.md section 3): `num_ranks N`, then `rank R { ... }` blocks for R = 0..N-1 in order;
// inside, one operation per line, `[LABEL:] send Sb to R [tag T] [cpu C] [nic K]`,
// `[LABEL:] recv Sb from R [tag T] [cpu C] [nic K]`, `[LABEL:] calc T [cpu C]`, and dependency
// lines `A requires B` (A starts after B completes) and `A irequires B` (after B starts); labels
// are rank-local and defined before use; `//` and `/* */` comments. Sizes are bytes, calc times
// are LogGOPSim's time unit (ns by default). Textual order means nothing to LogGOPSim.

#include "collsim/core/collective.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/units.hpp"

#include <string>
#include <string_view>

namespace collsim::io {

/// How local work becomes GOAL `calc` time (GOAL moves no data: a reduction or a copy is time on
/// the rank's cpu). 0: free (calc 0).
struct GoalExportOptions {
  core::Bandwidth reduce_bandwidth{0.0}; ///< bytes reduced per second (a device's 1/gamma)
  core::Bandwidth copy_bandwidth{0.0};   ///< bytes copied per second
};

/// `s` as GOAL that LogGOPSim reads: every participant (ranks, then in-network agents) a GOAL
/// rank; send/recv with their bytes and tag 0 (collsim matches first-in first-out per ordered
/// pair, which is MPI matching with one tag); recv_reduce a recv and a `calc` that requires it;
/// reduce, copy and calc a `calc` (ns, rounded up); each operation `irequires` the one before it
/// in its issue stream (collsim's program order: it issues after that one issued) and `requires`
/// its dependencies; the stream is the `cpu`. Each operation is preceded by a `// collsim:`
/// comment with its collsim text, and the file by the schedule's header, so that read_goal gives
/// back the same schedule (buffers and ranges included); LogGOPSim skips comments.
std::string write_goal(const core::Schedule& s, const GoalExportOptions& options = {});

/// What a GOAL file without collsim's comments cannot say.
struct GoalImportOptions {
  core::CollectiveKind collective = core::CollectiveKind::allreduce; ///< the header's collective
  core::Bytes bytes{0};           ///< the header's size (informational)
  double seconds_per_unit = 1e-9; ///< a calc's time unit (LogGOPSim's default: ns)
  std::string algorithm = "goal"; ///< the header's algorithm name
};

/// Parses GOAL text. A file that carries collsim's `// collsim:` comments (write_goal's) gives
/// back that schedule exactly, after checking that every GOAL operation agrees with its comment.
/// Any other GOAL file becomes a schedule without data: each send and receive of a rank moves its
/// bytes through a region of `data` of its own, one after the other in issue order (GOAL has no
/// buffers, so only matching and deadlock can be checked, not the collective's result), calc keeps
/// its time, `requires` are dependencies, a rank's operations are issued in an order that respects
/// `requires` and `irequires` (file order among the rest), and `cpu` is the issue stream. Errors
/// (syntax, an undefined label, a dependency cycle, a receive from any source, tags that collsim's
/// in-order matching would pair differently) are ScheduleError "name:line:column: error: ...".
struct GoalImport {
  core::Schedule schedule;
  /// True when the file carried collsim's comments: the schedule has its buffers and ranges, so
  /// check_semantics applies; false: matching and deadlock only (core::validate).
  bool with_data = false;
};
GoalImport read_goal(std::string_view text, std::string_view name = "<goal>",
                     const GoalImportOptions& options = {});

} // namespace collsim::io

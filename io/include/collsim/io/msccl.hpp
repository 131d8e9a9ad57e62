#pragma once
// MSCCL XML algorithm files (issue 22; docs/interchange.md): the format of the MSCCL runtimes
// for NCCL and RCCL, which msccl-tools (MSCCLang), TACCL, TE-CCL and TACOS write.
//
// The format has no written specification; two runtime parsers define it (../shared/reference/
// interchange.md section 1, from msccl-tools' ir_to_xml and the MSCCL executor's
// src/misc/msccl/msccl_parser.cc and msccl_kernel.cu): `<algo>` with one `<gpu>` per rank, each
// with thread blocks `<tb id send recv chan>` whose `<step s type srcbuf srcoff dstbuf dstoff cnt
// depid deps hasdep>` run in document order. Messages match first-in first-out per (sender,
// receiver, channel); a step waits for another thread block of its GPU through (depid, deps).

#include "collsim/core/collective.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

/// One `<step>`. Offsets and counts are in chunks; -1 where unused.
struct MscclStep {
  enum class Type { s, r, rcs, rrs, rrc, rrcs, cpy, re, nop };
  Type type = Type::nop;
  char srcbuf = 'i'; ///< 'i' (input), 'o' (output) or 's' (scratch)
  char dstbuf = 'i';
  std::int64_t srcoff = -1;
  std::int64_t dstoff = -1;
  std::int64_t cnt = 1;
  std::int64_t depid = -1; ///< the thread block waited for (same GPU), -1: none
  std::int64_t deps = -1;  ///< its step
  bool hasdep = false;     ///< raises the thread block's flag when done
  std::uint32_t line = 0;  ///< where the step is, for messages
};

struct MscclThreadBlock {
  std::int64_t send = -1; ///< the peer its sends go to, -1: none
  std::int64_t recv = -1; ///< the peer its receives come from
  std::uint32_t chan = 0;
  std::vector<MscclStep> steps;
  std::uint32_t line = 0;
};

struct MscclGpu {
  std::uint64_t i_chunks = 0;
  std::uint64_t o_chunks = 0;
  std::uint64_t s_chunks = 0;
  std::vector<MscclThreadBlock> tbs; ///< by id
};

/// A parsed and structurally checked MSCCL XML algorithm.
struct MscclProgram {
  std::string file; ///< as named in messages
  std::string name;
  std::string coll; ///< as the file spells it
  /// The collsim collective; nullopt for `custom` (and the runtime's send/recv/alltoallv), which
  /// have no postcondition.
  std::optional<core::CollectiveKind> collective;
  std::string proto; ///< Simple, LL or LL128
  std::uint32_t ngpus = 0;
  std::uint32_t nchannels = 0;
  std::uint64_t nchunksperloop = 0;
  bool inplace = true;
  /// The runtime's size window [min_bytes, max_bytes) (0: unbounded above); MSCCL's defaults
  /// when the file gives none.
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::vector<MscclGpu> gpus;
  std::vector<std::string> warnings; ///< "file:line: warning: ..."
};

/// Parses MSCCL XML (both runtime dialects) with pugixml and checks it as the runtimes do, and
/// more: contiguous thread block ids, peers in range and never the GPU itself, one thread block
/// per (peer, channel) and direction, a send (receive) peer for every sending (receiving) step,
/// offsets within the buffers' chunk counts, `cnt` at most 71, dependencies on existing steps of
/// other thread blocks, nop-chains as the runtime accepts them, equal message counts and sizes
/// on both ends of every (sender, receiver, channel) connection, and no dependency cycle. Errors
/// are ScheduleError "file:line:column: error: ..."; warnings (more than 64 steps in a thread
/// block, a reducing receive whose src and dst differ) go to `warnings`.
MscclProgram read_msccl_xml(std::string_view text, std::string_view name = "<msccl>");

/// How an MSCCL program becomes a collsim schedule for one message size.
struct MscclBuildOptions {
  core::Bytes bytes{0}; ///< the message size S (nccl-tests' convention, MSCCL's total bytes)
  /// The wire protocol the schedule carries (the caller's NCCL protocol for the file's `proto`;
  /// default: the name only).
  std::optional<core::Protocol> protocol;
  /// true: the runtime's tiling (loops of tiles of NCCL's protocol buffer, `cnt` split by the
  /// tile); false: one message per step of cnt chunks ("flat").
  bool tiles = true;
  /// The header's algorithm name (default: the file's `name`, else "msccl").
  std::string algorithm;
};

/// Why `program` cannot run at `bytes` ("" when it can): the element count must be a positive
/// multiple of nchunksperloop (in bytes here).
std::string msccl_size_refusal(const MscclProgram& program, core::Bytes bytes);

/// A built schedule and, per operation, the step it came from.
struct MscclBuilt {
  core::Schedule schedule;
  struct Origin {
    std::uint32_t tb = 0;
    std::uint32_t step = 0;
    std::uint32_t iteration = 0;
  };
  std::vector<Origin> origins;  ///< by operation id
  std::uint32_t iterations = 1; ///< the runtime's loop count L
};

/// The schedule: rank g runs GPU g's thread blocks, each an issue stream (tb id) whose messages
/// carry its channel as their tag. The input, output and scratch buffers map onto `data` and
/// `tmp` as the in-place collective lays them out (input and output alias for allreduce; MSCCL
/// allgather's input chunk k is output chunk rank * i_chunks + k); scratch is `tmp`. Each step is
/// one to three operations (runtime reading: `src` is the local operand, `dst` the local result):
/// s send, r recv, rcs recv + send, rrc recv_reduce (after a copy when src != dst), rrcs the same
/// plus a send, rrs a recv_reduce into src and a send when no other step of the GPU reads src
/// (else into a staging range of tmp after a copy: the runtime writes nothing locally), cpy copy,
/// re reduce, nop a zero-time calc. A step waits for the previous step of its thread block and
/// for the first step at or after (depid, deps) that raises its flag. With tiles, each of the L
/// loop iterations runs every thread block's steps once on its slice of every chunk. Throws
/// UsageError when the size is refused (msccl_size_refusal).
MscclBuilt build_msccl_schedule(const MscclProgram& program, const MscclBuildOptions& options);

/// Rewrites a check's problems ("rank R lN (...)") to name the GPU, thread block and step:
/// "... [gpu R tb T step S, file:line]".
std::string msccl_annotate(const MscclProgram& program, const MscclBuilt& built,
                           const std::string& problem);

/// Checks a built MSCCL schedule as every import does: `validate` (matching, deadlock, races
/// between thread blocks), reads of bytes nothing wrote, and the collective's result (none for a
/// custom collective). "" when it passes, else the problems one per line, each naming the GPU,
/// thread block, step and line (msccl_annotate).
std::string msccl_problems(const MscclProgram& program, const MscclBuilt& built);

/// What write_msccl_xml needs beyond the schedule.
struct MscclExportOptions {
  std::string proto = "Simple";
  /// The size window the runtime loads the file for (0: unbounded).
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
};

/// `s` as MSCCL XML both runtimes load: chunks are the schedule's ranges at the granularity of
/// the greatest common divisor of every offset and length; one thread block per (rank, stream,
/// send peer, receive peer, tag); cross-block dependencies as (depid, deps) plus nop steps.
/// Throws UsageError when the schedule cannot be said in MSCCL (agents, calc, a collective MSCCL
/// lacks, more than 71 chunks in a step, a message between ranges the two buffers lay out
/// differently).
std::string write_msccl_xml(const core::Schedule& s, const MscclExportOptions& options = {});

/// The schedule a write_msccl_xml file carries in its `<!-- collsim:` comment (nullopt when it
/// has none), after checking it against the XML: same collective and ranks, and built at the
/// schedule's size without tiles, the XML moves the same data (per rank, the same sends, receives,
/// copies and reductions of the same ranges). A disagreement is a ScheduleError naming the rank.
std::optional<core::Schedule> msccl_embedded_schedule(std::string_view text,
                                                      const MscclProgram& program);

} // namespace collsim::io

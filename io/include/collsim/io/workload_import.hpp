#pragma once
// Workloads from what a run already records (docs/workload-format.md, "Importing a workload"):
// NCCL's per-call debug lines (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) and PyTorch profiler
// traces. The result is workload YAML text, which io::parse_workload reads like a hand-written
// file.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace collsim::io {

struct NcclDebugImport {
  std::string name = "imported";
  /// The process whose calls are taken, "host:pid"; empty: the first one in the log. Every rank
  /// logs every call it makes, so one process's lines are its rank's step (divided among its
  /// GPUs when it drives several, as nccl-tests -g does).
  std::string process;
  /// The log covers this many steps: calls per step = calls in the log / steps.
  std::uint32_t steps = 1;
  std::string command; ///< for the header comment
};

/// One distinct call of the log: the phase it becomes.
struct ImportedCall {
  std::string op; ///< NCCL's name: AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, Send
  std::string collective; ///< collsim's: allreduce, bcast, reduce, allgather, reduce_scatter
  std::uint64_t count = 0;
  std::string dtype; ///< nccl-tests' name (float, bfloat16, ...)
  std::uint32_t nranks = 0;
  std::uint64_t bytes = 0; ///< nccl-tests' S: count x dtype, x nranks for AllGather, ReduceScatter
  std::uint64_t calls = 0; ///< in the log
  std::uint32_t first_line = 0;
};

struct NcclDebugSummary {
  std::string process;                ///< the process taken, host:pid
  std::vector<std::string> others;    ///< the other processes in the log
  std::uint32_t ranks_in_process = 1; ///< the GPUs (devices) it drives
  std::uint64_t lines = 0;            ///< collective lines of that process
  std::uint64_t empty_calls = 0;      ///< calls with count 0, left out
  std::vector<ImportedCall> calls;    ///< in order of first appearance
  std::string yaml;                   ///< the workload
};

/// Reads NCCL_DEBUG=INFO output (`host:pid:tid [dev] NCCL INFO AllReduce: opCount ... count N
/// datatype D op O root R comm C [nranks=N] stream S`, the format of NCCL's src/enqueue.cc) and
/// writes a workload with one phase per distinct collective, count, data type and communicator
/// size. Errors (core::LogParseError) carry file:line:column.
NcclDebugSummary import_nccl_debug(const std::string& text, const std::string& file,
                                   const NcclDebugImport& options);

struct KinetoImport {
  std::string name = "imported";
  /// The trace covers this many steps; 0: the number of distinct ProfilerStep#N annotations in
  /// it (1 when it has none).
  std::uint32_t steps = 0;
  std::string command; ///< for the header comment
};

struct KinetoSummary {
  std::uint32_t rank = 0;          ///< distributedInfo.rank
  std::uint32_t world = 0;         ///< distributedInfo.world_size (0 when the trace does not say)
  std::uint32_t steps = 1;         ///< the steps the calls were divided by
  std::uint64_t without_sizes = 0; ///< record_param_comms events without arguments
  std::map<std::string, std::uint64_t> skipped; ///< calls left out, by what they are
  std::vector<ImportedCall> calls;
  std::string yaml;
};

/// Reads a PyTorch profiler trace (Kineto Chrome trace JSON, .json or .json.gz) and writes a
/// workload with one phase per distinct collective, size and group size of its
/// `record_param_comms` events (PyTorch 2.1 and later record the sizes). Errors
/// (core::LogParseError) carry file:line:column where the JSON is bad.
KinetoSummary import_kineto_trace(const std::string& path, const KinetoImport& options);

} // namespace collsim::io

// collsim-probe: times MPI collectives on the machine where it runs, the way OSU Micro-Benchmarks
// 7.3 does (c/mpi/collective/blocking/osu_allreduce.c and siblings), and prints OSU's tables
// behind a header that describes the run (ranks, nodes, ranks per node, MPI library, forced
// algorithm), for `collsim ingest` and `collsim calibrate`.
//
// Per size: a barrier, `warmup` untimed calls, then `iterations` timed calls, each followed by an
// untimed MPI_Barrier (none for barrier itself, as osu_barrier); each rank's latency is its mean
// time per call; rank 0 prints the average, minimum and maximum over ranks (MPI_Reduce SUM, MIN,
// MAX). Buffers as OSU: MPI_CHAR filled with 1 by default; with --datatype float the send buffers
// hold 1e8, 1, -1e8, 1, ... so that a reduction's rounded result depends on its order (what
// --print-sum shows). Roots are rank 0.

#include "collsim/core/errors.hpp"
#include "collsim/probe/probe_format.hpp"
#include "collsim/probe/probe_options.hpp"
#include "probe_describe.hpp"
#include "probe_mpit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <mpi.h>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace collsim::probe {
namespace {

using core::CollectiveKind;

/// Prints on rank 0 only, a line at a time, flushed so that partial output survives a crash.
class Printer {
public:
  explicit Printer(bool active) : active_(active) {}
  void line(std::string_view text) const {
    if (!active_) {
      return;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

private:
  bool active_;
};

/// An MPI call failed while timing: the other ranks may be stuck in the collective, so the rank
/// that saw it reports and aborts the job.
void check_mpi(int rc, std::string_view call, std::uint64_t bytes) {
  if (rc == MPI_SUCCESS) {
    return;
  }
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int len = 0;
  MPI_Error_string(rc, text.data(), &len);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "collsim-probe: error: rank %d: %.*s failed at %llu bytes: %.*s\n", rank,
               static_cast<int>(call.size()), call.data(), static_cast<unsigned long long>(bytes),
               len, text.data());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/// A page-aligned buffer (OSU aligns to the page too).
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes) : bytes_(bytes) {
    const std::size_t rounded = std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096);
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(4096, rounded)));
    if (!data_) {
      throw std::bad_alloc();
    }
    std::memset(data_.get(), 0, rounded);
  }
  [[nodiscard]] std::byte* data() const { return data_.get(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t bytes_ = 0;
};

/// The order-sensitive float pattern: 1e8 + 1 rounds to 1e8 in single precision.
constexpr std::array<float, 4> kFloatPattern{1e8F, 1.0F, -1e8F, 1.0F};

void fill_send(const Buffer& b, ProbeDatatype type, int rank) {
  if (type == ProbeDatatype::mpi_char) {
    std::memset(b.data(), 1, b.bytes());
    return;
  }
  const std::size_t n = b.bytes() / sizeof(float);
  for (std::size_t j = 0; j < n; ++j) {
    const float v = kFloatPattern[(static_cast<std::size_t>(rank) + j) % kFloatPattern.size()];
    std::memcpy(b.data() + j * sizeof(float), &v, sizeof v);
  }
}

struct NodeLayout {
  int nodes = 1;
  int min_per_node = 1;
  int max_per_node = 1;
};

/// Nodes are the shared-memory domains of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
NodeLayout node_layout(int rank) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_size = 0;
  int local_rank = 0;
  MPI_Comm_size(node, &local_size);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  NodeLayout out;
  int leader = local_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &out.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&local_size, &out.min_per_node, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&local_size, &out.max_per_node, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

/// The first line of MPI_Get_library_version.
std::string library_version() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int len = 0;
  MPI_Get_library_version(text.data(), &len);
  std::string s(text.data(), static_cast<std::size_t>(std::max(len, 0)));
  s = s.substr(0, s.find('\n'));
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\r' || s.back() == '\t' || s.back() == '\0')) {
    s.pop_back();
  }
  return s;
}

/// OSU 7.x reduce_scatter counts: num_elements spread over ranks, the first ones take the rest.
std::vector<int> reduce_scatter_counts(std::uint64_t elements, int ranks) {
  std::vector<int> counts(static_cast<std::size_t>(ranks), 0);
  const auto p = static_cast<std::uint64_t>(ranks);
  for (std::uint64_t i = 0; i < p; ++i) {
    counts[i] = elements < p ? (i < elements ? 1 : 0)
                             : static_cast<int>(elements / p + (i < elements % p ? 1 : 0));
  }
  return counts;
}

/// One collective's buffers, sized for the largest size.
struct Buffers {
  Buffer send;
  Buffer recv;
};

Buffers allocate(CollectiveKind c, std::uint64_t max_bytes, int rank, int ranks,
                 ProbeDatatype type) {
  const auto p = static_cast<std::size_t>(ranks);
  const std::size_t n = max_bytes;
  const bool root = rank == 0;
  Buffers b;
  switch (c) {
  case CollectiveKind::allreduce:
  case CollectiveKind::reduce:
  case CollectiveKind::reduce_scatter: b = {Buffer(n), Buffer(n)}; break;
  case CollectiveKind::bcast: b = {Buffer(n), Buffer()}; break;
  case CollectiveKind::allgather: b = {Buffer(n), Buffer(n * p)}; break;
  case CollectiveKind::alltoall: b = {Buffer(n * p), Buffer(n * p)}; break;
  case CollectiveKind::gather: b = {Buffer(n), Buffer(root ? n * p : 0)}; break;
  case CollectiveKind::scatter: b = {Buffer(root ? n * p : 0), Buffer(n)}; break;
  case CollectiveKind::barrier: break;
  }
  if (b.send.data() != nullptr) {
    fill_send(b.send, type, rank);
  }
  return b;
}

struct Timing {
  double avg_us = 0.0;
  double min_us = 0.0;
  double max_us = 0.0;
};

/// The checksum of rank 0's result: element count, sum and FNV-1a of the bytes.
std::string check_line(std::uint64_t bytes, const std::byte* data, std::size_t elements,
                       ProbeDatatype type) {
  std::uint32_t hash = 2166136261U;
  double sum = 0.0;
  const std::size_t element_bytes = datatype_size(type);
  for (std::size_t j = 0; j < elements; ++j) {
    if (type == ProbeDatatype::mpi_float) {
      float v = 0.0F;
      std::memcpy(&v, data + j * element_bytes, sizeof v);
      sum += v;
    } else {
      sum += static_cast<signed char>(data[j]);
    }
  }
  for (std::size_t k = 0; k < elements * element_bytes; ++k) {
    hash = (hash ^ static_cast<std::uint8_t>(data[k])) * 16777619U;
  }
  return fmt::format("# check: size {}: rank 0's result has {} elements, sum {}, fnv1a {:08x}",
                     bytes, elements, sum, hash);
}

class Bench {
public:
  Bench(const ProbeOptions& options, MPI_Comm comm, int rank, int ranks)
      : o_(options), comm_(comm), rank_(rank), ranks_(ranks), out_(rank == 0),
        type_(options.datatype == ProbeDatatype::mpi_float ? MPI_FLOAT : MPI_CHAR) {}

  /// Prints the header lines, then times `c` and prints its OSU table.
  void run(CollectiveKind c, const std::vector<std::string>& header) {
    for (const std::string& line : header) {
      out_.line(line);
    }
    out_.line(""); // OSU's print_preamble starts with an empty line
    out_.line(osu_banner(c));
    if (c != CollectiveKind::barrier) {
      std::array<char, MPI_MAX_OBJECT_NAME> name{};
      int len = 0;
      MPI_Type_get_name(type_, name.data(), &len);
      out_.line(fmt::format("# Datatype: {}.",
                            std::string_view(name.data(), static_cast<std::size_t>(len))));
    }
    out_.line(osu_column_header(c, o_.full));
    if (c == CollectiveKind::barrier) {
      Buffers none;
      const Timing t = time(c, 0, none, {});
      out_.line(osu_row(std::nullopt, t.avg_us, t.min_us, t.max_us, o_.iterations, o_.full));
      return;
    }
    const std::vector<std::uint64_t> sizes = probe_sizes(o_);
    Buffers b = allocate(c, o_.max_bytes, rank_, ranks_, o_.datatype);
    std::vector<std::string> checks;
    for (const std::uint64_t bytes : sizes) {
      const std::uint64_t elements = bytes / datatype_size(o_.datatype);
      const std::vector<int> counts = c == CollectiveKind::reduce_scatter
                                          ? reduce_scatter_counts(elements, ranks_)
                                          : std::vector<int>{};
      const Timing t = time(c, bytes, b, counts);
      out_.line(osu_row(bytes, t.avg_us, t.min_us, t.max_us, probe_iterations(o_, bytes), o_.full));
      if (o_.print_sum && rank_ == 0) {
        checks.push_back(check(c, bytes, elements, b, counts));
      }
    }
    for (const std::string& line : checks) {
      out_.line(line);
    }
  }

private:
  Timing time(CollectiveKind c, std::uint64_t bytes, const Buffers& b,
              const std::vector<int>& counts) {
    const int n = static_cast<int>(bytes / datatype_size(o_.datatype));
    void* s = b.send.data();
    void* r = b.recv.data();
    const auto call = [&]() -> std::pair<int, const char*> {
      switch (c) {
      case CollectiveKind::allreduce:
        return {MPI_Allreduce(s, r, n, type_, MPI_SUM, comm_), "MPI_Allreduce"};
      case CollectiveKind::reduce:
        return {MPI_Reduce(s, r, n, type_, MPI_SUM, 0, comm_), "MPI_Reduce"};
      case CollectiveKind::bcast: return {MPI_Bcast(s, n, type_, 0, comm_), "MPI_Bcast"};
      case CollectiveKind::allgather:
        return {MPI_Allgather(s, n, type_, r, n, type_, comm_), "MPI_Allgather"};
      case CollectiveKind::reduce_scatter:
        return {MPI_Reduce_scatter(s, r, counts.data(), type_, MPI_SUM, comm_),
                "MPI_Reduce_scatter"};
      case CollectiveKind::alltoall:
        return {MPI_Alltoall(s, n, type_, r, n, type_, comm_), "MPI_Alltoall"};
      case CollectiveKind::gather:
        return {MPI_Gather(s, n, type_, r, n, type_, 0, comm_), "MPI_Gather"};
      case CollectiveKind::scatter:
        return {MPI_Scatter(s, n, type_, r, n, type_, 0, comm_), "MPI_Scatter"};
      case CollectiveKind::barrier: return {MPI_Barrier(comm_), "MPI_Barrier"};
      }
      return {MPI_SUCCESS, ""};
    };
    const std::uint32_t iterations =
        c == CollectiveKind::barrier ? o_.iterations : probe_iterations(o_, bytes);
    check_mpi(MPI_Barrier(comm_), "MPI_Barrier", bytes);
    double timer = 0.0;
    for (std::uint32_t i = 0; i < o_.warmup + iterations; ++i) {
      const double start = MPI_Wtime();
      const auto [rc, name] = call();
      const double stop = MPI_Wtime();
      check_mpi(rc, name, bytes);
      if (c != CollectiveKind::barrier) {
        check_mpi(MPI_Barrier(comm_), "MPI_Barrier", bytes);
      }
      if (i >= o_.warmup) {
        timer += stop - start;
      }
    }
    const double latency = timer * 1e6 / iterations;
    Timing t;
    double sum = 0.0;
    check_mpi(MPI_Reduce(&latency, &t.min_us, 1, MPI_DOUBLE, MPI_MIN, 0, comm_), "MPI_Reduce",
              bytes);
    check_mpi(MPI_Reduce(&latency, &t.max_us, 1, MPI_DOUBLE, MPI_MAX, 0, comm_), "MPI_Reduce",
              bytes);
    check_mpi(MPI_Reduce(&latency, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm_), "MPI_Reduce", bytes);
    t.avg_us = sum / ranks_;
    return t;
  }

  std::string check(CollectiveKind c, std::uint64_t bytes, std::uint64_t elements, const Buffers& b,
                    const std::vector<int>& counts) const {
    const auto p = static_cast<std::uint64_t>(ranks_);
    switch (c) {
    case CollectiveKind::bcast: return check_line(bytes, b.send.data(), elements, o_.datatype);
    case CollectiveKind::reduce_scatter:
      return check_line(bytes, b.recv.data(), static_cast<std::size_t>(counts[0]), o_.datatype);
    case CollectiveKind::allgather:
    case CollectiveKind::alltoall:
    case CollectiveKind::gather: return check_line(bytes, b.recv.data(), elements * p, o_.datatype);
    default: return check_line(bytes, b.recv.data(), elements, o_.datatype);
    }
  }

  const ProbeOptions& o_;
  MPI_Comm comm_;
  int rank_;
  int ranks_;
  Printer out_;
  MPI_Datatype type_;
};

/// A communicator to time on: a fresh duplicate, so that algorithms forced through MPI_T apply,
/// returning errors instead of aborting so that the failing call is named.
class TimingComm {
public:
  TimingComm() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~TimingComm() { MPI_Comm_free(&comm_); }
  TimingComm(const TimingComm&) = delete;
  TimingComm& operator=(const TimingComm&) = delete;
  [[nodiscard]] MPI_Comm get() const { return comm_; }

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

void run(const ProbeOptions& o, int rank, int ranks) {
  if (ranks < 2) {
    throw core::UsageError("needs at least 2 ranks, got 1: start it with mpirun -np "
                           "N, mpiexec -n N or srun -n N");
  }
  const NodeLayout layout = node_layout(rank);
  if (!o.describe_path.empty()) {
    // Rank 0 describes its node; every rank learns whether that worked before anything is timed.
    std::string error;
    int ok = 1;
    if (rank == 0) {
      std::vector<std::string> warnings;
      try {
        write_node_description(o.describe_path, layout.nodes, describe_options(o), warnings);
      } catch (const core::Error& e) {
        error = e.what();
        ok = 0;
      }
      for (const std::string& w : warnings) {
        std::fprintf(stderr, "collsim-probe: warning: %s\n", w.c_str());
      }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok == 0) {
      throw core::UsageError(rank == 0 ? error : "--describe failed on rank 0");
    }
  }
  std::vector<std::string> header{
      probe_header_line(ranks, layout.nodes, layout.min_per_node, layout.max_per_node),
      "# MPI library: " + library_version(), "# options: " + describe_options(o),
      fmt::format("# format: OSU Micro-Benchmarks {} tables; size in bytes per rank, latency in us "
                  "(each rank's mean per call, then average, minimum and maximum over ranks)",
                  kOsuFormatVersion)};
  if (!o.describe_path.empty()) {
    header.push_back("# node: " + o.describe_path +
                     " (collsim-probe --describe: rank 0's node as a collsim scenario)");
  }
  if (o.ompi_algorithms.empty()) {
    const TimingComm comm;
    Bench bench(o, comm.get(), rank, ranks);
    for (const CollectiveKind c : o.collectives) {
      bench.run(c, header);
    }
    return;
  }
  const ControlVariables cvars;
  const OmpiAlgorithmForcing forcing(cvars);
  // Resolve every id first, so that a bad one fails before anything is timed.
  std::vector<std::vector<ForcedAlgorithm>> plan;
  for (const std::string& token : o.ompi_algorithms) {
    std::vector<ForcedAlgorithm> step;
    for (const CollectiveKind c : o.collectives) {
      step.push_back(forcing.resolve(c, token));
    }
    plan.push_back(std::move(step));
  }
  const std::vector<std::string> notes = forcing.competing_components(o.collectives);
  for (const std::vector<ForcedAlgorithm>& step : plan) {
    for (const ForcedAlgorithm& a : step) {
      forcing.apply(a);
    }
    const TimingComm comm; // created after the writes: coll/tuned reads them at creation
    Bench bench(o, comm.get(), rank, ranks);
    for (const ForcedAlgorithm& a : step) {
      std::vector<std::string> lines = header;
      lines.push_back(OmpiAlgorithmForcing::describe(a));
      lines.insert(lines.end(), notes.begin(), notes.end());
      bench.run(a.collective, lines);
    }
  }
}

} // namespace
} // namespace collsim::probe

int main(int argc, char** argv) {
  using namespace collsim::probe;
  const std::vector<std::string> args(argv + 1, argv + argc);
  ProbeOptions options;
  std::string usage_error;
  try {
    options = parse_probe_options(args);
  } catch (const collsim::core::Error& e) {
    usage_error = e.what();
  }
  if (usage_error.empty() && !options.ompi_algorithms.empty()) {
    // Read-only through MPI_T: set the way mpirun's --mca would, before the library reads it.
    setenv(kDynamicRulesEnv, "1", 1);
  }
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int code = 0;
  const auto fail = [&](std::string_view message, int exit_code) {
    if (rank == 0) {
      std::fprintf(stderr, "collsim-probe: error: %.*s\n", static_cast<int>(message.size()),
                   message.data());
    }
    code = exit_code;
  };
  if (!usage_error.empty()) {
    fail(usage_error, 2);
  } else if (options.help) {
    if (rank == 0) {
      std::fputs(probe_usage().c_str(), stdout);
    }
  } else if (options.version) {
    if (rank == 0) {
      std::printf("collsim-probe %s\n", std::string(probe_version()).c_str());
    }
  } else {
    try {
      run(options, rank, ranks);
    } catch (const collsim::core::Error& e) {
      fail(e.what(), e.is_input_error() ? 2 : 1);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr,
                   "collsim-probe: error: rank %d: out of memory for the buffers (try a "
                   "smaller --sizes MAX)\n",
                   rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  std::fflush(stdout);
  MPI_Finalize();
  return code;
}

// Measured logs as validation input (measured_logs.hpp).

#include "collsim/analysis/measured_logs.hpp"

#include "collsim/analysis/osu_pt2pt.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <string_view>
#include <vector>

namespace collsim::analysis {
namespace {

/// The stack a run's launch command and MPI library line show (docs/stacks.md): Open MPI with
/// coll/ucc enabled (`--mca coll_ucc_enable 1` or OMPI_MCA_coll_ucc_enable=1) runs UCC, with
/// UCC's NCCL team layer where UCC_TL_NCCL_TUNE or UCC_CL_BASIC_TLS names nccl; Open MPI 4.1
/// named by the log is openmpi-4.1 (staging device buffers through the host, sending host buffers
/// over UCX's eager and rendezvous protocols); coll/hcoll enabled
/// (`--mca coll_hcoll_enable 1`) is HPC-X's Open MPI with HCOLL; Open MPI 5.0, MPICH 4 and
/// MVAPICH2-GDR named by the log are openmpi-5.0, mpich-4 and mvapich2-gdr. Other libraries have no
/// stack yet: "".
std::string log_stack(const std::string& command, const std::string& mpi_library) {
  const bool ucc = command.find("coll_ucc_enable 1") != std::string::npos ||
                   command.find("coll_ucc_enable=1") != std::string::npos;
  if (command.find("coll_hcoll_enable 1") != std::string::npos ||
      command.find("coll_hcoll_enable=1") != std::string::npos) {
    return "hpcx";
  }
  if (ucc) {
    const bool nccl = command.find("UCC_TL_NCCL_TUNE") != std::string::npos ||
                      (command.find("UCC_CL_BASIC_TLS") != std::string::npos &&
                       command.find("nccl") != std::string::npos);
    return nccl ? "openmpi-4.1+ucc+nccl" : "openmpi-4.1+ucc";
  }
  if (mpi_library.find("Open MPI") != std::string::npos &&
      mpi_library.find("4.1") != std::string::npos) {
    return "openmpi-4.1"; // device buffers staged; host buffers over UCX's tag protocols
  }
  if (mpi_library.find("Open MPI") != std::string::npos &&
      mpi_library.find("v5.0") != std::string::npos) {
    return "openmpi-5.0";
  }
  // MVAPICH2-GDR names itself in MPI_Get_library_version ("MVAPICH2-GDR Version ...").
  if (mpi_library.find("MVAPICH2-GDR") != std::string::npos) {
    return "mvapich2-gdr";
  }
  // MPI_Get_library_version of MPICH 4: "MPICH Version: 4.x.y" (derivatives such as Intel MPI
  // and MVAPICH name themselves and run other algorithms).
  if (mpi_library.starts_with("MPICH Version:")) {
    const std::size_t v = mpi_library.find_first_not_of(" \t", 14);
    if (v != std::string::npos && mpi_library.compare(v, 2, "4.") == 0) {
      return "mpich-4";
    }
  }
  return "";
}

/// OSU's point-to-point benchmark an operation names (io's OSU reader: "latency", "bw", "bibw").
Pt2pt pt2pt_of(std::string_view operation) {
  return operation == "latency" ? Pt2pt::latency
         : operation == "bw"    ? Pt2pt::bw
         : operation == "bibw"  ? Pt2pt::bibw
                                : Pt2pt::none;
}

/// osu_bw's and osu_bibw's window from the launch line, in getopt_long's spellings of OSU 7's
/// option (`-W N`, `-WN`, `--window-size N`, `--window-size=N`), else window_size's default. The
/// last one given wins, as with getopt.
std::uint32_t osu_window(const std::string& command) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0; at < command.size();) {
    const std::size_t first = command.find_first_not_of(" \t", at);
    if (first == std::string::npos) {
      break;
    }
    const std::size_t last = std::min(command.find_first_of(" \t", first), command.size());
    words.emplace_back(command.data() + first, last - first);
    at = last;
  }
  std::uint32_t window = kOsuWindow;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    std::string_view value;
    if ((w == "-W" || w == "--window-size") && i + 1 < words.size()) {
      value = words[i + 1];
    } else if (w.starts_with("--window-size=")) {
      value = w.substr(14);
    } else if (w.starts_with("-W") && w.size() > 2) {
      value = w.substr(2);
    } else {
      continue;
    }
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec == std::errc() && end == value.data() + value.size() && n > 0 && n <= kMaxOsuWindow) {
      window = n;
    }
  }
  return window;
}

} // namespace

// A log's measurement in collsim's conventions, or nothing when collsim has no model for it.
// nccl-tests' size column already is S (the whole gathered vector for allgather and friends);
// OSU and IMB print one rank's block for allgather, alltoall, gather and scatter, so S is p times
// it (formats.md, sections on OSU and IMB semantics).
std::optional<MeasuredPoint> to_measured_point(const io::ParsedLog& log, const io::Measurement& m) {
  const Pt2pt pt2pt = pt2pt_of(m.collective ? "" : m.operation);
  // OSU's bandwidth tests print MB/s: the time per message is the message over it.
  const double time_us =
      pt2pt == Pt2pt::bw || pt2pt == Pt2pt::bibw
          ? (m.algbw_GBps > 0.0 ? 1e-3 * static_cast<double>(m.bytes) / m.algbw_GBps : 0.0)
          : m.time_us;
  if ((!m.collective && pt2pt == Pt2pt::none) || time_us <= 0.0) {
    return std::nullopt;
  }
  MeasuredPoint p;
  p.pt2pt = pt2pt;
  const std::string& benchmark = log.runs.at(m.run).benchmark;
  // nccl-tests and OSU's NCCL/RCCL family ("# OSU NCCL Allreduce ...") measure NCCL; the rest MPI.
  p.library = log.format == io::LogFormat::nccl_tests ||
                      benchmark.find("NCCL") != std::string::npos ||
                      benchmark.find("RCCL") != std::string::npos
                  ? Library::nccl
                  : Library::mpi;
  p.collective = m.collective ? *m.collective : core::CollectiveKind::bcast;
  p.element_bytes = m.count > 0 ? static_cast<std::uint32_t>(m.bytes / m.count) : 0;
  p.mpi_library = log.runs.at(m.run).mpi_version;
  // Open MPI with HCOLL or UCC enabled on the command line runs their collectives, not coll/tuned.
  const std::string& command = log.runs.at(m.run).command_line;
  for (const char* component : {"hcoll", "ucc"}) {
    if (command.find(fmt::format("coll_{}_enable 1", component)) != std::string::npos) {
      p.mpi_library += fmt::format(" (coll/{} enabled)", component);
    }
  }
  if (p.library == Library::mpi) {
    // OSU's buffers are host memory unless `-d cuda` (or another accelerator) says otherwise;
    // IMB's always are.
    const bool device = !log.runs.at(m.run).accelerator.empty();
    p.buffers = device ? "device" : "host";
    p.stack = log_stack(command, log.runs.at(m.run).mpi_version);
  }
  p.ranks = m.ranks != 0 ? m.ranks : log.runs.at(m.run).ranks;
  if (pt2pt != Pt2pt::none) {
    p.ranks = p.ranks != 0 ? p.ranks : 2; // OSU: "This test requires exactly two processes"
    p.window = osu_window(command);
  }
  std::uint64_t bytes = m.bytes;
  using core::CollectiveKind;
  const bool per_rank_block =
      p.collective == CollectiveKind::allgather || p.collective == CollectiveKind::alltoall ||
      p.collective == CollectiveKind::gather || p.collective == CollectiveKind::scatter;
  if (log.format != io::LogFormat::nccl_tests && per_rank_block) {
    bytes *= p.ranks;
  }
  p.bytes = core::Bytes{bytes};
  p.time = core::Seconds{time_us * 1e-6};
  p.in_place = m.in_place;
  p.gpus_per_thread = log.runs.at(m.run).gpus_per_thread;
  p.nccl_version = log.runs.at(m.run).nccl_version;
  p.file = m.file;
  p.line = m.line;
  for (const io::EnvSetting& e : log.runs.at(m.run).mca) {
    p.mca[e.name] = e.value;
    p.mca_pos[e.name] = core::SourcePos{log.file, static_cast<std::uint32_t>(e.line),
                                        static_cast<std::uint32_t>(e.column)};
  }
  for (const io::EnvSetting& e : log.runs.at(m.run).env) {
    p.nccl_env[e.name] = e.value;
    p.nccl_env_pos[e.name] = core::SourcePos{log.file, static_cast<std::uint32_t>(e.line),
                                             static_cast<std::uint32_t>(e.column)};
  }
  return p;
}

MeasuredLogs read_measured_logs(const std::vector<std::string>& paths, const io::LogShape& shape) {
  MeasuredLogs out;
  for (const std::string& path : paths) {
    io::ParsedLog log = io::load_log(path);
    io::apply_log_shape(log, shape);
    for (const auto& w : log.warnings) {
      out.warnings.push_back(io::format_warning(log, w));
    }
    for (const io::Measurement& m : log.measurements) {
      const io::LogInfo& run = log.runs.at(m.run);
      if (m.in_place && run.out_of_place) {
        continue;
      }
      if (auto p = to_measured_point(log, m)) {
        out.points.push_back(std::move(*p));
      } else {
        out.ignored.push_back(
            fmt::format("{}:{}: {} has no collsim model", m.file, m.line, m.operation));
      }
    }
  }
  return out;
}

} // namespace collsim::analysis

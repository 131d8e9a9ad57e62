// OSU micro-benchmarks output, OMB 5.x to 7.x: collectives (avg latency; -f adds min, max and
// iterations), osu_latency, osu_bw and osu_bibw, CUDA/ROCm builds (`MPI-CUDA` in the banner,
// `# Send Buffer on DEVICE (D) ...`), and the `# Datatype:` line of 7.x, which may appear before
// or after the column titles and starts a new table when it repeats (-T all).
// Sources: OMB 5.3 mpi/collective/osu_coll.c, OMB 7.4 c/util/osu_util_mpi.c; formats.md section b.

#include "logs_common.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <map>

namespace collsim::io::logs {
namespace {

enum class Col : std::uint8_t { size, avg, min, max, iterations, bw, ignored };

/// "# OSU MPI-CUDA Reduce Latency Test v7.3".
struct Banner {
  std::size_t line = 0;
  std::string title;   ///< "OSU MPI-CUDA Reduce Latency Test"
  std::string version; ///< "7.3"
  std::string accelerator;
  std::string operation; ///< empty: a benchmark collsim does not read
  std::string name;      ///< "Reduce Latency Test"
};

struct Row {
  std::size_t line = 0;
  std::uint64_t size = 0;
  double avg = 0.0;
  std::optional<double> min;
  std::optional<double> max;
  std::optional<std::uint64_t> iterations;
  double bw = 0.0; ///< GB/s (OSU prints MB/s, MB = 10^6 bytes)
};

struct Run {
  Banner banner;
  std::optional<Command> command;
  std::string datatype;
  std::string buffers;
  std::vector<Col> columns;
  bool reported_full_format = false;
  std::vector<Row> rows;
};

/// collsim-probe's first line (docs/probe.md): "# collsim-probe 1.0: ranks 4, nodes 1, ranks per
/// node 4", and its "# MPI library: ..." line. OSU itself never prints the rank count.
struct ProbeHeader {
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;
  std::string mpi_library;
};

/// The number after `key` in "ranks 4, nodes 1, ...", if any.
std::optional<std::uint32_t> count_after(std::string_view body, std::string_view key) {
  const std::vector<std::string_view> w = words(body);
  for (std::size_t k = 0; k + 1 < w.size(); ++k) {
    if (w[k] == key) {
      std::string_view v = w[k + 1];
      if (ends_with(v, ",")) {
        v.remove_suffix(1);
      }
      if (const auto n = to_u64(v); n && *n > 0 && *n <= 0xffffffffULL) {
        return static_cast<std::uint32_t>(*n);
      }
    }
  }
  return std::nullopt;
}

std::string operation_of(std::string_view name) {
  static const std::map<std::string, std::string_view> kNames{
      {"allreduce latency test", "allreduce"},
      {"reduce latency test", "reduce"},
      {"broadcast latency test", "bcast"},
      {"bcast latency test", "bcast"},
      {"allgather latency test", "allgather"},
      {"allgatherv latency test", "allgatherv"},
      {"all-to-all personalized exchange latency test", "alltoall"},
      {"all-to-allv personalized exchange latency test", "alltoallv"},
      {"gather latency test", "gather"},
      {"gatherv latency test", "gatherv"},
      {"scatter latency test", "scatter"},
      {"scatterv latency test", "scatterv"},
      {"reduce_scatter latency test", "reduce_scatter"},
      // MPI_Reduce_scatter_block is reduce_scatter with equal blocks, collsim's model of it.
      {"reduce_scatter_block latency test", "reduce_scatter"},
      {"barrier latency test", "barrier"},
      {"latency test", "latency"},
      {"bandwidth test", "bw"},
      {"bi-directional bandwidth test", "bibw"}};
  const auto it = kNames.find(lower(name));
  return it == kNames.end() ? std::string() : std::string(it->second);
}

bool is_point_to_point(std::string_view operation) {
  return operation == "latency" || operation == "bw" || operation == "bibw";
}

std::optional<Banner> banner_of(const Line& line) {
  const std::vector<std::string_view> w = words(line.body);
  if (w.size() < 4 || w[0] != "OSU" || w.back().size() < 2 || w.back()[0] != 'v' ||
      w.back()[1] < '0' || w.back()[1] > '9') {
    return std::nullopt;
  }
  Banner b;
  b.line = line.number;
  b.version = std::string(w.back().substr(1));
  // The family: "MPI", "MPI-CUDA", "MPI-ROCM", "MPI-CUDA MANAGED" (5.x), "NCCL" (7.x XCCL).
  const std::string_view family = w[1];
  std::size_t name_at = 2;
  if (const auto dash = family.find('-'); dash != std::string_view::npos) {
    b.accelerator = lower(family.substr(dash + 1));
  } else if (family == "NCCL") {
    b.accelerator = "cuda";
  } else if (family == "RCCL") {
    b.accelerator = "rocm";
  }
  if (w.size() > 4 && w[2] == "MANAGED") {
    b.accelerator += b.accelerator.empty() ? "managed" : " managed";
    name_at = 3;
  }
  for (std::size_t k = name_at; k + 1 < w.size(); ++k) {
    append_word(b.name, w[k]);
  }
  for (std::size_t k = 0; k + 1 < w.size(); ++k) {
    append_word(b.title, w[k]);
  }
  b.operation = operation_of(b.name);
  return b;
}

/// Column titles are separated by two or more blanks ("Avg Latency(us)   Min Latency(us)").
std::vector<Col> columns_of(std::string_view body) {
  std::vector<std::string> titles;
  std::string current;
  std::size_t blanks = 0;
  for (const char c : body) {
    if (c == ' ' || c == '\t') {
      blanks += c == '\t' ? 2 : 1; // a tab always separates titles
      continue;
    }
    if (blanks >= 2 && !current.empty()) {
      titles.push_back(current);
      current.clear();
    } else if (blanks == 1 && !current.empty()) {
      current += ' ';
    }
    blanks = 0;
    current += c;
  }
  if (!current.empty()) {
    titles.push_back(current);
  }
  std::vector<Col> cols;
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const std::string t = lower(titles[i]);
    if (i == 0 && starts_with(t, "size")) {
      cols.push_back(Col::size);
    } else if (starts_with(t, "min lat")) {
      cols.push_back(Col::min);
    } else if (starts_with(t, "max lat")) {
      cols.push_back(Col::max);
    } else if (t.find("tail") != std::string::npos) {
      cols.push_back(Col::ignored);
    } else if (t.find("latency") != std::string::npos) {
      cols.push_back(Col::avg);
    } else if (starts_with(t, "iterations")) {
      cols.push_back(Col::iterations);
    } else if (t.find("bandwidth") != std::string::npos || t == "mb/s") {
      cols.push_back(Col::bw);
    } else {
      cols.push_back(Col::ignored); // Validation, Messages/s, Transmit Size, ...
    }
  }
  return cols;
}

bool is_column_header(const Line& line) {
  const std::string_view b = line.body;
  return starts_with(b, "Size ") && (b.find("Latency") != std::string_view::npos ||
                                     b.find("Bandwidth") != std::string_view::npos ||
                                     b.find("MB/s") != std::string_view::npos);
}

const char* column_name(Col c) {
  switch (c) {
  case Col::size: return "size";
  case Col::avg: return "latency";
  case Col::min: return "min latency";
  case Col::max: return "max latency";
  case Col::iterations: return "iterations";
  case Col::bw: return "bandwidth";
  case Col::ignored: return "column";
  }
  return "column";
}

class Parser {
public:
  Parser(const std::vector<Line>& lines, const std::string& file)
      : lines_(lines), file_(file), warn_("OSU") {}

  ParsedLog parse() {
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      i += read_line(i) - 1;
    }
    close_run();
    out_.file = file_;
    out_.format = LogFormat::osu;
    out_.warnings = warn_.take();
    if (out_.measurements.empty()) {
      fail(file_, last_banner_line_ != 0 ? last_banner_line_ : 1, 1,
           "no OSU data rows found; expected lines like '1024                   11.73' (the size "
           "in bytes, then the latency in us or the bandwidth in MB/s)");
    }
    return std::move(out_);
  }

private:
  std::size_t read_line(std::size_t i) {
    const Line& line = lines_[i];
    if (line.blank() || line.fence) {
      return 1;
    }
    if (line.binary_column != 0) {
      warn_.skip(line);
      return 1;
    }
    const std::vector<std::string_view> w = words(line.body);
    if (line.comment && starts_with(line.body, "collsim-probe ")) {
      warn_.seen();
      const std::string_view after = std::string_view(line.body).substr(line.body.find(':') + 1);
      ProbeHeader h;
      h.ranks = count_after(after, "ranks").value_or(0);
      h.nodes = count_after(after, "nodes").value_or(0);
      if (h.ranks == 0) {
        warn_.add(line.number, "a collsim-probe header without a rank count ('ranks N'): the rank "
                               "count of its tables is unknown");
      }
      probe_ = h;
      return 1;
    }
    if (line.comment && probe_ && starts_with(line.body, "MPI library:")) {
      warn_.seen();
      probe_->mpi_library = excerpt(std::string_view(line.body).substr(12));
      while (!probe_->mpi_library.empty() && probe_->mpi_library.front() == ' ') {
        probe_->mpi_library.erase(0, 1);
      }
      return 1;
    }
    if (auto banner = banner_of(line)) {
      warn_.seen();
      close_run();
      last_banner_line_ = line.number;
      if (banner->operation.empty()) {
        warn_.add(line.number, fmt::format("unsupported OSU benchmark '{}': its table is skipped",
                                           excerpt(banner->name)));
      }
      run_ = Run{};
      run_->banner = std::move(*banner);
      run_->command = std::move(command_);
      command_.reset();
      return 1;
    }
    if (run_ && starts_with(line.body, "Datatype:") && w.size() > 1) {
      warn_.seen();
      if (!run_->rows.empty()) {
        restart_run();
      }
      std::string_view type = w[1];
      if (ends_with(type, ".")) {
        type.remove_suffix(1);
      }
      run_->datatype = excerpt(type);
      return 1;
    }
    if (run_ && starts_with(line.body, "Send Buffer on")) {
      // "Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)" -> "D D".
      warn_.seen();
      std::string placement;
      for (std::size_t open = line.body.find('('); open != std::string::npos;
           open = line.body.find('(', open + 1)) {
        const auto close = line.body.find(')', open);
        if (close != std::string::npos) {
          append_word(placement, std::string_view(line.body).substr(open + 1, close - open - 1));
        }
      }
      run_->buffers = excerpt(placement);
      return 1;
    }
    if (run_ && is_column_header(line)) {
      warn_.seen();
      if (!run_->rows.empty()) {
        restart_run();
      }
      run_->columns = columns_of(line.body);
      return 1;
    }
    const std::vector<std::string_view> fields = words(line.text);
    if (run_ && run_->banner.operation == "barrier" && !line.comment && fields.size() == 1 &&
        to_double(fields[0])) {
      // osu_barrier's one row is the average latency alone ("%17.2f" after "# Avg Latency(us)").
      warn_.seen();
      Row row;
      row.line = line.number;
      row.avg = *to_double(fields[0]);
      run_->columns = {Col::avg};
      run_->rows.push_back(row);
      return 1;
    }
    const bool row_like =
        !fields.empty() && to_u64(fields[0]) && (fields.size() == 1 || to_double(fields[1]));
    if (run_ && row_like && !line.comment) {
      read_row(fields, line);
      return 1;
    }
    std::size_t consumed = 1;
    if (auto cmd = command_at(lines_, i, consumed)) {
      warn_.seen();
      close_run();
      command_ = std::move(*cmd);
      return consumed;
    }
    if (!line.comment) {
      warn_.skip(line);
    }
    return 1;
  }

  /// A second table of the same benchmark (a new datatype or a repeated header).
  void restart_run() {
    Run next;
    next.banner = run_->banner;
    next.command = run_->command;
    next.columns = run_->columns;
    next.buffers = run_->buffers;
    close_run();
    run_ = std::move(next);
  }

  void read_row(const std::vector<std::string_view>& w, const Line& line) {
    Run& run = *run_;
    if (run.banner.operation.empty()) {
      warn_.seen(); // a row of an unsupported benchmark, already reported at its banner
      return;
    }
    if (run.columns.empty()) {
      run.columns = {Col::size, run.banner.operation == "bw" || run.banner.operation == "bibw"
                                    ? Col::bw
                                    : Col::avg};
    }
    // OMB 7.3 prints rows of -f (avg, min, max, iterations) under a header that names only the
    // average (open-mpi/ompi#12318): read the rows as what they are, and say so once.
    const std::vector<Col> plain{Col::size, Col::avg};
    if (w.size() == 5 && run.columns == plain) {
      run.columns = {Col::size, Col::avg, Col::min, Col::max, Col::iterations};
      warn_.add(line.number, "the rows have 5 columns but the header names 2: read as OSU -f "
                             "columns (average, minimum and maximum latency, iterations)");
    }
    const std::size_t expected = run.columns.size();
    if (w.size() < expected) {
      warn_.add(line.number, fmt::format("skipped a truncated row ({} of {} columns): '{}'",
                                         w.size(), expected, excerpt(line.text)));
      return;
    }
    if (w.size() > expected) {
      warn_.add(line.number, fmt::format("skipped a row with {} columns where the table has {}: "
                                         "'{}'",
                                         w.size(), expected, excerpt(line.text)));
      return;
    }
    warn_.seen();
    Row row;
    row.line = line.number;
    for (std::size_t k = 0; k < expected; ++k) {
      const Col col = run.columns[k];
      if (col == Col::ignored) {
        continue;
      }
      const std::optional<double> v = col == Col::size || col == Col::iterations ? std::nullopt
                                      : col == Col::bw ? to_double_scaled(w[k], 3)
                                                       : to_double(w[k]);
      if (col == Col::size) {
        row.size = *to_u64(w[k]);
        continue;
      }
      if (col == Col::iterations) {
        row.iterations = to_u64(w[k]);
        if (!row.iterations) {
          warn_.add(line.number, fmt::format("skipped a row whose iterations is not a number "
                                             "('{}')",
                                             excerpt(w[k])));
          return;
        }
        continue;
      }
      if (!v) {
        warn_.add(line.number, fmt::format("skipped a row whose {} is not a number ('{}')",
                                           column_name(col), excerpt(w[k])));
        return;
      }
      switch (col) {
      case Col::avg: row.avg = *v; break;
      case Col::min: row.min = *v; break;
      case Col::max: row.max = *v; break;
      case Col::bw: row.bw = *v; break;
      default: break;
      }
    }
    run.rows.push_back(row);
  }

  void close_run() {
    if (!run_) {
      return;
    }
    Run run = std::move(*run_);
    run_.reset();
    if (run.banner.operation.empty()) {
      return;
    }
    if (run.rows.empty()) {
      warn_.add(run.banner.line, "the table has no complete data row");
      return;
    }
    LogInfo info;
    info.format = LogFormat::osu;
    info.benchmark = run.banner.title;
    info.operation = run.banner.operation;
    info.operation_source = "benchmark header";
    info.collective = collective_of(info.operation);
    info.tool_version = run.banner.version;
    info.accelerator = run.banner.accelerator;
    info.buffers = run.buffers;
    info.line = run.banner.line;
    info.rows = run.rows.size();
    info.out_of_place = true;
    const bool reduction = info.operation == "allreduce" || info.operation == "reduce" ||
                           info.operation == "reduce_scatter";
    // OMB 5.x times reductions on MPI_FLOAT and prints bytes; 7.x defaults to MPI_CHAR and says
    // so in the "# Datatype:" line.
    info.datatype = !run.datatype.empty()                                    ? run.datatype
                    : reduction && std::atoi(run.banner.version.c_str()) < 7 ? "MPI_FLOAT"
                                                                             : "MPI_CHAR";
    if (run.command) {
      info.command = excerpt(run.command->text);
      info.command_line = excerpt(run.command->text, kCommandLineMax);
      info.mca = run.command->mca;
      if (const auto d = run.command->arg("-d")) {
        info.accelerator = excerpt(*d);
      }
      info.nodes = run.command->nodes.value_or(0);
      info.nodes_source = info.nodes == 0 ? "" : "launch command";
    }
    if (probe_) {
      if (info.nodes == 0 && probe_->nodes != 0) {
        info.nodes = probe_->nodes;
        info.nodes_source = "collsim-probe header";
      }
      info.mpi_version = probe_->mpi_library;
    }
    if (is_point_to_point(info.operation)) {
      info.ranks = 2;
      info.ranks_source = "point-to-point";
    } else if (run.command && run.command->processes) {
      info.ranks = *run.command->processes;
      info.ranks_source = "launch command";
    } else if (probe_ && probe_->ranks > 0) {
      info.ranks = probe_->ranks;
      info.ranks_source = "collsim-probe header";
    } else {
      warn_.add(run.banner.line, "the rank count is unknown: OSU does not print it and no launch "
                                 "command with a process count precedes the table");
    }
    const std::uint32_t element = type_size(info.datatype).value_or(0);
    const auto index = static_cast<std::uint32_t>(out_.runs.size());
    const bool bandwidth = info.operation == "bw" || info.operation == "bibw";
    for (const Row& r : run.rows) {
      Measurement m;
      m.operation = info.operation;
      m.collective = info.collective;
      m.bytes = r.size;
      m.count = element > 0 ? r.size / element : 0;
      m.type = info.datatype;
      m.redop = reduction ? "sum" : "none";
      m.root = info.collective && core::has_root(*info.collective) ? 0 : -1;
      m.ranks = info.ranks;
      m.time_us = bandwidth ? 0.0 : r.avg;
      m.min_time_us = r.min;
      m.max_time_us = r.max;
      m.iterations = r.iterations;
      m.algbw_GBps = r.bw;
      m.file = file_;
      m.line = r.line;
      m.run = index;
      out_.measurements.push_back(std::move(m));
    }
    out_.runs.push_back(std::move(info));
  }

  const std::vector<Line>& lines_;
  const std::string& file_;
  Warnings warn_;
  ParsedLog out_;
  std::optional<Command> command_;
  std::optional<Run> run_;
  std::size_t last_banner_line_ = 0;
  std::optional<ProbeHeader> probe_;
};

} // namespace

bool is_osu_banner(const Line& line) {
  return banner_of(line).has_value();
}

ParsedLog parse_osu(const std::vector<Line>& lines, const std::string& file) {
  return Parser(lines, file).parse();
}

} // namespace collsim::io::logs

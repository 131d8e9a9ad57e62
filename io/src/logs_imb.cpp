// Intel MPI Benchmarks (IMB-MPI1) output: one table per benchmark and process count, introduced
// by "# Benchmarking <Name>" and "# #processes = <P>". Columns are read by name, so collectives
// (t_min t_max t_avg), PingPong (t[usec] Mbytes/sec), Sendrecv and Barrier (no #bytes) all map.
// Sources: intel/mpi-benchmarks src_c/IMB_output.c, IMB_g_info.c; formats.md section c.

#include "logs_common.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::io::logs {
namespace {

enum class Col : std::uint8_t { bytes, repetitions, min, max, avg, bw, ignored };

struct Row {
  std::size_t line = 0;
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> repetitions;
  std::optional<double> min;
  std::optional<double> max;
  double avg = 0.0;
  double bw = 0.0; ///< GB/s (IMB prints Mbytes/sec, MB = 10^6 bytes)
};

struct Run {
  std::size_t line = 0;
  std::string name; ///< "Allreduce"
  std::optional<std::uint32_t> processes;
  std::vector<Col> columns;
  std::vector<Row> rows;
};

std::vector<Col> columns_of(const std::vector<std::string_view>& w) {
  std::vector<Col> cols;
  for (const std::string_view t : w) {
    if (t == "#bytes") {
      cols.push_back(Col::bytes);
    } else if (t == "#repetitions") {
      cols.push_back(Col::repetitions);
    } else if (starts_with(t, "t_min")) {
      cols.push_back(Col::min);
    } else if (starts_with(t, "t_max")) {
      cols.push_back(Col::max);
    } else if (starts_with(t, "t_avg") || starts_with(t, "t[")) {
      cols.push_back(Col::avg);
    } else if (t == "Mbytes/sec") {
      cols.push_back(Col::bw);
    } else {
      cols.push_back(Col::ignored); // Msg/sec, defects
    }
  }
  return cols;
}

/// "Allreduce" -> "allreduce"; "Multi-Bcast" -> "bcast"; "Reduce_scatter_block" ->
/// "reduce_scatter" (equal blocks: collsim's reduce_scatter).
std::string operation_of(std::string_view name) {
  std::string op = lower(name);
  if (starts_with(op, "multi-")) {
    op = op.substr(6);
  }
  if (op == "reduce_scatter_block") {
    op = "reduce_scatter";
  }
  return op;
}

/// The value after the ':' of "# MPI_Op : MPI_SUM".
std::string value_after_colon(std::string_view body) {
  const auto colon = body.find(':');
  if (colon == std::string_view::npos) {
    return "";
  }
  const auto w = words(body.substr(colon + 1));
  return w.empty() ? "" : excerpt(w.front());
}

class Parser {
public:
  Parser(const std::vector<Line>& lines, const std::string& file)
      : lines_(lines), file_(file), warn_("IMB-MPI1") {}

  ParsedLog parse() {
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      i += read_line(i) - 1;
    }
    close_run();
    out_.file = file_;
    out_.format = LogFormat::imb;
    out_.warnings = warn_.take();
    if (out_.measurements.empty()) {
      fail(file_, last_header_line_ != 0 ? last_header_line_ : 1, 1,
           "no IMB-MPI1 data rows found; expected lines like '            8        10000        "
           "24.06        30.77        27.94' (#bytes #repetitions t_min t_max t_avg)");
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
    const std::string_view body = line.body;
    const std::vector<std::string_view> w = words(body);
    if (const auto at = body.find("Intel(R) MPI Benchmarks"); at != std::string_view::npos) {
      warn_.seen();
      const auto v = words(body.substr(at + 23));
      if (!v.empty()) {
        std::string_view version = v.front();
        if (ends_with(version, ",")) {
          version.remove_suffix(1);
        }
        tool_version_ = excerpt(version);
      }
      return 1;
    }
    if (line.comment && starts_with(body, "MPI Version")) {
      mpi_version_ = value_after_colon(body);
      return 1;
    }
    if (line.comment && starts_with(body, "MPI_Datatype for reductions")) {
      reduction_type_ = value_after_colon(body);
      return 1;
    }
    if (line.comment && starts_with(body, "MPI_Datatype")) {
      type_ = value_after_colon(body);
      return 1;
    }
    if (line.comment && starts_with(body, "MPI_Op")) {
      op_ = value_after_colon(body);
      return 1;
    }
    if (line.comment && w.size() >= 2 && w[0] == "Benchmarking") {
      warn_.seen();
      close_run();
      pending_ = Run{};
      pending_.line = line.number;
      pending_.name = excerpt(w[1]);
      return 1;
    }
    if (line.comment && w.size() >= 3 && w[0] == "#processes" && w[1] == "=") {
      warn_.seen();
      if (const auto p = to_u64(w[2]); p && *p <= 0xffffffffULL) {
        pending_.processes = static_cast<std::uint32_t>(*p);
      }
      return 1;
    }
    if (is_imb_column_header(line)) {
      warn_.seen();
      close_run();
      last_header_line_ = line.number;
      run_ = pending_;
      if (run_->line == 0) {
        run_->line = line.number;
      }
      run_->columns = columns_of(words(line.text));
      return 1;
    }
    const std::vector<std::string_view> fields = words(line.text);
    if (run_ && !line.comment && !fields.empty() && to_u64(fields[0])) {
      read_row(fields, line);
      return 1;
    }
    std::size_t consumed = 1;
    if (auto cmd = command_at(lines_, i, consumed)) {
      warn_.seen();
      command_ = excerpt(cmd->text);
      command_line_ = excerpt(cmd->text, kCommandLineMax);
      mca_ = cmd->mca;
      return consumed;
    }
    if (!line.comment) {
      warn_.skip(line);
    }
    return 1;
  }

  void read_row(const std::vector<std::string_view>& w, const Line& line) {
    const std::vector<Col>& cols = run_->columns;
    // A failed sample prints text after #bytes (" out-of-mem.; needed X=...", " time-out.").
    if (w.size() > 1 && !to_double(w[1])) {
      warn_.add(line.number, fmt::format("skipped a row without a measurement (IMB reports a "
                                         "failed sample): '{}'",
                                         excerpt(line.text)));
      return;
    }
    if (w.size() < cols.size()) {
      warn_.add(line.number, fmt::format("skipped a truncated row ({} of {} columns): '{}'",
                                         w.size(), cols.size(), excerpt(line.text)));
      return;
    }
    if (w.size() > cols.size()) {
      warn_.add(line.number, fmt::format("skipped a row with {} columns where the table has {}: "
                                         "'{}'",
                                         w.size(), cols.size(), excerpt(line.text)));
      return;
    }
    Row row;
    row.line = line.number;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      if (cols[k] == Col::ignored) {
        continue;
      }
      if (cols[k] == Col::bytes || cols[k] == Col::repetitions) {
        const auto v = to_u64(w[k]);
        if (!v) {
          warn_.add(line.number,
                    fmt::format("skipped a row whose {} is not a number ('{}')",
                                cols[k] == Col::bytes ? "#bytes" : "#repetitions", excerpt(w[k])));
          return;
        }
        (cols[k] == Col::bytes ? row.bytes : row.repetitions.emplace()) = *v;
        continue;
      }
      const auto v = cols[k] == Col::bw ? to_double_scaled(w[k], 3) : to_double(w[k]);
      if (!v) {
        warn_.add(line.number, fmt::format("skipped a row whose time or bandwidth is not a "
                                           "number ('{}')",
                                           excerpt(w[k])));
        return;
      }
      switch (cols[k]) {
      case Col::min: row.min = *v; break;
      case Col::max: row.max = *v; break;
      case Col::avg: row.avg = *v; break;
      case Col::bw: row.bw = *v; break;
      default: break;
      }
    }
    warn_.seen();
    run_->rows.push_back(row);
  }

  void close_run() {
    if (!run_) {
      return;
    }
    Run run = std::move(*run_);
    run_.reset();
    if (run.rows.empty()) {
      warn_.add(run.line, "the table has no complete data row");
      return;
    }
    LogInfo info;
    info.format = LogFormat::imb;
    info.benchmark = run.name.empty() ? "IMB-MPI1" : "IMB-MPI1 " + run.name;
    info.operation = run.name.empty() ? "unknown" : operation_of(run.name);
    info.operation_source = "benchmark header";
    info.collective = collective_of(info.operation);
    info.tool_version = tool_version_;
    info.mpi_version = mpi_version_;
    info.command = command_;
    info.command_line = command_line_;
    info.mca = mca_;
    info.line = run.line;
    info.rows = run.rows.size();
    info.out_of_place = true;
    const bool reduction = info.collective && core::is_reduction(*info.collective);
    // IMB reduces MPI_FLOAT vectors of #bytes/4 elements and moves MPI_BYTE otherwise
    // (IMB_declare.h); the preamble names both when it is there.
    info.datatype = reduction ? (reduction_type_.empty() ? "MPI_FLOAT" : reduction_type_)
                              : (type_.empty() ? "MPI_BYTE" : type_);
    if (run.processes) {
      info.ranks = *run.processes;
      info.ranks_source = "#processes";
    } else {
      warn_.add(run.line, "the rank count is unknown: no '# #processes = N' line before the "
                          "table");
    }
    std::string redop = "none";
    if (reduction) {
      redop = op_.empty() ? "sum" : lower(op_);
      if (starts_with(redop, "mpi_")) {
        redop = redop.substr(4);
      }
    }
    const std::uint32_t element = type_size(info.datatype).value_or(0);
    const auto index = static_cast<std::uint32_t>(out_.runs.size());
    for (const Row& r : run.rows) {
      Measurement m;
      m.operation = info.operation;
      m.collective = info.collective;
      m.bytes = r.bytes;
      m.count = element > 0 ? r.bytes / element : 0;
      m.type = info.datatype;
      m.redop = redop;
      m.root = -1; // IMB rotates the root of rooted collectives from call to call
      m.ranks = info.ranks;
      m.time_us = r.avg;
      m.min_time_us = r.min;
      m.max_time_us = r.max;
      m.iterations = r.repetitions;
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
  std::string tool_version_;
  std::string mpi_version_;
  std::string type_;
  std::string reduction_type_;
  std::string op_;
  std::string command_;
  std::string command_line_;
  std::vector<EnvSetting> mca_;
  Run pending_;
  std::optional<Run> run_;
  std::size_t last_header_line_ = 0;
};

} // namespace

bool is_imb_column_header(const Line& line) {
  const auto w = words(line.text);
  if (w.size() < 3 || (w[0] != "#bytes" && w[0] != "#repetitions")) {
    return false;
  }
  return std::any_of(w.begin(), w.end(), [](std::string_view t) { return starts_with(t, "t"); });
}

ParsedLog parse_imb(const std::vector<Line>& lines, const std::string& file) {
  return Parser(lines, file).parse();
}

} // namespace collsim::io::logs

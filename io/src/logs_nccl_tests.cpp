// nccl-tests stdout (all_reduce_perf, all_gather_perf, ...), every header generation since 2016:
// columns are read from the table's own header line, so the old `error` column, the 2022 `root`
// and `#wrong` columns, `-I` and `-S` extra columns and the `cputime` of `-C 1` all map by name.
// Sources: NVIDIA/nccl-tests src/util.cu, src/common.cu, doc/PERFORMANCE.md; formats.md section a.

#include "logs_common.hpp"
#include "logs_nccl_tests_parts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace collsim::io::logs {
namespace {

using namespace nccl_tests_detail;

/// A count the run's banner says (`nThread N nGpus M`: `banner`) or, without a banner, its
/// command's `flag` (`-t`, `-g`); nullopt where neither says.
std::optional<std::uint64_t> launch_count(const Run& run, std::optional<std::uint32_t> banner,
                                          std::string_view flag) {
  if (banner) {
    return *banner;
  }
  if (run.pre.command) {
    if (const auto v = run.pre.command->arg(flag)) {
      return to_u64(*v);
    }
  }
  return std::nullopt;
}

class Parser {
public:
  Parser(const std::vector<Line>& lines, const std::string& file)
      : lines_(lines), file_(file), warn_("nccl-tests") {}

  ParsedLog parse() {
    lines_ = uncomment_nccl_tables(std::move(lines_), warn_);
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      i += read_line(i) - 1;
    }
    close_run();
    out_.file = file_;
    out_.format = LogFormat::nccl_tests;
    out_.warnings = warn_.take();
    if (out_.measurements.empty()) {
      fail(file_, last_header_line_ != 0 ? last_header_line_ : 1, 1,
           "no nccl-tests data rows found; expected lines like '           8             2     "
           "float     sum      -1    34.84    0.00    0.00       0    36.18    0.00    0.00       "
           "0'");
    }
    return std::move(out_);
  }

private:
  /// Reads lines_[i]; returns how many lines it consumed.
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
    if (starts_with(body, "nccl-tests version")) {
      start_preamble(line);
      if (w.size() > 2) {
        pre_.tool_version = std::string(w[2]);
      }
      for (const std::string_view x : w) {
        if (starts_with(x, "nccl-library=")) {
          if (const auto code = to_u64(x.substr(13))) {
            pre_.nccl_version = nccl_version_of_code(*code);
          }
        }
      }
      return 1;
    }
    if (starts_with(body, "Collective test starting:")) {
      start_preamble(line);
      if (w.size() > 3) {
        pre_.program = std::string(w[3]);
      }
      return 1;
    }
    if (starts_with(body, "Collective test concluded")) {
      warn_.seen();
      close_run();
      return 1;
    }
    if (starts_with(body, "nThread ")) {
      start_preamble(line);
      for (std::size_t k = 0; k + 1 < w.size(); ++k) {
        if (w[k] == "nThread") {
          pre_.threads = static_cast<std::uint32_t>(to_u64(w[k + 1]).value_or(0));
        } else if (w[k] == "nGpus") {
          pre_.gpus = static_cast<std::uint32_t>(to_u64(w[k + 1]).value_or(0));
        }
      }
      return 1;
    }
    if (body == "Using devices") {
      start_preamble(line);
      return 1;
    }
    if (!w.empty() && w[0] == "Rank" && read_device(w, line)) {
      return 1;
    }
    if (starts_with(body, "NCCL version ") && w.size() > 2) {
      warn_.seen();
      const std::string_view v = w[2].substr(0, w[2].find('+'));
      std::string& target = run_ && !pre_.any ? run_->pre.nccl_version : pre_.nccl_version;
      if (target.empty()) {
        target = std::string(v);
      }
      return 1;
    }
    if (starts_with(body, "Out of bounds values")) {
      warn_.seen();
      if (run_) {
        run_->footer = true;
      }
      return 1;
    }
    if (starts_with(body, "Avg bus bandwidth")) {
      warn_.seen();
      if (run_) {
        run_->footer = true;
      }
      close_run();
      return 1;
    }
    if (const auto columns = columns_from_names(w)) {
      warn_.seen();
      open_run(*columns, line.number);
      last_header_line_ = line.number;
      return 1;
    }
    if (!w.empty() && std::all_of(w.begin(), w.end(), [](std::string_view x) {
          return starts_with(x, "(") && ends_with(x, ")");
        })) {
      warn_.seen(); // the units line under the column names
      return 1;
    }
    if (body.find("out-of-place") != std::string_view::npos) {
      warn_.seen(); // the group banner above the column names
      return 1;
    }
    const std::vector<std::string_view> fields = words(line.text);
    if (row_like(fields)) {
      if (!run_) {
        const auto assumed = columns_for_width(fields.size());
        if (!assumed || !is_nccl_data_row(line)) {
          warn_.skip(line);
          return 1;
        }
        open_run(*assumed, line.number);
        warn_.add(line.number, fmt::format("a data row before any column header: read with the "
                                           "{} columns of nccl-tests",
                                           fields.size() == 13 ? "current" : "pre-2022"));
      }
      read_row(fields, line);
      return 1;
    }
    std::size_t consumed = 1;
    if (auto cmd = command_at(lines_, i, consumed)) {
      warn_.seen();
      if (run_ && !run_->rows.empty()) {
        close_run();
      }
      pre_.command = std::move(*cmd);
      std::vector<EnvSetting> unread;
      for (EnvSetting& e : nccl_env_settings(lines_, i, consumed, unread)) {
        pre_.env.push_back(std::move(e));
      }
      warn_unread(unread);
      return consumed;
    }
    std::vector<EnvSetting> unread;
    if (std::vector<EnvSetting> env = nccl_env_settings(lines_, i, 1, unread);
        !env.empty() || !unread.empty()) {
      // NCCL's INFO lines belong to the run being set up; `export` lines hold for every later
      // run of the file, as in a shell script.
      warn_.seen();
      const bool info = line.text.find(" set by environment to ") != std::string::npos;
      std::vector<EnvSetting>& into = info ? pre_.env : exported_;
      into.insert(into.end(), env.begin(), env.end());
      warn_unread(unread);
      return 1;
    }
    if (!line.comment) {
      warn_.skip(line);
    }
    return 1;
  }

  /// NCCL variables whose value the shell computes (`-x NCCL_ALGO=$ALGO`): the log does not say.
  void warn_unread(const std::vector<EnvSetting>& unread) {
    for (const EnvSetting& e : unread) {
      warn_.add(e.line, fmt::format("{}={}: the shell computes this value, so the log does not "
                                    "say what NCCL ran with; the variable is not applied",
                                    e.name, excerpt(e.value)));
    }
  }

  /// A banner or parameter line: the previous run (if any) has ended.
  void start_preamble(const Line& line) {
    warn_.seen();
    close_run();
    pre_.touch(line.number);
  }

  /// "Rank  0 Group  0 Pid 584419 on dkh device  0 [0000:14:00] NVIDIA A100-SXM4-80GB" (Group
  /// since 2022; "[0x0f]" bus ids before 2025).
  bool read_device(const std::vector<std::string_view>& w, const Line& line) {
    const auto on = std::find(w.begin(), w.end(), "on");
    const auto device = std::find(w.begin(), w.end(), "device");
    if (on == w.end() || on + 1 >= w.end() || device == w.end() || device < on) {
      return false;
    }
    warn_.seen();
    if (run_) {
      close_run();
    }
    pre_.touch(line.number);
    Device d;
    d.host = std::string(*(on + 1));
    const std::string_view body = line.body;
    const auto bracket = body.find(']');
    if (bracket != std::string_view::npos) {
      std::string_view name = body.substr(bracket + 1);
      while (!name.empty() && name.front() == ' ') {
        name.remove_prefix(1);
      }
      d.name = excerpt(name);
    }
    pre_.devices.push_back(std::move(d));
    return true;
  }

  void open_run(const Columns& columns, std::size_t line) {
    close_run();
    Run run;
    if (pre_.any || pre_.command) {
      run.pre = std::move(pre_);
      last_pre_ = run.pre;
      last_pre_.command.reset();
    } else {
      // A repeated header without a new banner (several tables of one program): same run setup.
      run.pre = last_pre_;
    }
    pre_ = Preamble{};
    run.env = exported_;
    run.env.insert(run.env.end(), run.pre.env.begin(), run.pre.env.end());
    run.columns = columns;
    run.line = run.pre.any ? run.pre.line : line;
    run_ = std::move(run);
  }

  void read_row(const std::vector<std::string_view>& w, const Line& line) {
    const Columns& c = run_->columns;
    if (w.size() < c.fields) {
      warn_.add(line.number, fmt::format("skipped a truncated row ({} of {} columns): '{}'",
                                         w.size(), c.fields, excerpt(line.text)));
      return;
    }
    if (w.size() > c.fields && !c.trailing_timestamp) {
      warn_.add(line.number, fmt::format("skipped a row with {} columns where the table has {}: "
                                         "'{}'",
                                         w.size(), c.fields, excerpt(line.text)));
      return;
    }
    warn_.seen();
    Row row;
    row.line = line.number;
    row.size = *to_u64(w[static_cast<std::size_t>(c.size)]);
    const auto count = to_u64(w[static_cast<std::size_t>(c.count)]);
    if (!count) {
      warn_.add(line.number, fmt::format("skipped a row whose count is not a number ('{}')",
                                         excerpt(w[static_cast<std::size_t>(c.count)])));
      return;
    }
    row.count = *count;
    row.type = excerpt(w[static_cast<std::size_t>(c.type)]);
    row.redop = c.redop >= 0 ? excerpt(w[static_cast<std::size_t>(c.redop)]) : "";
    if (c.root >= 0) {
      row.root = to_i64(w[static_cast<std::size_t>(c.root)]);
    }
    for (std::size_t s = 0; s < 2; ++s) {
      if (c.time[s] < 0) {
        continue;
      }
      const char* side_name = s == 0 ? "out-of-place" : "in-place";
      const auto field = [&](int at) { return w[static_cast<std::size_t>(at)]; };
      const auto time = to_double(field(c.time[s]));
      const auto algbw = c.algbw[s] >= 0 ? to_double(field(c.algbw[s])) : std::optional(0.0);
      const auto busbw = c.busbw[s] >= 0 ? to_double(field(c.busbw[s])) : std::optional(0.0);
      if (!time || !algbw || !busbw) {
        const std::string_view bad = !time    ? field(c.time[s])
                                     : !algbw ? field(c.algbw[s])
                                              : field(c.busbw[s]);
        warn_.add(line.number, fmt::format("the {} time or bandwidth is not a number ('{}'); that "
                                           "half of the row is skipped",
                                           side_name, excerpt(bad)));
        continue;
      }
      row.sides[s] = Side{true, *time, *algbw, *busbw};
      if (c.wrong[s] >= 0 && c.wrong_is_count) {
        if (const auto wrong = to_u64(field(c.wrong[s])); wrong && *wrong > 0) {
          warn_.add(line.number, fmt::format("the {} result has {} wrong elements (#wrong): the "
                                             "run did not compute correctly",
                                             side_name, *wrong));
        }
      }
    }
    if (row.sides[0].present || row.sides[1].present) {
      run_->rows.push_back(std::move(row));
    }
  }

  /// Infers the operation of a table without a program name from its first row with elements:
  /// size = count x type size for allreduce, reduce, bcast and sendrecv, n times that for the
  /// others; the redop and root columns tell the rest.
  std::string operation_from_columns(const Run& run) {
    for (const Row& r : run.rows) {
      const auto ts = type_size(r.type);
      if (r.count == 0 || !ts || r.count > r.size / *ts || r.size % (r.count * *ts) != 0) {
        continue;
      }
      const bool reducing = r.redop != "none";
      const bool rooted = r.root && *r.root >= 0;
      if (r.size == r.count * *ts) {
        return reducing ? (rooted ? "reduce" : "allreduce") : (rooted ? "bcast" : "sendrecv");
      }
      if (reducing) {
        return "reduce_scatter";
      }
      warn_.add(run.line, rooted ? "no program name: the columns fit gather and scatter; "
                                   "assuming gather"
                                 : "no program name: the columns fit allgather and alltoall; "
                                   "assuming allgather");
      return rooted ? "gather" : "allgather";
    }
    warn_.add(run.line, "no program name, and no row with elements tells the operation");
    return "unknown";
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
    info.format = LogFormat::nccl_tests;
    info.line = run.line;
    info.rows = run.rows.size();
    info.tool_version = run.pre.tool_version;
    info.nccl_version = run.pre.nccl_version;
    info.gpus_per_thread =
        static_cast<std::uint32_t>(launch_count(run, run.pre.gpus, "-g").value_or(0));
    std::string program = run.pre.program;
    if (program.empty() && run.pre.command && ends_with(run.pre.command->program, "_perf")) {
      program = run.pre.command->program;
    }
    info.benchmark = program;
    if (!program.empty()) {
      info.operation = operation_of_program(program);
      info.operation_source = "program name";
    } else {
      info.operation = operation_from_columns(run);
      info.operation_source = "columns";
    }
    info.collective = collective_of(info.operation);
    if (run.pre.command) {
      info.command = excerpt(run.pre.command->text);
      info.command_line = excerpt(run.pre.command->text, kCommandLineMax);
      info.mca = run.pre.command->mca;
    }
    info.env = std::move(run.env);
    for (const Device& d : run.pre.devices) {
      if (std::find(info.gpus.begin(), info.gpus.end(), d.name) == info.gpus.end()) {
        info.gpus.push_back(d.name);
      }
    }
    std::vector<std::string> hosts;
    for (const Device& d : run.pre.devices) {
      if (std::find(hosts.begin(), hosts.end(), d.host) == hosts.end()) {
        hosts.push_back(d.host);
      }
    }
    info.nodes = static_cast<std::uint32_t>(hosts.size());
    info.nodes_source = hosts.empty() ? "" : "device list";
    for (const Row& r : run.rows) {
      if (info.datatype.find(r.type) == std::string::npos) {
        append_word(info.datatype, r.type, ',');
      }
      info.out_of_place = info.out_of_place || r.sides[0].present;
      info.in_place = info.in_place || r.sides[1].present;
    }
    infer_ranks(run, info);

    const auto index = static_cast<std::uint32_t>(out_.runs.size());
    for (const Row& r : run.rows) {
      for (std::size_t s = 0; s < 2; ++s) {
        if (!r.sides[s].present) {
          continue;
        }
        Measurement m;
        m.operation = info.operation;
        m.collective = info.collective;
        m.bytes = r.size;
        m.count = r.count;
        m.type = r.type;
        m.redop = r.redop;
        m.root = r.root.value_or(-1);
        m.ranks = info.ranks;
        m.in_place = s == 1;
        m.time_us = r.sides[s].time;
        m.algbw_GBps = r.sides[s].algbw;
        m.busbw_GBps = r.sides[s].busbw;
        m.file = file_;
        m.line = r.line;
        m.run = index;
        out_.measurements.push_back(std::move(m));
      }
    }
    if (!run.footer) {
      warn_.add(run.rows.back().line, "the table ends without nccl-tests' footer ('# Out of "
                                      "bounds values ...'): the log may be truncated after this "
                                      "row");
    }
    out_.runs.push_back(std::move(info));
  }

  /// The device list is the rank list; without it, the sizes or the busbw factor tell, and last
  /// the launch command (processes x threads x GPUs per thread).
  void infer_ranks(const Run& run, LogInfo& info) {
    const auto from_bandwidth = ranks_from_bandwidth(run.rows, info.operation);
    if (!run.pre.devices.empty()) {
      info.ranks = static_cast<std::uint32_t>(run.pre.devices.size());
      info.ranks_source = "device list";
      if (from_bandwidth && *from_bandwidth != info.ranks) {
        warn_.add(run.line, fmt::format("the device list has {} ranks but busbw / algbw gives {}",
                                        info.ranks, *from_bandwidth));
      }
      return;
    }
    const bool gathers = info.operation == "allgather" || info.operation == "reduce_scatter" ||
                         info.operation == "alltoall" || info.operation == "gather" ||
                         info.operation == "scatter";
    if (const auto n = gathers ? ranks_from_sizes(run.rows) : std::nullopt) {
      info.ranks = *n;
      info.ranks_source = "size / (count x type size)";
      return;
    }
    if (from_bandwidth) {
      info.ranks = *from_bandwidth;
      info.ranks_source = "busbw / algbw";
      return;
    }
    if (run.pre.command && run.pre.command->processes) {
      const std::uint64_t threads = launch_count(run, run.pre.threads, "-t").value_or(1);
      const std::uint64_t gpus = launch_count(run, run.pre.gpus, "-g").value_or(1);
      info.ranks = static_cast<std::uint32_t>(*run.pre.command->processes * threads * gpus);
      info.ranks_source = "launch command";
      return;
    }
    warn_.add(run.line, "the rank count is unknown: no device list, and neither the sizes, "
                        "busbw / algbw nor a launch command tell it");
  }

  std::vector<Line> lines_;
  const std::string& file_;
  Warnings warn_;
  ParsedLog out_;
  Preamble pre_;
  Preamble last_pre_;
  std::vector<EnvSetting> exported_; ///< NCCL_ variables exported so far in the file
  std::optional<Run> run_;
  std::size_t last_header_line_ = 0;
};

} // namespace

bool is_nccl_column_header(const Line& line) {
  return columns_from_names(words(line.body)).has_value();
}

bool is_nccl_data_row(const Line& line) {
  const auto w = words(line.text);
  if (w.size() < 12 || !to_u64(w[0]) || !to_u64(w[1]) || !type_size(w[2])) {
    return false;
  }
  return std::all_of(w[3].begin(), w[3].end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

ParsedLog parse_nccl_tests(const std::vector<Line>& lines, const std::string& file) {
  return Parser(lines, file).parse();
}

} // namespace collsim::io::logs

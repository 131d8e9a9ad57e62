// io::parse_log: detects which program printed a log and hands it to that parser
// (logs_nccl_tests.cpp, logs_osu.cpp, logs_imb.cpp). Errors that do not depend on the format
// (empty, binary, unknown) are raised here.

#include "collsim/io/logs.hpp"

#include "logs_common.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace collsim::io {
namespace {

using logs::Line;

/// The first line that only one of the formats prints decides; the lines before it (prompts,
/// prose, launcher output) say nothing about the format.
std::optional<LogFormat> detect(const std::vector<Line>& lines) {
  for (const Line& line : lines) {
    if (line.blank() || line.binary_column != 0) {
      continue;
    }
    // nccl-tests output behind a wrapper's '#' has its own comment lines commented twice.
    const Line unwrapped = logs::without_second_hash(line);
    const std::string_view u = unwrapped.body;
    if (logs::starts_with(u, "nccl-tests version") ||
        logs::starts_with(u, "Collective test starting:") ||
        (logs::starts_with(u, "nThread ") && u.find(" nGpus ") != std::string_view::npos) ||
        u == "Using devices" || logs::is_nccl_column_header(unwrapped) ||
        logs::is_nccl_data_row(line)) {
      return LogFormat::nccl_tests;
    }
    const std::string_view b = line.body;
    if (logs::is_osu_banner(line)) {
      return LogFormat::osu;
    }
    if ((line.comment && logs::starts_with(b, "Benchmarking ")) ||
        b.find("Intel(R) MPI Benchmarks") != std::string_view::npos ||
        logs::is_imb_column_header(line)) {
      return LogFormat::imb;
    }
  }
  return std::nullopt;
}

} // namespace

std::string_view to_string(LogFormat format) {
  switch (format) {
  case LogFormat::nccl_tests: return "nccl-tests";
  case LogFormat::osu: return "osu";
  case LogFormat::imb: return "imb";
  }
  return "unknown";
}

ParsedLog parse_log(std::string_view text, std::string file) {
  const std::vector<Line> lines = logs::split_lines(text);
  if (std::all_of(lines.begin(), lines.end(), [](const Line& l) { return l.blank(); })) {
    logs::fail(file, 1, 1,
               fmt::format("the file {}; expected the output of nccl-tests, OSU micro-benchmarks "
                           "or IMB-MPI1",
                           lines.empty() ? "is empty" : "has only blank lines"));
  }
  const auto format = detect(lines);
  if (!format) {
    const auto binary = std::find_if(lines.begin(), lines.end(),
                                     [](const Line& l) { return l.binary_column != 0; });
    if (binary != lines.end()) {
      logs::fail(file, binary->number, binary->binary_column,
                 fmt::format("binary data (byte 0x{:02x}); expected the text output of "
                             "nccl-tests, OSU micro-benchmarks or IMB-MPI1",
                             binary->binary_byte));
    }
    logs::fail(file, 1, 1,
               "not a nccl-tests, OSU micro-benchmarks or IMB-MPI1 log; expected a line like "
               "'#       size         count      type   redop    root     time   algbw   busbw "
               "...' (nccl-tests), '# OSU MPI Allreduce Latency Test v7.4' (OSU) or '# "
               "Benchmarking Allreduce' (IMB-MPI1)");
  }
  switch (*format) {
  case LogFormat::nccl_tests: return logs::parse_nccl_tests(lines, file);
  case LogFormat::osu: return logs::parse_osu(lines, file);
  case LogFormat::imb: return logs::parse_imb(lines, file);
  }
  return {};
}

ParsedLog load_log(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    logs::fail(path, 0, 0, "cannot read the file: it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    logs::fail(path, 0, 0, fmt::format("cannot read the file: {}", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_log(text.str(), path);
}

std::string format_warning(const ParsedLog& log, const LogWarning& warning) {
  return fmt::format("{}:{}: warning: {}", log.file, warning.line, warning.text);
}

} // namespace collsim::io

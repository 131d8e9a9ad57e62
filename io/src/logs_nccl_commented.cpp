// nccl-tests tables that a wrapper printed behind '#': Slurm job scripts and mpirun output
// collectors that comment out every line of the program's output ("# " + line), data rows
// included. nccl-tests' own comment lines then carry a second '#' ("# #  Rank  0 Group ...").
// Such a table is read with a warning instead of refused (docs/logs.md, "Formats accepted").

#include "logs_common.hpp"

#include <fmt/format.h>

namespace collsim::io::logs {
namespace {

/// `line` with its body read as its text: a commented-out data row made a data row again.
Line as_data(Line line) {
  line.text = line.body;
  line.comment = false;
  return line;
}

/// A line that starts like a data row of the table as printed (not behind '#'): a size, then a
/// count. Truncated rows count too: their table is not a commented-out one.
bool plain_row(const Line& line) {
  if (line.comment || line.blank()) {
    return false;
  }
  const auto w = words(line.text);
  return w.size() >= 2 && to_u64(w[0]) && to_u64(w[1]);
}

} // namespace

Line without_second_hash(Line line) {
  if (line.comment && starts_with(line.body, "#")) {
    std::string_view body = line.body;
    body.remove_prefix(1);
    while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) {
      body.remove_prefix(1);
    }
    line.body = std::string(body);
  }
  return line;
}

std::vector<Line> uncomment_nccl_tables(std::vector<Line> lines, Warnings& warn) {
  for (Line& line : lines) {
    line = without_second_hash(std::move(line));
  }
  // A table runs from its column header to the next one. Its commented lines that parse as
  // nccl-tests data rows (size, count, a known type, a lowercase redop, 12 or more fields) are
  // read when it has no plain data row: a row commented out among plain ones was excluded by
  // hand and stays a comment, and nccl-tests' own comment lines (banner, parameters, device list,
  // units, footer) never parse as rows.
  std::size_t i = 0;
  while (i < lines.size()) {
    if (!is_nccl_column_header(lines[i])) {
      ++i;
      continue;
    }
    const std::size_t header = i;
    std::vector<std::size_t> commented;
    bool plain = false;
    for (i = header + 1; i < lines.size() && !is_nccl_column_header(lines[i]); ++i) {
      if (lines[i].comment && is_nccl_data_row(as_data(lines[i]))) {
        commented.push_back(i);
      } else if (plain_row(lines[i])) {
        plain = true;
      }
    }
    if (commented.empty() || plain) {
      continue;
    }
    for (const std::size_t k : commented) {
      lines[k] = as_data(std::move(lines[k]));
    }
    warn.add(lines[header].number,
             fmt::format("read {} data row{} from '#'-prefixed lines (lines {}-{}): a wrapper "
                         "printed the table behind '#'",
                         commented.size(), commented.size() == 1 ? "" : "s",
                         lines[commented.front()].number, lines[commented.back()].number));
  }
  return lines;
}

} // namespace collsim::io::logs

// The text inputs of `collsim topology import`: `nvidia-smi topo -m` and `ibstat`.
//
// nvidia-smi topo -m (NVIDIA System Management Interface, `nvidia-smi topo --help`): a header line
// of device names (GPU0.., then NICs by name, or NIC0.. with a "NIC Legend" mapping NICn to
// mlx5_n in drivers from about 2022), then one row per device with one cell per column: X (self),
// NV# (a bonded set of # NVLinks), PIX (at most one PCIe bridge), PXB (several bridges, no host
// bridge), PHB (a host bridge), NODE (host bridges in one NUMA node), SYS (the SMP interconnect;
// SOC in drivers before about 2017), then CPU and NUMA affinity columns. Columns are tab-separated
// as printed, often spaces once pasted, so cells are read as whitespace-separated words.
//
// ibstat (infiniband-diags, ibstat(8)): "CA 'name'" blocks of "key: value" lines, with "Port N:"
// blocks holding State, Rate (Gb/s) and Link layer.

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"
#include "describe_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <regex>

namespace collsim::describe {
namespace {

struct Word {
  std::string text;
  std::uint32_t column = 1; ///< 1-based
};

struct Line {
  std::string text;
  std::uint32_t number = 1;
};

/// The lines of `text` with terminal colour codes (ESC [ ... m) and carriage returns removed.
std::vector<Line> lines_of(const std::string& text) {
  std::vector<Line> lines;
  std::string cur;
  std::uint32_t n = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[j])) != 0 || text[j] == ';')) {
        ++j;
      }
      i = j; // skips the final letter as well
      continue;
    }
    if (c == '\n') {
      lines.push_back({cur, n++});
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) {
    lines.push_back({cur, n});
  }
  return lines;
}

std::vector<Word> words_of(const std::string& line) {
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) != 0) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0) {
      ++i;
    }
    if (i > start) {
      words.push_back({line.substr(start, i - start), static_cast<std::uint32_t>(start + 1)});
    }
  }
  return words;
}

/// "48-63,176-191" -> 48..63, 176..191; "N/A" -> {}; nullopt when it is neither.
std::optional<std::vector<std::uint32_t>> id_list(const std::string& text) {
  static const std::regex kList{R"([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)"};
  if (text == "N/A") {
    return std::vector<std::uint32_t>{};
  }
  if (!std::regex_match(text, kList)) {
    return std::nullopt;
  }
  std::vector<std::uint32_t> ids;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t comma = std::min(text.find(',', i), text.size());
    const std::string range = text.substr(i, comma - i);
    const std::size_t dash = range.find('-');
    const auto lo = small_number(range.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : small_number(range.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi > 1'000'000) {
      return std::nullopt; // a reversed range, or more CPUs than any node has
    }
    for (std::uint32_t id = *lo; id <= *hi; ++id) {
      ids.push_back(id);
    }
    i = comma + 1;
  }
  return ids;
}

bool valid_cell(const std::string& c) {
  static const std::regex kCell{"X|NV[0-9]+|PIX|PXB|PHB|NODE|SYS|SOC|PSB"};
  // NV# counts bonded links: a count past 32 bits is not one (merge_topo_matrix reads it).
  return std::regex_match(c, kCell) && (c.rfind("NV", 0) != 0 || small_number(c.substr(2)));
}

} // namespace

TopoMatrix parse_nvidia_smi_topo(const std::string& text, const std::string& file) {
  const std::vector<Line> lines = lines_of(text);
  TopoMatrix m;
  std::vector<std::string> affinity_columns;
  std::size_t header = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto words = words_of(lines[i].text);
    if (!words.empty() && words.front().text == "GPU0" && words.size() > 1 &&
        words[1].text != "X") {
      header = i;
      std::size_t k = 0;
      for (; k < words.size(); ++k) {
        const std::string& w = words[k].text;
        if (w == "CPU" || w == "NUMA" || w == "Affinity" || w == "GPU") {
          break;
        }
        m.names.push_back(w);
        m.is_gpu.push_back(w.rfind("GPU", 0) == 0);
      }
      // The affinity columns, in the order printed ("CPU Affinity", "NUMA Affinity", "GPU NUMA
      // ID"); a GPU row has one word per column.
      for (; k + 1 < words.size(); ++k) {
        if (words[k + 1].text == "Affinity" || words[k + 1].text == "NUMA") {
          affinity_columns.push_back(words[k].text + " " + words[k + 1].text);
          ++k;
        }
      }
      break;
    }
  }
  if (header == lines.size()) {
    throw core::LogParseError(
        {file, 1, 1}, "no header line starting with GPU0: not the output of nvidia-smi topo -m");
  }
  const std::size_t n = m.names.size();
  m.cells.assign(n, {});
  m.cpus.assign(n, {});
  m.numa.assign(n, {});
  std::vector<bool> seen(n, false);
  std::size_t last = header;
  for (std::size_t i = header + 1; i < lines.size(); ++i) {
    const auto words = words_of(lines[i].text);
    if (words.empty()) {
      continue;
    }
    const auto it = std::find(m.names.begin(), m.names.end(), words.front().text);
    if (it == m.names.end()) {
      if (std::all_of(seen.begin(), seen.end(), [](bool s) { return s; })) {
        break; // the legend follows the matrix
      }
      continue;
    }
    const auto row = static_cast<std::size_t>(it - m.names.begin());
    if (seen[row]) {
      break; // a second matrix (nvidia-smi topo -mp) or the legend repeating a name
    }
    if (words.size() < n + 1) {
      throw core::LogParseError(
          {file, lines[i].number, static_cast<std::uint32_t>(lines[i].text.size() + 1)},
          fmt::format("the row of {} has {} entries, the header names {} devices",
                      words.front().text, words.size() - 1, n));
    }
    for (std::size_t k = 0; k < n; ++k) {
      std::string cell = words[k + 1].text;
      if (!valid_cell(cell)) {
        throw core::LogParseError(
            {file, lines[i].number, words[k + 1].column},
            fmt::format(
                "'{}' is not a connection of nvidia-smi topo -m (X, NV#, PIX, PXB, PHB, NODE, SYS)",
                cell));
      }
      if (cell == "SOC") {
        cell = "SYS";
      }
      if ((k == row) != (cell == "X")) {
        throw core::LogParseError({file, lines[i].number, words[k + 1].column},
                                  fmt::format("the row of {} has '{}' in the column of {}",
                                              m.names[row], cell, m.names[k]));
      }
      m.cells[row].push_back(cell);
    }
    for (std::size_t c = 0; c < affinity_columns.size() && n + 1 + c < words.size(); ++c) {
      const Word& w = words[n + 1 + c];
      const std::string& column = affinity_columns[c];
      if (column != "CPU Affinity" && column != "NUMA Affinity") {
        continue;
      }
      const auto ids = id_list(w.text);
      if (!ids) {
        throw core::LogParseError(
            {file, lines[i].number, w.column},
            fmt::format("'{}' in the {} column of {} is not a list of ids like 0-19,40-59", w.text,
                        column, m.names[row]));
      }
      (column == "CPU Affinity" ? m.cpus : m.numa)[row] = *ids;
    }
    seen[row] = true;
    last = i;
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (!seen[k]) {
      const SourceEnd end = end_of(text);
      throw core::LogParseError(
          {file, end.line, end.column},
          fmt::format("no row for {} (a truncated nvidia-smi topo -m output?)", m.names[k]));
    }
  }
  // "NIC Legend:" lines name NICn.
  static const std::regex kLegend{R"(^\s*(NIC[0-9]+)\s*:\s*(\S+)\s*$)"};
  for (std::size_t i = last + 1; i < lines.size(); ++i) {
    std::smatch match;
    if (std::regex_match(lines[i].text, match, kLegend)) {
      auto it = std::find(m.names.begin(), m.names.end(), match[1].str());
      if (it != m.names.end()) {
        *it = match[2].str();
      }
    }
  }
  if (std::none_of(m.is_gpu.begin(), m.is_gpu.end(), [](bool g) { return g; })) {
    throw core::LogParseError({file, lines[header].number, 1}, "the header names no GPU");
  }
  return m;
}

std::vector<IbCa> parse_ibstat(const std::string& text, const std::string& file) {
  static const std::regex kCa{R"(^CA '([^']+)'\s*$)"};
  static const std::regex kPort{R"(^\s+Port ([0-9]+):\s*$)"};
  static const std::regex kKeyValue{R"(^\s+([A-Za-z][A-Za-z ]*[A-Za-z]):\s*(.*?)\s*$)"};
  std::vector<IbCa> cas;
  std::vector<std::uint32_t> rate_lines; // per port seen: its Rate line, 0 when none yet
  const std::vector<Line> lines = lines_of(text);
  for (const Line& line : lines) {
    if (line.text.find_first_not_of(" \t") == std::string::npos) {
      continue;
    }
    std::smatch m;
    if (std::regex_match(line.text, m, kCa)) {
      cas.push_back({m[1].str(), {}, {}});
      continue;
    }
    if (cas.empty()) {
      throw core::LogParseError({file, line.number, 1},
                                "expected a line CA 'name': not the output of ibstat");
    }
    IbCa& ca = cas.back();
    if (std::regex_match(line.text, m, kPort)) {
      const auto port = small_number(m[1].str());
      if (!port) {
        throw core::LogParseError(
            {file, line.number, static_cast<std::uint32_t>(m.position(1) + 1)},
            fmt::format("port number {} is out of range", m[1].str()));
      }
      ca.ports.push_back({*port, {}, 0.0, {}});
      rate_lines.push_back(0);
      continue;
    }
    if (!std::regex_match(line.text, m, kKeyValue)) {
      const auto col = static_cast<std::uint32_t>(line.text.find_first_not_of(" \t") + 1);
      throw core::LogParseError({file, line.number, col}, "expected 'key: value' (ibstat output)");
    }
    const std::string key = m[1].str();
    const std::string value = m[2].str();
    if (ca.ports.empty()) {
      if (key == "CA type") {
        ca.type = value;
      }
      continue;
    }
    IbPort& port = ca.ports.back();
    if (key == "State") {
      port.state = value;
    } else if (key == "Link layer") {
      port.link_layer = value;
    } else if (key == "Rate") {
      double rate = 0.0;
      const char* first = value.data();
      const auto [ptr, ec] = std::from_chars(first, first + value.size(), rate);
      // "100", or as ibstatus prints it "100 Gb/sec (4X EDR)"; not "100x".
      const bool clean = ptr == first + value.size() || *ptr == ' ';
      if (ec != std::errc{} || rate <= 0.0 || !clean) {
        const auto col = static_cast<std::uint32_t>(m.position(2) + 1);
        throw core::LogParseError({file, line.number, col},
                                  fmt::format("Rate '{}' is not a rate in Gb/s", value));
      }
      port.rate_gbit = rate;
      rate_lines.back() = line.number;
    }
  }
  if (cas.empty()) {
    const SourceEnd end = end_of(text);
    throw core::LogParseError({file, end.line, end.column},
                              "no CA 'name' line: not the output of ibstat");
  }
  std::size_t port_index = 0;
  for (const IbCa& ca : cas) {
    for (const IbPort& port : ca.ports) {
      if (rate_lines[port_index++] == 0) {
        const SourceEnd end = end_of(text);
        throw core::LogParseError(
            {file, end.line, end.column},
            fmt::format("port {} of {} has no Rate line (a truncated ibstat output?)", port.number,
                        ca.name));
      }
    }
  }
  return cas;
}

} // namespace collsim::describe

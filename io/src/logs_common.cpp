// Line clean-up, numbers, launch commands and warnings shared by the log parsers. Logs are read
// as users paste them, so everything here tolerates what terminals, launchers and markdown add.

#include "logs_common.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace collsim::io::logs {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_blank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

/// Removes ANSI escape sequences (ESC [ ... letter), which terminal logs carry for colours.
std::string strip_ansi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) {
        ++j;
      }
      i = j; // skips the final letter too
      continue;
    }
    out += s[i];
  }
  return out;
}

/// Launchers prefix each line of output with the rank that printed it: `srun -l` writes "0: ",
/// Open MPI's --tag-output "[1,0]<stdout>:". The line itself follows.
std::string_view strip_launcher_prefix(std::string_view s) {
  std::string_view t = trim(s);
  if (!t.empty() && t.front() == '[') {
    const auto close = t.find("]<std");
    if (close != std::string_view::npos) {
      const auto colon = t.find(">:", close);
      if (colon != std::string_view::npos && colon < close + 12) {
        return t.substr(colon + 2);
      }
    }
  }
  std::size_t i = 0;
  while (i < t.size() && is_digit(t[i])) {
    ++i;
  }
  if (i > 0 && i < t.size() && t[i] == ':' && (i + 1 == t.size() || is_blank(t[i + 1]))) {
    return t.substr(i + 1);
  }
  return s;
}

/// Length of the valid UTF-8 sequence starting at s[i], or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
  } else {
    return 0;
  }
  if (i + n > s.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) {
      return 0;
    }
  }
  return n;
}

std::string basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool is_launcher(std::string_view word) {
  const std::string b = basename(word);
  return b == "mpirun" || b == "mpiexec" || b == "mpiexec.hydra" || b == "orterun" ||
         b == "prterun" || b == "srun" || b == "aprun" || b == "jsrun";
}

/// nccl-tests binaries end in _perf, OSU's start with osu_, IMB's is IMB-MPI1.
bool is_benchmark_program(std::string_view word) {
  const std::string b = basename(word);
  // Program names are identifiers: "osu_latency-1.out" is an output file, not the program.
  const bool identifier = std::all_of(b.begin(), b.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '-';
  });
  if (b.empty() || b.front() == '-' || !identifier) {
    return false;
  }
  return (ends_with(b, "_perf") && b.size() > 5) || (starts_with(b, "osu_") && b.size() > 4) ||
         starts_with(b, "IMB-") || b == "collsim-probe";
}

/// Shell prompts before a command: "$", "#", "root@host:~/dir#", "user@host:~$", "(venv)".
bool is_prompt(std::string_view word) {
  return word == "$" || word == "#" || word == ">" || ends_with(word, "#") ||
         ends_with(word, "$") || ends_with(word, ">") ||
         (starts_with(word, "(") && ends_with(word, ")"));
}

std::optional<std::uint32_t> to_u32(std::string_view s) {
  const auto v = to_u64(s);
  if (!v || *v > 0xffffffffULL) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(*v);
}

/// "-np 16", "-np=16", "--np=16": the value of one of `names`, advancing i past it.
std::optional<std::string_view> option_value(const std::vector<std::string_view>& w, std::size_t& i,
                                             std::initializer_list<std::string_view> names) {
  for (const std::string_view name : names) {
    if (w[i] == name && i + 1 < w.size()) {
      ++i;
      return w[i];
    }
    if (starts_with(w[i], name) && w[i].size() > name.size() && w[i][name.size()] == '=') {
      return w[i].substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

/// Words of a shell line with trailing ';', '&&' and quotes removed from each word.
std::vector<std::string_view> shell_words(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view w : words(s)) {
    while (!w.empty() && (w.back() == ';' || w.back() == '"' || w.back() == '\'')) {
      w.remove_suffix(1);
    }
    while (!w.empty() && (w.front() == '"' || w.front() == '\'')) {
      w.remove_prefix(1);
    }
    if (!w.empty()) {
      out.push_back(w);
    }
  }
  return out;
}

} // namespace

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

void append_word(std::string& list, std::string_view word, char separator) {
  if (!list.empty()) {
    list += separator;
  }
  list.append(word);
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) {
      ++i;
    }
    const std::size_t start = i;
    while (i < s.size() && !is_blank(s[i])) {
      ++i;
    }
    if (i > start) {
      out.push_back(s.substr(start, i - start));
    }
  }
  return out;
}

std::vector<Line> split_lines(std::string_view text) {
  if (starts_with(text, "\xef\xbb\xbf")) {
    text.remove_prefix(3);
  }
  std::vector<Line> lines;
  std::size_t start = 0;
  std::size_t number = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++number;
    while (!raw.empty() && raw.back() == '\r') {
      raw.remove_suffix(1);
    }
    Line line;
    line.number = number;
    const std::string cleaned = strip_ansi(raw);
    for (std::size_t i = 0; i < cleaned.size(); ++i) {
      const auto c = static_cast<unsigned char>(cleaned[i]);
      if ((c < 0x20 && c != '\t' && c != '\f' && c != '\v' && c != '\r') || c == 0x7f) {
        line.binary_column = i + 1;
        line.binary_byte = c;
        break;
      }
    }
    line.text = std::string(trim(strip_launcher_prefix(cleaned)));
    std::string_view body = line.text;
    if (starts_with(body, "\\#")) { // markdown that escaped the '#'
      body.remove_prefix(1);
    }
    if (starts_with(body, "#")) {
      line.comment = true;
      body.remove_prefix(1);
    }
    line.body = std::string(trim(body));
    line.fence = starts_with(line.text, "```") || starts_with(line.text, "~~~");
    lines.push_back(std::move(line));
  }
  return lines;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> to_i64(std::string_view s) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> to_double(std::string_view s) {
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size() || !std::isfinite(v) ||
      v < 0.0) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> to_double_scaled(std::string_view s, int shift) {
  const auto v = to_double(s);
  if (!v) {
    return std::nullopt;
  }
  // digits and at most one point: mantissa and decimals are exact, the division rounds once.
  std::uint64_t mantissa = 0;
  int decimals = -1;
  for (const char c : s) {
    if (c == '.' && decimals < 0) {
      decimals = 0;
    } else if (is_digit(c) && mantissa < (1ULL << 53) / 10) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(c - '0');
      decimals += decimals >= 0 ? 1 : 0;
    } else {
      return *v / std::pow(10.0, shift);
    }
  }
  const int exponent = std::max(decimals, 0) + shift;
  if (exponent < 0 || exponent > 22) { // 10^22 is the largest power of ten a double holds exactly
    return *v / std::pow(10.0, shift);
  }
  static constexpr std::array<double, 23> kPowers{1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  return static_cast<double>(mantissa) / kPowers[static_cast<std::size_t>(exponent)];
}

std::optional<std::uint32_t> type_size(std::string_view type) {
  std::string t = lower(type);
  if (starts_with(t, "mpi_")) {
    t = t.substr(4);
  }
  if (t == "int8" || t == "uint8" || t == "char" || t == "byte" || t == "signed_char" ||
      t == "unsigned_char" || t == "f8e4m3" || t == "f8e5m2" || t == "fp8_e4m3" ||
      t == "fp8_e5m2") {
    return 1;
  }
  if (t == "half" || t == "float16" || t == "bfloat16" || t == "short" || t == "unsigned_short") {
    return 2;
  }
  if (t == "float" || t == "int32" || t == "uint32" || t == "int" || t == "unsigned" ||
      t == "float32") {
    return 4;
  }
  if (t == "double" || t == "int64" || t == "uint64" || t == "long" || t == "unsigned_long" ||
      t == "long_long" || t == "float64") {
    return 8;
  }
  return std::nullopt;
}

std::string excerpt(std::string_view text, std::size_t kMax) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (shown >= kMax) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += text[i];
      ++i;
    } else if (c == '\t') {
      out += ' ';
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    }
    ++shown;
  }
  return out;
}

std::optional<std::string> Command::arg(std::string_view name) const {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) {
      return args[i + 1];
    }
    // Short options glued to their value: "-g2".
    if (name.size() == 2 && args[i].size() > 2 && starts_with(args[i], name)) {
      return args[i].substr(2);
    }
  }
  return std::nullopt;
}

bool Command::has_arg(std::string_view name) const {
  return std::find(args.begin(), args.end(), name) != args.end();
}

std::optional<Command> command_at(const std::vector<Line>& lines, std::size_t i,
                                  std::size_t& consumed) {
  consumed = 1;
  const Line& first = lines[i];
  if (first.comment || first.blank() || first.binary_column != 0) {
    return std::nullopt;
  }
  // A command written over several lines with '\' continuations (job scripts, READMEs).
  // The cap keeps a file of lines that all end in '\' linear to read.
  constexpr std::size_t kMaxContinuations = 64;
  std::string joined = first.text;
  while (ends_with(joined, "\\") && i + consumed < lines.size() && consumed <= kMaxContinuations) {
    joined.pop_back();
    joined += ' ';
    joined += lines[i + consumed].text;
    ++consumed;
  }
  const std::vector<std::string_view> w = shell_words(joined);
  std::size_t program = w.size();
  std::size_t launcher = w.size();
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (launcher == w.size() &&
        (is_launcher(w[k]) ||
         (w[k] == "flux" && k + 1 < w.size() && (w[k + 1] == "run" || w[k + 1] == "submit")))) {
      launcher = k;
    }
    if (is_benchmark_program(w[k])) {
      program = k;
      break;
    }
  }
  if (program == w.size()) {
    consumed = 1;
    return std::nullopt;
  }
  Command cmd;
  cmd.text = std::string(trim(joined));
  cmd.program = basename(w[program]);
  cmd.mca = mca_settings(lines, i, consumed, cmd.program);
  for (std::size_t k = program + 1; k < w.size(); ++k) {
    cmd.args.emplace_back(w[k]);
  }
  if (launcher == w.size()) {
    // Run directly at a prompt: one process. After anything else (`${MPIRUN} ...`), unknown.
    const bool direct = std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(program),
                                    [](std::string_view x) { return is_prompt(x); });
    if (direct) {
      cmd.processes = 1;
    }
    return cmd;
  }
  const bool is_mpirun = w[launcher] != "flux" && basename(w[launcher]) != "srun";
  std::optional<std::uint32_t> per_node;
  std::optional<std::uint32_t> slots;
  for (std::size_t k = launcher + 1; k < program; ++k) {
    if (const auto v = option_value(w, k, {"-np", "--np", "-n", "--n", "--ntasks"})) {
      cmd.processes = to_u32(*v);
    } else if (const auto c = is_mpirun ? option_value(w, k, {"-c"}) : std::nullopt) {
      cmd.processes = to_u32(*c); // mpirun's -c is -np; srun's and flux's is cores per task
    } else if (const auto h = option_value(w, k, {"-H", "--host", "-host", "--hosts", "-hosts"})) {
      std::uint32_t hosts = 0;
      std::uint32_t sum = 0;
      bool all_slots = true;
      std::string_view list = *h;
      while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view entry = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        ++hosts;
        const auto colon = entry.rfind(':');
        const auto n =
            colon == std::string_view::npos ? std::nullopt : to_u32(entry.substr(colon + 1));
        all_slots = all_slots && n.has_value();
        sum += n.value_or(0);
      }
      cmd.nodes = hosts;
      if (all_slots) {
        slots = sum;
      }
    } else if (const auto p = option_value(w, k, {"-ppn", "--ppn", "-npernode", "--npernode"})) {
      per_node = to_u32(*p);
    } else if (const auto n = option_value(w, k, {"-N", "--nodes"})) {
      // Open MPI's mpirun -N is ranks per node; srun's and flux's -N is the node count.
      if (is_mpirun) {
        per_node = to_u32(*n);
      } else {
        cmd.nodes = to_u32(*n);
      }
    }
  }
  if (!cmd.processes && slots) {
    cmd.processes = slots;
  }
  if (!cmd.processes && per_node && cmd.nodes) {
    cmd.processes = *per_node * *cmd.nodes;
  }
  return cmd;
}

void Warnings::skip(const Line& line) {
  if (block_count_ == 0) {
    block_first_ = line.number;
    block_text_ = line.text;
  }
  block_last_ = line.number;
  ++block_count_;
}

void Warnings::seen() {
  flush();
}

void Warnings::add(std::size_t line, std::string text) {
  flush();
  out_.push_back(LogWarning{line, std::move(text)});
}

void Warnings::flush() {
  if (block_count_ == 1) {
    out_.push_back(
        LogWarning{block_first_, fmt::format("skipped a line that is not {} output: '{}'", format_,
                                             excerpt(block_text_))});
  } else if (block_count_ > 1) {
    out_.push_back(LogWarning{
        block_first_,
        fmt::format("skipped {} lines that are not {} output (lines {}-{}), the "
                    "first: '{}'",
                    block_count_, format_, block_first_, block_last_, excerpt(block_text_))});
  }
  block_count_ = 0;
}

std::vector<LogWarning> Warnings::take() {
  flush();
  std::stable_sort(out_.begin(), out_.end(),
                   [](const LogWarning& a, const LogWarning& b) { return a.line < b.line; });
  return std::move(out_);
}

void fail(const std::string& file, std::size_t line, std::size_t column,
          const std::string& message) {
  throw core::LogParseError(
      core::SourcePos{file, static_cast<std::uint32_t>(line), static_cast<std::uint32_t>(column)},
      message);
}

std::optional<core::CollectiveKind> collective_of(std::string_view operation) {
  for (const core::CollectiveKind c : core::kAllCollectives) {
    if (core::to_string(c) == operation) {
      return c;
    }
  }
  return std::nullopt;
}

} // namespace collsim::io::logs

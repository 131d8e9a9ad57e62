#include "collsim/io/imbalance_files.hpp"

#include "read_file.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <system_error>

namespace collsim::io {
namespace {

/// One whitespace-separated token and where it starts (1-based column).
struct Token {
  std::string_view text;
  std::uint32_t column = 1;
};

/// The tokens of each non-empty, non-comment line, with line numbers.
template <class OnLine>
void for_each_line(std::string_view text, OnLine&& on_line) {
  std::uint32_t line = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    ++line;
    std::string_view body = text.substr(start, end - start);
    if (const auto hash = body.find('#'); hash != std::string_view::npos) {
      body = body.substr(0, hash);
    }
    std::vector<Token> tokens;
    std::size_t i = 0;
    while (i < body.size()) {
      while (i < body.size() &&
             (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == ',')) {
        ++i;
      }
      const std::size_t b = i;
      while (i < body.size() && body[i] != ' ' && body[i] != '\t' && body[i] != '\r' &&
             body[i] != ',') {
        ++i;
      }
      if (i > b) {
        tokens.push_back({body.substr(b, i - b), static_cast<std::uint32_t>(b + 1)});
      }
    }
    if (!tokens.empty()) {
      on_line(line, tokens);
    }
    if (end == text.size()) {
      break;
    }
    start = end + 1;
  }
}

[[noreturn]] void fail(std::string_view file, std::uint32_t line, std::uint32_t column,
                       std::string message) {
  throw core::ScenarioError(core::SourcePos{std::string(file), line, column}, "",
                            std::move(message));
}

double weight(std::string_view file, std::uint32_t line, const Token& t) {
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc{} || ptr != t.text.data() + t.text.size() || !std::isfinite(v)) {
    fail(file, line, t.column, fmt::format("expected a number, got '{}'", t.text));
  }
  if (v < 0.0) {
    fail(file, line, t.column, fmt::format("a weight cannot be negative, got {}", t.text));
  }
  return v;
}

std::uint32_t rank_number(std::string_view file, std::uint32_t line, const Token& t) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc{} || ptr != t.text.data() + t.text.size() || v >= (1ULL << 31)) {
    fail(file, line, t.column, fmt::format("expected a rank (a whole number), got '{}'", t.text));
  }
  return static_cast<std::uint32_t>(v);
}

std::string read_whole(const std::string& path, std::string_view what, const core::SourcePos& at) {
  return detail::read_file_text(path, [&](int err) {
    const std::string msg =
        fmt::format("cannot open {} '{}': {}", what, path, std::generic_category().message(err));
    if (!at.file.empty()) {
      throw core::ScenarioError(at, "", msg);
    }
    throw core::UsageError(msg);
  });
}

std::string resolve(const std::string& path, const std::string& named_in) {
  if (path.empty() || path.front() == '/' || named_in.empty()) {
    return path;
  }
  const auto slash = named_in.rfind('/');
  return slash == std::string::npos ? path : named_in.substr(0, slash + 1) + path;
}

} // namespace

std::vector<std::vector<double>> parse_count_rows(std::string_view text, std::string_view file,
                                                  bool graph) {
  std::vector<std::vector<double>> rows;
  for_each_line(text, [&](std::uint32_t line, const std::vector<Token>& tokens) {
    std::vector<double> row;
    if (graph) {
      if (tokens.size() < 2 || tokens.size() > 3) {
        fail(file, line, tokens.front().column,
             fmt::format("expected an edge 'SRC DST [WEIGHT]', got {} fields", tokens.size()));
      }
      row.push_back(rank_number(file, line, tokens[0]));
      row.push_back(rank_number(file, line, tokens[1]));
      if (tokens.size() == 3) {
        row.push_back(weight(file, line, tokens[2]));
      }
    } else {
      for (const Token& t : tokens) {
        row.push_back(weight(file, line, t));
      }
    }
    rows.push_back(std::move(row));
  });
  if (rows.empty()) {
    fail(file, 1, 1, graph ? "the file has no edges" : "the file has no numbers");
  }
  return rows;
}

std::vector<core::Seconds> parse_arrival_times(std::string_view text, std::string_view file) {
  std::vector<core::Seconds> out;
  for_each_line(text, [&](std::uint32_t line, const std::vector<Token>& tokens) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const Token& t = tokens[i];
      // "250 us": a number followed by a unit token reads as one duration.
      std::string joined(t.text);
      if (i + 1 < tokens.size() && !tokens[i + 1].text.empty() &&
          std::isalpha(static_cast<unsigned char>(tokens[i + 1].text.front())) != 0) {
        joined += std::string(tokens[i + 1].text);
        ++i;
      }
      double plain = 0.0;
      const auto [ptr, ec] = std::from_chars(joined.data(), joined.data() + joined.size(), plain);
      core::Seconds value{plain};
      if (ec != std::errc{} || ptr != joined.data() + joined.size()) {
        const core::Parsed<core::Seconds> d = core::parse_seconds(joined);
        if (!d.ok()) {
          fail(file, line, t.column,
               fmt::format("expected an arrival time such as '1ms', '250 us' or '0', got '{}'",
                           joined));
        }
        value = d.value;
      }
      if (!(value.value >= 0.0) || value.value > 3600.0 || !std::isfinite(value.value)) {
        fail(file, line, t.column,
             fmt::format("an arrival time must be from 0 to 1 hour, got '{}'", joined));
      }
      out.push_back(value);
    }
  });
  if (out.empty()) {
    fail(file, 1, 1, "the file has no arrival times");
  }
  return out;
}

void load_counts_data(core::CountsSpec& spec, const std::string& named_in,
                      const core::SourcePos& at) {
  using K = core::CountsSpec::Kind;
  if (spec.kind != K::file && spec.kind != K::moe && spec.kind != K::graph) {
    return;
  }
  const std::string path = resolve(spec.path, named_in);
  const char* what = spec.kind == K::graph ? "process graph"
                     : spec.kind == K::moe ? "router histogram"
                                           : "counts file";
  spec.rows = parse_count_rows(read_whole(path, what, at), path, spec.kind == K::graph);
}

void load_skew_data(core::SkewSpec& spec, const std::string& named_in, const core::SourcePos& at) {
  if (spec.kind != core::SkewSpec::Kind::file) {
    return;
  }
  const std::string path = resolve(spec.path, named_in);
  spec.times = parse_arrival_times(read_whole(path, "arrival times file", at), path);
}

} // namespace collsim::io

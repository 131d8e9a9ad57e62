// LogGOPSim GOAL text into a collsim schedule (goal.hpp). The grammar is LogGOPSim's
// (src/LogGOPSim/txt2bin.re, as ../shared/reference/interchange.md section 3 records it); where
// txt2bin is silent or lenient (a duplicate label is dropped there, miswiring dependencies) this
// reader stops with a positioned error instead.

#include "collsim/io/goal.hpp"

#include "goal_model.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <vector>

namespace collsim::io {
namespace {

constexpr std::string_view kAnnotation = "// collsim: ";

struct Token {
  std::string_view text;
  std::uint32_t column = 0; ///< 1-based
};

/// The file with `/* */` comments blanked out (positions kept).
std::string without_block_comments(std::string_view text) {
  std::string t(text);
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i] == '/' && t[i + 1] == '*') {
      const std::size_t end = t.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? t.size() : end + 2;
      for (std::size_t j = i; j < stop; ++j) {
        if (t[j] != '\n') {
          t[j] = ' ';
        }
      }
      i = stop - 1;
    }
  }
  return t;
}

/// `text` split into lines (views into it; a line's final '\r' dropped). A GOAL file of a large
/// schedule has millions of lines: no copy each.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    out.push_back(line);
    if (nl == std::string_view::npos) {
      break;
    }
    start = nl + 1;
  }
  return out;
}

class Reader {
public:
  Reader(std::string_view name, const GoalImportOptions& options)
      : name_(name), options_(options) {}

  GoalImport read(std::string_view text) {
    text_ = without_block_comments(text);
    lines_ = lines_of(text_);
    parse();
    detail::GoalFile file{name_, std::move(ranks_), std::move(annotated_), std::move(closes_)};
    if (file.annotated.empty()) {
      return {detail::goal_schedule(file, options_), false};
    }
    return {detail::goal_annotated_schedule(file, options_), true};
  }

private:
  [[noreturn]] void fail(std::uint32_t line, std::uint32_t column, const std::string& msg) const {
    detail::goal_fail(name_, line, column, msg);
  }

  /// C's isspace in the "C" locale, inline: it runs on every byte of the file.
  static constexpr bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  }

  /// The tokens of `line`, into `out` (reused from line to line).
  static void tokens_of(std::string_view line, std::vector<Token>& out) {
    out.clear();
    std::size_t i = 0;
    while (i < line.size()) {
      if (blank(line[i])) {
        ++i;
        continue;
      }
      const std::size_t start = i;
      while (i < line.size() && !blank(line[i])) {
        ++i;
      }
      out.push_back({line.substr(start, i - start), static_cast<std::uint32_t>(start + 1)});
    }
  }

  std::uint64_t number(std::uint32_t line, const Token& t, std::string_view what) const {
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc{} || ptr != t.text.data() + t.text.size()) {
      fail(line, t.column, fmt::format("expected {} (a whole number), got '{}'", what, t.text));
    }
    return v;
  }

  std::int64_t number_or_any(std::uint32_t line, const Token& t, std::string_view what) const {
    if (t.text == "-1") {
      return -1;
    }
    const std::uint64_t v = number(line, t, what);
    if (v > (1ULL << 40)) {
      fail(line, t.column, fmt::format("{} {} is out of range", what, v));
    }
    return static_cast<std::int64_t>(v);
  }

  static bool is_label(std::string_view s) {
    if (s.empty() || std::isalpha(static_cast<unsigned char>(s.front())) == 0) {
      return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
  }

  /// A token at `i`, or the error "expected X at the end of the line".
  const Token& at(const std::vector<Token>& t, std::size_t i, std::uint32_t line,
                  std::string_view expected) const {
    if (i >= t.size()) {
      const auto end = static_cast<std::uint32_t>(lines_[line - 1].size() + 1);
      fail(line, end, fmt::format("expected {} at the end of the line", expected));
    }
    return t[i];
  }

  void parse() {
    std::optional<std::uint64_t> num_ranks;
    bool in_rank = false;
    for (std::size_t li = 0; li < lines_.size(); ++li) {
      const auto line = static_cast<std::uint32_t>(li + 1);
      std::string_view text = lines_[li];
      const std::size_t first = text.find_first_not_of(" \t");
      if (first != std::string_view::npos && text.substr(first).starts_with(kAnnotation)) {
        annotated_.push_back({std::string(text.substr(first + kAnnotation.size())), line,
                              static_cast<std::uint32_t>(first + kAnnotation.size() + 1)});
        continue;
      }
      if (const std::size_t c = text.find("//"); c != std::string_view::npos) {
        text = text.substr(0, c);
      }
      tokens_of(text, tokens_);
      const std::vector<Token>& t = tokens_;
      if (t.empty()) {
        continue;
      }
      if (!num_ranks) {
        if (t[0].text != "num_ranks") {
          fail(line, t[0].column, fmt::format("expected 'num_ranks N' first, got '{}'", t[0].text));
        }
        num_ranks = number(line, at(t, 1, line, "the number of ranks"), "the number of ranks");
        if (*num_ranks == 0 || *num_ranks > (1ULL << 24)) {
          fail(line, t[1].column, fmt::format("num_ranks {} is not in 1..16777216", *num_ranks));
        }
        extra(t, 2, line);
        continue;
      }
      if (!in_rank) {
        if (t[0].text != "rank") {
          fail(line, t[0].column,
               fmt::format("expected 'rank {} {{', got '{}'", ranks_.size(), t[0].text));
        }
        const std::uint64_t r = number(line, at(t, 1, line, "a rank"), "a rank");
        if (ranks_.size() == *num_ranks) {
          fail(line, t[1].column, fmt::format("rank {} is beyond num_ranks {}", r, *num_ranks));
        }
        if (r != ranks_.size()) {
          fail(line, t[1].column,
               r >= *num_ranks ? fmt::format("rank {} is beyond num_ranks {}", r, *num_ranks)
                               : fmt::format("expected rank {} (ranks come in order from 0, "
                                             "none missing), got rank {}",
                                             ranks_.size(), r));
        }
        if (at(t, 2, line, "'{'").text != "{") {
          fail(line, t[2].column, fmt::format("expected '{{', got '{}'", t[2].text));
        }
        extra(t, 3, line);
        ranks_.emplace_back();
        in_rank = true;
        continue;
      }
      if (t[0].text == "}") {
        extra(t, 1, line);
        closes_.push_back(line);
        in_rank = false;
        continue;
      }
      rank_line(ranks_.back(), t, line);
    }
    // The last line of the file (a final line end starts no line of its own).
    const auto end = static_cast<std::uint32_t>(
        std::max<std::size_t>(1, lines_.size() - (lines_.size() > 1 && lines_.back().empty())));
    if (!num_ranks) {
      fail(end, 1, "no 'num_ranks N': not a GOAL schedule");
    }
    if (in_rank) {
      fail(end, 1, fmt::format("rank {} has no closing '}}'", ranks_.size() - 1));
    }
    if (ranks_.size() != *num_ranks) {
      fail(end, 1,
           fmt::format("num_ranks is {} but the file has {} rank block{}", *num_ranks,
                       ranks_.size(), ranks_.size() == 1 ? "" : "s"));
    }
  }

  void extra(const std::vector<Token>& t, std::size_t from, std::uint32_t line) const {
    if (t.size() > from) {
      fail(line, t[from].column, fmt::format("unexpected '{}' (one item per line)", t[from].text));
    }
  }

  std::size_t label_index(const detail::GoalRank& rank, const Token& t, std::uint32_t line) const {
    const auto it = rank.labels.find(t.text);
    if (it == rank.labels.end()) {
      fail(line, t.column,
           fmt::format("label '{}' is not defined before this line (labels are per rank)", t.text));
    }
    return it->second;
  }

  void rank_line(detail::GoalRank& rank, const std::vector<Token>& t, std::uint32_t line) {
    if (t.size() == 3 && (t[1].text == "requires" || t[1].text == "irequires")) {
      const std::size_t a = label_index(rank, t[0], line);
      const std::size_t b = label_index(rank, t[2], line);
      if (a == b) {
        fail(line, t[2].column, fmt::format("'{}' cannot require itself", t[0].text));
      }
      (t[1].text == "requires" ? rank.ops[a].requires_ : rank.ops[a].irequires_).push_back(b);
      return;
    }
    std::size_t i = 0;
    std::string_view label;
    if (t[0].text.ends_with(':')) {
      label = t[0].text.substr(0, t[0].text.size() - 1);
      if (!is_label(label)) {
        fail(line, t[0].column, fmt::format("'{}' is not a label ([a-zA-Z][a-zA-Z0-9_]*)", label));
      }
      if (const auto it = rank.labels.find(label); it != rank.labels.end()) {
        fail(line, t[0].column,
             fmt::format("label '{}' is defined twice in this rank (first at line {})", label,
                         rank.ops[it->second].line));
      }
      i = 1;
    }
    detail::GoalOp op;
    op.line = line;
    const Token& verb = at(t, i, line, "send, recv or calc");
    op.column = verb.column;
    ++i;
    if (verb.text == "calc") {
      op.kind = detail::GoalOp::Kind::calc;
      op.amount = number(line, at(t, i, line, "a time"), "a time");
      ++i;
      if (i < t.size() && t[i].text == "cpu") {
        op.cpu = cpu(line, at(t, i + 1, line, "a cpu index"));
        i += 2;
      }
    } else if (verb.text == "send" || verb.text == "recv") {
      const bool send = verb.text == "send";
      op.kind = send ? detail::GoalOp::Kind::send : detail::GoalOp::Kind::recv;
      const Token& size = at(t, i, line, "a size such as 1024b");
      std::string_view digits = size.text;
      if (digits.ends_with('b')) {
        digits.remove_suffix(1);
        ++i;
      } else if (i + 1 < t.size() && t[i + 1].text == "b") {
        i += 2;
      } else {
        fail(line, size.column,
             fmt::format("expected a size in bytes such as 1024b, got '{}'", size.text));
      }
      op.amount = number(line, {digits, size.column}, "a size in bytes");
      const Token& dir = at(t, i, line, send ? "'to'" : "'from'");
      if (dir.text != (send ? "to" : "from")) {
        fail(line, dir.column,
             fmt::format("expected '{}', got '{}'", send ? "to" : "from", dir.text));
      }
      const Token& peer = at(t, i + 1, line, "a rank");
      op.peer = send ? static_cast<std::int64_t>(number(line, peer, "a rank"))
                     : number_or_any(line, peer, "a rank");
      if (op.peer == -1) {
        fail(line, peer.column,
             "a receive from any source (-1): collsim matches each receive "
             "with one named sender");
      }
      i += 2;
      int order = 0; // tag, cpu, nic: LogGOPSim's fixed order
      while (i < t.size()) {
        const std::string_view key = t[i].text;
        const int rank_of_key = key == "tag" ? 1 : key == "cpu" ? 2 : key == "nic" ? 3 : 0;
        if (rank_of_key == 0 || rank_of_key <= order) {
          fail(
              line, t[i].column,
              rank_of_key == 0
                  ? fmt::format("expected tag, cpu or nic, got '{}'", key)
                  : fmt::format("'{}' out of place: options come in the order tag, cpu, nic", key));
        }
        order = rank_of_key;
        const Token& value = at(t, i + 1, line, fmt::format("a value after '{}'", key));
        if (rank_of_key == 1) {
          op.tag = number_or_any(line, value, "a tag");
        } else if (rank_of_key == 2) {
          op.cpu = cpu(line, value);
        } else {
          (void)number(line, value, "a nic index"); // collsim's ports are the topology's
        }
        i += 2;
      }
    } else {
      fail(line, verb.column, fmt::format("expected send, recv or calc, got '{}'", verb.text));
    }
    extra(t, i, line);
    if (!label.empty()) {
      rank.labels.emplace(std::string(label), rank.ops.size());
    }
    rank.ops.push_back(std::move(op));
  }

  std::uint32_t cpu(std::uint32_t line, const Token& t) const {
    const std::uint64_t c = number(line, t, "a cpu index");
    if (c >= core::Schedule::kMaxStreams) {
      fail(line, t.column,
           fmt::format("cpu {}: collsim runs at most {} issue streams per rank", c,
                       core::Schedule::kMaxStreams));
    }
    return static_cast<std::uint32_t>(c);
  }

  std::string name_;
  GoalImportOptions options_;
  std::string text_;                    ///< the file, block comments blanked
  std::vector<std::string_view> lines_; ///< into text_
  std::vector<Token> tokens_;           ///< the current line's
  std::vector<detail::GoalRank> ranks_;
  std::vector<detail::GoalAnnotation> annotated_;
  std::vector<std::uint32_t> closes_; ///< the line of each rank's '}'
};

} // namespace

void detail::goal_fail(const std::string& name, std::uint32_t line, std::uint32_t column,
                       const std::string& msg) {
  throw core::ScheduleError(fmt::format("{}:{}:{}: error: {}", name, line, column, msg));
}

GoalImport read_goal(std::string_view text, std::string_view name,
                     const GoalImportOptions& options) {
  return Reader(name, options).read(text);
}

} // namespace collsim::io

// The rankfile grammar is Open MPI's (mpirun(1), "Rankfiles"); collsim reads where each rank runs
// and ignores the binding width (a range of cores binds one process to several).

#include "collsim/io/rankfile.hpp"

#include "collsim/core/errors.hpp"

#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace collsim::io {
namespace {

class LineParser {
public:
  LineParser(std::string_view line, std::string file, std::uint32_t number)
      : line_(line), file_(std::move(file)), number_(number) {}

  [[noreturn]] void fail(std::size_t column, std::string message) const {
    throw core::ScenarioError(
        core::SourcePos{file_, number_, static_cast<std::uint32_t>(column + 1)}, "",
        std::move(message));
  }

  void skip_blanks() {
    while (at_ < line_.size() && (line_[at_] == ' ' || line_[at_] == '\t')) {
      ++at_;
    }
  }

  void expect(std::string_view word, std::string_view what) {
    skip_blanks();
    if (line_.substr(at_, word.size()) != word) {
      fail(at_,
           fmt::format("expected {} ('rank N=HOST slot=SLOT'), got '{}'", what, line_.substr(at_)));
    }
    at_ += word.size();
  }

  std::uint32_t number(std::string_view what) {
    skip_blanks();
    std::uint32_t value = 0;
    const char* first = line_.data() + at_;
    const char* last = line_.data() + line_.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc{} || ptr == first) {
      fail(at_, fmt::format("expected {} (a number), got '{}'", what, line_.substr(at_)));
    }
    at_ += static_cast<std::size_t>(ptr - first);
    return value;
  }

  /// The host name up to the next blank.
  std::pair<std::string, std::size_t> host() {
    skip_blanks();
    const std::size_t start = at_;
    while (at_ < line_.size() && line_[at_] != ' ' && line_[at_] != '\t') {
      ++at_;
    }
    if (at_ == start) {
      fail(start, "expected a host name after '='");
    }
    return {std::string(line_.substr(start, at_ - start)), start};
  }

  [[nodiscard]] std::size_t at() const { return at_; }
  [[nodiscard]] bool done() {
    skip_blanks();
    return at_ == line_.size();
  }
  [[nodiscard]] char peek() const { return at_ < line_.size() ? line_[at_] : '\0'; }
  void advance() { ++at_; }

private:
  std::string_view line_;
  std::string file_;
  std::uint32_t number_;
  std::size_t at_ = 0;
};

/// `nodeK` and `+nK` name node K; other names are numbered in order of first appearance.
std::optional<std::uint32_t> numbered_host(std::string_view host) {
  for (const std::string_view prefix : {std::string_view("node"), std::string_view("+n")}) {
    if (host.substr(0, prefix.size()) == prefix && host.size() > prefix.size()) {
      std::uint32_t k = 0;
      const char* first = host.data() + prefix.size();
      const char* last = host.data() + host.size();
      const auto [ptr, ec] = std::from_chars(first, last, k);
      if (ec == std::errc{} && ptr == last) {
        return k;
      }
    }
  }
  return std::nullopt;
}

} // namespace

std::vector<core::RankSlot> parse_rankfile(std::string_view text, std::string_view file) {
  std::vector<core::RankSlot> out;
  std::map<std::string, std::uint32_t> named;
  std::set<std::uint32_t> ranks;
  std::uint32_t number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (const auto hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    LineParser p(line, std::string(file), number);
    if (p.done()) {
      if (end == text.size()) {
        break;
      }
      continue;
    }
    core::RankSlot slot;
    slot.pos = core::SourcePos{std::string(file), number, 1};
    p.expect("rank", "'rank'");
    p.skip_blanks();
    const std::size_t rank_at = p.at();
    slot.rank = p.number("a rank");
    if (!ranks.insert(slot.rank).second) {
      p.fail(rank_at, fmt::format("rank {} is placed twice", slot.rank));
    }
    p.expect("=", "'=' after the rank");
    const auto [host, host_at] = p.host();
    if (const auto k = numbered_host(host)) {
      slot.node = *k;
    } else {
      slot.node = named.try_emplace(host, static_cast<std::uint32_t>(named.size())).first->second;
    }
    p.expect("slot=", "'slot='");
    const std::uint32_t first = p.number("a slot");
    if (p.peek() == ':') {
      p.advance();
      slot.socket = static_cast<std::int32_t>(first);
      slot.slot = p.number("a core after 'socket:'");
    } else {
      slot.slot = first;
    }
    // The rest of a list or range ("-3", ",5", "-7,9") binds wider; the rank runs on the first.
    while (!p.done() && (p.peek() == '-' || p.peek() == ',' || p.peek() == ':' ||
                         std::isdigit(static_cast<unsigned char>(p.peek())) != 0)) {
      p.advance();
    }
    if (!p.done()) {
      p.fail(p.at(), "unexpected text after the slot");
    }
    out.push_back(std::move(slot));
    (void)host_at;
    if (end == text.size()) {
      break;
    }
  }
  if (out.empty()) {
    throw core::ScenarioError(core::SourcePos{std::string(file), 1, 1}, "",
                              "the rankfile places no rank (expected lines like 'rank 0=node0 "
                              "slot=0')");
  }
  return out;
}

} // namespace collsim::io

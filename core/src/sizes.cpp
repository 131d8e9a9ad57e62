#include "collsim/core/sizes.hpp"

#include <charconv>
#include <fmt/format.h>

namespace collsim::core {

Parsed<std::vector<Bytes>> parse_size_sweep(std::string_view text) {
  Parsed<std::vector<Bytes>> out;
  constexpr std::size_t kMaxSizes = 100000;
  auto fail = [&](std::string why) {
    out.error = std::move(why);
    out.value.clear();
    return out;
  };
  if (text.find(':') != std::string_view::npos) {
    const auto c1 = text.find(':');
    const auto c2 = text.find(':', c1 + 1);
    if (c2 == std::string_view::npos || text.find(':', c2 + 1) != std::string_view::npos) {
      return fail(fmt::format(
          "expected a size sweep like '8B:1GiB:x2' (MIN:MAX:xFACTOR or MIN:MAX:+STEP), got '{}'",
          text));
    }
    const auto lo = parse_bytes(text.substr(0, c1));
    if (!lo.ok()) {
      return fail(lo.error);
    }
    const auto hi = parse_bytes(text.substr(c1 + 1, c2 - c1 - 1));
    if (!hi.ok()) {
      return fail(hi.error);
    }
    if (hi.value < lo.value) {
      return fail(fmt::format("size sweep '{}' ends before it starts", text));
    }
    std::string_view step = text.substr(c2 + 1);
    while (!step.empty() && step.front() == ' ') {
      step.remove_prefix(1);
    }
    if (!step.empty() && step.front() == 'x') {
      std::uint64_t factor = 0;
      auto [ptr, ec] = std::from_chars(step.data() + 1, step.data() + step.size(), factor);
      if (ec != std::errc{} || ptr != step.data() + step.size() || factor < 2) {
        return fail(fmt::format(
            "size sweep factor must be an integer of at least 2 ('x2'), got '{}'", step));
      }
      if (lo.value.value == 0) {
        return fail(fmt::format("a geometric size sweep cannot start at 0 bytes, got '{}'", text));
      }
      for (std::uint64_t v = lo.value.value; v <= hi.value.value; v *= factor) {
        out.value.push_back(Bytes{v});
        if (out.value.size() > kMaxSizes) {
          return fail("size sweep has more than 100000 sizes");
        }
        if (v > hi.value.value / factor) {
          break;
        }
      }
      return out;
    }
    if (!step.empty() && step.front() == '+') {
      const auto inc = parse_bytes(step.substr(1));
      if (!inc.ok() || inc.value.value == 0) {
        return fail(
            fmt::format("size sweep step must be a positive size ('+1KiB'), got '{}'", step));
      }
      for (std::uint64_t v = lo.value.value; v <= hi.value.value; v += inc.value.value) {
        out.value.push_back(Bytes{v});
        if (out.value.size() > kMaxSizes) {
          return fail("size sweep has more than 100000 sizes");
        }
      }
      return out;
    }
    return fail(fmt::format("size sweep step must be 'xFACTOR' or '+STEP', got '{}'", step));
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      comma = text.size();
    }
    const auto one = parse_bytes(text.substr(start, comma - start));
    if (!one.ok()) {
      return fail(one.error);
    }
    out.value.push_back(one.value);
    if (out.value.size() > kMaxSizes) {
      return fail("size list has more than 100000 sizes");
    }
    start = comma + 1;
  }
  return out;
}

} // namespace collsim::core

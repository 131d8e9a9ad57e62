// NCCL release names and version codes (nccl_release.hpp).

#include "collsim/algorithms/nccl_release.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace collsim::algorithms::nccl {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::uint32_t> number(std::string_view s) {
  if (!all_digits(s) || s.size() > 6) {
    return std::nullopt;
  }
  std::uint32_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

} // namespace

std::optional<ReleaseCode> parse_release(std::string_view text) {
  if (text.starts_with('v')) {
    text.remove_prefix(1);
  }
  // "2.19.3-1" (a tag) and "2.19.3+cuda12.2" (NCCL's INFO line): the suffix names a build.
  const std::size_t suffix = text.find_first_of("-+");
  if (suffix != std::string_view::npos) {
    text = text.substr(0, suffix);
  }
  if (text.find('.') == std::string_view::npos) {
    // A version code, as nccl-tests prints it (nccl-library=21903); NCCL 2.9 - 2.99 codes are
    // 20900 - 29999.
    const auto code = number(text);
    if (!code || *code < 20000 || *code > 29999) {
      return std::nullopt;
    }
    return *code;
  }
  std::uint32_t parts[3] = {0, 0, 0};
  std::size_t i = 0;
  while (i < 3) {
    const std::size_t dot = text.find('.');
    const auto v = number(text.substr(0, dot));
    if (!v) {
      return std::nullopt;
    }
    parts[i++] = *v;
    if (dot == std::string_view::npos) {
      break;
    }
    text.remove_prefix(dot + 1);
    if (i == 3) {
      return std::nullopt; // a fourth part
    }
  }
  if (i < 2 || parts[0] != 2 || parts[1] > 99 || parts[2] > 99) {
    return std::nullopt;
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

std::string release_name(ReleaseCode code) {
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

std::string model_label(ReleaseCode code) {
  if (code > kNewestModelled) {
    return fmt::format("NCCL {} tuning model (for {}, newer than collsim models)",
                       release_name(kNewestModelled), release_name(code));
  }
  if (code < kOldestModelled) {
    return fmt::format("NCCL {} tuning model (for {}, older than collsim models)",
                       release_name(kOldestModelled), release_name(code));
  }
  return fmt::format("NCCL {} tuning model", release_name(code));
}

} // namespace collsim::algorithms::nccl

#include "collsim/core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace collsim::core {
namespace {

struct NumberAndUnit {
  double number = 0.0;
  std::string_view unit;
  bool ok = false;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
    s.remove_suffix(1);
  }
  return s;
}

NumberAndUnit split(std::string_view text) {
  NumberAndUnit out;
  text = trim(text);
  if (text.empty()) {
    return out;
  }
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out.number, std::chars_format::general);
  if (ec != std::errc{} || !std::isfinite(out.number)) {
    return out;
  }
  out.unit = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  out.ok = true;
  return out;
}

struct UnitFactor {
  std::string_view name;
  double factor;
};

// Sizes. Decimal prefixes are powers of ten, binary ones powers of two (IEC 80000-13).
constexpr std::array kSizeUnits{
    UnitFactor{"B", 1.0},
    UnitFactor{"KB", 1e3},
    UnitFactor{"MB", 1e6},
    UnitFactor{"GB", 1e9},
    UnitFactor{"TB", 1e12},
    UnitFactor{"KiB", 1024.0},
    UnitFactor{"MiB", 1048576.0},
    UnitFactor{"GiB", 1073741824.0},
    UnitFactor{"TiB", 1099511627776.0},
};

constexpr std::array kTimeUnits{
    UnitFactor{"s", 1.0},   UnitFactor{"ms", 1e-3}, UnitFactor{"us", 1e-6},
    UnitFactor{"µs", 1e-6}, UnitFactor{"ns", 1e-9}, UnitFactor{"ps", 1e-12},
};

// Rates: "B/s" families count bytes, "b/s" families count bits (Gb/s = 10^9 bits/s = 1.25e8 B/s).
constexpr std::array kRateUnits{
    UnitFactor{"B/s", 1.0},         UnitFactor{"KB/s", 1e3},           UnitFactor{"MB/s", 1e6},
    UnitFactor{"GB/s", 1e9},        UnitFactor{"TB/s", 1e12},          UnitFactor{"KiB/s", 1024.0},
    UnitFactor{"MiB/s", 1048576.0}, UnitFactor{"GiB/s", 1073741824.0}, UnitFactor{"b/s", 0.125},
    UnitFactor{"Kb/s", 1e3 / 8},    UnitFactor{"Mb/s", 1e6 / 8},       UnitFactor{"Gb/s", 1e9 / 8},
    UnitFactor{"Tb/s", 1e12 / 8},   UnitFactor{"Gbps", 1e9 / 8},
};

template <std::size_t N>
const UnitFactor* find_unit(const std::array<UnitFactor, N>& units, std::string_view name) {
  for (const auto& u : units) {
    if (u.name == name) {
      return &u;
    }
  }
  return nullptr;
}

} // namespace

Parsed<Bytes> parse_bytes(std::string_view text) {
  Parsed<Bytes> out;
  auto fail = [&] {
    out.error = fmt::format("expected a size like '64 KiB', '1 MB' or '8 B', got '{}'", trim(text));
    return out;
  };
  const auto nu = split(text);
  if (!nu.ok) {
    return fail();
  }
  const UnitFactor* unit = nu.unit.empty() ? &kSizeUnits[0] : find_unit(kSizeUnits, nu.unit);
  if (unit == nullptr) {
    return fail();
  }
  const double bytes = nu.number * unit->factor;
  if (bytes < 0) {
    out.error = fmt::format("a size cannot be negative, got '{}'", trim(text));
    return out;
  }
  // 2^63 keeps every offset computation inside uint64 with room to spare.
  if (bytes >= 9.2e18) {
    out.error = fmt::format("size '{}' is too large (the limit is 8 EiB)", trim(text));
    return out;
  }
  const double whole = std::round(bytes);
  if (std::fabs(whole - bytes) > 1e-6 * std::max(1.0, bytes)) {
    out.error = fmt::format("size '{}' is not a whole number of bytes", trim(text));
    return out;
  }
  out.value = Bytes{static_cast<std::uint64_t>(whole)};
  return out;
}

Parsed<Seconds> parse_seconds(std::string_view text) {
  Parsed<Seconds> out;
  const auto nu = split(text);
  const UnitFactor* unit = nu.ok ? find_unit(kTimeUnits, nu.unit) : nullptr;
  if (unit == nullptr) {
    out.error =
        fmt::format("expected a duration like '1.5 us', '200 ns' or '2 ms', got '{}'", trim(text));
    return out;
  }
  if (nu.number < 0) {
    out.error = fmt::format("a duration cannot be negative, got '{}'", trim(text));
    return out;
  }
  out.value = Seconds{nu.number * unit->factor};
  return out;
}

Parsed<Bandwidth> parse_bandwidth(std::string_view text) {
  Parsed<Bandwidth> out;
  const auto nu = split(text);
  const UnitFactor* unit = nu.ok ? find_unit(kRateUnits, nu.unit) : nullptr;
  if (unit == nullptr) {
    out.error =
        fmt::format("expected a bandwidth like '25 GB/s' or '200 Gb/s', got '{}'", trim(text));
    return out;
  }
  if (nu.number <= 0) {
    out.error = fmt::format("a bandwidth must be positive, got '{}'", trim(text));
    return out;
  }
  out.value = Bandwidth{nu.number * unit->factor};
  return out;
}

std::string format_bytes(Bytes b) {
  constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> kBinary{
      {{1ULL << 40, "TiB"}, {1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}}};
  for (const auto& [factor, name] : kBinary) {
    if (b.value >= factor && b.value % factor == 0) {
      return fmt::format("{} {}", b.value / factor, name);
    }
  }
  return fmt::format("{} B", b.value);
}

std::string format_seconds(Seconds s) {
  const double v = s.value;
  if (v == 0.0) {
    return "0 s";
  }
  if (v < 1e-6) {
    return fmt::format("{:.3f} ns", v * 1e9);
  }
  if (v < 1e-3) {
    return fmt::format("{:.3f} us", v * 1e6);
  }
  if (v < 1.0) {
    return fmt::format("{:.3f} ms", v * 1e3);
  }
  return fmt::format("{:.3f} s", v);
}

std::string format_bandwidth(Bandwidth bw) {
  return fmt::format("{:g} GB/s", bw.gbps());
}

} // namespace collsim::core

#pragma once
// Strong units. Bytes is an integer count; Seconds and Bandwidth are distinct floating-point types
// so that GB/s and B/ns cannot be mixed by accident. One parser reads every unit string collsim
// accepts: GB = 10^9 bytes, GiB = 2^30 bytes, Gb = 10^9 bits (STYLE.md, "Strong units").

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace collsim::core {

/// A byte count (message size, buffer size, offset).
struct Bytes {
  std::uint64_t value = 0;

  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t v) : value(v) {}
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes{value + o.value}; }
  constexpr Bytes operator-(Bytes o) const { return Bytes{value - o.value}; }
  [[nodiscard]] constexpr double as_double() const { return static_cast<double>(value); }
};

/// A duration in seconds.
struct Seconds {
  double value = 0.0;

  constexpr Seconds() = default;
  constexpr explicit Seconds(double v) : value(v) {}
  constexpr auto operator<=>(const Seconds&) const = default;
  constexpr Seconds operator+(Seconds o) const { return Seconds{value + o.value}; }
  constexpr Seconds operator-(Seconds o) const { return Seconds{value - o.value}; }
  constexpr Seconds operator*(double k) const { return Seconds{value * k}; }
  [[nodiscard]] constexpr double us() const { return value * 1e6; }
};

/// A data rate in bytes per second (GB/s = 10^9 B/s).
struct Bandwidth {
  double bytes_per_second = 0.0;

  constexpr Bandwidth() = default;
  constexpr explicit Bandwidth(double bps) : bytes_per_second(bps) {}
  constexpr auto operator<=>(const Bandwidth&) const = default;
  [[nodiscard]] constexpr double gbps() const { return bytes_per_second / 1e9; }
  /// Time to move `b` bytes at this rate (the beta term): b / bandwidth.
  [[nodiscard]] constexpr Seconds time_for(Bytes b) const {
    return Seconds{b.as_double() / bytes_per_second};
  }
};

constexpr Bytes operator""_B(unsigned long long v) {
  return Bytes{v};
}
constexpr Bytes operator""_KiB(unsigned long long v) {
  return Bytes{v << 10};
}
constexpr Bytes operator""_MiB(unsigned long long v) {
  return Bytes{v << 20};
}
constexpr Bytes operator""_GiB(unsigned long long v) {
  return Bytes{v << 30};
}

/// The result of parsing a unit string: empty error means success.
template <class T>
struct Parsed {
  T value{};
  std::string error; ///< human-readable reason, e.g. "expected a size like '64 KiB', got '64 KiBs'"
  [[nodiscard]] bool ok() const { return error.empty(); }
};

/// Parses sizes: "64 KiB", "1MiB", "8B", "1.5 GB", "1000" (plain bytes). Fractions must give whole
/// bytes.
Parsed<Bytes> parse_bytes(std::string_view text);
/// Parses durations: "1.5 us", "2 ns", "0.3 ms", "1 s".
Parsed<Seconds> parse_seconds(std::string_view text);
/// Parses rates: "25 GB/s", "200 Gb/s", "12.5 GiB/s", "100 MB/s", "1e9 B/s".
Parsed<Bandwidth> parse_bandwidth(std::string_view text);

/// "1 MiB", "4 KiB", "100 B": the exact binary unit if the value is a multiple of one, else bytes.
std::string format_bytes(Bytes b);
/// "2.000 us" style with an automatic unit (ns, us, ms, s).
std::string format_seconds(Seconds s);
/// "25 GB/s" style (decimal units).
std::string format_bandwidth(Bandwidth bw);

} // namespace collsim::core

#include "collsim/core/imbalance.hpp"

#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace collsim::core {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<double> number(std::string_view s) {
  s = trim(s);
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::uint64_t> whole(std::string_view s) {
  s = trim(s);
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

/// Splits "KIND:ARG,opt=v,opt=v" into the kind, the argument and the options.
struct Pieces {
  std::string_view kind;
  std::string_view arg;
  std::vector<std::pair<std::string_view, std::string_view>> options;
  std::string error;
};

Pieces split(std::string_view text) {
  Pieces p;
  text = trim(text);
  std::string_view head = text;
  std::string_view rest;
  if (const auto comma = text.find(','); comma != std::string_view::npos) {
    head = text.substr(0, comma);
    rest = text.substr(comma + 1);
  }
  if (const auto colon = head.find(':'); colon != std::string_view::npos) {
    p.kind = trim(head.substr(0, colon));
    p.arg = trim(head.substr(colon + 1));
  } else {
    p.kind = trim(head);
  }
  while (!rest.empty()) {
    std::string_view item = rest;
    if (const auto comma = rest.find(','); comma != std::string_view::npos) {
      item = rest.substr(0, comma);
      rest = rest.substr(comma + 1);
    } else {
      rest = {};
    }
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (trim(item) == "periodic") { // the one flag (cart); checked by the caller
        p.options.emplace_back("periodic", "");
        continue;
      }
      p.error = fmt::format("expected an option NAME=VALUE after ',', got '{}'", trim(item));
      return p;
    }
    p.options.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
  }
  return p;
}

} // namespace

Parsed<CountsSpec> parse_counts_spec(std::string_view text) {
  Parsed<CountsSpec> out;
  CountsSpec& c = out.value;
  c.text = std::string(trim(text));
  const Pieces p = split(text);
  const auto fail = [&](std::string why) {
    out.error = std::move(why);
    return out;
  };
  if (!p.error.empty()) {
    return fail(p.error);
  }
  const std::string kinds =
      "uniform, zipf:S, normal:CV, one:R, file:PATH, moe:PATH, cart:DxD[,periodic], graph:PATH "
      "or sparse:D";
  if (p.kind == "uniform" || p.kind == "none") {
    c.kind = p.kind == "uniform" ? CountsSpec::Kind::uniform : CountsSpec::Kind::none;
    if (!p.arg.empty()) {
      return fail(fmt::format("'{}' takes no argument", p.kind));
    }
  } else if (p.kind == "zipf" || p.kind == "normal") {
    c.kind = p.kind == "zipf" ? CountsSpec::Kind::zipf : CountsSpec::Kind::normal;
    const auto v = number(p.arg);
    if (!v || *v < 0.0 || *v > 100.0) {
      return fail(fmt::format("{} needs a number from 0 to 100 after ':' ({}), got '{}'", p.kind,
                              p.kind == "zipf" ? "the exponent, e.g. zipf:1.2"
                                               : "the coefficient of variation, e.g. normal:0.3",
                              p.arg));
    }
    c.parameter = *v;
  } else if (p.kind == "one") {
    c.kind = CountsSpec::Kind::one;
    const auto r = whole(p.arg);
    if (!r || *r > 0xffffffffULL) {
      return fail(
          fmt::format("one needs the rank that holds everything, e.g. one:0, got '{}'", p.arg));
    }
    c.rank = static_cast<std::uint32_t>(*r);
  } else if (p.kind == "sparse") {
    c.kind = CountsSpec::Kind::sparse;
    const auto d = whole(p.arg);
    if (!d || *d == 0 || *d > (1U << 24)) {
      return fail(fmt::format(
          "sparse needs the number of neighbours of each rank, e.g. sparse:16, got '{}'", p.arg));
    }
    c.rank = static_cast<std::uint32_t>(*d);
  } else if (p.kind == "cart") {
    c.kind = CountsSpec::Kind::cart;
    std::string_view rest = p.arg;
    while (true) {
      const auto x = rest.find('x');
      const auto d = whole(rest.substr(0, x));
      if (!d || *d == 0 || *d > (1U << 24)) {
        return fail(fmt::format(
            "cart needs the grid's dims, each at least 1, e.g. cart:8x8 or cart:4x4x4, got '{}'",
            p.arg));
      }
      c.dims.push_back(static_cast<std::uint32_t>(*d));
      if (x == std::string_view::npos) {
        break;
      }
      rest = rest.substr(x + 1);
    }
    if (c.dims.size() > 8) {
      return fail(fmt::format("cart takes at most 8 dims, got {}", c.dims.size()));
    }
  } else if (p.kind == "file" || p.kind == "moe" || p.kind == "graph") {
    c.kind = p.kind == "file"  ? CountsSpec::Kind::file
             : p.kind == "moe" ? CountsSpec::Kind::moe
                               : CountsSpec::Kind::graph;
    if (p.arg.empty()) {
      return fail(fmt::format("{} needs a path after ':', e.g. {}:counts.txt", p.kind, p.kind));
    }
    c.path = std::string(p.arg);
  } else {
    return fail(fmt::format("unknown counts '{}': expected {}", p.kind, kinds));
  }
  for (const auto& [name, value] : p.options) {
    if (name == "periodic" && c.kind == CountsSpec::Kind::cart && value.empty()) {
      c.periodic = true;
      continue;
    }
    if (name != "seed") {
      return fail(fmt::format("unknown counts option '{}' (the only option is seed=N)", name));
    }
    const auto s = whole(value);
    if (!s) {
      return fail(fmt::format("seed needs a whole number, got '{}'", value));
    }
    c.seed = *s;
  }
  return out;
}

Parsed<SkewSpec> parse_skew_spec(std::string_view text) {
  Parsed<SkewSpec> out;
  SkewSpec& k = out.value;
  k.text = std::string(trim(text));
  const Pieces p = split(text);
  const auto fail = [&](std::string why) {
    out.error = std::move(why);
    return out;
  };
  if (!p.error.empty()) {
    return fail(p.error);
  }
  const auto duration = [&](std::string_view what) -> std::optional<Seconds> {
    const Parsed<Seconds> t = parse_seconds(what);
    if (!t.ok() || !(t.value.value >= 0.0) || t.value.value > 3600.0) {
      return std::nullopt;
    }
    return t.value;
  };
  if (p.kind == "none") {
    if (!p.arg.empty()) {
      return fail("'none' takes no argument");
    }
  } else if (p.kind == "uniform" || p.kind == "normal") {
    k.kind = p.kind == "uniform" ? SkewSpec::Kind::uniform : SkewSpec::Kind::normal;
    const auto t = duration(p.arg);
    if (!t) {
      return fail(fmt::format("{} needs a duration from 0 to 1 hour after ':', e.g. {}:100us, "
                              "got '{}'",
                              p.kind, p.kind, p.arg));
    }
    k.time = *t;
  } else if (p.kind == "late") {
    k.kind = SkewSpec::Kind::late;
    std::string_view arg = p.arg;
    if (const auto at = arg.find('@'); at != std::string_view::npos) {
      const auto r = whole(arg.substr(at + 1));
      if (!r || *r > 0xffffffffULL) {
        return fail(fmt::format("expected a rank after '@', e.g. late:1ms@5, got '{}'",
                                arg.substr(at + 1)));
      }
      k.late_rank = static_cast<std::int64_t>(*r);
      arg = arg.substr(0, at);
    }
    const auto t = duration(arg);
    if (!t) {
      return fail(fmt::format(
          "late needs a duration from 0 to 1 hour after ':', e.g. late:1ms, got '{}'", arg));
    }
    k.time = *t;
  } else if (p.kind == "file") {
    k.kind = SkewSpec::Kind::file;
    if (p.arg.empty()) {
      return fail("file needs a path after ':', e.g. file:arrivals.txt");
    }
    k.path = std::string(p.arg);
  } else {
    return fail(fmt::format("unknown skew '{}': expected none, uniform:T, normal:T, late:T[@R], "
                            "late:T,k=K or file:PATH",
                            p.kind));
  }
  for (const auto& [name, value] : p.options) {
    const auto n = whole(value);
    if (name == "seed" && n) {
      k.seed = *n;
    } else if (name == "k" && k.kind == SkewSpec::Kind::late && n && *n >= 1 &&
               *n <= 0xffffffffULL && k.late_rank < 0) {
      k.late_ranks = static_cast<std::uint32_t>(*n);
    } else if (name == "seed" || name == "k") {
      return fail(fmt::format("bad value '{}' for {} ({})", value, name,
                              name == "seed" ? "a whole number"
                                             : "k=K needs late:T without @R and K >= 1"));
    } else {
      return fail(fmt::format("unknown skew option '{}' (options: seed=N; late also k=K)", name));
    }
  }
  return out;
}

} // namespace collsim::core

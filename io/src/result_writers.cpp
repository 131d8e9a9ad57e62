#include "collsim/io/writers.hpp"

#include "collsim/io/csv_field.hpp"

#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string_view>
#include <tuple>

namespace collsim::io {
namespace {

/// nccl-tests prints -1 in the root column of collectives that have no root.
std::int64_t printed_root(const core::ResultRow& r) {
  return core::has_root(r.collective) ? static_cast<std::int64_t>(r.root) : -1;
}

std::string_view redop(const core::ResultRow& r) {
  return core::is_reduction(r.collective) ? "sum" : "none";
}

/// nccl-tests' getFloatStr: the most decimals (2, 1, 0) that fit the column, else scientific, so
/// that a slow large message keeps the columns aligned instead of pushing them right.
std::string fit(double value, int width) {
  const auto w = static_cast<std::size_t>(width);
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string s = fmt::format("{:{}.{}f}", value, w, decimals);
    if (s.size() <= w) {
      return s;
    }
  }
  return fmt::format("{:{}.1e}", value, w);
}

/// The key a table group is introduced by.
auto group_key(const core::ResultRow& r) {
  return std::tie(r.collective, r.varying, r.algorithm, r.engine, r.ranks, r.stack);
}

/// "alltoallv" for a v-collective row (core::ResultRow::varying).
std::string collective_name(const core::ResultRow& r) {
  std::string name(core::to_string(r.collective));
  return r.varying ? name + "v" : name;
}

/// Whether any row ran under arrival skew (core::ResultRow::last_arrival).
bool any_skew(std::span<const core::ResultRow> rows) {
  return std::ranges::any_of(rows,
                             [](const core::ResultRow& r) { return r.last_arrival.value > 0.0; });
}

/// Whether any row names its library stack (core::ResultRow::stack).
bool any_stack(std::span<const core::ResultRow> rows) {
  return std::ranges::any_of(rows, [](const core::ResultRow& r) { return !r.stack.empty(); });
}

/// Whether any row was timed another way than by running it in full (core::ResultRow::method:
/// a steady state or a collapsed schedule): then CSV has the column.
bool any_method(std::span<const core::ResultRow> rows) {
  return std::ranges::any_of(rows, [](const core::ResultRow& r) { return !r.method.empty(); });
}

/// Whether any row ran with parameters a library chose (core::ResultRow::params): then the
/// table, CSV and JSON show them.
bool any_params(std::span<const core::ResultRow> rows) {
  return std::ranges::any_of(rows, [](const core::ResultRow& r) { return !r.params.empty(); });
}

/// The comment lines after a table group that say how its extrapolated rows were timed
/// (core::ResultRow::method, extrapolated), one per run of consecutive rows timed alike:
/// comments, so that the table still reads as nccl-tests output. Collapsed schedules, exact by
/// symmetry and the common case on symmetric machines, are left to JSON and CSV.
std::string timed_note(std::span<const std::pair<std::string, std::vector<std::uint64_t>>> timed) {
  std::string out;
  for (const auto& [method, sizes] : timed) {
    out += sizes.size() == 1 ? fmt::format("#   {} B timed by {}\n", sizes.front(), method)
                             : fmt::format("#   {} sizes from {} B to {} B timed by {}\n",
                                           sizes.size(), sizes.front(), sizes.back(), method);
  }
  return out;
}

} // namespace

std::string format_table(std::span<const core::ResultRow> rows) {
  // Same widths as nccl-tests' "%12li  %12li  %8s  %6s  %6s  %7s  %6s  %6s" so that the output
  // reads like the logs it is compared with (and parses with the same parser).
  std::string out;
  out += "# collsim results: time of the last rank to finish; algbw = size / time, busbw = algbw x "
         "the collective's nccl-tests factor\n";
  out += "#\n";
  const bool params = any_params(rows);
  const bool skew = any_skew(rows);
  if (skew) {
    out += "# arrival skew: time counts from the first rank's arrival; from_last = time - the "
           "last rank's arrival\n#\n";
  }
  out += "#       size         count      type   redop    root     time   algbw   busbw";
  out += skew ? "  from_last" : "";
  out += params ? "  params (the library's choice)\n" : "\n";
  out += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";

  // Group in order of first appearance, keeping each group's rows in their given order: callers
  // usually sweep sizes innermost, but interleaved rows must not produce repeated groups.
  std::vector<bool> done(rows.size(), false);
  for (std::size_t first = 0; first < rows.size(); ++first) {
    if (done[first]) {
      continue;
    }
    const core::ResultRow& head = rows[first];
    std::vector<std::pair<std::string, std::vector<std::uint64_t>>> timed; // method, its sizes
    const core::ResultRow* previous = nullptr; // the group's row before this one
    out += "#\n";
    out += fmt::format("# collective {}, algorithm {}, engine {}, {} rank{}{}{}\n",
                       collective_name(head), head.algorithm, head.engine, head.ranks,
                       head.ranks == 1 ? "" : "s",
                       head.stack.empty() ? "" : fmt::format(", stack {}", head.stack),
                       head.last_arrival.value > 0.0
                           ? fmt::format(", last arrival at {:.2f} us", head.last_arrival.us())
                           : "");
    for (std::size_t i = first; i < rows.size(); ++i) {
      if (done[i] || group_key(rows[i]) != group_key(head)) {
        continue;
      }
      done[i] = true;
      const core::ResultRow& r = rows[i];
      out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {}  {}  {}", r.bytes.value, r.count,
                         r.type, redop(r), printed_root(r), fit(r.time.us(), 7),
                         fit(r.algbw.gbps(), 6), fit(r.busbw.gbps(), 6));
      if (skew) {
        out += fmt::format("  {}", fit((r.time - r.last_arrival).us(), 9));
      }
      out += r.params.empty() ? "\n" : fmt::format("  {}\n", r.params);
      if (r.extrapolated) {
        if (previous == nullptr || !previous->extrapolated || previous->method != r.method) {
          timed.emplace_back(r.method, std::vector<std::uint64_t>{});
        }
        timed.back().second.push_back(r.bytes.value);
      }
      previous = &r;
    }
    out += timed_note(timed);
  }
  return out;
}

std::string format_csv(std::span<const core::ResultRow> rows) {
  const bool params = any_params(rows);
  const bool stack = any_stack(rows);
  const bool skew = any_skew(rows);
  const bool method = any_method(rows);
  std::string out =
      "collective,algorithm,engine,ranks,bytes,count,type,root,time_us,algbw_GBps,busbw_GBps";
  out += skew ? ",last_arrival_us,from_last_us" : "";
  out += stack ? ",stack" : "";
  out += method ? ",method" : "";
  out += params ? ",params\n" : "\n";
  for (const auto& r : rows) {
    // "{}" prints the shortest text that reads back as the same double.
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{}", collective_name(r), csv_field(r.algorithm),
                    csv_field(r.engine), r.ranks, r.bytes.value, r.count, csv_field(r.type),
                    printed_root(r), r.time.us(), r.algbw.gbps(), r.busbw.gbps());
    out += skew ? fmt::format(",{},{}", r.last_arrival.us(), (r.time - r.last_arrival).us()) : "";
    out += stack ? fmt::format(",{}", csv_field(r.stack)) : "";
    out += method ? fmt::format(",{}", csv_field(r.method)) : "";
    out += params ? fmt::format(",{}\n", csv_field(r.params)) : "\n";
  }
  return out;
}

std::string format_json(std::span<const core::ResultRow> rows, const JsonExtras& extras) {
  // ordered_json keeps members in insertion order: extras first, then the (long) results.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  auto add = [&](const std::string& key, nlohmann::ordered_json value) {
    if (doc.contains(key) || key == "results") {
      throw core::InternalError(fmt::format("format_json: the key '{}' is given twice", key));
    }
    doc[key] = std::move(value);
  };
  for (const auto& [key, value] : extras.string_fields) {
    add(key, value);
  }
  for (const auto& [key, text] : extras.raw_fields) {
    nlohmann::ordered_json value;
    try {
      value = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw core::InternalError(
          fmt::format("format_json: the value of '{}' is not valid JSON: {}", key, e.what()));
    }
    add(key, std::move(value));
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    results.push_back({
        {"collective", collective_name(r)},
        {"algorithm", r.algorithm},
        {"engine", r.engine},
        {"ranks", r.ranks},
        {"bytes", r.bytes.value},
        {"count", r.count},
        {"type", r.type},
        {"root", printed_root(r)},
        {"time_us", r.time.us()},
        {"algbw_GBps", r.algbw.gbps()},
        {"busbw_GBps", r.busbw.gbps()},
    });
    if (!r.stack.empty()) {
      results.back()["stack"] = r.stack;
    }
    if (r.last_arrival.value > 0.0) {
      results.back()["last_arrival_us"] = r.last_arrival.us();
      results.back()["from_last_us"] = (r.time - r.last_arrival).us();
    }
    if (!r.params.empty()) {
      results.back()["params"] = r.params;
    }
    if (!r.method.empty()) {
      results.back()["method"] = r.method;
    }
  }
  doc["results"] = std::move(results);
  return doc.dump(2) + "\n";
}

} // namespace collsim::io

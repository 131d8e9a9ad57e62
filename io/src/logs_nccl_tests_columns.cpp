// nccl-tests tables, column by column: the header's names to field positions (every header
// generation since 2016), the program's operation, NCCL_VERSION_CODE, and the rank count that the
// printed busbw / algbw ratio or the size / count ratio gives (nccl-tests' factors: src/common.cu
// and doc/PERFORMANCE.md).

#include "logs_nccl_tests_parts.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace collsim::io::logs::nccl_tests_detail {

std::optional<Columns> columns_from_names(const std::vector<std::string_view>& names) {
  Columns c;
  c.fields = names.size();
  int side = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto at = static_cast<int>(i);
    const std::string_view n = names[i];
    if (n == "size" || n == "bytes") {
      c.size = at;
    } else if (n == "count" || n == "N") {
      c.count = at;
    } else if (n == "type") {
      c.type = at;
    } else if (n == "redop" || n == "op") {
      c.redop = at;
    } else if (n == "root") {
      c.root = at;
    } else if (n == "time" || n == "cputime") {
      if (++side > 1) {
        return std::nullopt;
      }
      c.time[side] = at;
    } else if (side >= 0 && n == "algbw") {
      c.algbw[side] = at;
    } else if (side >= 0 && n == "busbw") {
      c.busbw[side] = at;
    } else if (side >= 0 && (n == "#wrong" || n == "error" || n == "res")) {
      c.wrong[side] = at;
      c.wrong_is_count = n == "#wrong";
    } else if (n == "timestamp" && i + 1 == names.size()) {
      c.trailing_timestamp = true;
    }
  }
  if (c.size != 0 || c.count < 0 || c.type < 0 || c.time[0] < 0 || c.algbw[0] < 0 ||
      c.busbw[0] < 0) {
    return std::nullopt;
  }
  return c;
}

Columns columns_of(std::string_view header) {
  return *columns_from_names(words(header));
}

/// The layouts of a row pasted without its header: current (13 fields) and pre-2022 (12).
std::optional<Columns> columns_for_width(std::size_t fields) {
  if (fields == 13) {
    return columns_of("size count type redop root time algbw busbw #wrong time algbw busbw #wrong");
  }
  if (fields == 12) {
    return columns_of("size count type redop time algbw busbw error time algbw busbw error");
  }
  return std::nullopt;
}

/// A line that starts like a data row: a size, then a count (or nothing: cut after the size).
bool row_like(const std::vector<std::string_view>& w) {
  return !w.empty() && to_u64(w[0]) && (w.size() == 1 || to_u64(w[1]));
}

std::string operation_of_program(std::string_view program) {
  static const std::map<std::string_view, std::string_view> kPrograms{
      {"all_reduce_perf", "allreduce"},
      {"all_gather_perf", "allgather"},
      {"reduce_scatter_perf", "reduce_scatter"},
      {"broadcast_perf", "bcast"},
      {"reduce_perf", "reduce"},
      {"alltoall_perf", "alltoall"},
      {"gather_perf", "gather"},
      {"scatter_perf", "scatter"},
      {"sendrecv_perf", "sendrecv"},
      {"hypercube_perf", "hypercube"},
      {"alltoallv_perf", "alltoallv"}};
  const auto it = kPrograms.find(program);
  if (it != kPrograms.end()) {
    return std::string(it->second);
  }
  std::string stem(program.substr(0, program.size() - std::min<std::size_t>(5, program.size())));
  stem.erase(std::remove(stem.begin(), stem.end(), '_'), stem.end());
  return stem;
}

/// NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch
/// before.
std::string nccl_version_of_code(std::uint64_t code) {
  if (code >= 10000) {
    return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  }
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

/// busbw / algbw of an operation on n ranks (nccl-tests' factors), or nullopt when it does not
/// depend on n.
std::optional<double> rank_factor(std::string_view operation, std::uint32_t n) {
  const double p = n;
  if (operation == "allreduce") {
    return 2.0 * (p - 1.0) / p;
  }
  if (operation == "allgather" || operation == "reduce_scatter" || operation == "alltoall" ||
      operation == "alltoallv" || operation == "gather" || operation == "scatter") {
    return (p - 1.0) / p;
  }
  return std::nullopt;
}

/// The rank count that every printed busbw agrees with (busbw = algbw x factor(n), up to the two
/// decimals printed), searched near the n that the fastest row's ratio gives. nullopt when the
/// factor does not depend on n, the bandwidths are too small to tell, or several n fit.
std::optional<std::uint32_t> ranks_from_bandwidth(const std::vector<Row>& rows,
                                                  std::string_view operation) {
  if (!rank_factor(operation, 2)) {
    return std::nullopt;
  }
  constexpr double kMinAlgbw = 0.5; // below this, two printed decimals cannot tell n apart
  const Side* best = nullptr;
  for (const Row& r : rows) {
    for (const Side& s : r.sides) {
      if (s.present && (best == nullptr || s.algbw > best->algbw)) {
        best = &s;
      }
    }
  }
  if (best == nullptr || best->algbw < kMinAlgbw) {
    return std::nullopt;
  }
  const double ratio = best->busbw / best->algbw;
  const double top = operation == "allreduce" ? 2.0 : 1.0; // factor(n) -> top as n grows
  if (ratio >= top - 1e-9) {
    return std::nullopt;
  }
  const auto guess = static_cast<long>(std::lround(top / (top - ratio)));
  auto fits = [&](std::uint32_t n) {
    const double f = *rank_factor(operation, n);
    for (const Row& r : rows) {
      for (const Side& s : r.sides) {
        // Both printed numbers are rounded to 0.01: allow that error on each.
        if (s.present && s.algbw >= kMinAlgbw &&
            std::abs(s.busbw - s.algbw * f) > 0.006 + 0.005 * f + 1e-4 * s.busbw) {
          return false;
        }
      }
    }
    return true;
  };
  std::vector<std::uint32_t> found;
  for (long n = std::max(1L, guess - 3); n <= guess + 3; ++n) {
    if (fits(static_cast<std::uint32_t>(n))) {
      found.push_back(static_cast<std::uint32_t>(n));
    }
  }
  if (found.size() != 1) {
    return std::nullopt;
  }
  return found.front();
}

/// Ranks from size = count x type size x n, which holds for the gathering and scattering tests.
std::optional<std::uint32_t> ranks_from_sizes(const std::vector<Row>& rows) {
  std::optional<std::uint64_t> n;
  for (const Row& r : rows) {
    const auto ts = type_size(r.type);
    if (r.count == 0 || !ts ||
        r.count > r.size / *ts) { // the last test also keeps count x ts exact
      continue;
    }
    const std::uint64_t per_rank = r.count * *ts;
    if (r.size % per_rank != 0 || (n && *n != r.size / per_rank)) {
      return std::nullopt;
    }
    n = r.size / per_rank;
  }
  if (!n || *n == 0 || *n > 0xffffffffULL) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(*n);
}

} // namespace collsim::io::logs::nccl_tests_detail

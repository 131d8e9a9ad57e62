#include "collsim/core/verify.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"

#include "verify_support.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <random>

namespace collsim::core {

void VerifyReport::add(std::string problem) {
  ++total_problems;
  if (problems.size() < kMaxProblems) {
    problems.push_back(std::move(problem));
  }
}

std::string VerifyReport::summary() const {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) {
      out += '\n';
    }
    out += p;
  }
  if (total_problems > problems.size()) {
    out += fmt::format("\n... and {} more problems", total_problems - problems.size());
  }
  return out;
}

using verify_detail::execute_untimed;
using verify_detail::is_message;
using verify_detail::op_label;
using verify_detail::participants_text;

namespace {

std::uint64_t buffer_size(const ScheduleHeader& h, Buffer b) {
  return b == Buffer::data ? h.data_bytes : h.tmp_bytes;
}

void check_structure(const Schedule& s, VerifyReport& report) {
  const auto& h = s.header();
  for (Rank r = 0; r < s.participants(); ++r) {
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const std::uint32_t local = id - s.rank_begin(r);
      const OpKind k = s.kind(id);
      auto check_range = [&](const Range& rg) {
        const std::uint64_t size = buffer_size(h, rg.buffer);
        if (rg.offset > size || rg.length > size - rg.offset) {
          report.add(fmt::format("{}: range ends at byte {} but buffer '{}' has {} bytes",
                                 op_label(s, id), rg.offset + rg.length, to_string(rg.buffer),
                                 size));
        }
      };
      check_range(s.target(id));
      if (is_message(k)) {
        if (s.peer(id) >= s.participants()) {
          report.add(fmt::format("{}: peer {} does not exist ({})", op_label(s, id), s.peer(id),
                                 participants_text(s)));
        } else if (s.peer(id) == r) {
          report.add(fmt::format("{}: a rank cannot message itself (use copy)", op_label(s, id)));
        }
      } else {
        const Range src = s.source(id);
        check_range(src);
        const Range dst = s.target(id);
        if (src.buffer == dst.buffer && src.offset < dst.offset + dst.length &&
            dst.offset < src.offset + src.length && src.length > 0) {
          report.add(fmt::format("{}: source and target overlap", op_label(s, id)));
        }
      }
      for (std::uint32_t d : s.deps(id)) {
        if (d == local) {
          report.add(fmt::format("dependency cycle: {} requires itself", op_label(s, id)));
        } else if (d > local) {
          const bool exists = d < s.rank_end(r) - s.rank_begin(r);
          report.add(fmt::format(
              "dependency cycle: {} requires l{}, {}", op_label(s, id), d,
              exists ? "which cannot issue before it (operations issue in program order)"
                     : "which does not exist"));
        }
      }
    }
  }
}

/// Within a rank, two operations that touch overlapping bytes, one of them writing, must be ordered
/// by dependencies (MPI's rule for reusing a buffer): the untimed execution below follows one
/// interleaving, engines may follow another. Dependencies are closed transitively with a bitset
/// per operation, so the work is quadratic in a rank's program; schedules whose sum over ranks of
/// (operations per rank)^2 exceeds kRaceCheckBudget are not checked (documented limit).
constexpr std::uint64_t kRaceCheckBudget = std::uint64_t{1} << 28;

struct Access {
  Range range;
  bool write = false;
};

std::size_t accesses(const Schedule& s, OpId id, Access (&out)[2]) {
  switch (s.kind(id)) {
  case OpKind::send: out[0] = {s.target(id), false}; return 1;
  case OpKind::recv:
  case OpKind::recv_reduce: out[0] = {s.target(id), true}; return 1;
  case OpKind::reduce:
  case OpKind::copy:
    out[0] = {s.source(id), false};
    out[1] = {s.target(id), true};
    return 2;
  case OpKind::calc: return 0;
  }
  return 0;
}

bool conflict(const Access& a, const Access& b) {
  return (a.write || b.write) && a.range.buffer == b.range.buffer && a.range.length > 0 &&
         b.range.length > 0 && a.range.offset < b.range.offset + b.range.length &&
         b.range.offset < a.range.offset + a.range.length;
}

void check_local_races(const Schedule& s, VerifyReport& report) {
  std::uint64_t work = 0;
  for (Rank r = 0; r < s.participants(); ++r) {
    const std::uint64_t m = s.rank_end(r) - s.rank_begin(r);
    work += m * m;
  }
  if (work > kRaceCheckBudget) {
    return;
  }
  for (Rank r = 0; r < s.participants(); ++r) {
    const OpId base = s.rank_begin(r);
    const std::size_t m = s.rank_end(r) - base;
    const std::size_t words = (m + 63) / 64;
    std::vector<std::uint64_t> before(m * words, 0); // ops that complete before op i issues
    std::vector<std::array<Access, 2>> acc(m);
    std::vector<std::uint8_t> nacc(m);
    for (std::size_t i = 0; i < m; ++i) {
      const auto id = base + static_cast<OpId>(i);
      std::uint64_t* row = before.data() + i * words;
      for (std::uint32_t d : s.deps(id)) {
        row[d / 64] |= std::uint64_t{1} << (d % 64);
        const std::uint64_t* drow = before.data() + std::size_t{d} * words;
        for (std::size_t w = 0; w < words; ++w) {
          row[w] |= drow[w];
        }
      }
      Access mine[2];
      nacc[i] = static_cast<std::uint8_t>(accesses(s, id, mine));
      acc[i] = {mine[0], mine[1]};
      for (std::size_t j = 0; j < i; ++j) {
        if ((row[j / 64] >> (j % 64) & 1U) != 0) {
          continue;
        }
        for (std::size_t a = 0; a < nacc[j]; ++a) {
          for (std::size_t b = 0; b < nacc[i]; ++b) {
            if (conflict(acc[j][a], acc[i][b])) {
              report.add(fmt::format("race: {} may touch bytes that {} still uses; no dependency "
                                     "orders them",
                                     op_label(s, id), op_label(s, base + static_cast<OpId>(j))));
              return;
            }
          }
        }
      }
    }
  }
}

} // namespace

VerifyReport validate(const Schedule& s) {
  VerifyReport report;
  const auto& h = s.header();
  if (h.ranks == 0) {
    report.add("a schedule needs at least one rank");
    return report;
  }
  if (h.root >= h.ranks) {
    report.add(fmt::format("root {} does not exist ({} ranks)", h.root, h.ranks));
  }
  for (std::size_t i = 0; i < h.agents.size(); ++i) {
    if (h.agents[i].empty()) {
      report.add(fmt::format("agent {} has no device name", h.ranks + i));
    }
  }
  if (!(h.protocol.efficiency > 0.0 && h.protocol.efficiency <= 1.0)) {
    report.add(fmt::format("protocol efficiency {} is not in (0, 1]", h.protocol.efficiency));
  }
  check_structure(s, report);
  if (!report.ok()) {
    return report;
  }
  const Matching m = match_messages(s, &report);
  if (!report.ok()) {
    return report;
  }
  execute_untimed(
      s, m, [](OpId) {}, &report);
  if (report.ok()) {
    check_local_races(s, report);
  }
  return report;
}

void require_correct(const Schedule& s) {
  const VerifyReport r = check_semantics(s);
  if (!r.ok()) {
    throw ScheduleError(r.summary());
  }
}

} // namespace collsim::core

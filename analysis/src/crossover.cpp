#include "collsim/analysis/simulate.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace collsim::analysis {

std::vector<CrossoverRange> crossovers(const std::vector<core::ResultRow>& rows) {
  // (collective, ranks) -> bytes -> rows at that point, in input order (ties go to the first).
  std::map<std::tuple<core::CollectiveKind, std::uint32_t>,
           std::map<std::uint64_t, std::vector<const core::ResultRow*>>>
      groups;
  for (const auto& r : rows) {
    groups[{r.collective, r.ranks}][r.bytes.value].push_back(&r);
  }
  std::vector<CrossoverRange> out;
  for (const auto& [key, by_size] : groups) {
    for (const auto& [bytes, pts] : by_size) {
      const core::ResultRow* best = pts.front();
      const core::ResultRow* second = nullptr;
      for (const auto* p : pts) {
        if (p->time < best->time) {
          second = best;
          best = p;
        } else if (p != best && (second == nullptr || p->time < second->time)) {
          second = p;
        }
      }
      const double speedup =
          second != nullptr && best->time.value > 0 ? second->time.value / best->time.value : 0.0;
      if (!out.empty() && out.back().collective == std::get<0>(key) &&
          out.back().ranks == std::get<1>(key) && out.back().winner == best->algorithm) {
        CrossoverRange& cur = out.back();
        cur.to = core::Bytes{bytes};
        cur.min_speedup = std::min(cur.min_speedup, speedup);
        cur.max_speedup = std::max(cur.max_speedup, speedup);
        if (cur.runner_up.empty() && second != nullptr) {
          cur.runner_up = second->algorithm;
        }
        continue;
      }
      CrossoverRange cr;
      cr.collective = std::get<0>(key);
      cr.ranks = std::get<1>(key);
      cr.from = core::Bytes{bytes};
      cr.to = core::Bytes{bytes};
      cr.winner = best->algorithm;
      cr.runner_up = second != nullptr ? second->algorithm : std::string{};
      cr.min_speedup = speedup;
      cr.max_speedup = speedup;
      out.push_back(cr);
    }
  }
  return out;
}

} // namespace collsim::analysis

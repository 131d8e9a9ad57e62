// Writers of tuning tables (tuning_formats.hpp). The Open MPI rules file follows
// ompi_coll_tuned_read_rules_config_file (coll_tuned_dynamic_file.c, 4.1.x and 5.0.x) as
// formats.md d.4 describes it: a stream of integers read with fscanf("%li"), '#' comments to the
// end of the line, a first rule at message size 0 in every communicator block, rules ascending.
// Numbers are written in plain decimal without leading zeros (%li would read "010" as octal).

#include "collsim/io/tuning_formats.hpp"

#include "csv_field.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace collsim::io {
namespace {

using core::CollectiveKind;

/// Percentages as printed: two decimals, so that output is stable across platforms.
double rounded(double pct) {
  return std::round(pct * 100.0) / 100.0;
}

std::string pct_text(double pct) {
  return fmt::format("{:.2f}", rounded(pct));
}

std::string_view version_text(core::OmpiVersion v) {
  return v == core::OmpiVersion::v4_1 ? "4.1" : "5.0";
}

/// "ompi:4" or "-".
std::string id_text(const core::TuneCandidate& c) {
  return c.ompi_id ? fmt::format("ompi:{}", *c.ompi_id) : std::string("-");
}

/// Whether Open MPI 4.1's default is the winner everywhere in the range.
bool default_is_best(const core::TuneRange& r) {
  return rounded(r.regret_pct) <= 0.0;
}

nlohmann::json candidate_json(const core::TuneCandidate& c) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : c.params) {
    params[name] = value;
  }
  nlohmann::json j{{"algorithm", c.algorithm},
                   {"label", core::label(c)},
                   {"params", params},
                   {"segment_size", c.segment_size},
                   {"fanout", c.fanout}};
  j["ompi_id"] = c.ompi_id ? nlohmann::json(*c.ompi_id) : nlohmann::json(nullptr);
  return j;
}

} // namespace

std::uint64_t ompi_rules_message_size(CollectiveKind collective, core::Bytes s) {
  return collective == CollectiveKind::barrier ? 0 : s.value;
}

std::string format_tuning_table(const core::TuneTable& table) {
  std::string out = fmt::format(
      "# collsim tune: scenario '{}', engine {}, {} sizes from {} to {}{}\n", table.scenario,
      table.engine, table.sizes.size(),
      table.sizes.empty() ? "-" : core::format_bytes(table.sizes.front()),
      table.sizes.empty() ? "-" : core::format_bytes(table.sizes.back()),
      table.ompi ? fmt::format(", candidates: Open MPI {} coll/tuned", version_text(*table.ompi))
                 : std::string{});
  out += "# margin: how much slower the runner-up is at its closest; default: Open MPI 4.1's "
         "fixed rules; regret: how much slower the default is at its worst\n";
  std::vector<std::string> not_best;
  for (const auto& b : table.blocks) {
    out += fmt::format("#\n# {}, {} ranks\n", core::to_string(b.collective), b.ranks);
    out +=
        fmt::format("# {:>10}  {:>10}  {:<34}  {:<7}  {:<34}  {:>8}  {:<26}  {:>8}\n", "from", "to",
                    "fastest", "ompi id", "runner-up", "margin", "Open MPI 4.1 default", "regret");
    for (const auto& r : b.ranges) {
      const std::string defaults = r.library_default.empty()
                                       ? std::string("-")
                                       : fmt::format("{}", fmt::join(r.library_default, ", "));
      out +=
          fmt::format("  {:>10}  {:>10}  {:<34}  {:<7}  {:<34}  {:>7}%  {:<26}  {:>7}%\n",
                      core::format_bytes(r.from), core::format_bytes(r.to), core::label(r.winner),
                      id_text(r.winner), r.runner_up ? core::label(*r.runner_up) : std::string("-"),
                      pct_text(r.margin_pct), defaults, pct_text(r.regret_pct));
      if (!r.library_default.empty() && !default_is_best(r)) {
        not_best.push_back(fmt::format("  {} {} ranks, {} .. {}: {} is up to {}% slower than {}",
                                       core::to_string(b.collective), b.ranks,
                                       core::format_bytes(r.from), core::format_bytes(r.to),
                                       defaults, pct_text(r.regret_pct), core::label(r.winner)));
      }
    }
  }
  out += "#\n# Ranges where Open MPI 4.1's default is not the best:\n";
  if (not_best.empty()) {
    out += "  (none)\n";
  }
  for (const auto& line : not_best) {
    out += line + "\n";
  }
  for (const auto& s : table.skipped) {
    out += fmt::format("# skipped: {}\n", s);
  }
  return out;
}

std::string format_tuning_csv(const core::TuneTable& table) {
  std::string out = "collective,ranks,from_bytes,to_bytes,winner,winner_params,ompi_id,"
                    "segment_size,fanout,runner_up,margin_pct,library_default,regret_pct,"
                    "default_is_best\n";
  for (const auto& b : table.blocks) {
    for (const auto& r : b.ranges) {
      std::string params;
      for (const auto& [name, value] : r.winner.params) {
        params += fmt::format("{}{}={}", params.empty() ? "" : " ", name, value);
      }
      const std::string defaults = fmt::format("{}", fmt::join(r.library_default, "; "));
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", core::to_string(b.collective), b.ranks,
          r.from.value, r.to.value, csv_field(r.winner.algorithm), csv_field(params),
          r.winner.ompi_id ? std::to_string(*r.winner.ompi_id) : std::string{},
          r.winner.segment_size, r.winner.fanout,
          r.runner_up ? csv_field(core::label(*r.runner_up)) : std::string{},
          pct_text(r.margin_pct), csv_field(defaults),
          r.library_default.empty() ? std::string{} : pct_text(r.regret_pct),
          r.library_default.empty() ? std::string{} : (default_is_best(r) ? "true" : "false"));
    }
  }
  return out;
}

std::string format_tuning_json(const core::TuneTable& table) {
  nlohmann::json sizes = nlohmann::json::array();
  for (core::Bytes s : table.sizes) {
    sizes.push_back(s.value);
  }
  nlohmann::json blocks = nlohmann::json::array();
  nlohmann::json not_best = nlohmann::json::array();
  for (const auto& b : table.blocks) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& r : b.ranges) {
      nlohmann::json j{
          {"from_bytes", r.from.value},           {"to_bytes", r.to.value},
          {"winner", candidate_json(r.winner)},   {"margin_pct", rounded(r.margin_pct)},
          {"library_default", r.library_default}, {"regret_pct", rounded(r.regret_pct)}};
      j["runner_up"] = r.runner_up ? candidate_json(*r.runner_up) : nlohmann::json(nullptr);
      j["default_is_best"] =
          r.library_default.empty() ? nlohmann::json(nullptr) : nlohmann::json(default_is_best(r));
      if (!r.library_default.empty() && !default_is_best(r)) {
        not_best.push_back({{"collective", std::string(core::to_string(b.collective))},
                            {"ranks", b.ranks},
                            {"from_bytes", r.from.value},
                            {"to_bytes", r.to.value},
                            {"library_default", r.library_default},
                            {"best", core::label(r.winner)},
                            {"regret_pct", rounded(r.regret_pct)}});
      }
      ranges.push_back(std::move(j));
    }
    blocks.push_back({{"collective", std::string(core::to_string(b.collective))},
                      {"ranks", b.ranks},
                      {"ranges", std::move(ranges)}});
  }
  nlohmann::json out{{"scenario", table.scenario},
                     {"engine", table.engine},
                     {"sizes", sizes},
                     {"library_default", "Open MPI 4.1 coll/tuned fixed rules"},
                     {"blocks", blocks},
                     {"default_not_best", not_best},
                     {"skipped", table.skipped}};
  out["ompi_version"] =
      table.ompi ? nlohmann::json(std::string(version_text(*table.ompi))) : nlohmann::json(nullptr);
  return out.dump(2) + "\n";
}

std::string format_ompi_rules(const core::TuneTable& table, core::OmpiVersion version) {
  if (table.ompi != version) {
    throw core::UsageError(fmt::format(
        "an Open MPI {} rules file needs a sweep limited to the algorithms Open MPI {} "
        "implements{}",
        version_text(version), version_text(version),
        table.ompi ? fmt::format(" (this one was swept for {})", version_text(*table.ompi))
                   : std::string{}));
  }
  const bool v2 = version == core::OmpiVersion::v5_0;
  // Collectives in the order of first appearance, each with its blocks (ranks ascending).
  std::vector<std::pair<CollectiveKind, std::vector<const core::TuneBlock*>>> groups;
  for (const auto& b : table.blocks) {
    if (b.ranges.empty()) {
      continue; // nothing ran at this rank count: Open MPI keeps its fixed rules there
    }
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == b.collective; });
    if (it == groups.end()) {
      groups.emplace_back(b.collective, std::vector<const core::TuneBlock*>{});
      it = groups.end() - 1;
    }
    it->second.push_back(&b);
  }
  for (auto& g : groups) {
    std::sort(g.second.begin(), g.second.end(),
              [](const auto* a, const auto* b) { return a->ranks < b->ranks; });
  }

  std::string out;
  if (v2) {
    out += "rule-file-version-2\n";
  }
  out += fmt::format("# Open MPI {} coll/tuned dynamic rules, written by collsim tune (scenario "
                     "'{}', engine {})\n",
                     version_text(version), table.scenario, table.engine);
  out += "# use: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca "
         "coll_tuned_dynamic_rules_filename THIS_FILE ...\n";
  out += "# message size: bytes of the whole buffer (dtype size x count; x comm size for the "
         "gathers and alltoall)\n";
  out += fmt::format("{} # number of collectives\n", groups.size());
  for (const auto& [collective, blocks] : groups) {
    out += fmt::format("{} # collective id: {}\n", core::ompi_colltype(collective),
                       core::to_string(collective));
    out += fmt::format("{} # number of communicator sizes\n", blocks.size());
    for (const auto* b : blocks) {
      // One rule per range, starting at 0; ranges with the same Open MPI settings are one rule.
      struct Rule {
        std::uint64_t bytes;
        int alg;
        std::int64_t fanout;
        std::int64_t segsize;
        std::string note;
      };
      std::vector<Rule> rules;
      for (const auto& r : b->ranges) {
        if (!r.winner.ompi_id) {
          throw core::UsageError(fmt::format(
              "{} at {} ranks: the fastest algorithm from {} is '{}', which Open MPI has not",
              core::to_string(collective), b->ranks, core::format_bytes(r.from),
              r.winner.algorithm));
        }
        const std::uint64_t m = rules.empty() ? 0 : ompi_rules_message_size(collective, r.from);
        if (!rules.empty() && rules.back().bytes == m) {
          continue; // barrier: every call has size 0, the first range decides
        }
        if (!rules.empty() && rules.back().alg == *r.winner.ompi_id &&
            rules.back().fanout == r.winner.fanout &&
            rules.back().segsize == r.winner.segment_size) {
          continue;
        }
        rules.push_back({m, *r.winner.ompi_id, r.winner.fanout, r.winner.segment_size,
                         fmt::format("{}, measured from {}", core::label(r.winner),
                                     core::format_bytes(r.from))});
      }
      out += fmt::format("{} # communicator size\n", b->ranks);
      out += fmt::format("{} # number of message size rules\n", rules.size());
      out += v2 ? "# bytes alg faninout segsize maxreq\n" : "# bytes alg faninout segsize\n";
      for (const auto& rule : rules) {
        out += fmt::format("{} {} {} {}{} # {}\n", rule.bytes, rule.alg, rule.fanout, rule.segsize,
                           v2 ? " 0" : "", rule.note);
      }
    }
  }
  return out;
}

} // namespace collsim::io

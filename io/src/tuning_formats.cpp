// Writers of tuning tables (tuning_formats.hpp). The library files (MPICH JSON, SMPI settings,
// NCCL tuner CSV, UCC TUNE) follow formats.md e, f.1, f.3 and algorithms.md 2.5; what MPICH 4.0.2
// did with them where formats.md is silent or wrong is noted at each writer. The Open MPI rules
// file follows ompi_coll_tuned_read_rules_config_file (coll_tuned_dynamic_file.c, 4.1.x and
// 5.0.x) as formats.md d.4 describes it: a stream of integers read with fscanf("%li"), '#' comments
// to the end of the line, a first rule at message size 0 in every communicator block, rules
// ascending. Numbers are written in plain decimal without leading zeros (%li would read "010" as
// octal).

#include "collsim/io/tuning_formats.hpp"

#include "tuning_formats_support.hpp"

#include "collsim/io/csv_field.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace collsim::io {

using detail::BlockGroups;
using detail::group_blocks;
using detail::named_rules;
using detail::NamedRule;

namespace {

/// A block's collective as people name it: the v-name when the sweep ran with counts.
std::string block_collective(const core::TuneTable& table, const core::TuneBlock& b) {
  return core::collective_display_name(b.collective, !table.counts.empty());
}

/// "; counts zipf:1.2; skew late:1ms" for the table's first line, "" when uniform and at once.
std::string imbalance_text(const core::TuneTable& table) {
  std::string out;
  if (!table.counts.empty()) {
    out += fmt::format(", counts {}", table.counts);
  }
  if (!table.skew.empty()) {
    out += fmt::format(", skew {}", table.skew);
  }
  return out;
}

using core::CollectiveKind;

/// The largest team a UCC TUNE team_size range names: the grammar wants an integer, and no team
/// is larger (ucc_rank_t is 32 bits; INT_MAX also fits a signed parser).
constexpr std::uint64_t kUccLargestTeam = 2147483647;

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

std::string_view library_title(std::string_view library) {
  const std::string_view title = core::tuning_library_title(library);
  return title.empty() ? library : title;
}

/// The winner's name in `library`; UsageError when the library has no such algorithm.
std::string winner_name(const core::TuneBlock& b, const core::TuneRange& r,
                        std::string_view library) {
  if (auto name = core::library_name(r.winner, library)) {
    return *name;
  }
  throw core::UsageError(fmt::format(
      "{} at {} ranks: the fastest algorithm from {} is '{}', which {} has not (sweep with "
      "--candidates {})",
      core::to_string(b.collective), b.ranks, core::format_bytes(r.from), r.winner.algorithm,
      library_title(library), library));
}

/// "scenario 'S', engine E" and ", stack K" when the sweep ran under a named stack.
std::string swept_on(const core::TuneTable& table) {
  return fmt::format("scenario '{}', engine {}{}", table.scenario, table.engine,
                     table.stack.empty() ? std::string{} : ", stack " + table.stack);
}

std::string header(const core::TuneTable& table, std::string_view what) {
  return fmt::format("# {}, written by collsim tune ({})\n", what, swept_on(table));
}

// ---- NCCL ------------------------------------------------------------------------------------

/// The example tuner's collective_type (formats.md f.3); empty where NCCL has no choice to make.
std::string_view nccl_collective(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::bcast: return "broadcast";
  case CollectiveKind::reduce: return "reduce";
  case CollectiveKind::allgather: return "allgather";
  case CollectiveKind::reduce_scatter: return "reducescatter";
  case CollectiveKind::allreduce: return "allreduce";
  default: return "";
  }
}

/// collsim's "nccl:" aliases follow NCCL_ALGO's spelling (collnetdirect); the tuner's CSV writes
/// them with underscores (collnet_direct, nvls_tree).
std::string nccl_csv_algorithm(std::string_view alias) {
  if (alias == "collnetdirect") {
    return "collnet_direct";
  }
  if (alias == "collnetchain") {
    return "collnet_chain";
  }
  if (alias == "nvlstree") {
    return "nvls_tree";
  }
  return std::string(alias);
}

} // namespace

namespace detail {

BlockGroups group_blocks(const core::TuneTable& table) {
  BlockGroups groups;
  for (const auto& b : table.blocks) {
    if (b.ranges.empty()) {
      continue;
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
  return groups;
}

std::vector<NamedRule> named_rules(const core::TuneBlock& b, std::string_view library,
                                   const std::function<std::string(const core::TuneRange&)>& name) {
  std::vector<NamedRule> rules;
  for (const auto& r : b.ranges) {
    std::string n = name ? name(r) : winner_name(b, r, library);
    if (!rules.empty() && rules.back().name == n) {
      continue;
    }
    rules.push_back(
        {rules.empty() ? 0 : r.from.value, std::move(n),
         fmt::format("{}, measured from {}", core::label(r.winner), core::format_bytes(r.from))});
  }
  return rules;
}

} // namespace detail

std::uint64_t ompi_rules_message_size(CollectiveKind collective, core::Bytes s) {
  return collective == CollectiveKind::barrier ? 0 : s.value;
}

std::string format_tuning_table(const core::TuneTable& table) {
  std::string out = fmt::format(
      "# collsim tune: {}{}, {} sizes from {} to {}{}\n", swept_on(table), imbalance_text(table),
      table.sizes.size(), table.sizes.empty() ? "-" : core::format_bytes(table.sizes.front()),
      table.sizes.empty() ? "-" : core::format_bytes(table.sizes.back()),
      table.ompi ? fmt::format(", candidates: Open MPI {} coll/tuned", version_text(*table.ompi))
      : table.library ? fmt::format(", candidates: {}'s", library_title(*table.library))
                      : std::string{});
  out += fmt::format("# margin: how much slower the runner-up is at its closest; default: {}'s {}; "
                     "regret: how much slower the default is at its worst\n",
                     table.default_model,
                     table.default_model == "Open MPI 4.1" ? "fixed rules" : "choice");
  std::vector<std::string> not_best;
  for (const auto& b : table.blocks) {
    out += fmt::format("#\n# {}, {} ranks\n", block_collective(table, b), b.ranks);
    out += fmt::format("# {:>10}  {:>10}  {:<34}  {:<7}  {:<34}  {:>8}  {:<26}  {:>8}\n", "from",
                       "to", "fastest", "ompi id", "runner-up", "margin",
                       fmt::format("{} default", table.default_model), "regret");
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
                                       block_collective(table, b), b.ranks,
                                       core::format_bytes(r.from), core::format_bytes(r.to),
                                       defaults, pct_text(r.regret_pct), core::label(r.winner)));
      }
    }
  }
  out += fmt::format("#\n# Ranges where {}'s default is not the best:\n", table.default_model);
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
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", block_collective(table, b), b.ranks,
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
        not_best.push_back({{"collective", block_collective(table, b)},
                            {"ranks", b.ranks},
                            {"from_bytes", r.from.value},
                            {"to_bytes", r.to.value},
                            {"library_default", r.library_default},
                            {"best", core::label(r.winner)},
                            {"regret_pct", rounded(r.regret_pct)}});
      }
      ranges.push_back(std::move(j));
    }
    blocks.push_back({{"collective", block_collective(table, b)},
                      {"ranks", b.ranks},
                      {"ranges", std::move(ranges)}});
  }
  nlohmann::json out{
      {"scenario", table.scenario},
      {"engine", table.engine},
      {"stack", table.stack.empty() ? nlohmann::json(nullptr) : nlohmann::json(table.stack)},
      {"sizes", sizes},
      {"library_default", table.default_model == "Open MPI 4.1"
                              ? std::string("Open MPI 4.1 coll/tuned fixed rules")
                              : table.default_model + " tuning model"},
      {"blocks", blocks},
      {"default_not_best", not_best},
      {"skipped", table.skipped}};
  out["ompi_version"] =
      table.ompi ? nlohmann::json(std::string(version_text(*table.ompi))) : nlohmann::json(nullptr);
  if (!table.counts.empty()) {
    out["counts"] = table.counts;
  }
  if (!table.skew.empty()) {
    out["skew"] = table.skew;
  }
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
  const auto groups = group_blocks(table);

  std::string out;
  if (v2) {
    out += "rule-file-version-2\n";
  }
  out += fmt::format("# Open MPI {} coll/tuned dynamic rules, written by collsim tune ({})\n",
                     version_text(version), swept_on(table));
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

std::string format_smpi_cfg(const core::TuneTable& table) {
  std::string out = header(table, "SimGrid SMPI collective settings");
  out += "# use: smpirun $(grep -v '^#' THIS_FILE) ... (SMPI runs one algorithm per collective at "
         "every size: each line names the winner of most swept points)\n";
  for (const auto& [collective, blocks] : group_blocks(table)) {
    // Points won per SMPI name, in order of first appearance (ties: the first).
    std::vector<std::pair<std::string, std::size_t>> wins;
    std::string ranges;
    for (const auto* b : blocks) {
      for (const auto& r : b->ranges) {
        const std::string name = winner_name(*b, r, "smpi");
        const auto n = static_cast<std::size_t>(
            std::count_if(table.sizes.begin(), table.sizes.end(),
                          [&](core::Bytes s) { return !(s < r.from) && !(r.to < s); }));
        auto it =
            std::find_if(wins.begin(), wins.end(), [&](const auto& w) { return w.first == name; });
        if (it == wins.end()) {
          wins.emplace_back(name, n);
        } else {
          it->second += n;
        }
        ranges +=
            fmt::format("#   {} ranks, {} .. {}: {} ({})\n", b->ranks, core::format_bytes(r.from),
                        core::format_bytes(r.to), name, core::label(r.winner));
      }
    }
    const auto best = std::max_element(
        wins.begin(), wins.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::size_t total = 0;
    for (const auto& w : wins) {
      total += w.second;
    }
    out += fmt::format("# {}: {} wins {} of {} swept points; per range:\n",
                       core::to_string(collective), best->first, best->second, total);
    out += ranges;
    out += fmt::format("--cfg=smpi/{}:{}\n", core::to_string(collective), best->first);
  }
  return out;
}

std::string format_nccl_tuner(const core::TuneTable& table) {
  std::string out = header(table, "NCCL example tuner plugin configuration");
  out +=
      "# use: NCCL_TUNER_PLUGIN=<its libnccl-tuner-example.so> NCCL_TUNER_CONFIG_FILE=THIS_FILE\n";
  out += "# sizes are NCCL's nBytes (S: the whole buffer); nRanks matches the swept rank count "
         "exactly, other counts keep NCCL's choice\n";
  out += "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
         "numPipeOps,regBuff\n";
  for (const auto& [collective, blocks] : group_blocks(table)) {
    const std::string_view type = nccl_collective(collective);
    if (type.empty()) {
      throw core::UsageError(fmt::format(
          "NCCL's tuner does not choose an algorithm for {} (only for allreduce, allgather, "
          "reduce_scatter, bcast and reduce)",
          core::to_string(collective)));
    }
    for (const auto* b : blocks) {
      const auto rules = named_rules(*b, "nccl", [&](const core::TuneRange& r) {
        const auto p = r.winner.params.find("protocol");
        // Without a swept protocol the algorithm ran with its default, simple.
        return nccl_csv_algorithm(winner_name(*b, r, "nccl")) + "," +
               (p == r.winner.params.end() ? std::string("simple") : p->second);
      });
      for (std::size_t i = 0; i < rules.size(); ++i) {
        const std::uint64_t max = i + 1 < rules.size() ? rules[i + 1].bytes - 1
                                                       : std::numeric_limits<std::uint64_t>::max();
        out += fmt::format("{},{},{},{},-1,-1,{},-1,-1\n", type, rules[i].bytes, max, rules[i].name,
                           b->ranks);
      }
    }
  }
  return out;
}

std::string format_ucc_tune(const core::TuneTable& table) {
  std::vector<std::string> tokens;
  std::string notes;
  for (const auto& [collective, blocks] : group_blocks(table)) {
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const auto* b = blocks[k];
      // Team sizes: from this swept count (the first block from 1) up to below the next one.
      const std::uint32_t lo = k == 0 ? 1 : b->ranks;
      const std::string hi = k + 1 < blocks.size() ? std::to_string(blocks[k + 1]->ranks - 1)
                                                   : std::to_string(kUccLargestTeam);
      const auto rules = named_rules(*b, "ucc", {});
      for (std::size_t i = 0; i < rules.size(); ++i) {
        // UCC's message ranges end before their end value (the "0-4k", "4k-inf" of ucc.conf).
        const std::string end = i + 1 < rules.size() ? std::to_string(rules[i + 1].bytes) : "inf";
        tokens.push_back(fmt::format("{}:{}-{}:[{}-{}]:@{}", core::to_string(collective),
                                     rules[i].bytes, end, lo, hi, rules[i].name));
        notes += fmt::format("#   {} ranks {}-{}, from {}: {} ({})\n", core::to_string(collective),
                             lo, hi, rules[i].bytes, rules[i].name, rules[i].note);
      }
    }
  }
  std::string out = header(table, "UCC TL/UCP TUNE setting");
  out += "# use: export $(grep -v '^#' THIS_FILE)   (or pass the line to mpirun -x)\n";
  out += notes;
  out += fmt::format("UCC_TL_UCP_TUNE={}\n", fmt::join(tokens, "#"));
  return out;
}

namespace {
constexpr std::array<std::string_view, 8> kTuningFormatNames{
    "table", "csv", "json", "ompi-rules", "mpich-json", "smpi-cfg", "nccl-tuner", "ucc-tune"};
} // namespace

std::vector<std::string> tuning_format_names() {
  return {kTuningFormatNames.begin(), kTuningFormatNames.end()};
}

TuningFormat tuning_format_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kTuningFormatNames.size(); ++i) {
    if (kTuningFormatNames[i] == name) {
      return static_cast<TuningFormat>(i);
    }
  }
  throw core::UnknownNameError("format", name, tuning_format_names());
}

std::string_view tuning_format_library(TuningFormat format) {
  switch (format) {
  case TuningFormat::ompi_rules: return "ompi";
  case TuningFormat::mpich_json: return "mpich";
  case TuningFormat::smpi_cfg: return "smpi";
  case TuningFormat::nccl_tuner: return "nccl";
  case TuningFormat::ucc_tune: return "ucc";
  case TuningFormat::table:
  case TuningFormat::csv:
  case TuningFormat::json: break;
  }
  return "all";
}

std::string format_tuning(const core::TuneTable& table, TuningFormat format, core::OmpiVersion ompi,
                          core::MpichVersion mpich) {
  const bool library_file =
      format != TuningFormat::table && format != TuningFormat::csv && format != TuningFormat::json;
  if (library_file && !table.counts.empty()) {
    // Open MPI's rules look an alltoallv up at message size 0 and MPICH's JSON has no key for a
    // distribution of counts: a rule tuned on one distribution would apply to every other.
    throw core::UsageError(fmt::format(
        "--counts {}: a library's tuning file keys its rules on the message size alone, not "
        "on a distribution of counts; write table, csv or json",
        table.counts));
  }
  switch (format) {
  case TuningFormat::table: return format_tuning_table(table);
  case TuningFormat::csv: return format_tuning_csv(table);
  case TuningFormat::json: return format_tuning_json(table);
  case TuningFormat::ompi_rules: return format_ompi_rules(table, ompi);
  case TuningFormat::mpich_json: return format_mpich_json(table, mpich);
  case TuningFormat::smpi_cfg: return format_smpi_cfg(table);
  case TuningFormat::nccl_tuner: return format_nccl_tuner(table);
  case TuningFormat::ucc_tune: return format_ucc_tune(table);
  }
  throw core::InternalError("format_tuning: unknown format");
}

} // namespace collsim::io

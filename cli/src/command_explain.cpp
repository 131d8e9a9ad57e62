// `collsim explain` (issue 7): for one call (scenario, collective, ranks, bytes), what the library
// runs by default (Open MPI 4.1's fixed rules, analysis/ompi_defaults.hpp; NCCL's tuning model,
// analysis/nccl_defaults.hpp), what collsim finds fastest among the algorithms that library could
// run, and the regret: how much slower the default is. docs/library-defaults.md, "collsim explain".
//
// Fairness of the comparison, so that the regret is never negative and measures only the choice:
// - the candidates always include the default itself (with its parameters), so fastest <= default;
// - NCCL's candidates are its algorithms x protocols at the channel count NCCL's tuning chose for
//   the default (the ranking compares algorithms and protocols, not channel counts), without the
//   algorithms NCCL cannot run on the machine even with NCCL_ALGO/NCCL_COLLNET_ENABLE set;
// - MPI's candidates are collsim's non-NCCL algorithms at their default parameters, without those
//   that need a commutative operation when --commutative false.

#include "cli_support.hpp"
#include "commands.hpp"
#include "explain_support.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/imbalance.hpp"
#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/stacks/nccl_stack.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collsim::cli {
namespace {

using algorithms::nccl::Algo;

using namespace explain_detail;

/// An algorithm that needs a commutative operation, judged from its declared constraints
/// ("commutative operation(s) only ..."). Those that need it only for a root other than 0 pass:
/// explain calls with root 0. Conservative for recursive_multiplying, which needs it only when p
/// is not a power of its radix.
bool needs_commutative(const algorithms::AlgorithmInfo& algo) {
  return std::any_of(algo.constraints.begin(), algo.constraints.end(), [](const std::string& c) {
    return c.starts_with("commutative operation") &&
           c.find("unless the root is rank 0") == std::string::npos;
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

/// NCCL's cost-table time for a collsim NCCL algorithm and its protocol parameter (none: Simple),
/// when the entry is eligible.
std::optional<double> nccl_estimate(const analysis::NcclChoice& nccl,
                                    const algorithms::AlgorithmInfo& algo,
                                    const algorithms::RawParams& params) {
  const auto proto_it = params.find("protocol");
  const std::string proto = proto_it == params.end() ? "simple" : proto_it->second;
  const std::optional<Algo> a = stacks::nccl_algo_of(algo);
  for (const analysis::NcclCost& e : nccl.table) {
    if (a == e.algo && lower(algorithms::nccl::protocol_name(e.proto)) == proto) {
      return e.time_us >= 0.0 ? std::optional<double>(e.time_us) : std::nullopt;
    }
  }
  return std::nullopt;
}

/// Why NCCL cannot run `algo` on this machine at all, or "" when it can with NCCL_ALGO (and
/// NCCL_PROTO, NCCL_COLLNET_ENABLE=1) set. `enabled` is NCCL's table with CollNet enabled: an
/// algorithm none of whose protocols is eligible there lacks the hardware (NVLS, SHARP, NVSwitch,
/// one GPU per node for PAT) or is not one NCCL has for the collective (algorithm-level disables
/// apply to every protocol). A protocol off by default (LL128 on some paths) is no reason:
/// NCCL_PROTO=LL128 turns it on.
std::string nccl_unavailable(const analysis::NcclChoice& enabled,
                             const algorithms::AlgorithmInfo& algo) {
  const std::optional<Algo> a = stacks::nccl_algo_of(algo);
  std::string why = "not one of NCCL's algorithms for this collective";
  for (const analysis::NcclCost& e : enabled.table) {
    if (a == e.algo) {
      if (e.time_us >= 0.0) {
        return ""; // the algorithm runs; every protocol can be forced with NCCL_PROTO
      }
      why = e.disabled.empty() ? "NCCL's model gives it no bandwidth here" : e.disabled;
    }
  }
  return "NCCL cannot run it here: " + why;
}

/// The library's default for the call, and the NCCL decision behind it. UsageError when the
/// library has no default for the call.
analysis::LibraryChoice default_choice(LibraryKind library, const Call& call,
                                       const core::Scenario& scenario, const core::Topology& topo,
                                       const algorithms::Registry& registry, Explanation& out) {
  if (library == LibraryKind::ucc || library == LibraryKind::hcoll ||
      library == LibraryKind::mpich) {
    const char* name = library == LibraryKind::ucc     ? "UCC"
                       : library == LibraryKind::hcoll ? "HCOLL"
                                                       : "MPICH";
    std::string why;
    if (auto choice =
            library == LibraryKind::ucc
                ? (call.counts.empty() ? analysis::ucc11_default(
                                             call.collective, call.bytes,
                                             analysis::ucc_team(scenario, topo, call.ranks), &why)
                                       : std::nullopt)
            : library == LibraryKind::hcoll
                ? analysis::hcoll_default(call.collective)
                : analysis::mpich4_default(call.collective, !call.counts.empty())) {
      return *choice;
    }
    // Where collsim does not model the library's own selection (HCOLL's and MPICH's beyond
    // allreduce, UCC's where `why` says), Open MPI's rules stand in.
    auto choice = default_choice(LibraryKind::ompi, call, scenario, topo, registry, out);
    choice.reason += why.empty() ? fmt::format(" ({}'s own selection for {} is not modelled; "
                                               "Open MPI 4.1's rules stand in)",
                                               name, core::to_string(call.collective))
                                 : fmt::format(" ({})", why);
    return choice;
  }
  if (library == LibraryKind::han) {
    if (auto choice =
            analysis::han_default(topo, call.collective, call.ranks, call.bytes, registry)) {
      return *choice;
    }
    // One node, uneven nodes or another collective: coll/tuned's rules (v5.0.9's are 4.1's).
    return default_choice(LibraryKind::ompi, call, scenario, topo, registry, out);
  }
  if (library == LibraryKind::ompi) {
    analysis::OmpiCall oc;
    oc.collective = call.collective;
    oc.ranks = call.ranks;
    oc.bytes = call.bytes;
    oc.commutative = call.commutative;
    oc.varying = !call.counts.empty();
    oc.tuning = stacks::read_ompi_tuning(&scenario.mpi);
    auto choice = analysis::ompi41_default(oc, registry);
    if (!choice) {
      throw core::UsageError(fmt::format(
          "Open MPI's {} of {} B over {} ranks has no uniform form collsim can generate (the "
          "size must be a multiple of the ranks)",
          core::to_string(call.collective), call.bytes.value, call.ranks));
    }
    return *choice;
  }
  if (const std::string refusal =
          call.counts.empty() ? "" : analysis::nccl_v_refusal(call.collective);
      !refusal.empty()) {
    throw core::UsageError(refusal + "; use --library ompi");
  }
  out.inputs = analysis::nccl_inputs(scenario.topology, scenario.nccl, topo, call.ranks);
  out.nccl = analysis::nccl_default(call.collective, call.ranks, call.bytes, *out.inputs);
  if (!out.nccl) {
    throw core::UsageError(
        fmt::format("NCCL has no {}; use --library ompi", core::to_string(call.collective)));
  }
  // As validate's library_default names it (analysis/src/validate.cpp).
  analysis::LibraryChoice c;
  c.library = algorithms::nccl::model_label(out.nccl->release);
  c.algorithm = out.nccl->algorithm;
  c.params = out.nccl->params;
  if (out.nccl->modelled) {
    c.library_name = fmt::format("{}/{}", algorithms::nccl::algo_name(out.nccl->algo),
                                 algorithms::nccl::protocol_name(out.nccl->proto));
    c.reason = fmt::format("{} is the cheapest in NCCL's cost table ({:.2f} us, {} channels)",
                           c.library_name, out.nccl->time_us, out.nccl->channels);
  } else {
    c.library_name = "send/recv";
    c.reason = fmt::format("NCCL runs {} as grouped point-to-point transfers (no cost model)",
                           core::to_string(call.collective));
  }
  return c;
}

Explanation explain(LibraryKind library, const Call& call, const core::Scenario& scenario,
                    const core::Topology& topo, const algorithms::Registry& registry,
                    const analysis::EngineChoice& engine) {
  Explanation out;
  out.library = library;
  out.choice = default_choice(library, call, scenario, topo, registry, out);
  if (scenario.stack.empty() && library != LibraryKind::nccl) {
    out.stack_note = fmt::format(
        "priced on collsim's direct data path (no stack named): --stack {} adds the library's "
        "own (staging, protocols, per-call costs; docs/stacks.md)",
        stack_of(library));
  }

  struct Candidate {
    const algorithms::AlgorithmInfo* algo;
    algorithms::RawParams params;
    bool is_default;
  };
  std::vector<Candidate> candidates{
      {&registry.find(call.collective, out.choice.algorithm), out.choice.params, true}};
  if (library == LibraryKind::nccl) {
    const bool fixed_channels = out.nccl->modelled && out.nccl->channels > 0;
    out.considered =
        !out.nccl->modelled
            ? fmt::format("NCCL's algorithms for {} (NCCL runs it as grouped send/recv)",
                          core::to_string(call.collective))
        : fixed_channels
            ? fmt::format("NCCL's algorithms x protocols, at the {} channels NCCL chose",
                          out.nccl->channels)
            : std::string("NCCL's algorithms x protocols");
    // What NCCL could run with its environment variables set: CollNet enabled.
    std::optional<analysis::NcclChoice> enabled;
    if (out.nccl->modelled) {
      analysis::NcclModelInputs in = *out.inputs;
      in.collnet_enable = true;
      enabled = analysis::nccl_default(call.collective, call.ranks, call.bytes, in);
    }
    for (const auto* a : registry.list(call.collective)) {
      if (!analysis::is_nccl_algorithm(*a)) {
        continue;
      }
      if (enabled) {
        if (std::string why = nccl_unavailable(*enabled, *a); !why.empty()) {
          out.refused.push_back(fmt::format("{}: {}", a->name, why));
          continue;
        }
      }
      const auto proto = std::find_if(a->params.begin(), a->params.end(),
                                      [](const auto& p) { return p.name == "protocol"; });
      const std::vector<std::string> protocols =
          proto == a->params.end() ? std::vector<std::string>{""} : proto->choices;
      const bool has_channels = std::any_of(a->params.begin(), a->params.end(),
                                            [](const auto& p) { return p.name == "channels"; });
      for (const std::string& p : protocols) {
        algorithms::RawParams raw;
        if (!p.empty()) {
          raw["protocol"] = p;
        }
        if (has_channels && fixed_channels) {
          raw["channels"] = std::to_string(out.nccl->channels);
        }
        candidates.push_back({a, std::move(raw), false});
      }
    }
  } else {
    out.considered = call.commutative
                         ? "collsim's MPI algorithms (not NCCL's), at default parameters"
                         : "collsim's MPI algorithms (not NCCL's) that allow a non-commutative "
                           "operation, at default parameters";
    if (!call.counts.empty()) {
      out.considered += ", that take per-rank counts";
    }
    for (const auto* a : registry.list(call.collective)) {
      if (analysis::is_nccl_algorithm(*a) || (!call.commutative && needs_commutative(*a)) ||
          (!call.counts.empty() && !a->counts)) {
        continue;
      }
      candidates.push_back({a, {}, false});
    }
  }

  // The default first, so that a candidate with the same resolved parameters is recognised as it.
  // Under a named stack, what its library cannot run is refused (the default: an error).
  const stacks::Stack* stack =
      engine.stack.empty() ? nullptr : &analysis::stacks().find(engine.stack);
  std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>> seen;
  for (const Candidate& c : candidates) {
    if (stack != nullptr && !stack->runs(*c.algo)) {
      if (c.is_default) {
        throw core::UsageError(stack->refusal(*c.algo));
      }
      out.refused.push_back(fmt::format("{}: {}", c.algo->name, stack->refusal(*c.algo)));
      continue;
    }
    algorithms::Request req;
    req.collective = call.collective;
    req.ranks = call.ranks;
    req.bytes = call.bytes;
    req.counts = call.counts;
    req.arrivals = call.arrivals;
    req.topology = &topo;
    req.params = algorithms::resolve_params(*c.algo, c.params);
    if (std::string why = registry.refusal(*c.algo, req); !why.empty()) {
      if (c.is_default) {
        throw core::InternalError(
            fmt::format("the library's default {} is refused: {}", c.algo->name, why));
      }
      out.refused.push_back(fmt::format("{}: {}", label(c.algo->name, c.params), why));
      continue;
    }
    std::pair<std::string, std::map<std::string, std::int64_t>> id{c.algo->name, req.params};
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) {
      continue;
    }
    seen.push_back(std::move(id));
    Timed t;
    t.algorithm = c.algo->name;
    t.params = c.params;
    t.row = analysis::simulate(registry, *c.algo, topo, engine, req);
    t.is_default = c.is_default;
    if (out.nccl && out.nccl->modelled) {
      t.nccl_estimate_us = nccl_estimate(*out.nccl, *c.algo, c.params);
    }
    out.ranking.push_back(std::move(t));
  }
  // Fastest first; on a tie the default wins (no regret), then by name for a stable order.
  std::stable_sort(out.ranking.begin(), out.ranking.end(), [](const Timed& a, const Timed& b) {
    if (a.row.time.value != b.row.time.value) {
      return a.row.time.value < b.row.time.value;
    }
    if (a.is_default != b.is_default) {
      return a.is_default;
    }
    return label(a.algorithm, a.params) < label(b.algorithm, b.params);
  });
  const auto def = std::find_if(out.ranking.begin(), out.ranking.end(),
                                [](const Timed& t) { return t.is_default; });
  out.default_rank = static_cast<std::size_t>(def - out.ranking.begin()) + 1;
  const double t_default = def->row.time.value;
  const double t_best = out.ranking.front().row.time.value;
  if (t_best > 0.0) {
    out.regret_pct = 100.0 * (t_default - t_best) / t_best;
    out.speedup = t_default / t_best;
  }
  return out;
}

// ---- output -------------------------------------------------------------------------------

} // namespace

void add_explain(CLI::App& app) {
  struct Args {
    std::string scenario;
    std::string collective;
    std::string ranks;
    std::string bytes;
    std::string library = "auto";
    std::string engine = "loggp";
    std::string commutative = "true";
    std::string format = "table";
    std::size_t top = 5;
    std::string output;
    std::string counts;
    std::string skew;
    StackOptions stack;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "explain", "Show what a library (Open MPI 4.1, NCCL) runs by default for one call, what "
                 "collsim finds fastest, and the regret (how much slower the default is)");
  cmd->add_option("--scenario", a->scenario, "Scenario (file or preset) that models the machine")
      ->required();
  cmd->add_option("--collective", a->collective, "Collective (allreduce, bcast, ...)")->required();
  cmd->add_option("--ranks", a->ranks, "Number of ranks")->required();
  cmd->add_option("--bytes", a->bytes, "Message size S, nccl-tests' convention (8B, 64KiB, 1MiB)")
      ->required();
  cmd->add_option(
         "--library", a->library,
         "ompi (Open MPI 4.1 coll/tuned), ompi5 (Open MPI 5.0: coll/han across nodes), "
         "nccl (NCCL's tuning model: 2.30.7, or the scenario's nccl.version), ucc (UCC 1.1 "
         "tl/ucp), hcoll (HPC-X's HCOLL), "
         "mpich (MPICH 4 ch4), "
         "both (nccl and ompi), or auto: the --stack's library, else nccl when the ranks "
         "are on GPUs (except barrier), else ompi")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine, "Engine: loggp or simgrid")->capture_default_str();
  cmd->add_option("--commutative", a->commutative,
                  "Whether the reduction operation is commutative (true or false; Open MPI only, "
                  "NCCL's operations all are)")
      ->capture_default_str();
  cmd->add_option("--counts", a->counts,
                  "Per-rank counts of a v-collective (alltoallv, allgatherv, ...): zipf:1.2, "
                  "normal:0.5, one:R, file:PATH, moe:PATH, ... (docs/imbalance.md)");
  cmd->add_option("--skew", a->skew,
                  "When the ranks arrive: late:1ms, late:T,k=K, uniform:T, normal:T, file:PATH "
                  "(docs/imbalance.md)");
  cmd->add_option("--top", a->top, "Rows of the ranking to show")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--format", a->format, "table or json")->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  add_stack_options(*cmd, a->stack);
  cmd->callback([a] {
    // Cheap checks first, so a typo fails before the scenario loads.
    if (a->format != "table" && a->format != "json") {
      throw core::UnknownNameError("format", a->format, {"table", "json"});
    }
    if (a->engine != "loggp" && a->engine != "simgrid") {
      throw core::UnknownNameError("engine", a->engine, {"loggp", "simgrid"});
    }
    if (a->library != "auto" && a->library != "ompi" && a->library != "nccl" &&
        a->library != "ucc" && a->library != "hcoll" && a->library != "ompi5" &&
        a->library != "mpich" && a->library != "both") {
      throw core::UnknownNameError(
          "library", a->library,
          {"auto", "ompi", "ompi5", "nccl", "ucc", "hcoll", "mpich", "both"});
    }
    if (a->commutative != "true" && a->commutative != "false") {
      throw core::UsageError(
          fmt::format("--commutative: expected true or false, got '{}'", a->commutative));
    }
    Call call;
    const CollectiveOptions named = parse_collective_options(a->collective, a->counts, a->skew);
    call.collective = named.kind;
    const std::vector<std::uint32_t> ranks = parse_ranks(a->ranks, "--ranks");
    if (ranks.size() != 1) {
      throw core::UsageError(
          fmt::format("--ranks: explain takes one rank count, got '{}'", a->ranks));
    }
    call.ranks = ranks.front();
    call.bytes = parse_size(a->bytes, "--bytes");
    call.commutative = a->commutative == "true";
    call.counts =
        analysis::make_counts(named.counts, call.collective, call.ranks, call.bytes.value);
    if (!call.counts.empty()) {
      call.bytes = core::Bytes{core::counts_bytes(call.collective, call.ranks, call.counts)};
      call.counts_text = named.counts.text;
    }
    call.arrivals = analysis::make_arrivals(named.skew, call.ranks);
    call.skew_text = named.skew.text;

    core::Scenario scenario = io::load_scenario(a->scenario);
    apply_stack_options(a->stack, scenario);
    const core::Topology topo = topologies::build(scenario.topology, call.ranks);
    const bool gpus = analysis::ranks_on_gpus(topo);
    std::vector<LibraryKind> libraries;
    const stacks::Chooser chooser = scenario.stack.empty()
                                        ? stacks::Chooser::machine
                                        : analysis::stacks().find(scenario.stack).info().chooser;
    if (a->library == "auto" && chooser == stacks::Chooser::nccl) {
      libraries = {LibraryKind::nccl};
    } else if (a->library == "auto" && chooser == stacks::Chooser::ompi41) {
      libraries = {LibraryKind::ompi};
    } else if (a->library == "auto" && chooser == stacks::Chooser::ucc) {
      libraries = {LibraryKind::ucc};
    } else if (a->library == "auto" && chooser == stacks::Chooser::hcoll) {
      libraries = {LibraryKind::hcoll};
    } else if (a->library == "auto" && chooser == stacks::Chooser::ompi50) {
      libraries = {LibraryKind::han};
    } else if (a->library == "auto" && chooser == stacks::Chooser::mpich4) {
      libraries = {LibraryKind::mpich};
    } else if (a->library == "auto") {
      libraries = {analysis::auto_library(topo, call.collective) == analysis::AutoLibrary::nccl
                       ? LibraryKind::nccl
                       : LibraryKind::ompi};
    } else if (a->library == "both") {
      libraries = {LibraryKind::nccl, LibraryKind::ompi};
    } else {
      libraries = {a->library == "nccl"    ? LibraryKind::nccl
                   : a->library == "ucc"   ? LibraryKind::ucc
                   : a->library == "hcoll" ? LibraryKind::hcoll
                   : a->library == "ompi5" ? LibraryKind::han
                   : a->library == "mpich" ? LibraryKind::mpich
                                           : LibraryKind::ompi};
    }
    if (!gpus && libraries.front() == LibraryKind::nccl) {
      throw core::UsageError(fmt::format("--library {}: NCCL runs on GPUs, and scenario '{}' "
                                         "places its ranks on CPU cores; use --library ompi",
                                         a->library, scenario.name));
    }
    const algorithms::Registry registry = algorithms::make_default_registry();
    const analysis::EngineChoice engine(a->engine, scenario);

    std::string text;
    nlohmann::json all = nlohmann::json::array();
    if (a->format == "table") {
      std::string what = core::collective_display_name(call.collective, !call.counts.empty());
      if (!call.counts.empty()) {
        what += fmt::format(" (counts {})", call.counts_text);
      }
      if (!call.arrivals.empty()) {
        what += fmt::format(" (skew {})", call.skew_text);
      }
      text += fmt::format("# collsim explain: {} of {} over {} ranks, scenario '{}', engine {}\n",
                          what, bytes_text(call.bytes), call.ranks, scenario.name, a->engine);
    }
    for (const LibraryKind library : libraries) {
      const Explanation e = explain(library, call, scenario, topo, registry, engine);
      if (a->format == "json") {
        all.push_back(to_json(e, call, scenario, a->engine, a->top));
      } else {
        text += "#\n" + format_table(e, a->top);
      }
    }
    if (a->format == "json") {
      text = (all.size() == 1 ? all.front() : all).dump(2) + "\n";
    }
    emit(text, a->output);
  });
}

} // namespace collsim::cli

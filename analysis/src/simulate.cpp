#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/collapse.hpp"
#include "collsim/analysis/steady_state.hpp"

#include "collsim/analysis/imbalance.hpp"
#include "collsim/core/layout.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/engines/analytic.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"
#include "collsim/stacks/nccl_stack.hpp"
#include "collsim/topologies/build.hpp"
#include "simulate_support.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <optional>

namespace collsim::analysis {

using detail::AutoPoint;
using detail::resolve_auto;
using detail::stack_registry;
using detail::with_imbalance;

namespace {

/// The engines, in the order `collsim sim --help` lists them. An immutable table (no mutable
/// state): engines are looked up here, never by comparing names at call sites.
const std::vector<EngineEntry>& engine_table() {
  static const std::vector<EngineEntry> table{
      {"loggp", "discrete-event LogGP per route, no contention", true, false,
       [](const core::Schedule& s, const core::Topology& t, const core::RunOptions& o,
          const EngineChoice&) { return engines::LogGPEngine().run(s, t, o); },
       true},
      {"analytic", "closed-form alpha-beta-gamma cost of the algorithm", false, false, {}},
      {"simgrid", "flow-level max-min bandwidth sharing on SimGrid", true, true,
       [](const core::Schedule& s, const core::Topology& t, const core::RunOptions& o,
          const EngineChoice& e) { return engines::SimgridEngine(e.simgrid).run(s, t, o); }},
  };
  return table;
}

} // namespace

namespace detail {

const stacks::Registry& stack_registry() {
  static const stacks::Registry registry = stacks::default_stacks();
  return registry;
}

std::optional<AutoPoint> resolve_auto(const core::Scenario& scenario, const core::Topology& topo,
                                      core::CollectiveKind collective, std::uint32_t ranks,
                                      core::Bytes bytes, const algorithms::Registry& registry,
                                      std::string* why, bool varying) {
  const std::optional<LibraryChoice> choice =
      auto_choice(scenario, topo, collective, ranks, bytes, registry, why, 4, varying);
  if (!choice) {
    return std::nullopt;
  }
  AutoPoint out;
  out.algo = &registry.find(collective, choice->algorithm);
  algorithms::RawParams params = choice->params;
  if (varying && stacks::is_nccl_p2p(*out.algo)) {
    // NCCL splits each operation by its own size: the choice for the average block is not it
    // (with_library_params gives the generator the communicator's bounds).
    params.erase("channels");
  }
  out.params = algorithms::resolve_params(*out.algo, params);
  out.shown = "algorithm=" + out.algo->name;
  if (const std::string p = params_text(params); !p.empty()) {
    out.shown += "," + p;
  }
  if (params.size() != choice->params.size()) {
    out.shown += ",channels=per operation";
  }
  return out;
}

} // namespace detail

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const EngineEntry& e : engine_table()) {
    out.push_back(e.name);
  }
  return out;
}

const EngineEntry& find_engine(std::string_view engine) {
  for (const EngineEntry& e : engine_table()) {
    if (e.name == engine) {
      return e;
    }
  }
  throw core::UnknownNameError("engine", engine, engine_names());
}

void check_engine(std::string_view engine) {
  (void)find_engine(engine);
}

const stacks::Stack& stack_for(const algorithms::AlgorithmInfo& algo) {
  return stack_registry().stack_for(algo);
}

const stacks::Registry& stacks() {
  return stack_registry();
}

void check_stack(const core::Scenario& scenario) {
  if (scenario.stack.empty()) {
    return;
  }
  try {
    (void)stack_registry().find(scenario.stack);
  } catch (const core::UnknownNameError& e) {
    if (scenario.stack_pos.file.empty()) {
      throw;
    }
    throw core::ScenarioError(scenario.stack_pos, "stack", e.what());
  }
}

namespace detail {

void with_imbalance(const core::StudySpec& study, algorithms::Request& req) {
  req.counts = make_counts(study.counts, req.collective, req.ranks, req.bytes.value);
  if (!req.counts.empty()) {
    req.bytes = core::Bytes{core::counts_bytes(req.collective, req.ranks, req.counts)};
  }
  req.arrivals = make_arrivals(study.skew, req.ranks);
}

} // namespace detail

namespace {

/// The schedule `request` runs as under the engine's stack.
core::Schedule lowered(const algorithms::Registry& registry, const algorithms::AlgorithmInfo& algo,
                       const core::Topology& topology, const EngineChoice& engine,
                       const algorithms::Request& request) {
  stacks::LowerContext ctx{topology, engine.nccl, algo,
                           engine.topology ? &*engine.topology : nullptr};
  if (!engine.buffers.empty()) {
    ctx.buffers = stacks::buffers_from_name(engine.buffers);
  }
  ctx.mpi = &engine.mpi;
  return stacks::lower(stack_registry(), registry.generate(algo, request), ctx, engine.stack);
}

} // namespace

std::optional<core::Schedule>
collapse_for(const algorithms::Registry& registry, const algorithms::AlgorithmInfo& algo,
             const core::Topology& topology, const EngineChoice& engine,
             const algorithms::Request& request, const core::RunOptions& options) {
  if (!find_engine(engine.name).collapses || options.timeline || options.messages ||
      options.link_loads) {
    return std::nullopt;
  }
  return collapse_programs(algo, request, topology, [&](std::uint32_t programs) {
    algorithms::Request r = request;
    r.collapse_to = programs;
    return lowered(registry, algo, topology, engine, r);
  });
}

core::ResultRow simulate(const algorithms::Registry& registry,
                         const algorithms::AlgorithmInfo& algo, const core::Topology& topology,
                         const EngineChoice& engine, const algorithms::Request& request_in,
                         core::RunResult* run, const core::RunOptions& options) {
  const EngineEntry& entry = find_engine(engine.name);
  std::string chosen;
  const algorithms::Request request = with_library_params(algo, request_in, engine, &chosen);
  core::Seconds time;
  std::string method;      // ResultRow::method
  bool steady_run = false; // ResultRow::extrapolated
  if (!entry.messages && !request.arrivals.empty()) {
    throw core::UsageError("the analytic engine prices closed forms, which have no arrival skew; "
                           "use --engine loggp or simgrid");
  }
  if (!entry.messages) {
    if (!engine.stack.empty() && &stack_registry().find(engine.stack) != &stack_for(algo)) {
      throw core::UsageError(fmt::format(
          "the analytic engine prices {}'s closed form, not the {} stack's data path; use "
          "--engine loggp",
          algo.name, engine.stack));
    }
    const auto cost = registry.cost(algo, request);
    if (!cost) {
      throw core::UsageError(
          fmt::format("{}: no closed-form cost for {} ranks and {} bytes{}; use --engine loggp",
                      algo.name, request.ranks, request.bytes.value,
                      algo.cost_formula.empty() ? " (the algorithm declares none)" : ""));
    }
    const auto abg = engines::alpha_beta_gamma(topology, request.ranks);
    time = engines::analytic_time(abg, cost->alpha_terms, cost->beta_bytes, cost->gamma_bytes);
    if (run != nullptr) {
      run->time = time;
    }
  } else {
    // One program per class of equivalent ranks where that times exactly like every rank's.
    std::optional<core::Schedule> collapsed =
        collapse_for(registry, algo, topology, engine, request, options);
    if (collapsed) {
      const std::uint32_t k = collapsed->ranks();
      method =
          fmt::format("collapsed: {} program{} for {} ranks", k, k == 1 ? "" : "s", request.ranks);
    }
    // A long chunk pipeline from a run of fewer loops where that is exact (steady_state.hpp).
    std::optional<core::RunResult> steady;
    SteadyState found;
    if (!collapsed) {
      steady = steady_state_run(
          algo, request, topology,
          [&](const algorithms::Request& r) {
            return lowered(registry, algo, topology, engine, r);
          },
          [&](const core::Schedule& s, const core::RunOptions& o) {
            return entry.run(s, topology, o, engine);
          },
          options, &found);
    }
    core::RunResult result;
    if (steady) {
      steady_run = true;
      method = fmt::format("steady state: {} of {} loops run, period {}", found.run_loops,
                           found.loops, found.period);
      result = std::move(*steady);
    } else {
      core::Schedule schedule =
          collapsed ? std::move(*collapsed) : lowered(registry, algo, topology, engine, request);
      if (!request.arrivals.empty()) {
        schedule = apply_arrivals(schedule, request.arrivals);
      }
      if (request.meter.get() != nullptr && schedule.header().meter.get() == nullptr) {
        // Built without the request's header (an imported or composed schedule): report it now.
        schedule.set_meter(request.meter);
      }
      result = entry.run(schedule, topology, options, engine);
    }
    time = result.time;
    if (run != nullptr) {
      *run = std::move(result);
    }
  }
  core::ResultRow row = core::make_result_row(request.collective, algo.name, engine.name,
                                              request.ranks, request.bytes, time, request.root);
  row.params = std::move(chosen);
  row.stack = engine.stack;
  row.varying = !request.counts.empty();
  row.method = std::move(method);
  row.extrapolated = steady_run;
  if (!request.arrivals.empty()) {
    row.last_arrival =
        core::Seconds{*std::max_element(request.arrivals.begin(), request.arrivals.end())};
  }
  return row;
}

std::vector<LinkReport> link_reports(const core::Topology& topology,
                                     const std::vector<core::LinkLoad>& loads, core::Seconds time) {
  std::vector<LinkReport> out;
  out.reserve(loads.size());
  for (const core::LinkLoad& l : loads) {
    const core::Link& link = topology.links().at(l.link);
    LinkReport r;
    r.label = core::link_label(topology, l.link);
    r.kind = std::string(core::to_string(link.kind));
    r.bandwidth = link.bandwidth;
    r.load = l;
    const double capacity = link.bandwidth.bytes_per_second * time.value;
    r.utilization = capacity > 0.0 ? static_cast<double>(l.bytes) / capacity : 0.0;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const LinkReport& a, const LinkReport& b) {
    return a.utilization > b.utilization;
  });
  return out;
}

PointRun run_point(const core::Scenario& scenario, const core::StudySpec& study,
                   const algorithms::Registry& registry, const core::RunOptions& options) {
  if (!find_engine(study.engine).messages) {
    throw core::UsageError("the analytic engine has no timeline: use --engine loggp or simgrid");
  }
  if (study.algorithms.empty() || study.ranks.empty() || study.sizes.empty()) {
    throw core::UsageError("a point run needs an algorithm, a rank count and a size");
  }
  if (!study.stacks.empty()) {
    // A study comparing stacks: the point under its first stack.
    core::Scenario under = scenario;
    under.stack = study.stacks.front();
    under.stack_pos = study.stack_pos.empty() ? study.pos : study.stack_pos.front();
    core::StudySpec one = study;
    one.stacks.clear();
    one.stack_pos.clear();
    return run_point(under, one, registry, options);
  }
  // The same checks and messages as a study of this one point.
  core::StudySpec one = study;
  one.algorithms.resize(1);
  one.ranks.resize(1);
  one.sizes.resize(1);
  const StudyResult checked = run_study(scenario, one, registry, {}, 1);
  if (checked.rows.empty()) {
    throw core::UsageError(checked.skipped.empty() ? std::string("the point was skipped")
                                                   : checked.skipped.front());
  }
  PointRun out;
  out.topology = topologies::build(scenario.topology, one.ranks[0]);
  algorithms::Request req;
  req.collective = one.collective;
  req.ranks = one.ranks[0];
  req.bytes = one.sizes[0];
  req.root = one.root;
  req.topology = &out.topology;
  with_imbalance(one, req);
  std::string chosen;
  const algorithms::AlgorithmInfo* picked = nullptr;
  if (one.algorithms[0] == kAutoAlgorithm) {
    const std::optional<AutoPoint> a =
        resolve_auto(scenario, out.topology, req.collective, req.ranks, req.bytes, registry,
                     nullptr, !req.counts.empty());
    picked = a->algo; // run_study above ran the point, so the choice exists
    req.params = a->params;
    chosen = a->shown;
  } else {
    picked = &registry.find(one.collective, one.algorithms[0]);
    req.params = algorithms::resolve_params(*picked, one.params);
  }
  const algorithms::AlgorithmInfo& algo = *picked;
  const EngineChoice engine(one.engine, scenario);
  if (chosen.empty()) {
    req = with_library_params(algo, req, engine, &chosen);
  }
  const EngineEntry& entry = find_engine(one.engine);
  stacks::LowerContext ctx{out.topology, scenario.nccl, algo, &scenario.topology};
  if (!scenario.buffers.empty()) {
    ctx.buffers = stacks::buffers_from_name(scenario.buffers);
  }
  ctx.mpi = &scenario.mpi;
  out.schedule = stacks::lower(stack_registry(), registry.generate(algo, req), ctx, scenario.stack);
  if (!req.arrivals.empty()) {
    out.schedule = apply_arrivals(out.schedule, req.arrivals);
  }
  out.result = entry.run(out.schedule, out.topology, options, engine);
  const std::string label =
      one.algorithms[0] == kAutoAlgorithm ? std::string(kAutoAlgorithm) : algo.name;
  out.row = core::make_result_row(req.collective, label, one.engine, req.ranks, req.bytes,
                                  out.result.time, req.root);
  out.row.params = std::move(chosen);
  out.row.stack = scenario.stack;
  out.row.varying = !req.counts.empty();
  if (!req.arrivals.empty()) {
    out.row.last_arrival =
        core::Seconds{*std::max_element(req.arrivals.begin(), req.arrivals.end())};
  }
  return out;
}

} // namespace collsim::analysis

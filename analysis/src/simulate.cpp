#include "collsim/analysis/simulate.hpp"

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
#include "parallel.hpp"
#include "wire.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace collsim::analysis {

namespace {

/// The engines, in the order `collsim sim --help` lists them. An immutable table (no mutable
/// state): engines are looked up here, never by comparing names at call sites.
const std::vector<EngineEntry>& engine_table() {
  static const std::vector<EngineEntry> table{
      {"loggp", "discrete-event LogGP per route, no contention", true, false,
       [](const core::Schedule& s, const core::Topology& t, const core::RunOptions& o,
          const EngineChoice&) { return engines::LogGPEngine().run(s, t, o); }},
      {"analytic", "closed-form alpha-beta-gamma cost of the algorithm", false, false, {}},
      {"simgrid", "flow-level max-min bandwidth sharing on SimGrid", true, true,
       [](const core::Schedule& s, const core::Topology& t, const core::RunOptions& o,
          const EngineChoice& e) { return engines::SimgridEngine(e.simgrid).run(s, t, o); }},
  };
  return table;
}

/// The library stacks (stacks::default_stacks), built once; immutable.
const stacks::Registry& stack_registry() {
  static const stacks::Registry registry = stacks::default_stacks();
  return registry;
}

/// `auto` at one point: the library's choice as an algorithm of the registry and its parameters.
struct AutoPoint {
  const algorithms::AlgorithmInfo* algo = nullptr;
  std::map<std::string, std::int64_t> params;
  std::string shown; ///< "algorithm=nccl_ring,channels=24,protocol=simple"
};

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

} // namespace

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

namespace {

/// The study's counts and arrivals for the request's ranks and size (issue 21): a v-collective's
/// size becomes its counts' total (neighbourhood counts: S per neighbour message).
void with_imbalance(const core::StudySpec& study, algorithms::Request& req) {
  req.counts = make_counts(study.counts, req.collective, req.ranks, req.bytes.value);
  if (!req.counts.empty()) {
    req.bytes = core::Bytes{core::counts_bytes(req.collective, req.ranks, req.counts)};
  }
  req.arrivals = make_arrivals(study.skew, req.ranks);
}

} // namespace

core::ResultRow simulate(const algorithms::Registry& registry,
                         const algorithms::AlgorithmInfo& algo, const core::Topology& topology,
                         const EngineChoice& engine, const algorithms::Request& request_in,
                         core::RunResult* run, const core::RunOptions& options) {
  const EngineEntry& entry = find_engine(engine.name);
  std::string chosen;
  const algorithms::Request request = with_library_params(algo, request_in, engine, &chosen);
  core::Seconds time;
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
    stacks::LowerContext ctx{topology, engine.nccl, algo,
                             engine.topology ? &*engine.topology : nullptr, entry.shares_links};
    if (!engine.buffers.empty()) {
      ctx.buffers = stacks::buffers_from_name(engine.buffers);
    }
    ctx.mpi = &engine.mpi;
    core::Schedule schedule =
        stacks::lower(stack_registry(), registry.generate(algo, request), ctx, engine.stack);
    if (!request.arrivals.empty()) {
      schedule = apply_arrivals(schedule, request.arrivals);
    }
    core::RunResult result = entry.run(schedule, topology, options, engine);
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
  if (!request.arrivals.empty()) {
    row.last_arrival =
        core::Seconds{*std::max_element(request.arrivals.begin(), request.arrivals.end())};
  }
  return row;
}

namespace {

/// A study that compares stacks: the study once per stack, its rows labelled ALGORITHM@STACK;
/// an algorithm a stack does not run is skipped there, with the stack's reason.
StudyResult run_stacks(const core::Scenario& scenario, const core::StudySpec& study,
                       const std::string& prefix, const algorithms::Registry& registry,
                       const Progress& progress, unsigned threads, bool link_loads,
                       const Executor* executor) {
  StudyResult out;
  for (std::size_t i = 0; i < study.stacks.size(); ++i) {
    const std::string& name = study.stacks[i];
    const core::SourcePos pos = i < study.stack_pos.size() ? study.stack_pos[i] : study.pos;
    const stacks::Stack* stack = nullptr;
    try {
      stack = &stack_registry().find(name);
    } catch (const core::UnknownNameError& e) {
      if (pos.file.empty()) {
        throw;
      }
      throw core::ScenarioError(pos, fmt::format("{}stacks[{}]", prefix, i), e.what());
    }
    core::StudySpec one = study;
    one.stacks.clear();
    one.algorithms.clear();
    one.algorithm_pos.clear();
    for (std::size_t a = 0; a < study.algorithms.size(); ++a) {
      const algorithms::AlgorithmInfo* algo =
          study.algorithms[a] == kAutoAlgorithm
              ? nullptr
              : registry.try_find(study.collective, study.algorithms[a]);
      if (algo != nullptr && !stack->runs(*algo)) {
        out.skipped.push_back(fmt::format("{}@{}: {}", algo->name, name, stack->refusal(*algo)));
        continue;
      }
      one.algorithms.push_back(study.algorithms[a]);
      if (a < study.algorithm_pos.size()) {
        one.algorithm_pos.push_back(study.algorithm_pos[a]);
      }
    }
    if (one.algorithms.empty()) {
      continue;
    }
    core::Scenario under = scenario;
    under.stack = name;
    under.stack_pos = pos;
    StudyResult r = run_study(under, one, registry, progress, threads, link_loads, executor);
    for (core::ResultRow& row : r.rows) {
      row.algorithm += "@" + name;
    }
    out.rows.insert(out.rows.end(), r.rows.begin(), r.rows.end());
    out.link_loads.insert(out.link_loads.end(), r.link_loads.begin(), r.link_loads.end());
    for (const std::string& s : r.skipped) {
      out.skipped.push_back(fmt::format("{} (stack {})", s, name));
    }
  }
  out.crossovers = crossovers(out.rows);
  return out;
}

} // namespace

StudyResult run_study(const core::Scenario& scenario, const core::StudySpec& study,
                      const algorithms::Registry& registry, const Progress& progress,
                      unsigned threads, bool link_loads, const Executor* executor) {
  // YAML paths in messages ("studies[1].ranks") when the study belongs to the scenario.
  std::string prefix;
  if (!scenario.studies.empty() && &study >= scenario.studies.data() &&
      &study < scenario.studies.data() + scenario.studies.size()) {
    prefix = fmt::format("studies[{}].", &study - scenario.studies.data());
  }
  if (!study.stacks.empty()) {
    return run_stacks(scenario, study, prefix, registry, progress, threads, link_loads, executor);
  }
  // Resolve names first, so a typo fails before any work, pointing at the name. `auto` (the
  // library's choice) has no entry: it is resolved per point.
  std::vector<const algorithms::AlgorithmInfo*> algos;
  for (std::size_t i = 0; i < study.algorithms.size(); ++i) {
    if (study.algorithms[i] == kAutoAlgorithm) {
      algos.push_back(nullptr);
      continue;
    }
    try {
      algos.push_back(&registry.find(study.collective, study.algorithms[i]));
    } catch (const core::UnknownNameError& e) {
      const core::SourcePos pos =
          i < study.algorithm_pos.size() ? study.algorithm_pos[i] : study.pos;
      if (pos.file.empty()) {
        throw; // not from a file (e.g. the command line): the plain message says it all
      }
      throw core::ScenarioError(pos, fmt::format("{}algorithms[{}]", prefix, i), e.what());
    }
  }
  try {
    check_engine(study.engine);
  } catch (const core::UnknownNameError& e) {
    if (study.engine_pos.file.empty()) {
      throw;
    }
    throw core::ScenarioError(study.engine_pos, prefix + "engine", e.what());
  }
  (void)parse_nccl_env(scenario.nccl); // a bad NCCL variable fails before any work, at its place
  check_stack(scenario);
  for (std::size_t i = 0; i < algos.size(); ++i) {
    if (algos[i] == nullptr || scenario.stack.empty()) {
      continue;
    }
    const stacks::Stack& stack = stack_registry().find(scenario.stack);
    if (!stack.runs(*algos[i])) {
      const core::SourcePos pos =
          i < study.algorithm_pos.size() ? study.algorithm_pos[i] : study.pos;
      if (pos.file.empty()) {
        throw core::UsageError(stack.refusal(*algos[i]));
      }
      throw core::ScenarioError(pos, fmt::format("{}algorithms[{}]", prefix, i),
                                stack.refusal(*algos[i]));
    }
  }
  std::map<std::uint32_t, core::Topology> topologies;
  for (std::uint32_t p : study.ranks) {
    try {
      topologies.emplace(p, topologies::build(scenario.topology, p));
    } catch (const core::UsageError& e) {
      if (study.ranks_pos.file.empty()) {
        throw;
      }
      throw core::ScenarioError(study.ranks_pos, prefix + "ranks", e.what());
    }
  }

  // Parameters, resolved per algorithm (a value may be a choice name of one algorithm's
  // enumeration); a parameter that none of the study's algorithms takes is a typo, not a no-op.
  std::vector<std::map<std::string, std::int64_t>> algo_params;
  for (const auto* a : algos) {
    std::map<std::string, std::int64_t> resolved;
    for (const auto& [name, text] : study.params) {
      if (a == nullptr) {
        break; // `auto` runs the library's parameters
      }
      try {
        const auto one = algorithms::resolve_params(*a, {{name, text}});
        resolved.insert(one.begin(), one.end());
      } catch (const core::UsageError& e) {
        const auto pos = study.param_pos.find(name);
        if (pos == study.param_pos.end() || pos->second.file.empty()) {
          throw;
        }
        throw core::ScenarioError(pos->second, fmt::format("{}params.{}", prefix, name), e.what());
      }
    }
    algo_params.push_back(std::move(resolved));
  }
  for (const auto& [name, text] : study.params) {
    const bool taken = std::any_of(algos.begin(), algos.end(), [&](const auto* a) {
      return a != nullptr && std::any_of(a->params.begin(), a->params.end(),
                                         [&](const auto& ps) { return ps.name == name; });
    });
    if (taken) {
      continue;
    }
    std::vector<std::string> valid;
    for (const auto* a : algos) {
      for (const auto& ps : a != nullptr ? a->params : std::vector<algorithms::ParamSpec>{}) {
        if (std::find(valid.begin(), valid.end(), ps.name) == valid.end()) {
          valid.push_back(ps.name);
        }
      }
    }
    std::string msg = fmt::format("no algorithm of this study takes a parameter '{}'", name);
    if (const std::string close = core::closest_match(name, valid); !close.empty()) {
      msg += fmt::format(" (did you mean '{}'?)", close);
    }
    msg += valid.empty() ? std::string("; they take no parameters")
                         : fmt::format("; their parameters are: {}", fmt::join(valid, ", "));
    if (std::find(algos.begin(), algos.end(), nullptr) != algos.end()) {
      msg += "; `auto` runs the library's own parameters (constrain NCCL with nccl.env)";
    }
    const auto pos = study.param_pos.find(name);
    if (pos == study.param_pos.end() || pos->second.file.empty()) {
      throw core::UsageError(msg);
    }
    throw core::ScenarioError(pos->second, fmt::format("{}params.{}", prefix, name), msg);
  }

  struct Point {
    const algorithms::AlgorithmInfo* algo;
    std::map<std::string, std::int64_t> params;
    std::uint32_t ranks;
    core::Bytes bytes;
    std::string label; ///< "auto", or empty: the algorithm's name
    std::string shown; ///< `auto`'s choice as the row's params show it
  };
  std::vector<Point> points;
  StudyResult out;
  for (std::size_t ai = 0; ai < algos.size(); ++ai) {
    for (std::uint32_t p : study.ranks) {
      algorithms::Request probe;
      probe.collective = study.collective;
      probe.ranks = p;
      probe.root = study.root;
      probe.topology = &topologies.at(p);
      probe.arrivals = make_arrivals(study.skew, p);
      for (core::Bytes n : study.sizes) {
        probe.counts = make_counts(study.counts, study.collective, p, n.value);
        Point pt{algos[ai], algo_params[ai], p, n, {}, {}};
        probe.bytes = probe.counts.empty()
                          ? n
                          : core::Bytes{core::counts_bytes(study.collective, p, probe.counts)};
        std::string why;
        if (pt.algo == nullptr) {
          const std::optional<AutoPoint> chosen =
              resolve_auto(scenario, topologies.at(p), study.collective, p, probe.bytes, registry,
                           &why, !probe.counts.empty());
          if (!chosen) {
            out.skipped.push_back(fmt::format("auto at {} ranks, {} bytes: {}", p, n.value, why));
            continue;
          }
          pt.algo = chosen->algo;
          pt.params = chosen->params;
          pt.label = std::string(kAutoAlgorithm);
          pt.shown = chosen->shown;
        }
        const std::string name =
            pt.label.empty() ? pt.algo->name : fmt::format("auto ({})", pt.algo->name);
        probe.params = pt.params;
        why = registry.refusal(*pt.algo, probe);
        if (!why.empty()) {
          out.skipped.push_back(fmt::format("{} at {} ranks, {} bytes: {}", name, p, n.value, why));
          continue;
        }
        if (!find_engine(study.engine).messages && !registry.cost(*pt.algo, probe)) {
          out.skipped.push_back(
              fmt::format("{} at {} ranks, {} bytes: no closed-form cost", name, p, n.value));
          continue;
        }
        points.push_back(std::move(pt));
      }
    }
  }

  out.rows.resize(points.size());
  const bool keep_loads = link_loads && find_engine(study.engine).messages;
  if (keep_loads) {
    out.link_loads.resize(points.size());
  }
  const EngineChoice engine(study.engine, scenario);
  const auto run_point_at = [&](std::size_t i) {
    const Point& pt = points[i];
    algorithms::Request req;
    req.collective = study.collective;
    req.ranks = pt.ranks;
    req.bytes = pt.bytes;
    req.root = study.root;
    req.params = pt.params;
    req.topology = &topologies.at(pt.ranks);
    with_imbalance(study, req);
    if (keep_loads) {
      core::RunOptions options;
      options.link_loads = true;
      core::RunResult run;
      out.rows[i] = simulate(registry, *pt.algo, *req.topology, engine, req, &run, options);
      out.link_loads[i] = link_reports(*req.topology, run.link_loads, run.time);
    } else {
      out.rows[i] = simulate(registry, *pt.algo, *req.topology, engine, req);
    }
    if (!pt.label.empty()) {
      out.rows[i].algorithm = pt.label;
      out.rows[i].params = pt.shown;
    }
  };
  SweepItems items;
  items.count = points.size();
  items.run = run_point_at;
  items.save = [&](std::size_t i) {
    detail::WireWriter w;
    detail::put_row(w, out.rows[i]);
    if (keep_loads) {
      w.put(static_cast<std::uint64_t>(out.link_loads[i].size()));
      for (const LinkReport& l : out.link_loads[i]) {
        w.put(l.label);
        w.put(l.kind);
        w.put(l.bandwidth);
        detail::put_load(w, l.load);
        w.put(l.utilization);
      }
    }
    return w.take();
  };
  items.load = [&](std::size_t i, std::string_view bytes) {
    detail::WireReader in(bytes);
    detail::get_row(in, out.rows[i]);
    if (keep_loads) {
      std::uint64_t n = 0;
      in.get(n);
      out.link_loads[i].assign(n, LinkReport{});
      for (LinkReport& l : out.link_loads[i]) {
        in.get(l.label);
        in.get(l.kind);
        in.get(l.bandwidth);
        detail::get_load(in, l.load);
        in.get(l.utilization);
      }
    }
    in.finish();
  };
  items.describe = [&](std::size_t i) {
    const Point& pt = points[i];
    return fmt::format("{} at {} ranks, {} bytes",
                       pt.label.empty() ? pt.algo->name : fmt::format("auto ({})", pt.algo->name),
                       pt.ranks, pt.bytes.value);
  };
  items.done = [&](std::size_t done) {
    if (progress) {
      progress(done, points.size());
    }
  };
  run_items(executor, threads, items);
  out.crossovers = crossovers(out.rows);
  return out;
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
  stacks::LowerContext ctx{out.topology, scenario.nccl, algo, &scenario.topology,
                           entry.shares_links};
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

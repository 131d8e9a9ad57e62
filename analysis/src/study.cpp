// Studies: a sweep over algorithms, rank counts and sizes, checked and laid out as points, then
// run on an executor (analysis/executor.hpp: this process's threads or an MPI job's processes),
// several studies as one sweep where a caller has many (tune's candidates).

#include "collsim/analysis/simulate.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/imbalance.hpp"
#include "collsim/analysis/nccl_env.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/topologies/build.hpp"
#include "simulate_support.hpp"
#include "wire.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace collsim::analysis {

using detail::AutoPoint;
using detail::resolve_auto;
using detail::stack_registry;
using detail::with_imbalance;

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

/// YAML paths in messages ("studies[1].ranks") when the study belongs to the scenario.
std::string study_prefix(const core::Scenario& scenario, const core::StudySpec& study) {
  if (!scenario.studies.empty() && &study >= scenario.studies.data() &&
      &study < scenario.studies.data() + scenario.studies.size()) {
    return fmt::format("studies[{}].", &study - scenario.studies.data());
  }
  return {};
}

/// One point of a study: what runs, at how many ranks, at which size.
struct Point {
  const algorithms::AlgorithmInfo* algo;
  std::map<std::string, std::int64_t> params;
  std::uint32_t ranks;
  core::Bytes bytes;
  std::string label; ///< "auto", or empty: the algorithm's name
  std::string shown; ///< `auto`'s choice as the row's params show it
};

/// A study checked and laid out as points, with the storage their results go to. Held by
/// pointer: requests point into `topologies`.
struct StudyPlan {
  const core::StudySpec* study = nullptr;
  std::map<std::uint32_t, core::Topology> topologies;
  std::vector<Point> points;
  bool keep_loads = false;
  EngineChoice engine;
  StudyResult out; ///< skipped points now, rows once run
};

/// Checks a study (names, engine, stack, rank counts, parameters: errors at their place) and
/// lays out its points; nothing runs yet.
std::unique_ptr<StudyPlan> plan_study(const core::Scenario& scenario, const core::StudySpec& study,
                                      const algorithms::Registry& registry, bool link_loads) {
  const std::string prefix = study_prefix(scenario, study);
  auto plan = std::make_unique<StudyPlan>();
  plan->study = &study;
  auto& topologies = plan->topologies;
  auto& points = plan->points;
  StudyResult& out = plan->out;
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
  for (const auto& param : study.params) {
    const std::string& name = param.first; // not a structured binding: clang 14's lambdas cannot
                                           // capture one
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
        if (!why.empty() && pt.algo->symmetry) {
          // Too many operations for the whole schedule may be few for one program per class of
          // equivalent ranks (core/collapse.hpp), which the point then runs.
          core::RunOptions opt;
          opt.link_loads = link_loads;
          try {
            if (collapse_for(registry, *pt.algo, topologies.at(p),
                             EngineChoice(study.engine, scenario), probe, opt)) {
              why.clear();
            }
          } catch (const core::UsageError&) {
            // The collapsed form is refused too (a parameter out of range, not the size): the
            // point stays skipped with the first reason.
          }
        }
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
  plan->keep_loads = link_loads && find_engine(study.engine).messages;
  if (plan->keep_loads) {
    out.link_loads.resize(points.size());
  }
  plan->engine = EngineChoice(study.engine, scenario);
  return plan;
}

/// Runs the points of several studies as one sweep (one executor run: no study waits for the
/// previous one's slowest point), each result into its study's storage.
void run_plans(const std::vector<StudyPlan*>& plans, const algorithms::Registry& registry,
               const Progress& progress, unsigned threads, const Executor* executor) {
  std::vector<std::size_t> first; // each plan's first point in the sweep's numbering
  std::size_t total = 0;
  for (const StudyPlan* plan : plans) {
    first.push_back(total);
    total += plan->points.size();
  }
  // The sweep runs the points backwards: a study's rank counts and sizes grow with the index, so
  // the big points start first and the last to start are small ones, and no thread or process
  // is left alone with a big point at the end (longest-first scheduling, roughly).
  const auto locate = [&](std::size_t at) -> std::pair<StudyPlan&, std::size_t> {
    const std::size_t i = total - 1 - at;
    const auto k = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), i) -
                                            first.begin() - 1);
    return {*plans[k], i - first[k]};
  };
  SweepItems items;
  items.count = total;
  items.run = [&](std::size_t at, core::MeterRef meter) {
    auto [plan, i] = locate(at);
    const core::StudySpec& study = *plan.study;
    const Point& pt = plan.points[i];
    StudyResult& out = plan.out;
    algorithms::Request req;
    req.collective = study.collective;
    req.ranks = pt.ranks;
    req.bytes = pt.bytes;
    req.root = study.root;
    req.params = pt.params;
    req.topology = &plan.topologies.at(pt.ranks);
    req.meter = meter;
    with_imbalance(study, req);
    if (plan.keep_loads) {
      core::RunOptions options;
      options.link_loads = true;
      core::RunResult run;
      out.rows[i] = simulate(registry, *pt.algo, *req.topology, plan.engine, req, &run, options);
      out.link_loads[i] = link_reports(*req.topology, run.link_loads, run.time);
    } else {
      out.rows[i] = simulate(registry, *pt.algo, *req.topology, plan.engine, req);
    }
    if (!pt.label.empty()) {
      out.rows[i].algorithm = pt.label;
      out.rows[i].params = pt.shown;
    }
  };
  items.save = [&](std::size_t at) {
    auto [plan, i] = locate(at);
    detail::WireWriter w;
    detail::put_row(w, plan.out.rows[i]);
    if (plan.keep_loads) {
      w.put(static_cast<std::uint64_t>(plan.out.link_loads[i].size()));
      for (const LinkReport& l : plan.out.link_loads[i]) {
        w.put(l.label);
        w.put(l.kind);
        w.put(l.bandwidth);
        detail::put_load(w, l.load);
        w.put(l.utilization);
      }
    }
    return w.take();
  };
  items.load = [&](std::size_t at, std::string_view bytes) {
    auto [plan, i] = locate(at);
    detail::WireReader in(bytes);
    detail::get_row(in, plan.out.rows[i]);
    if (plan.keep_loads) {
      std::uint64_t n = 0;
      in.get(n);
      plan.out.link_loads[i].assign(n, LinkReport{});
      for (LinkReport& l : plan.out.link_loads[i]) {
        in.get(l.label);
        in.get(l.kind);
        in.get(l.bandwidth);
        detail::get_load(in, l.load);
        in.get(l.utilization);
      }
    }
    in.finish();
  };
  items.describe = [&](std::size_t at) {
    auto [plan, i] = locate(at);
    const Point& pt = plan.points[i];
    return fmt::format("{} at {} ranks, {} bytes",
                       pt.label.empty() ? pt.algo->name : fmt::format("auto ({})", pt.algo->name),
                       pt.ranks, pt.bytes.value);
  };
  items.done = [&](std::size_t done) {
    if (progress) {
      progress(done, total);
    }
  };
  run_items(executor, threads, items);
  for (StudyPlan* plan : plans) {
    plan->out.crossovers = crossovers(plan->out.rows);
  }
}

} // namespace

StudyResult run_study(const core::Scenario& scenario, const core::StudySpec& study,
                      const algorithms::Registry& registry, const Progress& progress,
                      unsigned threads, bool link_loads, const Executor* executor) {
  if (!study.stacks.empty()) {
    return run_stacks(scenario, study, study_prefix(scenario, study), registry, progress, threads,
                      link_loads, executor);
  }
  const std::unique_ptr<StudyPlan> plan = plan_study(scenario, study, registry, link_loads);
  run_plans({plan.get()}, registry, progress, threads, executor);
  return std::move(plan->out);
}

std::vector<StudyResult> run_studies(const core::Scenario& scenario,
                                     std::span<const core::StudySpec> studies,
                                     const algorithms::Registry& registry, const Progress& progress,
                                     unsigned threads, const Executor* executor) {
  std::vector<StudyResult> out(studies.size());
  std::vector<std::unique_ptr<StudyPlan>> plans;
  std::vector<StudyPlan*> together;
  std::vector<std::size_t> index; // the study of each plan
  for (std::size_t i = 0; i < studies.size(); ++i) {
    if (studies[i].stacks.empty()) {
      plans.push_back(plan_study(scenario, studies[i], registry, false));
      together.push_back(plans.back().get());
      index.push_back(i);
    }
  }
  run_plans(together, registry, progress, threads, executor);
  for (std::size_t k = 0; k < plans.size(); ++k) {
    out[index[k]] = std::move(plans[k]->out);
  }
  for (std::size_t i = 0; i < studies.size(); ++i) {
    if (!studies[i].stacks.empty()) {
      out[i] = run_study(scenario, studies[i], registry, progress, threads, false, executor);
    }
  }
  return out;
}

} // namespace collsim::analysis

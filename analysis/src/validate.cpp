#include "collsim/analysis/validate.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/analysis/osu_pt2pt.hpp"
#include "collsim/stacks/nccl_env.hpp"
#include "collsim/stacks/nccl_stack.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"
#include "wire.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <optional>

namespace collsim::analysis {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

/// The value below which `q` of the sorted values lie (nearest rank).
double quantile(std::vector<double> v, double q) {
  if (v.empty()) {
    return 0.0;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

ErrorStats stats(const std::vector<double>& errors) {
  std::vector<double> abs_errors;
  double slower = 0.0;
  double faster = 0.0;
  for (const double e : errors) {
    abs_errors.push_back(std::abs(e));
    slower = std::max(slower, -e);
    faster = std::max(faster, e);
  }
  return {errors.size(), quantile(abs_errors, 0.5), quantile(abs_errors, 0.9), slower, faster};
}

struct Candidate {
  const algorithms::AlgorithmInfo* algo = nullptr;
  algorithms::RawParams params;
};

/// The measuring library's own choice for the point, where collsim models that library (`nccl`:
/// NCCL's choice for an NCCL point, made once per point by the caller).
std::optional<LibraryChoice> library_default(const MeasuredPoint& p,
                                             const std::optional<NcclChoice>& nccl,
                                             const stacks::OmpiTuning& tuning,
                                             const algorithms::Registry& registry) {
  if (p.library == Library::mpi) {
    // Open MPI's rules stand for MPI logs that do not name another library (OSU prints none).
    for (const char* other :
         {"Intel", "MPICH", "MVAPICH", "Cray", "Spectrum", "coll/hcoll", "coll/ucc"}) {
      if (p.mpi_library.find(other) != std::string::npos) {
        return std::nullopt;
      }
    }
    OmpiCall call;
    call.collective = p.collective;
    call.ranks = p.ranks;
    call.bytes = p.bytes;
    if (p.element_bytes != 0) {
      call.element_bytes = p.element_bytes;
    }
    call.tuning = tuning;
    return ompi41_default(call, registry);
  }
  if (p.library == Library::nccl && nccl) {
    return nccl_library_choice(*nccl);
  }
  return std::nullopt;
}

/// The scenario's `mpi.env` with the Open MPI MCA parameters a log's run sets on top, as the
/// OMPI_MCA_ variables Open MPI reads them from (a log's setting wins), and what coll/tuned makes
/// of them; a bad value fails at its place in the log.
struct LogMpi {
  core::MpiSpec spec;
  stacks::OmpiTuning tuning;
};

LogMpi with_log_mca(const core::MpiSpec& scenario, const MeasuredPoint& p) {
  LogMpi out{scenario, {}};
  for (const auto& [name, value] : p.mca) {
    const std::string var = "OMPI_MCA_" + name;
    out.spec.env[var] = value;
    out.spec.env_pos[var] =
        p.mca_pos.contains(name) ? p.mca_pos.at(name) : core::SourcePos{p.file, 0, 0};
  }
  try {
    out.tuning = stacks::read_ompi_tuning(&out.spec);
  } catch (const core::ScenarioError& e) {
    if (e.pos().file != p.file) {
      throw; // the scenario's own value
    }
    std::string name = e.yaml_path();
    if (name.starts_with("mpi.env.OMPI_MCA_")) {
      name = name.substr(17);
    }
    throw core::LogParseError(e.pos(),
                              fmt::format("{} (set by the log's run): {}", name, e.message()));
  }
  return out;
}

/// The scenario's NCCL settings with a log's variables and NCCL release on top, and what NCCL's
/// model reads from them as "NCCL_ALGO=Ring, NCCL_PROTO=Simple, NCCL 2.19.3".
struct LogNccl {
  core::NcclSpec spec;
  std::string note;
};

LogNccl with_log_env(const core::NcclSpec& scenario, const MeasuredPoint& p) {
  LogNccl out{scenario, {}};
  core::NcclSpec only_log;
  for (const auto& [name, value] : p.nccl_env) {
    out.spec.env[name] = value;
    out.spec.env_pos[name] =
        p.nccl_env_pos.contains(name) ? p.nccl_env_pos.at(name) : core::SourcePos{p.file, 0, 0};
    only_log.env[name] = value;
  }
  try {
    (void)stacks::parse_nccl_env(out.spec);
  } catch (const core::ScenarioError& e) {
    std::string name = e.yaml_path();
    if (name.starts_with("nccl.env.")) {
      name = name.substr(9);
    }
    if (e.pos().file != p.file) {
      throw; // the scenario's own value
    }
    throw core::LogParseError(e.pos(),
                              fmt::format("{} (set by the log's run): {}", name, e.message()));
  }
  const std::vector<std::string> ignored = stacks::ignored_nccl_env(only_log);
  std::vector<std::string> read;
  for (const auto& [name, value] : only_log.env) {
    if (std::find(ignored.begin(), ignored.end(), name) == ignored.end()) {
      read.push_back(name + "=" + value);
    }
  }
  // The release that ran: its tuning model makes the choice (a version collsim cannot read, such
  // as a future major, keeps the scenario's).
  if (const auto code = algorithms::nccl::parse_release(p.nccl_version)) {
    out.spec.version = algorithms::nccl::release_name(*code);
    out.spec.version_pos = core::SourcePos{p.file, 0, 0};
    read.push_back("NCCL " + out.spec.version);
  }
  out.note = fmt::format("{}", fmt::join(read, ", "));
  return out;
}

} // namespace

ValidationSummary summarize(const std::vector<ValidationRow>& rows) {
  std::vector<double> all;
  std::vector<double> small;
  std::vector<double> large;
  for (const ValidationRow& r : rows) {
    const double e = r.error_pct;
    all.push_back(e);
    (r.measured.bytes.value < kMiB ? small : large).push_back(e);
  }
  return {stats(all), stats(small), stats(large)};
}

ValidationSummary summarize_library(const std::vector<ValidationRow>& rows) {
  std::vector<ValidationRow> own;
  for (const ValidationRow& r : rows) {
    if (r.library_estimate_us >= 0.0) {
      own.push_back(r);
      own.back().error_pct = r.library_error_pct;
    }
  }
  return summarize(own);
}

std::string_view operation_name(const MeasuredPoint& p) {
  switch (p.pt2pt) {
  case Pt2pt::latency: return "osu_latency";
  case Pt2pt::bw: return "osu_bw";
  case Pt2pt::bibw: return "osu_bibw";
  case Pt2pt::none: break;
  }
  return core::to_string(p.collective);
}

bool is_nccl_algorithm(const algorithms::AlgorithmInfo& algo) {
  return stacks::nccl_lowering_algo(algo).has_value();
}

namespace {

/// An OSU point-to-point point: its iteration under the point's stack (osu_pt2pt.hpp), or
/// nothing with `why`.
std::optional<ValidationRow> predict_pt2pt(const MeasuredPoint& p, const core::Topology& topo,
                                           const EngineChoice& engine, bool from_log_stack,
                                           std::string& why) {
  if (p.ranks != 2) {
    why = fmt::format("{} runs on 2 ranks, not {}", operation_name(p), p.ranks);
    return std::nullopt;
  }
  core::Seconds predicted;
  try {
    predicted = predict_osu(p, topo, engine);
  } catch (const core::UsageError& e) {
    why = e.what();
    return std::nullopt;
  }
  const algorithms::AlgorithmInfo algo = osu_algorithm(p.pt2pt);
  std::string chosen_by = fmt::format("OSU's loop: {}", algo.summary);
  if (p.pt2pt != Pt2pt::latency) {
    chosen_by += fmt::format(", window {}", p.window);
  }
  if (!engine.stack.empty()) {
    chosen_by += fmt::format(", stack {}{}", engine.stack, from_log_stack ? " from the log" : "");
  }
  ValidationRow row{p, std::string(algo.name), {}, std::move(chosen_by), predicted, 0.0};
  row.error_pct = 100.0 * (predicted.value - p.time.value) / p.time.value;
  return row;
}

} // namespace

ValidationResult validate(const core::Scenario& scenario, std::span<const MeasuredPoint> points,
                          const algorithms::Registry& registry, const ValidateOptions& options) {
  check_engine(options.engine.name);
  EngineChoice engine = options.engine;
  engine.nccl = scenario.nccl;
  engine.topology = scenario.topology;
  engine.stack = scenario.stack;
  engine.buffers = scenario.buffers;
  check_stack(scenario);
  const bool fastest = options.algorithm == "fastest";
  const bool automatic = options.algorithm == "auto" || fastest;
  // A named algorithm must exist for at least one measured collective (a typo fails at once).
  if (!automatic) {
    // (OSU's point-to-point points run their own loop whatever the algorithm.)
    const auto collective = std::find_if(points.begin(), points.end(), [](const MeasuredPoint& p) {
      return p.pt2pt == Pt2pt::none;
    });
    const bool known = std::any_of(points.begin(), points.end(), [&](const MeasuredPoint& p) {
      return p.pt2pt == Pt2pt::none &&
             registry.try_find(p.collective, options.algorithm) != nullptr;
    });
    if (!known && collective != points.end()) {
      (void)registry.find(collective->collective, options.algorithm); // throws with the names
    }
  }
  // One topology per rank count; a rank count the machine cannot hold skips its points.
  std::map<std::uint32_t, std::optional<core::Topology>> topologies;
  std::map<std::uint32_t, std::string> topology_error;
  for (const MeasuredPoint& p : points) {
    if (p.ranks == 0 || topologies.count(p.ranks) != 0) {
      continue;
    }
    try {
      topologies[p.ranks] = topologies::build(scenario.topology, p.ranks);
    } catch (const core::Error& e) {
      topologies[p.ranks] = std::nullopt;
      topology_error[p.ranks] = e.what();
    }
  }

  // The NCCL settings of each point: the scenario's, with the variables its log shows the run set
  // on top (one spec per distinct set; a bad value fails here, at its place in the log).
  using LogNcclKey = std::pair<std::map<std::string, std::string>, std::string>;
  std::map<LogNcclKey, LogNccl> log_nccl;
  const auto log_nccl_key = [](const MeasuredPoint& p) {
    return LogNcclKey{p.nccl_env, p.nccl_version};
  };
  for (const MeasuredPoint& p : points) {
    const bool from_log = !p.nccl_env.empty() || !p.nccl_version.empty();
    if (p.library == Library::nccl && from_log && !log_nccl.contains(log_nccl_key(p))) {
      log_nccl.emplace(log_nccl_key(p), with_log_env(scenario.nccl, p));
    }
  }
  // The MPI settings of each MPI point: the scenario's `mpi.env` with the MCA parameters its log
  // shows the run set on top (one per distinct set; a bad value fails here, at its place).
  std::map<std::map<std::string, std::string>, LogMpi> log_mpi;
  for (const MeasuredPoint& p : points) {
    if (p.library == Library::mpi && !log_mpi.contains(p.mca)) {
      log_mpi.emplace(p.mca, with_log_mca(scenario.mpi, p));
    }
  }
  // The stack of each point: the scenario's (or --stack) where one is named, else the one its log
  // shows (MeasuredPoint::stack), else none. One scenario and engine per stack.
  struct Under {
    core::Scenario scenario;
    EngineChoice engine;
    const stacks::Stack* stack = nullptr;
  };
  // The stack a point runs under: the scenario's (--stack) where one is named, else its log's.
  const auto stack_from_log = [&scenario](const MeasuredPoint& p) {
    return scenario.stack.empty() && !p.stack.empty();
  };
  const auto stack_of = [&](const MeasuredPoint& p) {
    return stack_from_log(p) ? p.stack : scenario.stack;
  };
  // One per stack and buffers: a log of host buffers and one of device buffers under the same
  // stack are two machines' worth of paths.
  using UnderKey = std::pair<std::string, std::string>;
  std::map<UnderKey, Under> under;
  const auto make_under = [&](const std::string& name, const std::string& buffers) {
    Under u{scenario, engine, nullptr};
    u.scenario.stack = name;
    u.engine.stack = name;
    if (u.scenario.buffers.empty() && !buffers.empty()) {
      u.scenario.buffers = buffers;
      u.engine.buffers = buffers;
    }
    u.stack = name.empty() ? nullptr : &stacks().find(name);
    return u;
  };
  for (const MeasuredPoint& p : points) {
    const UnderKey key{stack_of(p), p.buffers};
    if (!under.contains(key)) {
      under.emplace(key, make_under(key.first, key.second));
    }
  }
  std::vector<std::optional<ValidationRow>> out(points.size());
  std::vector<std::string> why(points.size());
  SweepItems items;
  items.count = points.size();
  items.run = [&](std::size_t i, core::MeterRef meter) {
    const MeasuredPoint& p = points[i];
    if (p.ranks == 0) {
      why[i] = "the log does not say how many ranks ran";
      return;
    }
    if (p.time.value <= 0.0) {
      why[i] = "no measured time";
      return;
    }
    if (p.bytes.value == 0 && p.pt2pt == Pt2pt::none) {
      why[i] = "a 0-byte call moves no data (it times the call alone)";
      return;
    }
    const auto& topo = topologies.at(p.ranks);
    if (!topo) {
      why[i] = topology_error.at(p.ranks);
      return;
    }
    const bool from_log_stack = stack_from_log(p);
    const Under& u = under.at(UnderKey{stack_of(p), p.buffers});
    const stacks::Stack* stack = u.stack;
    if (p.pt2pt != Pt2pt::none) {
      out[i] = predict_pt2pt(p, *topo, u.engine, from_log_stack, why[i]);
      return;
    }
    // NCCL's own choice for an NCCL point: the library default `auto` runs and the estimate the
    // row reports beside collsim's.
    std::optional<NcclChoice> nccl;
    const LogNccl* from_log = nullptr;
    if (p.library == Library::nccl) {
      const auto it = log_nccl.find(log_nccl_key(p));
      from_log = it == log_nccl.end() ? nullptr : &it->second;
      nccl = nccl_default(p.collective, p.ranks, p.bytes,
                          nccl_inputs(scenario.topology, from_log ? from_log->spec : scenario.nccl,
                                      *topo, p.ranks));
    }
    std::vector<Candidate> candidates;
    std::string chosen_by = "named";
    // Under a named stack `auto` is that stack's library's choice (auto_choice), else the choice
    // of the library that measured the log.
    std::optional<LibraryChoice> library;
    if (automatic && !fastest) {
      const LogMpi* mpi = p.library == Library::mpi ? &log_mpi.at(p.mca) : nullptr;
      if (stack != nullptr) {
        // The log's MCA parameters steer Open MPI's choice under the stack as well.
        std::optional<core::Scenario> with_mca;
        if (mpi != nullptr && !p.mca.empty()) {
          with_mca = u.scenario;
          with_mca->mpi = mpi->spec;
        }
        library =
            auto_choice(with_mca ? *with_mca : u.scenario, *topo, p.collective, p.ranks, p.bytes,
                        registry, nullptr, p.element_bytes != 0 ? p.element_bytes : 4);
      } else {
        library =
            library_default(p, nccl, mpi != nullptr ? mpi->tuning : stacks::OmpiTuning{}, registry);
      }
    }
    if (library) {
      candidates.push_back({&registry.find(p.collective, library->algorithm), library->params});
      chosen_by = fmt::format("{}: {}", library->library, library->reason);
      if (from_log_stack) {
        chosen_by += fmt::format(", stack {} from the log", p.stack);
      }
      if (from_log != nullptr && !from_log->note.empty()) {
        chosen_by += fmt::format(", with {} from the log", from_log->note);
      }
    } else if (automatic) {
      for (const auto* a : registry.list(p.collective)) {
        const bool by_nccl = is_nccl_algorithm(*a);
        if (fastest || p.library == Library::unknown || by_nccl == (p.library == Library::nccl)) {
          candidates.push_back({a, {}});
        }
      }
      chosen_by = fastest || p.library == Library::unknown ? "fastest of all algorithms"
                  : p.library == Library::nccl             ? "fastest of NCCL's algorithms"
                                                           : "fastest of the MPI algorithms";
    } else if (const auto* a = registry.try_find(p.collective, options.algorithm)) {
      candidates.push_back({a, {}});
    } else {
      why[i] =
          fmt::format("no algorithm '{}' for {}", options.algorithm, core::to_string(p.collective));
      return;
    }
    std::optional<ValidationRow> best;
    std::string last_refusal;
    for (const Candidate& c : candidates) {
      algorithms::Request req;
      req.collective = p.collective;
      req.ranks = p.ranks;
      req.bytes = p.bytes;
      req.topology = &*topo;
      req.params = algorithms::resolve_params(*c.algo, c.params);
      req.meter = meter;
      if (std::string r = registry.refusal(*c.algo, req); !r.empty()) {
        last_refusal = fmt::format("{}: {}", c.algo->name, r);
        continue;
      }
      if (stack != nullptr && !stack->runs(*c.algo)) {
        last_refusal = stack->refusal(*c.algo);
        continue;
      }
      const core::ResultRow row = simulate(registry, *c.algo, *topo, u.engine, req);
      if (!best || row.time.value < best->predicted.value) {
        best = ValidationRow{p, c.algo->name, c.params, chosen_by, row.time, 0.0};
      }
    }
    if (!best) {
      why[i] = last_refusal.empty() ? "no algorithm can run this point" : last_refusal;
      return;
    }
    // One thread driving N GPUs (nccl-tests -g N) launches each GPU's kernel in turn for every
    // call, so back-to-back calls come no faster than N launches apart (NcclSpec::group_launch;
    // NVIDIA/nccl-tests#333: "CUDA latency overheads of single process jobs").
    if (p.library == Library::nccl && p.gpus_per_thread > 1) {
      const double host = p.gpus_per_thread * u.scenario.nccl.group_launch.value;
      if (host > best->predicted.value) {
        best->predicted = core::Seconds{host};
        best->chosen_by +=
            fmt::format(", host-bound: one thread launches {} GPUs' kernels", p.gpus_per_thread);
      }
    }
    best->error_pct = 100.0 * (best->predicted.value - p.time.value) / p.time.value;
    if (nccl && nccl->modelled && nccl->time_us > 0.0) {
      best->library_estimate_us = nccl->time_us;
      best->library_error_pct = 100.0 * (nccl->time_us * 1e-6 - p.time.value) / p.time.value;
    }
    out[i] = std::move(best);
  };
  // A row's measured point is the input's; what was predicted travels as bytes.
  items.save = [&](std::size_t i) {
    detail::WireWriter w;
    w.put(why[i]);
    w.put(out[i].has_value());
    if (out[i]) {
      const ValidationRow& r = *out[i];
      w.put(r.algorithm);
      w.put(r.params);
      w.put(r.chosen_by);
      w.put(r.predicted);
      w.put(r.error_pct);
      w.put(r.library_estimate_us);
      w.put(r.library_error_pct);
    }
    return w.take();
  };
  items.load = [&](std::size_t i, std::string_view bytes) {
    detail::WireReader in(bytes);
    in.get(why[i]);
    bool has = false;
    in.get(has);
    out[i].reset();
    if (has) {
      ValidationRow r;
      r.measured = points[i];
      in.get(r.algorithm);
      in.get(r.params);
      in.get(r.chosen_by);
      in.get(r.predicted);
      in.get(r.error_pct);
      in.get(r.library_estimate_us);
      in.get(r.library_error_pct);
      out[i] = std::move(r);
    }
    in.finish();
  };
  items.describe = [&](std::size_t i) {
    const MeasuredPoint& p = points[i];
    return fmt::format("{}:{} ({}, {} ranks, {} bytes)", p.file, p.line, operation_name(p), p.ranks,
                       p.bytes.value);
  };
  run_items(options.executor, options.threads, items);
  ValidationResult result;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (out[i]) {
      result.rows.push_back(std::move(*out[i]));
    } else {
      result.skipped.push_back(fmt::format("{}:{}: {}", points[i].file, points[i].line, why[i]));
    }
  }
  result.summary = summarize(result.rows);
  result.library = summarize_library(result.rows);
  return result;
}

} // namespace collsim::analysis

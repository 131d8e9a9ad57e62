// `collsim tune`'s sweep (tune.hpp). Each candidate (an algorithm with one segment size) runs as
// its own study through run_study, which parallelises over points; the winners per size are then
// merged into ranges, and Open MPI 4.1's fixed-rule choice is timed at every size to say where
// the library default is not the best and by how much.

#include "collsim/analysis/tune.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/imbalance.hpp"
#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/stacks/nccl_env.hpp"

#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"

#include "wire.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace collsim::analysis {
namespace {

using core::CollectiveKind;

constexpr std::string_view kSegment = "segment_size";
constexpr std::string_view kChains = "chains";     // chain bcast/reduce: Open MPI's chain fan-out
constexpr std::string_view kProtocol = "protocol"; // NCCL algorithms: simple, ll, ll128

const algorithms::ParamSpec* find_param(const algorithms::AlgorithmInfo& algo,
                                        std::string_view name) {
  const auto it = std::find_if(algo.params.begin(), algo.params.end(),
                               [&](const algorithms::ParamSpec& p) { return p.name == name; });
  return it == algo.params.end() ? nullptr : &*it;
}

/// Every parameter of `algo`: its defaults, overlaid by `raw`.
std::map<std::string, std::int64_t> full_params(const algorithms::AlgorithmInfo& algo,
                                                const algorithms::RawParams& raw) {
  std::map<std::string, std::int64_t> out;
  for (const auto& p : algo.params) {
    out[p.name] = p.default_value;
  }
  for (const auto& [name, value] : algorithms::resolve_params(algo, raw)) {
    out[name] = value;
  }
  return out;
}

double percent_slower(core::Seconds other, core::Seconds best) {
  return best.value > 0.0 ? (other.value / best.value - 1.0) * 100.0 : 0.0;
}

} // namespace

std::vector<core::TuneRange> merge_ranges(const std::vector<TunePoint>& points,
                                          const std::vector<core::TuneCandidate>& candidates) {
  std::map<std::uint64_t, std::vector<const TunePoint*>> by_size;
  for (const auto& p : points) {
    if (p.candidate >= candidates.size()) {
      throw core::InternalError("merge_ranges: a point names a candidate that does not exist");
    }
    by_size[p.bytes.value].push_back(&p);
  }
  std::vector<core::TuneRange> out;
  std::size_t current = candidates.size(); // winner of out.back()
  for (const auto& [bytes, pts] : by_size) {
    const TunePoint* best = pts.front();
    for (const TunePoint* p : pts) {
      if (p->time < best->time || (p->time == best->time && p->candidate < best->candidate)) {
        best = p;
      }
    }
    const TunePoint* second = nullptr;
    for (const TunePoint* p : pts) {
      if (p->candidate != best->candidate &&
          (second == nullptr || p->time < second->time ||
           (p->time == second->time && p->candidate < second->candidate))) {
        second = p;
      }
    }
    const double margin = second != nullptr ? percent_slower(second->time, best->time) : 0.0;
    if (!out.empty() && current == best->candidate) {
      core::TuneRange& r = out.back();
      r.to = core::Bytes{bytes};
      if (second != nullptr && (!r.runner_up || margin < r.margin_pct)) {
        r.margin_pct = margin;
        r.runner_up = candidates[second->candidate];
      }
      continue;
    }
    core::TuneRange r;
    r.from = core::Bytes{bytes};
    r.to = core::Bytes{bytes};
    r.winner = candidates[best->candidate];
    if (second != nullptr) {
      r.runner_up = candidates[second->candidate];
      r.margin_pct = margin;
    }
    out.push_back(std::move(r));
    current = best->candidate;
  }
  return out;
}

CandidateFilter library_candidates(std::string_view library, core::OmpiVersion ompi,
                                   core::MpichVersion mpich) {
  CandidateFilter filter;
  if (library == "ompi") {
    filter.ompi = ompi;
  } else if (library != "all") {
    filter.library = std::string(library);
    filter.mpich = mpich;
  }
  return filter;
}

std::vector<core::TuneCandidate> tune_candidates(const algorithms::Registry& registry,
                                                 CollectiveKind collective,
                                                 const TuneOptions& options) {
  std::vector<const algorithms::AlgorithmInfo*> algos;
  if (options.candidates.algorithms.empty()) {
    algos = registry.list(collective);
  } else {
    for (const std::string& name : options.candidates.algorithms) {
      const algorithms::AlgorithmInfo* a = &registry.find(collective, name);
      if (std::find(algos.begin(), algos.end(), a) == algos.end()) {
        algos.push_back(a);
      }
    }
  }
  const core::OmpiVersion id_version = options.candidates.ompi.value_or(core::OmpiVersion::v4_1);
  const bool varying = options.counts.kind != core::CountsSpec::Kind::none;
  if (varying && options.candidates.algorithms.empty()) {
    // A v-variant is tuned among the algorithms that take counts (AlgorithmInfo::counts).
    std::erase_if(algos, [](const algorithms::AlgorithmInfo* a) { return !a->counts; });
  }
  std::vector<core::TuneCandidate> out;
  for (const auto* a : algos) {
    const std::optional<int> id = ompi_algorithm_id(*a, id_version);
    if (options.candidates.ompi && !id) {
      continue; // Open MPI has no such algorithm: a rules file cannot name it
    }
    core::TuneCandidate named;
    for (const std::string& alias : a->aliases) {
      constexpr std::string_view kMpich = "mpich:";
      if (options.candidates.library == "mpich" && alias.rfind(kMpich, 0) == 0 &&
          !mpich_has_algorithm(options.candidates.mpich, collective,
                               std::string_view(alias).substr(kMpich.size()))) {
        continue; // a name this MPICH release does not know: it would abort at MPI_Init
      }
      named.aliases.push_back(alias);
    }
    if (options.candidates.library && !core::library_name(named, *options.candidates.library)) {
      continue; // the library has no such algorithm: its tuning file cannot name it
    }
    // NCCL's tuner picks a protocol with the algorithm, so each protocol is a candidate.
    const algorithms::ParamSpec* protocol = find_param(*a, kProtocol);
    std::vector<std::optional<std::string>> protocols{std::nullopt};
    if (protocol != nullptr && options.candidates.library == "nccl") {
      protocols.assign(protocol->choices.begin(), protocol->choices.end());
    }
    const algorithms::ParamSpec* chains = find_param(*a, kChains);
    const algorithms::ParamSpec* segment = find_param(*a, kSegment);
    std::vector<std::optional<std::int64_t>> segments{std::nullopt};
    if (segment != nullptr && !options.segment_sizes.empty()) {
      segments.clear();
      for (core::Bytes s : options.segment_sizes) {
        const auto v = static_cast<std::int64_t>(s.value);
        if (v >= segment->min && v <= segment->max) {
          segments.emplace_back(v);
        }
      }
    }
    for (const auto& proto : protocols) {
      for (const auto& s : segments) {
        core::TuneCandidate c;
        c.algorithm = a->name;
        c.aliases = named.aliases;
        if (proto) {
          c.params[std::string(kProtocol)] = *proto;
        }
        // coll/tuned numbers the v-collectives' algorithms on their own (allgatherv's ring is
        // 3, allgather's 4): an allgather id would name the wrong one.
        c.ompi_id = varying ? std::nullopt : id;
        c.fanout = chains != nullptr ? chains->default_value : 0;
        if (segment != nullptr) {
          c.segment_size = s.value_or(segment->default_value);
        }
        if (s) {
          c.params[std::string(kSegment)] = std::to_string(*s);
        }
        out.push_back(std::move(c));
      }
    }
  }
  if (out.empty()) {
    throw core::UsageError(fmt::format(
        "no {} algorithm is left to tune{}", core::to_string(collective),
        options.candidates.ompi ? fmt::format(" among those Open MPI {} implements",
                                              to_string(*options.candidates.ompi))
        : options.candidates.library
            ? fmt::format(" among those {} implements", library_title(*options.candidates.library))
            : std::string{}));
  }
  return out;
}

core::TuneTable tune(const core::Scenario& scenario, const TuneOptions& options,
                     const algorithms::Registry& registry) {
  check_engine(options.engine);
  if (options.ranks.empty() || options.sizes.empty() || options.collectives.empty()) {
    throw core::UsageError("tune needs at least one collective, one rank count and one size");
  }
  const bool varying = options.counts.kind != core::CountsSpec::Kind::none;
  if (varying) {
    using K = core::CountsSpec::Kind;
    if (options.counts.kind == K::cart || options.counts.kind == K::graph ||
        options.counts.kind == K::sparse) {
      throw core::UsageError(fmt::format(
          "tune --counts {}: a neighbourhood collective has no algorithm choice in an MPI "
          "library to tune; compare its algorithms with `collsim sim`",
          options.counts.text));
    }
    for (CollectiveKind c : options.collectives) {
      if (!core::has_counts_variant(c)) {
        throw core::UsageError(
            fmt::format("tune --counts: {} has no v-variant", core::to_string(c)));
      }
    }
  }
  core::TuneTable table;
  table.scenario = scenario.name;
  table.counts = varying ? options.counts.text : std::string{};
  table.skew = options.skew.kind != core::SkewSpec::Kind::none ? options.skew.text : std::string{};
  table.stack = scenario.stack;
  table.engine = options.engine;
  table.ompi = options.candidates.ompi;
  table.library = options.candidates.library;
  table.sizes = options.sizes;
  std::sort(table.sizes.begin(), table.sizes.end());
  table.sizes.erase(std::unique(table.sizes.begin(), table.sizes.end()), table.sizes.end());
  std::vector<std::uint32_t> ranks = options.ranks;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());

  // Everything is resolved before the first point runs, so a typo costs nothing.
  std::vector<std::vector<core::TuneCandidate>> candidates;
  std::size_t total = 0;
  for (CollectiveKind c : options.collectives) {
    candidates.push_back(tune_candidates(registry, c, options));
    total += (candidates.back().size() + 1) * ranks.size() * table.sizes.size();
  }
  std::size_t done = 0;
  const auto report = [&](std::size_t offset) -> Progress {
    if (!options.progress) {
      return {};
    }
    return [&options, offset, total](std::size_t d, std::size_t /*study_total*/) {
      options.progress(std::min(offset + d, total), total);
    };
  };

  std::map<std::uint32_t, core::Topology> topologies;
  for (std::uint32_t p : ranks) {
    topologies.emplace(p, topologies::build(scenario.topology, p));
  }
  const EngineChoice engine(options.engine, scenario);
  check_stack(scenario);
  const stacks::Stack* stack = scenario.stack.empty() ? nullptr : &stacks().find(scenario.stack);
  const stacks::OmpiTuning tuning = stacks::read_ompi_tuning(&scenario.mpi);
  // NCCL's candidates are compared with NCCL's own choice, and only where NCCL can run them.
  const bool nccl = options.candidates.library == "nccl";
  table.default_model =
      nccl ? "NCCL " + algorithms::nccl::release_name(stacks::parse_nccl_release(scenario.nccl))
           : "Open MPI 4.1";
  std::map<std::uint32_t, NcclModelInputs> nccl_in;
  if (nccl) {
    for (std::uint32_t p : ranks) {
      nccl_in.emplace(p, nccl_inputs(scenario.topology, scenario.nccl, topologies.at(p), p));
    }
  }

  for (std::size_t ci = 0; ci < options.collectives.size(); ++ci) {
    const CollectiveKind collective = options.collectives[ci];
    const auto& cands = candidates[ci];
    // (ranks) -> points; (ranks, bytes, candidate) -> time for the defaults' look-up.
    std::map<std::uint32_t, std::vector<TunePoint>> points;
    std::map<std::tuple<std::uint32_t, std::uint64_t, std::size_t>, core::Seconds> times;
    // Every candidate's study first, then all of them as one sweep (no candidate waits for the
    // previous one's slowest point; in an MPI job every process stays busy).
    std::vector<core::StudySpec> studies;
    std::vector<std::size_t> study_of(cands.size(), cands.size()); // cands.size(): refused
    for (std::size_t k = 0; k < cands.size(); ++k) {
      if (const auto* a = registry.try_find(collective, cands[k].algorithm);
          stack != nullptr && a != nullptr && !stack->runs(*a)) {
        continue;
      }
      core::StudySpec study;
      study.collective = collective;
      study.algorithms = {cands[k].algorithm};
      study.ranks = ranks;
      study.sizes = table.sizes;
      study.engine = options.engine;
      study.root = options.root;
      study.params = cands[k].params;
      study.counts = options.counts;
      study.skew = options.skew;
      study_of[k] = studies.size();
      studies.push_back(std::move(study));
    }
    const std::vector<StudyResult> results =
        run_studies(scenario, studies, registry, report(done), options.threads, options.executor);
    for (std::size_t k = 0; k < cands.size(); ++k) {
      if (study_of[k] == cands.size()) {
        const auto* a = registry.try_find(collective, cands[k].algorithm);
        table.skipped.push_back(fmt::format("{}: {}", core::label(cands[k]), stack->refusal(*a)));
        continue;
      }
      const StudyResult& r = results[study_of[k]];
      done += ranks.size() * table.sizes.size();
      for (const core::ResultRow& row : r.rows) {
        if (nccl && !nccl_can_run(cands[k].algorithm, nccl_in.at(row.ranks))) {
          continue;
        }
        points[row.ranks].push_back({row.bytes, k, row.time});
        times[{row.ranks, row.bytes.value, k}] = row.time;
      }
      // run_study says "NAME at P ranks, N bytes: why" per point; one line per rank count and
      // reason is what people can read.
      std::vector<std::pair<std::string, std::size_t>> condensed;
      for (const std::string& s : r.skipped) {
        const auto comma = s.find(", ");
        const auto colon = s.find(" bytes: ");
        const std::string key =
            comma == std::string::npos || colon == std::string::npos
                ? s
                : fmt::format("{} at {}: {}", core::label(cands[k]),
                              s.substr(s.find(" at ") + 4, comma - s.find(" at ") - 4),
                              s.substr(colon + 8));
        const auto it = std::find_if(condensed.begin(), condensed.end(),
                                     [&](const auto& e) { return e.first == key; });
        if (it == condensed.end()) {
          condensed.emplace_back(key, 1);
        } else {
          ++it->second;
        }
      }
      for (std::uint32_t p : ranks) {
        if (nccl && !nccl_can_run(cands[k].algorithm, nccl_in.at(p))) {
          table.skipped.push_back(fmt::format("{} at {}: NCCL cannot run it on this machine",
                                              core::label(cands[k]), p));
        }
      }
      for (const auto& [key, n] : condensed) {
        table.skipped.push_back(fmt::format("{} ({} of {} sizes)", key, n, table.sizes.size()));
      }
    }

    // The library's own choice per size is timed where no candidate is it. Two passes over the
    // ranges: the first collects those points and runs them as one sweep (the executor's), the
    // second reads their times.
    using ExtraKey =
        std::tuple<std::uint32_t, std::uint64_t, std::string, std::map<std::string, std::int64_t>>;
    struct Extra {
      algorithms::Request req;
      const algorithms::AlgorithmInfo* algo = nullptr;
      core::Seconds time;
    };
    std::map<ExtraKey, std::size_t> extra_at;
    std::vector<Extra> extras;
    const auto blocks = [&](bool collect) {
      for (std::uint32_t p : ranks) {
        core::TuneBlock block;
        block.collective = collective;
        block.ranks = p;
        block.ranges = merge_ranges(points[p], cands);
        // Open MPI 4.1's fixed-rule choice per size: a candidate's time when it is one (same
        // algorithm, same parameters), else timed here.
        for (core::TuneRange& range : block.ranges) {
          for (core::Bytes s : table.sizes) {
            if (s < range.from || range.to < s) {
              continue;
            }
            const std::vector<std::uint64_t> counts =
                make_counts(options.counts, collective, p, s.value);
            OmpiCall call;
            call.collective = collective;
            call.ranks = p;
            call.bytes =
                counts.empty() ? s : core::Bytes{core::counts_bytes(collective, p, counts)};
            call.varying = varying;
            call.tuning = tuning;
            // NCCL has no allgatherv or MPI_Reduce_scatter: no default there.
            const bool nccl_lacks = varying && !nccl_v_refusal(collective).empty();
            const std::optional<LibraryChoice> choice =
                nccl ? (nccl_lacks ? std::nullopt
                                   : nccl_library_choice(collective, p, call.bytes, nccl_in.at(p)))
                     : ompi41_default(call, registry);
            if (!choice) {
              continue;
            }
            if (std::find(range.library_default.begin(), range.library_default.end(),
                          choice->library_name) == range.library_default.end()) {
              range.library_default.push_back(choice->library_name);
            }
            const algorithms::AlgorithmInfo& algo = registry.find(collective, choice->algorithm);
            const auto wanted = full_params(algo, choice->params);
            std::optional<core::Seconds> t;
            for (std::size_t k = 0; k < cands.size() && !t; ++k) {
              if (cands[k].algorithm == algo.name && full_params(algo, cands[k].params) == wanted) {
                if (const auto it = times.find({p, s.value, k}); it != times.end()) {
                  t = it->second;
                }
              }
            }
            if (!t) {
              algorithms::Request req;
              req.collective = collective;
              req.ranks = p;
              req.bytes = call.bytes;
              req.counts = counts;
              req.arrivals = make_arrivals(options.skew, p);
              req.root = options.root;
              req.params = wanted;
              req.topology = &topologies.at(p);
              if (!registry.refusal(algo, req).empty() ||
                  (stack != nullptr && !stack->runs(algo)) ||
                  (options.engine == "analytic" && !registry.cost(algo, req))) {
                continue;
              }
              const ExtraKey key{p, call.bytes.value, algo.name, wanted};
              if (collect) {
                if (extra_at.emplace(key, extras.size()).second) {
                  extras.push_back({req, &algo, {}});
                }
                continue;
              }
              t = extras.at(extra_at.at(key)).time;
            }
            if (collect) {
              continue;
            }
            const auto win = std::find_if(cands.begin(), cands.end(),
                                          [&](const auto& c) { return c == range.winner; });
            const auto wt = times.find({p, s.value, static_cast<std::size_t>(win - cands.begin())});
            if (wt != times.end()) {
              range.regret_pct = std::max(range.regret_pct, percent_slower(*t, wt->second));
            }
          }
        }
        if (collect) {
          continue;
        }
        table.blocks.push_back(std::move(block));
        done += table.sizes.size();
        if (options.progress) {
          options.progress(std::min(done, total), total);
        }
      }
    };
    blocks(true);
    SweepItems items;
    items.count = extras.size();
    items.run = [&](std::size_t i, core::MeterRef meter) {
      Extra& e = extras[i];
      algorithms::Request req = e.req;
      req.meter = meter;
      e.time = simulate(registry, *e.algo, *req.topology, engine, req).time;
    };
    items.save = [&](std::size_t i) {
      detail::WireWriter w;
      w.put(extras[i].time);
      return w.take();
    };
    items.load = [&](std::size_t i, std::string_view bytes) {
      detail::WireReader in(bytes);
      in.get(extras[i].time);
      in.finish();
    };
    items.describe = [&](std::size_t i) {
      const Extra& e = extras[i];
      return fmt::format("the library's choice {} at {} ranks, {} bytes", e.algo->name, e.req.ranks,
                         e.req.bytes.value);
    };
    run_items(options.executor, options.threads, items);
    blocks(false);
  }
  return table;
}

} // namespace collsim::analysis

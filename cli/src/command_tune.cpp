// `collsim tune`: sweeps algorithms over sizes and rank counts, merges the winners into size
// ranges and writes them as a table, CSV, JSON or a library's tuning file: Open MPI coll/tuned
// rules, MPICH selection JSON, SMPI settings, NCCL tuner CSV, UCC TUNE (docs/tuning.md).

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/analysis/tune.hpp"
#include "collsim/distributed/session.hpp"
#include "collsim/io/imported_algorithms.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/tuning_formats.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <unistd.h>

namespace collsim::cli {
namespace {

struct TuneArgs {
  std::string scenario;
  StackOptions stack;
  std::vector<std::string> collectives{"allreduce"};
  std::vector<std::string> algorithms;
  std::string ranks = "8";
  std::string sizes = "8B:1GiB:x2";
  std::string format = "table";
  std::string output;
  std::string ompi_version = "4.1";
  std::string mpich_version = "latest";
  std::string candidates; ///< "all" or a library; empty: the format's library, else all
  std::string segment_sizes = "0,8KiB,64KiB";
  std::string engine = "loggp";
  std::uint32_t root = 0;
  unsigned threads = 0;
  std::string max_memory;
  std::string counts;
  std::string skew;
};

void run_tune(const TuneArgs& a) {
  // Every argument is checked before the sweep starts.
  const io::TuningFormat format = io::tuning_format_from_name(a.format);
  const std::string library(io::tuning_format_library(format));
  const core::OmpiVersion version = analysis::ompi_version_from_name(a.ompi_version);
  const core::MpichVersion mpich = analysis::mpich_version_from_name(a.mpich_version);
  const std::string candidates = a.candidates.empty() ? library : a.candidates;
  const std::vector<std::string> sets{"all", "ompi", "mpich", "smpi", "nccl", "ucc"};
  if (std::find(sets.begin(), sets.end(), candidates) == sets.end()) {
    throw core::UnknownNameError("candidate set", candidates, sets);
  }
  if (library != "all" && candidates != library) {
    throw core::UsageError(fmt::format("--format {} can only name {}'s algorithms: drop "
                                       "--candidates {}",
                                       a.format, library, candidates));
  }
  analysis::TuneOptions options;
  options.collectives.clear();
  for (const std::string& name : a.collectives) {
    // MPI's v-names (alltoallv, ...) tune the v-variant; --counts applies to every collective.
    const CollectiveOptions named = parse_collective_options(name, a.counts, a.skew);
    const core::CollectiveKind c = named.kind;
    if (named.counts.kind != core::CountsSpec::Kind::none) {
      if (options.counts.kind != core::CountsSpec::Kind::none &&
          !(options.counts == named.counts)) {
        throw core::UsageError(fmt::format(
            "--collective {}: tune one kind of call at a time (all v-variants with the same "
            "--counts, or all uniform)",
            fmt::join(a.collectives, ",")));
      }
      options.counts = named.counts;
    }
    options.skew = named.skew;
    if (std::find(options.collectives.begin(), options.collectives.end(), c) ==
        options.collectives.end()) {
      options.collectives.push_back(c);
    }
  }
  if (options.counts.kind != core::CountsSpec::Kind::none && format != io::TuningFormat::table &&
      format != io::TuningFormat::csv && format != io::TuningFormat::json) {
    throw core::UsageError(fmt::format(
        "--format {}: a library's tuning file keys its rules on the message size alone, not on "
        "a distribution of counts; write table, csv or json",
        a.format));
  }
  options.ranks = parse_ranks(a.ranks, "--ranks");
  options.sizes = parse_sizes(a.sizes, "--sizes");
  options.segment_sizes = a.segment_sizes == "none"
                              ? std::vector<core::Bytes>{}
                              : parse_sizes(a.segment_sizes, "--segment-sizes");
  analysis::check_engine(a.engine);
  options.engine = a.engine;
  options.root = a.root;
  options.threads = a.threads;
  const std::unique_ptr<analysis::Executor> executor =
      distributed::executor(a.threads, parse_memory_option(a.max_memory));
  options.executor = executor.get();
  options.candidates = analysis::library_candidates(candidates, version, mpich);
  options.candidates.algorithms = a.algorithms;
  for (auto p : options.ranks) {
    if (options.root >= p) {
      throw core::UsageError(fmt::format("--root {} does not exist with {} ranks", a.root, p));
    }
  }
  options.progress = terminal_progress("tune");

  core::Scenario scenario =
      io::load_scenario(a.scenario.empty() ? default_scenario_path() : a.scenario);
  apply_stack_options(a.stack, scenario);
  algorithms::Registry registry = algorithms::make_default_registry();
  io::add_file_algorithms(registry, scenario);
  for (const core::CollectiveKind c : options.collectives) {
    io::add_file_algorithms(registry, c, a.algorithms);
  }
  const core::TuneTable table = analysis::tune(scenario, options, registry);

  const std::string text = io::format_tuning(table, format, version, mpich);
  emit(text, a.output);
  // A file was written in a machine format: show people the ranges on their terminal too.
  const bool to_file = !a.output.empty() && a.output != "-";
  if (to_file && format != io::TuningFormat::table && isatty(STDOUT_FILENO) != 0) {
    emit(io::format_tuning_table(table), "");
  }
}

} // namespace

void add_tune(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune", "Find the fastest algorithm per size range and write a tuning file (Open MPI "
              "rules, MPICH JSON, SMPI settings, NCCL tuner CSV, UCC TUNE, CSV, JSON)");
  auto a = std::make_shared<TuneArgs>();
  cmd->add_option("--scenario", a->scenario,
                  "Scenario whose topology to use (default: scenarios/default.yaml)");
  cmd->add_option("--collective", a->collectives, "Collectives, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--algorithms", a->algorithms,
                  "Only these algorithms (names or aliases, comma-separated; default: all)")
      ->delimiter(',');
  cmd->add_option("--ranks", a->ranks, "Rank counts: 16, 8,16,64, 1..64 or 2..1024:x2")
      ->capture_default_str();
  cmd->add_option("--sizes", a->sizes,
                  "Message sizes S (nccl-tests' convention): MIN:MAX:xF, MIN:MAX:+STEP or a "
                  "comma list")
      ->capture_default_str();
  cmd->add_option("--format", a->format,
                  "Output format: table, csv, json, ompi-rules, mpich-json, smpi-cfg, "
                  "nccl-tuner or ucc-tune")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  cmd->add_option("--ompi-version", a->ompi_version,
                  "Open MPI series of the rules file and its algorithm ids: 4.1 or 5.0")
      ->capture_default_str();
  cmd->add_option("--mpich-version", a->mpich_version,
                  "MPICH release whose algorithm names mpich-json may use: 4.0 (Debian 12) or "
                  "latest")
      ->capture_default_str();
  cmd->add_option("--candidates", a->candidates,
                  "Algorithms to choose from: all, or those one library implements: ompi, "
                  "mpich, smpi, nccl, ucc (the default for that library's format)");
  cmd->add_option("--segment-sizes", a->segment_sizes,
                  "Segment sizes tried for algorithms that segment (a comma list, or none)")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine, "Engine: loggp, simgrid or analytic")
      ->capture_default_str();
  cmd->add_option("--root", a->root, "Root rank of rooted collectives")->capture_default_str();
  cmd->add_option("--counts", a->counts,
                  "Per-rank counts of the v-variants (alltoallv, allgatherv, ...), scaled to each "
                  "size: zipf:S, normal:CV, one:R, file:PATH, moe:PATH (docs/imbalance.md; "
                  "table, csv and json only)");
  cmd->add_option("--skew", a->skew,
                  "When the ranks arrive: late:T[@R], late:T,k=K, uniform:T, normal:T, file:PATH "
                  "(docs/imbalance.md)");
  cmd->add_option(
         "--threads", a->threads,
         "Worker threads for the sweep (0: all cores; under mpirun or srun: 1 per process)")
      ->capture_default_str();
  add_memory_option(*cmd, a->max_memory);
  add_stack_options(*cmd, a->stack);
  cmd->callback([a] { run_tune(*a); });
}

} // namespace collsim::cli

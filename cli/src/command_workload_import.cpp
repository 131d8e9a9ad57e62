// `collsim workload import`: a workload from what a run recorded (NCCL_DEBUG=INFO output),
// docs/workload-format.md, "Importing a workload".

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/io/workload_import.hpp"
#include "collsim/io/workload_loader.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace collsim::cli {

void add_workload_import(CLI::App& workload) {
  struct Args {
    std::string nccl_debug;
    std::string kineto;
    std::string process;
    std::uint32_t steps = 0;
    std::string name;
    std::string output;
  };
  auto a = std::make_shared<Args>();
  auto* cmd =
      workload.add_subcommand("import", "Write a workload from NCCL_DEBUG=INFO output or a PyTorch "
                                        "profiler trace (one phase per distinct collective call)");
  auto* nccl = cmd->add_option("--nccl-debug", a->nccl_debug,
                               "Output of a run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL");
  auto* kineto = cmd->add_option(
      "--kineto", a->kineto,
      "A PyTorch profiler trace (Chrome trace JSON, .json or .json.gz) of one rank");
  nccl->excludes(kineto);
  kineto->excludes(nccl);
  cmd->add_option("--process", a->process,
                  "Take the calls of this process, host:pid (default: the first in the log)");
  cmd->add_option(
         "--steps", a->steps,
         "The log covers this many steps (calls per step = calls / steps; a trace: default its "
         "ProfilerStep count)")
      ->check(CLI::Range(1U, 16777216U));
  cmd->add_option("--name", a->name,
                  "The workload's name (default: the output file's stem, else imported)");
  cmd->add_option("-o,--output", a->output,
                  "Write the workload to this file instead of standard output");
  cmd->callback([a] {
    if (a->nccl_debug.empty() && a->kineto.empty()) {
      throw core::UsageError("workload import: give --nccl-debug LOG or --kineto TRACE");
    }
    std::string name = a->name;
    if (name.empty() && !a->output.empty()) {
      const std::string stem = a->output.substr(a->output.find_last_of('/') + 1);
      name = stem.substr(0, stem.find('.'));
    }
    if (!a->kineto.empty()) {
      io::KinetoImport k;
      k.steps = a->steps;
      k.name = name.empty() ? k.name : name;
      k.command = "collsim workload import --kineto " + a->kineto +
                  (a->steps > 0 ? fmt::format(" --steps {}", a->steps) : "");
      const io::KinetoSummary s = io::import_kineto_trace(a->kineto, k);
      (void)io::parse_workload(s.yaml, a->output.empty() ? "imported workload" : a->output);
      emit(s.yaml, a->output);
      if (!a->output.empty()) {
        std::cerr << fmt::format("{}: rank {} of {}, {} step(s) -> {} phases\n", a->kineto, s.rank,
                                 s.world, s.steps, s.calls.size());
      }
      return;
    }
    const std::string text = read_input_file(a->nccl_debug);
    io::NcclDebugImport options;
    options.process = a->process;
    options.steps = a->steps == 0 ? 1 : a->steps;
    if (!name.empty()) {
      options.name = name;
    }
    options.command = "collsim workload import --nccl-debug " + a->nccl_debug;
    if (!a->process.empty()) {
      options.command += " --process " + a->process;
    }
    if (options.steps > 1) {
      options.command += fmt::format(" --steps {}", options.steps);
    }
    const io::NcclDebugSummary s = io::import_nccl_debug(text, a->nccl_debug, options);
    (void)io::parse_workload(s.yaml, a->output.empty() ? "imported workload"
                                                       : a->output); // a bug here is ours
    emit(s.yaml, a->output);
    if (!a->output.empty()) {
      std::cerr << fmt::format(
          "{}: {} collective lines of process {} -> {} phases{}\n", a->nccl_debug, s.lines,
          s.process, s.calls.size(),
          s.others.empty() ? "" : fmt::format(" ({} other processes not used)", s.others.size()));
    }
  });
}

} // namespace collsim::cli

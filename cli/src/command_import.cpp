// `collsim import`: a schedule written elsewhere into collsim's schedule text (issue 22,
// docs/interchange.md). GOAL (LogGOPSim's text, io/goal.hpp) today; MSCCL XML is still to come.

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/goal.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

namespace collsim::cli {
namespace {

double seconds_per_unit(const std::string& unit) {
  if (unit == "ns") {
    return 1e-9;
  }
  if (unit == "us") {
    return 1e-6;
  }
  if (unit == "ps") {
    return 1e-12;
  }
  throw core::UnknownNameError("time unit", unit, {"ns", "us", "ps"});
}

} // namespace

void add_import(CLI::App& app) {
  struct Args {
    std::string file;
    std::string collective = "allreduce";
    std::string bytes = "0";
    std::string time_unit = "ns";
    std::string output;
    bool check = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "import", "Read a schedule written elsewhere (LogGOPSim GOAL, .goal) and print it as "
                "collsim's schedule text");
  cmd->add_option("file", a->file, "The schedule file (.goal)")->required();
  cmd->add_option("--collective", a->collective,
                  "What a GOAL file without collsim's comments computes (it does not say)")
      ->capture_default_str();
  cmd->add_option("--bytes", a->bytes, "Its message size S, for the header (informational)")
      ->capture_default_str();
  cmd->add_option("--time-unit", a->time_unit, "The unit of GOAL's calc times: ns, us or ps")
      ->capture_default_str();
  cmd->add_flag("--check", a->check,
                "Validate: matching and no deadlock, and the collective's result where the file "
                "carries data (collsim's own GOAL); fail if wrong");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  cmd->callback([a] {
    const std::string ext = std::filesystem::path(a->file).extension().string();
    if (ext == ".xml") {
      throw core::UsageError(fmt::format("{}: MSCCL XML import is not built yet (issue 22); "
                                         "collsim imports LogGOPSim GOAL (.goal)",
                                         a->file));
    }
    if (ext != ".goal") {
      throw core::UsageError(
          fmt::format("{}: unknown schedule format '{}': collsim imports LogGOPSim GOAL (.goal)",
                      a->file, ext));
    }
    io::GoalImportOptions options;
    options.collective = core::collective_from_name(a->collective);
    options.bytes = parse_size(a->bytes, "--bytes");
    options.seconds_per_unit = seconds_per_unit(a->time_unit);
    const io::GoalImport imported = io::read_goal(read_input_file(a->file), a->file, options);
    const core::Schedule& s = imported.schedule;
    std::string checked;
    if (a->check) {
      const core::VerifyReport report =
          imported.with_data ? core::check_semantics(s) : core::validate(s);
      if (!report.ok()) {
        throw CommandFailed(
            fmt::format("{}: the schedule is wrong:\n{}", a->file, report.summary()));
      }
      checked = imported.with_data ? "; checked: matched, no deadlock, the collective's result"
                                   : "; checked: matched, no deadlock (GOAL carries no data)";
    }
    std::uint64_t messages = 0;
    for (core::OpId id = 0; id < s.op_count(); ++id) {
      messages += s.kind(id) == core::OpKind::send ? 1 : 0;
    }
    std::cerr << fmt::format("collsim: imported {}: {} ranks, {} operations, {} messages{}\n",
                             a->file, s.participants(), s.op_count(), messages, checked);
    emit(core::print_schedule(s), a->output);
  });
}

} // namespace collsim::cli

// `collsim import`: a schedule written elsewhere into collsim's schedule text (issue 22,
// docs/interchange.md): LogGOPSim's GOAL (io/goal.hpp) and MSCCL XML algorithms (io/msccl.hpp).

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/goal.hpp"
#include "collsim/io/msccl.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

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

std::uint64_t message_count(const core::Schedule& s) {
  std::uint64_t messages = 0;
  for (core::OpId id = 0; id < s.op_count(); ++id) {
    messages += s.kind(id) == core::OpKind::send ? 1 : 0;
  }
  return messages;
}

/// The default size of an MSCCL import: the smallest multiple of nchunksperloop from 1 MiB up.
core::Bytes default_msccl_bytes(const io::MscclProgram& p) {
  const std::uint64_t mib = 1 << 20;
  return core::Bytes{(mib + p.nchunksperloop - 1) / p.nchunksperloop * p.nchunksperloop};
}

void import_msccl(const std::string& file, const std::string& bytes,
                  std::optional<std::uint32_t> ranks, bool flat, bool check,
                  const std::string& output) {
  const std::string text = read_input_file(file);
  const io::MscclProgram p = io::read_msccl_xml(text, file);
  for (const std::string& w : p.warnings) {
    std::cerr << w << '\n';
  }
  if (ranks && *ranks != p.ngpus) {
    throw CommandFailed(fmt::format("{}: the algorithm is for {} GPUs (ngpus), not --ranks {}",
                                    file, p.ngpus, *ranks));
  }
  // collsim's own export carries its schedule: give that back exactly (checked against the XML).
  if (std::optional<core::Schedule> own = io::msccl_embedded_schedule(text, p)) {
    if (check) {
      const core::VerifyReport report = core::check_semantics(*own);
      if (!report.ok()) {
        throw CommandFailed(fmt::format("{}: the schedule is wrong:\n{}", file, report.summary()));
      }
    }
    std::cerr << fmt::format("collsim: imported {}: collsim's own schedule '{}' ({} ranks, {} B), "
                             "the same data movement as its XML{}\n",
                             file, own->header().algorithm, own->ranks(), own->header().bytes.value,
                             check ? "; checked: the collective's result" : "");
    emit(core::print_schedule(*own), output);
    return;
  }
  io::MscclBuildOptions options;
  options.bytes = bytes == "0" ? default_msccl_bytes(p) : parse_size(bytes, "--bytes");
  options.tiles = !flat;
  if (const std::string why = io::msccl_size_refusal(p, options.bytes); !why.empty()) {
    throw core::UsageError(fmt::format("{}: {}", file, why));
  }
  const io::MscclBuilt built = io::build_msccl_schedule(p, options);
  const core::Schedule& s = built.schedule;
  std::string checked;
  if (check) {
    if (const std::string problems = io::msccl_problems(p, built); !problems.empty()) {
      throw CommandFailed(fmt::format("{}: the algorithm is wrong:\n{}", file, problems));
    }
    checked = p.collective ? "; checked: matched, no deadlock, no read before a write, the "
                             "collective's result"
                           : fmt::format("; checked: matched, no deadlock, no read before a write "
                                         "(coll=\"{}\" has no result to check)",
                                         p.coll);
  }
  std::cerr << fmt::format(
      "collsim: imported {}: {} {} on {} GPUs, {} channels, {} at {} B "
      "({} B chunks, {} loop iteration{}): {} operations, {} messages{}\n",
      file, p.name.empty() ? "(unnamed)" : p.name, p.coll, p.ngpus, p.nchannels, p.proto,
      options.bytes.value, options.bytes.value / p.nchunksperloop, built.iterations,
      built.iterations == 1 ? "" : "s", s.op_count(), message_count(s), checked);
  emit(core::print_schedule(s), output);
}

} // namespace

void add_import(CLI::App& app) {
  struct Args {
    std::string file;
    std::string collective = "allreduce";
    std::string bytes = "0";
    std::string time_unit = "ns";
    std::string output;
    std::uint32_t ranks = 0;
    bool check = true;
    bool flat = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "import", "Read a schedule written elsewhere (MSCCL XML .xml, LogGOPSim GOAL .goal) and "
                "print it as collsim's schedule text");
  cmd->add_option("file", a->file, "The schedule file (.xml or .goal)")->required();
  cmd->add_option("--collective", a->collective,
                  "What a GOAL file without collsim's comments computes (it does not say)")
      ->capture_default_str();
  cmd->add_option("--bytes", a->bytes,
                  "The message size S: MSCCL XML, the size to cut into chunks (default: the "
                  "smallest multiple of nchunksperloop from 1 MiB); GOAL, the header's "
                  "(informational)")
      ->capture_default_str();
  cmd->add_option("--ranks", a->ranks, "Fail unless the file is for this many ranks (GPUs)");
  cmd->add_flag("--flat", a->flat,
                "MSCCL XML: one message per step (cnt chunks), instead of the runtime's loop "
                "over tiles of NCCL's protocol buffer");
  cmd->add_option("--time-unit", a->time_unit, "The unit of GOAL's calc times: ns, us or ps")
      ->capture_default_str();
  cmd->add_flag("--check,!--no-check", a->check,
                "Check the import (the default; --no-check skips it, for very large GOAL files): "
                "matching and no deadlock, and where the file carries data (MSCCL XML, collsim's "
                "own GOAL) no race, no read before a write and the collective's result; fail if "
                "wrong");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  cmd->callback([a] {
    const std::string ext = std::filesystem::path(a->file).extension().string();
    if (ext == ".xml") {
      import_msccl(a->file, a->bytes,
                   a->ranks == 0 ? std::nullopt : std::optional<std::uint32_t>(a->ranks), a->flat,
                   a->check, a->output);
      return;
    }
    if (ext != ".goal") {
      throw core::UsageError(
          fmt::format("{}: unknown schedule format '{}': collsim imports MSCCL XML (.xml) and "
                      "LogGOPSim GOAL (.goal)",
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
    if (a->ranks != 0 && a->ranks != s.ranks()) {
      throw CommandFailed(
          fmt::format("{}: the schedule is for {} ranks (num_ranks), not --ranks {}", a->file,
                      s.ranks(), a->ranks));
    }
    std::cerr << fmt::format("collsim: imported {}: {} ranks, {} operations, {} messages{}\n",
                             a->file, s.participants(), s.op_count(), message_count(s), checked);
    emit(core::print_schedule(s), a->output);
  });
}

} // namespace collsim::cli

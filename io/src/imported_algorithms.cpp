// `file:PATH` algorithms (imported_algorithms.hpp).

#include "collsim/io/imported_algorithms.hpp"

#include "read_file.hpp"

#include "collsim/algorithms/nccl_protocol.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/goal.hpp"
#include "collsim/io/msccl.hpp"

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <memory>

namespace collsim::io {

bool is_file_algorithm(std::string_view name) {
  return name.starts_with(kFileAlgorithmPrefix);
}

namespace {

std::string read_algorithm_file(std::string_view name, const std::string& path) {
  return detail::read_file_text(path, [&](int err) {
    throw core::UsageError(
        fmt::format("{}: cannot read the algorithm file: {}", name, std::strerror(err)));
  });
}

algorithms::AlgorithmInfo msccl_algorithm(std::string_view name, const std::string& path) {
  auto program =
      std::make_shared<const MscclProgram>(read_msccl_xml(read_algorithm_file(name, path), path));
  if (!program->collective) {
    throw core::UsageError(fmt::format(
        "{}: coll=\"{}\" is no collective collsim simulates ('collsim import --check' checks it)",
        path, program->coll));
  }
  algorithms::AlgorithmInfo info;
  info.name = std::string(name);
  info.collective = *program->collective;
  info.summary = fmt::format(
      "MSCCL XML algorithm '{}': {} GPUs, {} channels, {} chunks per loop, {}", program->name,
      program->ngpus, program->nchannels, program->nchunksperloop, program->proto);
  info.source = path;
  info.constraints = {
      fmt::format("ranks = {} (the file's ngpus)", program->ngpus),
      fmt::format("size a multiple of {} B (nchunksperloop)", program->nchunksperloop)};
  info.check = [program](const algorithms::Request& r) -> std::string {
    if (r.ranks != program->ngpus) {
      return fmt::format("the file is for {} GPUs (ngpus), not {} ranks", program->ngpus, r.ranks);
    }
    if (r.root != 0) {
      return "an MSCCL file fixes its root; collsim runs it with root 0";
    }
    if (!r.counts.empty()) {
      return "MSCCL XML algorithms take no per-rank counts";
    }
    return msccl_size_refusal(*program, r.bytes);
  };
  const std::string algorithm = info.name;
  info.generate = [program, algorithm](const algorithms::Request& r) {
    MscclBuildOptions o;
    o.bytes = r.bytes;
    o.protocol = algorithms::nccl_ring_protocol(program->proto, r);
    o.algorithm = algorithm;
    return build_msccl_schedule(*program, o).schedule;
  };
  return info;
}

algorithms::AlgorithmInfo goal_algorithm(std::string_view name, const std::string& path,
                                         core::CollectiveKind collective) {
  auto text = std::make_shared<const std::string>(read_algorithm_file(name, path));
  GoalImportOptions options;
  options.collective = collective;
  options.algorithm = std::string(name);
  const GoalImport first = read_goal(*text, path, options);
  if (first.with_data) {
    throw core::UsageError(
        fmt::format("{}: collsim's own GOAL export of '{}': name that algorithm instead", path,
                    first.schedule.header().algorithm));
  }
  const std::uint32_t ranks = first.schedule.ranks();
  algorithms::AlgorithmInfo info;
  info.name = std::string(name);
  info.collective = collective;
  info.summary = fmt::format("LogGOPSim GOAL schedule: {} ranks, {} operations (fixed sizes)",
                             ranks, first.schedule.op_count());
  info.source = path;
  info.constraints = {fmt::format("ranks = {} (the file's num_ranks)", ranks),
                      "the size is informational: the file fixes every message's"};
  info.check = [ranks](const algorithms::Request& r) -> std::string {
    if (r.ranks != ranks) {
      return fmt::format("the file is for {} ranks (num_ranks), not {}", ranks, r.ranks);
    }
    if (r.root != 0) {
      return "a GOAL file fixes its root; collsim runs it with root 0";
    }
    if (!r.counts.empty()) {
      return "GOAL schedules take no per-rank counts";
    }
    return {};
  };
  info.generate = [text, path, options](const algorithms::Request& r) {
    GoalImportOptions o = options;
    o.bytes = r.bytes;
    return read_goal(*text, path, o).schedule;
  };
  return info;
}

} // namespace

algorithms::AlgorithmInfo file_algorithm(std::string_view name, core::CollectiveKind collective) {
  const std::string path(name.substr(kFileAlgorithmPrefix.size()));
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".xml") {
    return msccl_algorithm(name, path);
  }
  if (ext == ".goal") {
    return goal_algorithm(name, path, collective);
  }
  throw core::UsageError(fmt::format(
      "{}: collsim runs algorithms from MSCCL XML (.xml) and LogGOPSim GOAL (.goal) files", name));
}

void add_file_algorithms(algorithms::Registry& registry, core::CollectiveKind collective,
                         const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (!is_file_algorithm(name)) {
      continue;
    }
    if (const auto* known = registry.try_find(collective, name); known != nullptr) {
      continue;
    }
    algorithms::AlgorithmInfo info = file_algorithm(name, collective);
    if (info.collective != collective) {
      throw core::UsageError(fmt::format("{}: the file's algorithm is a {}, not a {}", name,
                                         core::to_string(info.collective),
                                         core::to_string(collective)));
    }
    registry.add(std::move(info));
  }
}

void add_file_algorithms(algorithms::Registry& registry, const core::Scenario& scenario) {
  for (const core::StudySpec& study : scenario.studies) {
    add_file_algorithms(registry, study.collective, study.algorithms);
  }
}

} // namespace collsim::io

// `file:PATH` algorithms (imported_algorithms.hpp).

#include "collsim/io/imported_algorithms.hpp"

#include "read_file.hpp"

#include "collsim/algorithms/nccl_protocol.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/goal.hpp"
#include "collsim/io/msccl.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <optional>

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
        "{}: coll=\"{}\" is no collective collsim simulates ('collsim import' checks it)", path,
        program->coll));
  }
  // Checked once, at one element per chunk (the steps and their order do not depend on the
  // size), so that a wrong algorithm is never timed as if it were right.
  MscclBuildOptions smallest;
  smallest.bytes = core::Bytes{program->nchunksperloop * 4};
  smallest.tiles = false;
  if (const std::string problems =
          msccl_problems(*program, build_msccl_schedule(*program, smallest));
      !problems.empty()) {
    throw core::UsageError(fmt::format("{}: the algorithm is wrong ('collsim import {}' says the "
                                       "same):\n{}",
                                       path, path, problems));
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

/// GOAL's `num_ranks N`, found without parsing the whole file (a GOAL file of a large schedule is
/// hundreds of MB: it is parsed once per request, not also here); nullopt when the line is not
/// found as written, and the full parse gives the positioned error.
std::optional<std::uint32_t> goal_num_ranks(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line.substr(first).starts_with("//")) {
      continue;
    }
    line = line.substr(first);
    if (!line.starts_with("num_ranks")) {
      return std::nullopt;
    }
    std::uint32_t ranks = 0;
    const std::string_view digits = line.substr(std::string_view("num_ranks").size());
    const std::size_t d = digits.find_first_not_of(" \t");
    if (d == std::string_view::npos) {
      return std::nullopt;
    }
    const auto [ptr, ec] = std::from_chars(digits.data() + d, digits.data() + digits.size(), ranks);
    if (ec != std::errc{} || ranks == 0) {
      return std::nullopt;
    }
    return ranks;
  }
  return std::nullopt;
}

algorithms::AlgorithmInfo goal_algorithm(std::string_view name, const std::string& path,
                                         core::CollectiveKind collective) {
  auto text = std::make_shared<const std::string>(read_algorithm_file(name, path));
  GoalImportOptions options;
  options.collective = collective;
  options.algorithm = std::string(name);
  std::optional<std::uint32_t> ranks = goal_num_ranks(*text);
  if (!ranks) {
    ranks = read_goal(*text, path, options).schedule.ranks(); // or its positioned error
  }
  if (text->starts_with("// collsim: ") || text->find("\n// collsim: ") != std::string::npos) {
    throw core::UsageError(fmt::format(
        "{}: collsim's own GOAL export (it carries `// collsim:` lines): name that algorithm "
        "instead",
        path));
  }
  algorithms::AlgorithmInfo info;
  info.name = std::string(name);
  info.collective = collective;
  info.summary = fmt::format("LogGOPSim GOAL schedule for {} ranks (fixed sizes)", *ranks);
  info.source = path;
  info.constraints = {fmt::format("ranks = {} (the file's num_ranks)", *ranks),
                      "the size is informational: the file fixes every message's"};
  info.check = [n = *ranks](const algorithms::Request& r) -> std::string {
    if (r.ranks != n) {
      return fmt::format("the file is for {} ranks (num_ranks), not {}", n, r.ranks);
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

// `collsim algorithms`, `collsim schedule` and `collsim verify`.

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/core/verify.hpp"

#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace collsim::cli {
namespace {

std::string params_text(const algorithms::AlgorithmInfo& a) {
  std::string out;
  for (const auto& p : a.params) {
    out += fmt::format("{}{}={} [{}, {}] {}", out.empty() ? "" : "; ", p.name, p.default_value,
                       p.min, p.max, p.help);
  }
  return out;
}

std::string algorithms_table(const std::vector<const algorithms::AlgorithmInfo*>& list) {
  std::string out;
  std::optional<core::CollectiveKind> current;
  for (const auto* a : list) {
    if (current != a->collective) {
      current = a->collective;
      out += fmt::format("{}{}\n", out.empty() ? "" : "\n", core::to_string(a->collective));
    }
    out += fmt::format("  {:<22} {}\n", a->name, a->summary);
    auto line = [&](std::string_view label, const std::string& value) {
      if (!value.empty()) {
        out += fmt::format("  {:<22}   {:<12} {}\n", "", label, value);
      }
    };
    line("aliases:", fmt::format("{}", fmt::join(a->aliases, ", ")));
    line("parameters:", params_text(*a));
    line("constraints:", fmt::format("{}", fmt::join(a->constraints, "; ")));
    line("cost:", a->cost_formula);
    line("source:", a->source);
  }
  return out;
}

std::string algorithms_json(const std::vector<const algorithms::AlgorithmInfo*>& list) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto* a : list) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : a->params) {
      params.push_back({{"name", p.name},
                        {"default", p.default_value},
                        {"min", p.min},
                        {"max", p.max},
                        {"help", p.help}});
    }
    arr.push_back({{"name", a->name},
                   {"collective", std::string(core::to_string(a->collective))},
                   {"summary", a->summary},
                   {"source", a->source},
                   {"aliases", a->aliases},
                   {"parameters", params},
                   {"constraints", a->constraints},
                   {"cost", a->cost_formula}});
  }
  return nlohmann::json{{"algorithms", arr}}.dump(2) + "\n";
}

} // namespace

void add_algorithms(CLI::App& app) {
  auto* cmd = app.add_subcommand("algorithms", "List the algorithms collsim knows, with aliases, "
                                               "parameters, constraints and closed-form costs");
  auto collective = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  cmd->add_option("--collective", *collective, "Only this collective");
  cmd->add_option("--format", *format, "table or json")->capture_default_str();
  cmd->callback([collective, format] {
    const auto registry = algorithms::make_default_registry();
    std::optional<core::CollectiveKind> filter;
    if (!collective->empty()) {
      filter = core::collective_from_name(*collective);
    }
    const auto list = registry.list(filter);
    const Format f = parse_format(*format);
    if (f == Format::csv) {
      throw core::UsageError("--format: 'algorithms' prints table or json");
    }
    emit(f == Format::json ? algorithms_json(list) : algorithms_table(list), "");
  });
}

void add_schedule(CLI::App& app) {
  auto* cmd = app.add_subcommand("schedule", "Print the schedule an algorithm generates, as text");
  struct Args {
    std::string collective = "allreduce";
    std::string algorithm;
    std::uint32_t ranks = 4;
    std::string bytes = "1MiB";
    std::uint32_t root = 0;
    std::vector<std::string> params;
    std::string output;
    bool check = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--collective", a->collective, "Collective")->capture_default_str();
  cmd->add_option("--algorithm", a->algorithm, "Algorithm name or alias")->required();
  cmd->add_option("--ranks", a->ranks, "Number of ranks")->capture_default_str();
  cmd->add_option("--bytes", a->bytes, "Message size (nccl-tests convention)")
      ->capture_default_str();
  cmd->add_option("--root", a->root, "Root rank")->capture_default_str();
  cmd->add_option("--param", a->params, "Algorithm parameter NAME=VALUE (repeatable)");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  cmd->add_flag("--check", a->check, "Also run validate and check_semantics; fail if wrong");
  cmd->callback([a] {
    const auto registry = algorithms::make_default_registry();
    algorithms::Request req;
    req.collective = core::collective_from_name(a->collective);
    req.ranks = a->ranks;
    req.bytes = parse_size(a->bytes, "--bytes");
    req.root = a->root;
    req.params = parse_params(a->params);
    const auto& algo = registry.find(req.collective, a->algorithm);
    const core::Schedule s = registry.generate(algo, req);
    if (a->check) {
      const auto report = core::check_semantics(s);
      if (!report.ok()) {
        throw CommandFailed(fmt::format("the schedule is wrong:\n{}", report.summary()));
      }
    }
    emit(core::print_schedule(s), a->output);
  });
}

void add_verify(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify", "Check algorithms symbolically: matching, deadlock freedom and the collective's "
                "postcondition, over many rank counts and sizes");
  struct Args {
    std::string collective;
    std::string algorithm;
    std::string ranks = "1..64";
    std::string sizes;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--collective", a->collective, "Only this collective (default: all)");
  cmd->add_option("--algorithm", a->algorithm,
                  "Only this algorithm (needs --collective unless allreduce)");
  cmd->add_option("--ranks", a->ranks, "Rank counts: 1..64, 8,16,100, ...")->capture_default_str();
  cmd->add_option("--sizes", a->sizes,
                  "Sizes to check (default: 0, 1, ranks-1, 4 KiB and 1000003 bytes)");
  cmd->callback([a] {
    const auto registry = algorithms::make_default_registry();
    std::vector<const algorithms::AlgorithmInfo*> algos;
    if (!a->algorithm.empty()) {
      const auto c =
          core::collective_from_name(a->collective.empty() ? "allreduce" : a->collective);
      algos.push_back(&registry.find(c, a->algorithm));
    } else if (!a->collective.empty()) {
      algos = registry.list(core::collective_from_name(a->collective));
    } else {
      algos = registry.list();
    }
    if (algos.empty()) {
      throw core::UsageError(fmt::format("no {} algorithms are available yet (collsim has: {})",
                                         a->collective,
                                         fmt::join(registry.collectives_with_algorithms(), ", ")));
    }
    const auto ranks = parse_ranks(a->ranks, "--ranks");
    std::vector<core::Bytes> fixed;
    if (!a->sizes.empty()) {
      fixed = parse_sizes(a->sizes, "--sizes");
    }
    std::size_t failures = 0;
    std::cout << fmt::format("{:<16} {:<24} {:>7} {:>7} {:>8}  {}\n", "collective", "algorithm",
                             "checked", "refused", "failed", "first failure");
    for (const auto* algo : algos) {
      std::size_t checked = 0;
      std::size_t refused = 0;
      std::size_t failed = 0;
      std::string first;
      for (auto p : ranks) {
        std::vector<core::Bytes> sizes = fixed;
        if (sizes.empty()) {
          sizes = {core::Bytes{0}, core::Bytes{1}, core::Bytes{p - 1ULL}, core::Bytes{4096},
                   core::Bytes{1000003}};
        }
        for (auto n : sizes) {
          algorithms::Request req;
          req.collective = algo->collective;
          req.ranks = p;
          req.bytes = n;
          if (!registry.refusal(*algo, req).empty()) {
            ++refused;
            continue;
          }
          ++checked;
          const auto report = core::check_semantics(registry.generate(*algo, req));
          if (!report.ok()) {
            ++failed;
            if (first.empty()) {
              first = fmt::format("{} ranks, {} bytes: {}", p, n.value, report.problems.front());
            }
          }
        }
      }
      failures += failed;
      std::cout << fmt::format("{:<16} {:<24} {:>7} {:>7} {:>8}  {}\n",
                               core::to_string(algo->collective), algo->name, checked, refused,
                               failed, first.empty() ? "-" : first)
                << std::flush;
    }
    if (failures > 0) {
      throw CommandFailed(fmt::format("{} schedules failed verification", failures));
    }
    std::cout << "all schedules verified\n";
  });
}

} // namespace collsim::cli

// The scenario's `studies`: collective, algorithms, stacks, ranks, sizes, params, counts and
// skew (docs/scenario-format.md, "studies").

#include "scenario_loader_parts.hpp"

#include "collsim/core/collective.hpp"
#include "collsim/core/imbalance.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/sizes.hpp"
#include "collsim/io/imbalance_files.hpp"

#include <cctype>

namespace collsim::io::scenario_detail {

std::vector<core::StudySpec> Loader::studies(const Located& at) const {
  if (!at.node.IsSequence()) {
    fail(at, fmt::format("expected a list of studies, got {}", describe(at.node)));
  }
  if (at.node.size() == 0) {
    fail(at, "expected at least one study");
  }
  std::vector<core::StudySpec> out;
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    out.push_back(study(element(at, i, at.node[i])));
  }
  return out;
}

core::StudySpec Loader::study(const Located& at) const {
  const Fields fields = read_map(at, kStudyKeys, kStudyRequired);
  core::StudySpec out;
  out.pos = at.pos;
  out.engine_pos = at.pos;
  const Field* root = nullptr;
  core::CollectiveName named;
  const Located* collective_at = nullptr;
  const Located* counts_at = nullptr;
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "name") {
      out.name = scalar(v, "a study name");
    } else if (k == "collective") {
      const std::string name = scalar(v, "a collective name");
      const auto kind = core::parse_collective_name(name);
      if (!kind) {
        std::vector<std::string> valid;
        valid.reserve(core::kAllCollectives.size());
        for (const auto c : core::kAllCollectives) {
          valid.emplace_back(core::to_string(c));
        }
        fail(v, core::UnknownNameError("collective", name, std::move(valid)).what());
      }
      out.collective = kind->kind;
      named = *kind;
      collective_at = &v;
    } else if (k == "counts") {
      const core::Parsed<core::CountsSpec> c = core::parse_counts_spec(scalar(v, "counts"));
      if (!c.ok()) {
        fail(v, c.error);
      }
      out.counts = c.value;
      io::load_counts_data(out.counts, file_, v.pos);
      counts_at = &v;
    } else if (k == "skew") {
      const core::Parsed<core::SkewSpec> s = core::parse_skew_spec(scalar(v, "skew"));
      if (!s.ok()) {
        fail(v, s.error);
      }
      out.skew = s.value;
      io::load_skew_data(out.skew, file_, v.pos);
    } else if (k == "algorithms") {
      algorithms(v, out);
    } else if (k == "stacks") {
      stacks(v, out);
    } else if (k == "ranks") {
      out.ranks = ranks(v);
      out.ranks_pos = v.pos;
    } else if (k == "sizes") {
      out.sizes = sizes(v);
      out.sizes_pos = v.pos;
    } else if (k == "root") {
      root = &f;
    } else if (k == "engine") {
      out.engine = one_of(v, "engine", "an engine name", kScenarioEngines);
      out.engine_pos = v.pos;
    } else if (k == "params") {
      params(v, out);
    }
  }
  // A v-name without counts is its uniform case; counts need a collective with a v-variant; a
  // neighbourhood collective needs its process graph.
  using CK = core::CountsSpec::Kind;
  const bool graph =
      out.counts.kind == CK::cart || out.counts.kind == CK::graph || out.counts.kind == CK::sparse;
  if (named.neighbor && !graph) {
    fail(counts_at != nullptr ? *counts_at : *collective_at,
         "a neighbourhood collective needs its process graph: counts: cart:DxD[,periodic], "
         "graph:PATH or sparse:D");
  }
  if (counts_at != nullptr && out.counts.kind != CK::none &&
      !core::has_counts_variant(out.collective)) {
    fail(*counts_at, fmt::format("{} has no v-variant: counts apply to allgather, gather, "
                                 "scatter, reduce_scatter and alltoall",
                                 core::to_string(out.collective)));
  }
  if (graph && out.collective != core::CollectiveKind::alltoall) {
    fail(*counts_at, "a process graph's counts belong to an alltoall (neighbor_alltoall)");
  }
  if (named.v && out.counts.kind == CK::none) {
    out.counts.kind = CK::uniform;
    out.counts.text = "uniform";
  }
  // The root is checked last: its valid range depends on the rank counts.
  if (root != nullptr) {
    const std::int64_t r = integer(root->value, "a root rank (an integer >= 0)");
    if (r < 0) {
      fail(root->value, fmt::format("must be at least 0, got {}", r));
    }
    const std::uint32_t smallest = *std::min_element(out.ranks.begin(), out.ranks.end());
    if (r >= smallest) {
      fail(root->value, fmt::format("root {} is out of range for {} ranks (valid roots are 0..{})",
                                    r, smallest, smallest - 1));
    }
    out.root = static_cast<std::uint32_t>(r);
  }
  return out;
}

void Loader::algorithms(const Located& at, core::StudySpec& out) const {
  auto one = [&](const Located& name_at) {
    const std::string name = scalar(name_at, "an algorithm name");
    if (name.empty()) {
      fail(name_at, "expected an algorithm name, got ''");
    }
    out.algorithms.push_back(name);
    out.algorithm_pos.push_back(name_at.pos);
  };
  if (at.node.IsScalar()) {
    one(at);
    return;
  }
  if (!at.node.IsSequence()) {
    fail(at, fmt::format("expected a list of algorithm names, got {}", describe(at.node)));
  }
  if (at.node.size() == 0) {
    fail(at, "expected at least one algorithm");
  }
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    one(element(at, i, at.node[i]));
  }
}

void Loader::stacks(const Located& at, core::StudySpec& out) const {
  auto one = [&](const Located& name_at) {
    const std::string name = scalar(name_at, "a stack name");
    if (name.empty()) {
      fail(name_at, "expected a stack name, got ''");
    }
    out.stacks.push_back(name);
    out.stack_pos.push_back(name_at.pos);
  };
  if (at.node.IsScalar()) {
    one(at);
    return;
  }
  if (!at.node.IsSequence()) {
    fail(at, fmt::format("expected a list of stack names, got {}", describe(at.node)));
  }
  if (at.node.size() == 0) {
    fail(at, "expected at least one stack");
  }
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    one(element(at, i, at.node[i]));
  }
}

std::vector<std::uint32_t> Loader::ranks(const Located& at) const {
  auto one = [](const Located& v) {
    const std::int64_t n = integer(v, "a rank count (an integer >= 1)");
    if (n < 1) {
      fail(v, fmt::format("a rank count must be at least 1, got {}", n));
    }
    if (n > kMaxScenarioRanks) {
      fail(v, fmt::format("a study can simulate at most {} ranks, got {}", kMaxScenarioRanks, n));
    }
    return static_cast<std::uint32_t>(n);
  };
  if (at.node.IsScalar()) {
    return {one(at)};
  }
  if (!at.node.IsSequence()) {
    fail(at,
         fmt::format("expected a rank count or a list of rank counts, got {}", describe(at.node)));
  }
  if (at.node.size() == 0) {
    fail(at, "expected at least one rank count");
  }
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    out.push_back(one(element(at, i, at.node[i])));
  }
  return out;
}

std::vector<core::Bytes> Loader::sizes(const Located& at) const {
  if (at.node.IsScalar()) {
    auto parsed = core::parse_size_sweep(at.node.Scalar());
    if (!parsed.ok()) {
      fail(at, parsed.error);
    }
    return std::move(parsed.value);
  }
  if (!at.node.IsSequence()) {
    fail(at, fmt::format("expected a size sweep like '8B:1GiB:x2' or a list of sizes, got {}",
                         describe(at.node)));
  }
  if (at.node.size() == 0) {
    fail(at, "expected at least one size");
  }
  std::vector<core::Bytes> out;
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    const Located v = element(at, i, at.node[i]);
    const auto parsed = core::parse_bytes(scalar(v, "a size like '64 KiB'"));
    if (!parsed.ok()) {
      fail(v, parsed.error);
    }
    out.push_back(parsed.value);
  }
  return out;
}

void Loader::params(const Located& at, core::StudySpec& out) const {
  const Fields fields = read_map(at, {}, {});
  for (const auto& f : fields.fields) {
    const std::string text = scalar(f.value, "an integer, a size like '64 KiB' or a name");
    const bool is_name =
        !text.empty() && std::isalpha(static_cast<unsigned char>(text.front())) != 0 &&
        std::all_of(text.begin(), text.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
        });
    if (!to_integer(text) && !core::parse_bytes(text).ok() && !is_name) {
      fail(f.value,
           fmt::format("expected an integer, a size like '64 KiB' or a name, got '{}'", text));
    }
    out.params[f.key] = text;
    out.param_pos[f.key] = f.value.pos;
  }
}

} // namespace collsim::io::scenario_detail

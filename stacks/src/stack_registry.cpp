#include "collsim/stacks/stack.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

namespace collsim::stacks {

void Registry::add(std::unique_ptr<Stack> stack) {
  for (const auto& s : stacks_) {
    if (s->info().name == stack->info().name) {
      throw core::InternalError(fmt::format("stack '{}' registered twice", s->info().name));
    }
  }
  stacks_.push_back(std::move(stack));
}

const Stack& Registry::find(std::string_view name) const {
  for (const auto& s : stacks_) {
    if (s->info().name == name) {
      return *s;
    }
  }
  throw core::UnknownNameError("stack", name, names());
}

const Stack& Registry::stack_for(const algorithms::AlgorithmInfo& algo) const {
  for (const auto& s : stacks_) {
    if (s->info().implicit && s->runs(algo)) {
      return *s;
    }
  }
  throw core::InternalError(fmt::format("no stack runs algorithm '{}'", algo.name));
}

const Stack& Registry::resolve(std::string_view name, const algorithms::AlgorithmInfo& algo) const {
  if (name.empty()) {
    return stack_for(algo);
  }
  const Stack& s = find(name);
  if (!s.runs(algo)) {
    throw core::UsageError(s.refusal(algo));
  }
  return s;
}

std::string Stack::refusal(const algorithms::AlgorithmInfo& algo) const {
  return fmt::format("stack '{}' does not run {} {}", info().name, core::to_string(algo.collective),
                     algo.name);
}

Buffers buffers_from_name(std::string_view name) {
  if (name == "device") {
    return Buffers::device;
  }
  if (name == "host") {
    return Buffers::host;
  }
  throw core::UsageError(fmt::format("buffers '{}': expected device or host", name));
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(stacks_.size());
  for (const auto& s : stacks_) {
    out.push_back(s->info().name);
  }
  return out;
}

Registry default_stacks() {
  Registry r;
  r.add(make_nccl_stack());
  r.add(make_direct_stack()); // the last implicit one: it runs everything
  r.add(make_openmpi41_stack());
  r.add(make_openmpi41_ucc_stack());
  r.add(make_openmpi41_ucc_nccl_stack());
  r.add(make_hpcx_stack());
  r.add(make_openmpi50_stack());
  r.add(make_mpich4_stack());
  r.add(make_mvapich2_gdr_stack());
  return r;
}

core::Schedule lower(const Registry& stacks, core::Schedule schedule, const LowerContext& ctx,
                     std::string_view stack) {
  return stacks.resolve(stack, ctx.algorithm).lower(std::move(schedule), ctx);
}

} // namespace collsim::stacks

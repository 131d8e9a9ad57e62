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
    if (s->runs(algo)) {
      return *s;
    }
  }
  throw core::InternalError(fmt::format("no stack runs algorithm '{}'", algo.name));
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
  r.add(make_direct_stack()); // last: it runs everything
  return r;
}

core::Schedule lower(const Registry& stacks, core::Schedule schedule, const LowerContext& ctx) {
  return stacks.stack_for(ctx.algorithm).lower(std::move(schedule), ctx);
}

} // namespace collsim::stacks

// The direct stack: every message of the schedule is one point-to-point transfer over its route,
// as the engines price it (LogGP's o, g, G and the route's latency; SimGrid's flows). It is what
// collsim modelled before stacks existed, and what MPI algorithms run on until a library's own
// stack (Open MPI's, MPICH's, UCC's: issue 18) says more about how they move data.

#include "collsim/stacks/stack.hpp"

namespace collsim::stacks {
namespace {

class DirectStack final : public Stack {
public:
  [[nodiscard]] const StackInfo& info() const override { return info_; }
  [[nodiscard]] bool runs(const algorithms::AlgorithmInfo&) const override { return true; }
  [[nodiscard]] core::Schedule lower(core::Schedule schedule, const LowerContext&) const override {
    return schedule;
  }

private:
  StackInfo info_{
      "direct", "each message one point-to-point transfer over its route (no library model)",
      "LogGP (Alexandrov et al., SPAA 1995) on the topology's routes", Chooser::machine, true};
};

} // namespace

std::unique_ptr<Stack> make_direct_stack() {
  return std::make_unique<DirectStack>();
}

} // namespace collsim::stacks

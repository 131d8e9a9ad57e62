// The simgrid engine's result: what a run leaves in its state, checked for a deadlock and read
// out (simulation.cpp runs the simulation).

#include "simulation_state.hpp"

#include "collsim/core/engine.hpp"

namespace collsim::engines::detail::simgrid_state {

void check_finished(const core::Schedule& s, const core::Lanes& lanes,
                    const std::vector<LaneState>& lane, const std::vector<OpState>& ops) {
  for (std::size_t l = 0; l < lanes.count(); ++l) {
    if (lane[l].next != lanes.end(l)) {
      throw core::stalled_error("simgrid", s, lanes.rank(l), lanes.op_at(lane[l].next));
    }
  }
  for (const OpState& st : ops) {
    if (st.state != kDone) {
      throw core::unmatched_receive_error("simgrid");
    }
  }
}

core::RunResult collect_result(const core::Schedule& s, const core::RunOptions& options,
                               const std::vector<RankState>& ranks, const std::vector<OpState>& ops,
                               const std::vector<OpId>& partner,
                               const std::vector<std::pair<double, double>>& wire,
                               std::uint64_t messages, std::uint64_t bytes) {
  core::RunResult res;
  res.rank_finish.resize(s.ranks());
  double end = 0.0;
  for (Rank r = 0; r < s.participants(); ++r) {
    if (r < s.ranks()) {
      res.rank_finish[r] = core::Seconds{ranks[r].finish};
    }
    end = std::max(end, ranks[r].finish);
  }
  res.time = core::Seconds{end};
  res.operations = s.op_count();
  res.messages = messages;
  res.bytes_sent = bytes;
  if (options.timeline) {
    res.timeline.reserve(s.op_count());
    for (OpId id = 0; id < s.op_count(); ++id) {
      res.timeline.push_back({id, core::Seconds{ops[id].start}, core::Seconds{ops[id].end}});
    }
  }
  if (!wire.empty()) {
    res.message_timeline.reserve(messages);
    for (OpId id = 0; id < s.op_count(); ++id) {
      if (s.kind(id) == OpKind::send) {
        const auto& w = wire[partner[id]];
        res.message_timeline.push_back({id, core::Seconds{w.first}, core::Seconds{w.second}});
      }
    }
  }
  return res;
}

} // namespace collsim::engines::detail::simgrid_state

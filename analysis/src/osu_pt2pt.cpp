// OSU's point-to-point benchmarks as schedules (osu_pt2pt.hpp).

#include "collsim/analysis/osu_pt2pt.hpp"

#include "simulate_support.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/stacks/stack.hpp"

#include <fmt/format.h>
#include <vector>

namespace collsim::analysis {
namespace {

using core::Buffer;
using core::OpKind;
using core::Range;

/// osu_bw's reply: MPI_Send(s_buf, 4, MPI_CHAR, ...) once the window is in.
constexpr std::uint64_t kReplyBytes = 4;

void latency(core::Schedule& s, std::uint64_t m) {
  const Range buffer{Buffer::data, 0, m};
  s.begin_rank(0);
  const std::uint32_t ping = s.send(1, buffer);
  s.recv(1, buffer, {ping});
  s.begin_rank(1);
  const std::uint32_t in = s.recv(0, buffer);
  s.send(0, buffer, {in});
}

void bandwidth(core::Schedule& s, std::uint64_t m, std::uint32_t window) {
  const Range reply{Buffer::tmp, 0, kReplyBytes};
  std::vector<std::uint32_t> posted;
  s.begin_rank(0);
  for (std::uint32_t j = 0; j < window; ++j) {
    posted.push_back(s.send(1, Range{Buffer::data, 0, m}));
  }
  s.add(OpKind::recv, 1, reply, Range{}, posted);
  posted.clear();
  s.begin_rank(1);
  for (std::uint32_t j = 0; j < window; ++j) {
    posted.push_back(s.recv(0, Range{Buffer::data, j * m, m}));
  }
  s.add(OpKind::send, 0, reply, Range{}, posted);
}

void bidirectional(core::Schedule& s, std::uint64_t m, std::uint32_t window) {
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    for (std::uint32_t j = 0; j < window; ++j) {
      s.recv(1 - r, Range{Buffer::tmp, j * m, m});
    }
    for (std::uint32_t j = 0; j < window; ++j) {
      s.send(1 - r, Range{Buffer::data, 0, m});
    }
  }
}

} // namespace

core::Schedule osu_iteration(Pt2pt kind, core::Bytes bytes, std::uint32_t window) {
  const std::uint64_t m = bytes.value;
  if (kind == Pt2pt::none || window == 0) {
    throw core::InternalError("osu_iteration: a point-to-point kind and a window");
  }
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = bytes;
  h.algorithm = std::string(osu_algorithm(kind).name);
  h.data_bytes = kind == Pt2pt::bw ? window * m : m;
  h.tmp_bytes = kind == Pt2pt::bw ? kReplyBytes : kind == Pt2pt::bibw ? window * m : 0;
  core::Schedule s(std::move(h));
  switch (kind) {
  case Pt2pt::latency: latency(s, m); break;
  case Pt2pt::bw: bandwidth(s, m, window); break;
  case Pt2pt::bibw: bidirectional(s, m, window); break;
  case Pt2pt::none: break;
  }
  s.finish();
  return s;
}

algorithms::AlgorithmInfo osu_algorithm(Pt2pt kind) {
  algorithms::AlgorithmInfo a;
  a.collective = core::CollectiveKind::bcast;
  a.source = "OSU Micro-Benchmarks mpi/pt2pt";
  switch (kind) {
  case Pt2pt::latency:
    a.name = "osu_latency";
    a.summary = "ping-pong: rank 0 sends, rank 1 sends it back";
    break;
  case Pt2pt::bw:
    a.name = "osu_bw";
    a.summary = "a window of messages from rank 0 to rank 1, then a 4-byte reply";
    break;
  case Pt2pt::bibw:
    a.name = "osu_bibw";
    a.summary = "a window of messages each way at once";
    break;
  case Pt2pt::none: throw core::InternalError("osu_algorithm: not a point-to-point benchmark");
  }
  return a;
}

core::Seconds osu_per_message(Pt2pt kind, core::Seconds iteration, std::uint32_t window) {
  switch (kind) {
  case Pt2pt::latency: return core::Seconds{iteration.value / 2};
  case Pt2pt::bw: return core::Seconds{iteration.value / window};
  case Pt2pt::bibw: return core::Seconds{iteration.value / (2.0 * window)};
  case Pt2pt::none: break;
  }
  throw core::InternalError("osu_per_message: not a point-to-point benchmark");
}

core::Seconds predict_osu(const MeasuredPoint& p, const core::Topology& topology,
                          const EngineChoice& engine) {
  const EngineEntry& entry = find_engine(engine.name);
  if (!entry.messages) {
    throw core::UsageError(fmt::format("the {} engine prices collectives' closed forms; OSU's "
                                       "point-to-point benchmarks run on loggp or simgrid",
                                       engine.name));
  }
  const algorithms::AlgorithmInfo algo = osu_algorithm(p.pt2pt);
  stacks::LowerContext ctx{topology, engine.nccl, algo,
                           engine.topology ? &*engine.topology : nullptr};
  if (!engine.buffers.empty()) {
    ctx.buffers = stacks::buffers_from_name(engine.buffers);
  }
  ctx.mpi = &engine.mpi;
  const stacks::Registry& stacks = detail::stack_registry();
  const stacks::Stack& stack =
      engine.stack.empty() ? stacks.stack_for(algo) : stacks.find(engine.stack);
  if (!stack.runs(algo)) {
    // Not the collective refusal: the benchmark is not a collective of its own.
    throw core::UsageError(fmt::format(
        "stack '{}' does not run OSU's {} (MPI point-to-point: name an MPI stack or direct)",
        stack.info().name, algo.name));
  }
  core::Schedule s = stack.lower(osu_iteration(p.pt2pt, p.bytes, p.window), ctx);
  core::Protocol protocol = s.header().protocol;
  protocol.launch = core::Seconds{0.0}; // no collective call: only the messages' own costs
  s.set_protocol(protocol);
  const core::RunResult run = entry.run(s, topology, core::RunOptions{}, engine);
  return osu_per_message(p.pt2pt, run.time, p.window);
}

} // namespace collsim::analysis

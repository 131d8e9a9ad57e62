// Schedule::append_program: another schedule's program copied onto a new participant, its peers
// and local dependencies moved, the operations without dependencies waiting for an entry
// operation; what host staging builds its agents with (stacks/host_staging.hpp).

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace collsim::core;

namespace {

/// Rank 1's program uses every kind, a second stream, a tag, a long range and a two-dependency
/// operation.
Schedule source() {
  ScheduleHeader h;
  h.collective = CollectiveKind::allreduce;
  h.ranks = 2;
  h.bytes = Bytes{64};
  h.data_bytes = 64;
  h.tmp_bytes = 64;
  Schedule s(h);
  s.begin_rank(0);
  s.send(1, {Buffer::data, 0, 8});
  s.begin_rank(1);
  s.recv(0, {Buffer::tmp, 0, 8});                           // l0
  s.reduce({Buffer::tmp, 0, 8}, {Buffer::data, 0, 8}, {0}); // l1
  s.set_stream(3);
  s.copy({Buffer::data, 8, 8}, {Buffer::tmp, 8, 8}); // l2 (no dependency)
  s.set_tag(5);
  s.send(0, {Buffer::data, 0, 8}, {1, 2}); // l3
  s.set_stream(0);
  const std::vector<std::uint32_t> after{3};
  s.calc(Seconds{2.5e-6}, after);                                  // l4
  s.add(OpKind::recv, 0, {Buffer::tmp, 0, 5ULL << 32}, {}, after); // l5: a long range
  s.finish();
  return s;
}

} // namespace

TEST_CASE("append_program copies a program onto another participant, shifted") {
  const Schedule from = source();
  ScheduleHeader h = from.header();
  h.agents = {"a", "b"};
  Schedule out(h);
  out.begin_rank(0);
  out.begin_rank(1);
  out.begin_rank(2);
  out.begin_rank(3);
  const std::uint32_t first = out.recv(1, {Buffer::data, 0, 64});                         // l0
  const std::uint32_t entry = out.calc(Seconds{1e-6}, std::vector<std::uint32_t>{first}); // l1
  const std::vector<std::uint32_t> sinks = out.append_program(from, 1, 2, entry);
  out.finish();

  REQUIRE(out.rank_end(3) - out.rank_begin(3) == 8);
  const OpId b = out.rank_begin(3);
  const auto op = [&](std::uint32_t local) { return out.op(b + local); };
  // Each copied operation is the original at local index + 2, peers + 2.
  for (std::uint32_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    Op want = from.op(from.rank_begin(1) + i);
    want.rank = 3;
    want.local = i + 2;
    if (want.kind == OpKind::send || want.kind == OpKind::recv ||
        want.kind == OpKind::recv_reduce) {
      want.peer += 2;
    }
    for (std::uint32_t& d : want.deps) {
      d += 2;
    }
    if (want.deps.empty()) {
      want.deps = {entry};
    }
    CHECK(op(i + 2) == want);
  }
  CHECK(op(2).deps == std::vector<std::uint32_t>{1}); // the receive waits for the entry
  CHECK(op(4).deps == std::vector<std::uint32_t>{1}); // the copy without dependencies too
  CHECK(op(5).deps == std::vector<std::uint32_t>{3, 4});
  CHECK(op(5).stream == 3);
  CHECK(op(5).tag == 5);
  CHECK(op(6).calc_seconds == Approx(2.5e-6));
  CHECK(op(7).target.length == (5ULL << 32));
  CHECK(out.stream_count() == 4);
  // Nothing waits for the calc (l6) or the last receive (l7): the sinks.
  CHECK(sinks == std::vector<std::uint32_t>{6, 7});
  // The participants before are untouched and empty.
  CHECK(out.rank_end(2) == out.rank_begin(2));
}

TEST_CASE("append_program refuses an entry that is not an earlier operation") {
  const Schedule from = source();
  ScheduleHeader h = from.header();
  Schedule out(h);
  out.begin_rank(0);
  out.begin_rank(1);
  CHECK_THROWS_AS(out.append_program(from, 1, 0, 0), InternalError);
  Schedule unfinished(h);
  unfinished.begin_rank(0);
  Schedule target(h);
  target.begin_rank(0);
  CHECK_THROWS_AS(target.append_program(unfinished, 0, 0, 0), InternalError);
}

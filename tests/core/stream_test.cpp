// Issue streams (docs/schedule-format.md, "Streams"): program order within a stream, streams
// independent; the text form, the untimed checker and the loggp engine all follow it.

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim::core;

namespace {

/// Rank 0 waits for rank 1 before its first send to rank 1 (l1 requires l0), but rank 1 answers
/// only after the second send (its l2 requires l1, the receive matching rank 0's l2). In one stream
/// rank 0's l2 cannot issue before l1: a deadlock. With l2 in stream 1 it goes first.
Schedule crossing(bool second_stream) {
  ScheduleHeader h;
  h.collective = CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = Bytes{8};
  h.data_bytes = 8;
  h.tmp_bytes = 16;
  Schedule s(h);
  s.begin_rank(0);
  s.recv(1, {Buffer::tmp, 0, 8});
  s.send(1, {Buffer::data, 0, 8}, {0});
  if (second_stream) {
    s.set_stream(1);
  }
  s.send(1, {Buffer::data, 0, 8});
  s.begin_rank(1);
  s.recv(0, {Buffer::tmp, 0, 8});
  s.recv(0, {Buffer::tmp, 8, 8});
  s.send(0, {Buffer::data, 0, 8}, {1});
  s.finish();
  return s;
}

} // namespace

TEST_CASE("a second stream lets an operation issue past one that waits", "[core][stream]") {
  const Schedule one = crossing(false);
  CHECK(one.stream_count() == 1);
  CHECK(validate(one).summary().find("deadlock: 6 of 6 operations never complete; rank 0 l0 "
                                     "(recv tmp[0..8) from 1) waits for a message that is never "
                                     "sent") != std::string::npos);
  const Schedule two = crossing(true);
  CHECK(two.stream_count() == 2);
  CHECK(two.stream(2) == 1);
  CHECK(two.stream(1) == 0);
  CHECK(two.op(2).stream == 1);
  CHECK(validate(two).ok());
}

TEST_CASE("streams are written as `stream N` and read back", "[core][stream][schedule]") {
  const Schedule s = crossing(true);
  const std::string text = print_schedule(s);
  CHECK(text.find("  l2: send data[0..8) to 1 stream 1\n") != std::string::npos);
  CHECK(text.find("  l1: send data[0..8) to 1 requires l0\n") != std::string::npos);
  const Schedule back = parse_schedule(text);
  CHECK(back == s);
  CHECK_FALSE(back == crossing(false)); // the stream is part of the operation
}

TEST_CASE("a stream past the IR's 256 is refused, in the text form with its position",
          "[core][stream][schedule]") {
  std::string text = print_schedule(crossing(true));
  text.replace(text.find("stream 1"), 8, "stream 256");
  try {
    (void)parse_schedule(text, "s.sched");
    FAIL("no error");
  } catch (const ScheduleError& e) {
    CHECK(std::string(e.what()) ==
          "s.sched:10:38: error: stream 256 out of range (a rank has at most 256 streams)");
  }
  ScheduleHeader h;
  Schedule s(h);
  s.begin_rank(0);
  CHECK_THROWS_WITH(s.set_stream(256), "stream 256 out of range (a rank has at most 256 streams)");
}

TEST_CASE("lanes list each rank's streams in order, operations in program order",
          "[core][stream]") {
  const Schedule s = crossing(true);
  const Lanes lanes(s);
  REQUIRE(lanes.count() == 3); // rank 0: streams 0 and 1; rank 1: stream 0
  CHECK(lanes.first_lane(0) == 0);
  CHECK(lanes.first_lane(1) == 2);
  CHECK(lanes.first_lane(2) == 3);
  CHECK(lanes.end(0) - lanes.begin(0) == 2);
  CHECK(lanes.op_at(lanes.begin(0)) == 0);
  CHECK(lanes.op_at(lanes.begin(0) + 1) == 1);
  CHECK(lanes.op_at(lanes.begin(1)) == 2);
  CHECK(lanes.rank(2) == 1);
  const Lanes single(crossing(false));
  CHECK(single.count() == 2);
  CHECK(single.op_at(4) == 4); // one stream: positions are operation ids
}

// Connection tags (docs/schedule-format.md): messages match first in first out per (sender,
// receiver, tag), so two FIFOs between the same ranks may be consumed in different orders, as
// MSCCL's channels are; the text form keeps the tag, and untagged schedules match per pair.

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim::core;

namespace {

/// Rank 0 sends 8 bytes on tag `a`, then 16 on tag `b`; rank 1 receives the 16 first (tag b).
Schedule crossed(std::uint32_t a, std::uint32_t b) {
  ScheduleHeader h;
  h.collective = CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = Bytes{24};
  h.data_bytes = 24;
  Schedule s(h);
  s.begin_rank(0);
  s.set_tag(a);
  s.send(1, {Buffer::data, 0, 8});
  s.set_tag(b);
  s.send(1, {Buffer::data, 8, 16});
  s.begin_rank(1);
  s.set_tag(b);
  s.recv(0, {Buffer::data, 8, 16});
  s.set_tag(a);
  s.recv(0, {Buffer::data, 0, 8});
  s.finish();
  return s;
}

} // namespace

TEST_CASE("messages match per connection tag, not per pair alone", "[core][tag][schedule]") {
  const Schedule tagged = crossed(0, 3);
  CHECK(tagged.tag(0) == 0);
  CHECK(tagged.tag(1) == 3);
  CHECK(tagged.tag(2) == 3);
  CHECK(check_semantics(tagged).summary() == "");
  // The same messages on one tag pair crosswise: the lengths disagree.
  const VerifyReport one = validate(crossed(2, 2));
  REQUIRE_FALSE(one.ok());
  CHECK(one.problems.front().find("length mismatch") == 0);
}

TEST_CASE("the text form keeps tags and refuses them where they mean nothing",
          "[core][tag][schedule]") {
  const Schedule s = crossed(5, 0);
  const std::string text = print_schedule(s);
  CHECK(text.find("  l0: send data[0..8) to 1 tag 5\n") != std::string::npos);
  CHECK(text.find("  l1: send data[8..24) to 1\n") != std::string::npos);
  CHECK(parse_schedule(text) == s);
  CHECK_FALSE(parse_schedule(text) == crossed(4, 0)); // the tag is part of the operation
  std::string bad = text;
  bad.replace(bad.find("tag 5"), 5, "tag 256");
  CHECK_THROWS_WITH(parse_schedule(bad, "s.sched"),
                    Catch::Contains("tag 256 out of range (messages have at most 256 tags)"));
  ScheduleHeader h;
  Schedule t(h);
  t.begin_rank(0);
  CHECK_THROWS_WITH(t.set_tag(256), "tag 256 out of range (messages have at most 256 tags)");
  // Local operations carry no tag.
  t.set_tag(7);
  t.calc(Seconds{0.0});
  t.finish();
  CHECK(t.tag(0) == 0);
  CHECK_FALSE(t.tagged());
  const std::string local = "collsim-schedule 1\ncollective allreduce\nalgorithm x\nranks 1\n"
                            "bytes 8\nroot 0\nbuffers data=8 tmp=8\nrank 0 {\n"
                            "  l0: copy data[0..8) -> tmp[0..8) tag 1\n}\n";
  CHECK_THROWS_WITH(parse_schedule(local, "l.sched"),
                    Catch::Contains("only messages (send, recv, recv_reduce) have a tag"));
}

TEST_CASE("the first operation of a schedule keeps its stream and tag", "[core][tag][stream]") {
  ScheduleHeader h;
  h.ranks = 2;
  h.data_bytes = 8;
  Schedule s(h);
  s.begin_rank(0);
  s.set_stream(3);
  s.set_tag(2);
  s.send(1, {Buffer::data, 0, 8});
  s.begin_rank(1);
  s.set_tag(2);
  s.recv(0, {Buffer::data, 0, 8});
  s.finish();
  CHECK(s.stream(0) == 3);
  CHECK(s.tag(0) == 2);
  CHECK(s.stream(1) == 0);
  CHECK(s.stream_count() == 4);
  CHECK(validate(s).summary() == "");
}

#include "collsim/core/verify.hpp"
#include "schedule_fixtures.hpp"

#include <catch2/catch.hpp>

using namespace collsim::core;

namespace {
ScheduleHeader two_rank_header(std::uint64_t n = 8) {
  ScheduleHeader h;
  h.collective = CollectiveKind::allreduce;
  h.ranks = 2;
  h.bytes = Bytes{n};
  h.data_bytes = n;
  h.tmp_bytes = n;
  return h;
}
} // namespace

TEST_CASE("a correct 2-rank exchange allreduce passes both checks", "[core][verify]") {
  const Schedule s = collsim::testing::exchange_allreduce();
  CHECK(validate(s).ok());
  const auto report = check_semantics(s);
  INFO(report.summary());
  CHECK(report.ok());
}

TEST_CASE("validate catches an unmatched send", "[core][verify]") {
  Schedule s(two_rank_header());
  s.begin_rank(0);
  s.send(1, {Buffer::data, 0, 8});
  s.send(1, {Buffer::data, 0, 8});
  s.begin_rank(1);
  s.recv(0, {Buffer::tmp, 0, 8});
  s.finish();
  const auto r = validate(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.summary() ==
        "unmatched send: rank 0 l1 (send data[0..8) to 1) has no matching receive on rank 1");
}

TEST_CASE("validate catches a receive whose length differs from its send", "[core][verify]") {
  Schedule s(two_rank_header());
  s.begin_rank(0);
  s.send(1, {Buffer::data, 0, 8});
  s.begin_rank(1);
  s.recv(0, {Buffer::tmp, 0, 4});
  s.finish();
  CHECK(validate(s).summary() == "length mismatch: rank 0 l0 (send data[0..8) to 1) sends 8 bytes "
                                 "but rank 1 l0 (recv tmp[0..4) from 0) receives 4");
}

TEST_CASE("validate catches a dependency cycle", "[core][verify]") {
  Schedule s(two_rank_header());
  s.begin_rank(0);
  s.copy({Buffer::data, 0, 8}, {Buffer::tmp, 0, 8}, {1});
  s.copy({Buffer::tmp, 0, 8}, {Buffer::data, 0, 8}, {0});
  s.begin_rank(1);
  s.finish();
  CHECK(validate(s).summary() ==
        "dependency cycle: rank 0 l0 (copy data[0..8) -> tmp[0..8)) requires l1, which cannot "
        "issue before it (operations issue in program order)");
}

TEST_CASE("validate catches a deadlock: both ranks wait to receive before sending",
          "[core][verify]") {
  Schedule s(two_rank_header());
  for (Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const auto rx = s.recv(1 - r, {Buffer::tmp, 0, 8});
    s.send(1 - r, {Buffer::data, 0, 8}, {rx});
  }
  s.finish();
  CHECK(validate(s).summary() ==
        "deadlock: 4 of 4 operations never complete; rank 0 l0 (recv tmp[0..8) from 1) waits for a "
        "message that is never sent; rank 1 l0 (recv tmp[0..8) from 0) waits for a message that is "
        "never sent");
}

TEST_CASE("validate catches ranges outside the buffers and messages to oneself", "[core][verify]") {
  Schedule s(two_rank_header());
  s.begin_rank(0);
  s.send(0, {Buffer::data, 4, 8});
  s.begin_rank(1);
  s.finish();
  CHECK(validate(s).summary() ==
        "rank 0 l0 (send data[4..12) to 0): range ends at byte 12 but buffer 'data' has 8 bytes\n"
        "rank 0 l0 (send data[4..12) to 0): a rank cannot message itself (use copy)");
}

TEST_CASE("check_semantics catches a schedule that drops one contribution", "[core][verify]") {
  Schedule s(two_rank_header());
  s.begin_rank(0);
  const auto tx = s.send(1, {Buffer::data, 0, 8});
  const auto rx = s.recv(1, {Buffer::tmp, 0, 8});
  s.reduce({Buffer::tmp, 0, 8}, {Buffer::data, 0, 8}, {tx, rx});
  s.begin_rank(1);
  s.send(0, {Buffer::data, 0, 8});
  s.recv(0, {Buffer::tmp, 0, 8}); // received but never reduced
  s.finish();
  const auto r = check_semantics(s);
  CHECK(r.summary() == "allreduce: rank 1 data[0..8) holds rank 1's contribution, expected the "
                       "reduction of all ranks");
}

TEST_CASE("check_semantics catches a contribution added twice", "[core][verify]") {
  Schedule s(two_rank_header());
  for (Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const auto tx = s.send(1 - r, {Buffer::data, 0, 8});
    const auto rx = s.recv(1 - r, {Buffer::tmp, 0, 8});
    const auto red = s.reduce({Buffer::tmp, 0, 8}, {Buffer::data, 0, 8}, {tx, rx});
    if (r == 0) {
      s.reduce({Buffer::tmp, 0, 8}, {Buffer::data, 0, 8}, {red});
    }
  }
  s.finish();
  CHECK(check_semantics(s).summary() ==
        "allreduce: rank 0 data[0..8) holds a reduction of 3 contributions, expected the reduction "
        "of all ranks");
}

TEST_CASE("check_semantics catches misaligned reductions", "[core][verify]") {
  Schedule s(two_rank_header());
  for (Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, {Buffer::data, 0, 4});
    const auto rx = s.recv(1 - r, {Buffer::tmp, 0, 4});
    s.reduce({Buffer::tmp, 0, 4}, {Buffer::data, 4, 4}, {rx}); // element 0..3 into 4..7
  }
  s.finish();
  const auto r = check_semantics(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.problems.front() ==
        "rank 0 l2 (reduce tmp[0..4) -> data[4..8)): combines misaligned elements at bytes [4..8) "
        "(element 4 of one operand with element 0 of the other)");
}

TEST_CASE("check_semantics checks bcast, allgather and barrier postconditions", "[core][verify]") {
  SECTION("a bcast that forgets rank 2") {
    ScheduleHeader h;
    h.collective = CollectiveKind::bcast;
    h.ranks = 3;
    h.bytes = Bytes{16};
    h.data_bytes = 16;
    Schedule s(h);
    s.begin_rank(0);
    s.send(1, {Buffer::data, 0, 16});
    s.begin_rank(1);
    s.recv(0, {Buffer::data, 0, 16});
    s.finish();
    CHECK(check_semantics(s).summary() ==
          "bcast: rank 2 data[0..16) holds no data, expected rank 0's data");
  }
  SECTION("a 2-rank allgather by exchange of blocks") {
    ScheduleHeader h;
    h.collective = CollectiveKind::allgather;
    h.ranks = 2;
    h.bytes = Bytes{10};
    h.data_bytes = 10;
    Schedule s(h);
    for (Rank r = 0; r < 2; ++r) {
      s.begin_rank(r);
      s.send(1 - r, {Buffer::data, r * 5ULL, 5});
      s.recv(1 - r, {Buffer::data, (1 - r) * 5ULL, 5});
    }
    s.finish();
    CHECK(check_semantics(s).ok());
  }
  SECTION("a barrier where rank 1 never hears from rank 0") {
    ScheduleHeader h;
    h.collective = CollectiveKind::barrier;
    h.ranks = 2;
    Schedule s(h);
    s.begin_rank(0);
    s.recv(1, {Buffer::data, 0, 0});
    s.begin_rank(1);
    s.send(0, {Buffer::data, 0, 0});
    s.finish();
    CHECK(check_semantics(s).summary() == "barrier: rank 1 can leave before rank 0 has entered");
  }
}

TEST_CASE("validate catches a race: a reduction may overwrite data a send still reads",
          "[core][verify]") {
  Schedule s(two_rank_header());
  for (Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, {Buffer::data, 0, 8});
    const auto rx = s.recv(1 - r, {Buffer::tmp, 0, 8});
    s.reduce({Buffer::tmp, 0, 8}, {Buffer::data, 0, 8}, {rx});
  }
  s.finish();
  CHECK(validate(s).summary() ==
        "race: rank 0 l2 (reduce tmp[0..8) -> data[0..8)) may touch bytes that rank 0 l0 (send "
        "data[0..8) to 1) still uses; no dependency orders them");
}

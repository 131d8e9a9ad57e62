#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "schedule_fixtures.hpp"

#include <catch2/catch.hpp>

using namespace collsim::core;

namespace {
const std::string kExchangeText = R"(collsim-schedule 1
collective allreduce
algorithm exchange
ranks 2
bytes 8
root 0
buffers data=8 tmp=8
rank 0 {
  l0: send data[0..8) to 1
  l1: recv tmp[0..8) from 1
  l2: reduce tmp[0..8) -> data[0..8) requires l0 l1
}
rank 1 {
  l0: send data[0..8) to 0
  l1: recv tmp[0..8) from 0
  l2: reduce tmp[0..8) -> data[0..8) requires l0 l1
}
)";

std::string parse_error(const std::string& text) {
  try {
    (void)parse_schedule(text, "t.sched");
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST_CASE("the schedule text form is stable and GOAL-like", "[core][schedule]") {
  CHECK(print_schedule(collsim::testing::exchange_allreduce()) == kExchangeText);
}

TEST_CASE("parsing the printed text gives back the same schedule", "[core][schedule]") {
  const Schedule s = collsim::testing::exchange_allreduce(1000003);
  const Schedule back = parse_schedule(print_schedule(s));
  CHECK(back == s);
  CHECK(print_schedule(back) == print_schedule(s));
}

TEST_CASE("every operation kind and lengths above 4 GiB round-trip", "[core][schedule]") {
  ScheduleHeader h;
  h.collective = CollectiveKind::bcast;
  h.ranks = 3;
  h.root = 1;
  h.bytes = Bytes{5ULL << 30};
  h.data_bytes = 5ULL << 30;
  h.tmp_bytes = 16;
  Schedule s(h);
  s.begin_rank(0);
  s.recv_reduce(1, {Buffer::data, 0, 5ULL << 30});
  s.copy({Buffer::data, 0, 16}, {Buffer::tmp, 0, 16}, {0});
  s.begin_rank(1);
  s.send(0, {Buffer::data, 0, 5ULL << 30});
  s.finish();
  CHECK(s.length(0) == (5ULL << 30));
  CHECK(s.op_count() == 3);
  CHECK(s.rank_end(2) == s.rank_begin(2));
  CHECK(parse_schedule(print_schedule(s)) == s);
}

TEST_CASE("calc: a rank busy for a time, in whole nanoseconds, touching no buffer",
          "[core][schedule]") {
  ScheduleHeader h;
  h.ranks = 2;
  h.bytes = Bytes{8};
  h.data_bytes = 8;
  Schedule s(h);
  s.begin_rank(0);
  const std::uint32_t busy = s.calc(Seconds{2.5e-6});
  s.send(1, {Buffer::data, 0, 8}, {busy});
  s.begin_rank(1);
  s.recv_reduce(0, {Buffer::data, 0, 8});
  s.finish();
  CHECK(s.kind(0) == OpKind::calc);
  CHECK(s.calc_ns(0) == 2500);
  CHECK(s.calc_time(0).value == Approx(2.5e-6));
  CHECK(s.length(0) == 0);
  CHECK(s.op(0).calc_seconds == Approx(2.5e-6));
  const std::string text = print_schedule(s);
  CHECK(text.find("l0: calc 2500ns") != std::string::npos);
  CHECK(parse_schedule(text) == s);
  CHECK(s.calc_time(1).value == 0.0); // not a calc
}

TEST_CASE("schedule parse errors name the line and column", "[core][schedule]") {
  std::string bad = kExchangeText;
  bad.replace(bad.find("l1: recv tmp"), 12, "l1: recx tmp");
  CHECK(parse_error(bad) == "t.sched:10:7: error: unknown operation 'recx' (valid: send, recv, "
                            "recv_reduce, reduce, copy, calc)");
  std::string bad_calc = kExchangeText;
  bad_calc.replace(bad_calc.find("l1: recv tmp"), 12, "l1: calc 5us tmp");
  CHECK(parse_error(bad_calc) == "t.sched:10:13: error: expected 'ns'");
  std::string bad_buf = kExchangeText;
  bad_buf.replace(bad_buf.find("send data"), 9, "send date");
  CHECK(parse_error(bad_buf) == "t.sched:9:12: error: unknown buffer 'date' (valid: data, tmp)");
  CHECK(parse_error("collsim-schedule 2\n") ==
        "t.sched:1:19: error: unsupported schedule format version (this collsim reads version 1)");
  std::string truncated = kExchangeText.substr(0, kExchangeText.find("rank 1"));
  CHECK(parse_error(truncated) == "t.sched:13:1: error: expected 'rank', got ''");
  // A rank count the file cannot hold is refused before anything is set aside for it (a fuzzing
  // finding: 1.4 billion ranks in a 200-byte file reserved 5.6 GB).
  std::string many = kExchangeText;
  many.replace(many.find("ranks 2"), 7, "ranks 1403592656");
  CHECK(parse_error(many).rfind("t.sched:4:", 0) == 0);
  CHECK(parse_error(many).find("error: rank count 1403592656 is more than the file holds") !=
        std::string::npos);
}

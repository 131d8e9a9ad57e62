// The Chrome trace of a hand-built run parses back as the Trace Event Format with the run's exact
// times in microseconds, one track per participant (and per link on a graph topology), and extra
// tracks only where events overlap.

#include "collsim/core/errors.hpp"
#include "collsim/io/chrome_trace.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace core = collsim::core;
using collsim::io::TraceInfo;
using collsim::io::write_chrome_trace;
using core::Bandwidth;
using core::Buffer;
using core::Range;
using core::Seconds;
using nlohmann::json;

constexpr int kRanksPid = 1;
constexpr int kLinksPid = 2;

/// Rank 0: copy data -> tmp, send tmp to 1. Rank 1: recv from 0 into tmp, reduce tmp into data.
/// Operation ids: 0 copy, 1 send (rank 0); 2 recv, 3 reduce (rank 1).
core::Schedule send_recv_reduce() {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::reduce;
  h.ranks = 2;
  h.bytes = core::Bytes{1024};
  h.root = 1;
  h.data_bytes = 1024;
  h.tmp_bytes = 1024;
  h.algorithm = "by-hand";
  core::Schedule s(h);
  const Range data{Buffer::data, 0, 1024};
  const Range tmp{Buffer::tmp, 0, 1024};
  s.begin_rank(0);
  const auto copied = s.copy(data, tmp);
  s.send(1, tmp, {copied});
  s.begin_rank(1);
  const auto received = s.recv(0, tmp);
  s.reduce(tmp, data, {received});
  s.finish();
  return s;
}

core::RunResult timed(std::vector<core::OpTiming> timeline, double time_us) {
  core::RunResult r;
  r.time = Seconds{time_us * 1e-6};
  r.timeline = std::move(timeline);
  return r;
}

core::OpTiming at(core::OpId op, double start_us, double end_us) {
  return {op, Seconds{start_us * 1e-6}, Seconds{end_us * 1e-6}};
}

json trace(const core::Schedule& s, const core::Topology& t, const core::RunResult& r) {
  std::ostringstream out;
  write_chrome_trace(out, s, t, r, TraceInfo{"loggp", "", "textbook"});
  return json::parse(out.str());
}

std::vector<json> events(const json& doc, int pid, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("pid") == pid && e.at("ph") == ph) {
      out.push_back(e);
    }
  }
  return out;
}

/// tid -> the value of metadata event `name` (thread_name: args.name, thread_sort_index:
/// args.sort_index).
std::map<int, json> thread_metadata(const json& doc, int pid, const std::string& name) {
  std::map<int, json> out;
  for (const json& e : events(doc, pid, "M")) {
    if (e.at("name") == name) {
      const json& args = e.at("args");
      out[e.at("tid").get<int>()] = args.contains("name") ? args.at("name") : args.at("sort_index");
    }
  }
  return out;
}

json process_name(const json& doc, int pid) {
  for (const json& e : events(doc, pid, "M")) {
    if (e.at("name") == "process_name") {
      return e.at("args").at("name");
    }
  }
  return nullptr;
}

json named(const std::vector<json>& evs, const std::string& name) {
  json found;
  int count = 0;
  for (const json& e : evs) {
    if (e.at("name") == name) {
      found = e;
      ++count;
    }
  }
  INFO("events named " << name);
  REQUIRE(count == 1);
  return found;
}

/// gpu0 <-> sw <-> gpu1 (one node, PCIe): links 0 gpu0->sw, 1 sw->gpu0, 2 sw->gpu1, 3 gpu1->sw.
core::Topology through_switch() {
  core::Topology t;
  core::Device gpu0;
  gpu0.name = "node0/gpu0";
  gpu0.kind = core::DeviceKind::gpu;
  core::Device sw;
  sw.name = "node0/pcie0";
  sw.kind = core::DeviceKind::pcie_switch;
  core::Device gpu1;
  gpu1.name = "node0/gpu1";
  gpu1.kind = core::DeviceKind::gpu;
  const auto d0 = t.add_device(gpu0);
  const auto ds = t.add_device(sw);
  const auto d1 = t.add_device(gpu1);
  t.add_duplex(d0, ds, Bandwidth{25e9}, Seconds{0.5e-6}, core::LinkKind::pcie);
  t.add_duplex(ds, d1, Bandwidth{25e9}, Seconds{0.5e-6}, core::LinkKind::pcie);
  t.map_ranks({d0, d1});
  return t;
}

core::Topology mesh(std::uint32_t ranks) {
  return core::Topology::full_mesh(ranks, Bandwidth{25e9}, Seconds{1e-6}, core::EndpointParams{});
}

} // namespace

TEST_CASE("a chrome trace has one complete event per operation with its times in microseconds",
          "[io][chrome_trace]") {
  const core::Schedule s = send_recv_reduce();
  const json doc = trace(
      s, mesh(2),
      timed({at(0, 0.0, 0.0), at(1, 0.25, 1.5), at(2, 0.0, 1.5), at(3, 1.5, 2.000001)}, 2.000001));

  CHECK(doc.at("displayTimeUnit") == "ns");
  const json& other = doc.at("otherData");
  CHECK(other.at("collective") == "reduce");
  CHECK(other.at("algorithm") == "by-hand"); // TraceInfo's is empty: the header's
  CHECK(other.at("engine") == "loggp");
  CHECK(other.at("scenario") == "textbook");
  CHECK(other.at("ranks") == 2);
  CHECK(other.at("bytes") == 1024);
  CHECK(other.at("time_us").get<double>() == 2.000001);

  CHECK(process_name(doc, kRanksPid) == "ranks");
  CHECK(process_name(doc, kLinksPid) == nullptr); // a full mesh has no link tracks
  CHECK(events(doc, kLinksPid, "X").empty());
  CHECK(thread_metadata(doc, kRanksPid, "thread_name") ==
        std::map<int, json>{{0, "rank 0"}, {1, "rank 1"}});
  CHECK(thread_metadata(doc, kRanksPid, "thread_sort_index") ==
        std::map<int, json>{{0, 0}, {1, 1}});

  const std::vector<json> ops = events(doc, kRanksPid, "X");
  REQUIRE(ops.size() == 4);

  const json copy = named(ops, "copy");
  CHECK(copy.at("cat") == "copy");
  CHECK(copy.at("tid") == 0);
  CHECK(copy.at("ts").get<double>() == 0.0);
  CHECK(copy.at("dur").get<double>() == 0.0); // zero-duration operations are still shown
  CHECK(copy.at("args") == json{{"bytes", 1024}, {"op", 0}, {"stream", 0}});

  const json send = named(ops, "send -> 1");
  CHECK(send.at("cat") == "send");
  CHECK(send.at("tid") == 0);
  CHECK(send.at("ts").get<double>() == 0.25);
  CHECK(send.at("dur").get<double>() == 1.25);
  CHECK(send.at("args") == json{{"bytes", 1024}, {"op", 1}, {"peer", 1}, {"stream", 0}});

  const json recv = named(ops, "recv <- 0");
  CHECK(recv.at("cat") == "recv");
  CHECK(recv.at("tid") == 1);
  CHECK(recv.at("ts").get<double>() == 0.0);
  CHECK(recv.at("dur").get<double>() == 1.5);
  CHECK(recv.at("args") == json{{"bytes", 1024}, {"op", 0}, {"peer", 0}, {"stream", 0}});

  const json reduce = named(ops, "reduce");
  CHECK(reduce.at("cat") == "reduce");
  CHECK(reduce.at("tid") == 1);
  CHECK(reduce.at("ts").get<double>() == 1.5);
  CHECK(reduce.at("dur").get<double>() == 0.500001); // sub-microsecond resolution is kept
  CHECK(reduce.at("args") == json{{"bytes", 1024}, {"op", 1}, {"stream", 0}});
}

TEST_CASE("a chrome trace on a graph topology has a track per link with the messages crossing it",
          "[io][chrome_trace]") {
  const core::Schedule s = send_recv_reduce();
  core::RunResult r =
      timed({at(0, 0.0, 0.0), at(1, 0.25, 1.5), at(2, 0.0, 1.5), at(3, 1.5, 2.0)}, 2.0);
  r.message_timeline = {{1, Seconds{0.5e-6}, Seconds{1.75e-6}}};
  const json doc = trace(s, through_switch(), r);

  CHECK(events(doc, kRanksPid, "X").size() == 4);
  CHECK(process_name(doc, kLinksPid) == "links");
  // r0 -> r1 crosses gpu0 -> sw (link 0) and sw -> gpu1 (link 2); the idle links get no track.
  CHECK(thread_metadata(doc, kLinksPid, "thread_name") ==
        std::map<int, json>{{0, "node0/gpu0 -> node0/pcie0"}, {2, "node0/pcie0 -> node0/gpu1"}});
  const std::vector<json> messages = events(doc, kLinksPid, "X");
  REQUIRE(messages.size() == 2);
  std::vector<int> tids;
  for (const json& m : messages) {
    tids.push_back(m.at("tid").get<int>());
    CHECK(m.at("name") == "r0 -> r1");
    CHECK(m.at("cat") == "message");
    CHECK(m.at("ts").get<double>() == 0.5);
    CHECK(m.at("dur").get<double>() == 1.25);
    CHECK(m.at("args") == json{{"bytes", 1024}});
  }
  CHECK(tids == std::vector<int>{0, 2});

  SECTION("without a message timeline there are no link tracks") {
    r.message_timeline.clear();
    const json plain = trace(s, through_switch(), r);
    CHECK(process_name(plain, kLinksPid) == nullptr);
    CHECK(events(plain, kLinksPid, "X").empty());
  }
}

TEST_CASE("a chrome trace moves overlapping operations of a rank to extra tracks",
          "[io][chrome_trace]") {
  // Both ranks send to each other and receive-reduce at once: send and recv_reduce overlap, which
  // complete events on one track must not (Perfetto drops them).
  core::ScheduleHeader h;
  h.ranks = 2;
  h.bytes = core::Bytes{64};
  h.data_bytes = 64;
  h.tmp_bytes = 0;
  core::Schedule s(h);
  const Range data{Buffer::data, 0, 64};
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, data);
    s.recv_reduce(1 - r, data);
  }
  s.finish();
  const json doc =
      trace(s, mesh(2), timed({at(0, 0, 2), at(1, 1, 3), at(2, 0, 2), at(3, 1, 3)}, 3.0));

  CHECK(thread_metadata(doc, kRanksPid, "thread_name") ==
        std::map<int, json>{{0, "rank 0"}, {1, "rank 1"}, {2, "rank 0 (2)"}, {3, "rank 1 (2)"}});
  // Each rank's second track sorts right after its first.
  CHECK(thread_metadata(doc, kRanksPid, "thread_sort_index") ==
        std::map<int, json>{{0, 0}, {2, 1}, {1, 2}, {3, 3}});
  std::map<int, std::vector<std::string>> by_tid;
  for (const json& e : events(doc, kRanksPid, "X")) {
    by_tid[e.at("tid").get<int>()].push_back(e.at("name").get<std::string>());
  }
  CHECK(by_tid == std::map<int, std::vector<std::string>>{{0, {"send -> 1"}},
                                                          {1, {"send -> 0"}},
                                                          {2, {"recv_reduce <- 1"}},
                                                          {3, {"recv_reduce <- 0"}}});
  const json rr = named(events(doc, kRanksPid, "X"), "recv_reduce <- 1");
  CHECK(rr.at("cat") == "recv_reduce");
  CHECK(rr.at("ts").get<double>() == 1.0);
  CHECK(rr.at("dur").get<double>() == 2.0);
  CHECK(rr.at("args") == json{{"bytes", 64}, {"op", 1}, {"peer", 1}, {"stream", 0}});

  SECTION("operations that only touch stay on one track") {
    const json touching =
        trace(s, mesh(2), timed({at(0, 0, 1), at(1, 1, 3), at(2, 0, 1), at(3, 1, 3)}, 3.0));
    CHECK(thread_metadata(touching, kRanksPid, "thread_name") ==
          std::map<int, json>{{0, "rank 0"}, {1, "rank 1"}});
  }
}

TEST_CASE("a chrome trace needs the run's operation timeline", "[io][chrome_trace]") {
  const core::Schedule s = send_recv_reduce();
  core::RunResult r;
  r.time = Seconds{2e-6};
  std::ostringstream out;
  CHECK_THROWS_AS(write_chrome_trace(out, s, mesh(2), r, TraceInfo{}), core::UsageError);
  CHECK_THROWS_WITH(write_chrome_trace(out, s, mesh(2), r, TraceInfo{}),
                    "chrome trace: the run recorded no operation timeline; run the engine with "
                    "the timeline option (RunOptions::timeline)");
  CHECK(out.str().empty());
}

TEST_CASE("a chrome trace rejects a timeline that does not fit the schedule",
          "[io][chrome_trace]") {
  const core::Schedule s = send_recv_reduce();
  std::ostringstream out;
  CHECK_THROWS_WITH(write_chrome_trace(out, s, mesh(2), timed({at(7, 0, 1)}, 1.0), TraceInfo{}),
                    "chrome trace: the timeline names operation 7, but the schedule has 4 "
                    "operations");
  core::RunResult r = timed({at(1, 0.25, 1.5)}, 1.5);
  r.message_timeline = {{2, Seconds{0.0}, Seconds{1e-6}}};
  CHECK_THROWS_WITH(write_chrome_trace(out, s, through_switch(), r, TraceInfo{}),
                    "chrome trace: the message timeline names operation 2, which is a recv, not a "
                    "send");
  CHECK(out.str().empty()); // nothing is written before everything is checked
}

// The loggp engine's library-driven port model (core::Protocol): a port per link of the device
// (NCCL's channels drive NVLink and NICs at once), a per-stream rate (one channel's thread
// block), and a network transport's efficiency on messages between nodes; and the two rules the
// simgrid engine shares with it (flow control, a stream's messages one after another, a
// rate-bound message not in before its sender moved it).

#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::Buffer;

namespace {

constexpr double kRate = 10e9;           // B/s per link
constexpr std::uint64_t kM = 10'000'000; // bytes per message: 1 ms on a link

core::Topology mesh(std::uint32_t ranks) {
  return core::Topology::full_mesh(ranks, core::Bandwidth{kRate}, core::Seconds{0.0}, {});
}

/// A broadcast-shaped header of kM bytes on `ranks` ranks under `protocol`.
core::ScheduleHeader header(std::uint32_t ranks, core::Protocol protocol) {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = ranks;
  h.bytes = core::Bytes{kM};
  h.data_bytes = kM;
  h.protocol = std::move(protocol);
  return h;
}

/// NCCL's lowering of a rate-bound protocol: a port per link, each channel at `rate`.
core::Protocol rate_bound(const char* name, double rate) {
  core::Protocol p;
  p.name = name;
  p.port_per_link = true;
  p.stream_bandwidth = core::Bandwidth{rate};
  return p;
}

/// Rank 0 sends kM bytes to each of `to` (on stream i for the i-th), the receivers take them.
core::Schedule fan_out(std::uint32_t ranks, const std::vector<core::Rank>& to,
                       core::Protocol protocol) {
  core::Schedule s(header(ranks, std::move(protocol)));
  s.begin_rank(0);
  for (std::uint32_t i = 0; i < to.size(); ++i) {
    s.set_stream(i);
    s.send(to[i], {Buffer::data, 0, kM});
  }
  for (core::Rank r = 1; r < ranks; ++r) {
    s.begin_rank(r);
    for (std::uint32_t i = 0; i < to.size(); ++i) {
      if (to[i] == r) {
        s.set_stream(i);
        s.recv(0, {Buffer::data, 0, kM});
      }
    }
  }
  s.finish();
  return s;
}

double run(const core::Schedule& s, std::uint32_t ranks) {
  return engines::LogGPEngine{}.run(s, mesh(ranks), {}).time.value;
}

} // namespace

TEST_CASE("with a port per link, messages over different links overlap", "[engines][loggp]") {
  core::Protocol single;
  single.name = "Simple";
  core::Protocol per_link = single;
  per_link.port_per_link = true;
  const double t = static_cast<double>(kM) / kRate;
  // LogGP's single port: the second message leaves after the first.
  CHECK(run(fan_out(3, {1, 2}, single), 3) == Approx(2 * t));
  // A port per link (on a full mesh every peer has its own link): both leave at once.
  CHECK(run(fan_out(3, {1, 2}, per_link), 3) == Approx(t));
  // Two messages over the same link still take turns.
  CHECK(run(fan_out(2, {1, 1}, per_link), 2) == Approx(2 * t));
}

TEST_CASE("a stream rate bounds each channel, and channels share the link", "[engines][loggp]") {
  const core::Protocol p = rate_bound("LL128", kRate / 4);
  const double t = static_cast<double>(kM) / kRate;
  // One channel at a quarter of the link rate: 4 t.
  CHECK(run(fan_out(2, {1}, p), 2) == Approx(4 * t));
  // Two channels over one link: together they need half the link (2 x B/4), so both move at
  // their own rate at once and are done at 4 t, not 8 t (one after the other).
  CHECK(run(fan_out(2, {1, 1}, p), 2) == Approx(4 * t));
  // Eight channels need twice the link: the link is the bound, 8 t.
  CHECK(run(fan_out(2, {1, 1, 1, 1, 1, 1, 1, 1}, p), 2) == Approx(8 * t));
}

TEST_CASE("a network transport's efficiency applies between nodes only", "[engines][loggp]") {
  core::Protocol p;
  p.name = "Simple";
  p.inter_node_efficiency = 0.8;
  const double t = static_cast<double>(kM) / kRate;
  // On a full mesh every rank is a node of its own: kM / 0.8 bytes on the wire.
  CHECK(run(fan_out(2, {1}, p), 2) == Approx(t / 0.8));
}

namespace {

/// Rank 0 sends `count` messages of kM bytes to rank 1 (one stream); rank 1 receives them, each
/// receive waiting `hold` (a local copy of kM bytes at `copy` B/s) before it is issued.
core::Schedule stream_of(std::uint32_t count, core::Protocol protocol, bool slow_receiver) {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = core::Bytes{kM};
  h.data_bytes = kM;
  h.tmp_bytes = kM;
  h.protocol = std::move(protocol);
  core::Schedule s(h);
  s.begin_rank(0);
  for (std::uint32_t i = 0; i < count; ++i) {
    s.send(1, {Buffer::data, 0, kM});
  }
  s.begin_rank(1);
  std::uint32_t last = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (slow_receiver) {
      // The consumer works on each message before it takes the next (a copy of kM bytes).
      const std::uint32_t c = i == 0 ? s.copy({Buffer::tmp, 0, kM}, {Buffer::tmp, 0, kM})
                                     : s.copy({Buffer::tmp, 0, kM}, {Buffer::tmp, 0, kM}, {last});
      last = s.recv(0, {Buffer::data, 0, kM}, {c});
    } else {
      last = s.recv(0, {Buffer::data, 0, kM});
    }
  }
  s.finish();
  return s;
}

core::Topology slow_copy_pair() {
  core::EndpointParams ep;
  ep.copy_bandwidth = core::Bandwidth{kRate / 2}; // a copy of kM takes 2 ms
  return core::Topology::full_mesh(2, core::Bandwidth{kRate}, core::Seconds{0.0}, ep);
}

} // namespace

TEST_CASE("flow control: a sender runs at most fifo_slots messages ahead of its receiver",
          "[engines][loggp][simgrid][fifo]") {
  core::Protocol open;
  open.name = "Simple";
  open.port_per_link = true;
  core::Protocol fifo = open;
  fifo.fifo_slots = 2;
  const double t = static_cast<double>(kM) / kRate; // 1 ms on the wire
  const core::Topology pair = slow_copy_pair();
  // A receiver that takes each message fast: the credits come back in time, nothing changes:
  // four messages back to back.
  CHECK(engines::LogGPEngine{}.run(stream_of(4, open, false), pair, {}).time.value ==
        Approx(4 * t));
  CHECK(engines::LogGPEngine{}.run(stream_of(4, fifo, false), pair, {}).time.value ==
        Approx(4 * t));
  // A receiver that copies for 2 ms before each receive: it issues receive i at 2(i + 1) ms, and
  // the run ends at 8 ms either way. Without flow control the sender's messages leave at 0, 1, 2
  // and 3 ms; with two slots message i >= 2 waits for receive i - 2 (done at 2(i - 1) ms):
  // message 2 leaves at 2 ms, message 3 at 4 ms instead of 3 ms.
  core::RunOptions timeline;
  timeline.timeline = true;
  const core::Schedule open_run = stream_of(4, open, true);
  const core::Schedule fifo_run = stream_of(4, fifo, true);
  const auto a = engines::LogGPEngine{}.run(open_run, pair, timeline);
  const auto b = engines::LogGPEngine{}.run(fifo_run, pair, timeline);
  CHECK(a.time.value == Approx(8 * t));
  CHECK(b.time.value == Approx(8 * t));
  // Rank 0's fourth send (operation 3): its start.
  CHECK(a.timeline.at(3).start.value == Approx(3 * t));
  CHECK(b.timeline.at(3).start.value == Approx(4 * t));
  CHECK(b.timeline.at(2).start.value == Approx(2 * t));
  // The simgrid engine applies the same bound: without it the four sends leave one after
  // another, the channel's thread block moving one message at a time (at 3 ms, as on loggp;
  // until 2026-12-05 an unrated channel's sends started at once and their flows shared the
  // link); with two slots sends 2 and 3 start at 2 and 4 ms, as on loggp.
  const auto sa = engines::SimgridEngine{}.run(open_run, pair, timeline);
  const auto sb = engines::SimgridEngine{}.run(fifo_run, pair, timeline);
  CHECK(sa.timeline.at(3).start.value == Approx(3 * t));
  CHECK(sb.timeline.at(2).start.value == Approx(2 * t));
  CHECK(sb.timeline.at(3).start.value == Approx(4 * t));
  CHECK(sb.time.value == Approx(8 * t));
}

TEST_CASE("flow control turns a program that waits for its own later sends into a deadlock, "
          "reported as one",
          "[engines][loggp][fifo]") {
  // Each rank sends three messages to the other before it receives any: fine with unbounded
  // buffers or three slots, a deadlock with two slots per connection (as NCCL would hang).
  const auto exchange = [](std::uint32_t slots) {
    core::ScheduleHeader h;
    h.collective = core::CollectiveKind::bcast;
    h.ranks = 2;
    h.bytes = core::Bytes{kM};
    h.data_bytes = kM;
    h.protocol.name = "Simple";
    h.protocol.fifo_slots = slots;
    core::Schedule s(h);
    for (core::Rank r = 0; r < 2; ++r) {
      s.begin_rank(r);
      for (int i = 0; i < 3; ++i) {
        s.send(1 - r, {Buffer::data, 0, kM});
      }
      for (int i = 0; i < 3; ++i) {
        s.recv(1 - r, {Buffer::tmp, 0, kM});
      }
    }
    s.finish();
    return s;
  };
  CHECK_THROWS_WITH(engines::LogGPEngine{}.run(exchange(2), mesh(2), {}),
                    Catch::Contains("stalled at operation l2") && Catch::Contains("deadlocks"));
  CHECK(engines::LogGPEngine{}.run(exchange(3), mesh(2), {}).time.value > 0.0);
}

TEST_CASE("a stream's messages leave one after another at its rate, on both engines",
          "[engines][simgrid]") {
  // One channel (stream 0) of rank 0 feeds two peers over two links, as a tree channel feeds its
  // children from one copy loop, at a quarter of the link rate: on both engines the second
  // message leaves when the channel has moved the first (4 t), and the sender is done at 8 t.
  // (Until 2026-12-04 simgrid sent both at once at the link rate, done at t: SimGrid 3.32
  // ignores a host-to-host comm's rate.)
  const core::Protocol p = rate_bound("LL128", kRate / 4);
  const auto one_stream = [&](std::uint32_t peers) {
    core::ScheduleHeader h;
    h.collective = core::CollectiveKind::bcast;
    h.ranks = peers + 1;
    h.bytes = core::Bytes{kM};
    h.data_bytes = kM;
    h.protocol = p;
    core::Schedule s(h);
    s.begin_rank(0);
    for (core::Rank r = 1; r <= peers; ++r) {
      s.send(r, {Buffer::data, 0, kM});
    }
    for (core::Rank r = 1; r <= peers; ++r) {
      s.begin_rank(r);
      s.recv(0, {Buffer::data, 0, kM});
    }
    s.finish();
    return s;
  };
  const double t = static_cast<double>(kM) / kRate;
  CHECK(engines::LogGPEngine{}.run(one_stream(1), mesh(2), {}).time.value == Approx(4 * t));
  CHECK(engines::SimgridEngine{}.run(one_stream(1), mesh(2), {}).time.value == Approx(4 * t));
  CHECK(engines::LogGPEngine{}.run(one_stream(2), mesh(3), {}).time.value == Approx(8 * t));
  CHECK(engines::SimgridEngine{}.run(one_stream(2), mesh(3), {}).time.value == Approx(8 * t));
  // Channels of their own (fan_out puts each message on its stream): each at its rate, 4 t; eight
  // of them need twice the link, 8 t, as on loggp.
  CHECK(engines::SimgridEngine{}.run(fan_out(2, {1, 1}, p), mesh(2), {}).time.value ==
        Approx(4 * t));
  CHECK(engines::SimgridEngine{}
            .run(fan_out(2, {1, 1, 1, 1, 1, 1, 1, 1}, p), mesh(2), {})
            .time.value == Approx(8 * t));
}

TEST_CASE("a channel that runs ahead does not hold another channel's message behind its backlog",
          "[engines][loggp]") {
  // Rank 0 feeds rank 1 over one link on two channels at half the link rate: channel 0 has four
  // messages ready at once, channel 1 one. Channel 0's block moves its messages at 0, 2 t, 4 t
  // and 6 t, each for t on the link, so the link is free between them: channel 1's message takes
  // the first free stretch and is done at 2 t, its own rate's bound. (Until 2026-12-04 loggp
  // booked channel 0's four messages on the link back to back when it reached them, and
  // channel 1's waited for all four: done at 5 t.)
  core::Schedule s(header(2, rate_bound("LL128", kRate / 2)));
  s.begin_rank(0);
  for (std::uint32_t stream : {0, 0, 0, 0, 1}) {
    s.set_stream(stream);
    s.send(1, {Buffer::data, 0, kM});
  }
  s.begin_rank(1);
  for (std::uint32_t stream : {0, 0, 0, 0, 1}) {
    s.set_stream(stream);
    s.recv(0, {Buffer::data, 0, kM});
  }
  s.finish();
  core::RunOptions timeline;
  timeline.timeline = true;
  const double t = static_cast<double>(kM) / kRate;
  const auto r = engines::LogGPEngine{}.run(s, mesh(2), timeline);
  CHECK(r.timeline.at(4).end.value == Approx(2 * t)); // channel 1's send
  CHECK(r.timeline.at(3).end.value == Approx(8 * t)); // channel 0's last: starts at 6 t
}

TEST_CASE("a rate-bound channel's message is not all in before its sender has moved it, on both "
          "engines",
          "[engines][simgrid]") {
  // Rank 0 sends to rank 1 at a quarter of the link rate; rank 1 forwards what it received to
  // rank 2 the same way. The data reaches rank 1 at 4 t (the sender's block moves it), so the
  // relay ends at 8 t. (Until 2026-12-04 simgrid handed rank 1 the data when the flow ended, at
  // the link rate, t: the relay ended at 5 t while loggp said 8 t.)
  core::Schedule s(header(3, rate_bound("LL", kRate / 4)));
  s.begin_rank(0);
  s.send(1, {Buffer::data, 0, kM});
  s.begin_rank(1);
  const std::uint32_t in = s.recv(0, {Buffer::data, 0, kM});
  s.send(2, {Buffer::data, 0, kM}, {in});
  s.begin_rank(2);
  s.recv(1, {Buffer::data, 0, kM});
  s.finish();
  const double t = static_cast<double>(kM) / kRate;
  CHECK(engines::LogGPEngine{}.run(s, mesh(3), {}).time.value == Approx(8 * t));
  CHECK(engines::SimgridEngine{}.run(s, mesh(3), {}).time.value == Approx(8 * t));
}

TEST_CASE("channels that together ask for more than the link take it in the order their messages "
          "start, on both engines",
          "[engines][simgrid]") {
  // Rank 0 feeds rank 1 over one link on three channels at 0.4 of the link rate each (1.2 links'
  // worth), four messages a channel, all ready at once. The link is the bound: 12 messages of t
  // each. Each channel's message waits in the event queue until its channel can start it, so the
  // link is booked in start order: the channels take turns. (Until 2026-12-04 a channel's four
  // messages booked the link when the engine reached them, at 0, 2.5 t, 5 t and 7.5 t; the third
  // channel found only gaps shorter than a message before 9.5 t and ended at 18 t.)
  core::Schedule s(header(2, rate_bound("LL128", 0.4 * kRate)));
  s.begin_rank(0);
  for (std::uint32_t stream : {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}) {
    s.set_stream(stream);
    s.send(1, {Buffer::data, 0, kM});
  }
  s.begin_rank(1);
  for (std::uint32_t stream : {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}) {
    s.set_stream(stream);
    s.recv(0, {Buffer::data, 0, kM});
  }
  s.finish();
  const double t = static_cast<double>(kM) / kRate;
  const double loggp = engines::LogGPEngine{}.run(s, mesh(2), {}).time.value;
  CHECK(loggp == Approx(12 * t));
  CHECK(engines::SimgridEngine{}.run(s, mesh(2), {}).time.value == Approx(loggp).epsilon(0.02));
}

TEST_CASE("a channel's next message waits for the flow of its previous one, which pays its route "
          "latency once, on both engines",
          "[engines][simgrid]") {
  // One channel of rank 0 at 4x the link rate sends three messages to rank 1 over one link of
  // latency L. The block could move each in t / 4, but the link carries one at a time: the
  // messages are in at t + L, 2 t + L and 3 t + L. (Until 2026-12-05 simgrid started a flow per
  // message as the block moved it and the three shared the link: the first was in at about
  // 2.4 t + L. Serialised flows that each paid SimGrid's latency first would end at 3 (t + L).)
  const double t = static_cast<double>(kM) / kRate;
  const double latency = t / 10;
  const core::Topology topo =
      core::Topology::full_mesh(2, core::Bandwidth{kRate}, core::Seconds{latency}, {});
  core::Schedule s(header(2, rate_bound("LL128", 4 * kRate)));
  s.begin_rank(0);
  for (int i = 0; i < 3; ++i) {
    s.send(1, {Buffer::data, 0, kM});
  }
  s.begin_rank(1);
  for (int i = 0; i < 3; ++i) {
    s.recv(0, {Buffer::data, 0, kM});
  }
  s.finish();
  core::RunOptions timeline;
  timeline.timeline = true;
  for (const bool simgrid : {false, true}) {
    INFO((simgrid ? "simgrid" : "loggp"));
    const auto r = simgrid ? engines::SimgridEngine{}.run(s, topo, timeline)
                           : engines::LogGPEngine{}.run(s, topo, timeline);
    CHECK(r.timeline.at(3).end.value == Approx(t + latency)); // rank 1's first receive
    CHECK(r.timeline.at(4).end.value == Approx(2 * t + latency));
    CHECK(r.time.value == Approx(3 * t + latency));
  }
  // Where SimGrid is asked to scale latencies (a latency factor, a TCP window, LV08), its flows
  // keep them, and each message of the channel waits for its predecessor's: 3 (t + L) with a
  // factor of 1.
  core::SimgridSpec scaled;
  scaled.latency_factor = 1.0;
  CHECK(engines::SimgridEngine{scaled}.run(s, topo, {}).time.value == Approx(3 * (t + latency)));
}

TEST_CASE("a channel without a rate writes to two peers at once, and to one peer one message after "
          "another, on both engines",
          "[engines][simgrid]") {
  // One channel (stream 0) of rank 0 under NCCL's Simple with a port per link and no stream
  // rate: a tree's parent feeding two children from one copy loop. Rank 0 has a link of its own
  // to each child: the two messages take t together (loggp's two ports; simgrid's two flows).
  // Two messages to one peer go one after another: 2 t. (On simgrid until 2026-12-05 a channel's
  // messages went one after another whatever the peer, 2 t for the first case: NVLS-tree at 8 GiB
  // on 16 H100s came out 33 % slower than on loggp.)
  core::Topology star;
  std::vector<core::DeviceId> ranks;
  for (const char* name : {"r0", "r1", "r2"}) {
    core::Device d;
    d.name = name;
    ranks.push_back(star.add_device(d));
  }
  for (const std::size_t child : {1, 2}) {
    star.add_duplex(ranks[0], ranks[child], core::Bandwidth{kRate}, core::Seconds{0.0},
                    core::LinkKind::generic);
  }
  star.map_ranks(ranks);
  core::Protocol simple;
  simple.name = "Simple";
  simple.port_per_link = true;
  const double t = static_cast<double>(kM) / kRate;
  core::Schedule two_peers(header(3, simple));
  two_peers.begin_rank(0);
  two_peers.send(1, {Buffer::data, 0, kM});
  two_peers.send(2, {Buffer::data, 0, kM});
  for (core::Rank r = 1; r < 3; ++r) {
    two_peers.begin_rank(r);
    two_peers.recv(0, {Buffer::data, 0, kM});
  }
  two_peers.finish();
  core::Schedule one_peer(header(3, simple));
  one_peer.begin_rank(0);
  one_peer.send(1, {Buffer::data, 0, kM});
  one_peer.send(1, {Buffer::data, 0, kM});
  one_peer.begin_rank(1);
  one_peer.recv(0, {Buffer::data, 0, kM});
  one_peer.recv(0, {Buffer::data, 0, kM});
  one_peer.begin_rank(2);
  one_peer.finish();
  for (const bool simgrid : {false, true}) {
    INFO((simgrid ? "simgrid" : "loggp"));
    const auto run_on = [&](const core::Schedule& s) {
      return simgrid ? engines::SimgridEngine{}.run(s, star, {}).time.value
                     : engines::LogGPEngine{}.run(s, star, {}).time.value;
    };
    CHECK(run_on(two_peers) == Approx(t));
    CHECK(run_on(one_peer) == Approx(2 * t));
  }
}

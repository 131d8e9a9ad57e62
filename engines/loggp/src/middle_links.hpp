#pragma once
// Links in the middle of routes inside a node that several ports send over (internal to the
// loggp engine; loggp_engine.cpp books them).
//
// With a port per link (core::Protocol::port_per_link) a GPU's messages leave through the first
// link of their route and arrive through the last, each link a port of its own. A link between
// them can still be crossed by messages from several ports: the uplink of a PCIe switch to the
// CPU when peer-to-peer is off, the CPU's links when two switches exchange, an intermediate GPU's
// NVLink. NCCL's topology search books every channel's bandwidth on each link of its path
// (src/graph/search.cc, followPath subtracts the channel's bandwidth from every link it crosses),
// and the hardware serves what crosses at once; LogGP's ports alone would let every sender use
// such a link at its full rate. So a middle link that two or more first links send over gets a
// calendar of its own (PortCalendar): a message takes its wire time on it at the first free
// stretch from when it starts, and its data reaches the receiver no earlier than the end of that
// stretch. Messages that do not overlap in time keep the full rate (a reduce followed by a
// broadcast over one uplink), which a static share of the link could not tell apart.
//
// Between nodes only a NIC's own links are booked so, where several GPUs of its node use the NIC
// (p4d: two GPUs a card, aws-p4d's PCIe layout; A3 High): the senders of one node share its
// outgoing links, the receivers of one node its incoming ones, as their traffic shares the card.
// A NIC that one GPU uses, the fabric's links and the links a NIC's traffic meets from other
// nodes are the simgrid engine's to share (as the ports between nodes always were).

#include "loggp_state.hpp"

#include <map>
#include <optional>
#include <set>
#include <span>

namespace collsim::engines::loggp_detail {

class MiddleLinks {
public:
  /// One shared link of a route: its calendar and its rate.
  struct Hop {
    std::uint32_t calendar;
    double bytes_per_second;
  };

  MiddleLinks() = default;
  /// The shared middle links of every ordered pair of ranks that exchange a message inside one
  /// node; `devices` is the device of each participant.
  MiddleLinks(const core::Schedule& s, const core::Topology& t,
              const std::vector<core::DeviceId>& devices) {
    if (t.is_full_mesh()) {
      return; // every pair has its own link: nothing in the middle
    }
    std::set<std::pair<Rank, Rank>> pairs;
    // A collapsed schedule's routes run to its messages' route peers (core/collapse.hpp); every
    // partner inside a representative's node is a representative (analysis/src/collapse.cpp).
    const std::uint32_t ranks =
        s.header().collapse.active() ? s.header().collapse.ranks : s.ranks();
    for (Rank r = 0; r < s.ranks(); ++r) {
      for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
        const Rank peer = s.route_peer(id);
        if (s.kind(id) == OpKind::send && peer < ranks && peer != r) {
          pairs.emplace(r, peer);
        }
      }
    }
    std::map<std::pair<Rank, Rank>, std::vector<core::LinkId>> routes;
    // Middle link -> the ports that use it: first links inside a node; for a NIC's links between
    // nodes, the first (sending node) or last (receiving node) links of its own GPUs.
    std::map<core::LinkId, std::set<core::LinkId>> ports;
    for (const auto& pair : pairs) {
      std::vector<core::LinkId> path = t.route_between(devices[pair.first], devices[pair.second]);
      const std::uint32_t from_node = t.devices()[devices[pair.first]].node;
      const bool between = from_node != t.devices()[devices[pair.second]].node;
      for (std::size_t i = 1; i + 1 < path.size(); ++i) {
        if (!between) {
          ports[path[i]].insert(path.front());
        } else if (const std::optional<std::uint32_t> nic_node = nic_node_of(t, path[i])) {
          // A NIC's own links, counted by the GPUs of its node that use them: the senders' first
          // links on the sending node, the receivers' last links on the receiving one.
          ports[path[i]].insert(*nic_node == from_node ? path.front() : path.back());
        }
      }
      routes.emplace(pair, std::move(path));
    }
    std::map<core::LinkId, std::uint32_t> calendar_of;
    for (const auto& [pair, path] : routes) {
      std::vector<Hop> hops;
      for (std::size_t i = 1; i + 1 < path.size(); ++i) {
        const auto used = ports.find(path[i]);
        if (used == ports.end() || used->second.size() < 2) {
          continue;
        }
        const auto [it, added] =
            calendar_of.emplace(path[i], static_cast<std::uint32_t>(calendar_of.size()));
        hops.push_back({it->second, t.links()[path[i]].bandwidth.bytes_per_second});
      }
      if (!hops.empty()) {
        hops_.emplace((static_cast<std::uint64_t>(pair.first) << 32) | pair.second,
                      std::move(hops));
      }
    }
    calendars_.resize(calendar_of.size());
  }

  [[nodiscard]] bool empty() const { return hops_.empty(); }

  /// Books `bytes` from a to b on each shared middle link of their route, at its first free
  /// stretch from `from` (stretches ending before `horizon` are forgotten); returns when the
  /// last of them ends, `from` where the route has none.
  double book(Rank a, Rank b, std::uint64_t bytes, double from, double horizon) {
    const auto it = hops_.find((static_cast<std::uint64_t>(a) << 32) | b);
    if (it == hops_.end()) {
      return from;
    }
    double end = from;
    for (const Hop& h : it->second) {
      end = std::max(end, calendars_[h.calendar].reserve(
                              from, static_cast<double>(bytes) / h.bytes_per_second, horizon));
    }
    return end;
  }

private:
  /// The node of the NIC at one end of link `l` (a NIC's PCIe link or its link to the fabric),
  /// nullopt for links between other devices.
  static std::optional<std::uint32_t> nic_node_of(const core::Topology& t, core::LinkId l) {
    const core::Link& k = t.links()[l];
    for (const core::DeviceId d : {k.from, k.to}) {
      if (t.devices()[d].kind == core::DeviceKind::nic) {
        return t.devices()[d].node;
      }
    }
    return std::nullopt;
  }

  std::unordered_map<std::uint64_t, std::vector<Hop>> hops_;
  std::vector<PortCalendar> calendars_;
};

} // namespace collsim::engines::loggp_detail

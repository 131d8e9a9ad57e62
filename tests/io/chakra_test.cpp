// Chakra ET export (issue 22, io/chakra.hpp), read back with a protobuf wire decoder written
// here: the framing, the node types and attributes ASTRA-sim's feeder reads, dependencies that
// point backwards, and sends and receives that pair by (source, destination, tag) exactly as
// collsim pairs them, for every registered algorithm that runs on the ranks alone.

#include "registry_schedules.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/io/chakra.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace collsim;

namespace {

struct Reader {
  const std::string& bytes;
  std::size_t at = 0;
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      REQUIRE(at < bytes.size());
      const auto b = static_cast<unsigned char>(bytes[at++]);
      v |= std::uint64_t{b & 0x7fU} << shift;
      if ((b & 0x80U) == 0) {
        return v;
      }
    }
  }
  std::string chunk() {
    const std::uint64_t n = varint();
    REQUIRE(at + n <= bytes.size());
    std::string out = bytes.substr(at, n);
    at += n;
    return out;
  }
};

/// field -> values (varints as numbers, length-delimited as bytes), in order.
struct Fields {
  std::multimap<std::uint32_t, std::uint64_t> numbers;
  std::multimap<std::uint32_t, std::string> strings;
};

Fields decode(const std::string& message) {
  Fields f;
  Reader r{message};
  while (r.at < message.size()) {
    const std::uint64_t key = r.varint();
    const auto field = static_cast<std::uint32_t>(key >> 3);
    switch (key & 7) {
    case 0: f.numbers.emplace(field, r.varint()); break;
    case 2: f.strings.emplace(field, r.chunk()); break;
    default: FAIL("unexpected wire type " << (key & 7));
    }
  }
  return f;
}

struct Node {
  std::uint64_t id = 0;
  std::uint64_t type = 0;
  std::uint64_t duration = 0;
  std::vector<std::uint64_t> deps;
  std::map<std::string, std::uint64_t> attrs; ///< name -> the value of the field the feeder reads
  std::map<std::string, std::uint32_t> attr_field;
};

/// The schema string and the nodes of one ET file.
std::pair<std::string, std::vector<Node>> read_et(const std::string& file) {
  Reader r{file};
  const Fields meta = decode(r.chunk());
  REQUIRE(meta.strings.count(2) == 1);
  const Fields schema = decode(meta.strings.find(2)->second);
  REQUIRE(schema.strings.find(1)->second == "schema");
  std::vector<Node> nodes;
  while (r.at < file.size()) {
    const Fields f = decode(r.chunk());
    Node n;
    n.id = f.numbers.find(1)->second;
    n.type = f.numbers.find(3)->second;
    if (const auto d = f.numbers.find(7); d != f.numbers.end()) {
      n.duration = d->second;
    }
    if (const auto deps = f.strings.find(5); deps != f.strings.end()) {
      Reader dr{deps->second};
      while (dr.at < deps->second.size()) {
        n.deps.push_back(dr.varint());
      }
    }
    for (auto [it, end] = f.strings.equal_range(10); it != end; ++it) {
      const Fields a = decode(it->second);
      const std::string name = a.strings.find(1)->second;
      REQUIRE(a.numbers.size() == 1);
      n.attrs[name] = a.numbers.begin()->second;
      n.attr_field[name] = a.numbers.begin()->first;
    }
    nodes.push_back(std::move(n));
  }
  return {schema.strings.find(29)->second, nodes};
}

/// Checks one exported schedule; returns the number of messages.
std::size_t check_export(const core::Schedule& s, const std::vector<std::string>& files) {
  REQUIRE(files.size() == s.ranks());
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::uint64_t> sends;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::uint64_t> recvs;
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    const auto [schema, nodes] = read_et(files[r]);
    CHECK(schema == "1.0.2-chakra.1.0.0");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      CHECK(n.id == i);
      for (const std::uint64_t d : n.deps) {
        CHECK(d < n.id); // ASTRA-sim resolves a dependency on a node it has already read
      }
      CHECK(n.attrs.at("is_cpu_op") == 0);
      CHECK(n.attr_field.at("is_cpu_op") == 27); // bool_val
      if (n.type == 5 || n.type == 6) {
        // The feeder reads comm_src/dst/tag as int32_val (7) and comm_size as int64_val (9).
        CHECK(n.attr_field.at("comm_src") == 7);
        CHECK(n.attr_field.at("comm_dst") == 7);
        CHECK(n.attr_field.at("comm_tag") == 7);
        CHECK(n.attr_field.at("comm_size") == 9);
        const auto k =
            std::make_tuple(n.attrs.at("comm_src"), n.attrs.at("comm_dst"), n.attrs.at("comm_tag"));
        CHECK((n.type == 5 ? n.attrs.at("comm_src") : n.attrs.at("comm_dst")) == r);
        auto& side = n.type == 5 ? sends : recvs;
        CHECK(side.count(k) == 0);
        side[k] = n.attrs.at("comm_size");
      } else {
        CHECK(n.type == 4);
      }
    }
  }
  CHECK(sends == recvs); // every message meets one receive of its size
  return sends.size();
}

} // namespace

TEST_CASE("Chakra export: framing, node types, attributes and dependencies ASTRA-sim reads",
          "[io][chakra][interchange]") {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::allreduce;
  h.ranks = 2;
  h.bytes = core::Bytes{2000};
  h.data_bytes = 2000;
  h.algorithm = "pair";
  core::Schedule s(h);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const std::uint32_t sent = s.send(1 - r, {core::Buffer::data, 0, 1000});
    s.send(1 - r, {core::Buffer::data, 1000, 1000});
    const std::uint32_t got = s.recv_reduce(1 - r, {core::Buffer::data, 0, 1000}, {sent});
    s.recv(1 - r, {core::Buffer::data, 1000, 1000});
    s.calc(core::Seconds{2.6e-6}, std::vector<std::uint32_t>{got});
  }
  s.finish();
  io::ChakraExportOptions rates;
  rates.reduce_bandwidth = core::Bandwidth{1e9}; // 1000 B: 1 us
  const auto files = io::write_chakra(s, rates);
  CHECK(check_export(s, files) == 4);
  const auto [schema, nodes] = read_et(files[0]);
  REQUIRE(nodes.size() == 6);
  // send, send, recv, its reduction (COMP after the recv), recv, calc (after the reduction)
  CHECK(nodes[0].type == 5);
  CHECK(nodes[1].attrs.at("comm_tag") == 1); // the second message of the pair 0 -> 1
  CHECK(nodes[2].type == 6);
  CHECK(nodes[2].deps == std::vector<std::uint64_t>{0});
  CHECK(nodes[3].type == 4);
  CHECK(nodes[3].deps == std::vector<std::uint64_t>{2});
  CHECK(nodes[3].duration == 1);
  CHECK(nodes[4].attrs.at("comm_tag") == 1);
  CHECK(nodes[5].type == 4);
  CHECK(nodes[5].duration == 3); // 2.6 us, to the nearest microsecond
  CHECK(nodes[5].deps == std::vector<std::uint64_t>{3});
}

TEST_CASE("every registered algorithm that runs on the ranks alone exports to Chakra with its "
          "messages paired",
          "[io][chakra][interchange]") {
  std::size_t exported = 0;
  std::size_t refused = 0;
  testing::for_each_registered_schedule({2, 5, 16}, [&](const algorithms::AlgorithmInfo& algo,
                                                        std::uint32_t p, const core::Schedule& s) {
    if (!s.header().agents.empty()) {
      CHECK_THROWS_AS(io::write_chakra(s), core::UsageError);
      ++refused;
      return;
    }
    INFO(fmt::format("{} {} on {} ranks", core::to_string(algo.collective), algo.name, p));
    check_export(s, io::write_chakra(s));
    ++exported;
  });
  CHECK(exported > 250);
  CHECK(refused > 0);
}

// collsim schedules as Chakra execution traces (chakra.hpp). Field numbers and attribute names
// and types from mlcommons/chakra @ 21585d8: schema/protobuf/et_def.proto (Node: id 1, name 2,
// type 3, data_deps 5, duration_micros 7, attr 10; AttributeProto: name 1, int32_val 7, int64_val
// 9, bool_val 27, string_val 29; GlobalMetadata: version 1, attr 2; NodeType COMP_NODE 4,
// COMM_SEND_NODE 5, COMM_RECV_NODE 6), src/feeder/et_feeder_node.cpp (which attribute it reads with
// which type: a wrong type silently reads 0), src/third_party/utils/protoio.cc (a varint32 length
// before each message) and src/converter/text_converter.py (the schema string it writes).

#include "collsim/io/chakra.hpp"

#include "collsim/core/errors.hpp"

#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <tuple>
#include <utility>

namespace collsim::io {
namespace {

constexpr const char* kSchema = "1.0.2-chakra.1.0.0";

enum : std::uint32_t { kVarint = 0, kLengthDelimited = 2 };
enum NodeType : std::uint64_t { kComp = 4, kSend = 5, kRecv = 6 };

void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void key(std::string& out, std::uint32_t field, std::uint32_t wire) {
  varint(out, (std::uint64_t{field} << 3) | wire);
}

void varint_field(std::string& out, std::uint32_t field, std::uint64_t v) {
  key(out, field, kVarint);
  varint(out, v);
}

void bytes_field(std::string& out, std::uint32_t field, const std::string& bytes) {
  key(out, field, kLengthDelimited);
  varint(out, bytes.size());
  out += bytes;
}

/// AttributeProto with an int32 (comm_src, comm_dst, comm_tag), int64 (comm_size) or bool value.
/// Negative int32/int64 values are not written (none of ours are).
std::string int_attr(const char* name, std::uint32_t value_field, std::uint64_t v) {
  std::string a;
  bytes_field(a, 1, name);
  varint_field(a, value_field, v);
  return a;
}

std::string string_attr(const char* name, const std::string& v) {
  std::string a;
  bytes_field(a, 1, name);
  bytes_field(a, 29, v);
  return a;
}

constexpr std::uint32_t kInt32Val = 7;
constexpr std::uint32_t kInt64Val = 9;
constexpr std::uint32_t kBoolVal = 27;

/// Appends `message` preceded by its length (protoio.cc's WriteVarint32 framing).
void framed(std::string& out, const std::string& message) {
  varint(out, message.size());
  out += message;
}

std::uint64_t micros(double seconds) {
  return seconds <= 0.0 ? 0 : static_cast<std::uint64_t>(std::llround(seconds * 1e6));
}

double work_seconds(std::uint64_t bytes, core::Bandwidth rate) {
  return rate.bytes_per_second <= 0.0 ? 0.0 : static_cast<double>(bytes) / rate.bytes_per_second;
}

struct NodeSpec {
  std::uint64_t id = 0;
  std::string name;
  NodeType type = kComp;
  std::vector<std::uint64_t> deps;
  std::uint64_t duration_us = 0;
  std::vector<std::string> attrs;
};

std::string node_message(const NodeSpec& n) {
  std::string m;
  varint_field(m, 1, n.id);
  bytes_field(m, 2, n.name);
  varint_field(m, 3, n.type);
  if (!n.deps.empty()) {
    std::string packed;
    for (const std::uint64_t d : n.deps) {
      varint(packed, d);
    }
    bytes_field(m, 5, packed); // data_deps, packed (proto3's repeated scalar encoding)
  }
  if (n.duration_us > 0) {
    varint_field(m, 7, n.duration_us);
  }
  for (const std::string& a : n.attrs) {
    bytes_field(m, 10, a);
  }
  return m;
}

} // namespace

std::vector<std::string> write_chakra(const core::Schedule& s, const ChakraExportOptions& options) {
  using core::OpKind;
  if (!s.header().agents.empty()) {
    throw core::UsageError(
        fmt::format("{}: Chakra has no in-network agent (this schedule has {}: {}); export an "
                    "algorithm that runs on the ranks alone",
                    s.header().algorithm, s.header().agents.size(), s.header().agents.front()));
  }
  const std::uint32_t p = s.ranks();
  // Each message's ordinal within its ordered pair, in collsim's matching order (program order).
  std::map<std::tuple<core::Rank, core::Rank, std::uint32_t>, std::uint32_t> sent;
  std::map<std::tuple<core::Rank, core::Rank, std::uint32_t>, std::uint32_t> received;
  std::vector<std::string> files(p);
  for (core::Rank r = 0; r < p; ++r) {
    std::string& out = files[r];
    std::string metadata;
    bytes_field(metadata, 2, string_attr("schema", kSchema));
    framed(out, metadata);
    const core::OpId first = s.rank_begin(r);
    // The Chakra node that completes each operation (a recv_reduce's COMP node).
    std::vector<std::uint64_t> done(s.rank_end(r) - first);
    std::uint64_t next_id = 0;
    for (core::OpId id = first; id < s.rank_end(r); ++id) {
      const std::size_t k = id - first;
      NodeSpec n;
      n.id = next_id++;
      for (const std::uint32_t d : s.deps(id)) {
        n.deps.push_back(done[d]);
      }
      const std::uint64_t len = s.target(id).length;
      switch (s.kind(id)) {
      case OpKind::send:
      case OpKind::recv:
      case OpKind::recv_reduce: {
        const bool send = s.kind(id) == OpKind::send;
        const core::Rank src = send ? r : s.peer(id);
        const core::Rank dst = send ? s.peer(id) : r;
        // The ordinal within the connection (pair and collsim tag), the collsim tag above bit 23:
        // unique per pair, equal at both ends of each message, the ordinal alone for tag 0.
        const std::uint32_t ordinal =
            send ? sent[{src, dst, s.tag(id)}]++ : received[{src, dst, s.tag(id)}]++;
        if (ordinal >= (1U << 23)) {
          throw core::UsageError(fmt::format(
              "Chakra: more than 2^23 messages from rank {} to rank {} on one tag", src, dst));
        }
        const std::uint32_t tag = s.tag(id) << 23 | ordinal;
        n.type = send ? kSend : kRecv;
        n.name = fmt::format("l{} {} {} B {} {}", k, send ? "send" : "recv", len,
                             send ? "to" : "from", s.peer(id));
        n.attrs = {int_attr("is_cpu_op", kBoolVal, 0), int_attr("comm_src", kInt32Val, src),
                   int_attr("comm_dst", kInt32Val, dst), int_attr("comm_tag", kInt32Val, tag),
                   int_attr("comm_size", kInt64Val, len)};
        break;
      }
      case OpKind::reduce:
      case OpKind::copy:
      case OpKind::calc: {
        const OpKind kind = s.kind(id);
        n.type = kComp;
        const double t = kind == OpKind::calc     ? s.calc_time(id).value
                         : kind == OpKind::reduce ? work_seconds(len, options.reduce_bandwidth)
                                                  : work_seconds(len, options.copy_bandwidth);
        n.duration_us = micros(t);
        n.name = fmt::format("l{} {}", k, core::to_string(kind));
        n.attrs = {int_attr("is_cpu_op", kBoolVal, 0)};
        break;
      }
      }
      framed(out, node_message(n));
      done[k] = n.id;
      if (s.kind(id) == OpKind::recv_reduce) {
        NodeSpec c;
        c.id = next_id++;
        c.name = fmt::format("l{} reduce {} B", k, len);
        c.type = kComp;
        c.deps = {n.id};
        c.duration_us = micros(work_seconds(len, options.reduce_bandwidth));
        c.attrs = {int_attr("is_cpu_op", kBoolVal, 0)};
        framed(out, node_message(c));
        done[k] = c.id;
      }
    }
  }
  return files;
}

} // namespace collsim::io

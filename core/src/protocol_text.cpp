// The `protocol` line of the schedule text form (core/src/schedule_text.cpp has the grammar and
// the rest of the parser), printed and read: the required fields, then the optional ones in
// core::Protocol's order, each printed only when it differs from its default, so that earlier
// schedule files read as before.

#include "text_reader.hpp"

#include "collsim/core/schedule.hpp"

#include <fmt/format.h>

#include <iterator>

namespace collsim::core {

std::string protocol_line(const Protocol& pr) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "protocol {} efficiency={} launch={} message_latency={} inter_node_latency={}",
                 pr.name.empty() ? "-" : pr.name, pr.efficiency, pr.launch.value,
                 pr.message_latency.value, pr.inter_node_latency.value);
  fmt::format_to(it, "{}", pr.port_per_link ? " ports=per_link" : "");
  if (pr.stream_bandwidth.bytes_per_second > 0.0) {
    fmt::format_to(it, " stream_bandwidth={}", pr.stream_bandwidth.bytes_per_second);
  }
  if (pr.intra_node_efficiency != 1.0) {
    fmt::format_to(it, " intra_node_efficiency={}", pr.intra_node_efficiency);
  }
  if (pr.inter_node_efficiency != 1.0) {
    fmt::format_to(it, " inter_node_efficiency={}", pr.inter_node_efficiency);
  }
  if (pr.fifo_slots != 0) {
    fmt::format_to(it, " fifo_slots={}", pr.fifo_slots);
  }
  if (pr.intra_node_overhead.value >= 0.0) {
    fmt::format_to(it, " intra_node_overhead={}", pr.intra_node_overhead.value);
  }
  if (pr.rendezvous_bytes != 0) {
    fmt::format_to(it, " rendezvous_bytes={}", pr.rendezvous_bytes);
  }
  if (pr.rendezvous_window_bytes != 0) {
    fmt::format_to(it, " rendezvous_window_bytes={}", pr.rendezvous_window_bytes);
  }
  if (pr.rendezvous_read_bytes != 0) {
    fmt::format_to(it, " rendezvous_read_bytes={}", pr.rendezvous_read_bytes);
  }
  if (pr.intra_node_rendezvous_bytes != Protocol::kAsBetweenNodes) {
    fmt::format_to(it, " intra_node_rendezvous_bytes={}", pr.intra_node_rendezvous_bytes);
  }
  if (pr.proxy_overhead.value > 0.0) {
    fmt::format_to(it, " proxy_overhead={}", pr.proxy_overhead.value);
  }
  fmt::format_to(it, "{}", pr.agents_copy ? " agents_copy" : "");
  if (pr.core_copy_bandwidth.bytes_per_second > 0.0) {
    fmt::format_to(it, " core_copy_bandwidth={}", pr.core_copy_bandwidth.bytes_per_second);
  }
  if (pr.core_reduce_bandwidth.bytes_per_second > 0.0) {
    fmt::format_to(it, " core_reduce_bandwidth={}", pr.core_reduce_bandwidth.bytes_per_second);
  }
  return out;
}

Protocol read_protocol_line(TextReader& in) {
  Protocol p;
  const auto name = in.read_token("a protocol name");
  p.name = name == "-" ? std::string{} : std::string(name);
  in.expect_literal("efficiency=");
  p.efficiency = in.read_double("the payload efficiency");
  if (!(p.efficiency > 0.0 && p.efficiency <= 1.0)) {
    in.fail("efficiency must be in (0, 1]");
  }
  in.expect_literal("launch=");
  p.launch = Seconds{in.read_double("the launch latency in seconds")};
  in.expect_literal("message_latency=");
  p.message_latency = Seconds{in.read_double("the per-message latency in seconds")};
  in.expect_literal("inter_node_latency=");
  p.inter_node_latency = Seconds{in.read_double("the inter-node per-message latency in seconds")};
  if (!in.at_line_end() && in.starts_with("ports")) {
    in.expect_literal("ports=per_link");
    p.port_per_link = true;
  }
  if (!in.at_line_end() && in.peek_char() == 's') {
    in.expect_literal("stream_bandwidth=");
    p.stream_bandwidth = Bandwidth{in.read_double("bytes per second")};
    if (!(p.stream_bandwidth.bytes_per_second > 0.0)) {
      in.fail("stream_bandwidth must be positive");
    }
  }
  if (!in.at_line_end() && in.starts_with("intra_node_efficiency")) {
    in.expect_literal("intra_node_efficiency=");
    p.intra_node_efficiency = in.read_double("the intra-node payload efficiency");
    if (!(p.intra_node_efficiency > 0.0 && p.intra_node_efficiency <= 1.0)) {
      in.fail("intra_node_efficiency must be in (0, 1]");
    }
  }
  if (!in.at_line_end() && in.starts_with("inter_node_efficiency")) {
    in.expect_literal("inter_node_efficiency=");
    p.inter_node_efficiency = in.read_double("the inter-node payload efficiency");
    if (!(p.inter_node_efficiency > 0.0 && p.inter_node_efficiency <= 1.0)) {
      in.fail("inter_node_efficiency must be in (0, 1]");
    }
  }
  if (!in.at_line_end() && in.peek_char() == 'f') {
    in.expect_literal("fifo_slots=");
    const std::uint64_t slots = in.read_uint("the messages in flight per connection");
    if (slots == 0 || slots > 1024) {
      in.fail("fifo_slots must be from 1 to 1024");
    }
    p.fifo_slots = static_cast<std::uint32_t>(slots);
  }
  if (!in.at_line_end() && in.starts_with("intra_node_overhead")) {
    in.expect_literal("intra_node_overhead=");
    p.intra_node_overhead = Seconds{in.read_double("the intra-node overhead in seconds")};
    if (!(p.intra_node_overhead.value >= 0.0)) {
      in.fail("intra_node_overhead must be at least 0");
    }
  }
  if (!in.at_line_end() && in.starts_with("rendezvous_bytes")) {
    in.expect_literal("rendezvous_bytes=");
    p.rendezvous_bytes = in.read_uint("the rendezvous threshold in bytes");
  }
  if (!in.at_line_end() && in.starts_with("rendezvous_window")) {
    in.expect_literal("rendezvous_window_bytes=");
    p.rendezvous_window_bytes = in.read_uint("the bytes granted per handshake");
  }
  if (!in.at_line_end() && in.starts_with("rendezvous_read")) {
    in.expect_literal("rendezvous_read_bytes=");
    p.rendezvous_read_bytes = in.read_uint("the bytes from which one read moves it");
  }
  if (!in.at_line_end() && in.starts_with("intra_node_rendezvous")) {
    in.expect_literal("intra_node_rendezvous_bytes=");
    p.intra_node_rendezvous_bytes = in.read_uint("the rendezvous threshold inside a node in bytes");
  }
  if (!in.at_line_end() && in.starts_with("proxy_overhead")) {
    in.expect_literal("proxy_overhead=");
    p.proxy_overhead = Seconds{in.read_double("the proxy's time per message")};
    if (!(p.proxy_overhead.value > 0.0)) {
      in.fail("proxy_overhead must be positive");
    }
  }
  if (!in.at_line_end() && in.peek_char() == 'a') {
    in.expect_literal("agents_copy");
    p.agents_copy = true;
  }
  if (!in.at_line_end() && in.starts_with("core_copy")) {
    in.expect_literal("core_copy_bandwidth=");
    p.core_copy_bandwidth = Bandwidth{in.read_double("bytes per second")};
    if (!(p.core_copy_bandwidth.bytes_per_second > 0.0)) {
      in.fail("core_copy_bandwidth must be positive");
    }
  }
  if (!in.at_line_end() && in.starts_with("core_reduce")) {
    in.expect_literal("core_reduce_bandwidth=");
    p.core_reduce_bandwidth = Bandwidth{in.read_double("bytes per second")};
    if (!(p.core_reduce_bandwidth.bytes_per_second > 0.0)) {
      in.fail("core_reduce_bandwidth must be positive");
    }
  }
  in.end_line();
  return p;
}

} // namespace collsim::core

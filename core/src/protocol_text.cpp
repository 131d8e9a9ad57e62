// The `protocol` line of the schedule text form (core/src/schedule_text.cpp has the grammar and
// the parser): the required fields, then the optional ones in core::Protocol's order, each only
// when it differs from its default, so that earlier schedule files read as before.

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

} // namespace collsim::core

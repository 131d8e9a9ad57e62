// Torus: routers on a 2- or 3-dimensional grid with wrap-around links in every dimension, each
// router with hosts_per_router NICs (hardware.md 4a [S70]: Blue Gene/Q is a 5-D torus; collsim
// builds 2-D and 3-D ones). A ring of extent 2 has a single link pair between its two routers,
// not two. Router (x, y, z) is number x + X*(y + Y*z), named "net/t{x}.{y}.{z}".
//
// Routing: dimension order (x, then y, then z), in each dimension the shorter way round the ring,
// the positive direction on a tie; so a route crosses sum over dimensions of
// min(|d|, extent - |d|) router-to-router links, found in O(hops).

#include "collsim/core/errors.hpp"
#include "network_builders.hpp"

#include <fmt/format.h>
#include <memory>

namespace collsim::topologies::detail {

namespace {

using core::DeviceId;

std::uint64_t router_count(const std::vector<std::uint32_t>& dims) {
  std::uint64_t n = 1;
  for (const std::uint32_t e : dims) {
    n *= e;
  }
  return n;
}

class TorusRouter final : public core::NetworkRouter {
public:
  TorusRouter(std::vector<std::uint32_t> dims, std::uint32_t hosts, PortOrder ports,
              DeviceId router0)
      : dims_(std::move(dims)), hosts_(hosts), routers_(router_count(dims_)),
        ports_(std::move(ports)), router0_(router0) {}

  void route(const core::Topology& t, DeviceId from, DeviceId to,
             std::vector<core::LinkId>& path) const override {
    const std::uint32_t src = router_of(t, from);
    const std::uint32_t dst = router_of(t, to);
    if (router0_ + src != from) {
      path.push_back(t.link(from, router0_ + src));
    }
    std::uint32_t cur = src;
    std::uint32_t stride = 1;
    for (const std::uint32_t extent : dims_) {
      const std::uint32_t a = (cur / stride) % extent;
      const std::uint32_t b = (dst / stride) % extent;
      const std::uint32_t forward = (b + extent - a) % extent;
      const bool positive = forward <= extent - forward;
      for (std::uint32_t step = 0, n = positive ? forward : extent - forward; step < n; ++step) {
        const std::uint32_t c = (cur / stride) % extent;
        const std::uint32_t next_c = positive ? (c + 1) % extent : (c + extent - 1) % extent;
        const std::uint32_t next = cur - c * stride + next_c * stride;
        path.push_back(t.link(router0_ + cur, router0_ + next));
        cur = next;
      }
      stride *= extent;
    }
    if (router0_ + dst != to) {
      path.push_back(t.link(router0_ + dst, to));
    }
  }

  [[nodiscard]] std::string describe() const override {
    return fmt::format("torus {} ({} hosts per router), dimension order", fmt::join(dims_, "x"),
                       hosts_);
  }

private:
  [[nodiscard]] std::uint32_t router_of(const core::Topology& t, DeviceId d) const {
    if (d >= router0_ && d < router0_ + routers_) {
      return d - router0_;
    }
    const std::uint32_t port = ports_.port_of(d);
    if (port == PortOrder::kNoPort) {
      throw core::InternalError(
          fmt::format("device '{}' is not attached to the torus", t.devices()[d].name));
    }
    return port / hosts_;
  }

  std::vector<std::uint32_t> dims_;
  std::uint32_t hosts_;
  std::uint64_t routers_;
  PortOrder ports_;
  DeviceId router0_;
};

} // namespace

std::uint64_t torus_capacity(const core::NetworkSpec& spec) {
  return router_count(spec.dims) * spec.hosts_per_router;
}

void check_torus(const core::TopologySpec& spec, std::uint64_t ports) {
  check_network_options(spec);
  const core::NetworkSpec& net = spec.system.network;
  if (net.dims.size() != 2 && net.dims.size() != 3) {
    network_error(spec, "dims",
                  fmt::format("a torus has 2 or 3 dimensions, got {} ([{}])", net.dims.size(),
                              fmt::join(net.dims, ", ")));
  }
  for (const std::uint32_t e : net.dims) {
    if (e < 2) {
      network_error(spec, "dims",
                    fmt::format("every torus extent must be at least 2, got [{}]",
                                fmt::join(net.dims, ", ")));
    }
  }
  const std::uint64_t capacity = torus_capacity(net);
  if (ports > capacity) {
    network_error(spec, "dims",
                  fmt::format("{} NICs do not fit a {} torus with {} hosts_per_router: it "
                              "attaches at most {}",
                              ports, fmt::join(net.dims, "x"), net.hosts_per_router, capacity));
  }
}

void build_torus(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  PortOrder order(ports, false);
  const std::vector<std::uint32_t>& dims = spec.dims;
  const std::uint64_t routers = router_count(dims);
  if ((dims.size() != 2 && dims.size() != 3) || spec.hosts_per_router == 0 ||
      order.size() > routers * spec.hosts_per_router) {
    throw core::InternalError("torus built without check_network");
  }
  for (const std::uint32_t e : dims) {
    if (e < 2) {
      throw core::InternalError("torus built without check_network");
    }
  }
  const core::Bandwidth bw = link_bandwidth(spec, ports);
  const DeviceId router0 = static_cast<DeviceId>(t.devices().size());
  for (std::uint64_t r = 0; r < routers; ++r) {
    std::vector<std::uint32_t> coords;
    std::uint64_t rest = r;
    for (const std::uint32_t e : dims) {
      coords.push_back(static_cast<std::uint32_t>(rest % e));
      rest /= e;
    }
    t.add_device(network_device(fmt::format("net/t{}", fmt::join(coords, ".")), spec));
  }
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    t.add_duplex(order.device(i), router0 + i / spec.hosts_per_router, ports.bandwidth,
                 ports.latency, core::LinkKind::ib);
  }
  // Each router links to its + neighbour in every dimension; a ring of 2 needs only the link
  // from coordinate 0.
  std::uint64_t stride = 1;
  for (const std::uint32_t e : dims) {
    for (std::uint64_t r = 0; r < routers; ++r) {
      const std::uint64_t c = (r / stride) % e;
      if (e == 2 && c == 1) {
        continue;
      }
      const std::uint64_t next = r - c * stride + ((c + 1) % e) * stride;
      t.add_duplex(router0 + static_cast<DeviceId>(r), router0 + static_cast<DeviceId>(next), bw,
                   spec.link_latency, core::LinkKind::ib);
    }
    stride *= e;
  }
  t.set_router(
      std::make_shared<TorusRouter>(dims, spec.hosts_per_router, std::move(order), router0));
}

} // namespace collsim::topologies::detail

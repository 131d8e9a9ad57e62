#include "collsim/core/engine.hpp"

namespace collsim::core {

Bandwidth algorithm_bandwidth(Bytes size, Seconds time) {
  if (time.value <= 0.0) {
    return Bandwidth{0.0};
  }
  return Bandwidth{size.as_double() / time.value};
}

Bandwidth bus_bandwidth(CollectiveKind c, std::uint32_t ranks, Bytes size, Seconds time) {
  return Bandwidth{algorithm_bandwidth(size, time).bytes_per_second * busbw_factor(c, ranks)};
}

} // namespace collsim::core

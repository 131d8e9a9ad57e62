#include "collsim/core/collective.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace collsim::core {

std::string_view to_string(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::allreduce: return "allreduce";
  case CollectiveKind::reduce: return "reduce";
  case CollectiveKind::bcast: return "bcast";
  case CollectiveKind::allgather: return "allgather";
  case CollectiveKind::reduce_scatter: return "reduce_scatter";
  case CollectiveKind::alltoall: return "alltoall";
  case CollectiveKind::gather: return "gather";
  case CollectiveKind::scatter: return "scatter";
  case CollectiveKind::barrier: return "barrier";
  }
  throw InternalError("unknown CollectiveKind value");
}

std::optional<CollectiveKind> parse_collective(std::string_view name) {
  std::string key;
  for (char ch : name) {
    if (ch != '_' && ch != '-') {
      key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    }
  }
  if (key == "broadcast") {
    return CollectiveKind::bcast;
  }
  for (auto c : kAllCollectives) {
    std::string canon;
    for (char ch : to_string(c)) {
      if (ch != '_') {
        canon.push_back(ch);
      }
    }
    if (canon == key) {
      return c;
    }
  }
  return std::nullopt;
}

CollectiveKind collective_from_name(std::string_view name) {
  if (auto c = parse_collective(name)) {
    return *c;
  }
  std::vector<std::string> valid;
  valid.reserve(kAllCollectives.size());
  for (auto c : kAllCollectives) {
    valid.emplace_back(to_string(c));
  }
  throw UnknownNameError("collective", name, std::move(valid));
}

double busbw_factor(CollectiveKind c, std::uint32_t ranks) {
  const double n = ranks;
  if (ranks == 0) {
    return 0.0;
  }
  switch (c) {
  case CollectiveKind::allreduce: return 2.0 * (n - 1.0) / n;
  case CollectiveKind::allgather:
  case CollectiveKind::reduce_scatter:
  case CollectiveKind::alltoall:
  case CollectiveKind::gather:
  case CollectiveKind::scatter: return (n - 1.0) / n;
  case CollectiveKind::bcast:
  case CollectiveKind::reduce: return 1.0;
  case CollectiveKind::barrier: return 0.0;
  }
  throw InternalError("unknown CollectiveKind value");
}

} // namespace collsim::core

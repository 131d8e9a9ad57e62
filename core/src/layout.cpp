#include "collsim/core/layout.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::core {

// A collapsed schedule's blocks are those of all the ranks it stands for (collapse.hpp).
BlockLayout::BlockLayout(const ScheduleHeader& h)
    : BlockLayout(h.collective, h.full_ranks(), h.bytes.value, h.counts) {}

BlockLayout::BlockLayout(CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes,
                         std::vector<std::uint64_t> counts)
    : collective_(c), ranks_(ranks), bytes_(bytes), counts_(std::move(counts)) {
  const std::uint64_t p = ranks_;
  if (counts_.empty()) {
    output_ = bytes_;
    return;
  }
  if (const std::string why = counts_problem(c, ranks, bytes, counts_); !why.empty()) {
    throw InternalError(fmt::format("BlockLayout: {}", why));
  }
  if (c != CollectiveKind::alltoall) {
    displ_.resize(p + 1, 0);
    for (std::uint64_t i = 0; i < p; ++i) {
      displ_[i + 1] = displ_[i] + counts_[i];
    }
    return;
  }
  // Rows: prefix sums in place of the counts would lose them, so keep both: displ_ holds the
  // send displacements row by row, recv_displ_ the receive displacements column by column.
  displ_.resize(p * p, 0);
  recv_displ_.resize(p * p, 0);
  for (std::uint64_t i = 0; i < p; ++i) {
    std::uint64_t acc = 0;
    for (std::uint64_t j = 0; j < p; ++j) {
      displ_[i * p + j] = acc;
      acc += counts_[i * p + j];
    }
  }
  for (std::uint64_t j = 0; j < p; ++j) {
    std::uint64_t acc = 0;
    for (std::uint64_t i = 0; i < p; ++i) {
      recv_displ_[i * p + j] = acc;
      acc += counts_[i * p + j];
    }
    output_ = std::max(output_, acc);
  }
}

std::pair<std::uint64_t, std::uint64_t> BlockLayout::block(Rank i) const {
  if (counts_.empty()) {
    return block_range(bytes_, ranks_, i);
  }
  return {displ_[i], displ_[i + 1] - displ_[i]};
}

std::uint64_t BlockLayout::count(Rank from, Rank to) const {
  if (counts_.empty()) {
    return bytes_ / ranks_;
  }
  return counts_[std::uint64_t{from} * ranks_ + to];
}

std::uint64_t BlockLayout::send_offset(Rank from, Rank to) const {
  if (counts_.empty()) {
    return std::uint64_t{to} * (bytes_ / ranks_);
  }
  return displ_[std::uint64_t{from} * ranks_ + to];
}

std::uint64_t BlockLayout::recv_offset(Rank from, Rank to) const {
  if (counts_.empty()) {
    return bytes_ + std::uint64_t{from} * (bytes_ / ranks_);
  }
  return bytes_ + recv_displ_[std::uint64_t{from} * ranks_ + to];
}

std::uint64_t BlockLayout::data_bytes() const {
  return collective_ == CollectiveKind::alltoall ? bytes_ + output_ : bytes_;
}

std::uint64_t counts_size(CollectiveKind c, std::uint32_t ranks) {
  return c == CollectiveKind::alltoall ? std::uint64_t{ranks} * ranks : ranks;
}

std::uint64_t counts_bytes(CollectiveKind c, std::uint32_t ranks,
                           const std::vector<std::uint64_t>& counts) {
  if (c != CollectiveKind::alltoall) {
    std::uint64_t sum = 0;
    for (auto n : counts) {
      sum += n;
    }
    return sum;
  }
  std::uint64_t largest = 0;
  for (std::uint64_t i = 0; i < ranks && (i + 1) * ranks <= counts.size(); ++i) {
    std::uint64_t row = 0;
    for (std::uint64_t j = 0; j < ranks; ++j) {
      row += counts[i * ranks + j];
    }
    largest = std::max(largest, row);
  }
  return largest;
}

std::string counts_problem(CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes,
                           const std::vector<std::uint64_t>& counts) {
  if (counts.empty()) {
    return {};
  }
  if (!has_counts_variant(c)) {
    return fmt::format("{} has no v-variant: per-rank counts apply to allgather, gather, scatter, "
                       "reduce_scatter and alltoall",
                       to_string(c));
  }
  // A bound that keeps every sum of counts far from overflow (2^48 B is 256 TiB).
  constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 48;
  if (std::any_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n > kMaxCount; })) {
    return "a count is larger than 2^48 bytes";
  }
  const std::uint64_t want = counts_size(c, ranks);
  if (counts.size() != want) {
    return fmt::format("{} counts for {}v on {} ranks, which takes {}{}", counts.size(),
                       to_string(c), ranks, want,
                       c == CollectiveKind::alltoall ? " (ranks x ranks)" : "");
  }
  const std::uint64_t total = counts_bytes(c, ranks, counts);
  if (total != bytes) {
    return fmt::format("the counts add up to {} bytes{} but the size is {} bytes", total,
                       c == CollectiveKind::alltoall ? " in the largest row" : "", bytes);
  }
  return {};
}

std::optional<CollectiveName> parse_collective_name(std::string_view name) {
  for (std::string_view prefix : {"neighbor_", "neighbour_", "neighbor", "neighbour"}) {
    if (name.starts_with(prefix)) {
      std::string_view rest = name.substr(prefix.size());
      if (rest.ends_with('v')) {
        rest.remove_suffix(1);
      }
      if (const auto c = parse_collective(rest);
          c && (*c == CollectiveKind::alltoall || *c == CollectiveKind::allgather)) {
        return CollectiveName{CollectiveKind::alltoall, true, true};
      }
      return std::nullopt;
    }
  }
  if (auto c = parse_collective(name)) {
    return CollectiveName{*c, false};
  }
  if (!name.empty() && (name.back() == 'v' || name.back() == 'V')) {
    if (auto c = parse_collective(name.substr(0, name.size() - 1)); c && has_counts_variant(*c)) {
      return CollectiveName{*c, true};
    }
  }
  return std::nullopt;
}

std::string collective_display_name(CollectiveKind c, bool v) {
  std::string name(to_string(c));
  if (v) {
    name += 'v';
  }
  return name;
}

} // namespace collsim::core

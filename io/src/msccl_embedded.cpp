// The collsim schedule inside a write_msccl_xml file (msccl.hpp, msccl_embedded_schedule): the
// exact round trip, checked against the XML body so that a hand edit of either is caught.

#include "collsim/io/msccl.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>

namespace collsim::io {
namespace {

constexpr std::string_view kOpen = "<!-- collsim:\n";

/// What an operation moves, for comparing the two forms (order and dependencies aside).
using Movement = std::tuple<int, core::Rank, core::Buffer, std::uint64_t, std::uint64_t,
                            core::Buffer, std::uint64_t>;

std::vector<Movement> movements(const core::Schedule& s, core::Rank r) {
  std::vector<Movement> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    const core::OpKind k = s.kind(id);
    if (k == core::OpKind::calc) {
      continue;
    }
    const core::Range t = s.target(id);
    const bool local = k == core::OpKind::copy || k == core::OpKind::reduce;
    const core::Range src = local ? s.source(id) : core::Range{};
    out.emplace_back(static_cast<int>(k), local ? 0 : s.peer(id), t.buffer, t.offset, t.length,
                     src.buffer, src.offset);
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

std::optional<core::Schedule> msccl_embedded_schedule(std::string_view text,
                                                      const MscclProgram& program) {
  const std::size_t open = text.find(kOpen);
  if (open == std::string_view::npos) {
    return std::nullopt;
  }
  const std::size_t begin = open + kOpen.size();
  const std::size_t end = text.find("-->", begin);
  if (end == std::string_view::npos) {
    throw core::ScheduleError(fmt::format("{}: the collsim comment is not closed", program.file));
  }
  const auto line = static_cast<std::size_t>(
      std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(begin), '\n'));
  core::Schedule s = [&] {
    try {
      return core::parse_schedule(text.substr(begin, end - begin), program.file);
    } catch (const core::ScheduleError& e) {
      throw core::ScheduleError(
          fmt::format("{} (in the collsim comment from line {})", e.what(), line + 1));
    }
  }();
  const core::ScheduleHeader& h = s.header();
  if (h.ranks != program.ngpus || !program.collective || h.collective != *program.collective) {
    throw core::ScheduleError(fmt::format(
        "{}: the collsim comment is a {} on {} ranks, the XML a {} on {} GPUs", program.file,
        core::to_string(h.collective), h.ranks, program.coll, program.ngpus));
  }
  MscclBuildOptions o;
  o.bytes = h.bytes;
  o.tiles = false;
  const MscclBuilt built = build_msccl_schedule(program, o);
  for (core::Rank r = 0; r < h.ranks; ++r) {
    if (movements(s, r) != movements(built.schedule, r)) {
      throw core::ScheduleError(fmt::format(
          "{}: the collsim comment and the XML disagree on what rank {} moves", program.file, r));
    }
  }
  return s;
}

} // namespace collsim::io

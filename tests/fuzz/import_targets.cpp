// Fuzz targets of the schedule readers and the workload importers (targets.hpp). A schedule
// that was read is also checked (core::validate: matching and deadlock), the code every
// imported schedule goes through next.

#include "support.hpp"
#include "targets.hpp"

#include <collsim/core/schedule.hpp>
#include <collsim/core/verify.hpp>
#include <collsim/io/goal.hpp>
#include <collsim/io/msccl.hpp>
#include <collsim/io/workload_import.hpp>

#include <string>

namespace collsim::fuzz {

void schedule_text(std::string_view text) {
  const auto s = core::parse_schedule(text, "fuzz.sched");
  (void)core::validate(s);
}

void msccl(std::string_view text) {
  const auto program = io::read_msccl_xml(text, "fuzz.xml");
  // 1 MiB: a size most programs accept, small enough to build quickly.
  const core::Bytes bytes{1 << 20};
  if (!io::msccl_size_refusal(program, bytes).empty())
    return;
  io::MscclBuildOptions options;
  options.bytes = bytes;
  const auto built = io::build_msccl_schedule(program, options);
  (void)core::validate(built.schedule);
}

void goal(std::string_view text) {
  const auto imported = io::read_goal(text, "fuzz.goal");
  (void)core::validate(imported.schedule);
}

void nccl_debug(std::string_view text) {
  (void)io::import_nccl_debug(std::string(text), "fuzz.log", io::NcclDebugImport{});
}

void kineto(std::string_view text) {
  (void)io::import_kineto_trace(scratch_file(text, ".json"), io::KinetoImport{});
}

} // namespace collsim::fuzz

// validate reads the library stack from a log (docs/stacks.md): coll/ucc enabled on the launch
// command means UCC, UCC's NCCL team layer selected means UCC + NCCL, coll/hcoll enabled means
// the hpcx stack, and OSU's -d cuda puts the buffers on the device. The texts are OSU's output
// format with the launch lines of the JSC study's configurations (their measured times are in
// docs/validation.md).

#include "collsim/analysis/measured_logs.hpp"
#include "collsim/io/logs.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace collsim;

namespace {

analysis::MeasuredPoint first_point(const std::string& command) {
  const std::string text = "$ " + command +
                           "\n\n# OSU MPI-CUDA Allreduce Latency Test v7.3\n"
                           "# Datatype: MPI_FLOAT.\n"
                           "# Size       Avg Latency(us)\n"
                           "4                      50.00\n"
                           "1048576               300.00\n";
  const io::ParsedLog log = io::parse_log(text, "jsc.txt");
  REQUIRE_FALSE(log.measurements.empty());
  const auto p = analysis::to_measured_point(log, log.measurements.front());
  REQUIRE(p);
  return *p;
}

} // namespace

TEST_CASE("the stack a log's launch command shows", "[analysis][validate][stacks]") {
  const std::string base = "mpirun -np 8 ";
  const std::string osu = " osu_allreduce -d cuda";
  const auto ucc = first_point(base + "--mca coll_ucc_enable 1 --mca coll_ucc_priority 100" + osu);
  CHECK(ucc.stack == "openmpi-4.1+ucc");
  CHECK(ucc.buffers == "device");
  const auto nccl =
      first_point(base + "-x OMPI_MCA_coll_ucc_enable=1 -x UCC_TL_NCCL_TUNE=inf" + osu);
  CHECK(nccl.stack == "openmpi-4.1+ucc+nccl");
  const auto hcoll = first_point(base + "--mca coll_hcoll_enable 1" + osu);
  CHECK(hcoll.stack == "hpcx");               // HPC-X's Open MPI with HCOLL
  const auto plain = first_point(base + osu); // the MPI library is not named: no stack
  CHECK(plain.stack.empty());
  CHECK(plain.buffers == "device");
}

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

namespace {

/// The stack of a collsim-probe log whose header names `library` (MPI_Get_library_version's
/// first line, as the probe prints it).
std::string probe_stack(const std::string& library) {
  const std::string text = "# collsim-probe 1.0: ranks 8, nodes 2, ranks per node 4\n"
                           "# MPI library: " +
                           library +
                           "\n\n# OSU MPI Allreduce Latency Test v7.3\n"
                           "# Size       Avg Latency(us)\n"
                           "4                      12.00\n";
  const io::ParsedLog log = io::parse_log(text, "probe.txt");
  REQUIRE_FALSE(log.measurements.empty());
  const auto p = analysis::to_measured_point(log, log.measurements.front());
  REQUIRE(p);
  return p->stack;
}

} // namespace

TEST_CASE("the stack a log's MPI library line names", "[analysis][validate][stacks]") {
  CHECK(probe_stack("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4") == "openmpi-4.1");
  CHECK(probe_stack("Open MPI v5.0.9, package: Open MPI, ident: 5.0.9") == "openmpi-5.0");
  CHECK(probe_stack("MPICH Version:\t4.0.2") == "mpich-4");
  CHECK(probe_stack("MPICH Version: 4.2.3") == "mpich-4");
  CHECK(probe_stack("MPICH Version:\t3.4.3").empty()); // MPICH 3 has no stack
  CHECK(probe_stack("Intel(R) MPI Library 2021.10 for Linux* OS").empty());
  CHECK(probe_stack("MVAPICH2-GDR Version\t:\t2.3.7") == "mvapich2-gdr");
  CHECK(probe_stack("MVAPICH2 Version\t:\t2.3.7").empty()); // no GDR: no stack
}

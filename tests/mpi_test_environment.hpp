#pragma once
// What Open MPI needs to run a few ranks in the tests here: oversubscribed cores, root in a
// container, no ssh/rsh, no cross-memory attach. Values already in the environment win; MPICH
// ignores these. Shared by the tests that launch collsim-probe or collsim under mpirun.

#include <cstdlib>

namespace collsim::testing {

inline void prepare_open_mpi_environment() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
  setenv("OMPI_MCA_plm", "isolated", 0);
}

} // namespace collsim::testing

/* The MPICH side of tests/probe/tune_mpich_json_test.cpp: float allreduce at 64 B .. 64 KiB on
 * inputs whose rounding depends on the order of the sums (1e8, 1, -1e8 plus small offsets, as
 * collsim-probe's), printing "BYTES HASH" per size on rank 0, HASH being FNV-1a of rank 0's result
 * bytes. Different reduction orders (MPICH's smp and recursive doubling on 5 ranks) give
 * different hashes, so the hashes show which algorithm ran. A barrier and a bcast at the end make
 * MPICH look those collectives up in the selection file too. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int bytes = 64; bytes <= 65536; bytes *= 2) {
    const int n = bytes / (int)sizeof(float);
    float* in = malloc((size_t)bytes);
    float* out = malloc((size_t)bytes);
    for (int i = 0; i < n; ++i) {
      const int k = (rank + i) % 3;
      in[i] = (k == 0 ? 1e8f : k == 1 ? 1.0f : -1e8f) + (float)(rank * 0.37 + i * 0.011);
    }
    MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    uint64_t h = 1469598103934665603ull;
    const unsigned char* b = (const unsigned char*)out;
    for (int i = 0; i < bytes; ++i) {
      h = (h ^ b[i]) * 1099511628211ull;
    }
    if (rank == 0) {
      printf("%d %016llx\n", bytes, (unsigned long long)h);
    }
    free(in);
    free(out);
  }
  int token = rank;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return token == 0 ? 0 : 1;
}

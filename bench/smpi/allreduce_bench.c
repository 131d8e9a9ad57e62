/* allreduce_bench: times MPI_Allreduce (MPI_FLOAT, MPI_SUM) at a list of sizes.
 *
 * Built with `smpicc -O2` and run by run_smpi.sh under SimGrid's SMPI, so that collsim's
 * flow-level SimGrid engine can be compared with SimGrid's own MPI collectives (README.md).
 * Compiles with any MPI too (plain malloc, and only --start barrier, without SMPI).
 *
 * Usage: allreduce_bench --sizes B1,B2,... [--iters N] [--warmup N] [--start aligned|barrier]
 *                        [--op sum|noop]
 *   B: bytes per rank, a multiple of 4 (floats). For every size: `warmup` untimed calls, then
 *   --start barrier: MPI_Barrier, N calls back to back between two MPI_Wtime;
 *   --start aligned (default under SMPI): before each of the N calls, MPI_Barrier and a sleep to a
 *     common simulated instant (bench_common.h), so that every call starts on all ranks at once and
 *     is timed from that instant, as collsim's engines time a collective.
 *   The result is the maximum over ranks of the mean time per call. Rank 0 prints a '#' header
 *   line, then one line per size:  bytes time_us
 *   --op sum (default): MPI_SUM. --op noop: a user-defined commutative operation that does
 *     nothing, for huge runs under SMPI: with smpi/simulate-computation:no the reduction
 *     arithmetic costs no simulated time anyway, so the times are the same (README.md checks it),
 *     but the host no longer computes terabytes of float additions, and with
 *     --cfg=smpi/shared-malloc:local the buffers are then never touched.
 */
#include "bench_common.h"

static void usage(int rank, const char* msg) {
  if (rank == 0)
    fprintf(stderr,
            "allreduce_bench: %s\nusage: allreduce_bench --sizes B1,B2,... [--iters N] [--warmup N]"
            " [--start aligned|barrier] [--op sum|noop]\n",
            msg);
}

/* --op noop: the reduction does nothing (the data are garbage anyway: shared buffers). */
static void noop_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)in;
  (void)inout;
  (void)len;
  (void)type;
}

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int nprocs = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long long sizes[BENCH_MAX_SIZES];
  int nsizes = 0;
  long long iters = 5;
  long long warmup = 1;
  int start = BENCH_HAVE_SIMULATED_CLOCK ? BENCH_START_ALIGNED : BENCH_START_BARRIER;
  const char* sizes_arg = NULL;
  const char* op_name = "sum";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      sizes_arg = argv[++i];
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      if (bench_parse_count(argv[++i], &iters) != 0 || iters < 1) {
        usage(rank, "--iters needs an integer >= 1");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      if (bench_parse_count(argv[++i], &warmup) != 0) {
        usage(rank, "--warmup needs an integer >= 0");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else if (strcmp(argv[i], "--start") == 0 && i + 1 < argc) {
      if (bench_parse_start(argv[++i], &start) != 0) {
        usage(rank, "--start takes 'barrier', or 'aligned' (SMPI only)");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
      op_name = argv[++i];
      if (strcmp(op_name, "sum") != 0 && strcmp(op_name, "noop") != 0) {
        usage(rank, "--op takes 'sum' or 'noop'");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else {
      usage(rank, "unknown or incomplete argument");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (sizes_arg == NULL || bench_parse_sizes(sizes_arg, sizes, &nsizes, 4, 4LL * 2147483647LL) != 0) {
    usage(rank, "--sizes needs a comma-separated list of byte counts, multiples of 4 (floats)");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  MPI_Op op = MPI_SUM;
  if (strcmp(op_name, "noop") == 0)
    MPI_Op_create(noop_op, 1, &op);

  long long max_bytes = 4;
  for (int s = 0; s < nsizes; ++s)
    if (sizes[s] > max_bytes)
      max_bytes = sizes[s];
  float* sendbuf = (float*)BENCH_MALLOC((size_t)max_bytes);
  float* recvbuf = (float*)BENCH_MALLOC((size_t)max_bytes);
  if (sendbuf == NULL || recvbuf == NULL) {
    fprintf(stderr, "allreduce_bench: rank %d: cannot allocate %lld bytes\n", rank, max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  if (rank == 0) {
    printf("# allreduce_bench: MPI_Allreduce MPI_FLOAT %s, ranks %d, sizes %s (bytes per rank), iters %lld,"
           " warmup %lld, start %s; columns: bytes time_us (max over ranks of the mean time per call)\n",
           op == MPI_SUM ? "MPI_SUM" : "noop", nprocs, sizes_arg, iters, warmup, bench_start_name(start));
    fflush(stdout);
  }

  for (int s = 0; s < nsizes; ++s) {
    const int count = (int)(sizes[s] / 4);
    for (long long w = 0; w < warmup; ++w)
      MPI_Allreduce(sendbuf, recvbuf, count, MPI_FLOAT, op, MPI_COMM_WORLD);
    double total = 0.0;
    if (start == BENCH_START_ALIGNED) {
      for (long long it = 0; it < iters; ++it) {
        const double t0 = bench_start(start, MPI_COMM_WORLD);
        MPI_Allreduce(sendbuf, recvbuf, count, MPI_FLOAT, op, MPI_COMM_WORLD);
        total += MPI_Wtime() - t0;
      }
    } else {
      const double t0 = bench_start(start, MPI_COMM_WORLD);
      for (long long it = 0; it < iters; ++it)
        MPI_Allreduce(sendbuf, recvbuf, count, MPI_FLOAT, op, MPI_COMM_WORLD);
      total = MPI_Wtime() - t0;
    }
    double mean = total / (double)iters;
    double worst = 0.0;
    MPI_Reduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("%lld %.6f\n", sizes[s], worst * 1e6);
      fflush(stdout);
    }
  }

  if (op != MPI_SUM)
    MPI_Op_free(&op);
  BENCH_FREE(recvbuf);
  BENCH_FREE(sendbuf);
  MPI_Finalize();
  return 0;
}

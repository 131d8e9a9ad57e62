/* pingpong: point-to-point timings between ranks 0 and 1, to check that SMPI adds nothing to the
 * flow model (README.md, "Verification"). Built with `smpicc -O2`; run with 2 ranks or more
 * (ranks above 1 only take part in the synchronisation).
 *
 * Usage: pingpong --sizes B1,B2,... [--iters N] [--start aligned|barrier]
 * For every size, rank 0 prints one line "bytes oneway_us exchange_us":
 *   oneway_us:   half the mean round-trip time of MPI_Send/MPI_Recv ping-pongs (rank 0 -> 1 -> 0);
 *                the flow model predicts L + m/B, with L the route's latency and B its bottleneck
 *                bandwidth.
 *   exchange_us: mean time of one MPI_Sendrecv in which ranks 0 and 1 send m bytes to each other at
 *                once; on routes with one link per direction the model predicts L + m/B too.
 * --start (bench_common.h): aligned (default under SMPI) starts every round trip and exchange on
 * both ranks at the same simulated instant; barrier synchronises once, before the N iterations.
 */
#include "bench_common.h"

static double time_section(int start, long long iters, int rank, int kind, char* sbuf, char* rbuf, int m) {
  const int peer = 1 - rank;
  double total = 0.0;
  const long long rounds = start == BENCH_START_ALIGNED ? iters : 1;
  const long long per_round = start == BENCH_START_ALIGNED ? 1 : iters;
  for (long long r = 0; r < rounds; ++r) {
    const double t0 = bench_start(start, MPI_COMM_WORLD);
    if (rank < 2) {
      for (long long it = 0; it < per_round; ++it) {
        if (kind == 0 && rank == 0) {
          MPI_Send(sbuf, m, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(rbuf, m, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (kind == 0) {
          MPI_Recv(rbuf, m, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(sbuf, m, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        } else {
          MPI_Sendrecv(sbuf, m, MPI_BYTE, peer, 3, rbuf, m, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      }
    }
    total += MPI_Wtime() - t0;
  }
  return total / (double)iters;
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
  int start = BENCH_HAVE_SIMULATED_CLOCK ? BENCH_START_ALIGNED : BENCH_START_BARRIER;
  const char* sizes_arg = NULL;
  int bad = nprocs < 2;
  for (int i = 1; i < argc && !bad; ++i) {
    if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      sizes_arg = argv[++i];
    else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
      bad = bench_parse_count(argv[++i], &iters) != 0 || iters < 1;
    else if (strcmp(argv[i], "--start") == 0 && i + 1 < argc)
      bad = bench_parse_start(argv[++i], &start) != 0;
    else
      bad = 1;
  }
  if (bad || sizes_arg == NULL || bench_parse_sizes(sizes_arg, sizes, &nsizes, 1, 2147483647LL) != 0) {
    if (rank == 0)
      fprintf(stderr, "usage: pingpong --sizes B1,B2,... [--iters N] [--start aligned|barrier]   (2 ranks or more)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  long long max_bytes = 1;
  for (int s = 0; s < nsizes; ++s)
    if (sizes[s] > max_bytes)
      max_bytes = sizes[s];
  char* sbuf = (char*)BENCH_MALLOC((size_t)max_bytes);
  char* rbuf = (char*)BENCH_MALLOC((size_t)max_bytes);

  if (rank == 0) {
    printf("# pingpong: ranks %d (0 and 1 active), sizes %s, iters %lld, start %s; columns: bytes oneway_us"
           " exchange_us\n",
           nprocs, sizes_arg, iters, bench_start_name(start));
    fflush(stdout);
  }
  for (int s = 0; s < nsizes; ++s) {
    const int m = (int)sizes[s];
    const double roundtrip = time_section(start, iters, rank, 0, sbuf, rbuf, m);
    const double exchange = time_section(start, iters, rank, 1, sbuf, rbuf, m);
    if (rank == 0) {
      printf("%lld %.6f %.6f\n", sizes[s], roundtrip / 2.0 * 1e6, exchange * 1e6);
      fflush(stdout);
    }
  }
  BENCH_FREE(rbuf);
  BENCH_FREE(sbuf);
  MPI_Finalize();
  return 0;
}

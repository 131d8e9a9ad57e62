/* Shared helpers of allreduce_bench.c and pingpong.c (README.md). */
#ifndef COLLSIM_SMPI_BENCH_COMMON_H
#define COLLSIM_SMPI_BENCH_COMMON_H

#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SMPI_SHARED_MALLOC /* compiled by smpicc */
#include <time.h>
/* All ranks share one physical buffer: 1024 ranks x 1 GiB do not need a terabyte. The contents
 * are garbage, which does not matter for timing. SMPI does not even copy message payloads whose
 * source and destination are both shared (smpi_comm_copy_buffer_callback copies private blocks
 * only). */
#define BENCH_MALLOC(n) SMPI_SHARED_MALLOC(n)
#define BENCH_FREE(p) SMPI_SHARED_FREE(p)
#define BENCH_HAVE_SIMULATED_CLOCK 1
#else
#define BENCH_MALLOC(n) malloc(n)
#define BENCH_FREE(p) free(p)
#define BENCH_HAVE_SIMULATED_CLOCK 0
#endif

#define BENCH_MAX_SIZES 256

/* How the ranks start a timed section.
 *   BENCH_START_BARRIER: MPI_Barrier only. Ranks leave a barrier at different times (on SMPI's flow
 *     model, up to one message latency apart), and the early ones count the wait in their time.
 *   BENCH_START_ALIGNED (SMPI only): MPI_Barrier, then every rank sleeps until the same simulated
 *     instant, so all ranks start at exactly the same time, as a collsim engine does. */
enum { BENCH_START_BARRIER = 0, BENCH_START_ALIGNED = 1 };

/* Simulated seconds between the latest barrier exit and the common start: far more than the
 * MPI_Reduce + MPI_Bcast of one double that compute the latest exit take, and free (simulated
 * time). */
#define BENCH_ALIGN_MARGIN_S 0.1

static inline int bench_parse_count(const char* s, long long* out) {
  char* end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0)
    return -1;
  *out = v;
  return 0;
}

/* Parses "B1,B2,..." into sizes; each must be a multiple of `multiple` and at most max_value. */
static inline int bench_parse_sizes(const char* arg, long long* sizes, int* n, long long multiple,
                                    long long max_value) {
  char* copy = strdup(arg);
  int count = 0;
  int ok = 0;
  for (char* tok = strtok(copy, ","); tok != NULL; tok = strtok(NULL, ",")) {
    long long v;
    if (count == BENCH_MAX_SIZES || bench_parse_count(tok, &v) != 0 || v % multiple != 0 ||
        v > max_value) {
      ok = -1;
      break;
    }
    sizes[count++] = v;
  }
  free(copy);
  *n = count;
  return (ok == 0 && count > 0) ? 0 : -1;
}

static inline int bench_parse_start(const char* s, int* mode) {
  if (strcmp(s, "barrier") == 0) {
    *mode = BENCH_START_BARRIER;
    return 0;
  }
  if (strcmp(s, "aligned") == 0 && BENCH_HAVE_SIMULATED_CLOCK) {
    *mode = BENCH_START_ALIGNED;
    return 0;
  }
  return -1;
}

static inline const char* bench_start_name(int mode) {
  return mode == BENCH_START_ALIGNED ? "aligned" : "barrier";
}

/* Synchronises the ranks of comm for a timed section and returns MPI_Wtime() at its start. */
static inline double bench_start(int mode, MPI_Comm comm) {
  MPI_Barrier(comm);
#if BENCH_HAVE_SIMULATED_CLOCK
  if (mode == BENCH_START_ALIGNED) {
    /* SMPI's MPI_Wtime is the simulation clock, the same on every rank: sleep until a common
     * instant. */
    /* MPI_Reduce + MPI_Bcast rather than MPI_Allreduce: leave the allreduce under test alone. */
    double now = MPI_Wtime();
    double latest = now;
    MPI_Reduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Bcast(&latest, 1, MPI_DOUBLE, 0, comm);
    const double target = latest + BENCH_ALIGN_MARGIN_S;
    now = MPI_Wtime();
    const double wait = target - now;
    if (wait > 0) {
      long long ns = (long long)(wait * 1e9 + 0.5);
      struct timespec ts;
      ts.tv_sec = (time_t)(ns / 1000000000LL);
      ts.tv_nsec = (long)(ns % 1000000000LL);
      smpi_nanosleep(&ts, NULL);
    }
    now = MPI_Wtime();
    /* Late by more than the nanosecond rounding (and SimGrid's default 10 ns MPI_Wtime injection,
     * smpi/wtime, when it is not zeroed): the margin was too small. */
    if (now > target + 1e-6) {
      int rank = 0;
      MPI_Comm_rank(comm, &rank);
      fprintf(stderr,
              "bench: rank %d reached the common start %.9f s late (%.3e s): margin too small\n",
              rank, target, now - target);
    }
    return now;
  }
#else
  (void)mode;
#endif
  return MPI_Wtime();
}

#endif

// LD_PRELOAD library: times every cblas_sgemm a process makes, per shape, and
// at exit re-runs each shape on fresh operands to give its "hot" rate beside
// the rate it had inside the run.
//
// Why: `bench step`'s GEMM ratio divides the step's rate by the BLAS's rate on
// the model's shapes measured alone. Whether the gap is the non-GEMM kernels or
// the GEMMs themselves running slower inside the step (operands evicted by the
// kernels between them, shapes the reference does not have) needs each
// product's own time, which a sampling profile only gives summed per kernel.
//
//   OPENBLAS_NUM_THREADS=1 LD_PRELOAD=build/lib/libzeropp_sgemm_timer.so
//       build/bin/zeropp train inputs/tiny.toml --train.steps=4 --data.val=
//       --train.sample_tokens=0 --checkpoint.at_end=false
// (one command line)
//
// prints, at exit on stderr, a markdown table (largest total first) and a
// total line. Times are the calling thread's CPU time, so run the BLAS on one
// thread: its worker threads' time would not be counted. The hot rate is the
// best of 8 calls on operands filled once (not the run's), with the same
// transposes, leading dimensions and beta (0 or not).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                         float*, int);

enum { kMaxShapes = 512, kHotCalls = 8, kRowMajor = 101, kNoTrans = 111 };

struct shape {
  int order, ta, tb, m, n, k, lda, ldb, ldc, beta_nonzero;
  long calls;
  double seconds;
};

static struct shape shapes[kMaxShapes];
static int n_shapes, dropped;
static sgemm_fn real_sgemm;
static int replaying;  // the exit's own calls are not recorded

static double thread_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static sgemm_fn resolve(void) {
  if (!real_sgemm) {
    real_sgemm = (sgemm_fn)dlsym(RTLD_NEXT, "cblas_sgemm");
    if (!real_sgemm) {
      fprintf(stderr, "sgemm_timer: no cblas_sgemm after this library (%s)\n", dlerror());
      abort();
    }
  }
  return real_sgemm;
}

static struct shape* find(const struct shape* key) {
  for (int i = 0; i < n_shapes; ++i) {
    const struct shape* s = &shapes[i];
    if (s->order == key->order && s->ta == key->ta && s->tb == key->tb && s->m == key->m && s->n == key->n &&
        s->k == key->k && s->lda == key->lda && s->ldb == key->ldb && s->ldc == key->ldc &&
        s->beta_nonzero == key->beta_nonzero)
      return &shapes[i];
  }
  if (n_shapes == kMaxShapes) return NULL;
  shapes[n_shapes] = *key;
  return &shapes[n_shapes++];
}

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
  const sgemm_fn f = resolve();
  const double t0 = thread_seconds();
  f(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  const double dt = thread_seconds() - t0;
  if (replaying) return;
  const struct shape key = {order, ta, tb, m, n, k, lda, ldb, ldc, beta != 0.0f, 0, 0.0};
  struct shape* s = find(&key);
  if (!s) {
    ++dropped;
    return;
  }
  s->calls++;
  s->seconds += dt;
}

// Elements a row-major (or column-major) operand of `rows` x `cols` spans.
static size_t extent(int rows, int cols, int ld) {
  return rows > 0 && cols > 0 ? (size_t)(rows - 1) * ld + cols : 0;
}

// Best of kHotCalls on operands allocated and filled here; 0 if out of memory.
static double hot_seconds(const struct shape* s) {
  const int row_major = s->order == kRowMajor;
  // Stored rows x columns of op(A) = m x k and op(B) = k x n, as the caller laid them out.
  const int a_rows = (s->ta == kNoTrans) == row_major ? s->m : s->k, a_cols = s->m + s->k - a_rows;
  const int b_rows = (s->tb == kNoTrans) == row_major ? s->k : s->n, b_cols = s->k + s->n - b_rows;
  const int c_rows = row_major ? s->m : s->n, c_cols = s->m + s->n - c_rows;
  const size_t na = extent(a_rows, a_cols, s->lda), nb = extent(b_rows, b_cols, s->ldb),
               nc = extent(c_rows, c_cols, s->ldc);
  float *a = malloc((na + 1) * sizeof(float)), *b = malloc((nb + 1) * sizeof(float)),
        *c = calloc(nc + 1, sizeof(float));
  double best = 0.0;
  if (a && b && c) {
    for (size_t i = 0; i < na; ++i) a[i] = (float)(i % 13) * 0.01f;
    for (size_t i = 0; i < nb; ++i) b[i] = (float)(i % 7) * 0.01f;
    for (int r = 0; r < kHotCalls; ++r) {
      const double t0 = thread_seconds();
      real_sgemm(s->order, s->ta, s->tb, s->m, s->n, s->k, 1.0f, a, s->lda, b, s->ldb,
                 s->beta_nonzero ? 1.0f : 0.0f, c, s->ldc);
      const double dt = thread_seconds() - t0;
      if (r == 0 || dt < best) best = dt;
    }
  }
  free(a);
  free(b);
  free(c);
  return best;
}

static int by_total_time(const void* x, const void* y) {
  const double a = ((const struct shape*)x)->seconds, b = ((const struct shape*)y)->seconds;
  return (a < b) - (a > b);
}

__attribute__((destructor)) static void report(void) {
  if (n_shapes == 0) return;
  replaying = 1;
  qsort(shapes, (size_t)n_shapes, sizeof shapes[0], by_total_time);
  double run_total = 0.0, hot_total = 0.0, flops_total = 0.0;
  fprintf(stderr, "\nsgemm_timer: %d shapes%s\n", n_shapes,
          dropped ? " (more calls than the table holds: dropped)" : "");
  fprintf(
      stderr,
      "| op(A) | op(B) | M | N | K | lda ldb ldc | beta | calls | in run ms | in run GFLOP/s | hot GFLOP/s "
      "| run / hot |\n|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < n_shapes; ++i) {
    const struct shape* s = &shapes[i];
    const double flops = 2.0 * s->m * s->n * (double)s->k * (double)s->calls;
    const double hot = hot_seconds(s) * (double)s->calls;
    const double run_rate = s->seconds > 0 ? 1e-9 * flops / s->seconds : 0,
                 hot_rate = hot > 0 ? 1e-9 * flops / hot : 0;
    fprintf(stderr, "| %s | %s | %d | %d | %d | %d %d %d | %s | %ld | %.1f | %.1f | %.1f | %.2f |\n",
            s->ta == kNoTrans ? "A" : "A^T", s->tb == kNoTrans ? "B" : "B^T", s->m, s->n, s->k, s->lda,
            s->ldb, s->ldc, s->beta_nonzero ? "1" : "0", s->calls, 1e3 * s->seconds, run_rate, hot_rate,
            hot_rate > 0 ? run_rate / hot_rate : 0);
    run_total += s->seconds;
    hot_total += hot;
    flops_total += flops;
  }
  fprintf(
      stderr,
      "sgemm_timer: total %.1f ms in the run (%.1f GFLOP/s), %.1f ms hot (%.1f GFLOP/s): run / hot %.3f\n",
      1e3 * run_total, run_total > 0 ? 1e-9 * flops_total / run_total : 0, 1e3 * hot_total,
      hot_total > 0 ? 1e-9 * flops_total / hot_total : 0, run_total > 0 ? hot_total / run_total : 0);
}

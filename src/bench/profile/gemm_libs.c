// Scratch benchmark (not in the CMake build): OpenBLAS against other CPU GEMM
// libraries on the model's sgemm shapes, hot and with cold operands, the
// libraries interleaved in every repetition so that the host's speed swings
// hit them alike. docs/performance.md "Other CPU GEMM libraries on
// the model's shapes".
//
// Candidates come without installing them (installing BLIS registers it as
// a libblas.so.3 alternative for every process on the machine):
//   mkdir -p /tmp/blasprobe && cd /tmp/blasprobe
//   apt-get download libblis4-serial libblis-serial-dev libxsmm-dev
//   for d in *.deb; do dpkg -x $d root; done
// Build: OpenBLAS linked directly; libxsmm static (its large-shape fallback
// is OpenBLAS); BLIS's native API from its static library, listed after
// -lopenblas so that cblas_sgemm and sgemm_ stay OpenBLAS's (`nm gemm_libs |
// grep -w 'T sgemm_'` prints nothing); BLIS's cblas_sgemm from its shared
// library, dlopen'ed with RTLD_DEEPBIND so that it reaches BLIS's sgemm_:
//   R=/tmp/blasprobe/root/usr B=$R/lib/x86_64-linux-gnu/blis-serial
//   gcc -O2 -Wall -Wextra -fopenmp -isystem $R/include
//     -isystem $R/include/x86_64-linux-gnu/blis-serial src/bench/profile/gemm_libs.c
//     -o /tmp/blasprobe/gemm_libs $R/lib/libxsmmext.a $R/lib/libxsmm.a -lopenblas $B/libblis.a -ldl -lm
// Run (one thread per library, one core; each command above and below is one line):
//   OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX
//     taskset -c 0 /tmp/blasprobe/gemm_libs SHAPES STEPS REPS $B/libblis.so.4
// SHAPES is sgemm_timer.c's table (its "| A | B^T | M | N | K | lda ldb ldc |
// beta | calls |" rows; other lines are skipped), recorded over STEPS steps,
// so calls / STEPS weight each shape in the step's mix. All row-major.
//
// Per repetition, shape and library (the libraries' order rotates): write a
// 64 MiB buffer, time one call ("cold"), then time two more calls and keep
// the faster ("hot"). Thread CPU time and wall time. Figures are medians over
// the repetitions of each library's time against OpenBLAS's in the same
// repetition.
#define _GNU_SOURCE
#include <blis.h>  // BLIS's header, for its native API; its cblas_sgemm declaration is OpenBLAS's too
#include <dlfcn.h>
#include <libxsmm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

// BLIS's cblas_sgemm has OpenBLAS's signature (enums are ints in both).
typedef __typeof__(&cblas_sgemm) cblas_sgemm_fn;

enum { kMaxShapes = 64, kMaxLibs = 8, kMaxReps = 64, kFlushBytes = 64 << 20 };
// Rounding differences stay near 1e-6 up to K = 50304; one skipped term of K
// (tried: BLIS given K - 1) gives 1e-2.
static const double kMaxError = 1e-4;

struct shape {
  int ta, tb, m, n, k, lda, ldb, ldc, beta_one;
  double calls_per_step;
  float *a, *b, *c;
  size_t na, nb, nc;
};

enum kind { kCblas, kBlisNative, kXsmm, kXsmmOmp, kXsmmJit };

struct lib {
  const char* name;
  enum kind kind;
  cblas_sgemm_fn cblas;  // kCblas
  cntx_t* cntx;          // kBlisNative: the sub-configuration's context
  int wrong;             // a result off OpenBLAS's by more than kMaxError
};

static struct shape shapes[kMaxShapes];
static struct lib libs[kMaxLibs];
static int n_shapes, n_libs;
// [shape][lib][rep]: seconds of the cold call, the hot call; cpu and wall.
static double cold_cpu[kMaxShapes][kMaxLibs][kMaxReps], cold_wall[kMaxShapes][kMaxLibs][kMaxReps];
static double hot_cpu[kMaxShapes][kMaxLibs][kMaxReps], hot_wall[kMaxShapes][kMaxLibs][kMaxReps];
static char* flush_buffer;

static double now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Elements a row-major operand of rows x cols with leading dimension ld spans.
static size_t extent(int rows, int cols, int ld) { return (size_t)(rows - 1) * ld + cols; }

static float* random_floats(size_t n) {
  float* p = malloc(n * sizeof(float));
  if (!p) {
    fprintf(stderr, "gemm_libs: out of memory (%zu floats)\n", n);
    exit(1);
  }
  for (size_t i = 0; i < n; ++i) p[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
  return p;
}

static void call(const struct lib* l, const struct shape* s, float* c) {
  float alpha = 1.0f, beta = s->beta_one ? 1.0f : 0.0f;
  if (l->kind == kCblas) {
    l->cblas(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->m, s->n,
             s->k, alpha, s->a, s->lda, s->b, s->ldb, beta, c, s->ldc);
    return;
  }
  if (l->kind == kBlisNative) {
    // Row-major: row stride ld, column stride 1, of each operand as stored.
    bli_sgemm_ex(s->ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s->tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s->m,
                 s->n, s->k, &alpha, s->a, s->lda, 1, s->b, s->ldb, 1, &beta, c, s->ldc, 1, l->cntx, NULL);
    return;
  }
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const char ta = s->tb ? 'T' : 'N', tb = s->ta ? 'T' : 'N';
  const libxsmm_blasint m = s->n, n = s->m, k = s->k, lda = s->ldb, ldb = s->lda, ldc = s->ldc;
  if (l->kind == kXsmmJit) {
    // One JIT kernel for the whole product (no cache blocking); libxsmm 1.17
    // has none for a transposed first (column-major) operand: those go to
    // libxsmm_sgemm, i.e. its BLAS.
    const int flags = ta == 'T' ? LIBXSMM_GEMM_FLAG_TRANS_A : tb == 'T' ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
    const libxsmm_smmfunction kernel =
        libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
    if (kernel) {
      kernel(s->b, s->a, c);
      return;
    }
  }
  if (l->kind == kXsmmOmp)
    libxsmm_sgemm_omp(&ta, &tb, &m, &n, &k, &alpha, s->b, &lda, s->a, &ldb, &beta, c, &ldc);
  else
    libxsmm_sgemm(&ta, &tb, &m, &n, &k, &alpha, s->b, &lda, s->a, &ldb, &beta, c, &ldc);
}

static int read_shapes(const char* path, double steps) {
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "gemm_libs: cannot open %s\n", path);
    return 0;
  }
  char line[512], ta[8], tb[8];
  struct shape s;
  long calls;
  while (fgets(line, sizeof line, f) && n_shapes < kMaxShapes) {
    memset(&s, 0, sizeof s);
    if (sscanf(line, "| %7s | %7s | %d | %d | %d | %d %d %d | %d | %ld |", ta, tb, &s.m, &s.n, &s.k, &s.lda,
               &s.ldb, &s.ldc, &s.beta_one, &calls) != 10)
      continue;
    s.ta = strcmp(ta, "A^T") == 0;
    s.tb = strcmp(tb, "B^T") == 0;
    s.calls_per_step = (double)calls / steps;
    s.na = s.ta ? extent(s.k, s.m, s.lda) : extent(s.m, s.k, s.lda);
    s.nb = s.tb ? extent(s.n, s.k, s.ldb) : extent(s.k, s.n, s.ldb);
    s.nc = extent(s.m, s.n, s.ldc);
    s.a = random_floats(s.na);
    s.b = random_floats(s.nb);
    s.c = random_floats(s.nc);
    shapes[n_shapes++] = s;
  }
  fclose(f);
  return n_shapes;
}

// Max |C - C_openblas| over max |C_openblas|, both from the same C on entry.
static double check(const struct lib* l, const struct shape* s, const float* c0, const float* ref, float* c) {
  memcpy(c, c0, s->nc * sizeof(float));
  call(l, s, c);
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < s->nc; ++i) {
    diff = fmax(diff, fabs((double)c[i] - ref[i]));
    scale = fmax(scale, fabs((double)ref[i]));
  }
  return diff / scale;
}

static int by_value(const void* x, const void* y) {
  const double a = *(const double*)x, b = *(const double*)y;
  return (a > b) - (a < b);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof v[0], by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median over reps of the time of shape s (s >= 0) or of the step's mix
// (s < 0), each shape j on library lib[j], against OpenBLAS's (library 0).
static double median_ratio_of(double t[kMaxShapes][kMaxLibs][kMaxReps], int s, const int* lib, int reps) {
  double r[kMaxReps];
  for (int i = 0; i < reps; ++i) {
    double num = 0.0, den = 0.0;
    for (int j = 0; j < n_shapes; ++j) {
      if (s >= 0 && j != s) continue;
      num += shapes[j].calls_per_step * t[j][lib[j]][i];
      den += shapes[j].calls_per_step * t[j][0][i];
    }
    r[i] = num / den;
  }
  return median(r, reps);
}

// The same with every shape on library l.
static double median_ratio(double t[kMaxShapes][kMaxLibs][kMaxReps], int s, int l, int reps) {
  int lib[kMaxShapes];
  for (int j = 0; j < n_shapes; ++j) lib[j] = l;
  return median_ratio_of(t, s, lib, reps);
}

// Median over reps of the step mix's GFLOP/s (s < 0) or one shape's.
static double median_rate(double t[kMaxShapes][kMaxLibs][kMaxReps], int s, int l, int reps) {
  double r[kMaxReps];
  for (int i = 0; i < reps; ++i) {
    double flops = 0.0, secs = 0.0;
    for (int j = 0; j < n_shapes; ++j) {
      if (s >= 0 && j != s) continue;
      const struct shape* p = &shapes[j];
      flops += p->calls_per_step * 2.0 * p->m * p->n * (double)p->k;
      secs += p->calls_per_step * t[j][l][i];
    }
    r[i] = 1e-9 * flops / secs;
  }
  return median(r, reps);
}

static void add_blis(const char* path) {
  // DEEPBIND: BLIS's cblas_sgemm must reach BLIS's own sgemm_, not OpenBLAS's.
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  cblas_sgemm_fn f = h ? (cblas_sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
  if (!f) {
    fprintf(stderr, "gemm_libs: no cblas_sgemm in %s (%s)\n", path, dlerror());
    exit(1);
  }
  Dl_info info;
  dladdr((void*)f, &info);
  const char* (*arch_string)(int) = (const char* (*)(int))dlsym(h, "bli_arch_string");
  int (*arch_id)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
  const char* arch = arch_string && arch_id ? arch_string(arch_id()) : "?";
  fprintf(stderr, "gemm_libs: %s: cblas_sgemm from %s, BLIS sub-configuration %s\n", path, info.dli_fname,
          arch);
  char* name = malloc(strlen(path) + strlen(arch) + 32);
  sprintf(name, "BLIS cblas, %s (%s)", arch, path);
  libs[n_libs++] = (struct lib){name, kCblas, f, NULL, 0};
}

static void flush(int rep) { memset(flush_buffer, rep & 0xff, kFlushBytes); }

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gemm_libs SHAPES STEPS REPS [libblis.so ...]\n");
    return 1;
  }
  const int reps = atoi(argv[3]);
  if (reps < 1 || reps > kMaxReps || read_shapes(argv[1], atof(argv[2])) == 0) {
    fprintf(stderr, "gemm_libs: REPS must be 1..%d and SHAPES must hold sgemm_timer rows\n", kMaxReps);
    return 1;
  }
  flush_buffer = malloc(kFlushBytes);
  libs[n_libs++] = (struct lib){"OpenBLAS", kCblas, cblas_sgemm, NULL, 0};
  for (int i = 4; i < argc && n_libs < kMaxLibs - 4; ++i) add_blis(argv[i]);
  // BLIS 0.9 picks 'haswell' when it cannot tell a Xeon's FMA units from the CPU's name (as on this VM),
  // and its BLIS_ARCH_TYPE override aborts; the static library's context table still has 'skx'.
  bli_init();
  libs[n_libs++] = (struct lib){"BLIS skx (bli_sgemm_ex)", kBlisNative, NULL,
                                bli_gks_lookup_ind_cntx(BLIS_ARCH_SKX, BLIS_NAT), 0};
  libxsmm_init();
  libs[n_libs++] = (struct lib){"libxsmm_sgemm", kXsmm, NULL, NULL, 0};
  libs[n_libs++] = (struct lib){"libxsmm_sgemm_omp", kXsmmOmp, NULL, NULL, 0};
  libs[n_libs++] = (struct lib){"libxsmm_smmdispatch", kXsmmJit, NULL, NULL, 0};

  fprintf(stderr, "gemm_libs: max |C - C_OpenBLAS| / max |C_OpenBLAS| per shape:\n");
  for (int s = 0; s < n_shapes; ++s) {
    struct shape* p = &shapes[s];
    float *c0 = malloc(p->nc * sizeof(float)), *ref = malloc(p->nc * sizeof(float));
    memcpy(c0, p->c, p->nc * sizeof(float));
    memcpy(ref, c0, p->nc * sizeof(float));
    call(&libs[0], p, ref);
    fprintf(stderr, "  %dx%dx%d:", p->m, p->n, p->k);
    for (int l = 1; l < n_libs; ++l) {
      const double e = check(&libs[l], p, c0, ref, p->c);
      fprintf(stderr, " %.1e", e);
      libs[l].wrong |= !(e <= kMaxError);
    }
    fprintf(stderr, "\n");
    free(c0);
    free(ref);
  }

  const double cpu0 = now(CLOCK_PROCESS_CPUTIME_ID), thread0 = now(CLOCK_THREAD_CPUTIME_ID);
  for (int r = 0; r < reps; ++r) {
    for (int s = 0; s < n_shapes; ++s) {
      for (int i = 0; i < n_libs; ++i) {
        const int l = (i + r + s) % n_libs;
        flush(r);
        double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        call(&libs[l], &shapes[s], shapes[s].c);
        cold_cpu[s][l][r] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        cold_wall[s][l][r] = now(CLOCK_MONOTONIC) - w0;
        hot_cpu[s][l][r] = hot_wall[s][l][r] = INFINITY;
        for (int h = 0; h < 2; ++h) {
          c0 = now(CLOCK_THREAD_CPUTIME_ID);
          w0 = now(CLOCK_MONOTONIC);
          call(&libs[l], &shapes[s], shapes[s].c);
          hot_cpu[s][l][r] = fmin(hot_cpu[s][l][r], now(CLOCK_THREAD_CPUTIME_ID) - c0);
          hot_wall[s][l][r] = fmin(hot_wall[s][l][r], now(CLOCK_MONOTONIC) - w0);
        }
      }
    }
  }
  // With one thread per library the process's CPU time equals this thread's; more would hide work.
  fprintf(stderr, "gemm_libs: process CPU / main thread CPU over the timed loop: %.3f\n",
          (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / (now(CLOCK_THREAD_CPUTIME_ID) - thread0));

  printf(
      "| op(A) | op(B) | M | N | K | beta | calls/step | library | hot GFLOP/s (cpu) | hot / OpenBLAS cpu, "
      "wall | cold GFLOP/s (cpu) | cold / OpenBLAS cpu, wall |\n"
      "|---|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|\n");
  for (int s = -1; s < n_shapes; ++s) {
    for (int l = 0; l < n_libs; ++l) {
      if (s < 0)
        printf("| **step mix** | | | | | | | %s%s", libs[l].name, libs[l].wrong ? " (WRONG RESULTS)" : "");
      else {
        const struct shape* p = &shapes[s];
        printf("| %s | %s | %d | %d | %d | %d | %.0f | %s%s", p->ta ? "A^T" : "A", p->tb ? "B^T" : "B", p->m,
               p->n, p->k, p->beta_one, p->calls_per_step, libs[l].name,
               libs[l].wrong ? " (WRONG RESULTS)" : "");
      }
      // Time ratio: below 1 is faster than OpenBLAS.
      printf(" | %.1f | %.3f, %.3f | %.1f | %.3f, %.3f |\n", median_rate(hot_cpu, s, l, reps),
             median_ratio(hot_cpu, s, l, reps), median_ratio(hot_wall, s, l, reps),
             median_rate(cold_cpu, s, l, reps), median_ratio(cold_cpu, s, l, reps),
             median_ratio(cold_wall, s, l, reps));
    }
  }
  // An upper bound on mixing libraries: each shape on the library with the best median
  // hot ratio (picked on the same data, so it flatters by the noise).
  int best[kMaxShapes];
  for (int s = 0; s < n_shapes; ++s) {
    best[s] = 0;
    for (int l = 1; l < n_libs; ++l)
      if (median_ratio(hot_cpu, s, l, reps) < median_ratio(hot_cpu, s, best[s], reps)) best[s] = l;
  }
  printf("\nbest library per shape, step mix / OpenBLAS: hot cpu %.3f wall %.3f, cold cpu %.3f wall %.3f\n",
         median_ratio_of(hot_cpu, -1, best, reps), median_ratio_of(hot_wall, -1, best, reps),
         median_ratio_of(cold_cpu, -1, best, reps), median_ratio_of(cold_wall, -1, best, reps));
  for (int l = 0; l < n_libs; ++l)
    if (libs[l].wrong) return 2;
  return 0;
}

/* STREAM's triad a[i] = b[i] + s * c[i] (McCalpin), the memory half of the bench's floor.
 * The arrays are allocated and first touched here, by the same OpenMP threads (static
 * schedule) that run the triad, so that each page sits near the core that streams it.
 * Counted as STREAM counts it: 3 x 8 bytes per element (two reads, one write).
 * Returns the best bytes per second of `reps` runs, or -1 when the arrays cannot be
 * allocated. */
#define _POSIX_C_SOURCE 200112L
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* read after every run, so that no store of the triad is dead */
volatile double bench_triad_sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bench_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

double bench_triad(ptrdiff_t n, int reps)
{
    double *a, *b, *c;
    if (posix_memalign((void **)&a, 64, (size_t)n * sizeof(double))) return -1.0;
    if (posix_memalign((void **)&b, 64, (size_t)n * sizeof(double))) { free(a); return -1.0; }
    if (posix_memalign((void **)&c, 64, (size_t)n * sizeof(double))) { free(a); free(b); return -1.0; }
#pragma omp parallel for schedule(static)
    for (ptrdiff_t i = 0; i < n; i++) { a[i] = 0.0; b[i] = 1.0; c[i] = 2.0; }
    const double s = 3.0;
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
#pragma omp parallel for schedule(static)
        for (ptrdiff_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        const double t = now() - t0;
        if (t < best) best = t;
        bench_triad_sink += a[(ptrdiff_t)r * 4099 % n];
    }
    free(a); free(b); free(c);
    return 3.0 * sizeof(double) * (double)n / best;
}

/* Hand-written fused C for examples/helm.teil (inverse Helmholtz, TeML paper 003), for `make bench`:
 *   t = (S (x) S (x) S) u,   r = t / D,   v = (S^T (x) S^T (x) S^T) r,   per element e,
 * with S : [N][N] and D : [N][N][N] the same for every element.  The division is IEEE
 * division, as numpy's t / D in the peers (the bench's D has no zero).  Compile with
 * -DN=<n>; M is N. */
#include <stddef.h>
#ifndef M
#define M N
#endif
#include "tensor3.h"

void hand_helm(ptrdiff_t E, const double *restrict S, const double *restrict D,
               const double *restrict u, double *restrict v)
{
    double St[N * N];
    transpose(S, St, N, N);
#pragma omp parallel for schedule(static)
    for (ptrdiff_t e = 0; e < E; e++) {
        double t[N * N * N];
        apply3(S, St, u + e * (N * N * N), t);
        for (int q = 0; q < N * N * N; q++) t[q] /= D[q];
        apply3(St, S, t, v + e * (N * N * N));  /* S^T's transpose is S */
    }
}

/* Hand-written fused C for examples/interp.teil (TeML paper 003, Table 2), for `make bench`:
 *   v[e][i][j][k] = sum_{l,m,n} A[i][l] A[j][m] A[k][n] u[e][l][m][n],  A : [M][N].
 * One element's three contractions run back to back on blocks that stay in L1/L2;
 * elements are shared among the OpenMP threads (OMP_NUM_THREADS=1: one thread). */
#include <stddef.h>
#include "tensor3.h"

void hand_interp(ptrdiff_t E, const double *restrict A, const double *restrict u, double *restrict v)
{
    double At[N * M];
    transpose(A, At, M, N);
#pragma omp parallel for schedule(static)
    for (ptrdiff_t e = 0; e < E; e++)
        apply3(A, At, u + e * (N * N * N), v + e * (M * M * M));
}

/* Hand-written C for examples/bmm.teil (batched matrix product, TeML paper 003), for `make bench`:
 *   C[b][i][j] = sum_k A[b][i][k] B[b][k][j],  A : [nb][NI][NK],  B : [nb][NK][NJ].
 * Compile with -DNI=.. -DNJ=.. -DNK=..; the inner loop runs over j (unit stride). */
#include <stddef.h>

#if !defined(NI) || !defined(NJ) || !defined(NK)
#error "compile with -DNI=.. -DNJ=.. -DNK=.."
#endif

void hand_bmm(ptrdiff_t nb, const double *restrict A, const double *restrict B, double *restrict C)
{
#pragma omp parallel for schedule(static)
    for (ptrdiff_t b = 0; b < nb; b++) {
        const double *restrict Ab = A + b * (NI * NK);
        const double *restrict Bb = B + b * (NK * NJ);
        double *restrict Cb = C + b * (NI * NJ);
        for (int i = 0; i < NI; i++) {
            double *restrict c = Cb + i * NJ;
            for (int j = 0; j < NJ; j++) c[j] = 0.0;
            for (int k = 0; k < NK; k++) {
                const double a = Ab[i * NK + k];
                const double *restrict bk = Bb + k * NJ;
                for (int j = 0; j < NJ; j++) c[j] += a * bk[j];
            }
        }
    }
}

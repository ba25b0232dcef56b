/* The tensor operator (A (x) A (x) A) applied to one element's block (paper 000,
 * section 5, equations (7)-(8)), lifted into three single contractions of O(n^4)
 * each, as examples/interp.teil lifts it:
 *   y[i][j][k] = sum_{l,m,n} A[i][l] A[j][m] A[k][n] x[l][m][n],   A : [M][N].
 * Hand-written for `make bench` (issue 15): plain loop nests whose extents M and N
 * are compile-time constants (-DM=.. -DN=..), the innermost loop of each step
 * unit-stride over its output, so that the compiler vectorises it without
 * reassociating a sum (the build has no -ffast-math).  At is A transposed. */
#ifndef BENCH_HAND_TENSOR3_H
#define BENCH_HAND_TENSOR3_H

#if !defined(M) || !defined(N)
#error "compile with -DM=<rows of A> -DN=<columns of A>"
#endif

static inline void apply3(const double *restrict A, const double *restrict At,
                          const double *restrict x, double *restrict y)
{
    double s1[M][N][N];  /* s1[i][m][n] = sum_l A[i][l] x[l][m][n] */
    double s2[M][M][N];  /* s2[i][j][n] = sum_m A[j][m] s1[i][m][n] */
    for (int i = 0; i < M; i++) {
        double *restrict s = &s1[i][0][0];
        for (int q = 0; q < N * N; q++) s[q] = 0.0;
        for (int l = 0; l < N; l++) {
            const double a = A[i * N + l];
            const double *restrict xl = x + l * N * N;
            for (int q = 0; q < N * N; q++) s[q] += a * xl[q];
        }
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double *restrict s = s2[i][j];
            for (int n = 0; n < N; n++) s[n] = 0.0;
            for (int m = 0; m < N; m++) {
                const double a = A[j * N + m];
                for (int n = 0; n < N; n++) s[n] += a * s1[i][m][n];
            }
        }
    /* y[i][j][k] = sum_n s2[i][j][n] At[n][k]: unit stride over k */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double *restrict yij = y + (i * M + j) * M;
            for (int k = 0; k < M; k++) yij[k] = 0.0;
            for (int n = 0; n < N; n++) {
                const double s = s2[i][j][n];
                for (int k = 0; k < M; k++) yij[k] += s * At[n * M + k];
            }
        }
}

static inline void transpose(const double *restrict A, double *restrict At, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) At[c * rows + r] = A[r * cols + c];
}

#endif

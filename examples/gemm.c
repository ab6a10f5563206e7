/* The seed documents' opt_gemm, in C: C = A x B for n x n float matrices,
 * row-major. Two loop orders, as in the walkthrough: the textbook one (the
 * inner loop strides down a column of B) and the permuted one (i, k, j: the
 * inner loop walks rows of B and C contiguously, so it vectorizes without
 * reassociating floating-point sums). Both compute the same C. */

void gemm(int n, const float *restrict A, const float *restrict B, float *restrict C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int k = 0; k < n; k++)
        acc += A[i * n + k] * B[k * n + j];
      C[i * n + j] = acc;
    }
}

void gemm_permuted(int n, const float *restrict A, const float *restrict B, float *restrict C) {
  for (int i = 0; i < n * n; i++)
    C[i] = 0.0f;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      float a = A[i * n + k];
      for (int j = 0; j < n; j++)
        C[i * n + j] += a * B[k * n + j];
    }
}

// The SASS gate's hand-written CUDA of kernel 51 (tests/sass/51_sgemm_prefetch.cu: cuBLAS's
// tiles and main loop, written as an expert would, 24 KB of static shared memory) with a
// launcher of the shape `prism build --emit-host` gives Prism's, so that the sgemm harness
// (gemm.cu, harness `gemm_prefetch_hand` in run.sh) times what expert CUDA of the same
// algorithm reaches against cuBLAS beside Prism's kernel 51. Issue 10 asks for Prism's CUDA
// to be as fast as an expert's; this separates what Prism's CUDA loses from what any CUDA
// compiled by nvcc loses to cuBLAS's hand-assembled SASS. Test tooling, not the product.
#pragma once
#include "../../tests/sass/51_sgemm_prefetch.cu"

inline cudaError_t hand_launch_sgemm_prefetch(dim3 grid, dim3 block, int M, int N, int K, float alpha,
                                              const float* A, const float* B, float beta, float* C,
                                              cudaStream_t stream = 0)
{
    sgemm_prefetch<<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    return cudaGetLastError();
}

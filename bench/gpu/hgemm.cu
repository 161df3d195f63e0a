// bf16 tensor-core gemm: one of Prism's mma.sync gemms (PRISM_HGEMM, its launcher, with
// PRISM_HGEMM_LABEL, PRISM_HGEMM_THREADS and PRISM_HGEMM_TILE, the square block tile, or
// PRISM_HGEMM_BM x PRISM_HGEMM_BN; by
// default `34_gemm_bf16_ldmatrix`, 64 x 64 tiles of 128 threads; run.sh also builds
// `37_gemm_bf16_pipelined`, 128 x 128 tiles of 256 threads and a four-stage cp.async
// pipeline; built by `prism build --emit-host` into PRISM_KERNELS) against cuBLAS's `cublasGemmEx` with bf16 inputs, f32 output
// and f32 accumulation (tensor cores), row-major C = A @ B, square 1024..8192. GFLOP/s;
// exits 1 if an output differs (relative Frobenius norm 1e-3: both accumulate in f32 in
// different orders). Test tooling, not part of the product.
#include "common.cuh"
#include <cuda_bf16.h>
#include <cmath>
#include <string>

#include "blas.cuh"

#include PRISM_KERNELS

#ifndef PRISM_HGEMM
#define PRISM_HGEMM prism_launch_gemm_bf16_ldmatrix
#define PRISM_HGEMM_LABEL "34_gemm_bf16_ldmatrix"
#define PRISM_HGEMM_THREADS 128
#define PRISM_HGEMM_TILE 64
#endif
// Rectangular block tiles (the wide-warp-tile variants of kernel 37: 128 x 256, 256 x 128):
// rows and columns, each the square tile unless given.
#ifndef PRISM_HGEMM_BM
#define PRISM_HGEMM_BM PRISM_HGEMM_TILE
#endif
#ifndef PRISM_HGEMM_BN
#define PRISM_HGEMM_BN PRISM_HGEMM_TILE
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    const int sizes[] = {1024, 2048, 4096, 8192};
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 2;
    print_header("GFLOP/s");
    bool all_same = true;
    for (int s : sizes) {
        if (skip_size(s >= 4096)) continue;
        const size_t n2 = size_t(s) * s;
        std::vector<__nv_bfloat16> a(n2), b(n2);
        Rng rng(s);
        for (auto& v : a) v = __float2bfloat16(rng.uniform());
        for (auto& v : b) v = __float2bfloat16(rng.uniform());
        __nv_bfloat16 *da, *db;
        float *dc_prism, *dc_blas;
        CHECK(cudaMalloc(&da, n2 * 2));
        CHECK(cudaMalloc(&db, n2 * 2));
        CHECK(cudaMalloc(&dc_prism, n2 * 4));
        CHECK(cudaMalloc(&dc_blas, n2 * 4));
        CHECK(cudaMemcpy(da, a.data(), n2 * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, b.data(), n2 * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(dc_prism, 0, n2 * 4));
        CHECK(cudaMemset(dc_blas, 0, n2 * 4));
        const float alpha = 1.0f, beta = 0.0f;
        const unsigned grid =
            unsigned(((s + PRISM_HGEMM_BM - 1) / PRISM_HGEMM_BM) * ((s + PRISM_HGEMM_BN - 1) / PRISM_HGEMM_BN));
        auto prism = [&] { CHECK(PRISM_HGEMM(grid, PRISM_HGEMM_THREADS, s, s, s, alpha, da, db, beta, dc_prism)); };
        // Row-major C = A B is column-major C^T = B^T A^T.
        auto blas = [&] {
            if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &alpha, db, CUDA_R_16BF, s, da, CUDA_R_16BF, s,
                             &beta, dc_blas, CUDA_R_32F, s, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
                CUBLAS_STATUS_SUCCESS) {
                std::fprintf(stderr, "cublasGemmEx failed\n");
                std::exit(2);
            }
        };
        const double t_prism = time_ms(prism, 3, reps, nullptr);
        const double t_blas = time_ms(blas, 3, reps, nullptr);
        std::vector<float> cp(n2), cb(n2);
        CHECK(cudaMemcpy(cp.data(), dc_prism, n2 * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(cb.data(), dc_blas, n2 * 4, cudaMemcpyDeviceToHost));
        const bool same = close_in_norm(cp, cb, 1e-3);
        all_same = all_same && same;
        const double flops = 2.0 * s * double(s) * s;
        const std::string size = std::to_string(s) + "^3";
        print_row("bf16 gemm (" PRISM_HGEMM_LABEL ")", size.c_str(), flops / (t_prism * 1e6),
                  "cuBLAS GemmEx bf16 -> f32", flops / (t_blas * 1e6), same);
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc_prism);
        cudaFree(dc_blas);
    }
    cublasDestroy(h);
    return all_same ? 0 : 1;
}

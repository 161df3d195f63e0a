// The H100 bf16 gemm: Prism's `38_hgemm_warp_specialised` (TMA, a four-stage warp-specialised
// pipeline, wgmma m64n256k16, setmaxnreg; built by `prism build --emit-host` into
// PRISM_KERNELS, see run.sh) against cuBLAS's `cublasGemmEx` with bf16 inputs and output and
// f32 accumulation, C = A B^T with A (M x K) and B (N x K) row-major, square 1024..8192.
// Prism runs one persistent block per multiprocessor. GFLOP/s; exits 1 if an output differs
// (relative Frobenius norm 1e-2: both round f32 sums accumulated in different orders to
// bf16). Test tooling, not part of the product.
#include "common.cuh"
#include <cuda_bf16.h>
#include <cmath>
#include <string>

#include "blas.cuh"

#include PRISM_KERNELS
// The row label: the kernel and, for a variant of bench/gpu/variants.txt, its -D choices.
#ifndef PRISM_HGEMM_WS_LABEL
#define PRISM_HGEMM_WS_LABEL "38_hgemm_warp_specialised"
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    const int sizes[] = {1024, 2048, 4096, 8192};
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 2;
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    print_header("GFLOP/s");
    bool all_same = true;
    for (int s : sizes) {
        if (skip_size(s >= 4096)) continue;
        const size_t n2 = size_t(s) * s;
        std::vector<__nv_bfloat16> a(n2), b(n2);
        Rng rng(s + 38);
        for (auto& v : a) v = __float2bfloat16(rng.uniform());
        for (auto& v : b) v = __float2bfloat16(rng.uniform());
        __nv_bfloat16 *da, *db, *dc_prism, *dc_blas;
        CHECK(cudaMalloc(&da, n2 * 2));
        CHECK(cudaMalloc(&db, n2 * 2));
        CHECK(cudaMalloc(&dc_prism, n2 * 2));
        CHECK(cudaMalloc(&dc_blas, n2 * 2));
        CHECK(cudaMemcpy(da, a.data(), n2 * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, b.data(), n2 * 2, cudaMemcpyHostToDevice));
        const float alpha = 1.0f, beta = 0.0f;
        const int tiles = (s / 128) * (s / 256);
        const unsigned grid = unsigned(std::min(sms, tiles));
        auto prism = [&] { CHECK(prism_launch_hgemm(grid, 384, da, s, s, db, s, s, dc_prism, s, s, s)); };
        // Row-major C = A B^T is column-major C^T = B A^T: B read transposed, A as it is.
        auto blas = [&] {
            if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s, s, s, &alpha, db, CUDA_R_16BF, s, da, CUDA_R_16BF, s,
                             &beta, dc_blas, CUDA_R_16BF, s, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
                CUBLAS_STATUS_SUCCESS) {
                std::fprintf(stderr, "cublasGemmEx failed\n");
                std::exit(2);
            }
        };
        const double t_prism = time_ms(prism, 3, reps, nullptr);
        const double t_blas = time_ms(blas, 3, reps, nullptr);
        std::vector<__nv_bfloat16> cp(n2), cb(n2);
        CHECK(cudaMemcpy(cp.data(), dc_prism, n2 * 2, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(cb.data(), dc_blas, n2 * 2, cudaMemcpyDeviceToHost));
        const bool same = close_in_norm(cp, cb, 1e-2, [](__nv_bfloat16 x) { return double(__bfloat162float(x)); });
        all_same = all_same && same;
        const double flops = 2.0 * s * double(s) * s;
        const std::string size = std::to_string(s) + "^3";
        print_row("bf16 gemm (" PRISM_HGEMM_WS_LABEL ")", size.c_str(), flops / (t_prism * 1e6),
                  "cuBLAS GemmEx bf16 -> bf16", flops / (t_blas * 1e6), same);
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc_prism);
        cudaFree(dc_blas);
    }
    cublasDestroy(h);
    return all_same ? 0 : 1;
}

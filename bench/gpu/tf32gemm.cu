// tf32 tensor-core gemm: one of Prism's tf32 gemms against cuBLAS. By default
// `43_gemm_tf32_wgmma` (Hopper: TMA into a three-stage ring, wgmma m64n128k8 tf32, a producer
// and a consumer warpgroup); with PRISM_TF32_PIPELINED defined, `45_gemm_tf32_pipelined`
// (sm_80 and later: a four-stage cp.async ring, ldmatrix, mma.sync m16n8k8 tf32, 128 x 128
// tiles of 256 threads), whose launcher takes plain pointers and alpha, beta instead of
// tensor maps; with PRISM_TF32_WS defined, `48_gemm_tf32_warp_specialised` (kernel 38's
// structure in tf32: 128 x 256 tiles, two consumer warpgroups and a TMA producer, one
// persistent block per multiprocessor; M a multiple of 128 and N of 256, so the shape
// 1000 x 3000 is skipped). Each is built by `prism build --emit-host` into PRISM_KERNELS (run.sh). Against
// cuBLAS's `cublasGemmEx` with f32
// inputs and output and CUBLAS_COMPUTE_32F_FAST_TF32 (tf32 tensor cores), C = A B^T with A
// (M x K) and B (N x K) row-major, at issue 10's sizes (square 1024..8192 and two others; K
// a multiple of 4: TMA rows and 45's copies are 16-byte multiples). GFLOP/s; exits 1 if an output
// differs (relative Frobenius norm 1e-3: both drop inputs to tf32, perhaps rounding
// differently, and sum in different orders). Test tooling, not part of the product.
#include "common.cuh"
#include <cmath>
#include <string>

#include "blas.cuh"

#include PRISM_KERNELS

// Kernel 45's block tile and threads (its wide-warp-tile variants: 128 x 256 and 256 x 128
// of 256 threads, 128 x 128 of 128).
#ifndef PRISM_TF32_BM
#define PRISM_TF32_BM 128
#endif
#ifndef PRISM_TF32_BN
#define PRISM_TF32_BN 128
#endif
#ifndef PRISM_TF32_THREADS
#define PRISM_TF32_THREADS 256
#endif

// The row label (a variant built with `prism build -D` names itself, variants.txt).
#ifndef PRISM_TF32_LABEL
#if defined(PRISM_TF32_PIPELINED)
#define PRISM_TF32_LABEL "45_gemm_tf32_pipelined"
#elif defined(PRISM_TF32_WS)
#define PRISM_TF32_LABEL "48_gemm_tf32_warp_specialised"
#else
#define PRISM_TF32_LABEL "43_gemm_tf32_wgmma"
#endif
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    struct Shape {
        int m, n, k;
    };
    const Shape shapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                            {8192, 8192, 8192}, {4096, 1024, 2048}, {1000, 3000, 776}};
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 2;
    print_header("GFLOP/s");
    bool all_same = true;
#ifdef PRISM_TF32_WS
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
#endif
    for (const Shape& s : shapes) {
        if (skip_size(s.m == s.n && s.n == s.k && s.m >= 4096)) continue;
#ifdef PRISM_TF32_WS
        if (s.m % 128 != 0 || s.n % 256 != 0) continue;
#endif
        const size_t na = size_t(s.m) * s.k, nb = size_t(s.n) * s.k, nc = size_t(s.m) * s.n;
        std::vector<float> a(na), b(nb);
        Rng rng(s.m * 131 + s.n * 7 + s.k + 43);
        for (auto& v : a) v = rng.uniform();
        for (auto& v : b) v = rng.uniform();
        float *da, *db, *dc_prism, *dc_blas;
        CHECK(cudaMalloc(&da, na * 4));
        CHECK(cudaMalloc(&db, nb * 4));
        CHECK(cudaMalloc(&dc_prism, nc * 4));
        CHECK(cudaMalloc(&dc_blas, nc * 4));
        CHECK(cudaMemcpy(da, a.data(), na * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, b.data(), nb * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(dc_prism, 0, nc * 4));
        CHECK(cudaMemset(dc_blas, 0, nc * 4));
        const float alpha = 1.0f, beta = 0.0f;
#ifdef PRISM_TF32_PIPELINED
        const unsigned grid = unsigned(((s.m + PRISM_TF32_BM - 1) / PRISM_TF32_BM) * ((s.n + PRISM_TF32_BN - 1) / PRISM_TF32_BN));
        auto prism = [&] {
            CHECK(prism_launch_gemm_tf32_pipelined(grid, PRISM_TF32_THREADS, s.m, s.n, s.k, alpha, da, db, beta, dc_prism));
        };
#elif defined(PRISM_TF32_WS)
        const unsigned grid = unsigned(std::min(sms, (s.m / 128) * (s.n / 256)));
        auto prism = [&] {
            CHECK(prism_launch_gemm_tf32_ws(grid, 384, da, s.m, s.k, db, s.n, s.k, dc_prism, s.m, s.n, s.k));
        };
#else
        const unsigned grid = unsigned(((s.m + 63) / 64) * ((s.n + 127) / 128));
        auto prism = [&] {
            CHECK(prism_launch_gemm_tf32(grid, 256, da, s.m, s.k, db, s.n, s.k, dc_prism, s.m, s.n, s.k));
        };
#endif
        // Row-major C = A B^T is column-major C^T = B A^T: B read transposed, A as it is.
        auto blas = [&] {
            if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, db, CUDA_R_32F, s.k, da, CUDA_R_32F,
                             s.k, &beta, dc_blas, CUDA_R_32F, s.n, CUBLAS_COMPUTE_32F_FAST_TF32,
                             CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
                std::fprintf(stderr, "cublasGemmEx failed\n");
                std::exit(2);
            }
        };
        const double t_prism = time_ms(prism, 3, reps, nullptr);
        const double t_blas = time_ms(blas, 3, reps, nullptr);
        std::vector<float> cp(nc), cb(nc);
        CHECK(cudaMemcpy(cp.data(), dc_prism, nc * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(cb.data(), dc_blas, nc * 4, cudaMemcpyDeviceToHost));
        const bool same = close_in_norm(cp, cb, 1e-3);
        all_same = all_same && same;
        const double flops = 2.0 * s.m * double(s.n) * s.k;
        const std::string size = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
        print_row("tf32 gemm (" PRISM_TF32_LABEL ")", size.c_str(), flops / (t_prism * 1e6),
                  "cuBLAS GemmEx f32, FAST_TF32", flops / (t_blas * 1e6), same);
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc_prism);
        cudaFree(dc_blas);
    }
    cublasDestroy(h);
    return all_same ? 0 : 1;
}

// sgemm: one of Prism's fp32 gemms (PRISM_SGEMM, its launcher, and PRISM_SGEMM_LABEL; by
// default tests/ui/accept/kernels/32_sgemm_6_vectorized.prism; run.sh also builds
// 36_sgemm_pipelined, 44_sgemm_warp_tiled, 46_sgemm_deep_k, 50_sgemm_wide_tiles and
// 51_sgemm_prefetch; all take the same arguments, 128 x 128 tiles and 256 threads but 50's
// and 51's 128 threads and their tile variants: PRISM_SGEMM_THREADS, PRISM_SGEMM_BM,
// PRISM_SGEMM_BN),
// built by `prism build --emit-host` into PRISM_KERNELS, against cuBLAS's
// SGEMM (fp32 FFMA, no TF32), row-major C = A @ B, at the sizes of issue 10. Prints a
// Markdown table of GFLOP/s; exits 1 if an output differs. Test tooling, not part of the
// product.
#include "common.cuh"
#include <cmath>
#include <string>

#include "blas.cuh"

#include PRISM_KERNELS

#ifndef PRISM_SGEMM
#define PRISM_SGEMM prism_launch_sgemm_vectorized
#define PRISM_SGEMM_LABEL "32_sgemm_6_vectorized"
#endif
#ifndef PRISM_SGEMM_THREADS
#define PRISM_SGEMM_THREADS 256
#endif
// The block tile (kernel 50's -D BM / -D BN variants take other sizes).
#ifndef PRISM_SGEMM_BM
#define PRISM_SGEMM_BM 128
#endif
#ifndef PRISM_SGEMM_BN
#define PRISM_SGEMM_BN 128
#endif

static void blas_check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cuBLAS %s failed: %d\n", what, int(s));
        std::exit(2);
    }
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    struct Shape {
        int m, n, k;
    };
    const Shape shapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                            {8192, 8192, 8192}, {4096, 1024, 2048}, {1000, 3000, 777}};
    cublasHandle_t h;
    blas_check(cublasCreate(&h), "create");
    print_header("GFLOP/s");
    bool all_same = true;
    for (const Shape& s : shapes) {
        if (skip_size(s.m == s.n && s.n == s.k && s.m >= 4096)) continue;
        const size_t na = size_t(s.m) * s.k, nb = size_t(s.k) * s.n, nc = size_t(s.m) * s.n;
        std::vector<float> a(na), b(nb);
        Rng rng(s.m * 131 + s.n * 7 + s.k);
        for (auto& v : a) v = rng.uniform();
        for (auto& v : b) v = rng.uniform();
        float *da, *db, *dc_prism, *dc_blas;
        CHECK(cudaMalloc(&da, na * 4));
        CHECK(cudaMalloc(&db, nb * 4));
        CHECK(cudaMalloc(&dc_prism, nc * 4));
        CHECK(cudaMalloc(&dc_blas, nc * 4));
        CHECK(cudaMemcpy(da, a.data(), na * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, b.data(), nb * 4, cudaMemcpyHostToDevice));
        // beta is 0, but the kernels read C (0 * NaN would be NaN): start from zeros.
        CHECK(cudaMemset(dc_prism, 0, nc * 4));
        CHECK(cudaMemset(dc_blas, 0, nc * 4));
        const float alpha = 1.0f, beta = 0.0f;
        const unsigned grid = unsigned(((s.m + PRISM_SGEMM_BM - 1) / PRISM_SGEMM_BM) *
                                       ((s.n + PRISM_SGEMM_BN - 1) / PRISM_SGEMM_BN));
        auto prism = [&] { CHECK(PRISM_SGEMM(grid, PRISM_SGEMM_THREADS, s.m, s.n, s.k, alpha, da, db, beta, dc_prism)); };
        // Row-major C = A B is column-major C^T = B^T A^T.
        auto blas = [&] {
            blas_check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, db, s.n, da, s.k, &beta,
                                   dc_blas, s.n),
                       "sgemm");
        };
        const double t_prism = time_ms(prism, 3, reps, nullptr);
        const double t_blas = time_ms(blas, 3, reps, nullptr);
        std::vector<float> cp(nc), cb(nc);
        CHECK(cudaMemcpy(cp.data(), dc_prism, nc * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(cb.data(), dc_blas, nc * 4, cudaMemcpyDeviceToHost));
        // The summation orders differ: compare in the Frobenius norm.
        const bool same = close_in_norm(cp, cb, 1e-5);
        all_same = all_same && same;
        const double flops = 2.0 * s.m * s.n * s.k;
        const std::string size = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
        print_row("sgemm (" PRISM_SGEMM_LABEL ")", size.c_str(), flops / (t_prism * 1e6), "cuBLAS SGEMM",
                  flops / (t_blas * 1e6), same);
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc_prism);
        cudaFree(dc_blas);
    }
    cublasDestroy(h);
    return all_same ? 0 : 1;
}

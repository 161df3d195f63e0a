// Bandwidth-bound row kernels against the copy that bounds them: Prism's `17_transpose_smem_padded`
// (32 x 33 padded shared tiles) and `20_softmax_rows_warp` (a warp per row, shuffle
// all-reductions), built by `prism build --emit-host` into PRISM_TRANSPOSE and PRISM_SOFTMAX
// (see run.sh), against a device-to-device copy of the same bytes, the L2 flushed before
// every timed run. GB/s count the bytes read and written once (8 per element). Exits 1 if
// the transpose is not exact or a softmax element is off by more than 1e-5 relative to a
// host reference in double. Test tooling, not part of the product.
#include "common.cuh"
#include <cmath>
#include <string>

// Each file carries the prelude; the second one's include guard keeps it from repeating.
// With PRISM_SOFTMAX_BLOCK defined, PRISM_SOFTMAX is `49_softmax_rows_block` (one block of
// PRISM_SOFTMAX_THREADS threads per row, 128 (the kernel's default) unless a sweep variant says otherwise, the row
// held in registers) and the transpose is not run. A variant of bench/gpu/variants.txt
// passes its kernel as PRISM_KERNELS.
#if defined(PRISM_KERNELS) && !defined(PRISM_SOFTMAX)
#define PRISM_SOFTMAX PRISM_KERNELS
#endif
#ifndef PRISM_SOFTMAX_BLOCK
#include PRISM_TRANSPOSE
#endif
#include PRISM_SOFTMAX

#ifndef PRISM_SOFTMAX_THREADS
#define PRISM_SOFTMAX_THREADS 128
#endif
#ifndef PRISM_SOFTMAX_LABEL
#ifdef PRISM_SOFTMAX_BLOCK
#define PRISM_SOFTMAX_LABEL "49_softmax_rows_block"
#else
#define PRISM_SOFTMAX_LABEL "20_softmax_rows_warp"
#endif
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    L2Flush flush;
    print_header("GB/s");
    bool all_same = true;
    float *din, *dout, *dcopy;
    const size_t most = size_t(8192) * 8192;
    CHECK(cudaMalloc(&din, most * 4));
    CHECK(cudaMalloc(&dout, most * 4));
    CHECK(cudaMalloc(&dcopy, most * 4));
#ifndef PRISM_SOFTMAX_BLOCK
    const int sides[] = {2048, 4096, 8192};
    for (int side : sides) {
        if (skip_size(side == 8192)) continue;
        const size_t n = size_t(side) * side;
        std::vector<float> a(n);
        Rng rng(side + 17);
        for (auto& v : a) v = rng.uniform();
        CHECK(cudaMemcpy(din, a.data(), n * 4, cudaMemcpyHostToDevice));
        const unsigned grid = unsigned(((side + 31) / 32) * ((side + 31) / 32));
        auto prism = [&] { CHECK(prism_launch_transpose(grid, 256, side, side, din, dout)); };
        auto copy = [&] { CHECK(cudaMemcpyAsync(dcopy, din, n * 4, cudaMemcpyDeviceToDevice)); };
        const double t_prism = time_ms(prism, 3, reps, &flush);
        const double t_copy = time_ms(copy, 3, reps, &flush);
        std::vector<float> at(n);
        CHECK(cudaMemcpy(at.data(), dout, n * 4, cudaMemcpyDeviceToHost));
        bool same = true;
        for (size_t r = 0; r < size_t(side) && same; ++r)
            for (size_t c = 0; c < size_t(side); ++c)
                if (at[c * side + r] != a[r * side + c]) {
                    same = false;
                    break;
                }
        all_same = all_same && same;
        const double bytes = 8.0 * n;
        const std::string size = std::to_string(side) + "^2";
        print_row("transpose (17_transpose_smem_padded)", size.c_str(), bytes / (t_prism * 1e6),
                  "cudaMemcpy device to device", bytes / (t_copy * 1e6), same);
    }
#endif
    struct Rows {
        int rows, cols;
    };
    const Rows shapes[] = {{8192, 1024}, {16384, 4096}, {65536, 128}};
    for (const Rows& s : shapes) {
        if (skip_size(s.rows == 16384)) continue;
        const size_t n = size_t(s.rows) * s.cols;
        std::vector<float> x(n);
        Rng rng(s.rows + s.cols + 20);
        for (auto& v : x) v = 4.0f * rng.uniform();
        CHECK(cudaMemcpy(din, x.data(), n * 4, cudaMemcpyHostToDevice));
#ifdef PRISM_SOFTMAX_BLOCK
        // A block per row.
        auto prism = [&] {
            CHECK(prism_launch_softmax_rows_block(unsigned(s.rows), PRISM_SOFTMAX_THREADS, s.rows, s.cols, din, dout));
        };
#else
        // 128 threads a block: four rows a block.
        const unsigned grid = unsigned((s.rows + 3) / 4);
        auto prism = [&] { CHECK(prism_launch_softmax_rows(grid, 128, s.rows, s.cols, din, dout)); };
#endif
        auto copy = [&] { CHECK(cudaMemcpyAsync(dcopy, din, n * 4, cudaMemcpyDeviceToDevice)); };
        const double t_prism = time_ms(prism, 3, reps, &flush);
        const double t_copy = time_ms(copy, 3, reps, &flush);
        std::vector<float> y(n);
        CHECK(cudaMemcpy(y.data(), dout, n * 4, cudaMemcpyDeviceToHost));
        bool same = true;
        for (size_t r = 0; r < size_t(s.rows) && same; r += 97) {
            const float* row = &x[r * s.cols];
            double m = row[0], sum = 0;
            for (int c = 1; c < s.cols; ++c) m = std::max(m, double(row[c]));
            for (int c = 0; c < s.cols; ++c) sum += std::exp(double(row[c]) - m);
            for (int c = 0; c < s.cols; ++c) {
                const double want = std::exp(double(row[c]) - m) / sum;
                if (std::fabs(y[r * s.cols + c] - want) > 1e-5 * want + 1e-12) {
                    same = false;
                    break;
                }
            }
        }
        all_same = all_same && same;
        const double bytes = 8.0 * n;
        const std::string size = std::to_string(s.rows) + "x" + std::to_string(s.cols);
        print_row("softmax rows (" PRISM_SOFTMAX_LABEL ")", size.c_str(), bytes / (t_prism * 1e6),
                  "cudaMemcpy device to device", bytes / (t_copy * 1e6), same);
    }
    cudaFree(din);
    cudaFree(dout);
    cudaFree(dcopy);
    return all_same ? 0 : 1;
}

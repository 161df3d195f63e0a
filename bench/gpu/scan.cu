// Scan: Prism's CUB-class decoupled look-back scan (tests/ui/accept/kernels/
// 35_scan_lookback_packed.prism: packed status words, a warp-wide look-back window, 16 items
// per thread loaded and stored through a shared exchange array; built by `prism build --emit-host` into PRISM_KERNELS, see
// run.sh) against
// cub::DeviceScan::InclusiveSum, and a device-to-device copy of the same bytes as the
// bandwidth limit, at 2^20 .. 2^28 ints, with the L2 flushed before every timed run. GB/s
// count the bytes read and written once (8 per item). Exits 1 if an output differs. Test
// tooling, not part of the product.
#include "common.cuh"
#include <cub/device/device_scan.cuh>
#include <string>

#include PRISM_KERNELS

// The kernel's tile shape (kernel 35: 256 threads of 16 items); a variant of the kernel
// built with other constants is measured by defining these.
#ifndef PRISM_SCAN_THREADS
#define PRISM_SCAN_THREADS 256
#endif
#ifndef PRISM_SCAN_TILE
#define PRISM_SCAN_TILE (PRISM_SCAN_THREADS * 16)
#endif
// The launcher and label: kernel 35, or kernel 47 (its warp-transposed twin, harness
// `scan_warp`).
#ifndef PRISM_SCAN
#define PRISM_SCAN prism_launch_scan_lookback_packed
#endif
#ifndef PRISM_SCAN_LABEL
#define PRISM_SCAN_LABEL "35_scan_lookback_packed"
#endif

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    L2Flush flush;
    print_header("GB/s");
    bool all_same = true;
    for (int log_n = 20; log_n <= 28; log_n += 2) {
        if (skip_size(log_n == 28)) continue;
        const int n = 1 << log_n;
        const int tiles = (n + PRISM_SCAN_TILE - 1) / PRISM_SCAN_TILE;
        std::vector<int> x(n);
        Rng rng(log_n);
        for (auto& v : x) v = int(rng.next() % 2001) - 1000;
        int *dx, *dout_prism, *dout_cub, *dcopy, *counter;
        unsigned long long* status;
        CHECK(cudaMalloc(&dx, size_t(n) * 4));
        CHECK(cudaMalloc(&dout_prism, size_t(n) * 4));
        CHECK(cudaMalloc(&dout_cub, size_t(n) * 4));
        CHECK(cudaMalloc(&dcopy, size_t(n) * 4));
        CHECK(cudaMalloc(&counter, 4));
        CHECK(cudaMalloc(&status, size_t(tiles) * 8));
        CHECK(cudaMemcpy(dx, x.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
        // The scan's scratch must be zero before every launch (its contract); the memsets
        // are part of what a user pays, so they are timed with it.
        auto prism = [&] {
            CHECK(cudaMemsetAsync(counter, 0, 4));
            CHECK(cudaMemsetAsync(status, 0, size_t(tiles) * 8));
            CHECK(PRISM_SCAN(unsigned(tiles), PRISM_SCAN_THREADS, n, dx, dout_prism, counter, status));
        };
        size_t temp_bytes = 0;
        CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, dx, dout_cub, n));
        void* temp = nullptr;
        CHECK(cudaMalloc(&temp, temp_bytes));
        auto cub_scan = [&] { CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, dx, dout_cub, n)); };
        auto copy = [&] { CHECK(cudaMemcpyAsync(dcopy, dx, size_t(n) * 4, cudaMemcpyDeviceToDevice)); };
        const double t_prism = time_ms(prism, 3, reps, &flush);
        const double t_cub = time_ms(cub_scan, 3, reps, &flush);
        const double t_copy = time_ms(copy, 3, reps, &flush);
        std::vector<int> op(n), oc(n);
        CHECK(cudaMemcpy(op.data(), dout_prism, size_t(n) * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(oc.data(), dout_cub, size_t(n) * 4, cudaMemcpyDeviceToHost));
        const bool same = op == oc;
        all_same = all_same && same;
        const double bytes = 8.0 * n;
        const std::string size = "2^" + std::to_string(log_n);
        print_row("inclusive scan (" PRISM_SCAN_LABEL ")", size.c_str(), bytes / (t_prism * 1e6),
                  "CUB DeviceScan::InclusiveSum", bytes / (t_cub * 1e6), same);
        print_row("inclusive scan (" PRISM_SCAN_LABEL ")", size.c_str(), bytes / (t_prism * 1e6),
                  "cudaMemcpy device to device", bytes / (t_copy * 1e6), true);
        cudaFree(temp);
        cudaFree(dx);
        cudaFree(dout_prism);
        cudaFree(dout_cub);
        cudaFree(dcopy);
        cudaFree(counter);
        cudaFree(status);
    }
    return all_same ? 0 : 1;
}

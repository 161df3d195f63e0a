// Hand-written CUDA reference for tests/ui/accept/kernels/32_sgemm_6_vectorized.prism: the
// same algorithm, tiles and loop order, written as an expert would (test data for the SASS
// gate, crates/prism_gpu/tests/sass.rs; not part of the product). 128 x 128 block tile,
// BK = 8, an 8 x 8 register tile per thread; float4 loads of A and B when K (for A) or N
// (for B) is a multiple of 4 and the four floats lie inside the matrix, element by element
// otherwise; A staged transposed (k-major), B with one float4 store; the inner loop reads
// float4s from shared memory; C written back as float4s when N is a multiple of 4.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) sgemm_vectorized(int M, int N, int K, float alpha,
                                                                    const float* __restrict__ A,
                                                                    const float* __restrict__ B,
                                                                    float beta, float* __restrict__ C)
{
    __shared__ __align__(16) float As[BK * BM];
    __shared__ __align__(16) float Bs[BK * BN];
    const int tiles_n = (N + BN - 1) / BN;
    const int b = blockIdx.x;
    const int tile_row = (b / tiles_n) * BM;
    const int tile_col = (b % tiles_n) * BN;
    const int t = threadIdx.x;
    const int thread_row = t / (BN / TN);
    const int thread_col = t % (BN / TN);
    const int a_m = t / 2;
    const int a_k = (t % 2) * 4;
    const int b_k = t / 32;
    const int b_n = (t % 32) * 4;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        float av[4];
        const int m = tile_row + a_m;
        if (K % 4 == 0 && m < M && k0 + a_k < K) {
            const float4 v = *reinterpret_cast<const float4*>(&A[m * K + k0 + a_k]);
            av[0] = v.x; av[1] = v.y; av[2] = v.z; av[3] = v.w;
        } else {
            for (int s = 0; s < 4; ++s) av[s] = (m < M && k0 + a_k + s < K) ? A[m * K + k0 + a_k + s] : 0.0f;
        }
        for (int s = 0; s < 4; ++s) As[(a_k + s) * BM + a_m] = av[s];
        float bv[4];
        const int k = k0 + b_k;
        const int n = tile_col + b_n;
        if (N % 4 == 0 && k < K && n < N) {
            const float4 v = *reinterpret_cast<const float4*>(&B[k * N + n]);
            bv[0] = v.x; bv[1] = v.y; bv[2] = v.z; bv[3] = v.w;
        } else {
            for (int s = 0; s < 4; ++s) bv[s] = (k < K && n + s < N) ? B[k * N + n + s] : 0.0f;
        }
        *reinterpret_cast<float4*>(&Bs[4 * t]) = make_float4(bv[0], bv[1], bv[2], bv[3]);
        __syncthreads();
        for (int kk = 0; kk < BK; ++kk) {
            float reg_m[TM], reg_n[TN];
            const float4 m0 = *reinterpret_cast<const float4*>(&As[kk * BM + thread_row * TM]);
            const float4 m1 = *reinterpret_cast<const float4*>(&As[kk * BM + thread_row * TM + 4]);
            const float4 n0 = *reinterpret_cast<const float4*>(&Bs[kk * BN + thread_col * TN]);
            const float4 n1 = *reinterpret_cast<const float4*>(&Bs[kk * BN + thread_col * TN + 4]);
            reg_m[0] = m0.x; reg_m[1] = m0.y; reg_m[2] = m0.z; reg_m[3] = m0.w;
            reg_m[4] = m1.x; reg_m[5] = m1.y; reg_m[6] = m1.z; reg_m[7] = m1.w;
            reg_n[0] = n0.x; reg_n[1] = n0.y; reg_n[2] = n0.z; reg_n[3] = n0.w;
            reg_n[4] = n1.x; reg_n[5] = n1.y; reg_n[6] = n1.z; reg_n[7] = n1.w;
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(reg_m[i], reg_n[j], acc[i][j]);
        }
        __syncthreads();
    }
    float* Ct = C + (tile_row + thread_row * TM) * N + tile_col + thread_col * TN;
    for (int i = 0; i < TM; ++i) {
        const int r = tile_row + thread_row * TM + i;
        for (int h = 0; h < TN; h += 4) {
            const int c = tile_col + thread_col * TN + h;
            if (N % 4 == 0 && r < M && c < N) {
                float4 v = *reinterpret_cast<const float4*>(&Ct[i * N + h]);
                v.x = fmaf(alpha, acc[i][h + 0], beta * v.x);
                v.y = fmaf(alpha, acc[i][h + 1], beta * v.y);
                v.z = fmaf(alpha, acc[i][h + 2], beta * v.z);
                v.w = fmaf(alpha, acc[i][h + 3], beta * v.w);
                *reinterpret_cast<float4*>(&Ct[i * N + h]) = v;
            } else {
                for (int j = 0; j < 4; ++j)
                    if (r < M && c + j < N) Ct[i * N + h + j] = fmaf(alpha, acc[i][h + j], beta * Ct[i * N + h + j]);
            }
        }
    }
}

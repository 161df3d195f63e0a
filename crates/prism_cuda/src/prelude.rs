//! The helper functions every generated file starts with.
//!
//! They pin down the arithmetic the simulator defines (`prism_interp::ops`) where C++ leaves
//! it undefined or different: signed integers wrap (computed in unsigned arithmetic), signed
//! division by -1 wraps, shifts clamp like PTX's `shl`/`shr`, integer `abs` wraps, and the
//! warp reductions combine in the butterfly order the simulator uses. Atomics without a
//! native CUDA overload are compare-and-swap loops. Everything is `__device__
//! __forceinline__` (not `static`, so unused helpers draw no warning).
//!
//! Invariant: the prelude compiles under NVRTC as well as nvcc: it includes only CUDA's own
//! device headers (`cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h`), never a host
//! header such as `<cstdint>` or `<cstring>`, and calls no compiler builtin NVRTC lacks
//! (bits are copied with `memcpy`, which both declare for device code; NVRTC has no
//! `__builtin_memcpy`). `prism_gpu`'s `nvrtc` test compiles the whole corpus with NVRTC.

/// The includes and helpers a translation unit whose kernels are `body` needs: the whole
/// [`PRELUDE`] less the half-precision and bfloat16 headers and helpers when `body` names
/// no such type or conversion, and less cooperative groups when it has no grid barrier.
/// Those headers cost most of an nvcc compile of a small kernel (about 1.6 s of 2), and
/// the body is the only thing that can need them: a helper for `__half` is only called
/// with a `__half` the body declared.
pub fn prelude_for(body: &str) -> String {
    let fp16 = body.contains("__half") || body.contains("2half");
    let bf16 = body.contains("bfloat16");
    let grid = body.contains("cooperative_groups::");
    let mut out = String::with_capacity(PRELUDE.len());
    for line in PRELUDE.lines() {
        let keep = match line {
            "#include <cuda_fp16.h>" => fp16,
            "#include <cuda_bf16.h>" => bf16,
            "#include <cooperative_groups.h>" => grid,
            l if l.contains("prism_vec") => body.contains("prism_vec<"),
            // The helpers for the two 16-bit float types are one line each.
            _ => (fp16 || !(line.contains("__half") || line.contains("2half"))) && (bf16 || !line.contains("bfloat16")),
        };
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The includes and helpers for any kernel (every header, every helper); `prism build`
/// prints [`prelude_for`] its kernels instead.
pub const PRELUDE: &str = r#"#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>

// ---- Prism helpers: the simulator's arithmetic (see docs/cuda.md) -------------------------
#ifndef PRISM_HELPERS
#define PRISM_HELPERS
#define PRISM_DEV __device__ __forceinline__
// prism_vec: N elements aligned to their size, so that one load or store of it is one LDG.128 etc.
template <typename T, int N> struct __align__(sizeof(T) * N) prism_vec { T v[N]; };
// Linear indices and sizes of multi-dimensional launches (x fastest, as CUDA orders threads
// into warps): what `id()`, `block_dim()` and `grid_dim()` mean there.
PRISM_DEV unsigned prism_linear_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
PRISM_DEV unsigned prism_linear_bid() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
PRISM_DEV unsigned prism_block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
PRISM_DEV unsigned prism_grid_blocks() { return gridDim.x * gridDim.y * gridDim.z; }
// Signed integers wrap: compute in the unsigned type of the same width.
PRISM_DEV int prism_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
PRISM_DEV int prism_sub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
PRISM_DEV int prism_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
PRISM_DEV int prism_neg(int a) { return (int)(0u - (unsigned)a); }
PRISM_DEV long long prism_add(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
PRISM_DEV long long prism_sub(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)b); }
PRISM_DEV long long prism_mul(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
PRISM_DEV long long prism_neg(long long a) { return (long long)(0ull - (unsigned long long)a); }
// Division truncates; the most negative value divided by -1 wraps to itself.
// Both divide by the same safe divisor (1 for -1, where `a % 1` is the wanted 0), so nvcc
// computes `x / n` and `x % n` with one division.
PRISM_DEV int prism_div(int a, int b) { int q = a / (b == -1 ? 1 : b); return b == -1 ? prism_neg(a) : q; }
PRISM_DEV int prism_rem(int a, int b) { return a % (b == -1 ? 1 : b); }
PRISM_DEV long long prism_div(long long a, long long b) { long long q = a / (b == -1 ? 1 : b); return b == -1 ? prism_neg(a) : q; }
PRISM_DEV long long prism_rem(long long a, long long b) { return a % (b == -1 ? 1 : b); }
// Shifts clamp like PTX: an amount of at least the width (or negative) gives 0, or the sign.
template <typename B> PRISM_DEV bool prism_big_shift(B b, int width) { return b < (B)0 || (unsigned long long)b >= (unsigned long long)width; }
template <typename B> PRISM_DEV int prism_shl(int a, B b) { return prism_big_shift(b, 32) ? 0 : (int)((unsigned)a << (int)b); }
template <typename B> PRISM_DEV unsigned prism_shl(unsigned a, B b) { return prism_big_shift(b, 32) ? 0u : a << (int)b; }
template <typename B> PRISM_DEV long long prism_shl(long long a, B b) { return prism_big_shift(b, 64) ? 0ll : (long long)((unsigned long long)a << (int)b); }
template <typename B> PRISM_DEV unsigned long long prism_shl(unsigned long long a, B b) { return prism_big_shift(b, 64) ? 0ull : a << (int)b; }
template <typename B> PRISM_DEV int prism_shr(int a, B b) { return a >> (prism_big_shift(b, 32) ? 31 : (int)b); }
template <typename B> PRISM_DEV unsigned prism_shr(unsigned a, B b) { return prism_big_shift(b, 32) ? 0u : a >> (int)b; }
template <typename B> PRISM_DEV long long prism_shr(long long a, B b) { return a >> (prism_big_shift(b, 64) ? 63 : (int)b); }
template <typename B> PRISM_DEV unsigned long long prism_shr(unsigned long long a, B b) { return prism_big_shift(b, 64) ? 0ull : a >> (int)b; }
// Integer min, max and abs (abs of the most negative value wraps to itself).
template <typename T> PRISM_DEV T prism_min(T a, T b) { return b < a ? b : a; }
template <typename T> PRISM_DEV T prism_max(T a, T b) { return a < b ? b : a; }
PRISM_DEV int prism_abs(int a) { return a < 0 ? prism_neg(a) : a; }
PRISM_DEV long long prism_abs(long long a) { return a < 0 ? prism_neg(a) : a; }
PRISM_DEV unsigned prism_abs(unsigned a) { return a; }
PRISM_DEV unsigned long long prism_abs(unsigned long long a) { return a; }
// Float negation and `abs` change the sign bit only, a NaN's too, as the simulator does: in
// inline PTX, since nvcc makes `-x` and `fabsf` (and their integer forms) FADD/DADD with
// operand modifiers, which the GPU does not apply to a NaN (docs/cuda.md).
// PTX's `min`/`max` (-0 below +0, a NaN operand gives the other), which nvcc does not
// evaluate at compile time as it does `fminf` (with the host's rule for zeros of both signs).
PRISM_DEV float prism_fmin(float a, float b) { float r; asm("min.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
PRISM_DEV float prism_fmax(float a, float b) { float r; asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
PRISM_DEV double prism_fmin(double a, double b) { double r; asm("min.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }
PRISM_DEV double prism_fmax(double a, double b) { double r; asm("max.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }
PRISM_DEV float prism_fneg(float x) { unsigned r; asm("xor.b32 %0, %1, 0x80000000;" : "=r"(r) : "r"(__float_as_uint(x))); return __uint_as_float(r); }
PRISM_DEV float prism_fabs(float x) { unsigned r; asm("and.b32 %0, %1, 0x7fffffff;" : "=r"(r) : "r"(__float_as_uint(x))); return __uint_as_float(r); }
PRISM_DEV double prism_fneg(double x) { long long r; asm("xor.b64 %0, %1, 0x8000000000000000;" : "=l"(r) : "l"(__double_as_longlong(x))); return __longlong_as_double(r); }
PRISM_DEV double prism_fabs(double x) { long long r; asm("and.b64 %0, %1, 0x7fffffffffffffff;" : "=l"(r) : "l"(__double_as_longlong(x))); return __longlong_as_double(r); }
PRISM_DEV __half prism_fneg(__half x) { unsigned short r; asm("xor.b16 %0, %1, 0x8000;" : "=h"(r) : "h"(__half_as_ushort(x))); return __ushort_as_half(r); }
PRISM_DEV __half prism_fabs(__half x) { unsigned short r; asm("and.b16 %0, %1, 0x7fff;" : "=h"(r) : "h"(__half_as_ushort(x))); return __ushort_as_half(r); }
PRISM_DEV __nv_bfloat16 prism_fneg(__nv_bfloat16 x) { unsigned short r; asm("xor.b16 %0, %1, 0x8000;" : "=h"(r) : "h"(__bfloat16_as_ushort(x))); return __ushort_as_bfloat16(r); }
PRISM_DEV __nv_bfloat16 prism_fabs(__nv_bfloat16 x) { unsigned short r; asm("and.b16 %0, %1, 0x7fff;" : "=h"(r) : "h"(__bfloat16_as_ushort(x))); return __ushort_as_bfloat16(r); }
// Warp reductions: a butterfly over lanes 16, 8, 4, 2, 1 (the simulator's order).
#define PRISM_REDUCE(NAME, EXPR) \
    template <typename T> PRISM_DEV T NAME(T v) { \
        for (int o = 16; o > 0; o >>= 1) { T w = __shfl_xor_sync(0xffffffffu, v, o); v = EXPR; } \
        return v; \
    }
PRISM_DEV int prism_wrap_add(int a, int b) { return prism_add(a, b); }
PRISM_DEV long long prism_wrap_add(long long a, long long b) { return prism_add(a, b); }
PRISM_DEV unsigned prism_wrap_add(unsigned a, unsigned b) { return a + b; }
PRISM_DEV unsigned long long prism_wrap_add(unsigned long long a, unsigned long long b) { return a + b; }
PRISM_REDUCE(prism_reduce_add, prism_wrap_add(v, w))
PRISM_REDUCE(prism_reduce_min, prism_min(v, w))
PRISM_REDUCE(prism_reduce_max, prism_max(v, w))
PRISM_REDUCE(prism_reduce_and, v & w)
PRISM_REDUCE(prism_reduce_or, v | w)
PRISM_REDUCE(prism_reduce_xor, v ^ w)
#undef PRISM_REDUCE
// 32-bit integers: one REDUX instruction (sm_80 and later). These operations are associative
// and commutative on 32-bit integers (addition wraps), so any order gives the butterfly's bits.
PRISM_DEV int prism_reduce_add(int v) { return __reduce_add_sync(0xffffffffu, v); }
PRISM_DEV unsigned prism_reduce_add(unsigned v) { return __reduce_add_sync(0xffffffffu, v); }
PRISM_DEV int prism_reduce_min(int v) { return __reduce_min_sync(0xffffffffu, v); }
PRISM_DEV unsigned prism_reduce_min(unsigned v) { return __reduce_min_sync(0xffffffffu, v); }
PRISM_DEV int prism_reduce_max(int v) { return __reduce_max_sync(0xffffffffu, v); }
PRISM_DEV unsigned prism_reduce_max(unsigned v) { return __reduce_max_sync(0xffffffffu, v); }
PRISM_DEV int prism_reduce_and(int v) { return (int)__reduce_and_sync(0xffffffffu, (unsigned)v); }
PRISM_DEV unsigned prism_reduce_and(unsigned v) { return __reduce_and_sync(0xffffffffu, v); }
PRISM_DEV int prism_reduce_or(int v) { return (int)__reduce_or_sync(0xffffffffu, (unsigned)v); }
PRISM_DEV unsigned prism_reduce_or(unsigned v) { return __reduce_or_sync(0xffffffffu, v); }
PRISM_DEV int prism_reduce_xor(int v) { return (int)__reduce_xor_sync(0xffffffffu, (unsigned)v); }
PRISM_DEV unsigned prism_reduce_xor(unsigned v) { return __reduce_xor_sync(0xffffffffu, v); }
// Bit patterns, for atomics done by compare-and-swap.
template <typename T> struct prism_bits;
template <> struct prism_bits<int> { typedef unsigned U; };
template <> struct prism_bits<unsigned> { typedef unsigned U; };
template <> struct prism_bits<float> { typedef unsigned U; };
template <> struct prism_bits<long long> { typedef unsigned long long U; };
template <> struct prism_bits<unsigned long long> { typedef unsigned long long U; };
template <> struct prism_bits<double> { typedef unsigned long long U; };
template <> struct prism_bits<__half> { typedef unsigned short U; };
template <> struct prism_bits<__nv_bfloat16> { typedef unsigned short U; };
template <typename T> PRISM_DEV typename prism_bits<T>::U prism_to_bits(T v) { typename prism_bits<T>::U u; memcpy(&u, &v, sizeof u); return u; }
template <typename T> PRISM_DEV T prism_from_bits(typename prism_bits<T>::U u) { T v; memcpy(&v, &u, sizeof v); return v; }
// Element i of a local array of 16-bit floats kept as pairs in 32-bit words (docs/cuda.md).
template <typename T> PRISM_DEV T prism_pair_get(const unsigned* a, int i) { return prism_from_bits<T>((unsigned short)(a[(unsigned)i / 2u] >> ((unsigned)i % 2u * 16u))); }
template <typename T> PRISM_DEV void prism_pair_set(unsigned* a, int i, T v) { const unsigned s = (unsigned)i % 2u * 16u; unsigned& w = a[(unsigned)i / 2u]; w = (w & ~(0xffffu << s)) | ((unsigned)prism_to_bits(v) << s); }
// `atomic_cas` on any supported type, through the unsigned bits of its width.
template <typename T> PRISM_DEV T prism_atomic_cas(T* p, T cmp, T v) {
    typedef typename prism_bits<T>::U U;
    return prism_from_bits<T>(atomicCAS((U*)p, prism_to_bits(cmp), prism_to_bits(v)));
}
// A read-modify-write as a compare-and-swap loop (for types CUDA has no native atomic for).
template <typename T, typename F> PRISM_DEV T prism_atomic_rmw(T* p, F f) {
    typedef typename prism_bits<T>::U U;
    U old = prism_to_bits(*(volatile T*)p), seen;
    do {
        seen = old;
        old = atomicCAS((U*)p, seen, prism_to_bits(f(prism_from_bits<T>(seen))));
    } while (old != seen);
    return prism_from_bits<T>(old);
}
#define PRISM_RMW(NAME, BODY) \
    template <typename T> PRISM_DEV T NAME(T* p, T v) { return prism_atomic_rmw(p, [v](T old) -> T { return BODY; }); }
PRISM_RMW(prism_atomic_add_cas, old + v)
PRISM_RMW(prism_atomic_sub_cas, old - v)
PRISM_RMW(prism_atomic_and_cas, old & v)
PRISM_RMW(prism_atomic_or_cas, old | v)
PRISM_RMW(prism_atomic_xor_cas, old ^ v)
PRISM_RMW(prism_atomic_exch_cas, v)
#undef PRISM_RMW
PRISM_DEV float prism_atomic_min(float* p, float v) { return prism_atomic_rmw(p, [v](float o) { return fminf(o, v); }); }
PRISM_DEV float prism_atomic_max(float* p, float v) { return prism_atomic_rmw(p, [v](float o) { return fmaxf(o, v); }); }
PRISM_DEV double prism_atomic_min(double* p, double v) { return prism_atomic_rmw(p, [v](double o) { return fmin(o, v); }); }
PRISM_DEV double prism_atomic_max(double* p, double v) { return prism_atomic_rmw(p, [v](double o) { return fmax(o, v); }); }
PRISM_DEV __half prism_atomic_min(__half* p, __half v) { return prism_atomic_rmw(p, [v](__half o) { return __float2half_rn(fminf(__half2float(o), __half2float(v))); }); }
PRISM_DEV __half prism_atomic_max(__half* p, __half v) { return prism_atomic_rmw(p, [v](__half o) { return __float2half_rn(fmaxf(__half2float(o), __half2float(v))); }); }
PRISM_DEV __nv_bfloat16 prism_atomic_min(__nv_bfloat16* p, __nv_bfloat16 v) { return prism_atomic_rmw(p, [v](__nv_bfloat16 o) { return __float2bfloat16_rn(fminf(__bfloat162float(o), __bfloat162float(v))); }); }
PRISM_DEV __nv_bfloat16 prism_atomic_max(__nv_bfloat16* p, __nv_bfloat16 v) { return prism_atomic_rmw(p, [v](__nv_bfloat16 o) { return __float2bfloat16_rn(fmaxf(__bfloat162float(o), __bfloat162float(v))); }); }
// Native atomics where CUDA has them.
PRISM_DEV int prism_atomic_add(int* p, int v) { return atomicAdd(p, v); }
PRISM_DEV unsigned prism_atomic_add(unsigned* p, unsigned v) { return atomicAdd(p, v); }
PRISM_DEV unsigned long long prism_atomic_add(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
PRISM_DEV long long prism_atomic_add(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
PRISM_DEV float prism_atomic_add(float* p, float v) { return atomicAdd(p, v); }
PRISM_DEV double prism_atomic_add(double* p, double v) { return atomicAdd(p, v); }
PRISM_DEV __half prism_atomic_add(__half* p, __half v) { return prism_atomic_rmw(p, [v](__half o) { return __hadd(o, v); }); }
PRISM_DEV __nv_bfloat16 prism_atomic_add(__nv_bfloat16* p, __nv_bfloat16 v) { return prism_atomic_rmw(p, [v](__nv_bfloat16 o) { return __hadd(o, v); }); }
PRISM_DEV int prism_atomic_sub(int* p, int v) { return atomicSub(p, v); }
PRISM_DEV unsigned prism_atomic_sub(unsigned* p, unsigned v) { return atomicSub(p, v); }
PRISM_DEV unsigned long long prism_atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0ull - v); }
PRISM_DEV long long prism_atomic_sub(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, 0ull - (unsigned long long)v); }
PRISM_DEV float prism_atomic_sub(float* p, float v) { return prism_atomic_rmw(p, [v](float o) { return o - v; }); }
PRISM_DEV double prism_atomic_sub(double* p, double v) { return prism_atomic_rmw(p, [v](double o) { return o - v; }); }
PRISM_DEV __half prism_atomic_sub(__half* p, __half v) { return prism_atomic_rmw(p, [v](__half o) { return __hsub(o, v); }); }
PRISM_DEV __nv_bfloat16 prism_atomic_sub(__nv_bfloat16* p, __nv_bfloat16 v) { return prism_atomic_rmw(p, [v](__nv_bfloat16 o) { return __hsub(o, v); }); }
#define PRISM_INT_ATOMICS(NAME, NATIVE) \
    PRISM_DEV int NAME(int* p, int v) { return NATIVE(p, v); } \
    PRISM_DEV unsigned NAME(unsigned* p, unsigned v) { return NATIVE(p, v); } \
    PRISM_DEV long long NAME(long long* p, long long v) { return NATIVE(p, v); } \
    PRISM_DEV unsigned long long NAME(unsigned long long* p, unsigned long long v) { return NATIVE(p, v); }
PRISM_INT_ATOMICS(prism_atomic_min, atomicMin)
PRISM_INT_ATOMICS(prism_atomic_max, atomicMax)
#undef PRISM_INT_ATOMICS
#define PRISM_BIT_ATOMICS(NAME, NATIVE) \
    PRISM_DEV int NAME(int* p, int v) { return NATIVE(p, v); } \
    PRISM_DEV unsigned NAME(unsigned* p, unsigned v) { return NATIVE(p, v); } \
    PRISM_DEV long long NAME(long long* p, long long v) { return (long long)NATIVE((unsigned long long*)p, (unsigned long long)v); } \
    PRISM_DEV unsigned long long NAME(unsigned long long* p, unsigned long long v) { return NATIVE(p, v); }
PRISM_BIT_ATOMICS(prism_atomic_and, atomicAnd)
PRISM_BIT_ATOMICS(prism_atomic_or, atomicOr)
PRISM_BIT_ATOMICS(prism_atomic_xor, atomicXor)
#undef PRISM_BIT_ATOMICS
template <typename T> PRISM_DEV T prism_atomic_exch(T* p, T v) {
    typedef typename prism_bits<T>::U U;
    if constexpr (sizeof(U) == 2) {
        return prism_atomic_exch_cas(p, v);
    } else {
        return prism_from_bits<T>(atomicExch((U*)p, prism_to_bits(v)));
    }
}
// Relaxed atomic loads and stores; volatile accesses in unsafe code use the same form.
template <typename T> PRISM_DEV T prism_atomic_load(const T* p) { return *(const volatile T*)p; }
// A `bool` in memory is read as its byte, normalised (`!= 0`) as the simulator reads it: shared
// bytes another array wrote may hold any value, and a C++ `bool` other than 0/1 is undefined.
template <> PRISM_DEV bool prism_atomic_load(const bool* p) { return *(const volatile unsigned char*)p != 0; }
template <typename T> PRISM_DEV void prism_atomic_store(T* p, T v) { *(volatile T*)p = v; }
// Shared-memory address of a generic pointer, for PTX operands.
PRISM_DEV unsigned prism_smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// Split barriers over the block (sm_80 mbarriers): arrive releases this thread's accesses
// and returns the phase's token without blocking; wait spins until that phase completes and
// acquires the other threads' accesses.
PRISM_DEV void prism_split_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" : : "r"(bar), "r"(count) : "memory");
}
PRISM_DEV unsigned long long prism_split_arrive(unsigned bar) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");
    return state;
}
PRISM_DEV void prism_split_wait(unsigned bar, unsigned long long state) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "l"(state) : "memory");
    }
}
// A proxy fence: plain shared-memory stores before it become visible to the async proxy
// (wgmma, TMA) after the barrier that follows it. Nothing to order below sm_90.
PRISM_DEV void prism_fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
#endif
}
// The same for global memory, around a grid barrier: TMA copies that wrote global memory
// (and completed) before it are ordered before other blocks' TMA copies after it (PTX orders
// two async-proxy accesses only within one block or across a proxy fence).
PRISM_DEV void prism_fence_proxy_async_global() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.global;" : : : "memory");
#endif
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// elect.sync over the whole warp (sm_90): true in the one elected lane.
PRISM_DEV bool prism_elect_sync() {
    unsigned elected;
    asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(elected));
    return elected != 0;
}
#endif
// A whole barrier on an mbarrier: arrive, then wait for that phase (units of any size).
PRISM_DEV void prism_unit_sync(unsigned bar) { prism_split_wait(bar, prism_split_arrive(bar)); }
// mbarriers written by the program (`mbarrier_*`, unsafe code), on an element of a
// `shared(uint64[n])` array. Arrive releases, the parity wait acquires (PTX defaults).
PRISM_DEV void prism_mbar_init(unsigned long long* b, int count) { prism_split_init(prism_smem_addr(b), (unsigned)count); }
PRISM_DEV unsigned long long prism_mbar_arrive(unsigned long long* b) { return prism_split_arrive(prism_smem_addr(b)); }
// On sm_90 the wait is `try_wait`, which suspends the thread until the phase completes or
// a time limit passes, instead of spinning on `test_wait` (warp-specialised pipelines wait
// on every tile).
PRISM_DEV void prism_mbar_wait_parity(unsigned long long* b, unsigned parity) {
    unsigned done = 0;
    while (!done) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(prism_smem_addr(b)), "r"(parity & 1u) : "memory");
#else
        asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(prism_smem_addr(b)), "r"(parity & 1u) : "memory");
#endif
    }
}
PRISM_DEV void prism_mbar_inval(unsigned long long* b) {
    asm volatile("mbarrier.inval.shared.b64 [%0];" : : "r"(prism_smem_addr(b)) : "memory");
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// Transaction counts (sm_90).
PRISM_DEV unsigned long long prism_mbar_arrive_expect_tx(unsigned long long* b, int bytes) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 %0, [%1], %2;" : "=l"(state) : "r"(prism_smem_addr(b)), "r"(bytes) : "memory");
    return state;
}
PRISM_DEV void prism_mbar_expect_tx(unsigned long long* b, int bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" : : "r"(prism_smem_addr(b)), "r"(bytes) : "memory");
}
PRISM_DEV void prism_mbar_complete_tx(unsigned long long* b, int bytes) {
    asm volatile("mbarrier.complete_tx.shared.b64 [%0], %1;" : : "r"(prism_smem_addr(b)), "r"(bytes) : "memory");
}
#endif
// A TMA descriptor (`CUTensorMap`), passed by value to kernels as a `__grid_constant__`.
struct __align__(64) prism_tensor_map { unsigned long long opaque[16]; };
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// A wgmma shared-memory matrix descriptor for the canonical K-major layout without
// swizzling: core matrices adjacent in K are 128 bytes apart, adjacent in M/N 256 bytes.
PRISM_DEV unsigned long long prism_wgmma_desc(const void* p) {
    unsigned long long a = prism_smem_addr(p);
    return ((a & 0x3FFFFull) >> 4) | ((128ull >> 4) << 16) | ((256ull >> 4) << 32);
}
// A descriptor for a K-major tile swizzled over `span` bytes (32, 64 or 128) as TMA writes
// it: rows of `span` bytes, 8-row groups 8 * span bytes apart (the stride offset), the
// leading offset unused (1), no base offset (the tile's pattern starts on its own
// boundary), and the layout code in bits 62-63 (1: 128 bytes, 2: 64, 3: 32).
PRISM_DEV unsigned long long prism_wgmma_desc_sw(const void* p, unsigned span) {
    unsigned long long a = prism_smem_addr(p);
    unsigned long long layout = span == 128 ? 1ull : span == 64 ? 2ull : 3ull;
    return ((a & 0x3FFFFull) >> 4) | (1ull << 16) | ((unsigned long long)((8u * span) >> 4) << 32) | (layout << 62);
}
// Every thread of the block arrives at an mbarrier and waits for its phase to complete
// (the end of an `async` scope with TMA copies).
PRISM_DEV void prism_mbar_arrive_wait(unsigned bar) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "l"(state) : "memory");
    }
}
#endif
#undef PRISM_DEV
#endif
// ---------------------------------------------------------------------------------------------
"#;

#[cfg(test)]
mod tests {
    use super::{PRELUDE, prelude_for};

    #[test]
    fn the_lean_prelude_keeps_what_the_body_names() {
        let plain = prelude_for("__global__ void k(float* x) { x[0] = 1.0f; }");
        assert!(!plain.contains("#include"), "{plain}");
        assert!(!plain.contains("__half") && !plain.contains("bfloat16"));
        assert!(plain.contains("prism_add") && plain.contains("prism_atomic_add(float*"));
        let half = prelude_for("__half h = __float2half_rn(1.0f);");
        assert!(half.contains("#include <cuda_fp16.h>") && half.contains("prism_atomic_add(__half*"));
        assert!(!half.contains("bfloat16") && !half.contains("cooperative_groups"));
        let bf = prelude_for("__nv_bfloat16 b;");
        assert!(bf.contains("#include <cuda_bf16.h>") && bf.contains("prism_atomic_add(__nv_bfloat16*"));
        let grid = prelude_for("cooperative_groups::this_grid().sync();");
        assert!(grid.contains("#include <cooperative_groups.h>"));
        assert!(!plain.contains("prism_vec"));
        assert!(prelude_for("prism_vec<float, 4> v;").contains("struct __align__(sizeof(T) * N) prism_vec"));
        // Everything named keeps everything.
        assert_eq!(prelude_for("__half __nv_bfloat16 cooperative_groups:: prism_vec<"), PRELUDE);
    }

    #[test]
    fn the_prelude_needs_nothing_nvrtc_lacks() {
        // NVRTC has no host headers and no `__builtin_memcpy` (it reports "identifier is
        // undefined"); these are the only headers the prelude may include.
        let includes: Vec<&str> = PRELUDE.lines().filter(|l| l.starts_with("#include")).collect();
        assert_eq!(includes, ["#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "#include <cooperative_groups.h>"]);
        assert!(!PRELUDE.contains("__builtin_memcpy"), "NVRTC lacks the C library builtins");
    }
}

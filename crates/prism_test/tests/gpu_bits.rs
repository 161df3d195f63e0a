//! Programs whose results the simulator computed differently from the CUDA the backend prints
//! (reviewer E, 2026-11-29; `docs/simulator.md`, NaN bits and conversions): each runs here on
//! the simulator and must give the bits the GPU gives, and where the fix was in the printed
//! CUDA, the CUDA text is checked too.
//!
//! - H3: `bf16(float)`, `bf16(double)`, `half(double)`, `bf16(int)` and a bf16 `fma` rounded
//!   wrongly (the `half` crate's `from_f64` drops the low 32 bits of the double, or rounds
//!   through `float` first); the GPU's `cvt.rn` rounds once.
//! - H2: `bf16(int64)`/`bf16(uint64)` above 2^53 rounded twice (through `double`).
//! - H1: a `float` `atomic_add` on global memory flushes subnormals on the GPU
//!   (`atom.global.add.f32` without `.noftz`), not on shared memory.
//! - H4: a `bool` read from a byte holding 2 (found with shared bytes another array left,
//!   now a host buffer's): the simulator reads it as `true`; the CUDA read the byte as a C++
//!   `bool` (undefined behaviour, nvcc used the 2).
//! - H5: `-x` and `abs(x)` of NaNs: the CUDA now changes the sign bit only, as the simulator.

use prism_interp::{Arg, Config, Module};

fn synced(name: &str, src: &str) -> prism_driver::Synced {
    let (_, problems, synced) = prism_driver::compile_text(name, src, &prism_driver::Options::default());
    synced.unwrap_or_else(|| panic!("does not compile: {:?}", problems.diagnostics()))
}

/// Runs `kernel` with every check on, and under two seeds; returns the arguments after the
/// deterministic run (the seeded runs must leave the same bits).
fn run(src: &str, kernel: &str, block: u32, args: impl Fn() -> Vec<Arg>) -> Vec<Arg> {
    let m = Module::new(&synced("gpu_bits.prism", src));
    let bits = |a: &[Arg]| -> Vec<Vec<u64>> { a.iter().filter_map(|x| x.as_buffer().map(|b| b.to_bits())).collect() };
    let first = args();
    let out = m.launch(kernel, 1, block, &first, Config::default()).expect("launches");
    assert!(out.is_clean(), "{:?}", out.reports);
    for seed in [1, 0x5eed] {
        let again = args();
        let out =
            m.launch(kernel, 1, block, &again, Config { seed: Some(seed), ..Config::default() }).expect("launches");
        assert!(out.is_clean(), "{:?}", out.reports);
        assert_eq!(bits(&again), bits(&first), "seed {seed}");
    }
    first
}

fn floats(a: &Arg) -> Vec<f32> {
    a.as_buffer().expect("a buffer").to_vec::<f32>().expect("float")
}

/// The CUDA of `src`, without the prelude.
fn cuda(src: &str) -> String {
    let opts = prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() };
    prism_cuda::emit(&synced("gpu_bits.prism", src), &opts).text
}

const CONVERSIONS: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[1])
def k(x : ptr(const(float)), d : ptr(const(double)), h : ptr(const(double)), a : int, u : uint,
      l : int64, ul : uint64, f : ptr(const(float)), out : ptr(float)):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: 8 * g + i) as o:
        with group(thread[1]):
            o[0] = float(bf16(x[g]))
            o[1] = float(bf16(d[g]))
            o[2] = float(half(h[g]))
            o[3] = float(bf16(a + g))
            o[4] = float(bf16(u + uint(g)))
            o[5] = float(bf16(l + int64(g)))
            o[6] = float(bf16(ul + uint64(g)))
            o[7] = float(fma(bf16(f[0]), bf16(f[1]), bf16(f[2])))
";

#[test]
fn conversions_to_16_bit_floats_round_once() {
    let p = |e: i32| 2f64.powi(e);
    let x = f32::from_bits(0x3F80_8001); // 1 + 2^-8 + 2^-23, just above a bf16 midpoint
    let args = || {
        vec![
            Arg::buffer(&[x, -x]),
            Arg::buffer(&[1.0 + p(-8) + p(-40), -(1.0 + p(-8))]),
            Arg::buffer(&[1.0 + p(-11) + p(-40), 1.0 + p(-11)]),
            // 2^30 + 2^22 + 1, and (thread 1) + 1 more; likewise 2^31 + 2^23 + 1.
            Arg::value((1i32 << 30) + (1 << 22) + 1),
            Arg::value((1u32 << 31) + (1 << 23) + 1),
            // 2^60 + 2^52 + 1: through `double` the `+ 1` was lost, leaving the tie.
            Arg::value((1i64 << 60) + (1 << 52) + 1),
            Arg::value((1u64 << 63) + (1 << 55) + 1),
            Arg::buffer(&[181.0f32 / 512.0, 181.0 / 2048.0, -8.9375]), // 0.353515625, 0.08837890625
            Arg::buffer(&[0f32; 16]),
        ]
    };
    let a = run(CONVERSIONS, "k", 2, args);
    let out = floats(&a[8]);
    let f = |x: f64| x as f32;
    // Thread 0: what the GPU computes (FINDINGS.md H2, H3; `cvt.rn`); the simulator gave 1.0,
    // 1.0, 1.0, 2^30, 2^31, 2^60, 2^63 and -8.875.
    assert_eq!(
        out[..8],
        [
            1.0078125,
            1.0078125,
            1.0009766,
            f(p(30) + p(23)),
            f(p(31) + p(24)),
            f(p(60) + p(53)),
            f(p(63) + p(56)),
            -8.9375
        ]
    );
    // Thread 1: the negated value, a tie (to even), and one more in the integers.
    assert_eq!(out[8..11], [-1.0078125, -1.0, 1.0]);
}

const ATOMICS: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[4], smem=16)
@launch_bounds(4)
def k(x : ptr(const(float)), acc : ptr(float), old : ptr(float), sh : ptr(float)):
    g : int @ thread[1] = id()
    with partition(old, p=thread[1], f=lambda i: g + i) as o:
        with partition(acc, p=thread[1], f=lambda i: g + i) as a:
            with group(thread[1]):
                o[0] = atomic_add(a[0], x[g])
    b : int @ block[1] = id()
    with partition(sh, p=block[1], f=lambda i: 4 * b + i) as sh_b:
        with group(block[1]):
            s : shared(float[4]) @ block[1]
            t : int @ thread[1] = id()
            with partition(s, p=thread[1], f=lambda i: t + i) as st:
                with group(thread[1]):
                    st[0] = 0.0
            with partition(s, p=thread[1], f=lambda i: t + i) as st:
                with group(thread[1]):
                    atomic_add(st[0], x[t])
            with partition(sh_b, p=thread[1], f=lambda i: t + i) as o:
                with partition(s, p=thread[1], f=lambda i: t + i) as st:
                    with group(thread[1]):
                        o[0] = st[0]
";

#[test]
fn float_atomic_add_flushes_subnormals_on_global_memory_only() {
    let args = || {
        vec![
            Arg::buffer(&[1e-40f32, 1e-39, 1.0, -1e-45]),
            Arg::buffer(&[0f32, 1e-39, 1e-40, -0.0]),
            Arg::buffer(&[0f32; 4]),
            Arg::buffer(&[0f32; 4]),
        ]
    };
    let a = run(ATOMICS, "k", 4, args);
    let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // The GPU's buffer (ATOMG.E.ADD.F32.FTZ.RN): subnormal operands and results are zeros of
    // their sign; the simulator kept them until 2026-11-29.
    assert_eq!(bits(floats(&a[1])), bits(vec![0.0, 0.0, 1.0, -0.0]));
    // `atomic_add` returns the old value as memory held it, unflushed.
    assert_eq!(bits(floats(&a[2])), bits(vec![0.0, 1e-39, 1e-40, -0.0]));
    // Shared memory keeps subnormals.
    assert_eq!(bits(floats(&a[3])), bits(vec![1e-40, 1e-39, 1.0, -1e-45]));
}

// A `bool` byte holding 2 comes from the host: a buffer is bytes, whatever a `bool` array
// should hold. (Until 2026-12-02 the test took it from shared bytes a `uint` array of a
// callee had left; a new array's elements hold nothing until written as its own, and that
// read is now `uninitialized-read`.)
const BOOL_BYTE: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[1])
@launch_bounds(128)
def k(inp : ptr(const(bool)), out : ptr(int)):
    g : int @ thread[1] = id()
    x : bool @ thread[1] = false
    with group(thread[1]):
        x = inp[g]
    y : int @ thread[1] = 0
    with group(thread[1]):
        if x:
            y = 10
        y = y + int(x) + int(not x) * 100 + int(x != true) * 1000
    with partition(out, p=thread[1], f=lambda i: g + i) as o:
        with group(thread[1]):
            o[0] = y
";

#[test]
fn a_bool_read_from_memory_is_its_byte_normalised() {
    let bytes = || Arg::Buffer(prism_interp::Buffer::from_bits(prism_types::ty::Scalar::Bool, &[2, 1, 0, 255]));
    let a = run(BOOL_BYTE, "k", 4, || vec![bytes(), Arg::buffer(&[0i32; 4])]);
    assert_eq!(a[1].as_buffer().expect("a buffer").to_vec::<i32>().expect("int"), [11, 11, 1100, 11]);
    // The CUDA reads the byte and compares it with 0, as the simulator does (a C++ `bool`
    // holding 2 is undefined; nvcc computed 1012 with it).
    let cu = cuda(BOOL_BYTE);
    assert!(cu.contains("*(const unsigned char*)&"), "{cu}");
    assert!(!cu.contains("= inp[g]"), "{cu}");
}

const NAN_SIGNS: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[1])
def k(zero : ptr(const(float)), f : ptr(float), d : ptr(double)):
    t : int @ thread[1] = id()
    with partition(f, p=thread[1], f=lambda i: 3 * t + i) as f_t:
        with partition(d, p=thread[1], f=lambda i: 2 * t + i) as d_t:
            with group(thread[1]):
                z : float = zero[t]
                nan : float = z / z
                zd : double = double(z)
                nand : double = zd / zd
                f_t[0] = -nan
                f_t[1] = abs(float(nand))
                f_t[2] = -(-nan)
                d_t[0] = -nand
                d_t[1] = abs(-nand)
";

#[test]
fn negation_and_abs_of_nans_change_the_sign_bit_only() {
    let a = run(NAN_SIGNS, "k", 1, || vec![Arg::buffer(&[0f32]), Arg::buffer(&[0f32; 3]), Arg::buffer(&[0f64; 2])]);
    let f: Vec<u32> = floats(&a[1]).iter().map(|x| x.to_bits()).collect();
    let d: Vec<u64> =
        a[2].as_buffer().expect("a buffer").to_vec::<f64>().expect("double").iter().map(|x| x.to_bits()).collect();
    assert_eq!(f, [0xFFFF_FFFF, 0x7FC0_0000, 0x7FFF_FFFF]);
    assert_eq!(d, [0x7FF8_0000_0000_0000, 0x7FF8_0000_0000_0000]);
    // The CUDA does the same with bit operations, not FADD/DADD (which keep or canonicalise
    // a NaN's sign).
    let cu = cuda(NAN_SIGNS);
    assert!(cu.contains("prism_fneg(") && cu.contains("prism_fabs("), "{cu}");
    assert!(!cu.contains("fabsf(") && cu.matches("fabs(").count() == cu.matches("prism_fabs(").count(), "{cu}");
    assert!(!cu.contains("-nan"), "{cu}");
}

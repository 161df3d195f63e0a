//! The bits of the NaNs the simulator makes are the GPU's: `0x7fffffff` (all payload bits
//! set, sign clear) from `float` arithmetic and math functions, `0xfff8000000000000` from
//! `double`'s, as an H200 wrote them for the probes of bench/gpu/probes.prism (BENCHMARKS.md,
//! 2026-11-28), where the host's SSE arithmetic gives `0xffc00000` for floats. Without this a kernel whose output holds a NaN wrote
//! different bits on the GPU than in the reference semantics. The GPU probes
//! (bench/gpu/probes.prism) run here on the simulator; a second kernel makes its NaNs from
//! a uniform operand (the simulator computes one lane for all 32) and through a contracted
//! multiply-add and a float atomic.

use prism_interp::{Arg, Config, Module};

const CANONICAL: u32 = 0x7FFF_FFFF;

fn module(name: &str, src: &str) -> Module {
    let (_, problems, synced) = prism_driver::compile_text(name, src, &prism_driver::Options::default());
    Module::new(&synced.unwrap_or_else(|| panic!("does not compile: {:?}", problems.diagnostics())))
}

fn floats(a: &Arg) -> Vec<u32> {
    a.as_buffer().expect("a buffer").to_vec::<f32>().expect("float").iter().map(|f| f.to_bits()).collect()
}

#[test]
fn nan_bits() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/gpu/probes.prism");
    let src = std::fs::read_to_string(path).expect("bench/gpu/probes.prism");
    let m = module("probes.prism", &src);
    let args = vec![Arg::buffer(&[0f32; 32]), Arg::buffer(&[0f32; 32]), Arg::buffer(&[0f64; 32])];
    let out = m.launch("nan_bits", 1, 32, &args, Config::default()).expect("launches");
    assert!(out.is_clean(), "{:?}", out.reports);
    // What the H200 wrote for the same launch (BENCHMARKS.md, 2026-11-28 probes): pairs of
    // threads, in order 0/0, inf-inf, NaN+1, NaN*0, sqrt(-1), fma(inf,0,1), log(-1),
    // exp(NaN), the other type's NaN converted, abs(NaN).
    // 2026-11-29: abs(NaN) of a double was measured as `fabs` (the H200 kept 0xfff8...'s
    // sign); `abs` and `-x` now print as bit operations (`prism_fabs`, `prism_fneg`), so the
    // sign is cleared (threads 18, 19 of `d`), and threads 20 to 23 (-NaN; abs of the converted
    // NaN and abs(-NaN)) change only the sign bit: not yet confirmed on a GPU.
    let mut want_f = vec![CANONICAL; 16];
    want_f.extend([0xFFC0_0000, 0xFFC0_0000, CANONICAL, CANONICAL]);
    want_f.extend([0xFFFF_FFFF, 0xFFFF_FFFF, 0x7FC0_0000, 0x7FC0_0000]);
    let mut want_d = vec![0xFFF8_0000_0000_0000u64; 16];
    want_d.extend([0x7FFF_FFFF_E000_0000, 0x7FFF_FFFF_E000_0000, 0x7FF8_0000_0000_0000, 0x7FF8_0000_0000_0000]);
    want_d.extend([0x7FF8_0000_0000_0000; 4]);
    assert_eq!(floats(&args[1])[..24], want_f[..], "float bits");
    let d: Vec<u64> =
        args[2].as_buffer().expect("a buffer").to_vec::<f64>().expect("double").iter().map(|x| x.to_bits()).collect();
    assert_eq!(d[..24], want_d[..], "double bits");
}

const UNIFORM: &str = "\
@prism(\"global\")
@requires(grid[1], block[1], thread[1])
def k(z : float, x : ptr(const(float)), out : ptr(float), sum : ptr(float)):
    i : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda j: 4 * i + j) as o:
        with group(thread[1]):
            # Uniform operands: one lane computed for the warp.
            o[0] = z / z
            o[1] = (1.0 / z) - (1.0 / z)
            # A product feeding an addition is one fused multiply-add (docs/language.md).
            o[2] = (1.0 / z) * x[i] + 1.0
            # Per-lane operands, NaN in every lane.
            o[3] = x[i] / x[i]
    with group(thread[1]):
        atomic_add(sum[0], x[0] / x[0])
";

#[test]
fn nans_from_uniform_operands_fused_products_and_atomics_are_canonical() {
    let m = module("uniform.prism", UNIFORM);
    let args = vec![Arg::value(0f32), Arg::buffer(&[0f32; 32]), Arg::buffer(&[0f32; 128]), Arg::buffer(&[1f32])];
    let out = m.launch("k", 1, 32, &args, Config::default()).expect("launches");
    assert!(out.is_clean(), "{:?}", out.reports);
    for (e, &bits) in floats(&args[2]).iter().enumerate() {
        assert_eq!(bits, CANONICAL, "out[{e}]: {bits:#010x}");
    }
    assert_eq!(floats(&args[3]), [CANONICAL]);
}

/// `nan_half` of bench/gpu/probes.prism on the simulator: every `half` and `bf16` NaN that
/// arithmetic or a math function makes is `0x7fff`, the GPU's (review R40: it was the
/// host's, `0xfe00` and `0xffc0` on x86); a NaN input moved unchanged keeps its bits, and
/// the float identities of a NaN (`x * 1`, `min(x, x)`) give the canonical NaN, which nvcc's
/// folding does not (docs/simulator.md, "NaN bits"). The double min and max of two NaNs is
/// the simulator's choice until a GPU run of the probe says otherwise.
#[test]
fn sixteen_bit_nans_are_canonical() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/gpu/probes.prism"))
        .expect("bench/gpu/probes.prism");
    let m = module("probes.prism", &src);
    let fs = [f32::from_bits(0xFFC0_0001), f32::from_bits(0x7F80_2000)];
    let ds = [f64::from_bits(0xFFF8_0000_0000_0000), f64::from_bits(0x7FF4_0000_0000_0001)];
    let args = vec![
        Arg::buffer(&[0f32; 32]),
        Arg::buffer(&fs),
        Arg::buffer(&ds),
        Arg::buffer(&[0u32; 32]),
        Arg::buffer(&[0u32; 32]),
        Arg::buffer(&[0u32; 32]),
        Arg::buffer(&[0f64; 32]),
    ];
    let out = m.launch("nan_half", 1, 32, &args, Config::default()).expect("launches");
    assert!(out.is_clean(), "{:?}", out.reports);
    let words = |a: &Arg| a.as_buffer().expect("a buffer").to_vec::<u32>().expect("uint");
    assert_eq!(words(&args[3]), vec![0x7FFF; 32], "half");
    assert_eq!(words(&args[4]), vec![0x7FFF; 32], "bf16");
    let f = words(&args[5]);
    for (t, &bits) in f.iter().enumerate() {
        let want = if (12..16).contains(&t) { CANONICAL } else { 0xFFC0_0001 };
        assert_eq!(bits, want, "float, thread {t}: {bits:#010x}");
    }
    let d: Vec<u64> =
        args[6].as_buffer().expect("a buffer").to_vec::<f64>().expect("double").iter().map(|x| x.to_bits()).collect();
    assert_eq!(d, vec![0x7FFF_FFFF_FFFF_FFFF; 32], "double min and max of two NaNs");
}

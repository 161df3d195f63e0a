//! The interpreter's superinstructions (`code::LocalFma`: local loads, an fma and a local
//! store run as one op; `code::Latch`: a loop's back edge run as one op; `code::Scalars`: a
//! run of register ops run without a dispatch each) and its one-lane paths for registers known to hold one value in
//! every lane must not change anything a launch shows: every output bit, every report
//! (kind, message, span, thread) and the step count are the same as when each op runs on
//! its own over 32 lanes. These tests run the same launches on a module with and without
//! them (`Module::new_unfused`).

use prism_interp::report::ReportKind;
use prism_interp::{Arg, Buffer, Checks, Config, Module, Outcome, ParamKind};
use prism_types::ty::Scalar;

fn modules(name: &str, src: &str) -> Option<(Module, Module)> {
    let (_, _, synced) = prism_driver::compile_text(name, src, &prism_driver::Options::default());
    let synced = synced?;
    Some((Module::new(&synced), Module::new_unfused(&synced)))
}

/// Everything a launch shows, as text: the outcome (reports, steps) and every buffer's bits.
fn shown(out: &Result<Outcome, prism_interp::LaunchError>, args: &[Arg]) -> String {
    let mut s = format!("{out:?}");
    for a in args {
        if let Some(b) = a.as_buffer() {
            s += &format!("\n{:?}", b.to_bits());
        }
    }
    s
}

/// A copy of `args` with buffers of their own (a launch writes its buffers in place).
fn fresh(args: &[Arg]) -> Vec<Arg> {
    args.iter()
        .map(|a| match a {
            Arg::Scalar(s, bits) => Arg::Scalar(*s, *bits),
            Arg::Buffer(b) => Arg::Buffer(Buffer::from_bits(b.elem, &b.to_bits())),
            Arg::Tensor { buffer, dims } => {
                Arg::Tensor { buffer: Buffer::from_bits(buffer.elem, &buffer.to_bits()), dims: dims.clone() }
            }
        })
        .collect()
}

/// Launches `kernel` on both modules with fresh copies of `args` and checks that they
/// agree; the kinds of the reports (none for a clean run).
fn same(
    fused: &Module,
    unfused: &Module,
    kernel: &str,
    (grid, block): (u32, u32),
    args: &[Arg],
    checks: Checks,
) -> Vec<ReportKind> {
    // One worker: with several, blocks run in parallel when race checks are off, and a run
    // that stops early (a report that ends it) stops after however many steps the other
    // workers had taken by then, which differs from run to run.
    let cfg = Config { checks, fuel: 2_000_000, workers: 1, ..Config::default() };
    let (a1, a2) = (fresh(args), fresh(args));
    let o1 = fused.launch(kernel, grid, block, &a1, cfg);
    let o2 = unfused.launch(kernel, grid, block, &a2, cfg);
    let (s1, s2) = (shown(&o1, &a1), shown(&o2, &a2));
    assert!(s1 == s2, "{kernel} {args:?} ({checks:?}): fused and unfused runs differ:\nfused:   {s1}\nunfused: {s2}");
    o1.map(|o| o.reports.iter().map(|r| r.kind).collect()).unwrap_or_default()
}

/// Floats that arithmetic treats specially, and ordinary ones.
const SPECIAL: [f32; 12] =
    [1.5, -0.0, 0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -2.25, 1e30, 1e-40, -f32::NAN, 3.0, f32::MIN_POSITIVE];

/// `n` floats, different in every lane: ordinary values (small multiples of 1/4, which a
/// wrong lane or element changes visibly), one in five of them special (which a NaN
/// payload or a sign of zero would change), where `shift` moves them.
fn floats(n: usize, shift: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            if (i + shift).is_multiple_of(5) {
                SPECIAL[(i / 5 + shift) % SPECIAL.len()]
            } else {
                ((i * 7 + shift * 3) % 13) as f32 * 0.25 - 1.5
            }
        })
        .collect()
}

/// Small programs that try to make a fused op do something its ops would not: indices that
/// are out of bounds for one load, for the store only, or for one lane; indices that differ
/// between lanes; lanes masked off by divergence; an fma whose operands are the element it
/// overwrites; special float values throughout.
const ADVERSARIAL: &str = r#"
@prism("global")
@requires(block[1], thread[32])
def tile(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            b : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                b[i] = W[i + 4]
                acc[i] = x[i]
            for i in range(4):
                for j in range(4):
                    acc[i] += a[i] * b[j]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def load_oob(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            for i in range(4):
                acc[i] += a[i + s] * a[i]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def acc_oob(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            for i in range(4):
                acc[i + s] += a[i] * a[3 - i]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def lane_oob(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            for i in range(4):
                acc[i + (t / d) * s] += a[i] * a[i]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def per_lane(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            for i in range(4):
                acc[(i + t) % 4] += a[(i + t * s) % 4] * a[i]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def diverged(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            if t < d:
                for i in range(4):
                    acc[i] += a[i] * a[(i + 1) % 4]
            else:
                for i in range(4):
                    acc[i + s] += a[i] * a[i]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def self_alias(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            for i in range(4):
                acc[i] = x[i]
            for i in range(4):
                acc[i] += acc[i] * acc[i]
            for i in range(4):
                acc[(i + s) % 4] += acc[i] * acc[(i + 1) % 4]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def moved(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            for i in range(4):
                acc[(i + s + 4) % 4] = a[i] * acc[i] + a[3 - i]
            for i in range(4):
                x[i] = acc[i]

@prism("global")
@requires(block[1], thread[32])
def diverged_values(X : ptr(float), W : ptr(const(float)), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            acc : float[4] @ thread[1]
            a : float[4] @ thread[1]
            for i in range(4):
                a[i] = W[i]
                acc[i] = x[i]
            k : int = 0
            n : int = 2
            if t < d:
                k = 1
                n = 3
            else:
                k = 3
            m : int = k
            j : int = m * 2 + s
            for i in range(n):
                acc[(j + i) % 4] += a[m] * a[i]
            if j > 4:
                acc[m] += a[0] * a[1]
            for i in range(4):
                x[i] = acc[i]
"#;

#[test]
fn adversarial_local_fmas_run_the_same_fused_and_unfused() {
    let (fused, unfused) = modules("fusion.prism", ADVERSARIAL).expect("the adversarial kernels check");
    assert!(fused.superinstructions() >= 8, "only {} superinstructions formed", fused.superinstructions());
    assert_eq!(unfused.superinstructions(), 0);
    let kernels =
        ["tile", "load_oob", "acc_oob", "lane_oob", "per_lane", "diverged", "self_alias", "moved", "diverged_values"];
    // `s` shifts indices (0 in bounds; 1 and 4 past the end; -1 and i32::MIN before the
    // start), `d` picks lanes (the divergent branch's split, the lanes `t / d` sends out of
    // bounds; 0 divides by zero, which is a report too).
    let shifts = [0, 1, 4, -1, i32::MIN];
    let picks = [32, 31, 17, 1, 0];
    // The launches must reach both the fused path and the general one's reports.
    let (mut clean, mut out_of_bounds) = (0, 0);
    for kernel in kernels {
        for (n, &s) in shifts.iter().enumerate() {
            for &d in &picks {
                for block in [32, 64, 40] {
                    let args = [
                        Arg::buffer(&floats(4 * block as usize, n)),
                        Arg::buffer(&floats(8, n + 3)),
                        Arg::value(s),
                        Arg::value(d),
                    ];
                    for checks in [Checks::NONE, Checks::ALL] {
                        let kinds = same(&fused, &unfused, kernel, (1, block), &args, checks);
                        clean += usize::from(kinds.is_empty());
                        out_of_bounds += usize::from(kinds.contains(&ReportKind::OutOfBounds));
                    }
                }
            }
        }
    }
    assert!(clean > 100 && out_of_bounds > 100, "{clean} clean runs, {out_of_bounds} out of bounds");
}

/// A launch's steps are counted per op covered, so a fuel limit that runs out in the
/// middle of a fused group stops both runs at the same op with the same report.
#[test]
fn fuel_runs_out_at_the_same_op_fused_and_unfused() {
    let (fused, unfused) = modules("fusion.prism", ADVERSARIAL).expect("the adversarial kernels check");
    let args = [Arg::buffer(&floats(128, 0)), Arg::buffer(&floats(8, 1)), Arg::value(0), Arg::value(32)];
    same_under_fuel(&fused, &unfused, "tile", &args, (20..400).step_by(7));
}

/// Counts a launch's report kinds `got` into `clean` (none) and `kinds` (each new kind).
fn tally((clean, kinds): (&mut usize, &mut Vec<ReportKind>), got: Vec<ReportKind>) {
    *clean += usize::from(got.is_empty());
    for k in got {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
}

/// Launches `kernel` on one block of `block` threads under each seeded schedule of `seeds`
/// (all checks) on both modules and checks that they agree: outputs, reports and steps.
fn same_seeded(
    fused: &Module,
    unfused: &Module,
    (kernel, block): (&str, u32),
    args: &[Arg],
    seeds: &[u64],
    what: &str,
) {
    for &seed in seeds {
        let cfg = Config { checks: Checks::ALL, seed: Some(seed), workers: 1, ..Config::default() };
        let (a1, a2) = (fresh(args), fresh(args));
        let o1 = fused.launch(kernel, 1u32, block, &a1, cfg);
        let o2 = unfused.launch(kernel, 1u32, block, &a2, cfg);
        assert_eq!(shown(&o1, &a1), shown(&o2, &a2), "{kernel} {what} seed {seed}");
    }
}

/// Launches `kernel` on one warp under each fuel limit of `fuels` on both modules and checks
/// that they stop at the same op with the same outputs and report.
fn same_under_fuel(fused: &Module, unfused: &Module, kernel: &str, args: &[Arg], fuels: impl Iterator<Item = u64>) {
    for fuel in fuels {
        let cfg = Config { checks: Checks::NONE, fuel, ..Config::default() };
        let (a1, a2) = (fresh(args), fresh(args));
        let o1 = fused.launch(kernel, 1u32, 32u32, &a1, cfg);
        let o2 = unfused.launch(kernel, 1u32, 32u32, &a2, cfg);
        assert_eq!(shown(&o1, &a1), shown(&o2, &a2), "{kernel}, fuel {fuel}");
    }
}

/// Loops whose back edge the interpreter runs as one op (`code::Latch`), written to make it
/// do something the four ops would not: bounds from arguments (empty, one trip, many, near
/// `int`'s end so the counter's checked step overflows), a trip count that differs between
/// lanes (the test splits the warp), a body whose last op is a division that may divide by
/// zero, `continue` (which jumps to the fused op) and `break` out of nested loops (whose
/// reconvergence records the jump unwinds), a loop under divergence, and a block-level loop
/// whose bound unsafe code leaves different between the warps.
const LATCHES: &str = r#"
@prism("global")
@requires(block[1], thread[32])
def counters(X : ptr(int), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            total : int = 0
            for i in range(s, d, 1 << 29):
                total += 2
            for i in range(s, d):
                total += i % 7
            for i in range(d, s, -3):
                total += 1
            for i in range(0, t / 8 + d % 5):
                total += 3
            x[0] = total

@prism("global")
@requires(block[1], thread[32])
def bodies(X : ptr(int), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            k : int = 1
            n : int = 0
            while n < 6:
                n += 1
                k = k * 3 + 100 / (s - n)
            for i in range(8):
                if i == d % 8:
                    continue
                for j in range(8):
                    if j * i > s:
                        break
                    k += j
            if t < d:
                for i in range(s % 9):
                    k += i
            else:
                for i in range(5):
                    k -= i
            x[1] = k

@prism("global")
@requires(block[1], thread[32])
def block_loop(X : ptr(int), s : int, d : int):
    t : int @ thread[1] = id()
    with group(block[1]):
        n : int @ block[1] = 0
        with unsafe:
            n = s + thread_idx() / d
        i : int @ block[1] = 0
        while i < n:
            i += 1
"#;

/// The fused back edges run the same as their four ops, including every report they can
/// make: counter overflow, division by zero in the body's last op, a divergent exit, a
/// non-uniform block-level condition, and fuel that runs out inside the group.
#[test]
fn adversarial_latches_run_the_same_fused_and_unfused() {
    let (fused, unfused) = modules("latches.prism", LATCHES).expect("the latch kernels check");
    assert!(fused.superinstructions() >= 8, "only {} superinstructions formed", fused.superinstructions());
    let values = [0, 1, 2, 6, 7, -5, 40, i32::MAX - 2, i32::MIN + 1];
    let mut kinds: Vec<ReportKind> = Vec::new();
    let mut clean = 0;
    for kernel in ["counters", "bodies", "block_loop"] {
        for &s in &values {
            for &d in &values {
                for block in [32, 64, 40] {
                    let args =
                        [Arg::Buffer(Buffer::zeroed(Scalar::I32, 4 * block as usize)), Arg::value(s), Arg::value(d)];
                    for checks in [Checks::NONE, Checks::ALL] {
                        let got = same(&fused, &unfused, kernel, (1, block), &args, checks);
                        tally((&mut clean, &mut kinds), got);
                    }
                }
            }
        }
    }
    for kind in
        [ReportKind::CounterOverflow, ReportKind::DivisionByZero, ReportKind::NonUniform, ReportKind::FuelExhausted]
    {
        assert!(kinds.contains(&kind), "no launch reached {kind:?}: {kinds:?}");
    }
    assert!(clean > 100, "{clean} clean runs");
    let args = [Arg::Buffer(Buffer::zeroed(Scalar::I32, 128)), Arg::value(3), Arg::value(5)];
    same_under_fuel(&fused, &unfused, "bodies", &args, (10..300).step_by(3));
}

fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("corpus dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "prism") {
            out.push(p);
        }
    }
}

/// Every kernel of the accepted corpus (the register-tiled gemms among them, with their
/// superinstructions, and every kernel for the registers known to be uniform) runs the same
/// fast and plain, on float inputs full of special values.
#[test]
fn corpus_kernels_run_the_same_fused_and_unfused() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ui/accept");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    let (mut compared, mut fused_kernels) = (0, 0);
    for path in all {
        let src = std::fs::read_to_string(&path).expect("readable");
        let Some((fused, unfused)) = modules(&path.display().to_string(), &src) else { continue };
        let has_fused = fused.superinstructions() > 0;
        for k in fused.kernels() {
            let mut t = k.t_mult;
            while t % 32 != 0 && t < 1024 {
                t += k.t_mult;
            }
            if t > 1024 || k.launch_bounds.is_some_and(|lb| t > lb) {
                t = k.t_mult;
            }
            let g = k.b_mult * 2;
            let args: Vec<Arg> = k
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| match p.kind {
                    ParamKind::Scalar(s) if s.is_float() => Arg::Scalar(s, prism_interp::value::from_f64(s, 1.5)),
                    ParamKind::Scalar(Scalar::Bool) => Arg::Scalar(Scalar::Bool, 1),
                    ParamKind::Scalar(s) => Arg::Scalar(s, 16),
                    ParamKind::Pointer(Scalar::F32) => Arg::buffer(&floats(1 << 14, i)),
                    ParamKind::Pointer(s) => Arg::Buffer(Buffer::zeroed(s, 1 << 14)),
                    ParamKind::Opaque => Arg::Scalar(Scalar::U64, 0),
                    ParamKind::TensorMap(m) => {
                        let dims: Vec<u64> = if m.rank == 3 { vec![2, 128, 128] } else { vec![128, 128] };
                        let n = dims.iter().product::<u64>() as usize;
                        Arg::Tensor { buffer: Buffer::zeroed(m.elem, n), dims }
                    }
                })
                .collect();
            for checks in [Checks::NONE, Checks::ALL] {
                same(&fused, &unfused, &k.name, (g as u32, t as u32), &args, checks);
            }
            compared += 1;
            fused_kernels += usize::from(has_fused);
        }
    }
    assert!(compared > 50 && fused_kernels >= 4, "{compared} kernels compared, {fused_kernels} with superinstructions");
}

/// Calls the interpreter runs inline (`code::Leaf`), written to make the inlined body do
/// something the call would not: two leaves sharing the inlined registers on the two sides
/// of a divergent branch (whose fragments interleave, under seeded schedules too), a leaf
/// called with its own result, a division by zero inside a leaf (the report's span and
/// thread), a leaf inside a loop (fuel running out inside the body), float math and a
/// product the contraction rule fuses, and a leaf that reads the thread's index.
const LEAVES: &str = r#"
@prism("device")
@requires(thread[1])
def slot(i : int @ thread[1], d : int @ thread[1]) -> int @ thread[1]:
    return i + i / d

@prism("device")
@requires(thread[1])
def mix(a : int @ thread[1], b : int @ thread[1]) -> int @ thread[1]:
    c : int @ thread[1] = a * 3
    e : int @ thread[1] = c - b % 7
    return e * c

@prism("device")
@requires(thread[1])
def blend(x : float @ thread[1], y : float @ thread[1]) -> float @ thread[1]:
    return max(x, y) * y + x

@prism("device")
@requires(thread[32])
def lane() -> int @ thread[1]:
    l : int @ thread[1] = id()
    return l * 2

@prism("global")
@requires(block[1], thread[32])
def divergent(X : ptr(int), s : int, d : int):
    t : int @ thread[1] = id()
    twice : int @ thread[1] = lane()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            a : int = 0
            b : int = 0
            if t < s:
                a = slot(t, d)
                b = mix(t, a)
            else:
                a = mix(t + 1, d)
                b = slot(mix(a, t), d)
            k : int = 0
            for i in range(s % 9):
                k += slot(i + t, d) + mix(k, i)
            x[0] = a
            x[1] = b
            x[2] = k
            x[3] = twice

@prism("global")
@requires(block[1], thread[32])
def floats(Y : ptr(float), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(Y, p=thread[1], f=lambda i: t * 4 + i) as y:
        with group(thread[1]):
            u : float = y[0]
            v : float = y[1]
            if t % 3 == s % 3:
                y[2] = blend(u, v)
            else:
                y[2] = blend(v, blend(u, v))
            y[3] = blend(float(t / (d + 1)), u)
"#;

/// Inlined calls run the same as the calls: every output bit, every report (a division by
/// zero inside a leaf, out of bounds after one) and the step count, under the default
/// schedule and seeded ones, and when fuel runs out inside an inlined body.
#[test]
fn adversarial_leaf_calls_run_the_same_inlined_and_called() {
    let (fused, unfused) = modules("leaves.prism", LEAVES).expect("the leaf kernels check");
    assert!(fused.inlined_calls() >= 9, "only {} calls inlined", fused.inlined_calls());
    assert_eq!(unfused.inlined_calls(), 0);
    let values = [0, 1, 5, 17, 32, -3, i32::MIN, i32::MAX];
    let mut kinds: Vec<ReportKind> = Vec::new();
    let mut clean = 0;
    for &s in &values {
        for &d in &values {
            for block in [32, 64, 40] {
                let n = 4 * block as usize;
                let ints = [Arg::Buffer(Buffer::zeroed(Scalar::I32, n)), Arg::value(s), Arg::value(d)];
                let fl = [Arg::buffer(&floats(n, (s as usize) % 7)), Arg::value(s), Arg::value(d)];
                for (kernel, args) in [("divergent", &ints), ("floats", &fl)] {
                    for checks in [Checks::NONE, Checks::ALL] {
                        let got = same(&fused, &unfused, kernel, (1, block), args, checks);
                        tally((&mut clean, &mut kinds), got);
                    }
                    // Seeded schedules interleave the branch's fragments at random points,
                    // the same points in both runs when the steps are counted the same.
                    same_seeded(&fused, &unfused, (kernel, block), args, &[1, 2, 3], &format!("s={s} d={d}"));
                }
            }
        }
    }
    assert!(kinds.contains(&ReportKind::DivisionByZero), "no launch divided by zero: {kinds:?}");
    assert!(clean > 100, "{clean} clean runs");
    let args = [Arg::Buffer(Buffer::zeroed(Scalar::I32, 128)), Arg::value(7), Arg::value(3)];
    same_under_fuel(&fused, &unfused, "divergent", &args, 1..400);
}

/// Runs of register ops the interpreter runs in turn without a dispatch each
/// (`code::Scalars`), written to make a run do something its ops would not: a lane's own
/// value in the middle of a run (the rest of the run goes lane by lane), a division by
/// zero and a remainder by zero inside a run (the report's span and thread), one lane's
/// division by zero after lane values earlier in the run (the run stops before it), a register
/// that a later op of the run overwrites after an earlier one read it, runs in loops whose
/// constants are rewritten each trip, selects, casts, unary ops and float arithmetic on
/// special values, runs under divergence (a partial mask), and warps that interleave
/// through shared memory under seeded schedules (the budget running out inside a run).
const SCALARS: &str = r#"
@prism("global")
@requires(block[1], thread[32])
def ints(X : ptr(int), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
        with group(thread[1]):
            k : int = s * 3 + d - 7
            m : int = k * 5 + t * s + d * 2 - 1
            q : int = (k + 3) / (d - s) + 2 * k
            r : int = q % (s - 1) + (m << 2)
            n : int = -k if s > d else k ^ 5
            k = k * 7 + n
            k = k * 7 + k
            for i in range(4):
                for j in range(4):
                    k = k * 3 + i * 4 + j - (s >> 2)
            if t < d % 32:
                k = k * 5 + s * 9 - 2
                r = r + s / (d - 3)
            else:
                k = k - 1 + t
            p : int = m * 2 + t * 3
            if s == 3:
                p = p + (k + t) / (t - d % 32) - k * 5
            x[0] = k
            x[1] = m + p
            x[2] = r
            x[3] = n

@prism("global")
@requires(block[1], thread[32])
def floats_and_casts(Y : ptr(float), s : int, d : int):
    t : int @ thread[1] = id()
    with partition(Y, p=thread[1], f=lambda i: t * 4 + i) as y:
        with group(thread[1]):
            a : float = float(s) * 0.5 + float(d) - 1.25
            b : float = y[0]
            c : float = a * 2.0 + b
            e : float = max(a, float(d)) if s < d else -a
            u : int = int(a * 3.0) + s % 4
            y[1] = c + e
            y[2] = float(u * 2 + 1) / float(d)
            y[3] = a - float(t)

@prism("global")
@requires(block[1], thread[32], smem=1024)
def interleaved(X : ptr(int), s : int, d : int):
    t : int @ thread[1] = id()
    w : int @ thread[1] = t / 32
    with group(block[1]):
        S : shared(int[256]) @ block[1]
        with partition(S, p=thread[1], f=lambda i: t + i * 64) as mine:
            with group(thread[1]):
                v : int = s * 3 + d
                for i in range(4):
                    v = v * 5 + i * 7 + s - d * 3 + w
                    mine[i] = v
        __syncthreads()
        with partition(X, p=thread[1], f=lambda i: t * 4 + i) as x:
            with group(thread[1]):
                for i in range(4):
                    x[i] = S[(t * 4 + i + 64) % 256] + s * 2 - 1
"#;

/// The fused runs of register ops run the same as their ops one by one, including every
/// report they can make, under the default schedule and seeded ones, and when the fuel
/// runs out at each op of them.
#[test]
fn adversarial_scalar_runs_run_the_same_fused_and_unfused() {
    let (fused, unfused) = modules("scalars.prism", SCALARS).expect("the scalar-run kernels check");
    assert!(fused.scalar_runs() >= 10, "only {} runs formed", fused.scalar_runs());
    assert_eq!(unfused.scalar_runs(), 0);
    let values = [0, 1, 3, 4, 7, -5, 40, i32::MAX - 2, i32::MIN + 1];
    let mut kinds: Vec<ReportKind> = Vec::new();
    let mut clean = 0;
    for &s in &values {
        for &d in &values {
            for block in [32, 64] {
                let n = 4 * block as usize;
                let ints = [Arg::Buffer(Buffer::zeroed(Scalar::I32, n)), Arg::value(s), Arg::value(d)];
                let fl = [Arg::buffer(&floats(n, (d as usize) % 7)), Arg::value(s), Arg::value(d)];
                for (kernel, args) in [("ints", &ints), ("floats_and_casts", &fl), ("interleaved", &ints)] {
                    if kernel == "interleaved" && block != 64 {
                        continue;
                    }
                    for checks in [Checks::NONE, Checks::ALL] {
                        let got = same(&fused, &unfused, kernel, (1, block), args, checks);
                        tally((&mut clean, &mut kinds), got);
                    }
                    same_seeded(&fused, &unfused, (kernel, block), args, &[1, 2], &format!("s={s} d={d}"));
                }
            }
        }
    }
    assert!(kinds.contains(&ReportKind::DivisionByZero), "no launch divided by zero: {kinds:?}");
    assert!(clean > 100, "{clean} clean runs");
    let args = [Arg::Buffer(Buffer::zeroed(Scalar::I32, 128)), Arg::value(5), Arg::value(9)];
    same_under_fuel(&fused, &unfused, "ints", &args, 1..300);
}

//! Buffers that nothing writes: the race detector records no reads of a kernel's buffer
//! whose memory no access site of the kernel changes (docs/simulator.md, Speed). These
//! programs check that what it then skips could never have mattered: a buffer that some
//! thread writes, itself or through a device function, is still checked; and a write that
//! reaches a buffer the access sites call read-only (IR whose sites do not describe its
//! stores) is reported rather than run unchecked.

use prism_interp::{Arg, Config, Module, ReportKind};

const SRC: &str = r#"
@prism("device")
@requires(thread[1])
def bump(p : ptr(int), i : int):
    p[i] = p[i] + 1

@prism("device")
@requires(thread[1])
def peek(p : ptr(const(int)), i : int) -> int:
    return p[i]

@prism("global")
@requires(grid[1], block[1], thread[32])
def reads(x : ptr(const(int)), y : ptr(int)):
    b : int @ block[1] = id()
    with partition(y, p=block[1], f=lambda i: b * 64 + i) as y_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(y_b, p=thread[1], f=lambda i: t + i) as y_t:
                with group(thread[1]):
                    y_t[0] = x[(b * 64 + t) % 128] + peek(x, 0)

@prism("global")
@requires(grid[1], block[1], thread[32])
def races(x : ptr(int), y : ptr(int)):
    b : int @ block[1] = id()
    with partition(y, p=block[1], f=lambda i: b * 64 + i) as y_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(y_b, p=thread[1], f=lambda i: t + i) as y_t:
                with group(thread[1]):
                    y_t[0] = peek(x, 0)
                    with unsafe:
                        if b == 1 and t == 5:
                            x[0] = 9

@prism("global")
@requires(grid[1], block[1], thread[32])
def races_in_callee(x : ptr(int), y : ptr(int)):
    b : int @ block[1] = id()
    with partition(y, p=block[1], f=lambda i: b * 64 + i) as y_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(y_b, p=thread[1], f=lambda i: t + i) as y_t:
                with group(thread[1]):
                    y_t[0] = peek(x, 0)
                    with unsafe:
                        if b == 1 and t == 5:
                            bump(x, 0)
"#;

fn ir() -> prism_driver::Synced {
    let (_, problems, synced) = prism_driver::compile_text("read_only.prism", SRC, &prism_driver::Options::default());
    synced.unwrap_or_else(|| panic!("{problems:?}"))
}

const SEEDS: [Option<u64>; 5] = [None, Some(1), Some(2), Some(3), Some(17)];

fn launch(m: &Module, kernel: &str, seed: Option<u64>) -> (Vec<ReportKind>, Vec<i32>) {
    let x: Vec<i32> = (0..128).collect();
    let args = [Arg::buffer(&x), Arg::buffer(&[0i32; 128])];
    let o = m.launch(kernel, 2, 64, &args, Config { seed, ..Config::default() }).expect("valid launch");
    (o.reports.iter().map(|r| r.kind).collect(), args[1].as_buffer().expect("buffer").to_vec::<i32>().expect("i32"))
}

/// `x` is read through the kernel's own loads and a device function's const parameter,
/// and written nowhere: read-only, and clean.
#[test]
fn a_buffer_only_read_runs_clean() {
    let m = Module::new(&ir());
    let want: Vec<i32> = (0..128).map(|i| i % 128).collect();
    for seed in SEEDS {
        let (kinds, out) = launch(&m, "reads", seed);
        assert!(kinds.is_empty(), "{seed:?}: {kinds:?}");
        assert_eq!(out, want);
    }
}

/// Asserts that `kernel` reports a race under every schedule of [`SEEDS`].
fn races_under_every_schedule(kernel: &str) {
    let m = Module::new(&ir());
    for seed in SEEDS {
        let (kinds, _) = launch(&m, kernel, seed);
        assert!(kinds.iter().any(|k| matches!(k, ReportKind::Race(_))), "{kernel}, {seed:?}: {kinds:?}");
    }
}

/// A store in unsafe code makes `x` written: every block's reads of `x[0]` are recorded,
/// and block 1's store races with block 0's reads in every order of the blocks.
#[test]
fn a_buffer_written_in_unsafe_code_is_checked() {
    races_under_every_schedule("races");
}

/// The same store made by a device function through its writable parameter: the call
/// records a write on its argument, so `x` is written, and checked.
#[test]
fn a_buffer_written_by_a_callee_is_checked() {
    races_under_every_schedule("races_in_callee");
}

/// IR whose store into `x` names the memory of `y` in its access site: the sites say
/// nothing writes `x`, so its reads go unrecorded, and the store that reaches it is
/// reported (`not-simulated`) instead of being run unchecked. With the site as lowering
/// made it, the same IR reports the race.
#[test]
fn a_store_its_access_site_hides_is_reported() {
    let text = prism_ir::print(ir().ir());
    let start = text.find("kernel @races(").expect("the kernel");
    let end = start + text[start..].find("\n}\n").expect("its end");
    let kernel = &text[start..end];
    assert!(kernel.contains("access !2 write #0"), "{kernel}");
    let hidden =
        format!("{}{}{}", &text[..start], kernel.replace("access !2 write #0", "access !2 write #1"), &text[end..]);
    let m = Module::new(&prism_driver::assemble(&hidden).expect("valid IR"));
    for seed in SEEDS {
        let (kinds, _) = launch(&m, "races", seed);
        assert_eq!(kinds, [ReportKind::NotSimulated], "{seed:?}");
    }
    let m = Module::new(&prism_driver::assemble(&text).expect("valid IR"));
    let (kinds, _) = launch(&m, "races", None);
    assert!(kinds.iter().any(|k| matches!(k, ReportKind::Race(_))), "{kinds:?}");
}

/// The race checker's memory limit counts the buffers something writes: 2^24 elements only
/// read need no shadow, and the same elements written are refused as before.
#[test]
fn the_shadow_limit_counts_written_buffers_only() {
    let m = Module::new(&ir());
    let big = vec![0i32; 1 << 24];
    let args = [Arg::buffer(&big), Arg::buffer(&[0i32; 128])];
    let o = m.launch("reads", 2, 64, &args, Config::default()).expect("a read-only buffer needs no shadow");
    assert!(o.reports.is_empty(), "{:?}", o.reports);
    let args = [Arg::buffer(&[0i32; 128]), Arg::buffer(&big)];
    let e = m.launch("reads", 2, 64, &args, Config::default()).expect_err("too large to check");
    assert!(format!("{e:?}").contains("shadow memory"), "{e:?}");
}

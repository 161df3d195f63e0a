//! A uniformity check the source cannot reach on its own: a condition of block-level code
//! that differs between the warps of a unit that is not a whole number of warps (a block of
//! 48 or 40 threads). From source, the variable the condition reads would be reported first,
//! where the unsafe code that set it ends; here that check is left out of the IR. Until
//! 2026-11-29 such units were compared within each warp only (`.dev/review/R3` F4).

use prism_interp::{Arg, Config, Module, ReportKind};

/// `u = thread_idx() / divisor` in unsafe code, then `if u == 1:` at `block[1]`, with no
/// `assert.uniform` between them.
fn ir(divisor: u32) -> String {
    format!(
        "kernel @k(%0) entry grid[1] facts 1 1 smem 0 {{
  reg %0: ptr \"out\"
  reg %1: i32 \"u\"
  reg %2: i32
  reg %3: i32
  reg %4: i32
  reg %5: i32
  reg %6: i32
  reg %7: bool
  reg %8: i32
  mem #0 param \"out\" grid[1] i32
  body {{
    group block[1] {{
      %2 = const 0
      %1 = copy %2
      unsafe {{
        %3 = raw thread_idx
        %4 = const {divisor}
        %5 = div %3, %4
        %1 = copy %5
      }}
      %6 = const 1
      %7 = eq %1, %6
      if %7 {{
        %8 = const 2
        %1 = copy %8
      }}
    }}
  }}
}}
"
    )
}

/// The reports of one block of `threads` threads, under the default schedule and a few
/// random ones.
fn reports(divisor: u32, threads: u32) -> Vec<(ReportKind, u32)> {
    let m = Module::new(&prism_driver::assemble(&ir(divisor)).expect("valid IR"));
    let mut found = Vec::new();
    for seed in [None, Some(1), Some(2), Some(3)] {
        let args = [Arg::buffer(&[0i32; 64])];
        let o = m.launch("k", 1, threads, &args, Config { seed, ..Config::default() }).expect("valid launch");
        found.extend(o.reports.iter().map(|r| (r.kind, r.thread.thread)));
    }
    found
}

#[test]
fn conditions_are_compared_across_the_warps_of_a_partial_unit() {
    for threads in [40, 48, 64] {
        let found = reports(32, threads);
        assert_eq!(found.len(), 4, "{threads} threads: {found:?}");
        assert!(found.iter().all(|&(k, _)| k == ReportKind::NonUniform), "{threads} threads: {found:?}");
    }
    // The same condition where it holds one value in the whole block.
    for threads in [40, 48, 64] {
        assert_eq!(reports(64, threads), Vec::new(), "{threads} threads");
    }
}

//! A uniformity check the source cannot reach on its own: a condition of block-level code
//! that differs between the warps of a unit that is not a whole number of warps (a block of
//! 48 or 40 threads). From source, the variable the condition reads would be reported first,
//! where the unsafe code that set it ends; here that check is left out of the IR. Until
//! 2026-11-29 such units were compared within each warp only (`.dev/review/R3` F4). After
//! them, `assert.uniform.arg` of a pointer: a view passed from unsafe code for a broader
//! pointer parameter (`.dev/review/R5` F4), over partial units, and a pointer to each
//! thread's own copy of a local array, written directly in IR (from source such a pointer
//! reaches the call through a `thread[1]` pointer parameter). Last, `assert.uniform.operand`
//! of an element's address: an intrinsic's element operand `m[i]` passed from unsafe code,
//! where each warp's pointer and index differ and the address they make may or may not.

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

/// A view passed from unsafe code for a `block[1]` pointer parameter (`.dev/review/R5` F4):
/// `out` advanced by `thread_idx() / divisor`, checked as the pointer the callee gets. From
/// source this is `with partition(out, p=block[1], f=lambda i: x + i) as ob: f(ob)` with
/// `x` thread-varying (tests/ui/run/checks/non_uniform.prism, `buggy_view_*`).
fn view_ir(divisor: u32) -> String {
    format!(
        "device @f(%0) entry block[1] facts 1 1 smem 0 {{
  reg %0: ptr \"o\"
  mem #0 param \"o\" block[1] i32
  body {{
  }}
}}

kernel @k(%0) entry grid[1] facts 1 1 smem 0 {{
  reg %0: ptr \"out\"
  reg %1: i32
  reg %2: i32
  reg %3: i32
  reg %4: ptr \"ob\"
  mem #0 param \"out\" grid[1] i32
  mem #1 partition \"ob\" block[1] i32 of #0
  access !0 write #1
  body {{
    group block[1] {{
      unsafe {{
        %1 = raw thread_idx
        %2 = const {divisor}
        %3 = div %1, %2
        scope partition #0 -> #1 {{
          %4 = ptradd %0, %3
          assert.uniform.arg %4 block[1] @f 0
          call @f(%4) smem 0 !0
        }}
      }}
    }}
  }}
}}
"
    )
}

/// A pointer to the thread-local array `tab` (each thread's own copy) passed for a
/// `block[1]` read-only parameter and checked as a pointer: what a caller's array reached
/// through a `thread[1]` pointer parameter gives. Element 1 is `thread_idx() / divisor`.
fn local_ir(divisor: u32) -> String {
    format!(
        "device @f(%0) entry block[1] facts 1 1 smem 0 {{
  reg %0: ptr \"tab\"
  mem #0 param \"tab\" block[1] i32
  body {{
  }}
}}

kernel @k(%0) entry grid[1] facts 1 1 smem 0 {{
  reg %0: ptr \"out\"
  reg %1: i32
  reg %2: i32
  reg %3: i32
  reg %4: i32
  reg %5: ptr \"tab\"
  local $0: i32[2] \"tab\"
  mem #0 param \"out\" grid[1] i32
  mem #1 local \"tab\" thread[1] i32
  access !0 read #1
  body {{
    group block[1] {{
      decl $0
      unsafe {{
        %1 = const 1
        %2 = raw thread_idx
        %3 = const {divisor}
        %4 = div %2, %3
        lstore $0[%1], %4
        %5 = localaddr $0
        assert.uniform.arg %5 block[1] @f 0
        call @f(%5) smem 0 !0
      }}
    }}
  }}
}}
"
    )
}

/// The reports of one block of `threads` threads running `text`, with their messages.
fn reports_of(text: &str, threads: u32) -> Vec<(ReportKind, String)> {
    let m = Module::new(&prism_driver::assemble(text).expect("valid IR"));
    let mut found = Vec::new();
    for seed in [None, Some(1), Some(2), Some(3)] {
        let args = [Arg::buffer(&[0i32; 64])];
        let o = m.launch("k", 1, threads, &args, Config { seed, ..Config::default() }).expect("valid launch");
        found.extend(o.reports.iter().map(|r| (r.kind, r.message.clone())));
    }
    found
}

#[test]
fn a_view_argument_is_compared_as_its_pointer_across_the_unit() {
    // Different views in the block's two warps (also when the second warp is partial), or in
    // every lane: reported at the call.
    for (divisor, threads) in [(32, 40), (32, 48), (32, 64), (1, 32)] {
        let found = reports_of(&view_ir(divisor), threads);
        assert_eq!(found.len(), 4, "{divisor}, {threads} threads: {found:?}");
        assert!(
            found.iter().all(|(k, m)| *k == ReportKind::NonUniform && m.contains("pointer or view for `o`")),
            "{divisor}, {threads} threads: {found:?}"
        );
    }
    // One view for the whole block.
    for threads in [40, 48, 64] {
        assert_eq!(reports_of(&view_ir(64), threads), Vec::new(), "{threads} threads");
    }
}

#[test]
fn a_pointer_to_thread_local_arrays_compares_the_copies() {
    // Every thread's pointer names its own copy of `tab` (and the warps' frames may differ):
    // the pointers agree, the copies' element 1 does not.
    for threads in [40, 64] {
        let found = reports_of(&local_ir(32), threads);
        assert_eq!(found.len(), 4, "{threads} threads: {found:?}");
        assert!(
            found.iter().all(|(k, m)| *k == ReportKind::NonUniform && m.contains("its element 1 differs")),
            "{threads} threads: {found:?}"
        );
        assert_eq!(reports_of(&local_ir(64), threads), Vec::new(), "{threads} threads");
    }
}

/// The element operand `a[i]` of a swizzled wgmma (at `warpgroup[1]`) as unsafe code may
/// build it: the pointer `out + w` and the index `k - lean * w`, for `w` the thread's warp,
/// checked as the element's address `out + k + (1 - lean) w` (the lowering's `ptradd` of
/// the two). The wgmma itself is left out: the check is what is tested.
fn operand_ir(lean: i32) -> String {
    format!(
        "kernel @k(%0) entry grid[1] facts 1 1 smem 0 {{
  reg %0: ptr \"out\"
  reg %1: i32
  reg %2: i32
  reg %3: i32
  reg %4: ptr
  reg %5: i32
  reg %6: i32
  reg %7: i32
  reg %8: i32
  reg %9: ptr
  mem #0 param \"out\" grid[1] i32
  body {{
    group block[1] {{
      unsafe {{
        %1 = raw thread_idx
        %2 = const 32
        %3 = div %1, %2
        %4 = ptradd %0, %3
        %5 = const 8
        %6 = const {lean}
        %7 = mul %6, %3
        %8 = sub %5, %7
        %9 = ptradd %4, %8
        assert.uniform.operand %9 thread[128] wgmma_bf16_sw 1
      }}
    }}
  }}
}}
"
    )
}

#[test]
fn an_element_operand_is_compared_as_its_address() {
    // Each warp's pointer and index differ, their sum does not: one tile, no report.
    for threads in [40, 64, 128] {
        assert_eq!(reports_of(&operand_ir(1), threads), Vec::new(), "{threads} threads");
    }
    // The same pointers with one index: each warp names its own tile, reported naming the
    // intrinsic and the operand.
    for threads in [40, 64, 128] {
        let found = reports_of(&operand_ir(0), threads);
        assert_eq!(found.len(), 4, "{threads} threads: {found:?}");
        assert!(
            found.iter().all(|(k, m)| *k == ReportKind::NonUniform && m.contains("operand `a` of `wgmma_bf16_sw`")),
            "{threads} threads: {found:?}"
        );
    }
}

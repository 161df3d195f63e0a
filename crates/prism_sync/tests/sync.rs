//! Where synchronisation inference puts barriers, and with what scope, on small programs and
//! on the paper's kernels. Each test shows one inferred barrier per line:
//! `@function: scope barrier before line L: memory, how the earlier node uses it (line), how
//! the later one does (line)`. Line numbers count from the first line of the program text.

use expect_test::{Expect, expect};
use prism_driver::Options;
use prism_ir::ir::Program;
use prism_sync::{SyncReport, Use};

/// Compiles `src` through the pipeline without barrier motion or optimisation: most tests
/// here are about where inference places barriers. [`run_with`] keeps the options as given.
fn run(src: &str, opts: &Options) -> (Program, SyncReport) {
    run_with(src, &Options { motion: false, optimize: false, ..opts.clone() })
}

fn run_with(src: &str, opts: &Options) -> (Program, SyncReport) {
    let (_, problems, synced) = prism_driver::compile_text("test.prism", src, opts);
    let synced = synced.unwrap_or_else(|| panic!("the program has errors: {:#?}", problems.diagnostics()));
    (synced.ir().clone(), synced.report().clone())
}

fn line(src: &str, s: prism_span::Span) -> usize {
    src[..s.start as usize].matches('\n').count() + 1
}

fn used(u: Use) -> &'static str {
    match u {
        Use::Read => "read",
        Use::Write => "written",
        Use::Atomic => "updated atomically",
    }
}

/// One line per inferred barrier and per unresolved edge.
fn summary(src: &str, ir: &Program, report: &SyncReport) -> String {
    let mut out = String::new();
    for b in &report.barriers {
        let f = &ir.functions[b.func.index()];
        let mem = match b.before_mem == b.mem {
            true => f.mems[b.mem.index()].name.clone(),
            false => format!("{}` and `{}", f.mems[b.before_mem.index()].name, f.mems[b.mem.index()].name),
        };
        out.push_str(&format!(
            "@{}: {} barrier before line {}: `{}` {} (line {}), {} (line {})\n",
            f.name,
            b.scope,
            line(src, b.at),
            mem,
            used(b.before_use),
            line(src, b.before),
            used(b.after_use),
            line(src, b.after)
        ));
    }
    for u in &report.unresolved {
        let f = &ir.functions[u.func.index()];
        out.push_str(&format!(
            "@{}: unresolved {} ordering: line {} and line {}\n",
            f.name,
            u.scope,
            line(src, u.before),
            line(src, u.after)
        ));
    }
    if out.is_empty() {
        out.push_str("no barriers\n");
    }
    out
}

fn check(src: &str, expect: Expect) {
    let src = src.strip_prefix('\n').unwrap_or(src);
    let (ir, report) = run(src, &Options::default());
    expect.assert_eq(&summary(src, &ir, &report));
}

/// The IR text around each inferred barrier: the barrier line and the next instruction.
fn barrier_context(ir: &Program) -> Vec<(String, String)> {
    let text = prism_ir::print(ir);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.contains(" inferred ") {
            out.push((l.trim().to_string(), lines.get(i + 1).map(|n| n.trim().to_string()).unwrap_or_default()));
        }
    }
    out
}

const SGEMM_SMEM: &str = include_str!("../../../tests/ui/accept/kernels/05_sgemm_3_smem_tiling.prism");
const FIG6: &str = include_str!("../../../tests/ui/accept/seeds/041_prism_fig6_mma_tf32_naive.prism");
const LAYERNORM: &str = include_str!("../../../tests/ui/accept/kernels/27_layernorm_rows_block.prism");

#[test]
fn sgemm_smem_tiling_explicit_barriers_cover_everything() {
    // The kernel writes its two `__syncthreads()` out; they are the barriers inference places.
    check(
        SGEMM_SMEM,
        expect![[r#"
            no barriers
        "#]],
    );
}

#[test]
fn sgemm_smem_tiling_without_explicit_barriers() {
    // Without them: a block barrier before the tile writes (the K loop's back edge: the reads
    // of the previous step) and one before the reads (after the writes). `Bs` is ordered by
    // the same two barriers.
    let src = SGEMM_SMEM.replace("__syncthreads()", "pass");
    check(
        &src,
        expect![[r#"
            @sgemm_smem: block[1] barrier before line 39: `As` read (line 58), written (line 39)
            @sgemm_smem: block[1] barrier before line 56: `As` written (line 39), read (line 58)
        "#]],
    );
}

#[test]
fn fig6_sync_points() {
    // docs/references.md S.1 item 8: the paper's sync points are at figure lines 40 (before the
    // A_smem writes, back edge of the K loop), 48 (B_smem, the same), 56 (before the claim of
    // C_smem) and 63 (before C_smem is read in the write-back loop). In this port those are
    // lines 90, 101, 112 and 120. The barrier at 90 also lies on every path to the B_smem
    // writes, so 101 needs none of its own; the write-back loop gets a block barrier inside,
    // before its partition of `C_blk` (the loop writes `C` at `row_c * N + col_c`, which the
    // ownership proof cannot show disjoint across iterations), and that barrier orders the
    // C_smem reads too. `simple_mma` reads `c` in all lanes before its lanes overwrite it: a
    // warp barrier.
    check(
        FIG6,
        expect![[r#"
            @simple_mma: thread[32] barrier before line 41: `c` read (line 31), written (line 41)
            @mmaTF32NaiveKernel: block[1] barrier before line 90: `A_smem` read (line 117), written (line 96)
            @mmaTF32NaiveKernel: block[1] barrier before line 112: `A_smem` written (line 96), read (line 117)
            @mmaTF32NaiveKernel: block[1] barrier before line 125: `C` written (line 125), written (line 125)
        "#]],
    );
}

#[test]
fn fig6_staging_loops_need_no_barrier_inside() {
    // `for j in range(4): partition(A_smem, f=lambda x: id() * 4 + j + x)`: each thread owns
    // elements 4t..4t+3, so the loop's back edge needs no barrier; the barrier before the loop
    // is outside it.
    let (ir, _) = run(FIG6, &Options::default());
    let ctx = barrier_context(&ir);
    assert!(ctx[1].1.starts_with("loop counter "), "{ctx:?}");
    assert_eq!(ctx[2].1, "scope claim #6 -> #10 {", "{ctx:?}");
}

#[test]
fn two_read_partitions_in_a_row_need_no_barrier() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def reads(src : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[32]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: t + i) as s_w:
                with group(thread[1]):
                    s_w[0] = src[g]
            a : float @ thread[1] = 0.0
            with partition(S, p=thread[1], f=lambda i: (t + 1) % 32 + i) as r1:
                with group(thread[1]):
                    a = r1[0]
            with partition(S, p=thread[1], f=lambda i: (t + 3) % 32 + i) as r2:
                with group(thread[1]):
                    mine[0] = a + r2[0]
"#,
        expect![[r#"
            @reads: block[1] barrier before line 13: `S` written (line 9), read (line 13)
        "#]],
    );
}

#[test]
fn a_thread_reading_its_own_element_needs_no_barrier() {
    // The write and the read both use element `t` of thread `t`.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def own(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[32]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: t + i) as s_t:
                with group(thread[1]):
                    s_t[0] = float(t)
            with group(thread[1]):
                mine[0] = S[t]
"#,
        expect![[r#"
            no barriers
        "#]],
    );
}

#[test]
fn threads_in_reverse_reading_their_own_elements_need_no_barrier() {
    // Thread `t` owns element `31 - t` (a negative coefficient, proved since 2026-12-02): no
    // barrier between its write and its read of it (lines 11 and 13). Its neighbour's,
    // `(32 - t) % 32`, needs one (before line 14), and so does reading in reverse what was
    // written in order (`63 - 2 t` against `2 t` and `2 t + 1`: thread `31 - t` wrote it).
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=256)
def reversed(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: 3 * g + i) as mine:
        with group(block[1]):
            S : shared(float[64]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: 31 - t + i) as s_t:
                with group(thread[1]):
                    s_t[0] = float(t)
            with group(thread[1]):
                mine[0] = S[31 - t]
            with group(thread[1]):
                mine[1] = S[(32 - t) % 32]
            with partition(S, p=thread[1], f=lambda i: 2 * t + i) as s_2:
                with group(thread[1]):
                    s_2[0] = 1.0
                    s_2[1] = 2.0
            with group(thread[1]):
                mine[2] = S[63 - 2 * t]
"#,
        expect![[r#"
            @reversed: block[1] barrier before line 14: `S` written (line 9), read (line 15)
            @reversed: block[1] barrier before line 16: `S` read (line 15), written (line 16)
            @reversed: block[1] barrier before line 20: `S` written (line 16), read (line 21)
        "#]],
    );
}

#[test]
fn warp_claimed_region_gets_a_warp_barrier() {
    // Warp 0 claims the array, writes it lane by lane and reads its neighbour's element: the
    // participants are one warp, so `__syncwarp()` inside the warp's branch.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[64], smem=128)
def warp_claim(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[32]) @ block[1]
            with claim(S, p=warp[1]) as w:
                match split(warp):
                    case 1:
                        lane : int @ thread[1] = id()
                        with partition(w, p=thread[1], f=lambda i: lane + i) as w_t:
                            with group(thread[1]):
                                w_t[0] = float(lane)
                        with partition(w, p=thread[1], f=lambda i: (lane + 1) % 32 + i) as r_t:
                            with group(thread[1]):
                                mine[0] = r_t[0]
"#,
        expect![[r#"
            @warp_claim: thread[32] barrier before line 15: `S` written (line 12), read (line 15)
        "#]],
    );
}

#[test]
fn warp_partition_orders_its_lanes_with_a_warp_barrier() {
    // Each warp gets its own 32 elements; a lane reading its neighbour's element only needs
    // the warp's lanes to synchronise.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[64], smem=256)
def per_warp(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[64]) @ block[1]
            w : int @ thread[32] = id()
            with partition(S, p=warp[1], f=lambda i: w * 32 + i) as s_w:
                with group(warp[1]):
                    lane : int @ thread[1] = id()
                    with partition(s_w, p=thread[1], f=lambda i: lane + i) as s_t:
                        with group(thread[1]):
                            s_t[0] = float(lane)
                    with group(thread[1]):
                        mine[0] = s_w[(lane + 1) % 32]
"#,
        expect![[r#"
            @per_warp: thread[32] barrier before line 15: `S` written (line 12), read (line 16)
        "#]],
    );
}

#[test]
fn loops_with_break_order_both_directions() {
    // Writes then reads in a `while` loop that may leave between them: a barrier before the
    // reads, and one before the writes for the reads of the previous iteration.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def rounds(src : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1], n : int @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[32]) @ block[1]
            t : int @ thread[1] = id()
            acc : float @ thread[1] = 0.0
            k : int @ block[1] = 0
            while k < n:
                with partition(S, p=thread[1], f=lambda i: (t + k) % 32 + i) as s_t:
                    with group(thread[1]):
                        s_t[0] = src[g]
                if k > 4:
                    break
                with group(thread[1]):
                    acc += S[t]
                k += 1
            with group(thread[1]):
                mine[0] = acc
"#,
        expect![[r#"
            @rounds: block[1] barrier before line 12: `S` written (line 12), written (line 12)
            @rounds: block[1] barrier before line 17: `S` written (line 12), read (line 18)
        "#]],
    );
}

#[test]
fn block_barrier_never_goes_inside_a_split_branch() {
    // The read is in warp 1's branch; a block barrier there would leave warp 0 out, so it goes
    // before the split.
    let src = r#"@prism("global")
@requires(grid[1], block[1], thread[64], smem=256)
def halves(src : ptr(const(float)) @ grid[1]):
    g : int @ thread[1] = id()
    with group(block[1]):
        S : shared(float[64]) @ block[1]
        t : int @ thread[1] = id()
        with partition(S, p=thread[1], f=lambda i: t + i) as s_t:
            with group(thread[1]):
                s_t[0] = src[g]
        x : float @ thread[1] = 0.0
        match split(warp):
            case 1:
                pass
            case 1:
                lane : int @ thread[1] = id()
                with group(thread[1]):
                    x = S[lane]
"#;
    let (ir, report) = run(src, &Options::default());
    expect![[r#"
        @halves: block[1] barrier before line 12: `S` written (line 8), read (line 18)
    "#]]
    .assert_eq(&summary(src, &ir, &report));
    assert_eq!(barrier_context(&ir)[0].1, "split thread[32] {");
}

#[test]
fn atomics_are_ordered_against_plain_accesses_but_not_each_other() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def hist(data : ptr(const(int)) @ grid[1], out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            H : shared(int[32]) @ block[1]
            t : int @ thread[1] = id()
            with partition(H, p=thread[1], f=lambda i: t + i) as h_t:
                with group(thread[1]):
                    h_t[0] = 0
            with group(thread[1]):
                for k in range(4):
                    atomic_add(H[data[g * 4 + k] % 32], 1)
            with group(thread[1]):
                mine[0] = H[(t + 1) % 32]
"#,
        expect![[r#"
            @hist: block[1] barrier before line 12: `H` written (line 9), updated atomically (line 14)
            @hist: block[1] barrier before line 15: `H` updated atomically (line 14), read (line 16)
        "#]],
    );
}

#[test]
fn global_memory_reused_across_the_grid_gets_a_grid_barrier() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def shift(out : ptr(float) @ grid[1], n : int @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as a:
        with group(thread[1]):
            a[0] = 1.0
    with partition(out, p=thread[1], f=lambda i: (g + 1) % n + i) as b:
        with group(thread[1]):
            b[0] = b[0] + 1.0
"#,
        expect![[r#"
            @shift: grid[1] barrier before line 8: `out` written (line 5), written (line 8)
        "#]],
    );
}

#[test]
fn the_same_index_function_twice_needs_no_barrier() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32])
def twice(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as a:
        with group(thread[1]):
            a[0] = 1.0
    with partition(out, p=thread[1], f=lambda i: g + i) as b:
        with group(thread[1]):
            b[0] = b[0] + 1.0
"#,
        expect![[r#"
            no barriers
        "#]],
    );
}

#[test]
fn staging_loops_owned_blocked_and_interleaved_but_not_unknown_strides() {
    // Blocked (`4t + j`) and interleaved (`t + 32j`, 32 threads per block) staging loops need
    // no barrier on their back edge; a stride the proof cannot see (`t * n`) does.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=1024)
@launch_bounds(32)
def stage(src : ptr(const(float)) @ grid[1], n : int @ grid[1]):
    g : int @ thread[1] = id()
    with group(block[1]):
        S : shared(float[128]) @ block[1]
        t : int @ thread[1] = id()
        for j in range(4):
            with partition(S, p=thread[1], f=lambda x: t * 4 + j + x) as blocked:
                with group(thread[1]):
                    blocked[0] = src[g]
        for j in range(4):
            with partition(S, p=thread[1], f=lambda x: t + 32 * j + x) as strided:
                with group(thread[1]):
                    strided[0] = src[g]
        for j in range(4):
            with partition(S, p=thread[1], f=lambda x: t * n + j + x) as unknown:
                with group(thread[1]):
                    unknown[0] = src[g]
"#,
        expect![[r#"
            @stage: block[1] barrier before line 13: `S` written (line 10), written (line 14)
            @stage: block[1] barrier before line 18: `S` written (line 18), written (line 18)
        "#]],
    );
}

#[test]
fn a_read_feeding_a_condition_is_ordered_after_the_write() {
    // docs/references.md U: a block-uniform value read from shared memory is uniform only if no
    // write races with it.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def flag(src : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[32]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: t + i) as s_t:
                with group(thread[1]):
                    s_t[0] = src[g]
            first : float @ block[1] = S[0]
            if first > 0.0:
                with group(thread[1]):
                    mine[0] = first
"#,
        expect![[r#"
            @flag: block[1] barrier before line 12: `S` written (line 9), read (line 12)
        "#]],
    );
}

#[test]
fn a_read_in_a_short_circuit_operand_is_synchronised_before_the_condition() {
    // `n > 0 and S[0] > 0.0` evaluates the load in a non-uniform `if`; the barrier goes before it.
    let src = r#"@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def guard(src : ptr(const(float)) @ grid[1], n : int @ grid[1]):
    g : int @ thread[1] = id()
    with group(block[1]):
        S : shared(float[32]) @ block[1]
        t : int @ thread[1] = id()
        with partition(S, p=thread[1], f=lambda i: t + i) as s_t:
            with group(thread[1]):
                s_t[0] = src[g]
        ok : bool @ block[1] = n > 0 and S[0] > 0.0
"#;
    let (ir, report) = run(src, &Options::default());
    assert_eq!(report.barriers.len(), 1);
    assert!(barrier_context(&ir)[0].1.starts_with("if.any"), "{:?}", barrier_context(&ir));
}

#[test]
fn callee_barriers_count_for_the_caller() {
    // `block_sum` ends with `__syncthreads()`, so two calls reusing its shared memory need
    // nothing between them.
    check(
        LAYERNORM,
        expect![[r#"
            no barriers
        "#]],
    );
    // Without its explicit barriers, the callee gets its own and the caller orders the two
    // calls: both use the same shared bytes.
    let src = LAYERNORM.replace("__syncthreads()", "pass");
    check(
        &src,
        expect![[r#"
            @block_sum: block[1] barrier before line 32: `warp_sums` written (line 25), written (line 32)
            @block_sum: block[1] barrier before line 39: `warp_sums` written (line 32), read (line 40)
            @layernorm_rows: block[1] barrier before line 64: `@block_sum.smem` written (line 58), written (line 64)
        "#]],
    );
}

#[test]
fn shared_arrays_reusing_the_same_bytes_are_one_memory() {
    // `A` and `B` live in sequential scopes, so the allocator gives them the same bytes: the
    // reads of `A` must finish before `B` is written.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def reuse(src : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            t : int @ thread[1] = id()
            acc : float @ thread[1] = 0.0
            if true:
                A : shared(float[32]) @ block[1]
                with partition(A, p=thread[1], f=lambda i: t + i) as a_t:
                    with group(thread[1]):
                        a_t[0] = src[g]
                with group(thread[1]):
                    acc = A[(t + 1) % 32]
            if true:
                B : shared(int[32]) @ block[1]
                with partition(B, p=thread[1], f=lambda i: t + i) as b_t:
                    with group(thread[1]):
                        b_t[0] = g
                with group(thread[1]):
                    mine[0] = acc + float(B[(t + 1) % 32])
"#,
        expect![[r#"
            @reuse: block[1] barrier before line 14: `A` written (line 11), read (line 15)
            @reuse: block[1] barrier before line 16: `A` and `B` read (line 15), written (line 18)
            @reuse: block[1] barrier before line 21: `B` written (line 18), read (line 22)
        "#]],
    );
}

#[test]
fn unsafe_code_that_no_barrier_can_order_is_reported() {
    // A store and a read of other threads' elements in one thread's unsafe code: no barrier
    // can sit between them (only part of a block would reach it), so the edge is reported.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def racy(out : ptr(float) @ grid[1]):
    with group(block[1]):
        S : shared(float[32]) @ block[1]
        with group(thread[1]):
            with unsafe:
                S[thread_idx()] = 1.0
                x : float = S[(thread_idx() + 1) % 32]
"#,
        expect![[r#"
            @racy: unresolved block[1] ordering: line 8 and line 9
        "#]],
    );
}

#[test]
fn skip_leaves_one_barrier_out_of_the_ir_but_in_the_report() {
    let src = SGEMM_SMEM.replace("__syncthreads()", "pass");
    let (all, full) = run(&src, &Options::default());
    let (ir, report) = run(&src, &Options { skip_barriers: vec![0], ..Options::default() });
    assert_eq!(report, full);
    let count = |p: &Program| barrier_context(p).len();
    assert_eq!(count(&all), 2);
    assert_eq!(count(&ir), 1);
    // The one left out is the first in the report: the barrier before the tile writes.
    assert_eq!(barrier_context(&ir)[0], barrier_context(&all)[1]);
}

#[test]
fn explain_sync_notes() {
    // What `prism check --explain-sync` prints: the barrier's place, the accesses it orders.
    let src = r#"@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
def rotate(src : ptr(const(float)) @ grid[1], out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            tile : shared(float[32]) @ block[1]
            t : int @ thread[1] = id()
            with partition(tile, p=thread[1], f=lambda i: t + i) as slot:
                with group(thread[1]):
                    slot[0] = src[g]
            with group(thread[1]):
                mine[0] = tile[(t + 1) % 32]
"#;
    let opts = Options { explain_sync: true, ..Options::default() };
    let (map, problems, synced) = prism_driver::compile_text("rotate.prism", src, &opts);
    assert!(synced.is_some());
    let diags = problems.diagnostics();
    expect![[r#"
        note[inferred-barrier]: block barrier inserted for `tile`
           ┌─ rotate.prism:12:13
           │
         9 │             with partition(tile, p=thread[1], f=lambda i: t + i) as slot:
           │             ------------------------------------------------------------- `tile` written here
           ·
        12 │             with group(thread[1]):
           │             ^^^^^^^^^^^^^^^^^^^^^^ `__syncthreads()` inserted before this
        13 │                 mine[0] = tile[(t + 1) % 32]
           │                           ------------------ read again here
           │
           = note: in `rotate`: every block[1] unit completes its changes to `tile` before any of its threads reads it

    "#]]
    .assert_eq(&prism_diag::render(&map, diags, prism_diag::Color::Never));
}

/// A tile staged from a read-only input in a loop: the back-edge barrier is split, its wait
/// moved into the staging scope past the global load (which then overlaps the barrier) to
/// just before the shared store, and the read-after-write barrier's halves around the
/// other scope.
#[test]
fn motion_moves_the_wait_past_loads_of_read_only_inputs() {
    let src = r#"
@prism("global")
@requires(grid[1], block[1], thread[1], smem=128)
def stage(x : ptr(const(float)), out : ptr(float), n : int):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 32 + i) as out_b:
        with group(block[1]):
            tile : shared(float[32]) @ block[1]
            t : int @ thread[1] = id()
            for k in range(0, n, 1):
                with partition(tile, p=thread[1], f=lambda i: t + i) as mine:
                    with group(thread[1]):
                        v : float = x[k * 32 + t]
                        mine[0] = v
                with partition(out_b, p=thread[1], f=lambda i: t + i) as o:
                    with group(thread[1]):
                        o[0] = o[0] + tile[31 - t]
"#;
    let (ir, report) = run_with(src, &Options::default());
    assert_eq!(report.motion, prism_sync::motion::MotionReport { split: 2, kept: 0 });
    let text = prism_ir::print(&ir);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let at = |p: &dyn Fn(&str) -> bool| lines.iter().position(|l| p(l)).unwrap_or_else(|| panic!("{text}"));
    let x_load = at(&|l| l.contains("= load %0["));
    let store = x_load + lines[x_load..].iter().position(|l| l.starts_with("store ")).expect("the tile store");
    let waits: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("wait block[1]")).collect();
    let arrives: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("arrive block[1]")).collect();
    assert_eq!((waits.len(), arrives.len()), (2, 2), "{text}");
    // The back edge: arrive before the load, wait after it and before the store.
    assert!(arrives[0] < x_load && x_load < waits[0] && waits[0] < store, "{text}");
    // No whole barrier is left.
    assert!(!text.contains("barrier block[1]"), "{text}");
}

/// Motion never enters a loop: with the accesses on both sides inside loops, the halves stay
/// between the loops (past a read of the read-only input there, which makes the split worth
/// its cost).
#[test]
fn motion_does_not_enter_loops() {
    let src = r#"
@prism("global")
@requires(grid[1], block[1], thread[1], smem=128)
def swap(x : ptr(const(int)), out : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 32 + i) as out_b:
        with group(block[1]):
            tile : shared(int[32]) @ block[1]
            t : int @ thread[1] = id()
            for k in range(0, 2, 1):
                with partition(tile, p=thread[1], f=lambda i: t + i) as mine:
                    with group(thread[1]):
                        mine[0] = t + k
            s : int @ thread[1] = x[t]
            for k in range(0, 2, 1):
                with partition(out_b, p=thread[1], f=lambda i: t + i) as o:
                    with group(thread[1]):
                        o[0] = tile[31 - t] + k + s
"#;
    let (ir, report) = run_with(src, &Options::default());
    let text = prism_ir::print(&ir);
    assert_eq!(report.motion.split, 1, "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap_or_else(|| panic!("{text}"));
    let loops: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("loop ")).collect();
    let latches: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("} latch {")).collect();
    let (arrive, wait) = (at("arrive block[1]"), at("wait block[1]"));
    assert!(latches[0] < arrive && arrive < wait && wait < loops[1], "{text}");
}

/// The ownership proof computes in the backends' arithmetic (issue 7, hole 2): an index
/// that wraps in its `int` does not prove anything, so the barrier stays. Each kernel would
/// lose its barrier to a proof over unbounded integers: `t * 2^30` gives threads 0 and 4 the
/// same element, a counter whose last step leaves `int` wraps and goes on, and a cast to
/// `int` drops the bits that told the threads apart.
#[test]
fn ownership_proofs_respect_wraparound() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[8], smem=64)
@launch_bounds(8)
def wrap_multiplier(out : ptr(int)):
    with group(block[1]):
        s : shared(int[16]) @ block[1]
        t : int @ thread[1] = id()
        for r in range(2):
            with partition(s, p=thread[1], f=lambda i: t * 1073741824 + i) as v:
                with group(thread[1]):
                    v[0] = v[0] + t

@prism("global")
@requires(grid[1], block[1], thread[8], smem=64)
@launch_bounds(8)
def wrap_counter(out : ptr(int)):
    with group(block[1]):
        s : shared(int[16]) @ block[1]
        t : int @ thread[1] = id()
        for j in range(2147483600, 2147483647, 100):
            with partition(s, p=thread[1], f=lambda i: t * 2 + (j - 2147483600) + i) as v:
                with group(thread[1]):
                    v[0] = v[0] + t

@prism("global")
@requires(grid[1], block[1], thread[8], smem=64)
@launch_bounds(8)
def narrowing_cast(out : ptr(int)):
    with group(block[1]):
        s : shared(int[16]) @ block[1]
        t : int @ thread[1] = id()
        wide : int64 @ thread[1] = int64(t) * 4294967296
        for r in range(2):
            with partition(s, p=thread[1], f=lambda i: int(wide) + i) as v:
                with group(thread[1]):
                    v[0] = v[0] + t
"#,
        expect![[r#"
            @wrap_multiplier: block[1] barrier before line 9: `s` written (line 9), written (line 9)
            @wrap_counter: block[1] barrier before line 21: `s` written (line 21), written (line 21)
            @narrowing_cast: block[1] barrier before line 34: `s` written (line 34), written (line 34)
        "#]],
    );
}

/// A proof that needs fewer blocks than CUDA allows records the limit, and launches beyond it
/// are refused: `b * 32 + t` (up to 1023 threads without `@launch_bounds`) stays inside an
/// `int` for every power-of-two grid up to 2^25 blocks.
#[test]
fn ownership_proofs_record_the_launch_limit_they_assume() {
    let src = r#"
@prism("global")
@requires(grid[1], block[1], thread[1], smem=128)
def rewrite(out : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * 32 + i) as out_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            for k in range(2):
                with partition(out_b, p=thread[1], f=lambda i: t + i) as o:
                    with group(thread[1]):
                        o[0] = o[0] + k
"#;
    let (ir, report) = run(src, &Options::default());
    assert!(report.barriers.is_empty(), "{}", prism_ir::print(&ir));
    assert_eq!(ir.functions[0].max_blocks, Some(1 << 25));
    assert!(prism_ir::ir::check_max_blocks("rewrite", ir.functions[0].max_blocks, 1 << 25).is_ok());
    let e = prism_ir::ir::check_max_blocks("rewrite", ir.functions[0].max_blocks, (1 << 25) + 1).unwrap_err();
    assert!(e.contains("at most 33554432 blocks"), "{e}");
}

/// Reading other units' elements through a partition, carried by a loop the whole block
/// runs (issue 7, hole 8): the tree reduction's barrier is inferred when forgotten, for a
/// constant index beyond the unit's block as for a variable one, and for a warp's partition
/// too; an access that stays in its unit's own elements needs nothing.
#[test]
fn loops_carrying_accesses_to_other_units_elements_get_barriers() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[256], smem=1024)
@launch_bounds(256)
def tree(out : ptr(float)):
    with group(block[1]):
        s : shared(float[256]) @ block[1]
        t : int @ thread[1] = id()
        with partition(s, p=thread[1], f=lambda i: t + i) as s_t:
            with group(thread[1]):
                s_t[0] = 1.0
            stride : int @ block[1] = 128
            while stride > 0:
                with group(thread[1]):
                    if t < stride:
                        s_t[0] += s_t[stride]
                stride /= 2

@prism("global")
@requires(grid[1], block[1], thread[128], smem=1024)
@launch_bounds(128)
def neighbour(out : ptr(float)):
    with group(block[1]):
        s : shared(float[256]) @ block[1]
        t : int @ thread[1] = id()
        with partition(s, p=thread[1], f=lambda i: 2 * t + i) as s_t:
            for k in range(4):
                with group(thread[1]):
                    s_t[0] = s_t[2] + 1.0

@prism("global")
@requires(grid[1], block[1], thread[128], smem=1024)
@launch_bounds(128)
def warps(out : ptr(float)):
    with group(block[1]):
        s : shared(float[256]) @ block[1]
        w : int @ thread[32] = id()
        with partition(s, p=thread[32], f=lambda i: w * 64 + i) as s_w:
            for k in range(4):
                with group(thread[32]):
                    l : int @ thread[1] = id()
                    with partition(s_w, p=thread[1], f=lambda i: l + i) as s_l:
                        with group(thread[1]):
                            s_l[0] = 2.0
                    with group(thread[1]):
                        v : float = s_w[64 + l]

@prism("global")
@requires(grid[1], block[1], thread[128], smem=1024)
@launch_bounds(128)
def own_only(out : ptr(float)):
    with group(block[1]):
        s : shared(float[256]) @ block[1]
        t : int @ thread[1] = id()
        with partition(s, p=thread[1], f=lambda i: 2 * t + i) as s_t:
            for k in range(4):
                with group(thread[1]):
                    s_t[1] = s_t[0] + 1.0
"#,
        expect![[r#"
            @tree: block[1] barrier before line 13: `s` written (line 15), read (line 15)
            @neighbour: block[1] barrier before line 27: `s` written (line 28), read (line 28)
            @warps: block[1] barrier before line 39: `s` written (line 41), written (line 41)
        "#]],
    );
}

/// A thread stores its block of four elements with one vector store, then reads four
/// elements starting at `4t + OFFSET` with one vector load.
fn vector_program(offset: u32) -> String {
    format!(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=1024)
def vec(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: 4 * g + i) as mine:
        with group(block[1]):
            S : shared(float[256]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: 4 * t + i) as s_t:
                with group(thread[1]):
                    v : float[4] @ thread[1]
                    v[0] = float(t)
                    store_vec(s_t[0], v[0], 4)
            with group(thread[1]):
                w : float[4] @ thread[1]
                load_vec(w[0], S[4 * t + {offset}], 4)
                store_vec(mine[0], w[0], 4)
"#
    )
}

/// Thread `t` writes the 8 elements of its chunk of a padded tile (rows of two chunks of 8,
/// each row `row` elements apart) and reads element `offset` from the chunk's start.
fn padded_program(row: u32, offset: u32) -> String {
    format!(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=2048)
def pad(out : ptr(float) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            S : shared(float[512]) @ block[1]
            t : int @ thread[1] = id()
            with partition(S, p=thread[1], f=lambda i: {row} * (t / 2) + 8 * (t % 2) + i) as s_t:
                with group(thread[1]):
                    for j in range(8):
                        s_t[j] = float(t + j)
            with group(thread[1]):
                mine[0] = S[{row} * (t / 2) + 8 * (t % 2) + {offset}]
"#
    )
}

#[test]
fn a_padded_tile_read_inside_the_threads_chunk_needs_no_barrier() {
    // Rows of 24 hold two chunks of 8: thread t's chunk is [P(t), P(t) + 8), and P grows by
    // at least 8 per thread.
    check(
        &padded_program(24, 7),
        expect![[r#"
            no barriers
        "#]],
    );
}

#[test]
fn a_padded_tile_read_past_the_threads_chunk_gets_a_barrier() {
    // Element 8 of an even thread's chunk is the first of thread t + 1's.
    check(
        &padded_program(24, 8),
        expect![[r#"
        @pad: block[1] barrier before line 13: `S` written (line 9), read (line 14)
    "#]],
    );
}

#[test]
fn overlapping_padded_rows_get_a_barrier() {
    // Rows 12 apart cannot hold two chunks of 8: thread 2's chunk starts inside thread 1's.
    check(
        &padded_program(12, 0),
        expect![[r#"
        @pad: block[1] barrier before line 13: `S` written (line 9), read (line 14)
    "#]],
    );
}

#[test]
fn a_vector_load_of_the_threads_own_block_needs_no_barrier() {
    check(
        &vector_program(0),
        expect![[r#"
            no barriers
        "#]],
    );
}

#[test]
fn a_vector_load_reaching_the_next_threads_block_gets_a_barrier() {
    // Elements 4t + 2 .. 4t + 5: the last two are thread t + 1's. The first element alone
    // lies in the thread's own block, so a proof that forgot the width would see none.
    check(
        &vector_program(2),
        expect![[r#"
            @vec: block[1] barrier before line 14: `S` written (line 9), read (line 16)
        "#]],
    );
}

#[test]
fn vector_stores_in_a_loop_over_the_threads_block_need_no_barrier() {
    // Each thread owns eight elements and stores them four at a time, twice per pass of a
    // loop over rows: 4 + 3 < 8, so no iteration of one thread meets another thread's.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=2048)
def rows(x : ptr(const(float)) @ grid[1]):
    with group(block[1]):
        S : shared(float[256]) @ block[1]
        t : int @ thread[1] = id()
        for r in range(3):
            with partition(S, p=thread[1], f=lambda i: 8 * t + i) as s_t:
                with group(thread[1]):
                    v : float[4] @ thread[1]
                    load_vec(v[0], x[8 * t + r], 4)
                    for k in range(2):
                        store_vec(s_t[4 * k], v[0], 4)
"#,
        expect![[r#"
            no barriers
        "#]],
    );
}

#[test]
fn a_vector_access_through_a_partition_past_the_units_block_is_ordered_across_passes() {
    // `s_t[2]` four wide reaches `4t + 5`, thread t + 1's element: cross-unit, and carried
    // by the block's loop, so the next pass's store waits for this pass's loads. Its first
    // element alone (`4t + 2`) lies inside the thread's block.
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=1024)
def cross(out : ptr(float) @ grid[1]):
    with group(block[1]):
        S : shared(float[132]) @ block[1]
        t : int @ thread[1] = id()
        with partition(S, p=thread[1], f=lambda i: 4 * t + i) as s_t:
            for r in range(3):
                with group(thread[1]):
                    w : float[4] @ thread[1]
                    load_vec(w[0], s_t[2], 4)
                    store_vec(s_t[0], w[0], 4)
"#,
        expect![[r#"
            @cross: block[1] barrier before line 9: `S` written (line 12), read (line 11)
        "#]],
    );
}

/// A padded tile is `a·(t / k) + b·(t % k)` and nothing else of the thread's id (adversarial
/// review B, hole 1): with a second quotient, `5·(t / 2) + 2·(t % 2) − 2·(t / 4)`, the
/// position is injective but not monotone by the chunk of 2 (`P(3) + 1 = P(4)`), and the
/// read of `P(t) + 1` is thread t + 1's element. The tile alone keeps its proof.
#[test]
fn a_second_quotient_of_the_thread_id_spoils_a_padded_tile() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=4096)
@launch_bounds(64)
def two_quots(out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            s : shared(int[512]) @ block[1]
            t : int @ thread[1] = id()
            with partition(s, p=thread[1], f=lambda i: 5 * (t / 2) + 2 * (t % 2) - 2 * (t / 4) + i) as z:
                with group(thread[1]):
                    z[0] = t
            with group(thread[1]):
                mine[0] = s[5 * (t / 2) + 2 * (t % 2) - 2 * (t / 4) + 1]

@prism("global")
@requires(grid[1], block[1], thread[32], smem=4096)
@launch_bounds(64)
def one_quot(out : ptr(int) @ grid[1]):
    g : int @ thread[1] = id()
    with partition(out, p=thread[1], f=lambda i: g + i) as mine:
        with group(block[1]):
            s : shared(int[512]) @ block[1]
            t : int @ thread[1] = id()
            with partition(s, p=thread[1], f=lambda i: 5 * (t / 2) + 2 * (t % 2) + i) as z:
                with group(thread[1]):
                    z[0] = t
            with group(thread[1]):
                mine[0] = s[5 * (t / 2) + 2 * (t % 2) + 1]
"#,
        expect![[r#"
            @two_quots: block[1] barrier before line 13: `s` written (line 10), read (line 14)
        "#]],
    );
}

/// Padded blocks at a stride span `W·n + p·⌊(n − 1)/k⌋` only when the unit's ids start at 0
/// (adversarial review B, hole 2): with the grid's thread index `g = 64·b + t`, block 1's
/// ids start at 64 and `g + g / 5` spans 77 there, so strides of 76 overlap (thread 63's
/// first element is thread 0's second). With the block's own index they span 76 and need no
/// barrier.
#[test]
fn padded_strides_over_ids_of_a_broader_code_take_the_worst_window() {
    check(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[64], smem=2048)
@launch_bounds(64)
def grid_ids(out : ptr(int)):
    g : int @ thread[1] = id()
    b : int @ block[1] = id()
    with group(block[1]):
        sh : shared(int[256]) @ block[1]
        with partition(sh, p=thread[1], f=lambda i: 6 * (g / 5) + (g % 5) - 76 * b + i) as a:
            with group(thread[1]):
                a[0] = 1
        with partition(sh, p=thread[1], f=lambda i: 6 * (g / 5) + (g % 5) - 76 * b + 76 + i) as c:
            with group(thread[1]):
                c[0] = 2

@prism("global")
@requires(grid[1], block[1], thread[64], smem=2048)
@launch_bounds(64)
def block_ids(out : ptr(int)):
    with group(block[1]):
        t : int @ thread[1] = id()
        sh : shared(int[256]) @ block[1]
        with partition(sh, p=thread[1], f=lambda i: 6 * (t / 5) + (t % 5) + i) as a:
            with group(thread[1]):
                a[0] = 1
        with partition(sh, p=thread[1], f=lambda i: 6 * (t / 5) + (t % 5) + 76 + i) as c:
            with group(thread[1]):
                c[0] = 2
"#,
        expect![[r#"
            @grid_ids: block[1] barrier before line 12: `sh` written (line 9), written (line 12)
        "#]],
    );
}

/// Motion counts a callee's shared footprint as written shared memory (adversarial review
/// B, hole 5): the kernel's only shared writes are `scratch`'s, to its own array, and the
/// kernel then reads an array over the same bytes. The barrier inferred between the call and
/// that read is split, and its wait must stay before the read.
#[test]
fn motion_keeps_the_wait_before_reads_of_bytes_a_callee_wrote() {
    let src = r#"
@prism("device")
@requires(block[1], thread[32], smem=512)
def scratch(v : int @ thread[1]) -> int @ thread[1]:
    sc : shared(int[128]) @ block[1]
    t : int @ thread[1] = id()
    with partition(sc, p=thread[1], f=lambda i: t + i) as m:
        with group(thread[1]):
            m[0] = v
    return v + 1

@prism("global")
@requires(grid[1], block[1], thread[32], smem=1024)
@launch_bounds(128)
def reuse(x : ptr(const(int)), out : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * block_dim() + i) as ob:
        with group(block[1]):
            t : int @ thread[1] = id()
            u : int @ block[1] = x[b]
            acc : int @ thread[1] = scratch(x[t] + 1000)
            if u > -100000:
                a : shared(int[128]) @ block[1]
                with group(thread[1]):
                    acc = acc + 10000 * a[(t + 64) % 128]
            with partition(ob, p=thread[1], f=lambda i: t + i) as o:
                with group(thread[1]):
                    o[0] = acc
"#;
    let (ir, report) = run_with(src, &Options::default());
    let text = prism_ir::print(&ir);
    assert_eq!(report.motion.split, 1, "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let at = |p: &dyn Fn(&str) -> bool| lines.iter().position(|l| p(l)).unwrap_or_else(|| panic!("{text}"));
    let (call, read) = (at(&|l| l.contains("call @scratch")), at(&|l| l.contains("= load %15[")));
    let (arrive, wait) = (at(&|l| l.starts_with("arrive block[1]")), at(&|l| l.starts_with("wait block[1]")));
    assert!(call < arrive && arrive < wait && wait < read, "{text}");
}

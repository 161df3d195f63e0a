//! What inference did and could not do, as diagnostics.
//!
//! [`notes`]: each inserted barrier becomes a note (`inferred-barrier`, printed by
//! `prism check --explain-sync`) pointing at the instruction the barrier goes before, with
//! the two accesses it orders as secondary labels.
//!
//! [`problems`]: each ordering no barrier could provide is `unplaceable-barrier`, always
//! reported: an error when both accesses are safe code (the program would race, and safe
//! code is promised not to), a warning when one is in unsafe code (which is trusted to order
//! its own accesses, and the simulator reports the race if it happens).
//!
//! Labels on multi-line statements (a loop, a scope) are cut to their first line, which
//! names the construct.

use crate::{SyncReport, Use, describe_scope};
use prism_diag::Diagnostic;
use prism_ir::ir::Program;
use prism_span::{SourceMap, Span};
use prism_types::perspective::{Level, Persp};

/// The notes describing the barriers of `report`, an inference over `ir` whose spans lie
/// in `map`.
pub fn notes(ir: &Program, report: &SyncReport, map: &SourceMap) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for b in &report.barriers {
        let f = &ir.functions[b.func.index()];
        let mem = mem_name(&f.mems[b.mem.index()].name);
        let (before, after) = (first_line(map, b.before), first_line(map, b.after));
        let mut d = Diagnostic::note(
            "inferred-barrier",
            format!("{} barrier inserted for {mem}", describe_scope(b.scope)),
            first_line(map, b.at),
        )
        .with_label(format!("{} inserted before this", primitive(b.scope)));
        d = if before == after {
            d.with_secondary(before, format!("{mem} {} here, and again on a later iteration", verb(b.after_use)))
        } else if b.before_mem == b.mem {
            d.with_secondary(before, format!("{mem} {} here", verb(b.before_use)))
                .with_secondary(after, format!("{} again here", verb(b.after_use)))
        } else {
            // Different arrays may occupy the same bytes: the allocator reuses shared memory.
            let other = mem_name(&f.mems[b.before_mem.index()].name);
            d.with_secondary(before, format!("{other} {} here", verb(b.before_use)))
                .with_secondary(after, format!("{mem}, in the same shared memory, {} here", verb(b.after_use)))
        };
        let unit = match (b.scope.level, b.scope.n) {
            (Level::Grid, _) => "the grid".to_string(),
            _ => format!("every {} unit", b.scope),
        };
        let mem = if b.before_mem == b.mem { mem } else { "the shared memory".to_string() };
        let why = match (b.before_use, b.after_use) {
            (Use::Read, _) => format!("{unit} finishes reading {mem} before any of its threads changes it"),
            (_, Use::Read) => format!("{unit} completes its changes to {mem} before any of its threads reads it"),
            _ => format!("the changes {unit} makes to {mem} are ordered"),
        };
        out.push(d.with_note(format!("in `{}`: {why}", f.name)));
    }
    out
}

/// The errors and warnings of `report`: orderings no barrier could provide.
pub fn problems(ir: &Program, report: &SyncReport, map: &SourceMap) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for u in &report.unresolved {
        let f = &ir.functions[u.func.index()];
        let mem = match u.mem {
            Some(m) => mem_name(&f.mems[m.index()].name),
            None => "a callee's shared memory".to_string(),
        };
        let message = format!("{mem} needs a {} barrier here, but none can be placed", describe_scope(u.scope));
        let at = first_line(map, u.after);
        let d = if u.in_unsafe {
            Diagnostic::warning("unplaceable-barrier", message, at)
        } else {
            Diagnostic::error("unplaceable-barrier", message, at)
        };
        out.push(
            d.with_label("this access may conflict with an earlier one by another thread")
                .with_secondary(first_line(map, u.before), "the earlier access")
                .with_note(if grid_wide(u.scope) {
                    format!(
                        "in `{}`: a barrier over {} units runs as a grid-wide barrier, which every block must reach the same number of times, and no place between the two accesses is reached by every block (a `split` case, a branch, a loop or a function entered below `grid[1]` lies around them)",
                        f.name, u.scope
                    )
                } else {
                    format!(
                        "in `{}`: every place between the two accesses is reached by only part of each {} unit (inside a narrower `group`, a `split` case, a branch only some threads take, or unsafe code), so no barrier there can order them",
                        f.name, u.scope
                    )
                })
                .with_help(help(u.scope)),
        );
    }
    split_conflicts(ir, report, map, &mut out);
    branch_conflicts(ir, report, map, &mut out);
    reallocations(ir, report, map, &mut out);
    for a in &report.async_issues {
        let f = &ir.functions[a.func.index()];
        let mem = mem_name(&f.mems[a.mem.index()].name);
        let d = match a.fault {
            crate::AsyncFault::Overlap => Diagnostic::error(
                "async-overlap",
                format!("asynchronous copies into {mem} may write the same elements from different threads"),
                first_line(map, a.at),
            )
            .with_label("this copy's destination")
            .with_secondary(first_line(map, a.other), "may overlap this one's, issued by another thread")
            .with_note(format!(
                "in `{}`: the copies of an `async` scope are all in flight until the scope ends, so nothing can order two that write one element; the destinations must be provably disjoint (each thread a block of elements, `W * id() + r` with `r` in `[0, W)`; interleaved, `id() * W + g * k`; or a block per stride, `W * id() + G * k + r` with `G` at least `W` times the threads, also for blocks in padded rows, `(id() / k) * a + (id() % k) * W + G * k2 + r` with `G` at least their span)",
                f.name
            ))
            .with_help("index each thread's destination by its `id()` so that the copies tile the memory, or issue the copies from one thread"),
            crate::AsyncFault::OverlapOneThread => Diagnostic::error(
                "async-overlap",
                format!("asynchronous copies into {mem} may write the same elements from one thread"),
                first_line(map, a.at),
            )
            .with_label("this copy's destination")
            .with_secondary(first_line(map, a.other), "may overlap this one's, in flight at the same time in the same thread")
            .with_note(format!(
                "in `{}`: the copies of an `async` scope are all in flight until the scope ends, every iteration of a loop inside it included, and the hardware does not order two copies of one thread that no wait separates; so the bytes would be whichever copy landed last. A thread's destinations must be provably disjoint: the same index terms plus rests `r + k * i` over loop counters that never come within a copy's width of each other (as `4 * id() + 16 * q` with 16-byte copies)",
                f.name
            ))
            .with_help("give each copy its own elements, or end the `async` scope between the two copies so the first has landed"),
            crate::AsyncFault::OutsideSlot => {
                let d = Diagnostic::error(
                    "async-overlap",
                    format!("an asynchronous copy into {mem} may leave its slot, where copies of other tiles may be in flight"),
                    first_line(map, a.at),
                )
                .with_label("this copy may reach past the slot");
                // A copy issued in several iterations of a loop is its own other copy.
                let d = if a.other == a.at {
                    d
                } else {
                    d.with_secondary(first_line(map, a.other), "another copy in flight in the same fill")
                };
                d.with_note(format!(
                    "in `{}`: a pipeline's fill has no wait of its own, so the copies issued for the tiles before may still be in flight, each in its own slot, and the copies of one tile are proved apart from each other only; so when a thread issues more than one copy in a fill (two copies, or one in a loop), or several threads of a warp-specialised producer issue copies, each must provably stay inside the fill's slot: its index through the slot, over every value it can take, from 0 to the slot's size less the copy's width",
                    f.name
                ))
                .with_help("keep every copy inside the slot (split a box that reaches past it), or give the ring larger slots")
            }
            crate::AsyncFault::SourceWritten => Diagnostic::error(
                "async-source-write",
                format!("{mem} is written while an asynchronous copy may still read it"),
                first_line(map, a.at),
            )
            .with_label("written here, inside the `async` scope")
            .with_secondary(first_line(map, a.other), "this copy reads it, at any time until the scope ends")
            .with_note(format!(
                "in `{}`: the hardware may read a copy's source at any moment until the wait at the end of the `async` scope; no barrier inside the scope can order the write after it",
                f.name
            ))
            .with_help("write the source after the `async` scope ends, or copy from a different buffer"),
            crate::AsyncFault::WgmmaUnwaited => Diagnostic::error(
                "wgmma-unwaited",
                format!("this wgmma reads {mem} until a wait completes its committed group, and none follows it on every path"),
                first_line(map, a.at),
            )
            .with_label("the tensor cores read its tiles asynchronously")
            .with_note(format!(
                "in `{}`: synchronisation inference orders the tiles' next writes after the first wait that completes the wgmma: a `wgmma_wait(0)` after a `wgmma_commit_group()` that follows the wgmma, in its own block or after the loops around it, or a `wgmma_wait(n)` in its own block after `n` more commits; a wgmma no commit closed is not waited for, a wait after a branch or a scope does not count, nor does one that a `return`, `break` or `continue` may skip",
                f.name
            ))
            .with_help("commit the group and `wgmma_wait(0)` in the same block as the wgmma or after its loop, before the tiles are written again"),
            crate::AsyncFault::WgmmaLateUnwaited => Diagnostic::error(
                "wgmma-unwaited",
                format!("this wgmma reads {mem} through a late stage, and may still be in flight when its slot is released"),
                first_line(map, a.at),
            )
            .with_label("the tensor cores read its tiles asynchronously")
            .with_note(format!(
                "in `{}`: a case whose stages say `late=True` releases tile t's slot at the end of tile t + 1's iteration, so on every path through that iteration a `wgmma_wait(n)` must follow at least `n` commits made in it (which leaves only groups of tile t + 1 in flight), and each wgmma's group must be committed in its own iteration",
                f.name
            ))
            .with_help("end the case's body with `wgmma_commit_group()` then `wgmma_wait(1)`, outside any branch or loop"),
            crate::AsyncFault::WgmmaTileWritten => Diagnostic::error(
                "wgmma-unwaited",
                format!("{mem} is written while a wgmma may still read it"),
                first_line(map, a.at),
            )
            .with_label("written here, before the `wgmma_wait(0)` that completes the wgmma")
            .with_secondary(first_line(map, a.other), "this wgmma reads it until then")
            .with_note(format!(
                "in `{}`: `wgmma.mma_async` reads its shared-memory tiles at any moment until its group is waited for; no barrier can order a write after that",
                f.name
            ))
            .with_help("wait for the wgmma (`wgmma_commit_group()`, `wgmma_wait(0)`) before writing its tiles"),
            crate::AsyncFault::WgmmaAccumulatorUsed => Diagnostic::error(
                "wgmma-unwaited",
                format!("{mem} is used while a wgmma may still write it"),
                first_line(map, a.at),
            )
            .with_label("used here, before the `wgmma_wait(0)` that completes the wgmma")
            .with_secondary(first_line(map, a.other), "this wgmma writes its accumulators until then")
            .with_note(format!(
                "in `{}`: `wgmma.mma_async` writes its accumulators at any moment until its group is waited for, so a read may see the old value or the new one and a write may be lost; only a wgmma of the same shape may accumulate into them meanwhile",
                f.name
            ))
            .with_help("wait for the wgmma (`wgmma_commit_group()`, `wgmma_wait(0)`) before reading or writing its accumulators"),
            crate::AsyncFault::WgmmaUnfenced => Diagnostic::error(
                "wgmma-unfenced",
                format!("no `wgmma_fence()` comes before this wgmma on every path, so it may read {mem} before the thread's own writes to it"),
                first_line(map, a.at),
            )
            .with_label("the tensor cores read and write its accumulators")
            .with_note(format!(
                "in `{}`: PTX requires a `wgmma.fence` before the first wgmma and between any other access to its accumulator registers (their declaration zeroes them) and a wgmma that uses them; only wgmmas of the same shape are ordered among themselves",
                f.name
            ))
            .with_help("call `wgmma_fence()` before the wgmma, in its block or before the loops around it, after the accumulators were last touched"),
            crate::AsyncFault::WgmmaTouchedBeforeFence => Diagnostic::error(
                "wgmma-unfenced",
                format!("{mem} is used after the last `wgmma_fence()` before a wgmma that uses it"),
                first_line(map, a.at),
            )
            .with_label("used here, with no `wgmma_fence()` after it before the wgmma")
            .with_secondary(first_line(map, a.other), "this wgmma reads and writes it")
            .with_note(format!(
                "in `{}`: PTX requires a `wgmma.fence` between any access to a wgmma's accumulator registers and the wgmma; in a loop, the accesses of later iterations come before the next issue of the wgmma too",
                f.name
            ))
            .with_help("call `wgmma_fence()` after the last use of the accumulators and before the wgmma"),
        };
        out.push(d);
    }
    out
}

/// The errors for branches of a split that conflict.
fn split_conflicts(ir: &Program, report: &SyncReport, map: &SourceMap, out: &mut Vec<Diagnostic>) {
    for c in &report.split_conflicts {
        let f = &ir.functions[c.func.index()];
        let mem = match c.mem {
            Some(m) => mem_name(&f.mems[m.index()].name),
            None => "a callee's shared memory".to_string(),
        };
        out.push(
            Diagnostic::error(
                "split-conflict",
                format!("two branches of one `split` touch {mem}, and one of them changes it"),
                first_line(map, c.second),
            )
            .with_label("this branch touches it here")
            .with_secondary(first_line(map, c.first), "while another branch touches it here")
            .with_note(format!(
                "in `{}`: the branches of a `split` run at the same time, so no barrier can order their accesses",
                f.name
            ))
            .with_help(
                "give each branch its own memory (partition it before the split), or move one access after the split",
            ),
        );
    }
}

/// The errors for accesses that different units may reach at the same time on paths that
/// never meet.
fn branch_conflicts(ir: &Program, report: &SyncReport, map: &SourceMap, out: &mut Vec<Diagnostic>) {
    for c in &report.branch_conflicts {
        let f = &ir.functions[c.func.index()];
        let mem = match c.mem {
            Some(m) => mem_name(&f.mems[m.index()].name),
            None => "a callee's shared memory".to_string(),
        };
        let unit = match (c.scope.level, c.scope.n) {
            (Level::Grid, _) => "the grid".to_string(),
            (Level::Block, 1) => "one block".to_string(),
            (Level::Thread, 32) => "one warp".to_string(),
            _ => format!("one {} unit", c.scope),
        };
        out.push(
            Diagnostic::error(
                "branch-conflict",
                format!(
                    "{mem} is touched here and on another path that other {} units of {unit} may take at the same time, and one of them changes it",
                    c.code
                ),
                first_line(map, c.second),
            )
            .with_label("this access")
            .with_secondary(first_line(map, c.first), "may run at the same time as this one, in another unit")
            .with_note(format!(
                "in `{}`: the code here runs at {}, so its conditions (and early exits) are uniform over each {} unit only; different units of {unit} may take different paths at once, and no barrier can order accesses on paths that never meet",
                f.name, c.code, c.code
            ))
            .with_help(format!(
                "decide the branch in code at {} or broader, give each unit its own memory (partition it), or move one access out of the branch",
                c.scope
            )),
        );
    }
}

/// Whether a barrier over `scope` units runs as a grid-wide barrier.
fn grid_wide(scope: Persp) -> bool {
    scope.level == Level::Grid || (scope.level == Level::Block && scope.n > 1)
}

/// How to restructure code whose ordering needs a barrier over `scope` units.
fn help(scope: Persp) -> String {
    match scope.level {
        Level::Block if scope.n > 1 => format!(
            "barriers over groups of blocks ({scope}) exist only where every block of the grid runs them: move the accesses out of the `split(block)`, or order them with a grid-wide phase"
        ),
        Level::Grid => "a grid-wide barrier must be reached by every thread: move the accesses out of the narrower code".into(),
        _ => "end the narrower code (`group`, `split` case or branch) between the two accesses so that the barrier can stand where the whole unit runs, or make both accesses atomic".into(),
    }
}

/// How the memory is named in messages: `` `A_smem` ``, or the shared memory of a callee.
fn mem_name(name: &str) -> String {
    match name.strip_prefix('@').and_then(|n| n.strip_suffix(".smem")) {
        Some(callee) => format!("the shared memory of `{callee}`"),
        None => format!("`{name}`"),
    }
}

/// The CUDA spelling of a barrier over `scope` units, for labels.
fn primitive(scope: Persp) -> String {
    match (scope.level, scope.n) {
        (Level::Block, 1) => "`__syncthreads()`".into(),
        (Level::Thread, 32) => "`__syncwarp()`".into(),
        (Level::Grid, _) => "a grid-wide barrier".into(),
        _ => format!("a barrier over each {scope} unit"),
    }
}

fn verb(u: Use) -> &'static str {
    match u {
        Use::Read => "read",
        Use::Write => "written",
        Use::Atomic => "updated atomically",
    }
}

/// `span` cut at the end of its first line.
fn first_line(map: &SourceMap, span: Span) -> Span {
    let text = map.file(span.file).text();
    let (start, end) = (span.start as usize, (span.end as usize).min(text.len()));
    match text.get(start..end).and_then(|s| s.find('\n')) {
        Some(n) => Span::new(span.file, span.start, span.start + n as u32),
        None => span,
    }
}

/// `register-reallocation`: `setmaxnreg` where PTX leaves the result undefined.
fn reallocations(ir: &Program, report: &SyncReport, map: &SourceMap, out: &mut Vec<Diagnostic>) {
    for r in &report.realloc_issues {
        let f = &ir.functions[r.func.index()];
        let at = first_line(map, r.at);
        let d = match r.fault {
            crate::ReallocFault::InLoop => Diagnostic::error(
                "register-reallocation",
                "a register reallocation inside a loop: it would run again on every iteration".to_string(),
                at,
            )
            .with_label("`setmaxnreg` here (or a call that reaches one)")
            .with_help("reallocate once, before the loop (a warp-specialised pipeline's case may start with it)"),
            crate::ReallocFault::Twice => Diagnostic::error(
                "register-reallocation",
                "a second register reallocation on one path: PTX requires the warpgroup's warps to synchronise between two `setmaxnreg`, which Prism cannot express".to_string(),
                at,
            )
            .with_label("the second reallocation (or a call that reaches one)")
            .with_help("reallocate once per warpgroup role: one `setmaxnreg_inc` or `setmaxnreg_dec` on every path"),
            crate::ReallocFault::Bounds { min_blocks } => {
                let (msg, help) = match min_blocks {
                    None => (
                        format!("`{}` reallocates registers (`setmaxnreg`) without `@launch_bounds(n)`: without a register cap at entry nvcc ignores `setmaxnreg`", f.name),
                        "write `@launch_bounds(n)` with the block's thread count".to_string(),
                    ),
                    Some(m) => (
                        format!("`{}` reallocates registers (`setmaxnreg`) with {m} blocks per multiprocessor: a reallocating kernel needs the register file to itself", f.name),
                        "write `@launch_bounds(n)` or `@launch_bounds(n, 1)`".to_string(),
                    ),
                };
                Diagnostic::error("register-reallocation", msg, at).with_label("this kernel").with_help(help)
            }
            crate::ReallocFault::Direction { regs, cap, inc } => {
                let (what, why) = if inc {
                    ("setmaxnreg_inc", format!("below the {cap} registers each thread starts with (the smaller of the launch bound's cap and the kernel's largest `setmaxnreg_inc`): it would lower the count"))
                } else {
                    ("setmaxnreg_dec", format!("above the {cap} registers each thread starts with (the smaller of the launch bound's cap and the kernel's largest `setmaxnreg_inc`): it cannot lower the count"))
                };
                Diagnostic::error("register-reallocation", format!("`{what}({regs})` asks for {regs} registers, {why}"), at)
                    .with_label(format!("`{what}({regs})`"))
                    .with_help(if inc { "use `setmaxnreg_dec` to give registers back" } else { "use `setmaxnreg_inc` to take more registers" })
            }
        };
        let d = match (r.fault, r.other) {
            (crate::ReallocFault::InLoop, Some(o)) => d.with_secondary(first_line(map, o), "the loop"),
            (crate::ReallocFault::Twice, Some(o)) => {
                d.with_secondary(first_line(map, o), "the first reallocation on the path")
            }
            (crate::ReallocFault::Bounds { .. }, Some(o)) => {
                d.with_secondary(first_line(map, o), "a reallocation (or a call that reaches one)")
            }
            _ => d,
        };
        out.push(d.with_note(format!("in `{}`", f.name)));
    }
}

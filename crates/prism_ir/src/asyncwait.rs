//! Where an `async` scope's copies are waited for.
//!
//! The language promises that the copies of `with async(x) as y:` are complete before `x`
//! is used again (`docs/language.md` §5). Lowering ends each scope of `cp_async` copies with
//! `asynccommit` (the scope's copies are one commit group) and `asyncwait 0` (wait for
//! everything). Waiting there would finish every copy before the next instruction, so a copy
//! could never overlap computation. This pass moves each such wait out of its scope and down
//! its block, as far as the copies allow, and turns it into `cp.async.wait_group N`, `N` the
//! groups committed after it that it passed: they stay in flight.
//!
//! A wait moves past an instruction only when the instruction (with everything nested in
//! it) cannot observe or disturb the copies in flight:
//!
//! - it writes no memory other than this thread's local arrays (a write could be to a
//!   copy's source, which the hardware may read until the wait);
//! - it reads no shared memory whose bytes may overlap the scope's destination (reads of
//!   global memory never do: `cp_async` writes shared memory only);
//! - it is no barrier, call, fence-like intrinsic, exit (`break`, `continue`, `return`),
//!   `unsafe` block or verbatim CUDA;
//! - it commits no other group, except a sibling `async` scope of copies to other bytes,
//!   which it passes as a whole (one more group in flight behind it).
//!
//! Waits are moved from the last in a block to the first. A wait that reaches another wait
//! needing at most as many groups in flight is merged into it (its scopes go with it), so
//! nested and consecutive scopes do not wait twice. A wait stops at the end of its block: a
//! loop body's copies are complete before the next iteration.
//!
//! Synchronisation inference then takes each scope's copies to complete at its wait
//! (`prism_sync`'s graph ends the scope's node there), so the barriers that make the copies
//! visible to other threads come after the wait. Scopes with TMA copies keep their wait
//! inside (TMA completes on an mbarrier).

use crate::entities::MemId;
use crate::ir::{Block, Function, Inst, InstKind, IntrArg, MemKind, Program, ScopeKind};
use crate::{AccessId, Reg};
use std::collections::HashMap;

/// Moves the waits of every function of `p` (see the module documentation).
pub fn place_waits(p: &mut Program) {
    for f in &mut p.functions {
        let ranges = Ranges::of(f);
        let mut body = std::mem::take(&mut f.body);
        place_in_block(f, &ranges, &mut body);
        f.body = body;
    }
}

/// The shared bytes each pointer register points into, when it is defined once from a
/// shared address.
struct Ranges {
    defs: HashMap<Reg, Vec<InstKind>>,
}

impl Ranges {
    fn of(f: &Function) -> Ranges {
        let mut defs: HashMap<Reg, Vec<InstKind>> = HashMap::new();
        f.body.walk(&mut |k| {
            for d in k.defs() {
                defs.entry(d).or_default().push(k.clone());
            }
        });
        Ranges { defs }
    }

    /// `[lo, hi)` bytes from the function's shared base, if `r` is a shared pointer.
    fn of_reg(&self, mut r: Reg) -> Option<(u64, u64)> {
        for _ in 0..64 {
            match self.defs.get(&r).map(Vec::as_slice) {
                Some([InstKind::SharedAddr { offset, len, .. }]) => {
                    return Some((*offset, offset.saturating_add(*len)));
                }
                Some([InstKind::PtrOffset { base, .. }]) => r = *base,
                Some([InstKind::Copy { src, .. }]) => r = *src,
                _ => return None,
            }
        }
        None
    }
}

/// The root memory of `m`.
fn root(f: &Function, mut m: MemId) -> MemId {
    while let Some(p) = f.mems[m.index()].parent {
        m = p;
    }
    m
}

/// A wait being moved: what it completes and the bytes those copies write.
struct Moving {
    /// Shared bytes the copies write (`None`: unknown, so every shared read stops it).
    dest: Option<(u64, u64)>,
}

fn place_in_block(f: &Function, ranges: &Ranges, b: &mut Block) {
    for inst in &mut b.insts {
        for nb in inst.kind.blocks_mut() {
            place_in_block(f, ranges, nb);
        }
    }
    // Lift each scope's final wait out of the scope, to just after it.
    let mut i = 0;
    while i < b.insts.len() {
        if let Some(w) = lift(&mut b.insts[i]) {
            b.insts.insert(i + 1, w);
            i += 1;
        }
        i += 1;
    }
    // Move the waits down, the last first.
    let mut i = b.insts.len();
    while i > 0 {
        i -= 1;
        if !matches!(b.insts[i].kind, InstKind::AsyncWait { .. }) || !lifted(b, i) {
            continue;
        }
        let moving = Moving { dest: dest_of(f, ranges, &b.insts[i - 1].kind) };
        let mut passed = 0u32;
        let mut j = i + 1;
        let mut merge_into = None;
        while j < b.insts.len() {
            let next = &b.insts[j].kind;
            if let InstKind::AsyncWait { pending, .. } = next {
                if *pending <= passed {
                    merge_into = Some(j);
                }
                break;
            }
            if let Some(closed) = copy_scope(next) {
                // A sibling scope of copies: passable as one more group when its copies
                // write other bytes and everything else in it is passable (a warp computing
                // on our bytes while another copies is not).
                let other = dest_of(f, ranges, next);
                let apart = matches!((moving.dest, other), (Some((a0, a1)), Some((b0, b1))) if a1 <= b0 || b1 <= a0);
                if !apart || !closed || !sibling_passable(f, ranges, &moving, next) {
                    break;
                }
                passed += 1;
                j += 1;
                continue;
            }
            if !passable(f, ranges, &moving, next) {
                break;
            }
            j += 1;
        }
        let mut w = b.insts.remove(i);
        match merge_into {
            Some(m) => {
                // `m` moved one place up with the removal.
                let InstKind::AsyncWait { views: theirs, .. } = &mut b.insts[m - 1].kind else {
                    unreachable!("a wait")
                };
                let InstKind::AsyncWait { views: ours, .. } =
                    std::mem::replace(&mut w.kind, InstKind::AsyncWait { pending: 0, views: Vec::new() })
                else {
                    unreachable!("a wait")
                };
                theirs.extend(ours);
            }
            None => {
                if let InstKind::AsyncWait { pending, .. } = &mut w.kind {
                    *pending = passed;
                }
                b.insts.insert(j - 1, w);
            }
        }
    }
}

/// Takes the final `asyncwait` out of an `async` scope of `cp_async` copies.
fn lift(inst: &mut Inst) -> Option<Inst> {
    let InstKind::Scope { kind: ScopeKind::Async, body, .. } = &mut inst.kind else { return None };
    let n = body.insts.len();
    let ends = n >= 2
        && matches!(body.insts[n - 2].kind, InstKind::AsyncCommit)
        && matches!(body.insts[n - 1].kind, InstKind::AsyncWait { pending: 0, .. });
    let mut tma = false;
    body.walk(&mut |k| {
        tma |= matches!(k, InstKind::Intrinsic { intrinsic, .. } if !intrinsic.is_cp_async()
            && intrinsic.sig().family == prism_types::intrinsics::Family::AsyncCopy)
    });
    if !ends || tma {
        return None;
    }
    body.insts.pop()
}

/// Whether the wait at `i` follows the scope it was lifted from.
fn lifted(b: &Block, i: usize) -> bool {
    i > 0 && copy_scope(&b.insts[i - 1].kind) == Some(true)
}

/// For an `async` scope of `cp_async` copies: `Some(true)` when its wait has been lifted out
/// (it ends with its commit), `Some(false)` when the wait is still inside.
fn copy_scope(k: &InstKind) -> Option<bool> {
    let InstKind::Scope { kind: ScopeKind::Async, body, .. } = k else { return None };
    match body.insts.last().map(|i| &i.kind) {
        Some(InstKind::AsyncCommit) => Some(true),
        Some(InstKind::AsyncWait { .. }) => Some(false),
        _ => None,
    }
}

/// The shared bytes the copies of scope `k` write.
fn dest_of(f: &Function, ranges: &Ranges, k: &InstKind) -> Option<(u64, u64)> {
    let InstKind::Scope { body, .. } = k else { return None };
    let mut out: Option<(u64, u64)> = None;
    let mut known = true;
    body.walk(&mut |k| {
        if let InstKind::Intrinsic { args, accesses, .. } = k
            && let (Some(IntrArg::Elem { ptr, .. }), Some(a)) = (args.first(), accesses.first())
            && f.accesses[a.index()].kind == crate::ir::AccessKind::AsyncWrite
        {
            match ranges.of_reg(*ptr) {
                Some((lo, hi)) => out = Some(out.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi)))),
                None => known = false,
            }
        }
    });
    if known { out } else { None }
}

/// Whether access `a` through `ptr` only reads, and nothing the moving wait's copies write.
fn reads_ok(f: &Function, ranges: &Ranges, w: &Moving, ptr: Reg, a: AccessId) -> bool {
    let info = &f.accesses[a.index()];
    if info.kind.writes() {
        return false;
    }
    match f.mems[root(f, info.mem).index()].kind {
        MemKind::Param | MemKind::Local => true,
        _ => matches!((w.dest, ranges.of_reg(ptr)), (Some((a0, a1)), Some((b0, b1))) if a1 <= b0 || b1 <= a0),
    }
}

/// Whether everything in the sibling `async` scope `k` but its own copies and commit is
/// passable.
fn sibling_passable(f: &Function, ranges: &Ranges, w: &Moving, k: &InstKind) -> bool {
    fn all(f: &Function, ranges: &Ranges, w: &Moving, b: &Block) -> bool {
        b.insts.iter().all(|i| match &i.kind {
            // Its copies write other bytes (checked by the caller); what they read must not
            // be ours either.
            InstKind::Intrinsic { intrinsic, args, accesses, .. } if intrinsic.is_cp_async() => {
                matches!((args.get(1), accesses.get(1)), (Some(IntrArg::Elem { ptr, .. }), Some(a)) if reads_ok(f, ranges, w, *ptr, *a))
            }
            InstKind::AsyncCommit => true,
            k if k.blocks().is_empty() => passable(f, ranges, w, k),
            k => passable_here(f, ranges, w, k) && k.blocks().iter().all(|b| all(f, ranges, w, b)),
        })
    }
    let InstKind::Scope { body, .. } = k else { return false };
    all(f, ranges, w, body)
}

/// Whether a wait may move past `k` (see the module documentation).
fn passable(f: &Function, ranges: &Ranges, w: &Moving, k: &InstKind) -> bool {
    passable_here(f, ranges, w, k) && k.blocks().iter().all(|b| b.insts.iter().all(|i| passable(f, ranges, w, &i.kind)))
}

/// [`passable`] for `k` itself, not what is nested in it.
fn passable_here(f: &Function, ranges: &Ranges, w: &Moving, k: &InstKind) -> bool {
    use InstKind::*;
    let reads_ok = |ptr: Reg, a: AccessId| reads_ok(f, ranges, w, ptr, a);
    // Every variant by name, no wildcard: an instruction added to the IR must be decided on
    // here (the first group is `is_thread_private` and the uniformity assertions).
    match k {
        Const { .. }
        | Copy { .. }
        | Unary { .. }
        | Binary { .. }
        | Select { .. }
        | Cast { .. }
        | RelId { .. }
        | Raw { .. }
        | SharedAddr { .. }
        | LocalAddr { .. }
        | PtrOffset { .. }
        | LocalDecl { .. }
        | LocalLoad { .. }
        | LocalStore { .. }
        | AssertUniform { .. }
        | AssertUniformLocal { .. } => true,
        Load { ptr, access, .. } | LoadVec { ptr, access, .. } => reads_ok(*ptr, *access),
        Intrinsic { intrinsic, args, accesses, .. } => {
            use prism_types::intrinsics::Family;
            let family_ok = matches!(intrinsic.sig().family, Family::Warp | Family::Mma | Family::Math | Family::Cast);
            let ptrs = args.iter().filter_map(|a| match a {
                IntrArg::Elem { ptr, .. } => Some(*ptr),
                IntrArg::Val(_) => None,
            });
            family_ok && accesses.len() == ptrs.clone().count() && ptrs.zip(accesses).all(|(p, a)| reads_ok(p, *a))
        }
        Store { .. }
        | StoreVec { .. }
        | Call { .. }
        | AsyncCommit
        | AsyncWait { .. }
        | Barrier { .. }
        | BarrierArrive { .. }
        | BarrierWait { .. }
        | Break
        | Continue
        | Return { .. }
        | Unsafe { .. }
        | Verbatim { .. } => false,
        If { .. } | Loop { .. } | Group { .. } | Split { .. } => true,
        Scope { kind, .. } => *kind != ScopeKind::Async,
    }
}

#[cfg(test)]
mod tests {
    use super::place_waits;

    /// The kernel: two scopes fill `#1` (bytes 0..64) and `#3` (64..128) from global `%0`,
    /// then `body` runs.
    fn kernel(body: &str) -> String {
        format!(
            "kernel @k(%0) entry block[1] facts 32 1 smem 128 {{
  reg %0: ptr \"src\"
  reg %1: ptr
  reg %2: ptr
  reg %3: i32
  reg %4: i32
  reg %5: f32
  reg %6: ptr
  mem #0 param \"src\" grid[1] f32
  mem #1 shared \"a\" block[1] f32
  mem #2 async \"da\" block[1] f32 of #1
  mem #3 shared \"b\" block[1] f32
  mem #4 async \"db\" block[1] f32 of #3
  access !0 async #2
  access !1 read #0
  access !2 async #4
  access !3 read #0
  access !4 read #1
  access !5 read #3
  access !6 read #0
  access !7 write #0
  access !8 read #3
  body {{
  %1 = shared 0 64 f32
  %2 = shared 64 64 f32
  %3 = const 0
  %4 = const 4
  scope async #1 -> #2 {{
    intrinsic cp_async(%1[%3], %0[%3], %4) !0 !1
    asynccommit
    asyncwait 0 #2
  }}
  scope async #3 -> #4 {{
    intrinsic cp_async(%2[%3], %0[%3], %4) !2 !3
    asynccommit
    asyncwait 0 #4
  }}
{body}  }}
}}
"
        )
    }

    fn placed(body: &str) -> String {
        let mut p = crate::parse(&kernel(body)).expect("parses");
        place_waits(&mut p);
        let errors = crate::verify(&p);
        assert!(errors.is_empty(), "{errors:?}");
        let text = crate::print(&p);
        text.lines()
            .filter(|l| {
                let l = l.trim();
                (l.contains("async")
                    || l.contains("load")
                    || l.starts_with("store")
                    || l.starts_with("barrier")
                    || l == "}")
                    && !l.starts_with("mem ")
                    && !l.starts_with("access ")
            })
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_first_scope_is_waited_for_where_its_bytes_are_read_the_second_stays_in_flight() {
        // Reading `a` needs the first group only: `wait_group 1` leaves the second in flight.
        assert_eq!(
            placed("  %5 = load %1[%3] !4\n"),
            "scope async #1 -> #2 {\nintrinsic cp_async(%1[%3], %0[%3], %4) !0 !1\nasynccommit\n}\nscope async #3 -> #4 {\nintrinsic cp_async(%2[%3], %0[%3], %4) !2 !3\nasynccommit\n}\nasyncwait 1 #2\n%5 = load %1[%3] !4\nasyncwait 0 #4\n}\n}"
        );
    }

    #[test]
    fn reads_of_other_memory_do_not_stop_a_wait_and_consecutive_waits_merge() {
        // Global reads pass; at the end of the block the first wait merges into the second.
        assert_eq!(
            placed("  %5 = load %0[%3] !6\n"),
            "scope async #1 -> #2 {\nintrinsic cp_async(%1[%3], %0[%3], %4) !0 !1\nasynccommit\n}\nscope async #3 -> #4 {\nintrinsic cp_async(%2[%3], %0[%3], %4) !2 !3\nasynccommit\n}\n%5 = load %0[%3] !6\nasyncwait 0 #4 #2\n}\n}"
        );
    }

    #[test]
    fn bytes_of_the_slot_read_through_another_array_stop_its_wait() {
        // `%6` is a second array over bytes 32..96, which the first slot's copies write: the
        // allocator may give sequential scopes the same bytes, so names do not decide.
        assert_eq!(
            placed("  %6 = shared 32 64 f32\n  %5 = load %6[%3] !8\n"),
            "scope async #1 -> #2 {\nintrinsic cp_async(%1[%3], %0[%3], %4) !0 !1\nasynccommit\n}\nscope async #3 -> #4 {\nintrinsic cp_async(%2[%3], %0[%3], %4) !2 !3\nasynccommit\n}\nasyncwait 0 #4 #2\n%5 = load %6[%3] !8\n}\n}"
        );
    }

    #[test]
    fn a_write_to_a_copys_source_stops_its_wait() {
        // The hardware may read `src` until the wait.
        assert_eq!(
            placed("  store %0[%3], %5 !7\n"),
            "scope async #1 -> #2 {\nintrinsic cp_async(%1[%3], %0[%3], %4) !0 !1\nasynccommit\n}\nscope async #3 -> #4 {\nintrinsic cp_async(%2[%3], %0[%3], %4) !2 !3\nasynccommit\n}\nasyncwait 0 #4 #2\nstore %0[%3], %5 !7\n}\n}"
        );
    }

    #[test]
    fn a_write_or_a_barrier_stops_every_wait() {
        let out = placed("  barrier block[1] explicit\n  %5 = load %1[%3] !4\n");
        assert_eq!(
            out,
            "scope async #1 -> #2 {\nintrinsic cp_async(%1[%3], %0[%3], %4) !0 !1\nasynccommit\n}\nscope async #3 -> #4 {\nintrinsic cp_async(%2[%3], %0[%3], %4) !2 !3\nasynccommit\n}\nasyncwait 0 #4 #2\nbarrier block[1] explicit\n%5 = load %1[%3] !4\n}\n}"
        );
    }
}

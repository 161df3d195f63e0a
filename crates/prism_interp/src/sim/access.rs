//! Memory accesses of the simulated threads: resolving a pointer and index to a location
//! (with the bounds check), reading, writing and atomically updating it, and recording each
//! access for race detection, fences and flags included. `exec.rs` interprets the ops and
//! calls these for every lane that touches memory.

use super::GCtx;
use super::block::{BlockSim, Frame, Landings, Loc, PendingCopy, UnwrittenRead};
use super::flags::{PhaseReleases, Releases};
use super::wgmma::WarpRead;
use crate::code::{FuncCode, R};
use crate::memory::{Ptr, Space};
use crate::report::{Report, ReportKind, Thread};
use crate::shadow::{
    Acc, EVERY_BLOCK, Fences, Kind, LEVELS, Levels, MomentId, Phase, RaceKind, ReadAt, ReadMemo, ReadRec, ReadsMemo,
    Release, landing_fences, landing_gen, landing_mbar, landing_tid,
};
use crate::value::{self, to_i128};
use prism_ir::ir::AccessKind;
use prism_types::ty::Scalar;
use std::collections::HashMap;

/// One lane of a fragment, as the memory helpers need it: the frame it runs in, its warp
/// and its lane in the warp.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lane {
    pub fid: u32,
    pub w: usize,
    pub l: usize,
}

/// An access site: the function, and the index of the access in its `accesses`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site {
    pub func: u32,
    pub access: u32,
}

/// What an indexed access goes through: pointer and index registers, the index's type, the
/// element size in bytes, and whether it writes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand {
    pub ptr: R,
    pub index: R,
    pub index_ty: Scalar,
    pub size: u64,
    pub writes: bool,
}

/// What orders thread `tid`'s accesses besides barriers ([`Orders`]), built from the
/// fields of `this` (a `BlockSim`) it reads, so that the shadow, a field of its own, can be
/// borrowed mutably beside it. Only references: what orders a record is looked up when the
/// shadow asks.
macro_rules! orders_of {
    ($this:ident, $tid:expr) => {{
        let tid: u32 = $tid;
        Orders {
            sync: &$this.sync,
            acquisitions: &$this.acquisitions,
            wait_acquisitions: &$this.wait_acquisitions,
            acquired_foreign: $this.acquired_foreign,
            landing_seen: &$this.landing_seen,
            landings: &$this.landings,
            levels: &$this.s.levels,
            block: $this.block,
            tid,
            passed: &$this.warps[tid as usize / 32].counts[tid as usize % 32],
        }
    }};
}

impl<'a> BlockSim<'a> {
    /// The element lane `l` accesses through pointer register `ptr` at index register
    /// `index`, recorded for race detection; `Err` says why it is out of bounds.
    #[inline]
    pub(super) fn access(
        &mut self,
        g: &mut GCtx,
        fr: &Frame,
        at: Lane,
        fc: &FuncCode,
        site: Site,
        op: Operand,
    ) -> Result<Loc, String> {
        let idx = to_i128(op.index_ty, fr.regs[op.index as usize * 32 + at.l]);
        let loc = self.locate(fr, at, fr.regs[op.ptr as usize * 32 + at.l], idx, op.size)?;
        if let Some(k) = race_kind(fc, site.access, op.writes) {
            self.race(g, loc, k, at, site, None);
        }
        Ok(loc)
    }

    /// Why an access of `bytes` bytes starting at element `index` through pointer `bits` is
    /// not aligned to `bytes`, if it is not. Global buffers start at a multiple of 256 bytes
    /// (as `cudaMalloc` returns them) and the CUDA backend aligns thread-local arrays to 16
    /// bytes, so there the element offset decides; shared arrays sit at their byte offset
    /// from the block's shared base, which is aligned to 1024 bytes (the CUDA backend declares it
    /// so, and each separately declared array as aligned as its offset, up to 1024).
    pub(crate) fn misaligned(bits: u64, index: i128, size: u64, bytes: u64) -> Option<String> {
        let p = Ptr::decode(bits);
        let e = i128::from(p.offset) + index;
        let (addr, what) = match p.space {
            Space::Null => return None,
            Space::Global | Space::Local => (e * i128::from(size), "from the start of its buffer"),
            Space::Shared => (i128::from(p.a) + e * i128::from(size), "from the start of shared memory"),
        };
        (addr.rem_euclid(i128::from(bytes)) != 0)
            .then(|| format!("element {e} is at byte {addr} {what}, not a multiple of the access's {bytes} bytes"))
    }

    /// Resolves pointer `bits` plus `index` elements of `size` bytes to a location, or says
    /// why it is out of bounds.
    pub(crate) fn locate(&self, fr: &Frame, at: Lane, bits: u64, index: i128, size: u64) -> Result<Loc, String> {
        let (fid, w) = (at.fid, at.w);
        let p = Ptr::decode(bits);
        let e = i128::from(p.offset) + index;
        match p.space {
            Space::Null => Err("the pointer is null".into()),
            Space::Global => {
                let n = self.s.buffers.get(p.a as usize).map(|b| b.len()).unwrap_or(0) as i128;
                if (0..n).contains(&e) {
                    Ok(Loc::Global(p.a as usize, e as usize))
                } else {
                    let name = self.s.buffer_names.get(p.a as usize).map(String::as_str).unwrap_or("?");
                    Err(format!("element {e} is outside the {n} elements of the buffer `{name}`"))
                }
            }
            Space::Shared => {
                let n = (p.b / size.max(1)) as i128;
                if (0..n).contains(&e) {
                    Ok(Loc::Shared((p.a + e as u64 * size) as usize))
                } else {
                    Err(format!("element {e} is outside the {n} elements of the shared array"))
                }
            }
            Space::Local => {
                let frame = if p.a == u64::from(fid) {
                    Some(fr)
                } else {
                    self.warps[w].frames.get(p.a as usize).and_then(|f| f.as_deref())
                };
                let n = frame.and_then(|f| f.locals.get(p.b as usize)).map(|a| a.len() / 32).unwrap_or(0) as i128;
                if (0..n).contains(&e) {
                    Ok(Loc::Local(p.a as u32, p.b as u32, e as usize))
                } else {
                    Err(format!("element {e} is outside the {n} elements of the local array"))
                }
            }
        }
    }

    pub(crate) fn read_loc(&self, fr: &Frame, at: Lane, loc: Loc, ty: Scalar) -> u64 {
        let (fid, w, lane) = (at.fid, at.w, at.l);
        match loc {
            Loc::Global(b, i) => self.s.buffers[b].load(i),
            Loc::Shared(at) => {
                // Fixed sizes, so no call into memcpy for a 4-byte read.
                let sh = &self.shared;
                let bits = match ty.size() {
                    1 => u64::from(sh[at]),
                    2 => u64::from(u16::from_le_bytes([sh[at], sh[at + 1]])),
                    4 => u64::from(u32::from_le_bytes(sh[at..at + 4].try_into().expect("4 bytes"))),
                    _ => u64::from_le_bytes(sh[at..at + 8].try_into().expect("8 bytes")),
                };
                value::norm(ty, bits)
            }
            Loc::Local(f, a, i) => {
                let frame = if f == fid { fr } else { self.warps[w].frames[f as usize].as_ref().expect("live frame") };
                frame.locals[a as usize][i * 32 + lane]
            }
        }
    }

    /// Writes `bits` as a `ty` at `loc` for lane `at`; shared memory keeps that array `tag`
    /// wrote it ([`Self::array_tag`]).
    pub(crate) fn write_loc(&mut self, fr: &mut Frame, at: Lane, loc: Loc, ty: Scalar, bits: u64, tag: u64) {
        let (fid, w, lane) = (at.fid, at.w, at.l);
        match loc {
            Loc::Global(b, i) => self.s.buffers[b].store(i, bits),
            Loc::Shared(at) => self.store_shared(at, ty, bits, tag),
            Loc::Local(f, a, i) => {
                let frame = if f == fid { fr } else { self.warps[w].frames[f as usize].as_mut().expect("live frame") };
                frame.locals[a as usize][i * 32 + lane] = bits;
            }
        }
    }

    /// Stores `bits` as a `ty` at byte `at` of shared memory, as array `tag`'s.
    #[inline]
    fn store_shared(&mut self, at: usize, ty: Scalar, bits: u64, tag: u64) {
        match ty.size() {
            1 => self.shared[at] = bits as u8,
            2 => self.shared[at..at + 2].copy_from_slice(&(bits as u16).to_le_bytes()),
            4 => self.shared[at..at + 4].copy_from_slice(&(bits as u32).to_le_bytes()),
            _ => self.shared[at..at + 8].copy_from_slice(&bits.to_le_bytes()),
        }
        self.mark_written(at, ty.size() as usize, tag);
    }

    /// Atomically replaces the element at `loc` by `op(old)` (as array `tag`'s, in shared
    /// memory); returns the old value.
    pub(super) fn update_loc(
        &mut self,
        fr: &mut Frame,
        (at, tag): (Lane, u64),
        loc: Loc,
        ty: Scalar,
        op: &dyn Fn(u64) -> u64,
    ) -> u64 {
        match loc {
            Loc::Global(b, i) => self.s.buffers[b].update(i, op),
            _ => {
                let old = self.read_loc(fr, at, loc, ty);
                let new = value::norm(ty, op(old));
                self.write_loc(fr, at, loc, ty, new, tag);
                old
            }
        }
    }

    /// A fence by lane `l` of warp `w`: counts it, and acquires the releases the thread has
    /// observed (a block-scope fence only those of its own block). Each acquisition is
    /// noted with the thread's barrier arrivals ([`Acquisition`]), so that a barrier the
    /// thread arrives at afterwards passes it on to the threads that pass the barrier.
    pub(super) fn fence(&mut self, w: usize, l: usize, device: bool) {
        let tid = w as u32 * 32 + l as u32;
        self.fences[tid as usize].bump(device);
        // What the barriers the thread has passed ordered before this fence, a flag stored
        // after it releases (`publish_with`).
        self.fence_counts[tid as usize] = self.warps[w].counts[l];
        self.fence_at[tid as usize] = self.fences[tid as usize];
        if device {
            // The block barriers it has passed: what a flag it stores releases to readers in
            // other blocks besides its own accesses (`Release::gbar`).
            self.fence_gbar[tid as usize] = self.warps[w].counts[l][self.s.levels.block_level()];
        }
        let block = self.block;
        if let Some((pending, acquired)) = self.sync.get_mut(&tid) {
            // A block fence acquires only releases made by threads of its block (a flag
            // stored in another block is a release at the GPU's scope, which a block
            // fence does not match).
            // What a block fence takes stays observed too, for a later device-wide fence
            // (which acquires it again, a union that adds nothing): the observed set stays
            // shared rather than split into copies at every block fence of a polling loop
            // (review R13).
            let take = if device { std::mem::take(pending) } else { pending.filtered(|r| r.via == block) };
            acquired.merge_all(&take);
            if !take.is_empty() {
                self.acquired_foreign |= take.iter().any(|r| r.block != block);
                for r in take.iter() {
                    note_landing(&mut self.landing_seen, tid, block, r);
                }
                let arrived = self.warps[w].arrived[l];
                note_acquisition(self.acquisitions.entry(tid).or_default(), tid, arrived, acquired);
                self.race_state[w] |= 1 << l;
            }
        }
        // What a flag stored after this fence carries on (`Self::releasing`): what the
        // thread had acquired by it. Its own acquisitions are noted now (a wait for an
        // mbarrier phase after the fence adds to them, and is not released by it); those
        // passed on by barriers are looked up at the store, with the barriers the thread had
        // passed at this fence.
        if self.s.cfg.checks.races {
            let own = self.sync.get(&tid).map(|(_, acquired)| acquired.clone()).unwrap_or_default();
            self.fence_carry.insert(tid, (own, device));
            self.race_state[w] |= 1 << l;
        }
    }

    /// Lane `l` of warp `w` has left the kernel: what it acquired orders none of its own
    /// accesses any more, and it releases nothing more, so its sets of releases go, and so
    /// do its acquisitions that no barrier it arrived at since can pass on (it arrives at
    /// none now). Acquisitions before a barrier it arrived at stay: threads that pass that
    /// barrier later are ordered after them. When every thread of a large grid acquires a
    /// set of releases as large as the grid (a ticket, then a flag the last one sets),
    /// keeping them until the block ends held a copy per thread (review R12 P1).
    pub(super) fn forget_exited(&mut self, w: usize, l: usize) {
        let tid = w as u32 * 32 + l as u32;
        self.sync.remove(&tid);
        self.fence_carry.remove(&tid);
        if !self.landing_seen.is_empty() {
            self.landing_seen.retain(|&(t, _), _| t != tid);
        }
        let arrived = self.warps[w].arrived[l];
        for map in [&mut self.acquisitions, &mut self.wait_acquisitions] {
            if let Some(list) = map.get_mut(&tid) {
                list.retain(|a| a.arrived != arrived);
                if list.is_empty() {
                    map.remove(&tid);
                }
            }
        }
    }

    /// Lane `l` of warp `w` acquires `releases` (an mbarrier wait: acquire semantics, no
    /// fence needed). Where they release TMA copies landed through an mbarrier, the wait is
    /// noted with the thread's barrier arrivals ([`super::block::Landings::acquired`]): a
    /// barrier the thread passes afterwards orders the copies before the other threads'
    /// accesses after it, as the hardware's barrier is cumulative.
    /// `memo` holds the previous lane's set before and after it acquired the same phase:
    /// a lane whose set was the same (lanes that waited together, nothing else acquired
    /// since) takes the result, shared, instead of merging again.
    pub(super) fn acquire(&mut self, w: usize, l: usize, done: &PhaseReleases, memo: &mut Option<AcquireMemo>) {
        let tid = w as u32 * 32 + l as u32;
        for r in done.landings() {
            // Only this block's landings: another block's barrier at the same byte of its
            // shared memory is another barrier (review R18 F1: a release of another block's
            // phases, relayed by a flag, credited this block's barrier with them).
            if let Some(mbar) = landing_mbar(r.tid)
                && r.block == self.block
                && r.reaches(self.block)
            {
                let generation = landing_gen(r.fences);
                let counts = self.warps[w].arrived[l];
                let l = self.landings.entry(mbar).or_default();
                l.top = l.top.max(generation);
                let waits = l.acquired.entry(tid).or_default();
                match waits.back_mut() {
                    Some(&mut (last, _)) if generation <= last => {}
                    // A later wait with the same barrier arrivals orders everything the
                    // previous one did (a barrier after either orders both): it takes its
                    // place, so that only waits with barriers between them take slots. Until
                    // 2026-11-29 each wait took one, and eight waits for a refill of another
                    // slot evicted the wait that a barrier had ordered before the readers.
                    Some(last) if last.1 == counts => *last = (generation, counts),
                    _ => {
                        waits.push_back((generation, counts));
                        if waits.len() > super::block::LANDING_WAITS {
                            waits.pop_front();
                        }
                    }
                }
            }
        }
        self.race_state[w] |= 1 << l;
        let any = !done.is_empty();
        self.acquired_foreign |= done.foreign();
        for r in done.landings() {
            note_landing(&mut self.landing_seen, tid, self.block, r);
        }
        let (_, acquired) = self.sync.entry(tid).or_default();
        match memo {
            Some(m) if m.phase.same(done) && m.before.same(acquired) => *acquired = m.after.clone(),
            _ => {
                let before = acquired.clone();
                acquired.merge_phase(done);
                *memo = Some(AcquireMemo { phase: done.clone(), before, after: acquired.clone() });
            }
        }
        // What the thread has acquired is noted with its barrier arrivals, as at a fence
        // ([`Acquisition`]): a barrier it arrives at afterwards passes the arrivals' releases
        // on to the other threads' accesses (one lane waits, `__syncwarp()`, another lane
        // writes the slot or issues its refill). The wait is an acquire, and the barrier
        // orders it before the other threads' accesses after it. Until 2026-11-30 only the
        // landings were passed on so, and such a lane's write was a false race (review R15
        // F5). Kept apart from the fences' acquisitions, which the threads' own releases
        // carry on as well ([`Self::carried_with`]): every consumer of a pipeline waits at
        // every stage, and merging all of their sets at every arrival made the TMA kernels'
        // checked runs 20% slower (what that leaves out is in docs/simulator.md).
        if any && self.s.cfg.checks.races {
            let arrived = self.warps[w].arrived[l];
            note_acquisition(self.wait_acquisitions.entry(tid).or_default(), tid, arrived, acquired);
        }
    }

    /// The releases thread `tid` has acquired (with fences, or by waiting for mbarrier
    /// phases): an arrival of the thread at an mbarrier passes them on, since PTX's release
    /// is cumulative over what its thread observed. So a producer that waits for its
    /// consumers' arrivals before refilling a slot is ordered after the copy that last
    /// filled it, which the consumers waited for, and a relay through two mbarriers (a
    /// thread waits for one, then arrives at the other) orders the first one's writers
    /// before the second one's waiters. Until 2026-11-29 only the TMA landings were passed
    /// on, and such a relay was a false report (review R7 F4). The waiters are in the
    /// arriving thread's block, where each release it acquired orders as much as it did.
    /// Besides those, the TMA copies landed through a phase that another thread waited for
    /// before a barrier this thread has passed: the barrier orders the wait before the
    /// arrival, which is cumulative over it (a consumer lane waits, `__syncwarp()`, another
    /// lane arrives on the empty barrier; review R9), and the releases other threads
    /// acquired with a fence before such a barrier. A flag stored after a fence carries on
    /// the same ([`Self::fence`]).
    pub(super) fn acquired_by(&self, tid: u32) -> Releases {
        let own = self.sync.get(&tid).map(|(_, acquired)| acquired.clone()).unwrap_or_default();
        self.carried_with(tid, own, &self.warps[tid as usize / 32].counts[tid as usize % 32])
    }

    /// `carried` (what thread `tid` acquired itself) with what barriers it has passed
    /// (`passed`) pass on to it ([`Self::acquired_by`]).
    fn carried_with(&self, tid: u32, carried: Releases, passed: &[u32; LEVELS]) -> Releases {
        self.carried_on(carried, passed, |u| (u != tid).then_some(tid), false).expect("not strict")
    }

    /// What the arrivals of the lanes of `mask` of warp `w`, at one mbarrier in one phase,
    /// carry on together ([`Self::acquired_by`]): the union of what each lane's arrival
    /// carries, computed once. `None` when it cannot be: fewer than two lanes, lanes that
    /// have passed different barriers, barrier units that cut a warp, or more distinct
    /// wait sets than a lane carries on ([`Self::carried_on`]).
    ///
    /// Lane by lane, lane `t` carries its own set and, of every other thread `u`, the
    /// latest acquisitions that a barrier orders before `t`. Whether one does depends on
    /// `t` only through the smallest barrier unit holding both threads and the barriers `t`
    /// has passed: with every unit a whole number of warps and the same barriers passed by
    /// every lane, every lane but `u` itself judges `u`'s acquisitions alike. So the union
    /// over the lanes is the union of their own sets and, of every thread `u`, what a lane
    /// other than `u` finds: the first lane, or the second for the first lane's own
    /// acquisitions. A lane's wait sets are carried on only when at most
    /// `CARRIED_WAIT_SETS` distinct ones are found; when the union finds no more than that,
    /// no lane (which finds a subset) found more.
    pub(super) fn warp_carried(&self, w: usize, mask: u32) -> Option<Releases> {
        let mut lanes = super::block::lanes_of(mask);
        let (first, second) = (lanes.next()?, lanes.next()?);
        let passed = &self.warps[w].counts[first];
        if !self.s.levels.whole_warps() || super::block::lanes_of(mask).any(|l| self.warps[w].counts[l] != *passed) {
            return None;
        }
        let (one, two) = ((w * 32 + first) as u32, (w * 32 + second) as u32);
        let mut own = Releases::default();
        let mut last: Option<&Releases> = None;
        for l in super::block::lanes_of(mask) {
            // Lanes that acquired together share one set: it is merged once.
            if let Some((_, a)) = self.sync.get(&((w * 32 + l) as u32))
                && !last.is_some_and(|x| x.same(a))
            {
                own.merge_all(a);
                last = Some(a);
            }
        }
        self.carried_on(own, passed, |u| Some(if u == one { two } else { one }), true)
    }

    /// `carried` with what the barriers passed (`passed`) pass on of other threads'
    /// acquisitions: of each thread `u` for which `judge(u)` names a thread `t`, those a
    /// barrier orders before `t` ([`Self::acquired_by`], [`Self::warp_carried`]). Beyond
    /// `CARRIED_WAIT_SETS` distinct wait sets none is carried on, or, `strict`, `None`.
    fn carried_on(
        &self,
        mut carried: Releases,
        passed: &[u32; LEVELS],
        judge: impl Fn(u32) -> Option<u32>,
        strict: bool,
    ) -> Option<Releases> {
        // What other threads of the block acquired with a fence before a barrier this thread
        // has passed: the barrier orders it before this thread (`Orders::ordered`).
        for (&u, list) in &self.acquisitions {
            if let Some(t) = judge(u)
                && let Some(a) = latest_ordered(&self.s.levels, list, t, passed)
            {
                carried.merge_all(&a.releases);
            }
        }
        // And what they acquired at their mbarrier waits (review R16 F5). Lanes that waited
        // together hold one shared set, so the sets are told apart by identity first and
        // each is merged once; beyond `CARRIED_WAIT_SETS` different ones (every thread of a
        // large block waits, meets at `__syncthreads()` and arrives: each arrival would merge
        // a set per warp, review R22 F1: 150x slower at 1,024 threads) they are not carried
        // on, which can only report more.
        let mut sets: Vec<&Releases> = Vec::new();
        for (&u, list) in &self.wait_acquisitions {
            if let Some(t) = judge(u)
                && let Some(a) = latest_ordered(&self.s.levels, list, t, passed)
                && !sets.iter().any(|s| s.same(&a.releases))
            {
                sets.push(&a.releases);
                if sets.len() > CARRIED_WAIT_SETS {
                    break;
                }
            }
        }
        if sets.len() <= CARRIED_WAIT_SETS {
            for set in sets {
                carried.merge_all(set);
            }
        } else if strict {
            return None;
        }
        for (&mbar, l) in &self.landings {
            // The latest wait of another thread that a barrier orders before this one. No
            // wait holds more than `top`: a thread that holds the landing of `top` already
            // (it waited for it, as every consumer of a pipeline has for the phases it
            // took) gains nothing, and the search stops at a wait for it. Without these,
            // each consumer's arrival looked at every other consumer thread's waits.
            if carried.covers(&Release::landing(self.block, mbar, l.top)) {
                continue;
            }
            let mut seen = None;
            for (&t, waits) in &l.acquired {
                if let Some(j) = judge(t)
                    && let Some(g) = latest_wait(&self.s.levels, t, waits, j, passed)
                {
                    seen = seen.max(Some(g));
                    if g >= l.top {
                        break;
                    }
                }
            }
            let Some(generation) = seen else { continue };
            let r = Release::landing(self.block, mbar, generation);
            carried.merge(r);
        }
        Some(carried)
    }

    /// Whether thread `tid`, about to operate on the mbarrier at shared byte `mbar` (an
    /// arrival, bytes, a TMA copy's issue), is ordered after the latest completed phase of that barrier: it acquired
    /// that phase (a wait for it, or an arrival that carried it, as a producer's wait for
    /// its consumers' arrivals on the empty barrier does), or a thread that waited for it
    /// has since arrived at a barrier this one passed, or, for a phase without copies, every
    /// operation on the phase is ordered before it. On the GPU a copy's bytes complete when
    /// it finishes, in any order among the copies in flight, so a copy issued before its
    /// thread saw the previous phase complete may count towards that phase, which then
    /// completes before the copy announced for it has landed, or, if that phase expected no
    /// bytes, waits for bytes that never come while its last arrival counts towards it
    /// instead of the next phase. Until 2026-11-30 only phases with copies were counted.
    /// Every operation on the barrier is checked so (review R16 F1, F2: an arrival or an
    /// `expect_tx` after a phase of arrivals only, ordered by a relaxed flag, may join
    /// it), and "ordered before" counts what the thread acquired, as in
    /// [`Self::ordered_after`].
    pub(super) fn saw_last_landing(&self, mbar: usize, tid: u32) -> bool {
        let current = self.landings.get(&mbar).map_or(0, |l| l.generation);
        current == 0 || self.known_generation(mbar, tid, current) >= current
    }

    /// How many phases of the mbarrier at shared byte `mbar` (counted over its
    /// initialisations, [`super::block::Landings::generation`]) thread `tid` is ordered
    /// after the completion of, up to `enough` (the search stops there): those it acquired
    /// (a wait, or a release that carried the phase's own), those that another thread
    /// waited for before a barrier this one has passed, and the latest, when every
    /// operation on it is ordered before the thread. The cheap tests come first: a
    /// barrier used by a thousand threads at each round of a loop made the last one
    /// quadratic (review R17 F5).
    pub(super) fn known_generation(&self, mbar: usize, tid: u32, enough: u32) -> u32 {
        let Some(l) = self.landings.get(&mbar) else { return 0 };
        // Acquired (by a wait, or carried by a release it acquired): every phase's
        // completion is a release of the barrier's pseudo-thread (`complete_mbar_phase`).
        let mut known = self.landing_seen.get(&(tid, mbar)).copied().unwrap_or(0);
        if known >= enough {
            return known;
        }
        let passed = &self.warps[tid as usize / 32].counts[tid as usize % 32];
        for (&t, waits) in &l.acquired {
            let latest = if t == tid {
                waits.back().map(|&(generation, _)| generation)
            } else {
                latest_wait(&self.s.levels, t, waits, tid, passed)
            };
            known = known.max(latest.unwrap_or(0));
            if known >= enough {
                return known;
            }
        }
        // Another thread's fence that acquired the phase's completion (a flag set after a
        // wait and a fence), passed on by a barrier this thread has passed: waits are noted
        // in the list above, fences' acquisitions only here (review R19 F1: wait, fence,
        // flag, fence, `__syncwarp()`, and the other lane issued the next phase's copy).
        let own = landing_tid(mbar);
        for (&u, list) in &self.acquisitions {
            if u == tid {
                continue;
            }
            let Some(a) = latest_ordered(&self.s.levels, list, tid, passed) else { continue };
            let seen = a
                .releases
                .of_writer(self.block, own)
                .filter(|r| r.reaches(self.block))
                .map(|r| landing_gen(r.fences))
                .max();
            known = known.max(seen.unwrap_or(0));
            if known >= enough {
                return known;
            }
        }
        // A phase without copies completed at its last operation, which ran on the
        // mbarrier when its thread ran it: a thread ordered after every operation of the
        // phase (two threads arrive, `__syncthreads()`, one issues the next phase's copy) is
        // ordered after its completion. Ordered after only the one that completed it in this
        // schedule is not enough: on the GPU another may come last. A block barrier that the
        // thread passed after every operation's thread arrived at it orders them all at once.
        // The phase before the latest too: a parity wait needs to know whether the thread is
        // ordered after it (review R15's elected waiter, then a phase of arrivals after
        // `__syncthreads()`, then a wait for the next phase of copies).
        let block = self.s.levels.block_level();
        let phases = [
            (&l.last_ops, l.last_ops_block, l.generation),
            (&l.prev_ops, l.prev_ops_block, l.generation.saturating_sub(1)),
        ];
        for (ops, most, generation) in phases {
            if generation <= known {
                break;
            }
            if let Some(ops) = ops
                && (passed[block] > most || ops.iter().all(|o| self.ordered_after(tid, &o.acc())))
            {
                return generation;
            }
        }
        known
    }

    /// Notes an operation on the bytes of the current phase of the mbarrier at shared byte
    /// `mbar` by lane `l` of warp `w` ([`super::block::BytesOp`]): which earlier
    /// announcements of the phase are ordered before it, and, for each earlier operation,
    /// whether the bytes this one completes may come before it on the GPU. Only the first
    /// [`super::block::BYTES_OPS_EXACT`] operations of a phase are compared pairwise; a
    /// later one is taken as ordered before and after none of the others, which can only
    /// report more (review R16 F6: a phase of thousands of operations took seconds).
    pub(super) fn note_bytes_op(
        &mut self,
        mbar: usize,
        (w, l): (usize, usize),
        (announced, completed): (i64, i64),
        at: (prism_span::Span, Thread),
    ) {
        let tid = (w * 32 + l) as u32;
        let exact = self.mbars[&mbar].bytes_ops.len() < super::block::BYTES_OPS_EXACT;
        let ordered: Vec<bool> = if exact {
            self.mbars[&mbar].bytes_ops.iter().map(|o| self.ordered_after(tid, &o.acc())).collect()
        } else {
            Vec::new()
        };
        let (arrived, fences) = (self.warps[w].arrived[l], self.fences[tid as usize]);
        let m = self.mbars.get_mut(&mbar).expect("the operation made it");
        let (mut after, mut completed_before) = (Vec::new(), 0);
        if exact {
            for (i, (o, ord)) in m.bytes_ops.iter_mut().zip(ordered).enumerate() {
                if ord && o.announced > 0 {
                    after.push(i as u32);
                }
                if !ord {
                    o.completed_before += completed;
                }
                completed_before += o.completed;
            }
        } else {
            // Every other operation's bytes may complete before this one, and this one's
            // before every other (`Mbar::late_completed`).
            completed_before = m.bytes_ops.iter().map(|o| o.completed).sum();
            m.late_completed += completed;
        }
        m.bytes_ops.push(super::block::BytesOp {
            tid,
            arrived,
            fences,
            announced,
            completed,
            followed: false,
            after,
            completed_before,
            span: at.0,
            thread: at.1,
        });
    }

    /// Marks the operations on the bytes of the current phase of the mbarrier at shared byte
    /// `mbar` that thread `tid`, arriving at it, is ordered after: through what it acquired
    /// too for the first [`super::block::BYTES_OPS_EXACT`], by its program order and
    /// barriers only for the others (an operation left unfollowed can only be reported).
    pub(super) fn follow_bytes_ops(&mut self, mbar: usize, tid: u32) {
        let passed = &self.warps[tid as usize / 32].counts[tid as usize % 32];
        let follows: Vec<usize> = self.mbars[&mbar]
            .bytes_ops
            .iter()
            .enumerate()
            .filter(|&(i, o)| {
                let acc = o.acc();
                !o.followed
                    && if i < super::block::BYTES_OPS_EXACT {
                        self.ordered_after(tid, &acc)
                    } else {
                        o.tid == tid || self.s.levels.ordered(&acc, tid, passed)
                    }
            })
            .map(|(i, _)| i)
            .collect();
        let m = self.mbars.get_mut(&mbar).expect("the arrival made it");
        for i in follows {
            m.bytes_ops[i].followed = true;
        }
    }

    /// Whether `earlier` (an access or an mbarrier operation of this block) is ordered
    /// before what thread `tid` does next: by its program order, a barrier, or what the
    /// thread acquired ([`Self::orders`]).
    pub(super) fn ordered_after(&self, tid: u32, earlier: &Acc) -> bool {
        earlier.tid == tid
            || self.s.levels.ordered(earlier, tid, &self.warps[tid as usize / 32].counts[tid as usize % 32])
            || self.orders(tid).ordered(earlier, None)
    }

    /// What orders an earlier access before thread `tid`'s access besides barriers (which
    /// the shadow checks itself): the releases the thread acquired, and the waits for TMA
    /// landings that a barrier it passed orders before it. The shadow asks it about every
    /// record that barriers leave unordered ([`crate::shadow::Cell::access_with`]), so a
    /// location's other records are still checked when one of them is ordered this way.
    #[inline]
    fn orders(&self, tid: u32) -> Orders<'_> {
        orders_of!(self, tid)
    }

    /// A phase of the mbarrier at shared byte `mbar` has completed, after the operations
    /// `ops` ([`super::block::Mbar::ops`]), and the TMA copies `copies` (with the threads
    /// that issued them) that completed on it land. Their data is written now; with race
    /// checks their words stop being in flight and each element is recorded as written by
    /// the barrier's pseudo-thread in the phase's generation, which no barrier orders and
    /// the phase's release (added to its releases, which the waits for it acquire) does.
    /// Their write was checked against earlier accesses when they were issued, and accesses
    /// since then were races with the copy in flight, so nothing is checked here. Every
    /// phase is a generation when races are checked, with copies or not, so that a later
    /// copy's issue can be checked against it ([`Self::saw_last_landing`]); without race
    /// checks only phases with copies come here.
    pub(super) fn complete_mbar_phase(
        &mut self,
        g: &mut GCtx,
        mbar: usize,
        copies: Vec<(u32, PendingCopy)>,
        ops: Vec<super::block::PhaseOp>,
    ) {
        let races = self.s.cfg.checks.races;
        let tid = landing_tid(mbar);
        let generation = {
            let l = self.landings.entry(mbar).or_default();
            l.generation += 1;
            l.issuer = copies.last().map_or(l.issuer, |c| c.0);
            l.prev_ops = l.last_ops.take();
            l.prev_ops_block = l.last_ops_block;
            l.last_ops_block = ops.iter().map(|o| o.arrived[self.s.levels.block_level()]).max().unwrap_or(0);
            l.last_ops = copies.is_empty().then_some(ops);
            l.generation
        };
        if races {
            self.sshadow.cover(self.shared.len());
        }
        for (issuer, c) in copies {
            let size = c.elem.size();
            if races {
                self.dest_done(c.dst, c.count as usize, size);
            }
            for k in 0..c.count as usize {
                let Loc::Shared(at) = c.dst.advance(k, size) else { continue };
                self.store_shared(at, c.elem, c.vals[k], c.tag);
                if races && race_kind(&self.s.code.funcs[c.func as usize], c.access, true).is_some() {
                    let now = Acc {
                        tid,
                        counts: [u32::MAX; LEVELS],
                        func: c.func as u16,
                        site: c.access as u16,
                        fences: landing_fences(generation - 1),
                        atomic: false,
                        phase: Phase::NONE,
                    };
                    self.sshadow.record_write(&self.s.levels, (at, size as usize), now, &[u32::MAX; LEVELS]);
                    self.sflags.clear(at);
                    // Landing on what a wgmma in flight reads (`WgFlight`): reported as the
                    // issuing thread's write.
                    if let Some(reader) = self.wg_flight.reading((at, size as usize)) {
                        let earlier = (flight_acc(reader).at(), RaceKind::WgmmaFlight);
                        self.report_race(g, Kind::Write, issuer, (c.func, c.access), earlier, None);
                    }
                }
            }
        }
        if races && let Some(m) = self.mbars.get_mut(&mbar) {
            let landing = Release::landing(self.block, mbar, generation);
            m.done.add(landing, self.block);
        }
    }

    /// An atomic or volatile load of `loc` by lane `l` of warp `w` (or an atomic that left
    /// the element as it was): the releases every store it may have read carried
    /// ([`super::flags`]) are acquired at the thread's next fence.
    pub(super) fn flag_load(&mut self, g: &mut GCtx, w: usize, l: usize, loc: Loc) {
        if !self.s.cfg.checks.races {
            return;
        }
        let tid = w as u32 * 32 + l as u32;
        let Some(key) = know_key(tid, loc) else { return };
        let know = self.flag_know.get(&key).copied().unwrap_or_default();
        let got = match loc {
            Loc::Global(b, i) => g.flags.load((b, i), know),
            Loc::Shared(at) => self.sflags.load(at, know),
            Loc::Local(..) => None,
        };
        let Some((credit, after)) = got else { return };
        self.flag_know.insert(key, after);
        self.note_observed(tid, credit);
    }

    /// An atomic or volatile store of `new` over `old` to `loc` by lane `l` of warp `w`: a
    /// release when the thread has fenced, carrying on what it had acquired by its last
    /// fence ([`Self::releasing`]).
    pub(super) fn flag_store(&mut self, g: &mut GCtx, w: usize, l: usize, loc: Loc, values: (u64, u64)) {
        if self.s.cfg.checks.races {
            self.flag_write(g, w as u32 * 32 + l as u32, loc, values, false);
        }
    }

    /// An atomic read-modify-write of `loc` by lane `l` of warp `w` that turned `old` into
    /// `new`. When it changed the element it read the store just before it in coherence
    /// order (PTX atomicity): it observes what every store that may be that one released,
    /// and its own store continues it: a thread that reads what it wrote (or what a later
    /// update in the chain wrote) observes those releases too (PTX's observation order runs
    /// through atomic read-modify-writes; C++'s release sequence), so the last block of a
    /// reduction, whose ticket's update follows every other block's, acquires every block's
    /// publication of its part. One that left the element as it was (a failed
    /// compare-and-swap) is a load ([`super::flags`]).
    pub(super) fn flag_rmw(&mut self, g: &mut GCtx, w: usize, l: usize, loc: Loc, (old, new): (u64, u64)) {
        if !self.s.cfg.checks.races {
            return;
        }
        if old == new {
            return self.flag_load(g, w, l, loc);
        }
        self.flag_write(g, w as u32 * 32 + l as u32, loc, (old, new), true);
    }

    /// Records a store of `values` (before, after) to `loc` by thread `tid` (an atomic
    /// read-modify-write with `rmw`) in its element's flag history, with what it releases
    /// ([`Self::releasing`]), and what its thread knows after it.
    fn flag_write(&mut self, g: &mut GCtx, tid: u32, loc: Loc, values: (u64, u64), rmw: bool) {
        let Some(key) = know_key(tid, loc) else { return };
        let know = self.flag_know.get(&key).copied().unwrap_or_default();
        let rel = self.releasing(tid);
        let who = u64::from(self.block) << 32 | u64::from(tid);
        let (credit, after) = match loc {
            Loc::Global(b, i) => g.flags.store((b, i), values, (who, know, rmw), rel),
            Loc::Shared(at) => self.sflags.store(at, values, (who, know, rmw), rel),
            Loc::Local(..) => return,
        };
        if let Some(after) = after {
            self.flag_know.insert(key, after);
        }
        self.note_observed(tid, credit);
    }

    /// What a flag stored now by thread `tid` releases: nothing before its first fence;
    /// else its own release (the fence, which the store publishes), which covers what the
    /// barriers it had passed at the fence ordered before it for readers in its block (PTX's
    /// release is cumulative; the lanes of a warp write, `__syncwarp()`, one lane fences and
    /// sets the flag), and what it had acquired by that fence, itself or passed on by
    /// barriers (a thread waits for one flag, fences, and sets another: the fence acquires
    /// and releases, and PTX's causality order is transitive, so the second flag's readers
    /// are ordered after the first one's writer; a relay through two flags, review R8). For
    /// a reader in another block it covers the accesses of the writer's block before a
    /// block barrier the writer passed before its last device-wide fence
    /// ([`Release::gbar`]).
    fn releasing(&self, tid: u32) -> Releases {
        // The thread's fences at its last fence: an mbarrier arrival since counts as a
        // fence for its own release only (review R11: a flag stored after an arrival, with
        // no fence, was taken for a release of the accesses before the arrival).
        let fences = self.fence_at[tid as usize];
        if fences.any == 0 {
            return Releases::default();
        }
        let own = Release {
            block: self.block,
            tid,
            fences,
            counts: self.fence_counts[tid as usize],
            reach: EVERY_BLOCK,
            via: self.block,
            gbar: self.fence_gbar[tid as usize],
            relayed: false,
            left: false,
        };
        let Some((acquired, device)) = self.fence_carry.get(&tid) else { return std::iter::once(own).collect() };
        let block = self.block;
        // Each carried release is acquired by a reader in another block only with a
        // device-wide fence (`via`), and reaches none there when this thread's fence was
        // `__threadfence_block()`: that fence synchronises with no thread of another block.
        // (An earlier device-wide fence may have released some of them already; the
        // simulator looks at the last fence only, which can only credit less.)
        let level = self.s.levels.block_level();
        let carried = self.carried_with(tid, acquired.clone(), &self.fence_counts[tid as usize]);
        let relayed = carried.iter().map(|&r| {
            let mut r = r;
            r.via = block;
            if !device {
                r.reach = block;
            } else {
                // This thread acquired it, so it reaches this block; a device-wide fence
                // releases it to every block, whatever fences carried it here (review R13: a
                // release passed on twice with `__threadfence_block()` within its writer's
                // block, then with `__threadfence()` to another block, stayed narrowed).
                r.reach = EVERY_BLOCK;
            }
            if *device && r.block == block && landing_mbar(r.tid).is_none() && !r.left {
                // (One that came back from another block, `Release::left`, holds only what
                // a reader there may rely on, and stays so.)
                // Out of its writer's block through this device-wide fence: it orders for
                // readers anywhere what it ordered within the block (`Release::relayed`).
                r.relayed = true;
                r.gbar = r.gbar.max(r.counts[level]);
            }
            if r.block != block && !r.relayed && landing_mbar(r.tid).is_none() {
                // Acquired in another block than its writer's, with the rules for readers
                // there: a reader back in the writer's block gets no more (`Release::left`).
                // A relayed one was acquired within the writer's block by a thread whose
                // device-wide fence released it, which orders all of it.
                r.left = true;
            }
            r
        });
        // Their keys changed: sorted anew.
        std::iter::once(own).chain(relayed).collect()
    }

    /// Thread `tid` observed `credit` (a load or an update of a flag): its next fence
    /// acquires what of it reaches its block.
    fn note_observed(&mut self, tid: u32, credit: Releases) {
        if credit.is_empty() {
            return;
        }
        let block = self.block;
        self.race_state[tid as usize / 32] |= 1 << (tid % 32);
        let (pending, _) = self.sync.entry(tid).or_default();
        if pending.holds_all(&credit) {
            return;
        }
        if credit.iter().all(|r| r.reaches(block)) {
            pending.merge_all(&credit);
        } else {
            pending.merge_all(&credit.filtered(|r| r.reaches(block)));
        }
    }

    /// An asynchronous copy by lane `l` of warp `w` reads `count` elements from `src` until it
    /// completes: writes to them meanwhile are races (the hardware may read the source any
    /// time until the wait; the simulator read it when the copy was issued).
    pub(super) fn copy_started(&mut self, g: &mut GCtx, src: Loc, count: usize, size: u64, at: Lane, site: Site) {
        if !self.s.cfg.checks.races {
            return;
        }
        // Nothing writes a read-only buffer ([`Self::race`]), so no write can meet the copy.
        if let Loc::Global(b, _) = src
            && self.s.read_only[b]
        {
            return;
        }
        let tid = at.w as u32 * 32 + at.l as u32;
        let (func, site) = (site.func, site.access);
        for k in 0..count {
            if let Loc::Global(b, i) = src.advance(k, size) {
                let e = g.inflight.entry((b, i)).or_insert(((self.block, tid, func, site), 0));
                *e = ((self.block, tid, func, site), e.1 + 1);
            }
        }
    }

    /// An asynchronous copy by lane `at` starts writing `count` elements of `size` bytes of
    /// shared memory from `dst`. The hardware may write them any time until the thread's
    /// wait, so the copy's write is checked now, with the barriers the thread has passed at
    /// the issue (an access unordered with the issue may meet the data landing), and again
    /// at the wait ([`Self::dest_done`], then the landing write); in between, any access to
    /// the words is a race ([`Self::race`]). A write checked only at the wait would miss a
    /// read that a barrier orders after the issue but before the wait: a pipeline's slot
    /// read while the next fill already copies into it.
    pub(super) fn dest_started(&mut self, g: &mut GCtx, dst: Loc, count: usize, size: u64, at: Lane, site: Site) {
        if !self.s.cfg.checks.races {
            return;
        }
        let Loc::Shared(first) = dst else { return };
        // Recording changes nothing that orders an earlier access before this thread, so
        // each is judged once for all the elements ([`Self::order_memo`]), and for all the
        // copies of the thread's instruction (a TMA box's 16-byte chunks).
        let tid = at.w as u32 * 32 + at.l as u32;
        if self.order_memo_for != Some((tid, self.steps)) {
            self.order_memo.get_mut().clear();
            self.dest_memo.clear();
            self.order_memo_for = Some((tid, self.steps));
        }
        self.order_memo_on = true;
        let width = self.shared_width(site);
        for k in 0..count {
            let loc = dst.advance(k, size);
            if let Loc::Shared(byte) = loc
                && self.dest_write_quick(byte, width, at, site)
            {
                continue;
            }
            self.race(g, loc, Kind::Write, at, site, None);
        }
        self.order_memo_on = false;
        // Grown to the words copies reach, not sized to all of shared memory up front: a
        // block that copies a few words pays for a few.
        let words = super::block::flight_words(first, count, size);
        let reach = words.end.min(self.sflight.len() * 64);
        if self.sflight_by.len() < reach {
            self.sflight_by.resize(reach, (0, 0, 0));
        }
        for word in words {
            let (i, bit) = super::block::flight_bit(word);
            let Some(w) = self.sflight.get_mut(i) else { continue };
            if *w & bit == 0 {
                *w |= bit;
                self.sflight_words += 1;
            }
            self.sflight_by[word] = (tid, site.func, site.access);
        }
    }

    /// The bytes an access to shared memory at `site` covers: its memory's element (Prism
    /// never converts memory, so every access through a site has the width of that element
    /// type).
    fn shared_width(&self, site: Site) -> usize {
        let fc = &self.s.code.funcs[site.func as usize];
        fc.accesses.get(site.access as usize).map_or(1, |a| fc.mems[a.mem.index()].elem.size() as usize)
    }

    /// [`Self::race`] for the write of a copy's destination element at shared byte `byte`
    /// (`width` bytes) by lane `at`, when nothing but the shadow's cell is involved (no
    /// mbarrier, copy in flight, flag or wgmma in flight touches the bytes) and the cell
    /// takes it at once ([`SharedShadow::write_quick`]); false, having changed nothing, for
    /// `race` to take it.
    fn dest_write_quick(&mut self, byte: usize, width: usize, at: Lane, site: Site) -> bool {
        if self.valid_mbar_in(byte, width).is_some()
            || self.word_in_flight_of(byte, width).is_some()
            || !self.sflags.is_empty()
            || self.wg_flight.reading((byte, width)).is_some()
        {
            return false;
        }
        self.sshadow.cover(self.shared.len());
        let (now, passed) = self.lane_acc(at.w, at.l, site);
        let ord = orders_of!(self, now.tid);
        let memo = &self.order_memo;
        let also = |a: &Acc| memo.borrow_mut().get_or((a.tid, a.counts, a.fences), || ord.ordered(a, None));
        self.sshadow.write_quick(&self.s.levels, (byte, width), (now, &passed), also, &mut self.dest_memo)
    }

    /// The asynchronous copy writing `count` elements of `size` bytes from `dst` has landed
    /// (its thread reached the wait that completes it).
    pub(super) fn dest_done(&mut self, dst: Loc, count: usize, size: u64) {
        let Loc::Shared(first) = dst else { return };
        if self.sflight_words == 0 {
            return;
        }
        for word in super::block::flight_words(first, count, size) {
            let (i, bit) = super::block::flight_bit(word);
            if let Some(w) = self.sflight.get_mut(i)
                && *w & bit != 0
            {
                *w &= !bit;
                self.sflight_words -= 1;
            }
        }
    }

    /// Reports an access by thread `tid` at `(func, site)` to shared byte `byte`, which an
    /// asynchronous copy still in flight will write.
    fn report_in_flight(&mut self, g: &mut GCtx, tid: u32, (func, site): (u32, u32), byte: usize) {
        let (ctid, cfunc, csite) = self.sflight_by.get(byte / 4).copied().unwrap_or((tid, func, site));
        let copy = (Thread { block: self.block, thread: ctid }, cfunc, csite);
        self.report_copy_race(
            g,
            (tid, func, site),
            copy,
            "an access to the destination of an asynchronous copy that may not have landed yet",
            "this copy writes it at any time until it completes (its thread's wait, or the phase of the mbarrier it completes on)",
            "wait for the copy (the end of its `async` scope, the pipeline's wait, or the mbarrier's phase) and pass a barrier before the access",
        );
    }

    /// Reports a race of thread `tid`'s access at `(func, site)` with the asynchronous copy
    /// of `copy` (its thread and access site) still in flight: `what` the access does to
    /// the copy's memory, `how` the copy meets it, `fix` what to do.
    fn report_copy_race(
        &mut self,
        g: &mut GCtx,
        (tid, func, site): (u32, u32, u32),
        copy: (Thread, u32, u32),
        what: &str,
        how: &str,
        fix: &str,
    ) {
        let s = self.s;
        let fc = &s.code.funcs[func as usize];
        let name = &fc.mems[fc.accesses[site as usize].mem.index()].name;
        let (thread, cfunc, csite) = copy;
        let copy_span = s.code.funcs[cfunc as usize].accesses[csite as usize].span;
        let report = Report {
            kind: ReportKind::Race(crate::shadow::RaceKind::ReadWrite),
            message: format!("data race on `{name}`: {what}"),
            span: fc.accesses[site as usize].span,
            thread: Thread { block: self.block, thread: tid },
            other: Some((copy_span, Some(thread), how.into())),
            notes: vec![fix.into()],
        };
        g.report(s, report);
        if s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.stopped = true;
        }
    }

    /// The copy reading `count` elements from `src` has completed.
    pub(super) fn copy_done(&mut self, g: &mut GCtx, src: Loc, count: usize, size: u64) {
        if g.inflight.is_empty() {
            return;
        }
        for k in 0..count {
            if let Loc::Global(b, i) = src.advance(k, size)
                && let Some(e) = g.inflight.get_mut(&(b, i))
            {
                e.1 -= 1;
                if e.1 == 0 {
                    g.inflight.remove(&(b, i));
                }
            }
        }
    }

    /// Records for race detection the accesses of the lanes of `mask` of a fragment whose
    /// elements [`super::lanes::resolve`] found in bounds: `count` consecutive elements of
    /// `size` bytes from `at[l]` per lane, lane by lane and element by element, as the
    /// general path calls [`Self::race`]. `broadcast`: a scalar load, whose lanes reading
    /// the element the previous two lanes read are not recorded (as in the general path).
    /// An access that cannot conflict and fits its global element's compact slot (see
    /// [`crate::shadow::Global::quick`]), or a lane's whole vector access that fits its
    /// group's slot ([`crate::shadow::Global::quick_vec`]), is recorded directly; every other
    /// goes through
    /// [`Self::race`], so the reports are the general path's.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn race_lanes(
        &mut self,
        g: &mut GCtx,
        global: Option<usize>,
        (at, mask, count, size): (&[u64; 32], u32, u64, u64),
        kind: Kind,
        (fid, w): (u32, usize),
        site: Site,
        broadcast: bool,
    ) {
        if let Some(b) = global {
            let l = super::block::lanes_of(mask).next().unwrap_or(0);
            if self.skips_read_only(g, b, kind, Lane { fid, w, l }, site) {
                return;
            }
        }
        // Plain reads and writes need nothing but the shadow when no flag and no copy in
        // flight can be involved.
        let direct = match kind {
            Kind::Read => true,
            Kind::Write => g.flags.is_empty() && g.inflight.is_empty(),
            Kind::Atomic | Kind::AtomicRead => false,
        };
        if direct
            && let Some(b) = global
            && g.shadow.is_some()
        {
            return self.race_lanes_global(g, b, (at, mask, count), kind, (fid, w), site, broadcast);
        }
        // Plain shared reads, and plain shared writes when no shared flag can be overwritten,
        // need nothing of `race` but the cell and, on a conflict, the report.
        if global.is_none() && (kind == Kind::Read || (kind == Kind::Write && self.sflags.is_empty())) {
            return self.race_lanes_shared((g, (at, mask, count, size)), kind, (fid, w), site, broadcast);
        }
        let mut prev = Broadcast::default();
        for l in super::block::lanes_of(mask) {
            if broadcast && self.broadcast_skips(&mut prev, at[l], w, l) {
                continue;
            }
            for k in 0..count {
                let loc = match global {
                    Some(b) => Loc::Global(b, (at[l] + k) as usize),
                    None => Loc::Shared((at[l] + k * size) as usize),
                };
                self.race(g, loc, kind, Lane { fid, w, l }, site, None);
            }
        }
    }

    /// [`Self::race_lanes`] for plain shared accesses that need nothing but the shadow: what
    /// [`Self::race`] does for them (the same cells, in the same order, and the same report
    /// on a conflict), without the checks that cannot apply (sources of copies in flight
    /// are global, and the caller has seen that no shared flag can be overwritten); a byte
    /// a copy in flight will write goes through [`Self::race`], which reports it.
    fn race_lanes_shared(
        &mut self,
        (g, (at, mask, count, size)): (&mut GCtx, (&[u64; 32], u32, u64, u64)),
        kind: Kind,
        (fid, w): (u32, usize),
        site: Site,
        broadcast: bool,
    ) {
        let s = self.s;
        if !s.cfg.checks.races {
            return;
        }
        self.sshadow.cover(self.shared.len());
        self.sshadow
            .prefetch(super::block::lanes_of(mask).flat_map(|l| (0..count).map(move |k| (at[l] + k * size) as usize)));
        // Recording changes neither a copy's flight nor a barrier's validity, so whether any
        // copy is in flight or any barrier valid is seen once.
        let flying = self.sflight_words > 0;
        let barriers = self.valid_mbars > 0;
        let mut prev = Broadcast::default();
        for l in super::block::lanes_of(mask) {
            if broadcast && self.broadcast_skips(&mut prev, at[l], w, l) {
                continue;
            }
            let (now, passed) = self.lane_acc(w, l, site);
            for k in 0..count {
                let byte = (at[l] + k * size) as usize;
                if barriers && let Some(mbar) = self.valid_mbar_in(byte, size as usize) {
                    self.report_mbar_touched(g, kind, now.tid, (site.func, site.access), mbar);
                    return;
                }
                if flying && self.in_flight_bytes(byte, size as usize) {
                    self.race(g, Loc::Shared(byte), kind, Lane { fid, w, l }, site, None);
                    continue;
                }
                if let Some((a, rk)) = self.record_shared((byte, size as usize), now, &passed, kind) {
                    self.report_race(g, kind, now.tid, (site.func, site.access), (a.at(), rk), None);
                }
            }
        }
    }

    /// The race checks of one lane's reads of a wgmma group (`reads`: location and
    /// access site, in function `func`; `width` bytes each, the group's element), with the
    /// lane's access and barriers (`lane`: [`Self::lane_acc`]), which nothing in between
    /// changes. At the issue (`when`) they are checked, not recorded, and from then on a
    /// write to them races with the tensor cores ([`super::block::WgFlight`]); at the wait
    /// that completes the group they are recorded, not checked again
    /// ([`crate::shadow::SharedShadow::read_memo`] says why that is enough), and the flight
    /// ends. A read goes straight to the shadow, judged with one memo for the lane, when no
    /// copy in flight writes its bytes and it touches no barrier's bytes, which is all
    /// [`Self::race`] would do for it; otherwise through `race`, which checks and records it both times
    /// (recorded early, at the issue, it can only report more). One walk and one lookup
    /// of what orders the lane for all of them: a lane's reads are some hundreds per wgmma.
    pub(super) fn race_reads(
        &mut self,
        g: &mut GCtx,
        (now, passed): (Acc, &[u32; LEVELS]),
        (at, func): (Lane, u32),
        (reads, width): (&[(Loc, u64, u32)], usize),
        when: ReadAt,
    ) {
        if !self.s.cfg.checks.races || reads.is_empty() {
            return;
        }
        self.sshadow.cover(self.shared.len());
        let len = self.shared.len();
        let mut found = Vec::new();
        let mut slow = Vec::new();
        {
            let ord = orders_of!(self, now.tid);
            let also = |a: &Acc| ord.ordered(a, None);
            let mut memo = ReadMemo::default();
            for &(loc, _, access) in reads {
                let Loc::Shared(byte) = loc else {
                    slow.push((loc, access));
                    continue;
                };
                match when {
                    ReadAt::Issue => self.wg_flight.start(len, (byte, width), (now.tid, func as u16, access as u16)),
                    ReadAt::Wait => self.wg_flight.end((byte, width)),
                }
                // What `race` checks besides the shadow: a copy in flight over these bytes
                // (not merely anywhere: a pipeline has copies in flight all the time), a
                // valid mbarrier's bytes. Either sends the read there, to be reported.
                if self.word_in_flight_of(byte, width).is_some() || self.valid_mbar_in(byte, width).is_some() {
                    slow.push((loc, access));
                    continue;
                }
                let now = Acc { func: func as u16, site: access as u16, ..now };
                let lv = &self.s.levels;
                if let Some(c) = self.sshadow.read_memo(lv, (byte, width), (now, passed), also, (&mut memo, when)) {
                    found.push((access, c));
                }
            }
        }
        for (loc, access) in slow {
            self.race(g, loc, Kind::Read, at, Site { func, access }, None);
        }
        for (access, (a, rk)) in found {
            self.report_race(g, Kind::Read, now.tid, (func, access), (a.at(), rk), None);
        }
    }

    /// The issue check of a warp's wgmma reads `x` for every lane of `mask` at once: what
    /// [`Self::race_reads`] at the issue does lane by lane, when it would report nothing
    /// (docs/simulator.md, "How a wgmma's tiles are read"). Every element the warp read is
    /// looked up once: the writes they hold (as [`SharedShadow::issue_meets`] names them)
    /// are judged for each lane, and when every lane is ordered after every one of them,
    /// each lane is after the writes of its own elements, so the lane-by-lane check would
    /// find nothing; the reads' flight then starts with each word's count raised by the
    /// lanes that read it and named by the last of them, as lane by lane. Returns false,
    /// having changed nothing, when the lanes must go one by one: an element that a copy in
    /// flight or a valid mbarrier covers, a cell the shadow must look into further, a write
    /// some lane is not ordered after (a race, which the lane-by-lane check reports and
    /// names), or tiles that overlap.
    pub(super) fn race_reads_warp_issue(&mut self, w: usize, mask: u32, func: u32, x: &WarpRead) -> bool {
        if !self.s.cfg.checks.races {
            return true;
        }
        if x.tiles_overlap() {
            return false;
        }
        self.sshadow.cover(self.shared.len());
        let esz = x.elem.size() as usize;
        let mut keys = Vec::new();
        let each = self.tiles_touch_flight_or_mbar(x);
        for (e, _, _) in x.elems() {
            let byte = e.byte as usize;
            if each && (self.word_in_flight_of(byte, esz).is_some() || self.valid_mbar_in(byte, esz).is_some()) {
                return false;
            }
            match self.sshadow.issue_meets((byte, esz)) {
                None => return false,
                Some(None) => {}
                // A tile's elements mostly hold one write, in runs.
                Some(Some(k)) if keys.last() != Some(&k) => keys.push(k),
                Some(Some(_)) => {}
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let writes: Vec<Acc> = keys.into_iter().map(|k| self.sshadow.write_acc(k)).collect();
        let lv = &self.s.levels;
        for l in super::block::lanes_of(mask) {
            let (now, passed) = self.lane_acc(w, l, Site { func, access: 0 });
            let ord = orders_of!(self, now.tid);
            if !writes.iter().all(|a| lv.ordered(a, now.tid, &passed) || ord.ordered(a, None)) {
                return false;
            }
        }
        let len = self.shared.len();
        for (e, lanes, access) in x.elems() {
            let m = lanes & mask;
            if m != 0 {
                let last = w as u32 * 32 + (31 - m.leading_zeros());
                self.wg_flight.start_n(len, (e.byte as usize, esz), (last, func as u16, access as u16), m.count_ones());
            }
        }
        true
    }

    /// Whether a copy in flight or a valid mbarrier covers some byte between the first and
    /// the last of A's elements of warp read `x`, or of B's: only then can one of its
    /// elements meet either, and need looking at one by one.
    fn tiles_touch_flight_or_mbar(&self, x: &WarpRead) -> bool {
        x.ranges().iter().any(|&(lo, hi)| {
            lo < hi && (self.in_flight_bytes(lo, hi - lo) || self.valid_mbar_in(lo, hi - lo).is_some())
        })
    }

    /// The issue check of warp read `x` lane by lane for the lanes of `mask`, as
    /// [`Self::race_reads`] makes it for a lane that read its tiles itself: what
    /// [`Self::race_reads_warp_issue`] falls back to, and what precedes a lane's stop.
    pub(super) fn warp_read_issue_lanes(
        &mut self,
        g: &mut GCtx,
        (fid, w, func): (u32, usize, u32),
        mask: u32,
        x: &WarpRead,
    ) {
        let esz = x.elem.size() as usize;
        for l in super::block::lanes_of(mask) {
            let reads = x.lane_list(l);
            let (now, passed) = self.lane_acc(w, l, Site { func, access: 0 });
            self.race_reads(g, (now, &passed), (Lane { fid, w, l }, func), (&reads, esz), ReadAt::Issue);
        }
    }

    /// The wait's records of the warp reads `xs` (each with its function) that every lane
    /// of `mask` completes here, at once: what [`Self::race_reads`] at the wait does lane by
    /// lane, when every element sits in a cell of its own width (so each read is only
    /// recorded there). Each cell takes its lanes' reads in lane order, as lane by lane
    /// (a cell keeps only some reads, chosen by the order they come in), which needs the
    /// reads of different `xs` to touch different words; and each lane's record is interned
    /// once per site instead of once per element. Returns false, having changed nothing,
    /// when the lanes must go one by one.
    pub(super) fn race_reads_warp_wait(&mut self, w: usize, mask: u32, xs: &[(u32, &WarpRead)]) -> bool {
        if !self.s.cfg.checks.races {
            return true;
        }
        if xs.iter().any(|(_, x)| x.tiles_overlap()) {
            return false;
        }
        self.sshadow.cover(self.shared.len());
        let more = 2 * mask.count_ones() as usize * xs.len();
        // Each read's words stamped with its position in `xs` past this call's epoch.
        let n = xs.len() as u32;
        if self.wg_stamp.len() != self.shared.len().div_ceil(4) || self.wg_epoch.checked_add(2 * n).is_none() {
            self.wg_stamp = vec![0; self.shared.len().div_ceil(4)];
            self.wg_epoch = 0;
        }
        let epoch = self.wg_epoch + 1;
        self.wg_epoch += n;
        let mut cells = Vec::with_capacity(xs.iter().map(|(_, x)| x.elem_count()).sum());
        for (i, (_, x)) in xs.iter().enumerate() {
            let esz = x.elem.size() as usize;
            let mine = epoch + i as u32;
            let each = self.tiles_touch_flight_or_mbar(x);
            for (e, _, _) in x.elems() {
                let byte = e.byte as usize;
                for word in byte / 4..(byte + esz).div_ceil(4) {
                    let st = &mut self.wg_stamp[word];
                    if (epoch..epoch + n).contains(st) && *st != mine {
                        return false;
                    }
                    *st = mine;
                }
                if each && (self.word_in_flight_of(byte, esz).is_some() || self.valid_mbar_in(byte, esz).is_some()) {
                    return false;
                }
                match self.sshadow.exact_cell((byte, esz), more) {
                    Some(c) => cells.push(c),
                    None => return false,
                }
            }
        }
        let mut cells = cells.into_iter();
        for &(func, x) in xs {
            let esz = x.elem.size() as usize;
            // Every lane of the mask gets its records; the elements' lanes are among them.
            let mut recs = [[ReadRec::NONE; 2]; 32];
            for l in super::block::lanes_of(mask) {
                let (now, _) = self.lane_acc(w, l, Site { func, access: 0 });
                for (i, access) in x.access.iter().enumerate() {
                    recs[l][i] = self.sshadow.read_rec(&Acc { func: func as u16, site: *access as u16, ..now });
                }
            }
            // The reads of an element are its lanes' records of its access: within this
            // read, the lanes and the access name them.
            let mut memo = ReadsMemo::default();
            for (e, lanes, access) in x.elems() {
                let m = lanes & mask;
                self.wg_flight.end_n((e.byte as usize, esz), m.count_ones());
                let c = cells.next().expect("one cell per element, found above");
                let i = usize::from(access != x.access[0]);
                let rs = super::block::lanes_of(m).map(|l| recs[l][i]);
                self.sshadow.record_reads(c, (&mut memo, u64::from(m) << 1 | i as u64), rs);
            }
        }
        true
    }

    /// Whether lane `l` of warp `w`, reading `at` after the lanes `run` has seen in this
    /// instruction, needs no race bookkeeping: the previous two lanes of its run read the
    /// same element and are ordered with every other thread exactly as it is, so any
    /// access that conflicts with it conflicts with one of them, which are different
    /// threads. Lanes are ordered alike when they have arrived at and passed the same
    /// barriers, every barrier unit below the block is a whole number of warps, and the
    /// program has no fence and no mbarrier: those order threads one by one (a release by
    /// one lane acquired by another thread, before or after the read).
    /// Until review R75 (2026-12-03) every third lane reading an element was skipped, and
    /// a lane that had not acquired a flag its neighbours had, or had not fenced before its
    /// own release, raced unseen.
    #[inline]
    pub(super) fn broadcast_skips<T: PartialEq + Copy>(
        &self,
        run: &mut Broadcast<T>,
        at: T,
        w: usize,
        l: usize,
    ) -> bool {
        let warp = &self.warps[w];
        // Equal counts say the same only of units that hold both lanes: with barriers over
        // units narrower than a warp, two lanes of one warp may be in different units
        // (review R76: lanes of two `thread[8]` units, one skipped, raced unseen).
        let alike = |k: usize| {
            self.s.code.lanes_alike
                && self.s.levels.whole_warps()
                && warp.arrived[l] == warp.arrived[k]
                && warp.counts[l] == warp.counts[k]
        };
        if run.at == Some(at) && alike(run.first) {
            run.count += 1;
        } else {
            *run = Broadcast { at: Some(at), count: 1, first: l };
        }
        run.count > 2
    }

    /// The access lane `l` of warp `w` makes at `site`, for race detection (its thread's
    /// barrier arrivals and fences), and the barriers its thread has passed: the same for
    /// [`Self::race`] and the fast paths of [`Self::race_lanes`].
    #[inline]
    pub(super) fn lane_acc(&self, w: usize, l: usize, site: Site) -> (Acc, [u32; LEVELS]) {
        let tid = w as u32 * 32 + l as u32;
        let now = Acc {
            tid,
            counts: self.warps[w].arrived[l],
            func: site.func as u16,
            site: site.access as u16,
            fences: self.fences[tid as usize],
            atomic: false,
            phase: Phase::NONE,
        };
        (now, self.warps[w].counts[l])
    }

    /// `mbarrier_init` and `mbarrier_inval` by lane `at`, recorded for race detection as a
    /// plain write of the barrier's 8 bytes (the barrier's own operations are not recorded:
    /// they are ordered by the barrier itself). Memory becomes an mbarrier at its init and
    /// stops being one at its inval (PTX ISA: an mbarrier's memory may be used for another
    /// purpose only after `mbarrier.inval`), so another thread's plain access to those
    /// bytes with no barrier between it and either one races with it: a pipeline's
    /// barriers reused as an array by a later scope before the invalidation is ordered
    /// (docs/soundness.md §4.3.2), or memory still in use made a barrier.
    pub(super) fn mbar_bytes_written(&mut self, g: &mut GCtx, byte: usize, at: Lane, func: u32, access: u32) {
        // The site is the barrier's element of its `uint64` array: the write covers its 8
        // bytes, and meets any earlier access to any of them.
        self.mbar_op = true;
        self.race(g, Loc::Shared(byte), Kind::Write, at, Site { func, access }, None);
        self.mbar_op = false;
    }

    /// Any other operation on the mbarrier at shared byte `byte` by lane `at` (a wait too),
    /// recorded for race detection as an atomic update of its 8 bytes: its initialisation
    /// must be ordered before it and its invalidation after it ([`Self::mbar_bytes_written`];
    /// an update, not a read, since a location keeps only four reads and every consumer
    /// warp waits on every full barrier).
    pub(super) fn mbar_operated(&mut self, g: &mut GCtx, byte: usize, at: Lane, func: u32, access: u32) {
        self.mbar_op = true;
        self.race(g, Loc::Shared(byte), Kind::Atomic, at, Site { func, access }, None);
        self.mbar_op = false;
    }

    /// Records access `now` to the `size` bytes of shared memory from `byte` in the cells
    /// that hold them (whose shadow is allocated) and returns the conflict they find that
    /// nothing orders ([`Self::orders`]), for [`Self::race`] and [`Self::race_lanes`] alike.
    #[inline]
    fn record_shared(
        &mut self,
        (byte, size): (usize, usize),
        now: Acc,
        passed: &[u32; LEVELS],
        kind: Kind,
    ) -> Option<(Acc, RaceKind)> {
        // A write to what a wgmma in flight reads races with the tensor cores, whatever
        // orders it after the issue (`WgFlight`).
        let flight = match kind {
            Kind::Write | Kind::Atomic => self.wg_flight.reading((byte, size)).map(flight_acc),
            Kind::Read | Kind::AtomicRead => None,
        };
        let ord = orders_of!(self, now.tid);
        let memo = self.order_memo_on.then_some(&self.order_memo);
        let also = |a: &Acc| match memo {
            Some(m) => m.borrow_mut().get_or((a.tid, a.counts, a.fences), || ord.ordered(a, None)),
            None => ord.ordered(a, None),
        };
        let conflict = self.sshadow.access_with(&self.s.levels, (byte, size), (now, passed), kind, also);
        conflict.or(flight.map(|a| (a, RaceKind::WgmmaFlight)))
    }

    /// [`Self::race_lanes`] for plain accesses to global buffer `b` that need nothing but
    /// the shadow: each lane's access is recorded directly when its slots take it, and
    /// through [`Self::race`] otherwise.
    #[allow(clippy::too_many_arguments)]
    fn race_lanes_global(
        &mut self,
        g: &mut GCtx,
        b: usize,
        (at, mask, count): (&[u64; 32], u32, u64),
        kind: Kind,
        (fid, w): (u32, usize),
        site: Site,
        broadcast: bool,
    ) {
        let mut prev = Broadcast::default();
        // The moment of the last lane looked up, with the barrier counts and fences it was
        // looked up for: everything else in a moment (function, site, block, grid epoch,
        // kind, no atomic flag) is the same for every lane of this call, so lanes with the
        // same counts and fences (all of them, usually) have the same moment.
        let mut moment: Option<([u32; LEVELS], Fences, Option<MomentId>)> = None;
        for l in super::block::lanes_of(mask) {
            if broadcast && self.broadcast_skips(&mut prev, at[l], w, l) {
                continue;
            }
            let (now, _) = self.lane_acc(w, l, site);
            let (tid, counts, fences) = (now.tid, now.counts, now.fences);
            let Some(shadow) = g.shadow.as_mut() else { unreachable!("checked by the caller") };
            let m = match moment {
                Some((c, f, m)) if c == counts && f == fences => m,
                _ => {
                    let m = shadow.moment(&now, self.block, g.grid_epoch, kind);
                    moment = Some((counts, fences, m));
                    m
                }
            };
            let i = at[l] as usize;
            let Some(m) = m else {
                // The moment table is full: the general race check records them.
                for e in i..i + count as usize {
                    self.race(g, Loc::Global(b, e), kind, Lane { fid, w, l }, site, None);
                }
                continue;
            };
            // A vector access its group's slot holds is recorded at once (the slot stands for
            // the group's element slots, which would all take it alike).
            if count > 1 && shadow.quick_vec(b, i, count as usize, m, tid) {
                continue;
            }
            for e in i..i + count as usize {
                if g.shadow.as_mut().is_some_and(|shadow| shadow.quick_at(b, e, m, tid)) {
                    continue;
                }
                self.race(g, Loc::Global(b, e), kind, Lane { fid, w, l }, site, None);
            }
        }
    }

    /// Records an access for race detection and reports a conflict. `counts` overrides the
    /// thread's barrier counts (an asynchronous copy's write belongs to when it was issued).
    pub(super) fn race(
        &mut self,
        g: &mut GCtx,
        loc: Loc,
        kind: Kind,
        at: Lane,
        site: Site,
        counts: Option<([u32; LEVELS], [u32; LEVELS])>,
    ) {
        let (w, lane, func, site) = (at.w, at.l, site.func, site.access);
        let s = self.s;
        if !s.cfg.checks.races {
            return;
        }
        if let Loc::Global(b, _) = loc
            && self.skips_read_only(g, b, kind, at, Site { func, access: site })
        {
            return;
        }
        let (mut now, mut passed) = self.lane_acc(w, lane, Site { func, access: site });
        // An asynchronous copy's write: the counts when it was issued.
        if let Some((p, a)) = counts {
            (now.counts, passed) = (a, p);
        }
        // An atomic of safe code is checked against the element's other atomics of safe
        // code too ([`crate::shadow::Phases`]).
        if matches!(kind, Kind::Atomic | Kind::AtomicRead) {
            now.phase = s.code.funcs[func as usize].phases.get(site as usize).copied().unwrap_or_default();
        }
        let tid = now.tid;
        // A write to the source of a copy still in flight.
        if matches!(kind, Kind::Write | Kind::Atomic)
            && let Loc::Global(b, i) = loc
            && let Some(&((cblock, ctid, cfunc, csite), _)) = g.inflight.get(&(b, i))
        {
            self.report_copy_race(
                g,
                (tid, func, site),
                (Thread { block: cblock, thread: ctid }, cfunc, csite),
                "a write to the source of an asynchronous copy that may not have read it yet",
                "this copy reads it at any time until its `async` scope ends",
                "write the source after the copy's `async` scope has ended",
            );
            return;
        }
        let width = match loc {
            Loc::Shared(_) => self.shared_width(Site { func, access: site }),
            _ => 1,
        };
        // Any access but an mbarrier operation to a valid mbarrier's bytes (review R18 F3).
        if let Loc::Shared(at) = loc
            && let Some(mbar) = self.valid_mbar_in(at, width)
        {
            self.report_mbar_touched(g, kind, tid, (func, site), mbar);
            return;
        }
        // An access to the destination of a copy in flight.
        if let Loc::Shared(at) = loc
            && let Some(word) = self.word_in_flight_of(at, width)
        {
            self.report_in_flight(g, tid, (func, site), word * 4);
            return;
        }
        // A plain write over a flag ends what it published.
        if kind == Kind::Write {
            match loc {
                Loc::Global(b, i) if !g.flags.is_empty() => g.flags.clear((b, i)),
                Loc::Shared(at) if !self.sflags.is_empty() => self.sflags.clear(at),
                _ => {}
            }
        }
        let (conflict, other_block) = match loc {
            Loc::Global(b, i) => {
                let Some(shadow) = g.shadow.as_mut() else { return };
                let ord = self.orders(tid);
                let also = |e: &Acc, b: Option<u32>| ord.ordered(e, b);
                match shadow.access_with(&s.levels, (b, i), (self.block, g.grid_epoch), (now, &passed), kind, also) {
                    Some((earlier, k, other)) => (Some((earlier, k)), other),
                    None => (None, None),
                }
            }
            Loc::Shared(at) => {
                self.sshadow.cover(self.shared.len());
                (self.record_shared((at, width), now, &passed, kind).map(|(a, k)| (a.at(), k)), None)
            }
            Loc::Local(..) => return,
        };
        let Some((earlier, rk)) = conflict else { return };
        self.report_race(g, kind, tid, (func, site), (earlier, rk), other_block);
    }

    /// Reports a conflict the shadow found for an access of `kind` by thread `tid` at
    /// `(func, site)` with `earlier` (of block `other_block`, or of this block when `None`).
    /// The shadow has already skipped the records that a release this thread acquired
    /// orders ([`Self::orders`]); until 2026-11-29 this checked only the one record the
    /// shadow returned, and returned when it was ordered, so the location's other records
    /// went unchecked.
    fn report_race(
        &mut self,
        g: &mut GCtx,
        kind: Kind,
        tid: u32,
        (func, site): (u32, u32),
        (earlier, rk): (crate::shadow::Site, crate::shadow::RaceKind),
        other_block: Option<u32>,
    ) {
        let s = self.s;
        let landing = other_block.is_none().then(|| landing_mbar(earlier.tid)).flatten();
        let fc = &s.code.funcs[func as usize];
        let ef = &s.code.funcs[earlier.func as usize];
        let a = &fc.accesses[site as usize];
        let e = &ef.accesses[earlier.site as usize];
        let name = &fc.mems[a.mem.index()].name;
        let earlier_thread = match (other_block, landing) {
            (Some(u32::MAX), _) => None,
            (Some(b), _) => Some(Thread { block: b, thread: earlier.tid }),
            // The copy's write is the mbarrier's, not a thread's: name the thread that
            // issued it.
            (None, Some(mbar)) => self.landings.get(&mbar).map(|l| Thread { block: self.block, thread: l.issuer }),
            (None, None) => Some(Thread { block: self.block, thread: earlier.tid }),
        };
        let scope = if other_block.is_some() { "different blocks" } else { "threads of one block" };
        let what = match (kind, rk) {
            (_, RaceKind::AtomicPhase) => "atomic",
            (Kind::Read, _) => "read",
            _ => "write",
        };
        let message = if rk == RaceKind::AtomicPhase {
            format!("data race on `{name}`: atomics of safe code by {scope}, at different places, in no order")
        } else if rk == RaceKind::WgmmaFlight {
            format!("data race on `{name}`: a write while a wgmma in flight may read it")
        } else {
            format!("data race on `{name}`: {} accesses by {scope} with no barrier between them", rk.describe())
        };
        let report = Report {
            kind: ReportKind::Race(rk),
            message,
            span: a.span,
            thread: Thread { block: self.block, thread: tid },
            other: Some((e.span, earlier_thread, format!("conflicts with this earlier access (before this {what})"))),
            notes: {
                let mut notes = race_notes(rk, other_block.is_some());
                if landing.is_some() {
                    notes.push(
                        "this TMA copy completes on an mbarrier: its data is ordered only before a thread that waited for the phase it completed (`mbarrier_wait_parity`), or that a barrier orders after such a wait"
                            .into(),
                    );
                }
                notes
            },
        };
        g.report(s, report);
        if s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.stopped = true;
        }
    }

    /// Whether an access of `kind` to global buffer `b` by lane `at` at `site` is left out of
    /// the race check because nothing writes the buffer (docs/simulator.md, Speed (9)): a read
    /// is not recorded, and a write or atomic update, which the kernel's access sites say
    /// cannot happen, is reported ([`Self::report_read_only_written`]).
    fn skips_read_only(&mut self, g: &mut GCtx, b: usize, kind: Kind, at: Lane, site: Site) -> bool {
        if !self.s.read_only[b] {
            return false;
        }
        if matches!(kind, Kind::Write | Kind::Atomic) {
            self.report_read_only_written(g, b, at, site);
        }
        true
    }

    /// Reports a write or atomic update by lane `at` at `site` to global buffer `b`, which the
    /// kernel's access sites say nothing writes (`not-simulated`), and stops the launch. The
    /// race detector records no reads of such a buffer, so it could not check the write.
    /// Programs the checker accepted never come here (a store, an atomic or a copy into a
    /// `ptr(const(T))` is `store-through-const`, and a call records a write on every
    /// argument its callee may write); IR text whose access sites do not describe its
    /// stores may.
    fn report_read_only_written(&mut self, g: &mut GCtx, b: usize, at: Lane, site: Site) {
        let s = self.s;
        let fc = &s.code.funcs[site.func as usize];
        let name = s.buffer_names.get(b).map_or("?", String::as_str);
        let report = Report {
            kind: ReportKind::NotSimulated,
            message: format!(
                "a write to the buffer `{name}`, which no access site of the kernel writes: the simulator does not record reads of such a buffer, so it cannot check this write for races"
            ),
            span: fc.accesses.get(site.access as usize).map(|a| a.span).unwrap_or_default(),
            thread: Thread { block: self.block, thread: at.w as u32 * 32 + at.l as u32 },
            other: None,
            notes: vec!["the program's access sites do not describe its stores (IR written by hand?); run with `--checks uniformity` to run it without race checks".into()],
        };
        self.fatal(g, report);
    }

    /// Reports an access of `kind` by thread `tid` at `(func, site)` to the bytes of the
    /// valid mbarrier at shared byte `mbar` (`mbarrier-misuse`), and stops the block.
    fn report_mbar_touched(&mut self, g: &mut GCtx, kind: Kind, tid: u32, (func, site): (u32, u32), mbar: usize) {
        let s = self.s;
        let fc = &s.code.funcs[func as usize];
        let a = fc.accesses.get(site as usize);
        let name = a.map_or("shared memory".to_string(), |a| format!("`{}`", fc.mems[a.mem.index()].name));
        let what = match kind {
            Kind::Read => "read",
            Kind::AtomicRead => "atomic read",
            Kind::Write => "write",
            Kind::Atomic => "atomic update",
        };
        let report = Report {
            kind: ReportKind::MbarrierMisuse,
            message: format!(
                "{what} of {name} at the bytes of the valid mbarrier at byte {mbar} of shared memory: only mbarrier operations may touch an initialised mbarrier"
            ),
            span: a.map(|a| a.span).unwrap_or_default(),
            thread: Thread { block: self.block, thread: tid },
            other: None,
            notes: vec![
                "the barrier's memory may be used for something else only after `mbarrier_inval`, which every thread that operated on it must be ordered before"
                    .into(),
            ],
        };
        self.fatal(g, report);
    }

    /// Reports a read of shared memory that no thread of the block wrote before the block
    /// ended (or, for an atomic read-modify-write, before it ran). Collected like a race
    /// (one report per site).
    pub(super) fn report_unwritten(&mut self, g: &mut GCtx, r: UnwrittenRead) {
        let s = self.s;
        let fc = &s.code.funcs[r.func as usize];
        let site = fc.accesses.get(r.access as usize);
        let what = match site {
            Some(a) => format!("`{}`", fc.mems[a.mem.index()].name),
            None => "shared memory".into(),
        };
        // Bytes every one of which had been written when the read ran, but not as this
        // array's, were another array's: an earlier scope's, or a callee's scratch.
        let other = r.other;
        let report = Report {
            kind: ReportKind::UninitializedRead,
            message: if other {
                format!(
                    "{} of {what} at byte {} of shared memory, which this array had not written before it (another array had)",
                    r.by.describe(),
                    r.byte
                )
            } else {
                format!(
                    "{} of {what} at byte {} of shared memory, which no thread of this block had written before it",
                    r.by.describe(),
                    r.byte
                )
            },
            span: site.map(|a| a.span).unwrap_or_default(),
            thread: Thread { block: self.block, thread: r.tid },
            other: None,
            notes: vec![if other {
                "a new shared array's elements hold nothing until they are written as its own: an earlier scope's array or a called function's scratch, which reuse these bytes, wrote them, and what they left is not this array's (docs/language.md §5)"
                    .into()
            } else {
                "shared memory is not initialised when a block starts: on a GPU this read returns whatever was there before"
                    .into()
            }],
        };
        g.report(s, report);
        if s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.stopped = true;
        }
    }
}

/// How many different sets of other threads' wait acquisitions a release carries on at
/// most ([`BlockSim::carried_with`]): a warp-specialised gemm's consumer warps hold one each.
const CARRIED_WAIT_SETS: usize = 8;

/// What one lane's wait made of its set of acquired releases ([`BlockSim::acquire`]).
pub(super) struct AcquireMemo {
    phase: PhaseReleases,
    before: Releases,
    after: Releases,
}

/// Publishes `release` (`None`: the writer had not fenced) at flag location `key`. A store
/// replaces what the location published (with its own release, or with nothing); a
/// read-modify-write adds its release to the location's release sequence, replacing an
/// earlier one of the same thread, and without one leaves the sequence as it was
/// ([`BlockSim::publish_rmw`]).
/// Thread `tid`'s wait for an mbarrier phase, made with barrier arrivals `counts`, as an
/// access record: a barrier it arrived at afterwards orders it before the threads that
/// passed that barrier ([`crate::shadow::Levels::ordered`]).
pub(super) fn wait_acc(tid: u32, counts: [u32; LEVELS]) -> Acc {
    Acc { tid, counts, func: 0, site: 0, fences: Fences::default(), atomic: false, phase: Phase::NONE }
}

/// The key of `loc` for thread `tid` in [`BlockSim::flag_know`].
fn know_key(tid: u32, loc: Loc) -> Option<(u32, usize, usize)> {
    match loc {
        Loc::Global(b, i) => Some((tid, b, i)),
        Loc::Shared(at) => Some((tid, usize::MAX, at)),
        Loc::Local(..) => None,
    }
}

/// What a thread had acquired (with fences, or by waiting for mbarrier phases) when it
/// made one set of barrier arrivals ([`BlockSim::fence`], [`BlockSim::acquire`]): all of
/// it, not only what that fence or wait added, since a thread's acquisitions only grow. The
/// acquire is cumulative (PTX's causality order is transitive, and a barrier orders the
/// accesses before it in each thread before the other threads' accesses after it): what
/// the releases order before the acquiring thread is ordered before every thread of the
/// block that passes a barrier the acquiring thread arrived at afterwards (the last block
/// of a reduction: one thread takes the ticket and fences, a barrier, then every thread
/// reads the other blocks' parts; one lane waits for an mbarrier phase, `__syncwarp()`,
/// another lane writes what the phase's arrivals read). The TMA copies a wait acquires are
/// also passed on by [`Landings::acquired`].
#[derive(Clone, Debug)]
pub(crate) struct Acquisition {
    /// The acquiring thread.
    pub tid: u32,
    /// Its barrier arrivals then.
    pub arrived: [u32; LEVELS],
    /// Everything it had acquired by then.
    pub releases: Releases,
}

/// How many sets of barrier arrivals a thread keeps acquisitions for
/// ([`BlockSim::acquisitions`]); the oldest go first. Dropping one can only report a race
/// that it ordered, never miss one: a thread that passed only the barriers between the
/// dropped one and the next is not ordered after the next.
const ACQUISITIONS: usize = 64;

/// Notes that thread `tid`, with barrier arrivals `arrived`, had acquired `acquired` (all
/// of it) in its `list`: in place of the entry with the same arrivals (which barriers
/// cannot tell apart, and which held less), or as the newest entry.
fn note_acquisition(list: &mut Vec<Acquisition>, tid: u32, arrived: [u32; LEVELS], acquired: &Releases) {
    match list.last_mut() {
        Some(x) if x.arrived == arrived => x.releases = acquired.clone(),
        _ => {
            if list.len() >= ACQUISITIONS {
                list.remove(0);
            }
            list.push(Acquisition { tid, arrived, releases: acquired.clone() });
        }
    }
}

/// The latest of one thread's acquisitions (oldest first) that a barrier orders before
/// thread `tid`, which has passed `passed`: it holds everything the earlier ones do. Their
/// arrivals only grow, so the ones ordered before `tid` are a prefix of the list, found by
/// bisection: a pipeline's consumers each note an acquisition at every stage, and every
/// arrival looks through all of them (`carried_with`).
fn latest_ordered<'a>(
    levels: &Levels,
    list: &'a [Acquisition],
    tid: u32,
    passed: &[u32; LEVELS],
) -> Option<&'a Acquisition> {
    let n = list.partition_point(|a| levels.ordered(&acquirer(a), tid, passed));
    n.checked_sub(1).map(|i| &list[i])
}

/// Notes in `seen` ([`BlockSim::landing_seen`]) that thread `tid` of block `block` acquired
/// `r`, if it is a release of TMA copies landed in that block, which a thread there may
/// acquire.
fn note_landing(seen: &mut super::FastMap<(u32, usize), u32>, tid: u32, block: u32, r: &Release) {
    if let Some(mbar) = landing_mbar(r.tid)
        && r.block == block
        && r.reaches(block)
    {
        let g = seen.entry((tid, mbar)).or_insert(0);
        *g = (*g).max(landing_gen(r.fences));
    }
}

/// The latest generation of TMA copies among thread `t`'s waits for them (`waits`,
/// oldest first: [`Landings::acquired`]) that a barrier orders before thread `tid`, which
/// has passed `passed`. Both the generations and the barrier arrivals only grow along the
/// list, so the waits ordered before `tid` are a prefix of it, found by bisection rather
/// than by looking at every wait of every thread (every arrival of a pipeline's consumer
/// asks, `BlockSim::carried_with`).
fn latest_wait(
    levels: &Levels,
    t: u32,
    waits: &std::collections::VecDeque<(u32, [u32; LEVELS])>,
    tid: u32,
    passed: &[u32; LEVELS],
) -> Option<u32> {
    let n = waits.partition_point(|&(_, counts)| levels.ordered(&wait_acc(t, counts), tid, passed));
    n.checked_sub(1).map(|i| waits[i].0)
}

/// A wgmma read in flight ([`super::block::WgFlight::reading`]) as the access a write meets.
fn flight_acc((tid, func, site): (u32, u16, u16)) -> Acc {
    Acc { tid, counts: [0; LEVELS], func, site, fences: Fences::default(), atomic: false, phase: Phase::NONE }
}

/// What kind of access a site makes, for race detection (`None`: never checked).
///
/// A volatile access (unsafe code) counts as an atomic one: volatile and atomic accesses
/// never race with each other (flags of message passing), but one and a plain access by
/// another thread that no barrier or release/acquire orders do. Until 2026-11-29 volatile
/// accesses were not checked at all, and a `volatile_store` in unsafe code raced unseen
/// with safe code's plain accesses, which inference does not order against it
/// (docs/soundness.md §4.5).
pub(super) fn race_kind(fc: &FuncCode, access: u32, writes: bool) -> Option<Kind> {
    match fc.accesses.get(access as usize).map(|a| a.kind) {
        Some(AccessKind::Atomic | AccessKind::Volatile) => Some(if writes { Kind::Atomic } else { Kind::AtomicRead }),
        Some(AccessKind::Read) => Some(Kind::Read),
        Some(AccessKind::Write | AccessKind::AsyncWrite) => Some(Kind::Write),
        None => Some(if writes { Kind::Write } else { Kind::Read }),
    }
}

fn race_notes(kind: crate::shadow::RaceKind, blocks: bool) -> Vec<String> {
    if kind == RaceKind::WgmmaFlight {
        return vec![
            "the tensor cores read a wgmma's tiles at any moment from its issue to the `wgmma_wait` that completes its group (that of every thread of the warpgroup): no barrier orders a write after those reads, only that wait"
                .into(),
            "wait for the group (`wgmma_wait`) in every thread that issued it, then pass a barrier, before writing the tile".into(),
        ];
    }
    if kind == RaceKind::AtomicPhase {
        return vec![
            "an atomic update and an atomic that uses its result (or two updates that do not commute), at different places of safe code, are not ordered: inference orders such phases within a unit's own elements, so these threads met through a view whose index function is not injective"
                .into(),
            "order them (a barrier, or a grid barrier between blocks), or give each unit elements of its own".into(),
        ];
    }
    let mut notes = Vec::new();
    if blocks {
        notes.push(
            "blocks are not ordered with each other: only atomics (or a grid barrier) may share memory between them"
                .into(),
        );
    } else {
        notes.push(
            "accesses by different threads must be separated by a barrier whose unit contains both threads".into(),
        );
    }
    if kind == crate::shadow::RaceKind::AtomicPlain {
        notes.push(
            "an atomic (or volatile) access is not ordered with a plain access to the same element by another thread"
                .into(),
        );
    }
    notes
}

/// An acquisition as an access of its thread at its fence, for [`Levels::ordered`].
fn acquirer(a: &Acquisition) -> Acc {
    Acc {
        tid: a.tid,
        counts: a.arrived,
        func: 0,
        site: 0,
        fences: Fences::default(),
        atomic: false,
        phase: Phase::NONE,
    }
}

/// What orders earlier accesses before thread `tid`'s access besides barriers
/// ([`BlockSim::orders`]): references only, looked into when the shadow asks about a record
/// that barriers leave unordered (rare), so that building it costs an access nothing.
struct Orders<'x> {
    /// Per thread, the releases it has observed and those it has acquired.
    sync: &'x HashMap<u32, (Releases, Releases)>,
    /// Per thread, what it had acquired at its fences, and when.
    acquisitions: &'x HashMap<u32, Vec<Acquisition>>,
    /// Per thread, what it had acquired at its mbarrier waits, and when.
    wait_acquisitions: &'x HashMap<u32, Vec<Acquisition>>,
    /// Whether any of them holds a release of another block ([`BlockSim::acquired_foreign`]).
    acquired_foreign: bool,
    /// Per thread and mbarrier, the latest landing it acquired ([`BlockSim::landing_seen`]).
    landing_seen: &'x super::FastMap<(u32, usize), u32>,
    landings: &'x HashMap<usize, Landings>,
    levels: &'x Levels,
    block: u32,
    tid: u32,
    /// The barriers the thread has passed.
    passed: &'x [u32; LEVELS],
}

impl Orders<'_> {
    /// Whether `earlier` (of block `other_block`, or of this block when `None`) is ordered
    /// before the access: published through a fence and a flag this thread observed and
    /// then fenced for, or an mbarrier phase it waited for (whose arrivals release, besides
    /// their threads' own accesses, those that barriers ordered before them:
    /// [`Release::orders`]), or a TMA copy landed through an mbarrier, which a thread that
    /// waited for it has passed on through a barrier.
    #[inline]
    fn ordered(&self, earlier: &Acc, other_block: Option<u32>) -> bool {
        let earlier_block = other_block.unwrap_or(self.block);
        // A landing is ordered only by a release of its own pseudo-thread (`Release::orders`):
        // looked up by its key rather than among all the releases, which a pipeline's
        // producer holds one of per consumer thread.
        let landing = landing_mbar(earlier.tid);
        if let Some(mbar) = landing
            && other_block.is_none()
            && self.landing_seen.get(&(self.tid, mbar)).is_some_and(|&g| g > landing_gen(earlier.fences))
        {
            return true;
        }
        let landing = landing.is_some();
        let orders = |set: &Releases| {
            let own = |r: &Release| r.orders(self.levels, self.block, earlier_block, earlier);
            // The earlier access's own thread's release first: usually the one that orders
            // it (a consumer that reads a slot and arrives on its empty barrier), found by
            // its key instead of after half of the block's releases (a producer that waited
            // for 128 consumer arrivals holds 128, and judged every reader of the slot it
            // refills: a sixth of a wgmma gemm's checked run). `any` is the same whatever
            // the order.
            set.of_writer(earlier_block, earlier.tid).any(own) || (!landing && set.of_block(earlier_block).any(own))
        };
        if let Some((_, acquired)) = self.sync.get(&self.tid)
            && orders(acquired)
        {
            return true;
        }
        // Another thread's acquisition that a barrier passes on to this one. Only releases of
        // this block, unless some thread acquired another block's.
        if (earlier_block == self.block || self.acquired_foreign)
            && self.acquisitions.iter().chain(self.wait_acquisitions).any(|(&u, list)| {
                u != self.tid
                    && latest_ordered(self.levels, list, self.tid, self.passed).is_some_and(|a| orders(&a.releases))
            })
        {
            return true;
        }
        other_block.is_none() && !self.landings.is_empty() && self.landing_ordered_by_a_wait(&earlier.at())
    }

    /// Whether a thread that waited for the copies a landing write `earlier` belongs to
    /// (or for later ones) has since arrived at a barrier that this thread has passed: the
    /// wait, and so the copy, is then ordered before its access.
    fn landing_ordered_by_a_wait(&self, earlier: &crate::shadow::Site) -> bool {
        let Some(l) = landing_mbar(earlier.tid).and_then(|mbar| self.landings.get(&mbar)) else { return false };
        let needed = landing_gen(earlier.fences) + 1;
        l.acquired.iter().any(|(&t, waits)| {
            latest_wait(self.levels, t, waits, self.tid, self.passed).is_some_and(|generation| generation >= needed)
        })
    }
}

/// The lanes of one instruction that read one element in a row, for
/// [`BlockSim::broadcast_skips`]: the element, how many lanes, and the first of them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Broadcast<T> {
    at: Option<T>,
    count: u32,
    first: usize,
}

impl<T> Default for Broadcast<T> {
    fn default() -> Self {
        Broadcast { at: None, count: 0, first: 0 }
    }
}

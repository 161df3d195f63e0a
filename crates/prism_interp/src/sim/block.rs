//! One block: its warps, fragments, reconvergence records, barriers and scheduler.

use super::flags::{PhaseSet, Releases};
use super::regs::Regs;
use super::{GCtx, Shared};
use crate::code::{ArrayOf, FuncCode, Op, R};
use crate::report::{Report, ReportKind, Thread};
use crate::shadow::{Fences, LEVELS, Release, SharedShadow};
use prism_span::Span;
use std::collections::{HashMap, VecDeque};

/// All lanes of a warp.
pub const FULL: u32 = u32::MAX;
/// The join of a call record (returns are not at a pc of the caller).
pub const RET: u32 = u32::MAX;

/// A call frame: one function's registers and local arrays for the 32 lanes of a warp.
#[derive(Debug)]
pub struct Frame {
    pub func: u32,
    /// `regs[r * 32 + lane]`.
    pub regs: Regs,
    /// `locals[l][i * 32 + lane]`.
    pub locals: Vec<Vec<u64>>,
    pub smem_base: u64,
    /// The arrays the function's pointer (and tensor-map) parameters name, in parameter
    /// order: the caller's tag of each argument ([`BlockSim::array_tag`]; 0 for memory of
    /// no shared array). A write through a parameter is a write of the caller's array, and
    /// a read through it reads that array's bytes.
    pub ptags: Vec<u64>,
    /// Return values, per lane.
    pub ret: [u64; 32],
}

/// A warp: its frames (shared by its fragments) and per-lane barrier counts.
pub struct Warp {
    /// Boxed: the interpreter takes the current frame out of the arena while it runs a
    /// fragment and puts it back when it stops (at every call, return, barrier and wait), and
    /// moving a box is one word where a frame is 350 bytes (a twelfth of a radix sort's run
    /// was those copies).
    pub frames: Vec<Option<Box<Frame>>>,
    pub free: Vec<u32>,
    /// Lanes that exist (all 32 unless the block size is not a multiple of 32).
    pub live: u32,
    /// Lanes that have finished the kernel.
    pub exited: u32,
    /// Barriers passed (waited at) per lane and level.
    pub counts: [[u32; LEVELS]; 32],
    /// Barriers arrived at per lane and level: as `counts`, but a split barrier's arrive
    /// counts here before its wait counts there.
    pub arrived: [[u32; LEVELS]; 32],
    /// Split barriers: for each (function, id), each lane's arrives and waits so far.
    pub splits: HashMap<(u32, u32), [(u32, u32); 32]>,
    /// Frames of returned calls, for the next calls to reuse (their register files and
    /// local arrays are reset, not reallocated). Boxed like the arena's, so that a frame
    /// moves between the two as one word.
    #[allow(clippy::vec_box)]
    pub spare: Vec<Box<Frame>>,
}

/// The most returned frames a warp keeps for reuse: enough for the calls of a loop body.
const SPARE_FRAMES: usize = 4;

impl Warp {
    /// A frame for a call of function `func` (`c`), as a new one would be: every register
    /// and local element zero, `nregs` registers, the function's local arrays.
    pub fn frame(&mut self, func: u32, c: &FuncCode, fast: bool, smem_base: u64) -> Box<Frame> {
        match self.spare.pop() {
            Some(mut f) => {
                f.func = func;
                f.regs.reset(c.nregs, fast);
                f.locals.truncate(c.locals.len());
                for (i, &(_, n)) in c.locals.iter().enumerate() {
                    match f.locals.get_mut(i) {
                        Some(l) => {
                            l.clear();
                            l.resize(n as usize * 32, 0);
                        }
                        None => f.locals.push(vec![0; n as usize * 32]),
                    }
                }
                f.smem_base = smem_base;
                f.ptags.clear();
                f.ret = [0; 32];
                f
            }
            None => Box::new(Frame {
                func,
                regs: Regs::new(c.nregs, fast),
                locals: c.locals.iter().map(|&(_, n)| vec![0; n as usize * 32]).collect(),
                smem_base,
                ptags: Vec::new(),
                ret: [0; 32],
            }),
        }
    }

    pub fn alloc(&mut self, frame: Box<Frame>) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.frames[i as usize] = Some(frame);
                i
            }
            None => {
                self.frames.push(Some(frame));
                self.frames.len() as u32 - 1
            }
        }
    }

    pub fn release(&mut self, id: u32) {
        if let Some(f) = self.frames[id as usize].take()
            && self.spare.len() < SPARE_FRAMES
        {
            self.spare.push(f);
        }
        self.free.push(id);
    }
}

/// Why a fragment is not running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Runnable.
    None,
    /// Parked at a reconvergence record until the rest of its lanes arrive.
    Join(u32),
    /// At a barrier, waiting for this many units to complete.
    Barrier(u32),
    /// At a warp collective, waiting for the rest of the warp.
    Collective,
    /// At a grid barrier.
    Grid,
    /// At a split barrier's wait, until its unit's arrivals are complete.
    Split,
    /// At an mbarrier wait, until the phase it waits for completes.
    Mbarrier,
}

/// Lanes of one warp at one point of the program.
#[derive(Clone, Debug)]
pub struct Frag {
    pub warp: u32,
    pub mask: u32,
    pub pc: u32,
    /// Call stack (frame ids in the warp's arena); the last is current.
    pub frames: Vec<u32>,
    /// Reconvergence records this fragment will arrive at, innermost last.
    pub recs: Vec<u32>,
    pub wait: Wait,
    /// The memory-write count when this fragment last polled memory, how many polls in a
    /// row found it in the same state with no write anywhere in between, and a hash of that
    /// state (program point and registers): a fragment that comes back to the same state
    /// polling unchanged memory repeats itself forever.
    pub poll: (u64, u32, u64),
}

/// A reconvergence record: the lanes that split at a branch (or entered a loop or a call)
/// and where they meet again.
#[derive(Debug)]
pub struct Rec {
    pub join: u32,
    pub frame: u32,
    pub expected: u32,
    pub arrived: u32,
    pub parked: Vec<u32>,
    /// For call records: the caller's call op pc and result register.
    pub call: Option<(u32, Option<R>)>,
    /// For a loop's record: how often its lanes have tested the loop's condition, which
    /// numbers the iteration they are in (one fragment goes round a loop at a time: lanes
    /// that part in its body meet again before the latch, or leave it). Part of the
    /// dynamic instance of a uniformity check ([`BlockSim::instance`]).
    pub iteration: Option<u32>,
}

impl Rec {
    /// Whether a jump to `target` in frame `fid` leaves this record's construct: one of
    /// the frame's own (not a call's) that rejoins before the target.
    #[inline(always)]
    pub fn left_by(&self, fid: u32, target: u32) -> bool {
        self.frame == fid && self.call.is_none() && self.join < target
    }

    /// A record for lanes `expected` that split inside a construct joining at `join`.
    pub fn open(join: u32, frame: u32, expected: u32) -> Rec {
        Rec { join, frame, expected, arrived: 0, parked: Vec::new(), call: None, iteration: None }
    }

    /// The record of a loop that lanes `expected` enter, whose exit joins at `exit`.
    pub fn looping(exit: u32, frame: u32, expected: u32) -> Rec {
        Rec { iteration: Some(0), ..Rec::open(exit, frame, expected) }
    }
}

/// A unit waiting at a barrier.
#[derive(Debug)]
pub struct BarState {
    pub site: (u32, u32),
    /// The calls the first arrivals made on the way to it (`BlockSim::call_path`): a unit
    /// broader than a warp must reach it through the same calls.
    pub path: u64,
    pub span: Span,
    pub first: Thread,
    pub arrived: u64,
    pub expected: u64,
    pub parked: Vec<u32>,
    /// Lanes of each warp that arrived (to count their barriers when it releases).
    pub lanes: Vec<(u32, u32)>,
    /// Whether it orders memory (a barrier, not a collective's rendezvous).
    pub order: bool,
}

/// One unit's progress through a split barrier.
#[derive(Debug, Default)]
pub struct SplitUnit {
    /// Arrivals per phase (the k-th arrive of each thread is phase k).
    pub arrived: HashMap<u32, u64>,
    /// Waits completed per phase, to forget phases everyone has passed.
    pub passed: HashMap<u32, u64>,
    /// Fragments waiting for a phase to complete.
    pub waiters: Vec<u32>,
}

/// A warp waiting at a collective.
#[derive(Debug)]
pub struct CollState {
    pub site: (u32, u32),
    pub arrived: u32,
    pub parked: Vec<u32>,
}

/// Where an element lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Buffer and element index.
    Global(usize, usize),
    /// Byte address in the block's shared memory.
    Shared(usize),
    /// Frame (in the warp's arena), array and element index; the lane is the accessing one.
    Local(u32, u32, usize),
}

impl Loc {
    /// The location `k` elements of `size` bytes further on.
    pub fn advance(self, k: usize, size: u64) -> Loc {
        match self {
            Loc::Global(b, i) => Loc::Global(b, i + k),
            Loc::Shared(at) => Loc::Shared(at + k * size as usize),
            Loc::Local(f, a, i) => Loc::Local(f, a, i + k),
        }
    }
}

/// An asynchronous copy not yet complete: the source was read when it was issued; the
/// destination is written when the thread waits for it (the end of the `async` scope).
#[derive(Clone, Copy, Debug)]
pub struct PendingCopy {
    /// The first destination element.
    pub dst: Loc,
    /// Number of elements.
    pub count: u8,
    /// Element type.
    pub elem: prism_types::ty::Scalar,
    /// The values read from the source.
    pub vals: [u64; 16],
    /// The function and access site of the destination.
    pub func: u32,
    /// The destination's access site.
    pub access: u32,
    /// The array the destination is, taken at the issue, when the frame is at hand
    /// ([`BlockSim::array_tag`]).
    pub tag: u64,
    /// The first source element: until the copy completes, the hardware may still read it,
    /// so writes to it are races.
    pub src: Loc,
    /// Number of source elements read (fewer than `count` for a zero-filling copy).
    pub src_count: u8,
    /// The commit group it belongs to, numbered per thread from 0; `u32::MAX` until the
    /// thread commits it.
    pub group: u32,
}

/// The byte every block's shared memory starts as: 0xFF, a NaN in every float type and -1
/// in every signed integer. A GPU leaves shared memory undefined at a block's start; a
/// simulator that started it at zero let programs that read what they never wrote look
/// right here and differ on the GPU (two corpus programs did: BENCHMARKS.md, GPU runs).
pub const SHARED_POISON: u8 = 0xFF;

/// What the race check found of whether an earlier access is ordered before a thread, by
/// the access's thread, barrier counts and fences ([`BlockSim::order_memo`]).
pub type OrderMemo = std::cell::RefCell<Verdicts>;

/// How many of the latest verdicts [`Verdicts`] searches before its map.
const RECENT_VERDICTS: usize = 8;

/// An earlier access as [`Verdicts`] tells them apart: its thread, barrier counts, fences.
type VerdictKey = (u32, [u32; LEVELS], Fences);

/// The verdicts of an [`OrderMemo`]: all of them by key, and the last few looked up, which a
/// copy's elements mostly ask about again (their cells hold the same few readers), searched
/// first without hashing.
#[derive(Debug, Default)]
pub struct Verdicts {
    all: super::FastMap<VerdictKey, bool>,
    recent: [Option<(VerdictKey, bool)>; RECENT_VERDICTS],
    next: usize,
}

impl Verdicts {
    /// Forgets every verdict.
    pub fn clear(&mut self) {
        self.all.clear();
        self.recent = [None; RECENT_VERDICTS];
    }

    /// The verdict for `key`, judged by `judge` the first time.
    pub fn get_or(&mut self, key: VerdictKey, judge: impl FnOnce() -> bool) -> bool {
        if let Some(&(_, v)) = self.recent.iter().flatten().find(|(k, _)| *k == key) {
            return v;
        }
        let v = *self.all.entry(key).or_insert_with(judge);
        self.recent[self.next] = Some((key, v));
        self.next = (self.next + 1) % self.recent.len();
        v
    }
}

pub struct BlockSim<'a> {
    pub s: &'a Shared<'a>,
    pub block: u32,
    pub warps: Vec<Warp>,
    pub frags: Vec<Option<Frag>>,
    pub free_frags: Vec<u32>,
    pub runnable: VecDeque<u32>,
    pub recs: Vec<Option<Rec>>,
    pub free_recs: Vec<u32>,
    /// Units at a barrier: (unit size in threads, unit index) -> state.
    pub barriers: HashMap<(u64, u64), BarState>,
    pub colls: Vec<Option<CollState>>,
    pub shared: Vec<u8>,
    /// Race shadow of shared memory (allocated on first use, or the previous block's,
    /// reset, from [`GCtx::spare_sshadow`]).
    pub sshadow: SharedShadow,
    /// With race checks, one bit per byte of shared memory: whether a thread of this block
    /// has written it (a read of a byte without one is `uninitialized-read`). Empty
    /// without race checks.
    pub swritten: Vec<u64>,
    /// With race checks, per byte of shared memory: the array whose access last wrote it
    /// ([`Self::array_tag`]; no shared write carries 0, which names no array).
    /// Only bytes [`Self::swritten`] marks mean anything, so a block takes the previous
    /// block's without clearing it ([`GCtx::spare_sarrays`]). A read through an array of a
    /// byte another array wrote is `uninitialized-read` too: sequential scopes and callees'
    /// scratch reuse bytes, and a new array's element holds nothing until it is written as
    /// that array's (docs/soundness.md §8, "Fresh arrays").
    pub sarrays: Vec<u64>,
    /// How many writes have changed some byte's tag in [`Self::sarrays`] (a byte taken over
    /// by another array, or written for the first time with another tag than it held): a
    /// byte range found all one array's stays so until this count moves.
    pub retags: u64,
    /// Byte ranges found all one array's ([`Self::tagged_all`]), with [`Self::retags`] when
    /// they were: a wgmma's tiles are the same ranges again at every step of a pipeline,
    /// and refilling them as the same array changes no tag.
    pub tagged_memo: [((usize, usize), u64, u64); 4],
    /// Reads of shared bytes not written when they were read, one per site (the first
    /// that can still be reported). Reported when the block ends if the bytes were still
    /// never written (a later write makes the read a race or an ordering the race check
    /// judges instead), or at once for a read that wrote them itself.
    pub unwritten_reads: Vec<UnwrittenRead>,
    /// Uniformity checks in progress over units whose threads run them in several
    /// fragments (several warps, or parts of one): (unit size, unit, function, pc, dynamic
    /// instance) -> (value, threads that compared, first thread).
    #[allow(clippy::type_complexity)]
    pub utable: HashMap<(u64, u64, u32, u32, u64), (u64, u64, Thread)>,
    /// Split barriers in progress, per (unit size, unit, function, id).
    pub split_units: HashMap<(u64, u64, u32, u32), SplitUnit>,
    /// Outstanding asynchronous copies per thread.
    pub pending: Vec<Vec<PendingCopy>>,
    /// The copies a `cp.async` wait completes, between taking them out of `pending` and
    /// landing them (kept to reuse its memory).
    pub done_copies: Vec<PendingCopy>,
    /// Commit groups each thread has closed.
    pub commits: Vec<u32>,
    pub steps: u64,
    pub alive: u32,
    pub stopped: bool,
    /// Whether the co-resident scheduler has counted this block as finished.
    pub counted: bool,
    /// Set by a fragment that polled memory (an atomic or volatile load) in its slice.
    pub polled: bool,
    /// Fences each thread has executed.
    pub fences: Vec<Fences>,
    /// The barriers each thread had passed at its last fence: a flag it stores after that
    /// fence releases to its block what those barriers ordered before the fence
    /// (cumulativity, [`crate::shadow::Release::counts`]).
    pub fence_counts: Vec<[u32; crate::shadow::LEVELS]>,
    /// Each thread's fences just after its last fence (`__threadfence()` or
    /// `__threadfence_block()`; an mbarrier arrival also counts in `fences`, for its own
    /// release only): what a flag it stores releases (`BlockSim::releasing`).
    pub fence_at: Vec<Fences>,
    /// The block barriers each thread had passed at its last device-wide fence
    /// ([`crate::shadow::Release::gbar`]).
    pub fence_gbar: Vec<u32>,
    /// Releases each thread has observed and not yet acquired (its next fence does), and
    /// those it has acquired. Only threads that read a published flag have entries.
    pub sync: HashMap<u32, (Releases, Releases)>,
    /// What the shared-memory elements written by atomic or volatile stores publish, by
    /// byte (as [`super::GCtx::flags`]).
    pub sflags: super::flags::Flags<usize>,
    /// Per thread and element (global: buffer and index; shared: `usize::MAX` and byte),
    /// what the thread knows of the element's stores, for elements with a flag history
    /// (`flags.rs`, `Know`): which come before one it wrote or read.
    pub flag_know: super::FastMap<(u32, usize, usize), super::flags::Know>,
    /// Per thread, the releases it had acquired itself at its last fence, and whether that
    /// fence was device-wide: what a flag it stores next carries on besides its own release,
    /// with what barriers passed on to it (`BlockSim::releasing`).
    pub fence_carry: HashMap<u32, (Releases, bool)>,
    /// Per warp, the lanes that have entries in `sync`, `fence_carry` or `acquisitions`:
    /// only those have anything to drop when they leave the kernel
    /// (`BlockSim::forget_exited`), which otherwise cost three hash look-ups per lane.
    pub race_state: Vec<u32>,
    /// Per thread, what it had acquired at each fence, with its barrier arrivals at the
    /// fence (race checks only): a barrier the thread arrives at afterwards orders what
    /// the release ordered before the threads that pass it (`sim/access.rs`,
    /// `Orders::ordered`).
    pub acquisitions: HashMap<u32, Vec<super::access::Acquisition>>,
    /// Per thread, what it had acquired at its mbarrier waits, with its barrier arrivals
    /// then (race checks only): passed on to the accesses of the threads that pass a
    /// barrier it arrived at afterwards, but not carried on by their releases, as the
    /// fences' acquisitions are (`sim/access.rs`, `BlockSim::acquire`).
    pub wait_acquisitions: HashMap<u32, Vec<super::access::Acquisition>>,
    /// Per thread and mbarrier (its shared byte), the latest generation of landed TMA copies
    /// the thread has acquired (race checks only): what a release of the barrier's
    /// pseudo-thread in its acquired set orders (`shadow::Release::orders`), looked up
    /// directly, since every read of a landed tile asks (`sim/access.rs`, `Orders`).
    pub landing_seen: super::FastMap<(u32, usize), u32>,
    /// While an asynchronous copy's destination is recorded element by element
    /// ([`Self::dest_started`]), what the race check found of whether each earlier access
    /// is ordered before the issuing thread, by the access's thread, barrier counts and
    /// fences, which alone decide it: a tile's elements were last read by the same few
    /// hundred accesses, and each was judged anew for every element (a fifth of a TMA
    /// gemm's checked run).
    pub order_memo: OrderMemo,
    pub order_memo_on: bool,
    /// The thread and the step ([`Self::steps`]) the verdicts of [`Self::order_memo`] were
    /// found for: they hold for the rest of that thread's instruction (a TMA box is some
    /// hundreds of 16-byte copies, each recorded on its own), and for nothing else.
    pub order_memo_for: Option<(u32, u64)>,
    /// The cell records that thread's writes to a copy's destination were judged free of
    /// conflict with, by [`SharedShadow::write_quick`]: kept and cleared with
    /// [`Self::order_memo`].
    pub dest_memo: crate::shadow::WriteMemo,
    /// Whether a thread of the block has acquired a release of another block (a flag, or
    /// an arrival that carried one on): until then [`Self::acquisitions`] order no access
    /// of another block, and the race check of global memory does not look through them.
    pub acquired_foreign: bool,
    /// With race checks, one bit per 4-byte word of shared memory: whether an asynchronous
    /// copy still in flight will write it (copies write whole, aligned words). Empty
    /// without race checks.
    pub sflight: Vec<u64>,
    /// How many words of [`Self::sflight`] are set (none: nothing to look up).
    pub sflight_words: u32,
    /// The copy in flight over each set word of [`Self::sflight`]: (thread, function,
    /// access site). An entry stands for nothing while its word's bit is clear; grown to
    /// the furthest word a copy has reached.
    pub sflight_by: Vec<(u32, u32, u32)>,
    /// The mbarriers of the block, by the shared-memory byte they live at.
    pub mbars: HashMap<usize, Mbar>,
    /// With race checks, one bit per 8-byte word of shared memory that holds bytes of a
    /// valid mbarrier (allocated at the first `mbarrier_init`), and how many barriers are
    /// valid: an access of those bytes by anything but an mbarrier operation is
    /// `mbarrier-misuse` ([`Self::valid_mbar_in`]).
    pub mbar_words: Vec<u64>,
    pub valid_mbars: u32,
    /// The bytes between the lowest and the highest valid barrier's (an over-approximation
    /// once some are invalidated, reset when none is valid): most accesses miss it, and
    /// two comparisons settle them.
    pub mbar_span: (usize, usize),
    /// Set while an mbarrier operation records its own access of the barrier's bytes, which
    /// is not the misuse [`Self::valid_mbar_in`] looks for.
    pub mbar_op: bool,
    /// TMA copies each thread has issued that complete on an mbarrier (`tma_load_*_mbar`),
    /// until the `complete_tx` that follows each puts them on the barrier's phase.
    pub mbar_issued: HashMap<u32, Vec<PendingCopy>>,
    /// With race checks, what is known of the TMA copies that landed through each mbarrier
    /// (by the byte it lives at), for ordering later accesses after them.
    pub landings: HashMap<usize, Landings>,
    /// Per thread, the accumulator arrays of its wgmmas not yet completed by a
    /// `wgmma_wait`: uncommitted ones, then committed groups, oldest first. Using such an
    /// array is `wgmma-pending` (the hardware writes it asynchronously).
    pub wgmma: HashMap<u32, WgmmaState>,
    /// Emptied lists of a completed wgmma's reads, for the next wgmma's (exec.rs).
    pub spare_reads: Vec<Vec<(Loc, u64, u32)>>,
    /// Warp tile reads the waits handed back, for the next wgmmas (a few kilobytes each).
    pub spare_tiles: Vec<super::wgmma::Tiles>,
    /// With race checks, the wgmma reads in flight ([`WgFlight`]).
    pub wg_flight: WgFlight,
    /// Per 4-byte word of shared memory, which of the warp reads a wait records at once
    /// last touched it (`BlockSim::race_reads_warp_wait`), as `wg_epoch` plus its position:
    /// two reads touching one word send the wait lane by lane.
    pub wg_stamp: Vec<u32>,
    pub wg_epoch: u32,
}

/// The shared memory that wgmmas in flight read: from its issue to the wait that completes
/// its group, the tensor cores may read a tile at any moment, so a write to it in between
/// races with them whatever orders it after the issue (review R25: a thread changed an
/// element and restored it after a barrier that followed the issue; at the wait the value
/// was the old one and the last write ordered). Per 4-byte word: how many lanes' reads are
/// in flight, and the latest of them (thread, function, access site) to name in a report.
/// Allocated at the first wgmma of a block with race checks.
#[derive(Debug, Default)]
pub struct WgFlight {
    count: Vec<u32>,
    by: Vec<(u32, u16, u16)>,
    /// The sum of `count`: while it is 0, writes need not look.
    total: u64,
}

impl WgFlight {
    /// The words of bytes `byte .. byte + size`.
    fn words(byte: usize, size: usize) -> std::ops::Range<usize> {
        byte / 4..(byte + size.max(1)).div_ceil(4)
    }

    /// A lane's read of `size` bytes from `byte` is in flight (shared memory of `len` bytes).
    pub fn start(&mut self, len: usize, bytes: (usize, usize), by: (u32, u16, u16)) {
        self.start_n(len, bytes, by, 1);
    }

    /// `n` lanes' reads of those bytes are in flight, `by` the last of them.
    pub fn start_n(&mut self, len: usize, (byte, size): (usize, usize), by: (u32, u16, u16), n: u32) {
        if self.count.is_empty() {
            self.count = vec![0; len.div_ceil(4)];
            self.by = vec![(0, 0, 0); len.div_ceil(4)];
        }
        for w in Self::words(byte, size) {
            if let Some(c) = self.count.get_mut(w) {
                *c += n;
                self.by[w] = by;
                self.total += u64::from(n);
            }
        }
    }

    /// That read has completed.
    pub fn end(&mut self, bytes: (usize, usize)) {
        self.end_n(bytes, 1);
    }

    /// `n` such reads have completed.
    pub fn end_n(&mut self, (byte, size): (usize, usize), n: u32) {
        for w in Self::words(byte, size) {
            if let Some(c) = self.count.get_mut(w) {
                let k = n.min(*c);
                *c -= k;
                self.total -= u64::from(k);
            }
        }
    }

    /// A wgmma read in flight over bytes `byte .. byte + size`, if any.
    pub fn reading(&self, (byte, size): (usize, usize)) -> Option<(u32, u16, u16)> {
        if self.total == 0 {
            return None;
        }
        Self::words(byte, size).find(|&w| self.count.get(w).is_some_and(|&c| c > 0)).map(|w| self.by[w])
    }
}

/// A local array as (frame in its warp's arena, array).
pub type LocalArray = (u32, u32);

/// One wgmma a thread has issued and not waited for: its accumulator array, and the
/// shared-memory elements it read (with their bits then, and the access site): the hardware
/// may read them until the wait, so they are recorded for race detection there, and a
/// change by then is reported.
#[derive(Clone, Debug)]
pub struct WgPending {
    pub acc: LocalArray,
    pub func: u32,
    /// The element type the tiles were read as (their bits are compared at that width).
    pub elem: prism_types::ty::Scalar,
    /// Its shape `m64nNkK` as (N, K): only a wgmma of the same shape may take its
    /// accumulators before the wait.
    pub shape: (u32, u32),
    /// The lane's reads, in order, when race checks need them or the lane read its tiles
    /// itself; else empty.
    pub reads: Vec<(Loc, u64, u32)>,
    /// The tiles its warp read for it (`sim/wgmma.rs`), shared by the warp's lanes, whose
    /// elements are compared at the wait once for the warp.
    pub warp: Option<std::sync::Arc<super::wgmma::WarpRead>>,
}

/// One thread's wgmmas in flight: uncommitted ones, then its committed groups, oldest
/// first.
pub type WgmmaState = (Vec<WgPending>, std::collections::VecDeque<Vec<WgPending>>);

/// One mbarrier (PTX ISA, "mbarrier"): a phase completes when its pending arrivals and its
/// transaction count both reach zero; then the next phase expects `expected` arrivals.
#[derive(Clone, Debug, Default)]
pub struct Mbar {
    /// Arrivals each phase expects.
    pub expected: u32,
    /// Arrivals the current phase still waits for.
    pub pending: u32,
    /// Transaction bytes expected and not completed (may go below zero for a while).
    pub tx: i64,
    /// Phases completed; the current phase's parity is `phase & 1`.
    pub phase: u64,
    /// The releases of the current phase's arrivals (race detection: a wait acquires them).
    pub arrivals: Vec<Release>,
    /// The releases of the latest completed phase (a parity wait that may be satisfied by
    /// a phase older than the one two before it acquires nothing, `sim/exec.rs`).
    pub done: PhaseSet,
    /// The same of the two phases before the latest, the one just before first. The latest
    /// phase and the one two before it have the same parity, so a thread that knows of the
    /// phases before that one and waits for that parity acquires it.
    pub earlier_done: [PhaseSet; 2],
    /// Fragments parked at a wait on this barrier.
    pub waiters: Vec<u32>,
    /// The generations of landings at its address when it was initialised
    /// ([`Landings::generation`], race checks only): its phase `j` is generation
    /// `base_generation + j + 1`.
    pub base_generation: u32,
    /// Initialised and not invalidated.
    pub valid: bool,
    /// With race checks, the array its initialisation wrote ([`BlockSim::array_tag`]): an
    /// operation through another array is one on memory that array never initialised.
    pub tag: u64,
    /// TMA copies that complete their bytes on the current phase, and the threads that
    /// issued them: in flight until the phase completes, when they land.
    pub copies: Vec<(u32, PendingCopy)>,
    /// The releases the current phase's arrivals pass on (what their threads acquired),
    /// one per writer and reach, the latest.
    pub carried: Releases,
    /// With race checks, the operations on the current phase (arrivals, expected and
    /// completed bytes, but not those of TMA copies) so far: a thread ordered after all of
    /// them is ordered after the phase's completion, if the phase had no copies
    /// ([`Landings::last_ops`]).
    pub ops: Vec<PhaseOp>,
    /// With race checks, the current phase's operations on bytes (`expect_tx`,
    /// `complete_tx`, a TMA copy's issue), in the order they ran: each may have come after
    /// the phase completed on the GPU, unless one of the phase's arrivals is ordered after
    /// it, or the bytes announced before it cannot all have completed by then (checked
    /// when the phase completes, [`BytesOp`]).
    pub bytes_ops: Vec<BytesOp>,
    /// With race checks, the bytes the current phase's arrivals announced
    /// (`mbarrier_arrive_expect_tx`): all of them come before the phase completes.
    pub arrival_bytes: i64,
    /// With race checks, the bytes completed by the current phase's operations on bytes
    /// past the first [`BYTES_OPS_EXACT`], which may come before any of the others.
    pub late_completed: i64,
    /// The bytes the current phase's `expect_tx` and arrivals announced, and those its
    /// `complete_tx` and TMA copies completed: each is what the transaction count may
    /// reach on the GPU, up or down, when the others come later (PTX's count holds 20 bits
    /// and a sign).
    pub announced: i64,
    pub completed: i64,
}

/// How many operations on bytes of one phase [`BytesOp`] compares with each other; the
/// later ones are taken as unordered with every other, which can only report more.
pub const BYTES_OPS_EXACT: usize = 64;

/// An operation on an mbarrier's bytes ([`Mbar::bytes_ops`]). The phase could have
/// completed before it on the GPU only if every arrival came first (none is ordered after
/// it, [`Self::followed`]) and the transaction count was zero then: the bytes announced by
/// then (at least the arrivals' own, those of the `expect_tx` ordered before it, and those
/// of the `expect_tx` that an arrival is ordered after) were no more than the bytes that
/// may have completed by then (at most those of the phase's other operations that are not
/// ordered after it, [`Self::completed_before`]). So it is safe when an arrival follows it
/// or the first sum exceeds the second; else it is `mbarrier-misuse`. Until 2026-11-30 the
/// second test was the simulator's transaction count when the operation ran, which another
/// thread's unordered `expect_tx` that happened to run first could make non-zero (review
/// R15 F2).
#[derive(Clone, Debug)]
pub struct BytesOp {
    pub tid: u32,
    /// Its thread's barrier arrivals and fences when it ran.
    pub arrived: [u32; LEVELS],
    pub fences: Fences,
    /// The bytes it announces (`expect_tx`), else 0.
    pub announced: i64,
    /// The bytes it completes (`complete_tx`, a TMA copy), else 0.
    pub completed: i64,
    /// Whether an arrival of the phase is ordered after it.
    pub followed: bool,
    /// The earlier operations of the phase that announce bytes and are ordered before it.
    pub after: Vec<u32>,
    /// The bytes the phase's other operations complete that may come before it on the GPU:
    /// all of those that ran before it, and those after it not ordered after it.
    pub completed_before: i64,
    pub span: Span,
    pub thread: Thread,
}

impl Mbar {
    /// The first operation on bytes of the current phase that may have come after the
    /// phase completed on the GPU ([`BytesOp`]), with the bytes surely announced before it
    /// and those that may have completed by then. The sum of the announcements some
    /// arrival follows is taken once, and each operation adds only those ordered before it
    /// that no arrival follows, so that none counts twice.
    pub fn early_bytes_op(&self) -> Option<(&BytesOp, i64, i64)> {
        // The announcements some arrival is ordered after come before the completion.
        let followed: i64 = self.bytes_ops.iter().filter(|e| e.followed).map(|e| e.announced).sum();
        let total: i64 = self.bytes_ops.iter().map(|e| e.completed).sum();
        self.bytes_ops.iter().enumerate().find_map(|(i, x)| {
            if x.followed {
                return None;
            }
            let before: i64 =
                x.after.iter().map(|&j| &self.bytes_ops[j as usize]).filter(|e| !e.followed).map(|e| e.announced).sum();
            let surely = self.arrival_bytes + followed + before;
            // The operations past the exact ones may complete before any other.
            let may = if i < BYTES_OPS_EXACT { x.completed_before + self.late_completed } else { total - x.completed };
            (surely <= may).then_some((x, surely, may))
        })
    }
}

/// An mbarrier operation of thread `tid`, made with barrier arrivals `arrived` and fences
/// `fences`, as an access for the race check's orderings (`BlockSim::ordered_after`).
fn op_acc(tid: u32, arrived: [u32; LEVELS], fences: Fences) -> crate::shadow::Acc {
    crate::shadow::Acc { fences, ..super::access::wait_acc(tid, arrived) }
}

impl PhaseOp {
    /// The operation as an access ([`op_acc`]).
    pub fn acc(&self) -> crate::shadow::Acc {
        op_acc(self.tid, self.arrived, self.fences)
    }
}

impl BytesOp {
    /// The operation as an access ([`op_acc`]).
    pub fn acc(&self) -> crate::shadow::Acc {
        op_acc(self.tid, self.arrived, self.fences)
    }
}

/// An operation on an mbarrier's phase ([`Mbar::ops`]).
#[derive(Clone, Copy, Debug)]
pub struct PhaseOp {
    pub tid: u32,
    /// The barriers the thread had arrived at when it made the operation, and its fences
    /// (what a release of the thread must come after to be ordered after it).
    pub arrived: [u32; LEVELS],
    pub fences: Fences,
}

/// The phases of one mbarrier and the TMA copies that landed through it, as the race check
/// sees them. A landed copy's writes are recorded as those of the barrier's own
/// pseudo-thread ([`crate::shadow::landing_tid`]), in a generation (one per completed
/// phase, with copies or not, counted by [`Self::generation`]), which no barrier orders:
/// only a wait for that phase, or a later one, does (it acquires the phase's release of the
/// generation), or a barrier that a thread which waited passed afterwards
/// ([`Self::acquired`]).
#[derive(Clone, Debug, Default)]
pub struct Landings {
    /// The generation of the latest completed phase (0: none yet). Until 2026-11-30 only
    /// phases that landed copies were counted, so a copy issued before its thread saw a
    /// phase without copies complete was not reported, though its bytes may complete that
    /// phase on the GPU ([`BlockSim::saw_last_landing`]).
    pub generation: u32,
    /// When the latest completed phase landed no copies, the operations on it
    /// ([`Mbar::ops`]): a thread ordered after every one of them (by its own program
    /// order, or by barriers) is ordered after the phase's completion without waiting.
    /// `None` when it landed copies: their bytes complete at no point a thread can be
    /// ordered after but by a wait.
    pub last_ops: Option<Vec<PhaseOp>>,
    /// The most block barriers the threads of [`Self::last_ops`] had arrived at when they
    /// made them: a thread that has passed more is ordered after all of them.
    pub last_ops_block: u32,
    /// The same for the phase before the latest (a parity wait asks about both).
    pub prev_ops: Option<Vec<PhaseOp>>,
    pub prev_ops_block: u32,
    /// The thread that issued the latest copy landed (named in reports).
    pub issuer: u32,
    /// Per thread that waited for a phase with copies: the generation it acquired and its
    /// barrier arrivals at the wait, for its last few waits, oldest first.
    pub acquired: HashMap<u32, VecDeque<(u32, [u32; LEVELS])>>,
    /// The latest generation any thread's waits in [`Self::acquired`] hold (waits are only
    /// added, and a thread's list drops its oldest, so no list holds more).
    pub top: u32,
}

/// How many of a thread's waits [`Landings::acquired`] keeps per mbarrier: a thread that
/// waited for a phase and then passed a barrier with the reader orders the copy for it,
/// even after it has waited for a few later phases.
pub const LANDING_WAITS: usize = 8;

impl<'a> BlockSim<'a> {
    pub fn new(s: &'a Shared<'a>, block: u32, g: &mut GCtx) -> BlockSim<'a> {
        let t = s.block;
        let nwarps = t.div_ceil(32);
        let kf = &s.code.funcs[s.kernel as usize];
        let mut sim = BlockSim {
            s,
            block,
            warps: Vec::with_capacity(nwarps as usize),
            frags: Vec::new(),
            free_frags: Vec::new(),
            runnable: VecDeque::new(),
            recs: Vec::new(),
            free_recs: Vec::new(),
            barriers: HashMap::new(),
            colls: (0..nwarps).map(|_| None).collect(),
            shared: vec![SHARED_POISON; s.smem_bytes as usize],
            sshadow: std::mem::take(&mut g.spare_sshadow),
            swritten: if s.cfg.checks.races { vec![0; (s.smem_bytes as usize).div_ceil(64)] } else { Vec::new() },
            retags: 0,
            tagged_memo: [((0, 0), 0, u64::MAX); 4],
            sarrays: if s.cfg.checks.races {
                let mut v = std::mem::take(&mut g.spare_sarrays);
                v.resize(s.smem_bytes as usize, 0);
                v
            } else {
                Vec::new()
            },
            unwritten_reads: Vec::new(),
            utable: HashMap::new(),
            split_units: HashMap::new(),
            pending: vec![Vec::new(); t as usize],
            done_copies: Vec::new(),
            commits: vec![0; t as usize],
            steps: 0,
            alive: 0,
            stopped: false,
            counted: false,
            polled: false,
            fences: vec![Fences::default(); t as usize],
            fence_counts: vec![[0; crate::shadow::LEVELS]; t as usize],
            fence_gbar: vec![0; t as usize],
            fence_at: vec![Fences::default(); t as usize],
            sync: HashMap::new(),
            sflags: super::flags::Flags::default(),
            flag_know: super::FastMap::default(),
            fence_carry: HashMap::new(),
            race_state: vec![0; (t as usize).div_ceil(32)],
            acquisitions: HashMap::new(),
            wait_acquisitions: HashMap::new(),
            landing_seen: super::FastMap::default(),
            order_memo: Default::default(),
            order_memo_on: false,
            order_memo_for: None,
            dest_memo: Default::default(),
            acquired_foreign: false,
            sflight: if s.cfg.checks.races {
                vec![0; (s.smem_bytes as usize).div_ceil(4).div_ceil(64)]
            } else {
                Vec::new()
            },
            sflight_words: 0,
            sflight_by: Vec::new(),
            mbars: HashMap::new(),
            mbar_words: Vec::new(),
            valid_mbars: 0,
            mbar_span: (usize::MAX, 0),
            mbar_op: false,
            mbar_issued: HashMap::new(),
            landings: HashMap::new(),
            wgmma: HashMap::new(),
            spare_reads: Vec::new(),
            spare_tiles: Vec::new(),
            wg_flight: WgFlight::default(),
            wg_stamp: Vec::new(),
            wg_epoch: 0,
        };
        for w in 0..nwarps {
            let lanes = (t - w * 32).min(32);
            let live = if lanes == 32 { FULL } else { (1u32 << lanes) - 1 };
            let mut regs = match g.spare_regs.pop() {
                Some(mut r) => {
                    r.reset(kf.nregs, s.code.fast);
                    r
                }
                None => Regs::new(kf.nregs, s.code.fast),
            };
            for (i, &p) in kf.params.iter().enumerate() {
                regs.put_uniform(p, FULL, s.params[i]);
            }
            let frame = Frame {
                func: s.kernel,
                regs,
                locals: kf.locals.iter().map(|&(_, n)| vec![0; n as usize * 32]).collect(),
                smem_base: 0,
                ptags: Vec::new(),
                ret: [0; 32],
            };
            let mut warp = Warp {
                frames: Vec::new(),
                free: Vec::new(),
                live,
                exited: 0,
                counts: [[0; LEVELS]; 32],
                arrived: [[0; LEVELS]; 32],
                splits: HashMap::new(),
                spare: Vec::new(),
            };
            let fid = warp.alloc(Box::new(frame));
            sim.warps.push(warp);
            let id = sim.add_frag(Frag {
                warp: w,
                mask: live,
                pc: 0,
                frames: vec![fid],
                recs: Vec::new(),
                wait: Wait::None,
                poll: (0, 0, 0),
            });
            sim.runnable.push_back(id);
        }
        sim
    }

    pub fn add_frag(&mut self, f: Frag) -> u32 {
        self.alive += 1;
        match self.free_frags.pop() {
            Some(i) => {
                self.frags[i as usize] = Some(f);
                i
            }
            None => {
                self.frags.push(Some(f));
                self.frags.len() as u32 - 1
            }
        }
    }

    pub fn drop_frag(&mut self, id: u32) {
        if self.frags[id as usize].take().is_some() {
            self.alive -= 1;
            self.free_frags.push(id);
        }
    }

    pub fn add_rec(&mut self, r: Rec) -> u32 {
        match self.free_recs.pop() {
            Some(i) => {
                self.recs[i as usize] = Some(r);
                i
            }
            None => {
                self.recs.push(Some(r));
                self.recs.len() as u32 - 1
            }
        }
    }

    pub fn rec(&mut self, id: u32) -> &mut Rec {
        self.recs[id as usize].as_mut().expect("live record")
    }

    pub fn free_rec(&mut self, id: u32) {
        self.recs[id as usize] = None;
        self.free_recs.push(id);
    }

    pub fn thread(&self, warp: u32, lane: u32) -> Thread {
        Thread { block: self.block, thread: warp * 32 + lane }
    }

    pub fn finished(&self) -> bool {
        self.alive == 0 || self.stopped
    }

    /// Runs until every thread has finished, or a fatal report.
    pub fn run_to_end(&mut self, g: &mut GCtx) {
        while !self.finished() {
            if !self.step_slice(g) {
                if self.alive > 0 && !self.stopped {
                    self.report_deadlock(g);
                }
                return;
            }
            if self.spinning(g) {
                self.report_spin(g, 0);
                return;
            }
        }
    }

    /// Whether every fragment is blocked or spins on memory nobody has written since it last
    /// looked: nothing can change any more. Only meaningful when no other block runs
    /// concurrently (the co-resident and sequential modes).
    pub fn spinning(&self, g: &GCtx) -> bool {
        if self.s.parallel {
            return false;
        }
        let mut any = false;
        for f in self.frags.iter().flatten() {
            if f.wait == Wait::None {
                if f.poll.0 != g.writes || f.poll.1 < 2 {
                    return false;
                }
                any = true;
            }
        }
        any
    }

    /// Reports threads that spin forever.
    /// `not_started` blocks are waiting for a resident slot.
    pub fn report_spin(&self, g: &mut GCtx, not_started: usize) {
        let f = self.frags.iter().flatten().find(|f| f.wait == Wait::None).expect("a spinning fragment");
        let span = self.s.code.funcs[self.func_of(f) as usize].info[f.pc.saturating_sub(1) as usize].span;
        let thread = self.thread(f.warp, f.mask.trailing_zeros());
        g.report(
            self.s,
            Report {
                kind: ReportKind::Deadlock,
                message: "deadlock: threads spin-wait on memory that no running thread will change".into(),
                span,
                thread,
                other: None,
                notes: spin_notes(not_started),
            },
        );
    }

    /// Reports a block that has run past the stall limit without finishing, naming the loop
    /// the fragment `id` is in.
    fn report_stall(&mut self, g: &mut GCtx, id: u32) {
        let Some(f) = self.frags[id as usize].as_ref().or_else(|| self.frags.iter().flatten().next()) else {
            return;
        };
        let (what, span) = stuck_at(&self.s.code.funcs[self.func_of(f) as usize], f.pc);
        let thread = self.thread(f.warp, f.mask.trailing_zeros());
        let limit = self.s.cfg.stall_limit.map_or(0.0, |d| d.as_secs_f64());
        let msg = format!(
            "no block finished for {limit} s while block {} ran {what}: an endless loop, or a spin-wait whose condition never changes",
            self.block
        );
        let notes = vec![format!(
            "the block had run {} steps; a run that is only slow can raise the limit with `--stall-limit SECONDS` (0 turns it off)",
            self.steps
        )];
        self.fatal(g, Report { kind: ReportKind::TimeLimit, message: msg, span, thread, other: None, notes });
    }

    /// Runs one time slice of one runnable fragment; false when none can run.
    pub fn step_slice(&mut self, g: &mut GCtx) -> bool {
        if self.stopped || self.s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.stopped = true;
            return false;
        }
        let id = match self.s.cfg.seed {
            None => self.runnable.pop_front(),
            Some(_) => {
                if self.runnable.is_empty() {
                    None
                } else {
                    let i = g.rng.below(self.runnable.len());
                    self.runnable.swap_remove_back(i)
                }
            }
        };
        let Some(id) = id else { return false };
        // A fragment may have been merged away while queued.
        if self.frags[id as usize].is_none() {
            return true;
        }
        let budget = match self.s.cfg.seed {
            None => 4096,
            Some(_) => 1 + g.rng.below_u64(64) as u32,
        };
        let before = self.steps;
        let clock_before = g.clock;
        self.run_frag(g, id, budget);
        g.clock += self.steps - before;
        // The wall clock is read each time the clock passes a multiple of 16K steps: often
        // enough to stop within milliseconds of the limit, rarely enough to cost nothing.
        if clock_before >> 14 != g.clock >> 14 && self.s.stalled() && !self.stopped {
            self.report_stall(g, id);
            return false;
        }
        if std::mem::take(&mut self.polled) {
            let h = self.state_hash(id);
            if let Some(f) = self.frags[id as usize].as_mut() {
                f.poll =
                    if f.poll.0 == g.writes && f.poll.2 == h { (g.writes, f.poll.1 + 1, h) } else { (g.writes, 1, h) };
            }
        }
        true
    }

    /// A hash of what decides a fragment's future besides memory: its program point, and
    /// the registers and local arrays of its lanes in every frame of its call stack. A loop
    /// that polls memory but counts (a `for` loop of atomic loads) changes it every time.
    fn state_hash(&self, id: u32) -> u64 {
        let Some(f) = self.frags[id as usize].as_ref() else { return 0 };
        let mut h = super::lanes::WordHash::default();
        h.add(u64::from(f.pc));
        h.add(u64::from(f.mask));
        h.add(f.frames.len() as u64);
        for &fid in &f.frames {
            h.add(u64::from(fid));
        }
        let warp = &self.warps[f.warp as usize];
        for &fid in &f.frames {
            let Some(fr) = warp.frames[fid as usize].as_ref() else { continue };
            for reg in fr.regs.chunks_exact(32) {
                for l in lanes_of(f.mask) {
                    h.add(reg[l]);
                }
            }
            for a in &fr.locals {
                for el in a.chunks_exact(32) {
                    for l in lanes_of(f.mask) {
                        h.add(el[l]);
                    }
                }
            }
        }
        h.finish()
    }

    pub fn make_runnable(&mut self, id: u32) {
        if let Some(f) = self.frags[id as usize].as_mut() {
            f.wait = Wait::None;
            self.runnable.push_back(id);
        }
    }

    /// Whether every unfinished fragment waits at a grid barrier.
    pub fn waiting_only_at_grid_barrier(&self) -> bool {
        self.runnable.is_empty() && self.frags.iter().flatten().all(|f| f.wait == Wait::Grid)
    }

    /// Lets every thread past the grid barrier they wait at. A grid barrier orders all
    /// memory accesses, so it counts as a barrier at the block level too.
    pub fn release_grid_barrier(&mut self) {
        let top = self.s.levels.sizes.len() - 1;
        let ids: Vec<u32> = self
            .frags
            .iter()
            .enumerate()
            .filter(|(_, f)| f.as_ref().is_some_and(|f| f.wait == Wait::Grid))
            .map(|(i, _)| i as u32)
            .collect();
        for id in ids {
            if let Some(f) = self.frags[id as usize].as_mut() {
                f.pc += 1;
                let (w, mask) = (f.warp as usize, f.mask);
                for l in lanes_of(mask) {
                    self.warps[w].counts[l][top] += 1;
                    self.warps[w].arrived[l][top] += 1;
                }
            }
            self.make_runnable(id);
        }
    }

    /// Whether every thread waiting at a grid barrier waits at the same one, and none has
    /// left the kernel: otherwise the grid barrier diverged.
    pub fn grid_barrier_consistent(&self) -> Option<(u32, u32)> {
        let mut site = None;
        for f in self.frags.iter().flatten() {
            let here = (self.func_of(f), f.pc);
            if *site.get_or_insert(here) != here {
                return None;
            }
        }
        if self.warps.iter().any(|w| w.exited != 0) {
            return None;
        }
        site
    }

    /// Leaves a reconvergence record early (a `break`, `continue` or `return` jumped out of
    /// its construct): the record stops expecting these lanes, and may complete.
    pub fn leave(&mut self, rec: u32, mask: u32) {
        let r = self.rec(rec);
        r.expected &= !mask;
        if r.expected == 0 {
            self.free_rec(rec);
        } else if r.arrived == r.expected {
            self.complete(rec);
        }
    }

    /// A record whose lanes have all arrived: the first parked fragment continues with all of
    /// them; the others are merged into it.
    pub fn complete(&mut self, rec: u32) {
        let r = self.recs[rec as usize].take().expect("live record");
        self.free_recs.push(rec);
        let mut parked = r.parked.into_iter();
        let Some(keep) = parked.next() else { return };
        for other in parked {
            self.drop_frag(other);
        }
        match r.call {
            None => {
                let f = self.frags[keep as usize].as_mut().expect("parked fragment");
                f.mask = r.arrived;
                f.recs.pop();
                f.pc = r.join + 1;
            }
            Some((call_pc, dst)) => self.finish_call(keep, r.arrived, call_pc, dst),
        }
        self.make_runnable(keep);
    }

    /// Pops a call frame for `lanes`, delivering the callee's return values.
    pub fn finish_call(&mut self, id: u32, lanes: u32, call_pc: u32, dst: Option<R>) {
        let f = self.frags[id as usize].as_mut().expect("fragment");
        f.recs.pop();
        let callee = f.frames.pop().expect("callee frame");
        let caller = *f.frames.last().expect("caller frame");
        f.mask = lanes;
        f.pc = call_pc + 1;
        let w = f.warp as usize;
        let warp = &mut self.warps[w];
        let ret = warp.frames[callee as usize].as_ref().expect("callee frame").ret;
        if let Some(d) = dst {
            let regs = &mut warp.frames[caller as usize].as_mut().expect("caller frame").regs;
            for l in lanes_of(lanes) {
                regs[d as usize * 32 + l] = ret[l];
            }
        }
        warp.release(callee);
    }

    /// Threads of a fragment leave the kernel. A unit they belong to that waits at a barrier,
    /// or their warp waiting at a collective, can never complete: barrier divergence.
    pub fn exit_lanes(&mut self, g: &mut GCtx, warp: u32, mask: u32, pc: u32) {
        self.warps[warp as usize].exited |= mask;
        if self.s.cfg.checks.races {
            let with_state = mask & self.race_state[warp as usize];
            self.race_state[warp as usize] &= !mask;
            for l in lanes_of(with_state) {
                self.forget_exited(warp as usize, l);
            }
        }
        let first = self.thread(warp, mask.trailing_zeros());
        let waiting = self
            .barriers
            .iter()
            .find(|((size, unit), _)| lanes_of(mask).any(|l| u64::from(warp * 32 + l as u32) / (*size).max(1) == *unit))
            .map(|(_, b)| (b.span, b.first, "a barrier"));
        let waiting = waiting.or_else(|| {
            self.colls[warp as usize].as_ref().map(|c| {
                let span = self.s.code.funcs[c.site.0 as usize].info[c.site.1 as usize].span;
                (span, self.thread(warp, c.arrived.trailing_zeros()), "a warp collective")
            })
        });
        if let Some((span, waiter, what)) = waiting {
            let f = &self.s.code.funcs[self.s.kernel as usize];
            let exit_span = f.info.get(pc as usize).map(|i| i.span).unwrap_or(f.span);
            g.report(
                self.s,
                Report {
                    kind: ReportKind::Divergence,
                    message: format!("a thread left the kernel while the rest of its unit waits at {what}"),
                    span,
                    thread: waiter,
                    other: Some((exit_span, Some(first), "this thread returned here".into())),
                    notes: vec!["every thread of a barrier's unit must reach it".into()],
                },
            );
            self.stopped = true;
        }
    }

    /// Reports that nothing can run. A unit that is partly at a barrier (or a warp partly at
    /// a collective) is barrier divergence: the missing threads are blocked somewhere else.
    /// Otherwise it is a deadlock.
    pub fn report_deadlock(&self, g: &mut GCtx) {
        let s = self.s;
        let span_at = |f: &Frag| s.code.funcs[self.func_of(f) as usize].info[f.pc as usize].span;
        // Where the threads that are not at the partial barrier wait.
        let elsewhere = |skip: &dyn Fn(&Frag) -> bool| -> Option<(Span, Option<Thread>, String)> {
            self.frags.iter().flatten().find(|f| !skip(f)).map(|f| {
                let what = match f.wait {
                    Wait::Barrier(_) => "waits at this barrier instead",
                    Wait::Collective => "waits at this warp collective instead",
                    Wait::Grid => "waits at this grid barrier instead",
                    _ => "is blocked here",
                };
                (span_at(f), Some(self.thread(f.warp, f.mask.trailing_zeros())), what.to_string())
            })
        };
        let mut bars: Vec<(&(u64, u64), &BarState)> = self.barriers.iter().collect();
        bars.sort_by_key(|(k, _)| **k);
        if let Some((k, b)) = bars.first() {
            let (size, unit) = **k;
            let site = b.site;
            let other = elsewhere(&|f: &Frag| f.wait != Wait::Collective && (self.func_of(f), f.pc) == site);
            let report = Report {
                kind: ReportKind::Divergence,
                message: format!("only {} of the {} threads of a unit reached this barrier", b.arrived, b.expected),
                span: b.span,
                thread: b.first,
                other,
                notes: vec![format!(
                    "the unit is threads {}..{} of block {}; a barrier must be reached by every thread of its unit",
                    unit * size,
                    (unit + 1) * size,
                    self.block
                )],
            };
            g.report(s, report);
            return;
        }
        for (w, c) in self.colls.iter().enumerate() {
            if let Some(c) = c {
                let span = s.code.funcs[c.site.0 as usize].info[c.site.1 as usize].span;
                let other = elsewhere(&|f: &Frag| f.warp != w as u32 || f.wait == Wait::Collective);
                let report = Report {
                    kind: ReportKind::Divergence,
                    message: format!(
                        "only {} of the {} lanes of warp {w} reached this warp collective",
                        c.arrived.count_ones(),
                        self.warps[w].live.count_ones()
                    ),
                    span,
                    thread: self.thread(w as u32, c.arrived.trailing_zeros()),
                    other,
                    notes: vec!["a warp collective must be reached by every lane of the warp".into()],
                };
                g.report(s, report);
                return;
            }
        }
        let (span, thread) = match self.frags.iter().flatten().next() {
            Some(f) => (span_at(f), self.thread(f.warp, f.mask.trailing_zeros())),
            None => (s.code.funcs[s.kernel as usize].span, Thread { block: self.block, thread: 0 }),
        };
        let grid = self.frags.iter().flatten().any(|f| f.wait == Wait::Grid);
        let mbar = self.frags.iter().flatten().any(|f| f.wait == Wait::Mbarrier);
        let notes = if grid {
            vec!["threads wait at a grid barrier that the other blocks never reach".into()]
        } else if mbar {
            vec!["threads wait for an mbarrier phase that can no longer complete: its remaining arrivals or transaction bytes never come, or the parity names a phase that is not next".into()]
        } else {
            vec!["every remaining thread waits for another that never arrives".into()]
        };
        g.report(
            s,
            Report {
                kind: ReportKind::Deadlock,
                message: "deadlock: no thread can make progress".into(),
                span,
                thread,
                other: None,
                notes,
            },
        );
    }

    pub fn report_grid_divergence(&self, g: &mut GCtx) {
        let f = self.frags.iter().flatten().next();
        let (span, thread) = match f {
            Some(f) => (
                self.s.code.funcs[self.func_of(f) as usize].info[f.pc as usize].span,
                self.thread(f.warp, f.mask.trailing_zeros()),
            ),
            None => (self.s.code.funcs[self.s.kernel as usize].span, Thread { block: self.block, thread: 0 }),
        };
        g.report(
            self.s,
            Report {
                kind: ReportKind::Divergence,
                message: "a grid barrier was reached by some blocks while others had finished".into(),
                span,
                thread,
                other: None,
                notes: vec!["a grid barrier must be reached by every thread of the grid".into()],
            },
        );
    }

    pub fn func_of(&self, f: &Frag) -> u32 {
        let frame = *f.frames.last().expect("a frame");
        self.warps[f.warp as usize].frames[frame as usize].as_ref().expect("live frame").func
    }

    /// Number of threads of the block in unit `unit` of `size` threads.
    pub fn unit_threads(&self, size: u64, unit: u64) -> u64 {
        let t = u64::from(self.s.block);
        let start = unit * size;
        (start + size).min(t).saturating_sub(start)
    }
}

/// The lanes set in `mask`.
pub fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros();
            m &= m - 1;
            Some(l as usize)
        }
    })
}

/// What a fuel or time limit stopped at op `pc` of `fc`, for its message: the innermost
/// loop around the op (`"this loop"` and its span), or the op itself (`"this code"`).
pub(super) fn stuck_at(fc: &FuncCode, pc: u32) -> (&'static str, Span) {
    let pc = pc.min(fc.ops.len() as u32 - 1);
    // An inlined call's body is reported as the callee's code, as the call would be.
    if fc.info[pc as usize].inlined {
        return ("this code", fc.info[pc as usize].span);
    }
    let mut best: Option<(u32, Span)> = None;
    for (at, op) in fc.ops.iter().enumerate() {
        if let Op::LoopEnter { exit } = op
            && (at as u32) < pc
            && pc <= *exit
            && best.is_none_or(|(b, _)| at as u32 > b)
        {
            best = Some((at as u32, fc.info[at].span));
        }
    }
    match best {
        Some((_, span)) => ("this loop", span),
        None => ("this code", fc.info[pc as usize].span),
    }
}

fn spin_notes(not_started: usize) -> Vec<String> {
    let mut notes =
        vec!["every thread that could still run is polling memory that has not changed since it last looked".into()];
    if not_started > 0 {
        notes.push(format!(
            "{not_started} block(s) have not started: like a GPU, the simulator keeps at most {} blocks resident, so a block must not wait for one that may start later (take a ticket with `atomic_add` rather than trusting the block index order)",
            super::RESIDENT_BLOCKS
        ));
    }
    notes
}

/// What read shared memory that no thread had written, for the `uninitialized-read` report.
/// Every instruction that reads shared memory notes its reads: the hardware reads whatever
/// bytes are there, and the simulator's poison (0xFF) would make its outputs differ from a
/// GPU's without a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBy {
    /// A plain, volatile or vector load.
    Load,
    /// An `atomic_load`.
    AtomicLoad,
    /// An atomic read-modify-write (`atomic_add`, `atomic_exch`, `atomic_cas`, ...), which
    /// writes the bytes it read: judged when it runs, not at the block's end.
    Update,
    /// A row of an `ldmatrix_*`.
    Ldmatrix,
    /// An element of a wgmma's A tile.
    WgmmaA,
    /// An element of a wgmma's B tile.
    WgmmaB,
    /// The source of a `cp_async`.
    CopySource,
    /// The box a `tma_store_*d` reads.
    TmaStore,
}

impl ReadBy {
    /// The read, as a report names it.
    pub fn describe(self) -> &'static str {
        match self {
            ReadBy::Load => "read",
            ReadBy::AtomicLoad => "atomic read",
            ReadBy::Update => "atomic read-modify-write",
            ReadBy::Ldmatrix => "`ldmatrix` row read",
            ReadBy::WgmmaA => "wgmma A-tile read",
            ReadBy::WgmmaB => "wgmma B-tile read",
            ReadBy::CopySource => "`cp_async` source read",
            ReadBy::TmaStore => "TMA store's read",
        }
    }
}

/// A read of shared bytes `byte .. byte + n` that were not written when it ran: the site
/// (function, access), the reading thread and what read.
#[derive(Clone, Copy, Debug)]
pub struct UnwrittenRead {
    pub byte: usize,
    pub n: usize,
    pub func: u32,
    pub access: u32,
    /// The array read through ([`BlockSim::array_tag`]).
    pub tag: u64,
    /// Whether every byte had been written when the read ran, as another array's (the
    /// report says so, rather than that no thread had written them).
    pub other: bool,
    pub tid: u32,
    pub by: ReadBy,
}

impl BlockSim<'_> {
    /// Notes that the mbarrier at shared byte `byte` became valid (`mbarrier_init`) or
    /// stopped being so (`mbarrier_inval`), for [`Self::valid_mbar_in`].
    pub fn note_mbar_validity(&mut self, byte: usize, valid: bool) {
        if valid {
            self.valid_mbars += 1;
            self.mbar_span = (self.mbar_span.0.min(byte), self.mbar_span.1.max(byte + 8));
        } else {
            self.valid_mbars = self.valid_mbars.saturating_sub(1);
            if self.valid_mbars == 0 {
                self.mbar_span = (usize::MAX, 0);
            }
        }
        if self.mbar_words.is_empty() {
            self.mbar_words = vec![0; self.shared.len().div_ceil(8).div_ceil(64).max(1)];
        }
        let last = byte + 7;
        for word in byte / 8..=last / 8 {
            // A word keeps its bit while another valid barrier has bytes in it.
            let on = valid || self.valid_mbar_at_word(word).is_some();
            if let Some(bits) = self.mbar_words.get_mut(word / 64) {
                if on {
                    *bits |= 1 << (word % 64);
                } else {
                    *bits &= !(1 << (word % 64));
                }
            }
        }
    }

    /// The byte of a valid mbarrier with bytes in 8-byte word `word` of shared memory.
    fn valid_mbar_at_word(&self, word: usize) -> Option<usize> {
        self.valid_mbar_of_word(word, (word * 8, word * 8 + 8))
    }

    /// The byte of a valid mbarrier with bytes in 8-byte word `word` and in the bytes
    /// `at .. end`.
    fn valid_mbar_of_word(&self, word: usize, (at, end): (usize, usize)) -> Option<usize> {
        ((word * 8).saturating_sub(7)..word * 8 + 8)
            .find(|&k| k < end && k + 8 > at && self.mbars.get(&k).is_some_and(|m| m.valid))
    }

    /// The byte of a valid mbarrier that an access of the `n` shared bytes from `at`
    /// touches, unless the access is an mbarrier operation ([`Self::mbar_op`]). The PTX ISA
    /// makes any other operation on an initialised mbarrier object undefined, a load as
    /// much as a store: its memory may serve another purpose only after `mbarrier.inval`.
    /// Two comparisons for an access outside [`Self::mbar_span`], else one bit test per
    /// 8-byte word; nothing while no barrier is valid.
    #[inline]
    pub fn valid_mbar_in(&self, at: usize, n: usize) -> Option<usize> {
        let end = at + n.max(1);
        if self.valid_mbars == 0 || end <= self.mbar_span.0 || at >= self.mbar_span.1 || self.mbar_op {
            return None;
        }
        (at / 8..=(end - 1) / 8)
            .filter(|&word| self.mbar_words.get(word / 64).is_some_and(|b| b & (1 << (word % 64)) != 0))
            .find_map(|word| self.valid_mbar_of_word(word, (at, end)))
    }

    /// The array an access site `access` of the function of frame `fr` reaches, as
    /// [`Self::sarrays`] keeps it: a declaration's number and the frame's shared base (so
    /// that one declaration at two places, a callee's scratch in two calls with different
    /// offsets, is two arrays, and two declarations at one place are two as well); for a
    /// parameter's memory, the tag the caller's argument had; 0 for memory no shared array
    /// is (thread-local arrays).
    #[inline]
    pub fn array_tag(&self, fr: &Frame, access: u32) -> u64 {
        match self.s.code.funcs[fr.func as usize].array_of.get(access as usize) {
            Some(&ArrayOf::Decl(d)) => (fr.smem_base << 32) | (u64::from(d) + 1),
            Some(&ArrayOf::Param(k)) => fr.ptags.get(k as usize).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// Marks bytes `at .. at + n` of shared memory written (with race checks) as array
    /// `tag`'s ([`Self::array_tag`]).
    #[inline]
    pub fn mark_written(&mut self, at: usize, n: usize, tag: u64) {
        if self.swritten.is_empty() {
            return;
        }
        // The common widths without a loop (a landed copy marks element by element).
        let changed = match self.sarrays.get_mut(at..at + n) {
            Some([a]) => std::mem::replace(a, tag) != tag,
            Some([a, b]) => (std::mem::replace(a, tag) ^ tag) | (std::mem::replace(b, tag) ^ tag) != 0,
            Some([a, b, c, d]) => {
                let old = [*a, *b, *c, *d];
                (*a, *b, *c, *d) = (tag, tag, tag, tag);
                old != [tag; 4]
            }
            Some(d) => {
                let changed = d.iter().any(|&t| t != tag);
                d.fill(tag);
                changed
            }
            None => false,
        };
        self.retags += u64::from(changed);
        match bits_in_word(at, n) {
            Some((word, bits)) => self.swritten[word] |= bits,
            None => {
                for b in at..at + n {
                    self.swritten[b / 64] |= 1 << (b % 64);
                }
            }
        }
    }

    /// Whether every byte of `at .. at + n` is marked written (a word test when the bytes
    /// share one 64-byte word of the bitmap, as every access of 16 bytes or fewer that is
    /// aligned to its size does).
    #[inline(always)]
    pub(super) fn all_written(&self, at: usize, n: usize) -> bool {
        match bits_in_word(at, n) {
            Some((word, bits)) => self.swritten[word] & bits == bits,
            None => (at..at + n).all(|b| self.swritten[b / 64] & (1 << (b % 64)) != 0),
        }
    }

    /// Whether some byte of `at .. at + n` of shared memory has not been written by a
    /// thread of this block as array `tag`'s (always false without race checks). Bytes an
    /// asynchronous copy still in flight will write do not count: reading them before the
    /// copy lands is a race, which the race check reports.
    #[inline]
    pub fn unwritten(&self, at: usize, n: usize, tag: u64) -> bool {
        if self.swritten.is_empty() || self.written_as(at, n, tag) {
            return false;
        }
        !self.in_flight_bytes(at, n)
    }

    /// Whether every byte of `lo .. hi` was last tagged as array `tag`'s (always for `tag`
    /// 0), written or not: one pass without branches over a tile's bytes, where
    /// [`Self::written_as`] element by element costs a call per element.
    #[inline]
    pub fn tagged_all(&mut self, range: (usize, usize), tag: u64) -> bool {
        if tag == 0 || self.tagged_memo.contains(&(range, tag, self.retags)) {
            return true;
        }
        let all = self.sarrays.get(range.0..range.1).is_some_and(|d| d.iter().fold(0, |a, &t| a | (t ^ tag)) == 0);
        if all {
            self.tagged_memo.rotate_right(1);
            self.tagged_memo[0] = (range, tag, self.retags);
        }
        all
    }

    /// Whether every byte of `at .. at + n` was written, and last as array `tag`'s (any
    /// array's for a read of `tag` 0, which names none; every shared access names one).
    #[inline(always)]
    fn written_as(&self, at: usize, n: usize, tag: u64) -> bool {
        self.all_written(at, n)
            && (tag == 0 || self.sarrays.get(at..at + n).is_none_or(|d| d.iter().all(|&t| t == tag)))
    }

    /// Whether some of the `n` shared bytes from `at` (one at least) lie in a word an
    /// asynchronous copy still in flight will write (always false without race checks);
    /// 64 words at a time, so a wgmma tile's whole byte range is one call.
    #[inline]
    pub fn in_flight_bytes(&self, at: usize, n: usize) -> bool {
        self.sflight_words > 0 && any_bit(&self.sflight, at / 4, (at + n.max(1) - 1) / 4)
    }

    /// The first word of the `n` shared bytes from `at` that an asynchronous copy still in
    /// flight will write, if any.
    #[inline]
    pub fn word_in_flight_of(&self, at: usize, n: usize) -> Option<usize> {
        if self.sflight_words == 0 {
            return None;
        }
        (at / 4..=(at + n.max(1) - 1) / 4).find(|&word| self.word_in_flight(word))
    }

    /// Whether 4-byte word `word` of shared memory is marked in [`Self::sflight`].
    #[inline]
    fn word_in_flight(&self, word: usize) -> bool {
        let (i, bit) = flight_bit(word);
        self.sflight_words > 0 && self.sflight.get(i).is_some_and(|w| w & bit != 0)
    }

    /// Notes a plain read by lane `l` of warp `w` at `(func, access)` of the `n` shared
    /// bytes from `byte` when some of them are not written yet (the first such read of each
    /// site; [`Self::report_unwritten_reads`] judges it when the block ends).
    #[inline]
    pub fn note_if_unwritten(&mut self, site: (u32, u32, u64), lane: (usize, usize), byte: u64, n: u64) {
        self.note_read_if_unwritten(ReadBy::Load, site, lane, byte, n);
    }

    /// [`Self::note_if_unwritten`] for a read by any instruction that reads shared memory
    /// (`by`: which, for the report). An instruction that also writes the bytes (an atomic
    /// read-modify-write) must be noted before its write, with [`ReadBy::Update`]: it is
    /// judged now, as nothing written later can have been what it read.
    #[inline]
    pub fn note_read_if_unwritten(
        &mut self,
        by: ReadBy,
        (func, access, tag): (u32, u32, u64),
        (w, l): (usize, usize),
        byte: u64,
        n: u64,
    ) {
        let (byte, n) = (byte as usize, n as usize);
        if !self.unwritten(byte, n, tag) {
            return;
        }
        let other = self.all_written(byte, n);
        let read = UnwrittenRead { byte, n, func, access, tag, other, tid: w as u32 * 32 + l as u32, by };
        // One per site (one instruction, so one kind of read): the first, unless its bytes
        // have been written since and it was not judged already, when it can no longer be
        // reported (bits are never cleared) and this one takes its place.
        if !self.unwritten_reads.iter().any(|r| r.func == func && r.access == access) {
            self.unwritten_reads.push(read);
        }
    }

    /// [`Self::note_if_unwritten`] for the lanes of `mask` of a warp instruction, reading
    /// `n` bytes at `at[l] + off`; nothing to do without race checks (no bitmap).
    #[inline]
    pub fn note_lanes_if_unwritten(
        &mut self,
        site: (u32, u32, u64),
        w: usize,
        mask: u32,
        at: &[u64; 32],
        off: u64,
        n: u64,
    ) {
        if self.swritten.is_empty() {
            return;
        }
        for l in lanes_of(mask) {
            // The common case, bytes written as this array's, without a call.
            if !self.written_as((at[l] + off) as usize, n as usize, site.2) {
                self.note_if_unwritten(site, (w, l), at[l] + off, n);
            }
        }
    }

    /// At the block's end: reports the noted reads, each of bytes no thread of the block had
    /// written when it ran (`uninitialized-read`). Bytes written later do not excuse a read:
    /// a write the race check ordered after it (a barrier between them) came too late on
    /// every schedule. One it did not order is a race, reported as such; so where this
    /// worker has reported a race, reads of bytes written since are left to that report
    /// (until 2026-11-29 they were always dropped, and a read of a slot its pipeline
    /// refilled only after the read ran clean; `tests/ui/run/checks/uninitialized_read.prism`).
    pub fn report_unwritten_reads(&mut self, g: &mut GCtx) {
        let reads = std::mem::take(&mut self.unwritten_reads);
        // A block stopped early (another finding, a deadlock) may not have reached its
        // writes: only a block that ran to its end says what was never written.
        if self.stopped || self.alive > 0 || self.s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let raced = g.reports.iter().any(|r| matches!(r.kind, ReportKind::Race(_)));
        for r in reads {
            if r.by == ReadBy::Update || !raced || self.unwritten(r.byte, r.n, r.tag) {
                self.report_unwritten(g, r);
            }
        }
    }

    /// Hands what a finished block allocated to the next block run on this worker: its
    /// shared-memory race shadow, reset (resetting the cells a block touched costs less
    /// than a fresh shadow), and its warps' register files.
    pub fn recycle(&mut self, g: &mut GCtx) {
        self.sshadow.reset();
        g.spare_sshadow = std::mem::take(&mut self.sshadow);
        g.spare_sarrays = std::mem::take(&mut self.sarrays);
        for w in &mut self.warps {
            g.spare_regs.extend(w.frames.drain(..).flatten().map(|f| f.regs));
        }
    }
}

/// Whether any of bits `first ..= last` of `bits` is set (bits past its end are clear).
fn any_bit(bits: &[u64], first: usize, last: usize) -> bool {
    (first / 64..=last / 64).any(|i| {
        let lo = if i == first / 64 { first % 64 } else { 0 };
        let hi = if i == last / 64 { last % 64 } else { 63 };
        let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
        bits.get(i).is_some_and(|w| w & mask != 0)
    })
}

/// The element of [`BlockSim::sflight`] holding shared-memory word `word`, and its bit.
#[inline]
pub(super) fn flight_bit(word: usize) -> (usize, u64) {
    (word / 64, 1u64 << (word % 64))
}

/// The shared-memory words a copy of `count` elements of `size` bytes from byte `first`
/// writes (copies write whole, aligned words).
pub(super) fn flight_words(first: usize, count: usize, size: u64) -> std::ops::Range<usize> {
    first / 4..(first + count * size as usize).div_ceil(4)
}

/// The bitmap word holding bytes `at .. at + n` and their bits in it, when they share one
/// word (`n` from 1 to 64).
#[inline(always)]
fn bits_in_word(at: usize, n: usize) -> Option<(usize, u64)> {
    let off = at % 64;
    (n >= 1 && off + n <= 64).then(|| (at / 64, (u64::MAX >> (64 - n)) << off))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`any_bit`] over a range is whether some bit of it is set, one at a time: ranges
    /// within one word, across several, at both ends of the set, and past its end.
    #[test]
    fn any_bit_is_each_bit() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut found = 0;
        for _ in 0..20_000 {
            let len = 1 + next(4) as usize;
            // Sparse bits, so that many ranges hold none.
            let bits: Vec<u64> = (0..len).map(|_| (0..next(3)).fold(0, |w, _| w | 1 << next(64))).collect();
            let first = next(64 * len as u64 + 8) as usize;
            let last = first + next(150) as usize;
            let want = (first..=last).any(|b| bits.get(b / 64).is_some_and(|w| w & (1 << (b % 64)) != 0));
            assert_eq!(any_bit(&bits, first, last), want, "{bits:x?} {first}..={last}");
            found += usize::from(want);
        }
        assert!(found > 2_000 && found < 18_000, "{found}");
    }
}

//! Race detection: shadow state per memory location (KPL's rules, seed 004; see
//! `docs/references.md` and `docs/simulator.md`, "Races").
//!
//! Two accesses by different threads of one block conflict when at least one writes, they
//! are not both atomic, and no barrier whose unit contains both threads separates them.
//! Barrier scopes form levels (the distinct unit sizes the kernel synchronises: a warp, named
//! sub-block groups, the block), and every thread counts the barriers it has passed at each
//! level. For two threads, only barriers at levels whose units contain both count; the
//! accesses are ordered iff the later thread has passed more of those barriers than the
//! earlier one had (the barriers are collective, so both threads pass the same ones).
//! Accesses by different blocks to global memory conflict at any time in the run (there is
//! no inter-block ordering besides atomics), unless a grid barrier separates them.
//!
//! Per location the shadow keeps the last write, the latest atomic update of every thread
//! since that write (exact: a thread's latest orders nothing its earlier ones did not), and
//! up to [`READS`] reads: a thread's latest read replaces its earlier one, and each warp
//! keeps at most two from different lanes, so a write by any lane still meets a read by
//! another lane of its warp. Keeping a bounded history of reads can miss a race in a pattern
//! where more warps read a location than the history holds and only the dropped records are
//! unordered with the later write; every other race is reported. Volatile accesses (unsafe code) are recorded
//! as atomic ones: they never race with each other or with atomics, and race with plain
//! accesses that nothing orders (`sim/access.rs`, `race_kind`). Shared memory is shadowed
//! per byte ([`SharedShadow`]), so accesses of different widths meet where they overlap.
//!
//! Fences and flags order accesses too ([`Release`]): a conflict whose earlier access was
//! published by its thread through a fence and an atomic or volatile flag store, which the
//! later thread observed with an atomic or volatile load followed by its own fence, is not
//! a race; so is one whose earlier access an mbarrier wait, or a landed TMA copy's wait,
//! orders. The shadow checks barriers itself, and asks the simulator about the rest
//! (`access_with`'s predicate, `sim/access.rs`, `Orders`) for every record that barriers
//! leave unordered, so that one record ordered that way does not hide the location's others.

/// How many reads each location remembers.
pub const READS: usize = 4;
/// How many barrier levels are counted (the block and the three largest sub-block sizes a
/// kernel synchronises; barriers of smaller sizes beyond those are not counted).
pub const LEVELS: usize = 4;
/// The level of a barrier that no level counts ([`Levels::level_of`]).
pub const NOT_COUNTED: usize = usize::MAX;

/// One recorded access. Kept small: the shadow holds several per memory element. Its
/// `counts` are the barriers the thread had *arrived* at: what orders the access before other
/// threads' later accesses (with full barriers, arriving and passing are one event; a split
/// barrier's arrive comes first, and an access between a thread's arrive and its wait is not
/// ordered by that barrier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acc {
    /// Thread index in its block.
    pub tid: u32,
    /// Barriers passed at each level when it happened.
    pub counts: [u32; LEVELS],
    /// The function (for the report).
    pub func: u16,
    /// The access site in that function (for the report).
    pub site: u16,
    /// The fences the thread had executed when it made the access (see [`Fences`]).
    pub fences: Fences,
    /// A read made by an atomic load: it races with plain writes only.
    pub atomic: bool,
    /// For an atomic of safe code, what it does as synchronisation inference sees it
    /// ([`Phase`]); [`Phase::NONE`] for every other access.
    pub phase: Phase,
}

impl Acc {
    /// Where an access happened, without its barrier counts.
    pub fn at(&self) -> Site {
        Site { tid: self.tid, func: self.func, site: self.site, fences: self.fences }
    }
}

/// How many fences a thread has executed: device-wide (`__threadfence()`) and of any scope
/// (`__threadfence_block()` too), saturating. An access is ordered before a release when the
/// releasing thread fenced after it: its count then is higher than at the access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fences {
    /// Device-wide fences.
    pub device: u16,
    /// Fences of any scope.
    pub any: u16,
}

impl Fences {
    /// After a fence (`device`: `__threadfence()`, else `__threadfence_block()`).
    pub fn bump(&mut self, device: bool) {
        if device {
            self.device = self.device.saturating_add(1);
        }
        self.any = self.any.saturating_add(1);
    }
}

/// A write that publishes (a release): an atomic or volatile store to a flag by a thread
/// that had fenced, or an mbarrier arrival. A thread that reads the flag with an atomic or
/// volatile load sees it, and after its own fence, everything the writer did before its
/// fence is ordered before what the reader does next (message passing, as in the decoupled
/// look-back scan); a thread that waits for the mbarrier's phase acquires its arrivals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The writer's block.
    pub block: u32,
    /// The writer's thread in its block.
    pub tid: u32,
    /// The writer's fences when it stored the flag.
    pub fences: Fences,
    /// The barriers the writer had passed at the release, at each level, when the release
    /// is cumulative over them (an mbarrier arrival): another thread's access that one of
    /// those barriers ordered before the writer is released too, as the PTX ISA's release
    /// is (the CUTLASS consumer: every lane reads a slot, `__syncwarp()`, one elected lane
    /// arrives). For a flag, the barriers the writer had passed at its last fence (the
    /// release is the fence, the store publishes it), for readers in the writer's block.
    /// All zero for a release that orders only its own thread's accesses (a landing), since
    /// no access is ordered before zero barriers ([`Levels::ordered`]).
    pub counts: [u32; LEVELS],
    /// The block whose threads it reaches, or [`EVERY_BLOCK`]. A release that a flag carries
    /// on for its writer, which acquired it, reaches only the writer's block when the
    /// writer's fence before the flag was `__threadfence_block()`: that fence synchronises
    /// with no thread of another block (`sim/flags.rs`).
    pub reach: u32,
    /// The block of the thread whose fence and store (or arrival) released it: a thread of
    /// another block acquires it only with `__threadfence()`. Its writer's block, unless a
    /// flag carries it on for a thread that acquired it.
    pub via: u32,
    /// The block barriers its writer had passed at its last device-wide fence: for a reader
    /// in another block the release covers, besides its writer's own accesses, those of the
    /// writer's block whose threads arrived at fewer block barriers when they made them
    /// (all threads write, `__syncthreads()`, one thread fences and sets the flag). 0 for a
    /// release with no such fence, an arrival or a landing.
    pub gbar: u32,
    /// Carried out of its writer's block by a thread of that block through a device-wide
    /// fence: for a reader in another block it orders what it orders within its block (its
    /// writer's accesses before its release, not only before a device-wide fence, and those
    /// barriers ordered before it), since the acquisition in the block and the device-wide
    /// release after it are each morally strong (review R10: a block-scoped flag or an
    /// mbarrier arrival relayed by a `__threadfence()` was a false report).
    pub relayed: bool,
    /// Carried on by a thread of another block than its writer's, which acquired it with
    /// the rules for readers in other blocks: a reader in the writer's block that acquires
    /// it from there may rely on those rules only (its writer's device-wide fences, the
    /// block barriers before the last of them, [`Self::gbar`]), not on its writer's block
    /// fences and barriers. A writer's `__threadfence_block()` and flag, relayed by a thread
    /// of another block back to a reader in the writer's block, synchronise with nothing on
    /// the way (review R12: until 2026-11-30 that reader was credited the block fence).
    pub left: bool,
}

/// [`Release::reach`] of a release that threads of every block may acquire.
pub const EVERY_BLOCK: u32 = u32::MAX;

impl Release {
    /// Whether this release, acquired by a thread of block `reader`, orders an earlier
    /// access `earlier` of block `block`: by the same writer, which fenced (device-wide
    /// across blocks, of any scope within one) after that access; by another thread of the
    /// writer's block that a barrier orders before the release (one that the earlier thread
    /// arrived at after its access and the writer had passed when it released, [`Self::counts`]);
    /// or, for the TMA copies landed through an mbarrier ([`landing_tid`]), a release of the
    /// phase that landed them or of a later one.
    pub fn orders(&self, lv: &Levels, reader: u32, block: u32, earlier: &Acc) -> bool {
        if self.block != block || !self.reaches(reader) {
            return false;
        }
        if self.tid == earlier.tid {
            return if is_landing(self.tid) {
                landing_gen(self.fences) > landing_gen(earlier.fences)
            } else if (block == reader && !self.left) || self.relayed {
                self.fences.any > earlier.fences.any
            } else {
                self.fences.device > earlier.fences.device
            };
        }
        // Cumulativity through barriers. A landing's pseudo-thread passes no barriers, and a
        // landing write is ordered only through a wait for its phase.
        if is_landing(self.tid) || is_landing(earlier.tid) {
            return false;
        }
        if block == reader && !self.left {
            return lv.ordered(earlier, self.tid, &self.counts);
        }
        // For a reader in another block, through the block's barriers before the writer's
        // last device-wide fence: another block's records keep only their block-level
        // barrier count ([`Site::with_block_count`]).
        earlier.counts[lv.block_level()] < self.gbar
    }

    /// The release of the TMA copies of block `block` that landed through the mbarrier at
    /// shared byte `mbar` in its phases up to generation `generation` ([`landing_tid`]): it
    /// orders only those copies, within the block.
    pub fn landing(block: u32, mbar: usize, generation: u32) -> Release {
        Release {
            block,
            tid: landing_tid(mbar),
            fences: landing_fences(generation),
            counts: [0; LEVELS],
            reach: EVERY_BLOCK,
            via: block,
            gbar: 0,
            relayed: false,
            left: false,
        }
    }

    /// Whether a thread of block `reader` may acquire it ([`Self::reach`]).
    pub fn reaches(&self, reader: u32) -> bool {
        self.reach == EVERY_BLOCK || self.reach == reader
    }

    /// What this release and `other`, of the same writer, both order: the earlier one's
    /// fences and the fewer barriers of each level, reaching the blocks both reach. `None`
    /// when they reach no block in common. A reader that may have acquired either one may
    /// rely on this alone (a flag's stores of one value, `sim/flags.rs`).
    pub fn common(&self, other: &Release) -> Option<Release> {
        let reach = match (self.reach, other.reach) {
            (EVERY_BLOCK, r) | (r, EVERY_BLOCK) => r,
            (a, b) if a == b => a,
            _ => return None,
        };
        let mut counts = self.counts;
        for (c, o) in counts.iter_mut().zip(other.counts) {
            *c = (*c).min(o);
        }
        let fences = if self.newer_than(other) { other.fences } else { self.fences };
        // Released by threads of different blocks: a block fence of any one block may not
        // acquire it (no block is [`EVERY_BLOCK`]).
        let via = if self.via == other.via { self.via } else { EVERY_BLOCK };
        let gbar = self.gbar.min(other.gbar);
        let relayed = self.relayed && other.relayed;
        let left = self.left || other.left;
        Some(Release { fences, counts, reach, via, gbar, relayed, left, ..*self })
    }

    /// Whether this release (of the same thread as `other`) orders more than `other`: it
    /// came later.
    pub fn newer_than(&self, other: &Release) -> bool {
        if is_landing(self.tid) {
            landing_gen(self.fences) > landing_gen(other.fences)
        } else {
            self.fences.any > other.fences.any
        }
    }

    /// The barrier counts of this release and `other` (of the same thread) together: the
    /// larger of each. A thread's counts only grow, so these are the counts of whichever of
    /// the two released later (or of the cumulative one, when the other is a flag's zeros),
    /// and order exactly what that one did: keeping one release per writer loses nothing.
    pub fn absorb_counts(&mut self, other: &Release) {
        for (c, o) in self.counts.iter_mut().zip(other.counts) {
            *c = (*c).max(o);
        }
        self.gbar = self.gbar.max(other.gbar);
        self.relayed &= other.relayed;
        self.left |= other.left;
    }
}

/// The mark of a pseudo-thread id ([`landing_tid`]); a block's threads are far fewer.
const LANDING: u32 = 1 << 31;

/// The pseudo-thread whose writes are the TMA copies that complete on the mbarrier at
/// shared-memory byte `mbar`. A copy's data lands when the barrier's phase completes, and
/// is ordered before a thread's access only through a wait for that phase (an acquire):
/// recorded as a thread of the block, a barrier it passed would order it too. Its "fences"
/// count the phases that landed copies ([`landing_fences`]): the copies of generation `g`
/// are recorded with `g - 1` and released with `g`.
pub fn landing_tid(mbar: usize) -> u32 {
    LANDING | u32::try_from(mbar).ok().filter(|&b| b < LANDING).expect("shared memory below 2 GiB")
}

/// Whether `tid` is a [`landing_tid`], and which mbarrier's.
pub fn landing_mbar(tid: u32) -> Option<usize> {
    is_landing(tid).then_some((tid & !LANDING) as usize)
}

fn is_landing(tid: u32) -> bool {
    tid & LANDING != 0
}

/// Generation `g` of an mbarrier's landed copies as the fences of its pseudo-thread (both
/// counts together hold 32 bits, so it does not saturate as a thread's fences do).
pub fn landing_fences(g: u32) -> Fences {
    Fences { device: (g >> 16) as u16, any: g as u16 }
}

/// The generation [`landing_fences`] made `f` of.
pub fn landing_gen(f: Fences) -> u32 {
    u32::from(f.device) << 16 | u32::from(f.any)
}

/// A thread and an access site: what a report needs about an earlier access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// Thread index in its block.
    pub tid: u32,
    /// The function.
    pub func: u16,
    /// The access site.
    pub site: u16,
    /// The thread's fences at the access.
    pub fences: Fences,
}

impl Site {
    /// The access as an [`Acc`] of another block whose barrier counts are known only at
    /// the block level (`bar`, [`u32::MAX`] when unknown): what a release's block-level
    /// cumulativity may order ([`Release::gbar`]).
    pub fn with_block_count(&self, lv: &Levels, bar: u32) -> Acc {
        let mut a = self.unknown_counts();
        a.counts[lv.block_level()] = bar;
        a
    }

    /// The access as an [`Acc`] whose barrier counts are not known (an access of another
    /// block, kept in the inter-block summary): taken as ordered before no barrier, so that
    /// nothing orders it through barriers.
    pub fn unknown_counts(&self) -> Acc {
        Acc {
            tid: self.tid,
            counts: [u32::MAX; LEVELS],
            func: self.func,
            site: self.site,
            fences: self.fences,
            atomic: false,
            phase: Phase::NONE,
        }
    }
}

/// What an atomic of safe code does to its element, as synchronisation inference sees it
/// (`prism_sync`'s `Mode::add`, `crates/prism_sync/src/graph.rs`): whether it changes
/// memory (every atomic but `atomic_load`), whether it *observes* (an `atomic_load`, an
/// `atomic_cas`, or an update whose old value the function reads: what it sees or leaves
/// depends on which updates came first), and which operation its update is. Computed once
/// per access site (`crate::code::FuncCode::phases`); [`Phase::NONE`] for plain and
/// volatile accesses and for atomics inside `with unsafe:`, which inference leaves to the
/// programmer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Phase(u16);

impl Phase {
    /// Not an atomic of safe code.
    pub const NONE: Phase = Phase(0);
    /// An atomic that updates (with operation `op`, one of
    /// [`prism_types::intrinsics::atomic_op`], 0 for none) and observes as given.
    pub fn new(update: bool, observe: bool, op: u8) -> Phase {
        Phase(u16::from(op) << 2 | u16::from(update) << 1 | u16::from(observe))
    }

    /// Whether this is an atomic of safe code (every such atomic updates or observes).
    pub fn is_some(self) -> bool {
        self.0 != 0
    }

    /// Whether it changes memory.
    pub fn update(self) -> bool {
        self.0 & 2 != 0
    }

    /// Whether it observes: what it sees, or leaves, depends on the updates before it.
    pub fn observe(self) -> bool {
        self.0 & 1 != 0
    }

    /// Its update's operation.
    pub fn op(self) -> u8 {
        (self.0 >> 2) as u8
    }

    /// Whether inference orders a phase of atomics like `self` against one like `other`
    /// when both touch an element of one unit (`Mode::conflicts` for two atomics that are
    /// not the same node): an update against an observing atomic, and two updates unless
    /// they are the same commutative operation or both overwrite (the last store wins
    /// whatever the phases).
    pub fn conflicts(self, other: Phase) -> bool {
        if self.update() && other.update() && self.op() != other.op() {
            return true;
        }
        (self.update() && other.observe()) || (self.observe() && other.update())
    }
}

/// What a conflicting pair was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RaceKind {
    /// Two writes.
    WriteWrite,
    /// A read, then a write.
    ReadWrite,
    /// A write, then a read.
    WriteRead,
    /// An atomic and a plain access.
    AtomicPlain,
    /// Two atomics of safe code at different places, one an update and the other an
    /// observing atomic (or two updates that do not commute), that nothing orders:
    /// inference orders such phases within a unit's own elements ([`Phase::conflicts`]),
    /// so their threads met through a view whose index function is not injective.
    AtomicPhase,
    /// A write to a tile a wgmma in flight reads (from its issue to the wait that completes
    /// its group), which nothing can order but that wait.
    WgmmaFlight,
}

impl RaceKind {
    /// Words for messages.
    pub fn describe(self) -> &'static str {
        match self {
            RaceKind::WriteWrite => "write-write",
            RaceKind::ReadWrite => "read-write",
            RaceKind::WriteRead => "write-read",
            RaceKind::AtomicPlain => "atomic-plain",
            RaceKind::AtomicPhase => "atomic-phase",
            RaceKind::WgmmaFlight => "wgmma-write",
        }
    }
}

/// A race found by the shadow: the earlier access and what kind of pair it is.
#[derive(Clone, Copy, Debug)]
pub struct Conflict {
    /// The earlier access.
    pub earlier: Site,
    /// Its block (for inter-block races).
    pub earlier_block: u32,
    /// The kind of pair.
    pub kind: RaceKind,
}

/// Kinds of access as far as races are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Plain load.
    Read,
    /// Plain store (or an asynchronous copy's write).
    Write,
    /// Atomic that changes memory (an update, an exchange, an atomic store).
    Atomic,
    /// Atomic load: it changes nothing, so it races only with plain writes.
    AtomicRead,
}

/// The unit sizes barriers synchronise, smallest first, and how to compare two threads.
#[derive(Clone, Debug)]
pub struct Levels {
    /// Unit sizes in threads; the last is the block.
    pub sizes: Vec<u64>,
    /// For each size below the block's, its base-2 logarithm when it is a power of two
    /// (two threads share a unit when their ids agree above that bit), else `None`.
    shifts: [Option<u32>; LEVELS],
}

impl Levels {
    /// Levels for barrier scopes of the given sizes in a block of `t` threads.
    pub fn new(mut scopes: Vec<u64>, t: u64) -> Levels {
        scopes.retain(|&s| s > 1 && s < t);
        scopes.push(32.min(t));
        scopes.sort_unstable();
        scopes.dedup();
        // Keep the largest LEVELS-1 sub-block sizes; the block is always the last level.
        let keep = LEVELS - 1;
        if scopes.len() > keep {
            scopes.drain(..scopes.len() - keep);
        }
        scopes.push(t);
        scopes.dedup();
        let mut shifts = [None; LEVELS];
        for (s, &size) in shifts.iter_mut().zip(&scopes) {
            *s = size.is_power_of_two().then(|| size.trailing_zeros());
        }
        Levels { sizes: scopes, shifts }
    }

    /// Whether every unit below the block is a whole number of warps: two lanes of one warp
    /// then share each unit with exactly the same other threads outside their warp.
    pub fn whole_warps(&self) -> bool {
        self.sizes[..self.sizes.len() - 1].iter().all(|s| s % 32 == 0)
    }

    /// The level index of the block's barriers.
    pub fn block_level(&self) -> usize {
        self.sizes.len() - 1
    }

    /// The level index a barrier over `size` threads counts at: its own size's, or
    /// [`NOT_COUNTED`] when the size is not one of the levels (more sub-block sizes than
    /// [`LEVELS`] holds). Counting it at a larger level would let a warp's barrier order
    /// two warps' accesses; counting it nowhere can only report a race it ordered.
    pub fn level_of(&self, size: u64) -> usize {
        match self.sizes.iter().position(|&s| s == size) {
            Some(i) => i,
            None if size >= *self.sizes.last().expect("the block is a level") => self.sizes.len() - 1,
            None => NOT_COUNTED,
        }
    }

    /// Whether an access by `t2`, which has passed `counts2` barriers, is ordered after
    /// `earlier`: `t2` passed a barrier (at a level whose units hold both threads) that the
    /// earlier thread arrived at after its access.
    pub fn ordered(&self, earlier: &Acc, t2: u32, counts2: &[u32; LEVELS]) -> bool {
        if earlier.tid == t2 {
            return true;
        }
        let (e, t) = (u64::from(earlier.tid), u64::from(t2));
        // The smallest unit holding both threads (the block, the last level, holds every
        // pair). Unit sizes are mostly powers of two: a shift, precomputed, instead of two
        // divisions (this runs for every record a checked access meets).
        let n = self.sizes.len();
        let mut l = n - 1;
        for i in 0..n - 1 {
            let same = match self.shifts[i] {
                Some(k) => (e ^ t) >> k == 0,
                None => e / self.sizes[i] == t / self.sizes[i],
            };
            if same {
                l = i;
                break;
            }
        }
        // The barriers of level `l` and above that each thread has counted (a loop over the
        // fixed-size arrays, which the compiler unrolls, instead of slices).
        let (mut a, mut b) = (0u64, 0u64);
        // Indexing both arrays in one loop keeps it unrolled: a zip of iterators made kernel
        // 06's checked run 13% longer. A level counts only where one unit of it holds both
        // threads: sizes that do not nest (64 and 96 in a block of 192) can put two threads
        // in one unit of the smaller size and in two units of the larger, whose barriers
        // order nothing between them.
        #[allow(clippy::needless_range_loop)]
        for i in 0..LEVELS {
            if i >= l && i < n && (i == n - 1 || e / self.sizes[i] == t / self.sizes[i]) {
                a += u64::from(earlier.counts[i]);
                b += u64::from(counts2[i]);
            }
        }
        a < b
    }
}

/// Which of a cell's read records (`tids`: the threads of the reads it holds) a new read by
/// thread `tid` takes: the same thread's earlier read is superseded; otherwise at most two
/// reads per warp are kept, from different lanes, so that a later write by any lane still
/// meets a read by another lane of its warp; then a free record; then the records in turn
/// (`next`). [`Cell`] and [`SharedShadow`] keep reads by this one rule (atomic updates are
/// kept exactly, [`atomic_slot`]). An empty record's thread is [`NOBODY`] (no thread has
/// that id). One pass over the records: this runs for every checked read of shared memory.
///
/// A thread's atomic read that takes the place of its own plain read leaves the record
/// plain, with the new read's moment (`Cell::access_with`, `SharedShadow::record`): an
/// atomic update by another thread checks plain reads only, so the atomic read hid the
/// plain one, and review R75 (2026-12-03) found a plain read, then an `atomic_load` of the
/// same element by the same thread, then another thread's unordered `atomic_add`, running
/// clean. The later moment orders no less than the earlier one (whatever orders a thread's
/// later access orders its earlier ones), so no race is missed; one is reported that a
/// fence between the two reads, released to the updating thread, would have ordered.
#[inline]
fn read_slot<const N: usize>(tids: [u32; N], next: &mut u8, tid: u32) -> usize {
    let warp = tid / 32;
    // The first record of the warp and the first free one, `N` for none.
    let (mut same_warp, mut first_same, mut free) = (0, N, N);
    for (i, &t) in tids.iter().enumerate() {
        if t == tid {
            return i;
        }
        if t == NOBODY {
            free = free.min(i);
        } else if t / 32 == warp {
            same_warp += 1;
            first_same = first_same.min(i);
        }
    }
    if same_warp >= 2 {
        first_same
    } else if free < N {
        free
    } else {
        *next = (*next + 1) % N as u8;
        *next as usize
    }
}

/// Where thread `tid`'s atomic record is among `recs` (sorted by thread, one per thread):
/// `Ok` its position, to be replaced, or `Err` where it goes. A thread's latest atomic
/// replaces its earlier one because it orders nothing more: a thread's barrier counts and
/// fences only grow, so whatever orders the latest (a barrier the thread arrived at after
/// it, a release that it fenced or arrived before, a barrier before such an arrival) orders
/// the earlier one too, and a plain access that the earlier one races with races with the
/// latest. Any other record may be the only one a later access races with, so none is
/// dropped: the records are exact, and there are at most as many as the block's threads.
/// Sorted, so that finding a thread's record costs a binary search however many threads
/// update the location (a reduction into one element by every thread of a block).
#[inline]
fn atomic_slot<R, K: Ord + Copy>(recs: &[R], tid: K, tid_of: impl Fn(&R) -> K) -> Result<usize, usize> {
    // The latest record is the likeliest (a thread repeating its update, or the lanes of
    // a warp instruction in order).
    match recs.last().map(&tid_of) {
        Some(t) if t == tid => Ok(recs.len() - 1),
        Some(t) if t < tid => Err(recs.len()),
        _ => recs.binary_search_by_key(&tid, tid_of),
    }
}

/// The phase records of one location: the atomics of safe code made there
/// ([`Phase::is_some`]), for the check that no two of them, at different access sites, one
/// an update and the other an observing atomic (or two updates that do not commute,
/// [`Phase::conflicts`]), are made by different threads with nothing ordering them
/// ([`RaceKind::AtomicPhase`]). Inference orders such phases within each unit's own
/// elements (`prism_sync`'s `Mode::conflicts`), so threads that meet so met through a view
/// whose index function is not injective; a site against itself is exempt, as inference
/// leaves one atomic node concurrent on purpose (a ticket counter, a histogram).
///
/// Per access site, the latest atomic of every thread that made one there (threads of any
/// block, for global memory: a key of block and thread), sorted by thread. The latest is
/// exact, by the argument of [`atomic_slot`]: a thread's barrier counts and fences only
/// grow, and so does its record's coherence position ([`PRec::order`]), so whatever
/// orders its latest atomic at a site before a later access (coherence too, its own or
/// passed on by a barrier: an observation that saw at least that position) orders its
/// earlier ones there too. Records are grouped by site, not kept one per thread, because
/// the exemption depends on the site: a thread's latest atomic at the location may share
/// the later access's site while an earlier one, at another site, is the pair to report.
/// A later access looks only at the sites whose phase conflicts with its own, so a counter
/// or a histogram that one site updates costs a look-up, however many threads update it.
///
/// Besides barriers and releases ([`Cell::access_with`]'s `also`), *coherence* orders a
/// pair: the updates of one element have one order, which every thread sees, so a thread
/// that observed the element after an update (an atomic result that depended on it) is
/// ordered after that update in every run, and so are its later accesses to the element
/// (the last block of a reduction, which resets the counter after its ticket showed that
/// every other block's increment came first). [`Self::updates`] counts the updates of
/// safe code in the order they applied, [`Self::seen`] holds how many of them each thread
/// had seen at its observing atomics, and a record is ordered before a thread that has
/// seen its [`PRec::order`].
///
/// Barriers pass coherence on, as they pass on a fence's acquisitions (`sim/access.rs`,
/// `Acquisition`): an observation by thread Y of `s` updates, made when Y had arrived at
/// barriers `arrived`, orders every record whose [`PRec::order`] is at most `s` before
/// every thread X of Y's block that has passed a barrier Y arrived at after the
/// observation ([`Levels::ordered`] with `arrived` and X's passed counts): the record's
/// atomic is coherence-before Y's observation, which the barrier orders before X's access
/// (PTX's causality order is transitive through a barrier). The last block of a
/// reduction: its ticket taker learns that it is last, and after `__syncthreads()`
/// another thread loads or resets the counter (review R8). Within a block only: barriers
/// order nothing across blocks. A thread's observations only grow, in updates seen and in
/// barrier arrivals, so a later observation orders every record an earlier one did before
/// every thread that barriers order after both; but an earlier one, at fewer arrivals,
/// may be passed on to a thread that the later one is not (a thread that passed the
/// barrier between them, and no later one). So each thread keeps its observations at
/// distinct barrier arrivals ([`Seen`]), the latest of each (one at the same arrivals as
/// the previous replaces it: it orders every record that one did, before the same
/// threads), at most [`OBSERVATIONS`], the oldest dropped first. Dropping one can only
/// leave unordered a pair that it ordered: a false report, never a missed race. With
/// `__syncthreads()` alone it never matters: the kept observation after the dropped one is
/// at least seven barriers before Y's latest observation, and X, accessing after that,
/// has passed those barriers (they are collective: Y got past each only once X had
/// arrived), so that observation (which saw at least as many updates) is passed on to X
/// as well. Sub-block barriers (a warp's), which order nothing for threads of other
/// units, and split barriers are what can use up the slots. Waits for an mbarrier's phase
/// pass nothing on so (a false report, never a missed one).
#[derive(Clone, Debug, Default)]
pub struct Phases {
    /// The grid-barrier epoch the records belong to (global memory; a grid barrier orders
    /// everything before it with everything after).
    epoch: u32,
    /// How many updates of safe code the element has had.
    updates: u32,
    /// The records, by access site.
    sites: Vec<PSite>,
    /// Per thread (sorted by key) its observations: how many updates it had seen at its
    /// observing atomics, with its barrier arrivals then.
    seen: Vec<Seen>,
}

/// How many observations ([`Obs`]) a thread keeps in [`Phases`]: its latest, and those
/// before at other barrier arrivals; the oldest is dropped first (a false report, never a
/// missed one).
const OBSERVATIONS: usize = 8;

/// An observing atomic of a thread ([`Phases`]): how many updates of the element it had
/// seen, and the barriers its thread had arrived at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Obs {
    seen: u32,
    arrived: [u32; LEVELS],
}

/// A thread's observations of one element ([`Phases::seen`]), each the latest at its
/// barrier arrivals, which only grow: the latest, which orders every record it can before
/// the thread's own later atomics, and up to [`OBSERVATIONS`] - 1 earlier ones, oldest
/// first, which barriers may pass on to threads that the latest is not.
#[derive(Clone, Debug)]
struct Seen {
    /// Block << 32 | thread.
    key: u64,
    latest: Obs,
    earlier: Vec<Obs>,
}

impl Seen {
    /// Notes observation `o`, later than the others: it replaces the latest when its thread
    /// has arrived at no barrier since (it orders every record that one did, before the
    /// same threads), and otherwise the latest joins the earlier ones, the oldest dropped
    /// past [`OBSERVATIONS`].
    fn observe(&mut self, o: Obs) {
        if o.arrived != self.latest.arrived {
            if self.earlier.len() + 1 >= OBSERVATIONS {
                self.earlier.remove(0);
            }
            self.earlier.push(self.latest);
        }
        self.latest = o;
    }
}

/// The records of one access site in [`Phases`].
#[derive(Clone, Debug)]
struct PSite {
    func: u16,
    site: u16,
    /// What the site's atomic does (the same for every access it makes).
    phase: Phase,
    /// The latest atomic there of each thread, sorted by key.
    recs: Vec<PRec>,
}

/// A thread's latest atomic at one site ([`PSite`]).
#[derive(Clone, Copy, Debug)]
struct PRec {
    /// Block << 32 | thread.
    key: u64,
    /// The barriers its thread had arrived at.
    counts: [u32; LEVELS],
    /// Its thread's fences.
    fences: Fences,
    /// Its place in the element's order of updates: a thread that has seen this many
    /// updates is ordered after it. An update's own number; for an observing atomic that
    /// does not update (`atomic_load`), the number of its thread's first update after it,
    /// [`NEVER`] until there is one (what the load read is ordered before whoever sees
    /// that update, by coherence and its thread's program order).
    order: u32,
}

/// [`PRec::order`] of an atomic load its thread has not updated the element after.
const NEVER: u32 = u32::MAX;

impl Phases {
    /// Checks atomic `now` of block `block` (its [`Acc::phase`] set; its thread has passed
    /// `passed` barriers) against the records and records it. `unordered(earlier, its
    /// block)` says whether barriers and releases leave an earlier access unordered before
    /// `now`; coherence, the thread's own and that barriers pass on from other threads of
    /// the block, is checked here. Returns the first conflicting record found and its block.
    pub fn access(
        &mut self,
        lv: &Levels,
        (block, epoch): (u32, u32),
        (now, passed): (&Acc, &[u32; LEVELS]),
        unordered: impl Fn(&Acc, u32) -> bool,
    ) -> Option<(Acc, u32)> {
        if self.epoch != epoch {
            *self = Phases { epoch, ..Phases::default() };
        }
        let me = u64::from(block) << 32 | u64::from(now.tid);
        let seen = match atomic_slot(&self.seen, me, |s| s.key) {
            Ok(i) => self.seen[i].latest.seen,
            Err(_) => 0,
        };
        // What barriers pass on, looked for only when a record is otherwise unordered.
        let mut passed_on = None;
        let mut conflict = None;
        'sites: for s in &self.sites {
            if (s.func, s.site) == (now.func, now.site) || !s.phase.conflicts(now.phase) {
                continue;
            }
            for r in &s.recs {
                if r.key == me || r.order <= seen {
                    continue;
                }
                let e = Acc {
                    tid: r.key as u32,
                    counts: r.counts,
                    func: s.func,
                    site: s.site,
                    fences: r.fences,
                    atomic: true,
                    phase: s.phase,
                };
                let eb = (r.key >> 32) as u32;
                if unordered(&e, eb)
                    && r.order > *passed_on.get_or_insert_with(|| self.passed_on(lv, block, now.tid, passed))
                {
                    conflict = Some((e, eb));
                    break 'sites;
                }
            }
        }
        self.record(me, now);
        conflict
    }

    /// The most updates that an observation by another thread of block `block` had seen
    /// when a barrier that thread `tid` has passed (`passed`) orders it before `tid`: it
    /// arrived at the barrier after the observation. 0 when there is none.
    fn passed_on(&self, lv: &Levels, block: u32, tid: u32, passed: &[u32; LEVELS]) -> u32 {
        let first = self.seen.partition_point(|s| s.key >> 32 < u64::from(block));
        self.seen[first..]
            .iter()
            .take_while(|s| s.key >> 32 == u64::from(block))
            .filter(|s| s.key as u32 != tid)
            .filter_map(|s| {
                // Arrivals only grow: the latest observation a barrier passes on saw the most.
                std::iter::once(&s.latest).chain(s.earlier.iter().rev()).find(|o| {
                    let at = Acc {
                        tid: s.key as u32,
                        counts: o.arrived,
                        func: 0,
                        site: 0,
                        fences: Fences::default(),
                        atomic: true,
                        phase: Phase::NONE,
                    };
                    lv.ordered(&at, tid, passed)
                })
            })
            .map(|o| o.seen)
            .max()
            .unwrap_or(0)
    }

    /// How many updates coherence orders thread `tid` of block `block` after, when it has
    /// passed `passed` barriers: those its latest observation saw, or an observation of
    /// another thread that a barrier passes on.
    #[cfg(test)]
    fn coherent(&self, lv: &Levels, block: u32, tid: u32, passed: &[u32; LEVELS]) -> u32 {
        let me = u64::from(block) << 32 | u64::from(tid);
        let own = atomic_slot(&self.seen, me, |s| s.key).map_or(0, |i| self.seen[i].latest.seen);
        own.max(self.passed_on(lv, block, tid, passed))
    }

    /// Records atomic `now` of the thread with key `me`.
    fn record(&mut self, me: u64, now: &Acc) {
        if now.phase.observe() {
            let o = Obs { seen: self.updates, arrived: now.counts };
            match atomic_slot(&self.seen, me, |s| s.key) {
                Ok(i) => self.seen[i].observe(o),
                Err(i) => self.seen.insert(i, Seen { key: me, latest: o, earlier: Vec::new() }),
            }
        }
        let order = if now.phase.update() {
            self.updates = self.updates.saturating_add(1);
            // The thread's atomic loads not yet followed by an update are by this one.
            for s in self.sites.iter_mut().filter(|s| !s.phase.update()) {
                if let Ok(i) = atomic_slot(&s.recs, me, |r| r.key)
                    && s.recs[i].order == NEVER
                {
                    s.recs[i].order = self.updates;
                }
            }
            self.updates
        } else {
            NEVER
        };
        let rec = PRec { key: me, counts: now.counts, fences: now.fences, order };
        let s = match self.sites.iter().position(|s| (s.func, s.site) == (now.func, now.site)) {
            Some(i) => &mut self.sites[i],
            None => {
                self.sites.push(PSite { func: now.func, site: now.site, phase: now.phase, recs: Vec::new() });
                self.sites.last_mut().expect("just pushed")
            }
        };
        match atomic_slot(&s.recs, me, |r| r.key) {
            Ok(i) => s.recs[i] = rec,
            Err(i) => s.recs.insert(i, rec),
        }
    }
}

/// Intra-block shadow of one location.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    write: Option<Acc>,
    /// Atomic updates (and volatile stores): the latest of every thread, which orders
    /// nothing that its earlier ones did not ([`atomic_slot`]), so a plain access meets
    /// every atomic that nothing orders before it, however many threads made them. Until
    /// 2026-11-29 only the last atomic was kept, and then, the same day, four (chosen as
    /// the reads are): with five or more threads updating one element, a plain access by
    /// another thread could miss the one that raced with it. Kept apart, allocated at the
    /// first atomic: most locations never see one, and records held inline would make
    /// every full cell larger.
    atomics: Option<Box<Atomics>>,
    reads: [Option<Acc>; READS],
    next_read: u8,
}

/// A location's atomic records ([`Cell::atomics`]): the latest of each thread that has
/// made one since the last plain write, sorted by thread ([`atomic_slot`]).
#[derive(Clone, Debug, Default)]
struct Atomics {
    recs: Vec<Acc>,
}

impl Cell {
    /// Records an access by `now` (of `kind`; `passed` are the barriers its thread has
    /// passed, that is waited at) and returns a conflict with an earlier access of another
    /// thread of the block, if any.
    #[inline]
    pub fn access(&mut self, lv: &Levels, now: Acc, passed: &[u32; LEVELS], kind: Kind) -> Option<(Acc, RaceKind)> {
        self.access_with(lv, now, passed, kind, |_| false)
    }

    /// [`Self::access`], where `also(earlier)` says whether something other than barriers
    /// (a release the thread acquired, a TMA landing it waited for) orders a record that barriers do not:
    /// such a record is no conflict, and the search goes on to the location's other records.
    /// `also` runs only for records that barriers leave unordered, so an access that
    /// conflicts with nothing costs nothing more.
    #[inline]
    pub fn access_with(
        &mut self,
        lv: &Levels,
        now: Acc,
        passed: &[u32; LEVELS],
        kind: Kind,
        also: impl Fn(&Acc) -> bool,
    ) -> Option<(Acc, RaceKind)> {
        let unordered = |a: &Option<Acc>| a.filter(|a| !lv.ordered(a, now.tid, passed) && !also(a));
        let atomics = || {
            self.atomics
                .as_ref()
                .and_then(|x| x.recs.iter().find_map(|&r| unordered(&Some(r)).map(|a| (a, RaceKind::AtomicPlain))))
        };
        let conflict = match kind {
            Kind::Write => unordered(&self.write)
                .map(|a| (a, RaceKind::WriteWrite))
                .or_else(|| self.reads.iter().find_map(|r| unordered(r).map(|a| (a, RaceKind::ReadWrite))))
                .or_else(atomics),
            Kind::Read => unordered(&self.write).map(|a| (a, RaceKind::WriteRead)).or_else(atomics),
            Kind::Atomic => unordered(&self.write).map(|a| (a, RaceKind::AtomicPlain)).or_else(|| {
                self.reads
                    .iter()
                    .filter(|r| r.is_some_and(|r| !r.atomic))
                    .find_map(|r| unordered(r).map(|a| (a, RaceKind::AtomicPlain)))
            }),
            Kind::AtomicRead => unordered(&self.write).map(|a| (a, RaceKind::AtomicPlain)),
        };
        match kind {
            Kind::Write => {
                self.write = Some(now);
                self.reads = [None; READS];
                self.atomics = None;
            }
            Kind::Atomic => {
                let x = self.atomics.get_or_insert_with(Box::default);
                match atomic_slot(&x.recs, now.tid, |a| a.tid) {
                    Ok(i) => x.recs[i] = now,
                    Err(i) => x.recs.insert(i, now),
                }
            }
            Kind::Read | Kind::AtomicRead => {
                let slot = read_slot(self.reads.map(|r| r.map_or(NOBODY, |r| r.tid)), &mut self.next_read, now.tid);
                // The thread's own earlier read is replaced; a plain one stays plain
                // (`read_slot`).
                let plain_before = self.reads[slot].is_some_and(|r| r.tid == now.tid && !r.atomic);
                let now = Acc { atomic: kind == Kind::AtomicRead && !plain_before, ..now };
                self.reads[slot] = Some(now);
            }
        }
        conflict
    }
}

/// The race shadow of a block's shared memory: a cell for each run of bytes that every
/// access so far has covered alike, found through a per-byte index and kept densely in the
/// order of first access. What each byte records is exactly what a full [`Cell`] per byte
/// would record (the last write, every thread's latest atomic and up to [`READS`] reads,
/// chosen the same way), and an access meets every earlier access that covers any of its bytes, of
/// whatever width. A cell stands for the bytes of one access when every access to them has
/// the same start and width (the common case: an array read and written as its element
/// type, one cell per element, found with one look-up); an access that covers part of a
/// cell, or several, first splits the cells it cuts in two at its ends, each part a copy of
/// the whole (their bytes recorded the same accesses), and then is recorded in each cell
/// inside it. Until 2026-11-29 a cell stood for the byte an access started at, so accesses
/// of different widths over the same bytes (sequential shared scopes of different element
/// types, which reuse space, in unsafe code) never met: an 8-byte write and a 4-byte read of
/// its upper half raced unseen.
///
/// Each access is kept as its thread and an interned [`SMoment`] (the rest of its [`Acc`]):
/// a cell is 48 bytes instead of about 180. A full cell per byte made a 17 KB tile's shadow
/// 3.3 MB, and its cache misses were most of the checked run of a kernel that transposes
/// through shared memory (kernel 35). The moment table is garbage collected (only the
/// moments live cells refer to are kept), so it never holds more than twice what the cells
/// can refer to, nor fewer than [`SMOMENTS_MIN`] before collecting.
#[derive(Debug)]
pub struct SharedShadow {
    /// Per byte of shared memory: 0 before its first access, else 1 + the position of the
    /// cell holding it, with [`INSIDE`] set on every byte of the cell but its first (only
    /// once the cells are [`MIXED`]: see [`Self::widths`]).
    index: Vec<u32>,
    /// While every cell has one width and starts at a multiple of it (every access so far
    /// was of one element type, aligned, the common case), that width, and the index marks
    /// only the cells' first bytes: an aligned access of that width whose first byte starts
    /// no cell covers no cell's byte, so it needs a fresh cell without looking further.
    /// [`MIXED`] once an access of another width or start came (the other bytes of every
    /// cell are then marked, and kept so); 0 before the first access.
    widths: u8,
    /// The cells, in the order of their first access.
    cells: Vec<SCell>,
    /// The first byte of each cell (to split it, and to reset the index).
    bytes: Vec<u32>,
    /// The atomic records of the cells that have had an atomic ([`SCell::atomics`]).
    atomics: Vec<SAtomics>,
    /// The distinct moments of the block's recorded accesses.
    moments: Vec<SMoment>,
    lookup: crate::sim::FastMap<SMoment, u32>,
    /// The moment interned last: the lanes of a warp instruction share one.
    last: Option<u32>,
    /// The table's size at which it is next collected.
    collect_at: usize,
    /// How many times the moment table was renumbered (collected, or emptied for the next
    /// block): records of different renumberings are not comparable ([`WriteMemo`]).
    renumbered: u32,
}

/// Where a wgmma's read goes through [`SharedShadow::read_memo`]: at its issue (checked,
/// not recorded) or at the wait that completes its group (recorded, not checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAt {
    Issue,
    Wait,
}

/// What [`SharedShadow::read_memo`] keeps between the reads of one thread in one state:
/// the last write it judged (thread and moment) and whether it was ordered before them.
#[derive(Debug, Default)]
pub struct ReadMemo(Option<((u32, SMoment), bool)>);

/// The last change [`SharedShadow::record_reads`] made to a cell's read records: their
/// state before, the key of the reads, and their state after.
#[derive(Debug, Default)]
pub struct ReadsMemo(Option<(ReadState, u64, ReadState)>);

/// A cell's read records and its round-robin position ([`SCell::next_read`]).
type ReadState = ([Rec; READS], u8);

/// What [`SharedShadow::write_quick`] keeps between the writes of one thread in one state:
/// the last records of a cell (with the renumbering they belong to) that such a write was
/// judged to conflict with nothing in.
#[derive(Debug, Default)]
pub struct WriteMemo(Option<(u32, Rec, [Rec; READS])>);

impl WriteMemo {
    /// Forgets the records judged (for another thread, or another state of its).
    pub fn clear(&mut self) {
        self.0 = None;
    }
}

/// The moment table's size below which it is never collected.
pub const SMOMENTS_MIN: usize = 1 << 16;

/// In [`SharedShadow::index`], the mark of a byte that is not the first of its cell.
const INSIDE: u32 = 1 << 31;

/// [`SharedShadow::widths`] once cells of several widths, or unaligned ones, may exist.
const MIXED: u8 = u8::MAX;

impl Default for SharedShadow {
    fn default() -> SharedShadow {
        SharedShadow::with_collection_at(SMOMENTS_MIN)
    }
}

/// An access without its thread (see [`SharedShadow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct SMoment {
    counts: [u32; LEVELS],
    func: u16,
    site: u16,
    fences: Fences,
    atomic: bool,
}

/// A recorded access in an [`SCell`]: its thread ([`NOBODY`] for none) and its moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rec {
    tid: u32,
    m: u32,
}

/// A cell's write, as [`SharedShadow::issue_meets`] names it: equal keys are the same
/// thread at the same moment, which every read judges alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WriteKey(Rec);

/// A read's record, from [`SharedShadow::read_rec`].
#[derive(Clone, Copy, Debug)]
pub struct ReadRec(Rec);

impl ReadRec {
    /// No read: a placeholder, never recorded (its thread is [`NOBODY`]).
    pub const NONE: ReadRec = ReadRec(Rec::NONE);
}

/// [`Rec::tid`] of an empty record.
const NOBODY: u32 = u32::MAX;

impl Rec {
    const NONE: Rec = Rec { tid: NOBODY, m: 0 };

    fn is_some(self) -> bool {
        self.tid != NOBODY
    }
}

/// [`Cell`] with its accesses as [`Rec`]s, and the number of bytes it stands for.
#[derive(Clone, Copy, Debug)]
struct SCell {
    write: Rec,
    reads: [Rec; READS],
    /// 0 before the cell's first atomic, else 1 + the position of its atomic records in
    /// [`SharedShadow::atomics`] (kept apart, as [`Cell::atomics`]: a cell is then 48
    /// bytes, and the cells of a tile that no atomic touches fit in fewer cache lines).
    atomics: u32,
    next_read: u8,
    /// How many bytes, from its first ([`SharedShadow::bytes`]), the cell stands for.
    width: u8,
}

impl Default for SCell {
    fn default() -> SCell {
        SCell { write: Rec::NONE, reads: [Rec::NONE; READS], atomics: 0, next_read: 0, width: 0 }
    }
}

/// A shared cell's atomic records ([`SCell::atomics`]), as [`Atomics`]: the latest of each
/// thread, sorted by thread; and the phase records of its atomics of safe code ([`Phases`],
/// allocated at the first), which a plain write does not clear (it orders no atomic
/// after it that it is not itself ordered before, or it is a race of its own).
#[derive(Clone, Debug, Default)]
struct SAtomics {
    recs: Vec<Rec>,
    phases: Option<Box<Phases>>,
}

/// The most cells one access can cover: one per byte of the widest access (8 bytes).
const MAX_WIDTH: usize = 8;

impl SharedShadow {
    /// A shadow whose moment table is first collected at `n` moments (tests use small ones).
    fn with_collection_at(n: usize) -> SharedShadow {
        SharedShadow {
            index: Vec::new(),
            cells: Vec::new(),
            bytes: Vec::new(),
            atomics: Vec::new(),
            widths: 0,
            moments: Vec::new(),
            lookup: crate::sim::FastMap::default(),
            last: None,
            collect_at: n,
            renumbered: 0,
        }
    }

    /// Makes the index cover `len` bytes (a block's shared memory), every cell fresh when
    /// the size changes.
    #[inline]
    pub fn cover(&mut self, len: usize) {
        if self.index.len() != len {
            self.index = vec![0; len];
            self.cells.clear();
            self.bytes.clear();
            self.atomics.clear();
            self.widths = 0;
        }
    }

    /// Touches the cells of the bytes in `bytes` (those recorded before), so that the
    /// processor fetches them all at once: a warp instruction's lanes are then recorded one
    /// after another without waiting for each cell's cache miss in turn (the loads are
    /// independent, so they overlap). No effect on what is recorded (a byte inside a cell
    /// has [`INSIDE`] set, and finds no cell to touch).
    #[inline]
    pub fn prefetch(&self, bytes: impl Iterator<Item = usize>) {
        for b in bytes {
            if let Some(&at) = self.index.get(b)
                && at != 0
                && let Some(cell) = self.cells.get(at as usize - 1)
            {
                std::hint::black_box(cell.next_read);
            }
        }
    }

    /// Forgets every access (for the next block), keeping the allocations.
    pub fn reset(&mut self) {
        if self.widths == MIXED {
            for (c, &b) in self.cells.iter().zip(&self.bytes) {
                let b = b as usize;
                self.index[b..b + usize::from(c.width)].fill(0);
            }
        } else {
            for &b in &self.bytes {
                self.index[b as usize] = 0;
            }
        }
        self.widths = 0;
        self.cells.clear();
        self.bytes.clear();
        self.atomics.clear();
        self.moments.clear();
        self.lookup.clear();
        self.last = None;
        self.renumbered = self.renumbered.wrapping_add(1);
    }

    /// The access a record stands for.
    #[inline]
    fn acc(&self, r: Rec) -> Acc {
        let m = &self.moments[r.m as usize];
        Acc {
            tid: r.tid,
            counts: m.counts,
            func: m.func,
            site: m.site,
            fences: m.fences,
            atomic: m.atomic,
            // A phase is recorded apart ([`SAtomics::phases`]), never in a cell's records.
            phase: Phase::NONE,
        }
    }

    /// The record of access `a` of `kind`, its moment interned (a read made by an atomic
    /// load is marked so, and a plain read is not).
    #[inline(always)]
    fn rec(&mut self, a: &Acc, kind: Kind) -> Rec {
        let atomic = match kind {
            Kind::Read => false,
            Kind::AtomicRead => true,
            Kind::Write | Kind::Atomic => a.atomic,
        };
        let m = SMoment { counts: a.counts, func: a.func, site: a.site, fences: a.fences, atomic };
        Rec { tid: a.tid, m: self.intern(m) }
    }

    /// The number of moment `m`, added to the table if new.
    fn intern(&mut self, m: SMoment) -> u32 {
        if let Some(i) = self.last
            && self.moments[i as usize] == m
        {
            return i;
        }
        let i = match self.lookup.get(&m) {
            Some(&i) => i,
            None => {
                let i = u32::try_from(self.moments.len()).expect("fewer than 2^32 moments");
                self.moments.push(m);
                self.lookup.insert(m, i);
                i
            }
        };
        self.last = Some(i);
        i
    }

    /// Keeps only the moments that cells refer to, renumbered.
    fn collect(&mut self) {
        let mut map = vec![u32::MAX; self.moments.len()];
        let mut kept = Vec::new();
        let cells = self.cells.iter_mut().flat_map(|c| std::iter::once(&mut c.write).chain(c.reads.iter_mut()));
        for r in cells.chain(self.atomics.iter_mut().flat_map(|a| a.recs.iter_mut())) {
            if r.is_some() {
                let old = r.m as usize;
                if map[old] == u32::MAX {
                    map[old] = kept.len() as u32;
                    kept.push(self.moments[old]);
                }
                r.m = map[old];
            }
        }
        self.moments = kept;
        self.lookup = self.moments.iter().enumerate().map(|(i, m)| (*m, i as u32)).collect();
        self.last = None;
        self.renumbered = self.renumbered.wrapping_add(1);
        self.collect_at = self.collect_at.max(2 * self.moments.len());
    }

    /// A new cell `cell` standing for the `width` bytes from `byte`, which no cell holds;
    /// its position.
    #[inline(always)]
    fn add_cell(&mut self, byte: usize, width: usize, cell: SCell) -> usize {
        self.cells.push(SCell { width: width as u8, ..cell });
        self.bytes.push(u32::try_from(byte).expect("shared memory below 2 GiB"));
        let n = u32::try_from(self.cells.len()).ok().filter(|&n| n < INSIDE).expect("fewer than 2^31 cells");
        self.index[byte] = n;
        if self.widths == MIXED {
            self.index[byte + 1..byte + width].fill(n | INSIDE);
        }
        n as usize - 1
    }

    /// Leaves the state of one width ([`Self::widths`]): marks the other bytes of every
    /// cell, which cells of other widths and starts will need.
    #[cold]
    fn mix(&mut self) {
        if self.widths == MIXED {
            return;
        }
        self.widths = MIXED;
        for (c, (cell, &b)) in self.cells.iter().zip(&self.bytes).enumerate() {
            let b = b as usize;
            self.index[b + 1..b + usize::from(cell.width)].fill((c as u32 + 1) | INSIDE);
        }
    }

    /// Makes `byte` the first byte of its cell, if a cell holds it: a cell holding it and
    /// bytes before it is cut in two there, each part with the whole's records.
    fn split_at(&mut self, byte: usize) {
        let Some(&i) = self.index.get(byte) else { return };
        if i & INSIDE == 0 {
            return;
        }
        let c = (i & !INSIDE) as usize - 1;
        let first = self.bytes[c] as usize;
        let end = first + usize::from(self.cells[c].width);
        self.cells[c].width = (byte - first) as u8;
        let mut rest = self.cells[c];
        if rest.atomics != 0 {
            self.atomics.push(self.atomics[rest.atomics as usize - 1].clone());
            rest.atomics = self.atomics.len() as u32;
        }
        self.add_cell(byte, end - byte, rest);
    }

    /// The conflict access `now` (by a thread that has passed `passed`) of `kind` has with
    /// the records of cell `c`, if any ([`Cell::access`]'s checks). Written as plain
    /// branches, with the atomics (which most cells never have) out of line: this runs for
    /// every checked access to shared memory.
    #[inline(always)]
    fn conflict(
        &self,
        c: usize,
        lv: &Levels,
        (now, passed): (&Acc, &[u32; LEVELS]),
        kind: Kind,
        also: &impl Fn(&Acc) -> bool,
    ) -> Option<(Acc, RaceKind)> {
        let cell = &self.cells[c];
        let unordered =
            |r: Rec| r.is_some().then(|| self.acc(r)).filter(|a| !lv.ordered(a, now.tid, passed) && !also(a));
        match kind {
            Kind::Write => {
                if let Some(a) = unordered(cell.write) {
                    return Some((a, RaceKind::WriteWrite));
                }
                for &r in &cell.reads {
                    if let Some(a) = unordered(r) {
                        return Some((a, RaceKind::ReadWrite));
                    }
                }
            }
            Kind::Read => {
                if let Some(a) = unordered(cell.write) {
                    return Some((a, RaceKind::WriteRead));
                }
            }
            Kind::Atomic => {
                if let Some(a) = unordered(cell.write) {
                    return Some((a, RaceKind::AtomicPlain));
                }
                for &r in &cell.reads {
                    if r.is_some()
                        && !self.moments[r.m as usize].atomic
                        && let Some(a) = unordered(r)
                    {
                        return Some((a, RaceKind::AtomicPlain));
                    }
                }
                return None;
            }
            Kind::AtomicRead => return unordered(cell.write).map(|a| (a, RaceKind::AtomicPlain)),
        }
        // A plain access meets the atomics.
        if cell.atomics == 0 { None } else { self.atomic_conflict(cell.atomics as usize - 1, lv, (now, passed), also) }
    }

    /// The first of atomic records `x` ([`SCell::atomics`]) that nothing orders before
    /// plain access `now`.
    #[inline(never)]
    fn atomic_conflict(
        &self,
        x: usize,
        lv: &Levels,
        (now, passed): (&Acc, &[u32; LEVELS]),
        also: &impl Fn(&Acc) -> bool,
    ) -> Option<(Acc, RaceKind)> {
        self.atomics[x].recs.iter().find_map(|&r| {
            r.is_some()
                .then(|| self.acc(r))
                .filter(|a| !lv.ordered(a, now.tid, passed) && !also(a))
                .map(|a| (a, RaceKind::AtomicPlain))
        })
    }

    /// Records `r`, an access of `kind`, in cell `c` ([`Cell::access`]'s update).
    #[inline(always)]
    fn record(&mut self, c: usize, r: Rec, kind: Kind) {
        let cell = &mut self.cells[c];
        match kind {
            Kind::Write => {
                cell.write = r;
                cell.reads = [Rec::NONE; READS];
                // Cleared in place, so that a cell written and updated in turn keeps one
                // entry.
                if cell.atomics != 0 {
                    self.atomics[cell.atomics as usize - 1].recs.clear();
                }
            }
            Kind::Atomic => {
                if cell.atomics == 0 {
                    self.atomics.push(SAtomics::default());
                    cell.atomics = u32::try_from(self.atomics.len()).expect("fewer than 2^32 cells");
                }
                let x = &mut self.atomics[cell.atomics as usize - 1];
                match atomic_slot(&x.recs, r.tid, |a| a.tid) {
                    Ok(i) => x.recs[i] = r,
                    Err(i) => x.recs.insert(i, r),
                }
            }
            Kind::Read | Kind::AtomicRead => {
                let slot = read_slot(cell.reads.map(|r| r.tid), &mut cell.next_read, r.tid);
                let old = cell.reads[slot];
                // The thread's own earlier read is replaced; a plain one stays plain
                // (`read_slot`).
                let r = if kind == Kind::AtomicRead
                    && old.is_some()
                    && old.tid == r.tid
                    && !self.moments[old.m as usize].atomic
                {
                    let m = SMoment { atomic: false, ..self.moments[r.m as usize] };
                    Rec { tid: r.tid, m: self.intern(m) }
                } else {
                    r
                };
                self.cells[c].reads[slot] = r;
            }
        }
    }

    /// Records access `now` to the `size` bytes from byte `byte` (as [`Cell::access`] on
    /// the cell of each of those bytes) and returns the conflict found, if any: that of the
    /// lowest byte that has one.
    #[inline(always)]
    pub fn access(
        &mut self,
        lv: &Levels,
        (byte, size): (usize, usize),
        now: Acc,
        passed: &[u32; LEVELS],
        kind: Kind,
    ) -> Option<(Acc, RaceKind)> {
        self.access_with(lv, (byte, size), (now, passed), kind, |_| false)
    }

    /// [`Self::access`] with `also` as in [`Cell::access_with`]: a record that barriers
    /// leave unordered and `also` orders is no conflict.
    #[inline(always)]
    pub fn access_with(
        &mut self,
        lv: &Levels,
        (byte, size): (usize, usize),
        (now, passed): (Acc, &[u32; LEVELS]),
        kind: Kind,
        also: impl Fn(&Acc) -> bool,
    ) -> Option<(Acc, RaceKind)> {
        if self.moments.len() >= self.collect_at {
            self.collect();
        }
        let size = size.max(1);
        let Some(c) = self.cell_for(byte, size) else {
            return self.access_cells(lv, (byte, size), (now, passed), kind, &also);
        };
        let conflict = self.conflict(c, lv, (&now, passed), kind, &also);
        // The record is interned first (it needs the whole shadow), then the cell is
        // updated in place.
        let r = self.rec(&now, kind);
        self.record(c, r, kind);
        if now.phase.is_some() {
            let phase = self.phase_access(c, lv, (&now, passed), &also);
            return conflict.or(phase);
        }
        conflict
    }

    /// The cell that stands for exactly the `size` bytes from `byte`, made for them (empty)
    /// when no access has covered them and a cell of its own needs no other cut; `None`
    /// when accesses of other starts or widths covered some of them
    /// ([`Self::access_cells`] then takes the access).
    #[inline(always)]
    fn cell_for(&mut self, byte: usize, size: usize) -> Option<usize> {
        let i = self.index[byte];
        Some(if i != 0 && i & INSIDE == 0 && usize::from(self.cells[i as usize - 1].width) == size {
            // One cell stands for exactly these bytes: the common case.
            i as usize - 1
        } else if i == 0 && usize::from(self.widths) == size && byte.is_multiple_of(size) {
            // Bytes no access has covered (every cell is of this width and aligned, and
            // none starts here): a cell for them.
            self.add_cell(byte, size, SCell::default())
        } else if i == 0 && self.widths == MIXED && self.index[byte + 1..byte + size].iter().all(|&i| i == 0) {
            // Bytes no access has covered, every byte of every cell marked.
            self.add_cell(byte, size, SCell::default())
        } else if i == 0 && self.widths == 0 && size.is_power_of_two() && byte.is_multiple_of(size) {
            // The first access.
            self.widths = size as u8;
            self.add_cell(byte, size, SCell::default())
        } else {
            return None;
        })
    }

    /// [`Self::access_with`] for a plain read by a thread whose state stays the same over
    /// many reads: a wgmma group's reads of its tiles, some hundreds per lane. Whether a cell's last write is ordered before such a read depends on that
    /// write alone (its thread and moment; the reader, its barriers and what `also` knows
    /// do not change between the reads), so `memo` keeps the last write judged, by thread
    /// and moment (not by the moment's number, which a collection renumbers), and its
    /// verdict: a tile that one copy wrote, whose cells all hold one write record, is
    /// judged once instead of once per element. Everything else is what `access_with`
    /// does, which takes the reads this shortcut does not (a cell cut by other widths, a
    /// fresh cell, a phase).
    ///
    /// A wgmma's reads go through here twice ([`ReadAt`]): at the issue they are only
    /// checked, not recorded (bytes no access has touched hold no write to meet, and the
    /// cases this shortcut does not take are recorded after all, which can only report
    /// more: a read recorded early is one every later write must be ordered after, and the
    /// reads it stands for last until the wait); at the wait they are only recorded, not
    /// checked again. The check at the wait would add nothing: the write a cell holds then
    /// was there at the issue, and was checked with the lane's state there, which orders
    /// less than its state at the wait, or it landed in between, which the caller reports
    /// as a write to a tile in flight (`BlockSim::wg_flight`).
    pub fn read_memo(
        &mut self,
        lv: &Levels,
        (byte, size): (usize, usize),
        (now, passed): (Acc, &[u32; LEVELS]),
        also: impl Fn(&Acc) -> bool,
        (memo, at): (&mut ReadMemo, ReadAt),
    ) -> Option<(Acc, RaceKind)> {
        let record = at == ReadAt::Wait;
        let size = size.max(1);
        let Some(c) =
            self.exact_at(byte, size).filter(|_| !now.phase.is_some() && self.moments.len() < self.collect_at)
        else {
            if !record && self.index[byte..byte + size].iter().all(|&i| i == 0) {
                return None;
            }
            return self.access_with(lv, (byte, size), (now, passed), Kind::Read, also);
        };
        if record {
            let r = self.rec(&now, Kind::Read);
            self.record(c, r, Kind::Read);
            return None;
        }
        let w = self.cells[c].write;
        let mut conflict = None;
        if w.is_some() {
            let key = (w.tid, self.moments[w.m as usize]);
            let ordered = match memo.0 {
                Some((k, ordered)) if k == key => ordered,
                _ => {
                    let a = self.acc(w);
                    let ordered = lv.ordered(&a, now.tid, passed) || also(&a);
                    memo.0 = Some((key, ordered));
                    ordered
                }
            };
            if !ordered {
                conflict = Some((self.acc(w), RaceKind::WriteRead));
            }
        }
        let atomics = self.cells[c].atomics;
        if conflict.is_none() && atomics != 0 {
            conflict = self.atomic_conflict(atomics as usize - 1, lv, (&now, passed), &also);
        }
        conflict
    }

    /// Records write `now` of the `size` bytes from `byte` (by a thread that has passed
    /// `passed`) as [`Self::access`] records it, without looking for a conflict: for a
    /// write checked elsewhere (a landed copy's, checked at its issue and reported as a
    /// write to a tile in flight, `BlockSim::complete_mbar_phase`). Kept out of line, and
    /// off `access_with`: inlined, or calling `access_with`, it cost the checked run of
    /// kernel 33 (no copies at all) 40% of its time, with the same instructions executed
    /// (code placement).
    #[inline(never)]
    pub fn record_write(&mut self, lv: &Levels, (byte, size): (usize, usize), now: Acc, passed: &[u32; LEVELS]) {
        if self.moments.len() >= self.collect_at {
            self.collect();
        }
        debug_assert!(!now.phase.is_some(), "a plain write has no atomic phase");
        let size = size.max(1);
        match self.cell_for(byte, size) {
            Some(c) => {
                let r = self.rec(&now, Kind::Write);
                self.record(c, r, Kind::Write);
            }
            None => {
                let _ = self.access_cells(lv, (byte, size), (now, passed), Kind::Write, &|_| false);
            }
        }
    }

    /// [`Self::access_with`] for a plain write of the `size` bytes from `byte` by a thread
    /// whose state stays the same over many writes (a copy's destination, checked at its
    /// issue, element by element): records it and returns true when one cell holds exactly
    /// those bytes with no atomic records and nothing in it conflicts with the write, or no
    /// access has covered them (a cell is made for them, as `access_with` makes it); returns
    /// false, having changed nothing, otherwise (for `access_with` to record it, or find and
    /// return the conflict). Whether a write conflicts with a cell's records depends on
    /// nothing but those records, the writer and its state, and what `also` knows of them
    /// ([`Self::conflict`]), so `memo` keeps the last records judged free of conflict: a
    /// tile's cells, landed by one copy and read by the same threads in the same order,
    /// hold the same records, judged once instead of once per element. The caller clears
    /// the memo whenever the writer, its state or `also` may change.
    pub fn write_quick(
        &mut self,
        lv: &Levels,
        (byte, size): (usize, usize),
        (now, passed): (Acc, &[u32; LEVELS]),
        also: impl Fn(&Acc) -> bool,
        memo: &mut WriteMemo,
    ) -> bool {
        if now.phase.is_some() || self.moments.len() >= self.collect_at {
            return false;
        }
        // A cell made here for bytes no access covered holds no record to conflict with.
        let Some(c) = self.cell_for(byte, size.max(1)) else { return false };
        let cell = &self.cells[c];
        if cell.atomics != 0 {
            return false;
        }
        let judged = (self.renumbered, cell.write, cell.reads);
        if memo.0 != Some(judged) {
            if self.conflict(c, lv, (&now, passed), Kind::Write, &also).is_some() {
                return false;
            }
            memo.0 = Some(judged);
        }
        let r = self.rec(&now, Kind::Write);
        self.record(c, r, Kind::Write);
        true
    }

    /// The cell that holds exactly the `size` bytes from `byte` (its first byte there, its
    /// width theirs), if one does.
    #[inline]
    fn exact_at(&self, byte: usize, size: usize) -> Option<usize> {
        let i = self.index[byte];
        (i != 0 && i & INSIDE == 0 && usize::from(self.cells[i as usize - 1].width) == size).then(|| i as usize - 1)
    }

    /// What a wgmma's read of the `size` bytes from `byte` meets at its issue, for a warp's
    /// lanes judged at once (`BlockSim::race_reads_warp_issue`): `Some(None)` nothing (no
    /// write, or bytes never accessed), `Some(Some(w))` the write `w` (which [`Self::read_memo`]
    /// would judge, and nothing else), `None` when only [`Self::read_memo`] can tell (a cell
    /// of another width or start, atomic records, a moment table due for collection).
    pub fn issue_meets(&self, (byte, size): (usize, usize)) -> Option<Option<WriteKey>> {
        let size = size.max(1);
        if self.moments.len() >= self.collect_at {
            return None;
        }
        let Some(c) = self.exact_at(byte, size) else {
            return self.index[byte..byte + size].iter().all(|&i| i == 0).then_some(None);
        };
        let cell = &self.cells[c];
        if cell.atomics != 0 {
            return None;
        }
        Some(cell.write.is_some().then_some(WriteKey(cell.write)))
    }

    /// The access a [`WriteKey`] stands for.
    pub fn write_acc(&self, k: WriteKey) -> Acc {
        self.acc(k.0)
    }

    /// The cell that holds exactly the `size` bytes from `byte`, when [`Self::read_memo`]
    /// would record a read there without looking further (and the moment table has room
    /// for `more` moments before it is due for collection); `None` otherwise.
    pub fn exact_cell(&self, (byte, size): (usize, usize), more: usize) -> Option<usize> {
        self.exact_at(byte, size.max(1)).filter(|_| self.moments.len() + more < self.collect_at)
    }

    /// The record of read `now`, to record in cells with [`Self::record_read`].
    pub fn read_rec(&mut self, now: &Acc) -> ReadRec {
        ReadRec(self.rec(now, Kind::Read))
    }

    /// Records reads `rs` in cell `c` (from [`Self::exact_cell`]) one after the other, as
    /// [`Self::read_memo`] at the wait records each (`record`), with the cell's records
    /// held in registers meanwhile.
    ///
    /// What the reads leave in a cell is a function of the cell's read records and
    /// round-robin position before them and of the reads alone, so `memo` keeps the last
    /// such change: `key` names the reads (the caller gives equal keys only to equal
    /// sequences of reads, and a fresh memo whenever that could change), and a cell in the
    /// state the memo's cell was in takes the state it left without [`read_slot`] per read.
    /// The cells of a tile that one copy landed and the same warps read in the same order
    /// are all in one state, and a row or column of a wgmma's tile is read by the same
    /// lanes: all but the first cell of each take the memo's.
    pub fn record_reads(&mut self, c: usize, (memo, key): (&mut ReadsMemo, u64), rs: impl Iterator<Item = ReadRec>) {
        let cell = &mut self.cells[c];
        // Compared and copied in place: the memo is some ninety bytes.
        if let Some((before, k, after)) = &memo.0
            && *k == key
            && before.1 == cell.next_read
            && before.0 == cell.reads
        {
            (cell.reads, cell.next_read) = *after;
            return;
        }
        let before = (cell.reads, cell.next_read);
        let (mut reads, mut next) = before;
        for ReadRec(r) in rs {
            debug_assert!(r.is_some(), "a placeholder read is never recorded");
            let slot = read_slot(reads.map(|r| r.tid), &mut next, r.tid);
            reads[slot] = r;
        }
        (cell.reads, cell.next_read) = (reads, next);
        memo.0 = Some((before, key, (reads, next)));
    }

    /// Checks atomic `now` of safe code against the phase records of cell `c` and records
    /// it there ([`Phases::access`]).
    #[cold]
    #[inline(never)]
    fn phase_access(
        &mut self,
        c: usize,
        lv: &Levels,
        (now, passed): (&Acc, &[u32; LEVELS]),
        also: &impl Fn(&Acc) -> bool,
    ) -> Option<(Acc, RaceKind)> {
        if self.cells[c].atomics == 0 {
            self.atomics.push(SAtomics::default());
            self.cells[c].atomics = u32::try_from(self.atomics.len()).expect("fewer than 2^32 cells");
        }
        let x = &mut self.atomics[self.cells[c].atomics as usize - 1];
        let unordered = |e: &Acc, _| !lv.ordered(e, now.tid, passed) && !also(e);
        x.phases
            .get_or_insert_with(Box::default)
            .access(lv, (0, 0), (now, passed), unordered)
            .map(|(e, _)| (e, RaceKind::AtomicPhase))
    }

    /// [`Self::access`] for an access whose bytes accesses of other starts or widths have
    /// covered in part: the cells that reach over its ends are cut there, so that each cell
    /// lies wholly inside it or outside, the fresh runs inside it get cells of their own,
    /// and it is checked against and recorded in each cell inside it, in byte order.
    #[cold]
    #[inline(never)]
    fn access_cells(
        &mut self,
        lv: &Levels,
        (byte, size): (usize, usize),
        (now, passed): (Acc, &[u32; LEVELS]),
        kind: Kind,
        also: &impl Fn(&Acc) -> bool,
    ) -> Option<(Acc, RaceKind)> {
        debug_assert!(size <= MAX_WIDTH, "no access is wider than {MAX_WIDTH} bytes");
        self.mix();
        let end = byte + size;
        self.split_at(byte);
        self.split_at(end);
        let mut cells = [0usize; MAX_WIDTH];
        let mut n = 0;
        let mut b = byte;
        while b < end {
            let i = self.index[b];
            let c = if i == 0 {
                let run = (b..end).take_while(|&x| self.index[x] == 0).count();
                self.add_cell(b, run, SCell::default())
            } else {
                debug_assert!(i & INSIDE == 0, "a cell starts at every byte after a cut");
                i as usize - 1
            };
            cells[n] = c;
            n += 1;
            b += usize::from(self.cells[c].width);
        }
        let cells = &cells[..n];
        let mut conflict = cells.iter().find_map(|&c| self.conflict(c, lv, (&now, passed), kind, also));
        let r = self.rec(&now, kind);
        for &c in cells {
            self.record(c, r, kind);
        }
        if now.phase.is_some() {
            for &c in cells {
                let phase = self.phase_access(c, lv, (&now, passed), also);
                conflict = conflict.or(phase);
            }
        }
        conflict
    }
}

/// Inter-block summary of one global location: which blocks wrote, read and updated it
/// atomically (block index + 1; [`MULTI`] for several).
#[derive(Clone, Copy, Debug, Default)]
pub struct Blocks {
    /// Grid-barrier epoch the fields belong to.
    pub epoch: u32,
    /// Block that wrote it (plainly).
    pub write: u32,
    /// Block(s) that read it.
    pub read: u32,
    /// Block(s) that updated it atomically.
    pub atomic: u32,
    /// Block(s) that loaded it atomically.
    pub aread: u32,
    /// The write access, for the report.
    pub write_acc: Option<Site>,
    /// A read access, for the report.
    pub read_acc: Option<Site>,
    /// An atomic access, for the report.
    pub atomic_acc: Option<Site>,
    /// An atomic load, for the report.
    pub aread_acc: Option<Site>,
    /// Which of the read, atomic and atomic-load summaries ([`SEVERAL_READ`]...) stand for
    /// accesses of more than one thread: their kept site is then one of several, and a
    /// release that orders it through its writer's own fences says nothing of the others,
    /// so only its block-level cumulativity can order the summary ([`SEVERAL_THREADS`]).
    /// Until 2026-11-29 the latest site alone was asked about, and a block whose thread 32
    /// read an element and then published a flag hid the read of its thread 0 from a
    /// writer in another block that waited for the flag (a missed race).
    pub several: u8,
    /// Per summary (write, read, atomic, atomic load), the most block barriers a thread had
    /// arrived at when it made one of the accesses (saturating; [`u16::MAX`] stands for
    /// unknown): a release whose writer passed more at its last device-wide fence orders
    /// them all ([`Release::gbar`]).
    pub bars: [u16; 4],
}

/// The thread of a summary of several threads' accesses ([`Blocks::several`]) as a release
/// is asked about it: no thread of a block, and no landing, so only block-level
/// cumulativity orders it.
pub const SEVERAL_THREADS: u32 = LANDING - 1;

/// A block-level barrier count as [`Blocks::bars`] keeps it.
fn pack_bar(bar: u32) -> u16 {
    u16::try_from(bar).unwrap_or(u16::MAX)
}

/// A count [`pack_bar`] kept.
fn unpack_bar(bar: u16) -> u32 {
    if bar == u16::MAX { u32::MAX } else { u32::from(bar) }
}

/// [`Blocks::several`]: the reads.
const SEVERAL_READ: u8 = 1;
/// [`Blocks::several`]: the atomic updates.
const SEVERAL_ATOMIC: u8 = 2;
/// [`Blocks::several`]: the atomic loads.
const SEVERAL_AREAD: u8 = 4;

/// Several blocks.
pub const MULTI: u32 = u32::MAX;

impl Blocks {
    /// Records an access by block `b` in grid epoch `epoch`; returns the conflicting earlier
    /// access of another block, if any.
    #[inline]
    pub fn access(&mut self, b: u32, epoch: u32, now: Site, kind: Kind) -> Option<Conflict> {
        self.access_with(b, epoch, (now, 0, 0), kind, |_, _, _| false)
    }

    /// [`Self::access`] of an access made when its thread had arrived at `bar` block
    /// barriers and passed `passed` of them (fewer between a split barrier's arrive and its
    /// wait), where `also(earlier, its block, its block-level count)` says whether a
    /// release the accessing thread acquired orders an earlier access (of
    /// [`SEVERAL_THREADS`] for a summary of several): it is then no conflict, and the other
    /// summaries are looked at.
    #[inline]
    pub fn access_with(
        &mut self,
        b: u32,
        epoch: u32,
        (now, bar, passed): (Site, u32, u32),
        kind: Kind,
        also: impl Fn(&Site, u32, u32) -> bool,
    ) -> Option<Conflict> {
        // The common case, a thread touching an element again the same way, with no fence
        // and no block barrier since, changes nothing but the site kept (a later fence or
        // barrier must be noted: a release may order the earlier access and not this one).
        let me = b + 1;
        let bar16 = pack_bar(bar);
        if self.epoch == epoch {
            let same = |acc: Option<Site>, bit: u8| {
                acc.is_some_and(|e| self.several & bit != 0 || (e.tid == now.tid && e.fences == now.fences))
            };
            match kind {
                Kind::Read
                    if self.read == me
                        && same(self.read_acc, SEVERAL_READ)
                        && self.bars[1] >= bar16
                        && (self.write == 0 || self.write == me)
                        && self.atomic == 0 =>
                {
                    self.read_acc = Some(now);
                    return None;
                }
                Kind::Write
                    if self.write == me
                        && same(self.write_acc, 0)
                        && self.bars[0] >= bar16
                        && (self.read == 0 || self.read == me)
                        && self.atomic == 0 =>
                {
                    self.write_acc = Some(now);
                    return None;
                }
                _ => {}
            }
        }
        if self.epoch != epoch {
            *self = Blocks { epoch, ..Blocks::default() };
        }
        let other = |x: u32| x != 0 && x != me;
        let block_of = |x: u32| if x == MULTI { u32::MAX } else { x - 1 };
        // A summary as a release is asked about it: its site, or for several threads'
        // accesses a site of none of them.
        let asked = |e: Site, bit: u8| if self.several & bit != 0 { Site { tid: SEVERAL_THREADS, ..e } } else { e };
        // The summaries an access of `kind` meets, in the order they are reported, each
        // with its [`Self::several`] bit and its index in [`Self::bars`].
        let (w, r, a, ar) = (
            (self.write, self.write_acc, 0, 0),
            (self.read, self.read_acc, SEVERAL_READ, 1),
            (self.atomic, self.atomic_acc, SEVERAL_ATOMIC, 2),
            (self.aread, self.aread_acc, SEVERAL_AREAD, 3),
        );
        let none = (0, None, 0, 0);
        let meets = match kind {
            Kind::Write => [
                (w, RaceKind::WriteWrite),
                (r, RaceKind::ReadWrite),
                (ar, RaceKind::AtomicPlain),
                (a, RaceKind::AtomicPlain),
            ],
            Kind::Read => [
                (a, RaceKind::AtomicPlain),
                (w, RaceKind::WriteRead),
                (none, RaceKind::WriteRead),
                (none, RaceKind::WriteRead),
            ],
            Kind::Atomic => [
                (w, RaceKind::AtomicPlain),
                (r, RaceKind::AtomicPlain),
                (none, RaceKind::AtomicPlain),
                (none, RaceKind::AtomicPlain),
            ],
            Kind::AtomicRead => [
                (w, RaceKind::AtomicPlain),
                (none, RaceKind::AtomicPlain),
                (none, RaceKind::AtomicPlain),
                (none, RaceKind::AtomicPlain),
            ],
        };
        let conflict = meets.into_iter().find_map(|((x, acc, bit, k), kind)| {
            let c = Conflict { earlier: acc.filter(|_| other(x))?, earlier_block: block_of(x), kind };
            (x == MULTI || !also(&asked(c.earlier, bit), c.earlier_block, unpack_bar(self.bars[k]))).then_some(c)
        });
        // The summary of `kind` after the access. Another single block's accesses that a
        // release this thread acquired orders before it are superseded, as a write is:
        // whatever the simulator orders after this access (a later access of the thread,
        // which keeps what it acquired; of a thread of its block that passed a barrier after
        // it, to which the barrier passes the acquisition on; of a thread that acquired a
        // release of this thread made after it, which carries the acquisition on,
        // `sim/flags.rs`) is ordered after the earlier ones too, PTX's causality order being
        // transitive. Until 2026-11-29 two blocks' reads made the element read by several
        // blocks, and a write after them by a block that a lock or a flag ordered after both
        // was a false race.
        let (x, acc, bit, k) = match kind {
            Kind::Write => {
                self.write = me;
                self.write_acc = Some(now);
                self.bars[0] = bar16;
                return conflict;
            }
            Kind::Read => r,
            Kind::Atomic => a,
            Kind::AtomicRead => ar,
        };
        let several = self.several & bit != 0;
        let (x, several, kept) = if x == 0
            || (x != me && x != MULTI && acc.is_some_and(|e| also(&asked(e, bit), x - 1, unpack_bar(self.bars[k]))))
        {
            (me, false, bar16)
        } else if x == me {
            // This block's earlier accesses of the kind are superseded when they are ordered
            // before this one: by a block barrier, or (one thread's) by program order or a
            // release this thread acquired (the critical sections of a lock taken by two
            // threads of a block). A block barrier orders them when this thread has passed
            // one that their threads had not arrived at: the earlier count is an arrival
            // count, compared with this thread's passed count. Until 2026-11-30 this
            // thread's arrival count was used, so an access between a split barrier's
            // arrive and its wait superseded accesses the barrier did not order yet (latent:
            // barrier motion puts only reads of memory nothing writes there, review R11).
            let old = unpack_bar(self.bars[k]);
            let before = old < passed || (!several && acc.is_some_and(|e| e.tid == now.tid || also(&e, x - 1, old)));
            if before {
                (me, false, bar16)
            } else {
                (me, several || acc.is_some_and(|e| e.tid != now.tid), self.bars[k].max(bar16))
            }
        } else {
            (MULTI, true, self.bars[k].max(bar16))
        };
        if several {
            self.several |= bit;
        } else {
            self.several &= !bit;
        }
        self.bars[k] = kept;
        match kind {
            Kind::Read => (self.read, self.read_acc) = (x, Some(now)),
            Kind::Atomic => (self.atomic, self.atomic_acc) = (x, Some(now)),
            _ => (self.aread, self.aread_acc) = (x, Some(now)),
        }
        conflict
    }
}

/// Shadow of one global element: the inter-block summary, an intra-block cell for the
/// block that touched it last, and the phase records of its atomics of safe code, of every
/// block ([`Phases`]; allocated at the first).
#[derive(Clone, Debug, Default)]
pub struct GCell {
    blocks: Blocks,
    cell_block: u32,
    cell: Cell,
    phases: Option<Box<Phases>>,
    /// What the cell held for other blocks before it was reset ([`Lost`]; allocated at the
    /// first reset of a cell with records).
    lost: Option<Box<Lost>>,
}

/// A block's accesses to a global element that the element's intra-block cell no longer
/// holds: the cell is kept for one block at a time, and another block's access resets it.
/// Until 2026-11-29 (eighth session, review R10) nothing stood for them, so block 1's atomic
/// load of an element erased block 0's record of its thread 0's atomic add, and block 0's
/// thread 32, reading it plainly after that with nothing ordering the two, ran clean (a
/// missed race within a block). Per block and kind of access, the site of the latest, the
/// most block barriers their threads had arrived at when they made them, and whether
/// several threads made them: a later access of the block is ordered after them when it is
/// the same thread's (one thread), when its thread has passed more block barriers, or when
/// a release it acquired orders them (the writer's own accesses or its block-level
/// cumulativity); otherwise it is reported. Sub-block barriers are not kept (a false
/// report at worst). Past [`LOST`] entries, the entries are merged into one per kind for
/// several blocks ([`MULTI`]), which every block's accesses are checked against.
#[derive(Clone, Debug, Default)]
struct Lost {
    epoch: u32,
    entries: Vec<LostEntry>,
}

/// One entry of [`Lost`].
#[derive(Clone, Copy, Debug)]
struct LostEntry {
    /// Block + 1, or [`MULTI`].
    block: u32,
    kind: Kind,
    site: Site,
    bar: u32,
    several: bool,
}

/// How many entries [`Lost`] keeps before merging blocks.
const LOST: usize = 8;

impl Lost {
    /// Notes the records of `cell`, of block `block` (+ 1), which is being reset.
    fn park(&mut self, lv: &Levels, block: u32, cell: &Cell) {
        let mut note = |kind: Kind, a: &Acc| {
            let bar = a.counts[lv.block_level()];
            match self.entries.iter_mut().find(|e| (e.block == block || e.block == MULTI) && e.kind == kind) {
                Some(e) => {
                    e.several |= e.block == MULTI || e.site.tid != a.tid;
                    e.bar = e.bar.max(bar);
                    e.site = a.at();
                }
                None => self.entries.push(LostEntry { block, kind, site: a.at(), bar, several: false }),
            }
        };
        if let Some(w) = &cell.write {
            note(Kind::Write, w);
        }
        for r in cell.reads.iter().flatten() {
            note(if r.atomic { Kind::AtomicRead } else { Kind::Read }, r);
        }
        for a in cell.atomics.iter().flat_map(|x| x.recs.iter()) {
            note(Kind::Atomic, a);
        }
        if self.entries.len() > LOST {
            let mut merged: Vec<LostEntry> = Vec::new();
            for e in self.entries.drain(..) {
                match merged.iter_mut().find(|m| m.kind == e.kind) {
                    Some(m) => {
                        m.bar = m.bar.max(e.bar);
                        m.site = e.site;
                    }
                    None => merged.push(LostEntry { block: MULTI, several: true, ..e }),
                }
            }
            self.entries = merged;
        }
    }

    /// The first entry of block `block` (+ 1) that access `now` of `kind` conflicts with
    /// and nothing orders before it ([`Lost`]).
    fn conflict(
        &self,
        lv: &Levels,
        block: u32,
        (now, passed): (&Acc, &[u32; LEVELS]),
        kind: Kind,
        also: impl Fn(&Acc) -> bool,
    ) -> Option<(Site, RaceKind)> {
        self.entries.iter().filter(|e| e.block == block || e.block == MULTI).find_map(|e| {
            let race = match (kind, e.kind) {
                (Kind::Write, Kind::Write) => RaceKind::WriteWrite,
                (Kind::Write, Kind::Read) => RaceKind::ReadWrite,
                (Kind::Write, _) => RaceKind::AtomicPlain,
                (Kind::Read, Kind::Write) => RaceKind::WriteRead,
                (Kind::Read, Kind::Atomic) | (Kind::Atomic, Kind::Write | Kind::Read) => RaceKind::AtomicPlain,
                (Kind::AtomicRead, Kind::Write) => RaceKind::AtomicPlain,
                _ => return None,
            };
            let asked = Site { tid: if e.several { SEVERAL_THREADS } else { e.site.tid }, ..e.site };
            let ordered = (!e.several && e.site.tid == now.tid)
                || e.bar < passed[lv.block_level()]
                || also(&asked.with_block_count(lv, e.bar));
            (!ordered).then_some((e.site, race))
        })
    }
}

impl GCell {
    /// Records an access by thread `now` of block `block` in grid epoch `epoch` and returns
    /// the conflicting earlier access, its kind, and the earlier block when the conflict is
    /// between blocks.
    #[inline]
    pub fn access(
        &mut self,
        lv: &Levels,
        block: u32,
        epoch: u32,
        now: Acc,
        passed: &[u32; LEVELS],
        kind: Kind,
    ) -> Option<(Site, RaceKind, Option<u32>)> {
        self.access_with(lv, (block, epoch), (now, passed), kind, |_, _| false)
    }

    /// [`Self::access`], where `also(earlier, its block or None for this block)` says
    /// whether something other than barriers orders an earlier access
    /// ([`Cell::access_with`]). An access of another block comes with its barrier counts
    /// unknown ([`Site::unknown_counts`]): barriers order nothing across blocks.
    #[inline]
    pub fn access_with(
        &mut self,
        lv: &Levels,
        (block, epoch): (u32, u32),
        (now, passed): (Acc, &[u32; LEVELS]),
        kind: Kind,
        also: impl Fn(&Acc, Option<u32>) -> bool,
    ) -> Option<(Site, RaceKind, Option<u32>)> {
        if self.cell_block != block + 1 {
            let old = std::mem::take(&mut self.cell);
            if self.cell_block != 0
                && (old.write.is_some() || old.atomics.is_some() || old.reads.iter().any(Option::is_some))
            {
                let lost = self.lost.get_or_insert_with(Box::default);
                if lost.epoch != epoch {
                    **lost = Lost { epoch, ..Lost::default() };
                }
                lost.park(lv, self.cell_block, &old);
            }
            self.cell_block = block + 1;
        }
        let level = lv.block_level();
        let conflict = match self.blocks.access_with(
            block,
            epoch,
            (now.at(), now.counts[level], passed[level]),
            kind,
            |e, b, bar| also(&e.with_block_count(lv, bar), Some(b)),
        ) {
            Some(c) => Some((c.earlier, c.kind, Some(c.earlier_block))),
            None => self.cell.access_with(lv, now, passed, kind, |a| also(a, None)).map(|(a, k)| (a.at(), k, None)),
        };
        let conflict = match (conflict, &self.lost) {
            (None, Some(lost)) if lost.epoch == epoch => {
                lost.conflict(lv, block + 1, (&now, passed), kind, |a| also(a, None)).map(|(e, k)| (e, k, None))
            }
            (c, _) => c,
        };
        if !now.phase.is_some() {
            return conflict;
        }
        let phase = self.phase_access(lv, (block, epoch), (&now, passed), &also);
        conflict.or(phase)
    }

    /// Checks atomic `now` of safe code, of block `block`, against the element's phase
    /// records and records it ([`Phases::access`]). Out of line: most accesses are not
    /// atomics of safe code.
    #[cold]
    #[inline(never)]
    fn phase_access(
        &mut self,
        lv: &Levels,
        (block, epoch): (u32, u32),
        (now, passed): (&Acc, &[u32; LEVELS]),
        also: &impl Fn(&Acc, Option<u32>) -> bool,
    ) -> Option<(Site, RaceKind, Option<u32>)> {
        // Within the block, barriers and releases order; across blocks, releases only (the
        // earlier access's barrier counts mean nothing to another block).
        let unordered = |e: &Acc, b: u32| {
            if b == block {
                !lv.ordered(e, now.tid, passed) && !also(e, None)
            } else {
                !also(&e.at().unknown_counts(), Some(b))
            }
        };
        let phase = self.phases.get_or_insert_with(Box::default).access(lv, (block, epoch), (now, passed), unordered);
        phase.map(|(e, b)| (e.at(), RaceKind::AtomicPhase, (b != block).then_some(b)))
    }
}

/// What an access is apart from its thread and its element: the barriers and fences its
/// thread had counted, where in the code it was, its block, grid epoch and kind. All lanes of
/// a warp instruction usually share one, so [`Global`] keeps each distinct moment once per
/// launch ([`Moments`]) and an element's compact [`Slot`] refers to it by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Moment {
    counts: [u32; LEVELS],
    func: u16,
    site: u16,
    fences: Fences,
    atomic: bool,
    phase: Phase,
    kind: Kind,
    block: u32,
    epoch: u32,
}

impl Moment {
    fn of(now: &Acc, block: u32, epoch: u32, kind: Kind) -> Moment {
        Moment {
            counts: now.counts,
            func: now.func,
            site: now.site,
            fences: now.fences,
            atomic: now.atomic,
            phase: now.phase,
            kind,
            block,
            epoch,
        }
    }

    /// The access by thread `tid` at this moment (exactly the [`Acc`] it was made from).
    fn acc(&self, tid: u32) -> Acc {
        Acc {
            tid,
            counts: self.counts,
            func: self.func,
            site: self.site,
            fences: self.fences,
            atomic: self.atomic,
            phase: self.phase,
        }
    }
}

/// A [`Moment`] interned in a [`Global`] shadow (see [`Global::moment`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MomentId(u32);

/// The distinct [`Moment`]s of a launch's compactly held accesses, each stored once. The
/// last one interned is checked first: consecutive accesses are mostly the lanes and
/// elements of one warp instruction.
#[derive(Debug, Default)]
struct Moments {
    list: Vec<Moment>,
    index: std::collections::HashMap<Moment, u32>,
    last: Option<u32>,
    /// How many moments the table may hold (see [`MAX_MOMENTS`]).
    cap: usize,
}

/// How many moments a launch's table holds at most (about 100 bytes each with its index).
/// A slot's repeated access can need a new moment (a thread reading its element after each
/// of a million barriers), and a replaced moment is not reclaimed, so the table is bounded:
/// once full, accesses that would need a new moment are not held in slots but recorded in
/// full cells, which is always exact. The bench's kernels need at most about 6,000.
const MAX_MOMENTS: usize = 1 << 16;

impl Moments {
    /// The index of `m`, added if new; `None` when it is new and the table is full.
    #[inline]
    fn intern(&mut self, m: Moment) -> Option<u32> {
        if let Some(i) = self.last
            && self.list[i as usize] == m
        {
            return Some(i);
        }
        let i = match self.index.get(&m) {
            Some(&i) => i,
            None if self.list.len() >= self.cap => return None,
            None => {
                // Two indices are kept out of the slot's range: `Slot::first` stores one more
                // than a moment's index, and `FULL` marks a full cell.
                let i =
                    u32::try_from(self.list.len()).ok().filter(|&i| i < FULL - 1).expect("fewer than 2^32 - 2 moments");
                self.list.push(m);
                self.index.insert(m, i);
                i
            }
        };
        self.last = Some(i);
        Some(i)
    }

    /// Records access `m` by thread `tid` in `slot` if it cannot conflict and fits: the
    /// first access, or a plain read or write by the thread whose accesses of that kind the
    /// slot holds, in the same block and grid epoch. False, changing nothing, otherwise.
    #[inline]
    fn hold(&self, slot: &mut Slot, m: u32, tid: u32) -> bool {
        if slot.first == 0 {
            *slot = Slot { first: m + 1, latest: m, tid };
            return true;
        }
        if slot.first != FULL && slot.tid == tid {
            let (now, held) = (&self.list[m as usize], &self.list[slot.latest as usize]);
            // Every access a slot holds has the first's block, epoch and kind.
            if matches!(now.kind, Kind::Read | Kind::Write)
                && held.block == now.block
                && held.epoch == now.epoch
                && held.kind == now.kind
            {
                slot.latest = m;
                return true;
            }
        }
        false
    }
}

/// The shadow of one global element (or of a vector of them, see [`Chunk`]), 12 bytes,
/// three states:
///
/// - never accessed: `first` is 0 (a chunk of zeroes is all fresh);
/// - accessed by one thread only, all its accesses of one kind (a plain read or write, or a
///   single access of any kind) in one block and grid epoch: `first` is 1 + the moment of
///   its first access and `latest` the moment of its latest, by thread `tid`. The full
///   cell's state after them is that after the first and the latest alone: its block summary
///   and its intra-block cell keep the latest access (a thread's fences and barrier counts
///   only grow, so the latest's are the largest);
/// - accessed otherwise: `first` is [`FULL`] and `latest` the index of its full cell in
///   [`Global::cells`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    first: u32,
    latest: u32,
    tid: u32,
}

/// [`Slot::first`] of an element with a full cell.
const FULL: u32 = u32::MAX;

/// Elements per lazily allocated chunk of a buffer's shadow.
pub const CHUNK: usize = 4096;

/// The shadow of [`CHUNK`] consecutive elements of a buffer: one slot per element, or, for a
/// chunk whose first access was a vector access of `width` (2 or 4) elements at an index
/// that is a multiple of `width`, one slot per aligned group of `width` elements. Such a slot
/// stands for `width` identical element slots: only [`Global::quick_vec`] uses it, for an
/// access by one thread to a whole group that the slot can hold (which would change the
/// group's element slots alike); any other access first expands the chunk into one slot per
/// element, each a copy of its group's ([`Global::slot`]).
#[derive(Debug)]
struct Chunk {
    width: usize,
    slots: Box<[Slot]>,
}

impl Chunk {
    fn new(width: usize) -> Chunk {
        Chunk { width, slots: vec![Slot::default(); CHUNK / width].into_boxed_slice() }
    }
}

/// The race shadow of the global buffers of a launch, allocated in chunks of [`CHUNK`]
/// elements on first access. An element's shadow starts fresh, holds its first access (and
/// the same thread's repeats of it) compactly, and becomes a full [`GCell`] at any other
/// access: the cell those accesses left, replayed, and then the new one recorded in it, so
/// every access sees exactly the state a full cell per element would have held.
#[derive(Debug, Default)]
pub struct Global {
    /// Per buffer, its chunks (`None` until an element of it is accessed).
    chunks: Vec<Vec<Option<Chunk>>>,
    /// Full cells of the elements accessed more than once.
    cells: Vec<GCell>,
    /// The moments the compact slots refer to.
    moments: Moments,
}

impl Global {
    /// The shadow of buffers of `lens` elements, nothing allocated yet.
    pub fn new(lens: impl IntoIterator<Item = usize>) -> Global {
        Global {
            chunks: lens.into_iter().map(|n| (0..n.div_ceil(CHUNK)).map(|_| None).collect()).collect(),
            cells: Vec::new(),
            moments: Moments { cap: MAX_MOMENTS, ..Moments::default() },
        }
    }

    /// As [`Self::new`], with a table of at most `cap` moments (to test a full table).
    #[cfg(test)]
    fn with_moment_cap(lens: impl IntoIterator<Item = usize>, cap: usize) -> Global {
        Global { moments: Moments { cap, ..Moments::default() }, ..Global::new(lens) }
    }

    /// The slot of element `i` of buffer `b`, its chunk allocated if needed, and expanded
    /// to one slot per element if it had one per vector.
    #[inline]
    fn slot(chunks: &mut [Vec<Option<Chunk>>], b: usize, i: usize) -> &mut Slot {
        let chunk = chunks[b][i / CHUNK].get_or_insert_with(|| Chunk::new(1));
        if chunk.width != 1 {
            let w = chunk.width;
            *chunk = Chunk { width: 1, slots: chunk.slots.iter().flat_map(|&s| std::iter::repeat_n(s, w)).collect() };
        }
        &mut chunk.slots[i % CHUNK]
    }

    /// Interns access `now` of thread block `block` in grid epoch `epoch` without its
    /// thread, for [`Self::quick_at`] and [`Self::quick_vec`]: the lanes of a warp
    /// instruction usually share one. `None` when the table is full (see [`MAX_MOMENTS`]):
    /// the access must then be recorded through [`Self::access`].
    #[inline]
    pub fn moment(&mut self, now: &Acc, block: u32, epoch: u32, kind: Kind) -> Option<MomentId> {
        self.moments.intern(Moment::of(now, block, epoch, kind)).map(MomentId)
    }

    /// As [`Self::quick`], for thread `tid`'s access at moment `m`.
    #[inline]
    pub fn quick_at(&mut self, b: usize, i: usize, m: MomentId, tid: u32) -> bool {
        self.moments.hold(Self::slot(&mut self.chunks, b, i), m.0, tid)
    }

    /// Records thread `tid`'s access at moment `m` to the `n` elements from `i` of buffer
    /// `b` at once when each of them would be recorded by [`Self::quick_at`] and they are a
    /// group of a chunk with one slot per `n` elements (or of a fresh chunk, which becomes
    /// one). False, recording nothing, otherwise: the caller then records element by
    /// element.
    #[inline]
    pub fn quick_vec(&mut self, b: usize, i: usize, n: usize, m: MomentId, tid: u32) -> bool {
        if !matches!(n, 2 | 4) || !i.is_multiple_of(n) {
            return false;
        }
        let chunk = self.chunks[b][i / CHUNK].get_or_insert_with(|| Chunk::new(n));
        // A group's slot holds an access exactly when each of its elements' slots (all equal
        // to it) would, and then changes as each of them would.
        chunk.width == n && self.moments.hold(&mut chunk.slots[i % CHUNK / n], m.0, tid)
    }

    /// Records an access to element `i` of buffer `b` that cannot conflict and fits in its
    /// slot: the element's first access, or a plain read or write repeating the kind of the
    /// thread that made its only accesses so far (in the same block and grid epoch); false,
    /// recording nothing, for any other.
    #[inline]
    pub fn quick(&mut self, b: usize, i: usize, block: u32, epoch: u32, now: Acc, kind: Kind) -> bool {
        let slot = Self::slot(&mut self.chunks, b, i);
        // Moments are interned only for accesses the slot takes, so that accesses to full
        // cells do not grow the table.
        let takes = slot.first == 0
            || (slot.first != FULL && slot.tid == now.tid && matches!(kind, Kind::Read | Kind::Write) && {
                let held = &self.moments.list[slot.latest as usize];
                held.block == block && held.epoch == epoch && held.kind == kind
            });
        if !takes {
            return false;
        }
        let Some(m) = self.moments.intern(Moment::of(&now, block, epoch, kind)) else { return false };
        let held = self.moments.hold(slot, m, now.tid);
        debug_assert!(held);
        true
    }

    /// Records an access to element `i` of buffer `b` (as [`GCell::access`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn access(
        &mut self,
        lv: &Levels,
        (b, i): (usize, usize),
        block: u32,
        epoch: u32,
        now: Acc,
        passed: &[u32; LEVELS],
        kind: Kind,
    ) -> Option<(Site, RaceKind, Option<u32>)> {
        self.access_with(lv, (b, i), (block, epoch), (now, passed), kind, |_, _| false)
    }

    /// [`Self::access`] with `also` as in [`GCell::access_with`].
    #[inline]
    pub fn access_with(
        &mut self,
        lv: &Levels,
        (b, i): (usize, usize),
        (block, epoch): (u32, u32),
        (now, passed): (Acc, &[u32; LEVELS]),
        kind: Kind,
        also: impl Fn(&Acc, Option<u32>) -> bool,
    ) -> Option<(Site, RaceKind, Option<u32>)> {
        if self.quick(b, i, block, epoch, now, kind) {
            return None;
        }
        let next = self.cells.len();
        let slot = Self::slot(&mut self.chunks, b, i);
        match slot.first {
            0 => {
                // A first access not held in the slot (the moment table is full): a full cell
                // from the start.
                *slot =
                    Slot { first: FULL, latest: u32::try_from(next).expect("fewer than 2^32 shadow cells"), tid: 0 };
                let mut cell = GCell::default();
                let conflict = cell.access_with(lv, (block, epoch), (now, passed), kind, &also);
                self.cells.push(cell);
                conflict
            }
            FULL => self.cells[slot.latest as usize].access_with(lv, (block, epoch), (now, passed), kind, &also),
            first => {
                let (f, l) = (self.moments.list[first as usize - 1], self.moments.list[slot.latest as usize]);
                let tid = slot.tid;
                *slot =
                    Slot { first: FULL, latest: u32::try_from(next).expect("fewer than 2^32 shadow cells"), tid: 0 };
                let mut cell = GCell::default();
                // The first access (its barrier counts do not matter: the latest, by the same
                // thread and of the same kind, replaces its record in the cell), then the
                // latest when there were more.
                let latest = l.acc(tid);
                let first = Acc { func: f.func, site: f.site, fences: f.fences, ..latest };
                let latest = (first != latest).then_some(latest);
                for a in std::iter::once(first).chain(latest) {
                    let replayed = cell.access(lv, f.block, f.epoch, a, &a.counts, f.kind);
                    debug_assert!(replayed.is_none(), "the accesses a slot holds conflict with nothing");
                }
                let conflict = cell.access_with(lv, (block, epoch), (now, passed), kind, &also);
                self.cells.push(cell);
                conflict
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prism_types::intrinsics::atomic_op;

    /// The rule of [`read_slot`] as first written, with `Option`s for "none yet".
    fn read_slot_options<const N: usize>(tids: [u32; N], next: &mut u8, tid: u32) -> usize {
        let warp = tid / 32;
        let (mut same_warp, mut first_same, mut free) = (0, None, None);
        for (i, &t) in tids.iter().enumerate() {
            if t == tid {
                return i;
            }
            if t == NOBODY {
                free = free.or(Some(i));
            } else if t / 32 == warp {
                same_warp += 1;
                first_same = first_same.or(Some(i));
            }
        }
        match (first_same, free) {
            (Some(i), _) if same_warp >= 2 => i,
            (_, Some(i)) => i,
            _ => {
                *next = (*next + 1) % N as u8;
                *next as usize
            }
        }
    }

    /// Every combination of four records drawn from free ones and threads of four warps
    /// (three of them in the reader's), for every reader and round-robin position: the slot
    /// and `next` are the first formulation's.
    #[test]
    fn read_slot_is_its_first_formulation() {
        let ids = [NOBODY, 0, 1, 31, 32, 33, 63, 64, 95];
        for code in 0..ids.len().pow(4) {
            let tids: [u32; 4] = std::array::from_fn(|i| ids[code / ids.len().pow(i as u32) % ids.len()]);
            for &tid in &ids[1..] {
                for start in 0..4u8 {
                    let (mut a, mut b) = (start, start);
                    let got = read_slot(tids, &mut a, tid);
                    let want = read_slot_options(tids, &mut b, tid);
                    assert_eq!((got, a), (want, b), "records {tids:?}, reader {tid}, next {start}");
                }
            }
        }
    }

    /// A plain access by thread `tid` that has passed no barrier and made no fence.
    fn fresh_access(tid: u32) -> Acc {
        Acc { tid, counts: [0; LEVELS], func: 9, site: 9, fences: Fences::default(), atomic: false, phase: Phase::NONE }
    }

    fn acc(tid: u32, block_barriers: u32) -> Acc {
        Acc {
            tid,
            counts: [0, block_barriers, 0, 0],
            func: 0,
            site: 0,
            fences: Fences::default(),
            atomic: false,
            phase: Phase::NONE,
        }
    }

    #[test]
    fn barrier_orders_block_accesses() {
        let lv = Levels::new(vec![], 64);
        assert_eq!(lv.sizes, vec![32, 64]);
        let mut c = Cell::default();
        assert!(c.access(&lv, acc(0, 0), &acc(0, 0).counts, Kind::Write).is_none());
        // Thread 40 (another warp) reads in the same interval: a race.
        assert_eq!(c.access(&lv, acc(40, 0), &acc(40, 0).counts, Kind::Read).map(|x| x.1), Some(RaceKind::WriteRead));
        // After a block barrier it is ordered.
        let mut c = Cell::default();
        c.access(&lv, acc(0, 0), &acc(0, 0).counts, Kind::Write);
        assert!(c.access(&lv, acc(40, 1), &acc(40, 1).counts, Kind::Read).is_none());
    }

    #[test]
    fn warp_barrier_orders_only_its_warp() {
        let lv = Levels::new(vec![], 64);
        let w = |tid, warp_b| Acc {
            tid,
            counts: [warp_b, 0, 0, 0],
            func: 0,
            site: 0,
            fences: Fences::default(),
            atomic: false,
            phase: Phase::NONE,
        };
        let mut c = Cell::default();
        c.access(&lv, w(1, 0), &w(1, 0).counts, Kind::Write);
        assert!(c.access(&lv, w(2, 1), &w(2, 1).counts, Kind::Read).is_none(), "same warp, after __syncwarp");
        let mut c = Cell::default();
        c.access(&lv, w(1, 0), &w(1, 0).counts, Kind::Write);
        assert!(
            c.access(&lv, w(33, 1), &w(33, 1).counts, Kind::Read).is_some(),
            "other warp: a warp barrier does not order it"
        );
    }

    /// Lanes 0..32 of one warp read an element; then lane 5 writes it: a race with the
    /// other lanes' reads, although lane 5 read it too.
    #[test]
    fn a_write_meets_reads_by_other_lanes_of_its_warp() {
        let lv = Levels::new(vec![], 64);
        let mut c = Cell::default();
        for t in 0..32 {
            assert!(c.access(&lv, acc(t, 0), &acc(t, 0).counts, Kind::Read).is_none());
        }
        assert!(c.access(&lv, acc(5, 0), &acc(5, 0).counts, Kind::Write).is_some());
    }

    #[test]
    fn atomics_do_not_race_with_atomics() {
        let lv = Levels::new(vec![], 64);
        let mut c = Cell::default();
        assert!(c.access(&lv, acc(0, 0), &acc(0, 0).counts, Kind::Atomic).is_none());
        assert!(c.access(&lv, acc(40, 0), &acc(40, 0).counts, Kind::Atomic).is_none());
        assert!(c.access(&lv, acc(41, 0), &acc(41, 0).counts, Kind::Read).is_some());
    }

    /// Every lane of a warp updates an element atomically, then the last of them updates it
    /// again and accesses it plainly: the plain access races with the other lanes' atomics,
    /// which a single "last atomic" record (lane 31's own) forgot. Likewise across warps,
    /// after a warp barrier that orders only the accessing lane's own warp.
    #[test]
    fn a_plain_access_meets_other_threads_atomics_not_just_the_last() {
        let lv = Levels::new(vec![], 64);
        for kind in [Kind::Read, Kind::Write] {
            let mut c = Cell::default();
            for t in 0..32 {
                assert!(c.access(&lv, acc(t, 0), &acc(t, 0).counts, Kind::Atomic).is_none());
            }
            assert!(c.access(&lv, acc(31, 0), &acc(31, 0).counts, Kind::Atomic).is_none());
            let (earlier, k) = c.access(&lv, acc(31, 0), &acc(31, 0).counts, kind).expect("a race");
            assert_ne!(earlier.tid, 31);
            assert_eq!(k, RaceKind::AtomicPlain);
        }
        // Warp 1's atomics, then warp 0's, then a warp barrier in warp 0 and a plain read by
        // lane 0: ordered with warp 0's atomics, not with warp 1's.
        let w = |tid, warp_b| Acc {
            tid,
            counts: [warp_b, 0, 0, 0],
            func: 0,
            site: 0,
            fences: Fences::default(),
            atomic: false,
            phase: Phase::NONE,
        };
        let mut c = Cell::default();
        for t in (32..64).chain(0..32) {
            assert!(c.access(&lv, w(t, 0), &w(t, 0).counts, Kind::Atomic).is_none());
        }
        let (earlier, _) = c.access(&lv, w(0, 1), &w(0, 1).counts, Kind::Read).expect("a race with warp 1");
        assert!(earlier.tid >= 32);
    }

    /// Accesses of different widths over the same bytes meet in the shared shadow: an
    /// 8-byte write and a 4-byte read of its upper half (two scopes of `double` and `int`
    /// reusing space), a 2-byte write inside a 4-byte cell, and a 1-byte read of an 8-byte
    /// atomic; accesses that share no byte do not.
    #[test]
    fn a_record_ordered_otherwise_does_not_hide_the_others() {
        // Threads 32 and 64 read; thread 0's write is ordered after thread 32's read by
        // something other than barriers (a flag, an mbarrier wait): the race with thread
        // 64's read is still found, whichever read was recorded first (review R5, F2).
        let lv = Levels::new(vec![], 96);
        let also = |a: &Acc| a.tid == 32;
        for readers in [[32, 64], [64, 32]] {
            let mut c = Cell::default();
            let mut sh = SharedShadow::default();
            sh.cover(16);
            for t in readers {
                assert!(c.access(&lv, acc(t, 0), &acc(t, 0).counts, Kind::Read).is_none());
                assert!(sh.access(&lv, (0, 4), acc(t, 0), &acc(t, 0).counts, Kind::Read).is_none());
            }
            let got = c.access_with(&lv, acc(0, 0), &acc(0, 0).counts, Kind::Write, also);
            assert_eq!(got.map(|(a, k)| (a.tid, k)), Some((64, RaceKind::ReadWrite)));
            let got = sh.access_with(&lv, (0, 4), (acc(0, 0), &acc(0, 0).counts), Kind::Write, also);
            assert_eq!(got.map(|(a, k)| (a.tid, k)), Some((64, RaceKind::ReadWrite)));
        }
        // Two atomics, one ordered otherwise: a plain read meets the other.
        let mut c = Cell::default();
        for t in [32, 64] {
            assert!(c.access(&lv, acc(t, 0), &acc(t, 0).counts, Kind::Atomic).is_none());
        }
        let got = c.access_with(&lv, acc(0, 0), &acc(0, 0).counts, Kind::Read, also);
        assert_eq!(got.map(|(a, k)| (a.tid, k)), Some((64, RaceKind::AtomicPlain)));
        // Nothing left once both are ordered.
        let got = c.access_with(&lv, acc(1, 0), &acc(1, 0).counts, Kind::Read, |a: &Acc| a.tid != 0);
        assert!(got.is_none());
        // Between blocks: a summary ordered otherwise makes way for the next one.
        let s = |tid| Site { tid, func: 0, site: 0, fences: Fences::default() };
        let mut b = Blocks::default();
        b.access(1, 0, s(3), Kind::Write);
        b.access(2, 0, s(4), Kind::Read);
        let got = b.access_with(0, 0, (s(5), 0, 0), Kind::Write, |e, blk, _| e.tid == 3 && blk == 1);
        assert_eq!(got.map(|c| (c.earlier.tid, c.earlier_block, c.kind)), Some((4, 2, RaceKind::ReadWrite)));
    }

    #[test]
    fn overlapping_accesses_of_different_widths_meet_in_shared_memory() {
        let lv = Levels::new(vec![], 64);
        let mut sh = SharedShadow::default();
        sh.cover(64);
        let a = |tid| Acc {
            tid,
            counts: [0; LEVELS],
            func: 0,
            site: 0,
            fences: Fences::default(),
            atomic: false,
            phase: Phase::NONE,
        };
        // Thread 1 writes bytes 8..16; thread 0 reads bytes 12..16.
        assert!(sh.access(&lv, (8, 8), a(1), &a(1).counts, Kind::Write).is_none());
        let (e, k) = sh.access(&lv, (12, 4), a(0), &a(0).counts, Kind::Read).expect("a race");
        assert_eq!((e.tid, k), (1, RaceKind::WriteRead));
        // Thread 0 reads bytes 4..8: no byte of thread 1's write.
        assert!(sh.access(&lv, (4, 4), a(0), &a(0).counts, Kind::Read).is_none());
        // Thread 2 writes bytes 10..12 (inside the first half of the double): meets it.
        assert_eq!(sh.access(&lv, (10, 2), a(2), &a(2).counts, Kind::Write).map(|c| c.1), Some(RaceKind::WriteWrite));
        // Thread 1 reads the whole double again: meets thread 2's write and thread 0's read
        // does not matter (reads do not race).
        assert_eq!(sh.access(&lv, (8, 8), a(1), &a(1).counts, Kind::Read).map(|c| c.0.tid), Some(2));
        // An 8-byte atomic, then a 1-byte plain read of its last byte by another thread.
        assert!(sh.access(&lv, (32, 8), a(3), &a(3).counts, Kind::Atomic).is_none());
        assert_eq!(sh.access(&lv, (39, 1), a(4), &a(4).counts, Kind::Read).map(|c| c.1), Some(RaceKind::AtomicPlain));
        // Same-width accesses keep one cell each.
        let cells = sh.cells.len();
        assert!(sh.access(&lv, (48, 4), a(5), &a(5).counts, Kind::Write).is_none());
        assert!(sh.access(&lv, (48, 4), a(5), &a(5).counts, Kind::Read).is_none());
        assert_eq!(sh.cells.len(), cells + 1);
        assert!(std::mem::size_of::<SCell>() <= 48, "a shared cell: {}", std::mem::size_of::<SCell>());
        // A reset forgets every byte of every cell.
        sh.reset();
        assert!(sh.index.iter().all(|&i| i == 0));
        assert!(sh.access(&lv, (12, 4), a(0), &a(0).counts, Kind::Read).is_none());
    }

    #[test]
    fn atomic_loads_race_only_with_plain_writes() {
        let lv = Levels::new(vec![], 64);
        let mut c = Cell::default();
        assert!(c.access(&lv, acc(0, 0), &acc(0, 0).counts, Kind::AtomicRead).is_none());
        assert!(c.access(&lv, acc(41, 0), &acc(41, 0).counts, Kind::Atomic).is_none(), "an update and a load");
        assert!(c.access(&lv, acc(40, 0), &acc(40, 0).counts, Kind::Read).is_some(), "a plain read and the update");
        let mut c = Cell::default();
        assert!(c.access(&lv, acc(0, 0), &acc(0, 0).counts, Kind::AtomicRead).is_none());
        assert!(c.access(&lv, acc(40, 0), &acc(40, 0).counts, Kind::Read).is_none(), "two reads");
        assert!(c.access(&lv, acc(42, 0), &acc(42, 0).counts, Kind::Write).is_some(), "a write and the loads");
        let mut b = Blocks::default();
        let s = acc(0, 0).at();
        assert!(b.access(0, 0, s, Kind::AtomicRead).is_none());
        assert!(b.access(1, 0, s, Kind::Atomic).is_none());
        assert!(b.access(2, 0, s, Kind::Read).is_some(), "a plain read and another block's update");
        let mut b = Blocks::default();
        b.access(0, 0, s, Kind::AtomicRead);
        assert!(b.access(1, 0, s, Kind::Write).is_some());
    }

    #[test]
    fn blocks_race_on_writes() {
        let mut b = Blocks::default();
        let s = acc(0, 0).at();
        assert!(b.access(0, 0, s, Kind::Read).is_none());
        assert!(b.access(0, 0, s, Kind::Read).is_none());
        assert!(b.access(1, 0, s, Kind::Read).is_none());
        assert!(b.access(2, 0, s, Kind::Write).is_some());
        let mut b = Blocks::default();
        b.access(0, 0, s, Kind::Write);
        assert!(b.access(0, 0, s, Kind::Read).is_none(), "its own block");
        assert!(b.access(1, 0, s, Kind::Read).is_some());
        let mut b = Blocks::default();
        b.access(0, 0, s, Kind::Write);
        // A grid barrier (new epoch) orders it.
        assert!(b.access(1, 1, s, Kind::Read).is_none());
    }

    /// A release orders only its writer's own accesses for another block: a summary of
    /// several threads' accesses is never taken as ordered by one, and a single thread's
    /// access that one orders before another block's is superseded by it.
    #[test]
    fn block_summaries_of_several_threads_are_not_ordered_by_a_release() {
        let (t0, t32) = (acc(0, 0).at(), acc(32, 0).at());
        // "Ordered": the thread acquired a release that orders thread 32's accesses.
        let by_t32 = |e: &Site, _: u32, _: u32| e.tid == 32;
        let mut b = Blocks::default();
        assert!(b.access(0, 0, t0, Kind::Read).is_none());
        assert!(b.access(0, 0, t32, Kind::Read).is_none());
        assert!(b.access_with(1, 0, (t0, 0, 0), Kind::Write, by_t32).is_some(), "thread 0's read is not ordered");
        let mut b = Blocks::default();
        assert!(b.access(0, 0, t32, Kind::Read).is_none());
        assert!(b.access_with(1, 0, (t0, 0, 0), Kind::Write, by_t32).is_none(), "thread 32's read alone is");
        // A read of block 1 ordered after thread 32's supersedes it; one not ordered does not.
        let mut b = Blocks::default();
        b.access(0, 0, t32, Kind::Read);
        b.access_with(1, 0, (t0, 0, 0), Kind::Read, by_t32);
        assert!(b.access(1, 0, t0, Kind::Write).is_none(), "a lock: each block after the one before");
        let mut b = Blocks::default();
        b.access(0, 0, t0, Kind::Read);
        b.access_with(1, 0, (t0, 0, 0), Kind::Read, by_t32);
        assert!(b.access_with(1, 0, (t0, 0, 0), Kind::Write, by_t32).is_some(), "block 0's read is not ordered");
        // The same for atomic updates against a plain read.
        let mut b = Blocks::default();
        b.access(0, 0, t0, Kind::Atomic);
        b.access(0, 0, t32, Kind::Atomic);
        assert!(b.access_with(1, 0, (t0, 0, 0), Kind::Read, by_t32).is_some());
    }
    /// A block barrier orders a block's earlier access before a later one only once the
    /// later thread has passed it: between a split barrier's arrive and its wait the later
    /// access does not supersede the earlier one, and another block ordered after the later
    /// access alone (by its thread's release) still meets the earlier one.
    #[test]
    fn a_barrier_arrived_at_but_not_passed_supersedes_nothing() {
        let t0 = acc(0, 0).at();
        let t32 = acc(32, 1).at();
        let by_t32 = |e: &Site, _: u32, _: u32| e.tid == 32;
        let mut b = Blocks::default();
        assert!(b.access(0, 0, t0, Kind::Read).is_none());
        // Thread 32 has arrived at the block's first barrier (split: not yet waited).
        assert!(b.access_with(0, 0, (t32, 1, 0), Kind::Read, |_, _, _| false).is_none());
        assert!(
            b.access_with(1, 0, (t0, 0, 0), Kind::Write, by_t32).is_some(),
            "thread 0's read is not ordered before thread 32's, nor by its release"
        );
        // Once passed, the barrier orders thread 0's read before thread 32's.
        let mut b = Blocks::default();
        assert!(b.access(0, 0, t0, Kind::Read).is_none());
        assert!(b.access_with(0, 0, (t32, 1, 1), Kind::Read, |_, _, _| false).is_none());
        assert!(b.access_with(1, 0, (t0, 0, 0), Kind::Write, by_t32).is_none());
    }
    fn gacc(tid: u32, block_barriers: u32) -> (Acc, [u32; LEVELS]) {
        let a = acc(tid, block_barriers);
        (a, a.counts)
    }

    /// Records an access in the lazy shadow; the conflict's kind, if any.
    fn record(
        g: &mut Global,
        lv: &Levels,
        (b, i): (usize, usize),
        block: u32,
        tid: u32,
        kind: Kind,
    ) -> Option<RaceKind> {
        let (a, passed) = gacc(tid, 0);
        g.access(lv, (b, i), block, 0, a, &passed, kind).map(|c| c.1)
    }

    #[test]
    fn a_first_access_allocates_only_its_chunk() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::new([3 * CHUNK + 5, 10]);
        assert!(g.chunks[0].iter().all(Option::is_none));
        assert!(record(&mut g, &lv, (0, 2 * CHUNK + 1), 0, 0, Kind::Write).is_none());
        assert_eq!(g.chunks[0].iter().map(Option::is_some).collect::<Vec<_>>(), [false, false, true, false]);
        assert!(g.chunks[1].iter().all(Option::is_none), "another buffer");
        assert!(g.cells.is_empty(), "one access is held in its slot");
        // The last, partial chunk.
        assert!(record(&mut g, &lv, (0, 3 * CHUNK + 4), 0, 0, Kind::Read).is_none());
        assert!(g.chunks[0][3].is_some());
        // A second access makes it a full cell, which reports as a full cell does.
        assert_eq!(record(&mut g, &lv, (0, 2 * CHUNK + 1), 0, 40, Kind::Read), Some(RaceKind::WriteRead));
        assert_eq!(g.cells.len(), 1);
        assert!(std::mem::size_of::<Slot>() <= 12, "a slot is small: {}", std::mem::size_of::<Slot>());
        // 296 since the block summary marks summaries of several threads and keeps their
        // block barrier counts (`Blocks::several`, `Blocks::bars`), and since a cell keeps
        // what it held for other blocks (`GCell::lost`).
        assert!(std::mem::size_of::<GCell>() <= 296, "a full cell: {}", std::mem::size_of::<GCell>());
    }

    /// The moment table stays within its bound: accesses that would need a new moment once
    /// it is full are recorded in full cells, and still report as full cells do.
    #[test]
    fn a_full_moment_table_falls_back_to_full_cells() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::with_moment_cap([CHUNK], 2);
        for i in 0..5 {
            // Five sites: five moments.
            let a = Acc { site: i as u16, ..acc(0, 0) };
            assert!(g.access(&lv, (0, i), 0, 0, a, &a.counts, Kind::Write).is_none());
        }
        assert_eq!((g.moments.list.len(), g.cells.len()), (2, 3));
        // A known moment is still held compactly.
        let a = Acc { site: 1, ..acc(0, 0) };
        assert!(g.access(&lv, (0, 7), 0, 0, a, &a.counts, Kind::Write).is_none());
        assert_eq!((g.moments.list.len(), g.cells.len()), (2, 3));
        for i in [0, 4, 7] {
            assert_eq!(record(&mut g, &lv, (0, i), 0, 40, Kind::Read), Some(RaceKind::WriteRead));
        }
        assert_eq!(Global::new([1]).moments.cap, MAX_MOMENTS);
    }

    #[test]
    fn races_are_per_element_across_a_chunk_boundary() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::new([2 * CHUNK]);
        // Thread 0 writes the last element of the first chunk and the first of the second
        // (a vector access across the boundary).
        assert!(record(&mut g, &lv, (0, CHUNK - 1), 0, 0, Kind::Write).is_none());
        assert!(record(&mut g, &lv, (0, CHUNK), 0, 0, Kind::Write).is_none());
        // Thread 40 reads each: both race; a neighbour it did not touch does not.
        assert_eq!(record(&mut g, &lv, (0, CHUNK), 0, 40, Kind::Read), Some(RaceKind::WriteRead));
        assert_eq!(record(&mut g, &lv, (0, CHUNK - 1), 0, 40, Kind::Read), Some(RaceKind::WriteRead));
        assert!(record(&mut g, &lv, (0, CHUNK + 1), 0, 40, Kind::Read).is_none());
        assert!(record(&mut g, &lv, (0, CHUNK - 2), 0, 40, Kind::Read).is_none());
        // Another block reading across the boundary meets block 0's writes.
        assert_eq!(record(&mut g, &lv, (0, CHUNK), 1, 0, Kind::Read), Some(RaceKind::WriteRead));
    }

    #[test]
    fn atomics_and_plain_accesses_in_the_lazy_shadow() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::new([CHUNK]);
        // Atomics first (held in the slot), then another atomic: no race; then a plain read.
        assert!(record(&mut g, &lv, (0, 7), 0, 0, Kind::Atomic).is_none());
        assert!(record(&mut g, &lv, (0, 7), 0, 40, Kind::Atomic).is_none());
        assert_eq!(record(&mut g, &lv, (0, 7), 0, 41, Kind::Read), Some(RaceKind::AtomicPlain));
        // A plain write first, then an atomic of another block.
        assert!(record(&mut g, &lv, (0, 8), 0, 0, Kind::Write).is_none());
        assert_eq!(record(&mut g, &lv, (0, 8), 1, 0, Kind::Atomic), Some(RaceKind::AtomicPlain));
        // An atomic load first, then a plain read (no race) and a plain write: a race with
        // the earliest read kept, the atomic load (as a full cell reports it).
        assert!(record(&mut g, &lv, (0, 9), 0, 0, Kind::AtomicRead).is_none());
        assert!(record(&mut g, &lv, (0, 9), 0, 40, Kind::Read).is_none());
        let (a, passed) = gacc(42, 0);
        let c = g.access(&lv, (0, 9), 0, 0, a, &passed, Kind::Write).expect("a race");
        assert_eq!((c.0.tid, c.1), (0, RaceKind::ReadWrite));
        // Another block's atomic load, then a plain write: atomic-plain.
        assert!(record(&mut g, &lv, (0, 10), 1, 0, Kind::AtomicRead).is_none());
        assert_eq!(record(&mut g, &lv, (0, 10), 0, 0, Kind::Write), Some(RaceKind::AtomicPlain));
    }

    #[test]
    fn reads_by_many_lanes_then_a_write_in_the_lazy_shadow() {
        let lv = Levels::new(vec![], 128);
        let mut g = Global::new([CHUNK]);
        for t in 0..96 {
            assert!(record(&mut g, &lv, (0, 3), 0, t, Kind::Read).is_none());
        }
        assert_eq!(record(&mut g, &lv, (0, 3), 0, 5, Kind::Write), Some(RaceKind::ReadWrite));
        // One lane's read, then its own write: no race.
        assert!(record(&mut g, &lv, (0, 4), 0, 5, Kind::Read).is_none());
        assert!(record(&mut g, &lv, (0, 4), 0, 5, Kind::Write).is_none());
        // After a block barrier the write is ordered after every read.
        let mut g = Global::new([CHUNK]);
        for t in 0..96 {
            assert!(record(&mut g, &lv, (0, 3), 0, t, Kind::Read).is_none());
        }
        let (a, passed) = gacc(5, 1);
        assert!(g.access(&lv, (0, 3), 0, 0, a, &passed, Kind::Write).is_none());
    }

    /// A xorshift generator from `seed`: each call gives a number below its argument.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// The shared-memory shadow reports exactly what a full cell per byte reports (for an
    /// access of several bytes, each byte's cell records it and the lowest byte's conflict
    /// is reported), and ends each sequence in the same state: random threads of several
    /// warps, barrier counts at every level, fences, the atomic flag, sites, all four kinds,
    /// accesses of 1, 2, 4 and 8 bytes, mostly aligned to their width, sometimes not, over 24
    /// bytes, with the moment table collected often (a collection point of 1 to 8 moments)
    /// or never; a reset between sequences (as between blocks) must forget everything.
    #[test]
    fn the_shared_shadow_matches_full_cells() {
        let lv = Levels::new(vec![8], 128);
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let (mut conflicts, mut mixed) = (0, 0);
        let mut small = SharedShadow::with_collection_at(1);
        let mut big = SharedShadow::default();
        for round in 0..3000 {
            let sh = if round % 2 == 0 { &mut small } else { &mut big };
            if round % 2 == 0 {
                sh.collect_at = 1 + next(8) as usize;
            }
            sh.reset();
            sh.cover(24);
            let mut full = vec![Cell::default(); 24];
            let mut counts = [[0u32; LEVELS]; 128];
            let mut fences = [Fences::default(); 128];
            let tids = [0u32, 1, 2, 9, 31, 33, 70];
            // Most sequences start with accesses of one width, aligned (the shadow's state
            // of one width), for a random while, then mix widths and starts.
            let (one, until) = ([None, Some(1), Some(2), Some(4), Some(8)][next(5) as usize], next(61));
            for step in 0..60 {
                match next(12) {
                    0..=2 => {
                        let t = tids[next(7) as usize] as usize;
                        counts[t][next(3) as usize] += 1;
                    }
                    3 => {
                        let t = tids[next(7) as usize] as usize;
                        fences[t].bump(next(2) == 0);
                    }
                    _ => {}
                }
                let kind = [Kind::Read, Kind::Read, Kind::Write, Kind::Write, Kind::Atomic, Kind::AtomicRead]
                    [next(6) as usize];
                let tid = tids[next(7) as usize];
                let (width, byte) = match one {
                    Some(w) if step < until => (w, next(24 / w as u64) as usize * w),
                    _ => {
                        let w = [1usize, 1, 2, 4, 4, 8][next(6) as usize];
                        (w, if next(4) == 0 { next(25 - w as u64) as usize } else { next(24 / w as u64) as usize * w })
                    }
                };
                let now = Acc {
                    tid,
                    counts: counts[tid as usize],
                    func: next(2) as u16,
                    site: next(3) as u16,
                    fences: fences[tid as usize],
                    atomic: next(8) == 0,
                    phase: Phase::NONE,
                };
                // Passed counts at or above the arrivals (a split barrier's arrive first).
                let mut passed = now.counts;
                if next(4) == 0 {
                    passed[next(3) as usize] += 1;
                }
                let mut want = None;
                for cell in &mut full[byte..byte + width] {
                    let c = cell.access(&lv, now, &passed, kind);
                    want = want.or(c);
                }
                let got = sh.access(&lv, (byte, width), now, &passed, kind);
                assert_eq!(got, want, "bytes {byte} + {width}, {kind:?} by {tid}");
                conflicts += usize::from(want.is_some());
                mixed += usize::from(want.is_some() && width > 1 && byte % width != 0);
            }
            // Same state: a read, an atomic and a write by fresh threads after no barrier
            // meet the same records, byte by byte.
            for (byte, cell) in full.iter_mut().enumerate() {
                for (tid, kind) in [(127, Kind::Read), (126, Kind::Atomic), (125, Kind::Write)] {
                    let probe = fresh_access(tid);
                    let want = cell.access(&lv, probe, &probe.counts, kind);
                    let got = sh.access(&lv, (byte, 1), probe, &probe.counts, kind);
                    assert_eq!(got, want, "final state of byte {byte} ({kind:?})");
                }
            }
        }
        assert!(
            conflicts > 1000 && mixed > 100,
            "the sequences should find conflicts ({conflicts}, {mixed} unaligned)"
        );
    }

    /// A cell as [`canonical`] gives it: its first byte, width, write, reads, round-robin
    /// position and atomic records.
    type CanonicalCell = (u32, u8, Option<Acc>, Vec<Option<Acc>>, u8, Vec<Acc>);

    /// Every cell of `sh` as the accesses its records stand for (whatever numbering the
    /// moment table has), with its bytes and round-robin position.
    fn canonical(sh: &SharedShadow) -> Vec<CanonicalCell> {
        let acc = |r: Rec| r.is_some().then(|| sh.acc(r));
        sh.cells
            .iter()
            .zip(&sh.bytes)
            .map(|(c, &b)| {
                let atomics = match c.atomics {
                    0 => Vec::new(),
                    x => sh.atomics[x as usize - 1].recs.iter().map(|&r| sh.acc(r)).collect(),
                };
                (b, c.width, acc(c.write), c.reads.iter().map(|&r| acc(r)).collect(), c.next_read, atomics)
            })
            .collect()
    }

    /// A history of accesses that leaves many of 16 four-byte cells (64 bytes) in the same
    /// state, as a tile landed and read in turn does: most accesses are runs over a range of
    /// cells by one thread in one state, some single ones, of every kind, with barriers and
    /// fences between them, and now and then one of another width (a cell cut in two).
    fn tile_history(
        next: &mut impl FnMut(u64) -> u64,
        shadows: &mut [&mut SharedShadow],
        lv: &Levels,
        counts: &mut [[u32; LEVELS]; 128],
    ) {
        let tids = [0u32, 1, 2, 9, 31, 33, 64, 70];
        for _ in 0..next(12) {
            if next(3) == 0 {
                counts[tids[next(8) as usize] as usize][next(3) as usize] += 1;
            }
            let tid = tids[next(8) as usize];
            let kind = [Kind::Read, Kind::Read, Kind::Read, Kind::Write, Kind::Write, Kind::Atomic][next(6) as usize];
            let now = Acc { counts: counts[tid as usize], site: next(3) as u16, ..fresh_access(tid) };
            let (from, n) = match next(4) {
                0 => (next(16), 1),
                _ => {
                    let from = next(8);
                    (from, 1 + next(16 - from))
                }
            };
            let width = if next(20) == 0 { 2 } else { 4 };
            for cell in from..from + n {
                for sh in shadows.iter_mut() {
                    sh.access(lv, (cell as usize * 4, width), now, &now.counts, kind);
                }
            }
        }
    }

    /// [`SharedShadow::write_quick`] with its memo over a run of writes by one thread in one
    /// state, falling back to [`SharedShadow::access_with`] when it declines, finds the same
    /// conflicts and leaves the same records as `access_with` alone: cells left in the same
    /// state by runs of accesses and in different ones by single accesses, cells cut by
    /// other widths, atomic records, conflicts in the middle of a run, an `also` that
    /// orders some records, and the moment table renumbered often (collected at 1 to 8
    /// moments, which a declined write may trigger in the middle of a run).
    #[test]
    fn write_quick_is_access_with() {
        let lv = Levels::new(vec![8], 128);
        let mut next = xorshift(0x51_7cc1_b727_220a);
        let (mut quick, mut declined, mut conflicts, mut hits) = (0, 0, 0, 0);
        for round in 0..2000 {
            let mut plain = SharedShadow::with_collection_at(1 + next(8) as usize);
            let mut memoed = SharedShadow::with_collection_at(plain.collect_at);
            plain.cover(64);
            memoed.cover(64);
            let mut counts = [[0u32; LEVELS]; 128];
            for _ in 0..4 {
                tile_history(&mut next, &mut [&mut plain, &mut memoed], &lv, &mut counts);
                // One writer's run over the tile, in one state, with what else orders
                // records for it; half of them after a barrier of the whole block.
                if next(2) == 0 {
                    counts.iter_mut().for_each(|c| c[lv.block_level()] += 1);
                }
                let tid = [0u32, 9, 64, 70][next(4) as usize];
                let now = Acc { counts: counts[tid as usize], site: 5, ..fresh_access(tid) };
                let also = |a: &Acc| a.site == 1 && a.tid.is_multiple_of(2);
                let mut memo = WriteMemo::default();
                for cell in 0..16 {
                    let at = (cell * 4, 4);
                    let want = plain.access_with(&lv, at, (now, &now.counts), Kind::Write, also);
                    hits += usize::from(memoed.exact_at(at.0, 4).is_some_and(|c| {
                        memo.0 == Some((memoed.renumbered, memoed.cells[c].write, memoed.cells[c].reads))
                    }));
                    let got = if memoed.write_quick(&lv, at, (now, &now.counts), also, &mut memo) {
                        quick += 1;
                        None
                    } else {
                        declined += 1;
                        memoed.access_with(&lv, at, (now, &now.counts), Kind::Write, also)
                    };
                    assert_eq!(got, want, "round {round}, cell {cell}");
                    conflicts += usize::from(want.is_some());
                }
                assert_eq!(canonical(&memoed), canonical(&plain), "round {round}");
            }
        }
        assert!(
            quick > 20_000 && hits > 10_000 && declined > 40_000 && conflicts > 20_000,
            "{quick} accepted ({hits} by the memo), {declined} declined, {conflicts} conflicts"
        );
    }

    /// A memo of [`SharedShadow::write_quick`] names records by their moments' numbers,
    /// which a collection of the moment table changes: after one, a number the memo holds
    /// may stand for another moment. Here thread 1's write to cell 0, before the block's
    /// barrier (ordered before the writer), is judged; a declined write then collects the
    /// table, after which thread 1's write to cell 2, after the barrier (a race), holds the
    /// number the judged write held. The memo must not pass it.
    #[test]
    fn write_quick_memo_does_not_survive_a_collection() {
        let lv = Levels::new(vec![], 64);
        let mut sh = SharedShadow::default();
        sh.cover(16);
        let at = |tid: u32, bars: u32, site: u16| Acc { counts: [0, bars, 0, 0], site, ..fresh_access(tid) };
        // Dead moments first, so that the live ones are renumbered down.
        sh.access(&lv, (12, 4), at(5, 0, 3), &[0; LEVELS], Kind::Write);
        sh.access(&lv, (12, 4), at(6, 0, 4), &[0; LEVELS], Kind::Write);
        sh.access(&lv, (0, 4), at(1, 0, 1), &[0; LEVELS], Kind::Write);
        sh.access(&lv, (8, 4), at(1, 1, 2), &[0, 1, 0, 0], Kind::Write);
        sh.access(&lv, (4, 4), at(7, 0, 6), &[0; LEVELS], Kind::Atomic);
        let judged = sh.cells[sh.exact_at(0, 4).unwrap()].write;
        // The writer has passed the barrier; its moment is the table's last before it is due.
        let writer = at(40, 1, 9);
        sh.collect_at = sh.moments.len() + 1;
        let mut memo = WriteMemo::default();
        assert!(sh.write_quick(&lv, (0, 4), (writer, &writer.counts), |_| false, &mut memo));
        // Cell 1's atomic record sends the write to `access_with`, which collects first.
        assert!(!sh.write_quick(&lv, (4, 4), (writer, &writer.counts), |_| false, &mut memo));
        assert!(sh.access_with(&lv, (4, 4), (writer, &writer.counts), Kind::Write, |_| false).is_none());
        let racing = sh.cells[sh.exact_at(8, 4).unwrap()].write;
        assert_eq!((racing.tid, racing.m), (judged.tid, judged.m), "the racing write took the judged write's number");
        assert!(!sh.write_quick(&lv, (8, 4), (writer, &writer.counts), |_| false, &mut memo));
        let conflict = sh.access_with(&lv, (8, 4), (writer, &writer.counts), Kind::Write, |_| false);
        assert_eq!(conflict.map(|(a, k)| (a.tid, a.site, k)), Some((1, 2, RaceKind::WriteWrite)));
    }

    /// [`SharedShadow::record_reads`] with one memo over many cells (the key naming the
    /// reads, as the wgmma wait gives it) leaves every cell as recording the reads one by
    /// one does: cells in the same state and in different ones, reads by lanes of one warp
    /// and of others, the same reads under different keys and the memo kept across keys.
    #[test]
    fn record_reads_memo_is_the_reads_one_by_one() {
        let lv = Levels::new(vec![8], 128);
        let mut next = xorshift(0x2f_0a1b_3c4d_5e6f);
        let mut hits = 0;
        for round in 0..2000 {
            let mut plain = SharedShadow::default();
            let mut memoed = SharedShadow::default();
            plain.cover(64);
            memoed.cover(64);
            let mut counts = [[0u32; LEVELS]; 128];
            tile_history(&mut next, &mut [&mut plain, &mut memoed], &lv, &mut counts);
            // A warp's reads: each key names a set of lanes of warp `w` reading one site.
            let w = [0u32, 1, 2][next(3) as usize];
            // Each shadow interns the lanes' reads of sites 7 and 8 in its own table.
            let recs_of = |sh: &mut SharedShadow| -> Vec<[ReadRec; 32]> {
                (0..2)
                    .map(|site| {
                        std::array::from_fn(|l| {
                            let tid = w * 32 + l as u32;
                            sh.read_rec(&Acc { counts: counts[tid as usize], site: 7 + site, ..fresh_access(tid) })
                        })
                    })
                    .collect()
            };
            let (recs, mrecs) = (recs_of(&mut plain), recs_of(&mut memoed));
            let masks = [0xF, 0xF0, 0x1111_1111, 0x2222_2222, 0x8000_0001, 0x3];
            let mut memo = ReadsMemo::default();
            for _ in 0..24 {
                let cell = next(16) as usize * 4;
                let (m, i) = (masks[next(6) as usize], next(2) as usize);
                let (Some(c), Some(mc)) = (plain.exact_cell((cell, 4), 0), memoed.exact_cell((cell, 4), 0)) else {
                    continue;
                };
                let before = memoed.cells[mc].reads;
                plain.record_reads(c, (&mut ReadsMemo::default(), 0), lanes(m).map(|l| recs[i][l]));
                memoed.record_reads(mc, (&mut memo, u64::from(m) << 1 | i as u64), lanes(m).map(|l| mrecs[i][l]));
                hits += usize::from(memo.0.is_some_and(|(b, _, _)| b.0 == before));
            }
            assert_eq!(canonical(&memoed), canonical(&plain), "round {round}");
        }
        assert!(hits > 10_000, "{hits}");
    }

    fn lanes(mask: u32) -> impl Iterator<Item = usize> {
        (0..32).filter(move |l| mask & (1 << l) != 0)
    }

    /// The compact shadow, driven as the simulator drives it (warp instructions whose lanes
    /// access one element or a vector of 2 or 4 each, through [`Global::moment`],
    /// [`Global::quick_vec`], [`Global::quick_at`] and [`Global::access`], or element by
    /// element through [`Global::access`] alone), reports exactly what a full cell per element
    /// reports: random threads of one and several warps, blocks, barrier counts at every
    /// level, fences, the atomic flag, grid epochs, functions and sites, all four kinds,
    /// aligned and unaligned vectors across chunk boundaries, in two buffers. After each
    /// sequence, every element is probed by a write of another block and one of the same
    /// block, so a state that differs without a report during the sequence is caught too.
    #[test]
    fn the_compact_shadow_matches_full_cells() {
        let lv = Levels::new(vec![8], 128);
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let lens = [2 * CHUNK + 6, 12];
        let (mut held_vec, mut held_one, mut conflicts) = (0, 0, 0);
        for _ in 0..3000 {
            // One sequence in three with a small moment table, which fills up.
            let mut g = if next(3) == 0 { Global::with_moment_cap(lens, next(4) as usize) } else { Global::new(lens) };
            let mut full: Vec<Vec<GCell>> = lens.iter().map(|&n| vec![GCell::default(); n]).collect();
            let mut counts = [[0u32; LEVELS]; 128];
            let mut fences = [Fences::default(); 128];
            let mut epoch = 0;
            // A few of each, so that threads, sites and moments meet again.
            let tids = [0u32, 1, 2, 9, 31, 33, 70];
            for _ in 0..40 {
                let b = usize::from(next(5) == 0);
                let n = [1usize, 2, 4, 4][next(4) as usize];
                let base = if b == 1 {
                    [0, 4, 8][next(3) as usize]
                } else {
                    [0, 4, 8, CHUNK - 4, CHUNK, CHUNK + 4, 2 * CHUNK][next(7) as usize]
                };
                // Mostly aligned, sometimes one or two elements off.
                let off = if next(5) == 0 { 1 + next(2) as usize } else { 0 };
                let block = next(3) as u32;
                match next(16) {
                    0 => epoch += 1,
                    1..=3 => {
                        let t = tids[next(7) as usize] as usize;
                        counts[t][next(3) as usize] += 1;
                    }
                    4 | 5 => {
                        let t = tids[next(7) as usize] as usize;
                        fences[t].bump(next(2) == 0);
                    }
                    _ => {}
                }
                let kind = [Kind::Read, Kind::Read, Kind::Write, Kind::Write, Kind::Atomic, Kind::AtomicRead]
                    [next(6) as usize];
                let (func, site, atomic) = (next(2) as u16, next(3) as u16, next(8) == 0);
                // One warp instruction: consecutive lanes on consecutive vectors, or one
                // lane, or lanes of two warps on the same vector.
                let lanes: Vec<(u32, usize)> = match next(3) {
                    0 => (0..1 + next(4) as u32).map(|l| (l, base + off + l as usize * n)).collect(),
                    1 => vec![(tids[next(7) as usize], base + off)],
                    _ => vec![(tids[next(7) as usize], base + off), (tids[next(7) as usize], base + off)],
                };
                let compact = next(4) != 0;
                for (tid, i) in lanes {
                    if i + n > lens[b] {
                        continue;
                    }
                    let c = counts[tid as usize];
                    let now =
                        Acc { tid, counts: c, func, site, fences: fences[tid as usize], atomic, phase: Phase::NONE };
                    let m = compact.then(|| g.moment(&now, block, epoch, kind)).flatten();
                    if let Some(m) = m
                        && n > 1
                        && g.quick_vec(b, i, n, m, tid)
                    {
                        held_vec += 1;
                        for cell in &mut full[b][i..i + n] {
                            let want = cell.access(&lv, block, epoch, now, &c, kind);
                            assert!(want.is_none(), "a vector held compactly conflicts with {want:?}");
                        }
                        continue;
                    }
                    for (e, cell) in full[b].iter_mut().enumerate().skip(i).take(n) {
                        let want = cell.access(&lv, block, epoch, now, &c, kind);
                        if let Some(m) = m
                            && g.quick_at(b, e, m, tid)
                        {
                            held_one += 1;
                            assert!(want.is_none(), "an element held compactly conflicts with {want:?}");
                            continue;
                        }
                        let got = g.access(&lv, (b, e), block, epoch, now, &c, kind);
                        conflicts += usize::from(want.is_some());
                        assert_eq!(format!("{got:?}"), format!("{want:?}"));
                    }
                }
            }
            for (b, &len) in lens.iter().enumerate() {
                for e in (0..len).filter(|&e| e < 12 || e.abs_diff(CHUNK) < 8 || e >= 2 * CHUNK - 2) {
                    for (block, tid) in [(3, 5), (0, 100)] {
                        let a = fresh_access(tid);
                        let want = full[b][e].access(&lv, block, epoch, a, &a.counts, Kind::Write);
                        let got = g.access(&lv, (b, e), block, epoch, a, &a.counts, Kind::Write);
                        assert_eq!(format!("{got:?}"), format!("{want:?}"), "probe of element {e} of buffer {b}");
                    }
                }
            }
        }
        // The sequences exercise each path.
        assert!(held_vec > 5_000 && held_one > 50_000 && conflicts > 50_000, "{held_vec} {held_one} {conflicts}");
    }

    /// The lazy shadow reports exactly what a full cell per element reports, for random
    /// sequences of accesses (kinds, threads, blocks, barriers, grid epochs).
    #[test]
    fn the_lazy_shadow_matches_full_cells() {
        let lv = Levels::new(vec![8], 128);
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..2000 {
            let elems = CHUNK + 3;
            let mut g = Global::new([elems]);
            let mut full = vec![GCell::default(); elems];
            let mut counts = [[0u32; LEVELS]; 128];
            let mut epoch = 0;
            for _ in 0..60 {
                let i = [0, 1, CHUNK - 1, CHUNK, CHUNK + 2][next(5) as usize];
                let tid = [0, 1, 2, 9, 33, 70][next(6) as usize] as u32;
                let block = next(2) as u32;
                match next(12) {
                    0 => counts[tid as usize][next(3) as usize] += 1,
                    1 => epoch += 1,
                    _ => {}
                }
                let kind = [Kind::Read, Kind::Write, Kind::Atomic, Kind::AtomicRead][next(4) as usize];
                let c = counts[tid as usize];
                let a = Acc {
                    tid,
                    counts: c,
                    func: next(2) as u16,
                    site: next(4) as u16,
                    fences: Fences::default(),
                    atomic: false,
                    phase: Phase::NONE,
                };
                let want = full[i].access(&lv, block, epoch, a, &c, kind);
                let got = g.access(&lv, (0, i), block, epoch, a, &c, kind);
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
            }
        }
    }

    /// An mbarrier arrival releases, besides its own thread's earlier accesses, those of
    /// other threads that a barrier the arriving thread had passed orders before it (the
    /// arrival is cumulative, review R5 F3): lane 1's read before the `__syncwarp()` that
    /// lane 0 passed before arriving. Not released: lane 1's read after that warp barrier,
    /// a read by another warp (the warp barrier does not hold it), lane 0's own read after
    /// its arrival, any access of another block, and anything through a flag's release,
    /// whose counts are zero.
    #[test]
    fn an_arrival_releases_what_barriers_ordered_before_it() {
        let lv = Levels::new(vec![], 64);
        let at = |tid, warp, fences| Acc {
            tid,
            counts: [warp, 0, 0, 0],
            func: 0,
            site: 0,
            fences: Fences { device: 0, any: fences },
            atomic: false,
            phase: Phase::NONE,
        };
        // Lane 0 passed one warp barrier and arrived (its fences: 1 after the arrival).
        let arrival = Release {
            block: 0,
            tid: 0,
            fences: Fences { device: 0, any: 1 },
            counts: [1, 0, 0, 0],
            reach: EVERY_BLOCK,
            via: 0,
            gbar: 0,
            relayed: false,
            left: false,
        };
        let reader = 0;
        assert!(arrival.orders(&lv, reader, 0, &at(1, 0, 0)), "lane 1's read before the warp barrier");
        assert!(arrival.orders(&lv, reader, 0, &at(0, 0, 0)), "lane 0's own read before its arrival");
        assert!(!arrival.orders(&lv, reader, 0, &at(1, 1, 0)), "lane 1's read after the warp barrier");
        assert!(!arrival.orders(&lv, reader, 0, &at(33, 0, 0)), "a read by another warp");
        assert!(!arrival.orders(&lv, reader, 0, &at(0, 1, 1)), "lane 0's read after its arrival");
        assert!(!arrival.orders(&lv, reader, 1, &at(1, 0, 0)), "an access of another block");
        assert!(!arrival.orders(
            &lv,
            reader,
            0,
            &Site { tid: 1, func: 0, site: 0, fences: Fences::default() }.unknown_counts()
        ));
        // After a block barrier that both passed, another warp's read before it is
        // released too.
        let after_block = Release { counts: [1, 1, 0, 0], ..arrival };
        assert!(after_block.orders(&lv, reader, 0, &at(33, 0, 0)));
        let flag = Release { counts: [0; LEVELS], ..arrival };
        assert!(!flag.orders(&lv, reader, 0, &at(1, 0, 0)), "a flag releases only its writer's accesses");
        assert!(flag.orders(&lv, reader, 0, &at(0, 0, 0)));
        // A landing's release orders only its own copies, whatever the counts.
        let landing = Release {
            block: 0,
            tid: landing_tid(8),
            fences: landing_fences(2),
            counts: [9; LEVELS],
            reach: EVERY_BLOCK,
            via: 0,
            gbar: 0,
            relayed: false,
            left: false,
        };
        assert!(!landing.orders(&lv, reader, 0, &at(1, 0, 0)));
        // Keeping one release per writer keeps the later counts.
        let mut kept = flag;
        kept.absorb_counts(&after_block);
        assert_eq!(kept.counts, after_block.counts);
    }

    /// The atomic records are exact: driven with random atomics and plain reads by 96
    /// threads (three warps), each thread's barrier counts and fences only growing as the
    /// simulator's do, and an ordering besides barriers that holds for a record up to a
    /// fence count (as a release does), a plain read meets an unordered atomic of another
    /// thread exactly when one of all the atomics made so far is unordered, in a full
    /// [`Cell`] and in the shared shadow alike. Four records chosen as the reads are (the
    /// shadow until 2026-11-29) fail it.
    #[test]
    fn atomic_records_are_exact() {
        let lv = Levels::new(vec![], 96);
        let mut rng = xorshift(0x5eed_a701c ^ 0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let mut counts = vec![[0u32; LEVELS]; 96];
            let mut fences = vec![Fences::default(); 96];
            let mut all: Vec<Acc> = Vec::new();
            let mut cell = Cell::default();
            let mut sh = SharedShadow::default();
            sh.cover(8);
            for _ in 0..200 {
                let t = rng(96) as usize;
                match rng(8) {
                    0 => counts[t][0] += 1,
                    1 => counts[t][1] += 1,
                    2 => fences[t].bump(rng(2) == 0),
                    _ => {}
                }
                let now = Acc {
                    tid: t as u32,
                    counts: counts[t],
                    func: 0,
                    site: 0,
                    fences: fences[t],
                    atomic: false,
                    phase: Phase::NONE,
                };
                // What orders a record besides barriers, for this access: fences below a
                // bound drawn per access (a later record of a thread has at least its
                // earlier one's fences, so this is monotone as a release is).
                let bound = rng(4) as u16;
                let also = |a: &Acc| a.fences.any < bound;
                if rng(3) == 0 {
                    let expected = all.iter().any(|a| !lv.ordered(a, now.tid, &now.counts) && !also(a));
                    let got = cell.access_with(&lv, now, &now.counts, Kind::Read, also);
                    assert_eq!(got.is_some(), expected, "full cell, read by {t}");
                    let got = sh.access_with(&lv, (0, 4), (now, &now.counts), Kind::Read, also);
                    assert_eq!(got.is_some(), expected, "shared shadow, read by {t}");
                } else {
                    cell.access_with(&lv, now, &now.counts, Kind::Atomic, also);
                    sh.access_with(&lv, (0, 4), (now, &now.counts), Kind::Atomic, also);
                    all.push(Acc { atomic: true, ..now });
                }
            }
        }
    }

    /// Sites of the phase tests, each with its atomic's phase: an unused add, an add whose
    /// result is used (a ticket), an atomic load, an atomic store, an unused max.
    const PHASE_SITES: [Phase; 5] = [
        Phase(atomic_op::ADD as u16 * 4 + 2),
        Phase(atomic_op::ADD as u16 * 4 + 3),
        Phase(1),
        Phase(atomic_op::OVERWRITE as u16 * 4 + 2),
        Phase(atomic_op::MAX as u16 * 4 + 2),
    ];

    fn phase_acc(tid: u32, site: u16, block_barriers: u32) -> Acc {
        Acc { site, phase: PHASE_SITES[site as usize], ..acc(tid, block_barriers) }
    }

    fn phase_kind(a: &Acc) -> Kind {
        if a.phase.update() { Kind::Atomic } else { Kind::AtomicRead }
    }

    /// One access to element 0 of a one-element global buffer by thread `a` of `block`.
    fn global_phase(g: &mut Global, lv: &Levels, block: u32, a: Acc) -> Option<(Site, RaceKind, Option<u32>)> {
        g.access(lv, (0, 0), block, 0, a, &a.counts, phase_kind(&a))
    }

    #[test]
    fn phase_encodes_inference_modes() {
        let [add, ticket, load, store, max] = PHASE_SITES;
        assert_eq!(Phase::new(true, false, atomic_op::ADD), add);
        assert_eq!(Phase::new(true, true, atomic_op::ADD), ticket);
        assert_eq!(Phase::new(false, true, 0), load);
        assert!((add.update(), !add.observe(), add.op()) == (true, true, atomic_op::ADD));
        // An update against an observing atomic, both ways; updates that do not commute.
        for (a, b) in [(add, ticket), (add, load), (store, load), (store, ticket), (add, max), (add, store)] {
            assert!(a.conflicts(b) && b.conflicts(a), "{a:?} {b:?}");
        }
        // Loads among themselves, commuting updates, overwrites among themselves.
        for (a, b) in [(load, load), (add, add), (store, store), (max, max)] {
            assert!(!a.conflicts(b), "{a:?} {b:?}");
        }
        assert!(!Phase::NONE.is_some() && load.is_some());
    }

    /// An update and an observing atomic at different sites of different blocks are
    /// reported whichever comes first; the same pair within a block is not when a barrier
    /// orders it.
    #[test]
    fn atomic_phases_are_reported_in_both_orders() {
        let lv = Levels::new(vec![], 64);
        for (first, second) in [(0u16, 2u16), (2, 0), (3, 1), (1, 3)] {
            let mut g = Global::new([1]);
            assert!(global_phase(&mut g, &lv, 0, phase_acc(0, first, 0)).is_none());
            let got = global_phase(&mut g, &lv, 1, phase_acc(0, second, 0));
            let (e, k, b) = got.expect("reported");
            assert_eq!((e.site, k, b), (first, RaceKind::AtomicPhase, Some(0)));
        }
        // Within a block: unordered, reported; ordered by a barrier, not.
        let mut sh = SharedShadow::default();
        sh.cover(8);
        let a = phase_acc(0, 2, 0);
        assert!(sh.access(&lv, (0, 4), a, &a.counts, Kind::AtomicRead).is_none());
        let b = phase_acc(33, 0, 0);
        let (e, k) = sh.access(&lv, (0, 4), b, &b.counts, Kind::Atomic).expect("reported");
        assert_eq!((e.tid, k), (0, RaceKind::AtomicPhase));
        let c = phase_acc(34, 0, 1);
        assert!(sh.access(&lv, (0, 4), c, &c.counts, Kind::Atomic).is_none(), "a barrier orders thread 0's load");
        // Not between accesses of one thread.
        let mut g = Global::new([1]);
        assert!(global_phase(&mut g, &lv, 0, phase_acc(5, 3, 0)).is_none());
        assert!(global_phase(&mut g, &lv, 0, phase_acc(5, 1, 0)).is_none());
    }

    /// One site against itself (a ticket counter, a histogram) and commuting updates from
    /// two sites are never reported.
    #[test]
    fn same_site_and_commuting_atomics_are_not_reported() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::new([1]);
        for b in 0..4 {
            for t in 0..64 {
                assert!(global_phase(&mut g, &lv, b, phase_acc(t, 1, 0)).is_none(), "tickets");
            }
        }
        // Unused adds at sites 0 and 5 (a histogram counted from two places).
        let add_at = |tid, site| Acc { site, ..phase_acc(tid, 0, 0) };
        let mut g = Global::new([1]);
        for b in 0..4 {
            assert!(global_phase(&mut g, &lv, b, add_at(0, if b % 2 == 0 { 0 } else { 5 })).is_none(), "adds");
        }
        let mut sh = SharedShadow::default();
        sh.cover(8);
        for t in 0..64u32 {
            let a = add_at(t, if t % 2 == 0 { 0 } else { 5 });
            assert!(sh.access(&lv, (0, 4), a, &a.counts, Kind::Atomic).is_none(), "histogram");
        }
    }

    /// A thread's latest atomic at the element may be of another site or kind than the one
    /// a later access conflicts with: the records are kept per site, so the earlier one is
    /// still met. Thread 0 of block 0 stores (site 3) and then takes a ticket (site 1);
    /// block 1's ticket shares the latest one's site but meets the store. Kept as one
    /// record per thread, the store would have been replaced and the pair missed.
    #[test]
    fn a_threads_earlier_atomic_of_another_site_is_still_met() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::new([1]);
        assert!(global_phase(&mut g, &lv, 0, phase_acc(0, 3, 0)).is_none());
        assert!(global_phase(&mut g, &lv, 0, phase_acc(0, 1, 0)).is_none());
        let (e, k, b) = global_phase(&mut g, &lv, 1, phase_acc(0, 1, 0)).expect("the store is met");
        assert_eq!((e.site, k, b), (3, RaceKind::AtomicPhase, Some(0)));
        // A load, then an update by the same thread: a later load meets the update.
        let mut g = Global::new([1]);
        assert!(global_phase(&mut g, &lv, 0, phase_acc(0, 2, 0)).is_none());
        assert!(global_phase(&mut g, &lv, 0, phase_acc(0, 0, 0)).is_none());
        let (e, _, _) = global_phase(&mut g, &lv, 1, phase_acc(0, 2, 0)).expect("the add is met");
        assert_eq!(e.site, 0);
    }

    /// Coherence orders: the last block of a reduction, whose ticket showed that every
    /// other block's came first, resets the counter unreported; a block that resets it
    /// without having taken a ticket is reported.
    #[test]
    fn an_update_after_observing_every_other_is_ordered() {
        let lv = Levels::new(vec![], 64);
        let mut g = Global::new([1]);
        for b in 0..4 {
            assert!(global_phase(&mut g, &lv, b, phase_acc(0, 1, 0)).is_none());
        }
        assert!(global_phase(&mut g, &lv, 3, phase_acc(0, 3, 0)).is_none(), "the last block resets");
        assert!(global_phase(&mut g, &lv, 5, phase_acc(0, 3, 0)).is_some(), "a block that took no ticket");
        // A ticket taken before another block's is not ordered after it.
        let mut g = Global::new([1]);
        assert!(global_phase(&mut g, &lv, 0, phase_acc(0, 1, 0)).is_none());
        assert!(global_phase(&mut g, &lv, 1, phase_acc(0, 1, 0)).is_none());
        assert!(global_phase(&mut g, &lv, 0, phase_acc(0, 3, 0)).is_some(), "block 1's ticket came after");
    }

    /// Barriers pass coherence on (review R8): the last block's thread 0 learns from its
    /// ticket that every other block's came first; another thread of that block that has
    /// passed a barrier thread 0 arrived at after its ticket loads or resets the counter
    /// unreported. Before the barrier, in another block, or after a warp barrier of
    /// another warp, it is reported.
    #[test]
    fn coherence_is_passed_on_by_a_barrier() {
        let lv = Levels::new(vec![], 64);
        for site in [2, 3] {
            let tickets = |g: &mut Global| {
                for b in 0..4 {
                    assert!(global_phase(g, &lv, b, phase_acc(0, 1, 0)).is_none());
                }
            };
            let access = |g: &mut Global, block, passed: [u32; LEVELS]| {
                let a = phase_acc(33, site, 0);
                g.access(&lv, (0, 0), block, 0, a, &passed, phase_kind(&a))
            };
            let mut g = Global::new([1]);
            tickets(&mut g);
            assert!(access(&mut g, 3, [0, 1, 0, 0]).is_none(), "site {site}: after the barrier");
            for (block, passed, why) in [
                (3, [0, 0, 0, 0], "before the barrier"),
                (2, [0, 1, 0, 0], "in a block that is not last"),
                (3, [1, 0, 0, 0], "after a warp barrier of another warp"),
            ] {
                let mut g = Global::new([1]);
                tickets(&mut g);
                assert!(access(&mut g, block, passed).is_some(), "site {site}: {why}");
            }
        }
        // In shared memory: thread 0 takes a ticket, thread 1 another after it, and thread
        // 40, past a barrier thread 1 arrived at after its ticket, loads (thread 0's ticket
        // is ordered before the load by thread 1's, though thread 0 arrived at no barrier
        // after it: it had arrived, not passed, at a split barrier before).
        let mut sh = SharedShadow::default();
        sh.cover(8);
        let first = Acc { counts: [0, 1, 0, 0], ..phase_acc(0, 1, 0) };
        assert!(sh.access(&lv, (0, 4), first, &[0; LEVELS], Kind::Atomic).is_none());
        let ticket = phase_acc(1, 1, 0);
        assert!(sh.access(&lv, (0, 4), ticket, &ticket.counts, Kind::Atomic).is_none());
        let load = Acc { counts: [0, 1, 0, 0], ..phase_acc(40, 2, 0) };
        assert!(sh.access(&lv, (0, 4), load, &load.counts, Kind::AtomicRead).is_none());
    }

    /// The phase records report exactly what keeping every atomic would: random sequences of
    /// the sites above by random threads of three blocks (or one), with block barriers
    /// (split ones too: the arrival, and the wait later), warp barriers and fences, through
    /// the global shadow (its compact slots included) and the shared one, against a brute
    /// force over the whole history: the coherence order computed from it, and coherence
    /// passed on by barriers from every observation of a thread of the block that it
    /// keeps (those at its last [`OBSERVATIONS`] barrier arrivals). A [`Phases`] fed the
    /// same accesses is asked, before each, how many updates coherence orders the thread
    /// after, which must be the brute force's, whether or not a report hangs on it. A third
    /// of the rounds have one block and three threads: thread 0 passes a barrier or fences
    /// at nearly every access, mostly warp barriers, which order nothing for thread 39, of
    /// another warp, which only updates (it sees only what barriers pass on), so that
    /// observations are dropped; a brute force that keeps them all must report nothing
    /// more (dropping one only adds reports).
    #[test]
    fn phase_records_are_exact() {
        let lv = Levels::new(vec![], 64);
        let mut rng = xorshift(0x0a70_31c5 ^ 0x9e37_79b9_7f4a_7c15);
        // Accesses that only coherence passed on by a barrier ordered, and accesses that a
        // dropped observation would have ordered after more updates.
        let (mut passed_on, mut dropped) = (0, 0);
        for round in 0..600 {
            let busy = round % 3 == 2;
            let blocks = if round % 2 == 0 && !busy { 3 } else { 1 };
            let mut arrived = vec![[0u32; LEVELS]; 64 * blocks];
            let mut passed = vec![[0u32; LEVELS]; 64 * blocks];
            let mut fences = vec![Fences::default(); 64 * blocks];
            // (block, access, how many updates had applied before it)
            let mut all: Vec<(u32, Acc, u32)> = Vec::new();
            // Per thread (block, thread), the distinct barrier arrivals of its observations.
            let mut arrivals: std::collections::HashMap<(u32, u32), Vec<[u32; LEVELS]>> = Default::default();
            let mut updates = 0u32;
            let mut g = Global::new([1]);
            let mut sh = SharedShadow::default();
            sh.cover(8);
            let mut ph = Phases::default();
            for _ in 0..120 {
                let b = rng(blocks as u64) as u32;
                let t = if busy { [0, 13, 39][rng(3) as usize] } else { rng(6) as u32 * 13 % 64 };
                let k = (b * 64 + t) as usize;
                // A busy thread 0 passes mostly warp barriers, which order nothing for
                // thread 39 and use up its observations' slots.
                match if busy && t == 0 { [2, 2, 2, 0, 1, 3][rng(6) as usize] } else { rng(8) } {
                    // A block barrier: the wait of an earlier arrival, or both.
                    0 => {
                        if arrived[k][1] == passed[k][1] {
                            arrived[k][1] += 1;
                        }
                        passed[k][1] = arrived[k][1];
                    }
                    // A split barrier's arrival, waited at later.
                    1 if arrived[k][1] == passed[k][1] => arrived[k][1] += 1,
                    // A warp barrier.
                    2 => {
                        arrived[k][0] += 1;
                        passed[k][0] += 1;
                    }
                    3 => fences[k].bump(rng(2) == 0),
                    _ => {}
                }
                // A busy thread 39 only updates: it sees nothing but what barriers pass on.
                let site = match busy && t == 39 {
                    true => [0, 3, 4][rng(3) as usize],
                    false => rng(PHASE_SITES.len() as u64) as u16,
                };
                let now = Acc { counts: arrived[k], fences: fences[k], ..phase_acc(t, site, 0) };
                let p = passed[k];
                let bound = rng(3) as u16;
                let also = |a: &Acc, _: Option<u32>| a.fences.any < bound;
                // The coherence order of a recorded access: an update's own number, a
                // load's thread's first update after it (never without one).
                let order = |i: usize| -> u32 {
                    let (eb, e, before) = all[i];
                    if e.phase.update() {
                        return before + 1;
                    }
                    all[i + 1..]
                        .iter()
                        .find(|(xb, x, _)| *xb == eb && x.tid == e.tid && x.phase.update())
                        .map_or(u32::MAX, |&(_, _, n)| n + 1)
                };
                // How many updates the thread had seen at its latest observation; and at
                // the observations of threads of its block (its own included) that a
                // barrier it passed orders before it, of those a thread keeps (`cap`
                // barrier arrivals), or of all.
                let own = all
                    .iter()
                    .rev()
                    .find(|(xb, x, _)| *xb == b && x.tid == t && x.phase.observe())
                    .map_or(0, |&(_, _, n)| n);
                let seen = |cap: usize| {
                    all.iter()
                        .filter(|(yb, y, _)| *yb == b && y.phase.observe() && lv.ordered(y, t, &p))
                        .filter(|(yb, y, _)| {
                            let a = &arrivals[&(*yb, y.tid)];
                            a[a.len().saturating_sub(cap)..].contains(&y.counts)
                        })
                        .map(|&(_, _, n)| n)
                        .max()
                        .unwrap_or(0)
                };
                let reported = |seen: u32| {
                    (0..all.len()).any(|i| {
                        let (eb, e, _) = all[i];
                        (eb, e.tid) != (b, t)
                            && e.site != site
                            && e.phase.conflicts(now.phase)
                            && order(i) > seen
                            && if eb == b { !lv.ordered(&e, t, &p) && !also(&e, None) } else { !also(&e, Some(eb)) }
                    })
                };
                let (kept, every) = (seen(OBSERVATIONS), seen(usize::MAX));
                assert!(kept >= own && every >= kept);
                let expected = reported(kept);
                assert!(expected || !reported(every), "dropping an observation hid a report");
                passed_on += usize::from(!expected && reported(own));
                dropped += usize::from(kept != every);
                // The observations, whether or not a report hangs on them.
                let coherent = ph.coherent(&lv, b, t, &p);
                assert_eq!(coherent, kept, "round {round}: updates seen by block {b} thread {t}");
                let unordered = |e: &Acc, eb: u32| {
                    if eb == b { !lv.ordered(e, t, &p) && !also(e, None) } else { !also(e, Some(eb)) }
                };
                let got = ph.access(&lv, (b, 0), (&now, &p), unordered);
                assert_eq!(got.is_some(), expected, "round {round}: phases, site {site} by block {b} thread {t}");
                let got = g.access_with(&lv, (0, 0), (b, 0), (now, &p), phase_kind(&now), also);
                assert_eq!(got.is_some(), expected, "round {round}: global, site {site} by block {b} thread {t}");
                if blocks == 1 {
                    let got = sh.access_with(&lv, (0, 4), (now, &p), phase_kind(&now), |a| also(a, None));
                    assert_eq!(got.is_some(), expected, "round {round}: shared, site {site} by thread {t}");
                }
                all.push((b, now, updates));
                if now.phase.observe() {
                    let a = arrivals.entry((b, t)).or_default();
                    if a.last() != Some(&now.counts) {
                        a.push(now.counts);
                    }
                }
                if now.phase.update() {
                    updates += 1;
                }
            }
        }
        assert!(passed_on > 1000 && dropped > 50, "barriers passed coherence on {passed_on} times, dropped {dropped}");
    }
}

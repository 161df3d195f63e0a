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
//! Per location the shadow keeps the last write, the last atomic, and up to [`READS`] reads:
//! a thread's latest read replaces its earlier one, and each warp keeps at most two reads
//! from different lanes, so a write by any lane still meets a read by another lane of its
//! warp. Keeping a bounded read history can miss a write-after-read race in a pattern where
//! more warps read a location than the history holds and only the dropped reads are
//! unordered with the write; every other race is reported. Volatile
//! accesses (unsafe code) are trusted and never checked.
//!
//! Fences and flags order accesses too ([`Release`]): a conflict whose earlier access was
//! published by its thread through a fence and an atomic or volatile flag store, which the
//! later thread observed with an atomic or volatile load followed by its own fence, is not
//! a race. The simulator checks this where it reports a conflict (`sim/exec.rs`).

/// How many reads each location remembers.
pub const READS: usize = 4;
/// How many barrier levels are counted (more are merged into the block level).
pub const LEVELS: usize = 4;

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
/// that had fenced. A thread that reads the flag with an atomic or volatile load sees it,
/// and after its own fence, everything the writer did before its fence is ordered before
/// what the reader does next (message passing, as in the decoupled look-back scan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The writer's block.
    pub block: u32,
    /// The writer's thread in its block.
    pub tid: u32,
    /// The writer's fences when it stored the flag.
    pub fences: Fences,
}

impl Release {
    /// Whether this release, acquired by a thread of block `reader`, orders an earlier
    /// access `earlier` by thread `tid` of block `block`: the same writer, which fenced
    /// (device-wide across blocks, of any scope within one) after that access.
    pub fn orders(&self, reader: u32, block: u32, earlier: &Site) -> bool {
        self.block == block
            && self.tid == earlier.tid
            && if block == reader {
                self.fences.any > earlier.fences.any
            } else {
                self.fences.device > earlier.fences.device
            }
    }
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
}

impl RaceKind {
    /// Words for messages.
    pub fn describe(self) -> &'static str {
        match self {
            RaceKind::WriteWrite => "write-write",
            RaceKind::ReadWrite => "read-write",
            RaceKind::WriteRead => "write-read",
            RaceKind::AtomicPlain => "atomic-plain",
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
        Levels { sizes: scopes }
    }

    /// The level index a barrier over `size` threads counts at.
    pub fn level_of(&self, size: u64) -> usize {
        self.sizes.iter().position(|&s| s >= size).unwrap_or(self.sizes.len() - 1)
    }

    /// Whether an access by `t2`, which has passed `counts2` barriers, is ordered after
    /// `earlier`: `t2` passed a barrier (at a level whose units hold both threads) that the
    /// earlier thread arrived at after its access.
    pub fn ordered(&self, earlier: &Acc, t2: u32, counts2: &[u32; LEVELS]) -> bool {
        if earlier.tid == t2 {
            return true;
        }
        let l = self
            .sizes
            .iter()
            .position(|&s| u64::from(earlier.tid) / s == u64::from(t2) / s)
            .unwrap_or(self.sizes.len() - 1);
        let a: u64 = earlier.counts[l..self.sizes.len()].iter().map(|&c| u64::from(c)).sum();
        let b: u64 = counts2[l..self.sizes.len()].iter().map(|&c| u64::from(c)).sum();
        a < b
    }
}

/// Intra-block shadow of one location.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    write: Option<Acc>,
    atomic: Option<Acc>,
    reads: [Option<Acc>; READS],
    next_read: u8,
}

impl Cell {
    /// Whether nothing has been recorded in it (every access records something, and a
    /// read is kept in the first free slot).
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.write.is_none() && self.atomic.is_none() && self.reads[0].is_none()
    }

    /// Records an access by `now` (of `kind`; `passed` are the barriers its thread has
    /// passed, that is waited at) and returns a conflict with an earlier access of another
    /// thread of the block, if any.
    #[inline]
    pub fn access(&mut self, lv: &Levels, now: Acc, passed: &[u32; LEVELS], kind: Kind) -> Option<(Acc, RaceKind)> {
        let unordered = |a: &Option<Acc>| a.filter(|a| !lv.ordered(a, now.tid, passed));
        let conflict = match kind {
            Kind::Write => unordered(&self.write)
                .map(|a| (a, RaceKind::WriteWrite))
                .or_else(|| self.reads.iter().find_map(|r| unordered(r).map(|a| (a, RaceKind::ReadWrite))))
                .or_else(|| unordered(&self.atomic).map(|a| (a, RaceKind::AtomicPlain))),
            Kind::Read => unordered(&self.write)
                .map(|a| (a, RaceKind::WriteRead))
                .or_else(|| unordered(&self.atomic).map(|a| (a, RaceKind::AtomicPlain))),
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
                self.atomic = None;
            }
            Kind::Atomic => self.atomic = Some(now),
            Kind::Read | Kind::AtomicRead => {
                let now = Acc { atomic: kind == Kind::AtomicRead, ..now };
                // Which read to keep: the same thread's earlier read is superseded; otherwise
                // keep at most two reads per warp, from different lanes, so that a later
                // write by any lane still meets a read by another lane of its warp.
                let warp = now.tid / 32;
                let same_warp = self.reads.iter().filter(|r| r.is_some_and(|r| r.tid / 32 == warp)).count();
                let slot = self
                    .reads
                    .iter()
                    .position(|r| r.is_some_and(|r| r.tid == now.tid))
                    .or_else(|| {
                        (same_warp >= 2)
                            .then(|| self.reads.iter().position(|r| r.is_some_and(|r| r.tid / 32 == warp)))
                            .flatten()
                    })
                    .or_else(|| self.reads.iter().position(Option::is_none))
                    .unwrap_or_else(|| {
                        self.next_read = (self.next_read + 1) % READS as u8;
                        self.next_read as usize
                    });
                self.reads[slot] = Some(now);
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
}

/// Several blocks.
pub const MULTI: u32 = u32::MAX;

impl Blocks {
    /// Records an access by block `b` in grid epoch `epoch`; returns the conflicting earlier
    /// access of another block, if any.
    #[inline]
    pub fn access(&mut self, b: u32, epoch: u32, now: Site, kind: Kind) -> Option<Conflict> {
        // The common case, a block touching an element again the same way, changes nothing.
        let me = b + 1;
        if self.epoch == epoch {
            match kind {
                Kind::Read if self.read == me && (self.write == 0 || self.write == me) && self.atomic == 0 => {
                    return None;
                }
                Kind::Write if self.write == me && (self.read == 0 || self.read == me) && self.atomic == 0 => {
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
        let conflict = match kind {
            Kind::Write if other(self.write) => self.write_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.write),
                kind: RaceKind::WriteWrite,
            }),
            Kind::Write if other(self.read) => self.read_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.read),
                kind: RaceKind::ReadWrite,
            }),
            Kind::Write if other(self.aread) => self.aread_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.aread),
                kind: RaceKind::AtomicPlain,
            }),
            Kind::AtomicRead if other(self.write) => self.write_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.write),
                kind: RaceKind::AtomicPlain,
            }),
            Kind::Write | Kind::Read if other(self.atomic) => self.atomic_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.atomic),
                kind: RaceKind::AtomicPlain,
            }),
            Kind::Read if other(self.write) => self.write_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.write),
                kind: RaceKind::WriteRead,
            }),
            Kind::Atomic if other(self.write) => self.write_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.write),
                kind: RaceKind::AtomicPlain,
            }),
            Kind::Atomic if other(self.read) => self.read_acc.map(|a| Conflict {
                earlier: a,
                earlier_block: block_of(self.read),
                kind: RaceKind::AtomicPlain,
            }),
            _ => None,
        };
        let merge = |x: u32| if x == 0 || x == me { me } else { MULTI };
        match kind {
            Kind::Write => {
                self.write = me;
                self.write_acc = Some(now);
            }
            Kind::Read => {
                self.read = merge(self.read);
                self.read_acc = Some(now);
            }
            Kind::Atomic => {
                self.atomic = merge(self.atomic);
                self.atomic_acc = Some(now);
            }
            Kind::AtomicRead => {
                self.aread = merge(self.aread);
                self.aread_acc = Some(now);
            }
        }
        conflict
    }
}

/// Shadow of one global element: the inter-block summary, and an intra-block cell for the
/// block that touched it last.
#[derive(Clone, Debug, Default)]
pub struct GCell {
    blocks: Blocks,
    cell_block: u32,
    cell: Cell,
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
        if self.cell_block != block + 1 {
            self.cell_block = block + 1;
            self.cell = Cell::default();
        }
        match self.blocks.access(block, epoch, now.at(), kind) {
            Some(c) => Some((c.earlier, c.kind, Some(c.earlier_block))),
            None => self.cell.access(lv, now, passed, kind).map(|(a, k)| (a.at(), k, None)),
        }
    }
}

/// The first access to a global element: all its shadow holds until a second access comes
/// ([`Slot::One`]), a fraction of a full [`GCell`]'s size. Most elements of a memory-bound
/// kernel are touched once per launch.
#[derive(Clone, Copy, Debug)]
pub struct First {
    /// The latest access: the first, or the latest of the same thread's later accesses of
    /// the same kind (a plain read or write) in the same grid epoch. The full cell's state
    /// after them is that after the first and the latest alone: its block summary keeps the
    /// first's site, its intra-block cell the latest access.
    acc: Acc,
    /// The first access's site.
    first: Site,
    block: u32,
    epoch: u32,
    kind: Kind,
}

/// The shadow of one global element.
#[derive(Clone, Copy, Debug, Default)]
pub enum Slot {
    /// Never accessed.
    #[default]
    Empty,
    /// Accessed once: a [`GCell`] that saw only this access.
    One(First),
    /// Accessed more than once: its cell in [`Global::cells`].
    Full(u32),
}

/// Elements per lazily allocated chunk of a buffer's shadow.
pub const CHUNK: usize = 4096;

/// The race shadow of the global buffers of a launch, allocated in chunks of [`CHUNK`]
/// elements on first access. An element's shadow starts as [`Slot::Empty`], holds its first
/// access compactly, and becomes a full [`GCell`] at the second: the cell that first access
/// left, replayed, and then the second recorded in it, so every access sees exactly the
/// state a full cell per element would have held.
#[derive(Debug, Default)]
pub struct Global {
    /// Per buffer, its chunks (`None` until an element of it is accessed).
    chunks: Vec<Vec<Option<Box<[Slot]>>>>,
    /// Full cells of the elements accessed more than once.
    cells: Vec<GCell>,
}

impl Global {
    /// The shadow of buffers of `lens` elements, nothing allocated yet.
    pub fn new(lens: impl IntoIterator<Item = usize>) -> Global {
        Global { chunks: lens.into_iter().map(|n| vec![None; n.div_ceil(CHUNK)]).collect(), cells: Vec::new() }
    }

    /// The slot of element `i` of buffer `b`, its chunk allocated if needed.
    #[inline]
    pub fn slot(&mut self, b: usize, i: usize) -> &mut Slot {
        let chunk = self.chunks[b][i / CHUNK].get_or_insert_with(|| vec![Slot::Empty; CHUNK].into_boxed_slice());
        &mut chunk[i % CHUNK]
    }

    /// Records an access to element `i` of buffer `b` that cannot conflict and fits in its
    /// slot: the element's first access, or a plain read or write repeating the kind of the
    /// thread that made its only access so far (in the same grid epoch); false, recording
    /// nothing, for any other.
    #[inline]
    pub fn quick(&mut self, b: usize, i: usize, block: u32, epoch: u32, now: Acc, kind: Kind) -> bool {
        let slot = self.slot(b, i);
        match slot {
            Slot::Empty => {
                *slot = Slot::One(First { acc: now, first: now.at(), block, epoch, kind });
                true
            }
            Slot::One(f)
                if f.acc.tid == now.tid
                    && f.block == block
                    && f.epoch == epoch
                    && f.kind == kind
                    && matches!(kind, Kind::Read | Kind::Write) =>
            {
                f.acc = now;
                true
            }
            _ => false,
        }
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
        if self.quick(b, i, block, epoch, now, kind) {
            return None;
        }
        let next = self.cells.len();
        let slot = self.slot(b, i);
        match *slot {
            Slot::Empty => unreachable!("a first access is quick"),
            Slot::Full(c) => self.cells[c as usize].access(lv, block, epoch, now, passed, kind),
            Slot::One(f) => {
                *slot = Slot::Full(u32::try_from(next).expect("fewer than 2^32 shadow cells"));
                let mut cell = GCell::default();
                // The first access (its barrier counts do not matter: the latest, by the same
                // thread and of the same kind, replaces its record in the cell), then the
                // latest when there were more.
                let Site { tid, func, site, fences } = f.first;
                let first = Acc { tid, func, site, fences, ..f.acc };
                let latest = (first != f.acc).then_some(f.acc);
                for a in std::iter::once(first).chain(latest) {
                    let replayed = cell.access(lv, f.block, f.epoch, a, &a.counts, f.kind);
                    debug_assert!(replayed.is_none(), "the accesses a slot holds conflict with nothing");
                }
                let conflict = cell.access(lv, block, epoch, now, passed, kind);
                self.cells.push(cell);
                conflict
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(tid: u32, block_barriers: u32) -> Acc {
        Acc { tid, counts: [0, block_barriers, 0, 0], func: 0, site: 0, fences: Fences::default(), atomic: false }
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
        assert!(std::mem::size_of::<Slot>() <= 56, "a slot is small: {}", std::mem::size_of::<Slot>());
        assert!(std::mem::size_of::<GCell>() <= 296, "a full cell: {}", std::mem::size_of::<GCell>());
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

    /// The lazy shadow reports exactly what a full cell per element reports, for random
    /// sequences of accesses (kinds, threads, blocks, barriers, grid epochs).
    #[test]
    fn the_lazy_shadow_matches_full_cells() {
        let lv = Levels::new(vec![8], 128);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
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
                };
                let want = full[i].access(&lv, block, epoch, a, &c, kind);
                let got = g.access(&lv, (0, i), block, epoch, a, &c, kind);
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
            }
        }
    }
}

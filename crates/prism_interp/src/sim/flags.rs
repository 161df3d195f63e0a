//! Flags: what a thread that reads an element written by atomic or volatile stores may rely
//! on (race checks only; docs/simulator.md, "Which store a load read", and
//! docs/soundness.md §4.5).
//!
//! A store that follows a fence is a *release*: a thread that reads the value and then
//! fences is ordered after what the writer did before its fence ([`Release`]). On the GPU a
//! load need not return the latest store the simulator ran: it may return any store of the
//! element that its thread has not seen overwritten, and the stores of an element that
//! nothing orders may be in any coherence order, whatever order the simulator ran them in.
//! When two stores it may have read wrote the same value the reader cannot tell which one
//! it read, and its program runs the same either way, so it may rely only on what every one
//! of them released. A writer that stores 1 before its data and fence and 1 again after
//! them publishes nothing to a reader that sees 1 (reviews R8, R9, R10).
//!
//! So each element keeps its stores ([`History`]), numbered in the order they ran (the
//! value the element held before the first is number 1), each with its value, its releases
//! and how far it is *closed*: the largest `k` such that every store numbered `k` or less
//! is known to come before it (or be it) in coherence order ([`Store::closed`]). PTX
//! coherence gives what is known: a thread's store comes after every store the thread
//! wrote or read there before (and after what those come after), and an atomic
//! read-modify-write comes right after the store it read. Each thread keeps, per element,
//! what it knows ([`Know`]): the stores that come before something it wrote or read
//! (`known`) and those that come strictly before (`excl`, which it can no longer read). A
//! load is credited the releases common to the stores of the value it returned that it may
//! have read (numbered above `excl`), an atomic read-modify-write that changes the element
//! those common to the stores of its value it may have read (numbered above `excl`, and
//! not read for certain by another read-modify-write, [`Store::consumed`]), and its own
//! store continues them (a release sequence, as the last block of a reduction acquires
//! every block's ticket). One that leaves the element as it was (a failed compare-and-swap,
//! an add of zero) is taken as a load and stores nothing. An element found holding another
//! value than its latest store wrote was written plainly in between: that value is noted
//! as a store. A chain of read-modify-writes (a ticket counter, a spin lock) and a
//! ping-pong are exact: every store there is closed up to itself or read for certain, and
//! each side credits only the latest store.
//!
//! Bounded, and never credits a release a store may not have carried: a history keeps its
//! latest [`STORES`] stores one by one and the earlier ones by value ([`History::exact`]:
//! the highest number among those of each value, for the first [`EXACT`] values), the rest
//! only as a [`Summary`] (a set of their values' bits and the highest number among them);
//! a read that may have read one of those earlier stores is credited nothing. The stores to an element that holds no release are kept
//! as a summary alone (with the latest one's `closed`, for a read-modify-write after it);
//! a thread's knowledge of them is not kept. A plain write ends an element's history (a
//! reader ordered after it cannot read the stores before it, and one not ordered after it
//! races with it). Stores' values are compared as the program compares them
//! ([`comparable`]); a reader that tests only part of a value (`!= 0`, one bit) can tell
//! apart fewer stores than the history does, which is reported only on schedules where it
//! read the earlier value (docs/soundness.md §8).

use super::FastMap;
use crate::shadow::Release;
use prism_types::ty::Scalar;
use std::collections::VecDeque;
use std::hash::Hash;
use std::rc::Rc;

/// How many stores a history keeps one by one. A thread polling a flag has usually seen
/// one of the last few stores; one whose knowledge is older than the kept ones is credited
/// nothing for a value an older store wrote (a false report, never a missed one).
pub(crate) const STORES: usize = 16;

/// The bit of `value` in a [`Summary`]'s set (a multiplicative hash onto 64 bits).
fn bit(value: u64) -> u64 {
    1 << (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// Stores known only in summary: the set of their values' bits, the highest number among
/// them, and how far the one with that number is closed. A read by a thread that excludes
/// fewer, of a value whose bit is set, may have read one of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    mask: u64,
    /// The least and the greatest of the values in `mask` (as unsigned bits; `lo > hi`
    /// when there are none): a counter's older values all lie below the value it reaches,
    /// whose bit they have long filled (review R13: a grid barrier of 17 x 256 arrivals).
    lo: u64,
    hi_value: u64,
    /// The bits of the values of the stores summarised that an atomic read-modify-write may
    /// read: all but those another one read for certain ([`Store::consumed`]), so that a
    /// chain of read-modify-writes longer than a history (a ticket counter) stays exact.
    rmw_mask: u64,
    hi: u32,
    last: u32,
    /// The number of the value before the first store since the launch or the last plain
    /// write: every store numbered above it comes after it.
    base: u32,
    /// The thread that made the store numbered `hi` (block << 32 | thread, + 1; 0 for
    /// none): its next store comes after it (a lock taken with a compare-and-swap and
    /// released with a store).
    last_by: u64,
    /// Whether the value the element holds before the next store is still to be noted (the
    /// launch's value, or a plain write's).
    fresh: bool,
    /// That value, once noted, kept exactly rather than in `mask` (its number is `base`):
    /// every flag's history starts with it, and a value whose hash met its bit was a false
    /// report for every reader that knew nothing of the element (review R10).
    pre: Option<u64>,
    /// Whether an atomic read-modify-write read `pre` for certain (it was the only store it
    /// could read): no other one can read it ([`Store::consumed`]).
    pre_consumed: bool,
    /// The latest store's value: an element found holding another before a store was
    /// written by something else in between (a plain write), whose value is then noted
    /// as the value before the store (review R11).
    value: u64,
}

impl Summary {
    /// A summary with nothing numbered after `hi` yet, whose next store first notes the
    /// value before it.
    fn after(hi: u32) -> Summary {
        Summary {
            mask: 0,
            lo: u64::MAX,
            hi_value: 0,
            rmw_mask: 0,
            hi,
            last: hi,
            base: hi,
            last_by: 0,
            fresh: true,
            pre: None,
            pre_consumed: false,
            value: 0,
        }
    }

    /// Notes the value before the next store, if still to be noted: a store (number
    /// `hi + 1`) that every later store comes after (the launch's data, or a plain write,
    /// which every later atomic is ordered after, or it races with it).
    fn note_before(&mut self, old: u64) {
        if self.fresh {
            self.fresh = false;
            self.hi += 1;
            if let Some(v) = self.pre.replace(old) {
                self.add(v, self.pre_consumed);
            }
            self.pre_consumed = false;
            self.value = old;
            self.last = self.hi;
            self.base = self.hi;
            self.last_by = 0;
        }
    }

    /// Adds a store of `value` to `mask` (and to `rmw_mask` unless a read-modify-write
    /// read it for certain).
    fn add(&mut self, value: u64, consumed: bool) {
        self.mask |= bit(value);
        if !consumed {
            self.rmw_mask |= bit(value);
        }
        self.lo = self.lo.min(value);
        self.hi_value = self.hi_value.max(value);
    }

    /// Whether `value` may be one in `mask`.
    fn in_mask(&self, mask: u64, value: u64) -> bool {
        mask & bit(value) != 0 && (self.lo..=self.hi_value).contains(&value)
    }

    /// Whether a read of `value` that excludes the stores numbered `excl` or less may have
    /// read one of the stores summarised.
    fn may_hold(&self, value: u64, excl: u32) -> bool {
        (self.in_mask(self.mask, value) && excl < self.hi) || (self.pre == Some(value) && excl < self.base)
    }

    /// [`Self::may_hold`] for an atomic read-modify-write, which cannot read a store another
    /// one read for certain.
    fn may_hold_for_rmw(&self, value: u64, excl: u32) -> bool {
        (self.in_mask(self.rmw_mask, value) && excl < self.hi)
            || (self.pre == Some(value) && !self.pre_consumed && excl < self.base)
    }
}

/// What a thread knows of an element's stores ([`super::block::BlockSim::flag_know`]):
/// every store numbered `known` or less comes before (or is) one it wrote or read, and
/// every one numbered `excl` or less comes strictly before one, so it reads none of those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Know {
    pub known: u32,
    pub excl: u32,
}

impl Default for Know {
    /// The value before the first store (number 1) comes before every store.
    fn default() -> Know {
        Know { known: 1, excl: 0 }
    }
}

/// One store of an element with a history.
#[derive(Clone, Debug)]
struct Store {
    idx: u32,
    value: u64,
    /// What it released: the writer's release and what the writer carried on, and for a
    /// read-modify-write those of the store it read.
    rel: Releases,
    /// Every store numbered this or less comes before it, or is it. Either its own number
    /// or less than the number before it (then it is not known to come after that one).
    closed: u32,
    /// An atomic read-modify-write read it for certain (it was the only store that one
    /// could read): it comes right before that one in coherence order, so no other
    /// read-modify-write reads it (a lock's launch value, or its last unlock, taken).
    consumed: bool,
}

impl Store {
    /// Every store numbered this or less comes strictly before it.
    fn strict(&self) -> u32 {
        if self.closed >= self.idx { self.idx - 1 } else { self.closed }
    }
}

/// How far a new store numbered `n` is closed when every store numbered `k` or less is
/// known to come before it: up to itself when that covers the store before it.
fn closed_at(n: u32, k: u32) -> u32 {
    if k + 1 >= n { n } else { k }
}

/// The releases common to each of `lists` (of one writer: the earlier one; of writers
/// some list lacks: none).
fn common<'a>(mut lists: impl Iterator<Item = &'a Releases>) -> Releases {
    let Some(first) = lists.next() else { return Releases::default() };
    let mut c = first.clone();
    for l in lists {
        c = c.iter().filter_map(|r| l.first_of(r)?.common(r)).collect();
    }
    c
}

/// The stores of an element that holds a release ([`Flags::hist`]): the latest [`STORES`]
/// one by one, the latest last, and the others in summary.
#[derive(Clone, Debug)]
pub(crate) struct History {
    old: Summary,
    stores: VecDeque<Store>,
    /// The stores that left `stores`, by value, exactly, for the first [`EXACT`] values:
    /// the highest number among them, and among those no read-modify-write read for
    /// certain (0 for none). Those of other values are in `old`'s bits. Until 2026-11-30
    /// every store that left was kept in bits only, 64 of them, and a counter that 1,024
    /// threads fence and add to, polled until it reaches 1,024, credited its poller
    /// nothing: some store that had left held a value of the same bit.
    exact: FastMap<u64, (u32, u32)>,
}

/// How many values [`History::exact`] keeps.
const EXACT: usize = 4096;

impl History {
    fn latest(&self) -> &Store {
        self.stores.back().expect("a history holds its latest store")
    }

    /// What a load that returned the latest store's value may rely on, for a thread that
    /// knows `know`, and what it knows after: the releases common to the stores of that
    /// value it may have read; nothing when a summarised one may be one of them.
    fn load(&self, know: Know) -> (Releases, Know) {
        let value = self.latest().value;
        if self.old.may_hold(value, know.excl) || self.exact.get(&value).is_some_and(|&(hi, _)| hi > know.excl) {
            return (Releases::default(), know);
        }
        // Two passes over the stores rather than a list of them: this runs for every atomic
        // load of an element with a history (a look-back scan's polling).
        let read = || self.stores.iter().filter(|s| s.value == value && s.idx > know.excl);
        // It read one of them: it knows what the one it knows least after knows.
        let after = Know {
            known: know.known.max(read().map(|s| s.closed).min().unwrap_or(0)),
            excl: know.excl.max(read().map(|s| s.strict()).min().unwrap_or(0)),
        };
        (common(read().map(|s| &s.rel)), after)
    }

    /// The positions (in `stores`) of the stores of `value` an atomic read-modify-write by
    /// a thread that knows `know` may have read: any the thread may still read that no
    /// other read-modify-write read for certain. Not only those that may be the latest: the
    /// read-modify-write may come, in coherence order, before stores that ran before it and
    /// that nothing orders before it (review R11). `None` when a summarised store may be
    /// one of them.
    fn rmw_reads(&self, value: u64, know: Know) -> Option<Vec<usize>> {
        if self.old.may_hold_for_rmw(value, know.excl)
            || self.exact.get(&value).is_some_and(|&(_, free)| free > know.excl)
        {
            return None;
        }
        Some(
            self.stores
                .iter()
                .enumerate()
                .filter(|(_, s)| s.value == value && s.idx > know.excl && !s.consumed)
                .map(|(i, _)| i)
                .collect(),
        )
    }

    fn push(&mut self, s: Store) {
        self.stores.push_back(s);
        if self.stores.len() > STORES {
            let gone = self.stores.pop_front().expect("more than one store");
            let free = if gone.consumed { 0 } else { gone.idx };
            if self.exact.len() < EXACT || self.exact.contains_key(&gone.value) {
                let e = self.exact.entry(gone.value).or_insert((0, 0));
                *e = (e.0.max(gone.idx), e.1.max(free));
                return;
            }
            self.old.add(gone.value, gone.consumed);
            self.old.hi = self.old.hi.max(gone.idx);
        }
    }

    fn next(&self) -> u32 {
        self.latest().idx + 1
    }
}

/// `bits` of type `ty` as a reader tells values apart when it compares them: a float's
/// zeros are one value and its NaNs one (`-0.0 == 0.0`, and a NaN equals nothing, so a
/// reader cannot tell which of two stores it read by comparing). Flag histories compare
/// stores' values so (review R10: a flag stored -0.0 before the data and 0.0 after it
/// credited the second store's release to a reader testing `!= 0.0`).
pub(crate) fn comparable(ty: Scalar, bits: u64) -> u64 {
    let (sign, exp, man) = match ty {
        Scalar::F16 => (0x8000, 0x7C00, 0x03FF),
        Scalar::BF16 => (0x8000, 0x7F80, 0x007F),
        Scalar::F32 => (0x8000_0000, 0x7F80_0000, 0x007F_FFFF),
        Scalar::F64 => (1 << 63, 0x7FF0_0000_0000_0000, 0x000F_FFFF_FFFF_FFFF),
        _ => return bits,
    };
    if bits & !sign == 0 {
        0
    } else if bits & exp == exp && bits & man != 0 {
        exp | man
    } else {
        bits
    }
}

/// Whether two releases are of one writer (and so comparable, [`Release::common`]).
fn same_writer(a: &Release, b: &Release) -> bool {
    a.block == b.block && a.tid == b.tid
}

/// How [`Releases`] orders and tells apart its releases: by writer, then by the blocks
/// they reach, then whether they were released through their writer's block
/// ([`Release::via`]): those a block fence there may acquire stay apart from those carried
/// on by threads of other blocks (review R12 F2: a reader that waited for a writer's flag
/// and for a relay of it through another block, then fenced at block scope, acquired
/// nothing from the two combined), while the copies carried through different blocks are
/// one.
fn key(r: &Release) -> (u32, u32, u32, bool) {
    (r.block, r.tid, r.reach, r.via == r.block)
}

/// `x` and `r`, of one writer reaching the same blocks, as one release: the later one's
/// fences and the larger barrier counts, which order whatever the earlier one's did
/// ([`Release::absorb_counts`]); relayed only if both were, carried through another block
/// ([`Release::left`]) if either was, and acquired by a block fence
/// of no block unless both were released through the same block ([`Release::via`]). Each
/// way it orders in [`Release::orders`] reads the fields of one of the two, or less, so it
/// orders nothing neither did. Until 2026-11-30 releases of one writer relayed through
/// different blocks were kept apart, and a flag that every block relays carried one
/// release per writer and block (review R10 F6).
fn combine(x: &mut Release, r: &Release) {
    if r.newer_than(x) {
        x.fences = r.fences;
    }
    x.absorb_counts(r);
    if x.via != r.via {
        x.via = crate::shadow::EVERY_BLOCK;
    }
}

/// A set of releases: what a flag's store released, what a thread observed and what it
/// acquired. A reader relies on each of them, so the set orders whatever one of its
/// releases orders; releases of one [`key`] are combined where a layer is built
/// ([`combine`]: a later release of a writer orders whatever its earlier one did), which
/// orders no more than the two did.
///
/// A release sequence carries one release per earlier writer: every thread fences and
/// adds to one counter, and the store of the `k`-th update carries `k` releases, the
/// `k - 1` of the one before and its own. So a set is persistent: sorted layers, each over
/// the ones below it, shared by every set built on them (an update's set is its own
/// release over the set of the store it read), and merged with the layer below when that
/// one is less than twice as large, so that a set has few layers and a chain of `n`
/// updates holds `n log n` releases in all, not `n^2 / 2`. Until 2026-11-30 each set was a
/// list, searched linearly and copied at every update, and a counter that 64 x 256
/// threads fence and add to took 274 s with all checks; then 64 x 256 threads that each
/// took a ticket held a copy each (review R10 F6, R12 P1).
#[derive(Clone, Debug, Default)]
pub(crate) struct Releases(Vec<Rc<Layer>>);

/// One layer of a [`Releases`]: its releases sorted by [`key`], one per key, over the
/// layers below.
#[derive(Debug)]
pub(crate) struct Layer {
    items: Vec<Release>,
    below: Option<Rc<Layer>>,
    /// The releases of this layer and those below.
    total: usize,
}

impl Layer {
    /// This layer and those below it.
    fn down(&self) -> impl Iterator<Item = &Layer> {
        std::iter::successors(Some(self), |l| l.below.as_deref())
    }
}

/// How many chains of layers a [`Releases`] keeps side by side.
const CHAINS: usize = 8;

/// How many releases a chain of a [`Releases`] may hold to be put on top of another
/// rather than kept beside it.
const SMALL: usize = 32;

impl Releases {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many releases its layers hold (a key may be in several).
    pub fn len(&self) -> usize {
        self.0.iter().map(|c| c.total).sum()
    }

    fn layers(&self) -> impl Iterator<Item = &Layer> {
        self.0.iter().flat_map(|c| c.down())
    }

    pub fn iter(&self) -> impl Iterator<Item = &Release> {
        self.layers().flat_map(|l| l.items.iter())
    }

    /// A release of `r`'s writer, if any.
    pub fn first_of(&self, r: &Release) -> Option<&Release> {
        self.layers().find_map(|l| {
            let at = l.items.partition_point(|x| (x.block, x.tid) < (r.block, r.tid));
            l.items.get(at).filter(|x| same_writer(x, r))
        })
    }

    /// The releases of thread `tid` of block `block` (or of one of its landings).
    pub fn of_writer(&self, block: u32, tid: u32) -> impl Iterator<Item = &Release> {
        self.layers().flat_map(move |l| {
            let at = l.items.partition_point(|x| (x.block, x.tid) < (block, tid));
            let end = at + l.items[at..].partition_point(|x| (x.block, x.tid) == (block, tid));
            l.items[at..end].iter()
        })
    }

    /// Whether adding `r` would add nothing: a release of its [`key`] holds it already, so
    /// that [`combine`] leaves that release as it is.
    pub fn covers(&self, r: &Release) -> bool {
        self.of_writer(r.block, r.tid).any(|x| {
            let mut y = *x;
            key(x) == key(r) && {
                combine(&mut y, r);
                y == *x
            }
        })
    }

    /// The releases whose writers are threads of block `block` (or its landings): the only
    /// ones that may order an access of that block ([`Release::orders`]).
    pub fn of_block(&self, block: u32) -> impl Iterator<Item = &Release> {
        self.layers().flat_map(move |l| {
            let at = l.items.partition_point(|x| x.block < block);
            let end = at + l.items[at..].partition_point(|x| x.block == block);
            l.items[at..end].iter()
        })
    }

    /// A chain of one layer, `items` (sorted by key, one per key), over `below`, merged
    /// with the layers below while they are less than twice as large.
    fn chain(mut items: Vec<Release>, mut below: Option<Rc<Layer>>) -> Option<Rc<Layer>> {
        if items.is_empty() {
            return below;
        }
        while let Some(b) = below.clone().filter(|b| b.items.len() < 2 * items.len()) {
            items = merged(&items, &b.items);
            below = b.below.clone();
        }
        let total = items.len() + below.as_ref().map_or(0, |b| b.total);
        Some(Rc::new(Layer { items, below, total }))
    }

    /// A set of one chain.
    fn of_chain(c: Option<Rc<Layer>>) -> Releases {
        Releases(c.into_iter().collect())
    }

    /// Adds `r`, to its first chain.
    pub fn merge(&mut self, r: Release) {
        let Some(first) = self.0.first_mut() else {
            *self = Releases::of_chain(Releases::chain(vec![r], None));
            return;
        };
        // Into the top layer when no other set shares it (then merged with the layer below
        // once that one is no longer twice as large), else as a layer of its own.
        if let Some(top) = Rc::get_mut(first) {
            match top.items.binary_search_by_key(&key(&r), key) {
                Ok(at) => combine(&mut top.items[at], &r),
                Err(at) => {
                    top.items.insert(at, r);
                    top.total += 1;
                    if top.below.as_ref().is_some_and(|b| b.items.len() < 2 * top.items.len()) {
                        let (items, below) = (std::mem::take(&mut top.items), top.below.take());
                        *first = Releases::chain(items, below).expect("not empty");
                    }
                }
            }
            return;
        }
        *first = Releases::chain(vec![r], Some(first.clone())).expect("not empty");
    }

    /// Adds the releases of a completed mbarrier phase: below a few, one by one; else as
    /// one layer over the first chain, merged with the layers below while they are less
    /// than twice as large, in one pass over each (every consumer thread of a pipeline
    /// acquires every phase's arrivals and what they carried, some thousand releases: one
    /// search and insertion for each took a seventh of a warp-specialised gemm's checked
    /// run).
    pub fn merge_phase(&mut self, p: &PhaseReleases) {
        if p.items.len() <= 4 {
            for r in p.items.iter() {
                self.merge(*r);
            }
            return;
        }
        let items = p.items.to_vec();
        match self.0.first_mut() {
            None => *self = Releases::of_chain(Releases::chain(items, None)),
            Some(first) => *first = Releases::chain(items, Some(first.clone())).expect("not empty"),
        }
    }

    /// Whether it is `other`, chain for chain (the same shared layers): a set copied from
    /// the other, with nothing added since.
    pub fn same(&self, other: &Releases) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Rc::ptr_eq(a, b))
    }

    /// Whether `c` is one of its chains, or a layer of one (every release of `c` is here).
    fn holds(&self, c: &Rc<Layer>) -> bool {
        self.layers().any(|l| std::ptr::eq(l, &**c))
    }

    /// Whether every chain of `other` is here ([`Self::holds`]): a thread polling a flag
    /// observes the same store's set at every load.
    pub fn holds_all(&self, other: &Releases) -> bool {
        other.0.iter().all(|c| self.holds(c))
    }

    /// Adds each of `other`: its chains, shared, beside this set's (the set a flag's store
    /// released, observed by every thread that reads it, is not copied), those already here
    /// left out. Then a chain of few releases goes on top of the largest one, as a layer
    /// (a store's own release over the release sequence it continues), and beyond
    /// [`CHAINS`] chains the smallest goes so too.
    pub fn merge_all(&mut self, other: &Releases) {
        // A few releases (a polling load's credit, built anew at each load) go into the
        // first chain one by one.
        if other.len() <= 4 && !self.is_empty() {
            for r in other.iter() {
                self.merge(*r);
            }
            return;
        }
        for c in &other.0 {
            if self.holds(c) {
                continue;
            }
            // A chain of this set that `c` is built on is in `c`.
            self.0.retain(|mine| !c.down().any(|l| std::ptr::eq(l, &**mine)));
            self.0.push(c.clone());
        }
        while self.0.len() > 1 {
            self.0.sort_by_key(|c| std::cmp::Reverse(c.total));
            let smallest = self.0.last().expect("more than one").total;
            if smallest > SMALL && self.0.len() <= CHAINS {
                break;
            }
            let c = self.0.pop().expect("more than one");
            let items = Releases(vec![c]).flat();
            let largest = self.0[0].clone();
            self.0[0] = Releases::chain(items, Some(largest)).expect("not empty");
        }
    }

    /// Its releases in one sorted list, one per key.
    fn flat(&self) -> Vec<Release> {
        let mut layers = self.layers();
        let Some(top) = layers.next() else { return Vec::new() };
        let mut v = top.items.clone();
        for l in layers {
            v = merged(&v, &l.items);
        }
        v
    }

    /// The releases that satisfy `keep`: the chains whose releases all do, shared, and
    /// those of the others copied (a block fence takes the releases of its block from
    /// what its thread observed, and leaves the rest).
    pub fn filtered(&self, keep: impl Fn(&Release) -> bool) -> Releases {
        let mut out = Releases::default();
        for c in &self.0 {
            let one = Releases(vec![c.clone()]);
            if one.iter().all(&keep) {
                out.0.push(c.clone());
            } else if one.iter().any(&keep) {
                let kept: Releases = one.iter().filter(|r| keep(r)).copied().collect();
                out.0.extend(kept.0);
            }
        }
        out
    }
}

/// The releases of an mbarrier's latest completed phase, which a wait for it acquires: its
/// arrivals' releases and those they carried on, sorted by [`key`], one per key, built once
/// per phase and shared by every waiter; with the TMA landings among them apart, which a
/// wait notes one by one, and whether any is of another block.
#[derive(Clone, Debug, Default)]
pub(crate) struct PhaseReleases {
    items: Rc<[Release]>,
    landings: Rc<[Release]>,
    foreign: bool,
}

impl PhaseReleases {
    /// The set of `releases`, seen from block `block`.
    pub fn new(releases: Vec<Release>, block: u32) -> PhaseReleases {
        let items = one_per_key(releases);
        let landings = items.iter().filter(|r| crate::shadow::landing_mbar(r.tid).is_some()).copied().collect();
        let foreign = items.iter().any(|r| r.block != block);
        PhaseReleases { items: items.into(), landings, foreign }
    }

    /// The set with `r` added, at its place (review R20 F1: sorting the set again for the
    /// phase's landing cost a fifth of a 1,024-arrival barrier's checked run).
    pub fn with(&self, r: Release, block: u32) -> PhaseReleases {
        let mut items = self.items.to_vec();
        match items.binary_search_by_key(&key(&r), key) {
            Ok(at) => combine(&mut items[at], &r),
            Err(at) => items.insert(at, r),
        }
        let mut landings = self.landings.to_vec();
        if crate::shadow::landing_mbar(r.tid).is_some() {
            landings = items.iter().filter(|x| crate::shadow::landing_mbar(x.tid).is_some()).copied().collect();
        }
        PhaseReleases { items: items.into(), landings: landings.into(), foreign: self.foreign || r.block != block }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Its releases of TMA copies landed through an mbarrier.
    pub fn landings(&self) -> &[Release] {
        &self.landings
    }

    /// Whether a release is of a block other than the one it was built for.
    pub fn foreign(&self) -> bool {
        self.foreign
    }

    /// Whether it is `other` (the same phase's set, shared).
    pub fn same(&self, other: &PhaseReleases) -> bool {
        Rc::ptr_eq(&self.items, &other.items)
    }
}

/// A completed phase's releases as an mbarrier keeps them: the arrivals' list as it was
/// when the phase completed, made a [`PhaseReleases`] at the first wait that asks for it (a
/// phase nobody waits for is never sorted: review R20 F1).
#[derive(Clone, Debug, Default)]
pub(crate) struct PhaseSet {
    built: PhaseReleases,
    raw: Option<Vec<Release>>,
}

impl PhaseSet {
    /// The releases of a phase that has just completed.
    pub fn completed(releases: Vec<Release>) -> PhaseSet {
        PhaseSet { built: PhaseReleases::default(), raw: Some(releases) }
    }

    /// The set, seen from block `block`, built now if it was not yet.
    pub fn get(&mut self, block: u32) -> PhaseReleases {
        if let Some(raw) = self.raw.take() {
            self.built = PhaseReleases::new(raw, block);
        }
        self.built.clone()
    }

    /// Adds `r` (the phase's TMA landing).
    pub fn add(&mut self, r: Release, block: u32) {
        match self.raw.as_mut() {
            Some(raw) => raw.push(r),
            None => self.built = self.built.with(r, block),
        }
    }
}

/// Any releases, sorted by [`key`], those of one key combined.
fn one_per_key(mut v: Vec<Release>) -> Vec<Release> {
    v.sort_by_key(key);
    v.dedup_by(|r, kept| {
        let same = key(r) == key(kept);
        if same {
            combine(kept, r);
        }
        same
    });
    v
}

/// Two lists sorted by [`key`], one per key, merged into one: one pass over both.
fn merged(a: &[Release], b: &[Release]) -> Vec<Release> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    loop {
        match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => match key(x).cmp(&key(y)) {
                std::cmp::Ordering::Less => out.push(*a.next().expect("peeked")),
                std::cmp::Ordering::Greater => out.push(*b.next().expect("peeked")),
                std::cmp::Ordering::Equal => {
                    let mut x = *a.next().expect("peeked");
                    combine(&mut x, b.next().expect("peeked"));
                    out.push(x);
                }
            },
            (Some(_), None) => out.extend(a.by_ref().copied()),
            (None, Some(_)) => out.extend(b.by_ref().copied()),
            (None, None) => break,
        }
    }
    out
}

impl PartialEq for Releases {
    /// The same releases, one per key, whatever the layers.
    fn eq(&self, other: &Releases) -> bool {
        self.flat() == other.flat()
    }
}

impl FromIterator<Release> for Releases {
    /// Any releases, sorted, those of one key combined, as one layer.
    fn from_iter<I: IntoIterator<Item = Release>>(it: I) -> Releases {
        Releases::of_chain(Releases::chain(one_per_key(it.into_iter().collect()), None))
    }
}

/// The flags of one memory, global or a block's shared memory, by element.
#[derive(Debug)]
pub(crate) struct Flags<K> {
    /// The elements that hold a release in their history.
    hist: FastMap<K, History>,
    /// The elements stored atomically (or volatilely) that hold no history: their stores in
    /// summary, for the history their first release starts.
    quiet: FastMap<K, Summary>,
}

impl<K> Default for Flags<K> {
    fn default() -> Self {
        Flags { hist: FastMap::default(), quiet: FastMap::default() }
    }
}

impl<K: Hash + Eq + Copy> Flags<K> {
    /// Whether no element holds a release (a plain write then needs no look-up).
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// A store of `value` over `old` (the element's value before it) by thread `who` (block
    /// << 32 | thread), which knows `know`, releasing `rel` (empty when it releases nothing): a plain store, or with
    /// `rmw` an atomic read-modify-write that changed the element, which first acquires
    /// what the stores it may have read all released (returned) and carries it on. What
    /// the thread knows after it, when the element has a history.
    pub fn store(
        &mut self,
        key: K,
        (old, value): (u64, u64),
        (who, know, rmw): (u64, Know, bool),
        mut rel: Releases,
    ) -> (Releases, Option<Know>) {
        // Every store comes after the value before the first (`Summary::base`). An element
        // found holding another value than its latest store wrote was written by something
        // else since (a plain write the caller did not report, `Self::clear`): that write is
        // a store too, after every earlier one (an atomic unordered with it races with it).
        if let Some(h) = self.hist.get_mut(&key)
            && h.latest().value != old
        {
            let n = h.next();
            h.push(Store { idx: n, value: old, rel: Releases::default(), closed: n, consumed: false });
        }
        let (idx, k, credit) = match self.hist.get_mut(&key) {
            Some(h) => {
                let (n, known) = (h.next(), know.known.max(h.old.base));
                if rmw {
                    match h.rmw_reads(old, know) {
                        Some(read) => {
                            if let [only] = read[..] {
                                h.stores[only].consumed = true;
                            }
                            let read: Vec<&Store> = read.iter().map(|&i| &h.stores[i]).collect();
                            let k = known.max(read.iter().map(|s| s.closed).min().unwrap_or(0));
                            (n, k, common(read.iter().map(|s| &s.rel)))
                        }
                        None => (n, known, Releases::default()),
                    }
                } else {
                    (n, known, Releases::default())
                }
            }
            None => {
                let q = self.quiet.entry(key).or_insert_with(|| Summary::after(0));
                if !q.fresh && q.value != old {
                    q.fresh = true;
                }
                q.note_before(old);
                // A thread's knowledge of a summary's stores is not kept. A store by the
                // latest one's thread comes after that one and what it comes after; a
                // read-modify-write of the value before, when no store came after it, read
                // it for certain.
                let k = if q.last_by == who + 1 { q.last.max(q.base) } else { q.base };
                if rmw && q.hi == q.base && q.pre == Some(old) {
                    q.pre_consumed = true;
                }
                (q.hi + 1, k, Releases::default())
            }
        };
        rel.merge_all(&credit);
        let closed = closed_at(idx, k);
        let s = Store { idx, value, rel, closed, consumed: false };
        let after = Know { known: know.known.max(closed), excl: know.excl.max(s.strict()) };
        if let Some(h) = self.hist.get_mut(&key) {
            h.push(s);
            return (credit, Some(after));
        }
        let q = self.quiet.get_mut(&key).expect("noted above");
        if s.rel.is_empty() {
            q.add(value, false);
            q.hi = idx;
            q.last = closed;
            q.last_by = who + 1;
            q.value = value;
            return (credit, None);
        }
        let old_stores = self.quiet.remove(&key).expect("noted above");
        self.hist.insert(key, History { old: old_stores, stores: VecDeque::from([s]), exact: FastMap::default() });
        (credit, Some(after))
    }

    /// What a load of element `key` by a thread that knows `know` may rely on, and what
    /// the thread knows after it ([`History::load`]); `None` when the element holds no
    /// release.
    pub fn load(&self, key: K, know: Know) -> Option<(Releases, Know)> {
        self.hist.get(&key).map(|h| h.load(know))
    }

    /// A plain write to element `key`: its history ends, and the stores after it are
    /// numbered after the ended ones (a thread's knowledge of those stays true).
    pub fn clear(&mut self, key: K) {
        if let Some(h) = self.hist.remove(&key) {
            self.quiet.insert(key, Summary::after(h.latest().idx));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shadow::{EVERY_BLOCK, Fences, LEVELS};

    fn rel(tid: u32, any: u16) -> Release {
        Release {
            block: 0,
            tid,
            fences: Fences { device: any, any },
            counts: [0; LEVELS],
            reach: EVERY_BLOCK,
            via: 0,
            gbar: 0,
            relayed: false,
            left: false,
        }
    }

    /// A store by a thread that knows `know`; what it knows after (the default when the
    /// element has no history).
    fn st(f: &mut Flags<u32>, know: Know, (old, value): (u64, u64), rel: Vec<Release>) -> Know {
        f.store(0, (old, value), (0, know, false), rs(rel)).1.unwrap_or_default()
    }

    fn rmw(f: &mut Flags<u32>, know: Know, (old, value): (u64, u64), rel: Vec<Release>) -> (Releases, Know) {
        let (credit, k) = f.store(0, (old, value), (0, know, true), rs(rel));
        (credit, k.unwrap_or_default())
    }

    fn rs(v: Vec<Release>) -> Releases {
        v.into_iter().collect()
    }

    const NEW: Know = Know { known: 1, excl: 0 };

    #[test]
    fn a_value_stored_before_the_release_credits_nothing() {
        // Review R9: 1 (no release), 2, 1 (released). A reader of 1 may have read the first.
        let mut f = Flags::<u32>::default();
        let w = st(&mut f, NEW, (0, 1), vec![]);
        let w = st(&mut f, w, (1, 2), vec![]);
        st(&mut f, w, (2, 1), vec![rel(0, 1)]);
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![]));
        // A value stored only with the release is credited it.
        let mut f = Flags::<u32>::default();
        let w = st(&mut f, NEW, (0, 1), vec![]);
        st(&mut f, w, (1, 2), vec![rel(0, 1)]);
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![rel(0, 1)]));
    }

    #[test]
    fn the_value_before_the_first_store_counts_as_a_store() {
        // The element held 1 (the launch's data) before the released store of 1.
        let mut f = Flags::<u32>::default();
        let w = st(&mut f, NEW, (1, 1), vec![rel(0, 1)]);
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![]));
        // Its writer knows its own store comes after the launch's value.
        assert_eq!(f.load(0, w).unwrap().0, rs(vec![rel(0, 1)]));
    }

    #[test]
    fn the_value_before_the_first_store_is_kept_exactly() {
        // 34's bit is the launch value 0's (review R10): a reader of 34 is credited.
        assert_eq!(bit(34), bit(0));
        let mut f = Flags::<u32>::default();
        st(&mut f, NEW, (0, 34), vec![rel(0, 1)]);
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![rel(0, 1)]));
    }

    #[test]
    fn stores_of_one_value_credit_what_all_released() {
        let mut f = Flags::<u32>::default();
        let w = st(&mut f, NEW, (0, 1), vec![rel(0, 1), rel(1, 4)]);
        st(&mut f, w, (1, 1), vec![rel(0, 3)]);
        // Writer 1 released nothing at the second store; writer 0's first release is common.
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![rel(0, 1)]));
    }

    #[test]
    fn a_ping_pong_is_exact() {
        // 0 -> 1 (released by P) -> 0 (by C) -> 1 (by P, later): each side credits only the
        // other's latest store.
        let mut f = Flags::<u32>::default();
        let p = st(&mut f, NEW, (0, 1), vec![rel(0, 1)]);
        let (got, c) = f.load(0, NEW).unwrap();
        assert_eq!(got, rs(vec![rel(0, 1)]));
        let c = st(&mut f, c, (1, 0), vec![rel(1, 1)]);
        let (got, p) = f.load(0, p).unwrap();
        assert_eq!(got, rs(vec![rel(1, 1)]));
        st(&mut f, p, (0, 1), vec![rel(0, 2)]);
        assert_eq!(f.load(0, c).unwrap().0, rs(vec![rel(0, 2)]));
        // A thread that saw nothing may have read the first store of 1.
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![rel(0, 1)]));
    }

    #[test]
    fn unordered_stores_of_one_value_may_be_read_in_either_order() {
        // Review R10: B stores 1 without a release, A (which knows nothing of it) stores 1
        // with one. A reader, and a compare-and-swap, may read B's.
        let (a, b, c, r) = (1, 2, 3, 4);
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), (b, NEW, false), rs(vec![]));
        f.store(0, (1, 1), (a, NEW, false), rs(vec![rel(0, 1)]));
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![]));
        assert_eq!(f.store(0, (1, 2), (r, NEW, true), rs(vec![])).0, rs(vec![]));
        // C stores 0 (knowing nothing), A stores 1 with a release: a reader that saw C's 0
        // may still read B's 1, which may come after C's 0.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), (b, NEW, false), rs(vec![]));
        f.store(0, (1, 0), (c, NEW, false), rs(vec![rel(2, 1)]));
        let (_, seen) = f.load(0, NEW).unwrap();
        f.store(0, (0, 1), (a, NEW, false), rs(vec![rel(0, 1)]));
        assert_eq!(f.load(0, seen).unwrap().0, rs(vec![]));
    }

    #[test]
    fn a_spin_lock_credits_the_unlock_before_it() {
        // T1: CAS 0 -> 1 (no release yet), exchange 1 -> 0 (released); T2's CAS reads it.
        let mut f = Flags::<u32>::default();
        let (_, t1) = rmw(&mut f, NEW, (0, 1), vec![]);
        rmw(&mut f, t1, (1, 0), vec![rel(1, 2)]);
        let (got, t2) = rmw(&mut f, NEW, (0, 1), vec![]);
        assert_eq!(got, rs(vec![rel(1, 2)]));
        // T2's unlock carries T1's release on, and adds its own.
        rmw(&mut f, t2, (1, 0), vec![rel(2, 2)]);
        let (got, _) = rmw(&mut f, NEW, (0, 1), vec![]);
        assert_eq!(got, rs(vec![rel(1, 2), rel(2, 2)]));
    }

    #[test]
    fn a_lock_released_with_a_store_credits_the_store() {
        // T1 (thread 1): CAS 0 -> 1 without a release, then a store of 0 with one. A
        // compare-and-swap of thread 2 that reads 0 reads that store: the launch's 0 comes
        // before T1's CAS, which read it.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), (1, NEW, true), rs(vec![]));
        f.store(0, (1, 0), (1, NEW, false), rs(vec![rel(1, 2)]));
        assert_eq!(f.store(0, (0, 1), (2, NEW, true), rs(vec![])).0, rs(vec![rel(1, 2)]));
        // Had another thread stored the 0, T1's CAS would not be known to come before it,
        // but it wrote 1: the launch's 0, which comes before every store, is not the last,
        // and the 0 T2 read is that thread's.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), (1, NEW, true), rs(vec![]));
        f.store(0, (1, 0), (3, NEW, false), rs(vec![rel(3, 2)]));
        assert_eq!(f.store(0, (0, 1), (2, NEW, true), rs(vec![])).0, rs(vec![rel(3, 2)]));
        // A third thread's store of 0 without a release may be the last one.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), (1, NEW, true), rs(vec![]));
        f.store(0, (1, 0), (4, NEW, false), rs(vec![]));
        f.store(0, (0, 0), (3, NEW, false), rs(vec![rel(3, 2)]));
        assert_eq!(f.store(0, (0, 1), (2, NEW, true), rs(vec![])).0, rs(vec![]));
    }

    #[test]
    fn a_ticket_chain_credits_every_release() {
        let mut f = Flags::<u32>::default();
        for t in 0..40u32 {
            rmw(&mut f, NEW, (u64::from(t), u64::from(t) + 1), vec![rel(t, 1)]);
        }
        let (got, _) = rmw(&mut f, NEW, (40, 41), vec![]);
        assert_eq!(got.len(), 40);
    }

    #[test]
    fn stores_that_left_the_history_are_kept_by_value() {
        // A counter that 1,000 writers fence and add to, read at 1,000 by a thread that
        // knew nothing: only the last store holds that value (until 2026-11-30 a store
        // that had left, of another value with the same bit, made this credit nothing).
        let mut f = Flags::<u32>::default();
        for t in 0..1000u32 {
            rmw(&mut f, NEW, (u64::from(t), u64::from(t) + 1), vec![rel(t, 1)]);
        }
        assert_eq!(f.load(0, NEW).unwrap().0.len(), 1000);
        // Beyond the values kept exactly (`EXACT`), the range of those in bits tells that
        // the value a counter reaches is none of them (review R13).
        let mut f = Flags::<u32>::default();
        for t in 0..6000u32 {
            rmw(&mut f, NEW, (u64::from(t), u64::from(t) + 1), vec![rel(t, 1)]);
        }
        assert_eq!(f.load(0, NEW).unwrap().0.flat().len(), 6000);
        // A value stored without a release after the history began, long gone, and stored
        // again with one: a reader that knew nothing may have read the first.
        let mut f = Flags::<u32>::default();
        let w = st(&mut f, NEW, (0, 1), vec![rel(0, 1)]);
        let mut w = st(&mut f, w, (1, 7), vec![]);
        let mut v = 7;
        for i in 0..(STORES as u64 + 4) {
            w = st(&mut f, w, (v, 100 + i), vec![rel(0, i as u16 + 2)]);
            v = 100 + i;
        }
        let before = w;
        st(&mut f, w, (v, 7), vec![rel(0, 99)]);
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![]));
        // Its writer, which knows every store before its last, read that one.
        assert_eq!(f.load(0, before).unwrap().0, rs(vec![rel(0, 99)]));
        // A compare-and-swap of 7 by a thread that knew nothing may have read the first 7.
        assert_eq!(rmw(&mut f, NEW, (7, 8), vec![]).0, rs(vec![]));
    }

    #[test]
    fn a_release_sequence_shares_its_sets() {
        // 4,096 updates, each by a thread that fenced: each store's set is its own release
        // over the set of the store it read, in few layers, and all of them together hold
        // about n log n releases, not n^2 / 2 (review R10 F6).
        let n = 4096u32;
        let mut f = Flags::<u32>::default();
        let mut sets = Vec::new();
        for t in 0..n {
            sets.push(rmw(&mut f, NEW, (u64::from(t), u64::from(t) + 1), vec![rel(t, 1)]).0);
        }
        let last = &sets[n as usize - 1];
        assert_eq!(last.flat().len(), n as usize - 1);
        assert!(last.layers().count() <= 26, "{} layers", last.layers().count());
        let mut layers = std::collections::HashSet::new();
        let mut held = 0;
        for s in &sets {
            for l in s.layers() {
                if layers.insert(l as *const Layer) {
                    held += l.items.len();
                }
            }
        }
        assert!(held <= 14 * n as usize, "{held} releases held");
        // A thread that observed one store's set and then other large ones keeps them,
        // shared, side by side (not copied); observing one again adds nothing.
        let mut pending = sets[2999].clone();
        pending.merge_all(&sets[3999]);
        let big: Releases = (0..3000).map(|t| rel(t, 2)).collect();
        pending.merge_all(&big);
        pending.merge_all(&big);
        pending.merge_all(&sets[3999]);
        assert_eq!(pending.0.len(), 3);
        assert!(pending.holds(&sets[3999].0[0]) && pending.holds(&big.0[0]));
        assert_eq!(pending.flat(), merged(&sets[3999].flat(), &big.flat()));
        // Beyond `CHAINS`, the smallest go on top of the largest.
        for k in 0..10 {
            let other: Releases = (0..100).map(|t| rel(5000 + 100 * k + t, 1)).collect();
            pending.merge_all(&other);
        }
        assert!(pending.0.len() <= CHAINS);
        // Every release is still there: the 3,999 writers before the 4,000th update (3,000 of
        // them combined with `big`'s) and the 1,000 new ones.
        let tids: Vec<u32> = pending.flat().iter().map(|r| r.tid).collect();
        assert_eq!(tids, (0..3999).chain(5000..6000).collect::<Vec<u32>>());
    }

    #[test]
    fn summarised_stores_credit_nothing_to_old_readers() {
        let mut f = Flags::<u32>::default();
        let mut w = NEW;
        for i in 0..(STORES as u64 + 4) {
            w = st(&mut f, w, (i % 2, (i + 1) % 2), vec![rel(0, i as u16 + 1)]);
        }
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![]));
        assert_eq!(f.load(0, w).unwrap().0, rs(vec![rel(0, STORES as u16 + 4)]));
    }

    #[test]
    fn float_zeros_and_nans_are_one_value_each() {
        assert_eq!(comparable(Scalar::F32, 0x8000_0000), comparable(Scalar::F32, 0));
        assert_eq!(comparable(Scalar::F32, 0x7FC0_0001), comparable(Scalar::F32, 0xFF80_0001));
        assert_ne!(comparable(Scalar::F32, 0x7F80_0000), comparable(Scalar::F32, 0x7FC0_0000), "infinity");
        assert_eq!(comparable(Scalar::F64, 1 << 63), 0);
        assert_eq!(comparable(Scalar::F16, 0x8000), 0);
        assert_eq!(comparable(Scalar::BF16, 0xFFC1), comparable(Scalar::BF16, 0x7FC0));
        assert_eq!(comparable(Scalar::I32, 0x8000_0000), 0x8000_0000, "integers as they are");
    }

    #[test]
    fn a_plain_write_ends_the_history() {
        let mut f = Flags::<u32>::default();
        let w = st(&mut f, NEW, (0, 1), vec![rel(0, 1)]);
        f.clear(0);
        assert!(f.load(0, w).is_none() && f.is_empty());
        // The stores after it are numbered after the ended ones, so a thread's knowledge of
        // those excludes none of them.
        st(&mut f, NEW, (5, 1), vec![rel(0, 2)]);
        assert_eq!(f.load(0, w).unwrap().0, rs(vec![rel(0, 2)]));
        // A store of the plain write's value may be read as that write's.
        st(&mut f, NEW, (1, 5), vec![rel(0, 3)]);
        assert_eq!(f.load(0, NEW).unwrap().0, rs(vec![]));
    }
}

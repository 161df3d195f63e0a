//! Flags: what a thread that reads an element written by atomic or volatile stores may rely
//! on (race checks only; docs/simulator.md, "Fences and flags", and docs/soundness.md §8).
//!
//! A store that follows a fence is a *release*: a thread that reads the value and then
//! fences is ordered after what the writer did before its fence ([`Release`]). The
//! simulator runs one interleaving, and each store lands when it runs, so the order in
//! which an element's stores ran is its coherence order (each store gets a position from
//! one clock, [`Flags::store`]). But a load need not return the latest store: on the GPU it
//! may return any store of the element that its thread has not already seen overwritten
//! (coherence: a thread never reads a store older than one it wrote or read there). When
//! two such stores wrote the same value the reader cannot tell which one it read, and its
//! program runs the same either way, so it may rely only on what every one of them
//! released. A writer that stores 1 before its data and fence and 1 again after them
//! publishes nothing to a reader that sees 1 (reviews R8 and R9: until 2026-11-29 only the
//! latest store, or the one just before it, was looked at).
//!
//! So each element keeps its stores' values, positions and releases ([`History`]), and
//! each thread the position of the latest store of the element it wrote or read
//! (`BlockSim::flag_seen`). A load is credited the releases common to every store of the
//! value it returned at or after that position ([`History::load`]); its thread's position
//! becomes the earliest of them. An atomic read-modify-write that changes the element reads
//! the store just before it in coherence order (PTX atomicity), which is the latest one:
//! it is credited that store's releases, and its own store continues them (a release
//! sequence, as the last block of a reduction acquires every block's ticket). One that
//! leaves the element as it was (a failed compare-and-swap, an add of zero) is taken as a
//! load and stores nothing: a reader of the value could not tell its store from the one
//! before.
//!
//! Bounded, and never credits a release a store may not have carried: a history keeps its
//! latest [`STORES`] stores one by one, and the earlier ones only as a [`Summary`] (a set of
//! their values' bits and the latest position among them), which credits nothing to a
//! load that may have read one of them. Stores to an element that holds no release are
//! kept as a summary alone, which the element's first release takes over. A plain write
//! ends an element's history (a reader ordered after it cannot read the stores before it,
//! and one not ordered after it races with it); it leaves the summary of stores that never
//! released as it was (the plain write's fast path does not look it up), which can only
//! credit less.

use super::FastMap;
use crate::shadow::Release;
use prism_types::ty::Scalar;
use std::collections::VecDeque;
use std::hash::Hash;

/// How many stores a history keeps one by one. A thread polling a flag has usually seen
/// one of the last few stores; one whose last look is older than the kept ones is
/// credited nothing for a value an older store wrote (a false report, never a missed one).
pub(crate) const STORES: usize = 16;

/// The bit of `value` in a [`Summary`]'s set (a multiplicative hash onto 64 bits: small
/// flag values get different bits).
fn bit(value: u64) -> u64 {
    1 << (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// Stores known only in summary: the set of their values' bits, and the latest position
/// among them. A load by a thread that had seen no later position, of a value whose bit is
/// set, may have read one of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    mask: u64,
    hi: u64,
}

impl Summary {
    fn add(&mut self, value: u64, pos: u64) {
        self.mask |= bit(value);
        self.hi = self.hi.max(pos);
    }

    /// Whether a load of `value` by a thread that had seen position `seen` may have read one
    /// of the stores summarised.
    fn may_hold(&self, value: u64, seen: u64) -> bool {
        self.mask & bit(value) != 0 && seen <= self.hi
    }
}

/// One store of an element with a history.
#[derive(Clone, Debug)]
struct Store {
    pos: u64,
    value: u64,
    /// What it released: the writer's release and what the writer carried on, and for a
    /// read-modify-write those of the store it read.
    rel: Vec<Release>,
}

/// The stores of an element that holds a release ([`Flags::hist`]): the latest [`STORES`]
/// one by one, the latest last, and the others in summary.
#[derive(Clone, Debug)]
pub(crate) struct History {
    old: Summary,
    stores: VecDeque<Store>,
}

impl History {
    fn latest(&self) -> &Store {
        self.stores.back().expect("a history holds its latest store")
    }

    /// What a load of the element, which returned the latest store's value, may rely on
    /// when its thread had seen position `seen` (0: none): the releases common to every
    /// store of that value at or after `seen`, nothing when a summarised store may be one
    /// of them. With the position its thread has seen after it: the earliest such store's.
    fn load(&self, seen: u64) -> (Vec<Release>, u64) {
        let value = self.latest().value;
        if self.old.may_hold(value, seen) {
            return (Vec::new(), seen);
        }
        let mut common: Option<Vec<Release>> = None;
        let mut earliest = self.latest().pos;
        for s in self.stores.iter().filter(|s| s.value == value && s.pos >= seen) {
            earliest = earliest.min(s.pos);
            common = Some(match common {
                None => s.rel.clone(),
                Some(c) => c.iter().filter_map(|r| s.rel.iter().find(|x| same_writer(x, r))?.common(r)).collect(),
            });
        }
        (common.unwrap_or_default(), earliest.max(seen))
    }

    fn push(&mut self, s: Store) {
        self.stores.push_back(s);
        if self.stores.len() > STORES {
            let gone = self.stores.pop_front().expect("more than one store");
            self.old.add(gone.value, gone.pos);
        }
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
pub(crate) fn same_writer(a: &Release, b: &Release) -> bool {
    a.block == b.block && a.tid == b.tid
}

/// Adds release `r` to `list`, one per writer and reach: a later release of a writer
/// orders whatever its earlier one did.
pub(crate) fn merge(list: &mut Vec<Release>, r: Release) {
    match list.iter_mut().find(|x| same_writer(x, &r) && x.reach == r.reach && x.via == r.via) {
        Some(x) => {
            if r.newer_than(x) {
                x.fences = r.fences;
            }
            x.absorb_counts(&r);
        }
        None => list.push(r),
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

    /// Whether element `key` has a history (a thread's position there is worth keeping).
    pub fn has(&self, key: K) -> bool {
        self.hist.contains_key(&key)
    }

    /// A store of `value` over `old` (the element's value before it) at position `pos`,
    /// releasing `rel` (empty when it releases nothing). Positions only grow.
    pub fn store(&mut self, key: K, (old, value): (u64, u64), pos: u64, rel: Vec<Release>) {
        let s = Store { pos, value, rel };
        if let Some(h) = self.hist.get_mut(&key) {
            h.push(s);
        } else if s.rel.is_empty() {
            let q = self.quiet.entry(key).or_default();
            // The value before: the summary's latest store's, or one a plain write (or the
            // launch) left, which came before this store.
            q.add(old, pos - 1);
            q.add(value, pos);
        } else {
            let mut old_stores = self.quiet.remove(&key).unwrap_or_default();
            old_stores.add(old, pos - 1);
            self.hist.insert(key, History { old: old_stores, stores: VecDeque::from([s]) });
        }
    }

    /// What a load of element `key` by a thread that had seen position `seen` may rely on,
    /// and the position its thread has seen after it ([`History::load`]); `None` when the
    /// element holds no release.
    pub fn load(&self, key: K, seen: u64) -> Option<(Vec<Release>, u64)> {
        self.hist.get(&key).map(|h| h.load(seen))
    }

    /// What an atomic read-modify-write that changes element `key` acquires: the releases
    /// of the latest store, which it reads.
    pub fn latest(&self, key: K) -> &[Release] {
        self.hist.get(&key).map_or(&[], |h| &h.latest().rel)
    }

    /// A plain write to element `key`: its history ends.
    pub fn clear(&mut self, key: K) {
        self.hist.remove(&key);
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
        }
    }

    #[test]
    fn a_value_stored_before_the_release_credits_nothing() {
        // Review R9: 1 (no release), 2, 1 (released). A reader of 1 may have read the first.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), 1, vec![]);
        f.store(0, (1, 2), 2, vec![]);
        f.store(0, (2, 1), 3, vec![rel(0, 1)]);
        assert_eq!(f.load(0, 0).unwrap().0, vec![]);
        // Stores before the first release are kept in summary only, with the latest position
        // among them: even a thread that saw the second store is credited nothing.
        assert_eq!(f.load(0, 2).unwrap().0, vec![]);
        assert_eq!(f.load(0, 3).unwrap(), (vec![rel(0, 1)], 3));
        // A value stored only with the release is credited it.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), 1, vec![]);
        f.store(0, (1, 2), 2, vec![rel(0, 1)]);
        assert_eq!(f.load(0, 0).unwrap(), (vec![rel(0, 1)], 2));
    }

    #[test]
    fn the_value_before_the_first_store_counts_as_a_store() {
        // The element held 1 (the launch's data) before the released store of 1.
        let mut f = Flags::<u32>::default();
        f.store(0, (1, 1), 5, vec![rel(0, 1)]);
        assert_eq!(f.load(0, 0).unwrap().0, vec![]);
        assert_eq!(f.load(0, 5).unwrap().0, vec![rel(0, 1)]);
    }

    #[test]
    fn stores_of_one_value_credit_what_all_released() {
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), 1, vec![rel(0, 1), rel(1, 4)]);
        f.store(0, (1, 1), 2, vec![rel(0, 3)]);
        // Writer 1 released nothing at the second store; writer 0's first release is common.
        assert_eq!(f.load(0, 0).unwrap(), (vec![rel(0, 1)], 1));
        assert_eq!(f.load(0, 2).unwrap(), (vec![rel(0, 3)], 2));
    }

    #[test]
    fn a_ping_pong_is_exact_for_a_thread_that_saw_the_last_round() {
        // 0 -> 1 (released by 0) -> 0 (by 1) -> 1 (by 0, later): a thread that saw the 0 of
        // the third store reads only the fourth.
        let mut f = Flags::<u32>::default();
        f.store(0, (0, 1), 1, vec![rel(0, 1)]);
        f.store(0, (1, 0), 2, vec![rel(1, 1)]);
        f.store(0, (0, 1), 3, vec![rel(0, 2)]);
        assert_eq!(f.load(0, 2).unwrap(), (vec![rel(0, 2)], 3));
        assert_eq!(f.load(0, 1).unwrap(), (vec![rel(0, 1)], 1));
    }

    #[test]
    fn summarised_stores_credit_nothing_to_old_readers() {
        let mut f = Flags::<u32>::default();
        for pos in 1..=(STORES as u64 + 4) {
            f.store(0, (pos % 2, (pos + 1) % 2), pos, vec![rel(0, pos as u16)]);
        }
        let last = STORES as u64 + 4;
        assert_eq!(f.load(0, 0).unwrap().0, vec![]);
        assert_eq!(f.load(0, last - 1).unwrap().0, vec![rel(0, last as u16)]);
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
        f.store(0, (0, 1), 1, vec![rel(0, 1)]);
        assert!(f.has(0));
        f.clear(0);
        assert!(f.load(0, 0).is_none());
        assert!(f.latest(0).is_empty());
        // A store without a release after it starts no history.
        f.store(0, (1, 2), 2, vec![]);
        assert!(!f.has(0) && f.is_empty());
    }
}

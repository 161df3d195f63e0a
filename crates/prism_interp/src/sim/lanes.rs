//! The interpreter's fast paths: a register's 32 lanes as a fixed-size array (one bounds
//! check per operand and op, none per lane), and memory accesses resolved for a whole
//! fragment at once when no lane needs a report or race bookkeeping.
//!
//! Invariant: a fast path either does exactly what the general, lane-by-lane path in
//! `exec.rs` does, or does nothing at all and says so (`None`), and the op then runs the
//! general path, which finds the lane to report. So results and reports do not depend on
//! which path ran.

use super::Shared;
use super::block::{FULL, lanes_of};
use super::regs::Regs;
use crate::code::{FUSED_LOADS, LocalFma, R};
use crate::memory::{Buffer, Ptr, Space, Storage};
use crate::value;
use prism_types::ty::Scalar;
use std::sync::atomic::Ordering::Relaxed;

/// `*d = *s`, in two halves: a 256-byte copy is a call into libc's `memcpy` (it was 11% of a
/// scan's run time), a 128-byte one is eight vector moves inline.
#[inline(always)]
pub(super) fn copy32(d: &mut [u64; 32], s: &[u64; 32]) {
    d[..16].copy_from_slice(&s[..16]);
    d[16..].copy_from_slice(&s[16..]);
}

/// Writes the lanes of `mask` of `out` into `d`.
#[inline(always)]
pub(super) fn put_lanes(d: &mut [u64; 32], mask: u32, out: &[u64; 32]) {
    if mask == FULL {
        copy32(d, out);
    } else {
        for l in lanes_of(mask) {
            d[l] = out[l];
        }
    }
}

/// The lanes of `mask` where `cond` is true.
#[inline(always)]
pub(super) fn true_lanes((cond, uniform): (&[u64; 32], bool), mask: u32) -> u32 {
    // A register known to hold one value (`Regs::uniform`) needs no look at its lanes.
    if uniform {
        return if cond[0] != 0 { mask } else { 0 };
    }
    // A loop or branch condition is almost always the same in every lane, 0 or 1. When the
    // lanes share a set bit, every lane is true; when none has one, every lane is false: two
    // reductions of plain ors and ands, which cost a third of the bit-per-lane loop below.
    let (mut any, mut all) = (0u64, u64::MAX);
    for &c in cond {
        any |= c;
        all &= c;
    }
    if all != 0 {
        return mask;
    }
    if any == 0 {
        return 0;
    }
    let mut m = 0u32;
    for (l, c) in cond.iter().enumerate() {
        m |= u32::from(*c != 0) << l;
    }
    m & mask
}

/// A pointer register's new value, `delta` elements on (the bits of an integer register of
/// any type: two's complement makes adding them the same as adding the value). The offset
/// field wraps in its width, as [`crate::memory::Ptr::encode`] wraps it; a null pointer
/// stays null.
#[inline(always)]
pub(super) fn ptr_add(bits: u64, delta: u64) -> u64 {
    const FIELD: [u64; 4] = [0, (1 << 40) - 1, (1 << 20) - 1, (1 << 24) - 1];
    let tag = (bits >> 62) as usize;
    let m = FIELD[tag];
    if tag == 0 { 0 } else { (bits & !m) | (bits.wrapping_add(delta) & m) }
}

/// `bits + delta` elements, bounded to the `len` elements of `size` bytes from there (a
/// pipeline slot, [`crate::code::Op::PtrSlot`]): a shared pointer becomes one to those
/// bytes alone, which must lie inside its region; other pointers are only offset.
pub(super) fn ptr_slot(bits: u64, delta: u64, len: u64, size: u64) -> Result<u64, String> {
    let p = Ptr::decode(ptr_add(bits, delta));
    if p.space != Space::Shared {
        return Ok(p.encode());
    }
    let (start, end) = (i128::from(p.offset), i128::from(p.offset) + i128::from(len));
    if start < 0 || end * i128::from(size) > i128::from(p.b) {
        return Err(format!(
            "the slot, elements {start} to {} of its ring, is outside the ring's {} elements",
            end - 1,
            p.b / size
        ));
    }
    Ok(Ptr { space: Space::Shared, a: p.a + start as u64 * size, b: len * size, offset: 0 }.encode())
}

/// Where the lanes of an access resolved: one global buffer (element indices) or shared
/// memory (byte addresses).
pub(super) enum Place<'s> {
    /// The buffer, and its index among the launch's buffers.
    Global(&'s Buffer, usize),
    Shared,
}

impl Place<'_> {
    /// The buffer's index for race records; `None` for shared memory.
    pub(super) fn buffer_index(&self) -> Option<usize> {
        match self {
            Place::Global(_, b) => Some(*b),
            Place::Shared => None,
        }
    }
}

/// Resolves, for the lanes of `mask`, pointer lanes `ptrs` plus index lanes `idx` (of type
/// `index_ty`) to `count` consecutive elements of `size` bytes each, when every lane points
/// into the same global buffer or every lane into shared memory, all elements lie inside
/// the allocation, and the first byte is a multiple of `align` (1 for no alignment). The
/// first element's index (global) or byte address (shared) per lane; `None` when a lane
/// needs the general path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve<'s>(
    s: &'s Shared<'_>,
    shared_len: usize,
    (ptrs, idx, index_ty): (&[u64; 32], &[u64; 32], Scalar),
    mask: u32,
    size: u64,
    count: u64,
    align: u64,
) -> Option<(Place<'s>, [u64; 32])> {
    if mask == 0 || count == 0 {
        return None;
    }
    let first = ptrs[mask.trailing_zeros() as usize];
    // An unsigned index at or past 2^63 is out of every allocation; as `i64` it would
    // look negative and could come back into range with the pointer's offset.
    let unsigned64 = !index_ty.is_signed_int();
    let mut at = [0u64; 32];
    let mut ok = true;
    match first >> 62 {
        1 => {
            let region = first >> 40;
            let buf = s.buffers.get((region & ((1 << 22) - 1)) as usize).copied()?;
            let n = buf.len() as i64 - count as i64;
            // The whole warp through one pointer: its offset decoded once.
            if mask == FULL && uniform_index(ptrs).is_some() {
                let off = ((first << 24) as i64) >> 24;
                for l in 0..32 {
                    let i = idx[l] as i64;
                    let e = off.wrapping_add(i);
                    ok &= !(unsigned64 && i < 0) && (0..=n).contains(&e);
                    ok &= align == 1 || (e as u64).wrapping_mul(size).is_multiple_of(align);
                    at[l] = e as u64;
                }
                return ok.then_some((Place::Global(buf, (region & ((1 << 22) - 1)) as usize), at));
            }
            for l in lanes_of(mask) {
                let p = ptrs[l];
                let off = ((p << 24) as i64) >> 24;
                let i = idx[l] as i64;
                let e = off.wrapping_add(i);
                ok &= p >> 40 == region && !(unsigned64 && i < 0) && (0..=n).contains(&e);
                ok &= align == 1 || (e as u64).wrapping_mul(size).is_multiple_of(align);
                at[l] = e as u64;
            }
            ok.then_some((Place::Global(buf, (region & ((1 << 22) - 1)) as usize), at))
        }
        // The whole warp through one pointer (the common case: the base of a shared array
        // plus per-lane indices): the pointer's fields are decoded once, with the same
        // results as decoding them in every lane.
        2 if mask == FULL && uniform_index(ptrs).is_some() => {
            let base = (first >> 40) & ((1 << 22) - 1);
            let n = (((first >> 20) & ((1 << 20) - 1)) / size) as i64 - count as i64;
            let off = ((first << 44) as i64) >> 44;
            for l in 0..32 {
                let i = idx[l] as i64;
                let e = off.wrapping_add(i);
                let addr = base.wrapping_add((e as u64).wrapping_mul(size));
                ok &= !(unsigned64 && i < 0) && (0..=n).contains(&e);
                ok &= (addr as usize).checked_add((size * count) as usize).is_some_and(|end| end <= shared_len);
                ok &= align == 1 || addr.is_multiple_of(align);
                at[l] = addr;
            }
            ok.then_some((Place::Shared, at))
        }
        2 => {
            for l in lanes_of(mask) {
                let p = ptrs[l];
                let base = (p >> 40) & ((1 << 22) - 1);
                let n = (((p >> 20) & ((1 << 20) - 1)) / size) as i64 - count as i64;
                let off = ((p << 44) as i64) >> 44;
                let i = idx[l] as i64;
                let e = off.wrapping_add(i);
                let addr = base.wrapping_add((e as u64).wrapping_mul(size));
                ok &= p >> 62 == 2 && !(unsigned64 && i < 0) && (0..=n).contains(&e);
                // `addr` wraps for an element far out of range (the lane is then refused
                // above); its end must not overflow on the way to the same answer.
                ok &= (addr as usize).checked_add((size * count) as usize).is_some_and(|end| end <= shared_len);
                ok &= align == 1 || addr.is_multiple_of(align);
                at[l] = addr;
            }
            ok.then_some((Place::Shared, at))
        }
        _ => None,
    }
}

/// For the lanes of `mask`, the local array every lane's pointer in `ptrs` points into (its
/// frame and its index in the frame), when they all point into the same one, and each
/// lane's element index with `idx` (of type `index_ty`) added; `None` otherwise. The
/// caller checks the indices against the array's length.
#[inline(always)]
pub(super) fn local_place(
    (ptrs, idx, index_ty): (&[u64; 32], &[u64; 32], Scalar),
    mask: u32,
) -> Option<(u32, u32, [u64; 32])> {
    if mask == 0 {
        return None;
    }
    let first = ptrs[mask.trailing_zeros() as usize];
    if first >> 62 != 3 {
        return None;
    }
    let region = first >> 24;
    let unsigned64 = !index_ty.is_signed_int();
    let mut at = [0u64; 32];
    let mut ok = true;
    for l in lanes_of(mask) {
        let p = ptrs[l];
        let off = ((p << 40) as i64) >> 40;
        let i = idx[l] as i64;
        ok &= p >> 24 == region && !(unsigned64 && i < 0);
        // A negative element is huge as `u64`: the caller's bounds check rejects it.
        at[l] = off.wrapping_add(i) as u64;
    }
    let frame = ((first >> 40) & ((1 << 22) - 1)) as u32;
    let array = ((first >> 24) & ((1 << 16) - 1)) as u32;
    ok.then_some((frame, array, at))
}

/// Element `i` of a global buffer as register bits (what `Buffer::load` gives), with the
/// match on the storage outside the lane loop.
#[inline(always)]
pub(super) fn load_global(buf: &Buffer, mask: u32, at: &[u64; 32], step: u64, out: &mut [u64; 32]) {
    let elem = buf.elem;
    match &buf.data {
        Storage::B4(v) => {
            for l in lanes_of(mask) {
                out[l] = value::norm(elem, u64::from(v[(at[l] + step) as usize].load(Relaxed)));
            }
        }
        Storage::B8(v) => {
            for l in lanes_of(mask) {
                out[l] = v[(at[l] + step) as usize].load(Relaxed);
            }
        }
        _ => {
            for l in lanes_of(mask) {
                out[l] = buf.load((at[l] + step) as usize);
            }
        }
    }
}

/// Stores the lanes of `mask` of `vals` into a global buffer (what `Buffer::store` does).
#[inline(always)]
pub(super) fn store_global(buf: &Buffer, mask: u32, at: &[u64; 32], step: u64, vals: &[u64; 32]) {
    match &buf.data {
        Storage::B4(v) => {
            for l in lanes_of(mask) {
                v[(at[l] + step) as usize].store(vals[l] as u32, Relaxed);
            }
        }
        _ => {
            for l in lanes_of(mask) {
                buf.store((at[l] + step) as usize, vals[l]);
            }
        }
    }
}

/// Reads `ty` values at byte addresses `at + off` of shared memory (what `read_loc` does).
#[inline(always)]
pub(super) fn load_shared(sh: &[u8], ty: Scalar, mask: u32, at: &[u64; 32], off: u64, out: &mut [u64; 32]) {
    macro_rules! read {
        ($n:literal, $t:ty) => {
            for l in lanes_of(mask) {
                let a = (at[l] + off) as usize;
                let b: [u8; $n] = sh[a..a + $n].try_into().expect("in bounds");
                out[l] = value::norm(ty, u64::from(<$t>::from_le_bytes(b)));
            }
        };
    }
    match ty.size() {
        1 => read!(1, u8),
        2 => read!(2, u16),
        4 => read!(4, u32),
        _ => read!(8, u64),
    }
}

/// Writes `ty` values at byte addresses `at + off` of shared memory (what `write_loc` does).
#[inline(always)]
pub(super) fn store_shared(sh: &mut [u8], ty: Scalar, mask: u32, at: &[u64; 32], off: u64, vals: &[u64; 32]) {
    macro_rules! write {
        ($n:literal, $t:ty) => {
            for l in lanes_of(mask) {
                let a = (at[l] + off) as usize;
                sh[a..a + $n].copy_from_slice(&(vals[l] as $t).to_le_bytes());
            }
        };
    }
    match ty.size() {
        1 => write!(1, u8),
        2 => write!(2, u16),
        4 => write!(4, u32),
        _ => write!(8, u64),
    }
}

/// Writes the low `size` bytes of `bits` at byte `at` of shared memory.
#[inline(always)]
pub(super) fn write_shared(sh: &mut [u8], size: u64, at: usize, bits: u64) {
    match size {
        1 => sh[at] = bits as u8,
        2 => sh[at..at + 2].copy_from_slice(&(bits as u16).to_le_bytes()),
        4 => sh[at..at + 4].copy_from_slice(&(bits as u32).to_le_bytes()),
        _ => sh[at..at + 8].copy_from_slice(&bits.to_le_bytes()),
    }
}

/// The index lanes of a local-array access when every lane of `mask` is inside the array
/// of `n` elements: `Some(Ok(i))` when they all index element `i`, `Some(Err(indices))`
/// otherwise; `None` when a lane is out of bounds (the general path reports it).
#[inline(always)]
pub(super) fn local_index((idx, uniform): (&[u64; 32], bool), mask: u32, n: usize) -> Option<Result<usize, [u64; 32]>> {
    if mask == 0 {
        return None;
    }
    // A register known to hold one value (`Regs::uniform`) needs no look at its lanes.
    if uniform {
        return (idx[0] < n as u64).then_some(Ok(idx[0] as usize));
    }
    if mask == FULL
        && let Some(i) = uniform_index(idx)
    {
        return (i < n as u64).then_some(Ok(i as usize));
    }
    let first = idx[mask.trailing_zeros() as usize];
    // As `u64`, a negative index (of a signed type, sign-extended) is huge: one comparison
    // checks both ends, for every index type.
    let mut ok = true;
    let mut same = true;
    for l in lanes_of(mask) {
        ok &= idx[l] < n as u64;
        same &= idx[l] == first;
    }
    if !ok {
        None
    } else if same {
        Some(Ok(first as usize))
    } else {
        Some(Err(*idx))
    }
}

/// The value all 32 lanes of `idx` hold, if they hold one. A straight loop of 64-bit
/// exclusive ors (it vectorises; walking the lanes of a mask one by one does not).
#[inline(always)]
fn uniform_index(idx: &[u64; 32]) -> Option<u64> {
    let first = idx[0];
    let mut diff = 0u64;
    for i in idx {
        diff |= i ^ first;
    }
    (diff == 0).then_some(first)
}

/// The element index of a local-array access by all 32 lanes when they all index the same
/// element of an array of `n` elements (as in [`local_index`], a negative index of a
/// signed type is a huge `u64`, so one comparison checks both ends).
#[inline(always)]
fn uniform_row(idx: &[u64; 32], n: usize) -> Option<usize> {
    uniform_index(idx).filter(|&i| i < n as u64).map(|i| i as usize)
}

/// `a * b + c` rounded once in each lane of `mask`, on `float` or `double` lanes: the
/// `Fma` op's arithmetic, shared with [`local_fma`] so the two cannot differ.
#[inline(always)]
pub(super) fn fma_lanes(ty: Scalar, (x, y, z): (&[u64; 32], &[u64; 32], &[u64; 32]), mask: u32) -> [u64; 32] {
    let mut out = [0u64; 32];
    if ty == Scalar::F32 {
        out = crate::ops::fma_f32_lanes(x, y, z);
    } else {
        let f = f64::from_bits;
        for l in lanes_of(mask) {
            out[l] = crate::value::f64_result(f(x[l]).mul_add(f(y[l]), f(z[l])));
        }
    }
    out
}

/// Runs a [`LocalFma`] for all 32 lanes when every index it uses is the same in all lanes
/// and in bounds: its loads, its fma and its store, in that order, exactly as the ops it
/// covers would run them one by one on a full fragment. `false`, having written nothing,
/// otherwise (the caller then runs the first load alone, which finds any lane to report).
/// Checking every index first is sound because no register the group writes is an index
/// (the invariant of [`LocalFma`]).
#[inline(always)]
pub(super) fn local_fma(regs: &mut Regs, locals: &mut [Vec<u64>], fu: &LocalFma) -> bool {
    // A register known to hold one value needs no look at its lanes.
    #[inline(always)]
    fn row_of(regs: &Regs, index: R, n: usize) -> Option<usize> {
        if regs.uniform(index) {
            let i = regs.src(index)[0];
            (i < n as u64).then_some(i as usize)
        } else {
            uniform_row(regs.src(index), n)
        }
    }
    let mut rows = [0usize; FUSED_LOADS];
    for (k, &(_, local, index)) in fu.loads.iter().enumerate() {
        let Some(arr) = locals.get(local as usize) else { return false };
        let (Some(i), Some(slot)) = (row_of(regs, index, arr.len() / 32), rows.get_mut(k)) else {
            return false;
        };
        *slot = i;
    }
    let (local, index, value) = fu.store;
    // The store of `acc[i] += ...` uses the index register of a load of the same array: that
    // check has been done (no register of the group is an index, so it still holds).
    let checked = fu.loads.iter().zip(rows).find(|((_, l, i), _)| (*l, *i) == (local, index)).map(|(_, row)| row);
    let at = match checked {
        Some(row) => row,
        None => {
            let Some(arr) = locals.get(local as usize) else { return false };
            let Some(at) = row_of(regs, index, arr.len() / 32) else { return false };
            at
        }
    };
    for (k, &(d, local, _)) in fu.loads.iter().enumerate() {
        let i = rows[k];
        let row: &[u64; 32] = locals[local as usize][i * 32..i * 32 + 32].try_into().expect("32 lanes");
        regs.put(d, FULL, row);
    }
    let (d, ty, [a, b, c]) = fu.fma;
    let out = fma_lanes(ty, (regs.src(a), regs.src(b), regs.src(c)), FULL);
    regs.put(d, FULL, &out);
    let row: &mut [u64; 32] = (&mut locals[local as usize][at * 32..at * 32 + 32]).try_into().expect("32 lanes");
    copy32(row, regs.src(value));
    true
}

/// A fast 64-bit hash of a sequence of words (the multiply-rotate step of rustc's `FxHasher`).
/// Each step is a bijection of the running state given the word, so two sequences that
/// differ in one word always hash differently.
#[derive(Clone, Copy, Default)]
pub(crate) struct WordHash(u64);

impl WordHash {
    #[inline(always)]
    pub(super) fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    pub(super) fn finish(self) -> u64 {
        self.0
    }
}

/// The simulator's maps keyed by its own small values (element positions, moments), which
/// the race checks touch for every access: hashed with [`WordHash`] instead of SipHash,
/// whose resistance to chosen keys buys nothing here and which cost 7% of kernel 36's
/// checked run in hashing alone.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<WordHash>>;

impl std::hash::Hasher for WordHash {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    #[inline]
    fn write_u16(&mut self, v: u16) {
        self.add(u64::from(v));
    }

    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

//! A wgmma's tiles as the tensor cores see them: where element (row, k) of A or B lies in
//! shared memory (the canonical interleaved layout, or rows of a swizzle span), and the
//! elements a warp's lanes need, read once for the warp.
//!
//! Each lane of a warpgroup needs two rows of A and `n / 4` columns of B (its fragment);
//! the lanes of one warp together need 16 rows of A and every column of B, so a lane-by-lane
//! read takes each B element 8 times per warp and each A element 4 times. When the lanes of
//! a warp pass the same operands (as the hardware requires: the unit issues one
//! instruction, which safe code guarantees and unsafe code asserts, docs/simulator.md), the
//! warp reads them once ([`BlockSim::wgmma_warp_tiles`]) and each lane takes its fragment
//! from there. Anything out of the ordinary (operands that differ between lanes, a tile
//! out of bounds, a misplaced start) leaves the read to the lane-by-lane path, which reports
//! it where it always has; both paths give each lane the same values in the same order, so
//! results, race records and reports do not depend on which one ran.

use super::block::{BlockSim, Frame, Loc, lanes_of};
use crate::code::{R, WgmmaLayout};
use crate::memory::{Ptr, Space};
use crate::report::ReportKind;
use crate::value::{self, to_i128};
use prism_types::ty::Scalar;

/// Where a swizzled tile lies: the shared byte address of its start (the swizzle applies
/// to addresses from there) and that of the operand pointer's element 0 (element indices
/// count from it), and the swizzle span; `None` for the canonical interleaved layout.
pub(super) type TileAt = Option<((i64, i64), u32)>;

/// The largest tile start, in bytes either way, that [`place`] computes with: its `i64`
/// arithmetic adds a tile's row offsets (some kilobytes) to the start and subtracts the
/// operand's address (below 2^24), and would wrap beyond this (an index of 2^63 bf16s, 2^64 bytes, once wrapped the start back onto the
/// tile's own pointer: an out-of-bounds tile read in bounds with no report). Starts nearer
/// than this, in shared memory or not, are bounds-checked element by element, as before.
const MAX_ADDR: i128 = (1 << 63) - (1 << 32);

/// The element index, counted from the operand's pointer, of (row, k) of a K-major tile of
/// `esz`-byte elements laid out as `at` says. Canonical layout: core matrices of 8 rows of
/// 16 bytes, 128 bytes apart along K and 256 along M or N. Swizzled: element (row, k) is at
/// shared address S + (row / 8) 8 span + (row % 8) span + k esz from the tile's start S,
/// moved by the hardware's swizzle of that span. `i64`, not `i128`: `i128` division is a
/// library call, which cost a twentieth of a wgmma gemm's checked run.
#[inline]
pub(super) fn place(at: TileAt, esz: usize, row: usize, k: usize) -> i128 {
    match at {
        None => (((row / 8) * 256 + (k * esz / 16) * 128 + (row % 8) * 16 + (k * esz) % 16) / esz) as i128,
        Some(((start, base), span)) => {
            let span = i64::from(span);
            let row = row as i64;
            let addr = start + (row / 8) * 8 * span + (row % 8) * span + (esz * k) as i64;
            let moved = prism_types::ty::swizzle_offset(addr as u64, span as u32) as i64;
            i128::from((moved - base) / esz as i64)
        }
    }
}

/// Where the swizzled tile that operand pointer `bits` at element `index` starts, as
/// [`TileAt`] wants it, or what is wrong with it: not in shared memory, or not on a
/// 16-byte boundary within the first row of a swizzle pattern (the hardware would need a
/// base offset there; `misaligned-access`), or outside shared memory altogether
/// (`out-of-bounds`: an index so large that the start would wrap).
pub(super) fn swizzled_start(
    bits: u64,
    index: i128,
    esz: usize,
    span: u32,
) -> Result<(i64, i64), (ReportKind, String)> {
    let ptr = Ptr::decode(bits);
    let size = esz as i128;
    let base = i128::from(ptr.a) + i128::from(ptr.offset) * size;
    let start = base + index * size;
    let repeat = 8 * i128::from(span);
    // Say which requirement fails: a start on a 16-byte boundary may still lie past the
    // pattern's first row (review R49 found `a_s[-16]` reported as off the boundary).
    let why = if ptr.space != Space::Shared {
        Some("not in shared memory".to_string())
    } else if start.rem_euclid(16) != 0 {
        Some("not on a 16-byte boundary".to_string())
    } else if start.rem_euclid(repeat) >= i128::from(span) {
        Some(format!(
            "byte {} of its {repeat}-byte swizzle pattern, past the pattern's first {span}-byte row",
            start.rem_euclid(repeat)
        ))
    } else {
        None
    };
    if let Some(why) = why {
        return Err((
            ReportKind::Misaligned,
            format!(
                "a swizzled tile's start is at byte {start} of shared memory, {why}: the tile must start on a 16-byte boundary within the first {span}-byte row of a {repeat}-byte swizzle pattern"
            ),
        ));
    }
    // A shared pointer's base and offset are small (22 and 20 bits), so only the index
    // can take the start far away.
    if !(-MAX_ADDR..MAX_ADDR).contains(&start) {
        return Err((
            ReportKind::OutOfBounds,
            format!("a swizzled tile's start is at byte {start}, outside shared memory"),
        ));
    }
    Ok((start as i64, base as i64))
}

/// Why an interleaved tile through operand pointer `bits` cannot be read, if it cannot:
/// its descriptor holds the start address in 16-byte units, so a start between two
/// boundaries would be read from the boundary below it.
pub(super) fn interleaved_start(bits: u64, esz: usize, which: &str) -> Option<String> {
    let ptr = Ptr::decode(bits);
    let start = i128::from(ptr.a) + i128::from(ptr.offset) * esz as i128;
    (ptr.space != Space::Shared || start.rem_euclid(16) != 0).then(|| {
        format!(
            "wgmma {which}: the tile starts at byte {start} of shared memory, not on a 16-byte boundary (its descriptor holds the address in 16-byte units)"
        )
    })
}

/// One element of a tile as a lane reads it: its shared byte, its bits (normalised to the
/// element type, as a load reads them) and the value the tensor cores multiply (a tf32
/// operand truncated, a 16-bit one widened), exactly in `f64`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TileElem {
    pub byte: u32,
    pub bits: u32,
    pub val: f64,
}

/// The value the tensor cores multiply for an element of type `elem` with bits `v`.
#[inline]
pub(super) fn operand_value(elem: Scalar, v: u64) -> f64 {
    f64::from(match elem {
        Scalar::F32 => value::truncate_tf32(f32::from_bits(v as u32)),
        _ => value::to_f64(elem, v) as f32,
    })
}

/// A warp's view of a wgmma's tiles: `a[r]` is row `16 (w % 4) + r` of A (so a lane `l`
/// takes rows `l / 4` and `l / 4 + 8`), `b[c]` column `c` of B (a lane takes
/// `8 j + 2 (l % 4) + {0, 1}` for each `j < n / 8`), `K` elements each (the first 8 or 16
/// used). Filled for the whole warp by [`BlockSim::wgmma_warp_tiles`], or lane by lane
/// with only that lane's rows and columns.
#[derive(Debug)]
pub(super) struct Tiles {
    pub a: [[TileElem; 16]; 16],
    pub b: Vec<[TileElem; 16]>,
}

impl Tiles {
    pub fn new(n: usize) -> Self {
        Tiles { a: [[TileElem::default(); 16]; 16], b: vec![[TileElem::default(); 16]; n] }
    }
}

/// The bits of the `elem` at shared byte `byte`, as a load reads them.
#[inline]
fn shared_bits(sh: &[u8], byte: usize, elem: Scalar) -> u64 {
    let raw = match elem.size() {
        2 => u64::from(u16::from_le_bytes([sh[byte], sh[byte + 1]])),
        _ => u64::from(u32::from_le_bytes(sh[byte..byte + 4].try_into().expect("4 bytes"))),
    };
    value::norm(elem, raw)
}

/// [`WarpRead::elems`]: element `k` of row `row` of A (`b` false) or of column `row` of B.
pub(super) struct Elems<'a> {
    read: &'a WarpRead,
    /// The elements of a row or column: 32 bytes of them.
    kk: usize,
    b: bool,
    row: usize,
    k: usize,
}

impl<'a> Iterator for Elems<'a> {
    type Item = (&'a TileElem, u32, u32);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let rows: &'a [[TileElem; 16]] = if self.b { &self.read.tiles.b } else { &self.read.tiles.a };
            if let Some(x) = rows.get(self.row) {
                let e = &x[self.k];
                let r = self.row;
                let lanes = if self.b { 0x1111_1111 << (r % 8 / 2) } else { 0xF << (4 * (r % 8)) };
                self.k += 1;
                if self.k == self.kk {
                    (self.k, self.row) = (0, self.row + 1);
                }
                return Some((e, lanes, self.read.access[usize::from(self.b)]));
            }
            if self.b {
                return None;
            }
            (self.b, self.row, self.k) = (true, 0, 0);
        }
    }
}

/// The tiles a warp read for one wgmma, kept by each of its lanes until the wait that
/// completes it, where the elements are compared with shared memory then ([`Self::changed`],
/// once for the warp, and lane by lane only when something changed, to report the lane's
/// first changed element as the lane-by-lane path would).
#[derive(Debug)]
pub struct WarpRead {
    pub tiles: Tiles,
    pub elem: Scalar,
    /// The access sites of A's and B's reads.
    pub access: [u32; 2],
}

impl WarpRead {
    /// Lane `l`'s reads in the order it makes them (its two rows of A, then its columns of
    /// B), each with its access site.
    pub fn lane(&self, l: usize) -> impl Iterator<Item = (&TileElem, u32)> {
        let kk = 32 / self.elem.size() as usize;
        let rows = (0..2).map(move |h| (&self.tiles.a[l / 4 + 8 * h], self.access[0]));
        let cols = (0..self.tiles.b.len() / 4).map(move |q| (&self.tiles.b[lane_col(l, q)], self.access[1]));
        rows.chain(cols).flat_map(move |(x, access)| x[..kk].iter().map(move |e| (e, access)))
    }

    /// Every element the warp read, once, with the lanes that read it (a mask over the
    /// warp: row `r` of A is lanes `4 (r % 8) ..= 4 (r % 8) + 3`, column `c` of B the lanes
    /// `l` with `l % 4 = (c % 8) / 2`) and its access site: A's rows, then B's columns.
    ///
    /// A plain state machine rather than chained `flat_map`s: the checked run of a wgmma
    /// gemm walks every element of every warp read twice (at the issue and at the wait),
    /// and the adapters' `next` was a sixteenth of it.
    pub fn elems(&self) -> Elems<'_> {
        Elems { read: self, kk: 32 / self.elem.size() as usize, b: false, row: 0, k: 0 }
    }

    /// How many elements [`Self::elems`] walks.
    pub fn elem_count(&self) -> usize {
        (self.tiles.a.len() + self.tiles.b.len()) * (32 / self.elem.size() as usize)
    }

    /// The byte range `[lo, hi)` of A's elements and of B's.
    pub fn ranges(&self) -> [(usize, usize); 2] {
        let size = self.elem.size() as usize;
        let kk = 32 / size;
        let range = |xs: &[[TileElem; 16]]| {
            xs.iter()
                .flat_map(|x| &x[..kk])
                .fold((usize::MAX, 0), |(lo, hi), e| (lo.min(e.byte as usize), hi.max(e.byte as usize + size)))
        };
        [range(&self.tiles.a), range(&self.tiles.b)]
    }

    /// Whether some byte may be read both as A and as B (then the order of each lane's
    /// reads decides which site a word's flight names last, and only the lane-by-lane path
    /// keeps it).
    pub fn tiles_overlap(&self) -> bool {
        let [(a0, a1), (b0, b1)] = self.ranges();
        a0 < b1 && b0 < a1
    }

    /// Lane `l`'s reads listed as [`BlockSim::race_reads`] takes them.
    pub fn lane_list(&self, l: usize) -> Vec<(Loc, u64, u32)> {
        self.lane(l).map(|(e, access)| (Loc::Shared(e.byte as usize), u64::from(e.bits), access)).collect()
    }

    /// Whether any element changed in shared memory `sh` since it was read.
    pub fn changed(&self, sh: &[u8]) -> bool {
        let kk = 32 / self.elem.size() as usize;
        self.tiles
            .a
            .iter()
            .chain(&self.tiles.b)
            .any(|x| x[..kk].iter().any(|e| shared_bits(sh, e.byte as usize, self.elem) != u64::from(e.bits)))
    }

    /// The access site of the first of lane `l`'s reads that changed in `sh`, if any.
    pub fn lane_changed(&self, sh: &[u8], l: usize) -> Option<u32> {
        self.lane(l).find(|(e, _)| shared_bits(sh, e.byte as usize, self.elem) != u64::from(e.bits)).map(|(_, a)| a)
    }
}

/// The column of B that lane `l` takes as its `q`-th (`q < n / 4`).
#[inline]
pub(super) fn lane_col(l: usize, q: usize) -> usize {
    8 * (q / 2) + 2 * (l % 4) + q % 2
}

impl BlockSim<'_> {
    /// The rows of A that warp `w` of its warpgroup (`wi`) needs and every column of B of
    /// an `n`-wide wgmma, read once from shared memory, when every lane of `mask` passes
    /// the same operand pointers (and tile indices) and every element lies in bounds;
    /// `None` otherwise, for the lane-by-lane path to read (and report). Reads nothing
    /// into the race records: the caller records each lane's reads as the lane-by-lane path
    /// does.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn wgmma_warp_tiles(
        &mut self,
        fr: &Frame,
        mask: u32,
        (a, b): (R, R),
        layout: WgmmaLayout,
        elem: Scalar,
        n: usize,
        wi: usize,
    ) -> Option<Tiles> {
        let l0 = lanes_of(mask).next()?;
        let same = |r: R| {
            let x = fr.regs[r as usize * 32 + l0];
            lanes_of(mask).all(|l| fr.regs[r as usize * 32 + l] == x)
        };
        let esz = elem.size() as usize;
        let (a_at, b_at): (TileAt, TileAt) = match layout {
            WgmmaLayout::Interleaved => {
                if !same(a) || !same(b) {
                    return None;
                }
                if interleaved_start(fr.regs[a as usize * 32 + l0], esz, "A").is_some()
                    || interleaved_start(fr.regs[b as usize * 32 + l0], esz, "B").is_some()
                {
                    return None;
                }
                (None, None)
            }
            WgmmaLayout::Swizzled { span, a_index, a_ty, b_index, b_ty } => {
                if !same(a) || !same(b) || !same(a_index) || !same(b_index) {
                    return None;
                }
                let at = |p: R, i: R, ty: Scalar| {
                    swizzled_start(fr.regs[p as usize * 32 + l0], to_i128(ty, fr.regs[i as usize * 32 + l0]), esz, span)
                        .ok()
                        .map(|x| Some((x, span)))
                };
                (at(a, a_index, a_ty)?, at(b, b_index, b_ty)?)
            }
        };
        let kk = 32 / esz;
        let mut t = self.spare_tiles.pop().unwrap_or_else(|| Tiles::new(n));
        t.b.resize(n, [TileElem::default(); 16]);
        let read = |p: R, at: TileAt, row: usize, out: &mut [TileElem; 16]| -> Option<()> {
            let ptr = Ptr::decode(fr.regs[p as usize * 32 + l0]);
            let len = (ptr.b / esz as u64) as i128;
            for (k, x) in out.iter_mut().enumerate().take(kk) {
                let e = i128::from(ptr.offset) + place(at, esz, row, k);
                if !(0..len).contains(&e) {
                    return None;
                }
                let byte = (ptr.a + e as u64 * esz as u64) as usize;
                let bits = shared_bits(&self.shared, byte, elem);
                *x = TileElem { byte: byte as u32, bits: bits as u32, val: operand_value(elem, bits) };
            }
            Some(())
        };
        let all = t.a.iter_mut().enumerate().all(|(r, row)| read(a, a_at, 16 * wi + r, row).is_some())
            && t.b.iter_mut().enumerate().all(|(c, col)| read(b, b_at, c, col).is_some());
        if all {
            Some(t)
        } else {
            self.spare_tiles.push(t);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`WarpRead::elems`] is A's rows, then B's columns, each row's first 32 bytes of
    /// elements, with the lanes that read it: the chained iterators it replaced.
    #[test]
    fn elems_walks_rows_then_columns() {
        for (elem, n) in [(Scalar::F32, 8), (Scalar::F32, 256), (Scalar::BF16, 64), (Scalar::F16, 0)] {
            let mut tiles = Tiles::new(n);
            let mut byte = 0;
            for x in tiles.a.iter_mut().chain(tiles.b.iter_mut()) {
                for e in x.iter_mut() {
                    e.byte = byte;
                    byte += 1;
                }
            }
            let read = WarpRead { tiles, elem, access: [3, 7] };
            let kk = 32 / elem.size() as usize;
            let rows = read.tiles.a.iter().enumerate().map(|(r, x)| (x, 0xF << (4 * (r % 8)), 3));
            let cols = read.tiles.b.iter().enumerate().map(|(c, x)| (x, 0x1111_1111 << (c % 8 / 2), 7));
            let want: Vec<(u32, u32, u32)> = rows
                .chain(cols)
                .flat_map(|(x, lanes, access)| x[..kk].iter().map(move |e| (e.byte, lanes, access)))
                .collect();
            let got: Vec<(u32, u32, u32)> = read.elems().map(|(e, lanes, access)| (e.byte, lanes, access)).collect();
            assert_eq!(got.len(), (16 + n) * kk);
            assert_eq!(got.len(), read.elem_count());
            assert_eq!(got, want, "{elem:?}, {n} columns");
        }
    }
}

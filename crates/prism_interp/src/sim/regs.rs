//! A frame's register file, and which of its registers are known to hold one value in all
//! 32 lanes.
//!
//! Most of a kernel's integer work is loop counters, constants and index arithmetic whose
//! lanes all hold the same value (77% of 06's binary ops, 96% of 36's, every loop
//! condition of both). An op whose operands are known uniform computes one lane and fills
//! the register, instead of computing 32.
//!
//! Invariant: when `uni[r]` holds, the 32 lanes of register `r` are equal. Every write
//! keeps it by construction: the lanes are private; writes of one lane (`IndexMut`) and of
//! a whole register (`dst`, `put`, `dst_src2`) clear the register's flag; there is no
//! mutable view of the whole file; only a new file (all zeros) and `put_uniform` of one
//! value into all 32 lanes set a flag. The flags are a cache of a property of the lanes,
//! never a value: clearing one only makes an op take its 32-lane path. With `track` off
//! (the tests' plain modules) no flag is ever set, so those runs take the 32-lane paths
//! everywhere, and the tests compare the two.

use super::block::FULL;
use super::block::lanes_of;
use crate::code::R;
use std::ops::{Deref, Index, IndexMut};

/// The registers of a frame: `lanes[r][lane]`, read as one slice `[r * 32 + lane]`.
#[derive(Debug)]
pub struct Regs {
    lanes: Vec<[u64; 32]>,
    uni: Vec<bool>,
    track: bool,
}

impl Regs {
    /// `n` registers, all lanes zero (so all uniform, when tracked).
    pub fn new(n: usize, track: bool) -> Regs {
        Regs { lanes: vec![[0; 32]; n], uni: vec![track; n], track }
    }

    /// This file as `Regs::new(n, track)` would make it, reusing its memory.
    pub fn reset(&mut self, n: usize, track: bool) {
        self.lanes.resize(n, [0; 32]);
        // One `memset` over lanes that are likely still in the cache.
        self.lanes.as_flattened_mut().fill(0);
        self.uni.clear();
        self.uni.resize(n, track);
        self.track = track;
    }

    /// Whether the lanes of register `r` are known to be equal.
    #[inline(always)]
    pub fn uniform(&self, r: R) -> bool {
        self.uni[r as usize]
    }

    /// The lanes of register `r`.
    #[inline(always)]
    pub fn src(&self, r: R) -> &[u64; 32] {
        &self.lanes[r as usize]
    }

    /// The lanes of register `r`, to write (no longer known uniform).
    #[inline(always)]
    pub fn dst(&mut self, r: R) -> &mut [u64; 32] {
        self.uni[r as usize] = false;
        &mut self.lanes[r as usize]
    }

    /// Writes the lanes of `mask` of `out` into register `r`.
    #[inline(always)]
    pub fn put(&mut self, r: R, mask: u32, out: &[u64; 32]) {
        super::lanes::put_lanes(self.dst(r), mask, out);
    }

    /// Writes `v` into the lanes of `mask` of register `r`: with the whole warp, the
    /// register is then uniform.
    #[inline(always)]
    pub fn put_uniform(&mut self, r: R, mask: u32, v: u64) {
        // A register known to hold `v` in every lane already holds what the write would
        // leave (a loop's constants, rewritten each trip): nothing to write.
        if self.uni[r as usize] && self.lanes[r as usize][0] == v {
            return;
        }
        let d = self.dst(r);
        if mask == FULL {
            *d = [v; 32];
            self.uni[r as usize] = self.track;
        } else {
            for l in lanes_of(mask) {
                d[l] = v;
            }
        }
    }

    /// Register `d` to write (no longer known uniform) and registers `a` and `b` to read,
    /// when `d` is neither of them (`None` otherwise).
    #[inline(always)]
    pub fn dst_src2(&mut self, d: R, a: R, b: R) -> Option<(&mut [u64; 32], &[u64; 32], &[u64; 32])> {
        if d == a || d == b {
            return None;
        }
        self.uni[d as usize] = false;
        let (below, rest) = self.lanes.split_at_mut(d as usize);
        let (out, above) = rest.split_first_mut()?;
        let pick = |r: R| if r < d { below.get(r as usize) } else { above.get((r - d - 1) as usize) };
        Some((out, pick(a)?, pick(b)?))
    }
}

impl Deref for Regs {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        self.lanes.as_flattened()
    }
}

impl Index<usize> for Regs {
    type Output = u64;

    #[inline(always)]
    fn index(&self, i: usize) -> &u64 {
        &self.lanes[i / 32][i % 32]
    }
}

impl Index<std::ops::Range<usize>> for Regs {
    type Output = [u64];

    #[inline(always)]
    fn index(&self, i: std::ops::Range<usize>) -> &[u64] {
        &self.lanes.as_flattened()[i]
    }
}

/// One lane, to write: its register is no longer known uniform.
impl IndexMut<usize> for Regs {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut u64 {
        self.uni[i / 32] = false;
        &mut self.lanes[i / 32][i % 32]
    }
}

#[cfg(test)]
mod tests {
    use super::Regs;

    /// A reused register file is a new one: whatever the block or call before it left (other
    /// lanes written, flags cleared, more or fewer registers, the other tracking mode), a
    /// reset file holds zeros in every lane of every register and marks them as a new file
    /// does.
    #[test]
    fn a_reset_file_is_a_new_file() {
        for (before, after) in [(8, 3), (3, 8), (5, 5), (0, 4), (4, 0)] {
            for track in [false, true] {
                let mut r = Regs::new(before, !track);
                for reg in 0..before {
                    r.put(reg as u32, 0x0F0F_F0F0, &[u64::MAX; 32]);
                    r[reg * 32 + 31] = 7;
                }
                r.reset(after, track);
                let fresh = Regs::new(after, track);
                assert_eq!(&*r, &*fresh, "{before} -> {after} registers, tracking {track}");
                for reg in 0..after as u32 {
                    assert_eq!(r.uniform(reg), fresh.uniform(reg), "register {reg}");
                }
                assert_eq!(r.track, fresh.track);
            }
        }
    }
}

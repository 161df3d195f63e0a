//! Memory: global buffers shared by every block, and the pointer encoding.
//!
//! Global memory is stored in atomics with relaxed ordering, so blocks simulated on
//! different worker threads share it safely (relaxed loads and stores compile to plain
//! moves). A pointer is 64 bits: a space tag, a region, and an element offset:
//!
//! ```text
//! global: 01 | buffer (22) | element offset (40)
//! shared: 10 | byte base (22) | byte length (20) | element offset (20)
//! local:  11 | frame (22) | array (16) | element offset (24)
//! ```
//!
//! A pointer always remembers its region, so every access is bounds-checked against the
//! allocation it was derived from, not just against the address space. Offsets are two's
//! complement in their field.

use prism_types::ty::Scalar;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Storage of one global buffer, in atomics of its element size.
#[derive(Debug)]
pub enum Storage {
    /// 1-byte elements (`bool`).
    B1(Vec<AtomicU8>),
    /// 2-byte elements (`half`, `bf16`).
    B2(Vec<AtomicU16>),
    /// 4-byte elements.
    B4(Vec<AtomicU32>),
    /// 8-byte elements.
    B8(Vec<AtomicU64>),
}

/// A global buffer: the memory behind one pointer argument of a launch.
#[derive(Debug)]
pub struct Buffer {
    /// Element type.
    pub elem: Scalar,
    /// The elements.
    pub data: Storage,
}

impl Buffer {
    /// A zeroed buffer of `len` elements.
    pub fn zeroed(elem: Scalar, len: usize) -> Buffer {
        let data = match elem.size() {
            1 => Storage::B1((0..len).map(|_| AtomicU8::new(0)).collect()),
            2 => Storage::B2((0..len).map(|_| AtomicU16::new(0)).collect()),
            4 => Storage::B4((0..len).map(|_| AtomicU32::new(0)).collect()),
            _ => Storage::B8((0..len).map(|_| AtomicU64::new(0)).collect()),
        };
        Buffer { elem, data }
    }

    /// A buffer holding `values` (register bits of `elem`).
    pub fn from_bits(elem: Scalar, values: &[u64]) -> Buffer {
        // Built in one pass (as `store` truncates), not zeroed and then stored element by
        // element: inputs of 2^28 elements are what a user times the simulator with.
        let data = match elem.size() {
            1 => Storage::B1(values.iter().map(|&v| AtomicU8::new(v as u8)).collect()),
            2 => Storage::B2(values.iter().map(|&v| AtomicU16::new(v as u16)).collect()),
            4 => Storage::B4(values.iter().map(|&v| AtomicU32::new(v as u32)).collect()),
            _ => Storage::B8(values.iter().map(|&v| AtomicU64::new(v)).collect()),
        };
        Buffer { elem, data }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.data {
            Storage::B1(v) => v.len(),
            Storage::B2(v) => v.len(),
            Storage::B4(v) => v.len(),
            Storage::B8(v) => v.len(),
        }
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Loads element `i` as register bits (already normalised for its type).
    #[inline(always)]
    pub fn load(&self, i: usize) -> u64 {
        let raw = match &self.data {
            Storage::B1(v) => v[i].load(Relaxed) as u64,
            Storage::B2(v) => v[i].load(Relaxed) as u64,
            Storage::B4(v) => v[i].load(Relaxed) as u64,
            Storage::B8(v) => v[i].load(Relaxed),
        };
        crate::value::norm(self.elem, raw)
    }

    /// Stores register bits into element `i`.
    #[inline(always)]
    pub fn store(&self, i: usize, bits: u64) {
        match &self.data {
            Storage::B1(v) => v[i].store(bits as u8, Relaxed),
            Storage::B2(v) => v[i].store(bits as u16, Relaxed),
            Storage::B4(v) => v[i].store(bits as u32, Relaxed),
            Storage::B8(v) => v[i].store(bits, Relaxed),
        }
    }

    /// Atomically replaces element `i` by `f(old)`, returning the old bits.
    pub fn update(&self, i: usize, f: impl Fn(u64) -> u64) -> u64 {
        let norm = |x: u64| crate::value::norm(self.elem, x);
        match &self.data {
            Storage::B1(v) => {
                norm(v[i].fetch_update(Relaxed, Relaxed, |o| Some(f(norm(o as u64)) as u8)).expect("always Some") as u64)
            }
            Storage::B2(v) => {
                norm(v[i].fetch_update(Relaxed, Relaxed, |o| Some(f(norm(o as u64)) as u16)).expect("always Some")
                    as u64)
            }
            Storage::B4(v) => {
                norm(v[i].fetch_update(Relaxed, Relaxed, |o| Some(f(norm(o as u64)) as u32)).expect("always Some")
                    as u64)
            }
            Storage::B8(v) => norm(v[i].fetch_update(Relaxed, Relaxed, |o| Some(f(norm(o)))).expect("always Some")),
        }
    }

    /// Every element as register bits.
    pub fn to_bits(&self) -> Vec<u64> {
        (0..self.len()).map(|i| self.load(i)).collect()
    }
}

/// The address space a pointer points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Not a valid pointer (a zero register).
    Null,
    /// A global buffer.
    Global,
    /// The block's shared memory.
    Shared,
    /// A thread-local array.
    Local,
}

/// A decoded pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ptr {
    /// The space.
    pub space: Space,
    /// Global: buffer id. Shared: byte base. Local: frame id.
    pub a: u64,
    /// Shared: byte length. Local: array id. Global: unused.
    pub b: u64,
    /// Element offset from the region's start (negative offsets are kept, so a view whose
    /// offset went below zero still indexes correctly; only the final access is checked).
    pub offset: i64,
}

const OFF40: u64 = (1 << 40) - 1;
const F22: u64 = (1 << 22) - 1;
const F20: u64 = (1 << 20) - 1;
const F16: u64 = (1 << 16) - 1;
const OFF24: u64 = (1 << 24) - 1;

impl Ptr {
    /// A pointer to element `offset` of global buffer `buf`.
    pub fn global(buf: usize, offset: i64) -> Ptr {
        Ptr { space: Space::Global, a: buf as u64, b: 0, offset }
    }

    /// Encodes to 64 bits. The offset wraps in its field (decoding sign-extends it), so
    /// pointer arithmetic is exact while offsets stay within half the field.
    pub fn encode(self) -> u64 {
        let o = self.offset as u64;
        match self.space {
            Space::Null => 0,
            Space::Global => (1 << 62) | ((self.a & F22) << 40) | (o & OFF40),
            Space::Shared => (2 << 62) | ((self.a & F22) << 40) | ((self.b & F20) << 20) | (o & F20),
            Space::Local => (3 << 62) | ((self.a & F22) << 40) | ((self.b & F16) << 24) | (o & OFF24),
        }
    }

    /// Decodes 64 bits.
    #[inline(always)]
    pub fn decode(bits: u64) -> Ptr {
        let sext = |v: u64, w: u32| ((v << (64 - w)) as i64) >> (64 - w);
        match bits >> 62 {
            1 => Ptr { space: Space::Global, a: (bits >> 40) & F22, b: 0, offset: sext(bits & OFF40, 40) },
            2 => {
                Ptr { space: Space::Shared, a: (bits >> 40) & F22, b: (bits >> 20) & F20, offset: sext(bits & F20, 20) }
            }
            3 => Ptr {
                space: Space::Local,
                a: (bits >> 40) & F22,
                b: (bits >> 24) & F16,
                offset: sext(bits & OFF24, 24),
            },
            _ => Ptr { space: Space::Null, a: 0, b: 0, offset: 0 },
        }
    }

    /// This pointer moved by `delta` elements.
    #[inline(always)]
    pub fn offset_by(self, delta: i64) -> Ptr {
        Ptr { offset: self.offset.wrapping_add(delta), ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_round_trip() {
        for p in [
            Ptr::global(3, 12345),
            Ptr { space: Space::Shared, a: 1024, b: 512, offset: 17 },
            Ptr { space: Space::Local, a: 77, b: 3, offset: 5 },
            Ptr { space: Space::Shared, a: 0, b: 64, offset: -3 },
            Ptr::global(1, -1),
        ] {
            assert_eq!(Ptr::decode(p.encode()), p);
        }
        // A view that went below its base comes back when indexed forward.
        let p = Ptr::decode(Ptr::global(0, 2).offset_by(-5).encode());
        assert_eq!(p.offset_by(4).offset, 1);
    }

    #[test]
    fn buffers_store_typed_bits() {
        let b = Buffer::zeroed(Scalar::I32, 4);
        b.store(1, (-5i64) as u64);
        assert_eq!(b.load(1) as i64, -5);
        let old = b.update(1, |x| x.wrapping_add(7));
        assert_eq!(old as i64, -5);
        assert_eq!(b.load(1), 2);
    }
}

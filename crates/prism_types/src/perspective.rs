//! Perspectives, their order, and what a perspective bound guarantees about a launch.
//!
//! A perspective `level[n]` names a partition of all threads of a launch into aligned units:
//! `thread[n]` units are n consecutive threads of one block starting at a multiple of n;
//! `block[n]` units are n consecutive blocks starting at a multiple of n; `grid[1]` is the
//! whole launch. A variable at perspective P holds the same value in every thread of a
//! P-unit, and code at perspective C is executed by every thread of a C-unit together.
//!
//! The order (docs/language.md §4, docs/references.md O): `P ⊑ Q` ("P is narrower than or equal to
//! Q") iff every P-unit lies inside one Q-unit for *every* launch the function's bound
//! admits. Within a level that is divisibility of the counts. Across levels it depends on
//! the threads per block `T` and blocks per grid `B`, of which the checker only knows the
//! multiples the `@requires` bound guarantees ([`Facts`]): `thread[n] ⊑ block[m]` needs
//! `n | t_mult` (so that a `thread[n]` unit never straddles two blocks), and
//! `block[n] ⊑ grid[1]` needs `n | b_mult`.

use std::fmt;

/// A level of the thread hierarchy, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Threads.
    Thread,
    /// Blocks.
    Block,
    /// The grid.
    Grid,
}

impl Level {
    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Thread => "thread",
            Level::Block => "block",
            Level::Grid => "grid",
        }
    }
}

/// A perspective `level[n]` (after desugaring `warp[n]` to `thread[32·n]` and
/// `warpgroup[n]` to `thread[128·n]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Persp {
    /// The level.
    pub level: Level,
    /// The number of level units in one unit of this perspective; at least 1.
    pub n: u64,
}

impl Persp {
    /// `thread[n]`
    pub const fn thread(n: u64) -> Persp {
        Persp { level: Level::Thread, n }
    }
    /// `block[n]`
    pub const fn block(n: u64) -> Persp {
        Persp { level: Level::Block, n }
    }
    /// `grid[1]`
    pub const GRID: Persp = Persp { level: Level::Grid, n: 1 };
    /// `thread[1]`
    pub const THREAD: Persp = Persp::thread(1);
    /// `thread[32]`
    pub const WARP: Persp = Persp::thread(32);
    /// `thread[128]`
    pub const WARPGROUP: Persp = Persp::thread(128);
    /// `block[1]`
    pub const BLOCK: Persp = Persp::block(1);

    /// Number of threads in one unit, given the threads per block `t` and blocks `b`.
    pub fn threads(self, t: u64, b: u64) -> u64 {
        match self.level {
            Level::Thread => self.n,
            Level::Block => self.n * t,
            Level::Grid => b * t,
        }
    }
}

impl fmt::Display for Persp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.level.as_str(), self.n)
    }
}

/// What a function's bound guarantees about every launch or call that reaches it.
///
/// Invariant: both multiples are at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Facts {
    /// Threads per block is a positive multiple of this.
    pub t_mult: u64,
    /// Blocks per grid is a positive multiple of this.
    pub b_mult: u64,
}

impl Default for Facts {
    fn default() -> Facts {
        Facts { t_mult: 1, b_mult: 1 }
    }
}

impl Facts {
    /// `a ⊑ b`: every `a`-unit lies inside one `b`-unit for every launch these facts admit.
    pub fn narrower_eq(self, a: Persp, b: Persp) -> bool {
        use Level::*;
        match (a.level, b.level) {
            (Thread, Thread) | (Block, Block) | (Grid, Grid) => b.n.is_multiple_of(a.n),
            (Thread, Block) | (Thread, Grid) => self.t_mult.is_multiple_of(a.n),
            (Block, Grid) => self.b_mult.is_multiple_of(a.n),
            _ => false,
        }
    }

    /// `a ⊏ b`: narrower and not equal.
    pub fn strictly_narrower(self, a: Persp, b: Persp) -> bool {
        a != b && self.narrower_eq(a, b)
    }

    /// The broadest perspective narrower than or equal to both: values uniform over both
    /// `a`-units and `b`-units are uniform over its units.
    pub fn meet(self, a: Persp, b: Persp) -> Persp {
        if self.narrower_eq(a, b) {
            return a;
        }
        if self.narrower_eq(b, a) {
            return b;
        }
        use Level::*;
        let (lo, hi) = if a.level <= b.level { (a, b) } else { (b, a) };
        match (lo.level, hi.level) {
            (Thread, Thread) => Persp::thread(gcd(lo.n, hi.n)),
            (Block, Block) => Persp::block(gcd(lo.n, hi.n)),
            (Thread, _) => Persp::thread(gcd(lo.n, self.t_mult)),
            (Block, Grid) => Persp::block(gcd(lo.n, self.b_mult)),
            _ => Persp::THREAD,
        }
    }

    /// The meet of optional perspectives, where `None` means "uniform everywhere" (a
    /// constant).
    pub fn meet_opt(self, a: Option<Persp>, b: Option<Persp>) -> Option<Persp> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => Some(self.meet(a, b)),
        }
    }

    /// True when a value at `value` (None: a constant) may be stored where `target` is
    /// required: every thread of a `target`-unit sees the same value.
    pub fn uniform_over(self, value: Option<Persp>, target: Persp) -> bool {
        match value {
            None => true,
            Some(v) => self.narrower_eq(target, v),
        }
    }

    /// The number of `unit`-units in one `of`-unit, as far as these facts guarantee
    /// (exact within a level; a guaranteed multiple across levels).
    pub fn units_in(self, unit: Persp, of: Persp) -> u64 {
        use Level::*;
        // In `u128`, where a product of two `u64`s always fits; a count past `u64` saturates.
        let of_units = match (unit.level, of.level) {
            (Thread, Thread) | (Block, Block) | (Grid, Grid) => u128::from(of.n),
            (Thread, Block) => u128::from(of.n) * u128::from(self.t_mult),
            (Thread, Grid) => u128::from(self.b_mult) * u128::from(self.t_mult),
            (Block, Grid) => u128::from(self.b_mult),
            _ => 0,
        };
        u64::try_from(of_units / u128::from(unit.n)).unwrap_or(u64::MAX)
    }
}

/// Greatest common divisor.
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Least common multiple, or `None` on overflow.
pub fn lcm(a: u64, b: u64) -> Option<u64> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    (a / gcd(a, b)).checked_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_within_and_across_levels() {
        let f = Facts { t_mult: 32, b_mult: 1 };
        assert!(f.narrower_eq(Persp::thread(4), Persp::thread(32)));
        assert!(!f.narrower_eq(Persp::thread(5), Persp::thread(32)));
        assert!(f.narrower_eq(Persp::thread(32), Persp::BLOCK));
        // A 64-thread unit may straddle two 32-thread blocks.
        assert!(!f.narrower_eq(Persp::thread(64), Persp::BLOCK));
        assert!(!f.narrower_eq(Persp::BLOCK, Persp::thread(32)));
        assert!(f.narrower_eq(Persp::BLOCK, Persp::GRID));
        assert!(!f.narrower_eq(Persp::block(2), Persp::GRID));
        assert!(!f.narrower_eq(Persp::block(5), Persp::block(6)));
    }

    #[test]
    fn meets() {
        let f = Facts { t_mult: 32, b_mult: 1 };
        assert_eq!(f.meet(Persp::thread(4), Persp::thread(6)), Persp::thread(2));
        assert_eq!(f.meet(Persp::thread(64), Persp::BLOCK), Persp::thread(32));
        assert_eq!(f.meet(Persp::thread(1), Persp::GRID), Persp::thread(1));
        assert_eq!(f.meet(Persp::block(2), Persp::GRID), Persp::block(1));
    }

    #[test]
    fn units() {
        let f = Facts { t_mult: 128, b_mult: 4 };
        assert_eq!(f.units_in(Persp::WARP, Persp::BLOCK), 4);
        assert_eq!(f.units_in(Persp::thread(1), Persp::thread(32)), 32);
        assert_eq!(f.units_in(Persp::BLOCK, Persp::GRID), 4);
    }
}

//! Kernels entered at `thread[N]` (docs/language.md §2, "entry perspectives"): launched as
//! if every unit of `N` threads called the kernel. One that writes through a pointer
//! parameter is launched as exactly one unit (one block of `N` threads); a read-only one on
//! any number, here mostly several units per block, where units share a block (and a warp,
//! for `N` below 32). Their phases write `out` through partitions and read other threads'
//! elements back (inference must order them with a barrier over the `N` threads), claim
//! single elements, shuffle and reduce within warps, update global counters atomically, and
//! sometimes do what the rules must refuse below `block[1]`: allocate shared memory (static
//! or launch-sized), call a block function, or a warp collective in a unit narrower than a
//! warp.

use super::{Gen, INPUT, Program, put};

impl Gen {
    /// A kernel entered at `thread[N]`, `N` a multiple of 32 or not.
    pub(super) fn thread_program(&mut self) -> Program {
        let n = [32u32, 32, 64, 128, 8, 16, 48, 96][self.rng.below(8)];
        let warps = n.is_multiple_of(32);
        // A writer is launched as one block of `n` threads; a read-only kernel as one to three
        // blocks of one, two or four units.
        let writer = self.rng.chance(50);
        // A launch-sized shared array (refused: `param-perspective`).
        let dyn_len = self.rng.chance(4).then_some(64u32);
        let mut sig = format!("def fuzz({}", super::PARAMS);
        if dyn_len.is_some() {
            sig.push_str(", dn : int, dyn : shared(int[dn])");
        }
        sig.push_str("):");
        put(&mut self.out, 0, "@prism(\"global\")");
        put(&mut self.out, 0, &format!("@requires(thread[{n}])"));
        put(&mut self.out, 0, &sig);
        let d = 1;
        put(&mut self.out, d, "t : int @ thread[1] = id()");
        put(&mut self.out, d, "acc : int @ thread[1] = inp[(t * 7) % n]");
        put(&mut self.out, d, &format!("u : int @ thread[{n}] = inp[{}]", self.rng.below(64)));
        if dyn_len.is_some() {
            put(&mut self.out, d, "with group(thread[1]):");
            put(&mut self.out, d + 1, "atomic_add(dyn[t & 63], acc)");
            put(&mut self.out, d, "with group(thread[1]):");
            put(&mut self.out, d + 1, "acc = acc + dyn[(t + 1) & 63]");
        }
        let phases = 2 + self.rng.below(5);
        let mut fresh = 0;
        for _ in 0..phases {
            self.thread_phase(n, warps, writer, &mut fresh, d, 0);
        }
        if writer {
            put(&mut self.out, d, "with partition(out, p=thread[1], f=lambda i: t + i) as o:");
            put(&mut self.out, d + 1, "with group(thread[1]):");
            put(&mut self.out, d + 2, "o[0] = o[0] + acc");
        }
        let (grid, block, entry) = if writer || self.writes {
            (1, n, "entry-thread-writer")
        } else {
            let per = [1u32, 2, 4][self.rng.below(3)];
            let grid = 1 + self.rng.below(3) as u32;
            (grid, n * per, if per > 1 { "entry-thread-readonly-shared-block" } else { "entry-thread-readonly" })
        };
        let mut launch = super::launch_head(grid, block);
        if let Some(len) = dyn_len {
            launch.push_str(&format!(" --arg dn={len}"));
        }
        put(&mut self.out, 0, "");
        put(&mut self.out, 0, &launch);
        let kernel = std::mem::take(&mut self.out);
        let files = self.assemble(&format!("entered at thread[{n}]"), &kernel);
        Program {
            src: self.out.clone(),
            grid,
            block,
            trusted: self.trusted,
            files,
            dyn_len,
            reduce: false,
            entry: Some(entry.to_string()),
        }
    }

    /// One phase of a `thread[n]`-entered kernel, at its entry code, indented `d`.
    fn thread_phase(&mut self, n: u32, warps: bool, writer: bool, fresh: &mut u32, d: u32, depth: u32) {
        let id = *fresh;
        *fresh += 1;
        match self.rng.below(17) {
            // Each thread writes its own element of `out`, then reads a neighbour's: the
            // inferred barrier spans the unit's `n` threads.
            0..=2 if writer => {
                put(&mut self.out, d, &format!("with partition(out, p=thread[1], f=lambda i: t + i) as v{id}:"));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("v{id}[0] = acc + {}", self.rng.below(9)));
                put(&mut self.out, d, "with group(thread[1]):");
                let off = 1 + self.rng.below(n as usize);
                let f = self.fold(&format!("out[(t + {off}) % {n}]"));
                put(&mut self.out, d + 1, &f);
            }
            // Interleaved writes of two elements per thread, read back reversed.
            3 if writer => {
                put(
                    &mut self.out,
                    d,
                    &format!("with partition(out, p=thread[1], f=lambda i: t + {} * i) as iv{id}:", n / 2),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("if t < {}:", n / 2));
                put(&mut self.out, d + 3, "for j in range(2):");
                put(&mut self.out, d + 4, &format!("iv{id}[j] = acc ^ j"));
                put(&mut self.out, d, "with group(thread[1]):");
                let f = self.fold(&format!("out[{} - t]", n - 1));
                put(&mut self.out, d + 1, &f);
            }
            // One thread writes a claimed element; all read it.
            4 if writer => {
                let at = self.rng.below(n as usize);
                put(&mut self.out, d, &format!("with claim(out, p=thread[1]) as c{id}:"));
                put(&mut self.out, d + 1, "match split(thread):");
                put(&mut self.out, d + 2, "case 1:");
                put(&mut self.out, d + 3, &format!("c{id}[{at}] = acc + u"));
                put(&mut self.out, d, "with group(thread[1]):");
                let f = self.fold(&format!("out[{at}]"));
                put(&mut self.out, d + 1, &f);
            }
            // Global atomics (a write through a pointer parameter).
            5 => {
                self.writes = true;
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("atomic_add(counters[{}], acc & 7)", self.rng.below(4)));
            }
            // Shuffles and reductions in each warp (refused in a unit narrower than a warp).
            6 | 7 if warps || self.rng.chance(20) => {
                let at = if n > 32 {
                    put(&mut self.out, d, "with group(thread[32]):");
                    d + 1
                } else {
                    d
                };
                let f = match self.rng.below(3) {
                    0 => format!("acc = acc + shfl_xor(acc, {})", 1 << self.rng.below(5)),
                    1 => format!("acc = acc + shfl_down(acc, {})", 1 + self.rng.below(31)),
                    _ => "acc = acc + warp_total(acc)".to_string(),
                };
                put(&mut self.out, at, &f);
            }
            // A loop or a uniform branch around phases.
            8 if depth < 2 => {
                if self.rng.chance(50) {
                    put(&mut self.out, d, &format!("for r{id} in range({}):", 1 + self.rng.below(3)));
                    self.thread_phase(n, warps, writer, fresh, d + 1, depth + 1);
                } else {
                    put(&mut self.out, d, &format!("if (u & {}) == 0:", 1 + self.rng.below(3)));
                    self.thread_phase(n, warps, writer, fresh, d + 1, depth + 1);
                    put(&mut self.out, d, "else:");
                    self.thread_phase(n, warps, writer, fresh, d + 1, depth + 1);
                }
            }
            // A split of the unit's warps, each case its own work.
            9 if warps && n >= 64 => {
                put(&mut self.out, d, "match split(warp):");
                put(&mut self.out, d + 1, "case 1:");
                put(&mut self.out, d + 2, "with group(thread[1]):");
                put(&mut self.out, d + 3, "acc = acc * 3 + 1");
                put(&mut self.out, d + 1, "case 1:");
                put(&mut self.out, d + 2, &format!("l{id} : int @ thread[1] = id()"));
                put(&mut self.out, d + 2, &format!("acc = acc + shfl_xor(acc, 1) + l{id}"));
            }
            // A thread-local array, filled and folded.
            10 => {
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("la{id} : int[4] @ thread[1]"));
                put(&mut self.out, d + 1, "for j in range(4):");
                put(&mut self.out, d + 2, &format!("la{id}[j] = inp[(t * 4 + j + (u & 63)) % n]"));
                let f = self.fold(&format!("la{id}[acc & 3]"));
                put(&mut self.out, d + 1, &f);
            }
            // Local arrays indexed by the thread's and the warp's index in the unit: both must
            // count from the unit's start, also when several units share a block.
            12 => {
                let lanes = n.min(64);
                put(&mut self.out, d, &format!("lt{id} : int[{lanes}] @ thread[1]"));
                let warp = warps && n >= 64;
                if warp {
                    put(&mut self.out, d, &format!("wv{id} : int @ thread[32] = id()"));
                    put(&mut self.out, d, &format!("lw{id} : int[{}] @ thread[1]", n / 32));
                }
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("if t < {lanes}:"));
                put(&mut self.out, d + 2, &format!("lt{id}[t] = acc"));
                let f = self.fold(&format!("lt{id}[t]"));
                put(&mut self.out, d + 2, &f);
                if warp {
                    put(&mut self.out, d + 1, &format!("lw{id}[wv{id}] = acc + 1"));
                    let f = self.fold(&format!("lw{id}[wv{id}]"));
                    put(&mut self.out, d + 1, &f);
                }
            }
            // Refused below `block[1]`: a shared array (`shared-outside-block`) or a call of a
            // block function (`call-perspective`).
            11 if self.rng.chance(15) => {
                if self.rng.chance(50) {
                    put(&mut self.out, d, &format!("sh{id} : shared(int[{n}]) @ block[1]"));
                    put(&mut self.out, d, "with group(thread[1]):");
                    put(&mut self.out, d + 1, &format!("atomic_add(sh{id}[t], acc)"));
                    put(&mut self.out, d, "with group(thread[1]):");
                    let f = self.fold(&format!("sh{id}[(t + 1) % {n}]"));
                    put(&mut self.out, d + 1, &f);
                } else {
                    put(&mut self.out, d, "acc = acc + int(gshift[int](acc, 64, 1))");
                }
            }
            _ => {
                put(&mut self.out, d, "with group(thread[1]):");
                let f = self.fold(&format!("inp[(t + acc) & {}]", INPUT - 1));
                put(&mut self.out, d + 1, &f);
            }
        }
    }
}

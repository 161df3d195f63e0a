//! A generator of random Prism kernels built to be accepted: it follows the typing rules as
//! it writes (what code perspective each line runs at, which names of memory are visible and
//! at which perspective, which values are uniform over which units), so most of what it
//! writes checks, and what does not is a rule doing its job.
//!
//! Every program has one kernel, `fuzz`, launched on a few blocks of 32 to 128 threads. Most
//! are entered at `grid[1]`; about one in seven at `block[1]` (the same phases, as block code:
//! a writer launched as one block, a read-only kernel on one to three) and one in eight at
//! `thread[N]` (`gen/entry.rs`: `N` a multiple of 32 or not, a writer launched as one block of
//! `N` threads, a read-only kernel as several units per block). Each
//! block works on one or two shared arrays in *phases* drawn at random: per-thread writes
//! through partitions (blocked and interleaved index functions), reads of other threads'
//! elements, warp shuffles and reductions, shared and global atomics, asynchronous copies
//! (also two commit groups in flight, waited for where each array is read), vector loads and
//! stores (within the thread's block, or wider and trusted),
//! `split`s of warps and threads, loops (`for` and `while`) and uniform branches around
//! phases, claims, calls to device functions (a warp reduction, a block-level copy through
//! pointer parameters), explicit barriers. Every thread keeps a value `acc` that the phases
//! fold what they read into, and writes it out at the end, so a missing barrier shows up as
//! a race or as outputs that depend on the schedule.
//!
//! Later features, each with places that must be refused as well as accepted ones:
//! generic functions (`gshift[T]` instantiated at five types and shared sizes `N`, `K`
//! per thread, the largest past the kernel's budget; `gfold[T, OP]` and `gscan[T, OP]`
//! with plain operators and a collective one, which only the fold's warp-uniform code may
//! call); `prism.std` warp and block collectives, exchanges (transposing loads, scatters
//! by ranks, radix sort) through fresh or phase arrays, and a device-wide reduction from
//! the grid code (its result read back after a grid barrier), each called at a random
//! place ([`Gen::place`]: mostly allowed ones, sometimes a thread group, a divergent
//! branch, a warp group or a split case); two user modules held in memory (`lib/ops` has
//! a generic fold, `lib/use` builds a block function with its own shared array on it);
//! a launch-sized shared array `dyn`, used by every phase like a declared one and by
//! partitions strided by `block_dim()`; in blocks of one warpgroup, wgmmas from tiles
//! the threads fill ([`Gen::wgmma`]); in every block, warp-level mmas fed by `ldmatrix` or
//! plain reads ([`Gen::mma`]); TMA stores of 2-D and 3-D boxes through claims of the
//! blocks' views of two output maps ([`Gen::tma_store`]), and 3-D TMA loads; and, in one
//! program in twelve, kernels over pairs of blocks (`gen/pairs.rs`: `block[2]` code that
//! exchanges data between a pair's blocks through global memory, so that inference must
//! place grid-wide barriers, with the ordinary phases as block code between).
//!
//! The generator knows when it writes something the language only trusts (an access through
//! a partition that may reach another unit's elements): such programs are *trusted*, and a
//! race in them is the non-injective exception, not a soundness bug.

mod entry;
mod pairs;

use super::Rng;
use std::fmt::Write;

/// A generated program and what the search needs to know about it.
#[derive(Clone, Debug)]
pub struct Program {
    /// The source text, with its `# launch:` line.
    pub src: String,
    /// Blocks and threads per block of the launch.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Whether it relies on a partition's trust (an access possibly outside its unit's
    /// elements): races there are the language's non-injective exception.
    pub trusted: bool,
    /// The user library modules the program imports, as `(path, text)`, compiled through
    /// `prism_driver::MemoryFiles`: `lib/ops.prism` (a generic warp fold) and
    /// `lib/use.prism` (a block-level function built on it, imported by the root).
    pub files: Vec<(String, String)>,
    /// Items of the kernel's dynamic shared array `dyn`, sized at launch (`dn`).
    pub dyn_len: Option<u32>,
    /// Whether the kernel takes the device reduction's scratch and result (`parts`,
    /// `tick`, `total`): it then calls a `prism.std.device` reduction from its grid code.
    pub reduce: bool,
    /// How the kernel is entered, for the construct counts: `None` for `grid[1]`, else
    /// `entry-block` or `entry-thread` with `-writer` (launched as exactly one unit) or
    /// `-readonly` (any number of units; `-shared-block` when several share a block).
    pub entry: Option<String>,
}

/// Elements of the global input (a multiple of every copy's width).
pub const INPUT: u32 = 4096;

/// Rows of the array behind the tensor map `tm` (boxes of 8 rows of 32 ints).
pub const TILES: u32 = 64;

/// What a phase may use.
struct Cx {
    /// Threads per block.
    tb: u32,
    /// Shared arrays: name and elements (a power of two, a multiple of `tb`).
    shared: Vec<(String, u32)>,
    /// Counter for fresh names.
    fresh: u32,
    /// Nesting of loops and branches around the phase (kept small).
    depth: u32,
    /// The narrowest thread unit the bound guarantees (32, or 64 for half-block groups).
    narrow: u32,
    /// Whether the kernel requires `warpgroup[1]` (a block of 128 threads): the wgmma phase
    /// may then run.
    wg: bool,
    /// Whether the blocks' views of the maps `to` and `o3` are open (`to_b`, `o3_b`): TMA
    /// stores may then run.
    maps: bool,
    /// Blocks of the launch (1 to 3): boxes can only overlap a neighbour's with two or more.
    grid: u32,
    /// Whether the phase is block code inside the pair code of [`Gen::pair_program`], where
    /// `gx` is hidden by the pair's view of it.
    pair: bool,
}

/// Writes programs.
pub struct Gen {
    rng: Rng,
    out: String,
    trusted: bool,
    /// Import lines the phases need, emitted before the helpers.
    imports: std::collections::BTreeSet<String>,
    /// Whether a phase calls into the user library (`lib/use.prism`, `lib/ops.prism`).
    lib: bool,
    /// Whether a phase writes through a pointer parameter (global atomics): a kernel entered
    /// below `grid[1]` must then be launched as exactly one unit.
    writes: bool,
}

impl Gen {
    /// A generator drawing from `seed`.
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            out: String::new(),
            trusted: false,
            imports: std::collections::BTreeSet::new(),
            lib: false,
            writes: false,
        }
    }

    /// The next program.
    pub fn program(&mut self) -> Program {
        self.out.clear();
        self.trusted = false;
        self.imports.clear();
        self.lib = false;
        self.writes = false;
        // A fraction of kernels are entered below `grid[1]` (docs/language.md §2): at
        // `thread[N]` (their own, smaller body) or at `block[1]` (the same phases as at
        // `grid[1]`, as block code).
        let roll = self.rng.below(100);
        if roll < 12 {
            return self.thread_program();
        }
        if roll >= 92 {
            return self.pair_program();
        }
        let block_entry = roll < 27;
        // A block-entered kernel that writes `out` is launched as one block; a read-only one
        // on any number (unless a phase writes `counters`, which makes it a writer too).
        let writer = !block_entry || self.rng.chance(50);
        let tb = [32u32, 64, 128][self.rng.below(3)];
        let mut grid = 1 + self.rng.below(3) as u32;
        let narrow = if tb >= 64 && self.rng.chance(30) { 64 } else { 32 };
        // Blocks of one warpgroup may issue wgmmas (the phase below), which need the
        // warpgroup among the kernel's requirements.
        let wg = tb == 128 && self.rng.chance(50);
        // A launch-sized shared array, used by the phases like a declared one.
        let dyn_len = self.rng.chance(35).then(|| tb * [1u32, 2, 4, 8][self.rng.below(4)]);
        // A device-wide reduction from the kernel's grid code (none without grid code).
        let reduce = !block_entry && self.rng.chance(15);
        // TMA stores into `to` and `o3` (through the blocks' identity views, so from grid
        // code only).
        let maps = !block_entry && self.rng.chance(40);
        let mut sig = format!("def fuzz({PARAMS}");
        if reduce {
            sig.push_str(", parts : ptr(int), tick : ptr(int), total : ptr(int)");
        }
        if dyn_len.is_some() {
            sig.push_str(", dn : int, dyn : shared(int[dn])");
        }
        sig.push_str("):");
        put(&mut self.out, 0, "@prism(\"global\")");
        let outer = if block_entry { "" } else { "grid[1], " };
        let group = if wg { "warpgroup[1], " } else { "" };
        put(&mut self.out, 0, &format!("@requires({outer}block[1], {group}thread[{narrow}], smem=16384)"));
        put(&mut self.out, 0, &format!("@launch_bounds({tb})"));
        put(&mut self.out, 0, &sig);
        let mut total_read = false;
        // Called at grid code (or, rarely, at block code, where `call-perspective` refuses it).
        let reduce_call = reduce.then(|| self.device_reduce(tb));
        if let Some(call) = &reduce_call
            && !self.rng.chance(8)
        {
            put(&mut self.out, 1, call);
            if self.rng.chance(50) {
                // Only the last block wrote it: a barrier over the grid must come first.
                put(&mut self.out, 1, "rd : int @ grid[1] = total[0]");
                total_read = true;
            }
        }
        let d = if block_entry {
            // No block index below `grid[1]`: a uniform value stands for it.
            put(&mut self.out, 1, "b : int @ block[1] = n & 1");
            1
        } else {
            put(&mut self.out, 1, "b : int @ block[1] = id()");
            put(&mut self.out, 1, &format!("with partition(out, p=block[1], f=lambda i: b * {tb} + i) as out_b:"));
            let mut d = 2;
            if maps {
                // The blocks' views of the maps they store boxes into: the identity, which
                // the language trusts to be used for disjoint boxes (docs/language.md §1).
                for m in ["to", "o3"] {
                    put(&mut self.out, d, &format!("with partition({m}, p=block[1], f=lambda i: i) as {m}_b:"));
                    d += 1;
                }
            }
            put(&mut self.out, d, "with group(block[1]):");
            d + 1
        };
        put(&mut self.out, d, "t : int @ thread[1] = id()");
        put(&mut self.out, d, "w : int @ thread[32] = id()");
        put(&mut self.out, d, &format!("acc : int @ thread[1] = inp[(b * {tb} + t) % n]"));
        put(&mut self.out, d, "u : int @ block[1] = inp[b % n]");
        if let Some(call) = &reduce_call
            && !self.out.contains(call.as_str())
        {
            put(&mut self.out, d, call);
        }
        let mut cx = Cx { tb, shared: Vec::new(), fresh: 0, depth: 0, narrow, wg, maps, grid, pair: false };
        let arrays = 1 + self.rng.below(2);
        for k in 0..arrays {
            let mut len = tb * [1u32, 2, 4][self.rng.below(3)];
            if maps && k == 0 {
                // Room for a stored box (256 ints).
                len = len.max(256);
            }
            // Aligned for TMA copies, whose destinations start on 128 bytes.
            put(&mut self.out, d, &format!("s{k} : shared(int[{len}], align=128) @ block[1]"));
            cx.shared.push((format!("s{k}"), len));
        }
        if let Some(len) = dyn_len {
            cx.shared.push(("dyn".into(), len));
        }
        self.fill_shared(&cx, d);
        let phases = 2 + self.rng.below(5);
        // A kernel that requires the warpgroup mostly issues a wgmma, among the phases or
        // in a loop (whose passes rewrite its tiles).
        let wgmma_at = (wg && self.rng.chance(80)).then(|| self.rng.below(phases));
        for k in 0..phases {
            if wgmma_at == Some(k) {
                let id = cx.fresh;
                cx.fresh += 1;
                if self.rng.chance(30) {
                    put(&mut self.out, d, &format!("for rw{id} in range({}):", 2 + self.rng.below(2)));
                    cx.depth += 1;
                    self.wgmma(&mut cx, d + 1, id);
                    cx.depth -= 1;
                } else {
                    self.wgmma(&mut cx, d, id);
                }
            }
            self.phase(&mut cx, d);
        }
        if total_read {
            put(&mut self.out, d, "with group(thread[1]):");
            put(&mut self.out, d + 1, "acc = acc ^ rd");
        }
        if writer {
            let whole = if block_entry { "out" } else { "out_b" };
            put(&mut self.out, d, &format!("with partition({whole}, p=thread[1], f=lambda i: t + i) as o:"));
            put(&mut self.out, d + 1, "with group(thread[1]):");
            put(&mut self.out, d + 2, "o[0] = acc");
        }
        let entry = if block_entry {
            if writer || self.writes {
                grid = 1;
                Some("entry-block-writer".to_string())
            } else {
                Some("entry-block-readonly".to_string())
            }
        } else {
            None
        };
        let mut launch = launch_head(grid, tb);
        if reduce {
            launch.push_str(" --arg parts=zeros:i32:4 --arg tick=zeros:i32:1 --arg total=zeros:i32:1");
        }
        if let Some(len) = dyn_len {
            launch.push_str(&format!(" --arg dn={len}"));
        }
        put(&mut self.out, 0, "");
        put(&mut self.out, 0, &launch);
        let kernel = std::mem::take(&mut self.out);
        let files = self.assemble(&format!("{tb} threads per block"), &kernel);
        Program { src: self.out.clone(), grid, block: tb, trusted: self.trusted, files, dyn_len, reduce, entry }
    }

    /// Writes the whole program into `self.out`: a first line that says what it is, the
    /// imports its phases asked for (the user modules too, when a phase calls into them),
    /// the shared helpers and then `code` (the kernel, with what only it needs). Returns
    /// the user modules it imports.
    fn assemble(&mut self, what: &str, code: &str) -> Vec<(String, String)> {
        self.out.clear();
        put(&mut self.out, 0, &format!("# Generated by the soundness search (prism_test::soundness), {what}."));
        let files = if self.lib {
            self.imports.insert("from lib.use import lib_block".into());
            self.imports.insert("import lib.ops".into());
            self.library()
        } else {
            Vec::new()
        };
        for line in std::mem::take(&mut self.imports) {
            put(&mut self.out, 0, &line);
        }
        self.helpers();
        self.out.push_str(code);
        files
    }

    /// Block code that gives every element of the phases' shared arrays a known value.
    fn fill_shared(&mut self, cx: &Cx, d: u32) {
        for (name, len) in cx.shared.clone() {
            let k = len / cx.tb;
            put(&mut self.out, d, &format!("with partition({name}, p=thread[1], f=lambda i: t * {k} + i) as z{name}:"));
            put(&mut self.out, d + 1, "with group(thread[1]):");
            put(&mut self.out, d + 2, &format!("for j in range({k}):"));
            put(&mut self.out, d + 3, &format!("z{name}[j] = t + j"));
        }
    }

    /// A call of a `prism.std.device` reduction of `inp` into `total`, with its scratch.
    fn device_reduce(&mut self, tb: u32) -> String {
        self.imports.insert("from prism.std.device import device_reduce, device_sum".into());
        let count = 1 + self.rng.below(INPUT as usize);
        let items = [1, 2, 4][self.rng.below(3)];
        let _ = tb;
        match self.rng.below(3) {
            0 => format!("device_sum[int](inp, {count}, {items}, parts, tick, total)"),
            1 => format!("device_reduce[int, op_add](inp, {count}, {items}, 0, parts, tick, total)"),
            _ => format!("device_reduce[int, op_max](inp, {count}, {items}, -100000, parts, tick, total)"),
        }
    }

    /// The user library: `lib/ops.prism` holds a generic warp fold over an operator and a
    /// count of butterfly steps; `lib/use.prism` imports it (as `ops`, from its own
    /// directory) and builds a block-level function on it with its own shared memory and a
    /// pointer parameter the caller's arrays are passed for.
    fn library(&mut self) -> Vec<(String, String)> {
        let steps = self.rng.below(7);
        let ops = "@prism(\"device\")\n@requires(thread[32])\n\
             def lib_fold[T, OP](v : T @ thread[1], N : constexpr(int)) -> T @ thread[32]:\n\
             \x20   acc : T @ thread[1] = v\n\
             \x20   for k in range(N):\n\
             \x20       acc = OP(acc, shfl_xor(acc, 1 << (k % 5)))\n\
             \x20   return shfl(acc, 0)\n"
            .to_string();
        let (stride, smem) = if self.rng.chance(80) { (1, 512) } else { (2, 1024) };
        let uses = format!(
            "from ops import lib_fold\n\n\
             @prism(\"device\")\n@requires(thread[1])\n\
             def lib_op(a : int @ thread[1], b : int @ thread[1]) -> int @ thread[1]:\n\
             \x20   return a + 3 * b\n\n\
             @prism(\"device\")\n@requires(block[1], thread[32], smem={smem})\n\
             def lib_block(dst : ptr(int) @ block[1], v : int @ thread[1]) -> int @ thread[1]:\n\
             \x20   sc : shared(int[{}]) @ block[1]\n\
             \x20   t : int @ thread[1] = id()\n\
             \x20   s : int @ thread[32] = lib_fold[int, lib_op](v, {steps})\n\
             \x20   with partition(sc, p=thread[1], f=lambda i: t * {stride} + i) as m:\n\
             \x20       with group(thread[1]):\n\
             \x20           m[0] = s + v\n\
             \x20   r : int @ thread[1] = 0\n\
             \x20   with group(thread[1]):\n\
             \x20       r = sc[((t + 1) % block_dim()) * {stride}]\n\
             \x20   with partition(dst, p=thread[1], f=lambda i: t + i) as dt:\n\
             \x20       with group(thread[1]):\n\
             \x20           dt[0] = r\n\
             \x20   return r\n",
            smem / 4
        );
        vec![("lib/ops.prism".into(), ops), ("lib/use.prism".into(), uses)]
    }

    /// Device functions the phases call.
    fn helpers(&mut self) {
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[32])");
        put(&mut self.out, 0, "def warp_total(x : int @ thread[1]) -> int @ thread[32]:");
        put(&mut self.out, 1, "return reduce_add(x)");
        put(&mut self.out, 0, "");
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(block[1], thread[32])");
        put(&mut self.out, 0, "def rotate(dst : ptr(int), src : ptr(const(int)), len : int):");
        put(&mut self.out, 1, "t : int @ thread[1] = id()");
        put(&mut self.out, 1, "with partition(dst, p=thread[1], f=lambda i: t + i) as d:");
        put(&mut self.out, 2, "with group(thread[1]):");
        put(&mut self.out, 3, "d[0] = src[(t + 1) % len]");
        put(&mut self.out, 0, "");
        // The same through `ptr(T, shared)` parameters, which the calls must give shared
        // memory; inference orders the calls alike.
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(block[1], thread[32])");
        put(&mut self.out, 0, "def rotate_s(dst : ptr(int, shared), src : ptr(const(int), shared), len : int):");
        put(&mut self.out, 1, "rotate(dst, src, len)");
        put(&mut self.out, 0, "");
        // A thread's first `N` elements through its view: updated, and summed.
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[1])");
        put(&mut self.out, 0, "def bumpn(data : ptr(int) @ thread[1], N : constexpr(int)):");
        put(&mut self.out, 1, "for i in range(N):");
        put(&mut self.out, 2, "data[i] = data[i] + 1");
        put(&mut self.out, 0, "");
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[1])");
        put(&mut self.out, 0, "def sumn(data : ptr(int) @ thread[1], N : constexpr(int)) -> int @ thread[1]:");
        put(&mut self.out, 1, "total : int @ thread[1] = 0");
        put(&mut self.out, 1, "for i in range(N):");
        put(&mut self.out, 2, "total = total + data[i]");
        put(&mut self.out, 1, "return total");
        put(&mut self.out, 0, "");
        // A warp's bf16 mma from tiles given as shared pointers (`Gen::mma`), warp `wt`'s
        // 16 x 16 A and 16 x 8 B, returning each lane's sum of its accumulators.
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[32])");
        put(
            &mut self.out,
            0,
            "def mma_from(a : ptr(const(bf16), shared), b : ptr(const(bf16), shared), wt : int @ thread[32]) -> int @ thread[1]:",
        );
        put(&mut self.out, 1, "l : int @ thread[1] = id()");
        put(&mut self.out, 1, "fa : bf16[8] @ thread[1]");
        put(&mut self.out, 1, "fb : bf16[4] @ thread[1]");
        put(&mut self.out, 1, "fc : float[4] @ thread[1]");
        put(&mut self.out, 1, "with group(thread[1]):");
        put(&mut self.out, 2, "for j in range(4):");
        put(&mut self.out, 3, "fc[j] = 0.0");
        put(
            &mut self.out,
            1,
            "ldmatrix_x4_bf16(a[wt * 256 + (l % 8 + 8 * ((l / 8) % 2)) * 16 + 8 * (l / 16)], \
             out=[fa[0], fa[1], fa[2], fa[3], fa[4], fa[5], fa[6], fa[7]])",
        );
        put(&mut self.out, 1, "ldmatrix_x2_trans_bf16(b[wt * 128 + (l % 16) * 8], out=[fb[0], fb[1], fb[2], fb[3]])");
        put(
            &mut self.out,
            1,
            "intrinsic.mma_bf16(fa[0], fa[1], fa[2], fa[3], fa[4], fa[5], fa[6], fa[7], fb[0], fb[1], fb[2], fb[3], \
             fc[0], fc[1], fc[2], fc[3], out=[fc[0], fc[1], fc[2], fc[3]])",
        );
        put(&mut self.out, 1, "r : int @ thread[1] = 0");
        put(&mut self.out, 1, "with group(thread[1]):");
        put(&mut self.out, 2, "for j in range(4):");
        put(&mut self.out, 3, "r = r + int(fc[j])");
        put(&mut self.out, 1, "return r");
        put(&mut self.out, 0, "");
        // Operators for generic functions: two plain ones and a collective one (entered by
        // a warp), which only warp-uniform code may call.
        for (name, body) in [("op_add", "return a + b"), ("op_max", "return max(a, b)")] {
            put(&mut self.out, 0, "@prism(\"device\")");
            put(&mut self.out, 0, "@requires(thread[1])");
            put(&mut self.out, 0, &format!("def {name}(a : int @ thread[1], b : int @ thread[1]) -> int @ thread[1]:"));
            put(&mut self.out, 1, body);
            put(&mut self.out, 0, "");
        }
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[32])");
        put(&mut self.out, 0, "def op_warp(a : int @ thread[1], b : int @ thread[1]) -> int @ thread[1]:");
        put(&mut self.out, 1, "return a + reduce_add(b)");
        put(&mut self.out, 0, "");
        // A generic block function with a shared array sized by a constant parameter: each
        // thread writes its `K` elements (those that fit), then reads the next thread's.
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(block[1], thread[32], smem=N * 8)");
        put(
            &mut self.out,
            0,
            "def gshift[T](v : T @ thread[1], N : constexpr(int), K : constexpr(int)) -> T @ thread[1]:",
        );
        put(&mut self.out, 1, "buf : shared(T[N]) @ block[1]");
        put(&mut self.out, 1, "t : int @ thread[1] = id()");
        put(&mut self.out, 1, "with partition(buf, p=thread[1], f=lambda i: t * K + i) as mine:");
        put(&mut self.out, 2, "with group(thread[1]):");
        put(&mut self.out, 3, "if t * K + K <= N:");
        put(&mut self.out, 4, "for j in range(K):");
        put(&mut self.out, 5, "mine[j] = v + T(j)");
        put(&mut self.out, 1, "r : T @ thread[1] = T(0)");
        put(&mut self.out, 1, "with group(thread[1]):");
        put(&mut self.out, 2, "r = buf[(t * K + K) % min(N, block_dim() * K)]");
        put(&mut self.out, 1, "return r");
        put(&mut self.out, 0, "");
        // A generic warp fold: `OP` in warp-uniform code.
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[32])");
        put(&mut self.out, 0, "def gfold[T, OP](v : T @ thread[1]) -> T @ thread[32]:");
        put(&mut self.out, 1, "acc : T @ thread[1] = v");
        put(&mut self.out, 1, "for k in range(5):");
        put(&mut self.out, 2, "acc = OP(acc, shfl_xor(acc, 1 << k))");
        put(&mut self.out, 1, "return shfl(acc, 0)");
        put(&mut self.out, 0, "");
        // A generic warp scan: `OP` in divergent code (only the lanes past the step), where a
        // collective operator must be refused in the instance.
        put(&mut self.out, 0, "@prism(\"device\")");
        put(&mut self.out, 0, "@requires(thread[32])");
        put(&mut self.out, 0, "def gscan[T, OP](v : T @ thread[1]) -> T @ thread[1]:");
        put(&mut self.out, 1, "lane : int @ thread[1] = id()");
        put(&mut self.out, 1, "acc : T @ thread[1] = v");
        put(&mut self.out, 1, "for k in range(5):");
        put(&mut self.out, 2, "up : T @ thread[1] = shfl_up(acc, 1 << k)");
        put(&mut self.out, 2, "with group(thread[1]):");
        put(&mut self.out, 3, "if lane >= (1 << k):");
        put(&mut self.out, 4, "acc = OP(acc, up)");
        put(&mut self.out, 1, "return acc");
        put(&mut self.out, 0, "");
    }

    /// Opens a random perspective for a collective call at block code, indented `d`, and
    /// returns the indentation of the call. `entry` is the callee's entry perspective in
    /// threads (32 for a warp, 0 for a block). Mostly a place it may be called from (the
    /// block code itself, a block-uniform branch; for a warp, a warp group or one warp's
    /// split case), sometimes one `call-perspective` must refuse (a thread group, a
    /// divergent branch; for a block, a warp group or a split case).
    fn place(&mut self, cx: &Cx, d: u32, entry: u32) -> u32 {
        let split = |g: &mut Gen, d: u32| {
            put(&mut g.out, d, "match split(warp):");
            put(&mut g.out, d + 1, "case 1:");
            d + 2
        };
        let warp_group = |g: &mut Gen, d: u32| {
            put(&mut g.out, d, "with group(warp[1]):");
            d + 1
        };
        if self.rng.chance(85) {
            match self.rng.below(6) {
                0 | 1 => d,
                2 => {
                    put(&mut self.out, d, &format!("if (u & {}) == 0:", 1 + self.rng.below(3)));
                    d + 1
                }
                3 | 4 if entry == 32 => warp_group(self, d),
                5 if entry == 32 && cx.tb >= 64 => split(self, d),
                _ => d,
            }
        } else {
            match self.rng.below(4) {
                0 => {
                    put(&mut self.out, d, "with group(thread[1]):");
                    d + 1
                }
                1 => {
                    put(&mut self.out, d, "with group(thread[1]):");
                    put(&mut self.out, d + 1, "if acc > 0:");
                    d + 2
                }
                2 if entry == 0 => warp_group(self, d),
                3 if entry == 0 && cx.tb >= 64 => split(self, d),
                _ => {
                    put(&mut self.out, d, "with group(thread[1]):");
                    d + 1
                }
            }
        }
    }

    /// A random arithmetic update of `acc` by `v`.
    fn fold(&mut self, v: &str) -> String {
        match self.rng.below(4) {
            0 => format!("acc = acc + {v}"),
            1 => format!("acc = acc * 3 + {v}"),
            2 => format!("acc = acc ^ {v}"),
            _ => format!("acc = max(acc, {v}) + 1"),
        }
    }

    /// One phase at block code, indented `d`.
    fn phase(&mut self, cx: &mut Cx, d: u32) {
        let tb = cx.tb;
        let (name, len) = cx.shared[self.rng.below(cx.shared.len())].clone();
        let mask = len - 1;
        let id = cx.fresh;
        cx.fresh += 1;
        match self.rng.below(55) {
            // Each thread writes its own elements: blocked.
            0 | 1 => {
                let k = len / tb;
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: t * {k} + i) as v{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                let j = self.rng.below(k as usize);
                let upd = format!("v{id}[{j}] = acc + {}", self.rng.below(9));
                put(&mut self.out, d + 2, &upd);
            }
            // Interleaved.
            2 => {
                let k = len / tb;
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: t + {tb} * i) as v{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("for j in range({k}):"));
                put(&mut self.out, d + 3, &format!("v{id}[j] = v{id}[j] + acc"));
            }
            // Read other threads' elements.
            3 | 4 => {
                put(&mut self.out, d, "with group(thread[1]):");
                let off = 1 + self.rng.below(len as usize);
                let f = self.fold(&format!("{name}[(t + {off}) & {mask}]"));
                put(&mut self.out, d + 1, &f);
            }
            // Warp shuffles and reductions.
            5 => {
                put(&mut self.out, d, "with group(warp[1]):");
                let f = match self.rng.below(3) {
                    0 => format!("acc = acc + shfl_xor(acc, {})", 1 << self.rng.below(5)),
                    1 => format!("acc = acc + shfl_down(acc, {})", 1 + self.rng.below(31)),
                    _ => "acc = acc + warp_total(acc)".to_string(),
                };
                put(&mut self.out, d + 1, &f);
            }
            // Shared atomics, results unused (they commute).
            6 => {
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("atomic_add({name}[acc & {mask}], 1)"));
            }
            // Global atomics.
            7 => {
                self.writes = true;
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("atomic_add(counters[{}], acc & 7)", self.rng.below(4)));
            }
            // A split of warps or threads, each case at its own perspective.
            8 => {
                let warps = tb / 32;
                if warps >= 2 && self.rng.chance(60) {
                    put(&mut self.out, d, "match split(warp):");
                    put(&mut self.out, d + 1, "case 1:");
                    put(&mut self.out, d + 2, "with group(thread[1]):");
                    let f = self.fold(&format!("{name}[(t * 3) & {mask}]"));
                    put(&mut self.out, d + 3, &f);
                    put(&mut self.out, d + 1, "case 1:");
                    put(&mut self.out, d + 2, &format!("l{id} : int @ thread[1] = id()"));
                    put(&mut self.out, d + 2, &format!("acc = acc + shfl_xor(acc, 1) + l{id}"));
                } else {
                    put(&mut self.out, d, &format!("with claim({name}, p=thread[1]) as c{id}:"));
                    put(&mut self.out, d + 1, "match split(thread):");
                    put(&mut self.out, d + 2, "case 1:");
                    put(&mut self.out, d + 3, &format!("c{id}[0] = acc + u"));
                }
            }
            // A loop around phases.
            9 if cx.depth < 2 => {
                cx.depth += 1;
                if self.rng.chance(50) {
                    put(&mut self.out, d, &format!("for r{id} in range({}):", 1 + self.rng.below(3)));
                    self.phase(cx, d + 1);
                    if self.rng.chance(50) {
                        self.phase(cx, d + 1);
                    }
                } else {
                    put(&mut self.out, d, &format!("k{id} : int @ block[1] = 0"));
                    put(&mut self.out, d, &format!("while k{id} < {}:", 1 + self.rng.below(3)));
                    self.phase(cx, d + 1);
                    put(&mut self.out, d + 1, &format!("k{id} += 1"));
                }
                cx.depth -= 1;
            }
            // A branch on a block-uniform value.
            10 if cx.depth < 2 => {
                cx.depth += 1;
                put(&mut self.out, d, &format!("if (u & {}) == 0:", 1 + self.rng.below(3)));
                self.phase(cx, d + 1);
                put(&mut self.out, d, "else:");
                self.phase(cx, d + 1);
                cx.depth -= 1;
            }
            // An explicit barrier.
            11 => put(&mut self.out, d, "__syncthreads()"),
            // A block-level call through pointer parameters.
            12 if cx.shared.len() >= 2 => {
                let at = cx.shared.iter().position(|s| s.0 == name).unwrap_or(0);
                let (other, olen) = cx.shared[(at + 1) % cx.shared.len()].clone();
                if olen >= tb && len >= tb {
                    let f = if self.rng.chance(50) { "rotate_s" } else { "rotate" };
                    put(&mut self.out, d, &format!("{f}({name}, {other}, {olen})"));
                } else {
                    put(&mut self.out, d, "__syncthreads()");
                }
            }
            // Asynchronous copies: 16 bytes per thread from the input, or 8 from the block's
            // part of `gx`, which other phases write (the flat-index atomics): the copy reads
            // its source until the scope's wait, so a write to it after the scope must wait
            // for every thread's copies, even past a barrier inside the scope (review R66).
            13 if len >= 4 * tb => {
                put(&mut self.out, d, &format!("with async({name}) as a{id}:"));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                let from_gx = !cx.pair && self.rng.chance(30);
                if from_gx {
                    put(&mut self.out, d + 2, &format!("cp_async(a{id}[t * 2], gx[(b * {tb} + t) * 2], 8)"));
                } else {
                    put(&mut self.out, d + 2, &format!("cp_async(a{id}[t * 4], inp[((b * {tb} + t) * 4) % n], 16)"));
                }
                if self.rng.chance(30) {
                    put(&mut self.out, d + 1, "__syncthreads()");
                }
                if from_gx && self.rng.chance(60) {
                    // Another thread's source, written as soon as the scope ends.
                    self.writes = true;
                    put(&mut self.out, d, "with group(thread[1]):");
                    let o = 1 + self.rng.below(tb as usize - 1);
                    put(&mut self.out, d + 1, &format!("atomic_add(gx[(b * {tb} + (t + {o}) % {tb}) * 2], acc & 7)"));
                }
            }
            // A window: reads a neighbour's element through the thread's own view. Trusted.
            14 => {
                self.trusted = true;
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: (t + i) & {mask}) as v{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                let j = self.rng.below(2);
                let f = self.fold(&format!("v{id}[{j}]"));
                put(&mut self.out, d + 2, &f);
            }
            // A half-block group (named barriers) over a partition by half.
            15 if tb >= 64 && cx.narrow == 64 => {
                let half = tb / 2;
                let per = len / 2;
                put(&mut self.out, d, &format!("h{id} : int @ thread[64] = id()"));
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[64], f=lambda i: h{id} * {per} + i) as hv{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[64]):");
                put(&mut self.out, d + 2, &format!("q{id} : int @ thread[1] = id()"));
                let k = per / half.max(1);
                put(
                    &mut self.out,
                    d + 2,
                    &format!("with partition(hv{id}, p=thread[1], f=lambda i: q{id} * {k} + i) as qv{id}:"),
                );
                put(&mut self.out, d + 3, "with group(thread[1]):");
                put(&mut self.out, d + 4, &format!("qv{id}[0] = acc"));
                put(&mut self.out, d + 2, "with group(thread[1]):");
                let f = self.fold(&format!("hv{id}[(q{id} + 1) % {per}]"));
                put(&mut self.out, d + 3, &f);
            }
            // A tree reduction over a per-thread view, the loop's barrier sometimes written.
            16 => {
                put(&mut self.out, d, &format!("with partition({name}, p=thread[1], f=lambda i: t + i) as r{id}:"));
                put(&mut self.out, d + 1, &format!("st{id} : int @ block[1] = {}", tb / 2));
                put(&mut self.out, d + 1, &format!("while st{id} > 0:"));
                put(&mut self.out, d + 2, "with group(thread[1]):");
                put(&mut self.out, d + 3, &format!("if t < st{id}:"));
                put(&mut self.out, d + 4, &format!("r{id}[0] = r{id}[0] + r{id}[st{id}]"));
                if self.rng.chance(30) {
                    put(&mut self.out, d + 2, "__syncthreads()");
                }
                put(&mut self.out, d + 2, &format!("st{id} = st{id} / 2"));
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("acc = acc + {name}[0]"));
            }
            // Atomics whose results are used, in a later phase than the updates.
            17 => {
                put(&mut self.out, d, "with group(thread[1]):");
                let op = if self.rng.chance(50) {
                    format!("atomic_exch({name}[t & {mask}], acc & 15)")
                } else {
                    format!("atomic_load({name}[(t * 5) & {mask}])")
                };
                let f = self.fold(&op);
                put(&mut self.out, d + 1, &f);
            }
            // A loop with a uniform early exit.
            18 if cx.depth < 2 => {
                cx.depth += 1;
                put(&mut self.out, d, &format!("for e{id} in range({}):", 2 + self.rng.below(3)));
                self.phase(cx, d + 1);
                let exit = if self.rng.chance(50) { "break" } else { "continue" };
                put(&mut self.out, d + 1, &format!("if (u + e{id}) % 3 == 0:"));
                put(&mut self.out, d + 2, exit);
                self.phase(cx, d + 1);
                cx.depth -= 1;
            }
            // A loop around a partition whose captured offset moves between views.
            19 => {
                put(&mut self.out, d, &format!("m{id} : int @ thread[1] = t"));
                put(&mut self.out, d, &format!("for r{id} in range({}):", 1 + self.rng.below(3)));
                put(
                    &mut self.out,
                    d + 1,
                    &format!("with partition({name}, p=thread[1], f=lambda i: (m{id} + i) & {mask}) as v{id}:"),
                );
                put(&mut self.out, d + 2, "with group(thread[1]):");
                put(&mut self.out, d + 3, &format!("v{id}[0] = acc + r{id}"));
                put(&mut self.out, d + 1, &format!("m{id} += {}", tb / 2));
                self.trusted = true;
            }
            // A warp's own region, specialised by warp.
            20 if tb / 32 >= 2 => {
                let per = len / (tb / 32);
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[32], f=lambda i: w * {per} + i) as sw{id}:"),
                );
                put(&mut self.out, d + 1, "match split(warp):");
                for case in 0..2 {
                    put(&mut self.out, d + 2, "case 1:");
                    put(&mut self.out, d + 3, &format!("l{id}_{case} : int @ thread[1] = id()"));
                    put(
                        &mut self.out,
                        d + 3,
                        &format!(
                            "with partition(sw{id}, p=thread[1], f=lambda i: l{id}_{case} * {} + i) as lw{id}_{case}:",
                            per / 32
                        ),
                    );
                    put(&mut self.out, d + 4, "with group(thread[1]):");
                    put(&mut self.out, d + 5, &format!("lw{id}_{case}[0] = acc + {case}"));
                }
                put(&mut self.out, d, "with group(thread[1]):");
                let f = self.fold(&format!("{name}[(t * 7) & {mask}]"));
                put(&mut self.out, d + 1, &f);
            }
            // Nested splits: one lane of one warp writes a claimed element.
            21 => {
                put(&mut self.out, d, &format!("with claim({name}, p=thread[1]) as cc{id}:"));
                put(&mut self.out, d + 1, "match split(warp):");
                put(&mut self.out, d + 2, "case 1:");
                put(&mut self.out, d + 3, "match split(thread):");
                put(&mut self.out, d + 4, &format!("case {}:", 1));
                put(&mut self.out, d + 5, &format!("cc{id}[{}] = acc", self.rng.below(len as usize)));
            }
            // Asynchronous copies in a loop: every iteration in flight together.
            22 if len >= 8 * tb => {
                put(&mut self.out, d, &format!("with async({name}) as ca{id}:"));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, "for q in range(2):");
                put(
                    &mut self.out,
                    d + 3,
                    &format!("cp_async(ca{id}[t * 4 + {} * q], inp[((b * {tb} + t) * 4 + q * 8) % n], 16)", 4 * tb),
                );
            }
            // Copies into padded rows repeated at a stride (docs/soundness.md §4.4): pairs of
            // threads' elements in rows of three, `P(t) = t + t / 2`, whose blocks span
            // `P(tb - 1) + 1`; mostly a stride of at least the span (disjoint), sometimes a
            // shorter one, where two threads really write one element and the checker must
            // refuse it (`async-overlap`).
            22 if len >= 4 * tb => {
                let span = (tb - 1) + (tb - 1) / 2 + 1;
                let g = if self.rng.chance(20) {
                    span - 1 - self.rng.below(2) as u32
                } else {
                    span + self.rng.below(3) as u32
                };
                if g + span <= len {
                    put(&mut self.out, d, &format!("with async({name}) as cp{id}:"));
                    put(&mut self.out, d + 1, "with group(thread[1]):");
                    put(&mut self.out, d + 2, "for q in range(2):");
                    put(
                        &mut self.out,
                        d + 3,
                        &format!(
                            "cp_async(cp{id}[(t / 2) * 3 + t % 2 + {g} * q], inp[((b * {tb} + t) * 2 + q) % n], 4)"
                        ),
                    );
                }
            }
            // A read that only some threads make.
            23 => {
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, "if acc > 0:");
                let f = self.fold(&format!("{name}[(acc + t) & {mask}]"));
                put(&mut self.out, d + 2, &f);
            }
            // Aliased arguments (rejected: argument-alias).
            24 if self.rng.chance(20) => {
                let f = if self.rng.chance(50) { "rotate_s" } else { "rotate" };
                put(&mut self.out, d, &format!("{f}({name}, {name}, {len})"));
            }
            // A vector store through a view of two indices (`lambda q, e: s(q) + e`): the
            // thread's striped vectors `t, t + tb, ...` (disjoint), or a function not offset in
            // its last index, which the checker must refuse (else the vectors overlap other
            // threads').
            26 if len / tb >= 2 && self.rng.chance(40) => {
                let k = len / tb;
                let width = if k >= 4 && self.rng.chance(50) { 4 } else { 2 };
                let q = self.rng.below((k / width) as usize);
                let f = match self.rng.below(6) {
                    0 => format!("(t + q * {tb}) * {width} + 2 * e"),
                    1 => format!("(t + q * {tb}) * {width} + q"),
                    2 => format!("(t + e * {tb}) * {width} + q"),
                    _ => format!("(t + q * {tb}) * {width} + e"),
                };
                put(&mut self.out, d, &format!("with partition({name}, p=thread[1], f=lambda q, e: {f}) as vv{id}:"));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("vw{id} : int[4] @ thread[1]"));
                put(&mut self.out, d + 2, &format!("vw{id}[{}] = acc + 1", self.rng.below(width as usize)));
                put(&mut self.out, d + 2, &format!("store_vec(vv{id}[{q}, 0], vw{id}[0], {width})"));
            }
            // A vector store of the thread's own block (its width at most the block), or, wider
            // than the block, into the next thread's elements: trusted then.
            26 if len / tb >= 2 => {
                let k = len / tb;
                let width = if self.rng.chance(25) { (2 * k).min(4) } else { k.min(4) };
                if width > k {
                    self.trusted = true;
                }
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: t * {k} + i) as vv{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("vw{id} : int[4] @ thread[1]"));
                put(&mut self.out, d + 2, &format!("vw{id}[{}] = acc + 1", self.rng.below(width as usize)));
                if width > k {
                    // Even threads only (the vector's start must be a multiple of its width),
                    // and not past the end of the array.
                    put(&mut self.out, d + 2, &format!("if t % 2 == 0 and t * {k} + {width} <= {len}:"));
                    put(&mut self.out, d + 3, &format!("store_vec(vv{id}[0], vw{id}[0], {width})"));
                } else {
                    put(&mut self.out, d + 2, &format!("store_vec(vv{id}[0], vw{id}[0], {width})"));
                }
            }
            // A vector load of four elements another thread wrote.
            27 if len >= 4 => {
                let off = self.rng.below((len / 4) as usize);
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("vl{id} : int[4] @ thread[1]"));
                put(&mut self.out, d + 1, &format!("load_vec(vl{id}[0], {name}[((t + {off}) * 4) & {mask}], 4)"));
                let other = 1 + self.rng.below(3);
                let f = self.fold(&format!("vl{id}[0] + vl{id}[{other}]"));
                put(&mut self.out, d + 1, &f);
            }
            // Two groups of copies in flight into both arrays, then reads of either: the waits
            // (`wait_group 1`, `0`) go where each array is read.
            28 if cx.shared.len() >= 2 && cx.shared.iter().all(|s| s.1 >= 4 * tb) => {
                let order: Vec<usize> = if self.rng.chance(50) { vec![0, 1] } else { vec![1, 0] };
                for (n, &which) in order.iter().enumerate() {
                    let arr = cx.shared[which].0.clone();
                    put(&mut self.out, d, &format!("with async({arr}) as cg{id}_{n}:"));
                    put(&mut self.out, d + 1, "with group(thread[1]):");
                    put(
                        &mut self.out,
                        d + 2,
                        &format!("cp_async(cg{id}_{n}[t * 4], inp[((b * {tb} + t) * 4 + {}) % n], 16)", 8 * n),
                    );
                }
                for &which in &order {
                    let (arr, alen) = cx.shared[which].clone();
                    put(&mut self.out, d, "with group(thread[1]):");
                    let off = 1 + self.rng.below(7);
                    let f = self.fold(&format!("{arr}[(t * 4 + {off}) & {}]", alen - 1));
                    put(&mut self.out, d + 1, &f);
                }
            }
            // A TMA box (8 x 32 ints) into the array, issued by one thread, then read by all.
            30 if len >= 256 => {
                put(&mut self.out, d, &format!("with async({name}) as ta{id}:"));
                put(&mut self.out, d + 1, "match split(thread):");
                put(&mut self.out, d + 2, "case 1:");
                let back = self.rng.below(3);
                put(&mut self.out, d + 3, &format!("tma_load_2d(ta{id}[0], tm, 0, 8 * (u & 7) - {back})"));
                put(&mut self.out, d, "with group(thread[1]):");
                let off = self.rng.below(8);
                let f = self.fold(&format!("{name}[(t * 5 + {off}) & {mask}]"));
                put(&mut self.out, d + 1, &f);
            }
            // A plain pipeline of `cp_async` copies (the first 64 threads copy 16 bytes each
            // of a 256-int tile) whose body folds elements other threads copied. Mostly its
            // body turns at `stage(ring, next=True)`: an operand of the next tile is carried
            // in a register to the next iteration, and sometimes a shared array is read
            // before the turn and written after it (inference orders the write before the
            // next tile's read). Sometimes a stage stands where the turn forbids it, which
            // must be refused: the current tile after the turn, the next one before it.
            40 => {
                let stages = 2 + self.rng.below(3);
                let tiles = self.rng.below(7);
                let turn = self.rng.chance(75);
                let wrong = if turn && self.rng.chance(10) { 1 + self.rng.below(2) } else { 0 };
                let ring = format!("rp{id}");
                let (pv, pn, ps) = (format!("pv{id}"), format!("pn{id}"), format!("ps{id}"));
                put(&mut self.out, d, &format!("{ring} : shared(int[{stages}][256]) @ block[1]"));
                put(&mut self.out, d, &format!("{pv} : int @ thread[1] = 0"));
                put(&mut self.out, d, &format!("for p{id} in pipeline({tiles} + (u & 1), stages={stages}):"));
                put(&mut self.out, d + 1, &format!("with fill({ring}) as pf{id}:"));
                let src = self.rng.below(INPUT as usize / 4) * 4;
                let copy =
                    |at: &str| format!("cp_async(pf{id}[{at}], inp[({at} + 256 * p{id} + {src}) & {}], 16)", INPUT - 1);
                match self.rng.below(4) {
                    // Two copies per thread that only the branch keeps inside the slot
                    // (`Ctx::branch_bounds`); 33 threads reach past it, which is refused.
                    0 if tb >= 64 => {
                        let n = if self.rng.chance(80) { 32 } else { 33 };
                        put(&mut self.out, d + 2, "with group(thread[1]):");
                        put(&mut self.out, d + 3, &format!("if t < {n}:"));
                        put(&mut self.out, d + 4, &copy("4 * t"));
                        put(&mut self.out, d + 4, &copy("4 * t + 128"));
                    }
                    // Two one-thread cases copying the two halves of the slot (compared by
                    // their indices through the slot, `Ctx::apart`); a half that starts a
                    // chunk early overlaps the other, one that starts late spills past the
                    // slot, both refused.
                    1 => {
                        let half = [128, 128, 128, 124, 132][self.rng.below(5)];
                        put(&mut self.out, d + 2, "match split(thread):");
                        for start in [0, half] {
                            put(&mut self.out, d + 3, "case 1:");
                            put(&mut self.out, d + 4, &format!("for cq{id} in range(32):"));
                            put(&mut self.out, d + 5, &copy(&format!("{start} + 4 * cq{id}")));
                        }
                    }
                    _ => {
                        put(&mut self.out, d + 2, "with group(thread[1]):");
                        put(&mut self.out, d + 3, "if t < 64:");
                        put(&mut self.out, d + 4, &copy("4 * t"));
                    }
                }
                let read = 1 + self.rng.below(255);
                let carried = format!("{pv} = {{}}[(t * 3 + {read}) & 255]");
                // The shared array read before the turn and written after it.
                let phased = turn && self.rng.chance(30);
                if wrong == 2 {
                    // The next tile read inside thread code before the turn: refused.
                    put(&mut self.out, d + 1, "with group(thread[1]):");
                    put(&mut self.out, d + 2, &format!("with stage({ring}, next=True) as early{id}:"));
                    put(&mut self.out, d + 3, &format!("acc = acc + early{id}[t & 255]"));
                }
                put(&mut self.out, d + 1, &format!("with stage({ring}) as {ps}:"));
                put(&mut self.out, d + 2, "with group(thread[1]):");
                if turn {
                    put(&mut self.out, d + 3, &format!("if p{id} == 0:"));
                    put(&mut self.out, d + 4, &carried.replace("{}", &ps));
                }
                let off = self.rng.below(256);
                let f = self.fold(&format!("{ps}[(t * 5 + {off} + p{id}) & 255] + {pv}"));
                put(&mut self.out, d + 3, &f);
                if phased {
                    put(&mut self.out, d + 3, &format!("acc = acc + {name}[(t + 1) & {mask}]"));
                }
                if turn {
                    put(&mut self.out, d + 1, &format!("with stage({ring}, next=True) as {pn}:"));
                    put(&mut self.out, d + 2, "with group(thread[1]):");
                    put(&mut self.out, d + 3, &carried.replace("{}", &pn));
                    if wrong == 1 {
                        // The current tile after the turn: refused.
                        put(&mut self.out, d + 1, &format!("with stage({ring}) as late{id}:"));
                        put(&mut self.out, d + 2, "with group(thread[1]):");
                        put(&mut self.out, d + 3, &format!("acc = acc + late{id}[(t + 7) & 255]"));
                    }
                    put(&mut self.out, d + 1, "with group(thread[1]):");
                    put(&mut self.out, d + 2, &format!("acc = acc * 3 + {pv}"));
                    if phased {
                        let k = len / tb;
                        put(
                            &mut self.out,
                            d + 1,
                            &format!("with partition({name}, p=thread[1], f=lambda i: t * {k} + i) as pw{id}:"),
                        );
                        put(&mut self.out, d + 2, "with group(thread[1]):");
                        put(&mut self.out, d + 3, &format!("pw{id}[0] = acc & 255"));
                    }
                }
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("acc = acc + {pv}"));
            }
            // A warp-specialised pipeline: one warp fills a ring by TMA while one or two
            // others fold every tile into `acc`, in a random order of cases.
            31 if tb >= 64 => {
                let stages = 2 + self.rng.below(3);
                let tiles = self.rng.below(7);
                let consumers = if tb >= 128 && self.rng.chance(50) { 2 } else { 1 };
                // Sometimes in a scope of its own (the ring outside it), after which a new
                // array takes the bytes of the pipeline's mbarriers, written by every thread:
                // they must come after the barriers' invalidation, which nothing but the
                // pipeline's last barrier orders (docs/soundness.md §4.3.2).
                let reuse = self.rng.chance(40);
                let outer = d;
                put(&mut self.out, d, &format!("ring{id} : shared(int[{stages}][256], align=128) @ block[1]"));
                let d = if reuse {
                    put(&mut self.out, d, "if (u & 1) >= 0:");
                    d + 1
                } else {
                    d
                };
                put(&mut self.out, d, &format!("for p{id} in pipeline({tiles} + (u & 1), stages={stages}):"));
                put(&mut self.out, d + 1, "match split(warp):");
                let producer_at = self.rng.below(consumers + 1);
                for case in 0..=consumers {
                    put(&mut self.out, d + 2, "case 1:");
                    if case == producer_at {
                        put(&mut self.out, d + 3, &format!("with fill(ring{id}) as sl{id}:"));
                        put(&mut self.out, d + 4, "match split(thread):");
                        put(&mut self.out, d + 5, "case 1:");
                        put(&mut self.out, d + 6, &format!("tma_load_2d(sl{id}[0], tm, 0, 8 * (p{id} % 8))"));
                    } else {
                        put(&mut self.out, d + 3, &format!("with stage(ring{id}) as st{id}_{case}:"));
                        put(&mut self.out, d + 4, "with group(thread[1]):");
                        let f = self.fold(&format!("st{id}_{case}[(t * 3 + p{id}) & 255]"));
                        put(&mut self.out, d + 5, &f);
                    }
                }
                if reuse {
                    // At least the two 8-byte mbarriers per slot.
                    let reps = (stages as u32 * 16).div_ceil(4 * tb);
                    let n = tb * reps;
                    let d = outer;
                    put(&mut self.out, d, &format!("after{id} : shared(int[{n}]) @ block[1]"));
                    put(
                        &mut self.out,
                        d,
                        &format!("with partition(after{id}, p=thread[1], f=lambda i: t + {tb} * i) as aw{id}:"),
                    );
                    put(&mut self.out, d + 1, "with group(thread[1]):");
                    put(&mut self.out, d + 2, &format!("for j in range({reps}):"));
                    put(&mut self.out, d + 3, &format!("aw{id}[j] = acc + j"));
                    put(&mut self.out, d, "with group(thread[1]):");
                    put(&mut self.out, d + 1, &format!("acc = acc + after{id}[(t * 7 + 1) % {n}]"));
                }
            }
            // A generic block function instantiated at a type and sizes (a shared array of
            // `N` elements, `K` per thread); the largest sizes exceed the kernel's budget.
            32 | 33 => {
                let ty = ["int", "uint", "int64", "float", "double"][self.rng.below(5)];
                let n = [32u32, 64, 128, 256, 512, 4096][self.rng.below(6)];
                let k = 1 + self.rng.below(4);
                let at = self.place(cx, d, 0);
                put(&mut self.out, at, &format!("acc = acc + int(gshift[{ty}]({ty}(acc), {n}, {k}))"));
            }
            // A generic warp function with an operator: plain ones, and a collective one that
            // only the fold (warp-uniform code) may call, not the scan (divergent code).
            34 => {
                let op = ["op_add", "op_max", "op_warp"][self.rng.below(3)];
                let ty = if self.rng.chance(10) { "float" } else { "int" };
                let f = if self.rng.chance(50) { "gfold" } else { "gscan" };
                let at = self.place(cx, d, 32);
                put(&mut self.out, at, &format!("acc = acc + int({f}[{ty}, {op}]({ty}(acc)))"));
            }
            // `prism.std.warp` collectives at a random perspective.
            35 => {
                self.imports.insert(
                    "from prism.std.warp import warp_sum, warp_reduce, warp_inclusive_scan, warp_exclusive_sum".into(),
                );
                let call = match self.rng.below(4) {
                    0 => "warp_sum(acc)".to_string(),
                    1 => format!("warp_reduce[int, {}](acc)", ["op_add", "op_max", "op_warp"][self.rng.below(3)]),
                    2 => format!("warp_inclusive_scan[int, {}](acc)", ["op_add", "op_max"][self.rng.below(2)]),
                    _ => "warp_exclusive_sum(acc)".to_string(),
                };
                let at = self.place(cx, d, 32);
                put(&mut self.out, at, &format!("acc = acc + {call}"));
            }
            // `prism.std.block` reductions and scans at a random perspective; the exclusive
            // sum's total goes to a one-item shared array or element 0 of a phase array.
            36 => {
                self.imports.insert(
                    "from prism.std.block import block_sum, block_max, block_min, block_reduce, block_inclusive_sum, block_exclusive_sum"
                        .into(),
                );
                let choice = self.rng.below(5);
                let total = if choice == 3 {
                    if self.rng.chance(50) {
                        put(&mut self.out, d, &format!("tx{id} : shared(int[1]) @ block[1]"));
                        format!("tx{id}")
                    } else {
                        name.clone()
                    }
                } else {
                    String::new()
                };
                let call = match choice {
                    0 => "block_sum(acc)".to_string(),
                    1 => format!("block_reduce[int, {}](acc)", ["op_add", "op_max"][self.rng.below(2)]),
                    2 => "block_inclusive_sum(acc)".to_string(),
                    4 => ["block_max(acc)", "block_min(acc)"][self.rng.below(2)].to_string(),
                    _ => format!("block_exclusive_sum(acc, {total})"),
                };
                let at = self.place(cx, d, 0);
                put(&mut self.out, at, &format!("acc = acc + {call}"));
                if choice == 3 {
                    put(&mut self.out, d, "with group(thread[1]):");
                    let f = self.fold(&format!("{total}[0]"));
                    put(&mut self.out, d + 1, &f);
                }
            }
            // Block exchanges through a caller's array: transposing loads, scatters by ranks
            // (a permutation, or, trusted, not one) and the radix sort. The exchange array is
            // a fresh one or a phase array (the dynamic one too) when it is large enough.
            37 | 38 => {
                self.imports.insert(
                    "from prism.std.block import block_load_transpose, block_scatter_to_blocked, block_radix_sort"
                        .into(),
                );
                let items = [1u32, 2, 4][self.rng.below(3)];
                let need = tb * items + tb * items / 32;
                let fits: Vec<String> = cx.shared.iter().filter(|s| s.1 >= need).map(|s| s.0.clone()).collect();
                let ex = if !fits.is_empty() && self.rng.chance(60) {
                    fits[self.rng.below(fits.len())].clone()
                } else {
                    put(&mut self.out, d, &format!("ex{id} : shared(int[{need}]) @ block[1]"));
                    format!("ex{id}")
                };
                put(&mut self.out, d, &format!("it{id} : int[{items}] @ thread[1]"));
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("for i in range({items}):"));
                put(&mut self.out, d + 2, &format!("it{id}[i] = (acc + i * 7) & 255"));
                match self.rng.below(3) {
                    0 => {
                        let valid = self.rng.below((tb * items) as usize + 1);
                        let at = self.place(cx, d, 0);
                        put(
                            &mut self.out,
                            at,
                            &format!("block_load_transpose[int](inp, it{id}, {items}, {ex}, {valid}, -1)"),
                        );
                    }
                    1 => {
                        put(&mut self.out, d, &format!("rk{id} : int[{items}] @ thread[1]"));
                        put(&mut self.out, d, "with group(thread[1]):");
                        put(&mut self.out, d + 1, &format!("for i in range({items}):"));
                        let rank = if self.rng.chance(10) {
                            self.trusted = true;
                            format!("(t * {items} + i) / 2")
                        } else {
                            format!("(t * {items} + i + {}) % {}", self.rng.below(64), tb * items)
                        };
                        put(&mut self.out, d + 2, &format!("rk{id}[i] = {rank}"));
                        let at = self.place(cx, d, 0);
                        put(
                            &mut self.out,
                            at,
                            &format!("block_scatter_to_blocked[int](it{id}, rk{id}, {items}, {ex})"),
                        );
                    }
                    _ => {
                        let at = self.place(cx, d, 0);
                        put(&mut self.out, at, &format!("block_radix_sort[int](it{id}, {items}, {ex}, 0, 8)"));
                    }
                }
                put(&mut self.out, d, "with group(thread[1]):");
                let f = self.fold(&format!("it{id}[0] * 3 + it{id}[{}]", items - 1));
                put(&mut self.out, d + 1, &f);
            }
            // The user library: a block function of one module over a generic of the other,
            // writing the caller's array, or the generic called directly.
            39 => {
                self.lib = true;
                if self.rng.chance(60) {
                    let at = self.place(cx, d, 0);
                    put(&mut self.out, at, &format!("acc = acc + lib_block({name}, acc)"));
                    put(&mut self.out, d, "with group(thread[1]):");
                    let f = self.fold(&format!("{name}[(t + 5) & {mask}]"));
                    put(&mut self.out, d + 1, &f);
                } else {
                    let at = self.place(cx, d, 32);
                    let steps = self.rng.below(6);
                    put(&mut self.out, at, &format!("acc = acc + lib.ops.lib_fold[int, op_add](acc, {steps})"));
                }
            }
            // A partition of the launch-sized array strided by the block's size.
            25 | 29 if cx.shared.iter().any(|s| s.0 == "dyn") => {
                let len = cx.shared.iter().find(|s| s.0 == "dyn").map_or(tb, |s| s.1);
                put(
                    &mut self.out,
                    d,
                    &format!("with partition(dyn, p=thread[1], f=lambda i: t + block_dim() * i) as dv{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("for j in range({}):", len / tb));
                put(&mut self.out, d + 3, &format!("dv{id}[j] = dv{id}[j] + acc"));
                put(&mut self.out, d, "with group(thread[1]):");
                let off = self.rng.below(len as usize);
                let f = self.fold(&format!("dyn[(t * 3 + {off}) & {}]", len - 1));
                put(&mut self.out, d + 1, &f);
            }
            // Branches of an `if` that different threads (or warps) take at the same time:
            // both counting with one commutative atomic is accepted; an atomic against a
            // plain read, or against another atomic operation, must be refused
            // (`branch-conflict`); so must a conditional expression's arms.
            41 => {
                let ops = ["atomic_add", "atomic_max"];
                let warp_level = tb / 32 >= 2 && self.rng.chance(30);
                let (x, y) = (self.rng.below(len as usize), self.rng.below(len as usize));
                let upd = format!("{}({name}[(t + {x}) & {mask}], acc & 7)", ops[self.rng.below(2)]);
                match self.rng.below(4) {
                    0 if !warp_level => {
                        put(&mut self.out, d, "with group(thread[1]):");
                        let f = self.fold(&format!(
                            "({name}[(t + {y}) & {mask}] if t % 2 == 0 else atomic_add({name}[(t + {x}) & {mask}], 1))"
                        ));
                        put(&mut self.out, d + 1, &f);
                    }
                    v => {
                        let other = match v {
                            1 => format!("{}({name}[(t + {y}) & {mask}], 1)", ops[self.rng.below(2)]),
                            _ => self.fold(&format!("{name}[(t + {y}) & {mask}]")),
                        };
                        if warp_level {
                            put(&mut self.out, d, "with group(warp[1]):");
                            put(&mut self.out, d + 1, "if w % 2 == 0:");
                        } else {
                            put(&mut self.out, d, "with group(thread[1]):");
                            put(&mut self.out, d + 1, &format!("if t < {}:", 1 + self.rng.below(tb as usize)));
                        }
                        put(&mut self.out, d + 2, "with group(thread[1]):");
                        put(&mut self.out, d + 3, &upd);
                        put(&mut self.out, d + 1, "else:");
                        put(&mut self.out, d + 2, "with group(thread[1]):");
                        put(&mut self.out, d + 3, &other);
                    }
                }
            }
            // Two phases of atomic updates whose results are unused: one commutative
            // operation needs no ordering; two different ones must be ordered, or the
            // result depends on the schedule.
            42 => {
                let ops = ["atomic_add", "atomic_max", "atomic_min", "atomic_or", "atomic_xor", "atomic_and"];
                let (a, b) = (ops[self.rng.below(ops.len())], ops[self.rng.below(ops.len())]);
                let (x, y) = (self.rng.below(len as usize), self.rng.below(len as usize));
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("{a}({name}[(t * 3 + {x}) & {mask}], acc & 15)"));
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("{b}({name}[(t * 5 + {y}) & {mask}], (acc >> 2) & 15)"));
            }
            // A call in an index function: a pure `thread[1]` function of values is allowed
            // (the partition stays per-thread and injective); a collective one must be
            // refused (`partition-index-fn`).
            43 => {
                let k = len / tb;
                let call = if self.rng.chance(80) { "op_add(t, 0)" } else { "op_warp(0, t) * 0 + t" };
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: {call} * {k} + i) as v{id}:"),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                let j = self.rng.below(k as usize);
                put(&mut self.out, d + 2, &format!("v{id}[{j}] = acc + {}", self.rng.below(9)));
            }
            // Block-uniform branches over global memory indexed by a block's position
            // written by hand, `b * K + t`: an atomic in one branch, a read in the other
            // (docs/soundness.md §4.4). With `K` the block's `@launch_bounds` and the same
            // offset each thread keeps to its own element; a shorter or longer stride, or a
            // neighbour's element, must be refused or ordered.
            44 if !cx.pair => {
                self.writes = true;
                let k = match self.rng.below(6) {
                    0 => tb / 2,
                    1 => 2 * tb,
                    _ => tb,
                };
                let (o1, o2) = if self.rng.chance(75) { (0, 0) } else { (self.rng.below(2), self.rng.below(2)) };
                put(&mut self.out, d, &format!("if (b & {}) == 0:", 1 + self.rng.below(2)));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("atomic_add(gx[b * {k} + t + {o1}], acc & 7)"));
                put(&mut self.out, d, "else:");
                put(&mut self.out, d + 1, "with group(thread[1]):");
                let f = self.fold(&format!("gx[{k} * b + t + {o2}]"));
                put(&mut self.out, d + 2, &f);
            }
            // Calls given each thread's view, in a loop that a warp (or the block) runs: a
            // callee that keeps to the thread's `k` elements needs no barrier (its range,
            // docs/soundness.md §4.4, "Calls"); one that reaches into the next thread's
            // needs one inside the loop, which warp code cannot hold. Threads of one parity
            // call it in each pass, so that the calls of one pass never overlap (they reach
            // at most `2k` elements) and only passes need ordering, as in
            // `loop_carried_attacks.prism`'s `tree_via_std_call`.
            45 => {
                let k = len / tb;
                let m = match self.rng.below(5) {
                    0 => k + 1,
                    1 => 1,
                    _ => k,
                };
                let m2 = if self.rng.chance(80) { m } else { k + 1 };
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: t * {k} + i) as v{id}:"),
                );
                let mut e = d + 1;
                if self.rng.chance(70) {
                    put(&mut self.out, e, "with group(warp[1]):");
                    e += 1;
                }
                put(&mut self.out, e, &format!("for r{id} in range({}):", 1 + self.rng.below(3)));
                put(&mut self.out, e + 1, "with group(thread[1]):");
                // The last thread's view ends at the array's end.
                put(&mut self.out, e + 2, &format!("if (t + r{id}) % 2 == 0 and t * {k} + {} <= {len}:", m.max(m2)));
                put(&mut self.out, e + 3, &format!("bumpn(v{id}, {m})"));
                put(&mut self.out, e + 3, &format!("acc = acc + sumn(v{id}, {m2})"));
            }
            46 | 47 if cx.wg => self.wgmma(cx, d, id),
            48..=50 => self.mma(cx, d, id),
            // A TMA store of the first array that holds a box.
            51 | 52 if cx.maps && cx.shared.iter().any(|s| s.1 >= 256) => {
                let big: Vec<_> = cx.shared.iter().filter(|s| s.1 >= 256).cloned().collect();
                let (name, len) = big[self.rng.below(big.len())].clone();
                self.tma_store(cx, d, id, &name, len);
            }
            // A 3-D TMA box (2 planes of 4 x 32 ints), corners sometimes partly outside.
            53 if len >= 256 => {
                put(&mut self.out, d, &format!("with async({name}) as t3a{id}:"));
                put(&mut self.out, d + 1, "match split(thread):");
                put(&mut self.out, d + 2, "case 1:");
                let (y, z) = (self.rng.below(3), self.rng.below(2));
                put(
                    &mut self.out,
                    d + 3,
                    &format!("tma_load_3d(t3a{id}[0], t3, 0, 4 * (u & 1) - {y}, 2 * (u & 3) - {z})"),
                );
                put(&mut self.out, d, "with group(thread[1]):");
                let off = self.rng.below(8);
                let f = self.fold(&format!("{name}[(t * 3 + {off}) & {mask}]"));
                put(&mut self.out, d + 1, &f);
            }
            // Global memory indexed `b * K + r(t)` by hand, an atomic and then another
            // thread's element: when every `r` stays inside `[0, K)` the conflicts stay
            // inside one block and a block barrier orders them (docs/soundness.md §4.4,
            // "Conflicts inside one block"); a form that reaches the next block (`t + K`,
            // or `2 * t` under a stride of one block) needs a grid barrier, which block
            // code cannot hold, so the program must be refused.
            54 if !cx.pair => {
                self.writes = true;
                let k = match self.rng.below(4) {
                    0 => tb / 2,
                    1 => 2 * tb,
                    _ => tb,
                };
                let forms = |rng: &mut Rng| -> String {
                    match rng.below(7) {
                        0 | 1 => "t".to_string(),
                        2 | 3 => format!("{} - t", tb - 1),
                        4 => format!("t + {}", [1, tb / 2, tb, k][rng.below(4)]),
                        5 => format!("2 * t + {}", rng.below(2)),
                        _ => format!("{} - t", 2 * tb - 1),
                    }
                };
                let (f1, f2) = (forms(&mut self.rng), forms(&mut self.rng));
                put(&mut self.out, d, "with group(thread[1]):");
                put(&mut self.out, d + 1, &format!("atomic_add(gx[{k} * b + {f1}], acc & 5)"));
                put(&mut self.out, d, "with group(thread[1]):");
                let mut e = d + 1;
                if self.rng.chance(30) {
                    put(&mut self.out, e, &format!("if t < {}:", [tb / 2, tb / 2 + 1, tb][self.rng.below(3)]));
                    e += 1;
                }
                if self.rng.chance(25) {
                    put(&mut self.out, e, &format!("atomic_max(gx[{k} * b + {f2}], acc & 3)"));
                } else {
                    let f = self.fold(&format!("gx[{k} * b + {f2}]"));
                    put(&mut self.out, e, &f);
                }
            }
            _ => {
                put(&mut self.out, d, "with group(thread[1]):");
                let f = self.fold(&format!("{name}[t & {mask}]"));
                put(&mut self.out, d + 1, &f);
            }
        }
    }

    /// A warpgroup's wgmma (m64n8k16 bf16 or m64n8k8 tf32, canonical layout) from tiles of
    /// its own, which every thread fills from `acc` (each warp reads rows the others wrote,
    /// so a barrier must come between), folded back into `acc` after the wait. The tiles are
    /// read asynchronously until `wgmma_wait`: a write to them, or a read of the
    /// accumulators, before the wait must be refused (`wgmma-unwaited`), as must the
    /// wgmma in thread code; a phase in a loop rewrites the tiles
    /// each pass, which the other warps' reads of the last pass must be ordered before.
    /// Two groups in flight, the older waited with `wgmma_wait(1)`, may fold the older's
    /// accumulators only. The products are small integers, exact in every type and order.
    fn wgmma(&mut self, cx: &mut Cx, d: u32, id: u32) {
        let tf32 = self.rng.chance(40);
        let (ty, cast, a_len, b_len, op) =
            if tf32 { ("float", "float", 512, 64, "wgmma_tf32") } else { ("bf16", "bf16", 1024, 128, "wgmma_bf16") };
        let (a, bn, c) = (format!("wa{id}"), format!("wb{id}"), format!("wc{id}"));
        put(&mut self.out, d, &format!("{a} : shared({ty}[{a_len}]) @ block[1]"));
        put(&mut self.out, d, &format!("{bn} : shared({ty}[{b_len}]) @ block[1]"));
        put(&mut self.out, d, &format!("{c} : float[4] @ thread[1]"));
        let per = a_len / 128;
        // A: interleaved over the warps' rows, or each thread a run of its own.
        let f = if self.rng.chance(50) { "t + 128 * s".to_string() } else { format!("t * {per} + s") };
        put(&mut self.out, d, &format!("with partition({a}, p=thread[1], f=lambda s: {f}) as pa{id}:"));
        put(&mut self.out, d + 1, "with group(thread[1]):");
        put(&mut self.out, d + 2, &format!("for s in range({per}):"));
        put(&mut self.out, d + 3, &format!("pa{id}[s] = {cast}(float((acc + s) & 7))"));
        // B: one element per thread, by the first `b_len` threads (64 of them for tf32).
        // Review R58 found the tf32 tile never filled when each thread wrote `b_len / 128`
        // elements: every tf32 wgmma read poison, which the search's verdict (it leaves
        // unwritten reads to their own check) did not flag.
        put(&mut self.out, d, &format!("with partition({bn}, p=thread[1], f=lambda s: t + s) as pb{id}:"));
        put(&mut self.out, d + 1, "with group(thread[1]):");
        put(&mut self.out, d + 2, &format!("if t < {b_len}:"));
        put(&mut self.out, d + 3, &format!("pb{id}[0] = {cast}(float((acc ^ t) & 3))"));
        // Where the warpgroup issues it: its own group, the block code (one warpgroup
        // here) or a block-uniform branch of it, or, refused, thread code.
        let e = match self.rng.below(20) {
            0..=8 => {
                put(&mut self.out, d, "with group(warpgroup[1]):");
                d + 1
            }
            9..=15 => d,
            16 | 17 => {
                put(&mut self.out, d, &format!("if (u & {}) == 0:", 1 + self.rng.below(3)));
                d + 1
            }
            _ => {
                put(&mut self.out, d, "with group(thread[1]):");
                d + 1
            }
        };
        let fold = |g: &mut Gen, d: u32, c: &str| {
            put(&mut g.out, d, "with group(thread[1]):");
            put(&mut g.out, d + 1, "for j in range(4):");
            put(&mut g.out, d + 2, &format!("acc = acc + int({c}[j])"));
        };
        put(&mut self.out, e, "wgmma_fence()");
        put(&mut self.out, e, &format!("{op}({c}, {a}, {bn}, 8)"));
        put(&mut self.out, e, "wgmma_commit_group()");
        match self.rng.below(10) {
            // Two groups in flight; the older waited alone.
            0 | 1 => {
                let c2 = format!("wd{id}");
                // Declared where the wgmma runs, which the fold after it shares.
                put(&mut self.out, e, &format!("{c2} : float[4] @ thread[1]"));
                put(&mut self.out, e, "wgmma_fence()");
                put(&mut self.out, e, &format!("{op}({c2}, {a}, {bn}, 8)"));
                put(&mut self.out, e, "wgmma_commit_group()");
                put(&mut self.out, e, "wgmma_wait(1)");
                // The newer group's accumulators are still being written: refused.
                let early = if self.rng.chance(90) { c.clone() } else { c2.clone() };
                fold(self, e, &early);
                put(&mut self.out, e, "wgmma_wait(0)");
                fold(self, e, if early == c { &c2 } else { &c });
                return;
            }
            // A tile written before the wait: refused.
            2 => {
                put(&mut self.out, e, &format!("with partition({a}, p=thread[1], f=lambda s: t + 128 * s) as pq{id}:"));
                put(&mut self.out, e + 1, "with group(thread[1]):");
                put(&mut self.out, e + 2, &format!("pq{id}[0] = {cast}(1.0)"));
            }
            // The accumulators read before the wait: refused.
            3 => fold(self, e, &c),
            // Another phase while the tiles are read: its memory is not theirs.
            4 | 5 if cx.depth < 2 => {
                cx.depth += 1;
                self.phase(cx, e);
                cx.depth -= 1;
            }
            _ => {}
        }
        put(&mut self.out, e, "wgmma_wait(0)");
        fold(self, e, &c);
    }

    /// A warp-level tensor-core product (mma.sync) from tiles in shared memory: each warp
    /// has a tile of A (16 x 16 16-bit or 16 x 8 float elements) and of B in a block array,
    /// which the threads fill from `acc`, either each warp its own tile (only the warp's
    /// lanes wrote what its `ldmatrix` reads) or interleaved over the block (every warp reads
    /// rows the others wrote, so a barrier must come between). A warp loads its fragments
    /// with `ldmatrix` (bf16, f16 and tf32; B transposed, two B matrices side by side in one
    /// `x4_trans`) from its own tile or the next warp's, or by plain reads in thread code,
    /// runs the mma, and folds the accumulators into `acc`. In a loop, a pass's fill must
    /// be ordered after the other warps' loads of the last pass. Refused: the collective in
    /// thread code (`call-perspective`) or under a branch on the lane (`read-up`). The
    /// products are small integers, exact in every type and order.
    fn mma(&mut self, cx: &mut Cx, d: u32, id: u32) {
        let warps = cx.tb / 32;
        let kind = self.rng.below(3);
        // Two mmas side by side from one transposed x4 load of a 16 x 16 B.
        let wide = kind < 2 && self.rng.chance(30);
        let plain = self.rng.chance(15);
        let (ty, a_len, b_len, fa_n, fb_n) = match kind {
            0 => ("bf16", 256, if wide { 256 } else { 128 }, 8, if wide { 8 } else { 4 }),
            1 => ("half", 256, if wide { 256 } else { 128 }, 8, if wide { 8 } else { 4 }),
            _ => ("float", 128, 64, 4, 2),
        };
        let (ma, mb) = (format!("ma{id}"), format!("mb{id}"));
        let mut d = d;
        if self.rng.chance(25) && cx.depth < 2 {
            put(&mut self.out, d, &format!("for rm{id} in range({}):", 2 + self.rng.below(2)));
            d += 1;
        }
        put(&mut self.out, d, &format!("{ma} : shared({ty}[{}]) @ block[1]", warps * a_len));
        put(&mut self.out, d, &format!("{mb} : shared({ty}[{}]) @ block[1]", warps * b_len));
        // Each thread fills `len / 32` elements of each tile: blocked (warp w's tile is
        // warp w's own) or interleaved over the whole block.
        for (m, len, mod_) in [(&ma, a_len, 8), (&mb, b_len, 4)] {
            let per = len / 32;
            let f = if self.rng.chance(50) { format!("t * {per} + s") } else { format!("t + {} * s", cx.tb) };
            put(&mut self.out, d, &format!("with partition({m}, p=thread[1], f=lambda s: {f}) as p{m}:"));
            put(&mut self.out, d + 1, "with group(thread[1]):");
            put(&mut self.out, d + 2, &format!("for s in range({per}):"));
            put(&mut self.out, d + 3, &format!("p{m}[s] = {ty}(float((acc + s * t) % {mod_} & {}))", mod_ - 1));
        }
        // Where the warps run it: each its own group, one warp's split case, a block-uniform
        // branch; or, refused, thread code or a branch on the lane.
        let roll = self.rng.below(20);
        let e = match roll {
            12..=14 if warps >= 2 => {
                put(&mut self.out, d, "match split(warp):");
                put(&mut self.out, d + 1, "case 1:");
                d + 2
            }
            15 | 16 => {
                put(&mut self.out, d, &format!("if (u & {}) == 0:", 1 + self.rng.below(3)));
                put(&mut self.out, d + 1, "with group(warp[1]):");
                d + 2
            }
            17 => {
                put(&mut self.out, d, "with group(thread[1]):");
                d + 1
            }
            _ => {
                put(&mut self.out, d, "with group(warp[1]):");
                d + 1
            }
        };
        let (l, fa, fb, fc) = (format!("l{id}"), format!("fa{id}"), format!("fb{id}"), format!("fc{id}"));
        // In thread code (roll 17) `id()` would itself be refused (`id-not-narrower`) and
        // hide the collective's `call-perspective` (review R61): the lane by arithmetic.
        let lane = if roll == 17 { "t % 32" } else { "id()" };
        put(&mut self.out, e, &format!("{l} : int @ thread[1] = {lane}"));
        put(&mut self.out, e, &format!("{fa} : {ty}[{fa_n}] @ thread[1]"));
        put(&mut self.out, e, &format!("{fb} : {ty}[{fb_n}] @ thread[1]"));
        put(&mut self.out, e, &format!("{fc} : float[8] @ thread[1]"));
        put(&mut self.out, e, "with group(thread[1]):");
        put(&mut self.out, e + 1, "for j in range(8):");
        put(&mut self.out, e + 2, &format!("{fc}[j] = 0.0"));
        // The warp's own tile, or the next warp's.
        let wt = if warps >= 2 && self.rng.chance(40) { format!("((w + 1) % {warps})") } else { "w".to_string() };
        // Through a warp function given the tiles as shared pointers: inference orders the
        // fill against the callee's `ldmatrix` rows through the call's summary. Its result
        // is declared where the fold reads it, outside the refused lane branch (review R61).
        let helper = kind == 0 && !wide && !plain && self.rng.chance(30);
        if helper {
            put(&mut self.out, e, &format!("hr{id} : int @ thread[1] = 0"));
        }
        let c = if roll == 18 {
            put(&mut self.out, e, &format!("if {l} < 16:"));
            e + 1
        } else {
            e
        };
        let outs = |v: &str, n: u32| (0..n).map(|k| format!("{v}[{k}]")).collect::<Vec<_>>().join(", ");
        if helper {
            put(&mut self.out, c, &format!("hr{id} = mma_from({ma}, {mb}, {wt})"));
            put(&mut self.out, e, "with group(thread[1]):");
            put(&mut self.out, e + 1, &format!("acc = acc + hr{id}"));
            return;
        }
        if plain {
            // Fragments read by each thread, in no particular layout: the mma only needs
            // the warp's values, and the reads other threads' elements.
            put(&mut self.out, c, "with group(thread[1]):");
            put(&mut self.out, c + 1, &format!("for k in range({fa_n}):"));
            put(&mut self.out, c + 2, &format!("{fa}[k] = {ma}[{wt} * {a_len} + ({l} * {fa_n} + 3 * k) % {a_len}]"));
            put(&mut self.out, c + 1, &format!("for k in range({fb_n}):"));
            put(&mut self.out, c + 2, &format!("{fb}[k] = {mb}[{wt} * {b_len} + ({l} * {fb_n} + 5 * k) % {b_len}]"));
        } else if kind == 2 {
            put(
                &mut self.out,
                c,
                &format!(
                    "ldmatrix_x4_tf32({ma}[{wt} * 128 + ({l} % 8 + 8 * (({l} / 8) % 2)) * 8 + 4 * ({l} / 16)], out=[{}])",
                    outs(&fa, 4)
                ),
            );
            put(
                &mut self.out,
                c,
                &format!(
                    "ldmatrix_x2_tf32({mb}[{wt} * 64 + ({l} % 8) * 8 + 4 * (({l} / 8) % 2)], out=[{}])",
                    outs(&fb, 2)
                ),
            );
        } else {
            let sfx = if kind == 0 { "bf16" } else { "f16" };
            put(
                &mut self.out,
                c,
                &format!(
                    "ldmatrix_x4_{sfx}({ma}[{wt} * 256 + ({l} % 8 + 8 * (({l} / 8) % 2)) * 16 + 8 * ({l} / 16)], out=[{}])",
                    outs(&fa, 8)
                ),
            );
            if wide {
                put(
                    &mut self.out,
                    c,
                    &format!(
                        "ldmatrix_x4_trans_{sfx}({mb}[{wt} * 256 + ({l} % 16) * 16 + 8 * ({l} / 16)], out=[{}])",
                        outs(&fb, 8)
                    ),
                );
            } else {
                put(
                    &mut self.out,
                    c,
                    &format!("ldmatrix_x2_trans_{sfx}({mb}[{wt} * 128 + ({l} % 16) * 8], out=[{}])", outs(&fb, 4)),
                );
            }
        }
        let op = match kind {
            0 => "mma_bf16",
            1 => "mma_f16",
            _ => "mma_tf32",
        };
        let acc = |k: u32| (0..4).map(|j| format!("{fc}[{}]", 4 * k + j)).collect::<Vec<_>>().join(", ");
        for k in 0..(if wide { 2 } else { 1 }) {
            let b: Vec<String> = (0..fb_n.min(4)).map(|j| format!("{fb}[{}]", 4 * k + j)).collect();
            put(
                &mut self.out,
                c,
                &format!("intrinsic.{op}({}, {}, {}, out=[{}])", outs(&fa, fa_n), b.join(", "), acc(k), acc(k)),
            );
        }
        put(&mut self.out, e, "with group(thread[1]):");
        put(&mut self.out, e + 1, "for j in range(8):");
        put(&mut self.out, e + 2, &format!("acc = acc + int({fc}[j])"));
    }

    /// A TMA store of a box of a phase array (256 ints from its start): 2-D into `to`
    /// (8 rows) or 3-D into `o3` (2 planes of 4 rows), through a claim of the block's
    /// identity view by one thread. The threads mostly write the box's elements first (the
    /// storing thread reads them all: a barrier between) and sometimes rewrite them after
    /// (the store must be complete first), or load the stored box back by TMA through the
    /// same view (ordered after the store). Blocks store their own boxes, sometimes partly
    /// outside the array (not written), sometimes overlapping a neighbour's (a race the
    /// language leaves to the identity partition's trust). Refused: a store from every
    /// thread, or through the block's view (`store-perspective`).
    fn tma_store(&mut self, cx: &mut Cx, d: u32, id: u32, name: &str, len: u32) {
        let tb = cx.tb;
        let three = self.rng.chance(35);
        if self.rng.chance(60) {
            put(&mut self.out, d, &format!("with partition({name}, p=thread[1], f=lambda i: t + {tb} * i) as sv{id}:"));
            put(&mut self.out, d + 1, "with group(thread[1]):");
            put(&mut self.out, d + 2, &format!("for j in range({}):", len / tb));
            put(&mut self.out, d + 3, &format!("sv{id}[j] = acc + j"));
        }
        // Overlapping corners make the program trusted (the identity partition's exception),
        // which hides every other race in it: only where a neighbour exists (review R61).
        // The other corners are disjoint between blocks because a launch has at most 3
        // (`8 * b + 24` reaches block 3's rows).
        let overlap = cx.grid > 1;
        let coords = match (three, self.rng.below(10)) {
            (false, 0..=5) => "0, 8 * b".to_string(),
            (false, 6) => "16, 8 * b".to_string(),
            (false, 7) => "0, 8 * b + 24 * (u & 1)".to_string(),
            (false, 8) => {
                self.trusted |= overlap;
                "0, 4 * b".to_string()
            }
            (false, _) => {
                self.trusted |= overlap;
                "0, 8 * b - 3".to_string()
            }
            (true, 0..=5) => "0, 4 * (u & 1), 2 * b".to_string(),
            (true, 6) => "-8, 4 * b - 2, 2 * b".to_string(),
            (true, 7) => "0, 0, 2 * b + 6 * (u & 1)".to_string(),
            (true, _) => {
                self.trusted |= overlap;
                "0, 4 * (u & 1), b".to_string()
            }
        };
        let (map, op, load) =
            if three { ("o3_b", "tma_store_3d", "tma_load_3d") } else { ("to_b", "tma_store_2d", "tma_load_2d") };
        let store = |v: &str| format!("{op}({v}, {coords}, {name}[0])");
        match self.rng.below(14) {
            0..=8 => {
                put(&mut self.out, d, &format!("with claim({map}, p=thread[1]) as st{id}:"));
                put(&mut self.out, d + 1, "match split(thread):");
                put(&mut self.out, d + 2, "case 1:");
                put(&mut self.out, d + 3, &store(&format!("st{id}")));
            }
            9 | 10 => {
                put(&mut self.out, d, &format!("if (u & {}) == 0:", 1 + self.rng.below(3)));
                put(&mut self.out, d + 1, &format!("with claim({map}, p=thread[1]) as st{id}:"));
                put(&mut self.out, d + 2, "match split(warp):");
                put(&mut self.out, d + 3, "case 1:");
                put(&mut self.out, d + 4, "match split(thread):");
                put(&mut self.out, d + 5, "case 1:");
                put(&mut self.out, d + 6, &store(&format!("st{id}")));
            }
            11 => {
                put(&mut self.out, d, &format!("with claim({map}, p=thread[1]) as st{id}:"));
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &store(&format!("st{id}")));
            }
            _ => {
                put(&mut self.out, d, "match split(thread):");
                put(&mut self.out, d + 1, "case 1:");
                put(&mut self.out, d + 2, &store(map));
            }
        }
        match self.rng.below(10) {
            // The source rewritten: after the store has read it.
            0..=2 => {
                put(
                    &mut self.out,
                    d,
                    &format!("with partition({name}, p=thread[1], f=lambda i: t * {} + i) as sw{id}:", len / tb),
                );
                put(&mut self.out, d + 1, "with group(thread[1]):");
                put(&mut self.out, d + 2, &format!("sw{id}[0] = acc * 5"));
            }
            // The box loaded back into the array the store read, then read by every thread.
            3..=5 => {
                put(&mut self.out, d, &format!("with async({name}) as sb{id}:"));
                put(&mut self.out, d + 1, "match split(thread):");
                put(&mut self.out, d + 2, "case 1:");
                put(&mut self.out, d + 3, &format!("{load}(sb{id}[0], {map}, {coords})"));
                put(&mut self.out, d, "with group(thread[1]):");
                let off = self.rng.below(8);
                let f = self.fold(&format!("{name}[(t * 7 + {off}) & {}]", len - 1));
                put(&mut self.out, d + 1, &f);
            }
            _ => {}
        }
    }
}

/// The parameters every generated kernel starts with (`arguments` in the search gives
/// them in this order): the input, the output, counters, the input's length, a TMA map to
/// load 2-D boxes from, the global array indexed by hand, a map the blocks store 2-D boxes
/// into, a 3-D map to load from, and one to store 3-D boxes into.
pub const PARAMS: &str = "inp : ptr(const(int)), out : ptr(int), counters : ptr(int), n : int, \
     tm : tensor_map(int[8][32]), gx : ptr(int), to : tensor_map(int[8][32]), \
     t3 : tensor_map(int[2][4][32]), o3 : tensor_map(int[2][4][32])";

/// Planes of the 3-D arrays behind `t3` and `o3` (each plane 8 rows of 32 ints; boxes of 2
/// planes of 4 rows).
pub const PLANES: u32 = 8;

/// The start of a program's `# launch:` line, with the arguments of [`PARAMS`].
pub fn launch_head(grid: u32, block: u32) -> String {
    format!(
        "# launch: fuzz --grid {grid} --block {block} --arg inp=rand:i32:{INPUT}:7 --arg out=zeros:i32:{} \
         --arg counters=zeros:i32:4 --arg n={INPUT} --arg tm=rand:i32:{TILES}x32:9 --arg gx=zeros:i32:{} \
         --arg to=zeros:i32:{TILES}x32 --arg t3=rand:i32:{PLANES}x8x32:11 --arg o3=zeros:i32:{PLANES}x8x32",
        grid * block,
        gx_len(grid, block)
    )
}

/// The elements of `gx`, the global array phases index by a block's position written by
/// hand (`b * K + r`, `K` up to twice the block, `r` up to `K` plus twice the block).
pub fn gx_len(grid: u32, block: u32) -> u32 {
    (grid + 2) * block * 2 + 2
}

/// Appends a line of code at an indentation level.
fn put(out: &mut String, indent: u32, text: &str) {
    for _ in 0..indent {
        out.push_str("    ");
    }
    let _ = writeln!(out, "{text}");
}

//! What the printer needs to know about a function before emitting it: where each register
//! is defined and used, which registers fold into the expression that uses them, where each
//! remaining register is declared and under which C++ name, and what each pointer points to.
//!
//! Positions number instructions in pre-order (a structured instruction before the
//! instructions of its blocks; a loop's header, then body, then latch). A register folds into
//! its use ("inlining") when it has no source name, one definition and one use, and moving
//! the computation to the use cannot change its value or its effects: no operand it reads is
//! redefined in between; an expression holding a load (its own or a folded operand's) moves
//! only to a use directly in the same block, past nothing that writes or synchronises; one
//! holding a call, atomic or collective only to such a use, past pure instructions only, and
//! never into a select (`folded_purity`; docs/cuda.md, "Folding"). Constants fold into every
//! use.
//!
//! Invariant: a register that is not inlined and has a definition is declared exactly once,
//! in the innermost block that contains all its definitions and uses.

use prism_ir::ir::{Block, Function, InstKind, IntrArg, Type};
use prism_ir::{LocalId, Reg};
use prism_types::intrinsics::CodeReq;
use prism_types::ty::Scalar;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// A definition or use of a register.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    /// The block (index into [`Analysis::blocks`]).
    pub block: usize,
    /// Index of the instruction in that block.
    pub idx: usize,
    /// Pre-order position of the instruction.
    pub pos: usize,
    /// A definition (else a use).
    pub def: bool,
}

/// Where a register is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decl {
    /// At its first definition, which is instruction `idx` of `block`: `T x = e;`.
    AtDef { block: usize, idx: usize },
    /// Before instruction `idx` of `block`, zero-initialised.
    Before { block: usize, idx: usize },
}

/// A block of the function.
#[derive(Clone, Debug)]
pub struct BlockMeta {
    /// The enclosing block.
    pub parent: Option<usize>,
    /// Nesting depth (the body is 0).
    pub depth: usize,
}

/// The analysis of one function.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Blocks by index.
    pub blocks: Vec<BlockMeta>,
    /// Sites per register.
    pub sites: Vec<Vec<Site>>,
    /// Position range `[pos, end)` of each instruction, by (block, idx).
    pub ranges: HashMap<(usize, usize), (usize, usize)>,
    /// Registers folded into their uses.
    pub inlined: HashSet<Reg>,
    /// Declaration of each declared register.
    pub decls: HashMap<Reg, Decl>,
    /// C++ names of registers.
    pub names: HashMap<Reg, String>,
    /// C++ names of thread-local arrays.
    pub local_names: HashMap<LocalId, String>,
    /// Element type of pointer registers.
    pub ptr_elem: HashMap<Reg, Scalar>,
    /// Pointer registers that are never written through.
    pub ptr_const: HashSet<Reg>,
    /// Registers never read whose definitions have no effect (not emitted).
    pub dead: HashSet<Reg>,
    /// Dead registers whose expression, once inlined operands are expanded, holds an
    /// instruction with an effect (`old = atomic_add(...)` with `old` unused folds the atomic
    /// into `old`'s copy): emitted as `(void)(expr);` so the effect stays.
    pub discard: HashSet<Reg>,
    /// The defining instruction of each register defined by a simple instruction.
    pub def_inst: HashMap<Reg, InstKind>,
    /// Value ranges of integer registers that have one (`crate::interval`): signed
    /// arithmetic on them that cannot overflow is printed natively.
    pub values: HashMap<Reg, crate::interval::Range>,
}

impl Analysis {
    /// Whether register `r` has exactly one definition.
    pub fn defined_once(&self, r: Reg) -> bool {
        self.sites[r.index()].iter().filter(|s| s.def).count() == 1
    }

    /// The block index of `b`: its pre-order number in the function (`Block::id`).
    pub fn block_id(&self, b: &Block) -> usize {
        b.id as usize
    }

    fn is_ancestor(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.blocks[b].parent {
                Some(p) => b = p,
                None => return false,
            }
        }
    }

    fn lca(&self, mut a: usize, mut b: usize) -> usize {
        while self.blocks[a].depth > self.blocks[b].depth {
            a = self.blocks[a].parent.expect("deeper block has a parent");
        }
        while self.blocks[b].depth > self.blocks[a].depth {
            b = self.blocks[b].parent.expect("deeper block has a parent");
        }
        while a != b {
            a = self.blocks[a].parent.expect("blocks share the root");
            b = self.blocks[b].parent.expect("blocks share the root");
        }
        a
    }
}

/// How an instruction may be moved, from the most movable to the least (the order matters:
/// an expression with folded operands moves only as far as its least movable part).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Purity {
    /// No effect and reads no memory: may move anywhere its operands are unchanged.
    Pure,
    /// Reads memory (a load): may move past instructions that write nothing.
    Reads,
    /// Has an effect or is a collective (atomics, shuffles, calls): may move only past pure
    /// instructions, to a use in the same block.
    Effect,
    /// Never folded.
    Fixed,
}

/// The purity of an instruction.
pub fn purity(k: &InstKind) -> Purity {
    use InstKind::*;
    match k {
        k if k.is_register_only() => Purity::Pure,
        Load { .. } | LocalLoad { .. } => Purity::Reads,
        Intrinsic { dsts, intrinsic, .. } if dsts.len() == 1 => {
            if intrinsic.sig().code == CodeReq::Pure {
                Purity::Pure
            } else if matches!(intrinsic.sig().name, "volatile_load" | "volatile_store") {
                Purity::Fixed
            } else {
                Purity::Effect
            }
        }
        Call { dst: Some(_), .. } => Purity::Effect,
        _ => Purity::Fixed,
    }
}

/// The purity of the expression an instruction prints as once its inlined operands are
/// folded into it: the least movable of the instruction's own and theirs. A pure `*` whose
/// operand is an inlined load moves the load with it, so it may move only where the load
/// may (until 2026-12-01 the instruction's own purity decided, and `s2[0] * 2 + s[0]`
/// carried the load of `s2[0]` past the barrier placed before the load of `s[0]`).
pub fn folded_purity(a: &Analysis, k: &InstKind) -> Purity {
    let mut p = purity(k);
    let mut stack = k.uses();
    while let Some(r) = stack.pop() {
        if !a.inlined.contains(&r) {
            continue;
        }
        if let Some(def) = a.def_inst.get(&r) {
            p = p.max(purity(def));
            stack.extend(def.uses());
        }
    }
    p
}

/// Whether an instruction writes memory or synchronises (what a load may not move past).
fn writes(k: &InstKind) -> bool {
    !matches!(purity(k), Purity::Pure | Purity::Reads)
}

/// Analyses `f`. `reserved` are names taken function-wide (parameters are added).
pub fn analyse(f: &Function, reserved: &[&str], param_names: &[String]) -> Analysis {
    let mut a = Analysis { sites: vec![Vec::new(); f.regs.len()], ..Analysis::default() };
    let mut pos = 0;
    number(&mut a, &f.body, None, 0, &mut pos);
    pointers(&mut a, f);
    inline(&mut a, f, &f.body);
    a.dead = dead_registers(f);
    a.discard = effects_in_dead(&a);
    a.values = crate::interval::of(f);
    declare(&mut a, f);
    name(&mut a, f, reserved, param_names);
    a
}

fn number(a: &mut Analysis, b: &Block, parent: Option<usize>, depth: usize, pos: &mut usize) {
    let id = a.blocks.len();
    debug_assert_eq!(id, b.id as usize, "blocks are numbered in pre-order");
    a.blocks.push(BlockMeta { parent, depth });
    for (idx, inst) in b.insts.iter().enumerate() {
        let p = *pos;
        *pos += 1;
        for r in inst.kind.uses() {
            a.sites[r.index()].push(Site { block: id, idx, pos: p, def: false });
        }
        for r in inst.kind.defs() {
            a.sites[r.index()].push(Site { block: id, idx, pos: p, def: true });
            if inst.kind.blocks().is_empty() {
                a.def_inst.insert(r, inst.kind.clone());
            }
        }
        match &inst.kind {
            InstKind::Loop { header, cond, body, latch, .. } => {
                number(a, header, Some(id), depth + 1, pos);
                let hid = header.id as usize;
                a.sites[cond.index()].push(Site { block: hid, idx: header.insts.len(), pos: *pos, def: false });
                *pos += 1;
                number(a, body, Some(id), depth + 1, pos);
                number(a, latch, Some(id), depth + 1, pos);
            }
            k => {
                for nb in k.blocks() {
                    number(a, nb, Some(id), depth + 1, pos);
                }
            }
        }
        a.ranges.insert((id, idx), (p, *pos));
    }
}

/// Element types and const-ness of pointer registers.
fn pointers(a: &mut Analysis, f: &Function) {
    let mut elems = f.mems.iter().filter(|m| m.kind == prism_ir::ir::MemKind::Param).map(|m| m.elem);
    for &p in &f.params {
        match f.reg_ty(p) {
            Type::Ptr => {
                if let Some(e) = elems.next() {
                    a.ptr_elem.insert(p, e);
                }
            }
            // A typed tensor map has a parameter memory too, in parameter order.
            Type::TensorMap(_) => {
                elems.next();
            }
            _ => {}
        }
    }
    // Propagate through the instructions until nothing changes (copies may come before
    // their sources in a loop).
    let mut written: HashSet<Reg> = HashSet::new();
    for _ in 0..4 {
        f.body.walk(&mut |k| match k {
            InstKind::SharedAddr { dst, elem, .. } => {
                a.ptr_elem.insert(*dst, *elem);
            }
            InstKind::LocalAddr { dst, local } => {
                a.ptr_elem.insert(*dst, f.locals[local.index()].elem);
                written.insert(*dst);
            }
            InstKind::PtrOffset { dst, base, .. } | InstKind::Copy { dst, src: base } => {
                if let Some(&e) = a.ptr_elem.get(base) {
                    a.ptr_elem.insert(*dst, e);
                }
            }
            _ => {}
        });
    }
    // A pointer is written through if any access through it (or a pointer derived from it)
    // is not a plain read.
    let mut derived: Vec<(Reg, Reg)> = Vec::new();
    f.body.walk(&mut |k| match k {
        InstKind::Store { ptr, .. } | InstKind::StoreVec { ptr, .. } => {
            written.insert(*ptr);
        }
        InstKind::Intrinsic { args, intrinsic, .. } => {
            let sig = intrinsic.sig();
            for (i, arg) in args.iter().enumerate() {
                let p = match arg {
                    IntrArg::Elem { ptr, .. } => *ptr,
                    IntrArg::Val(r) if f.reg_ty(*r) == Type::Ptr => *r,
                    _ => continue,
                };
                let read_only = sig.params.get(i).is_some_and(|ps| {
                    matches!(
                        ps.kind,
                        prism_types::intrinsics::ParamKind::Ref { mutable: false }
                            | prism_types::intrinsics::ParamKind::Mem { mutable: false }
                    )
                }) && !matches!(sig.name, "atomic_load" | "volatile_load");
                if !read_only {
                    written.insert(p);
                }
            }
        }
        InstKind::Call { args, .. } => {
            for r in args {
                if f.reg_ty(*r) == Type::Ptr {
                    written.insert(*r);
                }
            }
        }
        InstKind::PtrOffset { dst, base, .. } | InstKind::Copy { dst, src: base } => derived.push((*dst, *base)),
        _ => {}
    });
    // Calls pass pointers on: a callee's parameter is const when it writes nothing, but the
    // caller's pointer stays writable unless the callee's parameter is const. The walk above
    // has no callee information, so pointers passed to calls count as written there.
    spread(&derived, &mut written, |&(d, b)| (d, b));
    // The IR's access sites do know the callees: a call records a write on a pointer
    // argument only where the callee's parameter is declared writable, and every store,
    // atomic, asynchronous copy and volatile access records its kind. A pointer parameter
    // whose memory (and every view of it) has only reads is const, and so is every pointer
    // derived from it. This agrees with the callees' own signatures: a parameter declared
    // `ptr(const(T))` is never written (the checker), so it is const here and in the
    // callee; one passed to a writable parameter has a write recorded, so it stays
    // writable. A mistake here could only print `const` on a pointer something writes
    // through, which nvcc rejects (every corpus program is compiled in CI).
    let mut param_mems = f.mems.iter().enumerate().filter(|(_, m)| m.kind == prism_ir::ir::MemKind::Param);
    let mut only_read: HashSet<Reg> = HashSet::new();
    for &p in &f.params {
        if !matches!(f.reg_ty(p), Type::Ptr | Type::TensorMap(_)) {
            continue;
        }
        let Some((m, _)) = param_mems.next() else { break };
        if f.reg_ty(p) == Type::Ptr && !f.writes_param(prism_ir::MemId(m as u32)) {
            only_read.insert(p);
        }
    }
    spread(&derived, &mut only_read, |&(d, b)| (b, d));
    for (&r, _) in a.ptr_elem.iter() {
        if !written.contains(&r) || only_read.contains(&r) {
            a.ptr_const.insert(r);
        }
    }
}

/// Adds to `set` every register reached from it along the `(from, to)` edges `edge` makes
/// of each `(derived, base)` pair, until nothing changes (a copy may come before its source
/// in a loop, and chains of views have any length).
fn spread(derived: &[(Reg, Reg)], set: &mut HashSet<Reg>, edge: impl Fn(&(Reg, Reg)) -> (Reg, Reg)) {
    loop {
        let before = set.len();
        for (from, to) in derived.iter().map(&edge) {
            if set.contains(&from) {
                set.insert(to);
            }
        }
        if set.len() == before {
            return;
        }
    }
}

fn inline(a: &mut Analysis, f: &Function, b: &Block) {
    let bid = a.block_id(b);
    for (k, inst) in b.insts.iter().enumerate() {
        for nb in inst.kind.blocks() {
            inline(a, f, nb);
        }
        let defs = inst.kind.defs();
        let [r] = defs.as_slice() else { continue };
        let r = *r;
        if f.regs[r.index()].name.is_some() || f.params.contains(&r) {
            continue;
        }
        let sites = &a.sites[r.index()];
        if sites.iter().filter(|s| s.def).count() != 1 {
            continue;
        }
        let p = folded_purity(a, &inst.kind);
        if p == Purity::Fixed {
            continue;
        }
        if matches!(inst.kind, InstKind::Const { .. }) {
            a.inlined.insert(r);
            continue;
        }
        let uses: Vec<Site> = sites.iter().filter(|s| !s.def).copied().collect();
        let [u] = uses.as_slice() else { continue };
        let (pk, _) = a.ranges[&(bid, k)];
        if u.pos <= pk {
            continue;
        }
        // The instruction of this block containing the use.
        let found = (k + 1..b.insts.len()).find(|&m| {
            let (s, e) = a.ranges[&(bid, m)];
            (s..e).contains(&u.pos)
        });
        // A loop condition is used at the end of the loop's header.
        let (m, (pm, em)) = match found {
            Some(m) => (m, a.ranges[&(bid, m)]),
            None if u.block == bid && u.idx == b.insts.len() => (b.insts.len(), (u.pos, u.pos + 1)),
            None => continue,
        };
        let direct = u.pos == pm && u.block == bid;
        if p != Purity::Pure && !direct {
            continue;
        }
        // A select prints as C's `c ? a : b`, which evaluates one side: an effect folded
        // into it would run only when its side is chosen, where the IR runs it always.
        if p == Purity::Effect && b.insts.get(m).is_some_and(|i| matches!(i.kind, InstKind::Select { .. })) {
            continue;
        }
        // Operands after folding: none may be redefined between here and the use.
        let leaves = leaves(a, f, &inst.kind);
        let redefined = leaves
            .iter()
            .any(|l| a.sites[l.index()].iter().any(|s| s.def && s.pos > pk && s.pos < em && !(direct && s.pos == pm)));
        if redefined {
            continue;
        }
        let between = &b.insts[k + 1..m];
        let ok = match p {
            Purity::Pure => true,
            Purity::Reads => !between.iter().any(|i| writes(&i.kind)),
            _ => between.iter().all(|i| purity(&i.kind) == Purity::Pure),
        };
        if ok {
            a.inlined.insert(r);
        }
    }
}

/// The dead registers whose expression folds in an instruction with an effect. `inline` may
/// fold an effect (an atomic, a call) into its single, direct use; when that use defines a
/// dead register, dropping the dead definition would drop the effect with it.
fn effects_in_dead(a: &Analysis) -> HashSet<Reg> {
    // A dead register's own definition is pure (`dead_registers`): look through the
    // operands folded into it.
    let has_effect = |r: Reg| {
        let mut stack = Vec::new();
        if let Some(def) = a.def_inst.get(&r) {
            stack.extend(def.uses());
        }
        while let Some(r) = stack.pop() {
            if !a.inlined.contains(&r) {
                continue;
            }
            let Some(def) = a.def_inst.get(&r) else { continue };
            if !matches!(purity(def), Purity::Pure | Purity::Reads) {
                return true;
            }
            stack.extend(def.uses());
        }
        false
    };
    a.dead.iter().copied().filter(|&r| has_effect(r)).collect()
}

/// The registers an instruction reads once its inlined operands are expanded.
fn leaves(a: &Analysis, _f: &Function, k: &InstKind) -> Vec<Reg> {
    let mut out = Vec::new();
    let mut stack = k.uses();
    while let Some(r) = stack.pop() {
        if a.inlined.contains(&r) {
            if let Some(def) = a.def_inst.get(&r) {
                stack.extend(def.uses());
            }
        } else {
            out.push(r);
        }
    }
    out
}

/// Registers whose values nothing with an effect ever needs: every definition is pure (or a
/// load) and every use is in the definition of another such register. Their definitions are
/// not emitted (nvcc would warn about unused variables).
fn dead_registers(f: &Function) -> HashSet<Reg> {
    let n = f.regs.len();
    let mut removable = vec![true; n];
    let mut feeds: Vec<Vec<Reg>> = vec![Vec::new(); n];
    let mut live = vec![false; n];
    let mut work = Vec::new();
    f.body.walk(&mut |k| {
        let defs = k.defs();
        let pure = matches!(purity(k), Purity::Pure | Purity::Reads) && defs.len() == 1;
        if pure {
            for u in k.uses() {
                feeds[defs[0].index()].push(u);
            }
        } else {
            for d in &defs {
                removable[d.index()] = false;
            }
            for u in k.uses() {
                work.push(u);
            }
        }
        if let InstKind::Loop { cond, .. } = k {
            work.push(*cond);
        }
    });
    for &p in &f.params {
        live[p.index()] = true;
    }
    for (i, r) in removable.iter().enumerate() {
        if !r {
            work.push(Reg(i as u32));
        }
    }
    while let Some(r) = work.pop() {
        if std::mem::replace(&mut live[r.index()], true) {
            continue;
        }
        work.extend(feeds[r.index()].iter().copied());
    }
    (0..n).filter(|&i| !live[i]).map(|i| Reg(i as u32)).collect()
}

fn declare(a: &mut Analysis, f: &Function) {
    for (i, sites) in a.sites.iter().enumerate() {
        let r = Reg(i as u32);
        if f.params.contains(&r) || a.inlined.contains(&r) || a.dead.contains(&r) || !sites.iter().any(|s| s.def) {
            continue;
        }
        let mut l = sites[0].block;
        for s in &sites[1..] {
            l = a.lca(l, s.block);
        }
        let first = sites.iter().min_by_key(|s| (s.pos, !s.def)).expect("a site");
        let decl = if first.def && first.block == l {
            Decl::AtDef { block: l, idx: first.idx }
        } else {
            // Before the instruction of `l` that contains the first site.
            let idx = (0..)
                .find(|&idx| a.ranges.get(&(l, idx)).is_none_or(|&(s, e)| (s..e).contains(&first.pos)))
                .expect("an instruction contains the site");
            Decl::Before { block: l, idx }
        };
        a.decls.insert(r, decl);
    }
}

/// C++ keywords and CUDA names a Prism identifier must not take.
const RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "nullptr",
    "operator",
    "private",
    "protected",
    "public",
    "register",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "and",
    "or",
    "not",
    "xor",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "min",
    "max",
    "abs",
    "memcpy",
    "half",
    "dim3",
    "main",
    "assert",
    "printf",
    // The rest of C++20's keywords and alternative tokens (review R39: a variable named
    // `static_cast` or `bitand` printed as a declaration nvcc refuses).
    "and_eq",
    "bitand",
    "bitor",
    "char8_t",
    "char16_t",
    "char32_t",
    "compl",
    "concept",
    "consteval",
    "constinit",
    "const_cast",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "dynamic_cast",
    "not_eq",
    "or_eq",
    "reinterpret_cast",
    "requires",
    "static_assert",
    "static_cast",
    "thread_local",
    "typeid",
    "wchar_t",
    "xor_eq",
    // Macros of the headers nvcc includes whose names have a lowercase letter (the others
    // are caught by `macro_like`; `prism_gpu`'s `names.rs` checks the headers' list).
    "L_ctermid",
    "L_cuserid",
    "L_tmpnam",
    "P_tmpdir",
    "alloca",
    "assert_perror",
    "errno",
    "isascii",
    "issubnormal",
    "linux",
    "math_errhandling",
    "offsetof",
    "sched_priority",
    "stderr",
    "stdin",
    "stdout",
    "strdupa",
    "strndupa",
    "toascii",
    "unix",
    // Functions the printer calls by these names (besides the math intrinsics' `f` and
    // `double` forms, `math_function`): a variable of the name would hide them.
    "fma",
    "fmaf",
    "fmin",
    "fminf",
    "fmax",
    "fmaxf",
    "fmod",
    "fmodf",
];

/// The lines of a list of names in `header_names/` (one per line, sorted; `#` starts a
/// comment line).
fn listed(text: &'static str) -> Vec<&'static str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
}

/// Whether `s` is in a sorted list of names, parsed once.
fn in_list(list: &'static OnceLock<Vec<&'static str>>, text: &'static str, s: &str) -> bool {
    list.get_or_init(|| listed(text)).binary_search(&s).is_ok()
}

/// Whether a kernel's `extern "C"` symbol would clash with a C-linkage function of the
/// headers nvcc includes: `header_names/c_linkage.txt` (a second C-linkage declaration of
/// `expf` is an error; reviews R39, R41), and the CUDA driver's `cu` + capital names (a
/// typed tensor map's launcher includes `cuda.h`, where `cuMemAlloc` is even a macro).
/// Device functions have C++ linkage and extra leading parameters, so they overload these
/// instead. The list is checked against the installed headers by `prism_gpu`'s `names.rs`,
/// which compiles every identifier they hold as a kernel (docs/cuda.md, "Names").
fn c_library(s: &str) -> bool {
    static LIST: OnceLock<Vec<&'static str>> = OnceLock::new();
    in_list(&LIST, include_str!("header_names/c_linkage.txt"), s)
        || (s.starts_with("cu") && s[2..].starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Whether `s` names a variable, type or namespace the headers nvcc includes declare at
/// global scope (`header_names/globals.txt`): a function of the name, kernel or not, would
/// clash with it (`extern long timezone`, `typedef ... u_int`). Checked like [`c_library`].
fn header_global(s: &str) -> bool {
    static LIST: OnceLock<Vec<&'static str>> = OnceLock::new();
    in_list(&LIST, include_str!("header_names/globals.txt"), s)
}

/// A name C++ could read as a macro of the headers nvcc includes: no lowercase letter
/// (`INT_MAX`, `NULL`, `EOF`; a single letter is left alone, as no header defines one and
/// `A`, `N` are common names), or a form the headers' macros with lowercase letters take
/// (`M_PIf`, `NV_HAS_FEATURE_SM_90a`, `cudaStreamDefault`, `isalpha_l`). Renaming too much
/// costs nothing: the name only gains a `_`. `prism_gpu`'s `names.rs` lists the macros the
/// installed headers define and checks that each is renamed.
fn macro_like(s: &str) -> bool {
    let caps = s.len() >= 2 && !s.chars().any(|c| c.is_ascii_lowercase()) && s.chars().any(|c| c.is_ascii_uppercase());
    caps || s.starts_with("M_")
        || s.starts_with("NV_")
        || s.starts_with("cuda")
        || s.starts_with("PRISM")
        // `isalpha_l`, `toascii_l`.
        || s.ends_with("_l")
        || s.starts_with("pthread_cleanup_")
        || (s.starts_with("hto") || s.ends_with("toh")) && s.len() <= 8 && s.ends_with(|c: char| c.is_ascii_digit() || c == 'h')
}

/// A type or namespace the headers declare, which a function or variable of the name would
/// hide or clash with (review R41: a function `size_t`, `float4` or `std`): the fixed-width
/// integer types (`int8_t`, `uint_fast32_t`, `intptr_t`), CUDA's vector types (`float4`,
/// `uint2`), and a listed few. (Names ending in `_t` in general are left alone: `y_t`, a
/// thread's view, is a common Prism name.)
fn type_like(s: &str) -> bool {
    const BASES: &[&str] = &[
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    ];
    const NAMES: &[&str] = &[
        "std",
        "cooperative_groups",
        "nv_bfloat16",
        "nv_bfloat162",
        "half2",
        "va_list",
        "cuda",
        "nvcuda",
        "size_t",
        "ssize_t",
        "ptrdiff_t",
        "nullptr_t",
        "max_align_t",
        "clock_t",
        "time_t",
        "off_t",
        "pid_t",
        "div_t",
        "ldiv_t",
        "lldiv_t",
        "mbstate_t",
        "wint_t",
        "fpos_t",
        "locale_t",
        "sigset_t",
        "float_t",
        "double_t",
        "cuuint32_t",
        "cuuint64_t",
        "intptr_t",
        "uintptr_t",
        "intmax_t",
        "uintmax_t",
    ];
    let vector = s.strip_suffix(|c: char| ('1'..='4').contains(&c)).is_some_and(|b| BASES.contains(&b));
    let fixed = s
        .strip_suffix("_t")
        .map(|b| b.strip_prefix('u').unwrap_or(b))
        .and_then(|b| b.strip_prefix("int"))
        .map(|b| b.strip_prefix("_fast").or_else(|| b.strip_prefix("_least")).unwrap_or(b))
        .is_some_and(|w| ["8", "16", "32", "64"].contains(&w));
    vector || fixed || NAMES.contains(&s)
}

/// Whether the printer calls a function of this name: the C and `double` forms of the math
/// intrinsics (`sqrtf`, `sqrt`).
fn math_function(s: &str) -> bool {
    let base = s.strip_suffix('f').unwrap_or(s);
    prism_types::intrinsics::TABLE
        .iter()
        .any(|sig| sig.family == prism_types::intrinsics::Family::Math && (sig.name == s || sig.name == base))
}

/// A C++ identifier for a Prism name: reserved words, the `prism_` prefix of generated names
/// and names with `__` get a trailing `_`.
pub fn sanitize(name: &str) -> String {
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    let mut s = if ok {
        name.to_string()
    } else {
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
    };
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    if RESERVED.contains(&s.as_str())
        || type_like(&s)
        || header_global(&s)
        || macro_like(&s)
        || math_function(&s)
        || s.starts_with("prism")
        || s.contains("__")
        || s.starts_with('_')
    {
        s.push('_');
    }
    s
}

/// The C symbol of a kernel: its sanitised name, with `_` appended while it is a C library
/// function's name (the kernel is `extern "C"`).
pub fn kernel_symbol(name: &str) -> String {
    let mut s = sanitize(name);
    // One `_` is enough (no C function's name ends in one), and a `while` would not stop
    // for the driver's `cu` prefix.
    if c_library(&s) {
        s.push('_');
    }
    s
}

/// The C++ names of a function's parameters: each sanitised, then `_` appended while it
/// equals an earlier one (`new` and `new_` both sanitise to `new_`; review R39), or one of
/// `taken` (the program's functions, which a parameter would hide).
pub fn param_names<'a>(names: impl IntoIterator<Item = &'a str>, taken: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let mut s = sanitize(n);
        while out.contains(&s) || taken.contains(&s) {
            s.push('_');
        }
        out.push(s);
    }
    out
}

fn name(a: &mut Analysis, f: &Function, reserved: &[&str], param_names: &[String]) {
    // (name, declaring block); the root block is 0.
    let mut taken: HashMap<String, Vec<usize>> = HashMap::new();
    for r in reserved {
        taken.entry(r.to_string()).or_default().push(0);
    }
    for (p, n) in f.params.iter().zip(param_names) {
        taken.entry(n.clone()).or_default().push(0);
        a.names.insert(*p, n.clone());
    }
    // Locals, then registers, in order of declaration position.
    let mut items: Vec<(usize, usize, Result<LocalId, Reg>)> = Vec::new();
    let mut local_blocks: HashMap<LocalId, (usize, usize)> = HashMap::new();
    collect_locals(a, &f.body, &mut local_blocks);
    for (l, (block, pos)) in &local_blocks {
        items.push((*pos, *block, Ok(*l)));
    }
    for (r, d) in &a.decls {
        let (block, idx) = match *d {
            Decl::AtDef { block, idx } | Decl::Before { block, idx } => (block, idx),
        };
        let pos = a.ranges.get(&(block, idx)).map(|r| r.0).unwrap_or(usize::MAX);
        items.push((pos, block, Err(*r)));
    }
    items.sort_by_key(|(pos, _, it)| (*pos, it.map_or_else(|r| r.0 + (1 << 31), |l| l.0)));
    for (_, block, it) in items {
        let base = match it {
            Ok(l) => sanitize(&f.locals[l.index()].name),
            Err(r) => match &f.regs[r.index()].name {
                Some(n) => sanitize(n),
                None => format!("t{}", r.0),
            },
        };
        let mut n = base.clone();
        let mut k = 0;
        while taken.get(&n).is_some_and(|bs| bs.iter().any(|&b| a.is_ancestor(b, block) || a.is_ancestor(block, b))) {
            k += 1;
            n = format!("{base}_{k}");
        }
        taken.entry(n.clone()).or_default().push(block);
        match it {
            Ok(l) => {
                a.local_names.insert(l, n);
            }
            Err(r) => {
                a.names.insert(r, n);
            }
        }
    }
}

fn collect_locals(a: &Analysis, b: &Block, out: &mut HashMap<LocalId, (usize, usize)>) {
    let bid = a.block_id(b);
    for (idx, i) in b.insts.iter().enumerate() {
        if let InstKind::LocalDecl { local } = &i.kind {
            out.entry(*local).or_insert((bid, a.ranges[&(bid, idx)].0));
        }
        for nb in i.kind.blocks() {
            collect_locals(a, nb, out);
        }
    }
}

//! Kernel IR (after synchronisation inference) to the C++ tree.
//!
//! One C++ function per IR function, in source order after prototypes. Kernels are
//! `extern "C" __global__`; device functions are `__device__ __forceinline__` and
//! take three extra leading parameters (seed 003 §5): `prism_tid`, the thread's index
//! relative to the function's entry unit (its index in the block when the entry is a block
//! or the grid), `prism_bid`, the block index, and `prism_smem`, the function's shared-memory
//! base. `id()` and `split` positions are computed from them. Perspectives are erased:
//! `group` is a C++ scope, `split` an `if` chain on the thread's unit position, memory scopes
//! are scopes, and barriers are the primitives of [`crate::barrier`].

use crate::abi::{AbiParam, KernelAbi, STATIC_SMEM_LIMIT};
use crate::analysis::{self, Analysis, Decl, Purity};
use crate::barrier::{self, NamedBarriers};
use crate::cpp::{Expr, Func, Init, Item, Stmt};
use crate::intrinsics::{self, Operand};
use crate::ops::{self, c_type};
use prism_ir::ir::{BarrierOrigin, Block, Function, Inst, InstKind, IntrArg, MemKind, Program, ScopeKind, Type};
use prism_ir::{FuncId, MemId, Reg};
use prism_types::intrinsics::Family;
use prism_types::perspective::{Level, Persp};
use prism_types::tir::{BinOp, FnKind, RawIndex, Unroll};
use prism_types::ty::Scalar;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Program-wide facts the functions share.
pub struct Global<'a> {
    /// The program.
    pub program: &'a Program,
    /// Named barrier plan.
    pub named: NamedBarriers,
    /// C++ names of functions.
    pub fn_names: Vec<String>,
    /// Functions that (transitively) contain a grid barrier.
    pub cooperative: Vec<bool>,
    /// Functions that (transitively) issue TMA copies.
    pub tma: Vec<bool>,
    /// Functions that (transitively) use sm_90a-only features.
    pub sm90: Vec<bool>,
    /// Functions that (transitively) reallocate registers (`setmaxnreg`).
    pub maxnreg: Vec<bool>,
    /// Whether some function accesses shared memory through the async proxy (`wgmma`, TMA):
    /// then every barrier is preceded by a proxy fence (see `barrier_stmts`).
    pub async_proxy: bool,
    /// Whether some function copies between global memory and shared memory with TMA (the
    /// async proxy): then every grid barrier is fenced for global memory on both sides
    /// (`prism_fence_proxy_async_global`; review R42).
    pub global_async_proxy: bool,
    /// Source lines, for comments.
    pub lines: Option<Lines>,
    /// Whether kernels are `extern "C"`.
    pub extern_c: bool,
    /// Functions that are printed: the root file's, every kernel, and what they call. An
    /// imported module's other functions (most of a library) would only lengthen the file
    /// nvcc compiles.
    pub live: Vec<bool>,
}

/// The lines of the source file, for `// line N` notes and copied comments.
pub struct Lines {
    starts: Vec<u32>,
    text: Vec<String>,
    /// The file they are the lines of: the root file. Imported functions lie in other
    /// files, whose offsets mean nothing here; they get no notes and no comments.
    file: Option<prism_span::FileId>,
}

impl Lines {
    /// Splits `src` into lines.
    pub fn new(src: &str) -> Lines {
        let mut starts = vec![0];
        for (i, c) in src.char_indices() {
            if c == '\n' {
                starts.push(i as u32 + 1);
            }
        }
        Lines { starts, text: src.lines().map(str::to_string).collect(), file: None }
    }

    /// These lines, known to be those of `file`.
    pub fn of_file(mut self, file: prism_span::FileId) -> Lines {
        self.file = Some(file);
        self
    }

    /// Whether a span lies in these lines' file.
    pub fn holds(&self, span: prism_span::Span) -> bool {
        self.file.is_none_or(|f| f == span.file)
    }

    /// The 1-based line of a byte offset.
    pub fn line_of(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }

    /// The comment of line `n` (1-based) if the line holds only a comment.
    pub fn comment(&self, n: u32) -> Option<String> {
        let t = self.text.get(n as usize - 1)?.trim();
        t.strip_prefix('#').map(|c| c.strip_prefix(' ').unwrap_or(c).trim_end().to_string())
    }
}

/// Emits one function; returns its definition (and the kernel's ABI for kernels).
pub fn function(g: &Global, id: FuncId, first_line: u32) -> (Func, Option<KernelAbi>, Vec<crate::Unsupported>, u32) {
    let f = g.program.func(id);
    let kernel = f.kind == FnKind::Kernel;
    // The program's other functions are taken too: a register of the name (a source
    // variable, or a temporary `tN` beside a function named `t11`) would hide the function
    // from the calls after it (review R39). A function does not call itself.
    let others: Vec<String> =
        g.fn_names.iter().enumerate().filter(|&(i, _)| i != id.index()).map(|(_, n)| n.clone()).collect();
    let param_names =
        analysis::param_names(f.params.iter().map(|&r| f.regs[r.index()].name.as_deref().unwrap_or("arg")), &others);
    let mut reserved = vec!["prism_tid", "prism_bid", "prism_smem", "prism_pos"];
    reserved.extend(others.iter().map(String::as_str));
    let a = analysis::analyse(f, &reserved, &param_names);
    let mut before: HashMap<(usize, usize), Vec<Reg>> = HashMap::new();
    for (r, d) in &a.decls {
        if let Decl::Before { block, idx } = d {
            before.entry((*block, *idx)).or_default().push(*r);
        }
    }
    for v in before.values_mut() {
        v.sort();
    }
    let lines = g.lines.as_ref().filter(|l| l.holds(f.span));
    let header_line = lines.map(|l| l.line_of(f.span.start)).unwrap_or(0);
    let separate = if kernel && f.smem_size <= STATIC_SMEM_LIMIT && f.dyn_smem.is_none() {
        separate_arrays(f)
    } else {
        BTreeMap::new()
    };
    let mut fx = Fx {
        g,
        f,
        lines,
        a,
        before,
        pending: HashMap::new(),
        skip: HashSet::new(),
        used_tid: false,
        used_bid: false,
        used_smem: false,
        separate,
        last_line: header_line,
        max_line: header_line.max(first_line),
        loops: Vec::new(),
        labels: 0,
        positions: 0,
        async_tma: Vec::new(),
        errors: Vec::new(),
        splits: if kernel { barrier::split_ids(&f.body) } else { Vec::new() },
        packed: packed_locals(f),
    };
    let mut body = fx.block(&f.body, f.entry);
    drop_unmentioned(&mut body, &fx.a);
    // Parameters and the prologue.
    let mut params = Vec::new();
    let mut abi_params = Vec::new();
    if !kernel {
        params.push(("int".to_string(), "prism_tid".to_string()));
        params.push(("int".to_string(), "prism_bid".to_string()));
        params.push(("unsigned char*".to_string(), "prism_smem".to_string()));
    }
    for (&r, n) in f.params.iter().zip(&param_names) {
        let src_name = f.regs[r.index()].name.clone().unwrap_or_default();
        match f.reg_ty(r) {
            Type::Scalar(s) => {
                params.push((c_type(s).to_string(), n.clone()));
                abi_params.push(AbiParam::Scalar { name: src_name, ty: s });
            }
            Type::Ptr => {
                let elem = fx.a.ptr_elem.get(&r).copied().unwrap_or(Scalar::F32);
                let ro = fx.a.ptr_const.contains(&r);
                let konst = if ro { "const " } else { "" };
                let restrict = if kernel { " __restrict__" } else { "" };
                params.push((format!("{konst}{}*{restrict}", c_type(elem)), n.clone()));
                abi_params.push(AbiParam::Pointer { name: src_name, elem, read_only: ro });
            }
            t @ (Type::Opaque | Type::TensorMap(_)) => {
                let ty = if kernel { "const __grid_constant__ prism_tensor_map" } else { "const prism_tensor_map&" };
                params.push((ty.to_string(), n.clone()));
                let map = match t {
                    Type::TensorMap(m) => Some(m),
                    _ => None,
                };
                abi_params.push(AbiParam::TensorMap { name: src_name, map });
            }
        }
    }
    // The prologue declares only what the body mentions (nvcc warns about unused variables).
    let printed = print_body(&body);
    fx.used_tid = printed.contains("prism_tid");
    fx.used_bid = printed.contains("prism_bid");
    fx.used_smem = mentions(&printed, "prism_smem");
    let printed_body = printed;
    fx.separate.retain(|_, name| mentions(&printed_body, name));
    let mut prologue = Vec::new();
    // Above 48 KiB, or with a dynamic shared array, the block's shared memory is the
    // launch's dynamic allocation.
    let dynamic = f.smem_size > STATIC_SMEM_LIMIT || f.dyn_smem.is_some();
    if kernel {
        let facts = format!(
            "launch: threads per block a multiple of {}, blocks a multiple of {}{}",
            f.facts.t_mult,
            f.facts.b_mult,
            f.launch_bounds.map(|n| format!(", at most {n} threads per block")).unwrap_or_default()
        );
        prologue.push(Stmt::Comment(facts));
        // The indices are `int`s (Prism's `id()` is), but never negative. Thread positions
        // are computed on the unsigned index (see `rel`), so nvcc knows their signs without
        // an assumption about `prism_tid`, which made it rematerialise index arithmetic in
        // main loops (BENCHMARKS.md, SASS gate); the block index is told, which drops sign
        // handling from divisions of it.
        if fx.used_tid {
            // A kernel with a fixed block shape computes the linear index with the extents
            // as constants, as an expert writes `threadIdx.x + 32 * threadIdx.y`.
            let tid = match fixed_shape(f) {
                Some(d) if d.z > 1 => format!("threadIdx.x + {}u * (threadIdx.y + {}u * threadIdx.z)", d.x, d.y),
                Some(d) if d.y > 1 => format!("threadIdx.x + {}u * threadIdx.y", d.x),
                Some(_) => "threadIdx.x".into(),
                None => barrier::tid(&g.named).into(),
            };
            // A kernel entered at `thread[n]` runs as if every unit of `n` threads called it,
            // so its `id()`s count from its unit's first thread, as in the simulator. A
            // read-only one may be launched with several units per block, where the index
            // in the block is not that (`docs/soundness.md` §6); a writer runs as exactly one
            // unit, where it is.
            let tid = if f.entry.level == Level::Thread && f.entry.n > 1 && f.exact_launch().is_none() {
                format!("({tid}) % {}u", f.entry.n)
            } else {
                tid
            };
            prologue.push(decl_const("int", "prism_tid", Expr::id(tid)));
        }
        if fx.used_bid {
            let bid = if g.named.multi_dim { "prism_linear_bid()" } else { "blockIdx.x" };
            prologue.push(decl_const("int", "prism_bid", Expr::id(bid)));
            prologue.push(Stmt::Expr(Expr::call(
                "__builtin_assume",
                vec![Expr::bin(">=", Expr::id("prism_bid"), Expr::id("0"))],
            )));
        }
        for ((offset, len, elem), name) in &fx.separate {
            // Aligned at least as the simulator assumes from the offset (the block's shared
            // base is 1024-byte aligned), so alignment checks agree and the hardware's
            // swizzles (TMA, wgmma), which act on address bits 4 to 9, see the addresses the
            // simulator swizzles.
            let align = 1u64 << offset.trailing_zeros().clamp(4, 10);
            prologue.push(Stmt::Raw(format!(
                "__shared__ __align__({align}) {} {name}[{}];",
                c_type(*elem),
                len / elem.size().max(1)
            )));
        }
        if (f.smem_size > 0 || f.dyn_smem.is_some()) && fx.used_smem {
            if dynamic {
                prologue.push(Stmt::Raw("extern __shared__ __align__(1024) unsigned char prism_smem[];".into()));
            } else {
                prologue
                    .push(Stmt::Raw(format!("__shared__ __align__(1024) unsigned char prism_smem[{}];", f.smem_size)));
            }
        }
        if !g.named.mbar.is_empty() {
            prologue.push(Stmt::Comment("the unit mbarriers of sub-block barriers".into()));
            prologue.push(Stmt::If {
                cond: Expr::bin("==", Expr::id(barrier::tid(&g.named)), Expr::id("0")),
                then: barrier::mbar_init(&g.named),
                otherwise: Vec::new(),
            });
            prologue.push(Stmt::Expr(Expr::call("__syncthreads", vec![])));
        }
        let splits = barrier::split_ids(&f.body);
        if !splits.is_empty() {
            prologue.push(Stmt::Comment(format!(
                "{} split barrier(s) over the block: mbarriers, and this thread's token for each",
                splits.len()
            )));
            prologue
                .push(Stmt::Raw(format!("__shared__ __align__(8) unsigned long long prism_split[{}];", splits.len())));
            for &s in &splits {
                prologue.push(Stmt::Raw(format!("unsigned long long prism_tok{s} = 0;")));
            }
            let inits = splits
                .iter()
                .enumerate()
                .map(|(k, _)| {
                    Stmt::Expr(Expr::call(
                        "prism_split_init",
                        vec![
                            Expr::call("prism_smem_addr", vec![Expr::id(format!("&prism_split[{k}]"))]),
                            Expr::id(barrier::block_threads(&g.named)),
                        ],
                    ))
                })
                .collect();
            prologue.push(Stmt::If {
                cond: Expr::bin("==", Expr::id(barrier::tid(&g.named)), Expr::id("0")),
                then: inits,
                otherwise: Vec::new(),
            });
            prologue.push(Stmt::Expr(Expr::call("__syncthreads", vec![])));
        }
        if g.tma[id.index()] {
            prologue.push(Stmt::Comment(
                "the mbarrier TMA copies complete on: every thread of the block waits on it".into(),
            ));
            prologue.push(Stmt::If {
                cond: Expr::bin("==", Expr::id(barrier::tid(&g.named)), Expr::id("0")),
                then: vec![Stmt::Asm(crate::cpp::Asm {
                    volatile: true,
                    lines: vec![
                        "mbarrier.init.shared::cta.b64 [%0], %1;\\n".into(),
                        "fence.mbarrier_init.release.cluster;\\n".into(),
                    ],
                    outputs: Vec::new(),
                    inputs: vec![
                        ("r".into(), Expr::call("prism_smem_addr", vec![Expr::id("&prism_tma_bar")])),
                        ("r".into(), Expr::id(barrier::block_threads(&g.named))),
                    ],
                    clobbers: vec!["memory".into()],
                })],
                otherwise: Vec::new(),
            });
            prologue.push(Stmt::Expr(Expr::call("__syncthreads", vec![])));
        }
    }
    prologue.append(&mut body);
    let body = prologue;
    let name = g.fn_names[id.index()].clone();
    let head = if kernel {
        let ext = if g.extern_c { "extern \"C\" " } else { "" };
        // `setmaxnreg` takes effect only with a register cap at entry: one block per SM at
        // the kernel's size (ptxas ignores it otherwise, warning C7508).
        let lb = match (f.launch_bounds, g.maxnreg[id.index()]) {
            (Some(n), true) => {
                if f.min_blocks.is_some_and(|m| m != 1) {
                    fx.errors.push(crate::Unsupported {
                        span: f.span,
                        message: format!(
                            "`{}` reallocates registers (`setmaxnreg`), which needs one block per multiprocessor: write `@launch_bounds({n})` or `@launch_bounds({n}, 1)`",
                            f.name
                        ),
                    });
                }
                format!(" __launch_bounds__({n}, 1)")
            }
            (Some(n), false) => match f.min_blocks {
                Some(m) => format!(" __launch_bounds__({n}, {m})"),
                None => format!(" __launch_bounds__({n})"),
            },
            (None, true) => {
                fx.errors.push(crate::Unsupported {
                    span: f.span,
                    message: format!(
                        "`{}` reallocates registers (`setmaxnreg`) without `@launch_bounds(n)`: nvcc ignores `setmaxnreg` in a kernel without a register cap at entry",
                        f.name
                    ),
                });
                String::new()
            }
            (None, false) => String::new(),
        };
        format!("{ext}__global__ void{lb}")
    } else {
        let ret = match f.ret {
            Some(Type::Scalar(s)) => c_type(s),
            _ => "void",
        };
        format!("__device__ __forceinline__ {ret}")
    };
    let abi = kernel.then(|| KernelAbi {
        name: f.name.clone(),
        symbol: name.clone(),
        params: abi_params,
        smem_bytes: f.smem_size,
        dynamic_smem: dynamic,
        dyn_array: f.dyn_smem,
        cooperative: g.cooperative[id.index()],
        t_mult: f.facts.t_mult,
        b_mult: f.facts.b_mult,
        launch_bounds: f.launch_bounds,
        needs_sm90a: g.sm90[id.index()],
        exact_launch: f.exact_launch(),
        max_blocks: f.max_blocks,
        shape: g.program.shape_rule(id),
    });
    let max_line = fx.max_line;
    (Func { head, name, params, body: Some(body) }, abi, fx.errors, max_line)
}

/// A `bool` read from memory as its byte, `*(const unsigned char*)&p[i] != 0`: the simulator
/// normalises the byte (any non-zero byte is `true`), and a C++ `bool` whose byte is not 0 or 1
/// is undefined behaviour (nvcc computes with the raw byte). Shared memory may hold such a
/// byte where another function's array of another type wrote it (two calls' shared arrays
/// at one offset).
fn bool_byte(elem: Expr) -> Expr {
    let byte = Expr::Un("*", Box::new(Expr::cast("const unsigned char*", Expr::AddrOf(Box::new(elem)))));
    Expr::bin("!=", byte, Expr::id("0"))
}

fn decl_const(ty: &str, name: &str, e: Expr) -> Stmt {
    Stmt::Decl { quals: "const".into(), ty: ty.into(), name: name.into(), dims: vec![], init: Some(Init::Expr(e)) }
}

struct LoopCx {
    label: Option<String>,
    used: bool,
}

struct Fx<'a> {
    g: &'a Global<'a>,
    f: &'a Function,
    /// The root file's lines when this function is in the root file.
    lines: Option<&'a Lines>,
    a: Analysis,
    before: HashMap<(usize, usize), Vec<Reg>>,
    /// Expressions of inlined registers, waiting for their use.
    pending: HashMap<Reg, Expr>,
    /// Positions of instructions folded into an earlier one.
    skip: HashSet<usize>,
    used_tid: bool,
    used_bid: bool,
    used_smem: bool,
    /// Shared arrays declared as arrays of their own (see [`separate_arrays`]).
    separate: BTreeMap<(u64, u64, Scalar), String>,
    last_line: u32,
    max_line: u32,
    loops: Vec<LoopCx>,
    labels: u32,
    positions: u32,
    /// The view of each enclosing scope that issues TMA copies (None for other scopes): the
    /// wait completing one of them also waits on the block's TMA mbarrier.
    async_tma: Vec<Option<MemId>>,
    errors: Vec<crate::Unsupported>,
    /// The kernel's split barrier ids; an id's index is its mbarrier's slot.
    splits: Vec<u32>,
    /// Local arrays of 16-bit floats kept as pairs in 32-bit words (see [`packed_locals`]).
    packed: HashSet<prism_ir::LocalId>,
}

impl Fx<'_> {
    /// Before a barrier, in a program where wgmma reads shared memory: a proxy fence, so
    /// that the plain stores each thread made before the barrier are visible to the async
    /// proxy the tensor cores read through. The fence must be in the writing threads before
    /// the barrier (docs/cuda.md), and any barrier may be the one before a wgmma, so every
    /// one gets it (one `FENCE.VIEW.ASYNC.S` each; a no-op below sm_90).
    fn proxy_fence(&self, out: &mut Vec<Stmt>) {
        if self.g.async_proxy {
            out.push(Stmt::Expr(Expr::call("prism_fence_proxy_async", vec![])));
        }
    }

    /// The mbarrier slot of split barrier `id` (none outside kernels).
    fn split_slot(&self, id: u32) -> Option<usize> {
        self.splits.iter().position(|&s| s == id)
    }

    fn scalar(&self, r: Reg) -> Scalar {
        match self.f.reg_ty(r) {
            Type::Scalar(s) => s,
            _ => Scalar::I32,
        }
    }

    fn c_ty(&self, r: Reg) -> String {
        match self.f.reg_ty(r) {
            Type::Scalar(s) => c_type(s).to_string(),
            Type::Ptr => {
                let e = self.a.ptr_elem.get(&r).copied().unwrap_or(Scalar::F32);
                let k = if self.a.ptr_const.contains(&r) { "const " } else { "" };
                format!("{k}{}*", c_type(e))
            }
            Type::Opaque | Type::TensorMap(_) => "const prism_tensor_map&".into(),
        }
    }

    fn name(&self, r: Reg) -> String {
        self.a.names.get(&r).cloned().unwrap_or_else(|| format!("t{}", r.0))
    }

    /// The element `ptr[index]`. In a kernel, an index `x + y` into a pointer parameter,
    /// with `y` a constant or a `range` loop's counter (which nvcc unrolls into constants)
    /// known to lie in `0 ..= INT_MAX`, is printed `ptr[(long long)x + y]` rather than
    /// through the wrapping `prism_add`, so that nvcc can fold `y` into the address
    /// (`[R.64 + 0x4]`) instead of computing one 64-bit address per element. (For any other
    /// `y` the 64-bit sum costs more than it saves.) The
    /// two differ only when `x + y` passes `INT_MAX`, and then Prism's wrapped index is
    /// negative: an access before the start of a buffer the parameter points to the start
    /// of, which the simulator reports (`out-of-bounds`), so no run it accepts is changed
    /// (docs/cuda.md, "Arithmetic"). A device function's pointer may point into the middle
    /// of a buffer, where a negative index can be valid, so it keeps the wrapping sum.
    fn elem(&mut self, ptr: Reg, index: Reg) -> Expr {
        let p = self.val(ptr);
        let i = self.val(index);
        let param = self.f.kind == prism_types::tir::FnKind::Kernel && self.f.params.contains(&ptr);
        // A constant, or a loop counter: the only registers with a range and more than one
        // definition (the start and the step, `crate::interval`).
        let nonneg = |r: &Reg| {
            let defs = self.a.sites[r.index()].iter().filter(|s| s.def).count();
            self.a.values.get(r).is_some_and(|&(lo, hi)| lo >= 0 && hi <= i128::from(i32::MAX))
                && (defs > 1 || matches!(self.a.def_inst.get(r), Some(InstKind::Const { .. })))
        };
        if param
            && self.f.reg_ty(index) == Type::Scalar(Scalar::I32)
            && let Some(InstKind::Binary { op: BinOp::Add, lhs, rhs, .. }) = self.a.def_inst.get(&index)
            && let Expr::Call(name, args) = &i
            && name == "prism_add"
            && args.len() == 2
        {
            let wide = |x: &Expr| Expr::cast("long long", x.clone());
            if nonneg(rhs) {
                return Expr::index(p, Expr::bin("+", wide(&args[0]), args[1].clone()));
            }
            if nonneg(lhs) {
                return Expr::index(p, Expr::bin("+", wide(&args[1]), args[0].clone()));
            }
        }
        Expr::index(p, i)
    }

    fn val(&mut self, r: Reg) -> Expr {
        if self.a.inlined.contains(&r) {
            let is_const = matches!(self.a.def_inst.get(&r), Some(InstKind::Const { .. }));
            if is_const {
                if let Some(e) = self.pending.get(&r) {
                    return e.clone();
                }
            } else if let Some(e) = self.pending.remove(&r) {
                return e;
            }
        }
        Expr::id(self.name(r))
    }

    fn tid(&mut self) -> Expr {
        self.used_tid = true;
        Expr::id("prism_tid")
    }

    fn bid(&mut self) -> Expr {
        self.used_bid = true;
        Expr::id("prism_bid")
    }

    /// `id()` with code perspective `c` and target `p`: `(g mod size(c)) / size(p)`.
    fn rel(&mut self, c: Persp, p: Persp) -> Expr {
        let lit = |n: u64| Expr::id(n.to_string());
        let entry = self.f.entry;
        match (c.level, p.level) {
            // Thread positions are computed on the unsigned index, as an expert writes
            // `threadIdx.x % 32`: nvcc then knows the result is small and non-negative (one
            // mask or shift, and `< 1` is `== 0`) without being told that `prism_tid` is.
            (Level::Thread, _) => {
                let tid = self.tid();
                let whole = entry.level == Level::Thread && entry.n == c.n;
                if whole && p.n == 1 {
                    return tid;
                }
                let u = Expr::cast("unsigned", tid);
                let inner = if whole { u } else { Expr::bin("%", u, Expr::id(format!("{}u", c.n))) };
                let e = if p.n == 1 { inner } else { Expr::bin("/", inner, Expr::id(format!("{}u", p.n))) };
                Expr::cast("int", e)
            }
            (Level::Block, Level::Thread) if c.n == 1 => {
                let tid = self.tid();
                if p.n == 1 {
                    tid
                } else {
                    Expr::cast("int", Expr::bin("/", Expr::cast("unsigned", tid), Expr::id(format!("{}u", p.n))))
                }
            }
            (Level::Block | Level::Grid, Level::Thread) => {
                let b = if c.level == Level::Block { Expr::bin("%", self.bid(), lit(c.n)) } else { self.bid() };
                let threads = match fixed_shape(self.f) {
                    Some(d) => Expr::id(format!("{}u", d.count())),
                    None => Expr::id(barrier::block_threads(&self.g.named)),
                };
                let g = Expr::bin("+", Expr::bin("*", b, threads), self.tid());
                let g = if p.n == 1 { g } else { Expr::bin("/", g, Expr::id(format!("{}u", p.n))) };
                Expr::cast("int", g)
            }
            (Level::Block, _) => {
                let b = Expr::bin("%", self.bid(), lit(c.n));
                if p.n == 1 { b } else { Expr::bin("/", b, lit(p.n)) }
            }
            (Level::Grid, _) => {
                let b = self.bid();
                if p.n == 1 { b } else { Expr::bin("/", b, lit(p.n)) }
            }
        }
    }

    fn note(&mut self, inst: &Inst) -> Option<String> {
        let lines = self.lines?;
        let line = lines.line_of(inst.span.start);
        if line == self.last_line || inst.span.start == 0 && inst.span.end == 0 {
            return None;
        }
        self.last_line = line;
        Some(format!("line {line}"))
    }

    /// Comment lines of the source between the last statement and `inst`.
    fn comments(&mut self, inst: &Inst, out: &mut Vec<Stmt>) {
        let Some(lines) = self.lines else { return };
        let line = lines.line_of(inst.span.start);
        if line <= self.max_line {
            return;
        }
        for n in self.max_line + 1..line {
            if let Some(c) = lines.comment(n) {
                out.push(Stmt::Comment(c));
            }
        }
        self.max_line = line;
    }

    fn block(&mut self, b: &Block, code: Persp) -> Vec<Stmt> {
        let bid = self.a.block_id(b);
        let mut out = Vec::new();
        for (idx, inst) in b.insts.iter().enumerate() {
            self.declare_before(bid, idx, &mut out);
            let pos = self.a.ranges[&(bid, idx)].0;
            if self.skip.contains(&pos) {
                continue;
            }
            let start = out.len();
            self.comments(inst, &mut out);
            let n_comments = out.len() - start;
            self.inst(inst, b, bid, idx, code, &mut out);
            // Note the source line on the first statement this instruction produced.
            if out.len() > start + n_comments
                && let Some(n) = self.note(inst)
            {
                let i = start + n_comments;
                let s = std::mem::replace(&mut out[i], Stmt::Break);
                out[i] = match s {
                    Stmt::Comment(_) | Stmt::Noted(..) => s,
                    s => Stmt::Noted(Box::new(s), n),
                };
            }
        }
        self.declare_before(bid, b.insts.len(), &mut out);
        out
    }

    fn declare_before(&mut self, bid: usize, idx: usize, out: &mut Vec<Stmt>) {
        if let Some(rs) = self.before.get(&(bid, idx)).cloned() {
            for r in rs {
                out.push(Stmt::Decl {
                    quals: String::new(),
                    ty: self.c_ty(r),
                    name: self.name(r),
                    dims: vec![],
                    init: Some(Init::Zero),
                });
            }
        }
    }

    /// Emits `dst = e` (declaring `dst` here if this is its declaration), or keeps `e` for
    /// the use when `dst` is inlined.
    fn define(&mut self, dst: Reg, e: Expr, bid: usize, idx: usize, out: &mut Vec<Stmt>) {
        if self.a.inlined.contains(&dst) {
            self.pending.insert(dst, e);
            return;
        }
        if self.a.discard.contains(&dst) {
            out.push(Stmt::Expr(Expr::cast("void", e)));
            return;
        }
        if self.a.dead.contains(&dst) {
            return;
        }
        match self.a.decls.get(&dst) {
            Some(Decl::AtDef { block, idx: i }) if *block == bid && *i == idx => {
                let single = self.a.defined_once(dst);
                let ty = self.c_ty(dst);
                // `const` for values assigned once; pointers stay plain (`const T*` would
                // make the elements read-only).
                out.push(Stmt::Decl {
                    quals: if single && !ty.ends_with('*') { "const".into() } else { String::new() },
                    ty,
                    name: self.name(dst),
                    dims: vec![],
                    init: Some(Init::Expr(e)),
                });
            }
            Some(_) => out.push(Stmt::Assign { lhs: Expr::id(self.name(dst)), op: None, rhs: e }),
            // Never read: keep the effect only (a pure value is dropped).
            None => {
                let pure = self
                    .a
                    .def_inst
                    .get(&dst)
                    .is_some_and(|k| matches!(analysis::folded_purity(&self.a, k), Purity::Pure | Purity::Reads));
                if !pure {
                    out.push(Stmt::Expr(e));
                }
            }
        }
    }

    fn operands(&mut self, args: &[IntrArg], elem_of: &dyn Fn(&Self, Reg) -> Scalar) -> Vec<Operand> {
        args.iter()
            .map(|a| match a {
                IntrArg::Val(r) => {
                    let ty = elem_of(self, *r);
                    Operand::Val(self.val(*r), ty)
                }
                IntrArg::Elem { ptr, index } => {
                    let ty = self.a.ptr_elem.get(ptr).copied().unwrap_or(Scalar::F32);
                    Operand::Elem(self.elem(*ptr, *index), ty)
                }
            })
            .collect()
    }

    fn inst(&mut self, inst: &Inst, b: &Block, bid: usize, idx: usize, code: Persp, out: &mut Vec<Stmt>) {
        use InstKind as K;
        match &inst.kind {
            K::Const { dst, value } => {
                let e = ops::literal(self.scalar(*dst), *value);
                self.define(*dst, e, bid, idx, out);
            }
            K::Copy { dst, src } => {
                let e = self.val(*src);
                self.define(*dst, e, bid, idx, out);
            }
            K::Unary { dst, op, arg } => {
                let ty = self.scalar(*arg);
                let a = self.val(*arg);
                self.define(*dst, ops::unary(*op, ty, a), bid, idx, out);
            }
            K::Binary { dst, op, lhs, rhs } => {
                let (ty, b_ty) = (self.scalar(*lhs), self.scalar(*rhs));
                // Operands in known ranges whose exact result fits: wrapping is not needed.
                // A register defined only here has a range exactly when its operands, read
                // where it stands (narrowed by the guards around it), give a result that fits.
                let single = self.a.defined_once(*dst);
                let exact = single && self.a.values.contains_key(dst)
                    || matches!((self.a.values.get(lhs), self.a.values.get(rhs)),
                        (Some(a), Some(b)) if crate::interval::binary(*op, ty, *a, *b).is_some());
                let l = self.val(*lhs);
                let r = self.val(*rhs);
                // `/` and `%` of a dividend known not to be negative by a positive constant:
                // on unsigned values, as an expert writes `threadIdx.x % 32`, the same
                // quotient and remainder, and nvcc needs no sign fix-up (a shift or a mask
                // for powers of two).
                // Only for a difference or a select: nvcc sees thread positions and counters
                // from 0 to be non-negative itself, but not `i - 3` where a test before made
                // `i >= 3`, nor `t < n ? t : j` of two such values.
                let nonneg = self.a.values.get(lhs).is_some_and(|&(lo, _)| lo >= 0) && self.difference(*lhs);
                if matches!(op, BinOp::Div | BinOp::Rem)
                    && ty.is_signed_int()
                    && nonneg
                    && let Some(d) = ops::literal_value(&r).filter(|&d| d > 0)
                {
                    let (s, u, suffix) = if ty.size() == 8 {
                        ("long long", "unsigned long long", "ull")
                    } else {
                        ("int", "unsigned", "u")
                    };
                    let e = Expr::bin(op.as_str(), Expr::cast(u, l), Expr::id(format!("{d}{suffix}")));
                    self.define(*dst, Expr::cast(s, e), bid, idx, out);
                    return;
                }
                self.define(*dst, ops::binary(*op, ty, l, r, b_ty, exact), bid, idx, out);
            }
            K::Select { dst, cond, then, otherwise } => {
                let c = self.val(*cond);
                let t = self.val(*then);
                let o = self.val(*otherwise);
                self.define(*dst, Expr::Cond(Box::new(c), Box::new(t), Box::new(o)), bid, idx, out);
            }
            K::Cast { dst, arg } => {
                let (from, to) = (self.scalar(*arg), self.scalar(*dst));
                let a = self.val(*arg);
                self.define(*dst, ops::cast(from, to, a), bid, idx, out);
            }
            K::RelId { dst, code, target } => {
                let e = self.rel(*code, *target);
                self.define(*dst, e, bid, idx, out);
            }
            K::Raw { dst, index } => {
                // In a program with multi-dimensional launches the indices and sizes are the
                // linear ones the simulator defines, computed from all three dimensions.
                let multi = self.g.named.multi_dim;
                // A fixed block shape makes the extents constants.
                let fixed = fixed_shape(self.f).map(|d| match index {
                    RawIndex::BlockDim => Some(d.count()),
                    RawIndex::BlockExtent(0) => Some(u64::from(d.x)),
                    RawIndex::BlockExtent(1) => Some(u64::from(d.y)),
                    RawIndex::BlockExtent(_) => Some(u64::from(d.z)),
                    _ => None,
                });
                if let Some(Some(n)) = fixed {
                    self.define(*dst, Expr::id(n.to_string()), bid, idx, out);
                    return;
                }
                let e = Expr::cast(
                    "int",
                    Expr::id(match index {
                        RawIndex::ThreadIdx => barrier::tid(&self.g.named),
                        RawIndex::BlockIdx if multi => "prism_linear_bid()",
                        RawIndex::BlockIdx => "blockIdx.x",
                        RawIndex::BlockDim => barrier::block_threads(&self.g.named),
                        RawIndex::GridDim if multi => "prism_grid_blocks()",
                        RawIndex::GridDim => "gridDim.x",
                        RawIndex::ThreadCoord(0) => "threadIdx.x",
                        RawIndex::ThreadCoord(1) => "threadIdx.y",
                        RawIndex::ThreadCoord(_) => "threadIdx.z",
                        RawIndex::BlockCoord(0) => "blockIdx.x",
                        RawIndex::BlockCoord(1) => "blockIdx.y",
                        RawIndex::BlockCoord(_) => "blockIdx.z",
                        RawIndex::BlockExtent(0) => "blockDim.x",
                        RawIndex::BlockExtent(1) => "blockDim.y",
                        RawIndex::BlockExtent(_) => "blockDim.z",
                        RawIndex::GridExtent(0) => "gridDim.x",
                        RawIndex::GridExtent(1) => "gridDim.y",
                        RawIndex::GridExtent(_) => "gridDim.z",
                    }),
                );
                self.define(*dst, e, bid, idx, out);
            }
            K::SharedAddr { dst, offset, len, elem } if self.separate.contains_key(&(*offset, *len, *elem)) => {
                let e = Expr::id(self.separate[&(*offset, *len, *elem)].clone());
                self.define(*dst, e, bid, idx, out);
            }
            K::SharedAddr { dst, offset, elem, .. } => {
                self.used_smem = true;
                let base = if *offset == 0 {
                    Expr::id("prism_smem")
                } else {
                    Expr::bin("+", Expr::id("prism_smem"), Expr::id(offset.to_string()))
                };
                let e = Expr::call(format!("reinterpret_cast<{}*>", c_type(*elem)), vec![base]);
                self.define(*dst, e, bid, idx, out);
            }
            K::LocalAddr { dst, local } => {
                let e = Expr::id(self.a.local_names[local].clone());
                self.define(*dst, e, bid, idx, out);
            }
            K::PtrOffset { dst, base, offset, .. } => {
                let b = self.val(*base);
                let o = self.val(*offset);
                let e = if ops::literal_value(&o) == Some(0) { b } else { Expr::bin("+", b, o) };
                self.define(*dst, e, bid, idx, out);
            }
            K::Load { dst, ptr, index, .. } => {
                let mut e = self.elem(*ptr, *index);
                if self.scalar(*dst) == Scalar::Bool {
                    e = bool_byte(e);
                }
                self.define(*dst, e, bid, idx, out);
            }
            K::Store { ptr, index, value, .. } => {
                let lhs = self.elem(*ptr, *index);
                let v = self.val(*value);
                out.push(Stmt::Assign { lhs, op: None, rhs: v });
            }
            // One aligned access of the whole vector through `prism_vec` (the prelude's
            // aligned array type): nvcc emits LDG.128/LDS.128/STG.128 for it, and the
            // elements become registers.
            K::LoadVec { dsts, ptr, index, .. }
                if let Some((local, first)) = self.vec_into_pairs(dsts, b, bid, idx) =>
            {
                // Straight into a packed array's words: one `prism_vec<unsigned, n / 2>`.
                let vty = format!("prism_vec<unsigned, {}>", dsts.len() / 2);
                let tmp = format!("prism_v{}", dsts[0].index());
                let addr = Expr::AddrOf(Box::new(self.elem(*ptr, *index)));
                let load = Expr::Un("*", Box::new(Expr::cast(format!("const {vty}*"), addr)));
                out.push(Stmt::Decl {
                    quals: "const".into(),
                    ty: vty,
                    name: tmp.clone(),
                    dims: vec![],
                    init: Some(Init::Expr(load)),
                });
                let name = self.a.local_names[&local].clone();
                for k in 0..dsts.len() / 2 {
                    out.push(Stmt::Assign {
                        lhs: Expr::index(Expr::id(name.clone()), Expr::id((first / 2 + k as i128).to_string())),
                        op: None,
                        rhs: Expr::id(format!("{tmp}.v[{k}]")),
                    });
                }
            }
            K::StoreVec { ptr, index, values, .. } if let Some((local, first)) = self.vec_from_pairs(values) => {
                let vty = format!("prism_vec<unsigned, {}>", values.len() / 2);
                for v in values {
                    self.val(*v); // the element reads, replaced by the words below
                }
                let name = &self.a.local_names[&local];
                let words: Vec<String> =
                    (0..values.len() as i128 / 2).map(|k| format!("{name}[{}]", first / 2 + k)).collect();
                let addr = Expr::AddrOf(Box::new(self.elem(*ptr, *index)));
                out.push(Stmt::Assign {
                    lhs: Expr::Un("*", Box::new(Expr::cast(format!("{vty}*"), addr))),
                    op: None,
                    rhs: Expr::id(format!("{vty}{{{{{}}}}}", words.join(", "))),
                });
            }
            K::LoadVec { dsts, ptr, index, .. } => {
                let bools = self.scalar(dsts[0]) == Scalar::Bool;
                // Bools as their bytes, normalised below (`bool_byte`).
                let elem = if bools { "unsigned char" } else { c_type(self.scalar(dsts[0])) };
                let vty = format!("prism_vec<{elem}, {}>", dsts.len());
                let tmp = format!("prism_v{}", dsts[0].index());
                let addr = Expr::AddrOf(Box::new(self.elem(*ptr, *index)));
                let load = Expr::Un("*", Box::new(Expr::cast(format!("const {vty}*"), addr)));
                out.push(Stmt::Decl {
                    quals: "const".into(),
                    ty: vty,
                    name: tmp.clone(),
                    dims: vec![],
                    init: Some(Init::Expr(load)),
                });
                for (k, d) in dsts.iter().enumerate() {
                    let v = Expr::id(format!("{tmp}.v[{k}]"));
                    let v = if bools { Expr::bin("!=", v, Expr::id("0")) } else { v };
                    self.define(*d, v, bid, idx, out);
                }
            }
            K::StoreVec { ptr, index, values, .. } => {
                let vty = format!("prism_vec<{}, {}>", c_type(self.scalar(values[0])), values.len());
                let addr = Expr::AddrOf(Box::new(self.elem(*ptr, *index)));
                let vals: Vec<String> = values.iter().map(|v| crate::cpp::expr(&self.val(*v))).collect();
                out.push(Stmt::Assign {
                    lhs: Expr::Un("*", Box::new(Expr::cast(format!("{vty}*"), addr))),
                    op: None,
                    rhs: Expr::id(format!("{vty}{{{{{}}}}}", vals.join(", "))),
                });
            }
            K::LocalDecl { local } => {
                let info = &self.f.locals[local.index()];
                // An array whose address is passed on may be the memory of a vector access in
                // the callee, which the simulator checks against 16-byte alignment.
                let mut addressed = false;
                self.f.body.walk(&mut |k| addressed |= matches!(k, K::LocalAddr { local: l, .. } if l == local));
                let packed = self.packed.contains(local);
                out.push(Stmt::Decl {
                    quals: if addressed { "__align__(16)".into() } else { String::new() },
                    ty: if packed { "unsigned".into() } else { c_type(info.elem).into() },
                    name: self.a.local_names[local].clone(),
                    dims: vec![if packed { info.len / 2 } else { info.len }],
                    init: Some(Init::Zero),
                });
            }
            K::LocalLoad { dst, local, index } if self.packed.contains(local) => {
                let i = self.val(*index);
                let ty = c_type(self.f.locals[local.index()].elem);
                let e =
                    Expr::call(format!("prism_pair_get<{ty}>"), vec![Expr::id(self.a.local_names[local].clone()), i]);
                self.define(*dst, e, bid, idx, out);
            }
            K::LocalStore { local, index, value } if self.packed.contains(local) => {
                let i = self.val(*index);
                let v = self.val(*value);
                out.push(Stmt::Expr(Expr::call(
                    "prism_pair_set",
                    vec![Expr::id(self.a.local_names[local].clone()), i, v],
                )));
            }
            K::LocalLoad { dst, local, index } => {
                let i = self.val(*index);
                let e = Expr::index(Expr::id(self.a.local_names[local].clone()), i);
                self.define(*dst, e, bid, idx, out);
            }
            K::LocalStore { local, index, value } => {
                let i = self.val(*index);
                let v = self.val(*value);
                out.push(Stmt::Assign {
                    lhs: Expr::index(Expr::id(self.a.local_names[local].clone()), i),
                    op: None,
                    rhs: v,
                });
            }
            K::Call { dst, func, args, smem_offset, .. } => {
                let callee = self.g.program.func(*func);
                let tid = self.tid();
                let tid = match callee.entry.level {
                    Level::Thread if !(self.f.entry.level == Level::Thread && self.f.entry.n == callee.entry.n) => {
                        Expr::bin("%", tid, Expr::id(callee.entry.n.to_string()))
                    }
                    _ => tid,
                };
                let smem = if self.f.kind == FnKind::Kernel && self.f.smem_size == 0 {
                    Expr::id("nullptr")
                } else {
                    self.used_smem = true;
                    if *smem_offset == 0 {
                        Expr::id("prism_smem")
                    } else {
                        Expr::bin("+", Expr::id("prism_smem"), Expr::id(smem_offset.to_string()))
                    }
                };
                let bidx = self.bid();
                let mut cargs = vec![tid, bidx, smem];
                for r in args {
                    cargs.push(self.val(*r));
                }
                let e = Expr::call(self.g.fn_names[func.index()].clone(), cargs);
                match dst {
                    Some(d) => self.define(*d, e, bid, idx, out),
                    None => out.push(Stmt::Expr(e)),
                }
            }
            K::Intrinsic { dsts, intrinsic, args, .. } => self.intrinsic(dsts, *intrinsic, args, b, bid, idx, out),
            K::AsyncCommit => out.push(Stmt::Asm(crate::cpp::Asm {
                volatile: true,
                lines: vec!["cp.async.commit_group;".into()],
                clobbers: vec!["memory".into()],
                ..Default::default()
            })),
            K::AsyncWait { pending, views } => {
                // Only the wait that completes a TMA scope itself waits on the block's TMA
                // mbarrier: a nested scope of `cp_async` copies whose wait lies inside the TMA
                // scope would otherwise arrive a second time and wait for a phase no other
                // thread completes (found by an adversarial review, 2026-11-29).
                if self.async_tma.iter().flatten().any(|v| views.contains(v)) {
                    out.push(Stmt::Expr(Expr::call(
                        "prism_mbar_arrive_wait",
                        vec![Expr::call("prism_smem_addr", vec![Expr::id("&prism_tma_bar")])],
                    )));
                }
                let line = if *pending == 0 {
                    "cp.async.wait_all;".to_string()
                } else {
                    format!("cp.async.wait_group {pending};")
                };
                out.push(Stmt::Asm(crate::cpp::Asm {
                    volatile: true,
                    lines: vec![line],
                    clobbers: vec!["memory".into()],
                    ..Default::default()
                }));
            }
            // A check for the simulator only (`emit` removes them first).
            K::AssertUniform { .. } | K::AssertUniformLocal { .. } => {}
            K::BarrierArrive { scope, id, .. } | K::BarrierWait { scope, id }
                if self.split_slot(*id).is_none() || *scope != Persp::BLOCK =>
            {
                self.errors.push(crate::Unsupported {
                    span: inst.span,
                    message: format!(
                        "a split barrier over {scope} in `{}`: only kernels' block barriers are split",
                        self.f.name
                    ),
                });
            }
            K::BarrierArrive { id, origin, .. } => {
                if let BarrierOrigin::Inferred { mem, before, after } = origin {
                    let name = &self.f.mems[mem.index()].name;
                    let why = match self.lines {
                        Some(l) => format!(
                            "split block barrier s{id}, arrive: `{name}` was last used at line {}; its next use (line {}) waits",
                            l.line_of(before.start),
                            l.line_of(after.start)
                        ),
                        None => format!("split block barrier s{id}, arrive (for `{name}`)"),
                    };
                    out.push(Stmt::Comment(why));
                }
                let slot = self.split_slot(*id).expect("checked above");
                self.proxy_fence(out);
                out.push(barrier::split_arrive(*id, slot));
            }
            K::BarrierWait { id, .. } => {
                let slot = self.split_slot(*id).expect("checked above");
                out.push(Stmt::Comment(format!("split block barrier s{id}, wait")));
                out.push(barrier::split_wait(*id, slot));
            }
            K::Barrier { scope, origin } => {
                let mut stmts = barrier::lower(*scope, &self.g.named);
                if let BarrierOrigin::Inferred { mem, before, after } = origin {
                    let name = &self.f.mems[mem.index()].name;
                    let why = match self.lines {
                        Some(l) => format!(
                            "inferred {scope} barrier: `{name}` is used at line {} and again at line {}",
                            l.line_of(before.start),
                            l.line_of(after.start)
                        ),
                        None => format!("inferred {scope} barrier for `{name}`"),
                    };
                    out.push(Stmt::Comment(why));
                }
                self.proxy_fence(out);
                // PTX orders two accesses of global memory through the async proxy (a TMA
                // store, then another block's TMA load of the box) only within one block or
                // across a proxy fence: a grid barrier in a program with TMA copies is
                // fenced for global memory before (the copies this thread completed) and
                // after (the copies it issues next). Review R42.
                let global = self.g.global_async_proxy && barrier::is_grid(*scope);
                if global {
                    out.push(Stmt::Expr(Expr::call("prism_fence_proxy_async_global", vec![])));
                }
                out.append(&mut stmts);
                if global {
                    out.push(Stmt::Expr(Expr::call("prism_fence_proxy_async_global", vec![])));
                }
            }
            K::If { cond, then, otherwise, .. } => {
                let c = self.val(*cond);
                let t = self.block(then, code);
                let o = self.block(otherwise, code);
                if t.is_empty() && !o.is_empty() {
                    out.push(Stmt::If { cond: Expr::Un("!", Box::new(c)), then: o, otherwise: Vec::new() });
                } else {
                    out.push(Stmt::If { cond: c, then: t, otherwise: o });
                }
            }
            K::Loop { header, cond, body, latch, counter, unroll } => {
                self.emit_loop(header, *cond, body, latch, counter.is_some(), (bid, idx), code, out);
                // `unroll=` is a request to nvcc, on the line right before the loop, which
                // `emit_loop` always pushes last.
                let pragma = match unroll {
                    Unroll::Auto => None,
                    Unroll::Full => Some("#pragma unroll".to_string()),
                    Unroll::Count(n) => Some(format!("#pragma unroll {n}")),
                };
                if let Some(p) = pragma {
                    out.insert(out.len() - 1, Stmt::Raw(p));
                }
            }
            K::Break => out.push(Stmt::Break),
            K::Continue => {
                let target = self.loops.last_mut().and_then(|l| {
                    l.used = true;
                    l.label.clone()
                });
                out.push(match target {
                    Some(l) => Stmt::Goto(l),
                    None => Stmt::Continue,
                });
            }
            K::Return { value } => {
                let v = value.map(|r| self.val(r));
                out.push(Stmt::Return(v));
            }
            K::Group { persp, body } => {
                let body = self.block(body, *persp);
                out.push(Stmt::Block { note: Some(format!("group({persp})")), body });
            }
            K::Split { unit, cases } => {
                let pos = self.rel(code, *unit);
                let pos = if cases.len() > 1 {
                    self.positions += 1;
                    let n = if self.positions == 1 {
                        "prism_pos".to_string()
                    } else {
                        format!("prism_pos{}", self.positions)
                    };
                    out.push(decl_const("int", &n, pos));
                    Expr::id(n)
                } else {
                    pos
                };
                let level = match unit.level {
                    Level::Thread if unit.n == 32 => "warp".to_string(),
                    Level::Thread if unit.n == 128 => "warpgroup".to_string(),
                    l => l.as_str().to_string(),
                };
                let mut chain: Option<Stmt> = None;
                let mut prev_end = 0;
                let mut built: Vec<(Expr, Vec<Stmt>, String)> = Vec::new();
                for c in cases {
                    let end = c.offset + c.count;
                    // Positions are never negative, so the first unit alone is `== 0` (what
                    // an expert writes, and what lets nvcc see one thread, e.g. no
                    // warp-aggregated atomic behind it).
                    let hi = if end == 1 {
                        Expr::bin("==", pos.clone(), Expr::id("0"))
                    } else {
                        Expr::bin("<", pos.clone(), Expr::id(end.to_string()))
                    };
                    let cond = if c.offset == 0 || c.offset == prev_end {
                        hi
                    } else {
                        Expr::bin("&&", Expr::bin(">=", pos.clone(), Expr::id(c.offset.to_string())), hi)
                    };
                    prev_end = end;
                    let body = self.block(&c.body, c.persp);
                    built.push((cond, body, format!("split({level}) case {}: {}", c.count, c.persp)));
                }
                for (cond, body, note) in built.into_iter().rev() {
                    let otherwise = chain.take().map(|s| vec![s]).unwrap_or_default();
                    let s = Stmt::If { cond, then: body, otherwise };
                    chain = Some(if otherwise_is_empty(&s) { Stmt::Noted(Box::new(s), note) } else { s });
                }
                if let Some(s) = chain {
                    out.push(s);
                }
            }
            K::Scope { kind, mem, view, body } => {
                let has_tma = *kind == ScopeKind::Async && issues_tma(body);
                self.async_tma.push(has_tma.then_some(*view));
                let body = self.block(body, code);
                self.async_tma.pop();
                let (m, v) = (&self.f.mems[mem.index()], &self.f.mems[view.index()]);
                let note = format!("{} `{}` as `{}` at {}", kind.as_str(), m.name, v.name, v.persp);
                out.push(Stmt::Block { note: Some(note), body });
            }
            K::Unsafe { body } => {
                let body = self.block(body, code);
                out.push(Stmt::Block { note: Some("with unsafe".into()), body });
            }
            K::Verbatim { text, .. } => out.push(Stmt::Raw(text.clone())),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn intrinsic(
        &mut self,
        dsts: &[Reg],
        id: prism_types::intrinsics::IntrinsicId,
        args: &[IntrArg],
        b: &Block,
        bid: usize,
        idx: usize,
        out: &mut Vec<Stmt>,
    ) {
        let sig = id.sig();
        let elem_of = |s: &Self, r: Reg| s.scalar(r);
        // The result type fixes the operand type of generic math (the first operand's).
        let ops = self.operands(args, &elem_of);
        if dsts.len() == 1 {
            let ty = self.scalar(dsts[0]);
            if let Some(e) = intrinsics::value(sig.name, ty, &ops) {
                self.define(dsts[0], e, bid, idx, out);
                return;
            }
        }
        if (dsts.is_empty() && sig.family == Family::Atomics || matches!(sig.name, "atomic_store" | "volatile_store"))
            && let Some(e) = intrinsics::value(sig.name, Scalar::I32, &ops)
        {
            out.push(Stmt::Expr(e));
            return;
        }
        // Results written through places: the instructions right after that store each
        // result (`C[0] = %d0`, ...) become the asm's outputs.
        let mut outs = Vec::new();
        if !dsts.is_empty() {
            let places = self.result_places(dsts, b, bid, idx);
            match places {
                Some(p) => outs = p,
                None => {
                    for &d in dsts {
                        out.push(Stmt::Decl {
                            quals: String::new(),
                            ty: self.c_ty(d),
                            name: self.name(d),
                            dims: vec![],
                            init: None,
                        });
                        outs.push(Expr::id(self.name(d)));
                    }
                }
            }
        }
        let tma_bytes = if id.is_tma() && !id.is_tma_mbar() { self.tma_bytes(args, b.insts[idx].span) } else { None };
        // A name for the call's scratch registers (`ldmatrix`'s words), unique in the function.
        let scratch = format!("prism_w{}", dsts.first().map_or(0, |d| d.index()));
        let own_stores = !(id.is_wgmma() && self.reads_stages_only(&b.insts[idx].kind));
        out.extend(intrinsics::statements(sig.name, &ops, &outs, tma_bytes, &scratch, own_stores));
    }

    /// Whether every memory an intrinsic reads is a pipeline's stage view (or inside one).
    /// A wgmma reading only those needs no proxy fence of its own (docs/cuda.md, "wgmma and
    /// the async proxy"): a stage is read-only and its ring hidden in the pipeline, so the
    /// issuing thread has made no plain store to it since the last barrier or mbarrier wait,
    /// and the copies that filled it were published before that.
    fn reads_stages_only(&self, k: &InstKind) -> bool {
        let InstKind::Intrinsic { accesses, .. } = k else { return false };
        let mut reads = accesses
            .iter()
            .map(|a| &self.f.accesses[a.index()])
            .filter(|a| a.kind == prism_ir::ir::AccessKind::Read)
            .peekable();
        reads.peek().is_some()
            && reads.all(|a| {
                std::iter::successors(Some(a.mem), |m| self.f.mems[m.index()].parent)
                    .any(|m| self.f.mems[m.index()].kind == MemKind::Stage)
            })
    }

    /// For a vector load at `idx` whose elements the next instructions store, each read
    /// nowhere else, into consecutive elements of a packed array from an even constant
    /// index: the array and that index. Those stores are then skipped.
    fn vec_into_pairs(&mut self, dsts: &[Reg], b: &Block, bid: usize, idx: usize) -> Option<(prism_ir::LocalId, i128)> {
        if !dsts.len().is_multiple_of(2) {
            return None;
        }
        let mut stores = Vec::new();
        for (j, inst) in b.insts.iter().enumerate().skip(idx + 1) {
            if stores.len() == dsts.len() {
                break;
            }
            match &inst.kind {
                InstKind::Const { dst, .. } if self.a.inlined.contains(dst) => {}
                InstKind::LocalStore { local, index, value } if *value == dsts[stores.len()] => {
                    let c = self.const_int(*index, 0)?;
                    let once = self.a.sites[value.index()].iter().filter(|s| !s.def).count() == 1;
                    (self.packed.contains(local) && once).then_some(())?;
                    stores.push((*local, c, self.a.ranges[&(bid, j)].0));
                }
                _ => return None,
            }
        }
        let &(local, first, _) = stores.first()?;
        let ok = stores.len() == dsts.len()
            && first % 2 == 0
            && stores.iter().enumerate().all(|(k, &(l, c, _))| l == local && c == first + k as i128);
        if !ok {
            return None;
        }
        self.skip.extend(stores.iter().map(|s| s.2));
        Some((local, first))
    }

    /// Whether `r` is defined once, by a subtraction or a select (through copies): values
    /// whose sign nvcc does not see (a pipeline's next tile is a select of differences).
    fn difference(&self, r: Reg) -> bool {
        let mut r = r;
        for _ in 0..8 {
            if !self.a.defined_once(r) {
                return false;
            }
            match self.a.def_inst.get(&r) {
                Some(InstKind::Copy { src, .. }) => r = *src,
                Some(InstKind::Binary { op: BinOp::Sub, .. } | InstKind::Select { .. }) => return true,
                _ => return false,
            }
        }
        false
    }

    /// The constant register `r` holds, when its only definition is a constant.
    /// `Analysis::def_inst` keeps a register's last definition, which says nothing of a
    /// register defined twice (review R39: the lowering never defines a register by a
    /// constant and again otherwise today, but a place or a step read from the last of two
    /// definitions would be wrong the day it did).
    fn only_const(&self, r: Reg) -> Option<prism_types::tir::ConstValue> {
        if !self.a.defined_once(r) {
            return None;
        }
        match self.a.def_inst.get(&r)? {
            InstKind::Const { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// The value of `r` when it is a constant or a sum of constants defined once, as `r`
    /// holds it at run time: each sum wraps to `r`'s type, as the IR's (and the simulator's)
    /// integer addition does. Review R46: the sums were exact, so `j = a + b + 4` with
    /// `a = b = INT_MAX` was 2^32 + 2 here and 2 at run time, and a packed `half` vector access
    /// printed word `hv[2147483649]` of a 4-word array (an out-of-bounds local store for
    /// `load_vec`).
    fn const_int(&self, r: Reg, depth: u32) -> Option<i128> {
        if depth > 8 || !self.a.defined_once(r) {
            return None;
        }
        let ty = self.scalar(r);
        if !ty.is_int() {
            return None;
        }
        let v = match self.a.def_inst.get(&r)? {
            InstKind::Const { value: prism_types::tir::ConstValue::Int(c), .. } => *c,
            InstKind::Copy { src, .. } => self.const_int(*src, depth + 1)?,
            InstKind::Binary { op: BinOp::Add, lhs, rhs, .. } => {
                self.const_int(*lhs, depth + 1)?.checked_add(self.const_int(*rhs, depth + 1)?)?
            }
            _ => return None,
        };
        Some(prism_types::value::to_i128(ty, prism_types::value::norm(ty, v as u64)))
    }

    /// For a vector store of `values`: when each is an element read of a packed array,
    /// inlined, at consecutive constant indices from an even one, the array and that index.
    fn vec_from_pairs(&self, values: &[Reg]) -> Option<(prism_ir::LocalId, i128)> {
        if !values.len().is_multiple_of(2) {
            return None;
        }
        let mut at = None;
        for (k, v) in values.iter().enumerate() {
            let Some(InstKind::LocalLoad { local, index, .. }) = self.a.def_inst.get(v) else { return None };
            let c = self.const_int(*index, 0)?;
            (self.packed.contains(local) && self.a.inlined.contains(v)).then_some(())?;
            let (l, first) = *at.get_or_insert((*local, c));
            (l == *local && c == first + k as i128 && first % 2 == 0).then_some(())?;
        }
        at
    }

    /// For a multi-result intrinsic at `idx`: the places its results are stored to by the
    /// following instructions, which are then skipped.
    fn result_places(&mut self, dsts: &[Reg], b: &Block, bid: usize, idx: usize) -> Option<Vec<Expr>> {
        let mut places: Vec<Option<Expr>> = vec![None; dsts.len()];
        let mut skipped = Vec::new();
        for (j, inst) in b.insts.iter().enumerate().skip(idx + 1) {
            if places.iter().all(Option::is_some) {
                break;
            }
            let pos = self.a.ranges[&(bid, j)].0;
            match &inst.kind {
                InstKind::Const { dst, .. } if self.a.inlined.contains(dst) => {}
                InstKind::LocalStore { local, index, value } if dsts.contains(value) => {
                    // A packed array's element is half a word, no place of its own.
                    if self.packed.contains(local) {
                        return None;
                    }
                    let k = dsts.iter().position(|d| d == value)?;
                    let c = self.only_const(*index)?;
                    if places[k].is_some() {
                        return None;
                    }
                    let i = ops::literal(self.scalar(*index), c);
                    places[k] = Some(Expr::index(Expr::id(self.a.local_names[local].clone()), i));
                    skipped.push(pos);
                }
                InstKind::Copy { dst, src } if dsts.contains(src) => {
                    let k = dsts.iter().position(|d| d == src)?;
                    let declared_here =
                        matches!(self.a.decls.get(dst), Some(Decl::AtDef { block, idx }) if *block == bid && *idx == j);
                    if declared_here || places[k].is_some() {
                        return None;
                    }
                    places[k] = Some(Expr::id(self.name(*dst)));
                    skipped.push(pos);
                }
                _ => return None,
            }
        }
        let places: Option<Vec<Expr>> = places.into_iter().collect();
        if places.is_some() {
            self.skip.extend(skipped);
        }
        places
    }

    /// The bytes a TMA copy into `dst[i]` brings: a typed map's box, or for an untyped
    /// `CUTensorMap` the rest of the destination's shared array.
    fn tma_bytes(&mut self, args: &[IntrArg], span: prism_span::Span) -> Option<Expr> {
        if let Some(IntrArg::Val(map)) = args.get(1)
            && let Type::TensorMap(m) = self.f.reg_ty(*map)
        {
            return Some(Expr::id(format!("{}u", m.box_bytes())));
        }
        let IntrArg::Elem { ptr, .. } = args.first()? else { return None };
        let mut r = *ptr;
        for _ in 0..16 {
            match self.a.def_inst.get(&r) {
                // The dynamic array's length is the launch's: no static byte count.
                Some(InstKind::SharedAddr { len, .. }) if *len != prism_ir::ir::DYNAMIC_LEN => {
                    return Some(Expr::id(format!("{len}u")));
                }
                Some(InstKind::Copy { src, .. }) | Some(InstKind::PtrOffset { base: src, .. }) => r = *src,
                _ => break,
            }
        }
        self.errors.push(crate::Unsupported {
            span,
            message: format!(
                "`tma_load_2d` in `{}`: the destination must be a shared array (its size is the copy's byte count)",
                self.f.name
            ),
        });
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_loop(
        &mut self,
        header: &Block,
        cond: Reg,
        body: &Block,
        latch: &Block,
        counted: bool,
        (bid, idx): (usize, usize),
        code: Persp,
        out: &mut Vec<Stmt>,
    ) {
        let head = self.block(header, code);
        let c = self.val(cond);
        let mut latch_s = self.block(latch, code);
        // A single assignment `x = x + s` in the latch becomes the `for` step `x += s`.
        let step = match latch_s.as_slice() {
            [s] => match strip(s) {
                Stmt::Assign { lhs, op: None, rhs } => {
                    Some(compound(lhs, rhs, counted || self.native_step(header, latch, cond)))
                }
                _ => None,
            },
            _ => None,
        };
        let in_head = head.is_empty();
        let step_in_head = in_head && step.is_some();
        let need_label = !latch_s.is_empty() && !step_in_head;
        let label = need_label.then(|| {
            self.labels += 1;
            format!("prism_continue_{}", self.labels)
        });
        self.loops.push(LoopCx { label, used: false });
        let mut body_s = self.block(body, code);
        let lc = self.loops.pop().expect("pushed above");
        if lc.used
            && let Some(l) = lc.label
        {
            body_s = vec![Stmt::Block { note: None, body: body_s }, Stmt::Label(l)];
        }
        let stmt = if in_head {
            if step_in_head {
                let step = step.expect("checked");
                // Fold the loop variable's declaration into the `for` when only the loop uses it.
                let init = self.take_init(out, latch, bid, idx);
                Stmt::For { init: init.map(Box::new), cond: Some(c), step: Some(Box::new(step)), body: body_s }
            } else {
                body_s.append(&mut latch_s);
                Stmt::While { cond: c, body: body_s }
            }
        } else {
            let mut all = head;
            all.push(Stmt::If { cond: Expr::Un("!", Box::new(c)), then: vec![Stmt::Break], otherwise: Vec::new() });
            all.append(&mut body_s);
            all.append(&mut latch_s);
            Stmt::For { init: None, cond: None, step: None, body: all }
        };
        out.push(stmt);
    }

    /// Whether a loop's wrapping increment can be C's native `+=`: a literal step of the sign
    /// the comparison needs and a bound the step cannot overflow past. (A `range` loop's
    /// counter is always printed with `+=`: its step does not wrap, by the language's rule,
    /// and C's undefined signed overflow is what lets nvcc count and unroll the loop.)
    fn native_step(&self, header: &Block, latch: &Block, cond: Reg) -> bool {
        let [Inst { kind: InstKind::Binary { dst: iv, op: BinOp::Add, lhs, rhs: st }, .. }] = latch.insts.as_slice()
        else {
            return false;
        };
        if iv != lhs {
            return false;
        }
        let ty = self.scalar(*iv);
        if !ty.is_signed_int() {
            return true;
        }
        let konst = |r: &Reg| match self.only_const(*r) {
            Some(prism_types::tir::ConstValue::Int(v)) => Some(v),
            _ => None,
        };
        let Some(s) = konst(st) else { return false };
        let Some(InstKind::Binary { op, lhs: l, rhs: e, .. }) =
            header.insts.iter().map(|i| &i.kind).find(|k| k.defs() == vec![cond])
        else {
            return false;
        };
        if l != iv {
            return false;
        }
        let max: i128 = if ty.size() == 4 { i32::MAX as i128 } else { i64::MAX as i128 };
        use prism_types::tir::BinOp::*;
        match (op, konst(e)) {
            (Lt, _) if s == 1 => true,
            (Gt, _) if s == -1 => true,
            (Lt, Some(e)) if s > 0 => e - 1 + s <= max,
            (Gt, Some(e)) if s < 0 => e + 1 + s >= -max - 1,
            _ => false,
        }
    }

    /// Pops the loop variable's declaration off `out` if it is the last statement and every
    /// other use of the variable is inside the loop.
    fn take_init(&mut self, out: &mut Vec<Stmt>, latch: &Block, bid: usize, idx: usize) -> Option<Stmt> {
        let [Inst { kind: InstKind::Binary { dst: iv, .. }, .. }] = latch.insts.as_slice() else { return None };
        let name = self.name(*iv);
        let (s, e) = self.a.ranges[&(bid, idx)];
        let decl_pos = match self.a.decls.get(iv) {
            Some(Decl::AtDef { block, idx }) => self.a.ranges[&(*block, *idx)].0,
            _ => return None,
        };
        let inside = self.a.sites[iv.index()].iter().all(|site| (s..e).contains(&site.pos) || site.pos == decl_pos);
        let last_is_decl = matches!(out.last().map(strip), Some(Stmt::Decl { name: n, .. }) if *n == name);
        if inside && last_is_decl {
            return out.pop().map(|s| match s {
                Stmt::Noted(s, _) => *s,
                s => s,
            });
        }
        None
    }
}

fn strip(s: &Stmt) -> &Stmt {
    match s {
        Stmt::Noted(s, _) => strip(s),
        s => s,
    }
}

fn otherwise_is_empty(s: &Stmt) -> bool {
    matches!(s, Stmt::If { otherwise, .. } if otherwise.is_empty())
}

/// `x = x + s` as `x += s` (or `x -= s` for a negative literal); a wrapping helper call is
/// unwrapped when `native` says the increment cannot overflow.
fn compound(lhs: &Expr, rhs: &Expr, native: bool) -> Stmt {
    let keep = || Stmt::Assign { lhs: lhs.clone(), op: None, rhs: rhs.clone() };
    let (a, b) = match rhs {
        Expr::Bin("+", a, b) => (a.as_ref(), b.as_ref()),
        Expr::Call(f, args) if f == "prism_add" && native && args.len() == 2 => (&args[0], &args[1]),
        _ => return keep(),
    };
    if a != lhs {
        return keep();
    }
    if let Expr::Id(s) = b
        && let Some(pos) = s.strip_prefix('-')
    {
        return Stmt::Assign { lhs: lhs.clone(), op: Some("-"), rhs: Expr::id(pos) };
    }
    Stmt::Assign { lhs: lhs.clone(), op: Some("+"), rhs: b.clone() }
}

fn issues_tma(b: &Block) -> bool {
    let mut found = false;
    b.walk(&mut |k| {
        if let InstKind::Intrinsic { intrinsic, .. } = k
            && intrinsic.is_tma()
            && !intrinsic.is_tma_mbar()
        {
            found = true;
        }
    });
    found
}

/// Program-wide facts: names, and which functions need cooperative launches, TMA, sm_90a.
pub fn global<'a>(
    p: &'a Program,
    lines: Option<Lines>,
    extern_c: bool,
    kernels: Option<&[String]>,
) -> (Global<'a>, Vec<crate::Unsupported>) {
    let (named, errors) = barrier::plan(p);
    // The root file's functions are named first, so that their C names (the kernels'
    // symbols) do not depend on what it imports; imported ones (`m.f`) become `m_f`, with
    // `_` appended while a name is taken.
    let mut fn_names: Vec<String> = vec![String::new(); p.functions.len()];
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    let root_first = (0..p.functions.len()).filter(|&i| !p.functions[i].name.contains('.'));
    for i in root_first.chain((0..p.functions.len()).filter(|&i| p.functions[i].name.contains('.'))) {
        let f = &p.functions[i];
        let mut n =
            if f.kind == FnKind::Kernel { analysis::kernel_symbol(&f.name) } else { analysis::sanitize(&f.name) };
        while !taken.insert(n.clone()) {
            n.push('_');
        }
        fn_names[i] = n;
    }
    let n = p.functions.len();
    let mut coop = vec![false; n];
    let mut tma = vec![false; n];
    let mut sm90 = vec![false; n];
    let mut maxnreg = vec![false; n];
    let mut calls: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, f) in p.functions.iter().enumerate() {
        f.body.walk(&mut |k| match k {
            InstKind::Barrier { scope, .. } if barrier::is_grid(*scope) => coop[i] = true,
            InstKind::Intrinsic { intrinsic, .. } => {
                let s = intrinsic.sig();
                if intrinsic.is_tma() && !intrinsic.is_tma_mbar() {
                    tma[i] = true;
                }
                if s.name.starts_with("setmaxnreg") {
                    maxnreg[i] = true;
                }
                if s.family == Family::Warpgroup
                    || intrinsic.is_tma()
                    || intrinsic.is_tma_store()
                    || matches!(
                        s.name,
                        "mbarrier_arrive_expect_tx" | "mbarrier_expect_tx" | "mbarrier_complete_tx" | "elect_sync"
                    )
                {
                    sm90[i] = true;
                }
            }
            InstKind::Call { func, .. } => calls[i].push(func.index()),
            _ => {}
        });
        if f.params.iter().any(|&r| matches!(f.reg_ty(r), Type::Opaque | Type::TensorMap(_))) {
            sm90[i] = true;
        }
        let _ = MemKind::Param;
        let _ = Purity::Pure;
    }
    // Close over calls (no recursion: at most n rounds).
    for _ in 0..n {
        let mut changed = false;
        for i in 0..n {
            for &c in &calls[i] {
                for v in [&mut coop, &mut tma, &mut sm90, &mut maxnreg] {
                    if v[c] && !v[i] {
                        v[i] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut live: Vec<bool> = p
        .functions
        .iter()
        .map(|f| match kernels {
            Some(k) => f.kind == FnKind::Kernel && k.contains(&f.name),
            None => !f.name.contains('.') || f.kind == FnKind::Kernel,
        })
        .collect();
    let mut stack: Vec<usize> = (0..n).filter(|&i| live[i]).collect();
    while let Some(i) = stack.pop() {
        for &c in &calls[i] {
            if !live[c] {
                live[c] = true;
                stack.push(c);
            }
        }
    }
    let mut async_proxy = false;
    let mut global_async_proxy = false;
    for f in &p.functions {
        f.body.walk(&mut |k| {
            // TMA writes shared memory through the async proxy too: plain stores to a tile
            // before a barrier must be visible to it before a copy overwrites the tile.
            async_proxy |= matches!(k, InstKind::Intrinsic { intrinsic, .. }
                if intrinsic.is_wgmma() || intrinsic.is_tma() || intrinsic.is_tma_store());
            global_async_proxy |= matches!(k, InstKind::Intrinsic { intrinsic, .. }
                if intrinsic.is_tma() || intrinsic.is_tma_store());
        });
    }
    let g = Global {
        program: p,
        named,
        fn_names,
        cooperative: coop,
        tma,
        sm90,
        maxnreg,
        async_proxy,
        global_async_proxy,
        lines,
        extern_c,
        live,
    };
    (g, errors)
}

/// Items for the whole program: prototypes of device functions, then every function.
pub fn program_items(g: &Global) -> (Vec<Item>, Vec<KernelAbi>, Vec<crate::Unsupported>) {
    let mut items = Vec::new();
    let mut abis = Vec::new();
    let mut errors = Vec::new();
    let p = g.program;
    if !g.named.mbar.is_empty() {
        items.push(Item::Raw(barrier::mbar_decls(&g.named)));
        items.push(Item::Blank);
    }
    if g.tma.iter().any(|&t| t) {
        items.push(Item::Raw(
            "// The mbarrier that TMA copies of `async` scopes complete on.\nstatic __shared__ __align__(8) unsigned long long prism_tma_bar;\n".into(),
        ));
        items.push(Item::Blank);
    }
    let protos: Vec<FuncId> = (0..p.functions.len())
        .filter(|&i| g.live[i])
        .map(|i| FuncId(i as u32))
        .filter(|&i| p.func(i).kind == FnKind::Device)
        .collect();
    let mut defs = Vec::new();
    let mut line = 0;
    for i in (0..p.functions.len()).filter(|&i| g.live[i]) {
        let id = FuncId(i as u32);
        // Comments between the previous function and this one's header.
        let mut pre = Vec::new();
        if let Some(lines) = g.lines.as_ref().filter(|l| l.holds(p.func(id).span)) {
            let header = lines.line_of(p.func(id).span.start);
            for n in line + 1..header {
                if let Some(c) = lines.comment(n) {
                    pre.push(c);
                }
            }
        }
        let (func, abi, errs, last) = function(g, id, line);
        line = last;
        errors.extend(errs);
        abis.extend(abi);
        defs.push((pre, func));
    }
    if !protos.is_empty() {
        items.push(Item::Comment("Device functions (defined below in source order).".into()));
        for (pre, f) in &defs {
            let _ = pre;
            if f.head.contains("__device__") {
                items.push(Item::Func(Func { body: None, ..f.clone() }));
            }
        }
        items.push(Item::Blank);
    }
    for (pre, f) in defs {
        if !pre.is_empty() {
            items.push(Item::Comment(pre.join("\n")));
        }
        items.push(Item::Func(f));
        items.push(Item::Blank);
    }
    (items, abis, errors)
}

/// The shared arrays of a kernel that can be declared as `__shared__` arrays of their own
/// rather than as offsets into `prism_smem`: all of them, when the kernel calls nothing
/// (callees address their shared memory from the kernel's base) and no two arrays share
/// bytes (the allocator reuses space between sequential scopes). nvcc treats distinct
/// arrays as distinct objects, which it cannot for one byte buffer: the tiled gemms keep
/// about 10% fewer registers that way, as hand-written CUDA does.
/// The block shape a kernel's bound fixes (`block=`); device functions are emitted once for
/// every caller, so they read the extents at run time.
fn fixed_shape(f: &Function) -> Option<prism_ir::ir::Dim3> {
    if f.kind == FnKind::Kernel { f.block_shape } else { None }
}

/// Local arrays of `half` or `bf16` with an even length whose address is never taken:
/// each pair of elements `2k`, `2k + 1` is kept in one 32-bit word (`unsigned a[n / 2]`,
/// the lower element in the lower half, the layout of `T a[n]` in memory), read and
/// written through `prism_pair_get`/`prism_pair_set`. The tensor-core instructions take
/// and give such pairs in one register (`ldmatrix`, `mma`), and a 128-bit load is four
/// words: with the words in the source, nvcc keeps each pair in one register instead of
/// splitting and re-packing 16-bit values (PRMT) around every use.
fn packed_locals(f: &Function) -> HashSet<prism_ir::LocalId> {
    let mut addressed = HashSet::new();
    f.body.walk(&mut |k| {
        if let InstKind::LocalAddr { local, .. } = k {
            addressed.insert(*local);
        }
    });
    (0..f.locals.len() as u32)
        .map(prism_ir::LocalId)
        .filter(|l| {
            let info = &f.locals[l.index()];
            matches!(info.elem, Scalar::F16 | Scalar::BF16) && info.len.is_multiple_of(2) && !addressed.contains(l)
        })
        .collect()
}

fn separate_arrays(f: &Function) -> BTreeMap<(u64, u64, Scalar), String> {
    let mut arrays = std::collections::BTreeSet::new();
    let mut calls = false;
    f.body.walk(&mut |k| match k {
        InstKind::SharedAddr { offset, len, elem, .. } => {
            arrays.insert((*offset, *len, *elem));
        }
        InstKind::Call { .. } => calls = true,
        _ => {}
    });
    let list: Vec<(u64, u64, Scalar)> = arrays.into_iter().collect();
    let overlap = list.windows(2).any(|w| w[1].0 < w[0].0 + w[0].1);
    if calls || overlap || list.iter().any(|&(_, len, elem)| len == 0 || len % elem.size().max(1) != 0) {
        return BTreeMap::new();
    }
    list.into_iter().map(|k| (k, format!("prism_shared{}", k.0))).collect()
}

/// Drops the declarations of values that the printed body never mentions elsewhere, whose
/// definitions are pure or loads: a register the IR reads only where the backend printed a
/// constant instead (a packed `half` vector access at a folded index prints the word, not
/// the index's register; `u = ua + 7` in `hv[u]` was left declared, and nvcc warned "#177:
/// variable declared but never referenced"). A declaration so dropped may leave those of
/// its operands unmentioned in turn. A declaration whose initialiser has an effect (an
/// atomic whose old value nothing reads) becomes that initialiser as a statement. Only
/// `const` declarations of registers defined once are candidates, and a name printed
/// anywhere else, a comment included, keeps its declaration.
fn drop_unmentioned(body: &mut Vec<Stmt>, a: &Analysis) {
    // Each candidate's name and whether its definition is pure.
    let candidates: HashMap<&str, bool> = a
        .names
        .iter()
        .filter(|(r, _)| a.defined_once(**r))
        .filter_map(|(r, n)| {
            let pure = matches!(analysis::folded_purity(a, a.def_inst.get(r)?), Purity::Pure | Purity::Reads);
            Some((n.as_str(), pure))
        })
        .collect();
    // Each candidate's declaration (a name declared twice is left alone) and the names
    // its initialiser mentions.
    let mut inits: HashMap<String, Option<Vec<String>>> = HashMap::new();
    walk_decls(body, &mut |name, init| {
        if candidates.contains_key(name) {
            let names = identifiers(&crate::cpp::expr(init)).map(str::to_string).collect();
            inits.entry(name.to_string()).and_modify(|e| *e = None).or_insert(Some(names));
        }
    });
    if inits.is_empty() {
        return;
    }
    let printed = print_body(body);
    let mut count: HashMap<&str, usize> = HashMap::new();
    for id in identifiers(&printed) {
        *count.entry(id).or_default() += 1;
    }
    // The unmentioned declarations, each with whether it is pure (dropped) or not (kept as
    // a statement, which mentions its operands still).
    let mut unmentioned: HashMap<String, bool> = HashMap::new();
    let mut work: Vec<String> = inits.keys().cloned().collect();
    while let Some(name) = work.pop() {
        let Some(Some(names)) = inits.get(&name) else { continue };
        // Mentioned once: by its own declaration.
        if count.get(name.as_str()) != Some(&1) || unmentioned.contains_key(&name) {
            continue;
        }
        let pure = candidates[name.as_str()];
        unmentioned.insert(name.clone(), pure);
        if pure {
            for n in names {
                if let Some(c) = count.get_mut(n.as_str()) {
                    *c -= 1;
                    work.push(n.clone());
                }
            }
        }
    }
    if !unmentioned.is_empty() {
        remove_decls(body, &unmentioned);
    }
}

/// The text of a function body.
fn print_body(body: &[Stmt]) -> String {
    crate::cpp::print(&crate::cpp::Unit {
        items: vec![Item::Func(Func {
            head: String::new(),
            name: String::new(),
            params: vec![],
            body: Some(body.to_vec()),
        })],
    })
}

/// The name and initialiser of a `const` scalar declaration (with or without a note): the
/// declarations [`drop_unmentioned`] may drop.
fn const_decl(s: &Stmt) -> Option<(&str, &Expr)> {
    match s {
        Stmt::Decl { quals, name, dims, init: Some(Init::Expr(e)), .. } if quals == "const" && dims.is_empty() => {
            Some((name, e))
        }
        Stmt::Noted(s, _) => const_decl(s),
        _ => None,
    }
}

/// Calls `f` with the name and initialiser of every `const` scalar declaration in `body`.
fn walk_decls(body: &[Stmt], f: &mut dyn FnMut(&str, &Expr)) {
    for s in body {
        if let Some((name, e)) = const_decl(s) {
            f(name, e);
            continue;
        }
        match s {
            Stmt::Noted(s, _) => walk_decls(std::slice::from_ref(s), f),
            Stmt::If { then, otherwise, .. } => {
                walk_decls(then, f);
                walk_decls(otherwise, f);
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Block { body, .. } => walk_decls(body, f),
            _ => {}
        }
    }
}

/// Removes the `const` scalar declarations of the names `unmentioned` marks pure from
/// `body`, and makes those it marks impure their initialisers' statements.
fn remove_decls(body: &mut Vec<Stmt>, unmentioned: &HashMap<String, bool>) {
    let of = |s: &Stmt| const_decl(s).and_then(|(name, _)| unmentioned.get(name).copied());
    body.retain(|s| of(s) != Some(true));
    for s in body {
        let inner = match s {
            Stmt::Noted(s, _) => s.as_mut(),
            s => s,
        };
        if of(inner) == Some(false)
            && let Some((_, e)) = const_decl(inner)
        {
            *inner = Stmt::Expr(e.clone());
        }
        remove_inner_decls(inner, unmentioned);
    }
}

/// [`remove_decls`] in the statements `s` holds.
fn remove_inner_decls(s: &mut Stmt, unmentioned: &HashMap<String, bool>) {
    match s {
        Stmt::If { then, otherwise, .. } => {
            remove_decls(then, unmentioned);
            remove_decls(otherwise, unmentioned);
        }
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Block { body, .. } => remove_decls(body, unmentioned),
        Stmt::Noted(s, _) => remove_inner_decls(s, unmentioned),
        _ => {}
    }
}

/// The identifiers of C++ text, in order (words of letters, digits and `_` that do not
/// start with a digit; a number's suffix such as `7u` is not one).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
}

/// Whether `text` uses the identifier `name` (not merely a longer name starting with it:
/// `prism_smem_addr` is not `prism_smem`).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = text[..i].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[i + name.len()..].chars().next().is_none_or(|c| !ident(c));
        before && after
    })
}

//! The Prism CPU simulator: the reference semantics of a kernel launch.
//!
//! ```text
//! prism_driver::Synced --code::compile--> Code --sim::run--> buffers + reports
//! ```
//!
//! [`Module`] is the API: build one from the pipeline's output (`prism_driver::compile`),
//! then [`Module::launch`] a kernel with typed [`Buffer`]s and scalar
//! arguments. The launch is validated against the kernel's signature and bound first; a
//! bad launch is a [`LaunchError`], never a panic. The run itself yields an [`Outcome`]
//! whose reports are the dynamic-check findings (races, barrier divergence, out-of-bounds
//! accesses, deadlock, non-uniform values), each convertible to a diagnostic.
//!
//! How execution works is described in [`sim`]; the arithmetic in [`ops`] and [`value`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod args;
pub mod code;
pub mod memory;
pub mod npy;
pub mod ops;
pub mod report;
pub mod rng;
pub mod shadow;
pub mod sim;
/// Scalar values as bits (the language's semantics; shared with the CUDA backend).
pub use prism_types::value;

pub use memory::Buffer;
/// The shape of a launch, re-exported so that callers of [`Module::launch`] need not name
/// the IR crate.
pub use prism_ir::ir::Dim3;
pub use report::{Report, ReportKind, Thread};
pub use sim::{Checks, Config, Outcome, Progress};

use memory::Ptr;
use prism_ir::ir::{self, MemKind, Type};
use prism_types::tir::FnKind;
use prism_types::ty::Scalar;

/// A Rust type that can be a buffer element or a scalar argument.
pub trait Elem: Copy {
    /// The Prism scalar type.
    const SCALAR: Scalar;
    /// Register bits.
    fn to_bits(self) -> u64;
    /// From register bits.
    fn from_bits(bits: u64) -> Self;
}

macro_rules! elem {
    ($t:ty, $s:expr, |$x:ident| $to:expr, |$b:ident| $from:expr) => {
        impl Elem for $t {
            const SCALAR: Scalar = $s;
            fn to_bits(self) -> u64 {
                let $x = self;
                $to
            }
            fn from_bits($b: u64) -> Self {
                $from
            }
        }
    };
}

elem!(f32, Scalar::F32, |x| x.to_bits() as u64, |b| f32::from_bits(b as u32));
elem!(f64, Scalar::F64, |x| x.to_bits(), |b| f64::from_bits(b));
elem!(i32, Scalar::I32, |x| x as i64 as u64, |b| b as i32);
elem!(u32, Scalar::U32, |x| x as u64, |b| b as u32);
elem!(i64, Scalar::I64, |x| x as u64, |b| b as i64);
elem!(u64, Scalar::U64, |x| x, |b| b);
elem!(bool, Scalar::Bool, |x| x as u64, |b| b != 0);
elem!(half::f16, Scalar::F16, |x| x.to_bits() as u64, |b| half::f16::from_bits(b as u16));
elem!(half::bf16, Scalar::BF16, |x| x.to_bits() as u64, |b| half::bf16::from_bits(b as u16));

impl Buffer {
    /// A buffer holding `values`.
    pub fn from_slice<T: Elem>(values: &[T]) -> Buffer {
        let bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        Buffer::from_bits(T::SCALAR, &bits)
    }

    /// The contents as `T`, or `None` if the element type is not `T`.
    pub fn to_vec<T: Elem>(&self) -> Option<Vec<T>> {
        (self.elem == T::SCALAR).then(|| self.to_bits().into_iter().map(T::from_bits).collect())
    }
}

/// A kernel argument.
#[derive(Debug)]
pub enum Arg {
    /// A scalar of the given type, as register bits.
    Scalar(Scalar, u64),
    /// Global memory for a pointer parameter.
    Buffer(Buffer),
    /// A row-major array for a tensor-map parameter (`tensor_map(T[..][..])`): its
    /// elements and its dimensions, outermost first. The launcher builds the map from them
    /// (`cuTensorMapEncodeTiled` on a GPU; the simulator reads the same description).
    Tensor {
        /// The elements, row-major.
        buffer: Buffer,
        /// The dimensions, outermost first; their product is the buffer's length.
        dims: Vec<u64>,
    },
}

impl Arg {
    /// A scalar argument.
    pub fn value<T: Elem>(v: T) -> Arg {
        Arg::Scalar(T::SCALAR, v.to_bits())
    }

    /// A buffer argument.
    pub fn buffer<T: Elem>(values: &[T]) -> Arg {
        Arg::Buffer(Buffer::from_slice(values))
    }

    /// The buffer, if this is one.
    pub fn as_buffer(&self) -> Option<&Buffer> {
        match self {
            Arg::Buffer(b) | Arg::Tensor { buffer: b, .. } => Some(b),
            Arg::Scalar(..) => None,
        }
    }
}

/// What a kernel parameter is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A scalar of this type.
    Scalar(Scalar),
    /// A pointer to elements of this type.
    Pointer(Scalar),
    /// An opaque handle (a `CUTensorMap` built by the caller), which the simulator cannot
    /// take: it does not know what the handle describes.
    Opaque,
    /// A typed tensor map: the launch passes an [`Arg::Tensor`] and the launcher builds the
    /// map.
    TensorMap(prism_types::ty::TensorMapTy),
}

/// A kernel's parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: ParamKind,
}

/// What a launch needs to know about a kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    /// Its name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Threads per block must be a multiple of this.
    pub t_mult: u64,
    /// Blocks per grid must be a multiple of this.
    pub b_mult: u64,
    /// `@launch_bounds`, if any.
    pub launch_bounds: Option<u64>,
    /// The one launch a kernel entered below `grid[1]` that writes memory allows (blocks,
    /// threads per block if fixed): `prism_ir::ir::Function::exact_launch`.
    pub exact_launch: Option<(u64, Option<u64>)>,
    /// The most blocks a launch may have (`prism_ir::ir::Function::max_blocks`).
    pub max_blocks: Option<u64>,
    /// Static shared memory per block, in bytes.
    pub smem: u64,
    /// Its dynamic shared array, sized by an argument, if it has one.
    pub dyn_smem: Option<ir::DynSmem>,
    /// What it allows of a launch's shape: more than one dimension only when it reads
    /// coordinates (`id(x)`, ...), and a fixed block shape if its bound gives one.
    pub shape: ir::ShapeRule,
    /// Where the kernel is declared.
    pub span: prism_span::Span,
}

/// A launch that does not fit the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchError {
    /// `bad-launch` (kernel name or sizes) or `bad-argument`.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LaunchError {}

fn launch_error(message: impl Into<String>) -> LaunchError {
    LaunchError { code: "bad-launch", message: message.into() }
}

fn argument_error(message: impl Into<String>) -> LaunchError {
    LaunchError { code: "bad-argument", message: message.into() }
}

/// The most threads a block may have (every CUDA architecture since Fermi).
pub const MAX_BLOCK: u32 = 1024;

/// The most blocks a grid may have (CUDA's limit for `gridDim.x`).
pub const MAX_GRID: u32 = (1 << 31) - 1;

/// The most blocks of a kernel with grid-wide barriers. Its blocks must all be resident at
/// once: a GPU limits such cooperative launches to what fits on its multiprocessors (a few
/// thousand small blocks on an H100), and the simulator keeps every block in memory.
pub const MAX_COOPERATIVE_GRID: u32 = 1024;

/// A program ready to run.
#[derive(Clone, Debug)]
pub struct Module {
    /// The IR it runs: the pipeline's output (`prism_driver`), optimised, with the
    /// uniformity assertions the CUDA backend drops.
    pub ir: ir::Program,
    code: code::Code,
}

impl Module {
    /// A module running a program that went through the whole pipeline. Nothing else is
    /// accepted: IR that skipped a pass would make the simulator check something other than
    /// what becomes CUDA.
    ///
    /// ```compile_fail
    /// // Lowered IR that did not go through synchronisation inference does not run.
    /// let ir = prism_ir::ir::Program::default();
    /// let _ = prism_interp::Module::new(&ir);
    /// ```
    pub fn new(program: &prism_driver::Synced) -> Module {
        let ir = program.ir().clone();
        let code = code::compile(&ir);
        Module { ir, code }
    }

    /// [`Module::new`] without the interpreter's superinstructions (`code::LocalFma`,
    /// `code::Latch`) and
    /// without its one-lane paths for registers known to hold one value: every IR op runs as
    /// its own flat op over 32 lanes. For tests that compare the two, which must agree on
    /// every output bit and report.
    #[doc(hidden)]
    pub fn new_unfused(program: &prism_driver::Synced) -> Module {
        let ir = program.ir().clone();
        let code = code::compile_with(&ir, false);
        Module { ir, code }
    }

    /// How many superinstructions the interpreter formed for the program: tests check that
    /// the programs they compare fused and unfused really have some.
    #[doc(hidden)]
    pub fn superinstructions(&self) -> usize {
        self.code
            .funcs
            .iter()
            .flat_map(|f| &f.ops)
            .filter(|op| matches!(op, code::Op::LocalFma(_) | code::Op::Latch(_)))
            .count()
    }

    /// How many runs of register ops the interpreter runs without a dispatch each
    /// (`code::Scalars`): tests check that the programs they compare fused and unfused
    /// really have some.
    #[doc(hidden)]
    pub fn scalar_runs(&self) -> usize {
        self.code.funcs.iter().flat_map(|f| &f.ops).filter(|op| matches!(op, code::Op::Scalars(_))).count()
    }

    /// How many calls the interpreter runs inline (`code::Leaf`): each has an entry and a
    /// return op.
    pub fn inlined_calls(&self) -> usize {
        self.code.funcs.iter().flat_map(|f| &f.ops).filter(|op| matches!(op, code::Op::Moves { .. })).count() / 2
    }

    /// The kernels.
    pub fn kernels(&self) -> Vec<KernelInfo> {
        self.ir
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == FnKind::Kernel)
            .map(|(i, f)| kernel_info(&self.ir, prism_ir::FuncId(i as u32), f))
            .collect()
    }

    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Option<KernelInfo> {
        let (id, f) = self.ir.find(name)?;
        (f.kind == FnKind::Kernel).then(|| kernel_info(&self.ir, id, f))
    }

    /// Checks that a launch fits the kernel's signature and bound.
    pub fn validate(
        &self,
        kernel: &str,
        grid: impl Into<ir::Dim3>,
        block: impl Into<ir::Dim3>,
        args: &[Arg],
    ) -> Result<KernelInfo, LaunchError> {
        let (grid_dims, block_dims) = (grid.into(), block.into());
        let k = self.kernel(kernel).ok_or_else(|| {
            let names: Vec<String> = self.kernels().into_iter().map(|k| format!("`{}`", k.name)).collect();
            let known = if names.is_empty() {
                "the file has no kernels".to_string()
            } else {
                format!("kernels: {}", names.join(", "))
            };
            launch_error(format!("no kernel named `{kernel}` ({known})"))
        })?;
        let (grid, block) = ir::check_shape(&k.name, k.shape, grid_dims, block_dims).map_err(launch_error)?;
        if block > MAX_BLOCK {
            return Err(launch_error(format!("{block} threads per block is more than the hardware's {MAX_BLOCK}")));
        }
        if grid > MAX_GRID {
            return Err(launch_error(format!("{grid} blocks is more than CUDA's {MAX_GRID}")));
        }
        ir::check_launch_threads(grid, block).map_err(launch_error)?;
        ir::check_max_blocks(&k.name, k.max_blocks, grid).map_err(launch_error)?;
        let (id, _) = self.ir.find(&k.name).expect("a kernel of this module");
        if grid > MAX_COOPERATIVE_GRID && sim::has_grid_barrier(&self.code, id.0, block) {
            return Err(launch_error(format!(
                "`{}` has a grid-wide barrier, so all its blocks must be resident at once: at most {MAX_COOPERATIVE_GRID} blocks, not {grid}",
                k.name
            )));
        }
        if u64::from(block) % k.t_mult != 0 {
            return Err(launch_error(format!(
                "`{}` needs a multiple of {} threads per block (its `@requires` bound), not {block}",
                k.name, k.t_mult
            )));
        }
        if u64::from(grid) % k.b_mult != 0 {
            return Err(launch_error(format!(
                "`{}` needs a multiple of {} blocks (its `@requires` bound), not {grid}",
                k.name, k.b_mult
            )));
        }
        if let Some(lb) = k.launch_bounds
            && u64::from(block) > lb
        {
            return Err(launch_error(format!(
                "`{}` has `@launch_bounds({lb})`: {block} threads per block is too many",
                k.name
            )));
        }
        if let Some(shape) = k.exact_launch {
            ir::check_exact_launch(&k.name, shape, grid, block).map_err(launch_error)?;
        }
        if args.len() != k.params.len() {
            return Err(argument_error(format!(
                "`{}` takes {} arguments, but {} were given",
                k.name,
                k.params.len(),
                args.len()
            )));
        }
        for (p, a) in k.params.iter().zip(args) {
            match (&p.kind, a) {
                (ParamKind::Scalar(t), Arg::Scalar(s, _)) if t == s => {}
                (ParamKind::Pointer(t), Arg::Buffer(b)) if *t == b.elem => {}
                (ParamKind::Scalar(t), _) => {
                    return Err(argument_error(format!("argument `{}` must be a `{}` scalar", p.name, t.name())));
                }
                (ParamKind::Pointer(t), Arg::Buffer(b)) => {
                    return Err(argument_error(format!(
                        "argument `{}` is a pointer to `{}`, but the buffer holds `{}`",
                        p.name,
                        t.name(),
                        b.elem.name()
                    )));
                }
                (ParamKind::Pointer(t), _) => {
                    return Err(argument_error(format!("argument `{}` must be a buffer of `{}`", p.name, t.name())));
                }
                (ParamKind::TensorMap(m), Arg::Tensor { buffer, dims }) => {
                    if buffer.elem != m.elem {
                        return Err(argument_error(format!(
                            "argument `{}` is a tensor map of `{}`, but the array holds `{}`",
                            p.name,
                            m.elem.name(),
                            buffer.elem.name()
                        )));
                    }
                    m.check_dims(dims)
                        .map_err(|e| argument_error(format!("the array for tensor map `{}` {e}", p.name)))?;
                    if dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)) != Some(buffer.len() as u64) {
                        return Err(argument_error(format!(
                            "the array for tensor map `{}` has {} elements, not the {} its dimensions {dims:?} hold",
                            p.name,
                            buffer.len(),
                            dims.iter().map(|&d| u128::from(d)).product::<u128>()
                        )));
                    }
                }
                (ParamKind::TensorMap(m), _) => {
                    return Err(argument_error(format!(
                        "argument `{}` is a tensor map: pass an array of `{}` with its {} dimensions",
                        p.name,
                        m.elem.name(),
                        m.rank
                    )));
                }
                (ParamKind::Opaque, _) => {
                    return Err(argument_error(format!(
                        "argument `{}` is an untyped `CUTensorMap`, which the simulator cannot build; declare it `tensor_map(T[rows][cols])` so the launcher makes it from an array",
                        p.name
                    )));
                }
            }
        }
        // The dynamic shared array's items come from its count argument.
        if let Some(d) = k.dyn_smem
            && let Some(Arg::Scalar(_, bits)) = args.get(d.count)
        {
            d.bytes(i64::from(*bits as u32 as i32), ir::MAX_BLOCK_SMEM).map_err(launch_error)?;
        }
        Ok(k)
    }

    /// Runs `kernel` over `grid` blocks of `block` threads. Buffers in `args` are updated in
    /// place.
    pub fn launch(
        &self,
        kernel: &str,
        grid: impl Into<ir::Dim3>,
        block: impl Into<ir::Dim3>,
        args: &[Arg],
        cfg: Config,
    ) -> Result<Outcome, LaunchError> {
        self.launch_observed(kernel, grid, block, args, cfg, &Progress::new())
    }

    /// [`Module::launch`], counting finished blocks in `progress` for a display that
    /// another thread draws while the launch runs.
    pub fn launch_observed(
        &self,
        kernel: &str,
        grid: impl Into<ir::Dim3>,
        block: impl Into<ir::Dim3>,
        args: &[Arg],
        cfg: Config,
        progress: &Progress,
    ) -> Result<Outcome, LaunchError> {
        let (grid_dims, block_dims) = (grid.into(), block.into());
        let k = self.validate(kernel, grid_dims, block_dims, args)?;
        let (grid, block) = (grid_dims.count() as u32, block_dims.count() as u32);
        let (id, _) = self.ir.find(&k.name).expect("validated kernel");
        let mut buffers: Vec<&Buffer> = Vec::new();
        let mut params = Vec::new();
        let mut names = Vec::new();
        // A tensor map's register holds a pointer to its array, whose dimensions the TMA
        // copies find here by buffer index.
        let mut dims: Vec<&[u64]> = Vec::new();
        for (p, a) in k.params.iter().zip(args) {
            match a {
                Arg::Scalar(_, bits) => params.push(*bits),
                Arg::Buffer(b) | Arg::Tensor { buffer: b, .. } => {
                    params.push(Ptr::global(buffers.len(), 0).encode());
                    buffers.push(b);
                    names.push(p.name.clone());
                    dims.push(match a {
                        Arg::Tensor { dims, .. } => dims,
                        _ => &[],
                    });
                }
            }
        }
        if buffers.len() > (1 << 22) {
            return Err(argument_error("too many buffers"));
        }
        // A buffer no access site writes has no shadow (its reads are not recorded,
        // docs/simulator.md, Speed).
        let kf = &self.code.funcs[id.0 as usize];
        let elements: u64 =
            buffers.iter().enumerate().filter(|&(i, _)| !kf.read_only(i)).map(|(_, b)| b.len() as u64).sum();
        if cfg.checks.races && sim::shadow_bytes(elements) > sim::MAX_SHADOW_BYTES {
            return Err(argument_error(format!(
                "race checking these buffers ({elements} elements) would need {} GiB of shadow memory, more than {} GiB; run with `--checks uniformity` or `--checks none`, or smaller buffers",
                sim::shadow_bytes(elements) >> 30,
                sim::MAX_SHADOW_BYTES >> 30
            )));
        }
        let launch = sim::Launch {
            code: &self.code,
            kernel: id.0,
            grid,
            block,
            params: &params,
            buffers: &buffers,
            buffer_names: &names,
            tensor_dims: &dims,
            grid_dims: [grid_dims.x, grid_dims.y, grid_dims.z],
            block_dims: [block_dims.x, block_dims.y, block_dims.z],
            // Validated above.
            dyn_smem: k.dyn_smem.map(|d| {
                let n = i64::from(params[d.count] as u32 as i32);
                d.bytes(n, ir::MAX_BLOCK_SMEM).expect("validated count")
            }),
        };
        Ok(sim::run(launch, cfg, progress))
    }
}

fn kernel_info(p: &ir::Program, id: prism_ir::FuncId, f: &ir::Function) -> KernelInfo {
    let mut ptr_elems = f.mems.iter().filter(|m| m.kind == MemKind::Param).map(|m| m.elem);
    let params = f
        .params
        .iter()
        .map(|&r| {
            let info = &f.regs[r.index()];
            let kind = match info.ty {
                Type::Scalar(s) => ParamKind::Scalar(s),
                Type::Ptr => ParamKind::Pointer(ptr_elems.next().expect("a memory name per pointer parameter")),
                Type::Opaque => ParamKind::Opaque,
                Type::TensorMap(m) => {
                    // Its parameter memory comes in parameter order too.
                    ptr_elems.next();
                    ParamKind::TensorMap(m)
                }
            };
            Param { name: info.name.clone().unwrap_or_default(), kind }
        })
        .collect();
    KernelInfo {
        name: f.name.clone(),
        params,
        t_mult: f.facts.t_mult,
        b_mult: f.facts.b_mult,
        launch_bounds: f.launch_bounds,
        exact_launch: f.exact_launch(),
        max_blocks: f.max_blocks,
        smem: f.smem_size,
        dyn_smem: f.dyn_smem,
        shape: p.shape_rule(id),
        span: f.span,
    }
}

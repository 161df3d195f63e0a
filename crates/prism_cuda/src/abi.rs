//! What a launcher needs to know about a generated kernel: its C symbol, parameters, shared
//! memory and the launch facts its `@requires` bound promises.

use prism_types::ty::Scalar;

/// A kernel parameter as the generated code takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbiParam {
    /// A scalar, passed by value.
    Scalar {
        /// The source name.
        name: String,
        /// Its type.
        ty: Scalar,
    },
    /// A pointer to global memory.
    Pointer {
        /// The source name.
        name: String,
        /// Element type.
        elem: Scalar,
        /// Whether the kernel only reads through it.
        read_only: bool,
    },
    /// A TMA descriptor (`CUtensorMap`, 128 bytes), passed by value.
    TensorMap {
        /// The source name.
        name: String,
        /// What a typed map (`tensor_map(T[..][..])`) describes, from which the launcher
        /// builds it; `None` for an untyped `CUTensorMap` the caller builds.
        map: Option<prism_types::ty::TensorMapTy>,
    },
}

impl AbiParam {
    /// The source name.
    pub fn name(&self) -> &str {
        match self {
            AbiParam::Scalar { name, .. } | AbiParam::Pointer { name, .. } | AbiParam::TensorMap { name, .. } => name,
        }
    }
}

/// A kernel of a generated translation unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAbi {
    /// The Prism name.
    pub name: String,
    /// The C symbol (`extern "C"`, so the same as the name after sanitising).
    pub symbol: String,
    /// Parameters in order.
    pub params: Vec<AbiParam>,
    /// Shared memory per block, in bytes.
    pub smem_bytes: u64,
    /// True when the shared memory is dynamic (more than the 48 KiB a static allocation may
    /// have): the launch passes `smem_bytes` and raises the kernel's limit first.
    pub dynamic_smem: bool,
    /// The kernel's dynamic shared array, if it has one: the launch's shared bytes are then
    /// `dyn_array.offset + params[dyn_array.count] * size(elem)`, not `smem_bytes`.
    pub dyn_array: Option<prism_ir::ir::DynSmem>,
    /// True when the kernel has a grid-wide barrier: it must be launched cooperatively (all
    /// blocks co-resident).
    pub cooperative: bool,
    /// Threads per block must be a multiple of this.
    pub t_mult: u64,
    /// Blocks per grid must be a multiple of this.
    pub b_mult: u64,
    /// `@launch_bounds`, if any.
    pub launch_bounds: Option<u64>,
    /// True when the kernel uses features only `sm_90a` has (wgmma, setmaxnreg, TMA).
    pub needs_sm90a: bool,
    /// For a kernel entered below `grid[1]` that writes through a pointer parameter: the one
    /// launch it allows, as (blocks, threads per block if fixed); see
    /// `prism_ir::ir::Function::exact_launch`.
    pub exact_launch: Option<(u64, Option<u64>)>,
    /// The most blocks a launch may have (`prism_ir::ir::Function::max_blocks`).
    pub max_blocks: Option<u64>,
    /// What it allows of a launch's shape: more than one dimension only when it reads
    /// coordinates (`id(x)`, ...), and a fixed block shape if its bound gives one.
    pub shape: prism_ir::ir::ShapeRule,
}

/// The largest static shared-memory allocation a kernel may have.
pub const STATIC_SMEM_LIMIT: u64 = 48 * 1024;

impl KernelAbi {
    /// Checks a launch against the bound; the message says what is wrong.
    pub fn check_launch(
        &self,
        grid: impl Into<prism_ir::ir::Dim3>,
        block: impl Into<prism_ir::ir::Dim3>,
    ) -> Result<(), String> {
        let (grid, block) = prism_ir::ir::check_shape(&self.name, self.shape, grid.into(), block.into())?;
        prism_ir::ir::check_launch_threads(grid, block)?;
        prism_ir::ir::check_max_blocks(&self.name, self.max_blocks, grid)?;
        if u64::from(block) % self.t_mult != 0 {
            return Err(format!("`{}` needs a multiple of {} threads per block, not {block}", self.name, self.t_mult));
        }
        if u64::from(grid) % self.b_mult != 0 {
            return Err(format!("`{}` needs a multiple of {} blocks, not {grid}", self.name, self.b_mult));
        }
        if let Some(lb) = self.launch_bounds
            && u64::from(block) > lb
        {
            return Err(format!("`{}` has `@launch_bounds({lb})`: {block} threads per block is too many", self.name));
        }
        if let Some(shape) = self.exact_launch {
            prism_ir::ir::check_exact_launch(&self.name, shape, grid, block)?;
        }
        Ok(())
    }
}

//! The untyped syntax tree.
//!
//! It mirrors the source closely: legacy spellings are already rewritten to the canonical
//! constructs (with a warning), but names are unresolved, types unchecked and perspectives
//! unevaluated. Every node carries the span of the text it came from. The checker in
//! `prism_types` reads this tree and produces the separate typed IR; nothing writes types
//! back into it.

use prism_span::{FileId, Span};

/// An identifier with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// One parsed `.prism` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// The file it came from.
    pub file: FileId,
    /// Functions and constants in source order.
    pub items: Vec<Item>,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A kernel or device function.
    Function(Box<Function>),
    /// A file-level `NAME : constexpr(T) = value`.
    Const(ConstItem),
    /// `import a.b [as c]` or `from a.b import f [as g], ...`.
    Import(Import),
}

/// An import of another module (file).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The module's dotted path, `prism.std.reduce`.
    pub path: Vec<Ident>,
    /// What it binds.
    pub kind: ImportKind,
    /// The whole line.
    pub span: Span,
}

/// What an [`Import`] binds in the importing module.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportKind {
    /// `import a.b` (names as `a.b.f`) or `import a.b as c` (names as `c.f`).
    Module {
        /// `as c`, if given.
        alias: Option<Ident>,
    },
    /// `from a.b import f, g as h`: each name with its local name if renamed.
    Names(Vec<(Ident, Option<Ident>)>),
}

impl Import {
    /// The dotted path as text.
    pub fn path_text(&self) -> String {
        self.path.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".")
    }
}

/// A file-level compile-time constant.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstItem {
    /// Its name.
    pub name: Ident,
    /// Its declared type (must be `constexpr(...)`).
    pub ty: TypeExpr,
    /// Its value.
    pub value: Expr,
    /// The whole declaration.
    pub span: Span,
}

/// Whether a function is a kernel or a device function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// `@prism("global")`: launched from the host.
    Kernel,
    /// `@prism("device")`: called from other Prism functions.
    Device,
}

/// A function definition with its decorators.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Its name.
    pub name: Ident,
    /// `def f[T, U](...)`: its type parameters (empty for an ordinary function).
    pub type_params: Vec<Ident>,
    /// Kernel or device function.
    pub kind: FnKind,
    /// The `@prism(...)` decorator.
    pub kind_span: Span,
    /// The `@requires(...)` perspective bound, if written.
    pub requires: Option<Requires>,
    /// `@launch_bounds(max_threads)`, if written.
    pub launch_bounds: Option<Expr>,
    /// `@launch_bounds(max_threads, min_blocks)`: the second operand, if written.
    pub min_blocks: Option<Expr>,
    /// Parameters.
    pub params: Vec<Param>,
    /// `-> T @ P`, if written.
    pub ret: Option<RetType>,
    /// The body.
    pub body: Block,
    /// `def name(...)` up to the colon.
    pub header_span: Span,
    /// From the first decorator to the end of the body.
    pub span: Span,
}

/// `@requires(entry, ..., smem=N, block=[X, Y, Z])`.
#[derive(Clone, Debug, PartialEq)]
pub struct Requires {
    /// The perspectives listed.
    pub entries: Vec<Persp>,
    /// The shared-memory budget in bytes, if given.
    pub smem: Option<Expr>,
    /// The block's shape, `[X]`, `[X, Y]` or `[X, Y, Z]`, if given.
    pub block: Option<Expr>,
    /// The whole decorator.
    pub span: Span,
}

/// A level name as written. `warp` and `warpgroup` are sugar for 32 and 128 threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelName {
    /// `grid`
    Grid,
    /// `block`
    Block,
    /// `thread`
    Thread,
    /// `warp` (32 threads)
    Warp,
    /// `warpgroup` (128 threads)
    Warpgroup,
}

impl LevelName {
    /// The level for a word, if it names one.
    pub fn from_word(w: &str) -> Option<LevelName> {
        Some(match w {
            "grid" => LevelName::Grid,
            "block" => LevelName::Block,
            "thread" => LevelName::Thread,
            "warp" => LevelName::Warp,
            "warpgroup" => LevelName::Warpgroup,
            _ => return None,
        })
    }

    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LevelName::Grid => "grid",
            LevelName::Block => "block",
            LevelName::Thread => "thread",
            LevelName::Warp => "warp",
            LevelName::Warpgroup => "warpgroup",
        }
    }
}

/// A perspective as written: `level[size]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Persp {
    /// The level name.
    pub level: LevelName,
    /// The unit count (a constant expression).
    pub size: Box<Expr>,
    /// The whole `level[size]`.
    pub span: Span,
}

/// A function parameter `name : T @ P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: Ident,
    /// Its type.
    pub ty: TypeExpr,
    /// Its perspective; defaults to the function's entry perspective.
    pub persp: Option<Persp>,
    /// The whole parameter.
    pub span: Span,
}

/// A return type `-> T @ P`.
#[derive(Clone, Debug, PartialEq)]
pub struct RetType {
    /// The type.
    pub ty: TypeExpr,
    /// The perspective; defaults to the function's entry perspective.
    pub persp: Option<Persp>,
    /// From `->` to the end.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    /// Which constructor.
    pub kind: TypeKind,
    /// Where.
    pub span: Span,
}

/// Type constructors.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// A named type: `int`, `float`, `bf16`, `CUTensorMap`, ...
    Named(String),
    /// A local array `T[a][b]...`; dimensions outermost first.
    Array(Box<TypeExpr>, Vec<Expr>),
    /// `ptr(T)`, or `ptr(T, shared)`: a pointer into shared memory (a device function's
    /// parameter), with the span of `shared`.
    Ptr(Box<TypeExpr>, Option<Span>),
    /// `const(T)`
    Const(Box<TypeExpr>),
    /// `constexpr(T)`
    Constexpr(Box<TypeExpr>),
    /// `shared(T[n], align=k)`
    Shared {
        /// The array type inside.
        elem: Box<TypeExpr>,
        /// The alignment in bytes, if given.
        align: Option<Box<Expr>>,
    },
    /// `tensor_map(T[r][c], swizzle=s)`: a TMA tensor map whose box is `T[r][c]`.
    TensorMap {
        /// The box type.
        elem: Box<TypeExpr>,
        /// The swizzle span in bytes, if given.
        swizzle: Option<Box<Expr>>,
    },
}

/// An indented block of statements.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// From the first to the last statement.
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Statement forms.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `name : T @ P = init`
    Decl {
        /// The declared name.
        name: Ident,
        /// Its type.
        ty: TypeExpr,
        /// Its perspective (default: the code's).
        persp: Option<Persp>,
        /// Its initialiser.
        init: Option<Expr>,
    },
    /// `name = lambda ...`: binds an indexing function.
    LambdaDef {
        /// The name.
        name: Ident,
        /// The function.
        lambda: Lambda,
    },
    /// `target = value` or `target op= value`.
    Assign {
        /// The place assigned to.
        target: Expr,
        /// The operator of `op=`, if any.
        op: Option<BinOp>,
        /// The value.
        value: Expr,
    },
    /// A call or other expression evaluated for its effect.
    Expr(Expr),
    /// `if c: ... elif c: ... else: ...`
    If {
        /// `(condition, block)` for the `if` and each `elif`.
        branches: Vec<(Expr, Block)>,
        /// The `else` block.
        else_block: Option<Block>,
    },
    /// `for var in range(start, end, step):`
    For {
        /// The loop variable.
        var: Ident,
        /// The start (0 if omitted).
        start: Option<Expr>,
        /// The end (exclusive).
        end: Expr,
        /// The step (1 if omitted).
        step: Option<Expr>,
        /// `unroll=...`: how the CUDA backend asks nvcc to unroll the loop (`True`, `False`
        /// or a constant count); no effect on what the loop computes.
        unroll: Option<Expr>,
        /// The body.
        body: Block,
    },
    /// `while cond:`
    While {
        /// The condition.
        cond: Expr,
        /// The body.
        body: Block,
    },
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `return [value]`
    Return(Option<Expr>),
    /// `pass`
    Pass,
    /// `with group(P):`
    Group {
        /// The perspective grouped to.
        persp: Persp,
        /// The body.
        body: Block,
    },
    /// `with partition(src, p=P, f=fn) as name:`
    Partition {
        /// The pointer partitioned.
        src: Ident,
        /// The perspective each part belongs to.
        persp: Persp,
        /// How `name[i...]` maps to `src[...]`.
        index: IndexFn,
        /// The new name.
        name: Ident,
        /// The body.
        body: Block,
    },
    /// `with claim(src, p=P) as name:`
    Claim {
        /// The pointer claimed.
        src: Ident,
        /// The perspective of the unit that gets it.
        persp: Persp,
        /// The new name.
        name: Ident,
        /// The body.
        body: Block,
    },
    /// `for var in pipeline(count, stages=S):` — a software pipeline over `count` tiles
    /// whose first statement fills ring slots (`with fill(...)`) for later tiles.
    Pipeline {
        /// The loop variable (the tile index).
        var: Ident,
        /// The number of tiles.
        count: Expr,
        /// The number of ring slots (a constant).
        stages: Expr,
        /// The body: the fill first, then the code that uses the tile.
        body: Block,
    },
    /// `with fill(ring) as name:` — the slot of the current tile, as the destination of
    /// asynchronous copies (inside a pipeline).
    Fill {
        /// The ring (a shared array whose first dimension is the stage count).
        src: Ident,
        /// The new name.
        name: Ident,
        /// The body.
        body: Block,
    },
    /// `with stage(ring) as name:` — the slot of the current tile, read-only (inside a
    /// pipeline, after its fill); `with stage(ring, next=True) as name:` — the slot of the
    /// next tile, read after the pipeline's barrier (docs/language.md, "Pipelines").
    Stage {
        /// The ring.
        src: Ident,
        /// `next=True`: the next tile's slot.
        next: bool,
        /// `late=`: in a warp-specialised pipeline's consumer, `True` releases the slot
        /// one tile late, so the tile's wgmmas may stay in flight into the next tile. A
        /// compile-time constant (a literal or a `constexpr`, so `-D` can choose it), which
        /// the checker evaluates; `None` when not given.
        late: Option<Expr>,
        /// The new name.
        name: Ident,
        /// The body.
        body: Block,
    },
    /// `with async(src) as name:`
    Async {
        /// The memory asynchronous copies target.
        src: Ident,
        /// The new name.
        name: Ident,
        /// The body.
        body: Block,
    },
    /// `with unsafe:` or `with unsafe("CUDA text"):`
    Unsafe {
        /// CUDA text the CUDA backend emits instead of the body, if given.
        cuda: Option<StrLit>,
        /// Prism statements run without perspective checks.
        body: Block,
    },
    /// `unsafe("CUDA text")`
    UnsafeText(StrLit),
    /// `match split(level): case n: ...`
    Split {
        /// The level being split.
        level: LevelName,
        /// Where the level is written.
        level_span: Span,
        /// The cases in source order.
        cases: Vec<Case>,
    },
}

/// One `case n:` of a split.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The number of units this branch gets.
    pub count: Expr,
    /// The body.
    pub body: Block,
    /// The `case n:` header.
    pub span: Span,
}

/// How a partition maps the new name's indices to the old pointer.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexFn {
    /// `f=lambda i: ...`
    Lambda(Lambda),
    /// `f=name` where `name = lambda ...` is in scope.
    Name(Ident),
    /// Legacy `offset=e`, meaning `f=lambda i: e + i`.
    Offset(Expr),
}

/// `lambda a, b: body`
#[derive(Clone, Debug, PartialEq)]
pub struct Lambda {
    /// Parameter names.
    pub params: Vec<Ident>,
    /// The body expression.
    pub body: Box<Expr>,
    /// The whole lambda.
    pub span: Span,
}

/// A string literal.
#[derive(Clone, Debug, PartialEq)]
pub struct StrLit {
    /// The text, escapes processed.
    pub value: String,
    /// Where, including the quotes.
    pub span: Span,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// Expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int(u64),
    /// A floating-point literal.
    Float(f64),
    /// `true` / `false`
    Bool(bool),
    /// A string literal (only meaningful as a decorator argument).
    Str(String),
    /// A name.
    Name(String),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation, including comparisons and `and`/`or`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `then if cond else otherwise`
    Ternary {
        /// The condition.
        cond: Box<Expr>,
        /// Value when true.
        then: Box<Expr>,
        /// Value when false.
        otherwise: Box<Expr>,
    },
    /// `callee(args)`
    Call {
        /// What is called: a name or `intrinsic.name`.
        callee: Box<Expr>,
        /// Positional and keyword arguments.
        args: Vec<Arg>,
    },
    /// `base[i, j]`
    Index {
        /// What is indexed.
        base: Box<Expr>,
        /// One index per dimension.
        indices: Vec<Expr>,
    },
    /// `base.name`
    Attr {
        /// The object.
        base: Box<Expr>,
        /// The attribute.
        name: Ident,
    },
    /// `[a, b, ...]` (only as `out=[...]`)
    List(Vec<Expr>),
    /// `lambda ...:` (only as an indexing function)
    Lambda(Lambda),
    /// `...` or `..`: elided code.
    Elided,
    /// Placeholder after a parse error.
    Error,
}

/// A call argument, positional or `name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// The keyword, if given.
    pub name: Option<Ident>,
    /// The value.
    pub value: Expr,
    /// The whole argument.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `~x`
    BitNot,
    /// `not x`
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (C semantics on integers: truncates toward zero)
    Div,
    /// `%` (C semantics on integers: sign of the dividend)
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `and` (short-circuit)
    And,
    /// `or` (short-circuit)
    Or,
}

impl BinOp {
    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }

    /// True for `== != < <= > >=`.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }

    /// True for `and`, `or`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

impl UnOp {
    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::BitNot => "~",
            UnOp::Not => "not",
        }
    }
}

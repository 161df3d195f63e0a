//! The state of checking one function body, and the helpers every rule uses: scopes and
//! name lookup, hiding, claim ownership, the uniformity checks, and error reporting (which
//! drops perspective errors inside `with unsafe:`).

use super::{Globals, Sig};
use crate::error::{ClaimProblem, Culprit, TypeError};
use crate::perspective::{Facts, Persp};
use crate::tir::{self, ExprKind, FnId, VarId, VarKind};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
use prism_syntax::ast;
use std::collections::HashMap;
use std::rc::Rc;

/// What a local name is bound to.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    Var(VarId),
    /// `name = lambda ...`: checked where it is used as an indexing function, with the names
    /// it reads resolved where it was defined.
    Lambda(Rc<LambdaDef>),
    /// A name whose declaration had an error: uses are not reported again.
    Poisoned(Span),
}

#[derive(Debug)]
pub(crate) struct LambdaDef {
    pub lambda: ast::Lambda,
    /// Free names of the body and what they meant at the definition.
    pub captures: Vec<(String, Binding)>,
}

/// Scopes that `break`, `continue` and `return` may or may not cross.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Frame {
    Loop,
    /// A `group`; `narrowing` is false for `group(P)` at the current perspective P.
    Group {
        narrowing: bool,
        span: Span,
    },
    Split {
        span: Span,
    },
    Scope {
        construct: &'static str,
        span: Span,
    },
    Unsafe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimState {
    /// Every unit of the claim's code can still reach here.
    Unowned,
    /// Only threads of one unit of the claim's perspective reach here.
    Owned,
    /// A `group` replicated the code across units: ownership can no longer be established.
    Poisoned,
}

#[derive(Clone, Debug)]
pub(crate) struct ClaimFrame {
    pub view: VarId,
    pub persp: Persp,
    pub span: Span,
    pub state: ClaimState,
}

#[derive(Clone, Debug)]
pub(crate) struct HiddenEntry {
    pub var: VarId,
    pub at: Span,
    pub construct: &'static str,
    pub new_name: String,
}

/// A checked expression, plus whether it is an untyped literal (which adapts to the type
/// its context wants) and whether it came from an error (which suppresses follow-up errors).
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub e: tir::Expr,
    pub lit: Lit,
    pub err: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lit {
    No,
    Int,
    Float,
}

impl Val {
    pub fn new(e: tir::Expr) -> Val {
        Val { e, lit: Lit::No, err: false }
    }

    pub fn error(span: Span) -> Val {
        Val {
            e: tir::Expr {
                kind: ExprKind::Const(tir::ConstValue::Int(0)),
                ty: Ty::Scalar(Scalar::I32),
                persp: None,
                span,
            },
            lit: Lit::Int,
            err: true,
        }
    }

    pub fn scalar(&self) -> Option<Scalar> {
        self.e.ty.scalar()
    }
}

pub(crate) struct Checker<'a> {
    pub g: &'a Globals<'a>,
    /// The function whose body this is (an instance's id lies past the program's
    /// functions).
    pub fn_id: FnId,
    /// How many instances deep this body is (0 for an ordinary function).
    pub depth: u32,
    pub sig: &'a Sig,
    pub errors: &'a mut Vec<TypeError>,
    pub vars: Vec<tir::Var>,
    scopes: Vec<Vec<(String, Binding)>>,
    /// The current code perspective and where it began.
    pub code: Persp,
    pub code_origin: Option<Span>,
    pub facts: Facts,
    pub frames: Vec<Frame>,
    pub hidden: Vec<HiddenEntry>,
    pub claims: Vec<ClaimFrame>,
    /// Spans of every use of a claimed name, to find uses in several split branches.
    pub claim_uses: HashMap<VarId, Vec<Span>>,
    pub unsafe_depth: u32,
    /// Guards of the enclosing conditionally evaluated sub-expressions (`and`/`or` right
    /// sides, ternary branches).
    pub guards: Vec<Span>,
    /// Inside a partition's indexing function.
    pub in_index_fn: bool,
    /// Variables read by the indexing functions of the enclosing partitions, with the
    /// function's span and the view's name: they may not change while the view lives.
    pub frozen: Vec<(VarId, Span, String)>,
    pub smem_cur: u64,
    pub smem_need: u64,
    pub calls: Vec<(FnId, Span)>,
    /// What the body does with memory that may reach a wgmma's accumulators.
    pub acc: AccFacts,
    /// The position in the signature of each parameter's variable.
    pub param_index: HashMap<VarId, usize>,
    /// The enclosing pipeline loops, innermost last.
    pub pipes: Vec<super::pipeline::PipeCtx>,
    /// Reads, in the fill being checked, of mutable variables declared outside it.
    pub fill_reads: std::cell::RefCell<Vec<(VarId, Span)>>,
    /// The code perspective each `async` scope was opened at, by its view.
    pub async_code: HashMap<VarId, Persp>,
}

/// What a function body does with memory that may reach a wgmma's accumulators, for the
/// whole-program rule that they are thread-local arrays (`check::accumulators`).
#[derive(Debug, Default)]
pub(crate) struct AccFacts {
    /// The positions of the parameters a wgmma of the body takes as its accumulators.
    pub wgmma: Vec<usize>,
    /// The memory arguments of the body's calls of Prism functions.
    pub args: Vec<AccArg>,
}

/// One memory argument of a call, for [`AccFacts`].
#[derive(Debug)]
pub(crate) struct AccArg {
    pub callee: FnId,
    /// The parameter's position in the callee's signature.
    pub param: usize,
    /// What the argument's memory is rooted at.
    pub root: AccRoot,
    /// The argument's name, and where it is.
    pub name: String,
    pub span: Span,
}

/// What memory is rooted at: a thread-local array, a parameter of the calling function (by
/// position; not a kernel's, which is global memory), or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AccRoot {
    Local,
    Param(usize),
    Other,
}

/// Checks one function body.
pub(crate) fn check_body(
    g: &Globals,
    id: FnId,
    sig: &Sig,
    f: &ast::Function,
    depth: u32,
    errors: &mut Vec<TypeError>,
) -> (tir::Function, Vec<(FnId, Span)>, AccFacts) {
    let mut cx = Checker {
        g,
        fn_id: id,
        depth,
        sig,
        errors,
        vars: Vec::new(),
        scopes: vec![Vec::new()],
        code: sig.entry,
        code_origin: None,
        facts: sig.facts,
        frames: Vec::new(),
        hidden: Vec::new(),
        claims: Vec::new(),
        claim_uses: HashMap::new(),
        unsafe_depth: 0,
        guards: Vec::new(),
        in_index_fn: false,
        frozen: Vec::new(),
        async_code: HashMap::new(),
        smem_cur: 0,
        smem_need: 0,
        calls: Vec::new(),
        acc: AccFacts::default(),
        param_index: HashMap::new(),
        pipes: Vec::new(),
        fill_reads: Default::default(),
    };
    let mut params = Vec::new();
    let mut dyn_var = None;
    for (i, p) in sig.params.iter().enumerate() {
        // The dynamic shared array is block-shared memory, not an argument: its offset is
        // set once the body's static shared memory is known.
        if sig.dyn_shared.is_some_and(|d| d.param == i) {
            let kind = VarKind::Shared { dims: vec![tir::DYNAMIC_LEN], offset: 0, bytes: tir::DYNAMIC_LEN };
            let v = cx.new_var(&p.name, p.ty.clone(), p.persp, kind, p.span);
            cx.bind(&p.name, Binding::Var(v));
            dyn_var = Some(v);
            continue;
        }
        let kind = if p.is_const { VarKind::Const } else { VarKind::Param { shared: p.shared } };
        let v = cx.new_var(&p.name, p.ty.clone(), p.persp, kind, p.span);
        // Const scalar parameters are read-only, like const locals.
        cx.bind(&p.name, Binding::Var(v));
        cx.param_index.insert(v, i);
        params.push(v);
    }
    let body = cx.block_no_scope(&f.body);
    let dyn_shared = match (sig.dyn_shared, dyn_var) {
        (Some(d), Some(var)) => {
            let offset = super::call::align_up(cx.smem_need, tir::DYNAMIC_ALIGN);
            if let VarKind::Shared { offset: o, .. } = &mut cx.vars[var.0 as usize].kind {
                *o = offset;
            }
            // The count's index among the parameters that are arguments.
            let count = d.count - usize::from(d.param < d.count);
            Some(tir::DynShared { var, count, elem: d.elem, offset })
        }
        _ => None,
    };
    if let Some((_, _)) = sig.ret
        && !always_returns(&body)
    {
        cx.errors.push(TypeError::MissingReturn {
            function: sig.name.clone(),
            span: f.ret.as_ref().map(|r| r.span).unwrap_or(f.header_span),
        });
    }
    let func = tir::Function {
        id,
        name: sig.name.clone(),
        kind: sig.kind,
        header_span: sig.header_span,
        entry: sig.entry,
        bound: sig.bound.clone(),
        facts: sig.facts,
        smem_budget: sig.smem_budget,
        smem_need: cx.smem_need,
        launch_bounds: sig.launch_bounds,
        block_shape: sig.block_shape,
        dyn_shared,
        min_blocks: sig.min_blocks,
        params,
        ret: sig.ret,
        vars: cx.vars,
        body,
    };
    (func, cx.calls, cx.acc)
}

/// Whether every path through `b` ends in `return`.
fn always_returns(b: &tir::Block) -> bool {
    use tir::StmtKind as S;
    b.stmts.iter().any(|s| match &s.kind {
        S::Return(_) => true,
        S::If { then, otherwise, .. } => always_returns(then) && always_returns(otherwise),
        S::Group { body, .. } | S::Unsafe { body, .. } => always_returns(body),
        S::While { cond, body } => matches!(cond.kind, ExprKind::Const(tir::ConstValue::Bool(true))) && !breaks(body),
        _ => false,
    })
}

/// Whether a `break` in `b` leaves the loop `b` is the body of.
fn breaks(b: &tir::Block) -> bool {
    use tir::StmtKind as S;
    b.stmts.iter().any(|s| match &s.kind {
        S::Break => true,
        S::If { then, otherwise, .. } => breaks(then) || breaks(otherwise),
        S::Group { body, .. } | S::Unsafe { body, .. } => breaks(body),
        _ => false,
    })
}

impl Checker<'_> {
    pub fn new_var(&mut self, name: &str, ty: Ty, persp: Persp, kind: VarKind, span: Span) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(tir::Var { name: name.to_string(), ty, persp, kind, span });
        id
    }

    pub fn var(&self, v: VarId) -> &tir::Var {
        &self.vars[v.0 as usize]
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Binds `name` in the innermost scope (shadowing outer bindings).
    pub fn bind(&mut self, name: &str, b: Binding) {
        self.scopes.last_mut().expect("a scope").push((name.to_string(), b));
    }

    /// The binding of `name` in the innermost scope only.
    pub fn lookup_here(&self, name: &str) -> Option<&Binding> {
        self.scopes.last().and_then(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, b)| b))
    }

    pub fn lookup(&self, name: &str) -> Option<Binding> {
        for s in self.scopes.iter().rev() {
            if let Some((_, b)) = s.iter().rev().find(|(n, _)| n == name) {
                return Some(b.clone());
            }
        }
        None
    }

    /// All local names visible here (for "did you mean" hints).
    pub fn visible_names(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().flat_map(|s| s.iter().map(|(n, _)| n.as_str()))
    }

    /// Reports an error.
    pub fn error(&mut self, e: TypeError) {
        self.errors.push(e);
    }

    /// Reports a perspective error, unless inside `with unsafe:` where the perspective rules
    /// are not enforced.
    pub fn persp_error(&mut self, e: TypeError) {
        if self.unsafe_depth == 0 {
            self.errors.push(e);
        }
    }

    pub fn in_unsafe(&self) -> bool {
        self.unsafe_depth > 0
    }

    /// Checks that a variable is not hidden by an enclosing partition, claim or async, and
    /// records a use of a claimed name. Returns false (after reporting) when hidden.
    pub fn check_visible(&mut self, v: VarId, span: Span) -> bool {
        if let Some(h) = self.hidden.iter().rev().find(|h| h.var == v) {
            let e = TypeError::Hidden {
                name: self.var(v).name.clone(),
                span,
                hidden_at: h.at,
                construct: h.construct,
                new_name: h.new_name.clone(),
            };
            self.error(e);
            return false;
        }
        true
    }

    /// A use of memory name `v`: checks claim ownership and async restrictions.
    pub fn use_memory(&mut self, v: VarId, span: Span, as_async_dst: bool) {
        let var = self.var(v);
        if let VarKind::View { how: tir::ViewKind::Async | tir::ViewKind::Slot { fill: true, .. }, .. } = var.kind
            && !as_async_dst
        {
            let e = TypeError::AsyncMisuse { name: var.name.clone(), span, origin: var.span };
            self.error(e);
        }
        if let Some(c) = self.claims.iter().find(|c| c.view == v).cloned() {
            self.claim_uses.entry(v).or_default().push(span);
            if c.state != ClaimState::Owned {
                let problem = match c.state {
                    ClaimState::Poisoned => ClaimProblem::Grouped,
                    _ => ClaimProblem::EveryUnit { code: self.code },
                };
                let e = TypeError::ClaimNotOwned {
                    name: self.var(v).name.clone(),
                    persp: c.persp,
                    span,
                    claim: c.span,
                    problem,
                };
                self.persp_error(e);
            }
        }
    }

    /// The narrowest leaf of `e` that is not uniform over `target`.
    pub fn culprit(&self, e: &tir::Expr, target: Persp) -> Option<Culprit> {
        if self.facts.uniform_over(e.persp, target) {
            return None;
        }
        let here =
            || Culprit { what: "this value".into(), persp: e.persp.unwrap_or(Persp::GRID), span: e.span, origin: None };
        let sub = |xs: &[&tir::Expr]| xs.iter().find_map(|x| self.culprit(x, target));
        Some(match &e.kind {
            ExprKind::Var(v) => {
                let var = self.var(*v);
                Culprit { what: format!("`{}`", var.name), persp: var.persp, span: e.span, origin: Some(var.span) }
            }
            ExprKind::Elem { array, index } => match sub(&index.iter().collect::<Vec<_>>()) {
                Some(c) => c,
                None => {
                    let var = self.var(*array);
                    Culprit { what: format!("`{}`", var.name), persp: var.persp, span: e.span, origin: Some(var.span) }
                }
            },
            ExprKind::Load { index, mem } => match sub(&index.iter().collect::<Vec<_>>()) {
                Some(c) => c,
                None => Culprit {
                    what: format!("a read of `{}`", self.var(*mem).name),
                    persp: e.persp.unwrap_or(Persp::GRID),
                    span: e.span,
                    origin: None,
                },
            },
            ExprKind::RelId { target: t, .. } => {
                Culprit { what: "`id()`".into(), persp: *t, span: e.span, origin: None }
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => sub(&[a]).unwrap_or_else(here),
            ExprKind::Binary(_, a, b) => sub(&[a, b]).unwrap_or_else(here),
            ExprKind::Select { cond, then, otherwise } => sub(&[cond, then, otherwise]).unwrap_or_else(here),
            ExprKind::Call(c) => {
                let args: Vec<&tir::Expr> = c
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        tir::CallArg::Value(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                match (sub(&args), &c.callee) {
                    (Some(c), tir::Callee::Intrinsic(i)) if i.sig().code == crate::intrinsics::CodeReq::Pure => c,
                    _ => {
                        let name = match c.callee {
                            tir::Callee::Fn(f) => self.g.sig(f).name,
                            tir::Callee::Intrinsic(i) => i.sig().name.to_string(),
                        };
                        Culprit {
                            what: format!("the result of `{name}`"),
                            persp: e.persp.unwrap_or(Persp::GRID),
                            span: e.span,
                            origin: None,
                        }
                    }
                }
            }
            _ => here(),
        })
    }

    /// The code perspective changes to `p` for the duration of `f`.
    pub fn with_code<T>(&mut self, p: Persp, origin: Span, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = (self.code, self.code_origin);
        self.code = p;
        self.code_origin = Some(origin);
        let r = f(self);
        (self.code, self.code_origin) = saved;
        r
    }
}

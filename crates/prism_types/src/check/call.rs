//! Calls: user functions, intrinsics and `id()`.
//!
//! A call from code at C to a callee whose entry perspective is E needs E ⊑ C; when E is
//! strictly narrower the call is an implicit `group(E)` (every E-unit runs the callee). The
//! callee's bound must be guaranteed by the caller's (threads per block and blocks per grid
//! multiples). Scalar and const-pointer arguments may be broader than their parameters;
//! non-const pointers must match exactly (language.md §5).

use super::ctx::{AccArg, AccRoot, Checker, Lit, Val};
use super::expr::Resolved;
use crate::error::{
    ArgsProblem, Expected, Found, IndexFnProblem, IndexProblem, PointerProblem, TypeError, VectorProblem,
};
use crate::intrinsics::{self, CodeReq, IntrinsicId, ParamKind, RetSig, TyClass};
use crate::perspective::Persp;
use crate::tir::{self, CallArg, Callee, ConstValue, ExprKind, FnId, Place, RawIndex, VarId, VarKind};
use crate::ty::{Scalar, TensorMapTy, Ty};
use prism_span::Span;
use prism_syntax::ast;

/// Arguments matched to parameters by position and keyword.
pub(crate) struct Matched<'e> {
    pub by_param: Vec<Option<&'e ast::Arg>>,
    pub ok: bool,
}

/// The dimension `args` names when it is exactly one of `x`, `y`, `z` (the argument of
/// `id(x)`, `block_dim(y)`, `grid_dim(z)`): 0, 1 or 2.
fn dimension(args: &[ast::Arg]) -> Option<u8> {
    match args {
        [a] if a.name.is_none() => match &a.value.kind {
            ast::ExprKind::Name(n) => ["x", "y", "z"].iter().position(|d| n == d).map(|d| d as u8),
            _ => None,
        },
        _ => None,
    }
}

impl Checker<'_> {
    pub fn call(&mut self, callee: &ast::Expr, args: &[ast::Arg], span: Span, target: Option<Persp>) -> Val {
        let name = match &callee.kind {
            ast::ExprKind::Name(n) => n.clone(),
            ast::ExprKind::Attr { base, name } if matches!(&base.kind, ast::ExprKind::Name(b) if b == "intrinsic") => {
                format!("intrinsic.{}", name.name)
            }
            // A function of an imported module, `m.f(...)`; or of a module that is not
            // imported, which `resolve` reports as an unknown name.
            ast::ExprKind::Attr { .. } if super::dotted(callee).is_some() => super::dotted(callee).expect("checked"),
            // A generic function with its type arguments, `f[float](...)`.
            ast::ExprKind::Index { base, indices } if super::dotted(base).is_some() => {
                let name = super::dotted(base).expect("checked");
                return match self.resolve(&name) {
                    Resolved::Generic(t) => self.generic_call(t, &name, Some(indices), args, span, base.span),
                    Resolved::Poisoned => {
                        for a in args {
                            self.expr(&a.value, None);
                        }
                        Val::error(span)
                    }
                    Resolved::Unknown => {
                        self.unknown_name(&name, base.span);
                        for a in args {
                            self.expr(&a.value, None);
                        }
                        Val::error(span)
                    }
                    _ => {
                        self.error(TypeError::WrongArguments {
                            callee: name.clone(),
                            problem: ArgsProblem::TypeArguments { params: 0, given: indices.len() },
                            span: callee.span,
                            help: Some("only generic functions (`def f[T](...)`) take type arguments".into()),
                        });
                        for a in args {
                            self.expr(&a.value, None);
                        }
                        Val::error(span)
                    }
                };
            }
            _ => {
                self.error(TypeError::Unsupported {
                    what: "calling this expression".into(),
                    span: callee.span,
                    help: Some("call functions and intrinsics by name".into()),
                });
                return Val::error(span);
            }
        };
        if name == "id" {
            return self.rel_id(args, span, target);
        }
        // `block_dim(x)`, `grid_dim(y)`, ...: one extent of a multi-dimensional launch. Like
        // the linear sizes they are the same in every thread of the launch.
        if matches!(name.as_str(), "block_dim" | "grid_dim") && !args.is_empty() {
            let Some(d) = dimension(args) else {
                self.error(TypeError::WrongArguments {
                    callee: name,
                    problem: ArgsProblem::NoneOrDimension,
                    span,
                    help: None,
                });
                return Val::error(span);
            };
            let index = if name == "block_dim" { RawIndex::BlockExtent(d) } else { RawIndex::GridExtent(d) };
            return Val::new(tir::Expr {
                kind: ExprKind::Raw(index),
                ty: Ty::Scalar(Scalar::I32),
                persp: Some(Persp::GRID),
                span,
            });
        }
        match self.resolve(&name) {
            Resolved::Poisoned => {
                for a in args {
                    self.expr(&a.value, None);
                }
                Val::error(span)
            }
            Resolved::Var(_) | Resolved::Lambda | Resolved::Const(..) => {
                self.error(TypeError::Unsupported {
                    what: format!("calling `{name}`, which is not a function"),
                    span: callee.span,
                    help: None,
                });
                Val::error(span)
            }
            Resolved::Function => {
                let id = self.g.fns[&name];
                self.user_call(id, &name, args, span, callee.span)
            }
            Resolved::Generic(t) => self.generic_call(t, &name, None, args, span, callee.span),
            Resolved::Intrinsic => {
                let id = intrinsics::lookup(&name).expect("resolved intrinsic");
                self.intrinsic_call(id, args, span, callee.span, target)
            }
            Resolved::Unknown => {
                if name == "range" {
                    self.error(TypeError::Unsupported {
                        what: "`range` outside a `for` header".into(),
                        span: callee.span,
                        help: None,
                    });
                } else if name.starts_with("intrinsic.") {
                    self.error(TypeError::UnknownName {
                        name,
                        span: callee.span,
                        help: Some("known tensor-core intrinsics: `intrinsic.mma`, `intrinsic.mma_tf32`, `intrinsic.mma_tf32_rz`, `intrinsic.mma_bf16`, `intrinsic.mma_f16`".into()),
                    });
                } else {
                    self.unknown_name(&name, callee.span);
                }
                for a in args {
                    self.expr(&a.value, None);
                }
                Val::error(span)
            }
        }
    }

    fn rel_id(&mut self, args: &[ast::Arg], span: Span, target: Option<Persp>) -> Val {
        // `id(x)`, `id(y)`, `id(z)`: a coordinate of a multi-dimensional launch.
        let dim = dimension(args);
        if !args.is_empty() && dim.is_none() {
            self.error(TypeError::WrongArguments {
                callee: "id".into(),
                problem: ArgsProblem::NoneOrDimension,
                span,
                help: Some("its meaning comes from the perspective of the variable it is stored in".into()),
            });
        }
        if let Some(d) = dim {
            return self.coord_id(d, span, target);
        }
        let Some(target) = target else {
            self.persp_error(TypeError::IdWithoutTarget { span });
            return Val::error(span);
        };
        if !self.facts.strictly_narrower(target, self.code) {
            let e = TypeError::IdNotNarrower { target, code: self.code, span };
            self.persp_error(e);
        }
        Val::new(tir::Expr {
            kind: ExprKind::RelId { code: self.code, target },
            ty: Ty::Scalar(Scalar::I32),
            persp: Some(target),
            span,
        })
    }

    /// `id(x)` (`y`, `z`): the coordinate along one dimension of a multi-dimensional launch
    /// of the thread in its block (a `thread[1]` target in `block[1]` code) or of the block
    /// in the grid (a `block[1]` target in `grid[1]` code): exactly where `id()` is the
    /// linear index those coordinates make (`x + X (y + Y z)`).
    fn coord_id(&mut self, dim: u8, span: Span, target: Option<Persp>) -> Val {
        let Some(target) = target else {
            self.persp_error(TypeError::IdWithoutTarget { span });
            return Val::error(span);
        };
        let index = match (self.code, target) {
            (Persp::BLOCK, Persp::THREAD) => RawIndex::ThreadCoord(dim),
            (Persp::GRID, Persp::BLOCK) => RawIndex::BlockCoord(dim),
            _ => {
                self.error(TypeError::WrongArguments {
                    callee: "id".into(),
                    problem: ArgsProblem::IdCoordinate { code: self.code, target },
                    span,
                    help: Some(
                        "store it in a `thread[1]` variable in `block[1]` code, or a `block[1]` one in `grid[1]` code"
                            .into(),
                    ),
                });
                return Val::error(span);
            }
        };
        Val::new(tir::Expr { kind: ExprKind::Raw(index), ty: Ty::Scalar(Scalar::I32), persp: Some(target), span })
    }

    pub(crate) fn match_args<'e>(
        &mut self,
        callee: &str,
        names: &[&str],
        args: &'e [ast::Arg],
        span: Span,
    ) -> Matched<'e> {
        let mut by_param: Vec<Option<&ast::Arg>> = vec![None; names.len()];
        let mut ok = true;
        let mut positional = 0;
        for a in args {
            match &a.name {
                None => {
                    if positional >= names.len() {
                        self.error(TypeError::WrongArguments {
                            callee: callee.to_string(),
                            problem: ArgsProblem::TooMany { params: names.len() },
                            span: a.span,
                            help: None,
                        });
                        ok = false;
                        break;
                    }
                    // A keyword argument before it may have named this parameter already
                    // (`f(a=1, 2)`): the positional one must not silently replace it.
                    if by_param[positional].is_some() {
                        self.error(TypeError::WrongArguments {
                            callee: callee.to_string(),
                            problem: ArgsProblem::Twice { name: names[positional].to_string() },
                            span: a.span,
                            help: Some("write positional arguments before keyword ones".into()),
                        });
                        ok = false;
                    } else {
                        by_param[positional] = Some(a);
                    }
                    positional += 1;
                }
                Some(k) => match names.iter().position(|n| *n == k.name) {
                    Some(i) if by_param[i].is_none() => by_param[i] = Some(a),
                    Some(_) => {
                        self.error(TypeError::WrongArguments {
                            callee: callee.to_string(),
                            problem: ArgsProblem::Twice { name: k.name.clone() },
                            span: a.span,
                            help: None,
                        });
                        ok = false;
                    }
                    None => {
                        self.error(TypeError::WrongArguments {
                            callee: callee.to_string(),
                            problem: ArgsProblem::NoSuchParameter { name: k.name.clone() },
                            span: k.span,
                            help: Some(format!("its parameters are: {}", names.join(", "))),
                        });
                        ok = false;
                    }
                },
            }
        }
        if ok {
            let missing: Vec<&str> =
                names.iter().zip(&by_param).filter(|(_, a)| a.is_none()).map(|(n, _)| *n).collect();
            if !missing.is_empty() {
                self.error(TypeError::WrongArguments {
                    callee: callee.to_string(),
                    problem: ArgsProblem::Missing { names: missing.iter().map(|m| m.to_string()).collect() },
                    span,
                    help: None,
                });
                ok = false;
            }
        }
        Matched { by_param, ok }
    }

    /// Checks that code at the current perspective may run a callee entered at `required`
    /// with the bound facts `needs` (None for intrinsics), and returns the implicit group.
    fn call_perspective(
        &mut self,
        callee: &str,
        required: Persp,
        needs: Option<crate::perspective::Facts>,
        span: Span,
    ) -> Option<Persp> {
        let code = self.code;
        if let Some(&guard) = self.guards.last()
            && required != Persp::THREAD
        {
            self.persp_error(TypeError::CollectiveInCondition { callee: callee.to_string(), span, guard });
        }
        if !self.facts.narrower_eq(required, code) {
            let broadens = required.level > code.level || (required.level == code.level && required.n > code.n);
            let help = if broadens {
                Some(format!("call it from {required} code, outside the narrower `group` or `split`"))
            } else {
                (required.level == crate::perspective::Level::Thread && code.level != crate::perspective::Level::Thread)
                    .then(|| format!("add {required} to the function's `@requires` to guarantee threads per block is a multiple of {}", required.n))
            };
            self.persp_error(TypeError::CallPerspective {
                callee: callee.to_string(),
                required,
                code,
                span,
                broadens,
                help,
            });
            return None;
        }
        if let Some(needs) = needs {
            for (what, need, have, level) in [
                ("threads per block", needs.t_mult, self.facts.t_mult, "thread"),
                ("blocks per grid", needs.b_mult, self.facts.b_mult, "block"),
            ] {
                if have % need != 0 {
                    self.persp_error(TypeError::CallGuarantee {
                        callee: callee.to_string(),
                        what,
                        need,
                        span,
                        help: format!("add {level}[{need}] to this function's `@requires`"),
                    });
                    return None;
                }
            }
        }
        (required != code).then_some(required)
    }

    pub(crate) fn user_call(&mut self, id: FnId, name: &str, args: &[ast::Arg], span: Span, callee_span: Span) -> Val {
        let sig = self.g.sig(id);
        self.calls.push((id, callee_span));
        if sig.kind == ast::FnKind::Kernel {
            self.error(TypeError::KernelCall { name: name.to_string(), span: callee_span, def: sig.header_span });
            // Nothing else about the call means anything: kernels are launched, not called.
            for a in args {
                self.expr(&a.value, None);
            }
            return Val::error(span);
        }
        // An index function is evaluated again at every access through its view, in
        // whatever code the access is: a call there must be pure arithmetic too. A function
        // entered at `thread[1]` runs no collective, and with only values for parameters it
        // reaches no memory but its own locals, so its result depends on its arguments
        // alone (captures the checker keeps constant while the view lives). Anything else
        // could run a collective with part of a warp (an access in the right operand of
        // `and`), read memory others change, or write a local array the function captures:
        // the view would move while it lives (docs/soundness.md §4.2).
        if self.in_index_fn && !(sig.entry == Persp::THREAD && sig.params.iter().all(|p| matches!(p.ty, Ty::Scalar(_))))
        {
            self.error(TypeError::PartitionIndexFn {
                problem: IndexFnProblem::Calls { name: name.to_string() },
                span: callee_span,
                culprit: None,
            });
        }
        let implicit_group = self.call_perspective(name, sig.entry, Some(sig.facts), callee_span);
        let names: Vec<&str> = sig.params.iter().map(|p| p.name.as_str()).collect();
        let m = self.match_args(name, &names, args, span);
        let mut out = Vec::new();
        // Memory arguments with their parameter's name and whether the callee may write it.
        let mut mems: Vec<(VarId, &str, bool, Span)> = Vec::new();
        for (param, (p, a)) in sig.params.iter().zip(&m.by_param).enumerate() {
            let Some(a) = a else { continue };
            match &p.ty {
                Ty::Scalar(s) => {
                    let v = self.expr(&a.value, Some(p.persp));
                    let e = self.coerce(v, *s, &format!("argument for `{}`", p.name));
                    self.check_arg_uniform(&p.name, p.persp, &e);
                    out.push(CallArg::Value(e));
                }
                Ty::Ptr { elem, mutable } => {
                    if let Some(v) = self.mem_arg(&p.name, *elem, *mutable, p.persp, &a.value) {
                        // The callee addresses a `shared` parameter in the shared window
                        // (wgmma descriptors, ldmatrix, copies), which is undefined for any
                        // other memory: the argument must be a shared array, a view of one,
                        // or the caller's own `shared` parameter. In unsafe code too.
                        if p.shared && !self.in_shared(v) {
                            self.error(TypeError::PointerArgument {
                                param: p.name.clone(),
                                problem: PointerProblem::NotShared { name: self.var(v).name.clone() },
                                span: a.value.span,
                                help: Some(
                                    self.not_shared_help(v, "stage the data in a `shared(...)` array and pass that"),
                                ),
                            });
                        }
                        // For the rule that a wgmma's accumulators are thread-local
                        // arrays, through any chain of calls (`check::accumulators`).
                        let root = self.acc_root(v);
                        let name = self.var(v).name.clone();
                        self.acc.args.push(AccArg { callee: id, param, root, name, span: a.value.span });
                        mems.push((v, &p.name, *mutable, a.value.span));
                        out.push(CallArg::Mem(v));
                    }
                }
                Ty::Opaque(tn) => {
                    if let Some(v) = self.opaque_arg(&p.name, tn, p.persp, &a.value, false) {
                        out.push(CallArg::Opaque(v));
                    }
                }
                Ty::TensorMap(m) => {
                    if let Some(v) = self.map_arg(&p.name, *m, p.persp, &a.value) {
                        out.push(CallArg::Opaque(v));
                    }
                }
                // Parameters are scalars, pointers and handles only (`param_type`).
                Ty::Array { .. } | Ty::Void => {}
            }
        }
        self.check_no_alias(name, &mems);
        if !m.ok {
            return Val::error(span);
        }
        let offset = align_up(self.smem_cur, 16);
        self.smem_need = self.smem_need.max(offset.saturating_add(sig.smem_budget));
        let (ty, persp) = match sig.ret {
            Some((s, p)) => (Ty::Scalar(s), Some(p)),
            None => (Ty::Void, None),
        };
        Val {
            e: tir::Expr {
                kind: ExprKind::Call(Box::new(tir::Call {
                    callee: Callee::Fn(id),
                    args: out,
                    implicit_group,
                    smem_offset: offset,
                })),
                ty,
                persp,
                span,
            },
            lit: Lit::No,
            err: false,
        }
    }

    /// A callee is analysed on its own, assuming its pointer parameters name different
    /// memory: synchronisation inference orders accesses through one parameter against
    /// later accesses through the same parameter only. So two arguments of one call may
    /// name the same memory (the same root: a parameter, a shared or local array, or any
    /// view of one) only when the callee reads both; otherwise a write through one and an
    /// access through the other would be unordered.
    fn check_no_alias(&mut self, callee: &str, mems: &[(VarId, &str, bool, Span)]) {
        for (j, &(vb, pb, mut_b, span_b)) in mems.iter().enumerate() {
            for &(va, pa, mut_a, span_a) in &mems[..j] {
                if !(mut_a || mut_b) || self.mem_root(va) != self.mem_root(vb) {
                    continue;
                }
                let root = self.var(self.mem_root(va)).name.clone();
                let written = if mut_b { pb } else { pa };
                // Point at the later of the two in the source, whatever the parameter order.
                let ((p1, s1), (p2, s2)) = if span_a.start <= span_b.start {
                    ((pa, span_a), (pb, span_b))
                } else {
                    ((pb, span_b), (pa, span_a))
                };
                self.error(TypeError::ArgumentAlias {
                    callee: callee.to_string(),
                    root,
                    written: written.to_string(),
                    params: (p1.to_string(), p2.to_string()),
                    span: s2,
                    first: s1,
                });
                return;
            }
        }
    }

    /// What the memory `v` names is rooted at, for the rule that a wgmma's accumulators
    /// are thread-local arrays: a local array, a parameter of this function by position
    /// (not a kernel's, which is global memory), or anything else.
    fn acc_root(&self, v: VarId) -> AccRoot {
        let root = self.mem_root(v);
        match self.var(root).kind {
            VarKind::Local => AccRoot::Local,
            VarKind::Param { .. } if self.sig.kind != ast::FnKind::Kernel => {
                self.param_index.get(&root).map_or(AccRoot::Other, |&i| AccRoot::Param(i))
            }
            _ => AccRoot::Other,
        }
    }

    /// The root memory a name narrows: itself unless it is a view.
    fn mem_root(&self, v: VarId) -> VarId {
        match &self.var(v).kind {
            VarKind::View { parent, .. } => self.mem_root(*parent),
            _ => v,
        }
    }

    fn check_arg_uniform(&mut self, param: &str, persp: Persp, e: &tir::Expr) {
        if let Some(culprit) = self.culprit(e, persp) {
            self.persp_error(TypeError::ArgumentPerspective {
                param: param.to_string(),
                param_persp: persp,
                culprit,
                span: e.span,
            });
        }
    }

    /// Resolves a name passed for a memory parameter (a pointer, a map, a handle), checked
    /// as visible and as a use of that memory (`use_memory`).
    fn memory_name(&mut self, param: &str, value: &ast::Expr) -> Option<VarId> {
        let ast::ExprKind::Name(n) = &value.kind else {
            self.error(TypeError::PointerArgument {
                param: param.to_string(),
                problem: PointerProblem::NotAName,
                span: value.span,
                help: Some("pass the array itself; element addresses are not values in Prism".into()),
            });
            self.expr(value, None);
            return None;
        };
        match self.resolve(n) {
            Resolved::Var(v) => {
                if !self.check_visible(v, value.span) {
                    return None;
                }
                // Memory passed whole is used like an element access is: a claimed pointer
                // or map is owned by one unit, an async view is only a copy's destination.
                // Until 2026-12-03 only pointers were checked here, and a TMA store through a
                // claim in code every thread runs was accepted (docs/soundness.md §4.2).
                self.use_memory(v, value.span, false);
                Some(v)
            }
            Resolved::Unknown => {
                self.unknown_name(n, value.span);
                None
            }
            Resolved::Poisoned => None,
            _ => {
                self.error(TypeError::PointerArgument {
                    param: param.to_string(),
                    problem: PointerProblem::NotMemory { name: n.to_string(), ty: None },
                    span: value.span,
                    help: None,
                });
                None
            }
        }
    }

    /// Checks memory passed by reference to a parameter `ptr(elem)` (mutable) or
    /// `ptr(const(elem))` at perspective `persp`.
    pub fn mem_arg(
        &mut self,
        param: &str,
        elem: Scalar,
        mutable: bool,
        persp: Persp,
        value: &ast::Expr,
    ) -> Option<VarId> {
        let v = self.memory_name(param, value)?;
        let var = self.var(v).clone();
        let (arg_elem, arg_mut) = match &var.ty {
            Ty::Ptr { elem, mutable } => (*elem, *mutable),
            Ty::Array { elem, .. } => (*elem, !matches!(var.kind, VarKind::Const)),
            other => {
                self.error(TypeError::PointerArgument {
                    param: param.to_string(),
                    problem: PointerProblem::NotMemory { name: var.name.clone(), ty: Some(other.clone()) },
                    span: value.span,
                    help: None,
                });
                return None;
            }
        };
        if matches!(var.ty, Ty::Ptr { .. })
            && let Err(lambda) = self.offset_view(v)
        {
            self.error(TypeError::NotAPointer {
                param: param.to_string(),
                name: var.name.clone(),
                span: value.span,
                lambda,
            });
            return None;
        }
        if arg_elem != elem {
            self.error(TypeError::PointerArgument {
                param: param.to_string(),
                problem: PointerProblem::Element { name: var.name.clone(), holds: arg_elem, wants: elem },
                span: value.span,
                help: Some("memory is never converted; pass memory of the parameter's element type".into()),
            });
            return None;
        }
        if mutable && !arg_mut {
            self.error(TypeError::PointerArgument {
                param: param.to_string(),
                problem: PointerProblem::ReadOnly { name: var.name.clone() },
                span: value.span,
                help: Some("declare the parameter `ptr(const(T))` if the callee only reads".into()),
            });
            return None;
        }
        // A callee may write whatever it gets for a writable parameter, so passing a local
        // array there assigns it at the call: if an enclosing partition's index function
        // reads the array, the call would move the view's elements while it lives, and the
        // ownership inference relies on with them (`capture-assigned`; until 2026-11-29 only
        // direct assignments were refused, `bump(offs)` was not).
        if mutable {
            self.check_not_frozen(v, value.span);
            if var.persp != persp {
                self.persp_error(TypeError::PointerArgument {
                    param: param.to_string(),
                    problem: PointerProblem::WritableElsewhere {
                        name: var.name.clone(),
                        lives: var.persp,
                        param: persp,
                    },
                    span: value.span,
                    help: Some(if self.facts.strictly_narrower(persp, var.persp) {
                        format!("partition it first: `with partition({}, p={persp}, f=...) as part:`", var.name)
                    } else {
                        "pass memory at the parameter's perspective".to_string()
                    }),
                });
                // Unsafe code is trusted with perspectives: the argument stands (the
                // simulator checks what the callee does with it), so the call keeps every
                // operand.
                if !self.in_unsafe() {
                    return None;
                }
            } else if matches!(var.ty, Ty::Array { .. }) && persp != Persp::THREAD {
                // A local array at `P` broader than `thread[1]` holds the same values in
                // every thread of a `P`-unit, but each thread has its own copy. A callee
                // takes a writable `ptr(T) @ P` for memory its `P`-unit shares: it may
                // partition or claim it and let one thread, or each thread its element,
                // write, which changes that thread's copy only, and the caller's array is
                // no longer uniform (docs/language.md §7: a local array is a writable
                // pointer at `thread[1]`). A read-only parameter stays allowed: the callee
                // reads its own thread's copy, which holds what every other copy holds.
                // Until 2026-11-29 this was accepted.
                self.persp_error(TypeError::PointerArgument {
                    param: param.to_string(),
                    problem: PointerProblem::LocalBroader { name: var.name.clone(), param: persp },
                    span: value.span,
                    help: Some(format!(
                        "declare the parameter `ptr(const({}))` if the callee only reads, or give each thread its own array at thread[1] for a `ptr({}) @ thread[1]` parameter",
                        elem.name(),
                        elem.name()
                    )),
                });
                if !self.in_unsafe() {
                    return None;
                }
            }
        } else if !self.facts.narrower_eq(persp, var.persp) {
            self.persp_error(TypeError::PointerArgument {
                param: param.to_string(),
                problem: PointerProblem::Narrower { name: var.name.clone(), lives: var.persp, param: persp },
                span: value.span,
                help: None,
            });
            if !self.in_unsafe() {
                return None;
            }
        }
        Some(v)
    }

    /// Whether the elements after `v[.., e]` in memory are `v[.., e + 1]`, `v[.., e + 2]`...
    /// (what a vector access, a copy, `ldmatrix` or a wgmma tile moves): the view's own
    /// indexing function is offset in its last index (`lambda q, e: s(q) + e`), and every
    /// view it narrows, which gets one linear index, is an offset. Returns the offending
    /// function's span.
    fn contiguous_view(&self, v: VarId) -> Result<(), Span> {
        self.offsets(v, true)
    }

    /// Whether memory name `v` is a pointer: a root, or views whose partitions all have
    /// offset indexing functions (`lambda i: e + i`). Returns the offending function's span.
    fn offset_view(&self, v: VarId) -> Result<(), Span> {
        self.offsets(v, false)
    }

    /// The views from `v` to its root are offsets: in the last of several indices when
    /// `several` (for `v` and views that pass its indices on), of one index otherwise.
    fn offsets(&self, v: VarId, several: bool) -> Result<(), Span> {
        match &self.var(v).kind {
            VarKind::View { parent, how: tir::ViewKind::Partition(l) } => {
                let ok = if several { offset_in_last(l) } else { is_offset_lambda(l) };
                if ok { self.offsets(*parent, false) } else { Err(l.body.span) }
            }
            VarKind::View { parent, .. } => self.offsets(*parent, several),
            _ => Ok(()),
        }
    }

    /// A handle argument for a parameter of the opaque type `tn` (`CUTensorMap`). An
    /// intrinsic (`typed_ok`) also takes a typed tensor map, whose box it reads from the
    /// type; a function's untyped parameter does not, since the callee's copies would no
    /// longer know the box.
    fn opaque_arg(&mut self, param: &str, tn: &str, persp: Persp, value: &ast::Expr, typed_ok: bool) -> Option<VarId> {
        let v = self.memory_name(param, value)?;
        let var = self.var(v).clone();
        match &var.ty {
            Ty::Opaque(n) if n == tn => {
                self.handle_persp(param, persp, &var, value.span);
                Some(v)
            }
            Ty::TensorMap(_) if tn == "CUTensorMap" && typed_ok => {
                self.handle_persp(param, persp, &var, value.span);
                Some(v)
            }
            other => {
                self.error(TypeError::Mismatch {
                    expected: Expected::Opaque(tn.to_string()),
                    found: Found::Type(other.clone()),
                    span: value.span,
                    context: format!("argument for `{param}`"),
                    help: None,
                });
                None
            }
        }
    }

    /// A tensor-map argument for a parameter of exactly the map type `m`: the callee's
    /// copies announce the box's bytes, so another box would never complete.
    fn map_arg(&mut self, param: &str, m: TensorMapTy, persp: Persp, value: &ast::Expr) -> Option<VarId> {
        let v = self.memory_name(param, value)?;
        let var = self.var(v).clone();
        if var.ty != Ty::TensorMap(m) {
            self.error(TypeError::Mismatch {
                expected: Expected::Opaque(Ty::TensorMap(m).to_string()),
                found: Found::Type(var.ty.clone()),
                span: value.span,
                context: format!("argument for `{param}`"),
                help: None,
            });
            return None;
        }
        self.handle_persp(param, persp, &var, value.span);
        Some(v)
    }

    /// A handle passed for a parameter at `persp` must live at least as broadly.
    fn handle_persp(&mut self, param: &str, persp: Persp, var: &tir::Var, span: Span) {
        if !self.facts.narrower_eq(persp, var.persp) {
            self.persp_error(TypeError::PointerArgument {
                param: param.to_string(),
                problem: PointerProblem::Narrower { name: var.name.clone(), lives: var.persp, param: persp },
                span,
                help: None,
            });
        }
    }

    fn intrinsic_call(
        &mut self,
        id: IntrinsicId,
        args: &[ast::Arg],
        span: Span,
        callee_span: Span,
        outer: Option<Persp>,
    ) -> Val {
        let sig = id.sig();
        let name = sig.name;
        let implicit_group = match sig.code {
            CodeReq::At(p) => self.call_perspective(name, p, None, callee_span),
            CodeReq::Pure => None,
            CodeReq::UnsafeOnly => {
                if !self.in_unsafe() {
                    self.error(TypeError::RawIndex { name: name.to_string(), span: callee_span });
                }
                None
            }
        };
        if self.in_index_fn && sig.code != CodeReq::Pure {
            self.error(TypeError::PartitionIndexFn {
                problem: IndexFnProblem::Calls { name: name.to_string() },
                span: callee_span,
                culprit: None,
            });
        }
        let names: Vec<&str> = sig.params.iter().map(|p| p.name).collect();
        let m = self.match_args(name, &names, args, span);
        let mut t: Option<Scalar> = None;
        let mut out = Vec::new();
        let mut persp: Option<Persp> = None;
        let mut all_const = true;
        // Keep checking the other operands after one fails, to report all their problems.
        let mut failed = false;
        // Generic pure functions (`min`, `max`, `pow`, `fmod`, `fma`) take the usual
        // arithmetic conversions over all their operands, as `a + b` does, so that
        // `min(i, u)` and `min(u, i)` have one type: typed operands are checked first and
        // their common type binds `T` before any operand is converted.
        let mut pre: Vec<Option<Val>> = sig.params.iter().map(|_| None).collect();
        if sig.code == CodeReq::Pure && sig.params.iter().any(|p| p.ty == TyClass::T) {
            let mut common: Option<Scalar> = None;
            let mut clash = false;
            for (i, (p, a)) in sig.params.iter().zip(&m.by_param).enumerate() {
                let (ParamKind::Value, Some(a)) = (p.kind, a) else { continue };
                let v = self.expr(&a.value, outer);
                if let (Lit::No, false, Some(s)) = (v.lit, v.err, v.scalar()) {
                    match common {
                        None => common = Some(s),
                        Some(c) => match Scalar::common(c, s) {
                            Some(x) => common = Some(x),
                            None => clash = true,
                        },
                    }
                }
                pre[i] = Some(v);
            }
            if !clash {
                t = common;
            }
        }
        for (i, (p, a)) in sig.params.iter().zip(&m.by_param).enumerate() {
            let Some(a) = a else { continue };
            match p.kind {
                ParamKind::Value if matches!(p.ty, TyClass::Opaque(_)) => {
                    let TyClass::Opaque(tn) = p.ty else { unreachable!("matched above") };
                    match self.opaque_arg(p.name, tn, p.persp, &a.value, true) {
                        Some(v) => out.push(CallArg::Opaque(v)),
                        None => failed = true,
                    }
                }
                ParamKind::Value => {
                    // Pure intrinsics pass their caller's target through, so `min(id(), 3)`
                    // means what it would mean outside the call.
                    let target = if sig.code == CodeReq::Pure { outer } else { Some(p.persp) };
                    let v = match pre[i].take() {
                        Some(v) => v,
                        None => self.expr(&a.value, target),
                    };
                    let Some(e) = self.class_value(name, p.name, p.ty, &mut t, v) else {
                        failed = true;
                        continue;
                    };
                    if !matches!(e.kind, ExprKind::Const(_)) {
                        all_const = false;
                    }
                    if sig.code == CodeReq::Pure {
                        persp = self.facts.meet_opt(persp, e.persp);
                    } else {
                        self.check_arg_uniform(p.name, p.persp, &e);
                    }
                    out.push(CallArg::Value(e));
                }
                ParamKind::OutList(n) => {
                    let places = self.out_list(name, n, p.ty, &a.value);
                    out.extend(places.into_iter().map(CallArg::Out));
                }
                ParamKind::Ref { mutable } => {
                    match self.elem_ref(name, p.name, (mutable, false), p.ty, &mut t, &a.value) {
                        Some(arg) => out.push(arg),
                        None => failed = true,
                    }
                }
                ParamKind::LocalRef { mutable } => {
                    match self.local_ref(name, p.name, mutable, p.ty, &mut t, &a.value) {
                        Some(arg) => out.push(arg),
                        None => failed = true,
                    }
                }
                ParamKind::AsyncRef => match self.elem_ref(name, p.name, (true, true), p.ty, &mut t, &a.value) {
                    Some(arg) => out.push(arg),
                    None => failed = true,
                },
                ParamKind::Mem { mutable } => {
                    let TyClass::S(elem) = p.ty else { unreachable!("memory operands have a fixed type") };
                    if let Some(v) = self.mem_arg(p.name, elem, mutable, p.persp, &a.value) {
                        out.push(CallArg::Mem(v));
                    }
                }
            }
        }
        if !m.ok || failed {
            return Val::error(span);
        }
        if id.is_cp_async()
            && let Some(CallArg::Value(e)) = out.get(2)
            && !matches!(e.kind, ExprKind::Const(ConstValue::Int(4 | 8 | 16)))
        {
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::CopyBytes,
                span: e.span,
                help: None,
            });
        } else if id.is_cp_async()
            && let Some(CallArg::Value(e)) = out.get(2)
            && let ExprKind::Const(ConstValue::Int(bytes)) = e.kind
            && let Some(CallArg::ElemRef { mem, .. }) = out.first()
            && let Ty::Ptr { elem, .. } = self.var(*mem).ty
            && bytes % i128::from(elem.size().max(1)) != 0
        {
            // Part of an element (4 bytes into a `double`): the simulator cannot run it, and
            // the copies' overlap proofs count widths in whole elements (review R21 F1).
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::CopyPartElement { bytes, elem: elem.name().to_string(), size: elem.size() },
                span: e.span,
                help: Some(format!("copy {} bytes, or more", elem.size())),
            });
        }
        // Copies land in shared memory only (`cp.async`'s destination is `.shared`, a TMA
        // load's too), and a wgmma's tile descriptors address the shared window: the backend
        // turns these addresses into shared ones (`cvta.to.shared`), which is undefined for a
        // global or local address. The swizzled wgmma and `ldmatrix` are checked below.
        let shared_only: &[usize] = if id.is_cp_async() || id.is_tma() {
            &[0]
        } else if id.is_wgmma() && !name.ends_with("_sw") {
            &[1, 2]
        } else {
            &[]
        };
        for &k in shared_only {
            let mem = match out.get(k) {
                Some(CallArg::ElemRef { mem, .. } | CallArg::Mem(mem)) => *mem,
                _ => continue,
            };
            if !self.in_shared(mem) {
                self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::NotShared { name: self.var(mem).name.clone() },
                    span,
                    // A device function cannot issue `cp.async` at all (its source must be a
                    // kernel's pointer), so a `shared` parameter is no help there.
                    help: Some({
                        let help = if id.is_wgmma() {
                            "stage the tile in a `shared(...)` array first"
                        } else {
                            "copy into a `shared(...)` array (through an `async` view of it)"
                        };
                        if id.is_cp_async() { help.into() } else { self.not_shared_help(mem, help) }
                    }),
                });
            }
        }
        // `cp.async` reads global memory only (PTX's `.shared.global`): the backend passes the
        // source's address as a global one, which a shared or local address is not. A source
        // is global when it is rooted at a kernel's pointer parameter; a device function's
        // pointer parameter may be given a shared or local array (`pointer-argument`), so a
        // copy from one is refused, however the function is called.
        if id.is_cp_async()
            && let Some(CallArg::ElemRef { mem, .. }) = out.get(1)
        {
            let mut root = *mem;
            // A name only copies may write (`async`, `fill`) is `async-misuse` already.
            let mut copy_target = false;
            while let VarKind::View { parent, how } = &self.var(root).kind {
                copy_target |= matches!(how, tir::ViewKind::Async | tir::ViewKind::Slot { fill: true, .. });
                root = *parent;
            }
            let param = matches!(self.var(root).kind, VarKind::Param { .. });
            let global = param && self.sig.kind == ast::FnKind::Kernel;
            if !copy_target && !global {
                let in_device = param;
                let help = if in_device {
                    "issue the copy in the kernel, from its pointer parameter"
                } else {
                    "copy from the kernel's pointer parameter; shared memory is read with loads"
                };
                self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::CopySource { name: self.var(*mem).name.clone(), in_device },
                    span: m.by_param.get(1).copied().flatten().map_or(span, |a| a.value.span),
                    help: Some(help.into()),
                });
            }
        }
        if sig.family == intrinsics::Family::Vector {
            self.check_vector(name, &out, t, span);
        }
        // wgmma's N is an immediate the PTX ISA restricts, in unsafe code too: the simulator
        // sizes the fragment by it.
        // (A non-constant N is `not-constant` already.)
        if id.is_wgmma()
            && let Some(CallArg::Value(e)) = out.get(3)
            && let ExprKind::Const(ConstValue::Int(n)) = e.kind
            && !(n % 8 == 0 && (8..=256).contains(&n))
        {
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::WgmmaN { n },
                span: e.span,
                help: None,
            });
        }
        // A wgmma's accumulators are registers: the asm's `"+f"` operands, which the CUDA
        // reads back into the array right after the asynchronous issue, and the simulator's
        // thread-local array that `wgmma-pending` guards until the wait. Shared or global
        // memory given instead (unsafe code allowed it) would rest on where ptxas stores the
        // registers back, and the simulator did not track it (review R27): a thread-local
        // array only, in unsafe code too, or a device function's pointer parameter, which
        // every call must then give one (`check::accumulators`).
        if id.is_wgmma()
            && out.len() == sig.params.len()
            && let Some(CallArg::Mem(v)) = out.first()
        {
            match self.acc_root(*v) {
                AccRoot::Local => {}
                // A device function's parameter: every call must give it a thread-local
                // array (`check::accumulators`).
                AccRoot::Param(i) => self.acc.wgmma.push(i),
                // A kernel's pointer is global memory; the rest is shared memory.
                AccRoot::Other => self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::WgmmaAccumulator { name: self.var(*v).name.clone() },
                    span: m.by_param.first().copied().flatten().map_or(span, |a| a.value.span),
                    help: Some("declare the accumulators `acc : float[N / 2] @ thread[1]` and pass `acc`".into()),
                }),
            }
        }
        // A wgmma's operands must hold what one instruction touches, where their sizes are
        // known: N / 2 accumulators per thread, and whole tiles (the forms without `_sw`) of
        // 64 and N rows of 32 bytes (K = 16 bf16/f16 or 8 tf32 elements). A tile smaller than
        // that is a tile whose K is not the instruction's; the GPU would read past it.
        if let Some(elem) = id.wgmma_input()
            && let Some(CallArg::Value(e)) = out.get(3)
            && let ExprKind::Const(ConstValue::Int(n)) = e.kind
            && n % 8 == 0
            && (8..=256).contains(&n)
        {
            let k = 32 / elem.size();
            let whole = !name.ends_with("_sw");
            let wants = [
                (0, "accumulator fragment", n as u64 / 2, true),
                (1, "tile A", 64 * k, whole),
                (2, "tile B", n as u64 * k, whole),
            ];
            for (i, what, needs, applies) in wants {
                let Some(CallArg::Mem(v)) = out.get(i) else { continue };
                let var = self.var(*v);
                let has = match (&var.ty, &var.kind) {
                    (Ty::Array { dims, .. }, _) | (_, VarKind::Shared { dims, .. }) => dims.iter().product::<u64>(),
                    _ => continue,
                };
                if applies && has < needs {
                    self.error(TypeError::WrongArguments {
                        callee: name.into(),
                        problem: ArgsProblem::WgmmaSize { name: var.name.clone(), what, has, needs },
                        span: m.by_param.get(i).copied().flatten().map_or(span, |a| a.value.span),
                        help: None,
                    });
                }
            }
        }
        // A swizzled wgmma's operands: the swizzle span is an immediate of the descriptor,
        // the tiles are shared memory (descriptors address the shared window) reached through
        // offset views (the hardware reads the bytes after `a[i]`), and one address serves the
        // whole warpgroup, so the index must be the same in all its threads.
        if id.is_wgmma() && name.ends_with("_sw") {
            if let Some(CallArg::Value(e)) = out.get(4)
                && let ExprKind::Const(ConstValue::Int(span_bytes)) = e.kind
                && !matches!(span_bytes, 32 | 64 | 128)
            {
                self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::WgmmaSpan { span: span_bytes },
                    span: e.span,
                    help: None,
                });
            }
            for (k, param) in [(1, "a"), (2, "b")] {
                let Some(CallArg::ElemRef { mem, index }) = out.get(k) else { continue };
                if !self.in_shared(*mem) {
                    self.error(TypeError::WrongArguments {
                        callee: name.into(),
                        problem: ArgsProblem::NotShared { name: self.var(*mem).name.clone() },
                        span,
                        help: Some(self.not_shared_help(
                            *mem,
                            "load the tile into a `shared(...)` array first (a TMA copy writes the swizzled layout)",
                        )),
                    });
                } else if let Err(lambda) = self.contiguous_view(*mem) {
                    self.error(TypeError::VectorAccess {
                        callee: name.into(),
                        problem: VectorProblem::View { name: self.var(*mem).name.clone() },
                        span,
                        lambda: Some(lambda),
                    });
                }
                for i in index {
                    self.check_arg_uniform(param, Persp::WARPGROUP, i);
                }
            }
        }
        // TMA copies complete on the block's one mbarrier, which every thread of the block
        // waits on where the `async` scope ends (`prism_cuda`): a scope opened in narrower
        // code, which only some threads may reach, would never complete on the GPU.
        if id.is_tma()
            && let Some(CallArg::ElemRef { mem, .. }) = out.first()
            && let Some(&opened) = self.async_code.get(mem)
            && opened != Persp::BLOCK
        {
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::TmaScope { view: self.var(*mem).name.clone(), code: opened },
                span,
                help: Some(
                    "open the `async` scope in `block[1]` code and issue the copy from one thread of it, in a `split`"
                        .into(),
                ),
            });
        }
        // A TMA store writes the map's array: through a typed map the storing thread owns (a
        // `thread[1]` view: an identity partition or a claim, checked like any store), rooted at
        // a kernel's parameter (a caller takes a call to read its maps), from a shared box of
        // the map's element type reached through offset views.
        if id.is_tma_store()
            && let Some(CallArg::Opaque(map)) = out.first()
        {
            let mvar = self.var(*map).clone();
            let mut root = *map;
            while let VarKind::View { parent, .. } = self.var(root).kind {
                root = parent;
            }
            match mvar.ty {
                Ty::TensorMap(m) => {
                    if mvar.persp != Persp::THREAD || self.code != Persp::THREAD {
                        self.persp_error(TypeError::StorePerspective {
                            name: mvar.name.clone(),
                            ptr_persp: mvar.persp,
                            code: self.code,
                            span,
                            origin: mvar.span,
                        });
                    }
                    // A kernel's map is one array for every unit of its entry perspective,
                    // as a pointer is (`KernelPointerNarrower` in `check::signature`): a map
                    // declared narrower would let each narrower unit store through it with
                    // inference ordering the stores within that unit only. Maps only
                    // loaded stay allowed, like `ptr(const(T))`. Until 2026-11-29 this was
                    // accepted.
                    let rvar = self.var(root).clone();
                    if self.sig.kind == ast::FnKind::Kernel
                        && (root.0 as usize) < self.sig.params.len()
                        && self.sig.facts.strictly_narrower(rvar.persp, self.sig.entry)
                    {
                        self.error(TypeError::KernelPointerNarrower {
                            name: rvar.name.clone(),
                            persp: rvar.persp,
                            entry: self.sig.entry,
                            span,
                            map_decl: Some(rvar.span),
                        });
                    }
                    // Parameters are the function's first variables.
                    if self.sig.kind != ast::FnKind::Kernel && (root.0 as usize) < self.sig.params.len() {
                        self.error(TypeError::WrongArguments {
                            callee: name.into(),
                            problem: ArgsProblem::MapStoreParam { map: self.var(root).name.clone() },
                            span,
                            help: Some("store in the kernel, or return the tile to it in shared memory".into()),
                        });
                    }
                    let rank = if name == "tma_store_3d" { 3 } else { 2 };
                    if usize::from(m.rank) != rank {
                        self.error(TypeError::WrongArguments {
                            callee: name.into(),
                            problem: ArgsProblem::MapRank { map: mvar.name.clone(), rank: m.rank, copy: rank as u8 },
                            span,
                            help: Some(format!("store its box with `tma_store_{}d`", m.rank)),
                        });
                    }
                    if let Some(CallArg::ElemRef { mem, .. }) = out.last() {
                        let src = self.var(*mem).clone();
                        if let Ty::Ptr { elem, .. } = src.ty
                            && elem != m.elem
                        {
                            self.error(TypeError::WrongArguments {
                                callee: name.into(),
                                problem: ArgsProblem::MapElem { map: mvar.name.clone(), elem: m.elem, dst: elem },
                                span,
                                help: None,
                            });
                        }
                        if !self.in_shared(*mem) {
                            self.error(TypeError::WrongArguments {
                                callee: name.into(),
                                problem: ArgsProblem::NotShared { name: src.name.clone() },
                                span,
                                help: Some(self.not_shared_help(*mem, "stage the box in a `shared(...)` array first")),
                            });
                        } else if let Err(lambda) = self.contiguous_view(*mem) {
                            self.error(TypeError::VectorAccess {
                                callee: name.into(),
                                problem: VectorProblem::View { name: src.name.clone() },
                                span,
                                lambda: Some(lambda),
                            });
                        }
                    }
                }
                _ => self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::MapUntyped { map: mvar.name.clone() },
                    span,
                    help: None,
                }),
            }
        }
        // A typed map's box fixes the copy's rank and element type.
        if name.starts_with("tma_load")
            && let (Some(CallArg::ElemRef { mem, .. }), Some(CallArg::Opaque(map))) = (out.first(), out.get(1))
            && let Ty::TensorMap(m) = self.var(*map).ty
        {
            let rank = if name.starts_with("tma_load_3d") { 3 } else { 2 };
            let dst_elem = match self.var(*mem).ty {
                Ty::Ptr { elem, .. } => Some(elem),
                _ => None,
            };
            if usize::from(m.rank) != rank {
                self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::MapRank { map: self.var(*map).name.clone(), rank: m.rank, copy: rank as u8 },
                    span,
                    help: Some(format!("copy its box with `tma_load_{}d`", m.rank)),
                });
            } else if dst_elem.is_some_and(|e| e != m.elem) {
                self.error(TypeError::WrongArguments {
                    callee: name.into(),
                    problem: ArgsProblem::MapElem {
                        map: self.var(*map).name.clone(),
                        elem: m.elem,
                        dst: dst_elem.unwrap_or(m.elem),
                    },
                    span,
                    help: None,
                });
            }
        }
        // setmaxnreg's count is an immediate PTX restricts (ptxas rejects the others).
        if name.starts_with("setmaxnreg")
            && let Some(CallArg::Value(e)) = out.first()
            && let ExprKind::Const(ConstValue::Int(regs)) = e.kind
            && !(regs % 8 == 0 && (24..=256).contains(&regs))
        {
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::RegisterCount { regs },
                span: e.span,
                help: None,
            });
        }
        // `wgmma.wait_group N` takes an immediate N of 0 or more: ptxas rejects a negative one,
        // which the simulator would read as 0 and inference as completing every group
        // (review R49).
        if name == "wgmma_wait"
            && let Some(CallArg::Value(e)) = out.first()
            && let ExprKind::Const(ConstValue::Int(n)) = e.kind
            && n < 0
        {
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::PendingCount { n },
                span: e.span,
                help: None,
            });
        }
        // ldmatrix reads shared memory only (its addresses are in the shared window), and an
        // mbarrier is an object in shared memory.
        if (name.starts_with("ldmatrix") || sig.family == intrinsics::Family::Mbarrier)
            && let Some(CallArg::ElemRef { mem, .. }) = out.first()
            && !self.in_shared(*mem)
        {
            let help = if name.starts_with("ldmatrix") {
                "stage the tile in a `shared(...)` array first"
            } else {
                "declare the barriers as a `shared(uint64[n])` array"
            };
            self.error(TypeError::WrongArguments {
                callee: name.into(),
                problem: ArgsProblem::NotShared { name: self.var(*mem).name.clone() },
                span,
                help: Some(self.not_shared_help(*mem, help)),
            });
        }
        // Copies and `ldmatrix` move bytes that are consecutive in memory from each
        // element operand on, as a vector access does (`load_vec`): every view on the way
        // must keep consecutive elements consecutive, or the bytes after `m[i]` are not
        // `m[i + 1 ..]` and may be another unit's.
        if name.starts_with("ldmatrix") || sig.family == intrinsics::Family::AsyncCopy {
            for a in &out {
                if let CallArg::ElemRef { mem, .. } = a
                    && let Err(lambda) = self.contiguous_view(*mem)
                {
                    self.error(TypeError::VectorAccess {
                        callee: name.into(),
                        problem: VectorProblem::View { name: self.var(*mem).name.clone() },
                        span,
                        lambda: Some(lambda),
                    });
                    break;
                }
            }
        }
        let (ty, rpersp) = match sig.ret {
            RetSig::Void => (Ty::Void, None),
            RetSig::Value(cls, p) => {
                let s = match cls {
                    TyClass::S(s) => s,
                    _ => t.unwrap_or(Scalar::I32),
                };
                (Ty::Scalar(s), if sig.code == CodeReq::Pure { persp } else { p })
            }
            RetSig::UniformIf(cls, i) => {
                let s = match cls {
                    TyClass::S(s) => s,
                    _ => t.unwrap_or(Scalar::I32),
                };
                let CodeReq::At(own) = sig.code else { unreachable!("only collectives broadcast") };
                let uniform = match out.get(i) {
                    Some(CallArg::Value(e)) => self.facts.uniform_over(e.persp, own),
                    _ => false,
                };
                (Ty::Scalar(s), Some(if uniform { own } else { Persp::THREAD }))
            }
        };
        let call = tir::Expr {
            kind: ExprKind::Call(Box::new(tir::Call {
                callee: Callee::Intrinsic(id),
                args: out,
                implicit_group,
                smem_offset: 0,
            })),
            ty,
            persp: rpersp,
            span,
        };
        if sig.code == CodeReq::Pure
            && all_const
            && let Some(folded) = self.fold_pure(name, &call)
        {
            return Val::new(folded);
        }
        Val::new(call)
    }

    /// Checks a value operand against its class, binding the generic type `T`.
    fn class_value(
        &mut self,
        callee: &str,
        param: &str,
        cls: TyClass,
        t: &mut Option<Scalar>,
        v: Val,
    ) -> Option<tir::Expr> {
        let ctx = format!("argument `{param}` of `{callee}`");
        if v.err {
            return Some(v.e);
        }
        let Some(s) = v.scalar() else {
            self.error(TypeError::Mismatch {
                expected: Expected::Value,
                found: Found::Type(v.e.ty.clone()),
                span: v.e.span,
                context: ctx,
                help: None,
            });
            return None;
        };
        let fits = |c: TyClass, s: Scalar| match c {
            TyClass::Numeric => s.is_numeric(),
            TyClass::AnyScalar => true,
            TyClass::Int => s.is_int(),
            TyClass::Float => s.is_float(),
            TyClass::Atomic => {
                matches!(s, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::F32 | Scalar::F64)
            }
            TyClass::AtomicBits => matches!(s, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64),
            TyClass::Bits32 => s.is_numeric() && s.size() <= 4,
            _ => true,
        };
        match cls {
            TyClass::S(want) => Some(self.coerce(v, want, &ctx)),
            TyClass::T => {
                let want = t.unwrap_or(Scalar::I32);
                Some(self.coerce(v, want, &ctx))
            }
            TyClass::ConstInt => {
                let e = self.coerce(v, Scalar::I32, &ctx);
                if !matches!(e.kind, ExprKind::Const(_)) {
                    self.error(TypeError::NotConstant {
                        what: format!("argument `{param}` of `{callee}`"),
                        span: e.span,
                        culprit: None,
                    });
                }
                Some(e)
            }
            TyClass::Opaque(_) => unreachable!("opaque operands are passed by name"),
            c => {
                // An untyped literal takes the class's natural type.
                let s = match v.lit {
                    Lit::Int if c == TyClass::Float => Scalar::F32,
                    Lit::Int => Scalar::I32,
                    Lit::Float => Scalar::F32,
                    Lit::No => s,
                };
                // The operand's own type must fit the class; it then converts to the common
                // type of all operands when the caller computed one.
                let s = match *t {
                    Some(common) if fits(c, s) && fits(c, common) => common,
                    _ => s,
                };
                if !fits(c, s) {
                    self.error(TypeError::Mismatch {
                        expected: match c {
                            TyClass::Int => Expected::Integer,
                            TyClass::Float => Expected::Float,
                            TyClass::Atomic => Expected::AtomicType,
                            TyClass::AtomicBits => Expected::AtomicBitsType,
                            TyClass::Bits32 => Expected::Bits32,
                            _ => Expected::Number,
                        },
                        found: s.into(),
                        span: v.e.span,
                        context: ctx,
                        help: None,
                    });
                    return None;
                }
                *t = Some(s);
                Some(self.coerce(v, s, "argument"))
            }
        }
    }

    /// `out=[a, b, ...]`: places the intrinsic writes, at thread[1].
    fn out_list(&mut self, callee: &str, n: usize, cls: TyClass, value: &ast::Expr) -> Vec<Place> {
        let ast::ExprKind::List(items) = &value.kind else {
            self.error(TypeError::WrongArguments {
                callee: callee.into(),
                problem: ArgsProblem::OutList { n },
                span: value.span,
                help: Some("write `out=[C[0], C[1], C[2], C[3]]`".into()),
            });
            return Vec::new();
        };
        if items.len() != n {
            self.error(TypeError::WrongArguments {
                callee: callee.into(),
                problem: ArgsProblem::OutCount { n, given: items.len() },
                span: value.span,
                help: None,
            });
            return Vec::new();
        }
        let TyClass::S(want) = cls else { unreachable!("outputs have a fixed type") };
        let mut places = Vec::new();
        for it in items {
            let Some((place, pty, ppersp, origin)) = self.place(it, None) else { continue };
            if pty != want {
                self.error(TypeError::Mismatch {
                    expected: Expected::Place(want),
                    found: pty.into(),
                    span: it.span,
                    context: format!("output of `{callee}`"),
                    help: None,
                });
                continue;
            }
            if !self.check_write(&place, ppersp, origin, it.span) {
                continue;
            }
            self.result_place(callee, &place, (ppersp, origin), (value.span, it.span));
            places.push(place);
        }
        places
    }

    /// `p[i]` passed as an element address (atomics, asynchronous copies). `(mutable,
    /// async_dst)`: whether the intrinsic writes the element, and whether it is the
    /// destination of an asynchronous copy.
    fn elem_ref(
        &mut self,
        callee: &str,
        param: &str,
        (mutable, async_dst): (bool, bool),
        cls: TyClass,
        t: &mut Option<Scalar>,
        value: &ast::Expr,
    ) -> Option<CallArg> {
        let ast::ExprKind::Index { base, indices } = &value.kind else {
            self.error(TypeError::WrongArguments {
                callee: callee.into(),
                problem: ArgsProblem::NotAnElement { param: param.to_string() },
                span: value.span,
                help: None,
            });
            return None;
        };
        let (v, all) = self.index_base(base, indices, value.span)?;
        let var = self.var(v).clone();
        let Ty::Ptr { elem, mutable: is_mut } = var.ty else {
            self.error(TypeError::WrongArguments {
                callee: callee.into(),
                problem: ArgsProblem::LocalArray { name: var.name.clone(), param: param.to_string() },
                span: value.span,
                help: None,
            });
            return None;
        };
        let is_async = matches!(
            var.kind,
            VarKind::View { how: tir::ViewKind::Async | tir::ViewKind::Slot { fill: true, .. }, .. }
        );
        if async_dst && !is_async {
            self.error(TypeError::WrongArguments {
                callee: callee.into(),
                problem: ArgsProblem::NotAsync { name: var.name.clone() },
                span: base.span,
                help: Some(format!("wrap the copy in `with async({}) as dst:` and copy into `dst[...]`", var.name)),
            });
            return None;
        }
        self.use_memory(v, base.span, async_dst);
        if mutable && !is_mut {
            self.error(TypeError::StoreThroughConst { name: var.name.clone(), span: value.span, origin: var.span });
            return None;
        }
        // A vector store's destination is a store's: the store rule (`check_vector`) speaks
        // for it.
        let store = callee == "store_vec";
        if !async_dst && !store && !self.facts.narrower_eq(self.code, var.persp) {
            let e = TypeError::ReadUpMemory {
                name: var.name.clone(),
                persp: var.persp,
                code: self.code,
                span: base.span,
                origin: var.span,
            };
            self.persp_error(e);
        }
        let rank = self.rank(v);
        if all.len() != rank {
            self.error(TypeError::BadIndex {
                problem: IndexProblem::Rank { name: var.name.clone(), rank, given: all.len() },
                span: value.span,
                help: None,
            });
            return None;
        }
        let index = all.iter().map(|i| self.int_expr(i, Some(Persp::THREAD), "index")).collect();
        match cls {
            TyClass::T => {
                if let Some(want) = *t
                    && want != elem
                {
                    self.error(TypeError::Mismatch {
                        expected: Expected::Memory(want),
                        found: Found::Memory(elem),
                        span: value.span,
                        context: format!("`{param}` of `{callee}`"),
                        help: None,
                    });
                    return None;
                }
            }
            TyClass::S(want) if want != elem => {
                self.error(TypeError::Mismatch {
                    expected: Expected::Memory(want),
                    found: Found::Memory(elem),
                    span: value.span,
                    context: format!("`{param}` of `{callee}`"),
                    help: None,
                });
                return None;
            }
            TyClass::Atomic
                if !matches!(
                    elem,
                    Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::F32 | Scalar::F64
                ) =>
            {
                self.error(TypeError::Mismatch {
                    expected: Expected::AtomicMemory,
                    found: Found::Memory(elem),
                    span: value.span,
                    context: format!("`{param}` of `{callee}`"),
                    help: None,
                });
                return None;
            }
            TyClass::AtomicBits if !matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64) => {
                // The memory's type still fixes `T`, so that its value is not also refused.
                *t = Some(elem);
                self.error(TypeError::Mismatch {
                    expected: Expected::AtomicBitsMemory,
                    found: Found::Memory(elem),
                    span: value.span,
                    context: format!("`{param}` of `{callee}`"),
                    help: None,
                });
                return None;
            }
            _ => *t = Some(elem),
        }
        Some(CallArg::ElemRef { mem: v, index })
    }

    /// An intrinsic's per-thread result goes to `place` (at `persp`, declared at `origin`):
    /// it differs in every thread, so the place must be at `thread[1]`. `spans` are the
    /// operand's and the place's.
    fn result_place(&mut self, callee: &str, place: &Place, (persp, origin): (Persp, Span), spans: (Span, Span)) {
        if persp == Persp::THREAD {
            return;
        }
        let name = self.place_name(place);
        self.persp_error(TypeError::NarrowValue {
            target: format!("`{name}`"),
            target_persp: persp,
            culprit: crate::error::Culprit {
                what: format!("the result of `{callee}`"),
                persp: Persp::THREAD,
                span: spans.0,
                origin: None,
            },
            span: spans.1,
            origin: Some(origin),
        });
    }

    /// Whether memory name `v` is (a view of) a shared array.
    fn in_shared(&self, v: VarId) -> bool {
        match &self.var(v).kind {
            VarKind::Shared { .. } | VarKind::Param { shared: true } => true,
            VarKind::View { parent, .. } => self.in_shared(*parent),
            _ => false,
        }
    }

    /// The help for memory `v` that is not shared where an intrinsic needs it: `help`, or,
    /// when it is a device function's plain pointer parameter (or a view of one), how to
    /// make the parameter promise shared memory.
    fn not_shared_help(&self, v: VarId, help: &str) -> String {
        let root = self.mem_root(v);
        match self.var(root).kind {
            VarKind::Param { shared: false } if self.sig.kind != ast::FnKind::Kernel => format!(
                "declare `{}` as `ptr(T, shared)`, so that its callers must pass shared memory",
                self.var(root).name
            ),
            _ => help.to_string(),
        }
    }

    /// `a[j]` of a thread-local array given to a vector access: the first of the elements it
    /// writes (`mutable`, then at `thread[1]`, as every result that differs per thread) or
    /// reads.
    fn local_ref(
        &mut self,
        callee: &str,
        param: &str,
        mutable: bool,
        cls: TyClass,
        t: &mut Option<Scalar>,
        value: &ast::Expr,
    ) -> Option<CallArg> {
        let not_local = |this: &mut Self| {
            this.error(TypeError::WrongArguments {
                callee: callee.into(),
                problem: ArgsProblem::NotLocalElement { param: param.to_string() },
                span: value.span,
                help: Some(format!("declare a thread-local array, `v : float[4]`, and pass `v[0]` as `{param}`")),
            })
        };
        // Look at the base's type first, so that memory is refused with the vector
        // operand's own message rather than as an output into memory.
        let mut b = value;
        while let ast::ExprKind::Index { base, .. } = &b.kind {
            b = base;
        }
        let is_memory = match &b.kind {
            ast::ExprKind::Name(n) => {
                matches!(self.resolve(n), Resolved::Var(v) if !matches!(self.var(v).ty, Ty::Array { .. }))
            }
            _ => false,
        };
        if is_memory || !matches!(value.kind, ast::ExprKind::Index { .. }) {
            not_local(self);
            return None;
        }
        let (array, index, elem) = if mutable {
            let (place, elem, persp, origin) = self.place(value, None)?;
            if !self.check_write(&place, persp, origin, value.span) {
                return None;
            }
            self.result_place(callee, &place, (persp, origin), (value.span, value.span));
            let Place::Elem { array, index } = place else { unreachable!("an indexed place is an element") };
            (array, index, elem)
        } else {
            let v = self.expr(value, Some(Persp::THREAD));
            if v.err {
                return None;
            }
            let ExprKind::Elem { array, index } = v.e.kind else {
                not_local(self);
                return None;
            };
            let Ty::Scalar(elem) = v.e.ty else { unreachable!("an element has a scalar type") };
            (array, index, elem)
        };
        match (cls, *t) {
            (TyClass::T, Some(want)) if want != elem => {
                self.error(TypeError::Mismatch {
                    expected: Expected::Place(want),
                    found: elem.into(),
                    span: value.span,
                    context: format!("`{param}` of `{callee}`"),
                    help: Some("a vector access copies bits: the array and the memory hold one type".into()),
                });
                return None;
            }
            _ if !elem.is_numeric() => {
                self.error(TypeError::Mismatch {
                    expected: Expected::Number,
                    found: elem.into(),
                    span: value.span,
                    context: format!("`{param}` of `{callee}`"),
                    help: None,
                });
                return None;
            }
            _ => *t = Some(elem),
        }
        Some(CallArg::ElemRef { mem: array, index })
    }

    /// The rules of `load_vec`/`store_vec` beyond their operands' kinds: the width, the
    /// store rule for the memory side, the array's bounds, and views whose consecutive
    /// elements are consecutive in memory.
    fn check_vector(&mut self, callee: &str, out: &[CallArg], t: Option<Scalar>, span: Span) {
        let (Some(elem), [first, second, CallArg::Value(n)]) = (t, out) else { return };
        let (mem, local) = if callee == "store_vec" { (first, second) } else { (second, first) };
        let (CallArg::ElemRef { mem, .. }, CallArg::ElemRef { mem: array, index: lindex }) = (mem, local) else {
            return;
        };
        let ExprKind::Const(ConstValue::Int(width)) = n.kind else { return };
        let bytes = width.saturating_mul(i128::from(elem.size()));
        if width < 2 || !matches!(bytes, 4 | 8 | 16) {
            self.error(TypeError::VectorAccess {
                callee: callee.into(),
                problem: VectorProblem::Width { n: width, elem },
                span: n.span,
                lambda: None,
            });
            return;
        }
        let var = self.var(*mem).clone();
        if callee == "store_vec" && (var.persp != Persp::THREAD || self.code != Persp::THREAD) {
            self.persp_error(TypeError::StorePerspective {
                name: var.name.clone(),
                ptr_persp: var.persp,
                code: self.code,
                span,
                origin: var.span,
            });
        }
        if let Err(lambda) = self.contiguous_view(*mem) {
            self.error(TypeError::VectorAccess {
                callee: callee.into(),
                problem: VectorProblem::View { name: var.name.clone() },
                span,
                lambda: Some(lambda),
            });
        }
        // The array's elements `j .. j + n`, row-major, must lie inside it when `j` is known.
        let Ty::Array { dims, .. } = &self.var(*array).ty else { return };
        let consts: Option<Vec<i128>> = lindex
            .iter()
            .map(|e| match e.kind {
                ExprKind::Const(ConstValue::Int(x)) => Some(x),
                _ => None,
            })
            .collect();
        if let Some(consts) = consts {
            let flat = consts.iter().zip(dims).fold(0i128, |acc, (x, d)| acc * i128::from(*d) + x);
            let len: i128 = dims.iter().map(|d| i128::from(*d)).product();
            if flat + width > len {
                let name = self.var(*array).name.clone();
                self.error(TypeError::VectorAccess {
                    callee: callee.into(),
                    problem: VectorProblem::Bounds { name, first: flat, n: width, len },
                    span,
                    lambda: None,
                });
            }
        }
    }

    fn fold_pure(&mut self, name: &str, call: &tir::Expr) -> Option<tir::Expr> {
        let ExprKind::Call(c) = &call.kind else { return None };
        let vals: Vec<(ConstValue, Scalar)> = c
            .args
            .iter()
            .map(|a| match a {
                CallArg::Value(tir::Expr { kind: ExprKind::Const(v), ty: Ty::Scalar(s), .. }) => Some((*v, *s)),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let to = call.ty.scalar()?;
        if !crate::consts::foldable(to) || vals.iter().any(|(_, s)| !crate::consts::foldable(*s)) {
            return None;
        }
        let r = match (name, vals.as_slice()) {
            // The run-time rules (`consts::min_max`, `consts::abs`): PTX's float `min`/`max`,
            // and an `abs` that must fit its type (review R46).
            (op @ ("min" | "max"), [(a, s), (b, _)]) => crate::consts::min_max(op == "max", *a, *b, *s),
            ("abs", [(a, s)]) => crate::consts::abs(*a, *s),
            (_, [(v, from)]) if intrinsics::lookup(name).map(|i| i.sig().family) == Some(intrinsics::Family::Cast) => {
                crate::consts::cast(*v, *from, to)
            }
            _ => return None,
        };
        match r {
            Ok(r) => Some(super::expr::konst(r, to, call.span)),
            Err(reason) => {
                self.error(TypeError::ConstEval { reason, span: call.span });
                None
            }
        }
    }
}

/// Whether an indexing function is `lambda i: e + i` (or `i + e`, or `i`), with `e` not
/// mentioning `i`: then the view is its parent advanced by `e`.
fn is_offset_lambda(l: &tir::Lambda) -> bool {
    l.params.len() == 1 && offset_in_last(l)
}

/// Whether an indexing function is its last parameter plus terms that do not mention it
/// (`lambda q, e: s(q) + e`): then the view's element `[.., e + k]` is `k` elements after
/// `[.., e]` in the parent, for every `k`, which is what an access moving the bytes after
/// one element (a vector access, a copy) needs.
fn offset_in_last(l: &tir::Lambda) -> bool {
    let Some(&p) = l.params.last() else { return false };
    fn is_param(e: &tir::Expr, p: VarId) -> bool {
        match &e.kind {
            ExprKind::Var(v) => *v == p,
            ExprKind::Cast(a) => is_param(a, p),
            _ => false,
        }
    }
    fn mentions(e: &tir::Expr, p: VarId) -> bool {
        match &e.kind {
            ExprKind::Var(v) => *v == p,
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => mentions(a, p),
            ExprKind::Binary(_, a, b) => mentions(a, p) || mentions(b, p),
            ExprKind::Select { cond, then, otherwise } => {
                mentions(cond, p) || mentions(then, p) || mentions(otherwise, p)
            }
            ExprKind::Elem { index, .. } | ExprKind::Load { index, .. } => index.iter().any(|i| mentions(i, p)),
            ExprKind::Call(c) => c.args.iter().any(|a| matches!(a, CallArg::Value(x) if mentions(x, p))),
            _ => false,
        }
    }
    match &l.body.kind {
        _ if is_param(&l.body, p) => true,
        ExprKind::Binary(ast::BinOp::Add, a, b) => {
            (is_param(a, p) && !mentions(b, p)) || (is_param(b, p) && !mentions(a, p))
        }
        _ => false,
    }
}

/// Rounds `x` up to a multiple of `a` (a power of two or any positive number).
pub(crate) fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a).saturating_mul(a)
}

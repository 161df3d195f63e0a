//! Generic functions (`docs/language.md` §2, "Generic functions").
//!
//! `def f[T](x : T @ thread[1], n : constexpr(int))` is a template: type parameters stand
//! for scalar types and `constexpr` parameters for compile-time values. Every distinct
//! argument set a call gives (types inferred from the arguments or written `f[float](...)`,
//! values from the constant arguments) makes one instance, checked on its own as an
//! ordinary function whose types and values are substituted: types and sizes decide
//! nearly every rule (which operations a type has, whether a perspective divides another,
//! whether shared memory fits a budget), so checking the template once could accept
//! nothing a per-instance check would not also have to redo. An instance's errors carry
//! the call that made it as a second label. Instances are named by their arguments,
//! `f[float, 256]`, and are functions like any other from then on.

use super::ctx::{Checker, Val};
use super::{Globals, Scope, Sig, scalar_of};
use crate::error::{ArgsProblem, TypeError};
use crate::tir::{self, ConstValue, FnId};
use crate::ty::{Scalar, Ty};
use prism_span::Span;
use prism_syntax::ast;
use std::cell::RefCell;
use std::collections::HashMap;

/// How deep instances may make instances (`f[N]` calling `f[N - 1]` ...): past this the
/// instantiation is taken for unbounded recursion.
const MAX_DEPTH: u32 = 64;
/// The most instances one program may make.
const MAX_INSTANCES: usize = 10_000;

/// A generic function as written, in its module.
pub(crate) struct Template<'a> {
    /// The module it is defined in (its scope checks every instance).
    pub module: usize,
    /// Its name, qualified by its module's path.
    pub name: String,
    pub ast: &'a ast::Function,
}

/// An instance waiting to be checked.
pub(crate) struct Work {
    pub module: usize,
    /// The functions its function parameters stand for, bound in its scope.
    pub funcs: Vec<(String, FnId)>,
    /// The template with the types and values substituted.
    pub ast: ast::Function,
    /// The call that made it.
    pub call: Span,
    /// How many instances deep it was made.
    pub depth: u32,
    /// The instance (by its index among the instances) whose body made this one, if it was
    /// made in an instance's body: errors name the calls back to non-generic code.
    pub parent: Option<usize>,
}

/// The templates, every module's scope, and the instances made so far: shared by the
/// checkers of all bodies, which add instances as they meet calls.
pub(crate) struct Shared<'a> {
    templates: &'a [Template<'a>],
    scopes: &'a [Scope],
    /// The id of the first instance: ordinary functions come first.
    base: u32,
    inner: RefCell<Inner>,
}

#[derive(Default)]
struct Inner {
    by_key: HashMap<String, FnId>,
    sigs: Vec<Sig>,
    work: Vec<Option<Work>>,
}

impl<'a> Shared<'a> {
    pub fn new(templates: &'a [Template<'a>], scopes: &'a [Scope], base: u32) -> Shared<'a> {
        Shared { templates, scopes, base, inner: RefCell::default() }
    }

    /// The signature of instance `id`.
    pub fn instance_sig(&self, id: FnId) -> Sig {
        self.inner.borrow().sigs[(id.0 - self.base) as usize].clone()
    }

    /// The `i`th instance's work, once; `None` when there are no more.
    pub fn take(&self, i: usize) -> Option<Work> {
        let mut inner = self.inner.borrow_mut();
        inner.work.get_mut(i).map(|w| w.take().expect("each instance is taken once"))
    }

    /// The instances' signatures, in id order.
    pub fn into_sigs(self) -> Vec<Sig> {
        self.inner.into_inner().sigs
    }
}

/// Whether `f` is generic: it has type parameters or `constexpr` parameters.
pub(crate) fn is_generic(f: &ast::Function) -> bool {
    !f.type_params.is_empty() || f.params.iter().any(|p| matches!(p.ty.kind, ast::TypeKind::Constexpr(_)))
}

/// What can be checked of a template without instantiating it: a kernel cannot be generic
/// (it is launched, never called, so nothing would instantiate it), and type parameters
/// are new names.
pub(crate) fn check_template(f: &ast::Function, errors: &mut Vec<TypeError>) {
    if f.kind == ast::FnKind::Kernel {
        errors.push(TypeError::Unsupported {
            what: "a generic kernel".into(),
            span: f.header_span,
            help: Some(
                "kernels are launched, not called, so nothing instantiates them: make the generic part a device function and call it from a kernel per type".into(),
            ),
        });
    }
    for (i, t) in f.type_params.iter().enumerate() {
        if let Some(first) = f.type_params[..i].iter().find(|u| u.name == t.name) {
            errors.push(TypeError::Duplicate { name: t.name.clone(), span: t.span, first: first.span });
        } else if Scalar::from_name(&t.name).is_some() || crate::intrinsics::lookup(&t.name).is_some() {
            errors.push(TypeError::ReservedName { name: t.name.clone(), span: t.span });
        }
    }
    for p in &f.params {
        if let ast::TypeKind::Constexpr(inner) = &p.ty.kind
            && scalar_of(inner).is_none()
        {
            errors.push(TypeError::Unsupported {
                what: format!("a `constexpr` parameter of type `{}`", super::type_text(inner)),
                span: inner.span,
                help: Some("constant parameters have a scalar type written out: `n : constexpr(int)`".into()),
            });
        }
    }
}

/// A value as it appears in an instance's name.
fn value_text(v: ConstValue) -> String {
    match v {
        ConstValue::Int(n) => n.to_string(),
        ConstValue::Float(x) => format!("{x:?}"),
        ConstValue::Bool(b) => b.to_string(),
    }
}

/// The literal expression for `v`, to stand for a constant parameter in an instance.
fn literal(v: ConstValue, span: Span) -> ast::Expr {
    let kind = match v {
        ConstValue::Int(n) if n < 0 => ast::ExprKind::Unary(
            ast::UnOp::Neg,
            Box::new(ast::Expr { kind: ast::ExprKind::Int(n.unsigned_abs() as u64), span }),
        ),
        ConstValue::Int(n) => ast::ExprKind::Int(n as u64),
        ConstValue::Float(x) if x < 0.0 => {
            ast::ExprKind::Unary(ast::UnOp::Neg, Box::new(ast::Expr { kind: ast::ExprKind::Float(-x), span }))
        }
        ConstValue::Float(x) => ast::ExprKind::Float(x),
        ConstValue::Bool(b) => ast::ExprKind::Bool(b),
    };
    ast::Expr { kind, span }
}

/// The template `f` with its type parameters replaced by `types` and its constant
/// parameters turned into `constexpr` declarations at the top of the body.
fn instance_ast(f: &ast::Function, types: &HashMap<String, Scalar>, consts: &[(usize, ConstValue)]) -> ast::Function {
    let mut g = f.clone();
    g.type_params.clear();
    let mut decls = Vec::new();
    for &(i, v) in consts {
        let p = &f.params[i];
        decls.push(ast::Stmt {
            kind: ast::StmtKind::Decl {
                name: p.name.clone(),
                ty: p.ty.clone(),
                persp: None,
                init: Some(literal(v, p.span)),
            },
            span: p.span,
        });
    }
    let keep: Vec<bool> = (0..f.params.len()).map(|i| !consts.iter().any(|&(j, _)| j == i)).collect();
    g.params = f.params.iter().zip(&keep).filter(|(_, k)| **k).map(|(p, _)| p.clone()).collect();
    decls.append(&mut g.body.stmts);
    g.body.stmts = decls;
    let names: HashMap<String, String> = types.iter().map(|(k, v)| (k.clone(), v.name().to_string())).collect();
    Subst(&names).function(&mut g);
    g
}

/// Renames type parameters wherever a type or a cast can be written.
struct Subst<'a>(&'a HashMap<String, String>);

impl Subst<'_> {
    fn function(&self, f: &mut ast::Function) {
        for p in &mut f.params {
            self.ty(&mut p.ty);
            if let Some(pp) = &mut p.persp {
                self.expr(&mut pp.size);
            }
        }
        if let Some(r) = &mut f.ret {
            self.ty(&mut r.ty);
            if let Some(pp) = &mut r.persp {
                self.expr(&mut pp.size);
            }
        }
        if let Some(r) = &mut f.requires {
            for e in &mut r.entries {
                self.expr(&mut e.size);
            }
            for e in [&mut r.smem, &mut r.block].into_iter().flatten() {
                self.expr(e);
            }
        }
        self.block(&mut f.body);
    }

    fn ty(&self, t: &mut ast::TypeExpr) {
        use ast::TypeKind as K;
        match &mut t.kind {
            K::Named(n) => {
                if let Some(to) = self.0.get(n) {
                    *n = to.clone();
                }
            }
            K::Array(e, dims) => {
                self.ty(e);
                dims.iter_mut().for_each(|d| self.expr(d));
            }
            K::Ptr(e, _) | K::Const(e) | K::Constexpr(e) => self.ty(e),
            K::Shared { elem, align } => {
                self.ty(elem);
                if let Some(a) = align {
                    self.expr(a);
                }
            }
            K::TensorMap { elem, swizzle } => {
                self.ty(elem);
                if let Some(s) = swizzle {
                    self.expr(s);
                }
            }
        }
    }

    fn block(&self, b: &mut ast::Block) {
        b.stmts.iter_mut().for_each(|s| self.stmt(s));
    }

    fn persp(&self, p: &mut ast::Persp) {
        self.expr(&mut p.size);
    }

    fn stmt(&self, s: &mut ast::Stmt) {
        use ast::StmtKind as S;
        match &mut s.kind {
            S::Decl { ty, persp, init, .. } => {
                self.ty(ty);
                if let Some(p) = persp {
                    self.persp(p);
                }
                if let Some(e) = init {
                    self.expr(e);
                }
            }
            S::LambdaDef { lambda, .. } => self.expr(&mut lambda.body),
            S::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            S::Expr(e) => self.expr(e),
            S::Return(e) => {
                if let Some(e) = e {
                    self.expr(e);
                }
            }
            S::If { branches, else_block } => {
                for (c, b) in branches {
                    self.expr(c);
                    self.block(b);
                }
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            S::For { start, end, step, body, .. } => {
                for e in [start.as_mut(), Some(end), step.as_mut()].into_iter().flatten() {
                    self.expr(e);
                }
                self.block(body);
            }
            S::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            S::Group { persp, body } | S::Claim { persp, body, .. } => {
                self.persp(persp);
                self.block(body);
            }
            S::Partition { persp, index, body, .. } => {
                self.persp(persp);
                match index {
                    ast::IndexFn::Lambda(l) => self.expr(&mut l.body),
                    ast::IndexFn::Offset(e) => self.expr(e),
                    ast::IndexFn::Name(_) => {}
                }
                self.block(body);
            }
            S::Pipeline { count, stages, body, .. } => {
                self.expr(count);
                self.expr(stages);
                self.block(body);
            }
            S::Stage { late, body, .. } => {
                if let Some(e) = late {
                    self.expr(e);
                }
                self.block(body);
            }
            S::Fill { body, .. } | S::Async { body, .. } | S::Unsafe { body, .. } => self.block(body),
            S::Split { cases, .. } => {
                for c in cases {
                    self.expr(&mut c.count);
                    self.block(&mut c.body);
                }
            }
            S::Break | S::Continue | S::Pass | S::UnsafeText(_) => {}
        }
    }

    fn expr(&self, e: &mut ast::Expr) {
        use ast::ExprKind as E;
        match &mut e.kind {
            // A type parameter used as a cast, `T(x)`, or as a type argument, `g[T](x)`.
            E::Name(n) => {
                if let Some(to) = self.0.get(n) {
                    *n = to.clone();
                }
            }
            E::Unary(_, x) | E::Attr { base: x, .. } => self.expr(x),
            E::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            E::Ternary { cond, then, otherwise } => {
                self.expr(cond);
                self.expr(then);
                self.expr(otherwise);
            }
            E::Call { callee, args } => {
                self.expr(callee);
                args.iter_mut().for_each(|a| self.expr(&mut a.value));
            }
            E::Index { base, indices } => {
                self.expr(base);
                indices.iter_mut().for_each(|i| self.expr(i));
            }
            E::List(xs) => xs.iter_mut().for_each(|x| self.expr(x)),
            E::Lambda(l) => self.expr(&mut l.body),
            _ => {}
        }
    }
}

impl Checker<'_> {
    /// A call of template `t` (called `name` here), with explicit type arguments if the
    /// callee was written `f[T, ...]`: makes (or finds) the instance and checks the call
    /// against its signature.
    pub(crate) fn generic_call(
        &mut self,
        t: usize,
        name: &str,
        explicit: Option<&[ast::Expr]>,
        args: &[ast::Arg],
        span: Span,
        callee_span: Span,
    ) -> Val {
        let tpl = &self.g.shared.templates[t];
        let f = tpl.ast;
        let names: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
        let m = self.match_args(name, &names, args, span);
        let fail = |cx: &mut Self| {
            for a in args {
                cx.expr(&a.value, None);
            }
            Val::error(span)
        };
        if !m.ok {
            return fail(self);
        }
        // Type arguments: written, or inferred from the arguments.
        let mut types: HashMap<String, Scalar> = HashMap::new();
        let mut funcs: Vec<(String, FnId)> = Vec::new();
        if let Some(given) = explicit {
            if given.len() != f.type_params.len() {
                self.error(TypeError::WrongArguments {
                    callee: name.to_string(),
                    problem: ArgsProblem::TypeArguments { params: f.type_params.len(), given: given.len() },
                    span: callee_span,
                    help: None,
                });
                return fail(self);
            }
            for (p, e) in f.type_params.iter().zip(given) {
                let fn_name = super::dotted(e);
                match &e.kind {
                    ast::ExprKind::Name(n) if Scalar::from_name(n).is_some() => {
                        types.insert(p.name.clone(), Scalar::from_name(n).expect("checked"));
                    }
                    // A function for a function parameter (an operator, as CUB's
                    // `ReductionOp`): an ordinary function of the caller's scope.
                    _ if fn_name.as_ref().is_some_and(|n| self.g.fns.contains_key(n)) => {
                        funcs.push((p.name.clone(), self.g.fns[fn_name.as_ref().expect("checked")]));
                    }
                    _ => {
                        self.error(TypeError::WrongArguments {
                            callee: name.to_string(),
                            problem: ArgsProblem::NotAType,
                            span: e.span,
                            help: Some(
                                "type arguments are scalar types (`f[float](...)`) or, for a parameter used as a function, a non-generic function".into(),
                            ),
                        });
                        return fail(self);
                    }
                }
            }
        }
        let by_param: Vec<Option<ast::Arg>> = m.by_param.iter().map(|a| a.cloned()).collect();
        for (p, a) in f.params.iter().zip(&by_param) {
            let Some(a) = a else { continue };
            let Some(tp) = type_param_of(&p.ty, &f.type_params) else { continue };
            // A parameter given a function is not also inferred a type: the instance then
            // finds its uses as a type naming a function, which it refuses, rather than
            // taking the inferred type and dropping the function (review R63).
            if types.contains_key(&tp) || funcs.iter().any(|(n, _)| *n == tp) {
                continue;
            }
            if let Some(s) = self.infer_scalar(&p.ty, &a.value) {
                types.insert(tp, s);
            }
        }
        if let Some(missing) =
            f.type_params.iter().find(|p| !types.contains_key(&p.name) && !funcs.iter().any(|(n, _)| *n == p.name))
        {
            self.error(TypeError::WrongArguments {
                callee: name.to_string(),
                problem: ArgsProblem::CannotInfer { param: missing.name.clone() },
                span: callee_span,
                help: Some(format!(
                    "give the types: `{name}[{}](...)`",
                    f.type_params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                )),
            });
            return fail(self);
        }
        // Constant arguments, evaluated here.
        let mut consts: Vec<(usize, ConstValue)> = Vec::new();
        for (i, (p, a)) in f.params.iter().zip(&by_param).enumerate() {
            let ast::TypeKind::Constexpr(inner) = &p.ty.kind else { continue };
            let (Some(a), Some(s)) = (a, scalar_of(inner)) else { return fail(self) };
            let v = self.expr(&a.value, None);
            if v.err {
                return fail(self);
            }
            let e = self.coerce(v, s, &format!("argument for `{}`", p.name.name));
            let tir::ExprKind::Const(c) = e.kind else {
                let culprit = self.first_runtime_leaf(&e);
                self.error(TypeError::NotConstant {
                    what: format!("the argument for `constexpr` parameter `{}`", p.name.name),
                    span: a.value.span,
                    culprit,
                });
                return fail(self);
            };
            consts.push((i, c));
        }
        let mut shown: Vec<String> = f
            .type_params
            .iter()
            .map(|p| match types.get(&p.name) {
                Some(s) => s.name().to_string(),
                None => {
                    let id = funcs.iter().find(|(n, _)| *n == p.name).expect("bound").1;
                    self.g.sig(id).name
                }
            })
            .collect();
        shown.extend(consts.iter().map(|&(_, v)| value_text(v)));
        let key = format!("{}[{}]", tpl.name, shown.join(", "));
        let Some(id) = self.instance(t, key, &types, &funcs, &consts, callee_span) else { return fail(self) };
        // The call, against the instance: without the constant arguments.
        let rest: Vec<ast::Arg> = args
            .iter()
            .filter(|a| !consts.iter().any(|&(i, _)| m.by_param[i].is_some_and(|b| std::ptr::eq(b, *a))))
            .cloned()
            .collect();
        self.user_call(id, name, &rest, span, callee_span)
    }

    /// The instance `key` of template `t`, made if it is new.
    fn instance(
        &mut self,
        t: usize,
        key: String,
        types: &HashMap<String, Scalar>,
        funcs: &[(String, FnId)],
        consts: &[(usize, ConstValue)],
        call: Span,
    ) -> Option<FnId> {
        let shared = self.g.shared;
        if let Some(&id) = shared.inner.borrow().by_key.get(&key) {
            return Some(id);
        }
        let tpl = &shared.templates[t];
        if self.depth >= MAX_DEPTH || shared.inner.borrow().sigs.len() >= MAX_INSTANCES {
            self.error(TypeError::Unsupported {
                what: format!("instantiating `{key}` more than {MAX_DEPTH} instances deep"),
                span: call,
                help: Some(
                    "a generic function that instantiates itself with new arguments without end is recursion".into(),
                ),
            });
            return None;
        }
        let ast = instance_ast(tpl.ast, types, consts);
        let locals: HashMap<String, (Scalar, ConstValue)> = consts
            .iter()
            .map(|&(i, v)| {
                let p = &tpl.ast.params[i];
                let s = match &p.ty.kind {
                    ast::TypeKind::Constexpr(inner) => scalar_of(inner).expect("checked at the call"),
                    _ => unreachable!("constant parameters are constexpr"),
                };
                (p.name.name.clone(), (s, v))
            })
            .collect();
        let g: Globals<'_> = shared.scopes[tpl.module].view(self.g.sigs, shared);
        let mut inner = Vec::new();
        let mut sig = super::signature(&g, &ast, &locals, &mut inner);
        sig.name = key.clone();
        self.errors.extend(inner.into_iter().map(|e| e.in_instance(&key, call)));
        let mut st = shared.inner.borrow_mut();
        let id = FnId(shared.base + st.sigs.len() as u32);
        st.by_key.insert(key, id);
        st.sigs.push(sig);
        let parent = self.fn_id.0.checked_sub(shared.base).map(|i| i as usize);
        st.work.push(Some(Work {
            module: tpl.module,
            funcs: funcs.to_vec(),
            ast,
            call,
            depth: self.depth + 1,
            parent,
        }));
        Some(id)
    }

    /// The scalar a type parameter stands for, from the argument `e` for a parameter of
    /// type `ty` (`T`, or a pointer to `T`). The argument is checked here only to learn its
    /// type; its errors are reported when the call is checked.
    fn infer_scalar(&mut self, ty: &ast::TypeExpr, e: &ast::Expr) -> Option<Scalar> {
        use ast::TypeKind as K;
        match &ty.kind {
            K::Named(_) => {
                let errors = self.errors.len();
                let calls = self.calls.len();
                let uses = self.claim_uses.clone();
                let reads = self.fill_reads.borrow().len();
                let v = self.expr(e, None);
                self.errors.truncate(errors);
                self.calls.truncate(calls);
                self.claim_uses = uses;
                self.fill_reads.borrow_mut().truncate(reads);
                if v.err { None } else { v.scalar() }
            }
            K::Ptr(..) => {
                let ast::ExprKind::Name(n) = &e.kind else { return None };
                let super::expr::Resolved::Var(v) = self.resolve(n) else { return None };
                match &self.var(v).ty {
                    Ty::Ptr { elem, .. } | Ty::Array { elem, .. } => Some(*elem),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The type parameter a parameter's type is, or points to.
fn type_param_of(ty: &ast::TypeExpr, params: &[ast::Ident]) -> Option<String> {
    use ast::TypeKind as K;
    let named = |t: &ast::TypeExpr| match &t.kind {
        K::Named(n) if params.iter().any(|p| p.name == *n) => Some(n.clone()),
        _ => None,
    };
    match &ty.kind {
        K::Named(_) => named(ty),
        K::Ptr(inner, _) => match &inner.kind {
            K::Const(x) => named(x),
            _ => named(inner),
        },
        _ => None,
    }
}

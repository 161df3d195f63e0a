//! The checker: untyped AST to typed IR.
//!
//! It runs in three passes over a module:
//! 1. `signatures`: evaluates file-level constants and every function's signature (bound,
//!    facts, `smem`, parameters, return type). Calls are checked against signatures alone,
//!    so bodies can be checked in any order (modularity, language.md §5).
//! 2. `body`: checks each body (`ctx.rs` holds the state; `stmt.rs`, `expr.rs`, `call.rs`
//!    and `scope.rs` the rules) and produces a [`tir::Function`].
//! 3. whole-program rules: recursion (a cycle in the call graph), parameters that reach a
//!    wgmma's accumulators (every call gives them thread-local arrays), and shared-memory
//!    budgets.
//!
//! Every pass records errors and carries on, so one run reports every problem it can.

mod call;
mod ctx;
mod expr;
mod generic;
mod pipeline;
mod scope;
mod stmt;

use crate::consts;
use crate::error::{BoundProblem, Expected, Found, PerspProblem, PointerProblem, ReturnProblem, TypeError};
use crate::perspective::{Facts, Level, Persp, lcm};
use crate::tir::{self, FnId};
use crate::ty::{Scalar, TensorMapTy, Ty};
use prism_span::Span;
use prism_syntax::ast::{self, FnKind};
use std::collections::HashMap;

/// What the checker needs to know about the device code will run on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The architecture name (`sm_80`, `sm_90a`).
    pub arch: String,
    /// The most shared memory one block may use, in bytes.
    pub smem_limit: u64,
    /// Whether `smem_limit` was set explicitly rather than taken from the architecture.
    pub smem_limit_overridden: bool,
}

impl Target {
    /// The target for a known architecture name.
    pub fn from_arch(arch: &str) -> Option<Target> {
        // Opt-in maximum dynamic shared memory per block (CUDA programming guide, table of
        // technical specifications per compute capability).
        let limit = match arch {
            "sm_70" | "sm_72" => 96 * 1024,
            "sm_75" => 64 * 1024,
            "sm_80" | "sm_87" => 163 * 1024,
            "sm_86" | "sm_89" => 99 * 1024,
            "sm_90" | "sm_90a" | "sm_100" | "sm_100a" => 227 * 1024,
            _ => return None,
        };
        Some(Target { arch: arch.to_string(), smem_limit: limit, smem_limit_overridden: false })
    }

    /// The architectures [`Target::from_arch`] knows.
    pub const KNOWN: &'static [&'static str] =
        &["sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a"];
}

impl Default for Target {
    /// `sm_90a` (H100), the newest architecture the paper's programs use.
    fn default() -> Target {
        Target::from_arch("sm_90a").expect("known arch")
    }
}

/// A parameter of a checked signature.
#[derive(Clone, Debug)]
pub(crate) struct ParamInfo {
    pub name: String,
    pub ty: Ty,
    pub persp: Persp,
    /// `const(T)` on a scalar parameter.
    pub is_const: bool,
    /// `ptr(T, shared)`: callers pass shared memory (a device function's parameter).
    pub shared: bool,
    pub span: Span,
}

/// A kernel's dynamic shared array: parameter `param`, of `params[count]` items of `elem`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DynShared {
    pub param: usize,
    pub count: usize,
    pub elem: Scalar,
}

/// A checked function signature: everything a call site may rely on.
#[derive(Clone, Debug)]
pub(crate) struct Sig {
    pub name: String,
    pub kind: FnKind,
    pub header_span: Span,
    pub requires_span: Option<Span>,
    pub entry: Persp,
    pub bound: Vec<Persp>,
    pub facts: Facts,
    pub smem_budget: u64,
    pub launch_bounds: Option<u64>,
    /// `block=[X, Y, Z]`: the one block shape the kernel may be launched with.
    pub block_shape: Option<[u32; 3]>,
    /// The kernel's dynamic shared array, `buf : shared(T[n])`.
    pub dyn_shared: Option<DynShared>,
    pub min_blocks: Option<u64>,
    pub params: Vec<ParamInfo>,
    pub ret: Option<(Scalar, Persp)>,
}

/// The names visible in one module: its own file-level constants and functions and the
/// ones it imports, by the name it uses for them (`f`, `alias.f`, `a.b.f`).
#[derive(Default)]
pub(crate) struct Scope {
    pub consts: HashMap<String, (Scalar, tir::ConstValue, Span)>,
    pub fns: HashMap<String, FnId>,
    /// Constants whose value could not be computed (uses are not reported again).
    pub failed_consts: std::collections::HashSet<String>,
    /// The prefixes that name modules (`alias`, `a.b`), for messages about `m.x`.
    pub modules: std::collections::HashSet<String>,
    /// Where each imported name was bound, for `duplicate`.
    pub bound_at: HashMap<String, Span>,
    /// Generic functions, by the name this module uses, as indices of the templates.
    pub generics: HashMap<String, usize>,
}

/// What the checker of one module sees: its scope and every signature of the program.
pub(crate) struct Globals<'a> {
    pub consts: &'a HashMap<String, (Scalar, tir::ConstValue, Span)>,
    pub fns: &'a HashMap<String, FnId>,
    pub generics: &'a HashMap<String, usize>,
    pub sigs: &'a [Sig],
    pub failed_consts: &'a std::collections::HashSet<String>,
    pub modules: &'a std::collections::HashSet<String>,
    /// What is shared by every module: generic templates and their instances.
    pub shared: &'a generic::Shared<'a>,
}

impl Globals<'_> {
    /// The signature of function `id`, an ordinary function's or an instance's.
    pub fn sig(&self, id: FnId) -> Sig {
        match self.sigs.get(id.0 as usize) {
            Some(s) => s.clone(),
            None => self.shared.instance_sig(id),
        }
    }

    /// Whether `name` is a constant whose value could not be computed, or a name in a
    /// module that could not be loaded: uses are errors already reported.
    pub fn poisoned(&self, name: &str) -> bool {
        self.failed_consts.contains(name)
            || name.rsplit_once('.').is_some_and(|(m, _)| self.failed_consts.contains(&format!("{m}.*")))
    }

    /// The module prefix of a dotted `name` this scope imports (`m` of `m.x`), if any.
    pub fn module_of<'n>(&self, name: &'n str) -> Option<&'n str> {
        name.rsplit_once('.').map(|(m, _)| m).filter(|m| self.modules.contains(*m))
    }
}

/// The dotted name `a.b.c` an expression made of names and attributes spells, if it is one.
pub(crate) fn dotted(e: &ast::Expr) -> Option<String> {
    match &e.kind {
        ast::ExprKind::Name(n) => Some(n.clone()),
        ast::ExprKind::Attr { base, name } => Some(format!("{}.{}", dotted(base)?, name.name)),
        _ => None,
    }
}

impl Scope {
    /// This scope with `fns` bound too (an instance's function parameters).
    fn with_fns(&self, fns: &[(String, FnId)]) -> Scope {
        let mut s = Scope {
            consts: self.consts.clone(),
            fns: self.fns.clone(),
            failed_consts: self.failed_consts.clone(),
            modules: self.modules.clone(),
            bound_at: HashMap::new(),
            generics: self.generics.clone(),
        };
        for (n, id) in fns {
            s.fns.insert(n.clone(), *id);
        }
        s
    }

    pub(crate) fn view<'a>(&'a self, sigs: &'a [Sig], shared: &'a generic::Shared<'a>) -> Globals<'a> {
        Globals {
            consts: &self.consts,
            fns: &self.fns,
            generics: &self.generics,
            sigs,
            failed_consts: &self.failed_consts,
            modules: &self.modules,
            shared,
        }
    }
}

/// One module (file) of a program, as the driver loaded it.
pub struct Unit<'a> {
    /// The parsed file.
    pub ast: &'a ast::Module,
    /// Its dotted path (`prism.std.reduce`); empty for the root, the file being compiled,
    /// whose functions keep their plain names.
    pub path: Vec<String>,
    /// For each `import` item of `ast`, in order: the index in the unit list of the module
    /// it names, which comes before this one, or `None` when it could not be loaded (the
    /// driver reported why; its names are then silently unknown).
    pub imports: Vec<Option<usize>>,
    /// Values that replace this file's `constexpr` items of the same names (`prism build -D
    /// NAME=VALUE`); the driver gives them to the root only.
    pub defines: &'a [Define],
}

/// `-D NAME=VALUE` on the command line: a value for the root file's `NAME : constexpr(T) =
/// ...` in place of the one written there, as nvcc's `-D` replaces a macro. The value is a
/// literal (an integer, a float, `True` or `False`) and is checked against `T` like the
/// written one, so every later use (array sizes, `smem=`, perspectives) sees it and is
/// checked with it; nothing else can be defined.
#[derive(Clone, Debug, PartialEq)]
pub struct Define {
    /// The constant's name.
    pub name: String,
    /// The literal.
    pub value: tir::ConstValue,
}

impl Define {
    /// Parses `NAME=VALUE`.
    pub fn parse(text: &str) -> Result<Define, String> {
        let (name, value) =
            text.split_once('=').ok_or_else(|| format!("`-D {text}`: expected NAME=VALUE, such as `-D TILE=128`"))?;
        let (name, value) = (name.trim(), value.trim());
        let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(format!("`-D {text}`: `{name}` is not a name"));
        }
        let value = match value {
            "True" => tir::ConstValue::Bool(true),
            "False" => tir::ConstValue::Bool(false),
            v => {
                let (negative, digits) = match (v.strip_prefix('-'), v.strip_prefix('+')) {
                    (Some(d), _) => (true, d),
                    (None, Some(d)) => (false, d),
                    (None, None) => (false, v),
                };
                let int = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
                    Some(hex) => i128::from_str_radix(hex, 16).ok(),
                    None if digits.chars().all(|c| c.is_ascii_digit()) && !digits.is_empty() => {
                        digits.parse::<i128>().ok()
                    }
                    None => None,
                };
                match int {
                    Some(n) => tir::ConstValue::Int(if negative { -n } else { n }),
                    None => match v.parse::<f64>() {
                        Ok(f) if f.is_finite() && v.chars().any(|c| c.is_ascii_digit()) => tir::ConstValue::Float(f),
                        // A float too large even for `double` (`1e400`): say so, as the lexer
                        // does for the literal in the source, rather than call it no number.
                        Ok(f) if f.is_infinite() && v.chars().any(|c| c.is_ascii_digit()) => {
                            return Err(format!(
                                "`-D {text}`: `{v}` does not fit in any float type (`double`'s finite values lie within ±{})",
                                consts::float_max_text(Scalar::F64)
                            ));
                        }
                        _ => {
                            return Err(format!("`-D {text}`: `{v}` is not an integer, a float, `True` or `False`"));
                        }
                    },
                }
            }
        };
        Ok(Define { name: name.to_string(), value })
    }
}

/// Checks a module. Errors go to `errors`; the returned program is complete only when
/// there are none.
pub fn check_module(module: &ast::Module, target: &Target, errors: &mut Vec<TypeError>) -> tir::Program {
    check_units(&[Unit { ast: module, path: Vec::new(), imports: Vec::new(), defines: &[] }], target, errors)
}

/// Checks the modules of a program, each after the ones it imports (the root last).
/// Signatures are the unit of checking across modules as within one: a call to an imported
/// function is checked against its signature, and every body is checked once.
pub fn check_units(units: &[Unit<'_>], target: &Target, errors: &mut Vec<TypeError>) -> tir::Program {
    let mut sigs: Vec<Sig> = Vec::new();
    let mut templates: Vec<generic::Template<'_>> = Vec::new();
    // Pass 1 sees no instances: they are made while bodies are checked.
    let no_scopes: Vec<Scope> = Vec::new();
    let pass1 = generic::Shared::new(&[], &no_scopes, 0);
    // Per module: its scope, and what it defines (what others may import from it).
    let mut scopes: Vec<Scope> = Vec::new();
    let mut exports: Vec<Scope> = Vec::new();
    let mut fn_asts = Vec::new();
    // A define names a `constexpr` of its file: anything else is a typo that would
    // otherwise change nothing, silently.
    for unit in units {
        let consts: Vec<&str> = unit
            .ast
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Const(c) => Some(c.name.name.as_str()),
                _ => None,
            })
            .collect();
        for d in unit.defines {
            if !consts.contains(&d.name.as_str()) {
                let known = if consts.is_empty() {
                    "it declares none".to_string()
                } else {
                    format!("it declares {}", consts.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "))
                };
                errors.push(TypeError::BadDefine {
                    problem: format!("`-D {}`: this file declares no `constexpr` named `{}` ({known})", d.name, d.name),
                    span: prism_span::Span::new(unit.ast.file, 0, 0),
                });
            }
        }
    }
    // Pass 1: imports, constants and signatures, module by module in source order.
    for (u, unit) in units.iter().enumerate() {
        let mut scope = Scope::default();
        let mut own = Scope::default();
        let mut imports = unit.imports.iter();
        let prefix = if unit.path.is_empty() { String::new() } else { format!("{}.", unit.path.join(".")) };
        for item in &unit.ast.items {
            match item {
                ast::Item::Import(imp) => {
                    let target_unit = imports.next().copied().flatten();
                    import(&mut scope, imp, target_unit.map(|t| &exports[t]), errors);
                }
                ast::Item::Const(c) => {
                    let before = scope.consts.len();
                    if let Some(first) = scope.bound_at.get(&c.name.name) {
                        errors.push(TypeError::Duplicate {
                            name: c.name.name.clone(),
                            span: c.name.span,
                            first: *first,
                        });
                        continue;
                    }
                    let over = unit.defines.iter().find(|d| d.name == c.name.name);
                    global_const(&mut scope, &sigs, &pass1, c, over, errors);
                    if scope.consts.len() > before {
                        let v = scope.consts[&c.name.name];
                        own.consts.insert(c.name.name.clone(), v);
                    } else if scope.failed_consts.contains(&c.name.name) {
                        own.failed_consts.insert(c.name.name.clone());
                    }
                }
                ast::Item::Function(f) => {
                    let name = &f.name.name;
                    let taken = scope.fns.contains_key(name) || scope.generics.contains_key(name);
                    if taken {
                        let first = scope.bound_at.get(name).copied().unwrap_or(f.name.span);
                        errors.push(TypeError::Duplicate { name: name.clone(), span: f.name.span, first });
                    } else if crate::intrinsics::lookup(name).is_some() || name == "id" {
                        errors.push(TypeError::ReservedName { name: name.clone(), span: f.name.span });
                    }
                    let fresh = !taken && crate::intrinsics::lookup(name).is_none() && name != "id";
                    if fresh {
                        scope.bound_at.insert(name.clone(), f.name.span);
                    }
                    // A generic function is a template: it is checked per instance.
                    if generic::is_generic(f) {
                        generic::check_template(f, errors);
                        let t = templates.len();
                        templates.push(generic::Template { module: u, name: format!("{prefix}{name}"), ast: f });
                        if fresh {
                            scope.generics.insert(name.clone(), t);
                            own.generics.insert(name.clone(), t);
                        }
                        continue;
                    }
                    let mut sig = signature(&scope.view(&sigs, &pass1), f, &HashMap::new(), errors);
                    sig.name = format!("{prefix}{name}");
                    let id = FnId(sigs.len() as u32);
                    if fresh {
                        scope.fns.insert(name.clone(), id);
                        own.fns.insert(name.clone(), id);
                    }
                    fn_asts.push((u, id, &**f));
                    sigs.push(sig);
                }
            }
        }
        scopes.push(scope);
        exports.push(own);
    }
    // Pass 2: bodies, each in its module's scope; then the instances of generic functions
    // they made, which may make more.
    let shared = generic::Shared::new(&templates, &scopes, sigs.len() as u32);
    let mut functions = Vec::new();
    let mut edges: Vec<Vec<(FnId, Span)>> = Vec::new();
    let mut accs: Vec<ctx::AccFacts> = Vec::new();
    let mut headers: Vec<Span> = Vec::new();
    for (u, id, f) in &fn_asts {
        let g = scopes[*u].view(&sigs, &shared);
        let (func, calls, acc) = ctx::check_body(&g, *id, &sigs[id.0 as usize], f, 0, errors);
        edges.push(calls);
        accs.push(acc);
        headers.push(f.header_span);
        functions.push(func);
    }
    let mut next = 0;
    let mut made: Vec<(String, Span, Option<usize>)> = Vec::new();
    while let Some(work) = shared.take(next) {
        let id = FnId(sigs.len() as u32 + next as u32);
        let sig = shared.instance_sig(id);
        // Function parameters are names in the instance's scope, for the functions given.
        let bound;
        let scope = if work.funcs.is_empty() {
            &scopes[work.module]
        } else {
            bound = scopes[work.module].with_fns(&work.funcs);
            &bound
        };
        let g = scope.view(&sigs, &shared);
        let mut inner = Vec::new();
        let (func, calls, acc) = ctx::check_body(&g, id, &sig, &work.ast, work.depth, &mut inner);
        accs.push(acc);
        // Each error names the instance's call, then the calls that made the instances
        // around it, out to the non-generic code that started the chain.
        made.push((sig.name.clone(), work.call, work.parent));
        errors.extend(inner.into_iter().map(|e| {
            let mut e = e;
            let mut at = Some(next);
            while let Some(i) = at {
                let (name, call, parent) = &made[i];
                e = e.in_instance(name, *call);
                at = *parent;
            }
            e
        }));
        edges.push(calls);
        headers.push(work.ast.header_span);
        functions.push(func);
        next += 1;
    }
    sigs.extend(shared.into_sigs());
    let none = Scope::default();
    let g = none.view(&sigs, &pass1);
    // Pass 3: whole-program rules.
    recursion(&g, &edges, errors);
    accumulators(&g, &accs, errors);
    for (func, header) in functions.iter().zip(&headers) {
        let sig = &g.sigs[func.id.0 as usize];
        if func.smem_need > sig.smem_budget {
            errors.push(TypeError::SmemBudget {
                function: sig.name.clone(),
                need: func.smem_need,
                budget: sig.smem_budget,
                span: sig.requires_span.unwrap_or(sig.header_span),
                biggest: None,
            });
        }
        if sig.kind == FnKind::Kernel && func.smem_need > target.smem_limit {
            errors.push(TypeError::SmemDeviceLimit {
                function: sig.name.clone(),
                need: func.smem_need,
                limit: target.smem_limit,
                arch: if target.smem_limit_overridden {
                    format!("the limit set with --smem-limit for {}", target.arch)
                } else {
                    target.arch.clone()
                },
                span: *header,
            });
        }
    }
    tir::Program { functions }
}

/// Binds the names `imp` asks for in `scope`, from `from` (what the imported module
/// defines; `None` when it could not be loaded, and the driver said why).
fn import(scope: &mut Scope, imp: &ast::Import, from: Option<&Scope>, errors: &mut Vec<TypeError>) {
    let path = imp.path_text();
    let bind = |scope: &mut Scope, local: String, span: Span, what: Bound, errors: &mut Vec<TypeError>| {
        if let Some(first) = scope.bound_at.get(&local) {
            errors.push(TypeError::DuplicateImport { name: local, span, first: *first });
            return;
        }
        scope.bound_at.insert(local.clone(), span);
        match what {
            Bound::Fn(id) => {
                scope.fns.insert(local, id);
            }
            Bound::Generic(t) => {
                scope.generics.insert(local, t);
            }
            Bound::Const(v) => {
                scope.consts.insert(local, v);
            }
            Bound::Failed => {
                scope.failed_consts.insert(local);
            }
        }
    };
    match &imp.kind {
        ast::ImportKind::Module { alias } => {
            let prefix = alias.as_ref().map_or(path.clone(), |a| a.name.clone());
            let span = alias.as_ref().map_or(imp.span, |a| a.span);
            if scope.modules.contains(&prefix) {
                let first = scope.bound_at.get(&prefix).copied().unwrap_or(imp.span);
                errors.push(TypeError::DuplicateImport { name: prefix, span, first });
                return;
            }
            scope.modules.insert(prefix.clone());
            scope.bound_at.insert(prefix.clone(), span);
            let Some(from) = from else {
                // Every `prefix.x` is poisoned: the failed load was reported.
                scope.failed_consts.insert(format!("{prefix}.*"));
                return;
            };
            for (name, &id) in &from.fns {
                bind(scope, format!("{prefix}.{name}"), span, Bound::Fn(id), errors);
            }
            for (name, &v) in &from.consts {
                bind(scope, format!("{prefix}.{name}"), span, Bound::Const(v), errors);
            }
            for (name, &t) in &from.generics {
                bind(scope, format!("{prefix}.{name}"), span, Bound::Generic(t), errors);
            }
            for name in &from.failed_consts {
                bind(scope, format!("{prefix}.{name}"), span, Bound::Failed, errors);
            }
        }
        ast::ImportKind::Names(names) => {
            for (name, alias) in names {
                let local = alias.as_ref().unwrap_or(name);
                let what = match from {
                    None => Bound::Failed,
                    Some(from) => {
                        if let Some(&id) = from.fns.get(&name.name) {
                            Bound::Fn(id)
                        } else if let Some(&t) = from.generics.get(&name.name) {
                            Bound::Generic(t)
                        } else if let Some(&v) = from.consts.get(&name.name) {
                            Bound::Const(v)
                        } else if from.failed_consts.contains(&name.name) {
                            Bound::Failed
                        } else {
                            let mut known: Vec<&str> = from
                                .fns
                                .keys()
                                .chain(from.consts.keys())
                                .chain(from.generics.keys())
                                .map(String::as_str)
                                .collect();
                            known.sort_unstable();
                            errors.push(TypeError::UnresolvedImport {
                                name: name.name.clone(),
                                module: path.clone(),
                                span: name.span,
                                known: known.into_iter().map(str::to_string).collect(),
                            });
                            Bound::Failed
                        }
                    }
                };
                // A name that an intrinsic already has would make some calls mean the
                // function and others the intrinsic (and rules that recognise an intrinsic
                // by its name, such as a pipeline case's register reallocations, would
                // take one for the other): refused, as for a `def`.
                if crate::intrinsics::lookup(&local.name).is_some() || local.name == "id" {
                    errors.push(TypeError::ReservedName { name: local.name.clone(), span: local.span });
                    continue;
                }
                bind(scope, local.name.clone(), local.span, what, errors);
            }
        }
    }
}

/// What an imported name is.
enum Bound {
    Fn(FnId),
    Generic(usize),
    Const((Scalar, tir::ConstValue, Span)),
    Failed,
}

fn global_const(
    scope: &mut Scope,
    sigs: &[Sig],
    shared: &generic::Shared<'_>,
    c: &ast::ConstItem,
    over: Option<&Define>,
    errors: &mut Vec<TypeError>,
) {
    let ty = match &c.ty.kind {
        ast::TypeKind::Constexpr(inner) => match scalar_of(inner) {
            Some(s) => Some(s),
            None => {
                errors.push(TypeError::UnknownType { name: type_text(inner), span: inner.span });
                None
            }
        },
        _ => unreachable!("the parser only makes constexpr items"),
    };
    let g = scope.view(sigs, shared);
    let value = ty.and_then(|ty| match over {
        // A define replaces the written value; it is a literal, so it adapts to the declared
        // type when its value fits, like a literal written there.
        Some(d) => match fit_const(literal(d.value), ty, c.name.span) {
            Ok(v) => Some((ty, v)),
            Err(_) => {
                errors.push(TypeError::BadDefine {
                    problem: format!(
                        "`-D {}={}` does not fit `{}`, declared `constexpr({})` here",
                        d.name,
                        d.value,
                        d.name,
                        ty.name()
                    ),
                    span: c.name.span,
                });
                None
            }
        },
        None => match const_expr(&g, &c.value, &HashMap::new()).and_then(|k| fit_const(k, ty, c.value.span)) {
            Ok(v) => Some((ty, v)),
            Err(e) => {
                errors.push(e);
                None
            }
        },
    });
    if let Some((_, _, first)) = scope.consts.get(&c.name.name) {
        errors.push(TypeError::Duplicate { name: c.name.name.clone(), span: c.name.span, first: *first });
        return;
    }
    match value {
        Some((ty, v)) => {
            scope.consts.insert(c.name.name.clone(), (ty, v, c.name.span));
        }
        None => {
            scope.failed_consts.insert(c.name.name.clone());
        }
    }
}

/// A literal written in the source (or given as `-D NAME=VALUE`) before it adapts to the
/// type it is stored as: an integer is `int` (`int64` past its range), a float `float`.
fn literal(value: tir::ConstValue) -> Konst {
    use tir::ConstValue as C;
    match value {
        C::Int(v) => Konst { value, ty: consts::literal_type(v), literal: true },
        C::Float(_) => Konst { value, ty: Scalar::F32, literal: true },
        C::Bool(_) => Konst { value, ty: Scalar::Bool, literal: false },
    }
}

/// A constant computed in a signature or at file level: its value, its type, and whether it
/// is untyped literal arithmetic (which adapts to the type it is stored as).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Konst {
    pub value: tir::ConstValue,
    pub ty: Scalar,
    pub literal: bool,
}

/// Converts a constant to `ty`: typed values by implicit conversion only; literals if their
/// value fits.
pub(crate) fn fit_const(k: Konst, ty: Scalar, span: Span) -> Result<tir::ConstValue, TypeError> {
    let implicit = if k.literal {
        match k.value {
            tir::ConstValue::Int(_) => ty.is_numeric(),
            tir::ConstValue::Float(_) => ty.is_float(),
            tir::ConstValue::Bool(_) => ty == Scalar::Bool,
        }
    } else {
        k.ty == ty || k.ty.converts_to(ty)
    };
    if !implicit {
        return Err(TypeError::Mismatch {
            expected: Expected::Scalar(ty),
            found: k.ty.into(),
            span,
            context: "constant value".into(),
            help: Some(format!("convert explicitly: `{}(...)`", ty.name())),
        });
    }
    if let (tir::ConstValue::Int(v), true) = (k.value, ty.is_int()) {
        let (lo, hi) = consts::int_range(ty);
        if v < lo || v > hi {
            return Err(TypeError::ConstEval { reason: consts::ConstError::DoesNotFit { value: v, ty }, span });
        }
    }
    if k.literal {
        consts::literal_range(k.value, ty).map_err(|reason| TypeError::ConstEval { reason, span })?;
    }
    consts::cast(k.value, k.ty, ty).map_err(|reason| TypeError::ConstEval { reason, span })
}

/// The scalar a type expression names, if it is a plain scalar.
pub(crate) fn scalar_of(t: &ast::TypeExpr) -> Option<Scalar> {
    match &t.kind {
        ast::TypeKind::Named(n) => Scalar::from_name(n),
        _ => None,
    }
}

/// A type expression as source-like text, for messages.
pub(crate) fn type_text(t: &ast::TypeExpr) -> String {
    match &t.kind {
        ast::TypeKind::Named(n) => n.clone(),
        ast::TypeKind::Array(e, dims) => format!("{}{}", type_text(e), "[..]".repeat(dims.len())),
        ast::TypeKind::Ptr(e, None) => format!("ptr({})", type_text(e)),
        ast::TypeKind::Ptr(e, Some(_)) => format!("ptr({}, shared)", type_text(e)),
        ast::TypeKind::Const(e) => format!("const({})", type_text(e)),
        ast::TypeKind::Constexpr(e) => format!("constexpr({})", type_text(e)),
        ast::TypeKind::Shared { elem, .. } => format!("shared({})", type_text(elem)),
        ast::TypeKind::TensorMap { elem, .. } => format!("tensor_map({})", type_text(elem)),
    }
}

/// Evaluates a constant expression that may use file-level constants and the given local
/// constants (used for signatures and file-level constants, where no function scope exists).
/// Literal integer arithmetic is exact (in 128 bits) and typed `int`, or `int64` when the
/// value needs it, as in C.
pub(crate) fn const_expr(
    g: &Globals,
    e: &ast::Expr,
    locals: &HashMap<String, (Scalar, tir::ConstValue)>,
) -> Result<Konst, TypeError> {
    use ast::ExprKind as E;
    use tir::ConstValue as C;
    let not_const = |what: &str, span: Span, culprit: Option<(String, Span)>| TypeError::NotConstant {
        what: what.into(),
        span,
        culprit,
    };
    let eval_err = |reason: consts::ConstError, span: Span| TypeError::ConstEval { reason, span };
    Ok(match &e.kind {
        E::Int(v) => literal(C::Int(*v as i128)),
        E::Float(v) => literal(C::Float(*v)),
        E::Bool(b) => literal(C::Bool(*b)),
        E::Str(_) => {
            return Err(TypeError::Mismatch {
                expected: Expected::Value,
                found: Found::Str,
                span: e.span,
                context: "strings appear only in decorators and `unsafe(...)`".into(),
                help: None,
            });
        }
        E::Name(n) => match locals.get(n).copied().or_else(|| g.consts.get(n).map(|&(t, v, _)| (t, v))) {
            Some((t, v)) => Konst { value: v, ty: t, literal: false },
            None if g.poisoned(n) => return Err(TypeError::Poisoned { span: e.span }),
            None => {
                return Err(not_const("this value", e.span, Some((format!("`{n}`"), e.span))));
            }
        },
        // An imported constant, `m.TILE`.
        E::Attr { .. } => match dotted(e).and_then(|n| g.consts.get(&n).map(|&(t, v, _)| (t, v))) {
            Some((t, v)) => Konst { value: v, ty: t, literal: false },
            None if dotted(e).is_some_and(|n| g.poisoned(&n)) => return Err(TypeError::Poisoned { span: e.span }),
            None => return Err(not_const("this value", e.span, None)),
        },
        E::Unary(op, x) => {
            let k = const_expr(g, x, locals)?;
            if k.literal
                && *op == ast::UnOp::Neg
                && let C::Int(v) = k.value
            {
                return Ok(literal(C::Int(-v)));
            }
            Konst { value: consts::unary(*op, k.value, k.ty).map_err(|r| eval_err(r, e.span))?, ..k }
        }
        E::Binary(op, a, b) => {
            let ka = const_expr(g, a, locals)?;
            let kb = const_expr(g, b, locals)?;
            if let (true, true, C::Int(x), C::Int(y)) = (ka.literal, kb.literal, ka.value, kb.value) {
                // Literal arithmetic is exact; only the final store checks the range.
                let v = consts::binary(*op, C::Int(x), C::Int(y), Scalar::I64)
                    .or_else(|_| consts::binary(*op, C::Int(x), C::Int(y), Scalar::U64))
                    .map_err(|r| eval_err(r, e.span))?;
                return Ok(match v {
                    C::Int(v) => literal(C::Int(v)),
                    other => Konst { value: other, ty: Scalar::Bool, literal: false },
                });
            }
            let common = if op.is_logical() {
                Scalar::Bool
            } else if matches!(op, ast::BinOp::Shl | ast::BinOp::Shr) {
                ka.ty
            } else if ka.literal && !kb.literal && kb.ty.is_numeric() {
                kb.ty
            } else if kb.literal && !ka.literal && ka.ty.is_numeric() {
                ka.ty
            } else {
                Scalar::common(ka.ty, kb.ty).ok_or_else(|| TypeError::Mismatch {
                    expected: Expected::Scalar(ka.ty),
                    found: kb.ty.into(),
                    span: b.span,
                    context: "operand".into(),
                    help: None,
                })?
            };
            let va = consts::cast(ka.value, ka.ty, common).map_err(|r| eval_err(r, a.span))?;
            let vb = if matches!(op, ast::BinOp::Shl | ast::BinOp::Shr) {
                kb.value
            } else {
                consts::cast(kb.value, kb.ty, common).map_err(|r| eval_err(r, b.span))?
            };
            let v = consts::binary(*op, va, vb, common).map_err(|r| eval_err(r, e.span))?;
            let t = if op.is_comparison() || op.is_logical() { Scalar::Bool } else { common };
            Konst { value: v, ty: t, literal: false }
        }
        E::Ternary { cond, then, otherwise } => {
            let c = const_expr(g, cond, locals)?;
            match c.value {
                C::Bool(true) => const_expr(g, then, locals)?,
                C::Bool(false) => const_expr(g, otherwise, locals)?,
                _ => return Err(not_const("a condition", cond.span, None)),
            }
        }
        E::Call { callee, args } => {
            let E::Name(name) = &callee.kind else { return Err(not_const("this value", e.span, None)) };
            let vals = args
                .iter()
                .map(|a| {
                    if a.name.is_some() {
                        Err(not_const("this value", a.span, None))
                    } else {
                        const_expr(g, &a.value, locals)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            match (name.as_str(), vals.as_slice()) {
                (cast, [k]) if Scalar::from_name(cast).is_some() => {
                    let to = Scalar::from_name(cast).expect("checked");
                    Konst {
                        value: consts::cast(k.value, k.ty, to).map_err(|r| eval_err(r, e.span))?,
                        ty: to,
                        literal: false,
                    }
                }
                // Literal arithmetic is exact (the store checks the range); a typed operand's
                // `abs` must fit its type, as in a function body (`consts::abs`, review R46).
                ("abs", [k]) if k.literal => Konst {
                    value: match k.value {
                        C::Int(v) => C::Int(v.abs()),
                        C::Float(v) => C::Float(v.abs()),
                        other => other,
                    },
                    ..*k
                },
                ("abs", [k]) => Konst { value: consts::abs(k.value, k.ty).map_err(|r| eval_err(r, e.span))?, ..*k },
                (op @ ("min" | "max"), [x, y]) => {
                    let ty = if x.literal { y.ty } else { x.ty };
                    let vx = consts::cast(x.value, x.ty, ty).map_err(|r| eval_err(r, e.span))?;
                    let vy = consts::cast(y.value, y.ty, ty).map_err(|r| eval_err(r, e.span))?;
                    let value = consts::min_max(op == "max", vx, vy, ty).map_err(|r| eval_err(r, e.span))?;
                    Konst { value, ty, literal: x.literal && y.literal }
                }
                _ => return Err(not_const("this value", e.span, Some((format!("`{name}(...)`"), callee.span)))),
            }
        }
        _ => return Err(not_const("this value", e.span, None)),
    })
}

/// Evaluates a perspective written in a signature to a [`Persp`].
pub(crate) fn eval_persp(
    g: &Globals,
    p: &ast::Persp,
    locals: &HashMap<String, (Scalar, tir::ConstValue)>,
) -> Result<Persp, TypeError> {
    let k = const_expr(g, &p.size, locals)?;
    match k.value {
        tir::ConstValue::Int(n) if k.ty.is_int() => make_persp(p.level, n, p.span),
        _ => Err(TypeError::InvalidPerspective {
            text: format!("{}[...]", p.level.as_str()),
            problem: PerspProblem::NotInteger,
            span: p.size.span,
        }),
    }
}

/// The perspective `level[n]`, desugaring `warp` and `warpgroup`.
pub(crate) fn make_persp(level: ast::LevelName, n: i128, span: Span) -> Result<Persp, TypeError> {
    // Only errors need the text; formatting it eagerly cost 3% of checking time.
    let text = || format!("{}[{n}]", level.as_str());
    if n < 1 {
        return Err(TypeError::InvalidPerspective { text: text(), problem: PerspProblem::NoUnits, span });
    }
    let (lvl, scale) = match level {
        ast::LevelName::Grid => (Level::Grid, 1),
        ast::LevelName::Block => (Level::Block, 1),
        ast::LevelName::Thread => (Level::Thread, 1),
        ast::LevelName::Warp => (Level::Thread, 32),
        ast::LevelName::Warpgroup => (Level::Thread, 128),
    };
    if lvl == Level::Grid && n != 1 {
        return Err(TypeError::InvalidPerspective { text: text(), problem: PerspProblem::OneGrid, span });
    }
    match (n as u64).checked_mul(scale).filter(|&m| n <= 1 << 40 && m <= 1 << 40) {
        Some(n) => Ok(Persp { level: lvl, n }),
        None => Err(TypeError::InvalidPerspective { text: text(), problem: PerspProblem::TooMany, span }),
    }
}

/// The signature of `f`, with `locals` the values of its constant parameters (an
/// instance of a generic function; empty otherwise).
pub(crate) fn signature(
    g: &Globals,
    f: &ast::Function,
    locals: &HashMap<String, (Scalar, tir::ConstValue)>,
    errors: &mut Vec<TypeError>,
) -> Sig {
    // The bound: its broadest entry is the entry perspective; the others (with it) say what
    // T and B are multiples of.
    let mut bound = Vec::new();
    let mut smem_budget = 0;
    let mut requires_span = None;
    if let Some(r) = &f.requires {
        requires_span = Some(r.span);
        for e in &r.entries {
            match eval_persp(g, e, locals) {
                Ok(p) => bound.push((p, e.span)),
                Err(err) => errors.push(err),
            }
        }
        if let Some(s) = &r.smem {
            match const_expr(g, s, locals) {
                Ok(Konst { value: tir::ConstValue::Int(n), ty, .. }) if ty.is_int() && n >= 0 => smem_budget = n as u64,
                Ok(_) => errors.push(TypeError::InvalidBound { problem: BoundProblem::Smem, span: s.span, help: None }),
                Err(e) => errors.push(e),
            }
        }
        if r.entries.is_empty() {
            errors.push(TypeError::InvalidBound {
                problem: BoundProblem::Empty,
                span: r.span,
                help: Some("list the entry perspective first: `@requires(block[1], thread[32])`".into()),
            });
        }
    }
    if bound.is_empty() {
        // Defaults (documented in docs/language.md): a kernel starts at grid[1], a device
        // function at thread[1].
        let p = if f.kind == FnKind::Kernel { Persp::GRID } else { Persp::THREAD };
        bound.push((p, f.header_span));
    }
    let mut facts = Facts::default();
    for &(p, span) in &bound {
        let slot = match p.level {
            Level::Thread => &mut facts.t_mult,
            Level::Block => &mut facts.b_mult,
            Level::Grid => continue,
        };
        match lcm(*slot, p.n) {
            Some(v) if v <= 1 << 40 => *slot = v,
            _ => errors.push(TypeError::InvalidBound { problem: BoundProblem::TooLarge, span, help: None }),
        }
    }
    let entry = bound.iter().map(|&(p, _)| p).max_by_key(|p| (p.level, p.n)).expect("bound is not empty");
    for &(p, span) in &bound {
        if !facts.narrower_eq(p, entry) {
            errors.push(TypeError::InvalidBound {
                problem: BoundProblem::Indivisible { persp: p, entry },
                span,
                help: Some("each perspective of a bound must evenly divide the broadest one".into()),
            });
        }
    }
    let launch_bounds = f.launch_bounds.as_ref().and_then(|e| match const_expr(g, e, locals) {
        Ok(Konst { value: tir::ConstValue::Int(n), .. }) if n >= 1 => {
            if f.kind != FnKind::Kernel {
                errors.push(TypeError::InvalidBound {
                    problem: BoundProblem::LaunchBoundsOnDevice,
                    span: e.span,
                    help: None,
                });
            }
            Some(n as u64)
        }
        Ok(_) => {
            errors.push(TypeError::InvalidBound { problem: BoundProblem::LaunchBoundsValue, span: e.span, help: None });
            None
        }
        Err(err) => {
            errors.push(err);
            None
        }
    });
    // The second operand is CUDA's `minBlocksPerMultiprocessor`: 1 to 32 (an H100 runs at
    // most 32 blocks per multiprocessor).
    let min_blocks = f.min_blocks.as_ref().and_then(|e| match const_expr(g, e, locals) {
        Ok(Konst { value: tir::ConstValue::Int(n), .. }) if (1..=32).contains(&n) => Some(n as u64),
        Ok(_) => {
            errors.push(TypeError::InvalidBound { problem: BoundProblem::MinBlocksValue, span: e.span, help: None });
            None
        }
        Err(err) => {
            errors.push(err);
            None
        }
    });
    let block_shape = f.requires.as_ref().and_then(|r| r.block.as_ref()).and_then(|e| {
        let shape = block_shape(g, e, errors)?;
        let threads = shape.iter().map(|&d| u64::from(d)).product::<u64>();
        if f.kind != FnKind::Kernel {
            errors.push(TypeError::InvalidBound {
                problem: BoundProblem::BlockShapeOnDevice,
                span: e.span,
                help: None,
            });
            return None;
        }
        if threads % facts.t_mult != 0 || launch_bounds.is_some_and(|lb| threads > lb) {
            errors.push(TypeError::InvalidBound {
                problem: BoundProblem::BlockShapeThreads { threads, multiple: facts.t_mult, launch_bounds },
                span: e.span,
                help: None,
            });
            return None;
        }
        Some(shape)
    });
    // A fixed shape caps the threads per block as `@launch_bounds` does (nvcc is told, and
    // the ownership proof bounds thread indices by it).
    let launch_bounds = launch_bounds.or(block_shape.map(|s| s.iter().map(|&d| u64::from(d)).product()));
    if let Some(lb) = launch_bounds
        && lb % facts.t_mult != 0
    {
        errors.push(TypeError::InvalidBound {
            problem: BoundProblem::LaunchBoundsMultiple { bound: lb, multiple: facts.t_mult },
            span: f.launch_bounds.as_ref().map(|e| e.span).unwrap_or(f.header_span),
            help: None,
        });
    }
    // Parameters.
    let mut params = Vec::new();
    let mut dyn_shared = None;
    for (i, p) in f.params.iter().enumerate() {
        if let Some(prev) = f.params[..i].iter().find(|q| q.name.name == p.name.name) {
            errors.push(TypeError::Duplicate { name: p.name.name.clone(), span: p.name.span, first: prev.name.span });
        }
        let persp = match &p.persp {
            Some(pp) => match eval_persp(g, pp, locals) {
                Ok(x) => x,
                Err(e) => {
                    errors.push(e);
                    entry
                }
            },
            None => entry,
        };
        if !facts.narrower_eq(persp, entry) {
            errors.push(TypeError::ParamPerspective {
                what: format!("parameter `{}`", p.name.name),
                persp,
                entry,
                span: p.persp.as_ref().map(|x| x.span).unwrap_or(p.span),
            });
        }
        // `buf : shared(T[n])` on a kernel: dynamic shared memory of `n` items.
        if let Some((elem, count)) = dynamic_shared(f, i, &params, errors) {
            if dyn_shared.is_some() {
                errors.push(TypeError::Unsupported {
                    what: "a second dynamic shared array".into(),
                    span: p.span,
                    help: Some("a kernel has one; carve several arrays out of it with partitions".into()),
                });
            }
            // Every unit of the entry perspective receives the same parameters, and a
            // block's threads share its dynamic shared array: in a kernel entered below
            // `block[1]` (at `thread[32]`, say), two units of one block would get one array
            // and nothing to tell their elements apart (docs/soundness.md §6).
            if !facts.narrower_eq(Persp::BLOCK, entry) {
                errors.push(TypeError::ParamPerspective {
                    what: format!("dynamic shared array `{}`", p.name.name),
                    persp: Persp::BLOCK,
                    entry,
                    span: p.span,
                });
            }
            dyn_shared.get_or_insert(DynShared { param: i, count, elem });
            let ty = Ty::Ptr { elem, mutable: true };
            params.push(ParamInfo {
                name: p.name.name.clone(),
                ty,
                persp: Persp::BLOCK,
                is_const: false,
                shared: false,
                span: p.span,
            });
            continue;
        }
        let (ty, is_const) = param_type(g, &p.ty, locals, errors);
        // A launch passes the same pointers to every unit of a kernel's entry perspective,
        // so a kernel's pointer names one buffer shared by all of them, whatever perspective
        // it is declared at. Inference takes a pointer parameter's perspective for the unit
        // that shares it (docs/language.md §5, "Which unit") and would order accesses within
        // each narrower unit only, while the other units write the same elements
        // (docs/soundness.md §6). A device function's narrower pointer is different: each
        // caller's unit passes its own memory, a view at that perspective. Read-only
        // pointers are harmless: nothing writes them. Until 2026-11-29 this was accepted.
        if f.kind == FnKind::Kernel
            && matches!(ty, Ty::Ptr { mutable: true, .. })
            && facts.strictly_narrower(persp, entry)
        {
            errors.push(TypeError::KernelPointerNarrower {
                name: p.name.name.clone(),
                persp,
                entry,
                span: p.persp.as_ref().map(|x| x.span).unwrap_or(p.span),
                map_decl: None,
            });
        }
        // `ptr(T, shared)` promises shared memory, which only a caller can pass: a launch
        // passes global memory.
        let shared = match p.ty.kind {
            ast::TypeKind::Ptr(_, Some(at)) if f.kind == FnKind::Kernel => {
                errors.push(TypeError::Unsupported {
                    what: "a kernel parameter in shared memory".into(),
                    span: at,
                    help: Some(
                        "a launch passes global memory; declare the tile in the kernel with `shared(...)` and pass it to device functions as `ptr(T, shared)`".into(),
                    ),
                });
                false
            }
            // Shared memory is a block's: no argument could be given at a broader
            // perspective (review R26 found `@ grid[1]` accepted, and no call possible).
            ast::TypeKind::Ptr(_, Some(at)) if !facts.narrower_eq(persp, Persp::BLOCK) => {
                errors.push(TypeError::Unsupported {
                    what: format!("a shared-memory parameter at {persp}"),
                    span: at,
                    help: Some(
                        "shared memory belongs to one block: declare the parameter at block[1] or narrower".into(),
                    ),
                });
                false
            }
            ast::TypeKind::Ptr(_, at) => at.is_some(),
            _ => false,
        };
        params.push(ParamInfo { name: p.name.name.clone(), ty, persp, is_const, shared, span: p.span });
    }
    let ret = f.ret.as_ref().map(|r| {
        let persp = match &r.persp {
            Some(pp) => match eval_persp(g, pp, locals) {
                Ok(x) => x,
                Err(e) => {
                    errors.push(e);
                    entry
                }
            },
            None => entry,
        };
        // A return perspective that is too broad is reported once; the body is then checked
        // against the entry perspective, so its `return`s are not reported again.
        let persp = if facts.narrower_eq(persp, entry) {
            persp
        } else {
            errors.push(TypeError::ParamPerspective { what: "the return value".into(), persp, entry, span: r.span });
            entry
        };
        if f.kind == FnKind::Kernel {
            errors.push(TypeError::ReturnValue { problem: ReturnProblem::FromKernel, span: r.span });
        }
        match scalar_of(&r.ty) {
            Some(s) => (s, persp),
            None => {
                match &r.ty.kind {
                    ast::TypeKind::Named(n) => errors.push(TypeError::UnknownType { name: n.clone(), span: r.ty.span }),
                    _ => errors.push(TypeError::Unsupported {
                        what: format!("returning `{}`", type_text(&r.ty)),
                        span: r.ty.span,
                        help: Some("functions return scalars; write results through a `ptr(T)` parameter".into()),
                    }),
                }
                // Keep a placeholder so that the body's `return`s are not reported again.
                (Scalar::I32, persp)
            }
        }
    });
    Sig {
        name: f.name.name.clone(),
        kind: f.kind,
        header_span: f.header_span,
        requires_span,
        entry,
        bound: bound.into_iter().map(|(p, _)| p).collect(),
        facts,
        smem_budget,
        launch_bounds,
        block_shape,
        min_blocks,
        params,
        ret,
        dyn_shared,
    }
}

/// The parameter `f.params[i]` as a dynamic shared array, `buf : shared(T[n])` with `n` an
/// earlier `int` parameter of a kernel: its element type and the index of `n`. `None` when
/// it is not written that way (errors for the near misses).
fn dynamic_shared(
    f: &ast::Function,
    i: usize,
    earlier: &[ParamInfo],
    errors: &mut Vec<TypeError>,
) -> Option<(Scalar, usize)> {
    let p = &f.params[i];
    let ast::TypeKind::Shared { elem, align } = &p.ty.kind else { return None };
    let bad = |errors: &mut Vec<TypeError>, help: &str| {
        errors.push(TypeError::Unsupported {
            what: format!("a parameter of type `{}`", type_text(&p.ty)),
            span: p.ty.span,
            help: Some(help.into()),
        });
        None
    };
    if f.kind != FnKind::Kernel {
        return bad(
            errors,
            "pass shared arrays to device functions as `ptr(T)`, or `ptr(T, shared)` where the function needs shared memory; a kernel's `shared(T[n])` parameter is its dynamic shared memory",
        );
    }
    if align.is_some() {
        return bad(errors, "the dynamic shared array is aligned to 1024 bytes already");
    }
    let ast::TypeKind::Array(inner, dims) = &elem.kind else {
        return bad(errors, "write `shared(T[n])`, with `n` an earlier `int` parameter");
    };
    let (Some(scalar), [dim]) = (scalar_of(inner), dims.as_slice()) else {
        return bad(errors, "a dynamic shared array has one dimension and a scalar element type: `shared(float[n])`");
    };
    let count = match &dim.kind {
        ast::ExprKind::Name(n) => earlier.iter().position(|q| q.name == *n && q.ty == Ty::Scalar(Scalar::I32)),
        _ => None,
    };
    match count {
        Some(c) if p.persp.is_none() => Some((scalar, c)),
        Some(_) => {
            bad(errors, "a dynamic shared array is `@ block[1]`: each block has its own; leave the perspective out")
        }
        None => bad(
            errors,
            "its length is an earlier `int` parameter of the kernel, which the launch gives: `n : int, buf : shared(float[n])`",
        ),
    }
}

/// The shape `block=[X, Y, Z]` gives (missing extents are 1), or `None` after reporting
/// why it is not one: one to three positive constants, at most 1024 threads and 64 along z.
fn block_shape(g: &Globals, e: &ast::Expr, errors: &mut Vec<TypeError>) -> Option<[u32; 3]> {
    let bad = |errors: &mut Vec<TypeError>| {
        errors.push(TypeError::InvalidBound { problem: BoundProblem::BlockShape, span: e.span, help: None });
        None
    };
    let ast::ExprKind::List(items) = &e.kind else { return bad(errors) };
    if items.is_empty() || items.len() > 3 {
        return bad(errors);
    }
    let mut shape = [1u32; 3];
    for (k, item) in items.iter().enumerate() {
        match const_expr(g, item, &HashMap::new()) {
            Ok(Konst { value: tir::ConstValue::Int(n), .. }) if (1..=1024).contains(&n) => shape[k] = n as u32,
            Ok(_) => return bad(errors),
            Err(err) => {
                errors.push(err);
                return None;
            }
        }
    }
    if shape.iter().map(|&d| u64::from(d)).product::<u64>() > 1024 || shape[2] > 64 {
        return bad(errors);
    }
    Some(shape)
}

fn param_type(
    g: &Globals,
    t: &ast::TypeExpr,
    locals: &HashMap<String, (Scalar, tir::ConstValue)>,
    errors: &mut Vec<TypeError>,
) -> (Ty, bool) {
    use ast::TypeKind as K;
    let bad = |errors: &mut Vec<TypeError>, help: &str| {
        errors.push(TypeError::Unsupported {
            what: format!("a parameter of type `{}`", type_text(t)),
            span: t.span,
            help: Some(help.into()),
        });
        (Ty::Scalar(Scalar::I32), false)
    };
    match &t.kind {
        K::Named(n) => match Scalar::from_name(n) {
            Some(s) => (Ty::Scalar(s), false),
            None if n == "CUTensorMap" => (Ty::Opaque(n.clone()), false),
            None => {
                errors.push(TypeError::UnknownType { name: n.clone(), span: t.span });
                (Ty::Scalar(Scalar::I32), false)
            }
        },
        K::TensorMap { elem, swizzle } => match tensor_map_type(g, t, elem, swizzle.as_deref(), locals) {
            Ok(m) => (Ty::TensorMap(m), true),
            Err(e) => {
                errors.push(e);
                (Ty::Scalar(Scalar::I32), false)
            }
        },
        K::Const(inner) => match &inner.kind {
            K::Named(n) if n == "CUTensorMap" => (Ty::Opaque(n.clone()), true),
            K::TensorMap { .. } => param_type(g, inner, locals, errors),
            _ => match scalar_of(inner) {
                Some(s) => (Ty::Scalar(s), true),
                None => {
                    bad(errors, "`const(T)` parameters take a scalar T; for read-only memory write `ptr(const(T))`")
                }
            },
        },
        K::Ptr(inner, _) => {
            let (elem, mutable) = match &inner.kind {
                K::Const(e) => (scalar_of(e), false),
                _ => (scalar_of(inner), true),
            };
            match elem {
                Some(elem) => (Ty::Ptr { elem, mutable }, false),
                None => match unknown_named(inner) {
                    Some(n) => {
                        errors.push(TypeError::UnknownType { name: n.name.clone(), span: n.span });
                        (Ty::Scalar(Scalar::I32), false)
                    }
                    None => bad(errors, "pointers point to scalars: `ptr(float)`, `ptr(const(int))`"),
                },
            }
        }
        K::Array(..) => bad(errors, "pass arrays as `ptr(T)` (or `ptr(const(T))`)"),

        K::Constexpr(_) => {
            bad(errors, "parameters are run-time values; use a file-level `constexpr` for compile-time constants")
        }
        K::Shared { .. } => bad(
            errors,
            "pass shared arrays as `ptr(T)`; shared memory is allocated with `shared(...)` declarations in block[1] code",
        ),
    }
}

/// The tensor map `tensor_map(T[..][..], swizzle=S)` describes, checked against what TMA
/// copies (`cuTensorMapEncodeTiled`'s limits): 2 or 3 box dimensions of 1 to 256 elements,
/// a numeric element type, an innermost box dimension of a multiple of 16 bytes, and a
/// swizzle span of 0, 32, 64 or 128 bytes. With a swizzle the box's rows must be exactly
/// one span: the layout wgmma's swizzled descriptors read, and the only one Prism promises.
fn tensor_map_type(
    g: &Globals,
    t: &ast::TypeExpr,
    elem: &ast::TypeExpr,
    swizzle: Option<&ast::Expr>,
    no_locals: &HashMap<String, (Scalar, tir::ConstValue)>,
) -> Result<TensorMapTy, TypeError> {
    let problem = |problem: String, span: Span| TypeError::TensorMap { problem, span };
    let ast::TypeKind::Array(inner, dims) = &elem.kind else {
        return Err(problem(format!("`{}` is not a box such as `bf16[64][64]`", type_text(elem)), elem.span));
    };
    let Some(scalar) = scalar_of(inner) else {
        return Err(match unknown_named(inner) {
            Some(n) => TypeError::UnknownType { name: n.name, span: n.span },
            None => problem(format!("the elements `{}` are not a scalar type", type_text(inner)), inner.span),
        });
    };
    if scalar == Scalar::Bool {
        return Err(problem("TMA copies numbers, not `bool`".into(), inner.span));
    }
    if !(2..=3).contains(&dims.len()) {
        return Err(problem(format!("a box has 2 or 3 dimensions, not {}", dims.len()), elem.span));
    }
    let mut boxd = [1u32; 3];
    for (k, d) in dims.iter().enumerate() {
        match const_expr(g, d, no_locals)? {
            Konst { value: tir::ConstValue::Int(n), .. } if (1..=256).contains(&n) => boxd[k] = n as u32,
            Konst { value: tir::ConstValue::Int(n), .. } => {
                return Err(problem(format!("a box dimension is 1 to 256 elements, not {n}"), d.span));
            }
            _ => return Err(problem("a box dimension is an integer".into(), d.span)),
        }
    }
    let span_bytes = match swizzle {
        None => 0,
        Some(e) => match const_expr(g, e, no_locals)? {
            Konst { value: tir::ConstValue::Int(n), .. } if matches!(n, 0 | 32 | 64 | 128) => n as u32,
            _ => return Err(problem("the swizzle span is 0, 32, 64 or 128 bytes".into(), e.span)),
        },
    };
    let m = TensorMapTy { elem: scalar, rank: dims.len() as u8, boxd, swizzle: span_bytes };
    let row = u64::from(boxd[dims.len() - 1]) * scalar.size();
    if !row.is_multiple_of(16) {
        return Err(problem(format!("the box's rows are {row} bytes, not a multiple of 16"), t.span));
    }
    if span_bytes != 0 && row != u64::from(span_bytes) {
        return Err(problem(
            format!("with `swizzle={span_bytes}` the box's rows must be {span_bytes} bytes, not {row}"),
            t.span,
        ));
    }
    Ok(m)
}

/// A named type inside `ptr(...)`/`const(...)` that is not a scalar: an unknown type name.
fn unknown_named(t: &ast::TypeExpr) -> Option<ast::Ident> {
    match &t.kind {
        ast::TypeKind::Named(n) if Scalar::from_name(n).is_none() && n != "CUTensorMap" => {
            Some(ast::Ident { name: n.clone(), span: t.span })
        }
        ast::TypeKind::Const(inner) => unknown_named(inner),
        _ => None,
    }
}

/// A wgmma's accumulators are registers: the CUDA reads the asm's operands back into the
/// array right after the asynchronous issue, so shared or global memory given for them
/// holds garbage until the wait, and the simulator's `wgmma-pending` guards a thread-local
/// array only (review R27). The wgmma itself takes a thread-local array or a device
/// function's pointer parameter (`wrong-arguments`); this rule follows such parameters
/// through every chain of calls. A parameter is an accumulator parameter when its
/// function gives it (or a view of it) to a wgmma as the accumulators, or passes it for
/// another function's accumulator parameter (a fixpoint over `accs`, one per function, in
/// id order). Every call must give an accumulator parameter memory rooted at a thread-local
/// array or at one of the caller's own accumulator parameters (`pointer-argument`, in
/// unsafe code too). By induction over the call chain from the kernel, whose own pointers
/// are global memory and can be neither, every wgmma's accumulators are then a thread-local
/// array of some caller.
fn accumulators(g: &Globals, accs: &[ctx::AccFacts], errors: &mut Vec<TypeError>) {
    let mut marked: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    for (f, facts) in accs.iter().enumerate() {
        marked.extend(facts.wgmma.iter().map(|&p| (f, p)));
    }
    if marked.is_empty() {
        return;
    }
    loop {
        let mut grew = false;
        for (f, facts) in accs.iter().enumerate() {
            for a in &facts.args {
                if let ctx::AccRoot::Param(p) = a.root
                    && marked.contains(&(a.callee.0 as usize, a.param))
                {
                    grew |= marked.insert((f, p));
                }
            }
        }
        if !grew {
            break;
        }
    }
    for (f, facts) in accs.iter().enumerate() {
        for a in &facts.args {
            let ok = match a.root {
                ctx::AccRoot::Local => true,
                ctx::AccRoot::Param(p) => marked.contains(&(f, p)),
                ctx::AccRoot::Other => false,
            };
            if !ok && marked.contains(&(a.callee.0 as usize, a.param)) {
                let sig = g.sig(a.callee);
                errors.push(TypeError::PointerArgument {
                    param: sig.params.get(a.param).map_or_else(String::new, |p| p.name.clone()),
                    problem: PointerProblem::NotThreadLocal { name: a.name.clone(), callee: sig.name.clone() },
                    span: a.span,
                    help: Some(
                        "declare the accumulators `acc : float[N / 2] @ thread[1]` in the caller and pass `acc`".into(),
                    ),
                });
            }
        }
    }
}

/// Reports every cycle of the call graph once, at a call inside it.
fn recursion(g: &Globals, edges: &[Vec<(FnId, Span)>], errors: &mut Vec<TypeError>) {
    // Tarjan's strongly connected components, iteratively; a component with more than one
    // function, or one function calling itself, is a cycle.
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&(w, _)) = edges[v].get(*i) {
                *i += 1;
                let w = w.0 as usize;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = stack.pop().expect("component on stack");
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                let self_loop = comp.len() == 1 && edges[v].iter().any(|(t, _)| t.0 as usize == v);
                if comp.len() > 1 || self_loop {
                    comp.sort();
                    let first = comp[0];
                    let span = edges[first]
                        .iter()
                        .find(|(t, _)| comp.contains(&(t.0 as usize)))
                        .map(|(_, s)| *s)
                        .expect("a call inside the cycle");
                    errors.push(TypeError::Recursion {
                        cycle: comp.iter().map(|&c| g.sigs[c].name.clone()).collect(),
                        span,
                    });
                }
            }
        }
    }
}

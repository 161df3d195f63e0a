//! Conversion of [`TypeError`]s into diagnostics with stable codes.
//!
//! Messages say "broader" and "narrower" (never "higher"/"lower"), name perspectives in
//! source syntax (`thread[32]`), and point secondary labels at where a variable got its
//! perspective or where the enclosing group began.

use crate::error::{
    ArgsProblem, BoundProblem, ClaimProblem, Culprit, Expected, Found, IndexFnProblem, IndexProblem, NarrowProblem,
    PerspProblem, PointerProblem, ReturnProblem, TypeError, VectorProblem,
};
use crate::ty::Ty;
use prism_diag::Diagnostic;

/// Labels saying where a non-uniform value comes from: its declaration, and its use when
/// that is only part of the flagged expression.
fn culprit_labels(d: Diagnostic, c: &Culprit) -> Diagnostic {
    let primary = d.primary.span;
    let part_of_bigger = primary.len() > c.span.len() + 2;
    let d = if part_of_bigger || c.origin.is_none() {
        d.with_secondary(c.span, format!("{} is at {}", c.what, c.persp))
    } else {
        d
    };
    match c.origin {
        Some(o) if o != c.span => d.with_secondary(o, format!("{} is declared at {} here", c.what, c.persp)),
        _ => d,
    }
}

impl TypeError {
    /// The diagnostic users see for this error.
    pub fn to_diagnostic(&self) -> Diagnostic {
        use TypeError::*;
        match self {
            // Diagnostic: unknown-name
            UnknownName { name, span, help } => {
                let d = Diagnostic::error("unknown-name", format!("unknown name `{name}`"), *span)
                    .with_label("not defined in this scope");
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: unknown-type
            UnknownType { name, span } => Diagnostic::error("unknown-type", format!("unknown type `{name}`"), *span)
                .with_label("not a Prism type")
                .with_help(
                    "scalar types are bool, int, uint, int64, uint64, half, bf16, float, double; \
                     constructors are T[n], ptr(T), const(T), constexpr(T), shared(T[n])",
                ),
            // Diagnostic: duplicate-definition
            Duplicate { name, span, first } => {
                Diagnostic::error("duplicate-definition", format!("`{name}` is defined twice"), *span)
                    .with_label("defined again here")
                    .with_secondary(*first, "first defined here")
                    .with_help("pick another name, or assign to the existing variable without `: type`")
            }
            // A repeated import is harmless in Python, but a name is bound once per module:
            // say so, rather than give the help for a variable declared twice.
            DuplicateImport { name, span, first } => Diagnostic::error(
                "duplicate-definition",
                format!("`{name}` is already bound in this module; this import binds it again"),
                *span,
            )
            .with_label("bound again here")
            .with_secondary(*first, "first bound here")
            .with_help(
                "import each name once: remove this import if it repeats the first, or bind it under another name with `as`",
            ),
            InInstance { inner, calls } => {
                // A long chain (a generic function instantiating itself) keeps the two ends:
                // the instance at fault and the user's call that began it.
                let label = |d: Diagnostic, (instance, call): &(String, prism_span::Span)| {
                    d.with_secondary(*call, format!("in `{instance}`, instantiated here"))
                };
                if calls.len() <= 3 {
                    calls.iter().fold(inner.to_diagnostic(), label)
                } else {
                    let d = label(label(inner.to_diagnostic(), &calls[0]), &calls[calls.len() - 1]);
                    d.with_note(format!("made through {} more instances between these calls", calls.len() - 2))
                }
            }
            // Filtered out before rendering (`check_units`); a note if it ever is shown.
            Poisoned { span } => Diagnostic::note("unknown-name", "a name whose definition failed", *span),
            UnresolvedImport { name, module, span, known } => {
                let d = Diagnostic::error(
                    "unresolved-import",
                    format!("module `{module}` defines no `{name}`"),
                    *span,
                )
                .with_label("not defined there")
                .with_note("a module exports the functions and constants it defines itself, not the names it imports");
                if known.is_empty() {
                    d
                } else {
                    d.with_help(format!("it defines: {}", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")))
                }
            }
            ReservedName { name, span } => Diagnostic::error(
                "duplicate-definition",
                format!("`{name}` is the name of a built-in"),
                *span,
            )
            .with_label("already defined by Prism")
            .with_note("intrinsics, casts and `id` are defined in every file")
            .with_help("pick another name for the function"),
            // Diagnostic: type-mismatch
            Mismatch { expected, found, span, context, help } => {
                let d = Diagnostic::error(
                    "type-mismatch",
                    format!("expected {}, found {}", expected_words(expected), found_words(found)),
                    *span,
                )
                    .with_label(context.clone());
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: wrong-arguments
            WrongArguments { callee, problem, span, help } => {
                let d = Diagnostic::error("wrong-arguments", format!("wrong arguments to `{callee}`: {}", args_words(problem)), *span);
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: vector-access
            VectorAccess { callee, problem, span, lambda } => {
                let d = match problem {
                    VectorProblem::Width { n, elem } => Diagnostic::error(
                        "vector-access",
                        format!(
                            "`{callee}` of {n} `{}` elements: a vector access is 4, 8 or 16 bytes of at least two elements",
                            elem.name()
                        ),
                        *span,
                    )
                    .with_label(format!("{n} × {} bytes", elem.size()))
                    .with_help(format!(
                        "a `{}` vector has {}",
                        elem.name(),
                        [2u64, 4, 8, 16]
                            .iter()
                            .filter(|k| matches!(*k * elem.size(), 4 | 8 | 16))
                            .map(|k| k.to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                            + " elements"
                    )),
                    VectorProblem::View { name } => Diagnostic::error(
                        "vector-access",
                        format!("`{callee}` through `{name}`, whose consecutive elements are not consecutive in memory"),
                        *span,
                    )
                    .with_label("the access reaches the elements next to this one in memory")
                    .with_note("elements next to this one in memory may belong to another unit of the partition"),
                    VectorProblem::Bounds { name, first, n, len } => Diagnostic::error(
                        "vector-access",
                        format!(
                            "`{callee}` of elements {first}..{} of `{name}`, which has {len}",
                            first + n
                        ),
                        *span,
                    )
                    .with_label("past the end of the array"),
                };
                match lambda {
                    Some(l) => d
                        .with_secondary(*l, "this indexing function is not its last index plus a start")
                        .with_help(
                            "partition with a function offset in its last index (`lambda i: start + i`, `lambda q, i: start(q) + i`; a view it narrows takes one index, `lambda i: start + i`), or access element by element",
                        ),
                    None => d,
                }
            }
            // Diagnostic: bad-index
            BadIndex { problem, span, help } => {
                let d = Diagnostic::error("bad-index", index_words(problem), *span);
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: not-constant
            NotConstant { what, span, culprit } => {
                let d = Diagnostic::error("not-constant", format!("{what} must be a compile-time constant"), *span)
                    .with_label("not known at compile time");
                match culprit {
                    Some((w, s)) => d
                        .with_secondary(*s, format!("{w} is a run-time value"))
                        .with_help("use literals and `constexpr` names"),
                    None => d.with_help("use literals and `constexpr` names"),
                }
            }
            // Diagnostic: const-eval
            ConstEval { reason, span } => {
                Diagnostic::error("const-eval", format!("compile-time evaluation failed: {}", const_words(reason)), *span)
            }
            // Diagnostic: assign-to-const
            AssignToConst { name, kind, span, decl } => {
                Diagnostic::error("assign-to-const", format!("cannot assign to {kind} `{name}`"), *span)
                    .with_label("assignment")
                    .with_secondary(*decl, format!("`{name}` is declared {kind} here"))
            }
            ConstWithoutInit { name, kind, span } => Diagnostic::error(
                "assign-to-const",
                format!("{kind} `{name}` must be given its value where it is declared"),
                *span,
            )
            .with_label("no initialiser")
            .with_help(format!("write `{name} : {kind}(T) = value`")),
            // Diagnostic: bad-define
            BadDefine { problem, span } => Diagnostic::error("bad-define", problem.clone(), *span)
                .with_help("`-D NAME=VALUE` replaces the value of the file's `NAME : constexpr(T) = ...`"),
            // Diagnostic: bad-unroll
            BadUnroll { problem, span } => Diagnostic::error("bad-unroll", problem.clone(), *span)
                .with_help("write `unroll=True` (constant bounds), `unroll=False`, or a constant count such as `unroll=4`"),
            // Diagnostic: unsupported
            Unsupported { what, span, help } => {
                let d = Diagnostic::error("unsupported", format!("{what} is not supported"), *span);
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: pointer-alias
            PointerAlias { name, span, help } => Diagnostic::error(
                "pointer-alias",
                format!("`{name}` refers to memory and cannot be used as a value"),
                *span,
            )
            .with_label("pointer used as a value")
            .with_note("names of memory can be indexed, passed to functions, and narrowed with partition, claim or async; copying one would make two names for the same memory, which the synchronisation analysis cannot follow")
            .with_help(help.clone()),
            // Diagnostic: invalid-perspective
            InvalidPerspective { text, problem, span } => {
                Diagnostic::error("invalid-perspective", format!("invalid perspective `{text}`"), *span).with_label(
                    match problem {
                        PerspProblem::NotInteger => "the unit count must be an integer",
                        PerspProblem::NoUnits => "a perspective has at least one unit",
                        PerspProblem::OneGrid => "a launch has exactly one grid",
                        PerspProblem::TooMany => "too many units",
                    },
                )
            }
            // Diagnostic: tensor-map
            TensorMap { problem, span } => Diagnostic::error("tensor-map", format!("invalid tensor map: {problem}"), *span)
                .with_note("a tensor map's box is what one TMA copy moves: 2 or 3 dimensions of 1 to 256 elements, rows of a multiple of 16 bytes, and with `swizzle=S` (32, 64 or 128) rows of exactly S bytes"),
            // Diagnostic: invalid-bound
            InvalidBound { problem, span, help } => {
                let d = Diagnostic::error("invalid-bound", format!("invalid perspective bound: {}", bound_words(problem)), *span);
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: param-perspective
            ParamPerspective { what, persp, entry, span } => Diagnostic::error(
                "param-perspective",
                format!("{what} at {persp} is broader than the function's entry perspective {entry}"),
                *span,
            )
            .with_label(format!("{persp} is not narrower than {entry}"))
            .with_note("a function runs as one unit of its entry perspective; a value uniform over a broader perspective gives it nothing more")
            .with_help(if what.starts_with("dynamic shared array") {
                // Its perspective is not written: each block has one, shared by all its units.
                "enter the kernel at `block[1]` or broader (`@requires(grid[1], block[1], ...)`): units narrower than a block would share one array".to_string()
            } else {
                format!("declare it `@ {entry}` or narrower")
            }),
            // Diagnostic: param-perspective
            KernelPointerNarrower { name, persp, entry, span, map_decl: None } => Diagnostic::error(
                "param-perspective",
                format!("writable pointer parameter `{name}` at {persp} is narrower than the kernel's entry perspective {entry}"),
                *span,
            )
            .with_label(format!("one buffer for all {persp} units of the kernel's {entry} unit"))
            .with_note(format!("a launch passes the same pointers to every unit, so the {persp} units of one {entry} unit share this buffer, while synchronisation inference would order its accesses within one {persp} unit only"))
            .with_help(format!("declare it `@ {entry}` (the default) and partition it where units need their own parts, or `ptr(const(T))` if the kernel only reads it")),
            KernelPointerNarrower { name, persp, entry, span, map_decl: Some(decl) } => Diagnostic::error(
                "param-perspective",
                format!("a store through tensor map `{name}`, whose perspective {persp} is narrower than the kernel's entry perspective {entry}"),
                *span,
            )
            .with_label(format!("stores into the one array all {persp} units of the kernel's {entry} unit share"))
            .with_secondary(*decl, format!("`{name}` is declared at {persp} here"))
            .with_note(format!("a launch passes the same maps to every unit, so the {persp} units of one {entry} unit share this array, while synchronisation inference would order its stores within one {persp} unit only"))
            .with_help(format!("declare it `@ {entry}` (the default) and narrow it with a partition, or only load through it")),
            // Diagnostic: group-broadens
            GroupBroadens { target, code, span, code_origin } => {
                let d = Diagnostic::error(
                    "group-broadens",
                    format!("cannot group to {target} from {code} code"),
                    *span,
                )
                .with_label(if target.level == code.level {
                    format!("{} is not a multiple of {}: {target} is broader than {code}", code.n, target.n)
                } else {
                    format!("{target} is broader than {code}")
                })
                .with_note("`group` divides the current unit into narrower units; it cannot widen the set of threads");
                match code_origin {
                    Some(s) => d.with_secondary(*s, format!("the code is at {code} from here")),
                    None => d,
                }
            }
            // Diagnostic: group-indivisible
            GroupIndivisible { target, code, span, code_origin, help } => {
                let mut d = Diagnostic::error(
                    "group-indivisible",
                    format!("{code} does not divide evenly into {target} units"),
                    *span,
                )
                .with_label(format!("{target} units do not evenly divide {code}"));
                if let Some(s) = code_origin {
                    d = d.with_secondary(*s, format!("the code is at {code} from here"));
                }
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: split-exceeds
            SplitExceeds { total, available, unit, code, span, last_case } => Diagnostic::error(
                "split-exceeds",
                format!("split cases need {total} units of {unit} but {code} code has {available}"),
                *span,
            )
            .with_label(format!("{total} > {available}"))
            .with_secondary(*last_case, "this case does not fit")
            .with_note("all branches of a split run at the same time, so each needs its own units"),
            // Diagnostic: split-misaligned
            SplitMisaligned { count, offset, available, unit, span, size_divides } => {
                let d = Diagnostic::error(
                    "split-misaligned",
                    format!("split case of {count} units of {unit} is not aligned"),
                    *span,
                );
                if !*size_divides {
                    d.with_label(format!("{count} does not divide the {available} available units"))
                        .with_note("a unit of n must start at a multiple of n in every enclosing unit, so n must divide the units available")
                } else {
                    d.with_label(format!("starts at unit {offset}, which is not a multiple of {count}"))
                        .with_note("each branch starts where the previous ones end, and a branch of n units must start at a multiple of n")
                        .with_help("order the cases largest first, or pad with an unused case")
                }
            }
            // Diagnostic: split-level
            SplitLevel { unit, code, span, help } => {
                let d = Diagnostic::error("split-level", format!("cannot split {code} code into {unit} units"), *span)
                    .with_label(format!("{code} code holds no whole {unit} units"));
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: read-up
            ReadUp { sink, code, culprit, span } => {
                let d = Diagnostic::error(
                    "read-up",
                    format!("{} depends on {}, which may differ within a {code} unit", sink.describe(), culprit.what),
                    *span,
                )
                .with_label(format!("{code} code needs a value that is the same in all its threads"));
                culprit_labels(d, culprit)
                    .with_note(format!(
                        "code at {code} runs together on every thread of a {code} unit; a condition that differs between them would split the unit and make any collective inside diverge"
                    ))
                    .with_help(format!("decide this in code at {} (e.g. inside `with group({})`)", culprit.persp, culprit.persp))
            }
            ReadUpMemory { name, persp, code, span, origin } => Diagnostic::error(
                "read-up",
                format!("`{name}` lives at {persp} and cannot be read in {code} code"),
                *span,
            )
            .with_label(format!("read in {code} code"))
            .with_secondary(*origin, format!("`{name}` lives at {persp}"))
            .with_help(format!("read it inside `with group({persp})`")),
            // Diagnostic: write-down
            WriteBroader { name, var_persp, code, span, origin } => Diagnostic::error(
                "write-down",
                format!("cannot write `{name}`, which lives at {var_persp}, from {code} code"),
                *span,
            )
            .with_label(format!("written by each {code} unit"))
            .with_secondary(*origin, format!("`{name}` lives at {var_persp}"))
            .with_note(format!(
                "every thread of a {var_persp} unit holds the same `{name}`; a write from {code} code would let the threads disagree"
            ))
            .with_help(format!("write it from {var_persp} code, or declare it at {code}")),
            DeclBroader { name, var_persp, code, span } => Diagnostic::error(
                "write-down",
                format!("cannot declare `{name}` at {var_persp} in {code} code"),
                *span,
            )
            .with_label(format!("{var_persp} is not narrower than the code's {code}"))
            .with_help(format!("declare it outside the narrower scope, or at {code} or narrower")),
            NarrowValue { target, target_persp, culprit, span, origin } => {
                let d = Diagnostic::error(
                    "write-down",
                    format!("value for {target} (at {target_persp}) depends on {}, which may differ within a {target_persp} unit", culprit.what),
                    *span,
                )
                .with_label(format!("must be the same in all threads of a {target_persp} unit"));
                let d = culprit_labels(d, culprit);
                let d = match origin {
                    Some(o) => d.with_secondary(*o, format!("{target} lives at {target_persp}")),
                    None => d,
                };
                let help = if target == "the return value" {
                    format!(
                        "return a value that is the same in every thread of the unit (reduce it, or broadcast one lane's with `shfl(v, 0)`), or declare the return type `@ {}`",
                        culprit.persp
                    )
                } else {
                    format!("store it in a variable at {} or narrower", culprit.persp)
                };
                d.with_note("information flows only from broader perspectives to narrower ones").with_help(help)
            }
            // Diagnostic: id-without-target
            IdWithoutTarget { span } => Diagnostic::error(
                "id-without-target",
                "`id()` needs a variable to take its perspective from",
                *span,
            )
            .with_label("no target perspective here")
            .with_note("`id()` is the index of the target's unit inside the code's unit, so it means nothing without a target")
            .with_help("assign it first: `i : int @ thread[1] = id()`"),
            // Diagnostic: id-not-narrower
            IdNotNarrower { target, code, span } => Diagnostic::error(
                "id-not-narrower",
                format!("`id()` for a {target} target in {code} code"),
                *span,
            )
            .with_label(format!("{target} is not strictly narrower than {code}"))
            .with_note(format!("the code's unit holds exactly one {target} unit, so its index would always be 0"))
            .with_help("store `id()` in a variable at a narrower perspective"),
            // Diagnostic: raw-index
            RawIndex { name, span } => Diagnostic::error(
                "raw-index",
                format!("`{name}` is only available in `with unsafe:`"),
                *span,
            )
            .with_label("raw hardware access")
            .with_help("use `id()` for indices relative to the current perspective, or wrap the code in `with unsafe:`"),
            // Diagnostic: shared-outside-block
            SharedOutsideBlock { code, declared, span } => {
                let d = Diagnostic::error(
                    "shared-outside-block",
                    "shared memory is allocated only by block[1] code, at block[1]",
                    *span,
                );
                let d = match declared {
                    Some(p) if *p != crate::perspective::Persp::BLOCK => d.with_label(format!("declared at {p}")),
                    _ => d.with_label(format!("allocated in {code} code")),
                };
                d.with_note("shared memory belongs to a block; one allocation serves all its threads")
            }
            // Diagnostic: smem-budget
            SmemBudget { function, need, budget, span, biggest } => {
                let d = Diagnostic::error(
                    "smem-budget",
                    format!("`{function}` needs {need} bytes of shared memory but declares smem={budget}"),
                    *span,
                )
                .with_label(format!("budget {budget} bytes"));
                let d = match biggest {
                    Some((s, m)) => d.with_secondary(*s, m.clone()),
                    None => d,
                };
                d.with_help(format!("declare `smem={need}` or more in `@requires`"))
            }
            // Diagnostic: smem-device-limit
            SmemDeviceLimit { function, need, limit, arch, span } => Diagnostic::error(
                "smem-device-limit",
                format!("kernel `{function}` needs {need} bytes of shared memory; {arch} allows {limit}"),
                *span,
            )
            .with_label("too much shared memory for the target")
            .with_help("use less shared memory, or check for a newer `--arch`"),
            // Diagnostic: store-perspective
            StorePerspective { name, ptr_persp, code, span, origin } => {
                let d = Diagnostic::error(
                    "store-perspective",
                    format!("store through `{name}` (at {ptr_persp}) from {code} code"),
                    *span,
                );
                let d = if *ptr_persp != crate::perspective::Persp::THREAD {
                    d.with_label(format!("`{name}` is shared by every thread of a {ptr_persp} unit"))
                        .with_secondary(*origin, format!("`{name}` lives at {ptr_persp}"))
                        .with_help(format!(
                            "give each thread its own view first: `with partition({name}, p=thread[1], f=lambda i: ...) as mine:`"
                        ))
                } else {
                    d.with_label(format!("stores happen only in thread[1] code, this is {code} code"))
                        .with_help("store inside `with group(thread[1]):`")
                };
                d.with_note("Prism permits writes to thread-shared memory only from the view of a single thread")
            }
            // Diagnostic: store-through-const
            StoreThroughConst { name, span, origin } => Diagnostic::error(
                "store-through-const",
                format!("cannot store through `{name}`, a pointer to const"),
                *span,
            )
            .with_label("store")
            .with_secondary(*origin, format!("`{name}` is declared read-only here")),
            // Diagnostic: hidden-name
            Hidden { name, span, hidden_at, construct, new_name } => Diagnostic::error(
                "hidden-name",
                format!("`{name}` is hidden inside this {construct}"),
                *span,
            )
            .with_label("used while hidden")
            .with_secondary(*hidden_at, format!("`{name}` is narrowed to `{new_name}` here"))
            .with_note(format!(
                "inside `{construct}`, the memory is reached only through `{new_name}`, so the synchronisation analysis knows every access"
            ))
            .with_help(format!("use `{new_name}` here")),
            // Diagnostic: not-partitionable
            NotPartitionable { name, construct, found, span, origin } => {
                let d = Diagnostic::error(
                    "not-partitionable",
                    format!("`{construct}` needs a pointer or shared array; `{name}` is {found}"),
                    *span,
                )
                .with_label("not thread-shared memory".to_string());
                let d = match origin {
                    Some(o) => d.with_secondary(*o, format!("`{name}` declared here")),
                    None => d,
                };
                d.with_note("local variables and arrays already belong to one thread; only memory shared between threads is narrowed")
            }
            // Diagnostic: not-partitionable
            PartitionOfMultiIndexView { name, params, span, origin } => Diagnostic::error(
                "not-partitionable",
                format!("`partition` of `{name}`, a view indexed by {params} indices"),
                *span,
            )
            .with_label("a partition's indexing function returns one index".to_string())
            .with_secondary(*origin, format!("`{name}`'s function takes {params} indices"))
            .with_note("a view partitioned again is indexed by one linear index, which a view of several indices does not take")
            .with_help("partition what it narrows with a function of one index, or index this view directly"),
            // Diagnostic: partition-perspective
            PartitionPerspective { construct, problem, span, origin, help } => {
                let mut d = Diagnostic::error(
                    "partition-perspective",
                    format!("this `{construct}` does not fit the code: {}", narrow_words(problem)),
                    *span,
                );
                if let Some(o) = origin {
                    d = d.with_secondary(*o, "the memory's perspective comes from here");
                }
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: partition-index-fn
            PartitionIndexFn { problem, span, culprit } => {
                let d = Diagnostic::error("partition-index-fn", format!("bad indexing function: {}", index_fn_words(problem)), *span);
                match culprit {
                    Some(c) => culprit_labels(d, c),
                    None => d,
                }
            }
            // Diagnostic: claim-not-owned
            ClaimNotOwned { name, persp, span, claim, problem } => Diagnostic::error(
                "claim-not-owned",
                format!(
                    "`{name}` is claimed by one {persp} unit, but {}",
                    match problem {
                        ClaimProblem::Grouped => "an enclosing `group` runs this in every unit of it".to_string(),
                        ClaimProblem::EveryUnit { code } => format!("every unit of the code at {code} can reach this use"),
                    }
                ),
                *span,
            )
            .with_label("used here")
            .with_secondary(*claim, "claimed here")
            .with_help(format!("use it inside one branch of `match split(...)` whose units fit in one {persp} unit")),
            // Diagnostic: claim-multiple-branches
            ClaimMultipleBranches { name, span, first } => Diagnostic::error(
                "claim-multiple-branches",
                format!("claimed `{name}` is used in two branches of one split"),
                *span,
            )
            .with_label("second branch uses it")
            .with_secondary(*first, "first branch uses it")
            .with_note("the branches of a split run at the same time on different threads; a claim gives the memory to one unit"),
            // Diagnostic: async-misuse
            AsyncMisuse { name, span, origin } => Diagnostic::error(
                "async-misuse",
                format!("`{name}` may only be the destination of an asynchronous copy"),
                *span,
            )
            .with_label("other use")
            .with_secondary(*origin, "made by `async` here")
            .with_help("pass it as the first argument of `cp_async(...)` or a TMA copy; read the memory after the `async` block"),
            // Diagnostic: pipeline-form
            PipelineForm { problem, span, origin, help } => {
                let mut d = Diagnostic::error("pipeline-form", problem.clone(), *span).with_label("here");
                if let Some(o) = origin {
                    d = d.with_secondary(*o, "see here");
                }
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: pipeline-fill
            PipelineFill { what, span, fill } => Diagnostic::error(
                "pipeline-fill",
                format!("a pipeline's fill {what}"),
                *span,
            )
            .with_label("not allowed in a fill")
            .with_secondary(*fill, "this fill runs ahead of the loop, for later tiles")
            .with_help("compute the copies' addresses from constants, parameters and loop variables, and touch memory only with `cp_async` into the fill's slots"),
            // Diagnostic: call-perspective
            CallPerspective { callee, required, code, span, broadens, help } => {
                let d = Diagnostic::error(
                    "call-perspective",
                    format!("`{callee}` needs {required} code, but it is called from {code} code"),
                    *span,
                )
                .with_label(if *broadens {
                    format!("{code} code is narrower than {required}")
                } else {
                    format!("{code} code does not divide evenly into {required} units")
                });
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
                        CallGuarantee { callee, what, need, span, help } => Diagnostic::error(
                "call-perspective",
                format!("`{callee}` needs {what} to be a multiple of {need}"),
                *span,
            )
            .with_label("this function's bound does not guarantee it")
            .with_note("a function's `@requires` entries are promises about the launch that every caller must keep")
            .with_help(help.clone()),
            DivByZero { span } => {
                Diagnostic::error("const-eval", "division by zero", *span).with_label("the divisor is the constant 0")
            }
            SplitStraddles { persp, span, help } => {
                let d = Diagnostic::error("split-misaligned", format!("a {persp} unit of this split may span two blocks"), *span)
                    .with_label(format!("the bound does not guarantee that {persp} units fit in a block"));
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            // Diagnostic: argument-perspective
            ArgumentPerspective { param, param_persp, culprit, span } => {
                let d = Diagnostic::error(
                    "argument-perspective",
                    format!("argument for `{param}` (at {param_persp}) depends on {}, which may differ within a {param_persp} unit", culprit.what),
                    *span,
                )
                .with_label(format!("must be the same in all threads of a {param_persp} unit"));
                culprit_labels(d, culprit).with_note("a parameter's perspective is a promise the callee relies on")
            }
            // Diagnostic: pointer-argument
            CaptureAssigned { name, view, span, lambda, decl } => Diagnostic::error(
                "capture-assigned",
                format!("`{name}` is assigned while `{view}` lives, but `{view}`'s indexing function reads it"),
                *span,
            )
            .with_label(format!("`{name}` changes here"))
            .with_secondary(*lambda, format!("`{view}`'s indexing function reads `{name}`"))
            .with_secondary(*decl, format!("`{name}` is declared here"))
            .with_note(format!("the indexing function is evaluated again at every access through `{view}`, so a change to `{name}` would move the elements each unit owns in the middle of the scope"))
            .with_help(format!("copy `{name}` into a `const` variable before the partition and index with that, or assign `{name}` after the scope ends")),
            ArgumentAlias { callee, root, written, params: (pa, pb), span, first } => Diagnostic::error(
                "argument-alias",
                format!("`{callee}` gets `{root}` for both `{pa}` and `{pb}`, and may write `{written}`"),
                *span,
            )
            .with_label(format!("`{root}` again, for `{pb}`"))
            .with_secondary(*first, format!("`{root}` for `{pa}`"))
            .with_note(format!("`{callee}` is checked and synchronised on its own, assuming its pointer parameters name different memory; a write through one and an access through the other would not be ordered"))
            .with_help("pass different memory, or declare the parameters `ptr(const(T))` if the callee only reads them"),
            PointerArgument { param, problem, span, help } => {
                let d = Diagnostic::error(
                    "pointer-argument",
                    format!("bad argument for `{param}`: {}", pointer_words(problem)),
                    *span,
                );
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            NotAPointer { param, name, span, lambda } => Diagnostic::error(
                "pointer-argument",
                format!("bad argument for `{param}`: `{name}` is not a pointer"),
                *span,
            )
            .with_label("a partition passed as a pointer")
            .with_secondary(*lambda, "this indexing function is not `start + i`")
            .with_note("a pointer names consecutive elements; a partition is one only when its function is an offset, `lambda i: start + i`")
            .with_help("pass the memory it partitions and index inside the callee, or partition with an offset function"),
            // Diagnostic: recursion
            Recursion { cycle, span } => Diagnostic::error(
                "recursion",
                if cycle.len() == 1 {
                    format!("`{}` calls itself", cycle[0])
                } else {
                    format!("recursive calls: {}", cycle.iter().chain(cycle.first()).map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" -> "))
                },
                *span,
            )
            .with_label("call in a cycle")
            .with_note("GPU stacks are small and shared memory is allocated statically, so Prism rejects recursion"),
            // Diagnostic: kernel-call
            KernelCall { name, span, def } => Diagnostic::error("kernel-call", format!("kernel `{name}` cannot be called from device code"), *span)
                .with_label("call to a kernel")
                .with_secondary(*def, "declared `@prism(\"global\")` here")
                .with_help("make it `@prism(\"device\")`, or launch it from the host"),
            // Diagnostic: return-value
            ReturnValue { problem, span } => Diagnostic::error("return-value", return_words(problem), *span),
            // Diagnostic: missing-return
            MissingReturn { function, span } => {
                Diagnostic::error("missing-return", format!("`{function}` can end without returning a value"), *span)
                    .with_label("declared to return a value")
                    .with_help("end every path of the body with a `return` of a value (`return total`)")
            }
            // Diagnostic: divergent-exit
            DivergentExit { what, crossing, span, scope } => Diagnostic::error(
                "divergent-exit",
                format!("`{what}` cannot leave the enclosing `{crossing}`"),
                *span,
            )
            .with_label(format!("`{what}` inside the {crossing}"))
            .with_secondary(*scope, format!("the {crossing} starts here"))
            .with_note("only part of the threads would leave; the rest would continue, splitting the unit the enclosing code runs on")
            .with_help("set a flag and test it after the scope"),
            // Diagnostic: break-outside-loop
            BreakOutsideLoop { what, span } => {
                Diagnostic::error("break-outside-loop", format!("`{what}` outside a loop"), *span).with_label("not in a loop")
            }
            // Diagnostic: collective-in-condition
            CollectiveInCondition { callee, span, guard } => Diagnostic::error(
                "collective-in-condition",
                format!("collective `{callee}` is evaluated only when a condition holds"),
                *span,
            )
            .with_label("collective call")
            .with_secondary(*guard, "evaluated conditionally because of this")
            .with_help("call it in its own statement and use the result"),
        }
    }
}

/// The words of a `type-mismatch`'s expectation.
fn expected_words(e: &Expected) -> String {
    const ATOMIC: &str = "`int`, `uint`, `int64`, `uint64`, `float` or `double`";
    const ATOMIC_BITS: &str = "`int`, `uint`, `int64` or `uint64`";
    match e {
        Expected::Scalar(s) => format!("`{}`", s.name()),
        Expected::Place(s) => format!("a `{}` place", s.name()),
        Expected::Memory(s) => format!("memory of `{}`", s.name()),
        Expected::AtomicMemory => format!("memory of {ATOMIC}"),
        Expected::AtomicType => ATOMIC.to_string(),
        Expected::AtomicBitsMemory => format!("memory of {ATOMIC_BITS}"),
        Expected::AtomicBitsType => ATOMIC_BITS.to_string(),
        Expected::Bits32 => "a number of at most 32 bits (`int`, `uint`, `float`, `half` or `bf16`)".into(),
        Expected::Opaque(n) => format!("`{n}`"),
        Expected::Integer => "an integer".into(),
        Expected::Integers => "integers".into(),
        Expected::Float => "a floating-point value".into(),
        Expected::Number => "a number".into(),
        Expected::Numbers => "numbers".into(),
        Expected::Value => "a value".into(),
        Expected::ScalarValue => "a scalar value".into(),
        Expected::ScalarPlace => "a scalar place".into(),
        Expected::OperatorOperand => "a type the operator applies to".into(),
    }
}

/// The words of what a `type-mismatch` found.
fn found_words(f: &Found) -> String {
    match f {
        Found::Type(Ty::Void) => "no value".into(),
        Found::Type(t) => format!("`{t}`"),
        Found::Memory(s) => format!("memory of `{}`", s.name()),
        Found::Str => "a string".into(),
        Found::Array(n) => format!("the array `{n}`"),
        Found::Handle(n) => format!("the handle `{n}`"),
    }
}

/// The words of a `bad-index`.
fn index_words(p: &IndexProblem) -> String {
    match p {
        IndexProblem::Rank { name, rank, given } => format!(
            "`{name}` takes {rank} ind{} but {given} {} given",
            if *rank == 1 { "ex" } else { "ices" },
            if *given == 1 { "was" } else { "were" }
        ),
        IndexProblem::OutOfBounds { name, index, dim } => {
            format!("index {index} is out of bounds for `{name}` (dimension {dim})")
        }
        IndexProblem::NotAName => "only named arrays and pointers can be indexed".into(),
        IndexProblem::NotIndexable { name, ty: None } => format!("`{name}` is not an array or pointer"),
        IndexProblem::NotIndexable { name, ty: Some(t) } => format!("`{name}` is a `{t}`, not an array or pointer"),
    }
}

/// The words of a `pointer-argument`, after "bad argument for `p`: ".
fn pointer_words(p: &PointerProblem) -> String {
    match p {
        PointerProblem::NotAName => "expected the name of a pointer, shared array or local array".into(),
        PointerProblem::NotMemory { name, ty: None } => format!("`{name}` is not memory"),
        PointerProblem::NotMemory { name, ty: Some(t) } => format!("`{name}` is a `{t}`, not memory"),
        PointerProblem::Element { name, holds, wants } => {
            format!("`{name}` holds `{}` but the parameter points to `{}`", holds.name(), wants.name())
        }
        PointerProblem::ReadOnly { name } => format!("`{name}` is read-only but the parameter may be written"),
        PointerProblem::WritableElsewhere { name, lives, param } => format!(
            "`{name}` lives at {lives} but the parameter is a writable pointer at {param}; writable pointers must match exactly"
        ),
        PointerProblem::Narrower { name, lives, param } => {
            format!("`{name}` lives at {lives}, narrower than the parameter's {param}")
        }
        PointerProblem::LocalBroader { name, param } => format!(
            "`{name}` is a thread-local array, so every thread has its own copy; it is a writable pointer at thread[1] only, not at {param}"
        ),
        PointerProblem::NotShared { name } => {
            format!("`{name}` is not shared memory, but the parameter is `ptr(T, shared)`")
        }
        PointerProblem::NotThreadLocal { name, callee } => format!(
            "`{name}` is not a thread-local array, but `{callee}`'s parameter reaches a wgmma's accumulators, which are registers"
        ),
    }
}

/// The words of a `return-value`.
fn return_words(p: &ReturnProblem) -> String {
    match p {
        ReturnProblem::FromKernel => "a kernel cannot return a value".into(),
        ReturnProblem::Unexpected { function } => {
            format!("`{function}` has no return type, so `return` takes no value")
        }
        ReturnProblem::Missing { function, ty } => format!("`{function}` must return a value of type `{}`", ty.name()),
    }
}

/// The words of a `partition-perspective`, after "does not fit the code: ".
fn narrow_words(p: &NarrowProblem) -> String {
    match p {
        NarrowProblem::LivesElsewhere { name, lives, code } => {
            format!("`{name}` lives at {lives} but the code is at {code}")
        }
        NarrowProblem::NothingNarrowed { target } => {
            format!("{target} is the code's own perspective, so nothing is narrowed")
        }
        NarrowProblem::Broader { target, code } => format!("{target} is broader than the code's {code}"),
        NarrowProblem::Indivisible { target, code } => format!("{code} does not divide evenly into {target} units"),
    }
}

/// The words of a `partition-index-fn`, after "bad indexing function: ".
fn index_fn_words(p: &IndexFnProblem) -> String {
    match p {
        IndexFnProblem::NotALambda { name } => format!("`{name}` is not a lambda"),
        IndexFnProblem::NoParameters => {
            "it takes no parameters; it maps the new name's indices to the old name's".into()
        }
        IndexFnProblem::NotInteger { ty } => format!("it computes a `{ty}`, not an integer index"),
        IndexFnProblem::Varies { target, what } => {
            format!(
                "each {target} unit evaluates it, but it depends on {what}, which may differ within a {target} unit"
            )
        }
        IndexFnProblem::ReadsMemory { name } => format!(
            "it reads memory (`{name}`), which other threads may change while the view lives; read it into a `const` variable before the partition"
        ),
        IndexFnProblem::Calls { name } => format!(
            "it calls `{name}`; indexing functions must be pure arithmetic: they may call pure intrinsics and functions entered at `thread[1]` that take only values"
        ),
        IndexFnProblem::MapView { name } => format!(
            "`{name}` is a tensor map, whose stores write boxes by coordinates, not elements by index: a view of it is the whole map (`lambda i: i`), or a `claim`"
        ),
    }
}

/// The words of a `const-eval`, after "compile-time evaluation failed: ".
fn const_words(e: &crate::consts::ConstError) -> String {
    use crate::consts::ConstError::*;
    match e {
        DoesNotFit { value, ty } => format!("{value} does not fit in `{}`", ty.name()),
        NotConvertible { value, ty } => format!("{value} cannot be converted to `{}`", ty.name()),
        DivisionByZero => "division by zero".into(),
        ShiftRange { amount, ty } => format!("shift by {amount} is out of range for `{}`", ty.name()),
        NeedsBools => "`and`/`or` need booleans".into(),
        NotOnFloat { op } => format!("`{op}` is not defined on floating point"),
        NotOnBool { op } => format!("`{op}` is not defined on booleans"),
        MixedKinds => "operands of different kinds".into(),
        NotApplicable { op } => format!("`{op}` does not apply here"),
        ZeroStep => "the step of `range` is zero".into(),
        MulOverflow => "multiplication overflows".into(),
        CaseUnits { n } => format!("a case takes at least one unit, not {n}"),
        Alignment => "alignment must be a power of two between 1 and 4096".into(),
        ArraySize { n } => format!("array size {n} is not between 1 and 2^32"),
        FloatRange { value, ty } => format!(
            "{} does not fit in `{}` (its finite values lie within ±{})",
            // `70000`, but `1e39` rather than forty digits.
            if value.fract() == 0.0 && value.abs() < 1e16 { format!("{value}") } else { format!("{value:e}") },
            ty.name(),
            crate::consts::float_max_text(*ty)
        ),
    }
}

/// The words of an `invalid-bound`, after "invalid perspective bound: ".
fn bound_words(p: &BoundProblem) -> String {
    match p {
        BoundProblem::Smem => "`smem=` must be a non-negative integer (bytes)".into(),
        BoundProblem::Empty => "no perspectives given".into(),
        BoundProblem::TooLarge => "the perspectives' sizes are too large together".into(),
        BoundProblem::Indivisible { persp, entry } => {
            format!("{persp} does not fit evenly in the entry perspective {entry}")
        }
        BoundProblem::LaunchBoundsOnDevice => "launch bounds apply to kernels only".into(),
        BoundProblem::LaunchBoundsValue => "launch bounds must be a positive integer".into(),
        BoundProblem::MinBlocksValue => {
            "the blocks per multiprocessor of `@launch_bounds(n, m)` must be a constant from 1 to 32".into()
        }
        BoundProblem::LaunchBoundsMultiple { bound, multiple } => {
            format!(
                "launch bound {bound} is not a multiple of {multiple}, which the bound requires of threads per block"
            )
        }
        BoundProblem::BlockShape => "`block=` must be `[X]`, `[X, Y]` or `[X, Y, Z]` with positive constants, at most 1024 threads in all and 64 along z".into(),
        BoundProblem::BlockShapeOnDevice => "a block shape (`block=`) applies to kernels only".into(),
        BoundProblem::BlockShapeThreads { threads, multiple, launch_bounds } => match launch_bounds {
            Some(lb) if threads > lb => format!("the block shape has {threads} threads, more than `@launch_bounds({lb})`"),
            _ => format!(
                "the block shape has {threads} threads, not a multiple of {multiple}, which the bound requires of threads per block"
            ),
        },
    }
}

/// The words of a `wrong-arguments`, after "wrong arguments to `f`: ".
fn args_words(p: &ArgsProblem) -> String {
    match p {
        ArgsProblem::NoneOrDimension => "it takes no arguments, or one of `x`, `y`, `z`".into(),
        ArgsProblem::TypeArguments { params, given } => {
            format!("it takes {params} type argument{}, not {given}", if *params == 1 { "" } else { "s" })
        }
        ArgsProblem::NotAType => "a type argument must be a scalar type".into(),
        ArgsProblem::CannotInfer { param } => format!("no argument determines its type parameter `{param}`"),
        ArgsProblem::IdCoordinate { code, target } => format!(
            "a coordinate is a thread's in its block or a block's in the grid, not a {target} unit's in {code} code"
        ),
        ArgsProblem::TooMany { params } => {
            format!("it takes {params} argument{} but more were given", if *params == 1 { "" } else { "s" })
        }
        ArgsProblem::Twice { name } => format!("`{name}` is given twice"),
        ArgsProblem::NoSuchParameter { name } => format!("it has no parameter `{name}`"),
        ArgsProblem::Missing { names } => {
            format!("missing {}", names.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "))
        }
        ArgsProblem::CopyBytes => "`bytes` must be 4, 8 or 16".into(),
        ArgsProblem::CopyPartElement { bytes, elem, size } => {
            format!("`bytes` is {bytes}, not a whole number of the destination's `{elem}` elements ({size} bytes each)")
        }
        ArgsProblem::RegisterCount { regs } => {
            format!("`regs` is {regs}; setmaxnreg takes a multiple of 8 from 24 to 256 registers per thread")
        }
        ArgsProblem::PendingCount { n } => {
            format!("`pending` is {n}; wgmma_wait takes how many groups may stay in flight, 0 or more")
        }
        ArgsProblem::WgmmaN { n } => format!("`n` is {n}; wgmma takes N a multiple of 8 from 8 to 256"),
        ArgsProblem::WgmmaAccumulator { name } => {
            format!("the accumulators `{name}` are not a thread-local array; the tensor cores write registers")
        }
        ArgsProblem::WgmmaSize { name, what, has, needs } => {
            format!("`{name}` holds {has} elements, but this wgmma's {what} needs {needs}")
        }
        ArgsProblem::WgmmaSpan { span } => {
            format!("`span` is {span}; a swizzled wgmma reads tiles swizzled over 32, 64 or 128 bytes")
        }
        ArgsProblem::MapRank { map, rank, copy } => {
            format!("`{map}` has a {rank}-dimensional box, but this copy takes {copy} coordinates")
        }
        ArgsProblem::MapElem { map, elem, dst } => {
            format!("`{map}` holds `{}`, but the destination holds `{}`", elem.name(), dst.name())
        }
        ArgsProblem::TmaScope { view, code } => format!(
            "`{view}` is an `async` scope opened at {code}; a TMA copy completes on the block's mbarrier, which every thread of the block waits on at the end of the scope, so the scope must be opened in `block[1]` code"
        ),
        ArgsProblem::MapStoreParam { map } => format!(
            "`{map}` is a device function's tensor-map parameter; a TMA store writes through a kernel's own map (a caller sees a call as reading its maps)"
        ),
        ArgsProblem::MapUntyped { map } => {
            format!("`{map}` is an untyped `CUTensorMap`; a TMA store needs a `tensor_map(...)`, whose box it writes")
        }
        ArgsProblem::OutList { n } => format!("`out=` takes a list of {n} places"),
        ArgsProblem::OutCount { n, given } => format!("`out=` takes {n} places, {given} given"),
        ArgsProblem::NotAnElement { param } => format!("`{param}` must be an element of memory, like `buf[i]`"),
        ArgsProblem::LocalArray { name, param } => {
            format!("`{name}` is a local array; `{param}` must be thread-shared memory")
        }
        ArgsProblem::NotAsync { name } => {
            format!("the destination `{name}` must be a name made by `with async(...) as name:`")
        }
        ArgsProblem::NotLocalElement { param } => {
            format!("`{param}` must be an element of a thread-local array, like `v[0]`")
        }
        ArgsProblem::NotShared { name } => format!("`{name}` is not shared memory; it works on shared memory only"),
        ArgsProblem::CopySource { name, in_device: false } => {
            format!("the source `{name}` is not global memory; `cp.async` copies from global memory only")
        }
        ArgsProblem::CopySource { name, in_device: true } => format!(
            "the source `{name}` is a device function's pointer, which may point into shared or local memory; `cp.async` copies from global memory only"
        ),
    }
}

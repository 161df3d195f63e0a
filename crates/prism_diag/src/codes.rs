//! The registry of diagnostic codes.
//!
//! Codes are stable: tests, editors and CI scripts match on them, so a code is never renamed
//! or reused for a different problem. Each code has a one-line summary and a long explanation
//! (Markdown, in `explain/CODE.md`) that `prism explain CODE` prints. Every explanation holds
//! at least one example marked ```` ```prism,reject ```` that produces the code, and usually a
//! corrected version marked ```` ```prism,accept ````; the `prism_test` crate checks both.
//! Codes of synchronisation inference (stage `sync`) have instead an example marked
//! ```` ```prism,sync ````, a program that checks cleanly and for which inference reports
//! the code.

/// One registered diagnostic code.
#[derive(Debug)]
pub struct CodeInfo {
    /// The stable kebab-case code.
    pub code: &'static str,
    /// Which stage emits it (`syntax`, `check`, `sync`, `launch`, `run`, `build`).
    pub stage: &'static str,
    /// One line saying what the code means.
    pub summary: &'static str,
    /// The long Markdown explanation with examples.
    pub explanation: &'static str,
}

macro_rules! codes {
    ($( $code:literal, $stage:literal, $summary:literal; )*) => {
        /// Every code, in the order of the explanation pages.
        pub static CODES: &[CodeInfo] = &[
            $( CodeInfo {
                code: $code,
                stage: $stage,
                summary: $summary,
                explanation: include_str!(concat!("../explain/", $code, ".md")),
            }, )*
        ];
    };
}

codes! {
    // Lexing and parsing.
    "syntax-error", "syntax", "the source does not follow Prism's grammar";
    "invalid-token", "syntax", "a character that cannot start any token";
    "unterminated-string", "syntax", "a string literal without its closing quote";
    "invalid-number", "syntax", "a malformed or out-of-range numeric literal";
    "inconsistent-indent", "syntax", "a line's indentation matches no enclosing block";
    "tab-indent", "syntax", "a tab character in indentation";
    "unclosed-delimiter", "syntax", "a bracket that is never closed, or closed by the wrong bracket";
    "legacy-syntax", "syntax", "an older draft's spelling, accepted and rewritten to the canonical form";
    "top-level-statement", "syntax", "a statement outside any function";
    "bad-decorator", "syntax", "an unknown, repeated, missing or malformed decorator";
    "elided-code", "syntax", "a `...` or `..` placeholder where code is needed";
    // Names and ordinary types.
    "unknown-name", "check", "a name that is not defined in this scope";
    "unknown-type", "check", "a type name Prism does not know";
    "duplicate-definition", "check", "a name defined twice in the same scope";
    "unresolved-import", "check", "an import of a module that cannot be found or is part of an import cycle, or of a name the module does not define";
    "type-mismatch", "check", "a value of the wrong type";
    "wrong-arguments", "check", "a call with the wrong number, names or kinds of arguments";
    "vector-access", "check", "a vector load or store of the wrong width, past a local array, or through a scattered view";
    "bad-index", "check", "indexing something that is not an array or pointer, or with the wrong number of indices";
    "not-constant", "check", "an expression that must be known at compile time is not";
    "const-eval", "check", "a compile-time computation overflows or divides by zero";
    "bad-define", "check", "a `-D NAME=VALUE` names no `constexpr` of the file, or its value does not fit";
    "bad-unroll", "check", "a loop's `unroll=` is not `True`, `False` or a constant count, or cannot unroll fully";
    "assign-to-const", "check", "an assignment to a const, constexpr or loop variable";
    "unsupported", "check", "a construct Prism recognises but does not support";
    "pointer-alias", "check", "a pointer copied into a new variable or compared as a value";
    // Perspectives on code.
    "invalid-perspective", "check", "a perspective that cannot exist, such as grid[2] or thread[0]";
    "invalid-bound", "check", "a malformed `@requires` perspective bound";
    "tensor-map", "check", "a `tensor_map(...)` type whose box, swizzle or element type TMA cannot copy";
    "param-perspective", "check", "a parameter or return value broader than the function's entry perspective, or a kernel's writable pointer narrower than it";
    "group-broadens", "check", "`group` to a perspective that is not narrower than the current one";
    "group-indivisible", "check", "`group` to a perspective whose units do not evenly divide the current one";
    "split-exceeds", "check", "`split` cases that need more units than the current perspective has";
    "split-misaligned", "check", "a `split` case that is not aligned to its own size";
    "split-level", "check", "`split` on a level broader than the code's perspective";
    // Perspectives on data.
    "read-up", "check", "a read of data that may differ within the code's perspective where a uniform value is needed";
    "write-down", "check", "a write that would let a value flow to a broader perspective";
    "id-without-target", "check", "`id()` where there is no variable to take its perspective from";
    "id-not-narrower", "check", "`id()` whose target perspective is not strictly narrower than the code";
    "raw-index", "check", "a raw thread or block index outside `with unsafe:`";
    // Memory.
    "shared-outside-block", "check", "a shared-memory allocation outside `block[1]` code";
    "smem-budget", "check", "a function needs more shared memory than its `smem=` declares";
    "smem-device-limit", "check", "a kernel needs more shared memory than the target device has";
    "store-perspective", "check", "a store through a pointer that is not at `thread[1]`, or from code that is not `thread[1]`";
    "store-through-const", "check", "a store through a `const` pointer";
    "hidden-name", "check", "a use of a name hidden by an enclosing `partition`, `claim` or `async`";
    "not-partitionable", "check", "`partition`, `claim` or `async` on something that is not thread-shared memory";
    "partition-perspective", "check", "a `partition` or `claim` whose perspectives do not fit the code";
    "capture-assigned", "check", "a variable a live partition's indexing function reads is assigned";
    "partition-index-fn", "check", "a malformed indexing function in a `partition`";
    "claim-not-owned", "check", "a claimed name used where more than one unit of the claim could reach it";
    "claim-multiple-branches", "check", "a claimed name used in more than one branch of a split";
    "async-misuse", "check", "an `async` name used other than as an asynchronous copy operand";
    "pipeline-form", "check", "a `pipeline` loop, `fill` or `stage` written where it cannot be, or a ring of the wrong shape";
    "pipeline-fill", "check", "a pipeline's fill that reads, writes or calls what it may not while it runs ahead of the loop";
    // Functions and calls.
    "call-perspective", "check", "a function or intrinsic called from code at the wrong perspective";
    "argument-perspective", "check", "an argument that may differ within the units of its parameter's perspective";
    "pointer-argument", "check", "a pointer argument whose constness, type or perspective does not fit its parameter";
    "argument-alias", "check", "one memory passed for two pointer parameters of a call, at least one of them writable";
    "recursion", "check", "a function that calls itself, directly or through others";
    "kernel-call", "check", "a call to a `@prism(\"global\")` kernel from device code";
    "return-value", "check", "a `return` whose value does not fit the function's signature";
    "missing-return", "check", "a function with a return type whose body can end without returning";
    "divergent-exit", "check", "a `return`, `break` or `continue` that would leave only part of a group";
    "break-outside-loop", "check", "a `break` or `continue` outside any loop";
    "collective-in-condition", "check", "a collective call that only some threads would evaluate";
    // Synchronisation inference, shown by `prism check --explain-sync`.
    "inferred-barrier", "sync", "a barrier that synchronisation inference inserted, with the accesses it orders";
    "unplaceable-barrier", "sync", "two accesses that need a barrier where no barrier can be placed (an error in safe code)";
    "async-overlap", "sync", "asynchronous copies in flight together (of different threads, or of one) whose destinations may overlap";
    "wgmma-unwaited", "sync", "a wgmma without a `wgmma_wait(0)` after it in its block, or its tiles written or its accumulators used before that wait";
    "wgmma-unfenced", "sync", "a wgmma with no `wgmma_fence()` after the last other access to its accumulators";
    "async-source-write", "sync", "a write, inside an `async` scope, to memory a copy of that scope reads";
    "split-conflict", "sync", "two branches of one `split` touch the same memory, one of them changing it";
    "register-reallocation", "sync", "a `setmaxnreg` PTX leaves undefined: a second one on a path, one in a loop, or one that cannot move the register count the way it says";
    "branch-conflict", "sync", "accesses on two paths (branches of an `if`, or before and after a `return`) that different units may take at the same time, one changing the other's memory";
    "cuda-unsupported", "build", "a valid program construct the CUDA backend cannot express";
    "bad-launch", "launch", "a launch whose kernel name or sizes do not fit the kernel's bound";
    "bad-argument", "launch", "a kernel argument that is missing, unknown, malformed or of the wrong type, or an unusable input or output file";
    "data-race", "run", "two unordered accesses to one element by different threads, at least one a write";
    "barrier-divergence", "run", "a barrier or warp collective reached by only part of its unit, or by a unit at different barriers";
    "out-of-bounds", "run", "a memory access outside its allocation";
    "misaligned-access", "run", "a vector access or asynchronous copy whose address is not a multiple of its size";
    "deadlock", "run", "every remaining thread waits for something that never happens";
    "non-uniform", "run", "a condition that must be the same across a unit differs between its threads";
    "division-by-zero", "run", "an integer division or remainder by zero";
    "trap", "run", "a thread called `trap()`: a run-time check of the program (or of the standard library's preconditions) failed";
    "counter-overflow", "run", "a `range` loop's counter stepped past its type's range";
    "wgmma-pending", "run", "a wgmma's accumulators used before `wgmma_wait` completed its group";
    "mbarrier-misuse", "run", "an mbarrier used before its initialisation or after its invalidation, or initialised twice";
    "uninitialized-read", "run", "a read of shared memory that no thread of the block has written";
    "not-simulated", "run", "a construct the CPU simulator cannot run (verbatim CUDA, Hopper warpgroup operations, TMA)";
    "fuel-exhausted", "run", "a block ran longer than the step limit: an endless loop or spin";
}

/// Looks a code up.
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    CODES.iter().find(|c| c.code == code)
}

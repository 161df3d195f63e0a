//! Developer tool: prints the IR of a `.prism` file after synchronisation inference, then
//! each inferred barrier with the source lines it orders.
//!
//! `cargo run -p prism_sync --example sync_ir -- FILE`
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let path = std::env::args().nth(1).expect("usage: sync_ir FILE.prism");
    let src = std::fs::read_to_string(&path).expect("readable");
    let mut problems = prism_diag::Problems::default();
    let tir = prism_types::check_source(prism_span::FileId(0), &src, &prism_types::Target::default(), &mut problems);
    if problems.has_errors() {
        eprintln!("the program has errors; run `prism check {path}`");
        std::process::exit(1);
    }
    let (ir, report) = prism_sync::lower_and_sync(&tir, &prism_sync::Options::default());
    print!("{}", prism_ir::print(&ir));
    let line = |s: prism_span::Span| src[..s.start as usize].matches('\n').count() + 1;
    for (i, b) in report.barriers.iter().enumerate() {
        let f = &ir.functions[b.func.index()];
        println!(
            "; barrier {i}: @{} {} ({}) for `{}` before line {}: line {} ({:?}) -> line {} ({:?})",
            f.name,
            b.scope,
            prism_sync::describe_scope(b.scope),
            f.mems[b.mem.index()].name,
            line(b.at),
            line(b.before),
            b.before_use,
            line(b.after),
            b.after_use
        );
    }
    for u in &report.unresolved {
        let f = &ir.functions[u.func.index()];
        println!("; unresolved: @{} {} between line {} and line {}", f.name, u.scope, line(u.before), line(u.after));
    }
    for e in prism_ir::verify(&ir) {
        eprintln!("verify: {e}");
    }
}

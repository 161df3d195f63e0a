//! Developer tool: prints the IR of a `.prism` file as the backends get it (after the whole
//! pipeline), then each inferred barrier with the source lines it orders.
//!
//! `cargo run -p prism_sync --example sync_ir -- FILE`
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let path = std::env::args().nth(1).expect("usage: sync_ir FILE.prism");
    let src = std::fs::read_to_string(&path).expect("readable");
    let (map, problems, synced) = prism_driver::compile_text(&path, &src, &prism_driver::Options::default());
    let Some(synced) = synced else {
        eprint!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never));
        std::process::exit(1);
    };
    let (ir, report) = (synced.ir(), synced.report());
    print!("{}", prism_ir::print(ir));
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
}

//! Developer tool: prints the IR of a `.prism` file as the backends get it (after the whole
//! pipeline), then each inferred barrier with the source lines it orders.
//!
//! `cargo run -p prism_sync --example sync_ir -- FILE [--stage lowered|inferred|moved|optimised]`
//!
//! `--stage` stops the pipeline earlier and prints the IR there: the inputs of the `.pir`
//! filetests in `tests/pir` are made this way.
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: sync_ir FILE.prism [--stage lowered|inferred|moved|optimised]";
    let path = args.get(1).expect(usage).clone();
    let stage = match args.get(2).map(String::as_str) {
        None => "optimised",
        Some("--stage") => args.get(3).map(String::as_str).expect(usage),
        Some(_) => panic!("{usage}"),
    };
    let src = std::fs::read_to_string(&path).expect("readable");
    let target = prism_test::target_for(&src).expect("a valid `# target:` directive");
    let mut opts = prism_driver::Options { target, ..prism_driver::Options::default() };
    match stage {
        "lowered" => {
            let mut map = prism_span::SourceMap::default();
            let file = map.add(path.clone(), src.clone());
            let mut problems = prism_diag::Problems::default();
            let Some(ir) = prism_driver::lowered(&mut map, file, &opts.target, &mut problems) else {
                eprint!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never));
                std::process::exit(1);
            };
            print!("{}", prism_ir::print(&ir));
            return;
        }
        "inferred" => (opts.motion, opts.optimize) = (false, false),
        "moved" => opts.optimize = false,
        "optimised" => {}
        _ => panic!("{usage}"),
    }
    let (map, problems, synced) = prism_driver::compile_text(&path, &src, &opts);
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

//! Developer tool: prints the IR of a `.prism` file as lowering makes it, before
//! synchronisation inference (`cargo run -p prism_sync --example sync_ir` shows it after).
#![allow(clippy::print_stdout, clippy::print_stderr)]
fn main() {
    let path = std::env::args().nth(1).expect("a .prism file");
    let src = std::fs::read_to_string(&path).expect("readable");
    let mut map = prism_span::SourceMap::default();
    let file = map.add(path.clone(), src);
    let mut problems = prism_diag::Problems::default();
    let Some(ir) = prism_driver::lowered(&mut map, file, &prism_types::Target::default(), &mut problems) else {
        eprint!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never));
        std::process::exit(1);
    };
    print!("{}", prism_ir::print(&ir));
}

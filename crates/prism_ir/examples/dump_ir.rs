//! Developer tool: prints the IR of a `.prism` file.
#![allow(clippy::print_stdout, clippy::print_stderr)]
fn main() {
    let path = std::env::args().nth(1).expect("a .prism file");
    let src = std::fs::read_to_string(&path).expect("readable");
    let mut problems = prism_diag::Problems::default();
    let tir = prism_types::check_source(prism_span::FileId(0), &src, &prism_types::Target::default(), &mut problems);
    if problems.has_errors() {
        eprintln!("the program has errors");
        std::process::exit(1);
    }
    let ir = prism_ir::lower(&tir);
    print!("{}", prism_ir::print(&ir));
    for e in prism_ir::verify(&ir) {
        eprintln!("verify: {e}");
    }
}

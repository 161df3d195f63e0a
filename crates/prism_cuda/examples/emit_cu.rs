//! Prints the CUDA for a `.prism` file: `cargo run -p prism_cuda --example emit_cu -- FILE`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let path = std::env::args().nth(1).expect("usage: emit_cu FILE.prism");
    let src = std::fs::read_to_string(&path).expect("readable file");
    let mut map = prism_span::SourceMap::default();
    let file = map.add(path.clone(), src.clone());
    let mut problems = prism_diag::Problems::default();
    let tir = prism_types::check_source(file, &src, &prism_types::Target::default(), &mut problems);
    if problems.has_errors() {
        eprint!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never));
        std::process::exit(1);
    }
    let (ir, _) = prism_sync::lower_and_sync(&tir, &prism_sync::Options::default());
    let opts = prism_cuda::Options { file_name: path, source: Some(src), ..Default::default() };
    let out = prism_cuda::emit(&ir, &opts);
    print!("{}", out.text);
    for e in out.errors {
        eprintln!("error: {e}");
    }
}

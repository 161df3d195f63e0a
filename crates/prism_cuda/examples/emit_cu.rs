//! Prints the CUDA for a `.prism` file: `cargo run -p prism_cuda --example emit_cu -- FILE`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let path = std::env::args().nth(1).expect("usage: emit_cu FILE.prism");
    let src = std::fs::read_to_string(&path).expect("readable file");
    let (map, problems, synced) = prism_driver::compile_text(&path, &src, &prism_driver::Options::default());
    let Some(synced) = synced else {
        eprint!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never));
        std::process::exit(1);
    };
    let opts = prism_cuda::Options { file_name: path, source: Some(src), ..Default::default() };
    let out = prism_cuda::emit(&synced, &opts);
    print!("{}", out.text);
    for e in out.errors {
        eprintln!("error: {e}");
    }
}

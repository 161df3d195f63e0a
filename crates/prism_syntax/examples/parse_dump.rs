//! Developer tool: parses files and prints diagnostics (and the AST with `--ast`).
#![allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show_ast = args.iter().any(|a| a == "--ast");
    let mut map = prism_span::SourceMap::default();
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let text = std::fs::read_to_string(path).expect("readable file");
        let id = map.add(path.clone(), text.clone());
        let mut problems = prism_diag::Problems::default();
        let m = prism_syntax::parse(id, &text, &mut problems);
        problems.sort();
        print!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never));
        if show_ast {
            println!("{m:#?}");
        }
    }
}

//! Prints a kernel of `prism_test::gen::phases`, to time or run it with the `prism` binary:
//! `cargo run -p prism_test --example phases -- view_looped 400 > phases.prism`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use prism_test::r#gen::phases::{Shape, phases};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let shape = args.first().and_then(|a| Shape::ALL.into_iter().find(|s| s.kernel() == format!("phases_{a}")));
    let n = args.get(1).and_then(|n| n.parse::<usize>().ok());
    let (Some(shape), Some(n)) = (shape, n) else {
        let names: Vec<&str> = Shape::ALL.iter().map(|s| &s.kernel()["phases_".len()..]).collect();
        eprintln!("usage: phases SHAPE PHASES, with SHAPE one of {}", names.join(", "));
        std::process::exit(2);
    };
    print!("{}", phases(shape, n));
}

//! The long soundness search, on demand:
//!
//! ```text
//! cargo run --release -p prism_test --bin soundness -- [--seconds N] [--programs N]
//!     [--seed S] [--schedules N] [--no-mutation] [--write DIR]
//! cargo run --release -p prism_test --bin soundness -- --show SEED
//! ```
//!
//! Prints programs per second, the acceptance rate, runs, mutation-testing figures, how many
//! programs used each construct, and every finding; `--write DIR` also writes each
//! (minimised) finding as `DIR/seed-S.prism`. Exits 1 when anything was found.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use prism_test::soundness::{Options, search};
use std::time::Duration;

fn main() {
    let mut opts = Options { programs: usize::MAX, time: Duration::from_secs(60), ..Options::default() };
    let mut write: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("error: `{a}` needs {what}");
                std::process::exit(2);
            })
        };
        let number = |v: String| -> u64 {
            v.parse().unwrap_or_else(|_| {
                eprintln!("error: `{v}` is not a number");
                std::process::exit(2);
            })
        };
        match a.as_str() {
            "--seconds" => opts.time = Duration::from_secs(number(value("a number of seconds"))),
            "--programs" => opts.programs = number(value("a number of programs")) as usize,
            "--seed" => opts.seed = number(value("a seed")),
            "--schedules" => opts.schedules = number(value("a number of schedules")),
            "--no-mutation" => opts.mutate = false,
            "--write" => write = Some(value("a directory")),
            "--show" => {
                // One program: its text, its library modules and what the pipeline says.
                let p = prism_test::soundness::r#gen::Gen::new(number(value("a seed"))).program();
                for (path, text) in &p.files {
                    println!("--- {path}\n{text}");
                }
                println!("--- fuzz.prism\n{}", p.src);
                println!("--- diagnostics\n{}", prism_test::soundness::diagnostics(&p.src, &p.files));
                return;
            }
            _ => {
                eprintln!(
                    "usage: soundness [--seconds N] [--programs N] [--seed S] [--schedules N] [--no-mutation] [--write DIR] | --show SEED"
                );
                std::process::exit(2);
            }
        }
    }
    let summary = search(&opts);
    print!("{}", summary.render());
    if let Some(dir) = write {
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("error: cannot create `{dir}`: {e}");
            std::process::exit(2);
        }
        for f in &summary.findings {
            let path = format!("{dir}/seed-{}.prism", f.seed);
            let text = format!("# Soundness search finding, seed {}: {}\n{}", f.seed, f.failure.describe(), f.src);
            // Library modules go beside it, `seed-S/lib/use.prism`, as the import finds them.
            let mut writes = vec![(path, text)];
            for (lib, text) in &f.files {
                writes.push((format!("{dir}/seed-{}/{lib}", f.seed), text.clone()));
            }
            for (path, text) in writes {
                let parent = std::path::Path::new(&path).parent().map(std::path::Path::to_path_buf);
                if let Some(parent) = parent
                    && let Err(e) = std::fs::create_dir_all(&parent)
                {
                    eprintln!("error: cannot create `{}`: {e}", parent.display());
                    std::process::exit(2);
                }
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("error: cannot write `{path}`: {e}");
                    std::process::exit(2);
                }
            }
        }
    }
    if std::env::var_os("PRISM_SHOW_REDUNDANT").is_some() {
        for (seed, b) in summary.redundant.iter().take(3) {
            let p = prism_test::soundness::r#gen::Gen::new(*seed).program();
            println!("--- seed {seed}, barrier {b}\n{}", p.src);
            let (map, _, s) =
                prism_test::soundness::compile_generated(&p.src, &p.files, &prism_driver::Options::default());
            if let Some(s) = s {
                let r = &s.report().barriers[*b];
                // A barrier inside a library module's function has its spans in that file.
                let at = |sp: prism_span::Span| {
                    let f = map.file(sp.file);
                    format!("{}:{}", f.name(), f.line_col(sp.start).line)
                };
                println!("barrier {b}: {} before {}, {} -> {}", r.scope, at(r.at), at(r.before), at(r.after));
            }
        }
    }
    if !summary.findings.is_empty() {
        std::process::exit(1);
    }
}

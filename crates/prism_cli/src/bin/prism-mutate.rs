//! `prism-mutate`: the command-line mutation fuzzer.
//!
//! ```text
//! prism-mutate [--seconds N] [--mutants N] [--seed S] [--prism PATH] [--timeout SECONDS]
//!              [--keep DIR] [CORPUS_DIR...]
//! ```
//!
//! Takes the `.prism` files of the corpus (`tests/ui` and `examples` by default) and their
//! `# launch:` lines, mutates the source text (lines deleted, duplicated, swapped and
//! re-indented, numbers replaced by extreme values, perspectives and operators swapped,
//! truncation) and the launch (extreme grid and block sizes, arguments dropped, duplicated,
//! retyped and resized, malformed `.npy` files, output paths onto directories, missing
//! folders and the source itself, odd `--checks`, `--seed`, `--fuel` values), and runs
//! `prism check`, `prism run` and `prism build` on each mutant as a user would: the real
//! binary, in a scratch directory.
//!
//! A *fault* is anything a serious tool must never do, whatever the input: a panic (exit 101
//! or a panic message), death by a signal (an abort on allocation failure included), a
//! command still running after `--timeout` seconds with no block finishing (a run whose
//! progress line still advances is a big launch, counted but not a fault), an exit code
//! outside 0-3, a failure
//! with nothing said on stderr, an output file left behind by a failed command (or missing
//! after a successful one), and a source file changed by any command. Errors for bad input
//! are the expected outcome, not faults.
//!
//! Prints mutants tried, commands run, exit-code counts and every fault; `--keep DIR` also
//! writes each faulting mutant and its command line there. Exits 1 when anything was found,
//! 2 on a usage error. CI runs it for a bounded time (`.ci/run`); a long run is
//! `prism-mutate --seconds 3600`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use prism_interp::rng::Rng;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

struct Options {
    seconds: u64,
    mutants: u64,
    seed: u64,
    prism: PathBuf,
    timeout: Duration,
    keep: Option<PathBuf>,
    corpus: Vec<PathBuf>,
}

/// One corpus file and its launches (each the words after `# launch:`).
struct Seed {
    path: PathBuf,
    text: String,
    launches: Vec<Vec<String>>,
}

fn usage(msg: &str) -> ! {
    eprintln!("error: {msg}");
    eprintln!(
        "usage: prism-mutate [--seconds N] [--mutants N] [--seed S] [--prism PATH] [--timeout SECONDS] [--keep DIR] [CORPUS_DIR...]"
    );
    std::process::exit(2)
}

fn parse_args() -> Options {
    let mut o = Options {
        seconds: 60,
        mutants: u64::MAX,
        seed: 20_261_124,
        prism: PathBuf::new(),
        timeout: Duration::from_secs(30),
        keep: None,
        corpus: Vec::new(),
    };
    let mut prism = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| args.next().unwrap_or_else(|| usage(&format!("`{a}` needs {what}")));
        let number = |v: String| -> u64 { v.parse().unwrap_or_else(|_| usage(&format!("`{v}` is not a number"))) };
        match a.as_str() {
            "--seconds" => o.seconds = number(value("a number of seconds")),
            "--mutants" => o.mutants = number(value("a number of mutants")),
            "--seed" => o.seed = number(value("a seed")),
            "--timeout" => o.timeout = Duration::from_secs(number(value("a number of seconds")).max(1)),
            "--prism" => prism = Some(PathBuf::from(value("a path"))),
            "--keep" => o.keep = Some(PathBuf::from(value("a directory"))),
            _ if a.starts_with('-') => usage(&format!("unknown option `{a}`")),
            _ => o.corpus.push(PathBuf::from(a)),
        }
    }
    // By default the `prism` built beside this binary: `cargo build --release --bins` makes both.
    o.prism = prism.unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap_or_else(|e| usage(&format!("cannot find this program's path: {e}")));
        exe.with_file_name(format!("prism{}", std::env::consts::EXE_SUFFIX))
    });
    if !o.prism.is_file() {
        usage(&format!(
            "no `prism` binary at `{}`: build it with `cargo build --release -p prism_cli --bins`, or pass `--prism PATH`",
            o.prism.display()
        ));
    }
    if o.corpus.is_empty() {
        o.corpus = vec![PathBuf::from("tests/ui"), PathBuf::from("examples")];
    }
    o
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "prism") {
            out.push(p);
        }
    }
}

fn load(opts: &Options) -> Vec<Seed> {
    let mut files = Vec::new();
    for d in &opts.corpus {
        if d.is_file() {
            files.push(d.clone());
        } else {
            collect(d, &mut files);
        }
    }
    let mut seeds = Vec::new();
    for path in files {
        let Ok(text) = fs::read_to_string(&path) else { continue };
        let launches = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("# launch:"))
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|w| w.len() >= 2 && w[1].starts_with("--"))
            .collect();
        seeds.push(Seed { path, text, launches });
    }
    seeds
}

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "31",
    "32",
    "33",
    "1024",
    "65536",
    "2147483647",
    "-2147483648",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "1e38",
    "0.5",
    "1e309",
];

const PERSPECTIVES: &[&str] =
    &["thread[1]", "thread[2]", "thread[16]", "thread[32]", "thread[128]", "block[1]", "grid[1]"];

const SWAPS: &[(&str, &str)] = &[
    ("+", "-"),
    ("<", "<="),
    ("==", "!="),
    ("*", "/"),
    ("thread[1]", "thread[32]"),
    ("thread[32]", "thread[1]"),
    ("block[1]", "thread[1]"),
    ("grid[1]", "block[1]"),
    ("with unsafe:", "with group(thread[1]):"),
    ("shared(", "local("),
    ("const(", "("),
    ("@ thread[1]", ""),
    ("range(", "range(0 - "),
    ("partition(", "claim("),
];

/// Mutates source text: one to three random edits.
fn mutate_source(r: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + r.below(3) {
        if lines.is_empty() {
            break;
        }
        let i = r.below(lines.len());
        match r.below(10) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 if i + 1 < lines.len() => lines.swap(i, i + 1),
            3 => {
                let l = &mut lines[i];
                if r.chance(50) {
                    l.insert_str(0, "    ");
                } else if let Some(rest) = l.strip_prefix("    ") {
                    *l = rest.to_string();
                }
            }
            4 | 5 => {
                // A number in the line becomes an extreme value.
                let l = &lines[i];
                let starts: Vec<usize> = l
                    .char_indices()
                    .filter(|&(k, c)| {
                        c.is_ascii_digit() && !l[..k].ends_with(|p: char| p.is_ascii_alphanumeric() || p == '_')
                    })
                    .map(|(k, _)| k)
                    .collect();
                if !starts.is_empty() {
                    let s = *r.pick(&starts);
                    let e = l[s..].find(|c: char| !c.is_ascii_alphanumeric() && c != '.').map_or(l.len(), |n| s + n);
                    lines[i] = format!("{}{}{}", &l[..s], r.pick(NUMBERS), &l[e..]);
                }
            }
            6 | 7 => {
                let (from, to) = *r.pick(SWAPS);
                if let Some(k) = lines[i].find(from) {
                    lines[i].replace_range(k..k + from.len(), to);
                } else if let Some(k) = lines[i].find("thread[") {
                    let e = lines[i][k..].find(']').map_or(lines[i].len(), |n| k + n + 1);
                    let p = r.pick(PERSPECTIVES);
                    lines[i].replace_range(k..e, p);
                }
            }
            8 => {
                let j = r.below(lines.len());
                let l = lines[j].clone();
                lines.insert(i, l);
            }
            _ => {
                // Truncation at a random character.
                let joined = lines.join("\n");
                let mut cut = r.below(joined.len() + 1);
                while !joined.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines = joined[..cut].lines().map(str::to_string).collect();
            }
        }
    }
    let mut out = lines.join("\n");
    if r.chance(90) {
        out.push('\n');
    }
    out
}

const SIZES: &[&str] =
    &["0", "1", "31", "33", "1024", "1025", "65536", "2147483647", "2147483648", "4294967296", "-1", "1e3", "abc", ""];
const DTYPES: &[&str] = &["f32", "f64", "i32", "u32", "i64", "u64", "f16", "bf16", "bool", "i8", "float"];
const SHAPES: &[&str] = &["0", "1", "7", "4x4", "0x5", "2x3x4", "1x1x1x1", "99999999999", "65536x65536", "x", "-3"];

/// A malformed (or sometimes valid) `.npy` file.
fn npy_bytes(r: &mut Rng) -> Vec<u8> {
    let header = |dict: &str| {
        let mut h = format!("{dict}\n").into_bytes();
        while (10 + h.len()) % 64 != 0 {
            h.insert(h.len() - 1, b' ');
        }
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(&h);
        b
    };
    let descr = *r.pick(&["<f4", "<i4", "<f8", ">f4", "|b1", "<u8", "<c8", "|O"]);
    let shape = *r.pick(&["(16,)", "(4, 4)", "()", "(0,)", "(99999999999,)", "(-1,)", "(3, 0, 2)", "(256,)"]);
    let fortran = if r.chance(20) { "True" } else { "False" };
    let mut b = header(&format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"));
    let n = r.pick(&[0usize, 4, 60, 64, 1024, 2048]);
    b.extend((0..*n).map(|k| k as u8));
    match r.below(6) {
        0 => b.truncate(r.below(b.len() + 1)),
        1 => b[0] = b'N',
        2 => {
            let k = r.below(b.len());
            b[k] ^= 0xFF;
        }
        _ => {}
    }
    b
}

/// Mutates a launch (the words after `# launch:`, the kernel name first).
fn mutate_launch(r: &mut Rng, launch: &[String], dir: &Path, source: &Path) -> Vec<String> {
    let mut w: Vec<String> = launch.to_vec();
    for _ in 0..r.below(4) {
        let flags: Vec<usize> = (0..w.len()).filter(|&i| w[i].starts_with("--") && i + 1 < w.len()).collect();
        match r.below(12) {
            0 | 1 => {
                if let Some(&i) = flags.iter().find(|&&i| w[i] == if r.chance(50) { "--grid" } else { "--block" }) {
                    w[i + 1] = r.pick(SIZES).to_string();
                }
            }
            2 if !flags.is_empty() => {
                let i = *r.pick(&flags);
                w.drain(i..i + 2);
            }
            3 if !flags.is_empty() => {
                let i = *r.pick(&flags);
                let pair = [w[i].clone(), w[i + 1].clone()];
                w.extend(pair);
            }
            4 | 5 => {
                // Retype or resize a buffer argument.
                let args: Vec<usize> =
                    flags.iter().copied().filter(|&i| w[i] == "--arg" && w[i + 1].contains(':')).collect();
                if !args.is_empty() {
                    let i = *r.pick(&args) + 1;
                    let mut parts: Vec<String> = w[i].split(':').map(str::to_string).collect();
                    let k = 1 + r.below(parts.len().saturating_sub(1).max(1));
                    if k < parts.len() {
                        parts[k] = if k == 1 { r.pick(DTYPES).to_string() } else { r.pick(SHAPES).to_string() };
                    }
                    if r.chance(20) {
                        parts[0] = parts[0].replace("zeros", "rand").replace("iota", "zeros");
                    }
                    w[i] = parts.join(":");
                }
            }
            6 => {
                // A scalar argument gets an odd value.
                let args: Vec<usize> =
                    flags.iter().copied().filter(|&i| w[i] == "--arg" && !w[i + 1].contains(':')).collect();
                if !args.is_empty() {
                    let i = *r.pick(&args) + 1;
                    let name = w[i].split('=').next().unwrap_or("").to_string();
                    let v = r.pick(&["0", "-1", "2147483648", "1.5", "nan", "true", "", "0x10", "1e40"]);
                    w[i] = format!("{name}={v}");
                }
            }
            7 => {
                // A buffer argument read from a malformed `.npy` file.
                let args: Vec<usize> =
                    flags.iter().copied().filter(|&i| w[i] == "--arg" && w[i + 1].contains(':')).collect();
                if !args.is_empty() {
                    let i = *r.pick(&args) + 1;
                    let name = w[i].split('=').next().unwrap_or("").to_string();
                    let file = dir.join(format!("in{}.npy", r.below(1000)));
                    if fs::write(&file, npy_bytes(r)).is_ok() {
                        w[i] = format!("{name}={}", file.display());
                    }
                }
            }
            8 => {
                // An output path: fine, a directory, a missing folder, or the source itself.
                let args: Vec<&String> = flags.iter().filter(|&&i| w[i] == "--arg").map(|&i| &w[i + 1]).collect();
                let name = args.first().map_or("x".to_string(), |a| a.split('=').next().unwrap_or("x").to_string());
                let target = match r.below(5) {
                    0 => dir.to_path_buf(),
                    1 => dir.join("missing").join("o.npy"),
                    2 => source.to_path_buf(),
                    _ => dir.join(format!("out{}.npy", r.below(4))),
                };
                w.push("--out".into());
                w.push(format!("{name}={}", target.display()));
            }
            9 => {
                let opt = r.pick(&["--checks", "--seed", "--fuel", "--print", "--stall-limit"]).to_string();
                let v = match opt.as_str() {
                    "--checks" => r.pick(&["all", "races", "uniformity", "none", "some"]).to_string(),
                    "--seed" => r.pick(&["0", "1", "18446744073709551615", "-4"]).to_string(),
                    "--fuel" => r.pick(&["0", "1", "5000", "99999999999999999999"]).to_string(),
                    "--stall-limit" => r.pick(&["0", "0.5", "inf", "-1"]).to_string(),
                    _ => r.pick(&["x", "out", "n", "nope"]).to_string(),
                };
                w.push(opt);
                w.push(v);
            }
            10 => {
                if !w.is_empty() {
                    w[0] = r.pick(&["main", "", "k2", "__nv"]).to_string();
                }
            }
            _ => {
                let name = r.pick(&["zz", "n", "x"]).to_string();
                w.push("--arg".into());
                w.push(format!("{name}=1"));
            }
        }
    }
    w
}

/// What one command did.
struct Ran {
    status: Option<ExitStatus>,
    stderr: String,
    elapsed: Duration,
}

fn run_cmd(prism: &Path, args: &[String], dir: &Path, timeout: Duration) -> Ran {
    let err_path = dir.join("stderr.txt");
    let out_path = dir.join("stdout.txt");
    let start = Instant::now();
    let (Ok(err), Ok(out)) = (fs::File::create(&err_path), fs::File::create(&out_path)) else {
        eprintln!("error: cannot write into the scratch directory `{}`", dir.display());
        std::process::exit(2);
    };
    let child = Command::new(prism)
        .args(args)
        .env("NO_COLOR", "1")
        // The progress line tells a long run that is still finishing blocks from a hang.
        .env("PRISM_PROGRESS", "1")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("error: cannot start `{}`", prism.display());
        std::process::exit(2);
    };
    let mut nap = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => {
                std::thread::sleep(nap);
                nap = (nap * 2).min(Duration::from_millis(20));
            }
            Err(_) => break None,
        }
    };
    let stderr = fs::read(&err_path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    Ran { status, stderr, elapsed: start.elapsed() }
}

/// Whether a killed run's progress line shows blocks finishing: a launch that is only big
/// (millions of threads), not a hang. The simulator's own stall limit stops a run in which
/// no block finishes, so a run still drawing progress at the timeout is making it.
fn progressing(stderr: &str) -> bool {
    let counts: Vec<u64> =
        stderr.split("running: blocks ").skip(1).filter_map(|t| t.split('/').next()?.parse().ok()).collect();
    counts.windows(2).any(|w| w[1] > w[0])
}

/// The fault a command's outcome shows, if any.
fn judge(ran: &Ran, timeout: Duration) -> Option<String> {
    let Some(status) = ran.status else {
        if progressing(&ran.stderr) {
            return None;
        }
        return Some(format!("still running after {timeout:?} (killed) with no block finishing"));
    };
    let Some(code) = status.code() else {
        return Some(format!("killed by a signal ({status})"));
    };
    if code == 101 || ran.stderr.contains("panicked at") {
        return Some("panic".into());
    }
    if code > 3 {
        return Some(format!("exit code {code}"));
    }
    if code != 0 && ran.stderr.trim().is_empty() {
        return Some(format!("exit code {code} with nothing on stderr"));
    }
    None
}

fn out_targets(args: &[String]) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if (a == "--out" || a == "-o") && i + 1 < args.len() {
            let t = &args[i + 1];
            v.push(PathBuf::from(if a == "--out" { t.split_once('=').map_or(t.as_str(), |x| x.1) } else { t }));
        }
    }
    v
}

fn main() {
    let opts = parse_args();
    let seeds = load(&opts);
    if seeds.is_empty() {
        usage("no `.prism` files in the corpus directories (run from the repository root, or name a directory)");
    }
    let dir = std::env::temp_dir().join(format!("prism-mutate-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    if let Err(e) = fs::create_dir_all(&dir) {
        eprintln!("error: cannot create `{}`: {e}", dir.display());
        std::process::exit(2);
    }
    let mut r = Rng::new(opts.seed);
    let start = Instant::now();
    let budget = Duration::from_secs(opts.seconds);
    let (mut mutants, mut commands) = (0u64, 0u64);
    let mut codes: BTreeMap<String, u64> = BTreeMap::new();
    let mut faults: Vec<(String, String, String)> = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    while mutants < opts.mutants && start.elapsed() < budget {
        mutants += 1;
        let seed = r.pick(&seeds);
        let text = if r.chance(85) { mutate_source(&mut r, &seed.text) } else { seed.text.clone() };
        let src = dir.join("mutant.prism");
        if let Err(e) = fs::write(&src, &text) {
            eprintln!("error: cannot write `{}`: {e}", src.display());
            std::process::exit(2);
        }
        let src_s = src.display().to_string();
        let mut cmds: Vec<Vec<String>> = vec![vec!["check".into(), src_s.clone()]];
        if let Some(l) = (!seed.launches.is_empty()).then(|| r.pick(&seed.launches).clone()) {
            let l = if r.chance(80) { mutate_launch(&mut r, &l, &dir, &src) } else { l };
            let mut c = vec!["run".into(), src_s.clone()];
            if let Some((k, rest)) = l.split_first() {
                c.push("--kernel".into());
                c.push(k.clone());
                c.extend(rest.iter().cloned());
            }
            // Mutants must stay quick: a modest step budget, and a stall limit well inside
            // the timeout, so that only a real hang reaches the timeout.
            if !c.iter().any(|a| a == "--fuel") {
                c.extend(["--fuel".into(), "20000000".into()]);
            }
            if !c.iter().any(|a| a == "--stall-limit") {
                c.extend(["--stall-limit".into(), "5".into()]);
            }
            cmds.push(c);
        }
        if r.chance(30) {
            let mut c = vec!["build".into(), src_s.clone(), "-o".into()];
            c.push(match r.below(6) {
                0 => dir.display().to_string(),
                1 => src_s.clone(),
                2 => dir.join("missing/x.cu").display().to_string(),
                _ => dir.join("out.cu").display().to_string(),
            });
            if r.chance(30) {
                c.extend(["--arch".into(), r.pick(&["sm_80", "sm_90", "sm_90a", "sm_100", "x"]).to_string()]);
            }
            cmds.push(c);
        }
        for c in cmds {
            // Outputs that do not exist before the command must exist afterwards exactly
            // when it succeeded (the source, a directory and a missing folder never change).
            let targets = out_targets(&c);
            for t in &targets {
                if t.extension().is_some_and(|e| e == "npy" || e == "cu") && t.parent() == Some(dir.as_path()) {
                    let _ = fs::remove_file(t);
                }
            }
            let ran = run_cmd(&opts.prism, &c, &dir, opts.timeout);
            commands += 1;
            let code = match ran.status {
                Some(s) => s.code().map_or("by a signal".into(), |c| c.to_string()),
                None if progressing(&ran.stderr) => "none (killed at the timeout, still finishing blocks)".into(),
                None => "none (killed at the timeout)".into(),
            };
            *codes.entry(format!("{} exit {code}", c[0])).or_default() += 1;
            if ran.elapsed > slowest.0 {
                slowest = (ran.elapsed, c.join(" "));
            }
            let mut fault = judge(&ran, opts.timeout);
            let ok = ran.status.is_some_and(|s| s.success());
            for t in &targets {
                let fresh = t.extension().is_some_and(|e| e == "npy" || e == "cu") && t.parent() == Some(dir.as_path());
                if fresh && t.exists() && !ok && fault.is_none() {
                    fault = Some(format!("failed but left `{}` behind", t.display()));
                }
                if fresh && !t.exists() && ok && fault.is_none() {
                    fault = Some(format!("succeeded without writing `{}`", t.display()));
                }
            }
            if fs::read_to_string(&src).ok().as_deref() != Some(text.as_str()) && fault.is_none() {
                fault = Some("changed its source file".into());
                let _ = fs::write(&src, &text);
            }
            if let Some(f) = fault {
                let line = format!("prism {}", c.join(" "));
                println!(
                    "FAULT: {f}\n  from {}\n  command: {line}\n  stderr: {}",
                    seed.path.display(),
                    ran.stderr.trim()
                );
                faults.push((f, line, text.clone()));
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "prism-mutate: {mutants} mutants of {} corpus files, {commands} commands in {secs:.1} s ({:.1} commands/s), seed {}",
        seeds.len(),
        commands as f64 / secs.max(1e-9),
        opts.seed
    );
    for (k, n) in &codes {
        println!("  {k}: {n}");
    }
    println!("  slowest command: {:.2?} `prism {}`", slowest.0, slowest.1);
    println!("  faults: {}", faults.len());
    if let Some(keep) = &opts.keep
        && !faults.is_empty()
    {
        if let Err(e) = fs::create_dir_all(keep) {
            eprintln!("error: cannot create `{}`: {e}", keep.display());
        }
        for (i, (f, line, text)) in faults.iter().enumerate() {
            let _ = fs::write(keep.join(format!("fault-{i}.prism")), format!("# {f}\n# {line}\n{text}"));
        }
    }
    let _ = fs::remove_dir_all(&dir);
    std::process::exit(if faults.is_empty() { 0 } else { 1 });
}

//! The compile jobs of the corpus tests (`nvcc.rs`, `nvrtc.rs`): the same translation units
//! for both compilers, so their errors and warnings can be compared.
//!
//! Programs are batched one translation unit per corpus directory and architecture (each
//! program in its own namespace, kernels without `extern "C"`, the helper prelude once);
//! `#line` directives map every message to the program's `.cu` snapshot. Programs using
//! Hopper-only features (wgmma, setmaxnreg, TMA: `KernelAbi::needs_sm90a`) are compiled for
//! `sm_90a` only. Then one whole file for each combination of what the lean prelude can
//! leave out, and the multi-file programs of `tests/modules`.

use prism_test::{prism_files, repo_root};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One translation unit to compile.
pub struct Job {
    /// What it holds, for messages.
    pub what: String,
    /// Where its text is written (nvcc reads it; NVRTC names the program after it).
    pub file: PathBuf,
    /// Its text.
    pub text: String,
    /// The architecture, `sm_80` or `sm_90a`.
    pub arch: &'static str,
}

fn emit(path: &Path, root: &Path) -> (String, prism_cuda::Output) {
    let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/");
    let src = std::fs::read_to_string(path).expect("readable source");
    let synced = prism_test::synced(&rel, &src, &prism_driver::Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let opts = prism_cuda::Options {
        file_name: path.file_name().expect("a file").to_string_lossy().into_owned(),
        source: Some(src),
        extern_c: false,
        prelude: false,
        ..prism_cuda::Options::default()
    };
    (rel, prism_cuda::emit(&synced, &opts))
}

/// Every job, with its text written under `tmp`.
pub fn jobs(tmp: &Path) -> Vec<Job> {
    let root = repo_root();
    let accept = root.join("tests/ui/accept");
    std::fs::create_dir_all(tmp).expect("temporary directory");
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&accept).expect("corpus").flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    let mut jobs = Vec::new();
    // One job per directory and architecture.
    for dir in &dirs {
        let name = dir.file_name().expect("a name").to_string_lossy().into_owned();
        for arch in ["sm_80", "sm_90a"] {
            let mut text = String::from(prism_cuda::prelude::PRELUDE);
            let mut n = 0;
            for (i, path) in prism_files(dir).iter().enumerate() {
                let (rel, out) = emit(path, &root);
                assert!(out.errors.is_empty(), "{rel}: {:?}", out.errors);
                if out.needs_sm90a && arch == "sm_80" {
                    continue;
                }
                let cu = rel.trim_end_matches(".prism").to_string() + ".cu";
                text.push_str(&format!("namespace prism_test_{i} {{\n#line 1 \"{cu}\"\n{}\n}}\n", out.text));
                n += 1;
            }
            let file = tmp.join(format!("{name}_{arch}.cu"));
            jobs.push(Job { what: format!("{name} ({n} programs) for {arch}"), file, text, arch });
        }
    }
    // `prism build` prints a lean prelude, just the headers and helpers its kernels use:
    // compile whole files, one for each combination of what the prelude can leave out that
    // the corpus has, so a helper or header dropped wrongly fails here.
    let mut classes = BTreeSet::new();
    for path in prism_files(&accept) {
        let src = std::fs::read_to_string(&path).expect("readable source");
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let synced =
            prism_test::synced(&rel, &src, &prism_driver::Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let out =
            prism_cuda::emit(&synced, &prism_cuda::Options { source: Some(src), ..prism_cuda::Options::default() });
        let class = (
            out.text.contains("<cuda_fp16.h>"),
            out.text.contains("<cuda_bf16.h>"),
            out.text.contains("<cooperative_groups.h>"),
        );
        if classes.insert(class) {
            let file = tmp.join(format!("lean_{}_{}_{}.cu", class.0, class.1, class.2));
            let arch = if out.needs_sm90a { "sm_90a" } else { "sm_80" };
            jobs.push(Job {
                what: format!("{rel} alone, with its lean prelude, for {arch}"),
                file,
                text: out.text,
                arch,
            });
        }
    }
    assert!(classes.len() >= 3, "the corpus should exercise the lean prelude's choices: {classes:?}");
    // The multi-file programs of `tests/modules`: one `.cu` per root file, holding every
    // module it imports.
    let modules = root.join("tests/modules");
    let mut files = prism_driver::MemoryFiles::default();
    for path in prism_files(&modules) {
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_path_buf();
        files.add(rel, std::fs::read_to_string(&path).expect("readable source"));
    }
    for main in prism_files(&modules).into_iter().filter(|p| p.file_name().is_some_and(|n| n == "main.prism")) {
        let rel = main.strip_prefix(&root).unwrap_or(&main).to_string_lossy().replace('\\', "/");
        let mut map = prism_span::SourceMap::default();
        let file = map.add(rel.clone(), std::fs::read_to_string(&main).expect("readable source"));
        let mut problems = prism_diag::Problems::default();
        let mut search =
            prism_driver::Search { files: &mut files, include: vec!["tests/modules/include".into()], base: None };
        let synced =
            prism_driver::compile_with(&mut map, file, &mut search, &prism_driver::Options::default(), &mut problems)
                .unwrap_or_else(|| panic!("{rel}: {:?}", problems.diagnostics()));
        let out = prism_cuda::emit(&synced, &prism_cuda::Options::default());
        let cu = tmp.join(format!("module_{}.cu", jobs.len()));
        jobs.push(Job { what: format!("{rel} with its imports, for sm_80"), file: cu, text: out.text, arch: "sm_80" });
    }
    for j in &jobs {
        std::fs::write(&j.file, &j.text).expect("write a job's file");
    }
    jobs
}

/// The warning lines of compile logs, sorted and deduplicated: what
/// `tests/nvcc_warnings.txt` records. A whole lean file has no `#line` directive (its
/// prelude is its own), so its messages name the file the job wrote under `tmp`: that
/// directory is left out, since it differs between checkouts and between the nvcc and the
/// NVRTC tests.
pub fn warnings<'a>(tmp: &Path, logs: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    let dir = format!("{}/", tmp.display());
    logs.into_iter()
        .flat_map(str::lines)
        .filter(|l| l.contains("warning"))
        .map(|l| l.trim().replace(&dir, ""))
        .collect()
}

/// Runs `compile` over `jobs` on two threads (the development machine's cores), keeping the
/// jobs' order.
pub fn on_two_threads<R: Send>(jobs: &[Job], compile: impl Fn(&Job) -> R + Sync) -> Vec<(&Job, R)> {
    let mut results: Vec<(usize, &Job, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|k| {
                let compile = &compile;
                s.spawn(move || {
                    jobs.iter().enumerate().skip(k).step_by(2).map(|(i, j)| (i, j, compile(j))).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a compile thread")).collect()
    });
    results.sort_by_key(|r| r.0);
    results.into_iter().map(|(_, j, r)| (j, r)).collect()
}

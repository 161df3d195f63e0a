//! nvcc compiles the CUDA of every accepted program of `tests/ui/accept` to cubins for
//! `sm_80` and `sm_90a`, with zero errors. Programs using Hopper-only features (wgmma,
//! setmaxnreg, TMA: `KernelAbi::needs_sm90a`) compile for `sm_90a` only. Programs are
//! batched one translation unit per corpus directory and architecture (each program in its
//! own namespace, kernels without `extern "C"`, the helper prelude once), and nvcc runs two
//! at a time: the whole corpus takes well under a minute on two cores, where a process per
//! file takes several. `#line` directives map every message to the program's `.cu`
//! snapshot, and the warnings are snapshotted in `tests/nvcc_warnings.txt`
//! (`PRISM_BLESS=1` rewrites it).
//!
//! Without nvcc the test is reported as *ignored* (and a line on stderr says why: run
//! `scripts/install-nvcc.sh`), so a normal run shows that it did not run; under CI (`CI`
//! set) it fails instead: CI installs nvcc first.

mod common;

use prism_gpu::toolchain::{self, Emit};
use prism_test::{prism_files, repo_root, snapshot};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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

fn main() {
    common::run_with_tools("nvcc_compiles_the_corpus_for_sm80_and_sm90a", toolchain::find_nvcc(), "nvcc", |nvcc| {
        nvcc_compiles_the_corpus_for_sm80_and_sm90a(&nvcc);
        Ok(())
    })
}

fn nvcc_compiles_the_corpus_for_sm80_and_sm90a(nvcc: &Path) {
    let root = repo_root();
    let accept = root.join("tests/ui/accept");
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nvcc-corpus");
    std::fs::create_dir_all(&tmp).expect("temporary directory");
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&accept).expect("corpus").flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    // One job per directory and architecture.
    let mut jobs: Vec<(String, PathBuf, &str)> = Vec::new();
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
            std::fs::write(&file, text).expect("write batch");
            jobs.push((format!("{name} ({n} programs) for {arch}"), file, arch));
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
            std::fs::write(&file, &out.text).expect("write lean file");
            let arch = if out.needs_sm90a { "sm_90a" } else { "sm_80" };
            jobs.push((format!("{rel} alone, with its lean prelude, for {arch}"), file, arch));
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
        let mut search = prism_driver::Search { files: &mut files, include: vec!["tests/modules/include".into()] };
        let synced =
            prism_driver::compile_with(&mut map, file, &mut search, &prism_driver::Options::default(), &mut problems)
                .unwrap_or_else(|| panic!("{rel}: {:?}", problems.diagnostics()));
        let out = prism_cuda::emit(&synced, &prism_cuda::Options::default());
        let cu = tmp.join(format!("module_{}.cu", jobs.len()));
        std::fs::write(&cu, &out.text).expect("write module program");
        jobs.push((format!("{rel} with its imports, for sm_80"), cu, "sm_80"));
    }
    // Two nvcc processes at a time.
    let results: Vec<(String, toolchain::Compiled)> = std::thread::scope(|s| {
        let chunks: Vec<Vec<&(String, PathBuf, &str)>> =
            (0..2).map(|k| jobs.iter().skip(k).step_by(2).collect()).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let nvcc = nvcc.to_path_buf();
                s.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|(what, file, arch)| {
                            let out = file.with_extension("cubin");
                            let c = toolchain::compile(&nvcc, file, &out, arch, Emit::Cubin).expect("run nvcc");
                            (what.clone(), c)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("nvcc thread")).collect()
    });
    let mut failures = Vec::new();
    let mut warnings = BTreeSet::new();
    for (what, c) in &results {
        if !c.ok {
            failures.push(format!("nvcc failed on {what}:\n{}", c.log));
        }
        for line in c.log.lines() {
            if line.contains("warning") {
                warnings.insert(line.trim().to_string());
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let mut record = String::from(
        "# nvcc warnings compiling tests/ui/accept for sm_80 and sm_90a (crates/prism_gpu/tests/nvcc.rs).\n\
         # Rewrite with `PRISM_BLESS=1 cargo test -p prism_gpu --test nvcc`.\n",
    );
    for w in &warnings {
        record.push_str(w);
        record.push('\n');
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvcc_warnings.txt");
    if let Err(e) = snapshot(&path, &record) {
        panic!("{e}");
    }
}

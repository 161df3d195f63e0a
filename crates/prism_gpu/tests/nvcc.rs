//! nvcc compiles the CUDA of every accepted program of `tests/ui/accept` to cubins for
//! `sm_80` and `sm_90a`, with zero errors, batched as `corpus_jobs` says (the NVRTC test
//! compiles the same units). nvcc runs two at a time: the whole corpus takes well under a
//! minute on two cores, where a process per file takes several. `#line` directives map
//! every message to the program's `.cu` snapshot, and the warnings are snapshotted in
//! `tests/nvcc_warnings.txt` (`PRISM_BLESS=1` rewrites it).
//!
//! Without nvcc the test is reported as *ignored* (and a line on stderr says why: run
//! `scripts/install-nvcc.sh`), so a normal run shows that it did not run; under CI (`CI`
//! set) it fails instead: CI installs nvcc first.

mod common;
mod corpus_jobs;

use prism_gpu::toolchain::{self, Emit};
use prism_test::snapshot;
use std::path::{Path, PathBuf};

fn main() {
    common::run_with_tools("nvcc_compiles_the_corpus_for_sm80_and_sm90a", toolchain::find_nvcc(), "nvcc", |nvcc| {
        nvcc_compiles_the_corpus_for_sm80_and_sm90a(&nvcc);
        Ok(())
    })
}

fn nvcc_compiles_the_corpus_for_sm80_and_sm90a(nvcc: &Path) {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nvcc-corpus");
    let jobs = corpus_jobs::jobs(&tmp);
    // Two nvcc processes at a time.
    let start = std::time::Instant::now();
    let results = corpus_jobs::on_two_threads(&jobs, |j| {
        toolchain::compile(nvcc, &j.file, &j.file.with_extension("cubin"), j.arch, Emit::Cubin).expect("run nvcc")
    });
    let mut failures = Vec::new();
    for (j, c) in &results {
        if !c.ok {
            failures.push(format!("nvcc failed on {}:\n{}", j.what, c.log));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let warnings = corpus_jobs::warnings(&tmp, results.iter().map(|(_, c)| c.log.as_str()));
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
    #[allow(clippy::print_stderr)]
    {
        eprintln!("nvcc compiled {} translation units in {:.1?}", jobs.len(), start.elapsed());
    }
}

//! Shared by the backend's integration tests: the pipeline from a corpus file to CUDA.

#![allow(dead_code)]

use prism_test::{repo_root, target_for};
use std::path::Path;

/// The IR of an accepted program after synchronisation inference.
pub fn sync_ir(rel: &str, src: &str) -> prism_ir::ir::Program {
    sync_ir_with(rel, src, &prism_sync::Options::default())
}

/// [`sync_ir`] with synchronisation options (without barrier motion, say).
pub fn sync_ir_with(rel: &str, src: &str, opts: &prism_sync::Options) -> prism_ir::ir::Program {
    let target = target_for(src).expect("valid arch directive");
    let mut map = prism_span::SourceMap::default();
    let file = map.add(rel, src);
    let mut problems = prism_diag::Problems::default();
    let tir = prism_types::check_source(file, src, &target, &mut problems);
    assert!(!problems.has_errors(), "{rel} has errors");
    prism_sync::lower_and_sync(&tir, opts).0
}

/// Emits a corpus file the way the snapshots are made; returns its path relative to the
/// repository root and the output.
pub fn emit_file(path: &Path) -> (String, prism_cuda::Output) {
    emit_file_with(path, false)
}

/// [`emit_file`] with or without the prelude (snapshots leave it out: it is the same in
/// every file).
pub fn emit_file_with(path: &Path, prelude: bool) -> (String, prism_cuda::Output) {
    let root = repo_root();
    let rel = path.strip_prefix(&root).unwrap_or(path).to_string_lossy().replace('\\', "/");
    let src = std::fs::read_to_string(path).expect("readable source");
    let ir = sync_ir(&rel, &src);
    let opts = prism_cuda::Options {
        file_name: path.file_name().expect("a file").to_string_lossy().into_owned(),
        source: Some(src),
        prelude,
        ..prism_cuda::Options::default()
    };
    (rel, prism_cuda::emit(&ir, &opts))
}

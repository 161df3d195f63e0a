//! Shared by the backend's integration tests: the pipeline from a corpus file to CUDA.

#![allow(dead_code)]

use prism_test::repo_root;
use std::path::Path;

/// An accepted program through the whole pipeline.
pub fn synced(rel: &str, src: &str) -> prism_driver::Synced {
    synced_with(rel, src, &prism_driver::Options::default())
}

/// [`synced`] with pipeline options (without barrier motion, say).
pub fn synced_with(rel: &str, src: &str, opts: &prism_driver::Options) -> prism_driver::Synced {
    prism_test::synced(rel, src, opts).unwrap_or_else(|e| panic!("{e}"))
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
    let synced = synced(&rel, &src);
    let opts = prism_cuda::Options {
        file_name: path.file_name().expect("a file").to_string_lossy().into_owned(),
        source: Some(src),
        prelude,
        ..prism_cuda::Options::default()
    };
    (rel, prism_cuda::emit(&synced, &opts))
}

//! Writing output files so that a failure never leaves a partial one behind.

use std::path::{Path, PathBuf};

/// A temporary name next to `path`, for writing it before renaming it into place.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes `bytes` to `path` through a temporary file in the same directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_all_atomic(&[(path, bytes)])
}

/// Writes every file to a temporary first and renames them into place only when all are
/// written, so a failure leaves no output partial (and none at all if a write fails).
pub fn write_all_atomic(files: &[(&Path, &[u8])]) -> Result<(), String> {
    let mut temps: Vec<PathBuf> = Vec::new();
    let clean = |temps: &[PathBuf]| {
        for t in temps {
            let _ = std::fs::remove_file(t);
        }
    };
    for (path, bytes) in files {
        let tmp = temp_path(path);
        temps.push(tmp.clone());
        if let Err(e) = std::fs::write(&tmp, bytes) {
            clean(&temps);
            return Err(format!("cannot write `{}`: {e}", path.display()));
        }
    }
    for ((path, _), tmp) in files.iter().zip(&temps) {
        if let Err(e) = std::fs::rename(tmp, path) {
            clean(&temps);
            return Err(format!("cannot write `{}`: {e}", path.display()));
        }
    }
    Ok(())
}

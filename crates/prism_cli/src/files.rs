//! Writing output files so that a failure never leaves a partial one behind, and never
//! writes where it should not.
//!
//! Every output path is checked before anything is written ([`output_path`]): its directory
//! must exist; a directory is refused; a symbolic link is followed, so the file it points to
//! is replaced and the link stays; a device or FIFO (`/dev/null`, a pipe) is written
//! through, never replaced; and the input source file is never an output. Two outputs of
//! one command that name the same file, however spelled (`a.npy`, `./a.npy`, a link to
//! it), are refused ([`same_output`]): one would silently replace the other. Then
//! [`write_all_atomic`] writes every regular output to a temporary file beside it, writes
//! through the special ones, and renames the temporaries into place only when all are
//! written, so a failure leaves no partial output.

use std::path::{Path, PathBuf};

/// Checks an output path and returns where to write: the path itself, or the file a
/// symbolic link points to. `inputs` are files that must not be overwritten (the source).
pub fn output_path(path: &Path, inputs: &[&Path]) -> Result<PathBuf, String> {
    let shown = path.display();
    let mut real = path.to_path_buf();
    // Follow symbolic links (a chain of them) to the file they name, so that writing
    // replaces that file and keeps the link.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&real) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&real).map_err(|e| format!("cannot read the link `{shown}`: {e}"))?;
                real = match real.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => break,
        }
    }
    match std::fs::metadata(&real) {
        Ok(m) if m.is_dir() => return Err(format!("`{shown}` is a directory; name a file to write")),
        // A device or FIFO is written through (see `write_all_atomic`).
        Ok(m) if !m.is_file() => return Ok(real),
        _ => {}
    }
    let dir = real.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!("cannot write `{shown}`: the directory `{}` does not exist", dir.display()));
    }
    for input in inputs {
        if same_file(&real, input) {
            return Err(format!("`{shown}` is the input `{}`: refusing to overwrite it", input.display()));
        }
    }
    Ok(real)
}

/// Whether two paths [`output_path`] returned name the same file, however they are spelled
/// (`a.npy` and `./a.npy`, `d/../a.npy`), whether or not it exists yet.
pub fn same_output(a: &Path, b: &Path) -> bool {
    a == b || matches!((identity(a), identity(b)), (Some(x), Some(y)) if x == y)
}

/// One spelling of an output path for all of them: its directory made canonical (it exists:
/// [`output_path`] checked), joined with its file name; an existing file's own canonical
/// path, which also covers a device reached through a link.
fn identity(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(std::fs::canonicalize(dir).ok()?.join(path.file_name()?))
}

/// Whether two paths name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Whether `path` is a device or FIFO, which is written through rather than replaced.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

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
    // Callers refuse these while validating; one file twice would share a temporary and
    // leave only the last contents, so refuse it here too rather than write it.
    for (j, (b, _)) in files.iter().enumerate() {
        if let Some((a, _)) = files[..j].iter().find(|(a, _)| same_output(a, b)) {
            return Err(format!("`{}` and `{}` name the same file", a.display(), b.display()));
        }
    }
    let mut temps: Vec<PathBuf> = Vec::new();
    let clean = |temps: &[PathBuf]| {
        for t in temps {
            let _ = std::fs::remove_file(t);
        }
    };
    let special = is_special;
    for (path, bytes) in files.iter().filter(|(p, _)| !special(p)) {
        let tmp = temp_path(path);
        temps.push(tmp.clone());
        if let Err(e) = std::fs::write(&tmp, bytes) {
            clean(&temps);
            return Err(format!("cannot write `{}`: {e}", path.display()));
        }
    }
    // Devices and FIFOs cannot be replaced: write through them.
    for (path, bytes) in files.iter().filter(|(p, _)| special(p)) {
        if let Err(e) = std::fs::OpenOptions::new().write(true).open(path).and_then(|mut f| {
            use std::io::Write;
            f.write_all(bytes)
        }) {
            clean(&temps);
            return Err(format!("cannot write `{}`: {e}", path.display()));
        }
    }
    for ((path, _), tmp) in files.iter().filter(|(p, _)| !special(p)).zip(&temps) {
        if let Err(e) = std::fs::rename(tmp, path) {
            clean(&temps);
            return Err(format!("cannot write `{}`: {e}", path.display()));
        }
    }
    Ok(())
}

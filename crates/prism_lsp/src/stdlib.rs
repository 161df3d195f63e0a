//! The standard library's modules as files an editor can open.
//!
//! `prism.std` is bundled text (`prism_std`), not files: the driver names its modules
//! `<prism.std>/warp.prism` in the source map, which is no location a client can show. To go
//! to the definition of a standard function, the server writes each module it needs, the
//! first time it needs it, into a cache directory per version,
//! `$XDG_CACHE_HOME/prism/std-<version>/prism/std/warp.prism` (or `~/.cache/...`, or the
//! system's temporary directory when neither can be written), read-only, and points there.
//! The text written is the text the spans refer to, so every position stays right.
//!
//! A file whose contents already match is left alone (several servers, and several
//! versions of one server, share the cache); one that differs (a development build whose
//! library changed under the same version, or a file edited by hand) is replaced, through
//! a temporary file renamed over it, so a reader never sees half a module.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The prefix of the names the driver gives the standard library's modules.
pub const PREFIX: &str = "<prism.std>/";

/// The modules written by this process: name to (text, path), so that each request does
/// not read the cache again.
fn written() -> &'static Mutex<HashMap<String, (String, PathBuf)>> {
    static WRITTEN: OnceLock<Mutex<HashMap<String, (String, PathBuf)>>> = OnceLock::new();
    WRITTEN.get_or_init(Mutex::default)
}

/// The directories this version's modules may go to, best first: the user's cache
/// (`$XDG_CACHE_HOME`, else `~/.cache`) and the temporary directory, named per user there
/// because it is shared.
fn roots() -> Vec<PathBuf> {
    let version = format!("std-{}", env!("CARGO_PKG_VERSION"));
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let mut out = Vec::new();
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        out.push(x.join("prism").join(&version));
    }
    if let Some(h) = std::env::var_os("HOME").and_then(absolute) {
        out.push(h.join(".cache").join("prism").join(&version));
    }
    let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_default();
    let user: String = user.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    out.push(std::env::temp_dir().join(format!("prism-{user}")).join(&version));
    out
}

/// The file on disk holding the standard module named `name` in a source map (a name
/// starting with [`PREFIX`]) whose text is `text`: written now if needed. `None` for other
/// names, and when no directory can be written.
pub fn file_of(name: &str, text: &str) -> Option<PathBuf> {
    let rel = name.strip_prefix(PREFIX)?;
    // The driver makes these names from module paths; anything else is not one of them.
    if rel.split('/').any(|c| c.is_empty() || c == "." || c == ".." || c.contains('\\')) || !rel.ends_with(".prism") {
        return None;
    }
    let mut memo = written().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((t, p)) = memo.get(name)
        && t == text
    {
        return Some(p.clone());
    }
    let path = roots().into_iter().find_map(|root| write_once(&root.join("prism").join("std").join(rel), text).ok())?;
    memo.insert(name.to_string(), (text.to_string(), path.clone()));
    Some(path)
}

/// Makes `path` hold exactly `text`, read-only, writing it only when it does not already.
fn write_once(path: &Path, text: &str) -> std::io::Result<PathBuf> {
    if std::fs::read(path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(path.to_path_buf());
    }
    let dir = path.parent().ok_or_else(|| std::io::Error::other("no directory"))?;
    std::fs::create_dir_all(dir)?;
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("module");
    let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
    let result = (|| {
        std::fs::write(&tmp, text)?;
        let mut perms = std::fs::metadata(&tmp)?.permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&tmp, perms)?;
        if std::fs::rename(&tmp, path).is_err() {
            // Some systems refuse to rename over a read-only file: take the old one away.
            if let Ok(meta) = std::fs::metadata(path) {
                let mut perms = meta.permissions();
                #[allow(clippy::permissions_set_readonly_false)] // It is removed right after.
                perms.set_readonly(false);
                let _ = std::fs::set_permissions(path, perms);
                let _ = std::fs::remove_file(path);
            }
            std::fs::rename(&tmp, path)?;
        }
        Ok(path.to_path_buf())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_standard_module_names_are_materialised() {
        assert_eq!(file_of("/home/x/lib/util.prism", "text"), None);
        assert_eq!(file_of("<prism.std>/../../etc/passwd.prism", "text"), None);
        assert_eq!(file_of("<prism.std>/warp", "text"), None);
    }

    #[test]
    fn a_matching_file_is_kept_and_a_different_one_replaced() {
        let dir = std::env::temp_dir().join(format!("prism-stdlib-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("prism/std/warp.prism");
        assert_eq!(write_once(&path, "one").unwrap(), path);
        assert!(std::fs::metadata(&path).unwrap().permissions().readonly());
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_once(&path, "one").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified, "rewritten");
        write_once(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert!(std::fs::metadata(&path).unwrap().permissions().readonly());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

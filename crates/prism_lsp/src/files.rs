//! Imported modules as the editor sees them: the text of an open document wins over the
//! file on disk, so that an import reflects unsaved edits to the module it names.
//!
//! This is the driver's [`prism_driver::Files`] trait over an overlay. It reads the disk
//! (the server is a front end, like the CLI), and keys a module by its canonical path as
//! the CLI does, so one file imported by two paths is loaded once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Open documents by normalised path, over the file system.
pub struct Overlay<'a> {
    /// The open documents' texts, keyed by [`normalise`]d absolute path.
    pub docs: &'a HashMap<PathBuf, String>,
}

impl prism_driver::Files for Overlay<'_> {
    fn read(&mut self, path: &Path) -> Result<Option<(String, String)>, String> {
        let norm = normalise(path);
        let canonical = std::fs::canonicalize(&norm).ok();
        // An open document that exists on disk is keyed like the disk file would be.
        if let Some(text) = self.docs.get(&norm) {
            let key = canonical.as_ref().unwrap_or(&norm);
            return Ok(Some((key.display().to_string(), text.clone())));
        }
        if let Some(c) = &canonical
            && let Some(text) = self.docs.get(c)
        {
            return Ok(Some((c.display().to_string(), text.clone())));
        }
        if !norm.is_file() {
            return Ok(None);
        }
        let key = canonical.ok_or_else(|| format!("cannot read `{}`", norm.display()))?;
        let bytes = std::fs::read(&norm).map_err(|e| format!("cannot read `{}`: {e}", norm.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            format!("`{}` is not UTF-8 text (invalid byte at offset {})", norm.display(), e.utf8_error().valid_up_to())
        })?;
        Ok(Some((key.display().to_string(), text)))
    }
}

pub use prism_driver::normalise;

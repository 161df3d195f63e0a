//! Loading the modules a program imports (`docs/language.md` §2, "Modules").
//!
//! A module is a `.prism` file; `import a.b` names `a/b.prism`, looked for in the importing
//! file's directory, then in each include directory in order. `prism.*` names the bundled
//! standard library (`prism_std`) and nothing else, so a user's file cannot shadow it.
//! Loading is a depth-first walk from the root file: each module is parsed once (two
//! imports of one file, by whatever path, share it), modules come out in dependency order
//! with the root last, and an import of a module still being loaded is a cycle. Reading
//! files is the caller's job ([`Files`]): the driver does no IO.

use prism_diag::{Diagnostic, Problems};
use prism_span::{FileId, SourceMap, Span};
use prism_syntax::ast;
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// Reads source files for the module search. The CLI implements it over the file system;
/// [`MemoryFiles`] holds files in memory for tests and the Rust API.
pub trait Files {
    /// The text of the file at `path`, with a key that is the same for every path naming
    /// that file (the canonical path); `Ok(None)` when there is no such file, `Err` with a
    /// message when it exists but cannot be read.
    fn read(&mut self, path: &Path) -> Result<Option<(String, String)>, String>;
}

/// No files: imports find the standard library only.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFiles;

impl Files for NoFiles {
    fn read(&mut self, _: &Path) -> Result<Option<(String, String)>, String> {
        Ok(None)
    }
}

/// Files held in memory, by path (`lib/util.prism`). Paths are compared after removing
/// `.` components and resolving `..` textually.
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles {
    files: HashMap<PathBuf, String>,
}

impl MemoryFiles {
    /// Adds the file `path` with text `text`.
    pub fn add(&mut self, path: impl AsRef<Path>, text: impl Into<String>) -> &mut Self {
        self.files.insert(normalise(path.as_ref()), text.into());
        self
    }
}

impl Files for MemoryFiles {
    fn read(&mut self, path: &Path) -> Result<Option<(String, String)>, String> {
        let p = normalise(path);
        Ok(self.files.get(&p).map(|t| (p.display().to_string(), t.clone())))
    }
}

/// `path` without `.` components and with `a/..` pairs removed, textually: how in-memory
/// files (and an editor's open documents) compare paths without asking the disk.
pub fn normalise(path: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.iter().collect()
}

/// Where imports are looked for: the files and the include directories (`-I DIR`), in
/// order, after the importing file's own directory.
pub struct Search<'a> {
    /// How files are read.
    pub files: &'a mut dyn Files,
    /// The include directories.
    pub include: Vec<PathBuf>,
    /// Where the root file's imports are looked for first, instead of its own directory:
    /// the language server names the workspace root here for a document that is not a file
    /// (an untitled buffer, named by its URI, which has no directory). `None` for a root
    /// named by its path.
    pub base: Option<PathBuf>,
}

impl Search<'_> {
    /// Finds `a/b.prism` for module path `a.b` imported from a file whose imports are
    /// looked for in `here` first: its key, its name for messages and its text; or the
    /// places looked at.
    fn find(&mut self, path: &[String], here: &Path) -> Result<(String, String, String), String> {
        let rel: PathBuf = path.iter().collect::<PathBuf>().with_extension("prism");
        let mut looked = Vec::new();
        for dir in std::iter::once(here).chain(self.include.iter().map(PathBuf::as_path)) {
            let candidate = dir.join(&rel);
            match self.files.read(&candidate)? {
                Some((key, text)) => return Ok((key, candidate.display().to_string(), text)),
                None => looked.push(format!("`{}`", candidate.display())),
            }
        }
        Err(format!("looked for {}", looked.join(", ")))
    }
}

/// The most modules one import chain may nest: deeper chains are refused rather than
/// overflowing the stack of the loader.
const MAX_IMPORT_DEPTH: usize = 64;

/// A loaded module.
pub(crate) struct Loaded {
    pub file: FileId,
    pub ast: ast::Module,
    /// Its dotted path; empty for the root.
    pub path: Vec<String>,
    /// For each import item: the index of the module it names, if it could be loaded.
    pub imports: Vec<Option<usize>>,
    /// The import line that first loaded it (none for the root).
    pub imported_at: Option<Span>,
}

/// The modules of the program rooted at `root`, in dependency order with the root last,
/// and the syntax problems of all of them. Imports that cannot be loaded are reported in
/// `problems` (`unresolved-import`) and left `None`.
pub(crate) fn load(
    map: &mut SourceMap,
    root: FileId,
    search: &mut Search<'_>,
    syntax: &mut Problems,
    problems: &mut Problems,
) -> Vec<Loaded> {
    let mut l =
        Loader { units: Vec::new(), state: HashMap::new(), stack: Vec::new(), keys: Vec::new(), paths: HashSet::new() };
    // The root's key, as the files name it, so that an import of the root (by itself, or
    // by a module it imports) is the cycle it is rather than a second copy of the root
    // loaded as a module, whose definitions would then clash with the root's own. A root
    // the files do not hold (text given directly) cannot be imported by name anyway.
    let key = search.files.read(Path::new(map.file(root).name())).ok().flatten().map(|(k, _)| k).unwrap_or_default();
    l.visit(map, root, Vec::new(), None, key, search, syntax, problems);
    l.units
}

enum State {
    /// Being loaded: an import of it now is a cycle.
    Active,
    /// Loaded, at this index.
    Done(usize),
}

struct Loader {
    units: Vec<Loaded>,
    state: HashMap<String, State>,
    /// The modules being loaded, outermost first, by dotted path (the root as its file).
    stack: Vec<String>,
    /// Their keys, in the same order.
    keys: Vec<String>,
    /// Dotted paths given to modules so far: two different files imported by the same
    /// path from different directories get distinct ones.
    paths: HashSet<String>,
}

impl Loader {
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &mut self,
        map: &mut SourceMap,
        file: FileId,
        path: Vec<String>,
        imported_at: Option<Span>,
        key: String,
        search: &mut Search<'_>,
        syntax: &mut Problems,
        problems: &mut Problems,
    ) -> usize {
        let ast = prism_syntax::parse(file, map.file(file).text(), syntax);
        let shown = if path.is_empty() { map.file(file).name().to_string() } else { path.join(".") };
        self.state.insert(key.clone(), State::Active);
        self.stack.push(shown);
        self.keys.push(key.clone());
        // Where this file's imports are looked for first: its directory, or for the root
        // the one the search names instead (an editor's document that is not a file).
        let here = match (&search.base, path.is_empty()) {
            (Some(base), true) => base.clone(),
            _ => Path::new(map.file(file).name()).parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        let mut imports = Vec::new();
        for item in &ast.items {
            let ast::Item::Import(imp) = item else { continue };
            imports.push(self.import(map, imp, &here, search, syntax, problems));
        }
        self.stack.pop();
        self.keys.pop();
        let index = self.units.len();
        self.units.push(Loaded { file, ast, path, imports, imported_at });
        self.state.insert(key, State::Done(index));
        index
    }

    #[allow(clippy::too_many_arguments)]
    fn import(
        &mut self,
        map: &mut SourceMap,
        imp: &ast::Import,
        here: &Path,
        search: &mut Search<'_>,
        syntax: &mut Problems,
        problems: &mut Problems,
    ) -> Option<usize> {
        let path: Vec<String> = imp.path.iter().map(|i| i.name.clone()).collect();
        let dotted = imp.path_text();
        let unresolved = |message: String, label: &str, note: Option<String>| {
            let d = Diagnostic::error("unresolved-import", message, imp.span).with_label(label);
            match note {
                Some(n) => d.with_note(n),
                None => d,
            }
        };
        let found = if path[0] == "prism" {
            let rest = path.get(2..).map(|r| r.join(".")).unwrap_or_default();
            match (path.get(1).map(String::as_str), prism_std::source(&rest)) {
                (Some("std"), Some(text)) if path.len() > 2 => Ok((
                    format!("<prism.std>/{rest}"),
                    format!("<prism.std>/{}.prism", rest.replace('.', "/")),
                    text.to_string(),
                )),
                _ => Err(format!(
                    "`prism.*` is the standard library, whose modules are {}",
                    prism_std::MODULES.iter().map(|(m, _)| format!("`prism.std.{m}`")).collect::<Vec<_>>().join(", ")
                )),
            }
        } else {
            search.find(&path, here)
        };
        let (key, name, text) = match found {
            Ok(f) => f,
            Err(why) => {
                problems.push(unresolved(format!("no module `{dotted}`"), "not found", Some(why)));
                return None;
            }
        };
        match self.state.get(&key) {
            Some(State::Done(i)) => return Some(*i),
            Some(State::Active) if self.keys.last() == Some(&key) => {
                problems.push(unresolved(
                    format!("`{dotted}` is this file itself: a module cannot import itself"),
                    "imports the file it is in",
                    Some("use the file's own names directly; they are visible in the whole module".into()),
                ));
                return None;
            }
            Some(State::Active) => {
                let chain: Vec<String> = self.stack.iter().map(|m| format!("`{m}`")).collect();
                problems.push(unresolved(
                    format!("import cycle: `{dotted}` is already being loaded"),
                    "imports a module that imports this one",
                    Some(format!(
                        "the chain is {} -> `{dotted}`; modules are checked in dependency order, so move what they share into a module both import",
                        chain.join(" -> ")
                    )),
                ));
                return None;
            }
            None => {}
        }
        if self.stack.len() >= MAX_IMPORT_DEPTH {
            problems.push(unresolved(
                format!("imports nest more than {MAX_IMPORT_DEPTH} modules deep"),
                "one import too many",
                None,
            ));
            return None;
        }
        // A dotted path names the module's functions in the IR and the CUDA; two files
        // imported by one path from different directories get distinct ones.
        let mut unique = path.clone();
        let mut n = 2;
        while !self.paths.insert(unique.join(".")) {
            let last = path.last().expect("a path has a name");
            *unique.last_mut().expect("a path has a name") = format!("{last}_{n}");
            n += 1;
        }
        let file = map.add(name, text);
        Some(self.visit(map, file, unique, Some(imp.span), key, search, syntax, problems))
    }
}

//! Source files, byte spans and line/column lookup.
//!
//! Every later stage refers to source text through a [`Span`]: a file id and a half-open byte
//! range. The [`SourceMap`] owns the text of every file and turns byte offsets into 1-based
//! line and column numbers for diagnostics. Columns count Unicode scalar values, not bytes,
//! so editors that read our JSON output put the caret under the right character.
//!
//! Invariant: `span.start <= span.end <= text.len()` for the file the span names, and both
//! offsets fall on `char` boundaries.

#![deny(missing_docs)]

use std::fmt;

/// Identifies one file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A half-open byte range `[start, end)` in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    /// The file the range lies in.
    pub file: FileId,
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl Span {
    /// A span covering `[start, end)` in `file`.
    pub fn new(file: FileId, start: u32, end: u32) -> Span {
        debug_assert!(start <= end, "span start {start} after end {end}");
        Span { file, start, end }
    }

    /// The smallest span covering both `self` and `other` (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span { file: self.file, start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// An empty span at the start of `self`.
    pub fn shrink_to_start(self) -> Span {
        Span { end: self.start, ..self }
    }

    /// An empty span at the end of `self`.
    pub fn shrink_to_end(self) -> Span {
        Span { start: self.end, ..self }
    }

    /// Length in bytes.
    pub fn len(self) -> u32 {
        self.end - self.start
    }

    /// True when the span covers no bytes.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}..{}", self.file.0, self.start, self.end)
    }
}

/// A value together with the span it came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    /// The value.
    pub node: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs `node` with `span`.
    pub fn new(node: T, span: Span) -> Spanned<T> {
        Spanned { node, span }
    }
}

/// One source file: its display name, text and the byte offset of every line start.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Builds a file and indexes its line starts.
    ///
    /// Line endings are `\n`, `\r\n` or a lone `\r` (old Mac files), as Python and C
    /// compilers accept them: a lone `\r` is stored as `\n`, which keeps every byte offset,
    /// so the lexer and the line index see the same lines.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let mut text = text.into();
        if text.contains('\r') {
            let bytes = text.as_bytes();
            let lone: Vec<usize> =
                (0..bytes.len()).filter(|&i| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n')).collect();
            if !lone.is_empty() {
                let mut b = text.into_bytes();
                for i in lone {
                    b[i] = b'\n';
                }
                text = String::from_utf8(b).expect("replacing an ASCII byte keeps UTF-8");
            }
        }
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile { name: name.into(), text, line_starts }
    }

    /// The name shown in diagnostics (usually the path as given on the command line).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Byte offsets where each line starts; the first is always 0.
    pub fn line_starts(&self) -> &[u32] {
        &self.line_starts
    }

    /// Zero-based line index containing byte `offset`.
    pub fn line_index(&self, offset: u32) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = offset.min(self.text.len() as u32);
        let line = self.line_index(offset);
        let start = self.line_starts[line] as usize;
        let col = self.text[start..offset as usize].chars().count();
        LineCol { line: line as u32 + 1, column: col as u32 + 1 }
    }

    /// The text of the zero-based line `index`, without its line terminator.
    pub fn line_text(&self, index: usize) -> &str {
        let start = self.line_starts[index] as usize;
        let end = self.line_starts.get(index + 1).map(|&e| e as usize).unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        &self.text[span.start as usize..span.end as usize]
    }
}

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, counted in Unicode scalar values.
    pub column: u32,
}

/// All source files of one compiler run.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile::new(name, text));
        id
    }

    /// The file with id `id`.
    ///
    /// Panics if `id` was not returned by [`SourceMap::add`] on this map; ids are never forged.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// Iterates over all files with their ids.
    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i as u32), f))
    }

    /// Start and end line/column of a span.
    pub fn span_lines(&self, span: Span) -> (LineCol, LineCol) {
        let f = self.file(span.file);
        (f.line_col(span.start), f.line_col(span.end))
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        self.file(span.file).slice(span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        let f = SourceFile::new("a", "ab\nπx\n\nz");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(2), LineCol { line: 1, column: 3 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        // 'π' is two bytes; the 'x' after it is the second character.
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 2 });
        assert_eq!(f.line_col(7), LineCol { line: 3, column: 1 });
        assert_eq!(f.line_col(8), LineCol { line: 4, column: 1 });
        assert_eq!(f.line_text(1), "πx");
        assert_eq!(f.line_text(3), "z");
    }

    #[test]
    fn span_union() {
        let a = Span::new(FileId(0), 3, 5);
        let b = Span::new(FileId(0), 1, 4);
        assert_eq!(a.to(b), Span::new(FileId(0), 1, 5));
    }
}

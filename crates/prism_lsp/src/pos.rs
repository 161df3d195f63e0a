//! Byte offsets and LSP positions.
//!
//! The compiler counts in bytes ([`prism_span::Span`]); the protocol counts lines and, by
//! default, UTF-16 code units within a line. Both conversions clamp instead of failing: a
//! client may send a position past the end of a line or of the file (a stale request, a
//! buggy client), and the answer is then about the nearest place that exists.

use lsp_types::{Position, Range};
use prism_span::{SourceFile, Span};

/// The LSP position of byte `offset` of `file`.
pub fn position(file: &SourceFile, offset: u32) -> Position {
    Cursor::new(file).position(offset)
}

/// Converts byte offsets of one file to positions, counting a line's UTF-16 units on from
/// the last offset it converted when the next lies further on the same line. Offsets in
/// increasing order (a document's diagnostics) then cost the line's length once in all,
/// where converting each from its line's start cost it once per offset: quadratic on a
/// long line of many diagnostics (review R57).
pub struct Cursor<'a> {
    file: &'a SourceFile,
    /// The line, byte offset and UTF-16 units from the line's start of the last position.
    last: Option<(usize, usize, usize)>,
}

impl<'a> Cursor<'a> {
    /// A cursor over `file`, before any offset.
    pub fn new(file: &'a SourceFile) -> Cursor<'a> {
        Cursor { file, last: None }
    }

    /// The LSP position of byte `offset`.
    pub fn position(&mut self, offset: u32) -> Position {
        let file = self.file;
        let text = file.text();
        let mut offset = (offset as usize).min(text.len());
        // A span always falls on a character boundary; this only guards against a caller
        // that computed an offset by hand.
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = file.line_index(offset as u32);
        let start = file.line_starts()[line] as usize;
        // A span may end on a line's terminator (an unterminated string runs to the `\r`
        // of a `\r\n`): the position is then the line's end, not a character past it.
        let offset = offset.min(start + file.line_text(line).len());
        let (from, units) = match self.last {
            Some((l, byte, units)) if l == line && byte <= offset => (byte, units),
            _ => (start, 0),
        };
        let character = units + utf16_len(&text[from..offset]);
        self.last = Some((line, offset, character));
        Position { line: line as u32, character: character as u32 }
    }

    /// The LSP range of `span`, which lies in the cursor's file.
    pub fn range(&mut self, span: Span) -> Range {
        Range { start: self.position(span.start), end: self.position(span.end) }
    }
}

/// The UTF-16 code units of `s`: its bytes when it is ASCII, which is checked many bytes at
/// a time (a line of many diagnostics is converted once per diagnostic).
fn utf16_len(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.encode_utf16().count() }
}

/// The byte offset of LSP position `pos` in `file`: the end of the line for a character
/// past its end, the end of the file for a line past the last.
pub fn offset(file: &SourceFile, pos: Position) -> u32 {
    let text = file.text();
    let starts = file.line_starts();
    let Some(&start) = starts.get(pos.line as usize) else {
        return text.len() as u32;
    };
    let line = file.line_text(pos.line as usize);
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= pos.character {
            return start + i as u32;
        }
        units += c.len_utf16() as u32;
    }
    start + line.len() as u32
}

/// The LSP range of `span`, which lies in `file`.
pub fn range(file: &SourceFile, span: Span) -> Range {
    Cursor::new(file).range(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_clamps() {
        // 'π' is one UTF-16 unit and two bytes; '𝄞' is two units and four bytes.
        let f = SourceFile::new("a", "ab\nπ𝄞x\r\nz");
        assert_eq!(position(&f, 0), Position { line: 0, character: 0 });
        assert_eq!(position(&f, 5), Position { line: 1, character: 1 });
        assert_eq!(position(&f, 9), Position { line: 1, character: 3 });
        assert_eq!(offset(&f, Position { line: 1, character: 3 }), 9);
        assert_eq!(offset(&f, Position { line: 1, character: 99 }), 10);
        assert_eq!(offset(&f, Position { line: 2, character: 0 }), 12);
        assert_eq!(offset(&f, Position { line: 99, character: 0 }), 13);
        assert_eq!(position(&f, 999), Position { line: 2, character: 1 });
        // Inside a surrogate pair: the character after it.
        assert_eq!(offset(&f, Position { line: 1, character: 2 }), 9);
        // The `\r` and the `\n` of a line's end are the line's end (review R57).
        assert_eq!(position(&f, 10), Position { line: 1, character: 4 });
        assert_eq!(position(&f, 11), Position { line: 1, character: 4 });
        let g = SourceFile::new("b", "    x = 1 +\r\n");
        assert_eq!(position(&g, 12), Position { line: 0, character: 11 });
    }

    /// A cursor gives every offset the position converting it alone gives, in any order.
    #[test]
    fn a_cursor_agrees_with_each_position_alone() {
        let f = SourceFile::new("a", "ab\nπ𝄞x\r\nz$π $\n\nq");
        let n = f.text().len() as u32;
        let mut c = Cursor::new(&f);
        let order: Vec<u32> = (0..=n + 2).chain((0..=n).rev()).chain((0..=n).step_by(3)).collect();
        for o in order {
            // Offsets inside a character round down, as `position` does.
            assert_eq!(c.position(o), position(&f, o), "offset {o}");
        }
    }
}

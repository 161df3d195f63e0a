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
    let text = file.text();
    let mut offset = (offset as usize).min(text.len());
    // A span always falls on a character boundary; this only guards against a caller that
    // computed an offset by hand.
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line = file.line_index(offset as u32);
    let start = file.line_starts()[line] as usize;
    let character = text[start..offset].encode_utf16().count();
    Position { line: line as u32, character: character as u32 }
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
    Range { start: position(file, span.start), end: position(file, span.end) }
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
    }
}

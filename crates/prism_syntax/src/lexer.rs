//! The lexer: source text to tokens, including layout tokens.
//!
//! Layout follows Python. A logical line ends in `Newline`; a line indented deeper than the
//! one before opens a block (`Indent`); a shallower line closes blocks (`Dedent`s) and must
//! land on a column some enclosing block started at. Blank lines and comment-only lines do not
//! count, whatever their indentation: the papers indent comments freely between `case`s.
//! Inside `()`, `[]` and `{}` newlines and indentation are ignored (implicit line joining),
//! and a backslash at the end of a line joins it to the next.
//!
//! Invariant: the token stream is balanced: every `Indent` has a matching `Dedent` before
//! `Eof`, and the stream always ends in `Newline`? `Dedent`* `Eof`, whatever errors occurred.

use crate::error::SyntaxError;
use crate::token::{Keyword, Punct, Token, TokenKind};
use prism_span::{FileId, Span};

/// Lexes `src` into tokens. Errors are pushed to `errors`; lexing always completes.
pub fn lex(file: FileId, src: &str, errors: &mut Vec<SyntaxError>) -> Vec<Token> {
    let mut lx = Lexer {
        file,
        src,
        bytes: src.as_bytes(),
        pos: 0,
        tokens: Vec::with_capacity(src.len() / 4),
        indents: vec![0],
        brackets: Vec::new(),
        errors,
        line_has_tokens: false,
    };
    lx.run();
    lx.tokens
}

struct Lexer<'a, 'e> {
    file: FileId,
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    /// Columns at which the open blocks start; the bottom is always 0.
    indents: Vec<u32>,
    /// Open brackets with where they were opened.
    brackets: Vec<(Punct, Span)>,
    errors: &'e mut Vec<SyntaxError>,
    /// Whether the current logical line has produced a token yet.
    line_has_tokens: bool,
}

impl Lexer<'_, '_> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start as u32, end as u32)
    }

    fn push(&mut self, kind: TokenKind, start: usize, end: usize) {
        let span = self.span(start, end);
        self.tokens.push(Token { kind, span });
    }

    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn run(&mut self) {
        // A UTF-8 byte-order mark at the start is not text (editors on Windows write one).
        if self.bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.pos = 3;
        }
        self.start_line();
        while self.pos < self.bytes.len() {
            let c = self.bytes[self.pos];
            match c {
                b' ' | b'\t' | b'\r' | b'\x0c' => self.pos += 1,
                b'#' => self.skip_comment(),
                b'\n' => {
                    self.end_line(self.pos);
                    self.pos += 1;
                    self.start_line();
                }
                b'\\' if self.continuation_follows() => {
                    // Explicit line joining: skip the backslash, the line break and carry on
                    // with the next line as part of this logical line.
                    self.pos += 1;
                    if self.peek(0) == b'\r' {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                b'0'..=b'9' => self.number(),
                b'.' if self.peek(1).is_ascii_digit() => self.number(),
                b'"' | b'\'' => self.string(),
                c if c == b'_' || c.is_ascii_alphabetic() => self.word(),
                _ => self.punct(),
            }
        }
        self.finish();
    }

    fn continuation_follows(&self) -> bool {
        let mut i = self.pos + 1;
        while i < self.bytes.len() && (self.bytes[i] == b' ' || self.bytes[i] == b'\t' || self.bytes[i] == b'\r') {
            i += 1;
        }
        i < self.bytes.len() && self.bytes[i] == b'\n' || i == self.bytes.len()
    }

    fn skip_comment(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
            self.pos += 1;
        }
    }

    /// Called with `pos` at the start of a physical line that begins a logical line. Measures
    /// the indentation and emits `Indent`/`Dedent`s, unless the line is blank, a comment, or
    /// inside brackets.
    fn start_line(&mut self) {
        if !self.brackets.is_empty() {
            return;
        }
        loop {
            let line_start = self.pos;
            let mut col = 0u32;
            let mut tab_at = None;
            while self.pos < self.bytes.len() {
                match self.bytes[self.pos] {
                    b' ' => col += 1,
                    b'\t' => {
                        tab_at.get_or_insert(self.pos);
                        col = (col / 8 + 1) * 8;
                    }
                    b'\r' | b'\x0c' => {}
                    _ => break,
                }
                self.pos += 1;
            }
            match self.bytes.get(self.pos) {
                // End of file: nothing to indent.
                None => return,
                // Blank or comment-only line: skip it entirely, its indentation is irrelevant.
                Some(b'\n') => {
                    self.pos += 1;
                    continue;
                }
                Some(b'#') => {
                    self.skip_comment();
                    if self.pos < self.bytes.len() {
                        self.pos += 1;
                        continue;
                    }
                    return;
                }
                Some(_) => {
                    if let Some(t) = tab_at {
                        self.errors.push(SyntaxError::TabIndent { span: self.span(t, t + 1) });
                    }
                    let _ = line_start;
                    self.indent_to(col);
                    return;
                }
            }
        }
    }

    fn indent_to(&mut self, col: u32) {
        let here = self.pos;
        let top = *self.indents.last().expect("indent stack never empty");
        if col > top {
            self.indents.push(col);
            self.push(TokenKind::Indent, here, here);
        } else if col < top {
            let mut last = top;
            while *self.indents.last().expect("indent stack never empty") > col {
                last = self.indents.pop().expect("indent stack never empty");
                self.push(TokenKind::Dedent, here, here);
            }
            if *self.indents.last().expect("indent stack never empty") != col {
                let end = self.token_end_guess(here);
                self.errors.push(SyntaxError::InconsistentDedent { span: self.span(here, end) });
                // Recover by treating the line as part of the innermost block it falls
                // inside (the one that starts to its right): undo the last dedent, so that a
                // line between a function body's column and column 0 is not read as a
                // top-level statement too.
                self.indents.push(last);
                self.tokens.pop();
            }
        }
    }

    fn token_end_guess(&self, start: usize) -> usize {
        let mut e = start;
        while e < self.bytes.len() && !self.bytes[e].is_ascii_whitespace() {
            e += 1;
        }
        // Keep the span on a char boundary.
        while e > start && !self.src.is_char_boundary(e) {
            e -= 1;
        }
        e.max(start + usize::from(start < self.bytes.len())).min(self.bytes.len())
    }

    fn end_line(&mut self, at: usize) {
        if self.brackets.is_empty() && self.line_has_tokens {
            self.push(TokenKind::Newline, at, at);
            self.line_has_tokens = false;
        }
    }

    fn finish(&mut self) {
        let end = self.bytes.len();
        for (open, open_span) in std::mem::take(&mut self.brackets) {
            self.errors.push(SyntaxError::UnclosedDelimiter {
                open,
                open_span,
                span: self.span(end, end),
                found: None,
            });
        }
        if self.line_has_tokens {
            self.push(TokenKind::Newline, end, end);
            self.line_has_tokens = false;
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(TokenKind::Dedent, end, end);
        }
        self.push(TokenKind::Eof, end, end);
    }

    fn token(&mut self, kind: TokenKind, start: usize) {
        self.line_has_tokens = true;
        let end = self.pos;
        self.push(kind, start, end);
    }

    fn word(&mut self) {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && (self.bytes[self.pos] == b'_' || self.bytes[self.pos].is_ascii_alphanumeric())
        {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        let kind = match Keyword::from_word(text) {
            Some(k) => TokenKind::Kw(k),
            None => TokenKind::Ident(text.to_string()),
        };
        self.token(kind, start);
    }

    fn number(&mut self) {
        let start = self.pos;
        let b = self.bytes;
        let radix_digits = |lx: &mut Self, pred: fn(u8) -> bool| {
            while lx.pos < b.len() && (pred(b[lx.pos]) || b[lx.pos] == b'_') {
                lx.pos += 1;
            }
        };
        let mut is_float = false;
        let mut radix = 10;
        if b[self.pos] == b'0' && matches!(self.peek(1), b'x' | b'X' | b'b' | b'B' | b'o' | b'O') {
            radix = match self.peek(1) {
                b'x' | b'X' => 16,
                b'b' | b'B' => 2,
                _ => 8,
            };
            self.pos += 2;
            radix_digits(self, |c| c.is_ascii_hexdigit());
        } else {
            radix_digits(self, |c| c.is_ascii_digit());
            // A fraction: `1.5`, `1.`, `.5`; but `1..` is the integer 1 followed by `..`.
            if self.peek(0) == b'.'
                && self.peek(1) != b'.'
                && !(self.peek(1) == b'_' || self.peek(1).is_ascii_alphabetic())
            {
                is_float = true;
                self.pos += 1;
                radix_digits(self, |c| c.is_ascii_digit());
            }
            if matches!(self.peek(0), b'e' | b'E')
                && (self.peek(1).is_ascii_digit()
                    || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
            {
                is_float = true;
                self.pos += 2;
                radix_digits(self, |c| c.is_ascii_digit());
            }
        }
        // Letters glued to a number are a C suffix (`1.0f`, `10u`) or a typo.
        let suffix_start = self.pos;
        while self.pos < b.len() && (b[self.pos] == b'_' || b[self.pos].is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        let text: String = self.src[start..suffix_start].chars().filter(|&c| c != '_').collect();
        let span = self.span(start, self.pos);
        if suffix_start != self.pos {
            let suffix = &self.src[suffix_start..self.pos];
            let reason = if radix == 10 && matches!(suffix.as_bytes()[0], b'e' | b'E') && suffix.len() == 1 {
                "the exponent has no digits (write `1e3`, `1e-3`)".to_string()
            } else {
                format!(
                    "unexpected suffix `{suffix}`; Prism literals have no C suffixes, use a cast such as `float(1)`"
                )
            };
            self.errors.push(SyntaxError::InvalidNumber { reason, span });
            self.token(TokenKind::Invalid, start);
            return;
        }
        let kind = if is_float {
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => TokenKind::Float(v),
                _ => {
                    self.errors.push(SyntaxError::InvalidNumber { reason: "not a finite number".into(), span });
                    TokenKind::Invalid
                }
            }
        } else {
            let digits = if radix == 10 { &text[..] } else { &text[2..] };
            match u64::from_str_radix(digits, radix) {
                Ok(v) => TokenKind::Int(v),
                Err(e) => {
                    let reason = if digits.is_empty() {
                        "no digits after the base prefix".to_string()
                    } else if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
                        "too large for a 64-bit integer".to_string()
                    } else {
                        format!("not a valid base-{radix} integer")
                    };
                    self.errors.push(SyntaxError::InvalidNumber { reason, span });
                    TokenKind::Invalid
                }
            }
        };
        self.token(kind, start);
    }

    fn string(&mut self) {
        let start = self.pos;
        let quote = self.bytes[self.pos];
        let triple = self.peek(1) == quote && self.peek(2) == quote;
        self.pos += if triple { 3 } else { 1 };
        let mut value = String::new();
        loop {
            if self.pos >= self.bytes.len() {
                self.errors.push(SyntaxError::UnterminatedString { span: self.span(start, self.pos) });
                break;
            }
            let c = self.bytes[self.pos];
            if c == quote && (!triple || (self.peek(1) == quote && self.peek(2) == quote)) {
                self.pos += if triple { 3 } else { 1 };
                break;
            }
            if c == b'\n' && !triple {
                self.errors.push(SyntaxError::UnterminatedString { span: self.span(start, self.pos) });
                // The line is broken anyway; closing its brackets keeps the rest of the file
                // from being swallowed into them (and reported as unclosed).
                self.brackets.clear();
                break;
            }
            if c == b'\\' && self.pos + 1 < self.bytes.len() {
                let e = self.bytes[self.pos + 1];
                let escaped = match e {
                    b'n' => Some('\n'),
                    b't' => Some('\t'),
                    b'r' => Some('\r'),
                    b'0' => Some('\0'),
                    b'\\' => Some('\\'),
                    b'"' => Some('"'),
                    b'\'' => Some('\''),
                    b'\n' => None,
                    _ => {
                        // Unknown escapes are kept verbatim, as Python does, so CUDA text such
                        // as `"%r0"` or `\%` survives untouched.
                        value.push('\\');
                        self.pos += 1;
                        continue;
                    }
                };
                if let Some(ch) = escaped {
                    value.push(ch);
                }
                self.pos += 2;
                continue;
            }
            // Copy one whole UTF-8 character.
            let ch = self.src[self.pos..].chars().next().expect("in bounds");
            value.push(ch);
            self.pos += ch.len_utf8();
        }
        self.token(TokenKind::Str(value), start);
    }

    fn punct(&mut self) {
        use Punct::*;
        let start = self.pos;
        let three = [self.peek(0), self.peek(1), self.peek(2)];
        let (p, len) = match three {
            [b'.', b'.', b'.'] => (Ellipsis, 3),
            [b'<', b'<', b'='] => (ShlEq, 3),
            [b'>', b'>', b'='] => (ShrEq, 3),
            [b'.', b'.', _] => (DotDot, 2),
            [b'-', b'>', _] => (Arrow, 2),
            [b'=', b'=', _] => (EqEq, 2),
            [b'!', b'=', _] => (Ne, 2),
            [b'<', b'=', _] => (Le, 2),
            [b'>', b'=', _] => (Ge, 2),
            [b'<', b'<', _] => (Shl, 2),
            [b'>', b'>', _] => (Shr, 2),
            [b'+', b'=', _] => (PlusEq, 2),
            [b'-', b'=', _] => (MinusEq, 2),
            [b'*', b'=', _] => (StarEq, 2),
            [b'/', b'=', _] => (SlashEq, 2),
            [b'%', b'=', _] => (PercentEq, 2),
            [b'&', b'=', _] => (AmpEq, 2),
            [b'|', b'=', _] => (PipeEq, 2),
            [b'^', b'=', _] => (CaretEq, 2),
            [b'&', b'&', _] => (AmpAmp, 2),
            [b'|', b'|', _] => (PipePipe, 2),
            [b'(', ..] => (LParen, 1),
            [b')', ..] => (RParen, 1),
            [b'[', ..] => (LBracket, 1),
            [b']', ..] => (RBracket, 1),
            [b'{', ..] => (LBrace, 1),
            [b'}', ..] => (RBrace, 1),
            [b',', ..] => (Comma, 1),
            [b':', ..] => (Colon, 1),
            [b';', ..] => (Semi, 1),
            [b'.', ..] => (Dot, 1),
            [b'@', ..] => (At, 1),
            [b'=', ..] => (Eq, 1),
            [b'+', ..] => (Plus, 1),
            [b'-', ..] => (Minus, 1),
            [b'*', ..] => (Star, 1),
            [b'/', ..] => (Slash, 1),
            [b'%', ..] => (Percent, 1),
            [b'&', ..] => (Amp, 1),
            [b'|', ..] => (Pipe, 1),
            [b'^', ..] => (Caret, 1),
            [b'~', ..] => (Tilde, 1),
            [b'<', ..] => (Lt, 1),
            [b'>', ..] => (Gt, 1),
            [b'!', ..] => (Bang, 1),
            _ => {
                let ch = self.src[self.pos..].chars().next().expect("in bounds");
                self.pos += ch.len_utf8();
                // A run of invalid characters is one error: a line of pasted binary or of
                // another script would otherwise be as many diagnostics as characters
                // (review R57: 128k of them took the language server half a minute).
                let end = self.span(start, self.pos);
                if let Some(SyntaxError::InvalidChar { span, .. }) = self.errors.last_mut()
                    && span.end == end.start
                {
                    span.end = end.end;
                } else {
                    self.errors.push(SyntaxError::InvalidChar { ch, span: end });
                }
                return;
            }
        };
        self.pos += len;
        let span = self.span(start, self.pos);
        match p {
            AmpAmp => self.errors.push(SyntaxError::CStyleOperator { found: "&&", canonical: "and", span }),
            PipePipe => self.errors.push(SyntaxError::CStyleOperator { found: "||", canonical: "or", span }),
            Bang => self.errors.push(SyntaxError::CStyleOperator { found: "!", canonical: "not", span }),
            _ => {}
        }
        match p {
            LParen | LBracket | LBrace => self.brackets.push((p, span)),
            RParen | RBracket | RBrace => self.close(p, span),
            _ => {}
        }
        self.token(TokenKind::Punct(p), start);
    }

    fn close(&mut self, closer: Punct, span: Span) {
        let wanted = |open: Punct| match open {
            Punct::LParen => Punct::RParen,
            Punct::LBracket => Punct::RBracket,
            _ => Punct::RBrace,
        };
        match self.brackets.last() {
            Some(&(open, _)) if wanted(open) == closer => {
                self.brackets.pop();
            }
            Some(&(open, open_span)) => {
                self.errors.push(SyntaxError::UnclosedDelimiter { open, open_span, span, found: Some(closer) });
                // If a deeper bracket matches, the ones above it were left open; close them all
                // so one typo does not swallow the rest of the file into a bracket.
                match self.brackets.iter().rposition(|&(o, _)| wanted(o) == closer) {
                    Some(i) => self.brackets.truncate(i),
                    // No opener matches: take the closer as a misspelt close of the innermost
                    // bracket, which has been reported now and must not be reported again.
                    None => {
                        self.brackets.pop();
                    }
                }
            }
            None => self.errors.push(SyntaxError::UnmatchedCloser { punct: closer, span }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> (String, Vec<SyntaxError>) {
        let mut errors = Vec::new();
        let toks = lex(FileId(0), src, &mut errors);
        let s = toks
            .iter()
            .map(|t| match &t.kind {
                TokenKind::Ident(s) => s.clone(),
                TokenKind::Int(v) => v.to_string(),
                TokenKind::Float(v) => format!("{v:?}"),
                TokenKind::Str(s) => format!("{s:?}"),
                TokenKind::Kw(k) => k.as_str().to_string(),
                TokenKind::Punct(p) => p.as_str().to_string(),
                TokenKind::Newline => "NL".into(),
                TokenKind::Indent => "IN".into(),
                TokenKind::Dedent => "DE".into(),
                TokenKind::Eof => "EOF".into(),
                TokenKind::Invalid => "INVALID".into(),
            })
            .collect::<Vec<_>>()
            .join(" ");
        (s, errors)
    }

    #[test]
    fn blocks_and_comments() {
        let (s, e) = kinds("if x:\n  y = 1\n      # comment at odd depth\n\n  z\nw\n");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s, "if x : NL IN y = 1 NL z NL DE w NL EOF");
    }

    #[test]
    fn implicit_and_explicit_joining() {
        let (s, e) = kinds("f(a,\n      b)\nidx = \\\n    1\n");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s, "f ( a , b ) NL idx = 1 NL EOF");
    }

    #[test]
    fn numbers_and_elisions() {
        let (s, e) = kinds("x = 1.5 + .5 + 1e3 + 0x1F + 1_000\nf(..)\n...\n");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s, "x = 1.5 + 0.5 + 1000.0 + 31 + 1000 NL f ( .. ) NL ... NL EOF");
    }

    #[test]
    fn dedent_to_unknown_column() {
        // The line between the two columns stays in the inner block (one error, and no
        // spurious top-level statement after it).
        let (s, e) = kinds("if a:\n    b\n  c\n");
        assert_eq!(s, "if a : NL IN b NL c NL DE EOF");
        assert!(matches!(e[..], [SyntaxError::InconsistentDedent { .. }]), "{e:?}");
    }

    #[test]
    fn unclosed_and_mismatched() {
        let (_, e) = kinds("f(a, [b)\n");
        assert!(matches!(e[0], SyntaxError::UnclosedDelimiter { found: Some(Punct::RParen), .. }), "{e:?}");
        let (_, e) = kinds("f(a\n");
        assert!(matches!(e[..], [SyntaxError::UnclosedDelimiter { found: None, .. }]), "{e:?}");
    }

    #[test]
    fn strings() {
        let (s, e) = kinds("unsafe(\"a\\\"b\")\nunsafe(\"\"\"x\ny\"\"\")\n");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s, "unsafe ( \"a\\\"b\" ) NL unsafe ( \"x\\ny\" ) NL EOF");
        let (_, e) = kinds("x = \"abc\n");
        assert!(matches!(e[..], [SyntaxError::UnterminatedString { .. }]));
    }

    #[test]
    fn tabs_and_bad_chars() {
        let (_, e) = kinds("if a:\n\tb $\n");
        assert!(matches!(e[0], SyntaxError::TabIndent { .. }));
        assert!(matches!(e[1], SyntaxError::InvalidChar { ch: '$', .. }));
    }

    /// A run of invalid characters is one error over the run; characters apart are one
    /// error each (review R57: one per character made 128k diagnostics of one line).
    #[test]
    fn a_run_of_bad_chars_is_one_error() {
        let (_, e) = kinds("x = ππ$π y\n");
        let [SyntaxError::InvalidChar { ch: 'π', span }] = e[..] else { panic!("{e:?}") };
        assert_eq!((span.start, span.end), (4, 11));
        let (_, e) = kinds("x = $ $\n");
        assert!(matches!(e[..], [SyntaxError::InvalidChar { .. }, SyntaxError::InvalidChar { .. }]), "{e:?}");
        let long: String = "π".repeat(100_000);
        let (_, e) = kinds(&format!("{long}\n"));
        assert_eq!(e.len(), 1, "{:?}", &e[..e.len().min(3)]);
    }
}

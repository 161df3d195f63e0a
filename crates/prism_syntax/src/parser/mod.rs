//! The parser: tokens to the untyped AST.
//!
//! A hand-written recursive-descent parser, one file per part of the grammar: `item.rs`
//! (decorators, functions, file-level constants), `stmt.rs` (statements and blocks),
//! `expr.rs` (expressions, perspectives and types). Legacy spellings from the earlier paper
//! drafts are rewritten here to the canonical constructs with a `legacy-syntax` warning, so
//! later stages see only one form.
//!
//! Errors do not stop the parse. A statement that fails to parse is skipped up to the end of
//! its logical line (or its whole indented block) and parsing resumes, so one run reports
//! the problems of every statement. Nesting is capped ([`MAX_DEPTH`]) so that hostile input
//! cannot overflow the stack of this parser or of the recursive stages after it.

mod expr;
mod item;
mod stmt;

use crate::ast::Module;
use crate::error::SyntaxError;
use crate::token::{Keyword, Punct, Token, TokenKind};
use prism_span::{FileId, Span};

/// The deepest nesting of expressions, or of blocks, the parser accepts.
pub const MAX_DEPTH: u32 = 200;

/// Parses a token stream (from [`crate::lexer::lex`]) into a module.
pub fn parse_tokens(file: FileId, tokens: Vec<Token>, errors: &mut Vec<SyntaxError>) -> Module {
    let mut p = Parser { tokens, pos: 0, errors, depth: 0, file };
    p.module()
}

/// Marker for "this construct failed to parse; an error has been recorded".
#[derive(Debug)]
pub(crate) struct Failed;

pub(crate) type PResult<T> = Result<T, Failed>;

pub(crate) struct Parser<'e> {
    tokens: Vec<Token>,
    pos: usize,
    errors: &'e mut Vec<SyntaxError>,
    /// Current nesting depth of expressions and blocks.
    depth: u32,
    file: FileId,
}

impl Parser<'_> {
    pub(crate) fn peek(&self) -> &TokenKind {
        &self.tokens[self.pos].kind
    }

    pub(crate) fn peek_at(&self, ahead: usize) -> &TokenKind {
        let i = (self.pos + ahead).min(self.tokens.len() - 1);
        &self.tokens[i].kind
    }

    pub(crate) fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    /// The span of the token before the current one (the end of what was just parsed).
    pub(crate) fn prev_span(&self) -> Span {
        if self.pos == 0 { self.tokens[0].span } else { self.tokens[self.pos - 1].span }
    }

    /// Moves past the current token (but never past `Eof`) and returns its span. The token
    /// itself is not returned: cloning it would copy identifier strings on every step.
    pub(crate) fn bump(&mut self) -> Span {
        let span = self.tokens[self.pos].span;
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        span
    }

    pub(crate) fn at_punct(&self, p: Punct) -> bool {
        matches!(self.peek(), TokenKind::Punct(q) if *q == p)
    }

    pub(crate) fn at_kw(&self, k: Keyword) -> bool {
        matches!(self.peek(), TokenKind::Kw(q) if *q == k)
    }

    pub(crate) fn at_ident(&self, name: &str) -> bool {
        matches!(self.peek(), TokenKind::Ident(s) if s == name)
    }

    pub(crate) fn eat_punct(&mut self, p: Punct) -> bool {
        if self.at_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn eat_kw(&mut self, k: Keyword) -> bool {
        if self.at_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn error(&mut self, e: SyntaxError) {
        self.errors.push(e);
    }

    /// Records "expected X, found <current token>" and fails.
    pub(crate) fn expected<T>(&mut self, what: &str) -> PResult<T> {
        self.expected_with_help(what, None)
    }

    pub(crate) fn expected_with_help<T>(&mut self, what: &str, help: Option<String>) -> PResult<T> {
        let found = self.peek().clone();
        let span = self.span();
        // An error token from the lexer already produced a diagnostic; do not pile on a
        // second one for the same spot.
        self.error(SyntaxError::Expected { expected: what.to_string(), found, span, help });
        Err(Failed)
    }

    pub(crate) fn expect_punct(&mut self, p: Punct) -> PResult<Span> {
        if self.at_punct(p) { Ok(self.bump()) } else { self.expected(&format!("`{}`", p.as_str())) }
    }

    pub(crate) fn expect_kw(&mut self, k: Keyword) -> PResult<Span> {
        if self.at_kw(k) { Ok(self.bump()) } else { self.expected(&format!("`{}`", k.as_str())) }
    }

    pub(crate) fn expect_ident(&mut self, what: &str) -> PResult<crate::ast::Ident> {
        match self.peek() {
            TokenKind::Ident(name) => {
                let name = name.clone();
                let span = self.bump();
                Ok(crate::ast::Ident { name, span })
            }
            _ => self.expected(what),
        }
    }

    /// Enters one level of nesting; fails (with an error) past [`MAX_DEPTH`].
    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = self.span();
            self.error(SyntaxError::Expected {
                expected: format!("less nesting (the limit is {MAX_DEPTH} levels)"),
                found: self.peek().clone(),
                span,
                help: Some("split the expression or block into named parts".into()),
            });
            self.depth -= 1;
            return Err(Failed);
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Fails (with the nesting error) if a tree `height` levels tall, built at the current
    /// depth, would pass [`MAX_DEPTH`]. Chains such as `a + b + ...` and `f(x)[i].y` are
    /// parsed in a loop, not by recursion, but build trees as tall as they are long, so
    /// [`Parser::enter`] alone does not see them.
    pub(crate) fn check_height(&mut self, height: u32) -> PResult<()> {
        if self.depth + height <= MAX_DEPTH {
            return Ok(());
        }
        let depth = self.depth;
        self.depth = MAX_DEPTH;
        let r = self.enter();
        self.depth = depth;
        r
    }

    /// Skips to the start of the next statement after a parse error: past the end of the
    /// current logical line, and past an indented block that follows it.
    pub(crate) fn recover_line(&mut self) {
        let mut nesting = 0i32;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::Indent => nesting += 1,
                TokenKind::Dedent => {
                    if nesting == 0 {
                        return;
                    }
                    nesting -= 1;
                    if nesting == 0 {
                        self.bump();
                        return;
                    }
                }
                TokenKind::Newline if nesting == 0 => {
                    self.bump();
                    // A block opened by the failed line belongs to it; skip the block too.
                    if matches!(self.peek(), TokenKind::Indent) {
                        continue;
                    }
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    pub(crate) fn file(&self) -> FileId {
        self.file
    }
}

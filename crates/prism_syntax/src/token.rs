//! Tokens produced by the lexer.
//!
//! The lexer turns layout into tokens too: `Newline` ends a logical line, `Indent` and
//! `Dedent` open and close blocks, as in Python. Inside brackets newlines are not tokens
//! (implicit line joining), so the parser never sees layout where it does not matter.

use prism_span::Span;
use std::fmt;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier (including `__syncthreads` and other names starting with `_`).
    Ident(String),
    /// An integer literal; the value fits in `u64`.
    Int(u64),
    /// A floating-point literal.
    Float(f64),
    /// A string literal, escapes already processed.
    Str(String),
    /// A keyword.
    Kw(Keyword),
    /// Punctuation or an operator.
    Punct(Punct),
    /// End of a logical line.
    Newline,
    /// Start of an indented block.
    Indent,
    /// End of an indented block.
    Dedent,
    /// End of input.
    Eof,
    /// A malformed literal, already reported by the lexer.
    Invalid,
}

/// Reserved words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `def`
    Def,
    /// `with`
    With,
    /// `as`
    As,
    /// `match`
    Match,
    /// `case`
    Case,
    /// `for`
    For,
    /// `in`
    In,
    /// `while`
    While,
    /// `if`
    If,
    /// `elif`
    Elif,
    /// `else`
    Else,
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `return`
    Return,
    /// `pass`
    Pass,
    /// `lambda`
    Lambda,
    /// `and`
    And,
    /// `or`
    Or,
    /// `not`
    Not,
    /// `true` or `True`
    True,
    /// `false` or `False`
    False,
    /// `async` (only as `with async(x) as y:`)
    Async,
    /// `unsafe`
    Unsafe,
}

impl Keyword {
    /// The keyword for an identifier-like word, if it is one.
    pub fn from_word(word: &str) -> Option<Keyword> {
        Some(match word {
            "def" => Keyword::Def,
            "with" => Keyword::With,
            "as" => Keyword::As,
            "match" => Keyword::Match,
            "case" => Keyword::Case,
            "for" => Keyword::For,
            "in" => Keyword::In,
            "while" => Keyword::While,
            "if" => Keyword::If,
            "elif" => Keyword::Elif,
            "else" => Keyword::Else,
            "break" => Keyword::Break,
            "continue" => Keyword::Continue,
            "return" => Keyword::Return,
            "pass" => Keyword::Pass,
            "lambda" => Keyword::Lambda,
            "and" => Keyword::And,
            "or" => Keyword::Or,
            "not" => Keyword::Not,
            "true" | "True" => Keyword::True,
            "false" | "False" => Keyword::False,
            "async" => Keyword::Async,
            "unsafe" => Keyword::Unsafe,
            _ => return None,
        })
    }

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Def => "def",
            Keyword::With => "with",
            Keyword::As => "as",
            Keyword::Match => "match",
            Keyword::Case => "case",
            Keyword::For => "for",
            Keyword::In => "in",
            Keyword::While => "while",
            Keyword::If => "if",
            Keyword::Elif => "elif",
            Keyword::Else => "else",
            Keyword::Break => "break",
            Keyword::Continue => "continue",
            Keyword::Return => "return",
            Keyword::Pass => "pass",
            Keyword::Lambda => "lambda",
            Keyword::And => "and",
            Keyword::Or => "or",
            Keyword::Not => "not",
            Keyword::True => "true",
            Keyword::False => "false",
            Keyword::Async => "async",
            Keyword::Unsafe => "unsafe",
        }
    }
}

/// Punctuation and operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `;`
    Semi,
    /// `.`
    Dot,
    /// `..` (argument elision in the papers)
    DotDot,
    /// `...` (statement elision in the papers)
    Ellipsis,
    /// `@`
    At,
    /// `->`
    Arrow,
    /// `=`
    Eq,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `&`
    Amp,
    /// `|`
    Pipe,
    /// `^`
    Caret,
    /// `~`
    Tilde,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+=`
    PlusEq,
    /// `-=`
    MinusEq,
    /// `*=`
    StarEq,
    /// `/=`
    SlashEq,
    /// `%=`
    PercentEq,
    /// `&=`
    AmpEq,
    /// `|=`
    PipeEq,
    /// `^=`
    CaretEq,
    /// `<<=`
    ShlEq,
    /// `>>=`
    ShrEq,
    /// `!` (only to give a helpful error: Prism spells it `not`)
    Bang,
    /// `&&` (only to give a helpful error: Prism spells it `and`)
    AmpAmp,
    /// `||` (only to give a helpful error: Prism spells it `or`)
    PipePipe,
}

impl Punct {
    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::LBracket => "[",
            Punct::RBracket => "]",
            Punct::LBrace => "{",
            Punct::RBrace => "}",
            Punct::Comma => ",",
            Punct::Colon => ":",
            Punct::Semi => ";",
            Punct::Dot => ".",
            Punct::DotDot => "..",
            Punct::Ellipsis => "...",
            Punct::At => "@",
            Punct::Arrow => "->",
            Punct::Eq => "=",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Star => "*",
            Punct::Slash => "/",
            Punct::Percent => "%",
            Punct::Amp => "&",
            Punct::Pipe => "|",
            Punct::Caret => "^",
            Punct::Tilde => "~",
            Punct::Shl => "<<",
            Punct::Shr => ">>",
            Punct::EqEq => "==",
            Punct::Ne => "!=",
            Punct::Lt => "<",
            Punct::Le => "<=",
            Punct::Gt => ">",
            Punct::Ge => ">=",
            Punct::PlusEq => "+=",
            Punct::MinusEq => "-=",
            Punct::StarEq => "*=",
            Punct::SlashEq => "/=",
            Punct::PercentEq => "%=",
            Punct::AmpEq => "&=",
            Punct::PipeEq => "|=",
            Punct::CaretEq => "^=",
            Punct::ShlEq => "<<=",
            Punct::ShrEq => ">>=",
            Punct::Bang => "!",
            Punct::AmpAmp => "&&",
            Punct::PipePipe => "||",
        }
    }
}

/// A token and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is. Layout tokens (`Newline`, `Indent`, `Dedent`, `Eof`) have empty or
    /// line-ending spans.
    pub span: Span,
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(s) => write!(f, "identifier `{s}`"),
            TokenKind::Int(v) => write!(f, "integer `{v}`"),
            TokenKind::Float(v) => write!(f, "number `{v}`"),
            TokenKind::Str(_) => write!(f, "string literal"),
            TokenKind::Kw(k) => write!(f, "keyword `{}`", k.as_str()),
            TokenKind::Punct(p) => write!(f, "`{}`", p.as_str()),
            TokenKind::Newline => write!(f, "end of line"),
            TokenKind::Indent => write!(f, "indentation"),
            TokenKind::Dedent => write!(f, "end of block"),
            TokenKind::Eof => write!(f, "end of file"),
            TokenKind::Invalid => write!(f, "malformed literal"),
        }
    }
}

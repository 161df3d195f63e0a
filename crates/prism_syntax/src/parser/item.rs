//! Top-level items: decorated functions and file-level constants.

use super::{Failed, PResult, Parser};
use crate::ast::*;
use crate::error::SyntaxError;
use crate::token::{Keyword, Punct, TokenKind};
use prism_span::Span;

/// A decorator as written, before interpretation.
struct RawDecorator {
    name: Ident,
    args: Option<Vec<Arg>>,
    span: Span,
}

impl Parser<'_> {
    pub(crate) fn module(&mut self) -> Module {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                TokenKind::Eof => break,
                TokenKind::Newline | TokenKind::Dedent => {
                    self.bump();
                }
                TokenKind::Indent => {
                    let span = self.span();
                    self.error(SyntaxError::UnexpectedIndent { span });
                    self.bump();
                }
                _ => match self.item() {
                    Ok(Some(item)) => items.push(item),
                    Ok(None) => {}
                    Err(Failed) => self.recover_line(),
                },
            }
        }
        Module { file: self.file(), items }
    }

    fn item(&mut self) -> PResult<Option<Item>> {
        if self.at_punct(Punct::At) || self.at_kw(Keyword::Def) {
            return self.function().map(|f| Some(Item::Function(Box::new(f))));
        }
        // `import` and `from` are words only here, at the start of a top-level line, so
        // that programs may still name variables `from`.
        if (self.at_ident("import") || self.at_ident("from")) && matches!(self.peek_at(1), TokenKind::Ident(_)) {
            return self.import().map(|i| Some(Item::Import(i)));
        }
        // `NAME : constexpr(T) = value` is the one statement allowed at top level.
        if matches!(self.peek(), TokenKind::Ident(_)) && matches!(self.peek_at(1), TokenKind::Punct(Punct::Colon)) {
            let start = self.span();
            let name = self.expect_ident("a name")?;
            self.bump();
            let ty = self.ty()?;
            if matches!(ty.kind, TypeKind::Constexpr(_)) {
                self.expect_punct(Punct::Eq)?;
                let value = self.expr()?;
                let span = self.since(start);
                self.end_of_line()?;
                return Ok(Some(Item::Const(ConstItem { name, ty, value, span })));
            }
            // Any other declaration is a statement out of place; skip its line.
            let span = start.to(self.prev_span());
            self.error(SyntaxError::TopLevelStatement { span });
            return Err(Failed);
        }
        // Parse the statement so that the error covers it and parsing resumes after it.
        let start = self.span();
        let mut sink = Vec::new();
        let ok = self.stmt_into(&mut sink).is_ok();
        let span = match (sink.first(), sink.last()) {
            (Some(a), Some(b)) => a.span.to(b.span),
            _ => start,
        };
        self.error(SyntaxError::TopLevelStatement { span });
        if ok { Ok(None) } else { Err(Failed) }
    }

    /// `import a.b [as c]` or `from a.b import f [as g], ...` (parenthesised names may
    /// span lines).
    fn import(&mut self) -> PResult<Import> {
        let start = self.span();
        let from = self.at_ident("from");
        self.bump();
        let mut path = vec![self.expect_ident("a module name")?];
        while self.eat_punct(Punct::Dot) {
            path.push(self.expect_ident("a module name after `.`")?);
        }
        let kind = if from {
            if !self.at_ident("import") {
                return self
                    .expected_with_help("`import`", Some("write `from a.b import f, g` or `import a.b`".into()));
            }
            self.bump();
            let paren = self.eat_punct(Punct::LParen);
            let mut names = Vec::new();
            loop {
                while paren && matches!(self.peek(), TokenKind::Newline | TokenKind::Indent | TokenKind::Dedent) {
                    self.bump();
                }
                if paren && self.at_punct(Punct::RParen) && !names.is_empty() {
                    break;
                }
                let name = self.expect_ident("a name to import")?;
                let alias =
                    if self.eat_kw(Keyword::As) { Some(self.expect_ident("the name to import it as")?) } else { None };
                names.push((name, alias));
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            if paren {
                while matches!(self.peek(), TokenKind::Newline | TokenKind::Indent | TokenKind::Dedent) {
                    self.bump();
                }
                self.expect_punct(Punct::RParen)?;
            }
            ImportKind::Names(names)
        } else {
            let alias =
                if self.eat_kw(Keyword::As) { Some(self.expect_ident("the name to import it as")?) } else { None };
            ImportKind::Module { alias }
        };
        let span = self.since(start);
        self.end_of_line()?;
        Ok(Import { path, kind, span })
    }

    fn end_of_line(&mut self) -> PResult<()> {
        self.eat_punct(Punct::Semi);
        match self.peek() {
            TokenKind::Newline => {
                self.bump();
                Ok(())
            }
            TokenKind::Eof => Ok(()),
            _ => self.expected("the end of the line"),
        }
    }

    fn decorator(&mut self) -> PResult<RawDecorator> {
        let start = self.expect_punct(Punct::At)?;
        let name = self.expect_ident("a decorator name")?;
        let args = if self.at_punct(Punct::LParen) { Some(self.call_args()?) } else { None };
        let span = self.since(start);
        self.end_of_line()?;
        Ok(RawDecorator { name, args, span })
    }

    fn function(&mut self) -> PResult<Function> {
        let start = self.span();
        let mut decorators = Vec::new();
        while self.at_punct(Punct::At) {
            match self.decorator() {
                Ok(d) => decorators.push(d),
                Err(Failed) => self.recover_line(),
            }
        }
        let def_span = self.expect_kw(Keyword::Def)?;
        let name = self.expect_ident("the function's name")?;
        // `def f[T, U](...)`: type parameters.
        let mut type_params = Vec::new();
        if self.eat_punct(Punct::LBracket) {
            loop {
                type_params.push(self.expect_ident("a type parameter's name")?);
                if !self.eat_punct(Punct::Comma) || self.at_punct(Punct::RBracket) {
                    break;
                }
            }
            self.expect_punct(Punct::RBracket)?;
        }
        self.expect_punct(Punct::LParen)?;
        let mut params = Vec::new();
        while !self.at_punct(Punct::RParen) {
            params.push(self.param()?);
            if !self.eat_punct(Punct::Comma) {
                break;
            }
        }
        self.expect_punct(Punct::RParen)?;
        let ret = if self.at_punct(Punct::Arrow) {
            let rs = self.bump();
            let ty = self.ty()?;
            let persp = if self.eat_punct(Punct::At) { Some(self.persp()?) } else { None };
            Some(RetType { ty, persp, span: self.since(rs) })
        } else {
            None
        };
        let header_span = self.since(def_span);
        self.expect_punct(Punct::Colon)?;
        let body = self.block()?;
        let span = self.since(start);
        let mut f = Function {
            name,
            type_params,
            kind: FnKind::Device,
            kind_span: header_span,
            requires: None,
            launch_bounds: None,
            min_blocks: None,
            params,
            ret,
            body,
            header_span,
            span,
        };
        self.apply_decorators(&mut f, decorators);
        Ok(f)
    }

    fn param(&mut self) -> PResult<Param> {
        let name = self.expect_ident("a parameter name")?;
        if !self.at_punct(Punct::Colon) {
            return self.expected_with_help(
                "`:` and the parameter's type",
                Some(format!("every parameter has a type and perspective: `{} : int @ thread[1]`", name.name)),
            );
        }
        self.bump();
        let ty = self.ty()?;
        let persp = if self.eat_punct(Punct::At) { Some(self.persp()?) } else { None };
        let span = self.since(name.span);
        Ok(Param { name, ty, persp, span })
    }

    /// Interprets the decorators of a function, reporting unknown, repeated and malformed
    /// ones and rewriting legacy spellings.
    fn apply_decorators(&mut self, f: &mut Function, decorators: Vec<RawDecorator>) {
        let mut seen: Vec<(&'static str, Span)> = Vec::new();
        let mut have_kind = false;
        for d in decorators {
            let key: &'static str = match d.name.name.as_str() {
                "prism" | "cuda" => "prism",
                "requires" => "requires",
                "launch_bounds" | "__attribute__" => "launch_bounds",
                other => {
                    let help = match other {
                        "require" => Some("did you mean `@requires`?".to_string()),
                        _ => Some(
                            "Prism knows `@prism(\"global\"|\"device\")`, `@requires(...)` and `@launch_bounds(n)`"
                                .to_string(),
                        ),
                    };
                    self.error(SyntaxError::BadDecorator {
                        reason: format!("unknown decorator `@{other}`"),
                        span: d.span,
                        other: None,
                        help,
                    });
                    continue;
                }
            };
            if let Some(&(_, first)) = seen.iter().find(|(k, _)| *k == key) {
                self.error(SyntaxError::BadDecorator {
                    reason: format!("repeated `@{}` decorator", d.name.name),
                    span: d.span,
                    other: Some((first, "first given here".into())),
                    help: None,
                });
                continue;
            }
            seen.push((key, d.span));
            match key {
                "prism" => {
                    if d.name.name == "cuda" {
                        self.error(SyntaxError::Legacy {
                            what: "@cuda(...)".into(),
                            canonical: "@prism(...)".into(),
                            span: d.name.span,
                        });
                    }
                    match d.args.as_deref() {
                        Some([Arg { name: None, value: Expr { kind: ExprKind::Str(s), .. }, .. }])
                            if s == "global" || s == "device" =>
                        {
                            f.kind = if s == "global" { FnKind::Kernel } else { FnKind::Device };
                            f.kind_span = d.span;
                            have_kind = true;
                        }
                        _ => {
                            self.error(SyntaxError::BadDecorator {
                                reason: format!("`@{}` takes \"global\" or \"device\"", d.name.name),
                                span: d.span,
                                other: None,
                                help: Some("write `@prism(\"global\")` for a kernel or `@prism(\"device\")` for a device function".into()),
                            });
                            // Still count it so the function is not also reported as undecorated.
                            have_kind = true;
                            f.kind_span = d.span;
                        }
                    }
                }
                "requires" => self.requires(f, d),
                _ => self.launch_bounds(f, d),
            }
        }
        if !have_kind {
            self.error(SyntaxError::BadDecorator {
                reason: format!("function `{}` has no `@prism(...)` decorator", f.name.name),
                span: f.header_span,
                other: None,
                help: Some(
                    "write `@prism(\"device\")` (a device function) or `@prism(\"global\")` (a kernel) above `def`"
                        .into(),
                ),
            });
        }
    }

    fn requires(&mut self, f: &mut Function, d: RawDecorator) {
        let Some(args) = d.args else {
            self.error(SyntaxError::BadDecorator {
                reason: "`@requires` needs a perspective bound".into(),
                span: d.span,
                other: None,
                help: Some("for example `@requires(grid[1], block[1], thread[32], smem=1024)`".into()),
            });
            return;
        };
        let mut entries = Vec::new();
        let mut smem = None;
        let mut block = None;
        for a in args {
            match a.name {
                Some(key) if key.name == "smem" => smem = Some(a.value),
                Some(key) if key.name == "block" => block = Some(a.value),
                Some(key) => {
                    self.error(SyntaxError::BadDecorator {
                        reason: format!("unknown `@requires` argument `{}`", key.name),
                        span: a.span,
                        other: None,
                        help: Some(
                            "`@requires` takes perspectives, `smem=` (bytes of shared memory) and `block=[X, Y, Z]` (the block's shape)"
                                .into(),
                        ),
                    });
                }
                None => {
                    if let Ok(p) = self.expr_to_persp(a.value) {
                        entries.push(p);
                    }
                }
            }
        }
        f.requires = Some(Requires { entries, smem, block, span: d.span });
    }

    fn launch_bounds(&mut self, f: &mut Function, d: RawDecorator) {
        let legacy = d.name.name == "__attribute__";
        let mut args = d.args.unwrap_or_default();
        let value = if legacy {
            // `@__attribute__((__launch_bounds__(N)))`, as in the H100 listing.
            match args.pop() {
                Some(Arg { name: None, value: Expr { kind: ExprKind::Call { callee, mut args }, .. }, .. })
                    if matches!(&callee.kind, ExprKind::Name(n) if n == "__launch_bounds__") && args.len() == 1 =>
                {
                    self.error(SyntaxError::Legacy {
                        what: "@__attribute__((__launch_bounds__(n)))".into(),
                        canonical: "@launch_bounds(n)".into(),
                        span: d.span,
                    });
                    args.pop().map(|a| a.value)
                }
                _ => None,
            }
        } else if (1..=2).contains(&args.len()) && args.iter().all(|a| a.name.is_none()) {
            if args.len() == 2 {
                f.min_blocks = args.pop().map(|a| a.value);
            }
            args.pop().map(|a| a.value)
        } else {
            None
        };
        match value {
            Some(v) => f.launch_bounds = Some(v),
            None => self.error(SyntaxError::BadDecorator {
                reason: "malformed launch bounds".into(),
                span: d.span,
                other: None,
                help: Some(
                    "write `@launch_bounds(N)` or `@launch_bounds(N, M)`: N the most threads per block the kernel is launched with, M the fewest blocks that should fit on one multiprocessor at once".into(),
                ),
            }),
        }
    }
}

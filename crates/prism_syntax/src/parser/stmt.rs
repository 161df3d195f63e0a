//! Statements and blocks.

use super::{Failed, PResult, Parser};
use crate::ast::*;
use crate::error::SyntaxError;
use crate::token::{Keyword, Punct, TokenKind};
use prism_span::Span;

impl Parser<'_> {
    /// Parses the block after a `:`: either an indented block on the following lines or
    /// simple statements on the same line (`if c: pass`).
    pub(crate) fn block(&mut self) -> PResult<Block> {
        let start = self.span();
        if matches!(self.peek(), TokenKind::Newline) {
            self.bump();
            if !matches!(self.peek(), TokenKind::Indent) {
                return self.expected_with_help(
                    "an indented block",
                    Some("indent the lines that belong to this block; an empty block is `pass`".into()),
                );
            }
            self.bump();
            self.enter()?;
            let mut stmts = Vec::new();
            while !matches!(self.peek(), TokenKind::Dedent | TokenKind::Eof) {
                if self.stmt_into(&mut stmts).is_err() {
                    self.recover_line();
                }
            }
            self.leave();
            let end = self.prev_span();
            if matches!(self.peek(), TokenKind::Dedent) {
                self.bump();
            }
            let span =
                stmts.first().map(|s: &Stmt| s.span).unwrap_or(start).to(stmts.last().map(|s| s.span).unwrap_or(end));
            Ok(Block { stmts, span })
        } else {
            let mut stmts = Vec::new();
            self.simple_line(&mut stmts)?;
            let span = stmts.first().map(|s| s.span).unwrap_or(start).to(self.prev_span());
            Ok(Block { stmts, span })
        }
    }

    /// Parses one statement (or one line of `;`-separated simple statements) into `out`.
    pub(crate) fn stmt_into(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.span();
        let kind = match self.peek() {
            TokenKind::Kw(Keyword::If) => self.if_stmt()?,
            TokenKind::Kw(Keyword::While) => {
                self.bump();
                let cond = self.expr()?;
                self.expect_punct(Punct::Colon)?;
                let body = self.block()?;
                StmtKind::While { cond, body }
            }
            TokenKind::Kw(Keyword::For) => self.for_stmt()?,
            TokenKind::Kw(Keyword::With) => self.with_stmt()?,
            TokenKind::Kw(Keyword::Match) => self.match_stmt()?,
            TokenKind::Kw(Keyword::Def) | TokenKind::Punct(Punct::At) => {
                return self.expected_with_help(
                    "a statement",
                    Some("functions are defined at the top level of a file; nested functions are not supported".into()),
                );
            }
            TokenKind::Indent => {
                let span = self.span();
                self.error(SyntaxError::UnexpectedIndent { span });
                return Err(Failed);
            }
            _ => return self.simple_line(out),
        };
        out.push(Stmt { kind, span: self.since(start) });
        Ok(())
    }

    /// Parses simple statements separated by `;` up to and including the end of the line.
    fn simple_line(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        loop {
            let s = self.simple_stmt()?;
            out.push(s);
            if self.eat_punct(Punct::Semi) {
                if matches!(self.peek(), TokenKind::Newline | TokenKind::Eof | TokenKind::Dedent) {
                    break;
                }
                continue;
            }
            break;
        }
        match self.peek() {
            TokenKind::Newline => {
                self.bump();
                Ok(())
            }
            TokenKind::Eof | TokenKind::Dedent => Ok(()),
            _ => self.expected("the end of the statement"),
        }
    }

    fn simple_stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let kind = match self.peek() {
            TokenKind::Kw(Keyword::Pass) => {
                self.bump();
                StmtKind::Pass
            }
            TokenKind::Kw(Keyword::Break) => {
                self.bump();
                StmtKind::Break
            }
            TokenKind::Kw(Keyword::Continue) => {
                self.bump();
                StmtKind::Continue
            }
            TokenKind::Kw(Keyword::Return) => {
                self.bump();
                let value = if matches!(self.peek(), TokenKind::Newline | TokenKind::Eof | TokenKind::Dedent)
                    || self.at_punct(Punct::Semi)
                {
                    None
                } else {
                    Some(self.expr()?)
                };
                StmtKind::Return(value)
            }
            TokenKind::Kw(Keyword::Unsafe) => {
                self.bump();
                if !self.at_punct(Punct::LParen) {
                    return self.expected_with_help(
                        "`(`",
                        Some("write `unsafe(\"CUDA text\")` for verbatim CUDA, or `with unsafe:` for a block".into()),
                    );
                }
                self.bump();
                let lit = self.str_lit("the CUDA text as a string literal")?;
                self.expect_punct(Punct::RParen)?;
                StmtKind::UnsafeText(lit)
            }
            _ => self.expr_stmt()?,
        };
        Ok(Stmt { kind, span: self.since(start) })
    }

    pub(crate) fn str_lit(&mut self, what: &str) -> PResult<StrLit> {
        match self.peek().clone() {
            TokenKind::Str(value) => {
                let span = self.bump();
                Ok(StrLit { value, span })
            }
            _ => self.expected(what),
        }
    }

    /// Declarations, assignments and expression statements, which all start with an
    /// expression.
    fn expr_stmt(&mut self) -> PResult<StmtKind> {
        let target = self.expr()?;
        if self.at_punct(Punct::Colon) {
            let ExprKind::Name(name) = &target.kind else {
                return self.expected_with_help(
                    "`=` or the end of the statement",
                    Some("only a plain name can be declared with `name : type`".into()),
                );
            };
            let name = Ident { name: name.clone(), span: target.span };
            self.bump();
            let ty = self.ty()?;
            let persp = if self.eat_punct(Punct::At) { Some(self.persp()?) } else { None };
            let init = if self.eat_punct(Punct::Eq) { Some(self.expr()?) } else { None };
            return Ok(StmtKind::Decl { name, ty, persp, init });
        }
        let op = match self.peek() {
            TokenKind::Punct(Punct::Eq) => None,
            TokenKind::Punct(p) => match p {
                Punct::PlusEq => Some(BinOp::Add),
                Punct::MinusEq => Some(BinOp::Sub),
                Punct::StarEq => Some(BinOp::Mul),
                Punct::SlashEq => Some(BinOp::Div),
                Punct::PercentEq => Some(BinOp::Rem),
                Punct::AmpEq => Some(BinOp::BitAnd),
                Punct::PipeEq => Some(BinOp::BitOr),
                Punct::CaretEq => Some(BinOp::BitXor),
                Punct::ShlEq => Some(BinOp::Shl),
                Punct::ShrEq => Some(BinOp::Shr),
                _ => return Ok(StmtKind::Expr(target)),
            },
            _ => return Ok(StmtKind::Expr(target)),
        };
        self.bump();
        let value = self.expr()?;
        if let (None, ExprKind::Name(name), ExprKind::Lambda(lambda)) = (op, &target.kind, &value.kind) {
            return Ok(StmtKind::LambdaDef {
                name: Ident { name: name.clone(), span: target.span },
                lambda: lambda.clone(),
            });
        }
        Ok(StmtKind::Assign { target, op, value })
    }

    fn if_stmt(&mut self) -> PResult<StmtKind> {
        self.expect_kw(Keyword::If)?;
        let mut branches = Vec::new();
        let cond = self.expr()?;
        self.expect_punct(Punct::Colon)?;
        branches.push((cond, self.block()?));
        let mut else_block = None;
        // Each `elif` is an `if` nested in the `else` before it, and later stages build it
        // that way, so each one counts as a level of nesting for the arms after it.
        let depth = self.depth;
        let r = self.elif_arms(&mut branches, &mut else_block);
        self.depth = depth;
        r?;
        Ok(StmtKind::If { branches, else_block })
    }

    fn elif_arms(&mut self, branches: &mut Vec<(Expr, Block)>, else_block: &mut Option<Block>) -> PResult<()> {
        loop {
            if self.at_kw(Keyword::Elif) {
                self.enter()?;
                self.eat_kw(Keyword::Elif);
                let cond = self.expr()?;
                self.expect_punct(Punct::Colon)?;
                branches.push((cond, self.block()?));
            } else if self.at_kw(Keyword::Else) {
                self.bump();
                self.expect_punct(Punct::Colon)?;
                *else_block = Some(self.block()?);
                return Ok(());
            } else {
                return Ok(());
            }
        }
    }

    fn for_stmt(&mut self) -> PResult<StmtKind> {
        self.expect_kw(Keyword::For)?;
        let var = self.expect_ident("a loop variable name")?;
        self.expect_kw(Keyword::In)?;
        if self.at_ident("pipeline") {
            return self.pipeline(var);
        }
        if !self.at_ident("range") {
            return self.expected_with_help(
                "`range(...)` or `pipeline(...)`",
                Some("Prism loops are `for i in range(start, end, step)`".into()),
            );
        }
        let range_span = self.bump();
        let mut args = self.call_args()?;
        let call_span = range_span.to(self.prev_span());
        // `unroll=` is the only keyword `range` takes, after the positional arguments.
        let mut unroll = None;
        if let Some(last) = args.last()
            && last.name.as_ref().is_some_and(|n| n.name == "unroll")
        {
            unroll = args.pop().map(|a| a.value);
        }
        if let Some(kw) = args.iter().find_map(|a| a.name.as_ref()) {
            let span = kw.span;
            self.error(SyntaxError::Misplaced {
                expected: "positional arguments to `range`, then at most `unroll=`".into(),
                span,
                help: Some("`range(start, end, step, unroll=True)`".into()),
            });
            return Err(Failed);
        }
        let mut vals: Vec<Expr> = args.into_iter().map(|a| a.value).collect();
        let (start, end, step) = match vals.len() {
            1 => (None, vals.pop().expect("one"), None),
            2 => {
                let end = vals.pop().expect("two");
                (vals.pop(), end, None)
            }
            3 => {
                let step = vals.pop();
                let end = vals.pop().expect("three");
                (vals.pop(), end, step)
            }
            n => {
                self.error(SyntaxError::Misplaced {
                    expected: format!("1 to 3 arguments to `range`, not {n}"),
                    span: call_span,
                    help: Some("`range(end)`, `range(start, end)` or `range(start, end, step)`".into()),
                });
                return Err(Failed);
            }
        };
        self.expect_punct(Punct::Colon)?;
        let body = self.block()?;
        Ok(StmtKind::For { var, start, end, step, unroll, body })
    }

    /// `pipeline(count, stages=S):` after `for var in`.
    fn pipeline(&mut self, var: Ident) -> PResult<StmtKind> {
        let head = self.bump();
        let args = self.call_args()?;
        let call_span = head.to(self.prev_span());
        let mut count = None;
        let mut stages = None;
        for a in args {
            match a.name {
                None if count.is_none() => count = Some(a.value),
                None => {
                    let span = a.value.span;
                    self.error(SyntaxError::Misplaced {
                        expected: "one positional argument to `pipeline` (the tile count)".into(),
                        span,
                        help: Some("`pipeline(count, stages=S)`".into()),
                    });
                    return Err(Failed);
                }
                Some(key) if key.name == "stages" => {
                    if stages.is_some() {
                        return self.repeated_kwarg(&key, "pipeline");
                    }
                    stages = Some(a.value);
                }
                Some(key) => return self.bad_kwarg(&key, "`pipeline` takes `stages=`"),
            }
        }
        let Some(count) = count else {
            return self.missing_kwarg(call_span, "the tile count (`pipeline(count, stages=S)`)");
        };
        let Some(stages) = stages else {
            return self.missing_kwarg(call_span, "`stages=` (the number of ring slots)");
        };
        self.expect_punct(Punct::Colon)?;
        let body = self.block()?;
        Ok(StmtKind::Pipeline { var, count, stages, body })
    }

    fn with_stmt(&mut self) -> PResult<StmtKind> {
        self.expect_kw(Keyword::With)?;
        let head = self.span();
        match self.peek().clone() {
            TokenKind::Kw(Keyword::Unsafe) => {
                self.bump();
                let cuda = if self.eat_punct(Punct::LParen) {
                    let lit = self.str_lit("the CUDA text as a string literal")?;
                    self.expect_punct(Punct::RParen)?;
                    Some(lit)
                } else {
                    None
                };
                self.expect_punct(Punct::Colon)?;
                let body = self.block()?;
                Ok(StmtKind::Unsafe { cuda, body })
            }
            TokenKind::Kw(Keyword::Async) => {
                self.bump();
                self.expect_punct(Punct::LParen)?;
                let src = self.expect_ident("the name of the memory to copy into")?;
                self.expect_punct(Punct::RParen)?;
                let name = self.as_name()?;
                let body = self.block()?;
                Ok(StmtKind::Async { src, name, body })
            }
            TokenKind::Ident(word) => match word.as_str() {
                "group" => {
                    self.bump();
                    self.expect_punct(Punct::LParen)?;
                    let persp = self.persp()?;
                    self.expect_punct(Punct::RParen)?;
                    self.expect_punct(Punct::Colon)?;
                    let body = self.block()?;
                    Ok(StmtKind::Group { persp, body })
                }
                "partition" => self.partition(head),
                "fill" | "stage" => {
                    self.bump();
                    self.expect_punct(Punct::LParen)?;
                    let src = self.expect_ident("the name of a ring (a shared array of slots)")?;
                    // `stage(ring, next=True)` and `stage(ring, late=True)`: the only keywords
                    // either takes. `next=` is a literal, so that the checker sees where the
                    // pipeline's barrier goes before it checks anything; `late=` only says
                    // how the case releases its slots, which nothing decides before the
                    // stage is checked, so it may be any compile-time constant (a
                    // `constexpr` that `-D` sets), evaluated by the checker.
                    let (mut next, mut late) = (false, None);
                    let mut seen: Vec<String> = Vec::new();
                    while word == "stage" && self.eat_punct(Punct::Comma) {
                        let key = self.expect_ident("`next=True` or `late=True`")?;
                        if seen.contains(&key.name) {
                            return self.repeated_kwarg(&key, "stage");
                        }
                        seen.push(key.name.clone());
                        if !matches!(key.name.as_str(), "next" | "late") {
                            return self.bad_kwarg(
                                &key,
                                "`stage` takes `next=True` (the next tile's slot) or `late=True` (released one tile late)",
                            );
                        }
                        self.expect_punct(Punct::Eq)?;
                        let value = self.expr()?;
                        if key.name == "late" {
                            late = Some(value);
                            continue;
                        }
                        next = match value.kind {
                            ExprKind::Bool(b) => b,
                            _ => {
                                self.error(SyntaxError::Misplaced {
                                    expected: "`True` or `False`".into(),
                                    span: value.span,
                                    help: Some(format!(
                                        "`{}=` takes a literal: `with stage(ring, {}=True) as s:`",
                                        key.name, key.name
                                    )),
                                });
                                return Err(Failed);
                            }
                        };
                    }
                    self.expect_punct(Punct::RParen)?;
                    let name = self.as_name()?;
                    let body = self.block()?;
                    Ok(if word == "fill" {
                        StmtKind::Fill { src, name, body }
                    } else {
                        StmtKind::Stage { src, next, late, name, body }
                    })
                }
                "claim" => {
                    self.bump();
                    let args = self.call_args()?;
                    let call_span = self.since(head);
                    let (src, kwargs) = self.scope_args(args, call_span, "claim")?;
                    let mut persp = None;
                    for (key, value) in kwargs {
                        match key.name.as_str() {
                            "p" => persp = Some(self.expr_to_persp(value)?),
                            _ => return self.bad_kwarg(&key, "`claim` takes `p=`"),
                        }
                    }
                    let Some(persp) = persp else {
                        return self
                            .missing_kwarg(call_span, "`p=` (the perspective of the unit that claims the memory)");
                    };
                    let name = self.as_name()?;
                    let body = self.block()?;
                    Ok(StmtKind::Claim { src, persp, name, body })
                }
                "split" => {
                    // Legacy (Parallax Fig. 8): `with split(thread):` followed by cases.
                    self.bump();
                    self.expect_punct(Punct::LParen)?;
                    let (level, level_span) = self.level_word()?;
                    self.expect_punct(Punct::RParen)?;
                    let span = self.since(head);
                    self.error(SyntaxError::Legacy {
                        what: format!("with split({})", level.as_str()),
                        canonical: format!("match split({}):", level.as_str()),
                        span,
                    });
                    self.expect_punct(Punct::Colon)?;
                    let cases = self.cases()?;
                    Ok(StmtKind::Split { level, level_span, cases })
                }
                _ => self.expected_with_help("`group`, `partition`, `claim`, `async` or `unsafe` after `with`", None),
            },
            _ => self.expected("`group`, `partition`, `claim`, `async` or `unsafe` after `with`"),
        }
    }

    fn as_name(&mut self) -> PResult<Ident> {
        self.expect_kw(Keyword::As)?;
        let name = self.expect_ident("the new name after `as`")?;
        self.expect_punct(Punct::Colon)?;
        Ok(name)
    }

    /// Splits `partition(...)`/`claim(...)` arguments into the source name and keywords.
    fn scope_args(&mut self, args: Vec<Arg>, call_span: Span, what: &str) -> PResult<(Ident, Vec<(Ident, Expr)>)> {
        let mut src = None;
        let mut kwargs = Vec::new();
        for a in args {
            match a.name {
                Some(key) => {
                    if kwargs.iter().any(|(k, _): &(Ident, Expr)| k.name == key.name) {
                        return self.repeated_kwarg(&key, what);
                    }
                    kwargs.push((key, a.value));
                }
                None if src.is_none() => match a.value.kind {
                    ExprKind::Name(name) => src = Some(Ident { name, span: a.value.span }),
                    _ => {
                        self.error(SyntaxError::Misplaced {
                            expected: format!("the name of the pointer to {what}"),
                            span: a.value.span,
                            help: Some(format!("`{what}` narrows a named pointer or shared array")),
                        });
                        return Err(Failed);
                    }
                },
                None => {
                    self.error(SyntaxError::Misplaced {
                        expected: "a keyword argument".into(),
                        span: a.value.span,
                        help: Some(format!("`{what}` takes one pointer, then keyword arguments such as `p=thread[1]`")),
                    });
                    return Err(Failed);
                }
            }
        }
        match src {
            Some(s) => Ok((s, kwargs)),
            None => self.missing_kwarg(call_span, &format!("the name of the pointer to {what}")),
        }
    }

    /// A keyword argument given a second time (Python refuses it too; which one would win
    /// is not obvious to a reader).
    fn repeated_kwarg<T>(&mut self, key: &Ident, what: &str) -> PResult<T> {
        self.error(SyntaxError::Misplaced {
            expected: format!("each keyword argument of `{what}` once"),
            span: key.span,
            help: Some(format!("`{}=` is given twice; keep one", key.name)),
        });
        Err(Failed)
    }

    fn bad_kwarg<T>(&mut self, key: &Ident, help: &str) -> PResult<T> {
        self.error(SyntaxError::Misplaced {
            expected: "a known keyword argument".into(),
            span: key.span,
            help: Some(help.to_string()),
        });
        Err(Failed)
    }

    fn missing_kwarg<T>(&mut self, span: Span, what: &str) -> PResult<T> {
        self.error(SyntaxError::Misplaced { expected: what.to_string(), span, help: None });
        Err(Failed)
    }

    fn partition(&mut self, head: Span) -> PResult<StmtKind> {
        self.bump();
        let args = self.call_args()?;
        let call_span = self.since(head);
        let (src, kwargs) = self.scope_args(args, call_span, "partition")?;
        let mut persp = None;
        let mut index: Option<IndexFn> = None;
        for (key, value) in kwargs {
            match key.name.as_str() {
                "p" | "dimension" => {
                    if key.name == "dimension" {
                        self.error(SyntaxError::Legacy {
                            what: "dimension=".into(),
                            canonical: "p=".into(),
                            span: key.span,
                        });
                    }
                    persp = Some(self.expr_to_persp(value)?);
                }
                "f" | "offset" => {
                    if index.is_some() {
                        return self.bad_kwarg(&key, "give one indexing function: `f=` (or the legacy `offset=`)");
                    }
                    index = Some(if key.name == "offset" {
                        self.error(SyntaxError::Legacy {
                            what: "offset=e".into(),
                            canonical: "f=lambda i: e + i".into(),
                            span: key.span.to(value.span),
                        });
                        IndexFn::Offset(value)
                    } else {
                        match value.kind {
                            ExprKind::Lambda(l) => IndexFn::Lambda(l),
                            ExprKind::Name(name) => IndexFn::Name(Ident { name, span: value.span }),
                            // `f=..` was already reported as elided code.
                            ExprKind::Elided => return Err(Failed),
                            _ => {
                                self.error(SyntaxError::Misplaced {
                                    expected: "a lambda or the name of one".into(),
                                    span: value.span,
                                    help: Some("write `f=lambda i: base + i`".into()),
                                });
                                return Err(Failed);
                            }
                        }
                    });
                }
                _ => return self.bad_kwarg(&key, "`partition` takes `p=` and `f=`"),
            }
        }
        let Some(persp) = persp else {
            return self.missing_kwarg(call_span, "`p=` (the perspective each part belongs to)");
        };
        let Some(index) = index else {
            return self.missing_kwarg(call_span, "`f=` (the indexing function of the parts)");
        };
        let name = self.as_name()?;
        let body = self.block()?;
        Ok(StmtKind::Partition { src, persp, index, name, body })
    }

    fn level_word(&mut self) -> PResult<(LevelName, Span)> {
        if let TokenKind::Ident(w) = self.peek()
            && let Some(l) = LevelName::from_word(w)
        {
            let span = self.bump();
            return Ok((l, span));
        }
        self.expected("a level (`grid`, `block`, `thread`, `warp` or `warpgroup`)")
    }

    fn match_stmt(&mut self) -> PResult<StmtKind> {
        let head = self.expect_kw(Keyword::Match)?;
        let (level, level_span) =
            if self.at_ident("split") && matches!(self.peek_at(1), TokenKind::Punct(Punct::LParen)) {
                self.bump();
                self.bump();
                let l = self.level_word()?;
                self.expect_punct(Punct::RParen)?;
                l
            } else {
                // Legacy (Parallax Fig. 13): `match thread:`.
                let (l, s) = self.level_word()?;
                self.error(SyntaxError::Legacy {
                    what: format!("match {}:", l.as_str()),
                    canonical: format!("match split({}):", l.as_str()),
                    span: head.to(s),
                });
                (l, s)
            };
        self.expect_punct(Punct::Colon)?;
        let cases = self.cases()?;
        Ok(StmtKind::Split { level, level_span, cases })
    }

    /// Parses the indented `case n:` arms of a split.
    fn cases(&mut self) -> PResult<Vec<Case>> {
        if !matches!(self.peek(), TokenKind::Newline) {
            return self.expected("a new line and indented `case` arms");
        }
        self.bump();
        if !matches!(self.peek(), TokenKind::Indent) {
            return self.expected("indented `case` arms");
        }
        self.bump();
        let mut cases = Vec::new();
        while !matches!(self.peek(), TokenKind::Dedent | TokenKind::Eof) {
            let start = self.span();
            if !self.at_kw(Keyword::Case) {
                let _: PResult<()> =
                    self.expected_with_help("`case`", Some("a split holds only `case n:` arms, one per branch".into()));
                self.recover_line();
                continue;
            }
            self.bump();
            let count = match self.expr() {
                Ok(e) => e,
                Err(_) => {
                    self.recover_line();
                    continue;
                }
            };
            if self.expect_punct(Punct::Colon).is_err() {
                self.recover_line();
                continue;
            }
            let span = self.since(start);
            match self.block() {
                Ok(body) => cases.push(Case { count, body, span }),
                Err(_) => self.recover_line(),
            }
        }
        if matches!(self.peek(), TokenKind::Dedent) {
            self.bump();
        }
        Ok(cases)
    }
}

//! Expressions, perspectives and types.
//!
//! Precedence, loosest first: `lambda`; `a if c else b`; `or`; `and`; `not`; comparisons
//! (not chained); `|`; `^`; `&`; `<<` `>>`; `+` `-`; `*` `/` `%`; unary `-` `+` `~`; calls,
//! indexing and attributes. This is Python's order, which for the C operators Prism has is
//! also C's, except that comparisons bind looser than the bit operators (as in Python), so
//! `x & 1 == 0` means `(x & 1) == 0`.

use super::{Failed, PResult, Parser};
use crate::ast::*;
use crate::error::SyntaxError;
use crate::token::{Keyword, Punct, TokenKind};
use prism_span::Span;

impl Parser<'_> {
    /// Parses an expression (including a lambda).
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = if self.at_kw(Keyword::Lambda) {
            self.lambda().map(|l| {
                let span = l.span;
                Expr { kind: ExprKind::Lambda(l), span }
            })
        } else {
            self.ternary()
        };
        self.leave();
        r
    }

    pub(crate) fn lambda(&mut self) -> PResult<Lambda> {
        let start = self.expect_kw(Keyword::Lambda)?;
        let mut params = Vec::new();
        if !self.at_punct(Punct::Colon) {
            loop {
                params.push(self.expect_ident("a lambda parameter name")?);
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
        }
        self.expect_punct(Punct::Colon)?;
        let body = self.expr()?;
        let span = start.to(body.span);
        Ok(Lambda { params, body: Box::new(body), span })
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let then = self.or_expr()?;
        if self.at_kw(Keyword::If) {
            self.bump();
            let cond = self.or_expr()?;
            self.expect_kw(Keyword::Else)?;
            let otherwise = self.expr()?;
            let span = then.span.to(otherwise.span);
            return Ok(Expr {
                kind: ExprKind::Ternary { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) },
                span,
            });
        }
        Ok(then)
    }

    /// Parses a left-associative chain `operand (op operand)*`, counting the height of the
    /// tree it builds against the nesting limit.
    fn chain(&mut self, operand: fn(&mut Self) -> PResult<Expr>, op: fn(&TokenKind) -> Option<BinOp>) -> PResult<Expr> {
        let mut lhs = operand(self)?;
        // The height of `lhs`, computed when the first link needs it.
        let mut lhs_height = None;
        while let Some(o) = op(self.peek()) {
            self.bump();
            let rhs = operand(self)?;
            let h = lhs_height.unwrap_or_else(|| height(&lhs)).max(height(&rhs)) + 1;
            self.check_height(h)?;
            lhs_height = Some(h);
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary(o, Box::new(lhs), Box::new(rhs)), span };
        }
        Ok(lhs)
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        // `||` was already reported by the lexer; parse it as `or` to keep going.
        self.chain(Self::and_expr, |t| {
            matches!(t, TokenKind::Kw(Keyword::Or) | TokenKind::Punct(Punct::PipePipe)).then_some(BinOp::Or)
        })
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        self.chain(Self::not_expr, |t| {
            matches!(t, TokenKind::Kw(Keyword::And) | TokenKind::Punct(Punct::AmpAmp)).then_some(BinOp::And)
        })
    }

    fn not_expr(&mut self) -> PResult<Expr> {
        if self.at_kw(Keyword::Not) {
            let start = self.bump();
            self.enter()?;
            let inner = self.not_expr();
            self.leave();
            let inner = inner?;
            let span = start.to(inner.span);
            return Ok(Expr { kind: ExprKind::Unary(UnOp::Not, Box::new(inner)), span });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> PResult<Expr> {
        let lhs = self.bit_or()?;
        let Some(op) = cmp_op(self.peek()) else {
            return Ok(lhs);
        };
        self.bump();
        let rhs = self.bit_or()?;
        if let Some(op2) = cmp_op(self.peek()) {
            return self.expected_with_help(
                "the end of the comparison",
                Some(format!("comparisons do not chain; write `a {} b and b {} c`", op.as_str(), op2.as_str())),
            );
        }
        let span = lhs.span.to(rhs.span);
        Ok(Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span })
    }

    fn bit_or(&mut self) -> PResult<Expr> {
        self.chain(Self::bit_xor, |t| matches!(t, TokenKind::Punct(Punct::Pipe)).then_some(BinOp::BitOr))
    }

    fn bit_xor(&mut self) -> PResult<Expr> {
        self.chain(Self::bit_and, |t| matches!(t, TokenKind::Punct(Punct::Caret)).then_some(BinOp::BitXor))
    }

    fn bit_and(&mut self) -> PResult<Expr> {
        self.chain(Self::shift, |t| matches!(t, TokenKind::Punct(Punct::Amp)).then_some(BinOp::BitAnd))
    }

    fn shift(&mut self) -> PResult<Expr> {
        self.chain(Self::arith, |t| match t {
            TokenKind::Punct(Punct::Shl) => Some(BinOp::Shl),
            TokenKind::Punct(Punct::Shr) => Some(BinOp::Shr),
            _ => None,
        })
    }

    fn arith(&mut self) -> PResult<Expr> {
        self.chain(Self::term, |t| match t {
            TokenKind::Punct(Punct::Plus) => Some(BinOp::Add),
            TokenKind::Punct(Punct::Minus) => Some(BinOp::Sub),
            _ => None,
        })
    }

    fn term(&mut self) -> PResult<Expr> {
        self.chain(Self::unary, |t| match t {
            TokenKind::Punct(Punct::Star) => Some(BinOp::Mul),
            TokenKind::Punct(Punct::Slash) => Some(BinOp::Div),
            TokenKind::Punct(Punct::Percent) => Some(BinOp::Rem),
            _ => None,
        })
    }

    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            TokenKind::Punct(Punct::Minus) => Some(UnOp::Neg),
            TokenKind::Punct(Punct::Tilde) => Some(UnOp::BitNot),
            // `!x` was already reported by the lexer; parse it as `not x` to keep going.
            TokenKind::Punct(Punct::Bang) => Some(UnOp::Not),
            TokenKind::Punct(Punct::Plus) => {
                self.bump();
                self.enter()?;
                let r = self.unary();
                self.leave();
                return r;
            }
            _ => None,
        };
        if let Some(op) = op {
            let start = self.bump();
            self.enter()?;
            let inner = self.unary();
            self.leave();
            let inner = inner?;
            let span = start.to(inner.span);
            return Ok(Expr { kind: ExprKind::Unary(op, Box::new(inner)), span });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.atom()?;
        // The height of `e`, computed when the first call, index or attribute needs it; each
        // one adds a level above `e` and its arguments.
        let mut e_height = None;
        loop {
            if self.at_punct(Punct::LParen) || self.at_punct(Punct::LBracket) || self.at_punct(Punct::Dot) {
                let h = *e_height.get_or_insert_with(|| height(&e)) + 1;
                self.check_height(h)?;
                e_height = Some(h);
            }
            if self.at_punct(Punct::LParen) {
                let args = self.call_args()?;
                let h = args.iter().map(|a| height(&a.value) + 1).fold(e_height.unwrap_or(0), u32::max);
                self.check_height(h)?;
                e_height = Some(h);
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Call { callee: Box::new(e), args }, span };
            } else if self.at_punct(Punct::LBracket) {
                self.bump();
                let mut indices = Vec::new();
                loop {
                    indices.push(self.expr()?);
                    if !self.eat_punct(Punct::Comma) || self.at_punct(Punct::RBracket) {
                        break;
                    }
                }
                self.expect_punct(Punct::RBracket)?;
                let h = indices.iter().map(|i| height(i) + 1).fold(e_height.unwrap_or(0), u32::max);
                self.check_height(h)?;
                e_height = Some(h);
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Index { base: Box::new(e), indices }, span };
            } else if self.at_punct(Punct::Dot) {
                self.bump();
                let name = self.expect_ident("an attribute name")?;
                let span = e.span.to(name.span);
                e = Expr { kind: ExprKind::Attr { base: Box::new(e), name }, span };
            } else {
                return Ok(e);
            }
        }
    }

    /// Parses `( arg, name=arg, ... )`.
    pub(crate) fn call_args(&mut self) -> PResult<Vec<Arg>> {
        self.expect_punct(Punct::LParen)?;
        let mut args = Vec::new();
        while !self.at_punct(Punct::RParen) {
            let start = self.span();
            let name = if matches!(self.peek(), TokenKind::Ident(_))
                && matches!(self.peek_at(1), TokenKind::Punct(Punct::Eq))
            {
                let n = self.expect_ident("an argument name")?;
                self.bump();
                Some(n)
            } else {
                None
            };
            let value = self.expr()?;
            let span = start.to(value.span);
            args.push(Arg { name, value, span });
            if !self.eat_punct(Punct::Comma) {
                break;
            }
        }
        self.expect_punct(Punct::RParen)?;
        Ok(args)
    }

    fn atom(&mut self) -> PResult<Expr> {
        let span = self.span();
        let kind = match self.peek() {
            TokenKind::Int(v) => ExprKind::Int(*v),
            TokenKind::Float(v) => ExprKind::Float(*v),
            TokenKind::Str(s) => ExprKind::Str(s.clone()),
            TokenKind::Kw(Keyword::True) => ExprKind::Bool(true),
            TokenKind::Kw(Keyword::False) => ExprKind::Bool(false),
            TokenKind::Ident(name) => ExprKind::Name(name.clone()),
            // `unsafe` is a keyword, but `unsafe("...")` is written like a call.
            TokenKind::Kw(Keyword::Unsafe) => ExprKind::Name("unsafe".into()),
            // A malformed literal was already reported by the lexer.
            TokenKind::Invalid => ExprKind::Error,
            TokenKind::Punct(Punct::Ellipsis) | TokenKind::Punct(Punct::DotDot) => {
                self.bump();
                self.error(SyntaxError::Elided { span });
                return Ok(Expr { kind: ExprKind::Elided, span });
            }
            TokenKind::Punct(Punct::LParen) => {
                self.bump();
                let inner = self.expr()?;
                self.expect_punct(Punct::RParen)?;
                // Keep the parentheses in the span so diagnostics underline what was written.
                let span = span.to(self.prev_span());
                return Ok(Expr { kind: inner.kind, span });
            }
            TokenKind::Punct(Punct::LBracket) => {
                self.bump();
                let mut items = Vec::new();
                while !self.at_punct(Punct::RBracket) {
                    items.push(self.expr()?);
                    if !self.eat_punct(Punct::Comma) {
                        break;
                    }
                }
                self.expect_punct(Punct::RBracket)?;
                let span = span.to(self.prev_span());
                return Ok(Expr { kind: ExprKind::List(items), span });
            }
            _ => return self.expected("an expression"),
        };
        self.bump();
        Ok(Expr { kind, span })
    }

    /// Parses a perspective `level[size]`.
    pub(crate) fn persp(&mut self) -> PResult<Persp> {
        let e = self.postfix()?;
        self.expr_to_persp(e)
    }

    /// Reinterprets an expression written as `level[size]` as a perspective.
    pub(crate) fn expr_to_persp(&mut self, e: Expr) -> PResult<Persp> {
        if let ExprKind::Index { base, mut indices } = e.kind
            && let ExprKind::Name(word) = &base.kind
            && let Some(level) = LevelName::from_word(word)
            && indices.len() == 1
        {
            let size = indices.pop().expect("one index");
            return Ok(Persp { level, size: Box::new(size), span: e.span });
        }
        self.error(SyntaxError::Misplaced {
            expected: "a perspective such as `thread[32]` or `block[1]`".into(),
            span: e.span,
            help: Some("a perspective is a level (`grid`, `block`, `thread`, `warp`, `warpgroup`) and a unit count in brackets".into()),
        });
        Err(Failed)
    }

    /// Parses a type: `int`, `float[4][2]`, `ptr(const(float))`, `shared(float[128], align=16)`.
    pub(crate) fn ty(&mut self) -> PResult<TypeExpr> {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn ty_inner(&mut self) -> PResult<TypeExpr> {
        let name = self.expect_ident("a type")?;
        let mut ty = if matches!(name.name.as_str(), "ptr" | "const" | "constexpr" | "shared" | "tensor_map") {
            if !self.at_punct(Punct::LParen) {
                return self.expected_with_help(
                    "`(`",
                    Some(format!("type constructors take their argument in parentheses: `{}(T)`", name.name)),
                );
            }
            self.bump();
            let inner = self.ty()?;
            let kind = match name.name.as_str() {
                "ptr" => {
                    // `ptr(T, shared)`: memory in the shared window, which the intrinsics that
                    // address it directly (wgmma, ldmatrix, copies) require.
                    let mut shared = None;
                    if self.eat_punct(Punct::Comma) {
                        let space = self.expect_ident("`shared`")?;
                        if space.name != "shared" {
                            self.error(SyntaxError::Misplaced {
                                expected: "`shared`".into(),
                                span: space.span,
                                help: Some(
                                    "`ptr(T, shared)` points into shared memory; `ptr(T)` points anywhere".into(),
                                ),
                            });
                            return Err(Failed);
                        }
                        shared = Some(space.span);
                    }
                    TypeKind::Ptr(Box::new(inner), shared)
                }
                "const" => TypeKind::Const(Box::new(inner)),
                "constexpr" => TypeKind::Constexpr(Box::new(inner)),
                ctor => {
                    // `shared(T[n], align=k)` and `tensor_map(T[r][c], swizzle=s)` take one
                    // optional keyword each.
                    let (keyword, usage) = if ctor == "shared" {
                        ("align", "`shared(T[n], align=k)` takes only an alignment")
                    } else {
                        ("swizzle", "`tensor_map(T[r][c], swizzle=s)` takes only a swizzle span")
                    };
                    let mut value = None;
                    if self.eat_punct(Punct::Comma) && !self.at_punct(Punct::RParen) {
                        let key = self.expect_ident(&format!("`{keyword}=`"))?;
                        if key.name != keyword {
                            self.error(SyntaxError::Misplaced {
                                expected: format!("`{keyword}=`"),
                                span: key.span,
                                help: Some(usage.into()),
                            });
                            return Err(Failed);
                        }
                        self.expect_punct(Punct::Eq)?;
                        value = Some(Box::new(self.expr()?));
                    }
                    if ctor == "shared" {
                        TypeKind::Shared { elem: Box::new(inner), align: value }
                    } else {
                        TypeKind::TensorMap { elem: Box::new(inner), swizzle: value }
                    }
                }
            };
            self.expect_punct(Punct::RParen)?;
            TypeExpr { kind, span: name.span.to(self.prev_span()) }
        } else {
            TypeExpr { kind: TypeKind::Named(name.name), span: name.span }
        };
        let mut dims = Vec::new();
        while self.at_punct(Punct::LBracket) {
            self.bump();
            dims.push(self.expr()?);
            if self.at_punct(Punct::Comma) {
                return self.expected_with_help(
                    "`]`",
                    Some("write each dimension in its own brackets: `float[16][8]`".into()),
                );
            }
            self.expect_punct(Punct::RBracket)?;
        }
        if !dims.is_empty() {
            let span = ty.span.to(self.prev_span());
            ty = TypeExpr { kind: TypeKind::Array(Box::new(ty), dims), span };
        }
        Ok(ty)
    }

    /// A span from `start` to the end of the previous token.
    pub(crate) fn since(&self, start: Span) -> Span {
        start.to(self.prev_span())
    }
}

/// The height of `e`'s tree, 1 for a leaf, counted no higher than one past the nesting
/// limit: the parser rejects taller trees, and this walk must not recurse without bound
/// itself.
fn height(e: &Expr) -> u32 {
    fn walk(e: &Expr, budget: u32) -> u32 {
        if budget == 0 {
            return 0;
        }
        let sub = |x: &Expr| walk(x, budget - 1);
        1 + match &e.kind {
            ExprKind::Unary(_, a) | ExprKind::Attr { base: a, .. } => sub(a),
            ExprKind::Binary(_, a, b) => sub(a).max(sub(b)),
            ExprKind::Ternary { cond, then, otherwise } => sub(cond).max(sub(then)).max(sub(otherwise)),
            ExprKind::Call { callee, args } => args.iter().map(|a| sub(&a.value)).fold(sub(callee), u32::max),
            ExprKind::Index { base, indices } => indices.iter().map(sub).fold(sub(base), u32::max),
            ExprKind::List(items) => items.iter().map(sub).max().unwrap_or(0),
            ExprKind::Lambda(l) => sub(&l.body),
            _ => 0,
        }
    }
    walk(e, super::MAX_DEPTH + 1)
}

fn cmp_op(t: &TokenKind) -> Option<BinOp> {
    match t {
        TokenKind::Punct(Punct::EqEq) => Some(BinOp::Eq),
        TokenKind::Punct(Punct::Ne) => Some(BinOp::Ne),
        TokenKind::Punct(Punct::Lt) => Some(BinOp::Lt),
        TokenKind::Punct(Punct::Le) => Some(BinOp::Le),
        TokenKind::Punct(Punct::Gt) => Some(BinOp::Gt),
        TokenKind::Punct(Punct::Ge) => Some(BinOp::Ge),
        _ => None,
    }
}

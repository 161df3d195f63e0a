//! Reads the IR text form back (see [`crate::print`]). Spans are not part of the text;
//! parsed instructions get empty spans.

use crate::entities::{AccessId, FuncId, LocalId, MemId, Reg};
use crate::ir::*;
use prism_span::Span;
use prism_types::intrinsics;
use prism_types::perspective::{Facts, Level, Persp};
use prism_types::tir::{BinOp, ConstValue, FnKind, RawIndex, UnOp, Unroll};
use prism_types::ty::Scalar;
use std::collections::HashMap;

/// A parse error with its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line.
    pub line: u32,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Reg(u32),
    Local(u32),
    Mem(u32),
    Acc(u32),
    Func(String),
    Int(i128),
    Float(f64),
    Str(String),
    P(char),
    Arrow,
}

fn tokenize(src: &str) -> Result<Vec<(Tok, u32)>, ParseError> {
    let mut out = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    let mut line = 1u32;
    let err = |line, m: &str| Err(ParseError { line, message: m.to_string() });
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b';' => {
                // Comments run to the end of the line (used by `.pir` test files).
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'{' | b'}' | b'(' | b')' | b'[' | b']' | b',' | b'=' | b':' => {
                out.push((Tok::P(c as char), line));
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'>') => {
                out.push((Tok::Arrow, line));
                i += 2;
            }
            b'%' | b'$' | b'#' | b'!' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j == start {
                    return err(line, "expected a number after a sigil");
                }
                let n: u32 = src[start..j].parse().map_err(|_| ParseError { line, message: "bad number".into() })?;
                out.push((
                    match c {
                        b'%' => Tok::Reg(n),
                        b'$' => Tok::Local(n),
                        b'#' => Tok::Mem(n),
                        _ => Tok::Acc(n),
                    },
                    line,
                ));
                i = j;
            }
            b'@' => {
                let start = i + 1;
                let mut j = start;
                // Names of imported functions and instances have dots: `@m.f`, `@f.int.4`.
                while j < b.len() && (b[j] == b'_' || b[j] == b'.' || b[j].is_ascii_alphanumeric()) {
                    j += 1;
                }
                out.push((Tok::Func(src[start..j].to_string()), line));
                i = j;
            }
            b'"' => {
                let mut s = String::new();
                let mut j = i + 1;
                loop {
                    let Some(ch) = src[j..].chars().next() else { return err(line, "unterminated string") };
                    j += ch.len_utf8();
                    match ch {
                        '"' => break,
                        '\\' => {
                            let Some(e) = src[j..].chars().next() else { return err(line, "bad escape") };
                            j += e.len_utf8();
                            match e {
                                'n' => s.push('\n'),
                                't' => s.push('\t'),
                                'r' => s.push('\r'),
                                '0' => s.push('\0'),
                                '\\' => s.push('\\'),
                                '"' => s.push('"'),
                                '\'' => s.push('\''),
                                'u' => {
                                    // \u{XXXX}
                                    let close = src[j..]
                                        .find('}')
                                        .ok_or(ParseError { line, message: "bad \\u escape".into() })?;
                                    let hex = &src[j + 1..j + close];
                                    let v = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                                    s.push(v.ok_or(ParseError { line, message: "bad \\u escape".into() })?);
                                    j += close + 1;
                                }
                                _ => return err(line, "bad escape"),
                            }
                        }
                        '\n' => {
                            line += 1;
                            s.push('\n');
                        }
                        c => s.push(c),
                    }
                }
                out.push((Tok::Str(s), line));
                i = j;
            }
            c if c.is_ascii_digit() || c == b'-' || c == b'.' => {
                let start = i;
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'.' | b'-' | b'+' | b'_')) {
                    // Stop an exponent sign from swallowing the next token.
                    if matches!(b[j], b'-' | b'+') && !matches!(b[j - 1], b'e' | b'E') {
                        break;
                    }
                    j += 1;
                }
                let text = &src[start..j];
                let tok = if let Ok(v) = text.parse::<i128>() {
                    Tok::Int(v)
                } else if text == "-inf" {
                    Tok::Float(f64::NEG_INFINITY)
                } else if let Ok(v) = text.parse::<f64>() {
                    Tok::Float(v)
                } else {
                    return err(line, &format!("bad number `{text}`"));
                };
                out.push((tok, line));
                i = j;
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let start = i;
                let mut j = i;
                while j < b.len() && (b[j] == b'_' || b[j] == b'.' || b[j].is_ascii_alphanumeric()) {
                    j += 1;
                }
                out.push((Tok::Word(src[start..j].to_string()), line));
                i = j;
            }
            _ => return err(line, &format!("unexpected character `{}`", c as char)),
        }
    }
    Ok(out)
}

struct P {
    toks: Vec<(Tok, u32)>,
    pos: usize,
    fn_ids: HashMap<String, FuncId>,
    regs: Vec<Type>,
}

type R<T> = Result<T, ParseError>;

impl P {
    fn line(&self) -> u32 {
        self.toks.get(self.pos).or(self.toks.last()).map(|t| t.1).unwrap_or(1)
    }

    fn err<T>(&self, m: impl Into<String>) -> R<T> {
        Err(ParseError { line: self.line(), message: m.into() })
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn next(&mut self) -> R<Tok> {
        match self.toks.get(self.pos) {
            Some((t, _)) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => self.err("unexpected end of input"),
        }
    }

    fn expect_p(&mut self, c: char) -> R<()> {
        match self.next()? {
            Tok::P(d) if d == c => Ok(()),
            t => self.err(format!("expected `{c}`, found {t:?}")),
        }
    }

    fn eat_p(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::P(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> R<String> {
        match self.next()? {
            Tok::Word(w) => Ok(w),
            t => self.err(format!("expected a word, found {t:?}")),
        }
    }

    fn expect_word(&mut self, w: &str) -> R<()> {
        let got = self.word()?;
        if got == w { Ok(()) } else { self.err(format!("expected `{w}`, found `{got}`")) }
    }

    fn at_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }

    fn int(&mut self) -> R<i128> {
        match self.next()? {
            Tok::Int(v) => Ok(v),
            t => self.err(format!("expected an integer, found {t:?}")),
        }
    }

    fn u64(&mut self) -> R<u64> {
        let v = self.int()?;
        u64::try_from(v).or_else(|_| self.err("expected a non-negative integer"))
    }

    /// A split barrier's id: `s3`.
    fn split_id(&mut self) -> R<u32> {
        let w = self.word()?;
        match w.strip_prefix('s').and_then(|n| n.parse::<u32>().ok()) {
            Some(id) => Ok(id),
            None => self.err(format!("expected a split barrier id like `s3`, found `{w}`")),
        }
    }

    fn reg(&mut self) -> R<Reg> {
        match self.next()? {
            Tok::Reg(n) => Ok(Reg(n)),
            t => self.err(format!("expected a register, found {t:?}")),
        }
    }

    fn string(&mut self) -> R<String> {
        match self.next()? {
            Tok::Str(s) => Ok(s),
            t => self.err(format!("expected a string, found {t:?}")),
        }
    }

    fn persp(&mut self) -> R<Persp> {
        let w = self.word()?;
        let level = match w.as_str() {
            "thread" => Level::Thread,
            "block" => Level::Block,
            "grid" => Level::Grid,
            _ => return self.err(format!("expected a perspective, found `{w}`")),
        };
        self.expect_p('[')?;
        let n = self.u64()?;
        self.expect_p(']')?;
        Ok(Persp { level, n })
    }

    fn scalar(&mut self) -> R<Scalar> {
        let w = self.word()?;
        scalar_from(&w).map_or_else(|| self.err(format!("unknown type `{w}`")), Ok)
    }

    fn ty(&mut self) -> R<Type> {
        let w = self.word()?;
        match w.as_str() {
            "ptr" => Ok(Type::Ptr),
            "tmap" => Ok(Type::Opaque),
            _ if w.starts_with("tmap.") => {
                tensor_map_from(&w).map_or_else(|| self.err(format!("bad tensor map type `{w}`")), Ok)
            }
            _ => scalar_from(&w).map(Type::Scalar).map_or_else(|| self.err(format!("unknown type `{w}`")), Ok),
        }
    }
}

/// `tmap.bf16.64x64.sw128`, as `print::type_name` writes it.
fn tensor_map_from(w: &str) -> Option<Type> {
    let mut parts = w.split('.');
    let (_, elem, dims, sw) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let dims: Vec<u32> = dims.split('x').map(|d| d.parse().ok()).collect::<Option<_>>()?;
    if parts.next().is_some() || !(2..=3).contains(&dims.len()) {
        return None;
    }
    let mut boxd = [1; 3];
    boxd[..dims.len()].copy_from_slice(&dims);
    Some(Type::TensorMap(prism_types::ty::TensorMapTy {
        elem: scalar_from(elem)?,
        rank: dims.len() as u8,
        boxd,
        swizzle: sw.strip_prefix("sw")?.parse().ok()?,
    }))
}

fn scalar_from(w: &str) -> Option<Scalar> {
    Some(match w {
        "bool" => Scalar::Bool,
        "i32" => Scalar::I32,
        "u32" => Scalar::U32,
        "i64" => Scalar::I64,
        "u64" => Scalar::U64,
        "f16" => Scalar::F16,
        "bf16" => Scalar::BF16,
        "f32" => Scalar::F32,
        "f64" => Scalar::F64,
        _ => return None,
    })
}

fn binop_from(w: &str) -> Option<BinOp> {
    Some(match w {
        "add" => BinOp::Add,
        "sub" => BinOp::Sub,
        "mul" => BinOp::Mul,
        "div" => BinOp::Div,
        "rem" => BinOp::Rem,
        "band" => BinOp::BitAnd,
        "bor" => BinOp::BitOr,
        "bxor" => BinOp::BitXor,
        "shl" => BinOp::Shl,
        "shr" => BinOp::Shr,
        "eq" => BinOp::Eq,
        "ne" => BinOp::Ne,
        "lt" => BinOp::Lt,
        "le" => BinOp::Le,
        "gt" => BinOp::Gt,
        "ge" => BinOp::Ge,
        _ => return None,
    })
}

/// Parses a whole program.
pub fn parse(src: &str) -> Result<Program, ParseError> {
    let toks = tokenize(src)?;
    // Function names first, so calls may refer to functions defined later.
    let mut fn_ids = HashMap::new();
    let mut n = 0;
    for w in toks.windows(2) {
        if let (Tok::Word(k), Tok::Func(name)) = (&w[0].0, &w[1].0)
            && (k == "kernel" || k == "device")
        {
            fn_ids.insert(name.clone(), FuncId(n));
            n += 1;
        }
    }
    let mut p = P { toks, pos: 0, fn_ids, regs: Vec::new() };
    let mut functions = Vec::new();
    while p.peek().is_some() {
        functions.push(p.function()?);
    }
    let mut p = Program { functions };
    p.number_blocks();
    Ok(p)
}

impl P {
    fn function(&mut self) -> R<Function> {
        let kind = match self.word()?.as_str() {
            "kernel" => FnKind::Kernel,
            "device" => FnKind::Device,
            w => return self.err(format!("expected `kernel` or `device`, found `{w}`")),
        };
        let name = match self.next()? {
            Tok::Func(n) => n,
            t => return self.err(format!("expected a function name, found {t:?}")),
        };
        self.expect_p('(')?;
        let mut params = Vec::new();
        while !self.eat_p(')') {
            params.push(self.reg()?);
            self.eat_p(',');
        }
        self.expect_word("entry")?;
        let entry = self.persp()?;
        self.expect_word("facts")?;
        let t_mult = self.u64()?;
        let b_mult = self.u64()?;
        self.expect_word("smem")?;
        let smem_size = self.u64()?;
        let mut launch_bounds = None;
        if self.at_word("launch_bounds") {
            self.pos += 1;
            launch_bounds = Some(self.u64()?);
        }
        let mut block_shape = None;
        if self.at_word("block_shape") {
            self.pos += 1;
            let mut d = [0u32; 3];
            for v in &mut d {
                let n = self.u64()?;
                *v = match u32::try_from(n) {
                    Ok(n) => n,
                    Err(_) => return self.err(format!("block extent {n} is more than 2^32 - 1")),
                };
            }
            block_shape = Some(Dim3 { x: d[0], y: d[1], z: d[2] });
        }
        let mut dyn_smem = None;
        if self.at_word("dyn_smem") {
            self.pos += 1;
            let count = self.u64()? as usize;
            let elem = self.scalar()?;
            let offset = self.u64()?;
            dyn_smem = Some(DynSmem { count, elem, offset });
        }
        let mut min_blocks = None;
        if self.at_word("min_blocks") {
            self.pos += 1;
            min_blocks = Some(self.u64()?);
        }
        let mut max_blocks = None;
        if self.at_word("max_blocks") {
            self.pos += 1;
            max_blocks = Some(self.u64()?);
        }
        let mut ret = None;
        if self.peek() == Some(&Tok::Arrow) {
            self.pos += 1;
            ret = Some(self.ty()?);
        }
        self.expect_p('{')?;
        let mut f = Function {
            name,
            kind,
            entry,
            facts: Facts { t_mult, b_mult },
            smem_size,
            launch_bounds,
            block_shape,
            dyn_smem,
            min_blocks,
            max_blocks,
            params,
            ret,
            regs: Vec::new(),
            locals: Vec::new(),
            mems: Vec::new(),
            accesses: Vec::new(),
            body: Block::default(),
            span: Span::default(),
        };
        loop {
            let w = self.word()?;
            match w.as_str() {
                "reg" => {
                    let r = self.reg()?;
                    self.expect_p(':')?;
                    let ty = self.ty()?;
                    let name = if let Some(Tok::Str(_)) = self.peek() { Some(self.string()?) } else { None };
                    if r.index() != f.regs.len() {
                        return self.err(format!("registers must be declared in order; expected %{}", f.regs.len()));
                    }
                    f.regs.push(RegInfo { ty, name });
                }
                "local" => {
                    let l = match self.next()? {
                        Tok::Local(n) => n,
                        t => return self.err(format!("expected a local, found {t:?}")),
                    };
                    if l as usize != f.locals.len() {
                        return self.err("locals must be declared in order");
                    }
                    self.expect_p(':')?;
                    let elem = self.scalar()?;
                    self.expect_p('[')?;
                    let len = self.u64()?;
                    self.expect_p(']')?;
                    let name = self.string()?;
                    f.locals.push(LocalInfo { elem, len, name });
                }
                "mem" => {
                    let m = match self.next()? {
                        Tok::Mem(n) => n,
                        t => return self.err(format!("expected a memory name, found {t:?}")),
                    };
                    if m as usize != f.mems.len() {
                        return self.err("memory names must be declared in order");
                    }
                    let kind = match self.word()?.as_str() {
                        "param" => MemKind::Param,
                        "shared" => MemKind::Shared,
                        "local" => MemKind::Local,
                        "partition" => MemKind::Partition,
                        "claim" => MemKind::Claim,
                        "async" => MemKind::Async,
                        "pipeline" => MemKind::Pipeline,
                        "stage" => MemKind::Stage,
                        w => return self.err(format!("unknown memory kind `{w}`")),
                    };
                    let name = self.string()?;
                    let persp = self.persp()?;
                    let elem = self.scalar()?;
                    let parent = if self.at_word("of") {
                        self.pos += 1;
                        match self.next()? {
                            Tok::Mem(n) => Some(MemId(n)),
                            t => return self.err(format!("expected a memory name, found {t:?}")),
                        }
                    } else {
                        None
                    };
                    f.mems.push(MemInfo { name, kind, persp, parent, elem, span: Span::default() });
                }
                "access" => {
                    let a = match self.next()? {
                        Tok::Acc(n) => n,
                        t => return self.err(format!("expected an access, found {t:?}")),
                    };
                    if a as usize != f.accesses.len() {
                        return self.err("accesses must be declared in order");
                    }
                    let kind = match self.word()?.as_str() {
                        "read" => AccessKind::Read,
                        "write" => AccessKind::Write,
                        "atomic" => AccessKind::Atomic,
                        "async" => AccessKind::AsyncWrite,
                        "volatile" => AccessKind::Volatile,
                        w => return self.err(format!("unknown access kind `{w}`")),
                    };
                    let mem = match self.next()? {
                        Tok::Mem(n) => MemId(n),
                        t => return self.err(format!("expected a memory name, found {t:?}")),
                    };
                    let mut view_index = None;
                    if self.at_word("index") {
                        self.pos += 1;
                        view_index = Some(self.reg()?);
                    }
                    f.accesses.push(AccessInfo { mem, kind, span: Span::default(), view_index });
                }
                "body" => {
                    self.regs = f.regs.iter().map(|r| r.ty).collect();
                    f.body = self.block()?;
                    self.expect_p('}')?;
                    return Ok(f);
                }
                w => return self.err(format!("unexpected `{w}` in a function header")),
            }
        }
    }

    /// Parses `{ inst* }`.
    fn block(&mut self) -> R<Block> {
        self.expect_p('{')?;
        let mut b = Block::default();
        while !self.eat_p('}') {
            b.insts.push(Inst { kind: self.inst()?, span: Span::default() });
        }
        Ok(b)
    }

    fn mem(&mut self) -> R<MemId> {
        match self.next()? {
            Tok::Mem(n) => Ok(MemId(n)),
            t => self.err(format!("expected a memory name, found {t:?}")),
        }
    }

    fn acc(&mut self) -> R<AccessId> {
        match self.next()? {
            Tok::Acc(n) => Ok(AccessId(n)),
            t => self.err(format!("expected an access, found {t:?}")),
        }
    }

    fn accs(&mut self) -> R<Vec<AccessId>> {
        let mut out = Vec::new();
        while let Some(Tok::Acc(_)) = self.peek() {
            out.push(self.acc()?);
        }
        Ok(out)
    }

    fn local(&mut self) -> R<LocalId> {
        match self.next()? {
            Tok::Local(n) => Ok(LocalId(n)),
            t => self.err(format!("expected a local array, found {t:?}")),
        }
    }

    fn indexed(&mut self) -> R<(Reg, Reg)> {
        let p = self.reg()?;
        self.expect_p('[')?;
        let i = self.reg()?;
        self.expect_p(']')?;
        Ok((p, i))
    }

    fn konst(&mut self, ty: Type) -> R<ConstValue> {
        let t = self.next()?;
        let v = match (t, ty) {
            (Tok::Word(w), _) if w == "true" => ConstValue::Bool(true),
            (Tok::Word(w), _) if w == "false" => ConstValue::Bool(false),
            (Tok::Word(w), _) if w == "nan" => ConstValue::Float(f64::NAN),
            // A NaN with other bits than the host's (`print::const_text`).
            (Tok::Word(w), _) if w.starts_with("nan_0x") => {
                let hex = &w["nan_0x".len()..];
                match u64::from_str_radix(hex, 16).ok().map(f64::from_bits).filter(|x| x.is_nan() && hex.len() == 16) {
                    Some(x) => ConstValue::Float(x),
                    None => return self.err(format!("`{w}` is not a NaN's sixteen hex digits")),
                }
            }
            (Tok::Word(w), _) if w == "inf" => ConstValue::Float(f64::INFINITY),
            (Tok::Int(v), Type::Scalar(s)) if s.is_float() => ConstValue::Float(v as f64),
            (Tok::Int(v), _) => ConstValue::Int(v),
            (Tok::Float(v), _) => ConstValue::Float(v),
            (t, _) => return self.err(format!("expected a constant, found {t:?}")),
        };
        Ok(v)
    }

    fn inst(&mut self) -> R<InstKind> {
        // Instructions with results start with registers and `=`.
        if let Some(Tok::Reg(_)) = self.peek() {
            let mut dsts = vec![self.reg()?];
            while self.eat_p(',') {
                dsts.push(self.reg()?);
            }
            self.expect_p('=')?;
            return self.valued(dsts);
        }
        let w = self.word()?;
        Ok(match w.as_str() {
            "store" => {
                let (ptr, index) = self.indexed()?;
                self.expect_p(',')?;
                let value = self.reg()?;
                let access = self.acc()?;
                InstKind::Store { ptr, index, value, access }
            }
            "storevec" => {
                let (ptr, index) = self.indexed()?;
                let mut values = Vec::new();
                while self.eat_p(',') {
                    values.push(self.reg()?);
                }
                let access = self.acc()?;
                InstKind::StoreVec { ptr, index, values, access }
            }
            "decl" => InstKind::LocalDecl { local: self.local()? },
            "lstore" => {
                let local = self.local()?;
                self.expect_p('[')?;
                let index = self.reg()?;
                self.expect_p(']')?;
                self.expect_p(',')?;
                let value = self.reg()?;
                InstKind::LocalStore { local, index, value }
            }
            "call" => self.call(None)?,
            "intrinsic" => self.intrinsic(Vec::new())?,
            "barrier" => {
                let scope = self.persp()?;
                match self.word()?.as_str() {
                    "explicit" => InstKind::Barrier { scope, origin: BarrierOrigin::Explicit },
                    "inferred" => {
                        let mem = self.mem()?;
                        InstKind::Barrier {
                            scope,
                            origin: BarrierOrigin::Inferred { mem, before: Span::default(), after: Span::default() },
                        }
                    }
                    w => return self.err(format!("expected `explicit` or `inferred`, found `{w}`")),
                }
            }
            w @ ("assert.uniform"
            | "assert.uniform.exit"
            | "assert.uniform.break"
            | "assert.uniform.continue"
            | "assert.uniform.returned"
            | "assert.uniform.arg"
            | "assert.uniform.result"
            | "assert.uniform.operand") => {
                let reg = self.reg()?;
                let persp = self.persp()?;
                let what = self.checked(&w["assert.uniform".len()..])?;
                InstKind::AssertUniform { reg, persp, what }
            }
            w @ ("assert.uniform.local"
            | "assert.uniform.local.exit"
            | "assert.uniform.local.arg"
            | "assert.uniform.local.operand") => {
                let local = self.local()?;
                let persp = self.persp()?;
                let what = self.checked(&w["assert.uniform.local".len()..])?;
                InstKind::AssertUniformLocal { local, persp, what }
            }
            "arrive" => {
                let scope = self.persp()?;
                let id = self.split_id()?;
                let origin = match self.word()?.as_str() {
                    "explicit" => BarrierOrigin::Explicit,
                    "inferred" => {
                        let mem = self.mem()?;
                        BarrierOrigin::Inferred { mem, before: Span::default(), after: Span::default() }
                    }
                    w => return self.err(format!("expected `explicit` or `inferred`, found `{w}`")),
                };
                InstKind::BarrierArrive { scope, id, origin }
            }
            "wait" => {
                let scope = self.persp()?;
                let id = self.split_id()?;
                InstKind::BarrierWait { scope, id }
            }
            "if" | "if.any" => {
                let cond = self.reg()?;
                let then = self.block()?;
                let otherwise = if self.at_word("else") {
                    self.pos += 1;
                    self.block()?
                } else {
                    Block::default()
                };
                InstKind::If { cond, then, otherwise, uniform: w == "if" }
            }
            "loop" => {
                let counter = if self.at_word("counter") {
                    self.pos += 1;
                    Some(self.reg()?)
                } else {
                    None
                };
                let unroll = if self.at_word("unroll") {
                    self.pos += 1;
                    if self.at_word("full") {
                        self.pos += 1;
                        Unroll::Full
                    } else {
                        let n = self.int()?;
                        match u32::try_from(n) {
                            Ok(n) if n >= 1 => Unroll::Count(n),
                            _ => return self.err(format!("unroll count {n} out of range")),
                        }
                    }
                } else {
                    Unroll::Auto
                };
                let header = self.block()?;
                self.expect_word("while")?;
                let cond = self.reg()?;
                let body = self.block()?;
                self.expect_word("latch")?;
                let latch = self.block()?;
                InstKind::Loop { header, cond, body, latch, counter, unroll }
            }
            "break" => InstKind::Break,
            "asynccommit" => InstKind::AsyncCommit,
            "asyncwait" => {
                let Ok(pending) = u32::try_from(self.int()?) else {
                    return self.err("a wait's pending count is a u32");
                };
                let mut views = Vec::new();
                while let Some(Tok::Mem(_)) = self.peek() {
                    views.push(self.mem()?);
                }
                InstKind::AsyncWait { pending, views }
            }
            "continue" => InstKind::Continue,
            "return" => {
                let value = if let Some(Tok::Reg(_)) = self.peek() { Some(self.reg()?) } else { None };
                InstKind::Return { value }
            }
            "group" => {
                let persp = self.persp()?;
                InstKind::Group { persp, body: self.block()? }
            }
            "split" => {
                let unit = self.persp()?;
                self.expect_p('{')?;
                let mut cases = Vec::new();
                while !self.eat_p('}') {
                    self.expect_word("case")?;
                    let offset = self.u64()?;
                    let count = self.u64()?;
                    let persp = self.persp()?;
                    let body = self.block()?;
                    cases.push(Case { offset, count, persp, body });
                }
                InstKind::Split { unit, cases }
            }
            "scope" => {
                let kind = match self.word()?.as_str() {
                    "partition" => ScopeKind::Partition,
                    "claim" => ScopeKind::Claim,
                    "async" => ScopeKind::Async,
                    "pipeline" => ScopeKind::Pipeline,
                    "stage" => ScopeKind::Stage,
                    "stage_late" => ScopeKind::LateStage,
                    w => return self.err(format!("unknown scope kind `{w}`")),
                };
                let mem = self.mem()?;
                match self.next()? {
                    Tok::Arrow => {}
                    t => return self.err(format!("expected `->`, found {t:?}")),
                }
                let view = self.mem()?;
                InstKind::Scope { kind, mem, view, body: self.block()? }
            }
            "unsafe" => InstKind::Unsafe { body: self.block()? },
            "verbatim" => {
                let text = self.string()?;
                let sim = if self.peek() == Some(&Tok::P('{')) { Some(self.block()?) } else { None };
                InstKind::Verbatim { text, sim }
            }
            w => return self.err(format!("unknown instruction `{w}`")),
        })
    }

    /// What a uniformity assertion checks, from its name's suffix (`.arg`, `.result` and
    /// `.operand` go on with the call they are about: `@f 1`, `@f`, `wgmma_bf16 1`).
    fn checked(&mut self, suffix: &str) -> R<Checked> {
        Ok(match suffix {
            "" => Checked::Variable,
            ".exit" => Checked::Exit,
            ".break" => Checked::Break,
            ".continue" => Checked::Continue,
            ".returned" => Checked::Returned,
            ".arg" => {
                let func = self.func_ref()?;
                let index = self.u64()?;
                let Ok(index) = u32::try_from(index) else { return self.err("argument index out of range") };
                Checked::Argument { func, index }
            }
            ".result" => Checked::Result { func: self.func_ref()? },
            ".operand" => {
                let name = self.word()?;
                let Some(intrinsic) = intrinsics::lookup(&name) else {
                    return self.err(format!("unknown intrinsic `{name}`"));
                };
                let index = self.u64()?;
                let Ok(index) = u32::try_from(index) else { return self.err("operand index out of range") };
                Checked::Operand { intrinsic, index }
            }
            _ => return self.err(format!("unknown assertion suffix `{suffix}`")),
        })
    }

    /// A function named by `@name`.
    fn func_ref(&mut self) -> R<FuncId> {
        let name = match self.next()? {
            Tok::Func(n) => n,
            t => return self.err(format!("expected a function, found {t:?}")),
        };
        match self.fn_ids.get(&name) {
            Some(&func) => Ok(func),
            None => self.err(format!("unknown function @{name}")),
        }
    }

    fn call(&mut self, dst: Option<Reg>) -> R<InstKind> {
        let func = self.func_ref()?;
        self.expect_p('(')?;
        let mut args = Vec::new();
        while !self.eat_p(')') {
            args.push(self.reg()?);
            self.eat_p(',');
        }
        self.expect_word("smem")?;
        let smem_offset = self.u64()?;
        let accesses = self.accs()?;
        Ok(InstKind::Call { dst, func, args, smem_offset, accesses })
    }

    fn intrinsic(&mut self, dsts: Vec<Reg>) -> R<InstKind> {
        let name = self.word()?;
        let Some(intrinsic) = intrinsics::lookup(&name) else { return self.err(format!("unknown intrinsic `{name}`")) };
        self.expect_p('(')?;
        let mut args = Vec::new();
        while !self.eat_p(')') {
            let r = self.reg()?;
            if self.eat_p('[') {
                let index = self.reg()?;
                self.expect_p(']')?;
                args.push(IntrArg::Elem { ptr: r, index });
            } else {
                args.push(IntrArg::Val(r));
            }
            self.eat_p(',');
        }
        let accesses = self.accs()?;
        Ok(InstKind::Intrinsic { dsts, intrinsic, args, accesses })
    }

    fn valued(&mut self, dsts: Vec<Reg>) -> R<InstKind> {
        let w = self.word()?;
        let dst = dsts[0];
        if w == "intrinsic" {
            return self.intrinsic(dsts);
        }
        if w == "loadvec" {
            let (ptr, index) = self.indexed()?;
            let access = self.acc()?;
            return Ok(InstKind::LoadVec { dsts, ptr, index, access });
        }
        if dsts.len() != 1 {
            return self.err("only intrinsics and loadvec define several registers");
        }
        if let Some(op) = binop_from(&w) {
            let lhs = self.reg()?;
            self.expect_p(',')?;
            let rhs = self.reg()?;
            return Ok(InstKind::Binary { dst, op, lhs, rhs });
        }
        Ok(match w.as_str() {
            "const" => {
                let ty = self.regs.get(dst.index()).copied().unwrap_or(Type::Scalar(Scalar::I32));
                InstKind::Const { dst, value: self.konst(ty)? }
            }
            "copy" => InstKind::Copy { dst, src: self.reg()? },
            "neg" => InstKind::Unary { dst, op: UnOp::Neg, arg: self.reg()? },
            "bnot" => InstKind::Unary { dst, op: UnOp::BitNot, arg: self.reg()? },
            "not" => InstKind::Unary { dst, op: UnOp::Not, arg: self.reg()? },
            "select" => {
                let cond = self.reg()?;
                self.expect_p(',')?;
                let then = self.reg()?;
                self.expect_p(',')?;
                let otherwise = self.reg()?;
                InstKind::Select { dst, cond, then, otherwise }
            }
            "cast" => InstKind::Cast { dst, arg: self.reg()? },
            "relid" => {
                let target = self.persp()?;
                self.expect_word("in")?;
                let code = self.persp()?;
                InstKind::RelId { dst, code, target }
            }
            "raw" => {
                let index = match self.word()?.as_str() {
                    "thread_idx" => RawIndex::ThreadIdx,
                    "block_idx" => RawIndex::BlockIdx,
                    "block_dim" => RawIndex::BlockDim,
                    "grid_dim" => RawIndex::GridDim,
                    "thread_x" => RawIndex::ThreadCoord(0),
                    "thread_y" => RawIndex::ThreadCoord(1),
                    "thread_z" => RawIndex::ThreadCoord(2),
                    "block_x" => RawIndex::BlockCoord(0),
                    "block_y" => RawIndex::BlockCoord(1),
                    "block_z" => RawIndex::BlockCoord(2),
                    "block_dim_x" => RawIndex::BlockExtent(0),
                    "block_dim_y" => RawIndex::BlockExtent(1),
                    "block_dim_z" => RawIndex::BlockExtent(2),
                    "grid_dim_x" => RawIndex::GridExtent(0),
                    "grid_dim_y" => RawIndex::GridExtent(1),
                    "grid_dim_z" => RawIndex::GridExtent(2),
                    w => return self.err(format!("unknown raw index `{w}`")),
                };
                InstKind::Raw { dst, index }
            }
            "shared" => {
                let offset = self.u64()?;
                let len = self.u64()?;
                let elem = self.scalar()?;
                InstKind::SharedAddr { dst, offset, len, elem }
            }
            "localaddr" => InstKind::LocalAddr { dst, local: self.local()? },
            "ptradd" => {
                let base = self.reg()?;
                self.expect_p(',')?;
                let offset = self.reg()?;
                let bound = if self.at_word("slot") {
                    self.pos += 1;
                    Some((self.u64()?, self.scalar()?))
                } else {
                    None
                };
                InstKind::PtrOffset { dst, base, offset, bound }
            }
            "load" => {
                let (ptr, index) = self.indexed()?;
                let access = self.acc()?;
                InstKind::Load { dst, ptr, index, access }
            }
            "lload" => {
                let local = self.local()?;
                self.expect_p('[')?;
                let index = self.reg()?;
                self.expect_p(']')?;
                InstKind::LocalLoad { dst, local, index }
            }
            "call" => self.call(Some(dst))?,
            w => return self.err(format!("unknown instruction `{w}`")),
        })
    }
}

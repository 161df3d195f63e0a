//! A small C++ syntax tree and its deterministic printer.
//!
//! The backend builds this tree and prints it with fixed rules (four-space indentation, one
//! statement per line, parentheses only where C++ precedence needs them or where mixing
//! bitwise operators would read ambiguously), so generated files are byte-stable and can be
//! snapshotted. No external formatter runs.

use std::fmt::Write;

/// A translation unit: top-level items in order.
#[derive(Clone, Debug, Default)]
pub struct Unit {
    /// The items.
    pub items: Vec<Item>,
}

/// A top-level item.
#[derive(Clone, Debug)]
pub enum Item {
    /// Text printed as is (includes, the helper prelude).
    Raw(String),
    /// `// text` lines.
    Comment(String),
    /// An empty line.
    Blank,
    /// A function definition or prototype.
    Func(Func),
}

/// A function.
#[derive(Clone, Debug)]
pub struct Func {
    /// Everything before the name: `extern "C" __global__ void __launch_bounds__(128)`.
    pub head: String,
    /// The name.
    pub name: String,
    /// Parameters: type and name.
    pub params: Vec<(String, String)>,
    /// The body; `None` prints a prototype.
    pub body: Option<Vec<Stmt>>,
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `quals ty name[dims] = init;`
    Decl {
        /// Qualifiers before the type (`const`, `__shared__ __align__(16)`), or empty.
        quals: String,
        /// The type.
        ty: String,
        /// The name.
        name: String,
        /// Array dimensions.
        dims: Vec<u64>,
        /// The initialiser.
        init: Option<Init>,
    },
    /// `e;`
    Expr(Expr),
    /// `lhs = rhs;` (or `lhs op= rhs;` when `op` is given).
    Assign {
        /// Target.
        lhs: Expr,
        /// Compound operator, e.g. `+`.
        op: Option<&'static str>,
        /// Value.
        rhs: Expr,
    },
    /// `if (cond) { then } else { otherwise }`; an `else` holding one `if` prints as `else if`.
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then: Vec<Stmt>,
        /// Else branch (may be empty).
        otherwise: Vec<Stmt>,
    },
    /// `for (init; cond; step) { body }`.
    For {
        /// Initialiser (a declaration or assignment), if any.
        init: Option<Box<Stmt>>,
        /// Condition, if any.
        cond: Option<Expr>,
        /// Step (an assignment statement printed without `;`), if any.
        step: Option<Box<Stmt>>,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `while (cond) { body }`.
    While {
        /// Condition.
        cond: Expr,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `{ body }`, with an optional comment on the opening line.
    Block {
        /// A comment after `{`.
        note: Option<String>,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return [e];`
    Return(Option<Expr>),
    /// `label:;`
    Label(String),
    /// `goto label;`
    Goto(String),
    /// `// text`
    Comment(String),
    /// Verbatim text: one line is indented like a statement; several lines print as is.
    Raw(String),
    /// `asm volatile("..." : outputs : inputs : clobbers);`
    Asm(Asm),
    /// A statement with a trailing `// note` on its first line.
    Noted(Box<Stmt>, String),
}

/// An initialiser.
#[derive(Clone, Debug)]
pub enum Init {
    /// `= e`
    Expr(Expr),
    /// `= {}` (zero for arrays and scalars).
    Zero,
}

/// An inline-assembly statement.
#[derive(Clone, Debug, Default)]
pub struct Asm {
    /// `volatile`.
    pub volatile: bool,
    /// Template lines, concatenated (each printed as its own string literal).
    pub lines: Vec<String>,
    /// Outputs: constraint and lvalue.
    pub outputs: Vec<(String, Expr)>,
    /// Inputs: constraint and value.
    pub inputs: Vec<(String, Expr)>,
    /// Clobbers (`"memory"`).
    pub clobbers: Vec<String>,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An identifier or a literal.
    Id(String),
    /// `f(args)`.
    Call(String, Vec<Expr>),
    /// `a op b`.
    Bin(&'static str, Box<Expr>, Box<Expr>),
    /// `op a` (prefix).
    Un(&'static str, Box<Expr>),
    /// `(ty)a`.
    Cast(String, Box<Expr>),
    /// `a[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `&a`.
    AddrOf(Box<Expr>),
}

impl Expr {
    /// An identifier or literal.
    pub fn id(s: impl Into<String>) -> Expr {
        Expr::Id(s.into())
    }

    /// `a op b`.
    pub fn bin(op: &'static str, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    /// `f(args)`.
    pub fn call(f: impl Into<String>, args: Vec<Expr>) -> Expr {
        Expr::Call(f.into(), args)
    }

    /// `(ty)a`.
    pub fn cast(ty: impl Into<String>, a: Expr) -> Expr {
        Expr::Cast(ty.into(), Box::new(a))
    }

    /// `a[i]`.
    pub fn index(a: Expr, i: Expr) -> Expr {
        Expr::Index(Box::new(a), Box::new(i))
    }

    fn prec(&self) -> u8 {
        match self {
            Expr::Id(s) if s.starts_with('-') => 3,
            Expr::Id(_) => 0,
            Expr::Call(..) | Expr::Index(..) => 2,
            Expr::Un(..) | Expr::Cast(..) | Expr::AddrOf(..) => 3,
            Expr::Bin(op, ..) => bin_prec(op),
            Expr::Cond(..) => 16,
        }
    }
}

fn bin_prec(op: &str) -> u8 {
    match op {
        "*" | "/" | "%" => 5,
        "+" | "-" => 6,
        "<<" | ">>" => 7,
        "<" | "<=" | ">" | ">=" => 9,
        "==" | "!=" => 10,
        "&" => 11,
        "^" => 12,
        "|" => 13,
        "&&" => 14,
        "||" => 15,
        _ => 16,
    }
}

fn is_bitwise(op: &str) -> bool {
    matches!(op, "&" | "^" | "|" | "<<" | ">>")
}

/// Prints an expression.
pub fn expr(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e);
    s
}

fn write_expr(s: &mut String, e: &Expr) {
    match e {
        Expr::Id(x) => s.push_str(x),
        Expr::Call(f, args) => {
            s.push_str(f);
            s.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_expr(s, a);
            }
            s.push(')');
        }
        Expr::Bin(op, a, b) => {
            let p = bin_prec(op);
            // Parenthesise looser children, a right child of equal precedence (left
            // associativity), and any other binary operator under a bitwise one.
            let wrap_l = a.prec() > p || (is_bitwise(op) && matches!(&**a, Expr::Bin(o, ..) if o != op));
            let wrap_r = b.prec() >= p || (is_bitwise(op) && matches!(&**b, Expr::Bin(..)));
            paren(s, a, wrap_l);
            let _ = write!(s, " {op} ");
            paren(s, b, wrap_r);
        }
        Expr::Un(op, a) => {
            s.push_str(op);
            // `- -x` must not print as `--x`.
            let wrap =
                a.prec() > 3 || matches!(&**a, Expr::Un(..)) || matches!(&**a, Expr::Id(x) if x.starts_with('-'));
            paren(s, a, wrap);
        }
        Expr::Cast(ty, a) => {
            let _ = write!(s, "({ty})");
            paren(s, a, a.prec() > 3);
        }
        Expr::AddrOf(a) => {
            s.push('&');
            paren(s, a, a.prec() > 2);
        }
        Expr::Index(a, i) => {
            paren(s, a, a.prec() > 2);
            s.push('[');
            write_expr(s, i);
            s.push(']');
        }
        Expr::Cond(c, a, b) => {
            paren(s, c, c.prec() >= 15);
            s.push_str(" ? ");
            paren(s, a, a.prec() >= 16);
            s.push_str(" : ");
            paren(s, b, b.prec() > 16);
        }
    }
}

fn paren(s: &mut String, e: &Expr, wrap: bool) {
    if wrap {
        s.push('(');
    }
    write_expr(s, e);
    if wrap {
        s.push(')');
    }
}

/// Prints a translation unit.
pub fn print(unit: &Unit) -> String {
    let mut p = Printer::default();
    for item in &unit.items {
        match item {
            Item::Raw(t) => {
                p.out.push_str(t);
                if !t.ends_with('\n') {
                    p.out.push('\n');
                }
            }
            Item::Comment(t) => {
                for l in t.lines() {
                    p.line(format!("// {l}").trim_end());
                }
            }
            Item::Blank => p.out.push('\n'),
            Item::Func(f) => p.func(f),
        }
    }
    p.out
}

#[derive(Default)]
struct Printer {
    out: String,
    depth: usize,
}

impl Printer {
    /// One line at the current depth. A line ending in a backslash would continue onto the
    /// next one (C++ splices lines before it removes comments), so a comment copied from the
    /// source that ends in `\` would swallow the statement after it: review R72 found a
    /// written `__syncthreads()` gone from the CUDA that way, a race the simulator (which
    /// has no such rule) never showed. No statement the backend prints ends in a
    /// backslash, so any line that does is a comment's, and gets a `~` after it.
    fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        if text.ends_with('\\') {
            self.out.push('~');
        }
        self.out.push('\n');
    }

    fn func(&mut self, f: &Func) {
        let params: Vec<String> = f.params.iter().map(|(t, n)| format!("{t} {n}")).collect();
        let head = format!("{} {}(", f.head, f.name);
        let one_line = format!("{head}{})", params.join(", "));
        let sig = if one_line.len() <= 110 || params.len() < 2 {
            one_line
        } else {
            let pad = " ".repeat(head.len());
            let mut s = head.clone();
            for (i, p) in params.iter().enumerate() {
                if i > 0 {
                    s.push_str(",\n");
                    s.push_str(&pad);
                }
                s.push_str(p);
            }
            s.push(')');
            s
        };
        match &f.body {
            None => self.line(&format!("{sig};")),
            Some(body) => {
                for l in sig.lines() {
                    self.line(l);
                }
                self.line("{");
                self.depth += 1;
                self.stmts(body);
                self.depth -= 1;
                self.line("}");
            }
        }
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s, None);
        }
    }

    fn stmt(&mut self, s: &Stmt, note: Option<&str>) {
        let tail = |t: String| match note {
            Some(n) => format!("{t}  // {n}"),
            None => t,
        };
        match s {
            Stmt::Decl { .. } | Stmt::Expr(_) | Stmt::Assign { .. } => {
                let t = simple(s);
                self.line(&tail(format!("{t};")));
            }
            Stmt::If { cond, then, otherwise } => {
                self.line(&tail(format!("if ({}) {{", expr(cond))));
                self.block_body(then);
                let mut rest = otherwise;
                loop {
                    if rest.is_empty() {
                        self.line("}");
                        break;
                    }
                    if let [Stmt::If { cond, then, otherwise }] = rest.as_slice() {
                        self.line(&format!("}} else if ({}) {{", expr(cond)));
                        self.block_body(then);
                        rest = otherwise;
                        continue;
                    }
                    self.line("} else {");
                    self.block_body(rest);
                    self.line("}");
                    break;
                }
            }
            Stmt::For { init, cond, step, body } => {
                let i = init.as_ref().map(|s| simple(s)).unwrap_or_default();
                let c = cond.as_ref().map(expr).unwrap_or_default();
                let st = step.as_ref().map(|s| simple(s)).unwrap_or_default();
                let head = if i.is_empty() && c.is_empty() && st.is_empty() {
                    "for (;;)".to_string()
                } else {
                    format!("for ({i}; {c}; {st})")
                };
                self.line(&tail(format!("{head} {{")));
                self.block_body(body);
                self.line("}");
            }
            Stmt::While { cond, body } => {
                self.line(&tail(format!("while ({}) {{", expr(cond))));
                self.block_body(body);
                self.line("}");
            }
            Stmt::Block { note: n, body } => {
                let n = n.as_deref().or(note);
                self.line(&match n {
                    Some(n) => format!("{{  // {n}"),
                    None => "{".to_string(),
                });
                self.block_body(body);
                self.line("}");
            }
            Stmt::Break => self.line(&tail("break;".into())),
            Stmt::Continue => self.line(&tail("continue;".into())),
            Stmt::Return(e) => self.line(&tail(match e {
                Some(e) => format!("return {};", expr(e)),
                None => "return;".into(),
            })),
            Stmt::Label(l) => {
                self.depth = self.depth.saturating_sub(1);
                self.line(&format!("{l}:;"));
                self.depth += 1;
            }
            Stmt::Goto(l) => self.line(&tail(format!("goto {l};"))),
            Stmt::Comment(t) => {
                for l in t.lines() {
                    self.line(format!("// {l}").trim_end());
                }
            }
            Stmt::Raw(t) => {
                if t.trim_end().contains('\n') {
                    for l in t.trim_end().lines() {
                        self.out.push_str(l);
                        self.out.push('\n');
                    }
                } else {
                    self.line(&tail(t.trim().to_string()));
                }
            }
            Stmt::Asm(a) => self.asm(a, note),
            Stmt::Noted(s, n) => self.stmt(s, Some(n)),
        }
    }

    fn block_body(&mut self, body: &[Stmt]) {
        self.depth += 1;
        self.stmts(body);
        self.depth -= 1;
    }

    fn asm(&mut self, a: &Asm, note: Option<&str>) {
        let kw = if a.volatile { "asm volatile(" } else { "asm(" };
        let ops = |v: &[(String, Expr)]| -> String {
            v.iter().map(|(c, e)| format!("\"{c}\"({})", expr(e))).collect::<Vec<_>>().join(", ")
        };
        let clob = a.clobbers.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
        let mut sections = vec![ops(&a.outputs), ops(&a.inputs)];
        if !clob.is_empty() {
            sections.push(clob);
        }
        while sections.last().is_some_and(|s| s.is_empty()) {
            sections.pop();
        }
        // Template lines are C string contents already (`\\n` is an escape, `%0` an operand).
        let strs: Vec<String> = a.lines.iter().map(|l| format!("\"{l}\"")).collect();
        let one = format!("{kw}{}{});", strs.join(" "), sections.iter().map(|s| format!(" : {s}")).collect::<String>());
        if a.lines.len() <= 1 && one.len() <= 100 {
            let one = match note {
                Some(n) => format!("{one}  // {n}"),
                None => one,
            };
            self.line(&one);
            return;
        }
        let first = match note {
            Some(n) => format!("{kw}  // {n}"),
            None => kw.to_string(),
        };
        self.line(&first);
        self.depth += 1;
        for s in &strs {
            self.line(s);
        }
        let n = sections.len();
        for (i, sec) in sections.iter().enumerate() {
            let end = if i + 1 == n { ");" } else { "" };
            self.line(format!(": {sec}{end}").replace(":  ", ": ").trim_end());
        }
        if n == 0 {
            self.line(");");
        }
        self.depth -= 1;
    }
}

/// A declaration, expression or assignment without the `;`.
fn simple(s: &Stmt) -> String {
    match s {
        Stmt::Decl { quals, ty, name, dims, init } => {
            let mut t = String::new();
            if !quals.is_empty() {
                t.push_str(quals);
                t.push(' ');
            }
            let _ = write!(t, "{ty} {name}");
            for d in dims {
                let _ = write!(t, "[{d}]");
            }
            match init {
                Some(Init::Expr(e)) => {
                    let _ = write!(t, " = {}", expr(e));
                }
                Some(Init::Zero) => t.push_str(" = {}"),
                None => {}
            }
            t
        }
        Stmt::Expr(e) => expr(e),
        Stmt::Assign { lhs, op, rhs } => match op {
            Some(op) => format!("{} {op}= {}", expr(lhs), expr(rhs)),
            None => format!("{} = {}", expr(lhs), expr(rhs)),
        },
        Stmt::Noted(s, _) => simple(s),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Expr {
        Expr::id(s)
    }

    #[test]
    fn precedence_and_associativity() {
        let e = Expr::bin("*", Expr::bin("+", id("a"), id("b")), id("c"));
        assert_eq!(expr(&e), "(a + b) * c");
        let e = Expr::bin("-", id("a"), Expr::bin("-", id("b"), id("c")));
        assert_eq!(expr(&e), "a - (b - c)");
        let e = Expr::bin("-", Expr::bin("-", id("a"), id("b")), id("c"));
        assert_eq!(expr(&e), "a - b - c");
        let e = Expr::bin("&", Expr::bin("+", id("a"), id("b")), id("c"));
        assert_eq!(expr(&e), "(a + b) & c");
        let e = Expr::Un("-", Box::new(Expr::Un("-", Box::new(id("x")))));
        assert_eq!(expr(&e), "-(-x)");
        let e = Expr::index(Expr::bin("+", id("p"), id("o")), id("i"));
        assert_eq!(expr(&e), "(p + o)[i]");
        let e = Expr::cast("int", Expr::bin("/", id("a"), id("b")));
        assert_eq!(expr(&e), "(int)(a / b)");
    }

    #[test]
    fn statements_print_deterministically() {
        let f = Func {
            head: "__global__ void".into(),
            name: "k".into(),
            params: vec![("float*".into(), "a".into())],
            body: Some(vec![
                Stmt::Decl {
                    quals: String::new(),
                    ty: "float".into(),
                    name: "A".into(),
                    dims: vec![4],
                    init: Some(Init::Zero),
                },
                Stmt::If {
                    cond: Expr::bin("<", id("x"), id("32")),
                    then: vec![Stmt::Noted(Box::new(Stmt::Break), "line 3".into())],
                    otherwise: vec![Stmt::If { cond: id("y"), then: vec![Stmt::Continue], otherwise: vec![] }],
                },
            ]),
        };
        let text = print(&Unit { items: vec![Item::Func(f)] });
        assert_eq!(
            text,
            "__global__ void k(float* a)\n{\n    float A[4] = {};\n    if (x < 32) {\n        break;  // line 3\n    } else if (y) {\n        continue;\n    }\n}\n"
        );
    }
}

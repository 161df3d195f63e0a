//! The prelude's integer helpers compute what the simulator defines, on the values an
//! attacker would pick: the most negative value divided by -1 (which traps in C), `% -1`,
//! wrapping `+ - *` and negation, for `int` and `int64`. The helper lines are taken from
//! `prism_cuda::prelude::PRELUDE` as printed, compiled for the host with g++ (`PRISM_DEV`
//! made plain `inline`; the helpers are pure C++), run, and compared with
//! `prism_interp::ops::bin` on every pair of the test values. nvcc needs g++ anyway, so the
//! test follows the same tool policy as the nvcc test.

mod common;

use prism_interp::ops;
use prism_types::tir::BinOp;
use prism_types::ty::Scalar;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const OPS: [(&str, BinOp); 5] =
    [("add", BinOp::Add), ("sub", BinOp::Sub), ("mul", BinOp::Mul), ("div", BinOp::Div), ("rem", BinOp::Rem)];

fn main() {
    let gxx = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("g++"))
        .find(|p| p.is_file());
    common::run_with_tools("integer_helpers_match_the_simulator", gxx, "g++", |gxx| check(&gxx))
}

fn check(gxx: &Path) -> Result<(), String> {
    let helpers: String = prism_cuda::prelude::PRELUDE
        .lines()
        .filter(|l| {
            ["add", "sub", "mul", "neg", "div", "rem"].iter().any(|n| {
                l.starts_with(&format!("PRISM_DEV int prism_{n}("))
                    || l.starts_with(&format!("PRISM_DEV long long prism_{n}("))
            })
        })
        .map(|l| format!("{l}\n"))
        .collect();
    if helpers.lines().count() != 12 {
        return Err(format!("expected 12 helper lines (6 operations, int and int64), found:\n{helpers}"));
    }
    let i32s: [i64; 9] = [i32::MIN.into(), -7, -2, -1, 1, 2, 3, 7, i32::MAX.into()];
    let i64s: [i64; 9] = [i64::MIN, -7, -2, -1, 1, 2, 3, 7, i64::MAX];
    // The values are read at run time from volatile arrays: with constants, g++ would fold
    // the calls and hide the trap of a division it considers undefined.
    let list = |v: &[i64; 9]| v.iter().map(|x| format!("{x}LL")).collect::<Vec<_>>().join(", ");
    let mut src = format!(
        "#include <cstdio>\n#define PRISM_DEV inline\n{helpers}static volatile long long V32[] = {{{}}};\nstatic volatile long long V64[] = {{{}}};\nint main() {{\n",
        list(&i32s),
        list(&i64s)
    );
    let mut want = String::new();
    for (ty, vals, cty, arr) in [(Scalar::I32, &i32s, "int", "V32"), (Scalar::I64, &i64s, "long long", "V64")] {
        let _ = writeln!(
            src,
            "    for (int i = 0; i < 9; ++i) {{\n        {cty} a = ({cty}){arr}[i];\n        printf(\"%lld\\n\", (long long)prism_neg(a));\n        for (int j = 0; j < 9; ++j) {{\n            {cty} b = ({cty}){arr}[j];"
        );
        for (name, _) in OPS {
            let _ = writeln!(src, "            printf(\"%lld\\n\", (long long)prism_{name}(a, b));");
        }
        src.push_str("        }\n    }\n");
        for &a in vals.iter() {
            let _ = writeln!(want, "{}", as_signed(ty, ops::un(prism_types::tir::UnOp::Neg, ty, bits(ty, a))));
            for &b in vals.iter() {
                for (_, op) in OPS {
                    let got =
                        ops::bin(op, ty, bits(ty, a), bits(ty, b), ty).ok_or("the simulator refused a division")?;
                    let _ = writeln!(want, "{}", as_signed(ty, got));
                }
            }
        }
    }
    src.push_str("    return 0;\n}\n");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("helpers");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (cpp, exe) = (dir.join("helpers.cpp"), dir.join("helpers"));
    std::fs::write(&cpp, &src).map_err(|e| e.to_string())?;
    // -O2 so the compiler's assumptions about signed overflow are in play, as in nvcc.
    let out =
        Command::new(gxx).args(["-O2", "-std=c++17", "-o"]).arg(&exe).arg(&cpp).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("g++ failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
    let got = String::from_utf8_lossy(&run.stdout);
    if !run.status.success() {
        return Err(format!("the helpers crashed ({}) after {} results", run.status, got.lines().count()));
    }
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if g != w {
            return Err(format!("result {i}: the helper gives {g}, the simulator {w} (see {})", cpp.display()));
        }
    }
    if got.lines().count() != want.lines().count() {
        return Err(format!("{} results, expected {}", got.lines().count(), want.lines().count()));
    }
    Ok(())
}

fn bits(ty: Scalar, v: i64) -> u64 {
    // The simulator keeps `int` registers sign-extended (`value::norm`).
    if ty == Scalar::I32 { v as i32 as i64 as u64 } else { v as u64 }
}

fn as_signed(ty: Scalar, b: u64) -> i64 {
    if ty == Scalar::I32 { b as u32 as i32 as i64 } else { b as i64 }
}

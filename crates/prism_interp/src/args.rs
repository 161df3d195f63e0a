//! Launch arguments written as text, as `prism run --arg NAME=VALUE` takes them.
//!
//! - A scalar parameter takes a literal: `42`, `-3`, `0x1F`, `1.5`, `1e-3`, `inf`, `nan`,
//!   `true`, `false`. Integer literals also fit float parameters; a float literal for an
//!   integer parameter, or a value out of the parameter's range (`1e39` for a `float`, which
//!   would round to an infinity), is an error.
//! - A pointer parameter takes `zeros:DTYPE:N`, `iota:DTYPE:N` (0, 1, 2, ...),
//!   `rand:DTYPE:N[:SEED]`, or a path to a `.npy` file. `N` may be a shape such as `64x32`
//!   (it sets the shape written by `--out`). `rand` draws floats uniformly from [-1, 1), signed
//!   integers from [-100, 100), unsigned ones from [0, 100) and bools fairly, from a fixed
//!   generator seeded with `SEED` (default 0), so runs are reproducible. DTYPE is numpy's
//!   name: `f32`, `f64`, `i32`, `u32`, `i64`, `u64`, `f16`, `bf16`, `bool`; it must be the
//!   parameter's element type.
//! - A tensor-map parameter (`tensor_map(T[r][c])`) takes the same sources; the shape is
//!   the array's, outermost first (`rand:bf16:256x128` is 256 rows of 128), or the `.npy`
//!   header's, and must have as many dimensions as the map's box.
//!
//! Parsing is pure; reading a `.npy` path is left to the caller through [`Source::Npy`].

use crate::memory::Buffer;
use crate::value::{from_f64, norm};
use crate::{Arg, Param, ParamKind};
use prism_types::ty::Scalar;

/// A pointer argument's contents before the file is read.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// Generated data.
    Gen {
        /// `zeros`, `iota` or `rand`.
        kind: GenKind,
        /// Element type.
        elem: Scalar,
        /// Shape (the product is the length).
        shape: Vec<usize>,
        /// Seed for `rand`.
        seed: u64,
    },
    /// A `.npy` file to read.
    Npy(String),
}

/// How generated data is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenKind {
    /// All zero.
    Zeros,
    /// 0, 1, 2, ...
    Iota,
    /// Pseudo-random.
    Rand,
}

/// The numpy-style name of a type (`f32`, `i32`, ...): the IR's names are numpy's.
pub use prism_ir::print::scalar_name as dtype_name;

fn dtype(name: &str) -> Option<Scalar> {
    Some(match name {
        "f32" | "float32" => Scalar::F32,
        "f64" | "float64" => Scalar::F64,
        "i32" | "int32" => Scalar::I32,
        "u32" | "uint32" => Scalar::U32,
        "i64" | "int64" => Scalar::I64,
        "u64" | "uint64" => Scalar::U64,
        "f16" | "float16" => Scalar::F16,
        "bf16" | "bfloat16" => Scalar::BF16,
        "bool" | "b1" => Scalar::Bool,
        _ => return None,
    })
}

/// The most elements a generated buffer may have (1 GiB of doubles).
pub const MAX_ELEMS: usize = 1 << 27;

/// Parses a pointer argument.
pub fn parse_source(text: &str) -> Result<Source, String> {
    let mut parts = text.split(':');
    let head = parts.next().unwrap_or("");
    let kind = match head {
        "zeros" => GenKind::Zeros,
        "iota" => GenKind::Iota,
        "rand" => GenKind::Rand,
        _ => return Ok(Source::Npy(text.to_string())),
    };
    let usage = || format!("`{text}`: expected `{head}:DTYPE:N` (e.g. `{head}:f32:1024`)");
    let elem_text = parts.next().ok_or_else(usage)?;
    let elem = dtype(elem_text).ok_or_else(|| {
        format!("`{text}`: unknown element type `{elem_text}` (f32, f64, i32, u32, i64, u64, f16, bf16, bool)")
    })?;
    let shape_text = parts.next().ok_or_else(usage)?;
    let shape: Vec<usize> = shape_text
        .split('x')
        .map(|d| {
            d.parse::<usize>().map_err(|_| format!("`{text}`: `{shape_text}` is not a size like `1024` or `64x32`"))
        })
        .collect::<Result<_, _>>()?;
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).filter(|&n| n <= MAX_ELEMS);
    if count.is_none() {
        return Err(format!("`{text}`: more than {MAX_ELEMS} elements"));
    }
    let seed = match (kind, parts.next()) {
        (_, None) => 0,
        (GenKind::Rand, Some(s)) => s.parse().map_err(|_| format!("`{text}`: the seed `{s}` is not a number"))?,
        (_, Some(_)) => return Err(usage()),
    };
    if parts.next().is_some() {
        return Err(usage());
    }
    Ok(Source::Gen { kind, elem, shape, seed })
}

/// Makes generated data.
pub fn generate(kind: GenKind, elem: Scalar, len: usize, seed: u64) -> Buffer {
    let mut rng = crate::sim::Rng::new(seed ^ 0x5EED);
    let bits: Vec<u64> = (0..len)
        .map(|i| match kind {
            GenKind::Zeros => 0,
            GenKind::Iota if elem.is_float() => from_f64(elem, i as f64),
            GenKind::Iota if elem == Scalar::Bool => (i % 2) as u64,
            GenKind::Iota => norm(elem, i as u64),
            GenKind::Rand => {
                let r = rng.next_u64();
                if elem.is_float() {
                    from_f64(elem, (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
                } else if elem == Scalar::Bool {
                    r >> 63
                } else if elem.is_signed_int() {
                    norm(elem, ((r % 200) as i64 - 100) as u64)
                } else {
                    r % 100
                }
            }
        })
        .collect();
    Buffer::from_bits(elem, &bits)
}

/// Parses a scalar literal for a parameter of type `ty`.
pub fn parse_scalar(text: &str, ty: Scalar) -> Result<Arg, String> {
    let t = text.trim();
    if ty == Scalar::Bool {
        return match t {
            "true" | "1" => Ok(Arg::Scalar(ty, 1)),
            "false" | "0" => Ok(Arg::Scalar(ty, 0)),
            _ => Err(format!("`{text}` is not a bool (true or false)")),
        };
    }
    let int = parse_int(t);
    if ty.is_float() {
        let x = match int {
            Some(i) => i as f64,
            None => match t {
                "inf" | "+inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                _ => t.parse::<f64>().map_err(|_| format!("`{text}` is not a number"))?,
            },
        };
        // A literal too large for the type is refused as in the source (`const-eval`) and
        // as an integer that does not fit is, rather than becoming an infinity; `inf` is
        // how to ask for one. Rust reads `1e400` as an infinity, so that is checked too.
        let bits = from_f64(ty, x);
        let spelled_infinite = !t.bytes().any(|c| c.is_ascii_digit());
        if !spelled_infinite && crate::value::to_f64(ty, bits).is_infinite() {
            return Err(format!(
                "`{t}` does not fit in `{}` (its finite values lie within ±{}; write `inf` for an infinity)",
                ty.name(),
                prism_types::consts::float_max_text(ty)
            ));
        }
        return Ok(Arg::Scalar(ty, bits));
    }
    let Some(i) = int else {
        return Err(if t.parse::<f64>().is_ok() {
            format!("`{text}` is not an integer, but the parameter is `{}`", ty.name())
        } else {
            format!("`{text}` is not a number")
        });
    };
    let bits = ty.size() * 8;
    let (lo, hi) =
        if ty.is_signed_int() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    if !(lo..=hi).contains(&i) {
        return Err(format!("{i} does not fit in `{}` ({lo}..={hi})", ty.name()));
    }
    Ok(Arg::Scalar(ty, norm(ty, i as u64)))
}

fn parse_int(t: &str) -> Option<i128> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let body = body.replace('_', "");
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) {
        body.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// Builds the argument for parameter `p` from its text, as `prism run --arg` takes it,
/// with the buffer's shape (empty for scalars). `read` reads a `.npy` file's bytes (the
/// caller does the IO). Errors are complete sentences naming the parameter.
pub fn build(
    p: &Param,
    value: &str,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(Arg, Vec<usize>), String> {
    match &p.kind {
        ParamKind::Scalar(t) => {
            let arg = parse_scalar(value, *t).map_err(|e| format!("argument `{}`: {e}", p.name))?;
            Ok((arg, Vec::new()))
        }
        ParamKind::Pointer(_) | ParamKind::Opaque | ParamKind::TensorMap(_) => {
            let source = parse_source(value).map_err(|e| format!("argument `{}`: {e}", p.name))?;
            let (buffer, shape) = match source {
                Source::Gen { kind, elem, shape, seed } => (generate(kind, elem, shape.iter().product(), seed), shape),
                Source::Npy(path) => {
                    let bytes = read(&path).map_err(|e| format!("argument `{}`: {e}", p.name))?;
                    let arr = crate::npy::parse(&bytes).map_err(|e| format!("argument `{}`: `{path}`: {e}", p.name))?;
                    (arr.buffer, arr.shape)
                }
            };
            check_buffer(&p.name, &p.kind, &buffer, value)?;
            if let ParamKind::TensorMap(m) = &p.kind {
                // The map describes the array with the shape it was given (`64x32`, or
                // the `.npy` header's).
                let dims: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
                m.check_dims(&dims).map_err(|e| format!("argument `{}`: `{value}` {e}", p.name))?;
                return Ok((Arg::Tensor { buffer, dims }, shape));
            }
            Ok((Arg::Buffer(buffer), shape))
        }
    }
}

/// Checks that generated or loaded data fits a pointer parameter.
pub fn check_buffer(param: &str, kind: &ParamKind, buffer: &Buffer, what: &str) -> Result<(), String> {
    match kind {
        ParamKind::Pointer(t) if *t == buffer.elem => Ok(()),
        ParamKind::Pointer(t) => Err(format!(
            "`{param}` points to `{}` ({}), but {what} holds {}",
            t.name(),
            dtype_name(*t),
            dtype_name(buffer.elem)
        )),
        ParamKind::Scalar(t) => Err(format!("`{param}` is a `{}` scalar, not a pointer", t.name())),
        ParamKind::TensorMap(m) if m.elem == buffer.elem => Ok(()),
        ParamKind::TensorMap(m) => Err(format!(
            "`{param}` is a tensor map of `{}` ({}), but {what} holds {}",
            m.elem.name(),
            dtype_name(m.elem),
            dtype_name(buffer.elem)
        )),
        ParamKind::Opaque => Err(format!(
            "`{param}` is an untyped `CUTensorMap`, which the simulator cannot build; declare it `tensor_map(T[rows][cols])`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_out_of_range_are_refused() {
        for (text, ty) in
            [("1e39", Scalar::F32), ("-1e39", Scalar::F32), ("1e400", Scalar::F64), ("70000", Scalar::F16)]
        {
            let e = parse_scalar(text, ty).map(|_| ()).unwrap_err();
            assert!(e.contains("does not fit in") && e.contains(ty.name()), "{text}: {e}");
        }
        // The largest finite values, values that round down to them, underflow to zero and
        // infinities asked for by name are fine.
        for (text, ty) in [
            ("3.4028235e38", Scalar::F32),
            ("3.40282356e38", Scalar::F32),
            ("1e-50", Scalar::F32),
            ("1e308", Scalar::F64),
            ("65504", Scalar::F16),
            ("inf", Scalar::F32),
            ("-infinity", Scalar::F64),
            ("nan", Scalar::F32),
        ] {
            assert!(parse_scalar(text, ty).is_ok(), "{text}");
        }
    }

    #[test]
    fn scalars() {
        assert!(matches!(parse_scalar("42", Scalar::I32), Ok(Arg::Scalar(Scalar::I32, 42))));
        assert!(matches!(parse_scalar("-1", Scalar::I32), Ok(Arg::Scalar(_, b)) if b as i64 == -1));
        assert!(matches!(parse_scalar("0x10", Scalar::U32), Ok(Arg::Scalar(_, 16))));
        assert!(parse_scalar("1.5", Scalar::I32).unwrap_err().contains("not an integer"));
        assert!(parse_scalar("4294967296", Scalar::U32).unwrap_err().contains("does not fit"));
        assert!(parse_scalar("-1", Scalar::U32).is_err());
        assert!(matches!(parse_scalar("2", Scalar::F32), Ok(Arg::Scalar(_, b)) if f32::from_bits(b as u32) == 2.0));
        assert!(matches!(parse_scalar("true", Scalar::Bool), Ok(Arg::Scalar(_, 1))));
        assert!(parse_scalar("abc", Scalar::F32).is_err());
    }

    #[test]
    fn sources() {
        assert_eq!(
            parse_source("zeros:f32:64x32"),
            Ok(Source::Gen { kind: GenKind::Zeros, elem: Scalar::F32, shape: vec![64, 32], seed: 0 })
        );
        assert_eq!(parse_source("rand:i32:8:7").map(|s| matches!(s, Source::Gen { seed: 7, .. })), Ok(true));
        assert_eq!(parse_source("data/x.npy"), Ok(Source::Npy("data/x.npy".into())));
        assert!(parse_source("iota:f33:8").unwrap_err().contains("unknown element type"));
        assert!(parse_source("iota:f32").is_err());
        assert!(parse_source("zeros:f32:8:3").is_err());
        assert!(parse_source("zeros:f32:99999999999999").is_err());
        let b = generate(GenKind::Iota, Scalar::I32, 4, 0);
        assert_eq!(b.to_vec::<i32>(), Some(vec![0, 1, 2, 3]));
        let r1 = generate(GenKind::Rand, Scalar::F32, 16, 3).to_vec::<f32>().expect("f32");
        let r2 = generate(GenKind::Rand, Scalar::F32, 16, 3).to_vec::<f32>().expect("f32");
        assert_eq!(r1, r2);
        assert!(r1.iter().all(|x| (-1.0..1.0).contains(x)));
    }
}

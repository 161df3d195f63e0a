//! NumPy `.npy` files as buffers: parsing and writing the bytes (the CLI does the IO).
//!
//! Versions 1.0, 2.0 and 3.0 of the format are read; 1.0 is written. Arrays are flattened in
//! C order (a Fortran-order array is rejected rather than silently transposed). Element
//! types map to Prism's by numpy's `descr`: `<f4` float, `<f8` double, `<i4` int, `<u4`
//! uint, `<i8` int64, `<u8` uint64, `<f2` half, `|b1` bool. NumPy has no bfloat16, so a
//! `bf16` buffer is read from and written as `<u2` (the raw bits).

use crate::memory::Buffer;
use prism_types::ty::Scalar;

/// A parsed `.npy` array.
#[derive(Debug)]
pub struct Array {
    /// The data.
    pub buffer: Buffer,
    /// The shape (flattened into the buffer in C order).
    pub shape: Vec<usize>,
    /// True when the file held raw bits (`<u2`) that may stand for `bf16`.
    pub raw_u16: bool,
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// The numpy `descr` of a Prism scalar type.
pub fn descr(s: Scalar) -> &'static str {
    match s {
        Scalar::F32 => "<f4",
        Scalar::F64 => "<f8",
        Scalar::I32 => "<i4",
        Scalar::U32 => "<u4",
        Scalar::I64 => "<i8",
        Scalar::U64 => "<u8",
        Scalar::F16 => "<f2",
        Scalar::BF16 => "<u2",
        Scalar::Bool => "|b1",
    }
}

/// Parses the bytes of a `.npy` file.
pub fn parse(bytes: &[u8]) -> Result<Array, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (the magic string `\\x93NUMPY` is missing)".into());
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let end = start.checked_add(header_len).filter(|&e| e <= bytes.len()).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| "the .npy header is not text")?;
    let descr = dict_value(header, "descr").ok_or("the .npy header has no `descr`")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let fortran = dict_value(header, "fortran_order").ok_or("the .npy header has no `fortran_order`")?;
    if fortran.trim() == "True" {
        return Err("Fortran-order arrays are not supported; save the array in C order".into());
    }
    let shape_text = dict_value(header, "shape").ok_or("the .npy header has no `shape`")?;
    let shape = parse_shape(shape_text)?;
    let (elem, raw_u16) = match descr {
        "<f4" => (Scalar::F32, false),
        "<f8" => (Scalar::F64, false),
        "<i4" => (Scalar::I32, false),
        "<u4" => (Scalar::U32, false),
        "<i8" => (Scalar::I64, false),
        "<u8" => (Scalar::U64, false),
        "<f2" => (Scalar::F16, false),
        "<u2" => (Scalar::BF16, true),
        "|b1" | "<b1" => (Scalar::Bool, false),
        d if d.starts_with('>') => return Err(format!("big-endian arrays (`{d}`) are not supported")),
        d => {
            return Err(format!(
                "unsupported element type `{d}` (use f32, f64, i32, u32, i64, u64, f16, bool or u16 for bf16)"
            ));
        }
    };
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or("the array is too large")?;
    let size = elem.size() as usize;
    let data = &bytes[end..];
    let need = count.checked_mul(size).ok_or("the array is too large")?;
    if data.len() != need {
        return Err(format!(
            "the file holds {} bytes of data, but shape {shape:?} of `{descr}` needs {need}",
            data.len()
        ));
    }
    let mut bits = Vec::with_capacity(count);
    for c in data.chunks_exact(size) {
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(c);
        let v = u64::from_le_bytes(b);
        if elem == Scalar::Bool && v > 1 {
            return Err(format!("a bool element has the value {v}"));
        }
        bits.push(crate::value::norm(elem, v));
    }
    Ok(Array { buffer: Buffer::from_bits(elem, &bits), shape, raw_u16 })
}

/// The bytes of a `.npy` file holding `buffer` with `shape` (whose product must be its length).
pub fn write(buffer: &Buffer, shape: &[usize]) -> Vec<u8> {
    let shape_text = match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}", descr(buffer.elem));
    // Pad so the data starts at a multiple of 64 bytes, ending the header with a newline.
    let total = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + buffer.len() * buffer.elem.size() as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    let size = buffer.elem.size() as usize;
    for v in buffer.to_bits() {
        out.extend_from_slice(&v.to_le_bytes()[..size]);
    }
    out
}

/// The text of `key`'s value in a Python dict literal (up to the next top-level comma).
fn dict_value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header.find(&format!("'{key}'")).or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = &header[at + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or("malformed `shape` in the .npy header")?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.trim_end_matches('L').parse::<usize>().map_err(|_| format!("malformed dimension `{p}` in the .npy shape"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let b = Buffer::from_slice(&[1.5f32, -2.0, 3.25]);
        let bytes = write(&b, &[3]);
        assert_eq!((10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64, 0);
        let a = parse(&bytes).expect("parses");
        assert_eq!(a.shape, vec![3]);
        assert_eq!(a.buffer.to_vec::<f32>(), Some(vec![1.5, -2.0, 3.25]));
        let m = Buffer::from_slice(&[1i32, 2, 3, 4, 5, 6]);
        let a = parse(&write(&m, &[2, 3])).expect("parses");
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.buffer.to_vec::<i32>(), Some(vec![1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn rejects_bad_files() {
        assert!(parse(b"hello").is_err());
        let mut bytes = write(&Buffer::from_slice(&[1u32, 2]), &[2]);
        bytes.pop();
        assert!(parse(&bytes).unwrap_err().contains("bytes of data"));
        let mut f = write(&Buffer::from_slice(&[1.0f64]), &[1]);
        let at = f.windows(5).position(|w| w == b"False").expect("header has fortran_order");
        f[at..at + 5].copy_from_slice(b"True ");
        assert!(parse(&f).unwrap_err().contains("Fortran"));
    }
}

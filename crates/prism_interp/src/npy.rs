//! NumPy `.npy` files as buffers: parsing and writing the bytes (the CLI does the IO).
//!
//! Versions 1.0, 2.0 and 3.0 of the format are read; 1.0 is written, or 2.0 when the
//! header is too long for 1.0's two-byte length (NumPy's rule). Arrays are flattened in
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
    // Version 1.0 gives the header's length in two bytes; 2.0 and 3.0 (for headers of 64 KiB
    // and more) in four. The minor version is always 0: anything else is a format this
    // reader does not know, as NumPy says too.
    let (major, minor) = (bytes[6], bytes[7]);
    let (header_len, start) = match (major, minor) {
        (1, 0) => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        (2 | 3, 0) => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        (v, m) => return Err(format!("unsupported .npy format version {v}.{m} (1.0, 2.0 and 3.0 are read)")),
    };
    let end = start.checked_add(header_len).filter(|&e| e <= bytes.len()).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| "the .npy header is not text")?;
    // A Python dict literal keeps the last of two equal keys, and `dict_value` reads the
    // first: a header that names a key twice is refused rather than read differently from
    // NumPy (review R64).
    for key in ["descr", "fortran_order", "shape"] {
        if header.matches(&format!("'{key}'")).count() + header.matches(&format!("\"{key}\"")).count() > 1 {
            return Err(format!("the .npy header names `{key}` twice"));
        }
    }
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

/// The bytes of a `.npy` file holding `buffer` with `shape` (whose product must be its
/// length). The version is NumPy's choice: 1.0 when the header's length fits its two bytes,
/// else 2.0 (four bytes); an error only when not even that fits (a shape of about a billion
/// dimensions).
pub fn write(buffer: &Buffer, shape: &[usize]) -> Result<Vec<u8>, String> {
    let shape_text = match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let dict = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}", descr(buffer.elem));
    // The header, padded so the data starts at a multiple of 64 bytes and ended with a
    // newline, after the magic string, two version bytes and a length of `len_size` bytes.
    let padded = |len_size: usize| {
        let total = MAGIC.len() + 2 + len_size + dict.len() + 1;
        format!("{dict}{}\n", " ".repeat(total.next_multiple_of(64) - total))
    };
    let (version, header) = match padded(2) {
        h if u16::try_from(h.len()).is_ok() => (1u8, h),
        _ => (2, padded(4)),
    };
    let Ok(header_len) = u32::try_from(header.len()) else {
        return Err(format!("a shape of {} dimensions does not fit in a .npy header", shape.len()));
    };
    let mut out = Vec::with_capacity(12 + header.len() + buffer.len() * buffer.elem.size() as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&header_len.to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    let size = buffer.elem.size() as usize;
    for v in buffer.to_bits() {
        out.extend_from_slice(&v.to_le_bytes()[..size]);
    }
    Ok(out)
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
        let bytes = write(&b, &[3]).expect("fits");
        assert_eq!(&bytes[6..8], &[1, 0], "a short header is version 1.0");
        assert_eq!((10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64, 0);
        let a = parse(&bytes).expect("parses");
        assert_eq!(a.shape, vec![3]);
        assert_eq!(a.buffer.to_vec::<f32>(), Some(vec![1.5, -2.0, 3.25]));
        let m = Buffer::from_slice(&[1i32, 2, 3, 4, 5, 6]);
        let a = parse(&write(&m, &[2, 3]).expect("fits")).expect("parses");
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.buffer.to_vec::<i32>(), Some(vec![1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn rejects_bad_files() {
        assert!(parse(b"hello").is_err());
        let mut bytes = write(&Buffer::from_slice(&[1u32, 2]), &[2]).expect("fits");
        bytes.pop();
        assert!(parse(&bytes).unwrap_err().contains("bytes of data"));
        let mut f = write(&Buffer::from_slice(&[1.0f64]), &[1]).expect("fits");
        let at = f.windows(5).position(|w| w == b"False").expect("header has fortran_order");
        f[at..at + 5].copy_from_slice(b"True ");
        assert!(parse(&f).unwrap_err().contains("Fortran"));
        // NumPy would read the second `descr`, a float; this reader the first.
        let dup = by_hand(1, "{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &[1.0]);
        assert_eq!(parse(&dup).unwrap_err(), "the .npy header names `descr` twice");
    }

    /// The bytes of a `.npy` file of format `version` with `header` (the dict, padded here
    /// as NumPy pads it) and the `f32` values `data`, laid out by hand from the format's
    /// specification rather than by [`write`].
    fn by_hand(version: u8, dict: &str, data: &[f32]) -> Vec<u8> {
        let len_size = if version == 1 { 2 } else { 4 };
        let total = 8 + len_size + dict.len() + 1;
        let header = format!("{dict}{}\n", " ".repeat(total.next_multiple_of(64) - total));
        let mut out = b"\x93NUMPY".to_vec();
        out.extend_from_slice(&[version, 0]);
        let len = (header.len() as u32).to_le_bytes();
        out.extend_from_slice(&len[..len_size]);
        out.extend_from_slice(header.as_bytes());
        data.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        out
    }

    #[test]
    fn reads_every_version_and_headers_past_64_kib() {
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
        for version in [1, 2, 3] {
            let a = parse(&by_hand(version, dict, &[1.5, -2.0, 3.25])).expect("parses");
            assert_eq!(a.buffer.to_vec::<f32>(), Some(vec![1.5, -2.0, 3.25]), "version {version}");
        }
        // A header of 70,000 bytes (whitespace in the dict) needs version 2.0's four-byte
        // length; its high bytes must not be dropped.
        let long = format!("{}{}}}", &dict[..dict.len() - 1], " ".repeat(70_000));
        let bytes = by_hand(2, &long, &[7.0, 8.0, 9.0]);
        assert!(u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) > 65_535);
        let a = parse(&bytes).expect("parses");
        assert_eq!(a.buffer.to_vec::<f32>(), Some(vec![7.0, 8.0, 9.0]));
        // Versions this reader does not know are named, not misread.
        let mut odd = by_hand(1, dict, &[1.0, 2.0, 3.0]);
        odd[7] = 1;
        assert!(parse(&odd).unwrap_err().contains("version 1.1"));
        odd[6..8].copy_from_slice(&[4, 0]);
        assert!(parse(&odd).unwrap_err().contains("version 4.0"));
        // Version 2.0's length needs twelve bytes before the header.
        assert!(parse(&by_hand(2, dict, &[])[..11]).unwrap_err().contains("truncated"));
    }

    #[test]
    fn a_header_too_long_for_version_1_is_written_as_version_2() {
        // 30,000 dimensions of 1 and one of 4: the shape alone is about 90,000 bytes.
        let mut shape = vec![1usize; 30_000];
        shape.push(4);
        let b = Buffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
        let bytes = write(&b, &shape).expect("fits version 2.0");
        assert_eq!(&bytes[6..8], &[2, 0]);
        let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        assert!(len > 65_535);
        assert_eq!((12 + len) % 64, 0, "the data is aligned");
        assert_eq!(bytes.len(), 12 + len + 16);
        let a = parse(&bytes).expect("parses");
        assert_eq!(a.shape, shape);
        assert_eq!(a.buffer.to_vec::<f32>(), Some(vec![1.0, 2.0, 3.0, 4.0]));
        // Headers just short of 64 KiB stay version 1.0, longer ones are 2.0, as NumPy
        // decides.
        let fits = |dims: usize| {
            let mut shape = vec![1usize; dims];
            shape.push(1);
            write(&Buffer::from_slice(&[0i32]), &shape).expect("fits")[6]
        };
        let versions: Vec<u8> = (21_700..21_900).map(fits).collect();
        assert_eq!(versions.first(), Some(&1));
        assert_eq!(versions.last(), Some(&2));
        assert!(versions.windows(2).all(|w| w[0] <= w[1]));
    }
}

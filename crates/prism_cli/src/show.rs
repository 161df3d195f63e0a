//! The text `prism run --print NAME` writes for a buffer.
//!
//! One-dimensional buffers print on one line, `NAME = [a, b, c]`, elided past 1000 elements.
//! A buffer with a two-dimensional shape (`--arg C=zeros:f32:16x16`, a 2-D `.npy`) prints as
//! a matrix under a header with its type and shape, one row per line and the columns
//! right-aligned to a common width; past 1000 elements it is summarised as NumPy does (its
//! default `threshold` and `edgeitems`): the first and last three rows and columns, with
//! `...` between.
//!
//! ```text
//! C: f32[16x16]
//! [[  0.0,   1.0, ...],
//!  [ 16.0,  17.0, ...]]
//! ```

use prism_interp::Buffer;

/// More elements than this are summarised (NumPy's `threshold`).
const THRESHOLD: usize = 1000;
/// Rows and columns kept at each end of a summarised axis (NumPy's `edgeitems`).
const EDGE: usize = 3;

/// The `--print` text of buffer `b` named `name` with shape `shape` (a trailing newline
/// included).
pub fn buffer(name: &str, b: &Buffer, shape: &[usize]) -> String {
    match *shape {
        [rows, cols] if rows.checked_mul(cols) == Some(b.len()) => {
            let dtype = prism_interp::args::dtype_name(b.elem);
            format!("{name}: {dtype}[{rows}x{cols}]\n{}\n", matrix(b, rows, cols))
        }
        _ => format!("{name} = {}\n", flat(b)),
    }
}

/// All elements on one line, elided past [`THRESHOLD`].
fn flat(b: &Buffer) -> String {
    let bits = b.to_bits();
    let text: Vec<String> = bits.iter().take(THRESHOLD).map(|&v| prism_interp::value::show(b.elem, v)).collect();
    let more = if bits.len() > THRESHOLD { format!(", ... ({} more)", bits.len() - THRESHOLD) } else { String::new() };
    format!("[{}{more}]", text.join(", "))
}

/// The indices of an axis of `n` to show, `None` where the middle is elided.
fn shown(n: usize, summarise: bool) -> Vec<Option<usize>> {
    if summarise && n > 2 * EDGE {
        (0..EDGE).map(Some).chain([None]).chain((n - EDGE..n).map(Some)).collect()
    } else {
        (0..n).map(Some).collect()
    }
}

/// The matrix `[[...],\n [...]]` of a `rows` x `cols` buffer in row-major order.
fn matrix(b: &Buffer, rows: usize, cols: usize) -> String {
    let bits = b.to_bits();
    let summarise = rows * cols > THRESHOLD;
    let (rs, cs) = (shown(rows, summarise), shown(cols, summarise));
    let cells: Vec<Option<Vec<Option<String>>>> = rs
        .iter()
        .map(|r| {
            r.map(|r| cs.iter().map(|c| c.map(|c| prism_interp::value::show(b.elem, bits[r * cols + c]))).collect())
        })
        .collect();
    let width = cells.iter().flatten().flatten().flatten().map(String::len).max().unwrap_or(0);
    let lines: Vec<String> = cells
        .iter()
        .map(|row| match row {
            None => "...".to_string(),
            Some(row) => {
                let items: Vec<String> =
                    row.iter().map(|c| c.as_ref().map_or("...".to_string(), |t| format!("{t:>width$}"))).collect();
                format!("[{}]", items.join(", "))
            }
        })
        .collect();
    format!("[{}]", lines.join(",\n "))
}

#[cfg(test)]
mod tests {
    use super::buffer;
    use prism_interp::Buffer;

    fn iota(n: usize) -> Buffer {
        Buffer::from_slice(&(0..n as i32).collect::<Vec<_>>())
    }

    #[test]
    fn one_dimension_is_one_line() {
        assert_eq!(buffer("y", &Buffer::from_slice(&[0.0f32, 1.5, -2.0]), &[3]), "y = [0.0, 1.5, -2.0]\n");
        let long = buffer("y", &iota(1002), &[1002]);
        assert!(long.starts_with("y = [0, 1, 2,") && long.ends_with(", 999, ... (2 more)]\n"), "{long}");
        // Three dimensions print flat, as before.
        assert_eq!(buffer("t", &iota(8), &[2, 2, 2]), "t = [0, 1, 2, 3, 4, 5, 6, 7]\n");
    }

    #[test]
    fn two_dimensions_are_an_aligned_matrix_under_its_shape() {
        let b = Buffer::from_slice(&[0.0f32, 1.0, 2.5, -10.0, 100.0, 5.0]);
        assert_eq!(buffer("C", &b, &[2, 3]), "C: f32[2x3]\n[[  0.0,   1.0,   2.5],\n [-10.0, 100.0,   5.0]]\n");
        assert_eq!(buffer("v", &iota(3), &[3, 1]), "v: i32[3x1]\n[[0],\n [1],\n [2]]\n");
        assert_eq!(buffer("e", &iota(0), &[0, 4]), "e: i32[0x4]\n[]\n");
    }

    #[test]
    fn large_matrices_are_summarised_like_numpy() {
        // 40 x 40 = 1600 elements: three rows and columns at each end.
        let text = buffer("M", &iota(1600), &[40, 40]);
        let want = "M: i32[40x40]\n\
                    [[   0,    1,    2, ...,   37,   38,   39],\n \
                    [  40,   41,   42, ...,   77,   78,   79],\n \
                    [  80,   81,   82, ...,  117,  118,  119],\n \
                    ...,\n \
                    [1480, 1481, 1482, ..., 1517, 1518, 1519],\n \
                    [1520, 1521, 1522, ..., 1557, 1558, 1559],\n \
                    [1560, 1561, 1562, ..., 1597, 1598, 1599]]\n";
        assert_eq!(text, want);
        // A long, thin matrix elides only the axis that is long.
        let text = buffer("T", &iota(2002), &[1001, 2]);
        assert!(text.starts_with("T: i32[1001x2]\n[[   0,    1],\n [   2,    3],\n [   4,    5],\n ...,\n"), "{text}");
        // At the threshold nothing is elided.
        assert!(!buffer("S", &iota(1000), &[10, 100]).contains("..."));
    }
}

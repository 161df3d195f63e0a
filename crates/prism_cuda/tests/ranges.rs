//! Signed arithmetic is printed with C's native operators only where value ranges prove it
//! cannot overflow (`prism_cuda::interval`); everywhere else it wraps through the
//! `prism_add`-style helpers. C's signed overflow is undefined, so a wrong range would be a
//! miscompile: these programs are the ones an adversary would write against the ranges.

mod common;

/// The CUDA of one kernel, without the prelude.
fn cuda(src: &str) -> String {
    let synced = common::synced("ranges.prism", src);
    let opts = prism_cuda::Options { prelude: false, ..prism_cuda::Options::default() };
    prism_cuda::emit(&synced, &opts).text
}

/// A kernel whose thread computes `expr` (an `int`, with `t` its thread index and `n` a
/// parameter) and stores it.
fn kernel(bounds: &str, body: &str) -> String {
    format!(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[1])
{bounds}
def k(n : int, out : ptr(int)):
    with partition(out, p=block[1], f=lambda i: i) as out_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(out_b, p=thread[1], f=lambda i: t + i) as out_t:
                with group(thread[1]):
{body}
"#
    )
}

fn line_of<'a>(text: &'a str, what: &str) -> &'a str {
    text.lines().find(|l| l.contains(what)).unwrap_or_else(|| panic!("no `{what}` in\n{text}"))
}

#[test]
fn thread_index_arithmetic_that_fits_is_native() {
    let text = cuda(&kernel("", "                    out_t[0] = t * 4 + 3"));
    assert!(line_of(&text, "out[").contains("t * 4 + 3"), "{text}");
}

#[test]
fn a_product_that_can_pass_the_limit_wraps() {
    // 1023 * 4194304 = 2^32 - 2^22 does not fit an `int`.
    let text = cuda(&kernel("", "                    out_t[0] = t * 4194304"));
    assert!(line_of(&text, "out[").contains("prism_mul(t, 4194304)"), "{text}");
}

#[test]
fn launch_bounds_narrow_the_thread_index() {
    // With at most 256 threads, 255 * 8388608 = 2^31 - 2^23 fits; with 1024 it would not.
    let narrow = cuda(&kernel("@launch_bounds(256)", "                    out_t[0] = t * 8388608"));
    assert!(line_of(&narrow, "out[").contains("t * 8388608"), "{narrow}");
    let wide = cuda(&kernel("", "                    out_t[0] = t * 8388608"));
    assert!(line_of(&wide, "out[").contains("prism_mul(t, 8388608)"), "{wide}");
}

#[test]
fn parameters_and_reassigned_variables_have_no_range() {
    let text = cuda(&kernel("", "                    out_t[0] = t + n"));
    assert!(line_of(&text, "out[").contains("prism_add(t, n)"), "{text}");
    // `x` is assigned twice: its value at the add is not the first assignment's.
    let text = cuda(&kernel(
        "",
        "                    x : int = 1\n                    if n > 0:\n                        x = n\n                    out_t[0] = x + 1",
    ));
    assert!(line_of(&text, "out[").contains("prism_add(x, 1)"), "{text}");
}

#[test]
fn a_counter_with_an_unknown_end_stays_a_step_below_the_limit() {
    // `k` runs below `n`, and its step after the last iteration fits (the language's rule),
    // so `k <= 2147483647 - 4`: `k + 3` fits, `k + 5` might not.
    let text = cuda(&kernel(
        "",
        "                    for k in range(0, n, 4):\n                        out_t[0] = k + 3\n                        out_t[0] = k + 5",
    ));
    assert!(text.contains("= k + 3;"), "{text}");
    assert!(text.contains("prism_add(k, 5)"), "{text}");
}

#[test]
fn a_counter_counting_down_stays_a_step_above_the_limit() {
    let text = cuda(&kernel(
        "",
        "                    for k in range(0, n, -4):\n                        out_t[0] = k - 3\n                        out_t[0] = k - 5",
    ));
    assert!(text.contains("= k - 3;"), "{text}");
    assert!(text.contains("prism_sub(k, 5)"), "{text}");
}

#[test]
fn a_counter_counting_down_from_anywhere_stays_above_its_end() {
    // From an unknown start down to -10: `k >= -9`, so `k - 5` fits, whatever `n` is.
    let text =
        cuda(&kernel("", "                    for k in range(n, -10, -4):\n                        out_t[0] = k - 5"));
    assert!(text.contains("= k - 5;"), "{text}");
}

#[test]
fn a_counter_that_may_start_anywhere_has_no_lower_bound() {
    // Starting at `n`, the counter may be as low as the smallest `int`: `k - 1` may wrap.
    let text =
        cuda(&kernel("", "                    for k in range(n, 100):\n                        out_t[0] = k - 1"));
    assert!(text.contains("prism_sub(k, 1)"), "{text}");
}

#[test]
fn verbatim_cuda_turns_every_range_off() {
    // The verbatim text may assign `x` behind the IR's back.
    let text = cuda(&kernel(
        "",
        "                    x : int = t\n                    unsafe(\"x = 2147483647;\")\n                    out_t[0] = x + 1",
    ));
    assert!(line_of(&text, "out[").contains("prism_add(x, 1)"), "{text}");
}

#[test]
fn device_functions_assume_any_block_size() {
    // A device function may be called from a kernel of up to 1024 threads, whatever its own
    // `@launch_bounds` says.
    let text = cuda(
        r#"
@prism("device")
@requires(block[1], thread[1])
def f() -> int @ thread[1]:
    t : int @ thread[1] = id()
    return t * 4194304

@prism("global")
@requires(grid[1], block[1], thread[1])
@launch_bounds(64)
def k(out : ptr(int)):
    with partition(out, p=block[1], f=lambda i: i) as out_b:
        with group(block[1]):
            v : int @ thread[1] = f()
            t : int @ thread[1] = id()
            with partition(out_b, p=thread[1], f=lambda i: t + i) as out_t:
                with group(thread[1]):
                    out_t[0] = v + t * 4194304
"#,
    );
    assert!(line_of(&text, "return").contains("prism_mul(t, 4194304)"), "{text}");
    // In the kernel, 63 * 4194304 fits.
    assert!(text.contains("t * 4194304"), "{text}");
}

/// A kernel reading `x[n * 8 + index]` of its pointer parameter `x` in a loop over `j` from
/// `start` to `start + 8`.
fn offsets(start: i32, index: &str) -> String {
    let end = start + 8;
    format!(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[1])
def k(n : int, x : ptr(const(int)), out : ptr(int)):
    with partition(out, p=block[1], f=lambda i: i) as out_b:
        with group(block[1]):
            t : int @ thread[1] = id()
            with partition(out_b, p=thread[1], f=lambda i: t + i) as out_t:
                with group(thread[1]):
                    s : int = 0
                    for j in range({start}, {end}):
                        s += x[n * 8 + {index}]
                    out_t[0] = s
"#
    )
}

#[test]
fn element_offsets_are_wide_only_where_a_wrapped_index_is_out_of_bounds() {
    // A non-negative loop counter added to a kernel's pointer parameter: 64-bit, so nvcc
    // folds it into the address; a wrapped sum would be negative, before the buffer.
    let text = cuda(&offsets(0, "j"));
    assert!(line_of(&text, "x[").contains("x[(long long)prism_mul(n, 8) + j]"), "{text}");
    // A counter that may be negative: the wrapped sum can land inside the buffer.
    let text = cuda(&offsets(-4, "j"));
    assert!(line_of(&text, "x[").contains("x[prism_add(prism_mul(n, 8), j)]"), "{text}");
    // Arithmetic on the counter, and a thread index, are not known to unroll into
    // constants: nothing to fold, and the 64-bit sum would cost.
    let text = cuda(&offsets(0, "(j + 4)"));
    assert!(line_of(&text, "x[").contains("x[prism_add(prism_mul(n, 8), j + 4)]"), "{text}");
    let text = cuda(&offsets(0, "t"));
    assert!(line_of(&text, "x[").contains("x[prism_add(prism_mul(n, 8), t)]"), "{text}");
    // A device function's pointer may point into the middle of a buffer.
    let text = cuda(
        r#"
@prism("device")
@requires(thread[1])
def get(n : int, x : ptr(const(int))) -> int @ thread[1]:
    s : int = 0
    for j in range(4):
        s += x[n * 8 + j]
    return s
"#,
    );
    assert!(line_of(&text, "x[").contains("x[prism_add(prism_mul(n, 8), j)]"), "{text}");
}

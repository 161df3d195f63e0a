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

#[test]
fn a_branch_knows_its_test_but_only_the_side_it_tested() {
    // Inside `if n >= 0: if n < 1000:` the product fits; under `n < 1000` alone `n` may be
    // the smallest `int`, and `n * 1000` wraps.
    let both = cuda(&kernel(
        "",
        "                    if n >= 0:\n                        if n < 1000:\n                            out_t[0] = n * 1000",
    ));
    assert!(line_of(&both, "out[").contains("n * 1000"), "{both}");
    let one = cuda(&kernel("", "                    if n < 1000:\n                        out_t[0] = n * 1000"));
    assert!(line_of(&one, "out[").contains("prism_mul(n, 1000)"), "{one}");
    // The `else` branch knows the opposite: `n >= 1000` may be the largest `int`.
    let other = cuda(&kernel(
        "",
        "                    if n < 1000:\n                        out_t[0] = 0\n                    else:\n                        out_t[0] = n + 1",
    ));
    assert!(other.contains("prism_add(n, 1)"), "{other}");
}

#[test]
fn a_counter_tested_from_below_may_still_reach_the_limit() {
    // `k > 10` bounds the counter from below only; near its end `k * 2` overflows.
    let text = cuda(&kernel(
        "",
        "                    for k in range(0, n):\n                        if k > 10:\n                            out_t[0] = k * 2",
    ));
    assert!(text.contains("prism_mul(k, 2)"), "{text}");
    let small = cuda(&kernel(
        "",
        "                    for k in range(0, n):\n                        if k < 10:\n                            out_t[0] = k * 100000000",
    ));
    assert!(small.contains("k * 100000000"), "{small}");
}

#[test]
fn a_guard_on_a_variable_assigned_in_the_branch_is_no_guard() {
    // `m` is reassigned inside the branch (and has no range of its own): after that, the
    // test says nothing about it.
    let text = cuda(&kernel(
        "",
        "                    m : int = n\n                    if m < 10:\n                        m = n\n                        out_t[0] = m * 1000",
    ));
    assert!(line_of(&text, "out[").contains("prism_mul(m, 1000)"), "{text}");
}

#[test]
fn remainders_of_differences_are_unsigned_only_when_not_negative() {
    // `k - 3` with `k >= 3` tested: not negative, `%` on unsigned values (a mask).
    let guarded = cuda(&kernel(
        "",
        "                    for k in range(0, n):\n                        if k >= 3:\n                            d : int = k - 3\n                            out_t[0] = d % 4",
    ));
    assert!(guarded.contains("(int)((unsigned)d % 4u)"), "{guarded}");
    // Without the test `d` may be -3: C's signed `%` (the simulator's).
    let plain = cuda(&kernel(
        "",
        "                    for k in range(0, n):\n                        d : int = k - 3\n                        out_t[0] = d % 4",
    ));
    assert!(plain.contains("d % 4") && !plain.contains("(unsigned)d"), "{plain}");
    // A negative stride: `k` runs from `n` down to 1, so `k - 1` is not negative.
    let down = cuda(&kernel(
        "",
        "                    for k in range(n, 0, -1):\n                        d : int = k - 1\n                        out_t[0] = d / 4",
    ));
    assert!(down.contains("(int)((unsigned)d / 4u)"), "{down}");
}

/// A four-stage pipeline over `count` tiles whose fill copies tile `k` from `x[k * 16 + t]`.
fn pipeline(count: &str) -> String {
    format!(
        r#"
@prism("global")
@requires(grid[1], block[1], thread[1], smem=256)
@launch_bounds(16)
def k(n : int, x : ptr(const(float)), y : ptr(float)):
    with partition(y, p=block[1], f=lambda i: i) as y_b:
        with group(block[1]):
            ring : shared(float[4][16]) @ block[1]
            t : int @ thread[1] = id()
            acc : float @ thread[1] = 0.0
            for k in pipeline({count}, stages=4):
                with fill(ring) as slot:
                    with group(thread[1]):
                        cp_async(slot[t], x[k * 16 + t], 4)
                with stage(ring) as s:
                    with group(thread[1]):
                        acc += s[t]
            with partition(y_b, p=thread[1], f=lambda i: t + i) as y_t:
                with group(thread[1]):
                    y_t[0] = acc
"#
    )
}

#[test]
fn pipeline_counters_are_native_only_where_the_trip_count_allows() {
    // `n` tiles, `n` anything: the issue loop's bound `n + 3` and the fill's `k * 16` wrap
    // (a huge `n` makes `n + 3` pass the limit, and the loop then runs no iteration, in the
    // simulator as on the GPU).
    let huge = cuda(&pipeline("n"));
    assert!(huge.contains("prism_add(n, 3)"), "{huge}");
    assert!(huge.contains("prism_mul(k_issue, 16)"), "{huge}");
    // `(n + 15) / 16` tiles: at most 2^27 - 1, so the bound and the fill's offset fit.
    let small = cuda(&pipeline("(n + 15) / 16"));
    assert!(small.contains("k_issue < t") && small.contains(" + 3;"), "{small}");
    assert!(small.contains("k_issue * 16 + t"), "{small}");
    // The body's tile is not negative where the body runs: its slot is a mask.
    assert!(small.contains("(int)((unsigned)k % 4u)"), "{small}");
}

/// Review R46: a packed `half` vector access at an index that is a sum of constants prints
/// the word the IR's wrapping sum reaches, not the exact sum (`j = a + b + 4` with
/// `a = b = INT_MAX` is 2: word 1, where the backend printed `hv[2147483649]`). Every
/// constant word index of the corpus program lies inside its 4-word array.
#[test]
fn packed_pair_indices_are_wrapping_sums() {
    let src = include_str!("../../../tests/ui/accept/rules/fold_agrees_with_run_time.prism");
    let text = cuda(src);
    let mut words = Vec::new();
    for name in ["hv[", "lv["] {
        for (at, _) in text.match_indices(name) {
            let rest = &text[at + name.len()..];
            let end = rest.find(']').expect("a closing bracket");
            // The declarations (`unsigned hv[4]`) are sizes, not accesses.
            if text[..at].ends_with("unsigned ") {
                continue;
            }
            if let Ok(k) = rest[..end].parse::<i64>() {
                words.push((name, k));
            }
        }
    }
    let want = [("hv[", 1), ("hv[", 2), ("hv[", 2), ("hv[", 3), ("hv[", 1), ("lv[", 1), ("lv[", 3)];
    assert_eq!(words, want, "{text}");
}

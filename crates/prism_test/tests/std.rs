//! `prism.std` (issue 12): every module checks on its own, `docs/std.md` lists exactly the
//! functions the code defines with their signatures, and each function runs against a
//! plain-Rust reference.

use prism_interp::{Arg, Checks, Config, Module};
use prism_test::repo_root;

/// `(module, "@requires(...) def f(...) -> ...")` for every function of the library.
fn signatures() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (module, src) in prism_std::MODULES {
        let lines: Vec<&str> = src.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(def) = line.strip_prefix("def ") else { continue };
            // A signature may continue on the following lines, up to the `:`.
            let mut def = def.trim_end().to_string();
            let mut k = i;
            while !def.ends_with(':') {
                k += 1;
                def = format!("{def} {}", lines[k].trim());
            }
            let requires =
                lines[..i].iter().rev().take_while(|l| l.starts_with('@')).find(|l| l.starts_with("@requires"));
            let sig =
                format!("{} def {}", requires.expect("every std function has `@requires`"), def.trim_end_matches(':'));
            out.push((module.to_string(), sig));
        }
    }
    out
}

#[test]
fn every_module_checks_on_its_own() {
    for (module, _) in prism_std::MODULES {
        let root = format!("import prism.std.{module}\n");
        let (map, problems, synced) =
            prism_driver::compile_text("main.prism", &root, &prism_driver::Options::default());
        assert!(
            synced.is_some() && problems.diagnostics().is_empty(),
            "prism.std.{module}:\n{}",
            prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never)
        );
    }
}

#[test]
fn the_documentation_lists_exactly_the_functions_with_their_signatures() {
    let doc = std::fs::read_to_string(repo_root().join("docs/std.md")).expect("docs/std.md");
    let mut failures = Vec::new();
    let sigs = signatures();
    for (module, sig) in &sigs {
        let section =
            doc.split(&format!("## `prism.std.{module}`")).nth(1).map(|s| s.split("\n## ").next().unwrap_or(s));
        match section {
            None => failures.push(format!("docs/std.md has no section for `prism.std.{module}`")),
            Some(s) if !s.contains(&format!("`{sig}`")) => {
                failures.push(format!("docs/std.md does not give `{sig}` under `prism.std.{module}`"))
            }
            Some(_) => {}
        }
    }
    // Every row names a function that exists.
    for row in doc.lines().filter(|l| l.starts_with("| `") && l.contains(" def ")) {
        if !sigs.iter().any(|(_, s)| row.contains(&format!("`{s}`"))) {
            failures.push(format!("docs/std.md lists a function the library does not define: {row}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every collective of `prism.std.thread`, `.warp` and `.block`, one result each per
/// thread, for element type `T` (`int`, `float` or `double`), `ITEMS` items per thread.
fn collectives(ty: &str, items: usize) -> String {
    let src = r#"
from prism.std.thread import thread_sum, thread_reduce, thread_exclusive_sum, thread_inclusive_sum
from prism.std.warp import (
    warp_sum, warp_max, warp_min, warp_reduce, warp_inclusive_sum, warp_exclusive_sum,
    warp_inclusive_scan, warp_exclusive_scan, warp_load_blocked, warp_store_blocked,
)
from prism.std.block import (
    block_sum, block_max, block_min, block_reduce, block_inclusive_sum, block_exclusive_sum, block_inclusive_scan,
    block_exclusive_scan, block_load_blocked, block_load_striped, block_store_blocked, block_store_striped,
)

K : constexpr(int) = 22

# A non-commutative associative operator: the later operand wins unless it is negative.
@prism("device")
@requires(thread[1])
def pick(a : T @ thread[1], b : T @ thread[1]) -> T @ thread[1]:
    return b if b >= T(0) else a

@prism("device")
@requires(thread[1])
def biggest(a : T @ thread[1], b : T @ thread[1]) -> T @ thread[1]:
    return max(a, b)

@prism("global")
@requires(grid[1], block[1], thread[32], smem=304)
def k(x : ptr(const(T)), out : ptr(T), copy_b : ptr(T), copy_s : ptr(T), copy_w : ptr(T), n : int):
    b : int @ block[1] = id()
    g : int @ thread[1] = id()
    tile : const(int) @ block[1] = block_dim() * ITEMS
    with partition(x, p=block[1], f=lambda i: b * tile + i) as xb:
        with partition(copy_b, p=block[1], f=lambda i: b * tile + i) as cb:
            with partition(copy_s, p=block[1], f=lambda i: b * tile + i) as cs:
              with partition(copy_w, p=block[1], f=lambda i: b * tile + i) as cwb:
                with partition(out, p=thread[1], f=lambda i: g * K + i) as o:
                    with group(block[1]):
                        valid : const(int) @ block[1] = n - b * tile
                        items : T[ITEMS] @ thread[1]
                        block_load_blocked[T](xb, items, ITEMS, valid, T(0))
                        striped : T[ITEMS] @ thread[1]
                        block_load_striped[T](xb, striped, ITEMS, valid, T(0))
                        block_store_blocked[T](items, cb, ITEMS, valid)
                        block_store_striped[T](striped, cs, ITEMS, valid)
                        # The same blocked tile through each warp's view of it.
                        w : int @ thread[32] = id()
                        witems : T[ITEMS] @ thread[1]
                        with partition(xb, p=thread[32], f=lambda i: w * 32 * ITEMS + i) as xw:
                            with partition(cwb, p=thread[32], f=lambda i: w * 32 * ITEMS + i) as cw:
                                with group(thread[32]):
                                    wvalid : const(int) @ thread[32] = valid - w * 32 * ITEMS
                                    warp_load_blocked[T](xw, witems, ITEMS, wvalid, T(0))
                                    warp_store_blocked[T](witems, cw, ITEMS, wvalid)
                        v : T @ thread[1] = T(0)
                        tr : T @ thread[1] = T(0)
                        with group(thread[1]):
                            v = thread_sum[T](items, ITEMS)
                            tr = thread_reduce[T, pick](items, ITEMS)
                        ws : T @ thread[32] = warp_sum[T](v)
                        wmax : T @ thread[32] = warp_max[T](v)
                        wmin : T @ thread[32] = warp_min[T](v)
                        wred : T @ thread[32] = warp_reduce[T, pick](v)
                        wis : T @ thread[1] = warp_inclusive_sum[T](v)
                        wes : T @ thread[1] = warp_exclusive_sum[T](v)
                        wisc : T @ thread[1] = warp_inclusive_scan[T, pick](v)
                        wesc : T @ thread[1] = warp_exclusive_scan[T, biggest](v, T(-7))
                        bs : T @ block[1] = block_sum[T](v)
                        bred : T @ block[1] = block_reduce[T, pick](v)
                        bmax : T @ block[1] = block_max[T](v)
                        bmin : T @ block[1] = block_min[T](v)
                        bis : T @ thread[1] = block_inclusive_sum[T](v)
                        total : shared(T[1]) @ block[1]
                        bes : T @ thread[1] = block_exclusive_sum[T](v, total)
                        bisc : T @ thread[1] = block_inclusive_scan[T, pick](v)
                        total2 : shared(T[1]) @ block[1]
                        besc : T @ thread[1] = block_exclusive_scan[T, biggest](v, T(-7), total2)
                        incl_items : T[ITEMS] @ thread[1]
                        with group(thread[1]):
                            for i in range(ITEMS):
                                incl_items[i] = items[i]
                            thread_inclusive_sum[T](incl_items, ITEMS, T(1))
                            thread_exclusive_sum[T](items, ITEMS, T(0))
                            o[0] = v
                            o[1] = tr
                            o[2] = ws
                            o[3] = wmax
                            o[4] = wmin
                            o[5] = wred
                            o[6] = wis
                            o[7] = wes
                            o[8] = wisc
                            o[9] = wesc
                            o[10] = bs
                            o[11] = bred
                            o[12] = bis
                            o[13] = bes
                            o[14] = total[0]
                            o[15] = bisc
                            o[16] = besc
                            o[17] = total2[0]
                            o[18] = items[ITEMS - 1]
                            o[19] = incl_items[ITEMS - 1]
                            o[20] = bmax
                            o[21] = bmin
"#;
    format!(
        "ITEMS : constexpr(int) = {items}\n{}",
        src.replace(" T", &format!(" {ty}")).replace("[T", &format!("[{ty}")).replace("(T", &format!("({ty}"))
    )
}

/// What `collectives` computes, in f64 (every value is a small integer, exact in all three
/// types), for `blocks` blocks of `threads` threads over input `x` of `n` items.
fn reference(x: &[f64], n: usize, blocks: usize, threads: usize, items: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    const K: usize = 22;
    let pick = |a: f64, b: f64| if b >= 0.0 { b } else { a };
    let tile = threads * items;
    let at = |i: usize| if i < n { x[i] } else { 0.0 };
    let mut out = vec![0.0; blocks * threads * K];
    let (mut copy_b, mut copy_s) = (vec![0.0; blocks * tile], vec![0.0; blocks * tile]);
    for b in 0..blocks {
        let base = b * tile;
        let item = |t: usize, i: usize| at(base + t * items + i);
        let v: Vec<f64> = (0..threads).map(|t| (0..items).map(|i| item(t, i)).sum()).collect();
        let bs: f64 = v.iter().sum();
        let bred = v.iter().copied().reduce(pick).expect("threads");
        let btotal_max = v.iter().fold(-7.0f64, |a, &b| a.max(b));
        for t in 0..threads {
            let w = t / 32;
            let lanes = &v[w * 32..w * 32 + 32];
            let lane = t % 32;
            let o = &mut out[(b * threads + t) * K..(b * threads + t + 1) * K];
            o[0] = v[t];
            o[1] = (0..items).map(|i| item(t, i)).reduce(pick).expect("items");
            o[2] = lanes.iter().sum();
            o[3] = lanes.iter().copied().fold(f64::MIN, f64::max);
            o[4] = lanes.iter().copied().fold(f64::MAX, f64::min);
            o[5] = lanes.iter().copied().reduce(pick).expect("lanes");
            o[6] = lanes[..=lane].iter().sum();
            o[7] = lanes[..lane].iter().sum();
            o[8] = lanes[..=lane].iter().copied().reduce(pick).expect("lane");
            o[9] = lanes[..lane].iter().fold(-7.0f64, |a, &b| a.max(b));
            o[10] = bs;
            o[11] = bred;
            o[12] = v[..=t].iter().sum();
            o[13] = v[..t].iter().sum();
            o[14] = bs;
            o[15] = v[..=t].iter().copied().reduce(pick).expect("thread");
            o[16] = v[..t].iter().fold(-7.0f64, |a, &b| a.max(b));
            o[17] = btotal_max;
            // The thread's items after its exclusive sum: the last is the sum of the others.
            o[18] = (0..items - 1).map(|i| item(t, i)).sum();
            o[19] = 1.0 + (0..items).map(|i| item(t, i)).sum::<f64>();
            o[20] = v.iter().copied().fold(f64::MIN, f64::max);
            o[21] = v.iter().copied().fold(f64::MAX, f64::min);
        }
        for t in 0..threads {
            for i in 0..items {
                if base + t * items + i < n {
                    copy_b[base + t * items + i] = item(t, i);
                }
                if base + i * threads + t < n {
                    copy_s[base + i * threads + t] = at(base + i * threads + t);
                }
            }
        }
    }
    (out, copy_b, copy_s)
}

#[test]
fn every_collective_at_three_types_and_two_sizes() {
    // Blocks of 64 and 160 threads (2 and 5 warps), 4 and 3 items per thread, inputs that
    // end inside the last block's tile.
    for ty in ["int", "float", "double"] {
        for (threads, items) in [(64usize, 4usize), (160, 3)] {
            let src = collectives(ty, items);
            let (map, problems, synced) =
                prism_driver::compile_text("main.prism", &src, &prism_driver::Options::default());
            let synced = synced.unwrap_or_else(|| {
                panic!(
                    "{ty} x {items}:\n{}",
                    prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never)
                )
            });
            let blocks = 2;
            let n = blocks * threads * items - 5;
            let mut xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 23) as f64 - 11.0).collect();
            // The block's largest value in its last warp and the smallest in a middle one,
            // alone: a block maximum or minimum that skips a warp is wrong.
            xs[(threads - 10) * items] = 50.0;
            xs[threads * items + (threads / 2 + 5) * items] = -60.0;
            let (want, want_b, want_s) = reference(&xs, n, blocks, threads, items);
            let size = blocks * threads * items;
            let args = match ty {
                "int" => {
                    let x: Vec<i32> = xs.iter().map(|&v| v as i32).collect();
                    vec![
                        Arg::buffer(&x),
                        Arg::buffer(&vec![0i32; want.len()]),
                        Arg::buffer(&vec![0i32; size]),
                        Arg::buffer(&vec![0i32; size]),
                        Arg::buffer(&vec![0i32; size]),
                        Arg::value(n as i32),
                    ]
                }
                "float" => {
                    let x: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                    vec![
                        Arg::buffer(&x),
                        Arg::buffer(&vec![0f32; want.len()]),
                        Arg::buffer(&vec![0f32; size]),
                        Arg::buffer(&vec![0f32; size]),
                        Arg::buffer(&vec![0f32; size]),
                        Arg::value(n as i32),
                    ]
                }
                _ => vec![
                    Arg::buffer(&xs),
                    Arg::buffer(&vec![0f64; want.len()]),
                    Arg::buffer(&vec![0f64; size]),
                    Arg::buffer(&vec![0f64; size]),
                    Arg::buffer(&vec![0f64; size]),
                    Arg::value(n as i32),
                ],
            };
            let o = Module::new(&synced)
                .launch("k", blocks as u32, threads as u32, &args, Config::default())
                .expect("launch");
            assert!(o.is_clean(), "{ty} x {threads}: {:?}", o.reports);
            let got = |a: &Arg| -> Vec<f64> {
                let b = a.as_buffer().expect("buffer");
                match ty {
                    "int" => b.to_bits().iter().map(|&v| f64::from(v as u32 as i32)).collect(),
                    "float" => b.to_bits().iter().map(|&v| f64::from(f32::from_bits(v as u32))).collect(),
                    _ => b.to_bits().iter().map(|&v| f64::from_bits(v)).collect(),
                }
            };
            let names = [
                "v",
                "thread_reduce",
                "warp_sum",
                "warp_max",
                "warp_min",
                "warp_reduce",
                "warp_inclusive_sum",
                "warp_exclusive_sum",
                "warp_inclusive_scan",
                "warp_exclusive_scan",
                "block_sum",
                "block_reduce",
                "block_inclusive_sum",
                "block_exclusive_sum",
                "block_exclusive_sum total",
                "block_inclusive_scan",
                "block_exclusive_scan",
                "block_exclusive_scan total",
                "thread_exclusive_sum",
                "thread_inclusive_sum",
            ];
            let out = got(&args[1]);
            for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{ty}, {threads} threads x {items}: thread {} `{}`", i / 20, names[i % 20]);
            }
            assert_eq!(got(&args[2]), want_b, "{ty}: blocked load and store");
            assert_eq!(got(&args[3]), want_s, "{ty}: striped load and store");
            assert_eq!(got(&args[4]), want_b, "{ty}: warp blocked load and store");
        }
    }
}

#[test]
fn block_histogram_counts_the_items_in_range() {
    // Values from -5 to 69 into 64 bins (some below, some above), striped loads marking
    // items past the end with -1, at two block sizes and two bin counts.
    for (threads, bins) in [(64usize, 64usize), (160, 37)] {
        let src = format!(
            r#"
from prism.std.block import block_histogram, block_load_striped

@prism("global")
@requires(grid[1], block[1], thread[32], smem={smem})
def hist(x : ptr(const(int)), n : int, out : ptr(int)):
    b : int @ block[1] = id()
    with partition(x, p=block[1], f=lambda i: b * block_dim() * 3 + i) as xb:
        with partition(out, p=block[1], f=lambda i: b * {bins} + i) as ob:
            with group(block[1]):
                items : int[3] @ thread[1]
                block_load_striped(xb, items, 3, n - b * block_dim() * 3, -1)
                h : shared(int[{bins}]) @ block[1]
                block_histogram(items, 3, h, {bins})
                t : int @ thread[1] = id()
                with partition(ob, p=thread[1], f=lambda i: t + block_dim() * i) as mine:
                    with group(thread[1]):
                        k : int = 0
                        while t + block_dim() * k < {bins}:
                            mine[k] = h[t + block_dim() * k]
                            k += 1
"#,
            smem = (bins * 4).next_multiple_of(16) + 16
        );
        let (map, problems, synced) = prism_driver::compile_text("main.prism", &src, &prism_driver::Options::default());
        let synced = synced.unwrap_or_else(|| {
            panic!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never))
        });
        let blocks = 3;
        let n = blocks * threads * 3 - 7;
        let x: Vec<i32> = (0..n).map(|i| ((i * 7919) % 75) as i32 - 5).collect();
        let args = [Arg::buffer(&x), Arg::value(n as i32), Arg::buffer(&vec![-9i32; blocks * bins])];
        let o = Module::new(&synced)
            .launch("hist", blocks as u32, threads as u32, &args, Config::default())
            .expect("launch");
        assert!(o.is_clean(), "{:?}", o.reports);
        let mut want = vec![0u64; blocks * bins];
        for (i, &v) in x.iter().enumerate() {
            if (0..bins as i32).contains(&v) {
                want[i / (threads * 3) * bins + v as usize] += 1;
            }
        }
        assert_eq!(args[2].as_buffer().expect("buffer").to_bits(), want, "{threads} threads, {bins} bins");
    }
}

#[test]
fn every_function_of_the_library_is_run_by_a_test() {
    // Templates are checked per instance, so a function nothing calls is not checked at
    // all: this file, the corpus's kernel 16 or another library function must call every
    // one (`def` lines do not count).
    let mut tests = format!(
        "{}{}",
        include_str!("std.rs"),
        std::fs::read_to_string(repo_root().join("tests/ui/accept/kernels/16_scan_decoupled_lookback.prism"))
            .expect("kernel 16")
    );
    for (_, src) in prism_std::MODULES {
        tests.extend(src.lines().filter(|l| !l.starts_with("def ")).map(|l| format!("{l}\n")));
    }
    let uncalled: Vec<String> = signatures()
        .into_iter()
        .filter_map(|(_, sig)| {
            let name = sig.split(" def ").nth(1)?.split(['[', '(']).next()?.to_string();
            let called = tests.contains(&format!("{name}(")) || tests.contains(&format!("{name}["));
            (!called).then_some(name)
        })
        .collect();
    assert!(uncalled.is_empty(), "no test calls: {uncalled:?}");
}

/// A buffer of `ty` (`int`, `uint`, `float` or `double`) holding `xs`, each exact in it.
fn buffer_of(ty: &str, xs: &[f64]) -> Arg {
    match ty {
        "int" => Arg::buffer(&xs.iter().map(|&v| v as i32).collect::<Vec<_>>()),
        "uint" => Arg::buffer(&xs.iter().map(|&v| v as u32).collect::<Vec<_>>()),
        "float" => Arg::buffer(&xs.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        _ => Arg::buffer(xs),
    }
}

/// A buffer's values, read as `ty`.
fn values_of(ty: &str, a: &Arg) -> Vec<f64> {
    let b = a.as_buffer().expect("buffer");
    b.to_bits()
        .iter()
        .map(|&v| match ty {
            "int" => f64::from(v as u32 as i32),
            "uint" => f64::from(v as u32),
            "float" => f64::from(f32::from_bits(v as u32)),
            _ => f64::from_bits(v),
        })
        .collect()
}

/// Compiles `src` (errors are a test failure, with the rendered diagnostics).
fn compiled(src: &str) -> prism_driver::Synced {
    let (map, problems, synced) = prism_driver::compile_text("main.prism", src, &prism_driver::Options::default());
    synced.unwrap_or_else(|| panic!("{}", prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never)))
}

#[test]
fn transposing_and_vectorised_loads_and_stores_keep_the_blocked_arrangement() {
    // Each tile goes in through one load and out through another store: a transposing load
    // and a blocked store, a blocked load and a transposing store, a vectorised load and
    // store (whole vectors at 4 items per thread, item by item at 3 or when the thread's
    // items pass the end). `sums[g]` is thread g's items after the transposing load, fill
    // included, so the arrangement and the fill are both seen.
    for ty in ["int", "float", "double"] {
        let vec = if ty == "double" { 2 } else { 4 };
        for (threads, items) in [(64usize, 4usize), (160, 3)] {
            let tile = threads * items;
            let src = format!(
                r#"
from prism.std.block import (
    block_load_transpose, block_store_transpose, block_load_blocked, block_store_blocked,
    block_load_vectorized, block_store_vectorized,
)
from prism.std.thread import thread_sum

@prism("global")
@requires(grid[1], block[1], thread[32], smem={smem})
def k(x : ptr(const({ty})), a : ptr({ty}), b : ptr({ty}), c : ptr({ty}), sums : ptr({ty}), n : int):
    blk : int @ block[1] = id()
    g : int @ thread[1] = id()
    with partition(x, p=block[1], f=lambda i: blk * {tile} + i) as xb:
        with partition(a, p=block[1], f=lambda i: blk * {tile} + i) as ab:
            with partition(b, p=block[1], f=lambda i: blk * {tile} + i) as bb:
                with partition(c, p=block[1], f=lambda i: blk * {tile} + i) as cb:
                    with partition(sums, p=thread[1], f=lambda i: g + i) as s:
                        with group(block[1]):
                            valid : const(int) @ block[1] = n - blk * {tile}
                            ex : shared({ty}[{ex}]) @ block[1]
                            items : {ty}[{items}] @ thread[1]
                            block_load_transpose[{ty}](xb, items, {items}, ex, valid, {ty}(100))
                            with group(thread[1]):
                                s[0] = thread_sum[{ty}](items, {items})
                            block_store_blocked[{ty}](items, ab, {items}, valid)
                            more : {ty}[{items}] @ thread[1]
                            block_load_blocked[{ty}](xb, more, {items}, valid, {ty}(0))
                            block_store_transpose[{ty}](more, bb, {items}, ex, valid)
                            wide : {ty}[{items}] @ thread[1]
                            block_load_vectorized[{ty}](xb, wide, {items}, {vec}, valid, {ty}(0))
                            block_store_vectorized[{ty}](wide, cb, {items}, {vec}, valid)
"#,
                ex = tile + tile / 32,
                smem = ((tile + tile / 32) * if ty == "double" { 8 } else { 4 }).next_multiple_of(16),
            );
            let synced = compiled(&src);
            let blocks = 3;
            // The last tile ends inside the block's last warp; a thread's items past the end
            // take the item-by-item paths.
            let n = blocks * tile - 37;
            let xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 201) as f64 - 100.0).collect();
            let size = blocks * tile;
            let args = [
                buffer_of(ty, &xs),
                buffer_of(ty, &vec![-1.0; size]),
                buffer_of(ty, &vec![-1.0; size]),
                buffer_of(ty, &vec![-1.0; size]),
                buffer_of(ty, &vec![0.0; blocks * threads]),
                Arg::value(n as i32),
            ];
            let o = Module::new(&synced)
                .launch("k", blocks as u32, threads as u32, &args, Config::default())
                .expect("launch");
            assert!(o.is_clean(), "{ty}, {threads} x {items}: {:?}", o.reports);
            let mut want = xs.clone();
            want.resize(size, -1.0);
            for (name, arg) in
                [("transposing load", &args[1]), ("transposing store", &args[2]), ("vectorised", &args[3])]
            {
                assert_eq!(values_of(ty, arg), want, "{ty}, {threads} x {items}: {name}");
            }
            let at = |i: usize| if i < n { xs[i] } else { 100.0 };
            let sums: Vec<f64> = (0..blocks * threads).map(|g| (0..items).map(|i| at(g * items + i)).sum()).collect();
            assert_eq!(values_of(ty, &args[4]), sums, "{ty}, {threads} x {items}: the transposing load's items");
        }
    }
}

#[test]
fn block_radix_sort_sorts_keys_and_pairs_stably() {
    // Signed and unsigned keys, whole keys and a middle range of bits (4 .. 12, where many
    // keys tie, so stability shows), at two block shapes. Values are each item's position
    // in the tile, so the pairs' values say where each key came from.
    for ty in ["int", "uint"] {
        for (threads, items) in [(64usize, 4usize), (96, 3)] {
            for (begin, end) in [(0u32, 32u32), (4, 12)] {
                let tile = threads * items;
                let src = format!(
                    r#"
from prism.std.block import block_radix_sort, block_radix_sort_pairs, block_load_blocked, block_store_blocked

@prism("global")
@requires(grid[1], block[1], thread[32], smem={smem})
def k(x : ptr(const({ty})), keys_out : ptr({ty}), pair_keys : ptr({ty}), pair_values : ptr(int)):
    blk : int @ block[1] = id()
    with partition(x, p=block[1], f=lambda i: blk * {tile} + i) as xb:
        with partition(keys_out, p=block[1], f=lambda i: blk * {tile} + i) as kb:
            with partition(pair_keys, p=block[1], f=lambda i: blk * {tile} + i) as pkb:
                with partition(pair_values, p=block[1], f=lambda i: blk * {tile} + i) as pvb:
                    with group(block[1]):
                        ex : shared({ty}[{ex}]) @ block[1]
                        vex : shared(int[{ex}]) @ block[1]
                        keys : {ty}[{items}] @ thread[1]
                        block_load_blocked[{ty}](xb, keys, {items}, {tile}, {ty}(0))
                        block_radix_sort[{ty}](keys, {items}, ex, {begin}, {end})
                        block_store_blocked[{ty}](keys, kb, {items}, {tile})
                        pkeys : {ty}[{items}] @ thread[1]
                        block_load_blocked[{ty}](xb, pkeys, {items}, {tile}, {ty}(0))
                        t : int @ thread[1] = id()
                        values : int[{items}] @ thread[1]
                        with group(thread[1]):
                            for i in range({items}):
                                values[i] = t * {items} + i
                        block_radix_sort_pairs[{ty}, int](pkeys, values, {items}, ex, vex, {begin}, {end})
                        block_store_blocked[{ty}](pkeys, pkb, {items}, {tile})
                        block_store_blocked[int](values, pvb, {items}, {tile})
"#,
                    ex = tile + tile / 32,
                    smem = ((tile + tile / 32) * 4).next_multiple_of(16) * 2 + 272,
                );
                let synced = compiled(&src);
                let blocks = 2;
                let n = blocks * tile;
                // Keys over the whole 32-bit range, negative ones included for `int`.
                let bits: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761).rotate_left(i % 7)).collect();
                let xs: Vec<f64> =
                    bits.iter().map(|&b| if ty == "int" { f64::from(b as i32) } else { f64::from(b) }).collect();
                let args = [
                    buffer_of(ty, &xs),
                    buffer_of(ty, &vec![0.0; n]),
                    buffer_of(ty, &vec![0.0; n]),
                    Arg::buffer(&vec![0i32; n]),
                ];
                let o = Module::new(&synced)
                    .launch("k", blocks as u32, threads as u32, &args, Config::default())
                    .expect("launch");
                assert!(o.is_clean(), "{ty}, {threads} x {items}, bits {begin}..{end}: {:?}", o.reports);
                // The reference: a stable sort of each tile by the key's bits begin .. end,
                // signed keys with their sign bit flipped.
                let sort_key = |v: f64| {
                    let b = if ty == "int" { (v as i32 as u32) ^ 0x8000_0000 } else { v as u32 };
                    let width = end - begin;
                    (u64::from(b) >> begin) & ((1u64 << width) - 1)
                };
                let mut want_keys = Vec::new();
                let mut want_values = Vec::new();
                for b in 0..blocks {
                    let mut order: Vec<usize> = (0..tile).collect();
                    order.sort_by_key(|&i| sort_key(xs[b * tile + i]));
                    want_keys.extend(order.iter().map(|&i| xs[b * tile + i]));
                    want_values.extend(order.iter().map(|&i| i as f64));
                }
                let what = format!("{ty}, {threads} x {items}, bits {begin}..{end}");
                assert_eq!(values_of(ty, &args[1]), want_keys, "{what}: keys");
                assert_eq!(values_of(ty, &args[2]), want_keys, "{what}: the pairs' keys");
                assert_eq!(values_of("int", &args[3]), want_values, "{what}: the pairs' values");
            }
        }
    }
}

#[test]
fn device_reduce_sum_and_scan_match_references() {
    // `device_sum` at three types and `device_reduce` with a maximum, at two launch shapes
    // (fewer blocks than tiles, so blocks stride), launched twice on the same scratch: the
    // counter is zero again after each launch. `device_inclusive_sum` with one block more
    // than there are tiles (not for `double`: the scan's status words hold a value's 32
    // bits, `a_64_bit_device_scan_is_refused_at_the_callers_line`). Items are small
    // integers, exact in every type.
    for ty in ["int", "float", "double"] {
        let scan = ty != "double";
        let scan_src = if scan {
            format!(
                r#"
@prism("global")
@requires(grid[1], block[1], thread[32], smem=288)
def scan(x : ptr(const({ty})), out : ptr({ty}), n : int, counter : ptr(int), flags : ptr(uint64),
         aggregates : ptr({ty}), inclusive : ptr({ty})):
    device_inclusive_sum[{ty}](x, out, n, 4, counter, flags, aggregates, inclusive)
"#
            )
        } else {
            String::new()
        };
        let src = format!(
            r#"
from prism.std.device import device_reduce, device_sum, device_inclusive_sum

@prism("device")
@requires(thread[1])
def biggest(a : {ty} @ thread[1], b : {ty} @ thread[1]) -> {ty} @ thread[1]:
    return max(a, b)

@prism("global")
@requires(grid[1], block[1], thread[32], smem=288)
def sum(x : ptr(const({ty})), n : int, partials : ptr({ty}), counter : ptr(int), out : ptr({ty})):
    device_sum[{ty}](x, n, 3, partials, counter, out)

@prism("global")
@requires(grid[1], block[1], thread[32], smem=288)
def biggest_of(x : ptr(const({ty})), n : int, partials : ptr({ty}), counter : ptr(int), out : ptr({ty})):
    device_reduce[{ty}, biggest](x, n, 2, {ty}(-1000000), partials, counter, out)
{scan_src}"#
        );
        let synced = compiled(&src);
        let module = Module::new(&synced);
        for (blocks, threads, n) in [(3usize, 64usize, 5000usize), (5, 96, 777)] {
            let xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 41) as f64 - 20.0).collect();
            let what = format!("{ty}, {blocks} x {threads}, n = {n}");
            for (kernel, want) in
                [("sum", xs.iter().sum::<f64>()), ("biggest_of", xs.iter().copied().fold(-1_000_000.0, f64::max))]
            {
                let args = [
                    buffer_of(ty, &xs),
                    Arg::value(n as i32),
                    buffer_of(ty, &vec![0.0; blocks]),
                    Arg::buffer(&[0i32]),
                    buffer_of(ty, &[7.0]),
                ];
                for launch in 0..2 {
                    let o =
                        module.launch(kernel, blocks as u32, threads as u32, &args, Config::default()).expect("launch");
                    assert!(o.is_clean(), "{what}: {kernel}: {:?}", o.reports);
                    assert_eq!(values_of(ty, &args[4]), [want], "{what}: {kernel}, launch {launch}");
                    assert_eq!(values_of("int", &args[3]), [0.0], "{what}: {kernel}'s counter");
                }
            }
            if !scan {
                continue;
            }
            let tiles = n.div_ceil(threads * 4);
            let scan_blocks = tiles + 1;
            let args = [
                buffer_of(ty, &xs),
                buffer_of(ty, &vec![0.0; n]),
                Arg::value(n as i32),
                Arg::buffer(&[0i32]),
                Arg::buffer(&vec![0u64; scan_blocks]),
                buffer_of(ty, &vec![0.0; scan_blocks]),
                buffer_of(ty, &vec![0.0; scan_blocks]),
            ];
            let o =
                module.launch("scan", scan_blocks as u32, threads as u32, &args, Config::default()).expect("launch");
            assert!(o.is_clean(), "{what}: scan: {:?}", o.reports);
            let want: Vec<f64> = xs
                .iter()
                .scan(0.0, |acc, &v| {
                    *acc += v;
                    Some(*acc)
                })
                .collect();
            assert_eq!(values_of(ty, &args[1]), want, "{what}: device_inclusive_sum");
        }
    }
}

#[test]
fn a_float_device_scan_is_the_same_bits_under_every_schedule() {
    // Soundness §1 promises outputs that do not depend on the schedule. A look-back that
    // stops at whichever predecessor has published its inclusive prefix adds different terms
    // on different runs, and float sums round differently in each association: the classic
    // algorithm gave six different outputs under six seeds here. `lookback_prefix` fixes
    // the terms by the tile's index (anchors every 256 tiles), so 601 tiles (two anchors
    // past tile 0, and tiles just after and just before each) give one output under the
    // deterministic schedule and every random one, and it is a prefix sum.
    let src = r#"
from prism.std.device import device_inclusive_sum

@prism("global")
@requires(grid[1], block[1], thread[32], smem=288)
def scan(x : ptr(const(float)), out : ptr(float), n : int, counter : ptr(int), flags : ptr(uint64),
         aggregates : ptr(float), inclusive : ptr(float)):
    device_inclusive_sum[float](x, out, n, 2, counter, flags, aggregates, inclusive)
"#;
    let module = Module::new(&compiled(src));
    let (blocks, threads) = (601usize, 32usize);
    let n = blocks * threads * 2 - 37;
    // Full-mantissa values of mixed sign and magnitude: sums in different orders differ.
    let xs: Vec<f32> = (0..n as u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            (h as f32 / (1u64 << 24) as f32 - 0.5) * if i % 7 == 0 { 1000.0 } else { 1.0 }
        })
        .collect();
    let run = |seed: Option<u64>| {
        let args = [
            Arg::buffer(&xs),
            Arg::buffer(&vec![0f32; n]),
            Arg::value(n as i32),
            Arg::buffer(&[0i32]),
            Arg::buffer(&vec![0u64; blocks]),
            Arg::buffer(&vec![0f32; blocks]),
            Arg::buffer(&vec![0f32; blocks]),
        ];
        let config =
            Config { seed, checks: if seed.is_none() { Checks::ALL } else { Checks::NONE }, ..Config::default() };
        let o = module.launch("scan", blocks as u32, threads as u32, &args, config).expect("launch");
        assert!(o.is_clean(), "seed {seed:?}: {:?}", o.reports);
        args[1].as_buffer().expect("buffer").to_vec::<f32>().expect("f32")
    };
    let first = run(None);
    let (mut sum, mut magnitude) = (0f64, 0f64);
    for (i, (&x, &got)) in xs.iter().zip(&first).enumerate() {
        sum += f64::from(x);
        magnitude += f64::from(x.abs());
        assert!((f64::from(got) - sum).abs() <= 1e-5 * magnitude, "item {i}: {got}, want about {sum}");
    }
    for seed in [1, 2, 3] {
        let again = run(Some(seed));
        let differ = first.iter().zip(&again).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(differ, 0, "seed {seed}: {differ} items differ from the deterministic schedule's");
    }
}

#[test]
fn a_64_bit_device_scan_is_refused_at_the_callers_line() {
    // The look-back's status words hold a flag and the 32 bits of the value they publish
    // (`bits32`), so that a reader can tell a value some other code overwrote; a `double`
    // does not fit. The instance fails inside the library, and the error names the user's
    // call.
    let src = r#"from prism.std.device import device_inclusive_sum

@prism("global")
@requires(grid[1], block[1], thread[32], smem=288)
def scan(x : ptr(const(double)), out : ptr(double), n : int, counter : ptr(int), flags : ptr(uint64),
         aggregates : ptr(double), inclusive : ptr(double)):
    device_inclusive_sum[double](x, out, n, 4, counter, flags, aggregates, inclusive)
"#;
    let errors = type_mismatches(src);
    assert!(errors.iter().any(|one| one.contains("a number of at most 32 bits")), "{errors:#?}");
    for one in errors {
        assert!(
            one.contains("7 │     device_inclusive_sum[double](x, out, n, 4, counter, flags, aggregates, inclusive)"),
            "no label at the user's call:\n{one}"
        );
    }
}

/// Compiles `src`, which must be refused with `type-mismatch` errors only, and renders each
/// error on its own.
fn type_mismatches(src: &str) -> Vec<String> {
    let (map, problems, synced) = prism_driver::compile_text("main.prism", src, &prism_driver::Options::default());
    assert!(synced.is_none());
    let text = prism_diag::render(&map, problems.diagnostics(), prism_diag::Color::Never);
    let errors = problems.diagnostics();
    assert!(!errors.is_empty() && errors.iter().all(|d| d.code == "type-mismatch"), "{text}");
    errors.iter().map(|d| prism_diag::render(&map, std::slice::from_ref(d), prism_diag::Color::Never)).collect()
}

#[test]
fn a_radix_sort_of_floats_is_refused_at_the_users_call() {
    // The library's instance fails inside `radix_rank_bit`; the error must still point the
    // user at the line of their program that asked for float keys.
    let src = r#"from prism.std.block import block_radix_sort

@prism("global")
@requires(grid[1], block[1], thread[32], smem=1360)
def k(x : ptr(float)):
    with group(block[1]):
        ex : shared(float[264]) @ block[1]
        keys : float[4] @ thread[1]
        block_radix_sort(keys, 4, ex, 0, 32)
"#;
    for one in type_mismatches(src) {
        assert!(
            one.contains("9 │         block_radix_sort(keys, 4, ex, 0, 32)")
                && one.contains("in `prism.std.block.block_radix_sort[float, 4]`, instantiated here"),
            "no label at the user's call:\n{one}"
        );
    }
}

#[test]
fn exchange_misuse_is_reported_by_the_simulator() {
    // An exchange array one item short of what `block_radix_sort` uses (256 items and 7
    // padding ones, at 64 threads of 4) is out of bounds, and
    // ranks that are not a permutation (every thread's items to the same 4 slots) make two
    // threads write one slot of `block_scatter_to_blocked`'s exchange: a race.
    let src = r#"
from prism.std.block import block_radix_sort, block_scatter_to_blocked

@prism("global")
@requires(grid[1], block[1], thread[32], smem=1632)
def short_exchange(x : ptr(const(int))):
    with group(block[1]):
        ex : shared(int[262]) @ block[1]
        keys : int[4] @ thread[1]
        t : int @ thread[1] = id()
        with group(thread[1]):
            for i in range(4):
                keys[i] = x[4 * t + i]
        block_radix_sort[int](keys, 4, ex, 0, 8)

@prism("global")
@requires(grid[1], block[1], thread[32], smem=1632)
def same_ranks(x : ptr(const(int))):
    with group(block[1]):
        ex : shared(int[264]) @ block[1]
        keys : int[4] @ thread[1]
        ranks : int[4] @ thread[1]
        with group(thread[1]):
            for i in range(4):
                keys[i] = x[i]
                ranks[i] = i
        block_scatter_to_blocked[int](keys, ranks, 4, ex)
"#;
    let synced = compiled(src);
    let module = Module::new(&synced);
    let x: Vec<i32> = (0..256).map(|i| (i * 37) % 256).collect();
    let race = |k: &prism_interp::ReportKind| matches!(k, prism_interp::ReportKind::Race(_));
    let out_of_bounds = |k: &prism_interp::ReportKind| matches!(k, prism_interp::ReportKind::OutOfBounds);
    for (kernel, want) in [("short_exchange", &out_of_bounds as &dyn Fn(&_) -> bool), ("same_ranks", &race)] {
        let o = module.launch(kernel, 1u32, 64u32, &[Arg::buffer(&x)], Config::default()).expect("launch");
        assert!(o.reports.iter().any(|r| want(&r.kind)), "{kernel}: {:?}", o.reports);
    }
}

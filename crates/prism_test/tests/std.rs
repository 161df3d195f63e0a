//! `prism.std` (issue 12): every module checks on its own, `docs/std.md` lists exactly the
//! functions the code defines with their signatures, and each function runs against a
//! plain-Rust reference.

use prism_interp::{Arg, Config, Module};
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
    block_sum, block_reduce, block_inclusive_sum, block_exclusive_sum, block_inclusive_scan,
    block_exclusive_scan, block_load_blocked, block_load_striped, block_store_blocked, block_store_striped,
)

K : constexpr(int) = 20

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
"#;
    format!(
        "ITEMS : constexpr(int) = {items}\n{}",
        src.replace(" T", &format!(" {ty}")).replace("[T", &format!("[{ty}")).replace("(T", &format!("({ty}"))
    )
}

/// What `collectives` computes, in f64 (every value is a small integer, exact in all three
/// types), for `blocks` blocks of `threads` threads over input `x` of `n` items.
fn reference(x: &[f64], n: usize, blocks: usize, threads: usize, items: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    const K: usize = 20;
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
            let xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 23) as f64 - 11.0).collect();
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

//! Split barriers in the simulator: the program of `tests/ui/run/split_barrier.prism` runs
//! clean with its arrive and wait where barrier motion put them, and races when either half
//! is moved past the access it must stay on the far side of.

use prism_interp::{Arg, Config, Module, ReportKind};

fn ir_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/ui/run/split_barrier.prism");
    let src = std::fs::read_to_string(path).expect("the run corpus is there");
    let (_, problems, synced) =
        prism_driver::compile_text("split_barrier.prism", &src, &prism_driver::Options::default());
    let synced = synced.unwrap_or_else(|| panic!("{problems:?}"));
    assert_eq!(synced.report().motion.split, 1, "{}", prism_ir::print(synced.ir()));
    prism_ir::print(synced.ir())
}

/// Runs IR text; the kinds of the reports under a few schedules, and the output.
fn run(text: &str) -> (Vec<ReportKind>, Vec<i32>) {
    let m = Module::new(&prism_driver::assemble(text).expect("valid IR"));
    let mut kinds = Vec::new();
    let mut out = Vec::new();
    for seed in [None, Some(1), Some(2), Some(3)] {
        let x: Vec<i32> = (0..128).collect();
        let args = [Arg::buffer(&x), Arg::buffer(&[0i32; 128])];
        let o = m.launch("reverse", 2, 64, &args, Config { seed, ..Config::default() }).expect("valid launch");
        kinds.extend(o.reports.iter().map(|r| r.kind));
        out = args[1].as_buffer().expect("buffer").to_vec::<i32>().expect("i32");
    }
    (kinds, out)
}

/// Moves the line starting with `what` to just after the first line after it that starts
/// with `past` (or, with `up`, to just before the last line before it that does).
fn move_line(text: &str, what: &str, past: &str, up: bool) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let from = lines.iter().position(|l| l.trim_start().starts_with(what)).expect("the line to move");
    let line = lines.remove(from);
    let to = if up {
        (0..from).rev().find(|&i| lines[i].trim_start().starts_with(past)).expect("the line to pass")
    } else {
        from + lines[from..].iter().position(|l| l.trim_start().starts_with(past)).expect("the line to pass") + 1
    };
    lines.insert(to, line);
    lines.join("\n") + "\n"
}

#[test]
fn the_moved_halves_run_clean() {
    let (kinds, out) = run(&ir_text());
    assert!(kinds.is_empty(), "{kinds:?}");
    let want: Vec<i32> = (0..128).map(|i| (i / 64) * 64 + 63 - i % 64 + i % 64).collect();
    assert_eq!(out, want);
}

#[test]
fn a_wait_after_the_read_races() {
    let text = ir_text();
    let bad = move_line(&text, "wait block[1]", "%21 = load", false);
    assert_ne!(bad, text);
    let (kinds, _) = run(&bad);
    assert!(kinds.iter().any(|k| matches!(k, ReportKind::Race(_))), "{kinds:?}\n{bad}");
}

#[test]
fn an_arrive_before_the_write_races() {
    let text = ir_text();
    let bad = move_line(&text, "arrive block[1]", "store %4", true);
    assert_ne!(bad, text);
    let (kinds, _) = run(&bad);
    assert!(kinds.iter().any(|k| matches!(k, ReportKind::Race(_))), "{kinds:?}\n{bad}");
}

/// A read between a thread's arrive and its wait is ordered after nothing the arrive stands
/// for: the simulator must compare with the barriers the reader has *passed*, not those it
/// has arrived at. Here only the second warp reads the first warp's elements (`t % 32`; the
/// first warp reads its own), so the only conflicting pairs are "first warp writes, second
/// reads". Every schedule must report the race, including those where the write comes
/// first, which the arrived count would wrongly order.
#[test]
fn a_read_between_arrive_and_wait_races_in_every_order() {
    let text = ir_text();
    let one_way =
        text.replacen("%19 = const 63", "%19 = const 32", 1).replacen("%20 = sub %19, %5", "%20 = rem %5, %19", 1);
    assert_ne!(one_way, text);
    // As motion placed it, the wait before the read: clean.
    let (kinds, _) = run(&one_way);
    assert!(kinds.is_empty(), "{kinds:?}\n{one_way}");
    let bad = move_line(&one_way, "wait block[1]", "%21 = load", false);
    assert_ne!(bad, one_way);
    let m = Module::new(&prism_driver::assemble(&bad).expect("valid IR"));
    for seed in [None, Some(1), Some(2), Some(3), Some(4), Some(5)] {
        let x: Vec<i32> = (0..128).collect();
        let args = [Arg::buffer(&x), Arg::buffer(&[0i32; 128])];
        let o = m.launch("reverse", 2, 64, &args, Config { seed, ..Config::default() }).expect("valid launch");
        assert!(
            o.reports.iter().any(|r| matches!(r.kind, ReportKind::Race(_))),
            "schedule {seed:?}: no race reported\n{bad}"
        );
    }
}

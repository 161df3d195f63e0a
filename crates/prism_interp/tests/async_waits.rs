//! Waits of asynchronous copies in the simulator: `tests/ui/accept/rules/async_pipeline.prism`
//! keeps three commit groups in flight and waits for each where its slot is read
//! (`asyncwait 2`, `1`, `0`); it runs clean there, and races when a wait lets its slot's
//! group stay in flight or comes after the read.

use prism_interp::{Arg, Config, Module, ReportKind};

fn ir_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/ui/accept/rules/async_pipeline.prism");
    let src = std::fs::read_to_string(path).expect("the corpus is there");
    let (_, problems, synced) =
        prism_driver::compile_text("async_pipeline.prism", &src, &prism_driver::Options::default());
    let synced = synced.unwrap_or_else(|| panic!("{problems:?}"));
    prism_ir::print(synced.ir())
}

/// Runs IR text under a few schedules: the kinds of the reports, and the output.
fn run(text: &str) -> (Vec<ReportKind>, Vec<f32>) {
    let m = Module::new(&prism_driver::assemble(text).expect("valid IR"));
    let x: Vec<f32> = (0..768).map(|i| i as f32).collect();
    let mut kinds = Vec::new();
    let mut out = Vec::new();
    for seed in [None, Some(1), Some(2), Some(3)] {
        let args = [Arg::buffer(&x), Arg::buffer(&[0.0f32; 64])];
        let o = m.launch("pipeline3", 2, 32, &args, Config { seed, ..Config::default() }).expect("valid launch");
        kinds.extend(o.reports.iter().map(|r| r.kind));
        out = args[1].as_buffer().expect("buffer").to_vec::<f32>().expect("f32");
    }
    (kinds, out)
}

fn want() -> Vec<f32> {
    (0..64)
        .map(|g| {
            let (b, t) = (g / 32, g % 32);
            let mut acc = 0.0f32;
            for s in 0..3 {
                for k in 0..4 {
                    acc += (384 * b + 128 * s + (4 * t + 4 + 33 * k) % 128) as f32;
                }
            }
            acc
        })
        .collect()
}

#[test]
fn each_slot_is_waited_for_where_it_is_read_and_the_run_is_clean() {
    let text = ir_text();
    let waits: Vec<&str> = text.lines().map(str::trim).filter(|l| l.starts_with("asyncwait")).collect();
    assert_eq!(waits.len(), 3, "{text}");
    assert!(waits[0].starts_with("asyncwait 2") && waits[1].starts_with("asyncwait 1"), "{waits:?}");
    assert!(waits[2].starts_with("asyncwait 0"), "{waits:?}");
    let (kinds, out) = run(&text);
    assert!(kinds.is_empty(), "{kinds:?}");
    assert_eq!(out, want());
}

#[test]
fn a_wait_that_leaves_the_slots_group_in_flight_races() {
    // `wait_group 3` completes nothing: the first slot's copies land at the next wait, after
    // other threads have read the slot.
    let text = ir_text();
    let bad = text.replacen("asyncwait 2", "asyncwait 3", 1);
    assert_ne!(bad, text);
    let (kinds, _) = run(&bad);
    assert!(kinds.iter().any(|k| matches!(k, ReportKind::Race(_))), "{kinds:?}\n{bad}");
}

#[test]
fn a_wait_after_the_barrier_races() {
    // The first wait moved past the split barrier's wait and into the loop that reads the
    // slot: the barrier no longer orders the copies before the other threads' reads.
    let text = ir_text();
    let mut lines: Vec<&str> = text.lines().collect();
    let from = lines.iter().position(|l| l.trim_start().starts_with("asyncwait 2")).expect("the first wait");
    let line = lines.remove(from);
    let to = from + lines[from..].iter().position(|l| l.trim_start().contains("= load")).expect("a load") + 1;
    lines.insert(to, line);
    let bad = lines.join("\n") + "\n";
    let (kinds, _) = run(&bad);
    assert!(kinds.iter().any(|k| matches!(k, ReportKind::Race(_))), "{kinds:?}\n{bad}");
}

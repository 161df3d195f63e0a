//! Synchronisation inference on kernels of many phases (`prism_test::gen::phases`): the
//! barriers it places, with every answer it takes from a kept search checked against a
//! search of its own edge. Review R48 found inference cubic in the phases of such kernels
//! (200 phases in a row took 7 s); `cargo bench -p prism_sync --bench sync` times them
//! (BENCHMARKS.md, "Synchronisation inference at scale").
//!
//! Small instances of every shape run on the simulator from
//! `tests/ui/run/inferred/phases_generated.prism`, which `tests/barriers.rs` uses to show
//! every barrier needed; the last test keeps that file equal to the generator's output.

use prism_driver::Options;
use prism_test::r#gen::phases::{Shape, phases};
use prism_types::perspective::Persp;

/// The barriers inference places in `src`, all over `unit`s, checking every kept search.
fn barriers(src: &str, unit: Persp) -> usize {
    let opts = Options { motion: false, optimize: false, check_sync_searches: true, ..Options::default() };
    let (_, problems, synced) = prism_driver::compile_text("phases.prism", src, &opts);
    let synced = synced.unwrap_or_else(|| panic!("the kernel has errors: {:#?}\n{src}", problems.diagnostics()));
    let report = synced.report();
    assert!(report.unresolved.is_empty(), "unresolved edges: {:?}", report.unresolved);
    assert!(report.barriers.iter().all(|b| b.scope == unit), "{:?}", report.barriers);
    report.barriers.len()
}

#[test]
fn every_shape_gets_its_barriers_with_every_search_checked() {
    for shape in Shape::ALL {
        for n in [1, 2, 3, 5, 8, 40] {
            assert_eq!(barriers(&phases(shape, n), shape.unit()), shape.barriers(n), "{shape:?} with {n} phases");
        }
    }
}

#[test]
fn the_run_file_is_the_generators() {
    let mut text = String::from(
        "# Run-only: small kernels of prism_test::gen::phases, whose barriers are all inferred.\n\
         # crates/prism_sync/tests/scale.rs keeps this file equal to the generator's output\n\
         # (`PRISM_BLESS=1 cargo test -p prism_sync --test scale` rewrites it); tests/barriers.rs\n\
         # removes each inferred barrier in turn, which must then show up as a data race.\n",
    );
    for shape in Shape::ALL {
        text.push('\n');
        text.push_str(&phases(shape, 5));
        text.push_str(&format!("\n# launch: {} --grid 1 --block 256 --arg out=zeros:f32:256\n", shape.kernel()));
    }
    let path = prism_test::repo_root().join("tests/ui/run/inferred/phases_generated.prism");
    if let Err(e) = prism_test::snapshot(&path, &text) {
        panic!("{e}");
    }
}

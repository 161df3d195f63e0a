//! A wgmma's accumulators are registers: the CUDA reads the asm's operands back into the
//! array right after the asynchronous issue, so shared or global memory given for them
//! would hold garbage until the wait. The checker refuses it (a thread-local array only,
//! directly or through device-function parameters that lead to one: `pointer-argument`,
//! `tests/ui/reject/rules/pointer-argument_10.prism`), and the simulator reports it at the
//! wgmma (`wgmma-pending`, review R27) for IR that reaches it anyway. The IR here is what
//! the pipeline made of such a program (a device function issuing into its pointer
//! parameter, called with a thread's slice of a shared array) before the checker refused
//! it, on 2026-11-30.

use prism_interp::{Arg, Config, Module, ReportKind};

#[test]
fn shared_accumulators_through_a_parameter_are_reported_at_the_wgmma() {
    let text = include_str!("ir/wgmma_accumulators_in_shared.pir");
    let m = Module::new(&prism_driver::assemble(text).expect("valid IR"));
    for seed in [None, Some(1), Some(2)] {
        let args = [Arg::buffer(&[0.0f32; 128])];
        let o = m.launch("k", 1, 128, &args, Config { seed, ..Config::default() }).expect("valid launch");
        let kinds: Vec<_> = o.reports.iter().map(|r| (r.kind, r.message.as_str())).collect();
        assert!(
            matches!(&kinds[..], [(ReportKind::WgmmaPending, m)] if m.contains("not a thread-local array")),
            "{seed:?}: {kinds:?}"
        );
    }
}

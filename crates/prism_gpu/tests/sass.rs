//! The SASS gate (no GPU needed): for every hand-written CUDA reference
//! `tests/sass/NAME.cu`, the CUDA `prism build` makes from `tests/ui/accept/kernels/NAME.prism`
//! and the reference are compiled for sm_90a with the flags `prism build` uses, disassembled
//! with `cuobjdump -sass`, and compared. The generated kernel must not be worse than the
//! expert's on what decides speed:
//!
//! - no larger stack frame (a local array indexed at run time lives there), no more
//!   spilled bytes, and registers at most 10% above the reference's;
//! - the same number of FFMA/HFMA2/HMMA/HGMMA instructions, in the whole kernel and in its
//!   main loop (the backward-branch range holding the most of them);
//! - the same global and shared memory instructions, counted by kind and width (`LDG.128`);
//! - no more barriers (`BAR`);
//! - at most 5% more instructions in the main loop, and in the whole kernel;
//! - no more shared-memory loads between the main loop's last barrier and the first math
//!   after it (wrapping round the back edge): loads whose latency nothing hides, as in a
//!   loop that meets at its barrier and then loads the step's first operands, where an
//!   expert's loop (kernel 51, cuBLAS) computes the last products while they arrive.
//!
//! The table is printed (`--nocapture`) and recorded in BENCHMARKS.md; a regression fails.
//! References under `tests/sass/pending/` belong to kernels with a known gap that
//! BENCHMARKS.md explains: they are compared and printed, and their gaps listed, but do not
//! fail the gate until the gap is closed and the reference moves up a directory.
//! Without nvcc and cuobjdump (`scripts/install-nvcc.sh` installs both) the test is ignored
//! with a message, except under CI, where it fails.

mod common;

use prism_gpu::toolchain;
use prism_test::{repo_root, synced};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let tools = toolchain::find_nvcc().zip(toolchain::find_cuobjdump());
    common::run_with_tools(
        "generated_sass_is_no_worse_than_hand_written_cuda",
        tools,
        "nvcc or cuobjdump",
        |(nvcc, cuobjdump)| gate(&nvcc, &cuobjdump),
    )
}

/// What the gate compares of one kernel.
#[derive(Debug, Default)]
struct Profile {
    registers: u32,
    stack_bytes: u32,
    spill_bytes: u32,
    /// Instruction counts by class (`FFMA`, `LDG.128`, `BAR`, ...) in the whole kernel.
    all: BTreeMap<String, u32>,
    /// The same in the main loop.
    main_loop: BTreeMap<String, u32>,
    total: u32,
    loop_total: u32,
    /// Shared loads between the main loop's last barrier and the first math instruction
    /// after it (round the back edge), if the loop has a barrier.
    exposed: Option<u32>,
}

/// The classes the gate compares: math that decides throughput, memory by kind and width,
/// barriers.
fn class(op: &str) -> Option<String> {
    let base = op.split('.').next().unwrap_or(op);
    match base {
        "FFMA" | "HFMA2" | "HMMA" | "HGMMA" | "DFMA" => Some(base.to_string()),
        "LDG" | "LDS" | "STG" | "STS" | "LDSM" | "LDGSTS" => {
            let width = op.split('.').find_map(|m| m.parse::<u32>().ok()).unwrap_or(32);
            Some(format!("{base}.{width}"))
        }
        "BAR" => Some("BAR".into()),
        _ => None,
    }
}

fn is_math(c: &str) -> bool {
    matches!(c, "FFMA" | "HFMA2" | "HMMA" | "HGMMA" | "DFMA")
}

/// Parses `cuobjdump -sass` output: `/*0a80*/  @!P3 FFMA R29, ... ;`.
fn profile_sass(sass: &str, ptxas: &str) -> Profile {
    let mut insts: Vec<(u32, String, Option<u32>)> = Vec::new();
    for line in sass.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix("/*") else { continue };
        let Some((addr, body)) = rest.split_once("*/") else { continue };
        let Ok(addr) = u32::from_str_radix(addr, 16) else { continue };
        let mut words = body.split_whitespace();
        let mut op = words.next().unwrap_or("");
        // `@!PT` is never true: ptxas pads the code with such instructions (`@!PT LDS RZ,
        // [RZ]`), which never run and are not part of the algorithm.
        if op == "@!PT" {
            continue;
        }
        if op.starts_with('@') {
            op = words.next().unwrap_or("");
        }
        if op.is_empty() || op.starts_with("/*") {
            continue;
        }
        let operands: Vec<&str> = words.collect();
        let target = (op == "BRA")
            .then(|| {
                operands
                    .first()
                    .and_then(|w| u32::from_str_radix(w.trim_start_matches("0x").trim_end_matches(';'), 16).ok())
            })
            .flatten();
        // `HFMA2 R4, -RZ, RZ, 0, 0` is how ptxas moves a constant into a register, not math.
        let op = if op.starts_with("HFMA2") && operands.join(" ").contains("-RZ, RZ") { "MOV" } else { op };
        insts.push((addr, op.to_string(), target));
    }
    let mut p = Profile::default();
    for (_, op, _) in &insts {
        p.total += 1;
        if let Some(c) = class(op) {
            *p.all.entry(c).or_default() += 1;
        }
    }
    // The main loop: among backward branches, the range [target, branch] with the most math.
    let mut best: Option<(u32, u32, u32)> = None;
    for (at, _, target) in &insts {
        let Some(to) = *target else { continue };
        if to > *at {
            continue;
        }
        let math =
            insts.iter().filter(|(a, op, _)| *a >= to && a <= at && class(op).is_some_and(|c| is_math(&c))).count()
                as u32;
        if best.is_none_or(|(_, _, m)| math > m) {
            best = Some((to, *at, math));
        }
    }
    if let Some((from, to, _)) = best {
        for (a, op, _) in &insts {
            if *a >= from && *a <= to {
                p.loop_total += 1;
                if let Some(c) = class(op) {
                    *p.main_loop.entry(c).or_default() += 1;
                }
            }
        }
        let body: Vec<&String> = insts.iter().filter(|(a, _, _)| *a >= from && *a <= to).map(|(_, op, _)| op).collect();
        if let Some(bar) = body.iter().rposition(|op| op.starts_with("BAR")) {
            let after = body[bar + 1..].iter().chain(body[..bar].iter());
            let mut loads = 0;
            for op in after {
                if class(op).is_some_and(|c| is_math(&c)) {
                    break;
                }
                loads += u32::from(op.starts_with("LDS"));
            }
            p.exposed = Some(loads);
        }
    }
    for line in ptxas.lines() {
        if let Some(i) = line.find("Used ") {
            p.registers = line[i + 5..].split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
        }
        if let Some(i) = line.find(" bytes stack frame") {
            p.stack_bytes = line[..i].split_whitespace().last().and_then(|n| n.parse().ok()).unwrap_or(0);
        }
        if line.contains("spill stores") {
            p.spill_bytes += line
                .split(',')
                .filter(|part| part.contains("spill"))
                .filter_map(|part| part.split_whitespace().next()?.parse::<u32>().ok())
                .sum::<u32>();
        }
    }
    p
}

/// Compiles `cu` to `cubin` (in the test's scratch directory, never beside the source) and
/// profiles its SASS.
fn compile(nvcc: &Path, cuobjdump: &Path, cu: &Path, cubin: &Path) -> Result<Profile, String> {
    let mut cmd = Command::new(nvcc);
    cmd.args(toolchain::flags("sm_90a")).args(["-cubin", "-Xptxas", "-v", "-o"]).arg(cubin).arg(cu);
    let out = cmd.output().map_err(|e| format!("cannot run nvcc: {e}"))?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("nvcc failed on {}:\n{log}", cu.display()));
    }
    let sass =
        Command::new(cuobjdump).arg("-sass").arg(cubin).output().map_err(|e| format!("cannot run cuobjdump: {e}"))?;
    if !sass.status.success() {
        return Err(format!("cuobjdump failed: {}", String::from_utf8_lossy(&sass.stderr)));
    }
    Ok(profile_sass(&String::from_utf8_lossy(&sass.stdout), &log))
}

fn gate(nvcc: &Path, cuobjdump: &Path) -> Result<(), String> {
    let root = repo_root();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sass-gate");
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let refs = prism_test::files_with_extension(&root.join("tests/sass"), "cu");
    if refs.is_empty() {
        return Err("no hand-written references in tests/sass".into());
    }
    let mut table = String::from(
        "| kernel | registers (prism / hand) | stack frame, spills | math whole (prism / hand) | math main loop | main-loop instructions | all instructions | loads after the loop's barrier | memory and barriers |\n| --- | --: | --: | --: | --: | --: | --: | --: | --- |\n",
    );
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for hand_cu in &refs {
        let name = hand_cu.file_stem().expect("a name").to_string_lossy().into_owned();
        // `tests/sass/pending/`: kernels with a known, documented gap (BENCHMARKS.md). They
        // are compared and printed, their gaps listed, but they do not fail the gate.
        let pending = hand_cu.parent().and_then(Path::file_name).is_some_and(|d| d == "pending");
        let src_path = root.join("tests/ui/accept/kernels").join(format!("{name}.prism"));
        let src = std::fs::read_to_string(&src_path).map_err(|e| format!("{}: {e}", src_path.display()))?;
        let s = synced(&name, &src, &prism_driver::Options::default())?;
        let out = prism_cuda::emit(&s, &prism_cuda::Options { source: Some(src), ..prism_cuda::Options::default() });
        let ours_cu = tmp.join(format!("{name}.prism.cu"));
        std::fs::write(&ours_cu, &out.text).map_err(|e| e.to_string())?;
        let ours = compile(nvcc, cuobjdump, &ours_cu, &tmp.join(format!("{name}.prism.cubin")))?;
        let hand = compile(nvcc, cuobjdump, hand_cu, &tmp.join(format!("{name}.hand.cubin")))?;
        let math = |m: &BTreeMap<String, u32>| {
            m.iter().filter(|(c, _)| is_math(c)).map(|(c, n)| format!("{c} {n}")).collect::<Vec<_>>().join(", ")
        };
        let memory = |m: &BTreeMap<String, u32>| {
            m.iter().filter(|(c, _)| !is_math(c)).map(|(c, n)| format!("{c} {n}")).collect::<Vec<_>>().join(", ")
        };
        let label = if pending { format!("{name} (pending)") } else { name.clone() };
        let exposed = |e: Option<u32>| e.map_or("-".to_string(), |n| n.to_string());
        table.push_str(&format!(
            "| {label} | {} / {} | {}, {} / {}, {} | {} / {} | {} / {} | {} / {} | {} / {} | {} / {} | {} / {} |\n",
            ours.registers,
            hand.registers,
            ours.stack_bytes,
            ours.spill_bytes,
            hand.stack_bytes,
            hand.spill_bytes,
            math(&ours.all),
            math(&hand.all),
            math(&ours.main_loop),
            math(&hand.main_loop),
            ours.loop_total,
            hand.loop_total,
            ours.total,
            hand.total,
            exposed(ours.exposed),
            exposed(hand.exposed),
            memory(&ours.all),
            memory(&hand.all),
        ));
        let mut fail = |what: String| {
            if pending {
                known.push(format!("{name} (pending): {what}"))
            } else {
                failures.push(format!("{name}: {what}"))
            }
        };
        if ours.stack_bytes > hand.stack_bytes {
            fail(format!("a stack frame of {} bytes, the reference {}", ours.stack_bytes, hand.stack_bytes));
        }
        if ours.spill_bytes > hand.spill_bytes {
            fail(format!("spills {} bytes, the reference {}", ours.spill_bytes, hand.spill_bytes));
        }
        if f64::from(ours.registers) > f64::from(hand.registers) * 1.10 {
            fail(format!("{} registers, more than 10% above the reference's {}", ours.registers, hand.registers));
        }
        if math(&ours.all) != math(&hand.all) || math(&ours.main_loop) != math(&hand.main_loop) {
            fail("a different number of FMA/MMA instructions".into());
        }
        let mem_classes: std::collections::BTreeSet<&String> =
            ours.all.keys().chain(hand.all.keys()).filter(|c| !is_math(c) && c.as_str() != "BAR").collect();
        for c in mem_classes {
            let (a, b) = (ours.all.get(c).copied().unwrap_or(0), hand.all.get(c).copied().unwrap_or(0));
            if a != b {
                fail(format!("{a} {c} instructions, the reference {b}"));
            }
        }
        if ours.all.get("BAR") > hand.all.get("BAR") {
            fail("more barriers than the reference".into());
        }
        if f64::from(ours.loop_total) > f64::from(hand.loop_total) * 1.05 {
            fail(format!("{} main-loop instructions, more than 5% above {}", ours.loop_total, hand.loop_total));
        }
        if ours.exposed.unwrap_or(0) > hand.exposed.unwrap_or(0) {
            fail(format!(
                "{} shared loads wait between the main loop's barrier and its first FMA, the reference {}",
                exposed(ours.exposed),
                exposed(hand.exposed)
            ));
        }
        if f64::from(ours.total) > f64::from(hand.total) * 1.05 {
            fail(format!("{} instructions, more than 5% above {}", ours.total, hand.total));
        }
    }
    // Printed for BENCHMARKS.md; libtest shows it with --nocapture.
    #[allow(clippy::print_stdout)]
    {
        print!("{table}");
        for k in &known {
            println!("known gap, not gated: {k}");
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(format!("{table}\n{}", failures.join("\n"))) }
}

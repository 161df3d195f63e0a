//! The run corpus: every accepted program that computes something runs on the simulator
//! and is compared with a plain-Rust reference of what its header comment says it computes.
//!
//! Each case picks sizes that exercise the kernel (several blocks, partial tiles where the
//! kernel guards them, loops that run more than once), launches with every dynamic check on,
//! requires a clean outcome, repeats the launch under three random schedules (the results of
//! a race-free program must not depend on the schedule), and compares every output buffer.
//! `tests/ui/run/README.md` describes the corpus, its tolerances and what it leaves out.

#[path = "run/kernels.rs"]
mod kernels;
#[path = "run/rules.rs"]
mod rules;
#[path = "run/seeds.rs"]
mod seeds;
#[path = "run/support.rs"]
mod support;

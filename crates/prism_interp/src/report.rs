//! What a run found: dynamic-check reports, and their diagnostics.

use crate::shadow::RaceKind;
use prism_diag::Diagnostic;
use prism_span::Span;

/// A thread of the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Thread {
    /// Block index.
    pub block: u32,
    /// Thread index in the block.
    pub thread: u32,
}

impl std::fmt::Display for Thread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "block {} thread {}", self.block, self.thread)
    }
}

/// Kinds of dynamic-check findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReportKind {
    /// Conflicting accesses without synchronisation.
    Race(RaceKind),
    /// A barrier or collective reached by part of its unit, by a misaligned group, or by
    /// threads at different barriers.
    Divergence,
    /// An access outside its allocation.
    OutOfBounds,
    /// A vector access or asynchronous copy whose address is not a multiple of its size.
    Misaligned,
    /// Every remaining thread is waiting and none can proceed.
    Deadlock,
    /// A value that must be the same in every thread of a unit is not.
    NonUniform,
    /// Integer division by zero.
    DivisionByZero,
    /// A thread called `trap()` (a failed run-time check; on the GPU the launch fails).
    Trap,
    /// A `range` loop's counter stepped past its type's range.
    CounterOverflow,
    /// A wgmma's accumulators used before `wgmma_wait` completed its group.
    WgmmaPending,
    /// An mbarrier used before `mbarrier_init`, after `mbarrier_inval`, initialised twice,
    /// or given an arrival count out of range.
    MbarrierMisuse,
    /// A read of shared memory that no thread of the block has written (its value on a GPU
    /// is undefined).
    UninitializedRead,
    /// Something the simulator cannot run.
    NotSimulated,
    /// The run exceeded its step budget (an infinite loop, or a spin-wait that never ends).
    FuelExhausted,
    /// No block finished within the wall-clock stall limit.
    TimeLimit,
}

impl ReportKind {
    /// The diagnostic code.
    pub fn code(self) -> &'static str {
        match self {
            ReportKind::Race(_) => "data-race",
            ReportKind::Divergence => "barrier-divergence",
            ReportKind::OutOfBounds => "out-of-bounds",
            ReportKind::Misaligned => "misaligned-access",
            ReportKind::Deadlock => "deadlock",
            ReportKind::NonUniform => "non-uniform",
            ReportKind::DivisionByZero => "division-by-zero",
            ReportKind::Trap => "trap",
            ReportKind::CounterOverflow => "counter-overflow",
            ReportKind::MbarrierMisuse => "mbarrier-misuse",
            ReportKind::WgmmaPending => "wgmma-pending",
            ReportKind::UninitializedRead => "uninitialized-read",
            ReportKind::NotSimulated => "not-simulated",
            ReportKind::FuelExhausted => "fuel-exhausted",
            ReportKind::TimeLimit => "time-limit",
        }
    }

    /// Whether the run stops at this finding (races are collected; the rest stop the run
    /// because nothing after them is meaningful).
    pub fn fatal(self) -> bool {
        !matches!(self, ReportKind::Race(_))
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// What.
    pub kind: ReportKind,
    /// A one-line description.
    pub message: String,
    /// Where it happened.
    pub span: Span,
    /// The thread that found it.
    pub thread: Thread,
    /// The other party (the earlier access of a race, the other barrier, ...).
    pub other: Option<(Span, Option<Thread>, String)>,
    /// Extra prose.
    pub notes: Vec<String>,
}

impl Report {
    /// The diagnostic users see.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d =
            Diagnostic::error(self.kind.code(), self.message.clone(), self.span).with_label(format!("{}", self.thread));
        if let Some((span, thread, what)) = &self.other {
            let label = match thread {
                Some(t) => format!("{what} ({t})"),
                None => what.clone(),
            };
            d = d.with_secondary(*span, label);
        }
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d
    }
}

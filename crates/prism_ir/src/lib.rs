//! The kernel IR shared by the simulator and the CUDA backend.
//!
//! ```text
//! tir::Program --lower--> ir::Program --(prism_sync)--> ir::Program with barriers
//! ```
//!
//! [`ir`] defines the IR, [`lower()`] produces it from the typed IR, [`print`] and [`parse`]
//! give it a text form (`print(parse(print(p))) == print(p)`), and [`verify()`] checks its
//! invariants. See `docs/dev/architecture.md`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod asyncwait;
pub mod contract;
pub mod entities;
pub mod ir;
mod lower;

pub use entities::{AccessId, FuncId, LocalId, MemId, Reg};
pub use lower::lower;
pub mod parse;
pub mod print;
mod verify;

pub use parse::parse;
pub use print::print;
pub use verify::{VerifyError, verify};

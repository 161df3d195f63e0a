//! The Prism language server, started by `prism lsp`: the compiler's front end and
//! synchronisation inference, answering an editor over the Language Server Protocol.
//!
//! ```text
//! client ──JSON-RPC (stdio)──► server.rs  documents, staleness, dispatch
//!                                  │
//!                                  ▼
//!                            analysis.rs  prism_driver::analyse over an overlay of open
//!                                  │      documents (files.rs) ──► Snapshot
//!                                  ▼
//!              index.rs (names ↔ definitions), features.rs (LSP answers), pos.rs (offsets)
//! ```
//!
//! The server shows what `prism check` reports (same codes, messages and labels), the type
//! and perspective of a name and the code perspective at the cursor, definitions and
//! references across imports (into the standard library too), the document's symbols, and
//! inlay hints for every barrier synchronisation inference inserts and every pipeline's wait
//! and barrier, as the CUDA backend prints them after barrier motion and the optimiser, and
//! for the perspective of every declaration written without `@`. `docs/editors.md`
//! describes the features and the incrementality design.
//!
//! Like the CLI, this crate is a front end and does IO: the protocol on stdin and stdout
//! ([`transport`]: framing with a size cap, error responses to bodies that are not
//! messages; this crate never prints, and a broken stream is an error `prism lsp`
//! reports) and the imported modules on disk ([`files`]); and it writes the standard
//! library's modules to a cache directory so that definitions in them can be shown
//! ([`stdlib`]).

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod analysis;
pub mod features;
pub mod files;
pub mod index;
pub mod pos;
mod server;
pub mod stdlib;
pub mod transport;

pub use server::{Ending, run_stdio, serve};

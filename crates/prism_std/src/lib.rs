//! `prism.std`, the standard library of collectives that ships with the toolchain.
//!
//! The library is written in Prism: each module is a `.prism` file under `std/`, bundled
//! into the compiler as text so that it needs no installation and cannot be shadowed by a
//! user's file. `import prism.std.warp` names `std/warp.prism`. The driver
//! (`prism_driver`) loads these modules like any other and checks them against their
//! signatures; nothing here is special to the checker. `docs/std.md` documents every
//! function.

#![deny(missing_docs)]

/// The modules, by their path under `prism.std`, with their source text.
pub const MODULES: &[(&str, &str)] = &[
    ("thread", include_str!("../std/thread.prism")),
    ("warp", include_str!("../std/warp.prism")),
    ("block", include_str!("../std/block.prism")),
    ("device", include_str!("../std/device.prism")),
];

/// The source of module `prism.std.<path>` (`path` without the `prism.std.` prefix, its
/// parts joined by `.`), if there is one.
pub fn source(path: &str) -> Option<&'static str> {
    MODULES.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

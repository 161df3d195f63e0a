//! Entity references: `u32` newtypes whose `Display` is the IR text notation.
//!
//! `%7` is a register, `$2` a thread-local array, `#3` a memory name, `!5` a memory access,
//! `@name` a function. Debug output, verifier messages and test files use one notation.

use std::fmt;

macro_rules! entity {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as `usize`.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(
    /// A virtual register of a function (`%n`): one scalar or pointer per thread.
    Reg,
    "%"
);
entity!(
    /// A thread-local array of a function (`$n`).
    LocalId,
    "$"
);
entity!(
    /// A name of memory in a function (`#n`): a pointer parameter, a shared array, a
    /// thread-local array passed by pointer, or a view made by partition, claim or async.
    MemId,
    "#"
);
entity!(
    /// A memory access site (`!n`): a load, a store, an atomic or an asynchronous copy.
    AccessId,
    "!"
);
entity!(
    /// A function of a program, by index.
    FuncId,
    "fn"
);

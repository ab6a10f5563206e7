//! passlab: a workbench for compiler experiments on LLVM 19 IR, with a pass
//! infrastructure in the style of Apache TVM's.
//!
//! * [`Module`]: IR from text, bitcode, C or C++ (clang-19), linked sources;
//!   printing, statistics, verification, copies, fingerprints.
//! * Passes ([`pass`]): [`PassInfo`], module, function, sequential, LLVM and
//!   PrintIR passes; [`Pass::apply`](trait.Pass.html#method.apply) is
//!   transactional.
//! * [`PassContext`]: opt level, required and disabled passes, typed config
//!   and instruments, entered in nested scopes.
//! * [`registry`]: every Rust pass and every pass LLVM's parser knows.
//! * [`pipeline`]: pipeline text, and the default pipeline per opt level.
//! * [`prelude`]: the API passes are written against; [`user`]: passes
//!   written in Rust at run time (evcxr) and run like any other.
//!
//! ```
//! use passlab::{pipeline, Module, PassContext};
//! let mut m = Module::from_c("int sq(int x) { return x * x; }", "sq.c").unwrap();
//! let before = m.stats().instructions;
//! let _scope = PassContext::inherit().with_opt_level(2).enter().unwrap();
//! pipeline::parse("mem2reg,instcombine").unwrap().apply(&mut m).unwrap();
//! assert!(m.stats().instructions < before);
//! ```

#![warn(clippy::undocumented_unsafe_blocks)]
// The body of an `unsafe fn` is not one unsafe block: each unsafe
// operation in it is a block of its own with its SAFETY note.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod batch;
pub mod chart;
pub mod child;
pub mod config;
pub mod console;
pub mod context;
pub mod diff;
mod error;
pub mod explore;
mod ffi;
pub mod folder;
pub mod graph;
pub mod highlight;
pub mod info;
pub mod instrument;
pub mod interrupt;
pub mod jit;
pub mod llvm;
pub mod module;
pub mod pass;
pub mod passes;
pub mod pipeline;
pub mod prelude;
pub mod reduce;
pub mod rng;
pub mod session;
pub mod sweep;
pub mod table;
pub mod tune;
pub mod user;

pub use config::{ConfigOption, ConfigType, ConfigValue};
pub use context::{ContextGuard, PassContext};
pub use error::{nearest_names, panic_message, panic_point, Error, ErrorKind, Result};
pub use instrument::Instrument;
pub use module::{Lang, Module, Snapshot, Source, Stats};
pub use pass::registry;
pub use pass::{FunctionPass, LlvmPass, ModulePass, Pass, PassInfo, PassRef, PrintIr, Sequential};

/// The guide's Rust examples (`docs/src/`), compiled and run as the
/// library's doctests (`repl/tests/readme.rs` runs its other examples).
#[cfg(doctest)]
#[doc = include_str!("../docs/src/library.md")]
pub struct LibraryExamples;

#[cfg(doctest)]
#[doc = include_str!("../docs/src/instruments.md")]
pub struct InstrumentExamples;

#[cfg(doctest)]
#[doc = include_str!("../docs/src/jit.md")]
pub struct JitExamples;

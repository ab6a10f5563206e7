//! The languages a source can be in (its own file: both `source.rs`,
//! which describes an input, and `clang.rs`, which compiles C and C++, need
//! it, and neither needs the other's reason to change).

use crate::{Error, Result};
use std::path::Path;

/// The language of a source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// LLVM IR text or bitcode (told apart by the bitcode magic).
    Llvm,
    C,
    Cpp,
}

impl Lang {
    /// The language a file name's extension says, if it says one.
    pub fn from_extension(path: &Path) -> Option<Lang> {
        match path.extension()?.to_str()? {
            "ll" | "bc" => Some(Lang::Llvm),
            "c" | "h" => Some(Lang::C),
            "cpp" | "cc" | "cxx" | "c++" | "hpp" => Some(Lang::Cpp),
            _ => None,
        }
    }

    /// Parses the words users type: `llvm` (or `ll`, `ir`), `c`, `cpp` (`c++`).
    pub fn parse(word: &str) -> Result<Lang> {
        match word {
            "llvm" | "ll" | "ir" => Ok(Lang::Llvm),
            "c" => Ok(Lang::C),
            "cpp" | "c++" | "cxx" => Ok(Lang::Cpp),
            other => Err(Error::Invalid(format!(
                "unknown language '{other}'; valid are: llvm, c, cpp"
            ))),
        }
    }
}

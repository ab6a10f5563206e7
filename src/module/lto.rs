//! Link-time optimization's link, as `clang -flto` and lld do it: units
//! as `clang -flto -c` writes them after their pre-link pipeline (with
//! their module summaries; `Source::for_lto`), linked by LLVM's own LTO
//! (`llvm::lto::LTO`, in a forked child) with the symbol resolutions lld
//! gives, stopped where lld would run `lto<On>`: the combined module,
//! internalized, with the definitions the summaries show to be dead left
//! out. passlab runs the link-time pipeline itself (`:run lto<O2>`), under
//! the instruments.

use super::Module;
use crate::ffi;
use crate::{Error, Result};
use std::ffi::CString;

impl Module {
    /// Links `units` — each one's name and its bitcode as `clang -flto -c`
    /// writes it ([`Source::for_lto`](super::Source::for_lto)) — as lld's
    /// LTO links them, in their order, up to its link-time pipeline; the
    /// module is named `name`. An executable when a unit defines `main`
    /// (then only `main` stays visible from outside and the rest is
    /// internalized); otherwise as a shared library (every symbol of
    /// default visibility stays visible).
    ///
    /// An interrupt (`passlab::interrupt`) requested before it returns
    /// ends it with [`Error::Interrupted`] and no module: the link's child
    /// is killed, and a request is also looked for before the fork and
    /// after the linked module is parsed (in this process, where there is
    /// no child to kill).
    pub fn link_for_lto(units: &[(&str, &[u8])], name: &str) -> Result<Module> {
        let interrupted = || Error::Interrupted {
            pass: "the link-time link".into(),
        };
        // Not a fork for a load already asked to stop (the units' compile
        // saw no request, which may have come just after).
        if crate::interrupt::requested() {
            return Err(interrupted());
        }
        let names = units
            .iter()
            .map(|(n, _)| {
                CString::new(*n).map_err(|_| Error::Nul {
                    what: "a unit's name",
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // Reading a unit's symbols may parse its inline assembly, which
        // needs the targets; registered before the fork (see
        // `clang::compile`).
        // SAFETY: registers LLVM's targets once; no arguments.
        unsafe { ffi::plab_init_targets() };
        // In a child: a crash of LLVM costs the child.
        let bytes = crate::child::in_child(|| {
            let data: Vec<*const std::os::raw::c_char> =
                units.iter().map(|(_, b)| b.as_ptr() as *const _).collect();
            let lens: Vec<usize> = units.iter().map(|(_, b)| b.len()).collect();
            let names: Vec<*const std::os::raw::c_char> =
                names.iter().map(|n| n.as_ptr()).collect();
            let mut sinks = ffi::Sinks::default();
            // SAFETY: the three arrays hold `units.len()` entries each:
            // pointers to bitcode of the given lengths and NUL-terminated
            // names, all alive (in `units` and `names`) for the call;
            // `sinks` is the `Sinks` both sink functions expect.
            let ok = unsafe {
                ffi::plab_lto_link(
                    data.as_ptr(),
                    lens.as_ptr(),
                    names.as_ptr(),
                    units.len(),
                    ffi::SINK_FIRST,
                    ffi::SINK_SECOND,
                    sinks.user(),
                )
            };
            if ok {
                Ok(sinks.first)
            } else {
                Err(sinks.second_text())
            }
        })
        .map_err(|e| match e {
            crate::child::ChildError::Interrupted => interrupted(),
            e => Error::Invalid(format!("cannot link for LTO: {}", e.message("LLVM's LTO"))),
        })?;
        let m = Module::from_bitcode(&bytes, name)?;
        // Parsing a whole program takes a while: a request that came
        // meanwhile (or while the child's result was read) ends the link,
        // and the module is dropped, not handed to the caller to load.
        if crate::interrupt::requested() {
            return Err(interrupted());
        }
        Ok(m)
    }
}

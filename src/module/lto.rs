//! Link-time optimization's link, as `clang -flto` and lld do it: each
//! unit written as `clang -flto -c` writes it after its pre-link pipeline
//! (with its module summary), then linked by LLVM's own LTO
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
    /// Links `units` (each already through its pre-link pipeline,
    /// `lto-pre-link<On>`) as lld's LTO links them, in their order, up to
    /// its link-time pipeline; the module is named `name`. An executable
    /// when a unit defines `main` (then only `main` stays visible from
    /// outside and the rest is internalized); otherwise as a shared
    /// library (every symbol of default visibility stays visible).
    pub fn link_for_lto(units: &[Module], name: &str) -> Result<Module> {
        let executable = units
            .iter()
            .any(|m| m.defined_functions().iter().any(|f| f == "main"));
        let names = units
            .iter()
            .map(|m| {
                CString::new(m.name())
                    .map_err(|_| Error::Invalid("a unit's name contains NUL".into()))
            })
            .collect::<Result<Vec<_>>>()?;
        // Reading a unit's symbols may parse its inline assembly, which
        // needs the targets; registered before the fork (see
        // `clang::compile`).
        // SAFETY: registers LLVM's targets once; no arguments.
        unsafe { ffi::plab_init_targets() };
        // All of it in a child: the units' summaries and bitcode are
        // written there (the session's modules stay as they are), and a
        // crash of LLVM costs the child.
        let bytes = crate::child::in_child(|| {
            let mut inputs = Vec::with_capacity(units.len());
            for m in units {
                let mut sinks = ffi::Sinks::default();
                // SAFETY: `m` owns its live module (this child's copy);
                // `sinks` is the `Sinks` both sink functions expect, alive
                // for the call.
                let ok = unsafe {
                    ffi::plab_write_lto_bitcode(
                        m.raw(),
                        ffi::SINK_FIRST,
                        ffi::SINK_SECOND,
                        sinks.user(),
                    )
                };
                if !ok {
                    return Err(format!("{}: {}", m.name(), sinks.second_text()));
                }
                inputs.push(sinks.first);
            }
            let data: Vec<*const std::os::raw::c_char> =
                inputs.iter().map(|b| b.as_ptr() as *const _).collect();
            let lens: Vec<usize> = inputs.iter().map(Vec::len).collect();
            let names: Vec<*const std::os::raw::c_char> =
                names.iter().map(|n| n.as_ptr()).collect();
            let mut sinks = ffi::Sinks::default();
            // SAFETY: the three arrays hold `inputs.len()` entries each:
            // pointers to bitcode of the given lengths and NUL-terminated
            // names, all alive (in `inputs` and `names`) for the call;
            // `sinks` is the `Sinks` both sink functions expect.
            let ok = unsafe {
                ffi::plab_lto_link(
                    data.as_ptr(),
                    lens.as_ptr(),
                    names.as_ptr(),
                    inputs.len(),
                    executable,
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
            crate::child::ChildError::Interrupted => Error::Interrupted {
                pass: "the link-time link".into(),
            },
            e => Error::Invalid(format!("cannot link for LTO: {}", e.message("LLVM's LTO"))),
        })?;
        Module::from_bitcode(&bytes, name)
    }
}

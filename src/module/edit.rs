//! What the layers above ask of a module's IR instead of touching LLVM
//! themselves (they forbid `unsafe` code: `tests/layers.rs`): the
//! reducer's check for undefined behaviour a reduction made, and the
//! removals behind `strip-dead-internals` and `Module::extract`.

use super::Module;
use crate::ffi;
use llvm_sys::core::*;

impl Module {
    /// Whether a function of the module has an `alloca` every access to which is
    /// undefined behaviour, as reductions easily make: one of a constant zero
    /// elements (llvm-reduce's operands-to-zero makes them), or one that is
    /// read but never written (a store removed; its loads read whatever an
    /// earlier call left in that stack slot, which a pipeline may change
    /// without a bug). Painting fresh memory (`jit::paint_fresh_memory`)
    /// catches reads of memory no one wrote; this catches the slot another
    /// frame wrote.
    pub fn has_unsound_alloca(&self) -> bool {
        use llvm_sys::core::*;
        use llvm_sys::prelude::LLVMValueRef;
        use llvm_sys::LLVMOpcode::*;
        /// How `v` (the alloca or an address computed from it) is used: (read,
        /// written or escaped), following address computations.
        ///
        /// # Safety
        /// `v` is a live value of a module nothing changes during the call.
        unsafe fn uses(v: LLVMValueRef, depth: u32) -> (bool, bool) {
            // SAFETY: what this function's callers guarantee (its `# Safety`).
            unsafe {
                let (mut read, mut written) = (false, false);
                let mut u = LLVMGetFirstUse(v);
                while !u.is_null() {
                    let user = LLVMGetUser(u);
                    if LLVMIsAInstruction(user).is_null() {
                        written = true;
                    } else {
                        match LLVMGetInstructionOpcode(user) {
                            LLVMLoad => read = true,
                            // Written when it is the address; escaped when stored.
                            LLVMStore => written = true,
                            LLVMGetElementPtr | LLVMBitCast | LLVMAddrSpaceCast if depth < 8 => {
                                let (r, w) = uses(user, depth + 1);
                                read |= r;
                                written |= w;
                            }
                            // Calls (memcpy, memset, a callee that writes it),
                            // lifetime markers, phis, selects, comparisons: taken
                            // as writes, so only a plain read-only slot counts.
                            _ => written = true,
                        }
                    }
                    u = LLVMGetNextUse(u);
                }
                (read, written)
            }
        }
        // SAFETY: walks the live module's functions, blocks, instructions and
        // their uses, only reading them.
        unsafe {
            let mut f = LLVMGetFirstFunction(self.raw());
            while !f.is_null() {
                let mut b = LLVMGetFirstBasicBlock(f);
                while !b.is_null() {
                    let mut i = LLVMGetFirstInstruction(b);
                    while !i.is_null() {
                        if LLVMGetInstructionOpcode(i) == LLVMAlloca {
                            let n = LLVMGetOperand(i, 0);
                            if !n.is_null()
                                && !LLVMIsAConstantInt(n).is_null()
                                && LLVMConstIntGetZExtValue(n) == 0
                            {
                                return true;
                            }
                            if let (true, false) = uses(i, 0) {
                                return true;
                            }
                        }
                        i = LLVMGetNextInstruction(i);
                    }
                    b = LLVMGetNextBasicBlock(b);
                }
                f = LLVMGetNextFunction(f);
            }
        }
        false
    }

    /// Removes the functions (and, with `globals`, the global variables)
    /// of internal or private linkage that nothing refers to, until none
    /// is left (removing one may leave others unreferenced); `removed`
    /// hears the name of each function removed. What the pass
    /// `strip-dead-internals` does.
    pub fn remove_dead_internals(&self, globals: bool, removed: &mut dyn FnMut(&str)) {
        use inkwell::module::Linkage;
        use inkwell::values::BasicValue;
        let local = |l: Linkage| matches!(l, Linkage::Internal | Linkage::Private);
        self.with_ir(|ir| loop {
            let mut any = false;
            let dead_functions: Vec<_> = ir
                .get_functions()
                .filter(|f| local(f.get_linkage()))
                .filter(|f| {
                    f.as_global_value()
                        .as_pointer_value()
                        .get_first_use()
                        .is_none()
                })
                .collect();
            for f in dead_functions {
                removed(&f.get_name().to_string_lossy());
                // SAFETY: nothing uses `f` (no first use), so no IR refers to
                // it, and this loop holds the only handle to it; the list was
                // collected before any deletion, and a function listed here
                // is not used by another listed one.
                unsafe { f.delete() };
                any = true;
            }
            if globals {
                let dead_globals: Vec<_> = ir
                    .get_globals()
                    .filter(|g| local(g.get_linkage()))
                    .filter(|g| g.as_pointer_value().get_first_use().is_none())
                    .collect();
                for g in dead_globals {
                    // SAFETY: as for functions: `g` has no use, so no IR
                    // refers to it, and this loop holds the only handle.
                    unsafe { g.delete() };
                    any = true;
                }
            }
            if !any {
                break;
            }
        })
    }

    /// Keeps the bodies of the named functions only (the others become
    /// declarations), the kept ones made external so that they survive on
    /// their own, as `llvm-extract` makes them. The names must be the
    /// module's functions (`extract` checks them first).
    pub(crate) fn keep_bodies_of(&mut self, functions: &[&str]) {
        // SAFETY: `self` owns its module, alive for the whole loop; each `f`
        // is a function of it, and deleting a body keeps the function, so
        // `LLVMGetNextFunction(f)` stays valid; the name is copied at once.
        unsafe {
            let mut f = LLVMGetFirstFunction(self.raw);
            while !f.is_null() {
                let mut len = 0;
                let name = ffi::str_from(LLVMGetValueName2(f, &mut len), len).into_owned();
                if LLVMIsDeclaration(f) == 0 && !functions.contains(&name.as_str()) {
                    ffi::plab_delete_body(f);
                } else if functions.contains(&name.as_str()) {
                    LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMExternalLinkage);
                }
                f = LLVMGetNextFunction(f);
            }
        }
    }
}

//! IR size statistics: functions, basic blocks, instructions; per function
//! and per opcode.

use crate::ffi;
use llvm_sys::prelude::LLVMModuleRef;
use std::collections::BTreeMap;
use std::ffi::{c_void, CStr};
use std::os::raw::c_char;

/// Size of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionStats {
    pub name: String,
    pub blocks: u64,
    pub instructions: u64,
}

/// Size of a module. Declarations are not counted as functions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub functions: u64,
    pub blocks: u64,
    pub instructions: u64,
    /// Defined functions, in module order.
    pub per_function: Vec<FunctionStats>,
    /// Instruction count per opcode name (`add`, `load`, `getelementptr`…).
    pub per_opcode: BTreeMap<String, u64>,
}

impl Stats {
    /// The sizes as a table: one row per function, the totals in the title.
    pub fn table(&self) -> crate::table::Table {
        let mut t = crate::table::Table::new(
            &format!(
                "{}, {}, {}",
                crate::table::count(self.functions, "function"),
                crate::table::count(self.blocks, "block"),
                crate::table::count(self.instructions, "instruction")
            ),
            &["function", "blocks>", "instructions>"],
        );
        for f in &self.per_function {
            t.push([
                f.name.clone(),
                f.blocks.to_string(),
                f.instructions.to_string(),
            ]);
        }
        t
    }
}

unsafe extern "C" fn each_function(
    user: *mut c_void,
    name: *const c_char,
    len: usize,
    decl: bool,
    blocks: u64,
    instructions: u64,
) {
    // SAFETY: called by the shim (or LLVM) as its declaration in
    // ffi.rs says, with the pointers it describes alive for the call.
    unsafe {
        if decl {
            return;
        }
        let list = &mut *(user as *mut Vec<FunctionStats>);
        list.push(FunctionStats {
            name: ffi::str_from(name, len).into_owned(),
            blocks,
            instructions,
        });
    }
}

pub(crate) fn collect(m: LLVMModuleRef) -> Stats {
    // SAFETY: a plain query of a constant (`Instruction::OtherOpsEnd`).
    let n = unsafe { ffi::plab_opcode_limit() };
    let mut opcodes = vec![0u64; n];
    let mut per_function = Vec::new();
    let mut totals = [0u64; 3];
    // SAFETY: `m` is the caller's live module, only read; `each_function`
    // casts `user` back to the `*mut Vec<FunctionStats>` passed here, which
    // outlives the call; `opcodes` is writable for `n` counters (the shim
    // skips opcodes >= `n`) and `totals` for the 3 it writes.
    unsafe {
        ffi::plab_stats(
            m,
            Some(each_function),
            &mut per_function as *mut Vec<FunctionStats> as *mut c_void,
            opcodes.as_mut_ptr(),
            n,
            totals.as_mut_ptr(),
        )
    };
    let per_opcode = opcodes
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(op, c)| {
            // SAFETY: `Instruction::getOpcodeName` returns a static
            // NUL-terminated string for any opcode (a placeholder for an
            // unknown one), never freed.
            let name = unsafe { CStr::from_ptr(ffi::plab_opcode_name(op as u32)) };
            (name.to_string_lossy().into_owned(), *c)
        })
        .collect();
    Stats {
        functions: totals[0],
        blocks: totals[1],
        instructions: totals[2],
        per_function,
        per_opcode,
    }
}

pub(crate) fn instruction_count(m: LLVMModuleRef) -> u64 {
    let mut totals = [0u64; 3];
    // SAFETY: `m` is the caller's live module, only read; with no callback
    // and a null `opcodes` (count 0) the shim writes only `totals`, which
    // has room for its 3 values.
    unsafe {
        ffi::plab_stats(
            m,
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            totals.as_mut_ptr(),
        )
    };
    totals[2]
}

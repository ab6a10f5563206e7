//! CompilerGym's observation spaces for LLVM, computed by passlab:
//! `InstCount` (70 features) and `Autophase` (56), with CompilerGym's
//! definitions (`compiler_gym/third_party/llvm/InstCount.{h,cc}` and
//! `compiler_gym/third_party/autophase/InstCount.{h,cc}`), quirks included:
//!
//! * the module is copied and its debug info stripped first, as
//!   CompilerGym's `makeModule` does; every function is visited,
//!   declarations included (`TotalFuncs` counts them);
//! * InstCount is `[TotalInsts, TotalBlocks, TotalFuncs]` then one count
//!   per opcode in `Instruction.def`'s order (LLVM 10's 67 opcodes, the same
//!   in LLVM 19: the list is pinned here by name);
//! * Autophase counts a block's predecessors as the terminators' successor
//!   slots that name it (`br i1 %c, label %x, label %x` gives `x` two), an
//!   edge as critical when its block has two successors or more and its
//!   destination two predecessors or more; the constant-operand counters
//!   look at every operand of every instruction (an `alloca`'s implicit
//!   `i32 1` too) and only at direct `ConstantInt`s; `testUnary` is
//!   `isa<UnaryInstruction>` (no `freeze`); `returnInt` counts direct calls
//!   whose callee's type is the call's and returns an integer; four
//!   counters CompilerGym computes are not emitted (`BlockHigh`,
//!   `callLargeNumArgs`, `moreSuccessors`, `moreEach`).
//!
//! The values match CompilerGym's for the same IR; CompilerGym's published
//! vectors are for its LLVM 10 bitcode (typed pointers, other front end),
//! so a program compiled here by clang-19 gives other numbers.

use super::Module;
use llvm_sys::core::*;
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};
use llvm_sys::LLVMOpcode::{self, *};
use std::collections::HashMap;

/// InstCount's 67 opcodes, in LLVM's `Instruction.def` order (feature
/// index = position + 3).
pub const OPCODES: [&str; 67] = [
    "Ret",
    "Br",
    "Switch",
    "IndirectBr",
    "Invoke",
    "Resume",
    "Unreachable",
    "CleanupRet",
    "CatchRet",
    "CatchSwitch",
    "CallBr",
    "FNeg",
    "Add",
    "FAdd",
    "Sub",
    "FSub",
    "Mul",
    "FMul",
    "UDiv",
    "SDiv",
    "FDiv",
    "URem",
    "SRem",
    "FRem",
    "Shl",
    "LShr",
    "AShr",
    "And",
    "Or",
    "Xor",
    "Alloca",
    "Load",
    "Store",
    "GetElementPtr",
    "Fence",
    "AtomicCmpXchg",
    "AtomicRMW",
    "Trunc",
    "ZExt",
    "SExt",
    "FPToUI",
    "FPToSI",
    "UIToFP",
    "SIToFP",
    "FPTrunc",
    "FPExt",
    "PtrToInt",
    "IntToPtr",
    "BitCast",
    "AddrSpaceCast",
    "CleanupPad",
    "CatchPad",
    "ICmp",
    "FCmp",
    "PHI",
    "Call",
    "Select",
    "UserOp1",
    "UserOp2",
    "VAArg",
    "ExtractElement",
    "InsertElement",
    "ShuffleVector",
    "ExtractValue",
    "InsertValue",
    "LandingPad",
    "Freeze",
];

/// Autophase's 56 feature names, in CompilerGym's order
/// (`AUTOPHASE_FEATURE_NAMES`).
pub const AUTOPHASE: [&str; 56] = [
    "BBNumArgsHi",
    "BBNumArgsLo",
    "onePred",
    "onePredOneSuc",
    "onePredTwoSuc",
    "oneSuccessor",
    "twoPred",
    "twoPredOneSuc",
    "twoEach",
    "twoSuccessor",
    "morePreds",
    "BB03Phi",
    "BBHiPhi",
    "BBNoPhi",
    "BeginPhi",
    "BranchCount",
    "returnInt",
    "CriticalCount",
    "NumEdges",
    "const32Bit",
    "const64Bit",
    "numConstZeroes",
    "numConstOnes",
    "UncondBranches",
    "binaryConstArg",
    "NumAShrInst",
    "NumAddInst",
    "NumAllocaInst",
    "NumAndInst",
    "BlockMid",
    "BlockLow",
    "NumBitCastInst",
    "NumBrInst",
    "NumCallInst",
    "NumGetElementPtrInst",
    "NumICmpInst",
    "NumLShrInst",
    "NumLoadInst",
    "NumMulInst",
    "NumOrInst",
    "NumPHIInst",
    "NumRetInst",
    "NumSExtInst",
    "NumSelectInst",
    "NumShlInst",
    "NumStoreInst",
    "NumSubInst",
    "NumTruncInst",
    "NumXorInst",
    "NumZExtInst",
    "TotalBlocks",
    "TotalInsts",
    "TotalMemInst",
    "TotalFuncs",
    "ArgsPhi",
    "testUnary",
];

/// The InstCount feature names: `TotalInsts`, `TotalBlocks`, `TotalFuncs`,
/// then the opcodes.
pub fn instcount_names() -> Vec<&'static str> {
    let mut v = vec!["TotalInsts", "TotalBlocks", "TotalFuncs"];
    v.extend(OPCODES);
    v
}

/// Both observation spaces of one module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    /// CompilerGym's `InstCount`: 70 values (see [`instcount_names`]).
    pub instcount: Vec<i64>,
    /// CompilerGym's `Autophase`: 56 values (see [`AUTOPHASE`]).
    pub autophase: Vec<i64>,
}

impl Features {
    /// `InstCountNorm`: every InstCount value but the first divided by
    /// `max(TotalInsts, 1)` (69 values).
    pub fn instcount_norm(&self) -> Vec<f64> {
        let total = self.instcount[0].max(1) as f64;
        self.instcount[1..]
            .iter()
            .map(|&v| v as f64 / total)
            .collect()
    }

    /// The features as a table: one row per feature of `space` (`instcount`,
    /// `autophase`), with its index, name and value; `nonzero` leaves out
    /// the zeros.
    pub fn table(&self, space: &str, nonzero: bool) -> crate::table::Table {
        let (names, values): (Vec<&str>, &[i64]) = match space {
            "autophase" => (AUTOPHASE.to_vec(), &self.autophase),
            _ => (instcount_names(), &self.instcount),
        };
        let title = match space {
            "autophase" => "Autophase (CompilerGym, 56 features)",
            _ => "InstCount (CompilerGym, 70 features)",
        };
        let mut t = crate::table::Table::new(
            &format!("{title}{}", if nonzero { ", zeros left out" } else { "" }),
            &["index>", "feature", "value>"],
        );
        for (i, (n, v)) in names.iter().zip(values).enumerate() {
            if nonzero && *v == 0 {
                continue;
            }
            t.push([i.to_string(), n.to_string(), v.to_string()]);
        }
        t
    }
}

/// The opcode's InstCount name.
fn opcode_name(op: LLVMOpcode) -> &'static str {
    match op {
        LLVMRet => "Ret",
        LLVMBr => "Br",
        LLVMSwitch => "Switch",
        LLVMIndirectBr => "IndirectBr",
        LLVMInvoke => "Invoke",
        LLVMResume => "Resume",
        LLVMUnreachable => "Unreachable",
        LLVMCleanupRet => "CleanupRet",
        LLVMCatchRet => "CatchRet",
        LLVMCatchSwitch => "CatchSwitch",
        LLVMCallBr => "CallBr",
        LLVMFNeg => "FNeg",
        LLVMAdd => "Add",
        LLVMFAdd => "FAdd",
        LLVMSub => "Sub",
        LLVMFSub => "FSub",
        LLVMMul => "Mul",
        LLVMFMul => "FMul",
        LLVMUDiv => "UDiv",
        LLVMSDiv => "SDiv",
        LLVMFDiv => "FDiv",
        LLVMURem => "URem",
        LLVMSRem => "SRem",
        LLVMFRem => "FRem",
        LLVMShl => "Shl",
        LLVMLShr => "LShr",
        LLVMAShr => "AShr",
        LLVMAnd => "And",
        LLVMOr => "Or",
        LLVMXor => "Xor",
        LLVMAlloca => "Alloca",
        LLVMLoad => "Load",
        LLVMStore => "Store",
        LLVMGetElementPtr => "GetElementPtr",
        LLVMFence => "Fence",
        LLVMAtomicCmpXchg => "AtomicCmpXchg",
        LLVMAtomicRMW => "AtomicRMW",
        LLVMTrunc => "Trunc",
        LLVMZExt => "ZExt",
        LLVMSExt => "SExt",
        LLVMFPToUI => "FPToUI",
        LLVMFPToSI => "FPToSI",
        LLVMUIToFP => "UIToFP",
        LLVMSIToFP => "SIToFP",
        LLVMFPTrunc => "FPTrunc",
        LLVMFPExt => "FPExt",
        LLVMPtrToInt => "PtrToInt",
        LLVMIntToPtr => "IntToPtr",
        LLVMBitCast => "BitCast",
        LLVMAddrSpaceCast => "AddrSpaceCast",
        LLVMCleanupPad => "CleanupPad",
        LLVMCatchPad => "CatchPad",
        LLVMICmp => "ICmp",
        LLVMFCmp => "FCmp",
        LLVMPHI => "PHI",
        LLVMCall => "Call",
        LLVMSelect => "Select",
        LLVMUserOp1 => "UserOp1",
        LLVMUserOp2 => "UserOp2",
        LLVMVAArg => "VAArg",
        LLVMExtractElement => "ExtractElement",
        LLVMInsertElement => "InsertElement",
        LLVMShuffleVector => "ShuffleVector",
        LLVMExtractValue => "ExtractValue",
        LLVMInsertValue => "InsertValue",
        LLVMLandingPad => "LandingPad",
        LLVMFreeze => "Freeze",
    }
}

fn is_cast(op: LLVMOpcode) -> bool {
    matches!(
        op,
        LLVMTrunc
            | LLVMZExt
            | LLVMSExt
            | LLVMFPToUI
            | LLVMFPToSI
            | LLVMUIToFP
            | LLVMSIToFP
            | LLVMFPTrunc
            | LLVMFPExt
            | LLVMPtrToInt
            | LLVMIntToPtr
            | LLVMBitCast
            | LLVMAddrSpaceCast
    )
}

fn is_binary(op: LLVMOpcode) -> bool {
    matches!(
        op,
        LLVMAdd
            | LLVMFAdd
            | LLVMSub
            | LLVMFSub
            | LLVMMul
            | LLVMFMul
            | LLVMUDiv
            | LLVMSDiv
            | LLVMFDiv
            | LLVMURem
            | LLVMSRem
            | LLVMFRem
            | LLVMShl
            | LLVMLShr
            | LLVMAShr
            | LLVMAnd
            | LLVMOr
            | LLVMXor
    )
}

/// A `ConstantInt` operand's width and whether it is 0 or 1 (as
/// `APInt == u64` reads it: the value zero-extended).
///
/// # Safety
/// `v` is a live value.
unsafe fn constant_int(v: LLVMValueRef) -> Option<(u32, bool, bool)> {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        if LLVMIsAConstantInt(v).is_null() {
            return None;
        }
        let width = LLVMGetIntTypeWidth(LLVMTypeOf(v));
        if width <= 64 {
            let x = LLVMConstIntGetZExtValue(v);
            return Some((width, x == 0, x == 1));
        }
        // Wider than 64 bits: 0 or 1 only if every higher word is zero; read
        // from the value as LLVM prints it ("i128 1").
        let text = LLVMPrintValueToString(v);
        let s = std::ffi::CStr::from_ptr(text)
            .to_string_lossy()
            .into_owned();
        LLVMDisposeMessage(text);
        let digits = s.rsplit(' ').next().unwrap_or("");
        Some((width, digits == "0", digits == "1"))
    }
}

/// Autophase's counters, by name (see the module docs).
#[derive(Default)]
struct Autophase {
    c: HashMap<&'static str, i64>,
}

impl Autophase {
    fn add(&mut self, name: &'static str, n: i64) {
        *self.c.entry(name).or_default() += n;
    }
    fn get(&self, name: &str) -> i64 {
        self.c.get(name).copied().unwrap_or(0)
    }
}

impl Autophase {
    /// Block `b`'s edges, successors and predecessors (`preds`, by block).
    ///
    /// # Safety
    /// `b` is a live basic block.
    unsafe fn edges(&mut self, b: LLVMBasicBlockRef, preds: &HashMap<LLVMBasicBlockRef, i64>) {
        // SAFETY: `b` is live (this function's `# Safety`), and so are its
        // terminator and successors.
        unsafe {
            let t = LLVMGetBasicBlockTerminator(b);
            let s = if t.is_null() {
                0
            } else {
                i64::from(LLVMGetNumSuccessors(t))
            };
            let p = preds.get(&b).copied().unwrap_or(0);
            self.add("NumEdges", s);
            if s != 1 {
                for i in 0..s as u32 {
                    if preds.get(&LLVMGetSuccessor(t, i)).copied().unwrap_or(0) >= 2 {
                        self.add("CriticalCount", 1);
                    }
                }
            }
            self.shape(p, s);
        }
    }

    /// A block with `p` predecessors and `s` successors.
    fn shape(&mut self, p: i64, s: i64) {
        match s {
            1 => self.add("oneSuccessor", 1),
            2 => self.add("twoSuccessor", 1),
            _ => {}
        }
        match p {
            1 => self.add("onePred", 1),
            2 => self.add("twoPred", 1),
            p if p > 2 => self.add("morePreds", 1),
            _ => {}
        }
        match (p, s) {
            (1, 1) => self.add("onePredOneSuc", 1),
            (2, 1) => self.add("twoPredOneSuc", 1),
            (1, 2) => self.add("onePredTwoSuc", 1),
            (2, 2) => self.add("twoEach", 1),
            _ => {}
        }
    }

    /// A block of `n` instructions, `phis` of them phis with `phi_args`
    /// incoming values in all.
    fn block_size(&mut self, n: i64, phis: i64, phi_args: i64) {
        match phis {
            0 => self.add("BBNoPhi", 1),
            1..=3 => self.add("BB03Phi", 1),
            _ => self.add("BBHiPhi", 1),
        }
        if phi_args > 5 {
            self.add("BBNumArgsHi", 1);
        } else if phi_args >= 1 {
            self.add("BBNumArgsLo", 1);
        }
        if n < 15 {
            self.add("BlockLow", 1);
        } else if n <= 500 {
            self.add("BlockMid", 1);
        }
    }

    /// Instruction `i`'s integer constant operands: 32 and 64 bits wide,
    /// ones and zeroes.
    ///
    /// # Safety
    /// `i` is a live instruction.
    unsafe fn constants(&mut self, i: LLVMValueRef) {
        // SAFETY: `i` is live (this function's `# Safety`), and so are its
        // operands.
        unsafe {
            for k in 0..LLVMGetNumOperands(i).max(0) as u32 {
                let v = LLVMGetOperand(i, k);
                if v.is_null() {
                    continue;
                }
                if let Some((width, zero, one)) = constant_int(v) {
                    match width {
                        32 => self.add("const32Bit", 1),
                        64 => self.add("const64Bit", 1),
                        _ => {}
                    }
                    if one {
                        self.add("numConstOnes", 1);
                    } else if zero {
                        self.add("numConstZeroes", 1);
                    }
                }
            }
        }
    }

    /// Instruction `i` (opcode `op`): branches, calls returning integers,
    /// unary and binary instructions with a constant argument.
    ///
    /// # Safety
    /// `i` is a live instruction.
    unsafe fn instruction(&mut self, i: LLVMValueRef, op: LLVMOpcode) {
        // SAFETY: `i` is live (this function's `# Safety`), and so are its
        // operands.
        unsafe {
            if op == LLVMBr {
                self.add("BranchCount", 1);
                if LLVMIsConditional(i) == 0 {
                    self.add("UncondBranches", 1);
                }
            }
            self.constants(i);
            if op == LLVMCall && returns_int(i) {
                self.add("returnInt", 1);
            }
            if op == LLVMFNeg
                || op == LLVMAlloca
                || op == LLVMLoad
                || op == LLVMVAArg
                || op == LLVMExtractValue
                || is_cast(op)
            {
                self.add("testUnary", 1);
            }
            if is_binary(op)
                && (!LLVMIsAConstant(LLVMGetOperand(i, 0)).is_null()
                    || !LLVMIsAConstant(LLVMGetOperand(i, 1)).is_null())
            {
                self.add("binaryConstArg", 1);
            }
        }
    }
}

/// Whether call `i` calls a function directly (with its own type) that
/// returns an integer.
///
/// # Safety
/// `i` is a live call instruction.
unsafe fn returns_int(i: LLVMValueRef) -> bool {
    // SAFETY: `i` is a live call (this function's `# Safety`); its callee
    // and types are alive while it is.
    unsafe {
        let callee = LLVMGetCalledValue(i);
        !callee.is_null()
            && !LLVMIsAFunction(callee).is_null()
            && LLVMGlobalGetValueType(callee) == LLVMGetCalledFunctionType(i)
            && LLVMGetTypeKind(LLVMGetReturnType(LLVMGetCalledFunctionType(i)))
                == llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
    }
}

/// Function `f`'s blocks' predecessors, counted as terminators'
/// successor slots.
///
/// # Safety
/// `f` is a live function.
unsafe fn predecessors(f: LLVMValueRef) -> HashMap<LLVMBasicBlockRef, i64> {
    let mut preds: HashMap<LLVMBasicBlockRef, i64> = HashMap::new();
    // SAFETY: `f` is live (this function's `# Safety`), and so are its
    // blocks and their terminators.
    unsafe {
        let mut b = LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            let t = LLVMGetBasicBlockTerminator(b);
            if !t.is_null() {
                for i in 0..LLVMGetNumSuccessors(t) {
                    *preds.entry(LLVMGetSuccessor(t, i)).or_default() += 1;
                }
            }
            b = LLVMGetNextBasicBlock(b);
        }
    }
    preds
}

/// What [`Module::features`] counts as it walks a module.
#[derive(Default)]
struct Tally {
    /// Instructions by opcode name.
    counts: HashMap<&'static str, i64>,
    ap: Autophase,
    insts: i64,
    blocks: i64,
    funcs: i64,
}

impl Tally {
    /// Counts function `f`, its blocks and their instructions.
    ///
    /// # Safety
    /// `f` is a live function.
    unsafe fn function(&mut self, f: LLVMValueRef) {
        self.funcs += 1;
        // SAFETY: `f` is live (this function's `# Safety`), and so are its
        // blocks.
        unsafe {
            let preds = predecessors(f);
            let mut b = LLVMGetFirstBasicBlock(f);
            while !b.is_null() {
                self.block(b, &preds);
                b = LLVMGetNextBasicBlock(b);
            }
        }
    }

    /// Counts block `b` and its instructions (`preds`: predecessors by
    /// block).
    ///
    /// # Safety
    /// `b` is a live basic block.
    unsafe fn block(&mut self, b: LLVMBasicBlockRef, preds: &HashMap<LLVMBasicBlockRef, i64>) {
        self.blocks += 1;
        // SAFETY: `b` is live (this function's `# Safety`), and so are its
        // instructions.
        unsafe {
            self.ap.edges(b, preds);
            let (mut n, mut phis, mut phi_args) = (0i64, 0i64, 0i64);
            let mut i = LLVMGetFirstInstruction(b);
            while !i.is_null() {
                let op = LLVMGetInstructionOpcode(i);
                *self.counts.entry(opcode_name(op)).or_default() += 1;
                self.insts += 1;
                self.ap.instruction(i, op);
                if op == LLVMPHI {
                    if n == 0 {
                        self.ap.add("BeginPhi", 1);
                    }
                    phis += 1;
                    let incoming = i64::from(LLVMCountIncoming(i));
                    self.ap.add("ArgsPhi", incoming);
                    phi_args += incoming;
                }
                n += 1;
                i = LLVMGetNextInstruction(i);
            }
            self.ap.block_size(n, phis, phi_args);
        }
    }

    /// The features counted.
    fn features(self) -> Features {
        let count = |name: &str| self.counts.get(name).copied().unwrap_or(0);
        let mut instcount = vec![self.insts, self.blocks, self.funcs];
        instcount.extend(OPCODES.iter().map(|o| count(o)));
        let autophase = AUTOPHASE
            .iter()
            .map(|&name| match name {
                "TotalBlocks" => self.blocks,
                "TotalInsts" => self.insts,
                "TotalFuncs" => self.funcs,
                "TotalMemInst" => ["GetElementPtr", "Load", "Store", "Call", "Invoke", "Alloca"]
                    .iter()
                    .map(|o| count(o))
                    .sum(),
                n if n.starts_with("Num") && n.ends_with("Inst") => {
                    count(&n["Num".len()..n.len() - "Inst".len()])
                }
                n => self.ap.get(n),
            })
            .collect();
        Features {
            instcount,
            autophase,
        }
    }
}

impl Module {
    /// CompilerGym's `InstCount` and `Autophase` features of this module
    /// (computed on a copy with its debug info stripped, when it has any:
    /// a module without the "Debug Info Version" flag has none, since
    /// LLVM strips debug info from modules that lack it, and is read as it
    /// is — a copy costs more than the counting).
    pub fn features(&self) -> Features {
        // SAFETY: reads one module flag of the live module `self` owns.
        let has_debug_info =
            unsafe { llvm_sys::debuginfo::LLVMGetModuleDebugMetadataVersion(self.raw()) } != 0;
        let copy = has_debug_info.then(|| self.copy());
        let source = copy.as_ref().unwrap_or(self);
        let mut tally = Tally::default();
        // SAFETY: `source` is alive for the whole block; a copy is this
        // function's own module, whose debug info is stripped; then the
        // module is only read: functions, blocks, instructions, their
        // operands and types, all alive while `source` is.
        unsafe {
            let m = source.raw();
            if copy.is_some() {
                llvm_sys::debuginfo::LLVMStripModuleDebugInfo(m);
            }
            let mut f = LLVMGetFirstFunction(m);
            while !f.is_null() {
                tally.function(f);
                f = LLVMGetNextFunction(f);
            }
        }
        tally.features()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(ir: &str) -> Features {
        Module::from_ir(ir, "t.ll").unwrap().features()
    }

    fn ap(f: &Features, name: &str) -> i64 {
        f.autophase[AUTOPHASE.iter().position(|n| *n == name).unwrap()]
    }

    fn ic(f: &Features, name: &str) -> i64 {
        f.instcount[instcount_names().iter().position(|n| *n == name).unwrap()]
    }

    #[test]
    fn the_spaces_have_compiler_gyms_shapes() {
        assert_eq!(instcount_names().len(), 70);
        assert_eq!(AUTOPHASE.len(), 56);
        let f = features("define void @f() {\n  ret void\n}\n");
        assert_eq!((f.instcount.len(), f.autophase.len()), (70, 56));
        assert_eq!(f.instcount_norm().len(), 69);
    }

    // Counted by hand from CompilerGym's InstCount.cc and autophase's.
    #[test]
    fn a_hand_checked_function() {
        let f = features(
            "declare i32 @g(i32)\n\
             declare void @h()\n\
             define i32 @f(i32 %n, i1 %c) {\n\
             entry:\n  %a = alloca i32\n  store i32 0, ptr %a\n  br i1 %c, label %x, label %x\n\
             x:\n  %p = phi i32 [ 1, %entry ], [ 1, %entry ]\n  %q = add i32 %p, 7\n  %r = call i32 @g(i32 %q)\n  call void @h()\n  %s = freeze i32 %r\n  %t = trunc i32 %s to i8\n  %u = zext i8 %t to i64\n  %v = add i64 %u, 1\n  %w = trunc i64 %v to i32\n  ret i32 %w\n}\n",
        );
        // Functions: declarations too.
        assert_eq!(ic(&f, "TotalFuncs"), 3);
        assert_eq!(ic(&f, "TotalBlocks"), 2);
        assert_eq!(ic(&f, "TotalInsts"), 13);
        assert_eq!(f.instcount[3..].iter().sum::<i64>(), 13);
        assert_eq!((ic(&f, "Add"), ic(&f, "Call"), ic(&f, "Freeze")), (2, 2, 1));
        // `br i1 %c, label %x, label %x`: x has two predecessors, both
        // edges critical (the entry has two successors).
        assert_eq!(ap(&f, "NumEdges"), 2);
        assert_eq!(ap(&f, "CriticalCount"), 2);
        assert_eq!(ap(&f, "twoPred"), 1);
        assert_eq!(ap(&f, "twoSuccessor"), 1);
        assert_eq!(ap(&f, "onePred") + ap(&f, "morePreds"), 0);
        // x begins with its one phi of two incoming values.
        assert_eq!((ap(&f, "BeginPhi"), ap(&f, "ArgsPhi")), (1, 2));
        assert_eq!(
            (ap(&f, "BB03Phi"), ap(&f, "BBNoPhi"), ap(&f, "BBNumArgsLo")),
            (1, 1, 1)
        );
        // Constants: alloca's implicit i32 1, store's i32 0, the phi's two
        // i32 1, add's i32 7, add's i64 1; the branch's i1 is not constant.
        assert_eq!(ap(&f, "const32Bit"), 5);
        assert_eq!(ap(&f, "const64Bit"), 1);
        assert_eq!(ap(&f, "numConstOnes"), 4);
        assert_eq!(ap(&f, "numConstZeroes"), 1);
        // Binary ops with a constant operand: both adds.
        assert_eq!(ap(&f, "binaryConstArg"), 2);
        // Direct calls returning an integer: @g, not @h.
        assert_eq!(ap(&f, "returnInt"), 1);
        // Unary: alloca, 3 casts; not freeze.
        assert_eq!(ap(&f, "testUnary"), 4);
        // Memory: alloca, store, 2 calls.
        assert_eq!(ap(&f, "TotalMemInst"), 4);
        assert_eq!((ap(&f, "BranchCount"), ap(&f, "UncondBranches")), (1, 0));
        assert_eq!((ap(&f, "BlockLow"), ap(&f, "BlockMid")), (2, 0));
        assert_eq!(ap(&f, "NumAddInst"), 2);
    }

    #[test]
    fn switch_cases_are_operands_and_predecessors() {
        let f = features(
            "define i32 @f(i32 %x) {\n\
             entry:\n  switch i32 %x, label %d [ i32 1, label %a\n i32 2, label %a\n i64 0, label %d ]\n\
             a:\n  br label %d\n\
             d:\n  ret i32 0\n}\n"
                .replace("i64 0", "i32 3")
                .as_str(),
        );
        // entry: 4 successors (default + 3 cases); a: 2 preds (two cases);
        // d: default + case 3 + a's br = 3 preds.
        assert_eq!(ap(&f, "NumEdges"), 5);
        assert_eq!(ap(&f, "twoPred"), 1);
        assert_eq!(ap(&f, "morePreds"), 1);
        // entry's 4 edges all reach a block with 2+ predecessors; a's one
        // edge is not critical (one successor).
        assert_eq!(ap(&f, "CriticalCount"), 4);
        // Case values 1, 2, 3 and ret's 0, all i32.
        assert_eq!(ap(&f, "const32Bit"), 4);
        assert_eq!((ap(&f, "numConstOnes"), ap(&f, "numConstZeroes")), (1, 1));
        assert_eq!(ap(&f, "UncondBranches"), 1);
    }

    /// Debug info is stripped before counting (CompilerGym's `makeModule`):
    /// the same C with and without `-g` gives the same features, the module
    /// with debug info is counted on a copy and left as it was.
    #[test]
    fn debug_info_does_not_count() {
        let src =
            "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }";
        let load = |args: &[&str]| {
            Module::load(&[
                crate::Source::text(crate::Lang::C, src, "f.c").clang_args(args.iter().copied())
            ])
            .unwrap()
        };
        let plain = load(&[]);
        let debug = load(&["-g"]);
        assert!(debug.print().contains("!DILocation"));
        let text = debug.print();
        assert_eq!(debug.features(), plain.features());
        assert_eq!(debug.print(), text);
    }
}

//! The IR API for code that cannot hold LLVM's pointers safely (passes
//! written in Python): values of a module handed out as [`Value`] handles,
//! every use checked.
//!
//! A handle names a function, block, instruction, argument, constant or
//! global of one module, in one state of it. It is refused — with an error,
//! never a dangling pointer — when the module has changed since other than
//! through this API (a pass ran on it, it was restored: every value may be
//! gone), when it belongs to another module, or when the value it names was
//! erased through this API (the address may hold a new value by then).
//! Edits through the API keep the other handles valid: building an
//! instruction, setting an operand, replacing uses, erasing an instruction
//! nothing uses. Types are checked before LLVM sees them (LLVM's own checks
//! are assertions, off in release builds), and the module is verified when
//! the pass that edits it returns, as for every pass.

use super::Module;
use crate::ffi;
use crate::{Error, Result};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMTypeKind, LLVMValueKind};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

/// A state of some module: unique in the process, so that a handle of one
/// module, or of an earlier state, is never taken for one of this one.
fn next_state() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What a module knows of the handles it gave out.
#[derive(Debug)]
pub(crate) struct Tracker {
    state: u64,
    /// How many times the value at an address was erased through the API
    /// in this state.
    erased: HashMap<usize, u32>,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker {
            state: next_state(),
            erased: HashMap::new(),
        }
    }
}

impl Tracker {
    /// Every value may have changed: no handle given out so far is valid.
    pub(crate) fn changed(&mut self) {
        *self = Tracker::default();
    }
}

/// What a value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    Function,
    Block,
    Instruction,
    Argument,
    /// An integer constant.
    ConstantInt,
    /// Any other constant (floating point, null, undef, poison,
    /// expressions, aggregates).
    Constant,
    /// A global variable or alias.
    Global,
    /// Metadata, inline assembly and the like.
    Other,
}

impl ValueKind {
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Function => "function",
            ValueKind::Block => "block",
            ValueKind::Instruction => "instruction",
            ValueKind::Argument => "argument",
            ValueKind::ConstantInt => "constant_int",
            ValueKind::Constant => "constant",
            ValueKind::Global => "global",
            ValueKind::Other => "other",
        }
    }
}

/// A checked handle on a value of a module (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    address: usize,
    kind: ValueKind,
    state: u64,
    erasures: u32,
}

impl Value {
    pub fn kind(&self) -> ValueKind {
        self.kind
    }
}

/// An integer constant's value: its width, and its bits read unsigned and
/// signed (for widths up to 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntConstant {
    pub bits: u32,
    pub unsigned: u64,
    pub signed: i64,
}

/// The binary operators [`Module::ir_build`] makes, by LLVM's names.
const BINARY: &[(&str, LLVMOpcode)] = &[
    ("add", LLVMOpcode::LLVMAdd),
    ("sub", LLVMOpcode::LLVMSub),
    ("mul", LLVMOpcode::LLVMMul),
    ("udiv", LLVMOpcode::LLVMUDiv),
    ("sdiv", LLVMOpcode::LLVMSDiv),
    ("urem", LLVMOpcode::LLVMURem),
    ("srem", LLVMOpcode::LLVMSRem),
    ("shl", LLVMOpcode::LLVMShl),
    ("lshr", LLVMOpcode::LLVMLShr),
    ("ashr", LLVMOpcode::LLVMAShr),
    ("and", LLVMOpcode::LLVMAnd),
    ("or", LLVMOpcode::LLVMOr),
    ("xor", LLVMOpcode::LLVMXor),
];

/// The integer comparisons, by LLVM's names (`icmp eq`, …).
const PREDICATES: &[(&str, LLVMIntPredicate)] = &[
    ("eq", LLVMIntPredicate::LLVMIntEQ),
    ("ne", LLVMIntPredicate::LLVMIntNE),
    ("ugt", LLVMIntPredicate::LLVMIntUGT),
    ("uge", LLVMIntPredicate::LLVMIntUGE),
    ("ult", LLVMIntPredicate::LLVMIntULT),
    ("ule", LLVMIntPredicate::LLVMIntULE),
    ("sgt", LLVMIntPredicate::LLVMIntSGT),
    ("sge", LLVMIntPredicate::LLVMIntSGE),
    ("slt", LLVMIntPredicate::LLVMIntSLT),
    ("sle", LLVMIntPredicate::LLVMIntSLE),
];

/// The operations [`Module::ir_build`] knows, for error messages.
pub fn buildable() -> Vec<String> {
    let mut v: Vec<String> = BINARY.iter().map(|(n, _)| n.to_string()).collect();
    v.extend(PREDICATES.iter().map(|(p, _)| format!("icmp {p}")));
    v.extend(["select", "zext", "sext", "trunc"].map(String::from));
    v
}

fn invalid(message: impl Into<String>) -> Error {
    Error::Invalid(message.into())
}

/// An owned C string from LLVM's `LLVMPrint*ToString`.
///
/// # Safety
/// `p` is null or a string LLVM allocated for the caller to dispose.
unsafe fn take_message(p: *mut std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: per this function's contract.
    unsafe {
        let s = CStr::from_ptr(p).to_string_lossy().into_owned();
        LLVMDisposeMessage(p);
        s
    }
}

impl Module {
    fn tracker(&self) -> std::cell::RefMut<'_, Tracker> {
        self.ir.borrow_mut()
    }

    /// A handle on `v` (a value of this module, alive now).
    fn handle(&self, v: LLVMValueRef, kind: ValueKind) -> Value {
        let t = self.tracker();
        let address = v as usize;
        Value {
            address,
            kind,
            state: t.state,
            erasures: t.erased.get(&address).copied().unwrap_or(0),
        }
    }

    fn block_handle(&self, b: LLVMBasicBlockRef) -> Value {
        // A block is named by its address; as a value it is the same
        // object (`LLVMBasicBlockAsValue`).
        // SAFETY: `b` is a live block of this module.
        let v = unsafe { LLVMBasicBlockAsValue(b) };
        self.handle(v, ValueKind::Block)
    }

    /// The raw value behind `h`, when `h` is valid for this module now.
    fn check(&self, h: Value) -> Result<LLVMValueRef> {
        let t = self.tracker();
        if h.state != t.state {
            return Err(invalid(
                "this IR handle is out of date: the module changed since it was taken \
                 (a pass ran on it), or it belongs to another module; take it again",
            ));
        }
        if t.erased.get(&h.address).copied().unwrap_or(0) != h.erasures {
            return Err(invalid("this instruction was erased"));
        }
        Ok(h.address as LLVMValueRef)
    }

    fn check_kind(&self, h: Value, kinds: &[ValueKind], what: &str) -> Result<LLVMValueRef> {
        let v = self.check(h)?;
        if !kinds.contains(&h.kind) {
            return Err(invalid(format!(
                "{what} takes a {}; got a {}",
                kinds_text(kinds),
                h.kind.name()
            )));
        }
        Ok(v)
    }

    /// The kind of a value of this module.
    ///
    /// # Safety
    /// `v` is a live value of this module.
    unsafe fn kind_of(&self, v: LLVMValueRef) -> ValueKind {
        // SAFETY: per this function's contract.
        match unsafe { LLVMGetValueKind(v) } {
            LLVMValueKind::LLVMFunctionValueKind => ValueKind::Function,
            LLVMValueKind::LLVMBasicBlockValueKind => ValueKind::Block,
            LLVMValueKind::LLVMInstructionValueKind => ValueKind::Instruction,
            LLVMValueKind::LLVMArgumentValueKind => ValueKind::Argument,
            LLVMValueKind::LLVMConstantIntValueKind => ValueKind::ConstantInt,
            LLVMValueKind::LLVMGlobalVariableValueKind
            | LLVMValueKind::LLVMGlobalAliasValueKind
            | LLVMValueKind::LLVMGlobalIFuncValueKind => ValueKind::Global,
            LLVMValueKind::LLVMMetadataAsValueValueKind
            | LLVMValueKind::LLVMInlineAsmValueKind
            | LLVMValueKind::LLVMMemoryUseValueKind
            | LLVMValueKind::LLVMMemoryDefValueKind
            | LLVMValueKind::LLVMMemoryPhiValueKind => ValueKind::Other,
            _ => ValueKind::Constant,
        }
    }

    fn value(&self, v: LLVMValueRef) -> Value {
        // SAFETY: callers pass live values of this module (operands,
        // instructions, functions they just read from it).
        let kind = unsafe { self.kind_of(v) };
        self.handle(v, kind)
    }

    /// Every function of the module (declarations too), in order.
    pub fn ir_functions(&self) -> Vec<Value> {
        let mut out = Vec::new();
        // SAFETY: walks the live module's function list, only reading.
        unsafe {
            let mut f = LLVMGetFirstFunction(self.raw());
            while !f.is_null() {
                out.push(self.handle(f, ValueKind::Function));
                f = LLVMGetNextFunction(f);
            }
        }
        out
    }

    /// A function by name.
    pub fn ir_function(&self, name: &str) -> Result<Value> {
        let f = self.function_ref(name)?;
        Ok(self.handle(f, ValueKind::Function))
    }

    /// A function's blocks, in order (none for a declaration).
    pub fn ir_blocks(&self, function: Value) -> Result<Vec<Value>> {
        let f = self.check_kind(function, &[ValueKind::Function], "blocks")?;
        let mut out = Vec::new();
        // SAFETY: `f` is a live function of this module (checked).
        unsafe {
            let mut b = LLVMGetFirstBasicBlock(f);
            while !b.is_null() {
                out.push(self.block_handle(b));
                b = LLVMGetNextBasicBlock(b);
            }
        }
        Ok(out)
    }

    /// The instructions of a block, or of a function's blocks, in order.
    pub fn ir_instructions(&self, of: Value) -> Result<Vec<Value>> {
        let v = self.check_kind(of, &[ValueKind::Function, ValueKind::Block], "instructions")?;
        let blocks = match of.kind {
            // SAFETY: `v` is a live block value of this module (checked).
            ValueKind::Block => vec![unsafe { LLVMValueAsBasicBlock(v) }],
            _ => {
                let mut bs = Vec::new();
                // SAFETY: `v` is a live function of this module (checked).
                unsafe {
                    let mut b = LLVMGetFirstBasicBlock(v);
                    while !b.is_null() {
                        bs.push(b);
                        b = LLVMGetNextBasicBlock(b);
                    }
                }
                bs
            }
        };
        let mut out = Vec::new();
        for b in blocks {
            // SAFETY: `b` is a live block of this module.
            unsafe {
                let mut i = LLVMGetFirstInstruction(b);
                while !i.is_null() {
                    out.push(self.handle(i, ValueKind::Instruction));
                    i = LLVMGetNextInstruction(i);
                }
            }
        }
        Ok(out)
    }

    /// The block an instruction is in, or the function a block or an
    /// argument is in; None for functions, globals and constants.
    pub fn ir_parent(&self, v: Value) -> Result<Option<Value>> {
        let raw = self.check(v)?;
        // SAFETY: `raw` is a live value of this module of the checked kind.
        Ok(unsafe {
            match v.kind {
                ValueKind::Instruction => Some(self.block_handle(LLVMGetInstructionParent(raw))),
                ValueKind::Block => Some(self.handle(
                    LLVMGetBasicBlockParent(LLVMValueAsBasicBlock(raw)),
                    ValueKind::Function,
                )),
                ValueKind::Argument => {
                    Some(self.handle(LLVMGetParamParent(raw), ValueKind::Function))
                }
                _ => None,
            }
        })
    }

    /// A function's arguments.
    pub fn ir_arguments(&self, function: Value) -> Result<Vec<Value>> {
        let f = self.check_kind(function, &[ValueKind::Function], "arguments")?;
        // SAFETY: `f` is a live function of this module (checked).
        Ok(unsafe {
            (0..LLVMCountParams(f))
                .map(|i| self.handle(LLVMGetParam(f, i), ValueKind::Argument))
                .collect()
        })
    }

    /// The value's name (`%x` without the `%`; empty when it has none).
    pub fn ir_name(&self, v: Value) -> Result<String> {
        let raw = self.check(v)?;
        let mut len = 0usize;
        // SAFETY: `raw` is a live value (checked); the name LLVM returns is
        // valid for `len` bytes until the value is renamed, and copied here.
        unsafe {
            let p = LLVMGetValueName2(raw, &mut len);
            Ok(ffi::str_from(p, len).into_owned())
        }
    }

    /// An instruction's opcode as LLVM prints it (`mul`, `icmp`, `br`).
    pub fn ir_opcode(&self, inst: Value) -> Result<String> {
        let raw = self.check_kind(inst, &[ValueKind::Instruction], "opcode")?;
        // SAFETY: `raw` is a live instruction (checked); the name is a static
        // string.
        Ok(
            unsafe { CStr::from_ptr(ffi::plab_instruction_opcode_name(raw)) }
                .to_string_lossy()
                .into_owned(),
        )
    }

    /// An instruction's operands, in order (a call's callee last, as LLVM
    /// keeps it; a branch's blocks as blocks).
    pub fn ir_operands(&self, inst: Value) -> Result<Vec<Value>> {
        let raw = self.check_kind(inst, &[ValueKind::Instruction], "operands")?;
        // SAFETY: `raw` is a live instruction (checked); its operands are
        // live values of the same module or context.
        Ok(unsafe {
            (0..LLVMGetNumOperands(raw).max(0) as u32)
                .map(|i| self.value(LLVMGetOperand(raw, i)))
                .collect()
        })
    }

    /// The instructions that use a value.
    pub fn ir_users(&self, v: Value) -> Result<Vec<Value>> {
        let raw = self.check(v)?;
        let mut out = Vec::new();
        // SAFETY: `raw` is a live value (checked); its use list is walked
        // without changing it.
        unsafe {
            let mut u = LLVMGetFirstUse(raw);
            while !u.is_null() {
                out.push(self.value(LLVMGetUser(u)));
                u = LLVMGetNextUse(u);
            }
        }
        Ok(out)
    }

    /// The value's type as LLVM prints it (`i32`, `ptr`, `void`).
    pub fn ir_type(&self, v: Value) -> Result<String> {
        let raw = self.check(v)?;
        if v.kind == ValueKind::Block {
            return Ok("label".into());
        }
        // SAFETY: `raw` is a live value (checked); the printed string is
        // LLVM's, disposed by `take_message`.
        Ok(unsafe { take_message(LLVMPrintTypeToString(LLVMTypeOf(raw))) })
    }

    /// The value as LLVM prints it (an instruction's line; a function's or
    /// block's whole text).
    pub fn ir_print(&self, v: Value) -> Result<String> {
        let raw = self.check(v)?;
        // SAFETY: `raw` is a live value (checked); the string is disposed
        // by `take_message`.
        Ok(unsafe { take_message(LLVMPrintValueToString(raw)) })
    }

    /// An integer constant's value (None for other values, and for
    /// constants wider than 64 bits).
    pub fn ir_int_constant(&self, v: Value) -> Result<Option<IntConstant>> {
        let raw = self.check(v)?;
        if v.kind != ValueKind::ConstantInt {
            return Ok(None);
        }
        // SAFETY: `raw` is a live integer constant (checked kind).
        unsafe {
            let bits = LLVMGetIntTypeWidth(LLVMTypeOf(raw));
            if bits > 64 {
                return Ok(None);
            }
            Ok(Some(IntConstant {
                bits,
                unsigned: LLVMConstIntGetZExtValue(raw),
                signed: LLVMConstIntGetSExtValue(raw),
            }))
        }
    }

    /// The integer constant `value` of `like`'s integer type (or of the
    /// type named `i1`…`i64`).
    pub fn ir_const_int(&mut self, like: TypeOf<'_>, value: i64) -> Result<Value> {
        let ty = self.int_type(like)?;
        // SAFETY: `ty` is an integer type of this module's context.
        let c = unsafe { LLVMConstInt(ty, value as u64, 1) };
        Ok(self.handle(c, ValueKind::ConstantInt))
    }

    fn int_type(&self, like: TypeOf<'_>) -> Result<LLVMTypeRef> {
        match like {
            TypeOf::Value(v) => {
                let raw = self.check(v)?;
                // SAFETY: `raw` is a live value (checked).
                let ty = unsafe { LLVMTypeOf(raw) };
                // SAFETY: `ty` is the type of a live value.
                if unsafe { LLVMGetTypeKind(ty) } != LLVMTypeKind::LLVMIntegerTypeKind {
                    return Err(invalid(format!(
                        "an integer constant needs an integer type; the value's is {}",
                        self.ir_type(v)?
                    )));
                }
                Ok(ty)
            }
            TypeOf::Name(name) => {
                let bits: u32 = name
                    .strip_prefix('i')
                    .and_then(|b| b.parse().ok())
                    .filter(|b| (1..=64).contains(b))
                    .ok_or_else(|| {
                        invalid(format!(
                            "unknown integer type '{name}'; valid are i1 to i64"
                        ))
                    })?;
                // SAFETY: the module's context is alive while the module is.
                Ok(unsafe { LLVMIntTypeInContext(LLVMGetModuleContext(self.raw()), bits) })
            }
        }
    }

    /// Replaces every use of `old` by `new` (same type).
    pub fn ir_replace_all_uses(&mut self, old: Value, new: Value) -> Result<()> {
        let a = self.check(old)?;
        let b = self.check(new)?;
        if old == new {
            return Ok(());
        }
        // SAFETY: both are live values (checked); types are uniqued per
        // context, so equal pointers are equal types.
        if unsafe { LLVMTypeOf(a) != LLVMTypeOf(b) } {
            return Err(invalid(format!(
                "replace_all_uses_with: the types differ ({} and {})",
                self.ir_type(old)?,
                self.ir_type(new)?
            )));
        }
        // SAFETY: live values of one type (checked above).
        unsafe { LLVMReplaceAllUsesWith(a, b) };
        Ok(())
    }

    /// Sets operand `index` of `inst` to `value` (same type as the
    /// operand it replaces).
    pub fn ir_set_operand(&mut self, inst: Value, index: usize, value: Value) -> Result<()> {
        let i = self.check_kind(inst, &[ValueKind::Instruction], "set_operand")?;
        let v = self.check(value)?;
        // SAFETY: `i` is a live instruction (checked).
        let n = unsafe { LLVMGetNumOperands(i) }.max(0) as usize;
        if index >= n {
            return Err(invalid(format!(
                "operand {index} of an instruction with {n}"
            )));
        }
        // SAFETY: `index` < the operand count; `v` is a live value; types
        // compared as uniqued pointers.
        unsafe {
            let old = LLVMGetOperand(i, index as u32);
            if LLVMTypeOf(old) != LLVMTypeOf(v) {
                return Err(invalid(
                    "set_operand: the new value's type is not the operand's",
                ));
            }
            LLVMSetOperand(i, index as u32, v);
        }
        Ok(())
    }

    /// Erases an instruction nothing uses any more (replace its uses
    /// first); its handle, and every copy of it, is invalid afterwards.
    pub fn ir_erase(&mut self, inst: Value) -> Result<()> {
        let i = self.check_kind(inst, &[ValueKind::Instruction], "erase")?;
        let users = self.ir_users(inst)?.len();
        if users > 0 {
            return Err(invalid(format!(
                "erase: the instruction is still used by {users} value(s); replace_all_uses_with first"
            )));
        }
        // SAFETY: `i` is a live instruction with no uses (checked); it is
        // unlinked and deleted, and its address recorded as erased first.
        unsafe {
            *self.tracker().erased.entry(inst.address).or_default() += 1;
            LLVMInstructionEraseFromParent(i);
        }
        Ok(())
    }

    /// Builds an instruction before `before`: a binary operator (`add`,
    /// `mul`, `shl`…), `icmp PRED`, `select`, or a cast (`zext`, `sext`,
    /// `trunc` to the type `to`), with the operands checked.
    pub fn ir_build(
        &mut self,
        before: Value,
        op: &str,
        operands: &[Value],
        to: Option<&str>,
        name: &str,
    ) -> Result<Value> {
        let at = self.check_kind(before, &[ValueKind::Instruction], "a builder")?;
        let raw = operands
            .iter()
            .map(|o| self.check(*o))
            .collect::<Result<Vec<_>>>()?;
        let cname = std::ffi::CString::new(name).map_err(|_| invalid("a name has no NUL byte"))?;
        let words: Vec<&str> = op.split_whitespace().collect();
        // SAFETY: every operand is a live value of this module (checked);
        // types are compared as uniqued pointers before LLVM builds; the
        // builder is positioned before a live instruction and disposed.
        unsafe {
            let builder = LLVMCreateBuilderInContext(LLVMGetModuleContext(self.raw()));
            LLVMPositionBuilderBefore(builder, at);
            let b = Build {
                builder,
                op,
                raw: &raw,
                name: &cname,
            };
            let built = match words.as_slice() {
                [name_op] if BINARY.iter().any(|(n, _)| n == name_op) => b.binary(name_op),
                ["icmp", pred] => b.icmp(pred),
                ["select"] => b.select(),
                [cast @ ("zext" | "sext" | "trunc")] => b
                    .arity(1)
                    .and_then(|()| self.int_type_to(cast, to))
                    .and_then(|target| b.cast(cast, target)),
                _ => Err(invalid(format!(
                    "unknown operation '{op}'; valid are: {}",
                    buildable().join(", ")
                ))),
            };
            LLVMDisposeBuilder(builder);
            let v = built?;
            // A constant operand list may fold to a constant.
            Ok(self.value(v))
        }
    }

    /// The integer type `to` names, which `cast` needs.
    fn int_type_to(&self, cast: &str, to: Option<&str>) -> Result<LLVMTypeRef> {
        self.int_type(TypeOf::Name(to.ok_or_else(|| {
            invalid(format!("{cast} needs a type to cast to (to=\"i64\")"))
        })?))
    }
}

/// What [`Module::ir_build`] builds with: a positioned builder, the
/// operation as the user wrote it, its operands (live values) and the new
/// value's name.
struct Build<'a> {
    builder: LLVMBuilderRef,
    op: &'a str,
    raw: &'a [LLVMValueRef],
    name: &'a std::ffi::CStr,
}

/// Whether `v`'s type is an integer type.
///
/// # Safety
/// `v` is a live value.
unsafe fn is_int(v: LLVMValueRef) -> bool {
    // SAFETY: `v` is live (this function's `# Safety`).
    unsafe { LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMTypeKind::LLVMIntegerTypeKind }
}

impl Build<'_> {
    /// That the operation has `n` operands.
    fn arity(&self, n: usize) -> Result<()> {
        if self.raw.len() == n {
            Ok(())
        } else {
            Err(invalid(format!(
                "{} takes {n} operand(s); got {}",
                self.op,
                self.raw.len()
            )))
        }
    }

    /// Binary operator `name_op` (one of [`BINARY`]) of two integers.
    ///
    /// # Safety
    /// What [`Build`] holds is live.
    unsafe fn binary(&self, name_op: &str) -> Result<LLVMValueRef> {
        self.arity(2)?;
        let raw = self.raw;
        // SAFETY: the builder and operands are live (this function's
        // `# Safety`); types are compared before LLVM builds.
        unsafe {
            if LLVMTypeOf(raw[0]) != LLVMTypeOf(raw[1]) || !is_int(raw[0]) {
                return Err(invalid(format!(
                    "{} takes two integers of one type",
                    self.op
                )));
            }
            let code = BINARY.iter().find(|(n, _)| *n == name_op).map(|(_, c)| *c);
            Ok(LLVMBuildBinOp(
                self.builder,
                code.unwrap_or(LLVMOpcode::LLVMAdd),
                raw[0],
                raw[1],
                self.name.as_ptr(),
            ))
        }
    }

    /// `icmp pred` of two integers.
    ///
    /// # Safety
    /// What [`Build`] holds is live.
    unsafe fn icmp(&self, pred: &str) -> Result<LLVMValueRef> {
        self.arity(2)?;
        let raw = self.raw;
        let p = PREDICATES
            .iter()
            .find(|(n, _)| *n == pred)
            .ok_or_else(|| invalid(format!("unknown predicate '{pred}'; valid are: eq, ne, ugt, uge, ult, ule, sgt, sge, slt, sle")))?;
        // SAFETY: the builder and operands are live (this function's
        // `# Safety`); types are compared before LLVM builds.
        unsafe {
            if LLVMTypeOf(raw[0]) != LLVMTypeOf(raw[1]) || !is_int(raw[0]) {
                return Err(invalid("icmp takes two integers of one type"));
            }
            Ok(LLVMBuildICmp(
                self.builder,
                p.1,
                raw[0],
                raw[1],
                self.name.as_ptr(),
            ))
        }
    }

    /// `select` of an i1 and two values of one type.
    ///
    /// # Safety
    /// What [`Build`] holds is live.
    unsafe fn select(&self) -> Result<LLVMValueRef> {
        self.arity(3)?;
        let raw = self.raw;
        // SAFETY: the builder and operands are live (this function's
        // `# Safety`); types are compared before LLVM builds.
        unsafe {
            let c = LLVMTypeOf(raw[0]);
            if LLVMGetTypeKind(c) != LLVMTypeKind::LLVMIntegerTypeKind
                || LLVMGetIntTypeWidth(c) != 1
            {
                return Err(invalid("select's first operand is an i1"));
            }
            if LLVMTypeOf(raw[1]) != LLVMTypeOf(raw[2]) {
                return Err(invalid("select's two values have one type"));
            }
            Ok(LLVMBuildSelect(
                self.builder,
                raw[0],
                raw[1],
                raw[2],
                self.name.as_ptr(),
            ))
        }
    }

    /// `cast` (`zext`, `sext` or `trunc`) of an integer (its one operand,
    /// counted by the caller) to the integer type `target`, wider or
    /// (`trunc`) narrower.
    ///
    /// # Safety
    /// What [`Build`] holds is live, and so is `target`.
    unsafe fn cast(&self, cast: &str, target: LLVMTypeRef) -> Result<LLVMValueRef> {
        let raw = self.raw;
        // SAFETY: the builder, operand and type are live (this function's
        // `# Safety`); widths are compared before LLVM builds.
        unsafe {
            if !is_int(raw[0]) {
                return Err(invalid(format!("{cast} takes an integer")));
            }
            let (from, into) = (
                LLVMGetIntTypeWidth(LLVMTypeOf(raw[0])),
                LLVMGetIntTypeWidth(target),
            );
            let ok = if cast == "trunc" {
                into < from
            } else {
                into > from
            };
            if !ok {
                return Err(invalid(format!("{cast} from i{from} to i{into}")));
            }
            let f = match cast {
                "zext" => LLVMBuildZExt,
                "sext" => LLVMBuildSExt,
                _ => LLVMBuildTrunc,
            };
            Ok(f(self.builder, raw[0], target, self.name.as_ptr()))
        }
    }
}

/// Where [`Module::ir_const_int`] takes its type from.
#[derive(Clone, Copy, Debug)]
pub enum TypeOf<'a> {
    Value(Value),
    Name(&'a str),
}

fn kinds_text(kinds: &[ValueKind]) -> String {
    kinds
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(" or ")
}

// The tracker is a `RefCell` field of `Module` (`ir`), reset whenever the
// module changes by other means (`Module::changed`).
pub(crate) type TrackerCell = RefCell<Tracker>;

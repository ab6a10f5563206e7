//! Everything a pass writer needs, in one `use passlab::prelude::*;` — the
//! API the built-in passes in `src/passes/` are written against, and the
//! one a `:rust` cell writes passes with.
//!
//! A pass body sees the IR through [inkwell](https://docs.rs/inkwell/0.11)
//! (re-exported as [`inkwell`], so its version always matches):
//!
//! * a **function pass** body is `Fn(FunctionValue<'_>, &PassContext) -> Result<()>`:
//!   it runs on every function with a body, except those marked `optnone`
//!   or `passlab-skip`; it may change its function but not add or remove
//!   functions;
//! * a **module pass** body is `Fn(&mut Module, &PassContext) -> Result<()>`:
//!   it sees the whole module through [`Module::with_ir`].
//!
//! Either way the infrastructure verifies the IR afterwards, catches
//! panics, and puts the module back as it was if anything failed; the
//! error names the pass. `ctx` gives the opt level and config
//! (`ctx.config_bool("fold-int.identities")`).
//!
//! A strength reduction, `x * 2^k` to `x << k`, as a function pass:
//!
//! ```
//! use passlab::prelude::*;
//!
//! /// Replaces `x * 2^k` by `x << k`.
//! fn strength_reduce(f: FunctionValue<'_>, _ctx: &PassContext) -> Result<()> {
//!     for inst in instructions(f) {
//!         if inst.get_opcode() != InstructionOpcode::Mul {
//!             continue;
//!         }
//!         let (Some(x), Some(c)) = (int_operand(inst, 0), int_operand(inst, 1)) else {
//!             continue;
//!         };
//!         let Some(k) = int_constant(c).filter(|c| c.is_power_of_two()).map(u64::trailing_zeros) else {
//!             continue;
//!         };
//!         let shl = builder_before(inst).build_left_shift(x, x.get_type().const_int(k.into(), false), "")?;
//!         replace_int(inst, shl);
//!     }
//!     Ok(())
//! }
//!
//! let mut m = Module::from_c("int f(int x) { return x * 8; }", "f.c")?;
//! let pass = FunctionPass::new(PassInfo::new("strength-reduce", 2), strength_reduce);
//! (&pass as &dyn Pass).apply(&mut m)?;
//! assert!(m.print_function("f")?.contains("shl i32"));
//! # Ok::<(), passlab::Error>(())
//! ```
//!
//! In a session, the same function is written in a `:rust` cell and
//! registered with `:register function_pass strength-reduce = strength_reduce`.

#![forbid(unsafe_code)]

pub use crate::context::PassContext;
pub use crate::instrument::RemarkKind;
pub use crate::module::Module;
pub use crate::pass::{FunctionPass, ModulePass, Pass, PassInfo, Sequential};
pub use crate::{Error, Result};
pub use inkwell;
pub use inkwell::basic_block::BasicBlock;
pub use inkwell::builder::Builder;
pub use inkwell::module::Linkage;
pub use inkwell::types::{AnyType, BasicType, BasicTypeEnum, IntType};
pub use inkwell::values::{
    AnyValue, BasicValue, BasicValueEnum, FloatValue, FunctionValue, InstructionOpcode,
    InstructionValue, IntValue, PhiValue, PointerValue,
};
pub use inkwell::IntPredicate;

/// Emits an optimization remark, as LLVM's passes do: what the pass did
/// (`RemarkKind::Passed`), could not do and why (`Missed`), or found
/// (`Analysis`). `:instrument remarks` records it with the pass that is
/// running; without that instrument it costs nothing and goes nowhere.
///
/// ```
/// use passlab::prelude::*;
/// remark(RemarkKind::Missed, "my-pass", "f", "not folded: the divisor may be 0");
/// ```
pub fn remark(kind: RemarkKind, pass: &str, function: &str, message: &str) {
    crate::instrument::emit_remark(
        kind,
        crate::instrument::UserRemark {
            pass: pass.into(),
            name: String::new(),
            function: function.into(),
            message: message.into(),
        },
    );
}

/// Every instruction of `f`, block by block, collected first, so that the
/// caller may erase or insert instructions while going through them.
pub fn instructions(f: FunctionValue<'_>) -> Vec<InstructionValue<'_>> {
    let mut out = Vec::new();
    for block in f.get_basic_block_iter() {
        let mut next = block.get_first_instruction();
        while let Some(inst) = next {
            out.push(inst);
            next = inst.get_next_instruction();
        }
    }
    out
}

/// Operand `i` of `inst`, if it is an integer (or a constant integer).
pub fn int_operand(inst: InstructionValue<'_>, i: u32) -> Option<IntValue<'_>> {
    match inst.get_operand(i)?.value()? {
        BasicValueEnum::IntValue(v) => Some(v),
        _ => None,
    }
}

/// The value of a constant integer of up to 64 bits, zero-extended; `None`
/// for anything else (including poison and undef).
pub fn int_constant(v: IntValue<'_>) -> Option<u64> {
    if v.is_const() && !v.is_poison() && !v.is_undef() && v.get_type().get_bit_width() <= 64 {
        v.get_zero_extended_constant()
    } else {
        None
    }
}

/// A builder that inserts before `inst` (which must be in a block).
pub fn builder_before(inst: InstructionValue<'_>) -> Builder<'_> {
    let block = inst
        .get_parent()
        .expect("builder_before: the instruction is not in a basic block");
    let builder = block.get_context().create_builder();
    builder.position_before(&inst);
    builder
}

/// Replaces every use of the integer instruction `inst` by `value` and
/// erases `inst`.
pub fn replace_int<'ctx>(inst: InstructionValue<'ctx>, value: IntValue<'ctx>) {
    inst.as_any_value_enum()
        .into_int_value()
        .replace_all_uses_with(value);
    inst.erase_from_basic_block();
}

impl From<inkwell::builder::BuilderError> for Error {
    fn from(e: inkwell::builder::BuilderError) -> Error {
        Error::Invalid(format!("LLVM's IR builder refused: {e}"))
    }
}

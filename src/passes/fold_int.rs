//! `fold-int`: a function pass that folds integer arithmetic on constants
//! and simplifies algebraic identities.

use crate::prelude::{instructions, int_constant as constant, int_operand, replace_int};
use crate::prelude::{FunctionPass, InstructionOpcode, IntValue, PassInfo};

/// Config key: also simplify identities (`x+0`, `x*1`, `x&0`…).
pub const IDENTITIES: &str = "fold-int.identities";

/// What an instruction folds to.
enum Fold<'ctx> {
    Constant(u64),
    Operand(IntValue<'ctx>),
}

/// Folds `a op b` where both are constants of `bits` ≤ 64 bits.
fn fold_constants(op: InstructionOpcode, a: u64, b: u64, bits: u32) -> Option<u64> {
    use InstructionOpcode::*;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let sext = |v: u64| -> i64 { ((v << (64 - bits)) as i64) >> (64 - bits) };
    let r = match op {
        Add => a.wrapping_add(b),
        Sub => a.wrapping_sub(b),
        Mul => a.wrapping_mul(b),
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        // Shifting by the width or more gives poison: leave it to LLVM.
        Shl if b < u64::from(bits) => a << b,
        LShr if b < u64::from(bits) => a >> b,
        AShr if b < u64::from(bits) => (sext(a) >> b) as u64,
        _ => return None,
    };
    Some(r & mask)
}

/// `x op c` or `c op x` where an identity applies.
fn fold_identity<'ctx>(
    op: InstructionOpcode,
    a: IntValue<'ctx>,
    b: IntValue<'ctx>,
    bits: u32,
) -> Option<Fold<'ctx>> {
    use InstructionOpcode::*;
    let all_ones = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let (ca, cb) = (constant(a), constant(b));
    match (op, ca, cb) {
        (Add | Or | Xor, _, Some(0))
        | (Sub | Shl | LShr | AShr, _, Some(0))
        | (Mul, _, Some(1)) => Some(Fold::Operand(a)),
        (Add | Or | Xor, Some(0), _) | (Mul, Some(1), _) => Some(Fold::Operand(b)),
        (And, _, Some(c)) if c == all_ones => Some(Fold::Operand(a)),
        (And, Some(c), _) if c == all_ones => Some(Fold::Operand(b)),
        (Mul | And, _, Some(0)) | (Mul | And, Some(0), _) => Some(Fold::Constant(0)),
        _ => None,
    }
}

/// Folds integer binary operators (`add sub mul and or xor shl lshr ashr`,
/// up to 64 bits) whose operands are both constants, and, unless
/// `fold-int.identities=false`, simplifies `x+0`, `x-0`, `x*1`, `x*0`,
/// `x&0`, `x&-1`, `x|0`, `x^0` and shifts by 0. Folds repeat until nothing
/// changes, so chains of constants collapse.
pub fn fold_int() -> FunctionPass {
    let info = PassInfo::new("fold-int", 1)
        .describe("fold integer arithmetic on constants and identities such as x+0, x*1, x&0");
    FunctionPass::new(info, |function, ctx| {
        let identities = ctx.config_bool(IDENTITIES)?;
        loop {
            let mut changed = false;
            for inst in instructions(function) {
                let (Some(a), Some(b)) = (int_operand(inst, 0), int_operand(inst, 1)) else {
                    continue;
                };
                if inst.get_num_operands() != 2 || !inst.get_type().is_int_type() {
                    continue;
                }
                let op = inst.get_opcode();
                let ty = a.get_type();
                let bits = ty.get_bit_width();
                if bits > 64 {
                    continue;
                }
                let fold = match (constant(a), constant(b)) {
                    (Some(x), Some(y)) => fold_constants(op, x, y, bits).map(Fold::Constant),
                    _ if identities => fold_identity(op, a, b, bits),
                    _ => None,
                };
                let replacement = match fold {
                    Some(Fold::Constant(v)) => ty.const_int(v, false),
                    Some(Fold::Operand(v)) => v,
                    None => continue,
                };
                replace_int(inst, replacement);
                changed = true;
            }
            if !changed {
                return Ok(());
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use InstructionOpcode::*;

    #[test]
    fn folds_wrap_and_mask() {
        assert_eq!(fold_constants(Add, 255, 1, 8), Some(0));
        assert_eq!(fold_constants(Sub, 0, 1, 32), Some(0xffff_ffff));
        assert_eq!(fold_constants(AShr, 0x80, 7, 8), Some(0xff));
        assert_eq!(fold_constants(Shl, 1, 8, 8), None);
        assert_eq!(fold_constants(Mul, 6, 7, 64), Some(42));
    }
}

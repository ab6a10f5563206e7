//! Source lines of IR: each instruction's `!dbg` location (the
//! `!DILocation`'s own line: for code inlined from elsewhere, the line of
//! the inlined code, not of the call, as Compiler Explorer's IR view and
//! `:asm`'s `.loc` lines show it), read from the live IR, and IR text with
//! each instruction line ending in a comment naming it (`; line 12`, or
//! `; util.h:12` for a line of another file than the function's). The
//! comment keeps the text valid IR that parses to the same module; a module
//! without debug info gets no comment (its text is unchanged).

use llvm_sys::core::{
    LLVMGetFirstBasicBlock, LLVMGetFirstFunction, LLVMGetFirstInstruction, LLVMGetNextBasicBlock,
    LLVMGetNextFunction, LLVMGetNextInstruction, LLVMIsDeclaration,
};
use llvm_sys::debuginfo::{
    LLVMDIFileGetDirectory, LLVMDIFileGetFilename, LLVMDILocationGetLine, LLVMDILocationGetScope,
    LLVMDIScopeGetFile, LLVMGetSubprogram, LLVMInstructionGetDebugLoc,
};
use llvm_sys::prelude::{LLVMMetadataRef, LLVMModuleRef, LLVMValueRef};
use std::collections::HashMap;
use std::rc::Rc;

/// Where an instruction comes from: a line of a source file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLine {
    /// The file, as its debug info names it (directory and name).
    pub path: Rc<str>,
    pub line: u32,
    /// Whether the file is the function's own (its `DISubprogram`'s).
    pub own: bool,
}

impl SourceLine {
    /// What the comment says: `line 12`, or `util.h:12` in another file.
    pub fn label(&self) -> String {
        if self.own {
            format!("line {}", self.line)
        } else {
            let name = self.path.rsplit('/').next().unwrap_or(&self.path);
            format!("{name}:{}", self.line)
        }
    }
}

/// A file's path from its `DIFile`.
///
/// # Safety
/// `file` is a live `DIFile`.
unsafe fn file_path(file: LLVMMetadataRef) -> Rc<str> {
    let text = |p: *const std::ffi::c_char, n: std::ffi::c_uint| -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: LLVM returns `n` bytes at `p`, owned by the live node.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n as usize) };
        String::from_utf8_lossy(bytes).into_owned()
    };
    let (mut dn, mut fnl) = (0, 0);
    // SAFETY: `file` is live (the caller's promise); the lengths are written.
    let (dir, name) = unsafe {
        (
            text(LLVMDIFileGetDirectory(file, &mut dn), dn),
            text(LLVMDIFileGetFilename(file, &mut fnl), fnl),
        )
    };
    if dir.is_empty() || name.starts_with('/') {
        name.into()
    } else {
        format!("{}/{name}", dir.trim_end_matches('/')).into()
    }
}

/// The source line of each instruction of function `f`, in order (`None`:
/// no location, or line 0, which compilers give code of no one line);
/// empty when `f` has no debug info.
///
/// # Safety
/// `f` is a live function.
pub(crate) unsafe fn instruction_lines(f: LLVMValueRef) -> Vec<Option<SourceLine>> {
    let mut out = Vec::new();
    // SAFETY: `f` is live (the caller's promise); every handle below is
    // read from it or from metadata it uses, all live while it is.
    unsafe {
        let sp = LLVMGetSubprogram(f);
        if sp.is_null() {
            return out;
        }
        let own = LLVMDIScopeGetFile(sp);
        let mut paths: HashMap<LLVMMetadataRef, Rc<str>> = HashMap::new();
        let mut any = false;
        let mut b = LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            let mut i = LLVMGetFirstInstruction(b);
            while !i.is_null() {
                let loc = LLVMInstructionGetDebugLoc(i);
                let line = if loc.is_null() {
                    None
                } else {
                    let n = LLVMDILocationGetLine(loc);
                    let file = LLVMDIScopeGetFile(LLVMDILocationGetScope(loc));
                    (n > 0 && !file.is_null()).then(|| SourceLine {
                        path: paths.entry(file).or_insert_with(|| file_path(file)).clone(),
                        line: n,
                        own: file == own,
                    })
                };
                any |= line.is_some();
                out.push(line);
                i = LLVMGetNextInstruction(i);
            }
            b = LLVMGetNextBasicBlock(b);
        }
        if !any {
            out.clear();
        }
    }
    out
}

/// [`instruction_lines`] of every function the module defines, in order.
///
/// # Safety
/// `m` is a live module.
pub(crate) unsafe fn module_lines(m: LLVMModuleRef) -> Vec<Vec<Option<SourceLine>>> {
    let mut out = Vec::new();
    // SAFETY: `m` is live (the caller's promise), its functions with it.
    unsafe {
        let mut f = LLVMGetFirstFunction(m);
        while !f.is_null() {
            if LLVMIsDeclaration(f) == 0 {
                out.push(instruction_lines(f));
            }
            f = LLVMGetNextFunction(f);
        }
    }
    out
}

/// Whether a line of a function's body is where an instruction begins:
/// two spaces and then text (not a label, a `#dbg_` record or a switch's
/// case, indented further, nor the `]` ending a switch's cases).
fn begins_instruction(line: &str) -> bool {
    line.strip_prefix("  ")
        .is_some_and(|rest| !rest.starts_with([' ', ']']) && !rest.is_empty())
}

/// IR text as LLVM prints a module or one function, with each instruction
/// line of the functions `lines` describes ending in `; LABEL` (see
/// [`SourceLine::label`]), and the source line of each of its lines.
/// `lines` holds, for each function the text defines, in order, the
/// source line of each of its instructions ([`instruction_lines`]); a
/// function whose instruction lines are not as many (or for which `lines`
/// is empty) is left as it is. Without any source line, the text is
/// returned unchanged.
pub fn annotate(
    text: &str,
    lines: &[Vec<Option<SourceLine>>],
) -> (String, Vec<Option<SourceLine>>) {
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    let mut of_line: Vec<Option<SourceLine>> = vec![None; all.len()];
    if lines.iter().all(Vec::is_empty) {
        return (text.to_string(), of_line);
    }
    // Each function's instruction lines.
    let mut function = 0;
    let mut body: Option<Vec<usize>> = None;
    for (n, l) in all.iter().enumerate() {
        let l = l.trim_end_matches('\n');
        match &mut body {
            None if l.starts_with("define ") && l.ends_with('{') => body = Some(Vec::new()),
            None => {}
            Some(starts) if l == "}" => {
                if let Some(locs) = lines.get(function) {
                    if locs.len() == starts.len() {
                        for (&at, loc) in starts.iter().zip(locs) {
                            of_line[at] = loc.clone();
                        }
                    }
                }
                function += 1;
                body = None;
            }
            Some(starts) if begins_instruction(l) => starts.push(n),
            Some(_) => {}
        }
    }
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (l, loc) in all.iter().zip(&of_line) {
        match loc {
            Some(loc) => {
                let (body, end) = match l.strip_suffix('\n') {
                    Some(b) => (b, "\n"),
                    None => (*l, ""),
                };
                out.push_str(body);
                out.push_str(" ; ");
                out.push_str(&loc.label());
                out.push_str(end);
            }
            None => out.push_str(l),
        }
    }
    (out, of_line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32) -> Option<SourceLine> {
        Some(SourceLine {
            path: "/t/a.c".into(),
            line,
            own: true,
        })
    }

    #[test]
    fn instruction_lines_get_comments_and_the_rest_stays() {
        let text = "; ModuleID = 'a'\n\ndefine i32 @f(i32 %x) !dbg !4 {\nentry:\n  %y = add i32 %x, 1, !dbg !9\n    #dbg_value(i32 %y, !5, !DIExpression(), !9)\n  switch i32 %y, label %d [\n    i32 0, label %d\n  ], !dbg !10\n\nd:                                                ; preds = %entry, %entry\n  ret i32 %y\n}\n\ndeclare void @g()\n";
        let (out, of) = annotate(text, &[vec![at(3), at(4), None]]);
        assert_eq!(
            out,
            text.replace("!dbg !9\n    #dbg", "!dbg !9 ; line 3\n    #dbg")
                .replace(" [\n", " [ ; line 4\n")
        );
        assert_eq!(of.iter().filter(|l| l.is_some()).count(), 2);
        // A count that does not match, or no lines at all: as it was.
        assert_eq!(annotate(text, &[vec![at(3)]]).0, text);
        assert_eq!(annotate(text, &[vec![]]).0, text);
        let other = SourceLine {
            path: "/usr/include/x/util.h".into(),
            line: 7,
            own: false,
        };
        assert_eq!(other.label(), "util.h:7");
    }
}

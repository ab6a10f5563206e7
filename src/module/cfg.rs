//! A function's control-flow graph as plain data ([`Cfg`]): its blocks in
//! order, each with its instructions as the IR prints them, and its edges
//! from LLVM's terminators, labelled by what takes them (`true`/`false` for
//! a conditional `br`, the case values or `default` for a `switch`,
//! `normal`/`unwind` for an `invoke`…). Drawing it is `crate::graph`'s.

use super::Module;
use crate::{Error, Result};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;
use std::ffi::CStr;

/// A function's control-flow graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// The function's name.
    pub function: String,
    /// Its blocks in layout order; the first is the entry.
    pub blocks: Vec<Block>,
    /// The edges, by block index, in the order of each terminator's
    /// successors (one edge per successor block, several labels merged).
    pub edges: Vec<Edge>,
}

/// One basic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its label as the IR prints it, without `%` (`for.body`, `5`,
    /// `"a\22b"`); empty for an unnamed entry block, which IR text shows
    /// without a label.
    pub name: String,
    /// Its instructions as the IR prints them, without indentation; the
    /// last is the terminator.
    pub lines: Vec<String>,
}

/// One edge of the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// What takes it (`true`, `false`, `default`, `1, 7`, `unwind`…);
    /// empty for an unconditional branch.
    pub label: String,
}

impl Cfg {
    /// The block's name as a user reads it: its label, or `entry` for an
    /// unnamed entry block.
    pub fn block_title(&self, i: usize) -> String {
        match self.blocks.get(i) {
            Some(b) if b.name.is_empty() => "entry".into(),
            Some(b) => b.name.clone(),
            None => String::new(),
        }
    }

    /// The number of instructions.
    pub fn instructions(&self) -> usize {
        self.blocks.iter().map(|b| b.lines.len()).sum()
    }
}

impl Cfg {
    /// The graph of a function from its IR text as LLVM prints it (what
    /// the explorer recorded of each version, with no module to parse it
    /// in): the blocks as [`Module::cfg`] gives them, the edges read from
    /// each block's terminator. `None` when the text holds no body.
    pub fn from_text(function: &str, text: &str) -> Option<Cfg> {
        let blocks = split_blocks(text);
        if blocks.is_empty() {
            return None;
        }
        let index = |name: &str| blocks.iter().position(|b| b.name == name);
        let mut edges: Vec<Edge> = Vec::new();
        for (from, b) in blocks.iter().enumerate() {
            let Some(term) = b.lines.last() else { continue };
            for (to, label) in successors(term) {
                let Some(to) = index(&to) else { continue };
                add_edge(&mut edges, from, to, label);
            }
        }
        Some(Cfg {
            function: function.to_string(),
            blocks,
            edges,
        })
    }
}

/// The successors a terminator's text names, in LLVM's order, with their
/// labels (as [`Module::cfg`] gives them).
fn successors(term: &str) -> Vec<(String, String)> {
    // Metadata attachments follow the operands.
    let term = match term.find(", !") {
        Some(i) => &term[..i],
        None => term,
    };
    let targets = label_targets(term);
    let opcode = term
        .split_whitespace()
        .find(|w| !w.starts_with('%') && *w != "=")
        .unwrap_or("");
    let plain = |labels: &[&str]| -> Vec<(String, String)> {
        targets
            .iter()
            .enumerate()
            .map(|(i, (t, _))| (t.clone(), labels.get(i).copied().unwrap_or("").to_string()))
            .collect()
    };
    match opcode {
        "br" if targets.len() == 2 => plain(&["true", "false"]),
        "switch" => targets
            .iter()
            .enumerate()
            .map(|(i, (t, before))| {
                let label = if i == 0 {
                    "default".to_string()
                } else {
                    // `i32 7, label %x`: the value is the word before the comma.
                    before
                        .trim_end()
                        .trim_end_matches(',')
                        .split_whitespace()
                        .last()
                        .unwrap_or("case")
                        .to_string()
                };
                (t.clone(), label)
            })
            .collect(),
        "invoke" => plain(&["normal", "unwind"]),
        "callbr" => {
            let mut v = plain(&["fallthrough"]);
            for e in v.iter_mut().skip(1) {
                e.1 = "indirect".into();
            }
            v
        }
        "indirectbr" => targets
            .iter()
            .map(|(t, _)| (t.clone(), "indirect".to_string()))
            .collect(),
        "catchswitch" | "cleanupret" => targets
            .iter()
            .map(|(t, before)| {
                let label = if before.trim_end().ends_with("unwind") {
                    "unwind"
                } else if opcode == "catchswitch" {
                    "catch"
                } else {
                    ""
                };
                (t.clone(), label.to_string())
            })
            .collect(),
        _ => plain(&[]),
    }
}

/// Each `label %NAME` of `text`: the name as a label line shows it, and
/// the text between the previous target and this one.
fn label_targets(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut from = 0;
    while let Some(at) = rest.find("label %") {
        let before = &text[from..from + at];
        let name_start = &rest[at + "label %".len()..];
        let name = if let Some(q) = name_start.strip_prefix('"') {
            match q.find('"') {
                Some(end) => &name_start[..end + 2],
                None => name_start,
            }
        } else {
            let end = name_start
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '$')))
                .unwrap_or(name_start.len());
            &name_start[..end]
        };
        out.push((name.to_string(), before.to_string()));
        let consumed = at + "label %".len() + name.len();
        from += consumed;
        rest = &rest[consumed..];
    }
    out
}

/// Adds the edge `from` → `to` taken on `label`, or joins the label to
/// the edge already there (several switch cases to one block).
fn add_edge(edges: &mut Vec<Edge>, from: usize, to: usize, label: String) {
    match edges.iter_mut().find(|e| e.from == from && e.to == to) {
        Some(e) if e.label.is_empty() || label.is_empty() => {}
        Some(e) if e.label == label => {}
        Some(e) => {
            e.label.push_str(", ");
            e.label.push_str(&label);
        }
        None => edges.push(Edge { from, to, label }),
    }
}

impl Module {
    /// The control-flow graph of the function `name`. An unknown name is
    /// [`Error::NotFound`] with the nearest names; a function only declared
    /// (no body) is [`Error::Invalid`].
    pub fn cfg(&self, name: &str) -> Result<Cfg> {
        let f = self.function_ref(name)?;
        // SAFETY: `f` is a function of the live module `self` owns.
        if unsafe { LLVMIsDeclaration(f) } != 0 {
            return Err(Error::Invalid(format!(
                "function '{name}' is only declared (it has no body, so no control-flow graph)"
            )));
        }
        let text = self.print_function(name)?;
        // SAFETY: walks the live function's blocks and their terminators'
        // successors and operands, only reading them; the module does not
        // change during the walk.
        let (blocks, edges) = unsafe { structure(f) };
        let mut parsed = split_blocks(&text);
        // The printer shows every block, in order; were it ever otherwise,
        // the graph keeps its structure and loses the instructions.
        if parsed.len() != blocks.len() {
            parsed = blocks
                .iter()
                .map(|n| Block {
                    name: n.clone(),
                    lines: vec![],
                })
                .collect();
        }
        Ok(Cfg {
            function: name.to_string(),
            blocks: parsed,
            edges,
        })
    }
}

/// The blocks' names (from LLVM: empty when unnamed) and the edges.
///
/// # Safety
/// `f` is a live function with a body of a module nothing changes during
/// the call.
unsafe fn structure(f: LLVMValueRef) -> (Vec<String>, Vec<Edge>) {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        let mut refs = Vec::new();
        let mut names = Vec::new();
        let mut b = LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            refs.push(b);
            let name = LLVMGetBasicBlockName(b);
            names.push(if name.is_null() {
                String::new()
            } else {
                CStr::from_ptr(name).to_string_lossy().into_owned()
            });
            b = LLVMGetNextBasicBlock(b);
        }
        let index = |bb: LLVMBasicBlockRef| refs.iter().position(|r| *r == bb);
        let mut edges: Vec<Edge> = Vec::new();
        for (from, &block) in refs.iter().enumerate() {
            let term = LLVMGetBasicBlockTerminator(block);
            if term.is_null() {
                continue;
            }
            let opcode = LLVMGetInstructionOpcode(term);
            let n = LLVMGetNumSuccessors(term);
            let unwind = match opcode {
                LLVMOpcode::LLVMCatchSwitch | LLVMOpcode::LLVMCleanupRet => LLVMGetUnwindDest(term),
                _ => std::ptr::null_mut(),
            };
            for i in 0..n {
                let to_ref = LLVMGetSuccessor(term, i);
                let Some(to) = index(to_ref) else { continue };
                let label = match opcode {
                    LLVMOpcode::LLVMBr if n == 2 => {
                        if i == 0 {
                            "true".to_string()
                        } else {
                            "false".to_string()
                        }
                    }
                    LLVMOpcode::LLVMSwitch if i == 0 => "default".to_string(),
                    // Operands: condition, default, then value and
                    // destination for each case.
                    LLVMOpcode::LLVMSwitch => case_value(LLVMGetOperand(term, 2 * i)),
                    LLVMOpcode::LLVMInvoke if i == 0 => "normal".to_string(),
                    LLVMOpcode::LLVMInvoke => "unwind".to_string(),
                    LLVMOpcode::LLVMCallBr if i == 0 => "fallthrough".to_string(),
                    LLVMOpcode::LLVMCallBr => "indirect".to_string(),
                    LLVMOpcode::LLVMCatchSwitch | LLVMOpcode::LLVMCleanupRet
                        if to_ref == unwind =>
                    {
                        "unwind".to_string()
                    }
                    LLVMOpcode::LLVMCatchSwitch => "catch".to_string(),
                    LLVMOpcode::LLVMIndirectBr => "indirect".to_string(),
                    _ => String::new(),
                };
                // Several successors to one block (switch cases, both arms
                // of a br): one edge, its labels joined.
                add_edge(&mut edges, from, to, label);
            }
        }
        (names, edges)
    }
}

/// A switch case's value as the IR shows it, without its type (`7`, `-1`).
///
/// # Safety
/// `v` is null or a live constant.
unsafe fn case_value(v: LLVMValueRef) -> String {
    if v.is_null() {
        return "case".into();
    }
    // SAFETY: `v` is a live value (the caller's guarantee); LLVM returns a
    // new NUL-terminated string, copied and then freed once.
    let text = unsafe {
        let p = LLVMPrintValueToString(v);
        let s = CStr::from_ptr(p).to_string_lossy().into_owned();
        LLVMDisposeMessage(p);
        s
    };
    match text.split_once(' ') {
        Some((_, value)) => value.to_string(),
        None => text,
    }
}

/// A printed function's blocks: the lines between `define … {` and `}`,
/// a block starting at each unindented line (its label) and the entry's
/// at the first instruction when it has no label.
fn split_blocks(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if !inside {
            inside = line.starts_with("define ");
            continue;
        }
        if line == "}" {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            // Instructions are indented by two spaces; a line indented
            // more continues the one before (a switch's cases, an invoke's
            // `to label`, a landingpad's clauses; a switch's closing `]`), except a
            // debug record.
            let continues = (line.starts_with("   ") && !line.trim_start().starts_with("#dbg_"))
                || line.trim() == "]";
            if let Some(open) = blocks.last_mut().and_then(|b| b.lines.last_mut()) {
                if continues {
                    open.push(' ');
                    open.push_str(line.trim());
                    continue;
                }
            }
            if blocks.is_empty() {
                blocks.push(Block {
                    name: String::new(),
                    lines: vec![],
                });
            }
            if let Some(b) = blocks.last_mut() {
                b.lines.push(line.trim().to_string());
            }
        } else {
            blocks.push(Block {
                name: label_of(line),
                lines: vec![],
            });
        }
    }
    blocks
}

/// The label of a label line (`for.body:    ; preds = %5`, `"a:b":`).
fn label_of(line: &str) -> String {
    if let Some(rest) = line.strip_prefix('"') {
        // LLVM escapes a quote in a name as \22: the next quote closes it.
        if let Some(end) = rest.find('"') {
            return line[..end + 2].to_string();
        }
    }
    match line.find(':') {
        Some(i) => line[..i].to_string(),
        None => line.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_of_label_lines() {
        assert_eq!(label_of("for.body:      ; preds = %5"), "for.body");
        assert_eq!(label_of("5:"), "5");
        assert_eq!(label_of("\"a:b\\22\":   ; preds"), "\"a:b\\22\"");
    }

    #[test]
    fn blocks_of_printed_text() {
        let text = "; Function Attrs: x\ndefine i32 @f(i32 %0) {\n  %2 = add i32 %0, 1\n  br label %3\n\n3:    ; preds = %1\n  switch i32 %0, label %4 [\n    i32 1, label %3\n  ]\n\n4:\n  ret i32 %2\n}\n";
        let b = split_blocks(text);
        assert_eq!(b.len(), 3);
        assert_eq!(b[1].lines, ["switch i32 %0, label %4 [ i32 1, label %3 ]"]);
        assert_eq!(b[0].name, "");
        assert_eq!(b[0].lines, ["%2 = add i32 %0, 1", "br label %3"]);
        assert_eq!(b[1].name, "3");
        assert_eq!(b[2].lines, ["ret i32 %2"]);
    }
}

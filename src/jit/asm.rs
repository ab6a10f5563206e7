//! Machine code as a reader sees it: the assembly passlab's own code
//! generator makes of a module, parsed into functions and lines linked to
//! their source lines, with each function's size in bytes.
//!
//! [`assembly`] generates code in a forked child, as the JIT does (a fatal
//! error in LLVM ends the child, not the session), with the same settings
//! as `:call` and `:bench` ([`Codegen`]: `codegen.opt_level`, `target.cpu`,
//! `target.features`; position independent, small code model, the module's
//! `alwaysinline` functions inlined), so what a user reads is what they
//! timed, less the JIT's entry point and the stubs it links in for symbols
//! defined nowhere. The child prints the assembly
//! (`att` or `intel` syntax, [`SYNTAX_KEY`]) and then assembles that same
//! text with LLVM's MC layer, as `llvm-mc -filetype=obj` does, to read
//! each function's size from the object's symbols: one code generation,
//! not two (assembling costs about a tenth of generating).
//!
//! [`Assembly::render`] shows it as Compiler Explorer does by default:
//! instructions and the labels they jump to, without directives, comment
//! lines and labels nothing uses ([`Filter::all`] keeps everything), with
//! the source lines the module's debug info (`.loc`) names interleaved
//! before their instructions; in HTML, the source and the code side by
//! side, each source line and its instructions in one colour, and hovering
//! either marks the other.
//!
//! ```
//! use passlab::jit::{asm, Codegen};
//! let m = passlab::Module::from_ir("define i32 @twice(i32 %x) {\n  %y = shl i32 %x, 1\n  ret i32 %y\n}\n", "t").unwrap();
//! let a = asm::assembly(&m, &Codegen::default(), asm::Syntax::Att).unwrap();
//! let f = a.function("twice").unwrap();
//! assert!(f.bytes.unwrap() > 0);
//! let text = a.render(Some("twice"), asm::Filter::default(), &|_| None).unwrap().text;
//! assert!(text.contains("ret"), "{text}");
//! ```

use super::codegen::{
    child_error, emit_file, emit_probed, on_fatal_error, prepare, Codegen, Probe,
};
use super::probes::Backend;
use crate::module::Module;
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Config key: the assembly syntax `:asm` shows (`att` or `intel`).
pub const SYNTAX_KEY: &str = "codegen.asm_syntax";

pub(super) fn config_options() -> Vec<crate::ConfigOption> {
    vec![crate::ConfigOption::new(
        SYNTAX_KEY,
        "att",
        "the assembly syntax :asm shows: att (as llc and GNU as) or intel (as Compiler Explorer's default)",
    )
    .with_check(|s| {
        Syntax::parse(s)
            .map(|_| ())
            .map_err(|_| "att or intel".to_string())
    })]
}

/// The assembly syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syntax {
    Att,
    Intel,
}

impl Syntax {
    /// `att` or `intel`.
    pub fn parse(word: &str) -> std::result::Result<Syntax, String> {
        match word {
            "att" | "at&t" => Ok(Syntax::Att),
            "intel" => Ok(Syntax::Intel),
            _ => Err(format!("expects att or intel, got '{word}'")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Syntax::Att => "att",
            Syntax::Intel => "intel",
        }
    }
}

/// What a line of assembly is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Instruction,
    Label,
    Directive,
    Comment,
}

/// One line of the printed assembly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub kind: Kind,
    /// As LLVM printed it, without the line break.
    pub text: String,
    /// The source line (file number, line) the debug info gives it.
    pub source: Option<(u32, u32)>,
}

/// One function's machine code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// Its size in the object file (the symbol's size), when known.
    pub bytes: Option<u64>,
    pub lines: Vec<Line>,
}

/// The assembly of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembly {
    /// The whole text as the code generator printed it.
    pub text: String,
    pub syntax: Syntax,
    pub functions: Vec<Function>,
    /// The source files the debug info names (`.file N "dir" "name"`).
    pub files: BTreeMap<u32, String>,
    /// Labels some instruction refers to (jump targets, constants).
    used: BTreeSet<String>,
}

/// What [`Assembly::render`] hides, and whether it makes the HTML view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Show everything LLVM printed (directives, comments, every label).
    pub all: bool,
    /// Interleave source lines (when the module has debug info).
    pub source: bool,
    /// Also make the highlighted HTML view (most of the time a small
    /// function's rendering takes: a front end that shows text turns it
    /// off).
    pub html: bool,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter {
            all: false,
            source: true,
            html: true,
        }
    }
}

impl Filter {
    /// Everything, as LLVM printed it.
    pub fn all() -> Filter {
        Filter {
            all: true,
            source: false,
            html: true,
        }
    }

    /// The same, as text only.
    pub fn text_only(self) -> Filter {
        Filter {
            html: false,
            ..self
        }
    }
}

/// What [`Assembly::render`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// Side-by-side HTML, when it is not too large to show.
    pub html: Option<String>,
    /// Whether some line had a source line (the module has debug info).
    pub has_source: bool,
}

/// The assembly of `module` for `cg` in `syntax`, generated in a forked
/// child (see the module documentation).
pub fn assembly(module: &Module, cg: &Codegen, syntax: Syntax) -> Result<Assembly> {
    generate(module, cg, syntax, None).map(|(code, _)| code)
}

/// As [`assembly`], every back-end pass observed: the code and what the
/// back end did ([`Backend`]), for the instruments; `probe` says what the
/// probes keep besides time and change.
pub fn assembly_probed(
    module: &Module,
    cg: &Codegen,
    syntax: Syntax,
    probe: Probe,
) -> Result<(Assembly, Backend)> {
    generate(module, cg, syntax, Some(probe))
}

/// Generates the assembly in a forked child, with the back end probed when
/// `probe` is given. The child streams the probes' record as code
/// generation goes, and answers two length-prefixed parts: the text and
/// each function's size.
fn generate(
    module: &Module,
    cg: &Codegen,
    syntax: Syntax,
    probe: Option<Probe>,
) -> Result<(Assembly, Backend)> {
    let name = module.name();
    let raw = module.raw();
    let triple = module.triple();
    let work = move |record: &mut dyn FnMut(&[u8])| -> std::result::Result<Vec<u8>, String> {
        // SAFETY: in the child, on this process's own copy of the module;
        // installing a handler (a plain function) is always sound; the
        // syntax option is this child's to set (the session never sets it).
        unsafe {
            llvm_sys::error_handling::LLVMInstallFatalErrorHandler(Some(on_fatal_error));
            if syntax == Syntax::Intel && !crate::ffi::plab_set_asm_syntax(c"intel".as_ptr()) {
                return Err("this LLVM has no Intel syntax option (x86-asm-syntax)".into());
            }
        }
        prepare(raw, &triple, cg)?;
        let text = match probe {
            Some(probe) => emit_probed(raw, &triple, cg, true, probe, record)?,
            None => {
                let kind = llvm_sys::target_machine::LLVMCodeGenFileType::LLVMAssemblyFile;
                emit_file(raw, &triple, cg, kind)?
            }
        };
        let sizes = match assemble(&text, &triple, cg) {
            Ok(object) => symbol_sizes(&object)?,
            // Sizes are an extra: the assembly still shows without them.
            Err(_) => String::new(),
        };
        let mut out = Vec::new();
        for part in [&text[..], sizes.as_bytes()] {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part);
        }
        Ok(out)
    };
    let mut record = super::probes::Reader::default();
    let bytes = crate::child::in_child_streamed(work, &mut |piece| record.feed(piece))
        .map_err(|e| child_error(&name, e))?;
    let broken = || Error::Codegen {
        module: name.clone(),
        message: "the compiling child sent a malformed answer".into(),
    };
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut rest = &bytes[..];
    for _ in 0..2 {
        let len = rest
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .and_then(|l| usize::try_from(l).ok())
            .ok_or_else(broken)?;
        let end = len
            .checked_add(8)
            .filter(|&e| e <= rest.len())
            .ok_or_else(broken)?;
        parts.push(&rest[8..end]);
        rest = &rest[end..];
    }
    let [text, sizes]: [&[u8]; 2] = parts.try_into().map_err(|_| broken())?;
    let sizes: BTreeMap<String, u64> = String::from_utf8_lossy(sizes)
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter_map(|(n, s)| Some((n.to_string(), s.parse().ok()?)))
        .collect();
    let text = String::from_utf8_lossy(text).into_owned();
    Ok((parse(text, syntax, &sizes), record.finish()))
}

/// Assembles `text` into an object file (in the child).
fn assemble(text: &[u8], triple: &str, cg: &Codegen) -> std::result::Result<Vec<u8>, String> {
    let c = |s: &str| std::ffi::CString::new(s).map_err(|e| e.to_string());
    let (triple, cpu, features) = (c(triple)?, c(&cg.target.cpu)?, c(&cg.target.features)?);
    let mut sinks = crate::ffi::Sinks::default();
    let user = sinks.user();
    // SAFETY: the strings are NUL-terminated and alive for the call; `text`
    // is read for `len` bytes; both sinks write into `sinks`, alive for the
    // call.
    let ok = unsafe {
        crate::ffi::plab_assemble(
            triple.as_ptr(),
            cpu.as_ptr(),
            features.as_ptr(),
            text.as_ptr().cast(),
            text.len(),
            crate::ffi::SINK_FIRST,
            user,
            crate::ffi::SINK_SECOND,
            user,
        )
    };
    if ok {
        Ok(sinks.first)
    } else {
        Err(sinks.second_text())
    }
}

/// `name\tsize` lines for the function symbols of an object file.
pub(super) fn symbol_sizes(object: &[u8]) -> std::result::Result<String, String> {
    use llvm_sys::object::*;
    use std::ffi::CStr;
    let mut out = String::new();
    // SAFETY: the memory buffer is a copy of `object` owned here; the binary,
    // symbol iterator and buffer are disposed once, in reverse order of
    // creation, and names are read while the binary lives.
    unsafe {
        let buf = llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
            object.as_ptr().cast(),
            object.len(),
            c"object".as_ptr(),
        );
        let mut err = std::ptr::null_mut();
        let bin = LLVMCreateBinary(buf, llvm_sys::core::LLVMGetGlobalContext(), &mut err);
        if bin.is_null() {
            if !err.is_null() {
                llvm_sys::core::LLVMDisposeMessage(err);
            }
            llvm_sys::core::LLVMDisposeMemoryBuffer(buf);
            return Err("the assembled code is not an object file".into());
        }
        let it = LLVMObjectFileCopySymbolIterator(bin);
        while LLVMObjectFileIsSymbolIteratorAtEnd(bin, it) == 0 {
            let name = LLVMGetSymbolName(it);
            if !name.is_null() {
                let name = CStr::from_ptr(name).to_string_lossy();
                let size = LLVMGetSymbolSize(it);
                if !name.is_empty() && size > 0 {
                    let _ = writeln!(out, "{name}\t{size}");
                }
            }
            LLVMMoveToNextSymbol(it);
        }
        LLVMDisposeSymbolIterator(it);
        LLVMDisposeBinary(bin);
        llvm_sys::core::LLVMDisposeMemoryBuffer(buf);
    }
    Ok(out)
}

/// What kind of line `t` (trimmed) is, and for a label its name.
fn classify(t: &str) -> (Kind, Option<&str>) {
    if t.starts_with('#') || t.starts_with("//") || t.starts_with(';') {
        return (Kind::Comment, None);
    }
    let first = t.split_whitespace().next().unwrap_or("");
    if let Some(label) = first.strip_suffix(':') {
        if !label.is_empty() {
            return (Kind::Label, Some(label.trim_matches('"')));
        }
    }
    if t.starts_with('.') {
        (Kind::Directive, None)
    } else {
        (Kind::Instruction, None)
    }
}

/// The quoted strings of a directive's operands.
fn quoted(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            let mut s = String::new();
            let mut escaped = false;
            for c in chars.by_ref() {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '"') => break,
                    _ => {
                        escaped = false;
                        s.push(c);
                    }
                }
            }
            out.push(s);
        }
    }
    out
}

/// The names an instruction's operands mention (labels, symbols).
fn operand_names(t: &str) -> impl Iterator<Item = &str> {
    let operands = t.split_once(char::is_whitespace).map_or("", |(_, o)| o);
    let operands = operands.split('#').next().unwrap_or("");
    operands
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'))
        .filter(|w| w.starts_with(".L"))
}

/// Parses the printed assembly into functions.
pub fn parse(text: String, syntax: Syntax, sizes: &BTreeMap<String, u64>) -> Assembly {
    let mut p = Parser::default();
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        let (kind, label) = classify(t);
        match kind {
            Kind::Directive => {
                if !p.directive(t) {
                    continue;
                }
            }
            Kind::Instruction => {
                p.used.extend(operand_names(t).map(str::to_string));
            }
            Kind::Label => {
                let name = label.unwrap_or_default();
                if p.declared.contains(name) {
                    p.end_function();
                    p.current = Some(Function {
                        name: name.to_string(),
                        bytes: sizes.get(name).copied(),
                        lines: Vec::new(),
                    });
                }
            }
            Kind::Comment => {}
        }
        let ends = kind == Kind::Label && label.is_some_and(|l| l.starts_with(".Lfunc_end"));
        if let Some(f) = p.current.as_mut() {
            f.lines.push(Line {
                kind,
                text: raw.to_string(),
                source: if kind == Kind::Instruction {
                    p.source
                } else {
                    None
                },
            });
        }
        if ends {
            p.end_function();
        }
    }
    p.end_function();
    Assembly {
        text,
        syntax,
        functions: p.functions,
        files: p.files,
        used: p.used,
    }
}

/// What [`parse`] has read so far.
#[derive(Default)]
struct Parser {
    functions: Vec<Function>,
    files: BTreeMap<u32, String>,
    used: BTreeSet<String>,
    /// The names `.type` declares functions.
    declared: BTreeSet<String>,
    /// The function being read.
    current: Option<Function>,
    /// The source line (file, line) the next instructions come from.
    source: Option<(u32, u32)>,
}

impl Parser {
    /// Ends the function being read, if any.
    fn end_function(&mut self) {
        if let Some(f) = self.current.take() {
            self.functions.push(f);
        }
        self.source = None;
    }

    /// Reads a directive: a function's `.type`, a `.file`, a `.loc`.
    /// False when the line is dropped (a `.file` naming no file).
    fn directive(&mut self, t: &str) -> bool {
        let mut words = t.split_whitespace();
        match words.next() {
            Some(".type") => {
                if let Some((name, ty)) = t[5..].trim().split_once(',') {
                    if ty.trim() == "@function" {
                        self.declared
                            .insert(name.trim().trim_matches('"').to_string());
                    }
                }
            }
            Some(".file") => {
                let number = words.next().and_then(|n| n.parse::<u32>().ok());
                let parts = quoted(t);
                if let Some(n) = number {
                    let path = match parts.as_slice() {
                        [dir, name, ..] if !name.starts_with('/') => {
                            format!("{}/{name}", dir.trim_end_matches('/'))
                        }
                        [_, name, ..] | [name] => name.clone(),
                        [] => return false,
                    };
                    self.files.insert(n, path);
                }
            }
            Some(".loc") => {
                let file = words.next().and_then(|n| n.parse::<u32>().ok());
                let line = words.next().and_then(|n| n.parse::<u32>().ok());
                self.source = match (file, line) {
                    (Some(f), Some(l)) if l > 0 => Some((f, l)),
                    _ => None,
                };
            }
            _ => {}
        }
        true
    }
}

/// The most bytes of HTML a rendering carries; past it, text only.
const MAX_HTML_BYTES: usize = 2 << 20;

/// Background colours for source lines and their instructions.
const COLOURS: [&str; 12] = crate::highlight::SOURCE_COLOURS;

impl Assembly {
    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The lines of `f` a reader needs (see [`Filter`]).
    fn shown<'a>(&'a self, f: &'a Function, filter: Filter) -> impl Iterator<Item = &'a Line> {
        f.lines.iter().skip(1).filter(move |l| {
            filter.all
                || match l.kind {
                    Kind::Instruction => true,
                    Kind::Label => {
                        let t = l.text.trim();
                        let name = classify(t).1.unwrap_or_default();
                        self.used.contains(name)
                    }
                    Kind::Directive | Kind::Comment => false,
                }
        })
    }

    /// Text (and HTML when it fits) of one function or, with `None`, of
    /// every function; `source(path)` gives a source file's text.
    /// Interleaves source lines when `filter.source` and the debug info
    /// names them.
    pub fn render(
        &self,
        function: Option<&str>,
        filter: Filter,
        source: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Rendered> {
        let functions: Vec<&Function> = match function {
            Some(name) => vec![self.function(name).ok_or_else(|| {
                Error::Invalid(format!("no function '{name}' in the machine code"))
            })?],
            None => self.functions.iter().collect(),
        };
        // Source files, read once, as lines.
        let mut texts: BTreeMap<u32, Option<Vec<String>>> = BTreeMap::new();
        let mut line_of = |(file, line): (u32, u32)| -> Option<String> {
            let lines = texts.entry(file).or_insert_with(|| {
                let path = self.files.get(&file)?;
                Some(source(path)?.lines().map(str::to_string).collect())
            });
            lines
                .as_ref()?
                .get(usize::try_from(line).ok()?.checked_sub(1)?)
                .cloned()
        };
        let many_files = self.files.values().collect::<BTreeSet<_>>().len() > 1;
        let file_name = |file: u32| -> String {
            self.files
                .get(&file)
                .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
                .unwrap_or_else(|| format!("file {file}"))
        };
        let mut text = String::new();
        let mut has_source = false;
        // For HTML: the source lines each function uses, and its lines.
        let mut html_functions = Vec::new();
        for f in &functions {
            let size = f
                .bytes
                .map(|b| format!("  ({b} bytes)"))
                .unwrap_or_default();
            let _ = writeln!(text, "{}:{size}", f.name);
            let mut last = None;
            let mut rows = Vec::new();
            for l in self.shown(f, filter) {
                if filter.source && l.source.is_some() && l.source != last {
                    if let Some(key) = l.source {
                        has_source = true;
                        if let Some(code) = line_of(key) {
                            let place = if many_files {
                                format!("{}:{}", file_name(key.0), key.1)
                            } else {
                                key.1.to_string()
                            };
                            let _ = writeln!(text, "{place:>8} │ {}", code.trim_end());
                        }
                    }
                }
                if l.source.is_some() {
                    last = l.source;
                }
                let _ = writeln!(text, "{}", tidy(&l.text, l.kind, filter.all));
                rows.push(l);
            }
            text.push('\n');
            html_functions.push((*f, rows));
        }
        let text = text.trim_end().to_string() + "\n";
        let html = (filter.html && text.len() <= MAX_HTML_BYTES / 4)
            .then(|| self.html(&html_functions, filter, &mut line_of, &file_name))
            .filter(|h| h.len() <= MAX_HTML_BYTES);
        Ok(Rendered {
            text,
            html,
            has_source,
        })
    }

    /// Source and code side by side, linked by colour.
    fn html(
        &self,
        functions: &[(&Function, Vec<&Line>)],
        filter: Filter,
        line_of: &mut dyn FnMut((u32, u32)) -> Option<String>,
        file_name: &dyn Fn(u32) -> String,
    ) -> String {
        // Colours in order of first use.
        let mut colour: BTreeMap<(u32, u32), usize> = BTreeMap::new();
        for (_, rows) in functions {
            for l in rows {
                if let Some(key) = l.source.filter(|_| filter.source) {
                    let n = colour.len();
                    colour.entry(key).or_insert(n);
                }
            }
        }
        let css = html_css(&colour);
        let code = code_pane(functions, filter, &colour);
        let pane = if colour.is_empty() {
            format!("<div>{code}</div>")
        } else {
            let src = source_pane(&colour, line_of, file_name);
            format!("<div>{src}</div><div>{code}</div>")
        };
        format!("<div class=\"plab-asm\"><style>{css}</style>{pane}</div>")
    }
}

/// A source line's key in the HTML: `file-line`.
fn source_key((f, l): (u32, u32)) -> String {
    format!("{f}-{l}")
}

/// The class (` cN`) and attribute (` data-s="…"`) of an HTML line from
/// the source line `k`, by its `colour` (empty for none).
fn colour_class(colour: &BTreeMap<(u32, u32), usize>, k: Option<(u32, u32)>) -> (String, String) {
    match k.and_then(|k| colour.get(&k).map(|c| (k, c))) {
        Some((k, c)) => (
            format!(" c{}", c % COLOURS.len()),
            format!(" data-s=\"{}\"", source_key(k)),
        ),
        None => (String::new(), String::new()),
    }
}

/// The style sheet of the side-by-side HTML, with a rule outlining each
/// source line of `colour` and its instructions under the pointer.
fn html_css(colour: &BTreeMap<(u32, u32), usize>) -> String {
    let mut css = String::from(
        ".plab-asm{display:flex;gap:12px;align-items:flex-start;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
         .plab-asm>div{flex:1;min-width:0;max-height:36em;overflow:auto;border:1px solid #ddd;padding:4px 0}\
         .plab-asm .l{white-space:pre;padding:0 8px}\
         .plab-asm .h{font-weight:bold;padding:2px 8px;color:#444;background:#f4f4f4}\
         .plab-asm .n{display:inline-block;min-width:3.5em;text-align:right;color:#888;margin-right:8px;user-select:none}\
         .plab-asm .lb{color:#795e26}\
         .plab-asm .x{color:#999}",
    );
    for (i, c) in COLOURS.iter().enumerate() {
        let _ = write!(css, ".plab-asm .c{i}{{background:{c}}}");
    }
    for k in colour.keys() {
        let k = source_key(*k);
        let _ = write!(
            css,
            ".plab-asm:has([data-s=\"{k}\"]:hover) [data-s=\"{k}\"]{{outline:2px solid #333;outline-offset:-1px}}"
        );
    }
    css
}

/// The source pane of the side-by-side HTML: per file, the lines from the
/// first to the last one the code uses (those of `colour`).
fn source_pane(
    colour: &BTreeMap<(u32, u32), usize>,
    line_of: &mut dyn FnMut((u32, u32)) -> Option<String>,
    file_name: &dyn Fn(u32) -> String,
) -> String {
    let mut spans: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for &(file, line) in colour.keys() {
        let e = spans.entry(file).or_insert((line, line));
        e.0 = e.0.min(line);
        e.1 = e.1.max(line);
    }
    let mut src = String::new();
    for (&file, &(first, last)) in &spans {
        let _ = write!(src, "<div class=\"h\">{}</div>", escape(&file_name(file)));
        // A long stretch of unused lines is folded to one.
        let mut gap = 0;
        for line in first..=last.min(first.saturating_add(5000)) {
            let k = (file, line);
            let code = line_of(k).unwrap_or_default();
            if !colour.contains_key(&k) {
                gap += 1;
                if gap > 3 {
                    continue;
                }
            } else {
                gap = 0;
            }
            let (c, d) = colour_class(colour, Some(k));
            let _ = write!(
                src,
                "<div class=\"l{c}\"{d}><span class=\"n\">{line}</span>{}</div>",
                escape(&code)
            );
        }
    }
    src
}

/// The code pane of the side-by-side HTML: each function's lines, coloured
/// by their source line.
fn code_pane(
    functions: &[(&Function, Vec<&Line>)],
    filter: Filter,
    colour: &BTreeMap<(u32, u32), usize>,
) -> String {
    let mut code = String::new();
    for (f, rows) in functions {
        let size = f.bytes.map(|b| format!(" ({b} bytes)")).unwrap_or_default();
        let _ = write!(code, "<div class=\"h\">{}{size}</div>", escape(&f.name));
        let texts: Vec<String> = rows
            .iter()
            .map(|l| tidy(&l.text, l.kind, filter.all))
            .collect();
        let lit = crate::highlight::asm_lines(&texts);
        for (i, l) in rows.iter().enumerate() {
            let (c, d) = colour_class(colour, l.source.filter(|_| filter.source));
            let body = match (&lit, l.kind) {
                (_, Kind::Label) => format!("<span class=\"lb\">{}</span>", escape(&texts[i])),
                (_, Kind::Comment | Kind::Directive) => {
                    format!("<span class=\"x\">{}</span>", escape(&texts[i]))
                }
                (Some(lit), Kind::Instruction) => lit[i].clone(),
                (None, Kind::Instruction) => escape(&texts[i]),
            };
            let _ = write!(code, "<div class=\"l{c}\"{d}>{body}</div>");
        }
    }
    code
}

/// A line as shown: instructions indented with the operands at a tab stop,
/// labels at the margin (unless `raw`).
fn tidy(line: &str, kind: Kind, raw: bool) -> String {
    if raw {
        return line.replace('\t', "    ");
    }
    let t = line.trim();
    match kind {
        Kind::Label => t.replace('\t', " "),
        _ => {
            let (op, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
            let rest = rest.trim_start();
            if rest.is_empty() {
                format!("        {op}")
            } else {
                // Trailing comments (`# 4-byte Spill`) keep their place.
                let rest = match rest.split_once('#') {
                    Some((ops, comment)) => {
                        format!("{:<28} #{}", ops.trim_end(), comment.trim_end())
                    }
                    None => rest.to_string(),
                };
                // Operands at the tab stop, or a space past a long name.
                let width = 8.max(op.len() + 1);
                format!("        {op:<width$}{}", rest.trim_end())
            }
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Assembly {
    /// Bytes of code: of `function`'s (0 when unknown), or with `None` of
    /// every function.
    pub fn bytes(&self, function: Option<&str>) -> u64 {
        match function {
            Some(f) => self.function(f).and_then(|f| f.bytes).unwrap_or(0),
            None => self.functions.iter().filter_map(|f| f.bytes).sum(),
        }
    }

    /// What `:asm --out` writes: the assembler's whole text, or with a
    /// function its lines as the assembler printed them (every directive
    /// and label kept; source lines by `source(path)`).
    pub fn raw_text(
        &self,
        function: Option<&str>,
        source: &dyn Fn(&str) -> Option<String>,
    ) -> Result<String> {
        Ok(match function {
            Some(_) => {
                self.render(function, Filter::all().text_only(), source)?
                    .text
            }
            None => self.text.clone(),
        })
    }
}

/// `message` as an error of `:asm`'s.
fn asm_error(message: impl Into<String>) -> Error {
    Error::Command {
        command: "asm".into(),
        message: message.into(),
        suggestions: vec![],
    }
}

/// The two compilations `:asm cpu=A,B` or `modules=M,N` puts side by side,
/// as (module, settings): two processors (`cpus`) for one module (the one
/// in `modules`, else `current()`), or two modules under one processor
/// (the one in `cpus`, else `base`'s); `base` gives the other settings.
/// Anything else is an error naming what was given.
pub fn sides(
    base: &Codegen,
    cpus: &[String],
    modules: &[String],
    current: &mut dyn FnMut() -> Result<String>,
) -> Result<[(String, Codegen); 2]> {
    let on = |cpu: &String| -> Result<Codegen> {
        Ok(Codegen {
            target: crate::llvm::Target::new(cpu, "").map_err(|e| asm_error(e.to_string()))?,
            cpu_setting: cpu.clone(),
            ..base.clone()
        })
    };
    match (cpus, modules) {
        ([a, b], one) if one.len() <= 1 => {
            let m = match one {
                [m] => m.clone(),
                _ => current()?,
            };
            let a = on(a)?;
            Ok([(m.clone(), a), (m, on(b)?)])
        }
        (one, [m, n]) if one.len() <= 1 => {
            let cg = match one {
                [cpu] => on(cpu)?,
                _ => base.clone(),
            };
            Ok([(m.clone(), cg.clone()), (n.clone(), cg)])
        }
        _ => Err(asm_error(format!(
            "side by side takes two: cpu=A,B (one module) or modules=M,N (one processor); got cpu={} modules={}",
            cpus.join(","),
            modules.join(",")
        ))),
    }
}

/// Columns of each side of `:asm`'s side-by-side text.
const SIDE: usize = 56;

/// Two compilations' code side by side, aligned as `diff -y` aligns them
/// (the source lines of `-g` modules, the same on both sides, anchor
/// them), differences marked: a note, then a row per line; as text
/// ([`SideBySide::text`]) or as two panes ([`SideBySide::html`]).
pub struct SideBySide {
    /// `; 'f' side by side, att syntax: 40 rows, 6 differ (…)`.
    pub note: String,
    /// Each side's label.
    pub labels: [String; 2],
    pub rows: Vec<crate::diff::Row>,
}

impl SideBySide {
    /// `left` and `right`, each (label, text), of `function` (`None`: the
    /// module) in `syntax`.
    pub fn new(
        function: Option<&str>,
        syntax: Syntax,
        left: (String, &str),
        right: (String, &str),
    ) -> SideBySide {
        let rows = crate::diff::side_by_side(left.1, right.1);
        let differing = rows.iter().filter(|r| r.mark != ' ').count();
        let what = function.map_or("the module".to_string(), |f| format!("'{f}'"));
        let note = format!(
            "; {what} side by side, {} syntax: {} rows, {} differ (| changed, < left only, > right only)",
            syntax.name(),
            rows.len(),
            differing
        );
        SideBySide {
            note,
            labels: [left.0, right.0],
            rows,
        }
    }

    /// As text: the note, the labels, then each row as `diff -y` prints
    /// it, the left side cut (`…`) or padded to 56 columns.
    pub fn text(&self) -> String {
        let cell = |t: &Option<String>| -> String {
            let t = t.as_deref().unwrap_or("").replace('\t', "        ");
            if t.chars().count() > SIDE {
                let mut c: String = t.chars().take(SIDE - 1).collect();
                c.push('…');
                c
            } else {
                format!("{t:<SIDE$}")
            }
        };
        let mut text = format!(
            "{}\n{} | {}\n",
            self.note,
            cell(&Some(self.labels[0].clone())),
            self.labels[1]
        );
        for r in &self.rows {
            let line = format!(
                "{} {} {}",
                cell(&r.left),
                r.mark,
                r.right.as_deref().unwrap_or("")
            );
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }

    /// As HTML: two panes (see `side_by_side_html`).
    pub fn html(&self) -> String {
        side_by_side_html(&self.note, &self.labels[0], &self.labels[1], &self.rows)
    }
}

/// The two panes as HTML, Compiler Explorer's way: each compilation in a
/// column of its own, rows aligned, the rows that differ tinted (changed
/// in amber, one side only in red or green), source lines in grey.
fn side_by_side_html(note: &str, left: &str, right: &str, rows: &[crate::diff::Row]) -> String {
    use crate::table::escape;
    let mut h = String::from(
        "<div class=\"plab-sbs\"><style>.plab-sbs table{border-collapse:collapse;table-layout:fixed;width:100%;font:12px/1.35 ui-monospace,monospace}\
         .plab-sbs col.code{width:calc(50% - 12px)}.plab-sbs col.mark{width:24px}\
         .plab-sbs td{padding:0 6px;white-space:pre;overflow:hidden;text-overflow:ellipsis;vertical-align:top;text-align:left!important;border:0}\
         .plab-sbs th{text-align:left!important;padding:2px 6px;border-bottom:1px solid #ccc;font:600 12px system-ui,sans-serif;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\
         .plab-sbs .c td.s{background:#fff4d6}.plab-sbs .l td.a{background:#fde2e2}.plab-sbs .r td.b{background:#def5e2}\
         .plab-sbs td.m{color:#999;padding:0 2px}.plab-sbs .src{color:#777}</style>",
    );
    h.push_str(&format!(
        "<div style=\"color:#666;font-size:12px;margin-bottom:4px\">{}</div><table><colgroup><col class=\"code\"><col class=\"mark\"><col class=\"code\"></colgroup><tr><th>{}</th><th></th><th>{}</th></tr>",
        escape(note.trim_start_matches("; ")),
        escape(left),
        escape(right)
    ));
    for r in rows {
        let class = match r.mark {
            '|' => " class=\"c\"",
            '<' => " class=\"l\"",
            '>' => " class=\"r\"",
            _ => "",
        };
        let side = |t: &Option<String>, which: &str| {
            let t = t.as_deref().unwrap_or("");
            // A source line (`; 12: s += a[i]`) in grey.
            let src = if t.trim_start().starts_with(';') {
                " src"
            } else {
                ""
            };
            let changed = if r.mark == '|' { " s" } else { "" };
            format!(
                "<td class=\"{which}{changed}{src}\" title=\"{}\">{}</td>",
                escape(t.trim()),
                escape(t)
            )
        };
        h.push_str(&format!(
            "<tr{class}>{}<td class=\"m\">{}</td>{}</tr>",
            side(&r.left, "a"),
            if r.mark == ' ' {
                String::new()
            } else {
                r.mark.to_string()
            },
            side(&r.right, "b")
        ));
    }
    h.push_str("</table></div>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_by_side_takes_two_processors_or_two_modules() {
        let base = Codegen::default();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let asked = std::cell::Cell::new(0);
        let mut current = || {
            asked.set(asked.get() + 1);
            Ok("cur".to_string())
        };
        let [(m, a), (n, b)] =
            sides(&base, &names(&["skylake", "znver3"]), &[], &mut current).unwrap();
        assert_eq!((m.as_str(), n.as_str()), ("cur", "cur"));
        assert_eq!(
            (a.target.cpu.as_str(), b.target.cpu.as_str()),
            ("skylake", "znver3")
        );
        assert_eq!(a.cpu_setting, "skylake");
        let [(m, a), (n, b)] = sides(&base, &[], &names(&["x", "y"]), &mut current).unwrap();
        assert_eq!((m.as_str(), n.as_str()), ("x", "y"));
        assert!(a == base && b == base);
        let [(m, a), _] = sides(
            &base,
            &names(&["skylake"]),
            &names(&["x", "y"]),
            &mut current,
        )
        .unwrap();
        assert_eq!((m.as_str(), a.target.cpu.as_str()), ("x", "skylake"));
        // The current module only when no module is named.
        assert_eq!(asked.get(), 1);
        let e = sides(&base, &names(&["a", "b", "c"]), &[], &mut current).unwrap_err();
        let Error::Command {
            command, message, ..
        } = e
        else {
            panic!("{e:?}")
        };
        assert_eq!(command, "asm");
        assert_eq!(
            message,
            "side by side takes two: cpu=A,B (one module) or modules=M,N (one processor); got cpu=a,b,c modules="
        );
    }

    #[test]
    fn side_by_side_text_marks_and_pads_each_row() {
        let left = "; 3: s += x\n\taddl %ecx, %eax\n\tretq\n";
        let right = "; 3: s += x\n\tleal (%rcx,%rax), %eax\n\tretq\n";
        let sbs = SideBySide::new(
            Some("f"),
            Syntax::Att,
            ("L".into(), left),
            ("R".into(), right),
        );
        assert_eq!(
            sbs.note,
            "; 'f' side by side, att syntax: 3 rows, 1 differ (| changed, < left only, > right only)"
        );
        let text = sbs.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], sbs.note);
        assert_eq!(lines[1], format!("{:<56} | R", "L"));
        assert_eq!(
            lines[3],
            format!(
                "{:<56} | {}",
                "        addl %ecx, %eax", "\tleal (%rcx,%rax), %eax"
            )
        );
        // A long left side is cut to 56 columns.
        let long = "x".repeat(80);
        let sbs = SideBySide::new(
            None,
            Syntax::Intel,
            (long.clone(), "a\n"),
            ("R".into(), "a\n"),
        );
        assert!(sbs
            .note
            .starts_with("; the module side by side, intel syntax: 1 rows, 0 differ"));
        assert_eq!(
            sbs.text().lines().nth(1).unwrap(),
            format!("{}… | R", "x".repeat(55))
        );
        assert!(sbs.html().contains("<th>R</th>"));
    }

    const SAMPLE: &str = "\t.text\n\t.file\t\"g.c\"\n\t.globl\tf\n\t.type\tf,@function\nf:\n.Lfunc_begin0:\n\t.file\t0 \"/tmp/m\" \"g.c\" md5 0xd4\n\t.loc\t0 2 21 prologue_end\n# %bb.0:\n\ttestl\t%edi, %edi\n\tjle\t.LBB0_2\n.Ltmp0:\n\t.loc\t0 3 5\n\tmovl\t$1, %eax\n.LBB0_2:\n\t.loc\t0 0 5\n\tretq\n.Lfunc_end0:\n\t.size\tf, .Lfunc_end0-f\n";

    #[test]
    fn probing_the_back_end_sees_its_passes_and_changes_no_code() {
        let src = "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * 3; return s; }\n\
                   int g(int x) { return f(&x, 1) + 1; }\n";
        let m = Module::from_c(src, "p.c").unwrap();
        let cg = Codegen::default();
        let plain = assembly(&m, &cg, Syntax::Att).unwrap();
        let (probed, backend) = assembly_probed(&m, &cg, Syntax::Att, Probe::default()).unwrap();
        assert_eq!(plain.text, probed.text, "the probes changed the code");
        let passes = backend.per_pass();
        let names: Vec<&str> = passes.iter().map(|p| p.name.as_str()).collect();
        for wanted in [
            "X86 DAG->DAG Instruction Selection",
            "Greedy Register Allocator",
            "X86 Assembly Printer",
        ] {
            assert!(names.contains(&wanted), "{wanted} not in {names:?}");
        }
        let isel = passes
            .iter()
            .find(|p| p.name == "X86 DAG->DAG Instruction Selection")
            .unwrap();
        // Once per function, and it turned each one's IR into machine code.
        assert_eq!((isel.runs, isel.changed), (2, 2));
        // The allocator assigns registers in a map; the rewriter writes
        // them into the code.
        let rw = passes
            .iter()
            .find(|p| p.name == "Virtual Register Rewriter")
            .unwrap();
        assert_eq!(rw.changed, 2, "{passes:#?}");
        assert!(passes.len() > 40, "{}", passes.len());
        let sum: std::time::Duration = passes.iter().map(|p| p.time).sum();
        assert!(
            sum <= backend.total && !sum.is_zero(),
            "{sum:?} {:?}",
            backend.total
        );
    }

    #[test]
    fn probes_keep_texts_verify_and_the_gate_bisects_the_back_end() {
        let src = "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * 3; return s; }\n";
        let m = Module::from_c(src, "p.c").unwrap();
        let probe = Probe {
            texts: true,
            verify: true,
            remarks: true,
            size_info: false,
            changes: true,
        };
        let cg = Codegen::default();
        let (_, b) = assembly_probed(&m, &cg, Syntax::Att, probe).unwrap();
        // Every change comes with the text after it (IR before instruction
        // selection, MIR from it on), and so does a function's first run
        // (the text code generation starts from).
        let f_runs: Vec<_> = b.runs.iter().filter(|r| r.function == "f").collect();
        assert!(f_runs[0].text.as_deref().unwrap().contains("define"));
        assert!(f_runs[1..].iter().all(|r| r.changed == r.text.is_some()));
        let isel = b
            .runs
            .iter()
            .find(|r| b.passes[r.pass].1 == "x86-isel")
            .unwrap();
        let mir = isel.text.as_deref().unwrap();
        assert!(mir.starts_with("# Machine code for function f"), "{mir}");
        assert!(b.decisions.is_empty());
        // The back end's remarks, each with the execution that made it:
        // the printer counts f's instructions while it prints f.
        let (k, count) = b
            .remarks
            .iter()
            .find(|(_, r)| r.contains("instructions in function"))
            .unwrap();
        assert!(count.starts_with("analysis\x1fasm-printer"), "{count:?}");
        assert_eq!(b.passes[b.runs[*k].pass].0, "X86 Assembly Printer");
        // The gate: every optional pass asked, none run at limit 0.
        let all = Codegen {
            bisect_limit: Some(u64::MAX),
            ..Codegen::default()
        };
        let (_, b) = assembly_probed(&m, &all, Syntax::Att, Probe::default()).unwrap();
        let asked = b.decisions.len();
        assert!(
            asked > 10 && b.decisions.iter().all(|d| d.ran),
            "{:?}",
            b.decisions
        );
        assert!(b.decisions.iter().any(|d| d.function == "f"));
        let none = Codegen {
            bisect_limit: Some(0),
            ..Codegen::default()
        };
        let (code, b) = assembly_probed(&m, &none, Syntax::Att, Probe::default()).unwrap();
        assert!(b.decisions.iter().all(|d| !d.ran));
        assert_ne!(code.text, assembly(&m, &cg, Syntax::Att).unwrap().text);
    }

    #[test]
    fn functions_lines_and_sources_are_parsed() {
        let sizes = BTreeMap::from([("f".to_string(), 9)]);
        let a = parse(SAMPLE.to_string(), Syntax::Att, &sizes);
        assert_eq!(a.files.get(&0).map(String::as_str), Some("/tmp/m/g.c"));
        let f = a.function("f").unwrap();
        assert_eq!(f.bytes, Some(9));
        let ins: Vec<_> = f
            .lines
            .iter()
            .filter(|l| l.kind == Kind::Instruction)
            .map(|l| {
                (
                    l.text.trim().split('\t').next().unwrap().to_string(),
                    l.source,
                )
            })
            .collect();
        assert_eq!(
            ins,
            [
                ("testl".to_string(), Some((0, 2))),
                ("jle".to_string(), Some((0, 2))),
                ("movl".to_string(), Some((0, 3))),
                ("retq".to_string(), None),
            ]
        );
    }

    #[test]
    fn the_default_view_hides_what_a_reader_does_not_need() {
        let a = parse(SAMPLE.to_string(), Syntax::Att, &BTreeMap::new());
        let src = |_: &str| Some("int f(int x) {\n  if (x > 0)\n    return 1;\n}\n".to_string());
        let r = a.render(Some("f"), Filter::default(), &src).unwrap();
        assert!(r.has_source);
        assert!(r.text.contains("2 │   if (x > 0)"), "{}", r.text);
        assert!(
            r.text.contains(".LBB0_2:"),
            "a used label stays: {}",
            r.text
        );
        assert!(
            !r.text.contains(".Ltmp0"),
            "an unused label goes: {}",
            r.text
        );
        assert!(
            !r.text.contains(".loc") && !r.text.contains("%bb.0"),
            "{}",
            r.text
        );
        let html = r.html.unwrap();
        assert!(
            html.contains("data-s=\"0-2\"") && html.contains(":hover"),
            "{html}"
        );
        let all = a.render(Some("f"), Filter::all(), &src).unwrap().text;
        assert!(all.contains(".loc") && all.contains(".Ltmp0"), "{all}");
        assert!(a.render(Some("g"), Filter::default(), &src).is_err());
    }

    #[test]
    fn syntax_names_parse() {
        assert_eq!(Syntax::parse("intel"), Ok(Syntax::Intel));
        assert!(Syntax::parse("nasm").unwrap_err().contains("att or intel"));
    }
}

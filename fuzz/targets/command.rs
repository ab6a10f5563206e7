//! The command language, run against a `Session` that has two modules (`m`
//! from C: `f(int x, int *p)` with a loop and `g(double *a, int n)`; `ir`
//! from IR text), two buffers and a `:with opt_level=2` context.
//!
//! Inputs are structured: a few steps, each a command picked by index into
//! `passlab::session::COMMANDS` with arguments picked from a vocabulary the
//! session itself gives (each command's keywords as completion offers
//! them, the literals and `key=` settings of its usage and `:help` text,
//! pass names from the registry, config keys, module, function and buffer
//! names), numbers (huge and negative too) and short strings; or raw text
//! (a line or a cell); or a completion / inspection / is_complete question.
//!
//! The property: no panic and no crash; every error has a message; after
//! the input the session still answers `:modules`.
//!
//! What must not run in a fuzzer is left out (see `sanitize`): commands
//! that write files or load code (`:save`, `:export`, `:plugin`, `:rust`,
//! `:dep`, `:register`, `:quit`), `--out`, paths outside a temporary folder
//! (which holds `t.ll` and `t.c` for `:load`); budgets are made small
//! (`trials=`, `seconds=`, `number=`, `repeat=`, `budget=`, ...; `:tune`
//! gets `trials=3`, `:reduce` and `:hunt` `budget=1` and a hunt the one
//! program `t.c` or one Csmith program unless they say otherwise) so that an input takes
//! milliseconds to a few hundred (a hunt or a reduction a second or two).
//!
//! `cargo fuzz fmt command ARTIFACT` prints an input as the cells it runs.
use arbitrary::Arbitrary;
use passlab::session::{Item, Session, COMMANDS};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::OnceLock;

/// Commands that write files, load code or end the session.
const EXCLUDED: &[&str] = &[
    "save", "export", "plugin", "rust", "dep", "register", "quit",
];

const C_SOURCE: &str = "\
int f(int x, int *p) {
  int s = 0;
  for (int i = 0; i < x && i < 16; i++)
    s += p[i] * (i + 1);
  return s;
}

double g(double *a, int n) {
  double t = 0;
  for (int i = 0; i < n && i < 8; i++)
    t += a[i] * a[i];
  return t;
}
";

const IR_SOURCE: &str = "\
define i32 @h(i32 %x) {
entry:
  %y = mul i32 %x, 2
  %z = add i32 %y, 0
  ret i32 %z
}
";

/// Sources a `:module` step may take, besides arbitrary text.
const BODIES: &[(&str, &str)] = &[
    ("--lang c", "int k(int a, int b) { return a * 4 + b * 0; }"),
    ("--lang c", "static int sq(int x) { return x * x; }\nint u(int *p, int n) { int s = 0; for (int i = 0; i < n && i < 16; i++) s += sq(p[i]); return s; }"),
    ("--lang c", "float v(float *a, float *b, int n) { float s = 0; for (int i = 0; i < n && i < 8; i++) s += a[i] * b[i]; return s; }"),
    ("--lang c", "int broken(int x) { return x +; }"),
    ("--lang cpp", "template <class T> T tw(T a) { return a + a; }\nextern \"C\" int w(int x) { return tw(x); }"),
    ("--lang llvm", "define i32 @one() {\n  ret i32 1\n}"),
    ("", "define i64 @add(i64 %a, i64 %b) {\n  %s = add nsw i64 %a, %b\n  ret i64 %s\n}"),
    ("", "define i32 @loop(i32 %n) {\nentry:\n  br label %l\nl:\n  %i = phi i32 [ 0, %entry ], [ %j, %l ]\n  %j = add i32 %i, 1\n  %c = icmp slt i32 %j, %n\n  %d = icmp slt i32 %j, 100\n  %e = and i1 %c, %d\n  br i1 %e, label %l, label %x\nx:\n  ret i32 %j\n}"),
    ("", "define i32 @bad() {\n  ret i32 %nope\n}"),
    ("", "@g = global i32 5\ndefine i32 @rd() {\n  %v = load i32, ptr @g\n  ret i32 %v\n}"),
    ("", "declare i32 @ext(i32)\ndefine i32 @callext(i32 %x) {\n  %r = call i32 @ext(i32 %x)\n  ret i32 %r\n}"),
    ("", "define void @trap() {\n  call void @llvm.trap()\n  unreachable\n}\ndeclare void @llvm.trap()"),
    ("", ""),
];

/// Names a step may use: modules, functions, buffers, and some that do
/// not exist.
const NAMES: &[&str] = &[
    "m", "ir", "m2", "f", "g", "h", "b", "d", "e", "k", "one", "add", "loop", "rd", "trap",
    "callext", "nosuch", "O0", "O1", "O2", "O3", "Os", "Oz",
];

/// Element types and fills for `:buffer`.
const TYPES: &[&str] = &["i8", "i16", "i32", "i64", "f32", "f64", "u32", "i128", ""];
const FILLS: &[&str] = &["zeros", "ones", "range", "random", "twos"];

/// Files `:load` may name (in the temporary folder the target works in).
const FILES: &[&str] = &[
    "t.ll",
    "t.c",
    "*.c",
    "*.ll",
    "*",
    "missing.c",
    "t.plab",
    ".",
];

/// What the session and the registry offer, gathered once.
struct Vocabulary {
    /// Indexes into COMMANDS of the commands a step may run.
    commands: Vec<usize>,
    /// Per command (by index into COMMANDS): its keywords and the literal
    /// words of its usage.
    literals: Vec<Vec<String>>,
    /// Per command: the `key=` settings of its usage and `:help` text.
    keys: Vec<Vec<String>>,
    /// Every setting key of every command.
    all_keys: Vec<String>,
    /// Pass names, and some with parameters (`loop-unroll<O3>`).
    passes: Vec<String>,
    config_keys: Vec<String>,
}

fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "[]|,".contains(c))
        .filter(|w| !w.is_empty())
}

fn is_literal(w: &str) -> bool {
    w.len() > 1
        && (w.starts_with("--") || w.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        && !w.contains("...")
        && !w.contains('=')
        && !w.contains('.')
}

fn vocabulary() -> &'static Vocabulary {
    static V: OnceLock<Vocabulary> = OnceLock::new();
    V.get_or_init(|| {
        let mut s = setup().expect("the fuzz session's set-up fails");
        let known = s.completions();
        let mut names: BTreeSet<String> = known
            .modules
            .iter()
            .chain(&known.functions)
            .chain(&known.buffers)
            .cloned()
            .collect();
        names.extend(passlab::registry::passes().into_iter().map(|p| p.name));
        let mut v = Vocabulary {
            commands: Vec::new(),
            literals: Vec::new(),
            keys: Vec::new(),
            all_keys: Vec::new(),
            passes: Vec::new(),
            config_keys: Vec::new(),
        };
        let mut all_keys = BTreeSet::new();
        for (i, c) in COMMANDS.iter().enumerate() {
            if !EXCLUDED.contains(&c.name) {
                v.commands.push(i);
            }
            // Keywords: what completion offers for the first argument that
            // is not a name.
            let line = format!(":{} ", c.name);
            let (_, offered) = s.complete(&line, line.len());
            // Not the names above, nor the files of the folder it runs in
            // (paths complete too).
            let mut literals: BTreeSet<String> = offered
                .into_iter()
                .filter(|w| !names.contains(w) && !std::path::Path::new(w).exists())
                .collect();
            literals.extend(
                words_of(c.usage)
                    .flat_map(|w| w.split('='))
                    .filter(|w| is_literal(w))
                    .map(str::to_string),
            );
            let help = s
                .execute(&format!(":help {}", c.name))
                .map(|o| o.text())
                .unwrap_or_default();
            let keys: BTreeSet<String> = words_of(c.usage)
                .chain(words_of(&help))
                .filter_map(|w| w.split_once('=').map(|(k, _)| k))
                .filter(|k| {
                    !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_lowercase() || c == '_' || c == '.')
                })
                .map(|k| format!("{k}="))
                .collect();
            all_keys.extend(keys.iter().cloned());
            v.literals.push(literals.into_iter().collect());
            v.keys.push(keys.into_iter().collect());
        }
        v.all_keys = all_keys.into_iter().collect();
        for p in passlab::registry::passes() {
            if let passlab::registry::PassKind::Llvm {
                params: Some(params),
                ..
            } = &p.kind
            {
                let inner = params.trim_start_matches('<').trim_end_matches('>');
                if let Some(first) = inner.split(';').next() {
                    v.passes.push(format!("{}<{first}>", p.name));
                }
            }
            v.passes.push(p.name);
        }
        v.passes.extend(
            [
                "default<O2>",
                "function(licm)",
                "cgscc(inline)",
                "repeat<2>(instcombine)",
                "O3",
            ]
            .map(String::from),
        );
        v.config_keys = passlab::registry::config_options()
            .into_iter()
            .map(|o| format!("config.{}=", o.key))
            .collect();
        v
    })
}

/// The temporary folder the target runs in, with the files `:load` may
/// read; `PASSLAB_SOURCE` points there too, so passlab's sample inputs
/// (zlib, sqlite3) are not found.
fn workdir() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("passlab-fuzz-command-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.ll"), IR_SOURCE).unwrap();
        std::fs::write(dir.join("t.c"), "int tc(int x) { return x - 1; }\n").unwrap();
        std::env::set_current_dir(&dir).unwrap();
        std::env::set_var("PASSLAB_SOURCE", &dir);
        std::env::remove_var("PASSLAB_PATH");
    });
}

/// The C module as IR text, compiled once (a fresh session then parses it:
/// much cheaper than compiling C for every input).
fn c_as_ir() -> &'static str {
    static IR: OnceLock<String> = OnceLock::new();
    IR.get_or_init(|| {
        passlab::Module::from_c(C_SOURCE, "m.c")
            .expect("C source")
            .print()
    })
}

/// The session every input starts from.
fn setup() -> passlab::Result<Session> {
    workdir();
    let mut s = Session::new();
    s.execute(&format!(
        ":module m\n{}\n.\n:module ir\n{IR_SOURCE}\n.\n:use m\n\
         :buffer b i32[16] = range\n:buffer d f64[8] = random(1)\n\
         :with config.jit.timeout_ms=2000 config.jit.max_buffer_bytes=16777216\n\
         :with opt_level=2",
        c_as_ir()
    ))?;
    Ok(s)
}

// ------------------------------------------------------------------ input

#[derive(Arbitrary)]
struct Input {
    html: bool,
    steps: Vec<Step>,
}

#[derive(Arbitrary, Debug)]
enum Step {
    Command {
        command: u8,
        args: Vec<Arg>,
        body: Option<Body>,
    },
    /// A line or a cell, as typed.
    Raw(String),
    /// Completion, documentation and is_complete on text, at a position.
    Ask(String, u16),
}

#[derive(Arbitrary, Debug)]
enum Arg {
    /// A keyword or usage literal of the command.
    Literal(u8),
    /// One of the command's settings.
    Setting(u8, Value),
    /// Any command's setting.
    AnySetting(u8, Value),
    Config(u8, Value),
    Name(u8),
    Pass(u16),
    Pipeline(Vec<u16>),
    Int(i64),
    Small(u8),
    Float(f64),
    Text(String),
    Buffer {
        ty: u8,
        len: u64,
        fill: u8,
        seed: i64,
    },
    File(u8),
    Pipe,
    Equals,
}

#[derive(Arbitrary, Debug)]
enum Value {
    Int(i64),
    Small(u8),
    Float(f64),
    Literal(u8),
    Name(u8),
    Passes(Vec<u16>),
    Range(u8, u8),
    Text(String),
    Empty,
}

#[derive(Arbitrary, Debug)]
enum Body {
    Source(u8),
    Text(String),
}

fn pick<S: AsRef<str>>(list: &[S], i: usize) -> &str {
    if list.is_empty() {
        ""
    } else {
        list[i % list.len()].as_ref()
    }
}

fn pipeline(v: &Vocabulary, ps: &[u16]) -> String {
    ps.iter()
        .take(6)
        .map(|&p| pick(&v.passes, p as usize))
        .collect::<Vec<_>>()
        .join(",")
}

fn value(v: &Vocabulary, c: usize, x: &Value) -> String {
    match x {
        Value::Int(i) => i.to_string(),
        Value::Small(n) => n.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Literal(i) => pick(&v.literals[c], *i as usize).to_string(),
        Value::Name(i) => pick(NAMES, *i as usize).to_string(),
        Value::Passes(ps) => pipeline(v, ps),
        Value::Range(a, b) => format!("{a}..{b}"),
        Value::Text(t) => t.chars().take(24).collect(),
        Value::Empty => String::new(),
    }
}

fn arg(v: &Vocabulary, c: usize, a: &Arg) -> String {
    match a {
        Arg::Literal(i) => pick(&v.literals[c], *i as usize).to_string(),
        Arg::Setting(k, x) => format!("{}{}", pick(&v.keys[c], *k as usize), value(v, c, x)),
        Arg::AnySetting(k, x) => format!("{}{}", pick(&v.all_keys, *k as usize), value(v, c, x)),
        Arg::Config(k, x) => format!("{}{}", pick(&v.config_keys, *k as usize), value(v, c, x)),
        Arg::Name(i) => pick(NAMES, *i as usize).to_string(),
        Arg::Pass(p) => pick(&v.passes, *p as usize).to_string(),
        Arg::Pipeline(ps) => pipeline(v, ps),
        Arg::Int(i) => i.to_string(),
        Arg::Small(n) => n.to_string(),
        Arg::Float(f) => f.to_string(),
        Arg::Text(t) => t.chars().take(24).collect(),
        Arg::Buffer {
            ty,
            len,
            fill,
            seed,
        } => {
            let fill = match pick(FILLS, *fill as usize) {
                "random" => format!("random({seed})"),
                f => f.to_string(),
            };
            let len = if len % 2 == 0 { len % 64 } else { *len };
            format!("{}[{len}] = {fill}", pick(TYPES, *ty as usize))
        }
        Arg::File(i) => pick(FILES, *i as usize).to_string(),
        Arg::Pipe => "|".into(),
        Arg::Equals => "=".into(),
    }
}

/// The text a step runs (a command with its arguments and source, or raw
/// text), before `sanitize`.
fn render(v: &Vocabulary, step: &Step) -> Option<String> {
    match step {
        Step::Command {
            command,
            args,
            body,
        } => {
            let c = v.commands[*command as usize % v.commands.len()];
            let mut line = format!(":{}", COMMANDS[c].name);
            for a in args.iter().take(8) {
                line.push(' ');
                line.push_str(&arg(v, c, a));
            }
            let body = match body {
                Some(Body::Source(i)) => {
                    let (flags, text) = BODIES[*i as usize % BODIES.len()];
                    if !flags.is_empty() && COMMANDS[c].name == "module" && !line.contains("--lang")
                    {
                        line.push(' ');
                        line.push_str(flags);
                    }
                    Some(text.to_string())
                }
                Some(Body::Text(t)) => Some(t.clone()),
                None => None,
            };
            Some(match body {
                Some(b) => format!("{line}\n{b}\n."),
                None => line,
            })
        }
        Step::Raw(text) => Some(text.clone()),
        Step::Ask(..) => None,
    }
}

impl fmt::Debug for Input {
    /// The cells the input runs, as a script (`cargo fuzz fmt`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = vocabulary();
        writeln!(f, "# html: {}", self.html)?;
        for step in self.steps.iter().take(MAX_STEPS) {
            match render(v, step).map(|t| sanitize(&t)) {
                Some(Some(cell)) => writeln!(f, "{cell}\n# ----")?,
                Some(None) => writeln!(f, "# (left out: {step:?})")?,
                None => writeln!(f, "# ask {step:?}")?,
            }
        }
        Ok(())
    }
}

// --------------------------------------------------------------- sanitize

const MAX_STEPS: usize = 6;

/// Caps a number in a setting: values that parse and are larger become
/// `max`; others (negative, not numbers, overflowing) stay, to be refused.
fn cap(value: &str, max: f64) -> String {
    match value.parse::<f64>() {
        Ok(x) if x.is_finite() && x > max => format!("{max}"),
        Ok(x) if x.is_infinite() && x > 0.0 => format!("{max}"),
        _ => value.to_string(),
    }
}

/// Caps every run of digits in `text` at `max`.
fn cap_digits(text: &str, max: u64) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for ch in text.chars().chain(std::iter::once('\0')) {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        if !digits.is_empty() {
            match digits.parse::<u64>() {
                Ok(n) if n <= max => out.push_str(&digits),
                _ => out.push_str(&max.to_string()),
            }
            digits.clear();
        }
        if ch != '\0' {
            out.push(ch);
        }
    }
    out
}

/// `TYPE[LEN]` with LEN between 2^20 and 2^45 made 2^20 (larger ones are
/// refused at once, whatever `config.jit.max_buffer_bytes` says).
fn cap_buffer(word: &str) -> String {
    if let Some((ty, len)) = word.strip_suffix(']').and_then(|w| w.split_once('[')) {
        if let Ok(n) = len.parse::<u64>() {
            if n > 1 << 20 && n <= 1 << 45 {
                return format!("{ty}[{}]", 1u64 << 20);
            }
        }
    }
    word.to_string()
}

/// Makes one command line safe and quick, or leaves it out (`None`).
fn sanitize_line(line: &str) -> Option<String> {
    let t = line.trim_start();
    let Some(rest) = t.strip_prefix(':') else {
        // Not a command: an error, or a line of a source. C's #include and
        // #embed could read any file (/dev/zero): not those.
        let lower = line.to_ascii_lowercase();
        if ["include", "embed", "import", "/dev", "/proc", "/sys"]
            .iter()
            .any(|w| lower.contains(w))
        {
            return None;
        }
        return Some(line.to_string());
    };
    let name = rest.split_whitespace().next().unwrap_or("");
    if EXCLUDED.contains(&name) || t.contains("--out") || t.contains(['/', '\\']) {
        return None;
    }
    if t.contains('~') || (matches!(name, "load" | "path") && t.contains("..")) {
        return None;
    }
    let mut words: Vec<String> = Vec::new();
    for w in t.split_whitespace() {
        let w = if w.contains("repeat<") {
            cap_digits(w, 3)
        } else {
            w.to_string()
        };
        let w = match w.split_once('=') {
            Some((k, val)) => {
                let val = match k {
                    "trials" => cap(val, 3.0),
                    "seconds" => cap(val, 0.2),
                    "number" => cap(val, 100.0),
                    "repeat" => cap(val, 3.0),
                    "min_repeat_ms" => cap(val, 2.0),
                    "timeout" => cap(val, 2.0),
                    "length" => cap_digits(val, 40),
                    "config.jit.timeout_ms" => cap(val, 2000.0),
                    "config.jit.max_buffer_bytes" => cap(val, (1u64 << 24) as f64),
                    "config.jit.max_output" => cap(val, (1u64 << 20) as f64),
                    "config.rust.timeout_ms" => cap(val, 2000.0),
                    "budget" => cap(val, 1.0),
                    "orderings" => cap(val, 1.0),
                    "jobs" => cap(val, 2.0),
                    // One program of Csmith's: A..B becomes A..A.
                    "csmith" => match val.split_once("..") {
                        Some((a, _)) => format!("{a}..{a}"),
                        None => val.to_string(),
                    },
                    "cflags" => {
                        // Flags that read files (@FILE, -include FILE) or
                        // reach outside the folder: not those.
                        if val.contains('@') || val.contains("..") || val.contains("include") {
                            return None;
                        }
                        val.to_string()
                    }
                    _ => val.to_string(),
                };
                format!("{k}={val}")
            }
            None => cap_buffer(&w),
        };
        words.push(w);
    }
    if name == "tune"
        && !matches!(words.get(1).map(String::as_str), Some("apply" | "save"))
        && !words
            .iter()
            .any(|w| w.starts_with("trials=") || w.starts_with("seconds="))
    {
        words.push("trials=3".into());
    }
    // A reduction and a hunt get a second each; a hunt one program.
    let has = |words: &[String], k: &str| words.iter().any(|w| w.starts_with(k));
    if matches!(name, "reduce" | "hunt") && !has(&words, "budget=") {
        words.push("budget=1".into());
    }
    if name == "hunt" && !has(&words, "csmith=") && !has(&words, "corpus=") {
        words.push("corpus=t.c".into());
    }
    Some(words.join(" "))
}

/// A cell made safe: unsafe lines left out, budgets capped. `None` when
/// nothing is left.
fn sanitize(cell: &str) -> Option<String> {
    let lines: Vec<String> = cell.lines().filter_map(sanitize_line).collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    Some(lines.join("\n"))
}

// ----------------------------------------------------------------- target

fn check_output(o: &passlab::session::Output) {
    for item in &o.items {
        match item {
            Item::Display(b) => {
                let _ = b.plain();
                let _ = b.is_chart();
            }
            Item::Stream(_) | Item::Stderr(_) => {}
        }
    }
    let _ = o.text();
}

fn run_cell(s: &mut Session, cell: &str) {
    match s.execute(cell) {
        Ok(o) => check_output(&o),
        Err(e) => {
            let message = e.to_string();
            assert!(
                !message.trim().is_empty(),
                "an error without a message for {cell:?}: {e:?}"
            );
        }
    }
}

/// Gathers what every input uses (libFuzzer's `init`).
pub fn init() {
    vocabulary();
}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(arbitrary::Unstructured::new(data)) else {
        return;
    };
    let v = vocabulary();
    let mut s = setup().expect("set-up");
    s.set_html(input.html);
    for step in input.steps.iter().take(MAX_STEPS) {
        match step {
            Step::Ask(text, pos) => {
                let pos = *pos as usize;
                let _ = s.complete(text, pos);
                let _ = s.inspect(text, pos);
                let _ = s.is_complete(text);
                let _ = passlab::session::takes_body(text);
            }
            _ => {
                if let Some(cell) = render(v, step).as_deref().and_then(sanitize) {
                    run_cell(&mut s, &cell);
                }
            }
        }
    }
    if let Err(e) = s.execute(":modules") {
        panic!("the session no longer answers :modules: {e}");
    }
    let _ = s.prompt_context();
}

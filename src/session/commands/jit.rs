//! The JIT: :buffer, :buffers, :call, :time, :bench.

use super::*;

pub(super) fn buffer(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    use crate::jit::{Buffer, ElemType, Fill};
    let usage = "expects NAME TYPE[LEN] = zeros|ones|range|random(SEED), e.g. :buffer a f32[1024] = random(1)";
    let [name, ty, eq, fill] = a.words.as_slice() else {
        return Err(err("buffer", usage));
    };
    if eq != "=" {
        return Err(err("buffer", usage));
    }
    let (t, len) = ty
        .strip_suffix(']')
        .and_then(|t| t.split_once('['))
        .ok_or_else(|| err("buffer", format!("'{ty}' is not TYPE[LEN] (e.g. i32[100])")))?;
    let t = ElemType::parse(t).map_err(|e| err("buffer", e.to_string()))?;
    let len: usize = len.parse().map_err(|_| {
        let message = if !len.is_empty() && len.bytes().all(|b| b.is_ascii_digit()) {
            format!("length {len} is more than any buffer can hold (config.jit.max_buffer_bytes limits a buffer's bytes: see :help buffer)")
        } else {
            format!("length expects a whole number of elements, 0 or more, got '{len}'")
        };
        err("buffer", message)
    })?;
    let fill = match fill.as_str() {
        "zeros" => Fill::Zeros,
        "ones" => Fill::Ones,
        "range" => Fill::Range,
        f => match f.strip_prefix("random(").and_then(|r| r.strip_suffix(')')) {
            Some(seed) => Fill::Random(seed.parse().map_err(|_| {
                err(
                    "buffer",
                    format!("random needs a number seed, got '{seed}'"),
                )
            })?),
            None => {
                return Err(Error::Command {
                    command: "buffer".into(),
                    message: format!("unknown fill '{f}'"),
                    suggestions: crate::nearest_names(
                        f,
                        ["zeros", "ones", "range", "random(SEED)"],
                    ),
                })
            }
        },
    };
    let b = Buffer::new(t, len, fill)?;
    let summary = b.summary();
    s.put_buffer(name.clone(), b);
    text(format!("{name}: {summary}"))
}

pub(super) fn buffers(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let mut t = Table::new("buffers", &["name", "contents"]);
    for (name, b) in &s.buffers {
        t.push([name.clone(), b.summary()]);
    }
    table(&t)
}

/// The compiled current module (compiled again when it or the context's
/// code generation settings changed).
pub(super) fn jit_for(s: &mut Session, command: &str) -> Result<String> {
    let name = current(s, command)?;
    let m = s.module_named(command, &name)?;
    let fp = m.fingerprint();
    let codegen = crate::jit::Codegen::from_context(&PassContext::current())?;
    let fresh = matches!(s.jits.get(&name), Some((f, j)) if *f == fp && *j.codegen() == codegen);
    if !fresh {
        let jit = crate::jit::Jit::with_codegen(m, &codegen)?;
        s.jits.insert(name.clone(), (fp, jit));
    }
    Ok(name)
}

/// Arguments: integers, floats, or buffer names.
pub(super) fn call_args<'b>(
    s: &'b Session,
    command: &str,
    words: &[String],
) -> Result<Vec<crate::jit::Arg<'b>>> {
    use crate::jit::Arg;
    words
        .iter()
        .map(|w| {
            if let Ok(i) = w.parse::<i64>() {
                Ok(Arg::Int(i))
            } else if let Ok(f) = w.parse::<f64>() {
                Ok(Arg::Float(f))
            } else if let Some(b) = s.buffers.get(w) {
                Ok(Arg::Buffer(b))
            } else {
                Err(Error::Command {
                    command: command.into(),
                    message: format!("'{w}' is not a number or a buffer"),
                    suggestions: crate::nearest_names(w, s.buffers.keys().map(String::as_str)),
                })
            }
        })
        .collect()
}

pub(super) fn call(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut words = a.words.clone();
    // `--out FILE`: all of the output goes there too.
    let save = take_out(&mut words, "call", "")?.map(std::path::PathBuf::from);
    let (f, rest) = words
        .split_first()
        .ok_or_else(|| err("call", "expects FN ARGS... [--out FILE]"))?;
    let mut allow = false;
    for (k, v) in &a.settings {
        if k != "allow" {
            return Err(err(
                "call",
                format!("takes one setting, allow=host, got '{k}='"),
            ));
        }
        allow = allow_host("call", v)?;
    }
    // The setting's word is not an argument.
    let rest: Vec<String> = rest
        .iter()
        .filter(|w| !w.starts_with("allow="))
        .cloned()
        .collect();
    let rest = rest.as_slice();
    let name = jit_for(s, "call")?;
    if let Some((_, jit)) = s.jits.get_mut(&name) {
        jit.set_allow_host(allow);
    }
    let args = call_args(s, "call", rest)?;
    let jit = &s.jits[&name].1;
    let r = jit.call_saving(f, &args, save.as_deref())?;
    let mut o = Output::default();
    if !r.stdout.is_empty() {
        o.items.push(Item::Stream(r.stdout));
    }
    if !r.stderr.is_empty() {
        o.items.push(Item::Stderr(r.stderr));
    }
    o.push_text(match r.value {
        Some(v) => format!("{f}({}) = {v}", rest.join(", ")),
        None => format!("{f}({}) returned", rest.join(", ")),
    });
    if let Some(line) = host_line(jit.host_bound(f)) {
        o.push_text(line);
    }
    if let Some(file) = save {
        o.push_text(format!(
            "all of its output: {} (standard output), {}.err (standard error)",
            file.display(),
            file.display()
        ));
    }
    Ok(o)
}

/// The value of `allow=`: `host` lets a call bind symbols the module does
/// not define from this process's libraries (see `Jit::host_bound`).
fn allow_host(command: &str, value: &str) -> Result<bool> {
    match value {
        "host" => Ok(true),
        other => Err(err(
            command,
            format!("allow expects host (bind what the module does not define from this process's libraries), got '{other}'"),
        )),
    }
}

/// The line saying which symbols a run bound to the host, if any.
fn host_line(bound: &[(String, String)]) -> Option<String> {
    (!bound.is_empty()).then(|| {
        let list: Vec<String> = bound
            .iter()
            .map(|(sym, file)| format!("{sym} ({file})"))
            .collect();
        format!("bound to the host: {}", list.join(", "))
    })
}

/// `number=`, `repeat=`, `min_repeat_ms=` settings over TVM's defaults.
pub(super) fn time_spec(command: &str, a: &Args) -> Result<crate::jit::TimeSpec> {
    let mut spec = crate::jit::TimeSpec::default();
    // Their ranges: the kinds of `command`'s row (`TIME_SETTINGS`).
    for (k, v) in &a.settings {
        match k.as_str() {
            "number" => spec.number = whole(command, k, v)?,
            "repeat" => spec.repeat = whole(command, k, v)?,
            "min_repeat_ms" => spec.min_repeat_ms = whole(command, k, v)?,
            other => {
                return Err(Error::Command {
                    command: command.into(),
                    message: format!("unknown setting '{other}'"),
                    suggestions: crate::nearest_names(other, ["number", "repeat", "min_repeat_ms"]),
                })
            }
        }
    }
    Ok(spec)
}

pub(super) fn time(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let (f, rest) = a.words.split_first().ok_or_else(|| {
        err(
            "time",
            "expects FN ARGS... [number=N repeat=R min_repeat_ms=M]",
        )
    })?;
    let spec = time_spec("time", a)?;
    let name = jit_for(s, "time")?;
    let args = call_args(s, "time", rest)?;
    let r = s.jits[&name].1.time(f, &args, spec)?;
    let samples: Vec<String> = r
        .per_call
        .iter()
        .map(|d| format!("{:.3}", d.as_secs_f64() * 1e6))
        .collect();
    text(format!(
        "{f}: {}
samples (us per call): {}",
        r.summary(),
        samples.join(" ")
    ))
}

pub(super) fn bench(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage = "expects FN ARGS... | exec ARG... [stdin=TEXT|@FILE], then [number=N repeat=R min_repeat_ms=M flops=N rtol=R] | PIPELINE [KEY=VALUE...] | ...";
    let mut segments = a.rest.split('|').map(str::trim);
    let head = segments.next().unwrap_or("");
    let segments: Vec<&str> = segments.collect();
    if segments.is_empty() || segments.iter().any(|p| p.is_empty()) {
        return Err(err("bench", usage));
    }
    let (what, settings) = subject_spec("bench", head)?;
    if matches!(what, SubjectSpec::None) {
        return Err(err("bench", usage));
    }
    let mut head = Args {
        command: "bench".into(),
        words: Vec::new(),
        settings,
        rest: head.to_string(),
    };
    let flops = match head.settings.iter().position(|(k, _)| k == "flops") {
        Some(i) => Some(flops(&head.settings.remove(i).1)?),
        None => None,
    };
    let rtol = match head.settings.iter().position(|(k, _)| k == "rtol") {
        Some(i) => {
            let text = head.settings.remove(i).1;
            Some(
                text.parse::<f64>()
                    .ok()
                    .filter(|r| (0.0..1.0).contains(r))
                    .ok_or_else(|| err("bench", format!("rtol expects a relative tolerance from 0 to 1 such as 1e-5, got '{text}'")))?,
            )
        }
        None => None,
    };
    let spec = time_spec("bench", &head)?;
    let candidates = segments
        .iter()
        .map(|text| candidate(text))
        .collect::<Result<Vec<_>>>()?;
    let name = current(s, "bench")?;
    let result = s.with_progress(|s, progress| {
        let subject = what
            .resolve(s, "bench")?
            .ok_or_else(|| err("bench", usage))?;
        let m = s.module_named("bench", &name)?;
        crate::jit::compare_subject(m, &subject, &candidates, spec, rtol, progress)
    });
    let mut c = result?;
    c.flops = flops;
    let t = c.table();
    s.last_bench = Some(Rc::new(c));
    table(&t)
}

/// One `|` segment of `:bench`: a pipeline, then optional `:with` settings
/// for it alone (`O3 disabled=loop-vectorize`).
fn candidate(text: &str) -> Result<crate::jit::Candidate> {
    let a = Args::parse(&format!(":bench {text}"))?;
    let pipeline = a.words.concat();
    if pipeline.is_empty() {
        return Err(err(
            "bench",
            format!("'{text}' has settings but no pipeline"),
        ));
    }
    let context = if a.settings.is_empty() {
        None
    } else {
        Some(context_from("bench", &a.settings)?)
    };
    // Checked now, so that a typo fails before anything is compiled.
    crate::pipeline::parse(&pipeline)?;
    Ok(crate::jit::Candidate {
        label: text.split_whitespace().collect::<Vec<_>>().join(" "),
        pipeline,
        context,
    })
}

/// `flops=`: a number or a product of numbers (`2*512*512*512`).
fn flops(text: &str) -> Result<f64> {
    text.split('*')
        .map(|n| n.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0))
        .try_fold(1.0, |acc, n| n.map(|n| acc * n))
        .ok_or_else(|| {
            err(
                "bench",
                format!("flops expects a positive number or a product such as 2*512*512*512, got '{text}'"),
            )
        })
}

/// `:bisect FN ARGS... | PIPELINE`: the first optional pass of the pipeline
/// after which `FN`'s result (its value and its buffers) differs from the
/// result with no optional pass run, found by halving LLVM's bisect limit,
/// with that pass's change to the code.
pub(super) fn bisect(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage = "expects FN ARGS... | PIPELINE, or exec ARG... [stdin=TEXT|@FILE] | PIPELINE";
    let (head, pipeline_text) = a.rest.split_once('|').ok_or_else(|| err("bisect", usage))?;
    let pipeline_text = pipeline_text.trim();
    if pipeline_text.is_empty() || pipeline_text.contains('|') {
        return Err(err("bisect", format!("{usage}: one pipeline")));
    }
    let (what, settings) = subject_spec("bisect", head)?;
    if let Some((k, _)) = settings.first() {
        return Err(err(
            "bisect",
            format!(
                "takes no settings, got '{k}=' (put '--' before a program's argument with '=')"
            ),
        ));
    }
    let pass = pipeline::parse(pipeline_text)?;
    let name = current(s, "bisect")?;
    let subject = what
        .resolve(s, "bisect")?
        .ok_or_else(|| err("bisect", usage))?;
    let m = s.module_named("bisect", &name)?;
    let f = what.label(&m.name());
    // Errors name a function alone, a program with its arguments.
    let who = match &what {
        SubjectSpec::Call(function, _) => function.clone(),
        _ => f.clone(),
    };
    let c = crate::jit::bisect(m, pass.as_ref(), pipeline_text, &subject, &who)?;
    let mut o = Output::default();
    let mut t = Table::new(
        &format!(
            "{f}: the first pass of {pipeline_text} or its code generation that changes the result"
        ),
        &[
            "optional pass",
            "pass",
            "unit",
            "on",
            "result before",
            "result after",
        ],
    );
    t.push([
        format!("{} of {}", c.index, c.total),
        c.pass.clone(),
        c.unit.clone(),
        c.target.clone(),
        c.reference.clone(),
        c.result.clone(),
    ]);
    t.notes.push(format!(
        "found in {} runs of the pipeline (LLVM's -opt-bisect-limit={} is the last that keeps the result; the pipeline asks about {} optional passes, code generation about {})",
        c.runs,
        c.index - 1,
        c.pipeline,
        c.total - c.pipeline
    ));
    o.push_table(&t);
    for diff in c.diffs {
        o.push_text(diff);
    }
    Ok(o)
}

/// `text` split as a shell splits it (quotes group words).
pub(super) fn shell_words(command: &str, text: &str) -> Result<Vec<String>> {
    shlex::split(text).ok_or_else(|| {
        err(
            command,
            format!("unbalanced quotes in '{text}' (arguments are split as a shell splits them)"),
        )
    })
}

/// `ARG... [stdin=TEXT|stdin=@FILE] [-- ARG...]` (shell words, after those
/// a command took for itself): a program's arguments and its input.
/// `stdin=` text knows `\n`, `\t` and `\\`; `@FILE` reads a file. After
/// `--` every word is an argument, `stdin=…` too.
pub(super) fn program(command: &str, words: Vec<String>) -> Result<crate::jit::Program> {
    use crate::jit::{Program, Stdin};
    let mut p = Program::default();
    let mut words = words.into_iter();
    let mut seen_stdin = false;
    while let Some(w) = words.next() {
        if w == "--" {
            p.args.extend(words.by_ref());
            break;
        }
        match w.strip_prefix("stdin=") {
            Some(_) if seen_stdin => {
                return Err(err(
                    command,
                    "stdin= is given twice (put '--' before an argument that starts with stdin=)",
                ))
            }
            Some(v) => {
                seen_stdin = true;
                p.stdin = match v.strip_prefix('@') {
                    Some("") => {
                        return Err(err(
                            command,
                            "stdin=@ expects a file name, e.g. stdin=@input.txt",
                        ))
                    }
                    Some(file) => Stdin::File(file.into()),
                    None => Stdin::Bytes(unescape(v).into_bytes()),
                };
            }
            None => p.args.push(w),
        }
    }
    Ok(p)
}

/// `\n`, `\t`, `\\` in `stdin=` text; any other backslash stays.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// `:exec [ARG...] [stdin=TEXT|stdin=@FILE] [--out FILE] [-- ARG...]`: the
/// current module's `main` run as a program.
pub(super) fn exec(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut words = shell_words("exec", &a.rest)?;
    // `--out FILE` before `--` is :exec's; after it, the program's.
    let end = words.iter().position(|w| w == "--").unwrap_or(words.len());
    let mut own: Vec<String> = words.drain(..end).collect();
    let save =
        take_out(&mut own, "exec", ", e.g. :exec 10 --out run.txt")?.map(std::path::PathBuf::from);
    // `allow=` before `--` is :exec's (after it, the program's argument).
    let mut allow = false;
    let mut kept = Vec::with_capacity(own.len());
    for w in own {
        match w.strip_prefix("allow=") {
            Some(v) => allow = allow_host("exec", v)?,
            None => kept.push(w),
        }
    }
    let mut own = kept;
    own.extend(words);
    let prog = program("exec", own)?;
    // Its output goes to files passlab writes anew, or wrote before.
    let err_file = save.as_ref().map(|f| {
        let mut e = f.clone().into_os_string();
        e.push(".err");
        std::path::PathBuf::from(e)
    });
    for f in save.iter().chain(&err_file) {
        crate::folder::check_replaceable(f, ":exec --out")?;
    }
    let name = jit_for(s, "exec")?;
    if let Some((_, jit)) = s.jits.get_mut(&name) {
        jit.set_allow_host(allow);
    }
    let label = prog.shell_line(s.jits[&name].1.name());
    let host = host_line(s.jits[&name].1.host_bound("main"));
    let r = s.jits[&name].1.exec_saving(&prog, save.as_deref());
    for f in save.iter().chain(&err_file) {
        if f.exists() {
            crate::folder::note_written(f);
        }
    }
    let r = r?;
    let mut o = Output::default();
    // With --out, standard output goes to the file only (it may be
    // binary: a compressor's); standard error is shown as well.
    if !r.stdout.is_empty() && save.is_none() {
        o.items.push(Item::Stream(r.stdout));
    }
    if !r.stderr.is_empty() {
        o.items.push(Item::Stderr(r.stderr));
    }
    o.push_text(format!(
        "{label}: exit status {} [main ran {:.1} ms]",
        r.status,
        r.elapsed.as_secs_f64() * 1e3
    ));
    if let Some(line) = host {
        o.push_text(line);
    }
    if let (Some(file), Some(err_file)) = (save, err_file) {
        let size = |f: &std::path::Path| match std::fs::metadata(f) {
            Ok(m) => format!("{} byte{}", m.len(), if m.len() == 1 { "" } else { "s" }),
            Err(_) => "not written".to_string(),
        };
        o.push_text(format!(
            "standard output: written to {} ({}), not shown; standard error: {} ({})",
            file.display(),
            size(&file),
            err_file.display(),
            size(&err_file)
        ));
    }
    Ok(o)
}

/// What a check runs, as typed at the head of `:bench`, `:bisect` or
/// `:tune`: nothing, a function and its argument words, or a program.
pub(super) enum SubjectSpec {
    None,
    Call(String, Vec<String>),
    Exec(crate::jit::Program),
}

impl SubjectSpec {
    /// As titles name it: `f(1, data)` as typed, or `program: prog.c 10`.
    pub(super) fn label(&self, argv0: &str) -> String {
        match self {
            SubjectSpec::None => String::new(),
            SubjectSpec::Call(f, words) => format!("{f}({})", words.join(", ")),
            SubjectSpec::Exec(p) => format!("program: {}", p.shell_line(argv0)),
        }
    }

    /// The subject, its argument words resolved in the session (numbers
    /// and buffers); `None` for nothing.
    pub(super) fn resolve<'b>(
        &self,
        s: &'b Session,
        command: &str,
    ) -> Result<Option<crate::jit::Subject<'b>>> {
        use crate::jit::Subject;
        Ok(match self {
            SubjectSpec::None => None,
            SubjectSpec::Call(f, words) => Some(Subject::Call {
                function: f.clone(),
                args: call_args(s, command, words)?,
            }),
            SubjectSpec::Exec(p) => Some(Subject::Exec(p.clone())),
        })
    }
}

/// The subject at the head of `head` and the command's own `key=value`
/// settings among its words: `exec ARG... [stdin=…] [-- ARG...]` is the
/// current module's `main` run as a program (its words split as a shell
/// splits them; `key=value` words before `--` are the command's, but
/// `stdin=`), anything else `FN ARGS...`.
pub(super) fn subject_spec(
    command: &str,
    head: &str,
) -> Result<(SubjectSpec, Vec<(String, String)>)> {
    if head.split_whitespace().next() == Some("exec") {
        let words = shell_words(command, head)?;
        let mut settings = Vec::new();
        let mut theirs = Vec::new();
        let mut rest = words.into_iter().skip(1);
        while let Some(w) = rest.next() {
            if w == "--" {
                theirs.push(w);
                theirs.extend(rest.by_ref());
                break;
            }
            match crate::session::args::setting(&w) {
                Some((k, v)) if k != "stdin" => settings.push((k.to_string(), v.to_string())),
                _ => theirs.push(w),
            }
        }
        return Ok((SubjectSpec::Exec(program(command, theirs)?), settings));
    }
    let a = Args::parse(&format!(":{command} {head}"))?;
    Ok(match a.words.split_first() {
        None => (SubjectSpec::None, a.settings),
        Some((f, rest)) => (SubjectSpec::Call(f.clone(), rest.to_vec()), a.settings),
    })
}

//! What a check runs on compiled code, and what it compares: a function
//! with its arguments (as `:call`), or the module's `main` as a program (as
//! `:exec`). `:bench`, `:bisect` and `:tune` hold every pipeline to the
//! same subject's outcome; for a program, the outcome is its exit status
//! and what it printed, so a real program's output is the oracle.

use super::{Arg, ExecResult, Jit, Program, SavedBuffers, TimeResult, TimeSpec};
use crate::Result;

/// A function and its arguments, or the module's `main` as a program.
pub enum Subject<'a> {
    Call {
        function: String,
        args: Vec<Arg<'a>>,
    },
    Exec(Program),
}

impl<'a> Subject<'a> {
    /// The buffers among its arguments, to save and put back between runs
    /// (none for a program).
    pub fn args(&self) -> &[Arg<'a>] {
        match self {
            Subject::Call { args, .. } => args,
            Subject::Exec(_) => &[],
        }
    }

    /// Saves its buffers' contents.
    pub fn save(&self) -> SavedBuffers<'a, '_> {
        SavedBuffers::save(self.args())
    }

    /// As titles name it: `adler32(1, data, 4096)`, or `program: prog.c 10`.
    pub fn label(&self, argv0: &str) -> String {
        match self {
            Subject::Call { function, args } => {
                let words: Vec<String> = args.iter().map(arg_text).collect();
                format!("{function}({})", words.join(", "))
            }
            Subject::Exec(p) => format!("program: {}", p.shell_line(argv0)),
        }
    }

    /// Runs it once on `jit` and says what a comparison compares: the
    /// value and the buffers' checksums, or the exit status and a hash of
    /// each output stream with the last line printed.
    pub fn outcome(&self, jit: &Jit) -> Result<String> {
        match self {
            Subject::Call { function, args } => {
                let r = jit.call(function, args)?;
                let mut text = r.value.map_or("void".into(), |v| v.to_string());
                for a in args {
                    if let Arg::Buffer(b) = a {
                        text.push_str(&format!(", buffer {:016x}", b.checksum()));
                    }
                }
                Ok(text)
            }
            Subject::Exec(p) => Ok(program_outcome(&jit.exec(p)?)),
        }
    }

    /// Times it: a function by the time evaluator (`spec`), a program by
    /// `spec.repeat` runs, each in a new child (`main` runs once per
    /// process: it may change its globals, and exit).
    pub fn time(&self, jit: &Jit, spec: TimeSpec) -> Result<TimeResult> {
        match self {
            Subject::Call { function, args } => jit.time(function, args, spec),
            Subject::Exec(p) => {
                let mut per_call = Vec::new();
                let mut last = None;
                for _ in 0..spec.repeat.max(1) {
                    let r = jit.exec(p)?;
                    per_call.push(r.elapsed);
                    last = Some(r);
                }
                let last = last.expect("one run at least");
                Ok(TimeResult {
                    value: Some(super::Value::Int {
                        value: i64::from(last.status),
                        bits: 32,
                    }),
                    number: 1,
                    per_call,
                    stdout: last.stdout,
                    stderr: last.stderr,
                })
            }
        }
    }

    /// The machine code bytes it runs: the function's, or every function's
    /// for a program.
    pub fn code_bytes(&self, jit: &Jit) -> Option<u64> {
        match self {
            Subject::Call { function, .. } => jit.code_bytes(function),
            Subject::Exec(_) => jit.total_code_bytes(),
        }
    }

    /// Whether it is a program.
    pub fn is_program(&self) -> bool {
        matches!(self, Subject::Exec(_))
    }
}

/// A program's outcome as comparisons read it: `exit 0; stdout 22 bytes
/// #5f1c09aa ending "checksum = 3A2F"` (standard error likewise when it
/// printed anything). The hash is of all of the stream.
pub fn program_outcome(r: &ExecResult) -> String {
    let stream = |name: &str, text: &str| {
        let last = text.trim_end().lines().last().unwrap_or("");
        let last: String = last.chars().take(48).collect();
        format!(
            "; {name} {} bytes #{:08x} ending {last:?}",
            text.len(),
            super::fnv1a(text.bytes()) >> 32
        )
    };
    let mut out = format!("exit {}", r.status);
    out.push_str(&if r.stdout.is_empty() {
        "; stdout empty".to_string()
    } else {
        stream("stdout", &r.stdout)
    });
    if !r.stderr.is_empty() {
        out.push_str(&stream("stderr", &r.stderr));
    }
    out
}

fn arg_text(a: &Arg) -> String {
    match a {
        Arg::Int(i) => i.to_string(),
        Arg::Float(f) => f.to_string(),
        Arg::Buffer(b) => format!("buffer of {}", b.summary()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;

    #[test]
    fn a_program_is_compared_by_status_and_output() {
        let m = Module::from_c(
            "#include <stdio.h>\nint main(int argc, char **argv) { printf(\"%d args\\n\", argc); return argc == 3 ? 5 : 0; }",
            "p.c",
        )
        .unwrap();
        let jit = Jit::new(&m, 2).unwrap();
        let two = Subject::Exec(Program {
            args: vec!["a".into(), "b".into()],
            ..Program::default()
        });
        let none = Subject::Exec(Program::default());
        let a = two.outcome(&jit).unwrap();
        assert!(a.starts_with("exit 5; stdout 7 bytes #"), "{a}");
        assert!(a.ends_with("ending \"3 args\""), "{a}");
        assert_ne!(a, none.outcome(&jit).unwrap());
        assert_eq!(
            a,
            two.outcome(&jit).unwrap(),
            "the same run, the same outcome"
        );
        let t = two
            .time(
                &jit,
                TimeSpec {
                    repeat: 3,
                    ..TimeSpec::default()
                },
            )
            .unwrap();
        assert_eq!((t.number, t.per_call.len()), (1, 3));
        assert_eq!(two.label("p.c"), "program: p.c a b");
        assert!(two.code_bytes(&jit).unwrap() > 0);
    }

    #[test]
    fn painted_memory_shows_what_a_program_never_wrote() {
        // main returns the low byte of a stack slot and of a malloc'd
        // block it never wrote, as its exit status.
        let m = Module::from_ir(
            "declare ptr @malloc(i64)\n\
             define i32 @main() {\n  %a = alloca [64 x i32]\n  %p = getelementptr [64 x i32], ptr %a, i64 0, i64 40\n  %x = load volatile i32, ptr %p\n  %h = call ptr @malloc(i64 64)\n  %y = load volatile i32, ptr %h\n  %lx = and i32 %x, 255\n  %ly = and i32 %y, 255\n  %s = shl i32 %ly, 0\n  %r = xor i32 %lx, %s\n  ret i32 %r\n}\n",
            "uninit.ll",
        )
        .unwrap();
        let jit = Jit::new(&m, 0).unwrap();
        let run = || Subject::Exec(Program::default()).outcome(&jit).unwrap();
        crate::jit::paint_fresh_memory(Some(0xA5));
        let painted = run();
        crate::jit::paint_fresh_memory(Some(0x0F));
        let other = run();
        crate::jit::paint_fresh_memory(None);
        // Stack 0xA5, heap !0xA5 = 0x5A: 0xA5 ^ 0x5A = 0xFF; likewise 0xFF.
        assert!(painted.starts_with("exit 255;"), "{painted}");
        assert!(other.starts_with("exit 255;"), "{other}");
        // The two reads apart: only the stack.
        let stack_only = Module::from_ir(
            "define i32 @main() {\n  %a = alloca [64 x i32]\n  %p = getelementptr [64 x i32], ptr %a, i64 0, i64 40\n  %x = load volatile i32, ptr %p\n  %r = and i32 %x, 255\n  ret i32 %r\n}\n",
            "stack.ll",
        )
        .unwrap();
        let jit = Jit::new(&stack_only, 0).unwrap();
        let run = || Subject::Exec(Program::default()).outcome(&jit).unwrap();
        crate::jit::paint_fresh_memory(Some(0xA5));
        let a = run();
        crate::jit::paint_fresh_memory(Some(0x0F));
        let b = run();
        crate::jit::paint_fresh_memory(None);
        assert!(a.starts_with("exit 165;"), "{a}");
        // Painting moves a program's arguments, and they stay intact.
        let args = Module::from_c(
            "#include <string.h>\nint main(int argc, char **argv) { return argc * 10 + (int)strlen(argv[0]) + (int)strlen(argv[1]); }",
            "args.c",
        )
        .unwrap();
        let jit = Jit::new(&args, 0).unwrap();
        let prog = Subject::Exec(Program {
            args: vec!["abc".into()],
            ..Program::default()
        });
        let plain = prog.outcome(&jit).unwrap();
        crate::jit::paint_fresh_memory(Some(0xA5));
        let moved = prog.outcome(&jit).unwrap();
        crate::jit::paint_fresh_memory(None);
        assert_eq!(plain, moved);
        assert!(
            plain.starts_with(&format!("exit {};", 20 + "args.c".len() + 3)),
            "{plain}"
        );
        assert!(b.starts_with("exit 15;"), "{b}");
    }

    #[test]
    fn a_processor_time_limit_stops_a_loop() {
        let m = Module::from_ir(
            "define i32 @main() {\nentry:\n  br label %l\nl:\n  br label %l\n}\n",
            "spin.ll",
        )
        .unwrap();
        let jit = Jit::new(&m, 0)
            .unwrap()
            .with_cpu_limit(std::time::Duration::from_millis(50));
        let t = std::time::Instant::now();
        let e = Subject::Exec(Program::default()).outcome(&jit).unwrap_err();
        assert!(e.to_string().contains("processor time"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }
}

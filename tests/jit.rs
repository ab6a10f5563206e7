//! The JIT: results of scalar and buffer functions through the packed
//! convention, captured output, and isolation from crashes and hangs.

use passlab::jit::{Arg, Buffer, ElemType, Fill, Jit, Value};
use passlab::{pipeline, Module};
use std::time::Duration;

const C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int add(int a, int b) { return a + b; }
long long mul64(long long a, long long b) { return a * b; }
double hyp2(double x, float y) { return x * x + (double)y * y; }
_Bool is_odd(int x) { return x & 1; }
signed char wrap(signed char c) { return c + 1; }
void scale(float *v, int n, float k) { for (int i = 0; i < n; i++) v[i] *= k; }
long sum(int *a, int n) { long s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
int say(int x) { printf("hello %d\n", x); fprintf(stderr, "to stderr\n"); printf("bye\n"); return x; }
int crash(int *p) { printf("before the crash\n"); return *p; }
int divide(int a, int b) { return a / b; }
int forever(int x) { volatile int y = x; while (y >= 0) y = (y + 1) & 7; return y; }
void stop(void) { abort(); }
int deep(int n) { volatile char pad[4096]; pad[0] = (char)n; return deep(n + 1) + pad[0]; }
long double half(long double x) { return x / 2; }
"#;

fn jit_at(opt: &str) -> Jit {
    let mut m = Module::from_c(C, "jit.c").unwrap();
    pipeline::parse(opt).unwrap().apply(&mut m).unwrap();
    Jit::new(&m, 2)
        .unwrap()
        .with_timeout(Duration::from_secs(2))
}

#[test]
fn scalar_results_through_the_packed_convention() {
    for opt in ["default<O0>", "default<O2>"] {
        let j = jit_at(opt);
        let v = |f: &str, args: &[Arg]| j.call(f, args).unwrap().value.unwrap();
        assert_eq!(
            v("add", &[Arg::Int(2), Arg::Int(40)]),
            Value::Int {
                value: 42,
                bits: 32
            }
        );
        assert_eq!(v("add", &[Arg::Int(-5), Arg::Int(2)]).to_string(), "-3");
        assert_eq!(
            v("mul64", &[Arg::Int(1 << 40), Arg::Int(3)]).to_string(),
            (3i64 << 40).to_string()
        );
        assert_eq!(
            v("hyp2", &[Arg::Float(3.0), Arg::Float(4.0)]),
            Value::F64(25.0)
        );
        assert_eq!(v("is_odd", &[Arg::Int(7)]).to_string(), "true");
        assert_eq!(v("wrap", &[Arg::Int(127)]).to_string(), "-128");
    }
}

#[test]
fn buffers_are_read_and_written() {
    let j = jit_at("default<O2>");
    let a = Buffer::new(ElemType::I32, 1000, Fill::Range).unwrap();
    let r = j.call("sum", &[Arg::Buffer(&a), Arg::Int(1000)]).unwrap();
    assert_eq!(r.value.unwrap().to_string(), "499500");
    let v = Buffer::new(ElemType::F32, 8, Fill::Ones).unwrap();
    let before = v.checksum();
    j.call("scale", &[Arg::Buffer(&v), Arg::Int(8), Arg::Float(2.5)])
        .unwrap();
    assert_eq!(v.get(7), 2.5, "the child's writes are seen");
    assert_ne!(v.checksum(), before);
}

#[test]
fn stdout_and_stderr_are_captured_apart_each_in_order() {
    let j = jit_at("default<O0>");
    let r = j.call("say", &[Arg::Int(3)]).unwrap();
    assert_eq!(r.stdout, "hello 3\nbye\n");
    assert_eq!(r.stderr, "to stderr\n");
}

#[test]
fn crashes_and_hangs_are_errors_and_the_next_call_works() {
    let j = jit_at("default<O0>");
    let cases: Vec<(&str, Vec<Arg>, &str)> = vec![
        ("divide", vec![Arg::Int(1), Arg::Int(0)], "SIGFPE"),
        ("forever", vec![Arg::Int(1)], "did not finish within 2.0 s"),
        ("stop", vec![], "aborted (SIGABRT)"),
        ("deep", vec![Arg::Int(0)], "SIGSEGV"),
    ];
    for (f, args, expect) in cases {
        let e = j.call(f, &args).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("'{f}' ")) && e.contains(expect),
            "{f}: {e}"
        );
        // The JIT and the process are fine.
        assert_eq!(
            j.call("add", &[Arg::Int(1), Arg::Int(1)])
                .unwrap()
                .value
                .unwrap()
                .to_string(),
            "2"
        );
    }
}

#[test]
fn a_segfault_keeps_what_was_printed() {
    let m = Module::from_c(
        "#include <stdio.h>\nint boom(void) { printf(\"before the crash\\n\"); return *(volatile int *)16; }",
        "boom.c",
    )
    .unwrap();
    let j = Jit::new(&m, 0).unwrap();
    let e = j.call("boom", &[]).unwrap_err().to_string();
    assert_eq!(
        e,
        "'boom' crashed with SIGSEGV (invalid memory access, or a stack overflow); it printed:\nbefore the crash"
    );
    assert!(j.call("boom", &[]).is_err(), "and again: the JIT is intact");
}

#[test]
fn unsupported_calls_name_the_parameter() {
    let m = Module::from_c(C, "jit.c").unwrap();
    let j = Jit::new(&m, 0).unwrap();
    let sig = j.signature("crash").unwrap();
    assert_eq!(sig.params.len(), 1);
    // Int into a pointer parameter is refused with the parameter named.
    let e = j.call("crash", &[Arg::Int(0)]).unwrap_err().to_string();
    assert_eq!(e, "'crash' parameter 1 is ptr, got an integer");
    let e = j.call("nosuch", &[]).unwrap_err().to_string();
    assert!(e.starts_with("no function named 'nosuch'"), "{e}");
    let e = j.call("half", &[Arg::Float(1.0)]).unwrap_err().to_string();
    assert_eq!(
        e,
        "cannot call 'half': parameter 1 has type x86_fp80, which calls cannot pass"
    );
    let e = j.call("add", &[Arg::Int(1)]).unwrap_err().to_string();
    assert_eq!(e, "'add' takes 2 arguments (i32, i32), got 1");
}

#[test]
fn the_time_evaluator_follows_tvm() {
    use passlab::jit::TimeSpec;
    let j = jit_at("default<O2>");
    let a = Buffer::new(ElemType::I32, 10_000, Fill::Range).unwrap();
    let args = [Arg::Buffer(&a), Arg::Int(10_000)];
    // Fixed number and repeat.
    let r = j
        .time(
            "sum",
            &args,
            TimeSpec {
                number: 7,
                repeat: 4,
                min_repeat_ms: 0,
            },
        )
        .unwrap();
    assert_eq!((r.number, r.per_call.len()), (7, 4));
    assert_eq!(
        r.value.unwrap().to_string(),
        "49995000",
        "the warm-up call's value"
    );
    assert!(r.min() <= r.median() && r.median() <= r.max());
    assert!(r.min() <= r.mean() && r.mean() <= r.max());
    assert!(
        r.summary().contains("(4 repeats of 7 calls)"),
        "{}",
        r.summary()
    );
    // min_repeat_ms grows `number` until one repeat lasts that long.
    let r = j
        .time(
            "sum",
            &args,
            TimeSpec {
                number: 1,
                repeat: 3,
                min_repeat_ms: 20,
            },
        )
        .unwrap();
    assert!(r.number > 1, "number grew to {}", r.number);
    // `number` is chosen when a repeat first lasts 20 ms; later repeats
    // may run faster on a machine whose load changed, so allow half.
    let longest = r
        .per_call
        .iter()
        .map(|per_call| *per_call * r.number as u32)
        .max()
        .unwrap();
    assert!(
        longest >= Duration::from_millis(10),
        "the longest repeat took {longest:?}"
    );
    // Bad specs and crashes are errors.
    assert!(j
        .time(
            "sum",
            &args,
            TimeSpec {
                number: 1,
                repeat: 0,
                min_repeat_ms: 0
            }
        )
        .is_err());
    let e = j
        .time("divide", &[Arg::Int(1), Arg::Int(0)], TimeSpec::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("SIGFPE"), "{e}");
}

#[test]
fn comparing_pipelines_checks_results_and_flags_differences() {
    use passlab::jit::{compare, Candidate, TimeSpec};
    let m = Module::from_c(
        r#"
        long sum(int *a, int n) { long s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
        void bump(int *a, int n) { for (int i = 0; i < n; i++) a[i] += 1; }
        /* Undefined for x == INT_MAX: -O0 wraps (0), optimizers fold to 1. */
        int no_overflow(int x) { return x + 1 > x; }
        "#,
        "cmp.c",
    )
    .unwrap();
    let spec = TimeSpec {
        number: 20,
        repeat: 3,
        min_repeat_ms: 0,
    };
    let a = Buffer::new(ElemType::I32, 4096, Fill::Range).unwrap();
    let before = a.checksum();
    let pipelines: Vec<Candidate> = ["default<O0>", "default<O2>", "default<O3>"]
        .iter()
        .map(|p| Candidate::new(p))
        .collect();
    let mut with_gvn_off = pipelines.clone();
    with_gvn_off.push(Candidate {
        label: "O2 without gvn".into(),
        pipeline: "O2".into(),
        context: Some(passlab::PassContext::inherit().with_disabled(["gvn"])),
    });
    let mut steps = Vec::new();
    let c = compare(
        &m,
        "sum",
        &[Arg::Buffer(&a), Arg::Int(4096)],
        &with_gvn_off,
        spec,
        &mut |p| steps.push((p.done, p.total, p.stage.clone())),
    )
    .unwrap();
    assert_eq!(c.entries.len(), 4);
    assert!(c.entries.iter().all(|e| e.same_result));
    assert!(c.entries[1].passes_run > 50 && c.entries[0].passes_run < c.entries[1].passes_run);
    // The context given for one candidate applies to it alone.
    assert_eq!(c.entries[3].pipeline, "O2 without gvn");
    assert!(c.entries[3].passes_run < c.entries[1].passes_run);
    assert_eq!(steps.len(), 9, "{steps:?}");
    assert_eq!(steps[0], (0, 8, "compiling default<O0>".to_string()));
    assert_eq!(steps[7], (7, 8, "timing O2 without gvn".to_string()));
    assert_eq!(steps[8], (8, 8, String::new()));
    let text = c.table().to_text();
    assert!(
        text.contains("default<O3>") && text.contains("1.00x"),
        "{text}"
    );
    // A function that writes its buffer: every pipeline starts from the same
    // contents, and the buffer is put back afterwards.
    let c = compare(
        &m,
        "bump",
        &[Arg::Buffer(&a), Arg::Int(4096)],
        &pipelines,
        spec,
        &mut |_| {},
    )
    .unwrap();
    assert!(c.entries.iter().all(|e| e.same_result), "{}", c.table());
    assert_eq!(a.checksum(), before);
    // Undefined behaviour: results differ and are flagged.
    let c = compare(
        &m,
        "no_overflow",
        &[Arg::Int(i32::MAX as i64)],
        &pipelines,
        spec,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(c.entries[0].value.unwrap().to_string(), "0");
    assert_eq!(c.entries[1].value.unwrap().to_string(), "1");
    assert!(!c.entries[1].same_result);
    assert!(c
        .table()
        .to_text()
        .contains("DIFFERENT: possible miscompile"));
}

#[test]
fn code_generation_settings_come_from_the_context() {
    use passlab::jit::Codegen;
    use passlab::PassContext;
    let m = Module::from_c("int add(int a, int b) { return a + b; }", "add.c").unwrap();
    let _scope = PassContext::inherit()
        .with_config_text("codegen.opt_level", "3")
        .unwrap()
        .with_config_text("target.cpu", "host")
        .unwrap()
        .enter()
        .unwrap();
    let cg = Codegen::from_context(&PassContext::current()).unwrap();
    assert_eq!(cg.opt_level, 3);
    assert_eq!(cg.target.cpu, passlab::llvm::host_cpu());
    assert!(!cg.target.features.is_empty(), "host features");
    assert!(
        cg.label().starts_with("codegen O3, cpu host ("),
        "{}",
        cg.label()
    );
    let j = Jit::with_codegen(&m, &cg).unwrap();
    assert_eq!(
        j.call("add", &[Arg::Int(40), Arg::Int(2)])
            .unwrap()
            .value
            .unwrap()
            .to_string(),
        "42"
    );
    let e = PassContext::inherit()
        .with_config_text("target.cpu", "pentium9")
        .unwrap_err();
    assert!(e.to_string().contains("processor names LLVM knows"), "{e}");
    assert!(e.to_string().contains("nearest: pentium"), "{e}");
}

/// Part of zlib: a program calling `adler32` without adler32.c. The
/// process links libz.so.1 (LLVM does), which would supply it.
const PARTLY_LOADED: &str = r#":module partial --lang c
#include <stdio.h>
#include <math.h>
unsigned long adler32(unsigned long adler, const unsigned char *buf, unsigned int len);
int check(int n) { return (int)adler32(1, (const unsigned char *)"abc", (unsigned)n); }
int root(int n) { return (int)sqrt((double)n); }
int main(void) { printf("%lu\n", adler32(1, (const unsigned char *)"abc", 3)); return 0; }
."#;

#[test]
fn host_symbols_are_refused_unless_allowed_and_then_listed() {
    use passlab::session::Session;
    let mut s = Session::new();
    s.execute(PARTLY_LOADED).unwrap();
    for command in [":exec", ":call check 3"] {
        let e = s.execute(command).unwrap_err().to_string();
        assert!(
            e.contains("symbols the module does not define, which this process would supply: adler32 (from libz.so.1)")
                && e.contains("allow=host"),
            "{command}: {e}"
        );
    }
    let ran = s.execute(":exec allow=host").unwrap().text();
    assert!(ran.contains("38600999"), "{ran}");
    assert!(ran.contains("exit status 0"), "{ran}");
    assert!(
        ran.contains("bound to the host: adler32 (libz.so.1)"),
        "{ran}"
    );
    let called = s.execute(":call check 3 allow=host").unwrap().text();
    assert!(called.contains("check(3) = 38600999"), "{called}");
    assert!(
        called.contains("bound to the host: adler32 (libz.so.1)"),
        "{called}"
    );
    // Without the setting again, refused again.
    assert!(s.execute(":call check 3").is_err());
    // A function using only the C runtime (libm here) is not affected.
    let root = s.execute(":call root 49").unwrap().text();
    assert!(root.contains("root(49) = 7"), "{root}");
    assert!(!root.contains("bound to the host"), "{root}");
    let bad = s.execute(":exec allow=everything").unwrap_err().to_string();
    assert!(bad.contains("allow"), "{bad}");
}

#[test]
fn the_jit_refuses_host_symbols_through_the_library_too() {
    let m = Module::from_c(
        "unsigned long adler32(unsigned long, const unsigned char *, unsigned int);\n\
         int atoi(const char *);\n\
         unsigned long sum(void) { return adler32(1, 0, 0); }\n\
         int only_libc(int n) { char b[2] = {(char)('0' + n), 0}; return atoi(b); }\n",
        "host.c",
    )
    .unwrap();
    let mut jit = Jit::new(&m, 2).unwrap();
    assert_eq!(
        jit.host_bound("sum"),
        &[("adler32".to_string(), "libz.so.1".to_string())]
    );
    assert!(jit.host_bound("only_libc").is_empty());
    let e = jit.call("sum", &[]).unwrap_err().to_string();
    assert!(e.contains("adler32 (from libz.so.1)"), "{e}");
    assert_eq!(
        jit.call("only_libc", &[Arg::Int(4)]).unwrap().value,
        Some(Value::Int { value: 4, bits: 32 })
    );
    jit.set_allow_host(true);
    // adler32(1, NULL, 0) is zlib's initial value, 1.
    assert_eq!(
        jit.call("sum", &[]).unwrap().value,
        Some(Value::Int { value: 1, bits: 64 })
    );
}

/// A random fill covers the element type's whole range (issue 61: `i8`
/// got 0–99, not random bytes); floats stay in [0, 1), as NumPy's
/// `random.rand`.
#[test]
fn random_fills_cover_the_whole_range_of_their_type() {
    let bytes = Buffer::new(ElemType::I8, 4096, Fill::Random(7)).unwrap();
    let values: std::collections::BTreeSet<i64> =
        (0..bytes.len()).map(|i| bytes.get(i) as i64).collect();
    assert_eq!(values.len(), 256, "{values:?}");
    for (ty, low, high) in [
        (ElemType::I16, -30_000.0, 30_000.0),
        (ElemType::I32, -2e9, 2e9),
        (ElemType::I64, -9e18, 9e18),
    ] {
        let b = Buffer::new(ty, 4096, Fill::Random(7)).unwrap();
        let (min, max) = (0..b.len())
            .map(|i| b.get(i))
            .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        assert!(min < low && max > high, "{ty:?}: {min} .. {max}");
    }
    let floats = Buffer::new(ElemType::F32, 4096, Fill::Random(7)).unwrap();
    assert!((0..floats.len()).all(|i| (0.0..1.0).contains(&floats.get(i))));
}

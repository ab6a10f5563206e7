//! Interrupting a running JIT call from another thread, as the Jupyter
//! kernel's control channel does. In a file of its own: `interrupt` stops
//! whatever call the process runs, so it must not share a process with
//! other tests' calls.

use passlab::jit::{Arg, Jit};
use passlab::{pipeline, Module};
use std::time::Duration;

fn jit_at(opt: &str) -> Jit {
    let mut m = Module::from_c(
        "int add(int a, int b) { return a + b; }\n\
         int forever(int x) { volatile int y = x; while (y >= 0) y = (y + 1) & 7; return y; }",
        "spin.c",
    )
    .unwrap();
    pipeline::parse(opt).unwrap().apply(&mut m).unwrap();
    Jit::new(&m, 2).unwrap()
}

#[test]
fn an_interrupt_from_another_thread_ends_the_call() {
    let j = jit_at("default<O0>").with_timeout(Duration::from_secs(20));
    assert!(!passlab::jit::interrupt(), "nothing runs yet");
    let stopper = std::thread::spawn(|| {
        // Until the call has started.
        for _ in 0..400 {
            std::thread::sleep(Duration::from_millis(5));
            if passlab::jit::interrupt() {
                return true;
            }
        }
        false
    });
    let start = std::time::Instant::now();
    let e = j.call("forever", &[Arg::Int(1)]).unwrap_err().to_string();
    assert!(stopper.join().unwrap());
    assert_eq!(e, "'forever' was interrupted");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(
        j.call("add", &[Arg::Int(2), Arg::Int(3)])
            .unwrap()
            .value
            .unwrap()
            .to_string(),
        "5"
    );
}

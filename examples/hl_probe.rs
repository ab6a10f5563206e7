fn main() {
    let t = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let s0 = std::time::Instant::now();
    passlab::highlight::ir("define void @f() {\n ret void\n}\n");
    eprintln!("init {:?}", s0.elapsed());
    let s = std::time::Instant::now();
    let h = passlab::highlight::ir(&t).unwrap();
    eprintln!(
        "{} bytes -> {} bytes in {:?}",
        t.len(),
        h.len(),
        s.elapsed()
    );
    println!("{h}");
}

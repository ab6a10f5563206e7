//! Example charts on real inputs, written to `target/example-charts/` for a
//! reader to open: pass timing and IR size of zlib's deflate.c at
//! default<O2>, and the seed's opt_gemm (examples/gemm.c) compared across
//! pipelines. Each chart is checked as an image: a PNG of the declared size
//! whose caption band has text in it, and an SVG that carries the title.

mod common;

use passlab::chart::Chart;
use passlab::instrument::{IrSize, Timing};
use passlab::jit::{compare, Arg, Buffer, Candidate, ElemType, Fill, TimeSpec};
use passlab::{pipeline, Module, PassContext};
use std::path::{Path, PathBuf};
use std::rc::Rc;

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/example-charts");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes both forms and checks them; returns the PNG's path.
fn write(chart: &Chart, name: &str) -> PathBuf {
    let dir = out_dir();
    let svg = chart.svg().unwrap();
    assert!(svg.starts_with("<svg"), "{name}");
    let escaped = chart
        .title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(svg.contains(&escaped), "{name}: title missing from the SVG");
    std::fs::write(dir.join(format!("{name}.svg")), svg).unwrap();
    let png = chart.png().unwrap();
    let mut reader = png::Decoder::new(&png[..]).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), chart.size(), "{name}");
    let caption = &pixels[..info.line_size * 40];
    let dark = caption
        .chunks(3)
        .filter(|p| p.iter().all(|&c| c < 100))
        .count();
    assert!(dark > 300, "{name}: the caption has {dark} dark pixels");
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).unwrap();
    path
}

#[test]
fn timing_and_ir_size_of_deflate_c() {
    let mut m = Module::load(&[common::inputs::zlib_source("deflate.c")]).unwrap();
    let timing = Rc::new(Timing::new());
    let size = Rc::new(IrSize::new());
    {
        let _g = PassContext::new()
            .with_instrument(timing.clone())
            .with_instrument(size.clone())
            .enter()
            .unwrap();
        pipeline::parse("default<O2>")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let t = Chart::timing(&timing.report(), 15);
    assert!(t.title.contains("top 15 of"), "{}", t.title);
    write(&t, "deflate-timing");
    let series = size.series();
    let s = Chart::ir_size(&series);
    let end = m.stats().instructions;
    assert!(
        s.title.contains(&format!("→ {end} instructions")),
        "{}",
        s.title
    );
    write(&s, "deflate-ir-size");
}

#[test]
fn opt_gemm_across_pipelines() {
    let gemm = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/gemm.c");
    let m = Module::load(&[passlab::Source::file(gemm).unwrap()]).unwrap();
    let n = 128;
    let a = Buffer::new(ElemType::F32, n * n, Fill::Random(1)).unwrap();
    let b = Buffer::new(ElemType::F32, n * n, Fill::Random(2)).unwrap();
    let c = Buffer::new(ElemType::F32, n * n, Fill::Zeros).unwrap();
    let mut candidates: Vec<Candidate> = ["O0", "O2", "O3"]
        .iter()
        .map(|p| Candidate::new(p))
        .collect();
    candidates.push(Candidate {
        label: "O3 disabled=loop-vectorize".into(),
        pipeline: "O3".into(),
        context: Some(PassContext::inherit().with_disabled(["loop-vectorize"])),
    });
    let spec = TimeSpec {
        number: 3,
        repeat: 5,
        min_repeat_ms: 0,
    };
    let args = [
        Arg::Int(n as i64),
        Arg::Buffer(&a),
        Arg::Buffer(&b),
        Arg::Buffer(&c),
    ];
    let mut cmp = compare(&m, "gemm_permuted", &args, &candidates, spec, &mut |_| {}).unwrap();
    cmp.flops = Some(2.0 * (n * n * n) as f64);
    assert!(cmp.entries.iter().all(|e| e.same_result), "{}", cmp.table());
    assert!(cmp.table().to_text().contains("GFLOP/s"));
    write(&Chart::runtime(&cmp), "gemm-runtime");
    write(&Chart::compile_vs_runtime(&cmp), "gemm-compile-vs-runtime");
}

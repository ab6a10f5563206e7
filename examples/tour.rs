use inkwell::passes::PassBuilderOptions;
use inkwell::targets::*;
use inkwell::OptimizationLevel;
fn main() {
    Target::initialize_native(&InitializationConfig::default()).unwrap();
    let ctx = inkwell::context::Context::create();
    let buf =
        inkwell::memory_buffer::MemoryBuffer::create_from_file(std::path::Path::new("/tmp/vec.ll"))
            .unwrap();
    let m = ctx.create_module_from_ir(buf).unwrap();
    let triple = TargetMachine::get_default_triple();
    let t = Target::from_triple(&triple).unwrap();
    let tm = t
        .create_target_machine(
            &triple,
            "",
            "",
            OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::Default,
        )
        .unwrap();
    let o = PassBuilderOptions::create();
    o.set_loop_vectorization(false);
    o.set_loop_slp_vectorization(false);
    o.set_loop_unrolling(false);
    m.run_passes("default<O2>", &tm, o).unwrap();
    println!(
        "{}",
        m.print_to_string().to_string().matches("x float").count()
    );
}

//! Throughput analysis: LLVM's machine-code analyzer (`llvm-mca`) over a
//! region of a function's machine code, by default its innermost loop.
//!
//! [`regions`] finds the loops in a function's assembly (as [`super::asm`]
//! parsed it): a branch back to a label earlier in the function closes a
//! loop from that label to the branch; loops inside loops are deeper.
//! [`Region::innermost`] picks the deepest, the largest of those (in a
//! vectorized nest, the vector body rather than its scalar remainder).
//!
//! [`analyze`] runs `llvm-mca` of the LLVM passlab was built against (a
//! process of its own: whatever it does, the session goes on) on the
//! region's instructions for a processor, as Compiler Explorer's llvm-mca
//! pane does, and reads its JSON report (the summary: iterations, cycles,
//! IPC, µops per cycle, the block's reciprocal throughput; the pressure
//! per resource per iteration and per instruction) and the text of its
//! bottleneck analysis.
//!
//! ```
//! use passlab::jit::mca;
//! let code = ["addq $8, %rax".to_string(), "cmpq %rcx, %rax".into(), "jne .LBB0_1".into()];
//! let a = mca::analyze("x86_64-unknown-linux-gnu", "skylake", "", false, &code).unwrap();
//! assert_eq!(a.iterations, 100);
//! assert!(a.ipc > 0.0 && a.resources.iter().any(|r| r.contains("Port")));
//! ```

use super::asm::{Assembly, Function, Kind, Syntax};
use super::Codegen;
use crate::table::Table;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A stretch of a function's machine code llvm-mca simulates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The label at its head (`.LBB0_3`), or `(whole function)`.
    pub label: String,
    /// How many loops hold it (1: an outermost loop); 0 for a function.
    pub depth: usize,
    /// Its instructions as the code generator printed them.
    pub instructions: Vec<String>,
    /// The first source line its instructions carry, when known.
    pub source: Option<(u32, u32)>,
}

/// The target of a branch instruction, when it branches to a local label.
fn branch_target(text: &str) -> Option<&str> {
    let t = text.split('#').next().unwrap_or("").trim();
    let (mnemonic, operands) = t.split_once(char::is_whitespace)?;
    if !mnemonic.starts_with('j') {
        return None;
    }
    let target = operands.trim();
    target.starts_with(".L").then_some(target)
}

/// The instruction lines of `f` from line `from` to line `to` (inclusive).
fn instructions(f: &Function, from: usize, to: usize) -> (Vec<String>, Option<(u32, u32)>) {
    let mut source = None;
    let code = f.lines[from..=to]
        .iter()
        .filter(|l| l.kind == Kind::Instruction)
        .map(|l| {
            source = source.or(l.source);
            l.text.trim().to_string()
        })
        .collect();
    (code, source)
}

/// The loops of `f`, outermost first (in the order their heads appear).
pub fn regions(f: &Function) -> Vec<Region> {
    let mut labels = BTreeMap::new();
    for (i, l) in f.lines.iter().enumerate() {
        if l.kind == Kind::Label {
            let name = l.text.trim().trim_end_matches(':').to_string();
            labels.insert(name, i);
        }
    }
    // (head, last branch back to it): one loop per head.
    let mut spans: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, l) in f.lines.iter().enumerate() {
        if l.kind != Kind::Instruction {
            continue;
        }
        if let Some(&head) = branch_target(&l.text).and_then(|t| labels.get(t)) {
            if head < i {
                let end = spans.entry(head).or_insert(i);
                *end = (*end).max(i);
            }
        }
    }
    let spans: Vec<(usize, usize)> = spans.into_iter().collect();
    spans
        .iter()
        .map(|&(head, end)| {
            let depth = spans
                .iter()
                .filter(|&&(h, e)| h <= head && end <= e)
                .count();
            let (code, source) = instructions(f, head, end);
            Region {
                label: f.lines[head].text.trim().trim_end_matches(':').to_string(),
                depth,
                instructions: code,
                source,
            }
        })
        .collect()
}

impl Region {
    /// The innermost loop of `f` (the deepest; of those, the one with the
    /// most instructions), or the whole function when it has no loop.
    pub fn innermost(f: &Function) -> Region {
        regions(f)
            .into_iter()
            .max_by_key(|r| (r.depth, r.instructions.len()))
            .unwrap_or_else(|| Region::whole(f))
    }

    /// Every instruction of `f`, as one straight line.
    pub fn whole(f: &Function) -> Region {
        let (code, source) = instructions(f, 0, f.lines.len().saturating_sub(1));
        Region {
            label: "(whole function)".into(),
            depth: 0,
            instructions: code,
            source,
        }
    }

    /// The loop of `f` headed by `label`, or the block from `label` to the
    /// next label when no branch comes back to it.
    pub fn at(f: &Function, label: &str) -> std::result::Result<Region, String> {
        if let Some(r) = regions(f).into_iter().find(|r| r.label == label) {
            return Ok(r);
        }
        let labels: Vec<&str> = f
            .lines
            .iter()
            .skip(1)
            .filter(|l| l.kind == Kind::Label)
            .map(|l| l.text.trim().trim_end_matches(':'))
            .filter(|l| l.starts_with(".LBB"))
            .collect();
        let head = f
            .lines
            .iter()
            .position(|l| l.kind == Kind::Label && l.text.trim().trim_end_matches(':') == label)
            .ok_or_else(|| {
                let mut e = format!("no block '{label}' in {}", f.name);
                if !labels.is_empty() {
                    let _ = std::fmt::Write::write_fmt(
                        &mut e,
                        format_args!(" (its blocks: {})", labels.join(" ")),
                    );
                }
                e
            })?;
        let end = f.lines[head + 1..]
            .iter()
            .position(|l| l.kind == Kind::Label)
            .map_or(f.lines.len() - 1, |k| head + k);
        let (code, source) = instructions(f, head, end);
        if code.is_empty() {
            return Err(format!("block '{label}' of {} has no instructions", f.name));
        }
        Ok(Region {
            label: label.to_string(),
            depth: 0,
            instructions: code,
            source,
        })
    }
}

/// What llvm-mca reports for one region on one processor.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The processor it modelled.
    pub cpu: String,
    pub iterations: u64,
    pub instructions: u64,
    pub cycles: u64,
    pub uops: u64,
    pub dispatch_width: u64,
    pub ipc: f64,
    pub uops_per_cycle: f64,
    /// Cycles per iteration if only resources limited it (the block's
    /// reciprocal throughput).
    pub block_rthroughput: f64,
    /// The processor's resources (ports, dividers), as its model names them.
    pub resources: Vec<String>,
    /// Cycles each resource is busy per iteration.
    pub pressure: Vec<f64>,
    /// The bottleneck analysis as llvm-mca prints it.
    pub bottleneck: String,
}

impl Analysis {
    /// Simulated cycles per iteration (dependencies included).
    pub fn cycles_per_iteration(&self) -> f64 {
        self.cycles as f64 / self.iterations.max(1) as f64
    }

    /// The busiest resource and its cycles per iteration.
    pub fn busiest(&self) -> Option<(&str, f64)> {
        self.resources
            .iter()
            .zip(&self.pressure)
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(r, p)| (r.as_str(), *p))
    }
}

/// llvm-mca of the LLVM passlab was built against.
pub fn mca_path() -> PathBuf {
    Path::new(env!("PASSLAB_LLVM_BINDIR")).join("llvm-mca")
}

/// The processor llvm-mca models for code generated for `cpu` (empty: the
/// module's own, which clang makes `x86-64` on x86 and LLVM `generic`).
pub fn model_cpu(triple: &str, cpu: &str) -> String {
    if !cpu.is_empty() {
        cpu.to_string()
    } else if triple.starts_with("x86_64") {
        "x86-64".into()
    } else {
        "generic".into()
    }
}

/// Runs llvm-mca over `code` (instructions in AT&T syntax, or Intel's with
/// `intel`) for `cpu` with `features` (`+avx2,…`, or empty).
pub fn analyze(
    triple: &str,
    cpu: &str,
    features: &str,
    intel: bool,
    code: &[String],
) -> Result<Analysis> {
    let fail = |message: String| Error::Tool {
        tool: "llvm-mca".into(),
        message,
    };
    if code.is_empty() {
        return Err(fail("the region has no instructions".into()));
    }
    let mut text = String::new();
    if intel {
        text.push_str(".intel_syntax noprefix\n");
    }
    for line in code {
        text.push_str(line);
        text.push('\n');
    }
    let run = |extra: &[&str]| -> Result<String> {
        use std::io::Write as _;
        use std::process::Stdio;
        let mut cmd = std::process::Command::new(mca_path());
        cmd.arg(format!("-mtriple={triple}"))
            .arg(format!("-mcpu={cpu}"));
        if !features.is_empty() {
            cmd.arg(format!("-mattr={features}"));
        }
        let mut child = cmd
            .args(extra)
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("could not run {}: {e}", mca_path().display())))?;
        // The region is small (a function at most): written whole before
        // the output is read, it fits the pipe's buffer or llvm-mca reads
        // it all before it writes.
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(text.as_bytes())
                .map_err(|e| fail(format!("could not write the region: {e}")))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| fail(format!("could not read its report: {e}")))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("is not a recognized processor") {
            return Err(fail(format!("'{cpu}' is not a processor llvm-mca knows")));
        }
        if !out.status.success() {
            return Err(fail(stderr.replace("<stdin>", "region").trim().to_string()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let json = run(&["--json"])?;
    let bottleneck = run(&[
        "-bottleneck-analysis",
        "--summary-view=false",
        "--instruction-info=false",
        "--resource-pressure=false",
    ])?;
    let mut a = parse_json(&json).map_err(|e| fail(format!("unexpected report: {e}")))?;
    a.bottleneck = bottleneck.trim().to_string();
    Ok(a)
}

/// `message` as an error of `:mca`'s.
fn command_error(message: impl Into<String>) -> Error {
    Error::Command {
        command: "mca".into(),
        message: message.into(),
        suggestions: vec![],
    }
}

/// One code [`compare`] analyzed: its label (the module, the code
/// generation settings, or both), the region simulated, llvm-mca's
/// analysis and the code's source files (by number, for the region's
/// source line).
#[derive(Clone, Debug)]
pub struct Row {
    pub label: String,
    pub region: Region,
    pub analysis: Analysis,
    pub files: BTreeMap<u32, String>,
}

/// What [`compare`] found for a function: a [`Row`] per module and
/// processor, modules outermost, in the order given.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub function: String,
    pub rows: Vec<Row>,
}

/// Where [`compare`] gets machine code: `(module, settings, syntax)` to
/// the module's code and its target triple (the session keeps the code of
/// each module state, so that `:asm` and `:mca` make it once).
pub type CodeOf<'a> = dyn FnMut(&str, &Codegen, Syntax) -> Result<(Rc<Assembly>, String)> + 'a;

/// llvm-mca over `function` in each of `modules`, compiled for each of
/// `cpus` (none: `base`'s processor) with `base`'s other settings: the
/// region at `block` (a label, `all` for the whole function, `None` for
/// its innermost loop), 100 iterations simulated. `syntax` is the
/// assembly syntax as the context's configuration spells it;
/// `code(module, settings, syntax)` gives that module's machine code and
/// its target triple. Each processor is checked before any code is made;
/// then each code is made and analyzed in turn.
pub fn compare(
    function: &str,
    block: Option<&str>,
    modules: &[String],
    base: &Codegen,
    cpus: &[String],
    syntax: &str,
    code: &mut CodeOf,
) -> Result<Comparison> {
    let mut settings: Vec<Codegen> = Vec::new();
    if cpus.is_empty() {
        settings.push(base.clone());
    }
    for cpu in cpus {
        let target = crate::llvm::Target::new(cpu, "").map_err(|e| command_error(e.to_string()))?;
        settings.push(Codegen {
            target,
            cpu_setting: cpu.clone(),
            ..base.clone()
        });
    }
    let syntax = Syntax::parse(syntax).map_err(command_error)?;
    let mut rows = Vec::new();
    for name in modules {
        for cg in &settings {
            let (code, triple) = code(name, cg, syntax)?;
            let f = code.function(function).ok_or_else(|| {
                command_error(format!(
                    "the code generator made no function '{function}' in module {name}"
                ))
            })?;
            let region = match block {
                None => Region::innermost(f),
                Some("all") => Region::whole(f),
                Some(b) => Region::at(f, b).map_err(command_error)?,
            };
            let cpu = model_cpu(&triple, &cg.target.cpu);
            let analysis = analyze(
                &triple,
                &cpu,
                &cg.target.features,
                syntax == Syntax::Intel,
                &region.instructions,
            )?;
            let label = if modules.len() > 1 && settings.len() > 1 {
                format!("{name} · {}", cg.label())
            } else if modules.len() > 1 {
                name.clone()
            } else {
                cg.label()
            };
            rows.push(Row {
                label,
                region,
                analysis,
                files: code.files.clone(),
            });
        }
    }
    Ok(Comparison {
        function: function.to_string(),
        rows,
    })
}

impl Comparison {
    /// The summary: a row per code (its region, with the source line when
    /// known; cycles per iteration, throughput, IPC, the busiest resource).
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            &format!("llvm-mca: {}, 100 iterations simulated", self.function),
            &[
                "code",
                "region",
                "instructions",
                "cycles/iteration",
                "block throughput",
                "IPC",
                "µops/cycle",
                "busiest resource",
            ],
        );
        for Row {
            label,
            region,
            analysis: a,
            files,
        } in &self.rows
        {
            let place = region
                .source
                .and_then(|(file, line)| {
                    let path = files.get(&file)?;
                    let short = Path::new(path).file_name()?.to_string_lossy().into_owned();
                    Some(format!(" ({short}:{line})"))
                })
                .unwrap_or_default();
            let loop_ = if region.depth > 0 {
                format!("loop {}, depth {}{place}", region.label, region.depth)
            } else {
                format!("{}{place}", region.label)
            };
            let busiest = a
                .busiest()
                .map_or("-".into(), |(r, p)| format!("{r} {p:.2}"));
            t.push([
                format!("{label} [{}]", a.cpu),
                loop_,
                region.instructions.len().to_string(),
                format!("{:.2}", a.cycles_per_iteration()),
                format!("{:.2}", a.block_rthroughput),
                format!("{:.2}", a.ipc),
                format!("{:.2}", a.uops_per_cycle),
                busiest,
            ]);
        }
        t
    }

    /// Cycles each resource is busy per iteration: a row per resource any
    /// code uses (in the order first used), a column per code.
    pub fn pressure(&self) -> Table {
        let mut names: Vec<String> = Vec::new();
        for row in &self.rows {
            let a = &row.analysis;
            for (r, p) in a.resources.iter().zip(&a.pressure) {
                if *p > 0.0 && !names.contains(r) {
                    names.push(r.clone());
                }
            }
        }
        let mut columns = vec!["resource"];
        columns.extend(self.rows.iter().map(|r| r.label.as_str()));
        let mut p = Table::new("cycles each resource is busy per iteration", &columns);
        for r in &names {
            let mut cells = vec![r.clone()];
            for row in &self.rows {
                let a = &row.analysis;
                let v = a
                    .resources
                    .iter()
                    .position(|x| x == r)
                    .map_or(0.0, |i| a.pressure[i]);
                cells.push(if v > 0.0 {
                    format!("{v:.2}")
                } else {
                    "-".into()
                });
            }
            p.push(cells);
        }
        p
    }

    /// The text after the tables: for one code, its region's instructions
    /// and the bottleneck analysis; for several, each one's bottleneck
    /// summary (up to its critical sequence).
    pub fn notes(&self) -> Vec<String> {
        if let [row] = self.rows.as_slice() {
            let region = &row.region;
            return vec![format!(
                "{}:\n{}\n\n{}",
                region.label,
                region
                    .instructions
                    .iter()
                    .map(|i| format!("  {i}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                row.analysis.bottleneck
            )];
        }
        self.rows
            .iter()
            .map(|row| {
                let summary: Vec<&str> = row
                    .analysis
                    .bottleneck
                    .lines()
                    .take_while(|l| !l.starts_with("Critical sequence"))
                    .filter(|l| !l.trim().is_empty())
                    .collect();
                format!("{}:\n  {}", row.label, summary.join("\n  "))
            })
            .collect()
    }

    /// A bar chart's title, axis and bars: each code's cycles per
    /// iteration when there are several, else the pressure on each
    /// resource the one code uses.
    pub fn bars(&self) -> (String, &'static str, Vec<(String, f64)>) {
        let function = &self.function;
        if let [row] = self.rows.as_slice() {
            let a = &row.analysis;
            let bars = a
                .resources
                .iter()
                .zip(&a.pressure)
                .filter(|(_, p)| **p > 0.0)
                .map(|(r, p)| (r.clone(), *p))
                .collect();
            (
                format!("{function}: resource pressure per iteration (llvm-mca)"),
                "cycles busy per iteration",
                bars,
            )
        } else {
            let bars = self
                .rows
                .iter()
                .map(|r| (r.label.clone(), r.analysis.cycles_per_iteration()))
                .collect();
            (
                format!("{function}: simulated cycles per iteration (llvm-mca)"),
                "cycles per iteration",
                bars,
            )
        }
    }
}

/// A resource's name as llvm-mca's text report prints it: the JSON report
/// of LLVM 19 writes a unit of a resource group as the group's name, a dot
/// and the unit's number as a raw byte (`SBPort23.\u{1}`): `SBPort23.1`.
fn resource_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 2);
    for c in raw.chars() {
        if (c as u32) < 0x20 {
            out.push_str(&(c as u32).to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Reads llvm-mca's `--json` report (its first region).
fn parse_json(json: &str) -> std::result::Result<Analysis, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let region = v["CodeRegions"].get(0).ok_or("no code region")?;
    let s = &region["SummaryView"];
    let int = |k: &str| s[k].as_u64().ok_or(format!("no {k}"));
    let float = |k: &str| s[k].as_f64().ok_or(format!("no {k}"));
    let resources: Vec<String> = v["TargetInfo"]["Resources"]
        .as_array()
        .ok_or("no resources")?
        .iter()
        .map(|r| resource_name(r.as_str().unwrap_or("?")))
        .collect();
    let iterations = int("Iterations")?;
    // Rows per instruction, then one totals row per resource whose
    // instruction index is the instruction count: the totals are kept.
    let count = region["Instructions"].as_array().map_or(0, |a| a.len()) as u64;
    let mut pressure = vec![0.0; resources.len()];
    for r in region["ResourcePressureView"]["ResourcePressureInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["InstructionIndex"].as_u64() == Some(count))
    {
        if let (Some(i), Some(u)) = (r["ResourceIndex"].as_u64(), r["ResourceUsage"].as_f64()) {
            if let Some(p) = usize::try_from(i).ok().and_then(|i| pressure.get_mut(i)) {
                *p = u;
            }
        }
    }
    Ok(Analysis {
        cpu: v["TargetInfo"]["CPUName"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        iterations,
        instructions: int("Instructions")?,
        cycles: int("TotalCycles")?,
        uops: int("TotaluOps")?,
        dispatch_width: int("DispatchWidth")?,
        ipc: float("IPC")?,
        uops_per_cycle: float("uOpsPerCycle")?,
        block_rthroughput: float("BlockRThroughput")?,
        resources,
        pressure,
        bottleneck: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::asm::Line;

    fn row(label: &str, cycles: u64, pressure: &[(&str, f64)], bottleneck: &str) -> Row {
        Row {
            label: label.into(),
            region: Region {
                label: ".LBB0_2".into(),
                depth: 1,
                instructions: vec!["addl %ecx, %eax".into(), "jne .LBB0_2".into()],
                source: Some((1, 7)),
            },
            analysis: Analysis {
                cpu: "skylake".into(),
                iterations: 100,
                instructions: 200,
                cycles,
                uops: 200,
                dispatch_width: 4,
                ipc: 1.5,
                uops_per_cycle: 2.0,
                block_rthroughput: 0.5,
                resources: pressure.iter().map(|(r, _)| r.to_string()).collect(),
                pressure: pressure.iter().map(|(_, p)| *p).collect(),
                bottleneck: bottleneck.into(),
            },
            files: BTreeMap::from([(1, "/src/dir/loop.c".to_string())]),
        }
    }

    #[test]
    fn one_codes_comparison_shows_its_region_and_its_resources() {
        let c = Comparison {
            function: "f".into(),
            rows: vec![row(
                "codegen O2",
                150,
                &[("Port0", 0.5), ("Port1", 0.0), ("Port6", 1.0)],
                "Cycles with backend pressure increase [ 40% ]\nCritical sequence based on the simulation:",
            )],
        };
        let t = c.table();
        assert_eq!(t.title, "llvm-mca: f, 100 iterations simulated");
        assert_eq!(
            t.rows,
            [[
                "codegen O2 [skylake]",
                "loop .LBB0_2, depth 1 (loop.c:7)",
                "2",
                "1.50",
                "0.50",
                "1.50",
                "2.00",
                "Port6 1.00"
            ]]
        );
        // Unused resources are left out.
        let p = c.pressure();
        assert_eq!(p.rows, [["Port0", "0.50"], ["Port6", "1.00"]]);
        assert_eq!(
            c.notes(),
            [".LBB0_2:\n  addl %ecx, %eax\n  jne .LBB0_2\n\nCycles with backend pressure increase [ 40% ]\nCritical sequence based on the simulation:"]
        );
        let (title, axis, bars) = c.bars();
        assert_eq!(title, "f: resource pressure per iteration (llvm-mca)");
        assert_eq!(axis, "cycles busy per iteration");
        assert_eq!(
            bars,
            [("Port0".to_string(), 0.5), ("Port6".to_string(), 1.0)]
        );
    }

    #[test]
    fn several_codes_are_compared_by_cycles_and_summaries() {
        let c = Comparison {
            function: "f".into(),
            rows: vec![
                row(
                    "a",
                    200,
                    &[("Port0", 1.0)],
                    "Summary A\n\nCritical sequence:\n  x",
                ),
                row("b", 100, &[("Port1", 2.0), ("Port0", 0.25)], "Summary B"),
            ],
        };
        let p = c.pressure();
        assert_eq!(
            p.columns
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>(),
            ["resource", "a", "b"]
        );
        assert_eq!(p.rows, [["Port0", "1.00", "0.25"], ["Port1", "-", "2.00"]]);
        assert_eq!(c.notes(), ["a:\n  Summary A", "b:\n  Summary B"]);
        let (title, axis, bars) = c.bars();
        assert_eq!(title, "f: simulated cycles per iteration (llvm-mca)");
        assert_eq!(axis, "cycles per iteration");
        assert_eq!(bars, [("a".to_string(), 2.0), ("b".to_string(), 1.0)]);
    }

    fn function(lines: &[&str]) -> Function {
        Function {
            name: "f".into(),
            bytes: None,
            lines: lines
                .iter()
                .map(|t| Line {
                    kind: if t.ends_with(':') {
                        Kind::Label
                    } else {
                        Kind::Instruction
                    },
                    text: t.to_string(),
                    source: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_innermost_loop_is_the_deepest_and_largest() {
        let f = function(&[
            "f:",
            "\txorl %eax, %eax",
            ".LBB0_1:",
            "\tmovl $0, %ecx",
            ".LBB0_2:",
            "\taddl %ecx, %eax",
            "\tincl %ecx",
            "\tcmpl $10, %ecx",
            "\tjne .LBB0_2",
            "\tdecl %edi",
            "\tjne .LBB0_1",
            ".LBB0_3:",
            "\tincl %eax",
            "\tjmp .LBB0_3",
        ]);
        let r = regions(&f);
        assert_eq!(
            r.iter()
                .map(|r| (r.label.as_str(), r.depth))
                .collect::<Vec<_>>(),
            [(".LBB0_1", 1), (".LBB0_2", 2), (".LBB0_3", 1)]
        );
        let inner = Region::innermost(&f);
        assert_eq!(inner.label, ".LBB0_2");
        assert_eq!(inner.instructions.len(), 4);
        assert_eq!(Region::at(&f, ".LBB0_1").unwrap().instructions.len(), 7);
        let e = Region::at(&f, ".LBB9_9").unwrap_err();
        assert!(e.contains(".LBB0_1 .LBB0_2 .LBB0_3"), "{e}");
        assert_eq!(Region::whole(&f).instructions.len(), 10);
    }

    #[test]
    fn units_of_a_resource_group_are_numbered() {
        assert_eq!(resource_name("SBPort23.\u{1}"), "SBPort23.1");
        assert_eq!(resource_name("SBPort0"), "SBPort0");
    }

    #[test]
    fn a_function_without_loops_is_analyzed_whole() {
        let f = function(&["g:", "\tleal (%rdi,%rdi), %eax", "\tretq"]);
        let r = Region::innermost(&f);
        assert_eq!(
            (r.label.as_str(), r.instructions.len()),
            ("(whole function)", 2)
        );
    }

    #[test]
    fn llvm_mca_measures_a_dependency_chain_and_names_unknown_processors() {
        let chain = [
            "addsd (%rdi,%rax,8), %xmm0",
            "incq %rax",
            "cmpq %rcx, %rax",
            "jne .LBB0_1",
        ]
        .map(String::from);
        let a = analyze("x86_64-unknown-linux-gnu", "skylake", "", false, &chain).unwrap();
        // The loop-carried addsd (4 cycles on Skylake) limits it, not the
        // ports: simulated cycles per iteration far above the throughput.
        assert!(a.cycles_per_iteration() > 3.0, "{a:?}");
        assert!(a.block_rthroughput < 1.0, "{a:?}");
        assert!(
            a.bottleneck.contains("Data Dependencies"),
            "{}",
            a.bottleneck
        );
        let total: f64 = a.pressure.iter().sum();
        assert!(total > 1.0 && total < 10.0, "{a:?}");
        let e = analyze("x86_64-unknown-linux-gnu", "pentium9", "", false, &chain).unwrap_err();
        assert!(
            e.to_string().contains("'pentium9' is not a processor"),
            "{e}"
        );
        let e = analyze(
            "x86_64-unknown-linux-gnu",
            "skylake",
            "",
            false,
            &["frob %rax".into()],
        )
        .unwrap_err();
        assert!(e.to_string().contains("invalid instruction"), "{e}");
    }
}

//! `passlab.transform.PassInfo`, what the instruments' hooks and a pass's
//! `info` give (kept apart from `passes.rs`, which uses the context, whose
//! instruments use this).

use passlab::instrument::PassRun;
use passlab::llvm::IrUnit;
use passlab::PassInfo;
use pyo3::prelude::*;

/// A pass's name, opt level, required passes and description; in an
/// instrument's hooks also the IR unit it runs on (`module`, `cgscc`,
/// `function`, `loop`), that unit's name, its nesting depth, whether LLVM
/// runs it inside one of its pipelines, and (after it) whether it may have
/// changed anything.
#[pyclass(name = "PassInfo", module = "passlab.transform", frozen, get_all)]
pub struct PyPassInfo {
    name: String,
    opt_level: u32,
    required: Vec<String>,
    description: String,
    ir_unit: Option<&'static str>,
    target: Option<String>,
    depth: Option<usize>,
    inside_llvm: Option<bool>,
    may_have_changed: Option<bool>,
}

pub fn unit_name(unit: IrUnit) -> &'static str {
    match unit {
        IrUnit::Module => "module",
        IrUnit::Cgscc => "cgscc",
        IrUnit::Function => "function",
        IrUnit::Loop => "loop",
        IrUnit::Other => "other",
    }
}

impl PyPassInfo {
    pub fn of(info: &PassInfo) -> Self {
        PyPassInfo {
            name: info.name.clone(),
            opt_level: info.opt_level,
            required: info.required.clone(),
            description: info.description.clone(),
            ir_unit: None,
            target: None,
            depth: None,
            inside_llvm: None,
            may_have_changed: None,
        }
    }

    pub fn of_run(run: &PassRun<'_>, after: bool) -> Self {
        PyPassInfo {
            ir_unit: Some(unit_name(run.unit)),
            target: Some(run.target.to_string()),
            depth: Some(run.depth),
            inside_llvm: Some(run.inside_llvm),
            may_have_changed: after.then_some(run.may_have_changed),
            ..Self::of(run.info)
        }
    }
}

#[pymethods]
impl PyPassInfo {
    /// `PassInfo(opt_level, name, required=None, traceable=False)`, TVM's
    /// constructor (`traceable` is accepted and has no use here).
    #[new]
    #[pyo3(signature = (opt_level, name, required=None, traceable=false))]
    fn new(opt_level: u32, name: &str, required: Option<Vec<String>>, traceable: bool) -> Self {
        let _ = traceable;
        Self::of(&PassInfo::new(name, opt_level).requires(required.unwrap_or_default()))
    }

    fn __repr__(&self) -> String {
        let mut s = format!(
            "PassInfo(name={:?}, opt_level={}, required={:?}",
            self.name, self.opt_level, self.required
        );
        if let (Some(unit), Some(target)) = (self.ir_unit, &self.target) {
            s.push_str(&format!(", ir_unit={unit:?}, target={target:?}"));
        }
        s.push(')');
        s
    }
}

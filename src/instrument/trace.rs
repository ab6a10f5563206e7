//! [`Trace`]: a user callback before and after every pass, as the seed's
//! trace function `(module, pass info, is_before)`.

use super::{Instrument, PassRun};
use crate::module::Module;
use crate::Result;

type Callback = Box<dyn Fn(&Module, &PassRun, bool)>;

/// Calls `f(module, pass, is_before)` around every pass.
pub struct Trace {
    f: Callback,
}

impl Trace {
    pub fn new(f: impl Fn(&Module, &PassRun, bool) + 'static) -> Trace {
        Trace { f: Box::new(f) }
    }

    /// `:instrument trace`: a line for each pass as it starts, indented by
    /// its depth, with its unit and target, to where passes print
    /// ([`crate::console::emit`]).
    pub fn emitting() -> Trace {
        Trace::new(|_m, p, before| {
            if before {
                crate::console::emit(&format!(
                    "{}{} on {} {}",
                    "  ".repeat(p.depth),
                    p.name(),
                    p.unit,
                    p.target
                ));
            }
        })
    }

    /// A trace that prints one line per pass to `out` (`before`/`after`,
    /// indented by depth, with the unit), collecting into the returned
    /// buffer.
    pub fn lines() -> (Trace, std::rc::Rc<std::cell::RefCell<String>>) {
        let buf = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
        let out = buf.clone();
        let t = Trace::new(move |_m, p, is_before| {
            out.borrow_mut().push_str(&format!(
                "{}{} {} on {} {}\n",
                "  ".repeat(p.depth),
                if is_before { "before" } else { "after" },
                p.name(),
                p.unit,
                p.target
            ));
        });
        (t, buf)
    }
}

impl Instrument for Trace {
    fn name(&self) -> &str {
        "trace"
    }
    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        (self.f)(module, pass, true);
        Ok(())
    }
    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        (self.f)(module, pass, false);
        Ok(())
    }
}

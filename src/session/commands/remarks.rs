//! Remarks on the source: `:report remarks source` lists the source lines
//! that have remarks, the most remarked first, each with its remarks
//! (kind, pass, function, message) under it — opt-viewer's view as text.

use super::*;
use crate::instrument::{Remark, RemarkFilter};

/// Source lines shown unless `top=` says otherwise.
pub(super) const TOP_LINES: usize = 30;

/// The annotated source of `remarks` (those `filter` keeps), the `top`
/// lines with the most remarks first (`explore::remarks_text`), each file
/// read as `:load` finds it and named as the session shows it.
pub(super) fn annotated_source(
    s: &Session,
    remarks: &[Remark],
    filter: &RemarkFilter,
    top: usize,
) -> String {
    crate::explore::remarks_text(remarks, filter, top, &|f| source_text(s, f), &|f| {
        shown_path(s, f)
    })
}

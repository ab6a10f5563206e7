"""``%load_ext passlab``: passlab's command language in any IPython shell
or Jupyter notebook, rendered as passlab's own kernel renders it.

``%%passlab`` runs a cell of commands; ``%passlab :command`` one line. Both
talk to one session per shell (its modules and contexts stay between
cells). Each command's text is printed and its tables, IR and charts are
displayed as they come; the cell's last result is the cell's value. The
first error stops the cell, leaves the session as it was before the failed
command, and is raised as the :class:`passlab.Error` of its kind.
"""

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import publish_display_data

from ._passlab import Session


class Result:
    """A command's result: displayed through its MIME bundle."""

    def __init__(self, data):
        self.data = data

    def _repr_mimebundle_(self, include=None, exclude=None):
        return dict(self.data)

    def __repr__(self):
        return self.data.get("text/plain", "")


def _show(data):
    if len(data) == 1:
        print(data.get("text/plain", ""))
    else:
        publish_display_data(data=dict(data))


def run(session, code):
    """Runs ``code`` in ``session``, displaying as the kernel does; returns
    the last result (or None)."""
    held = None
    import sys

    def each(items, last):
        nonlocal held
        for kind, value in items:
            if held is not None:
                _show(held)
                held = None
            if kind == "stream":
                sys.stdout.write(value)
            elif kind == "stderr":
                sys.stderr.write(value)
            elif "image/png" in value or "image/svg+xml" in value:
                _show(value)
            else:
                held = value
        if not last and held is not None:
            _show(held)
            held = None

    try:
        session.execute_each(code, each)
    except Exception:
        if held is not None:
            _show(held)
        raise
    return Result(held) if held is not None else None


@magics_class
class PasslabMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self.session = Session()

    @cell_magic
    def passlab(self, line, cell):
        """Runs the cell as passlab commands (``%%passlab``); the rest of the
        first line, if any, runs first."""
        code = f"{line}\n{cell}" if line.strip() else cell
        return run(self.session, code)

    @line_magic("passlab")
    def passlab_line(self, line):
        """Runs one passlab command (``%passlab :run O2``)."""
        return run(self.session, line)


def load_ipython_extension(ipython):
    ipython.register_magics(PasslabMagics)

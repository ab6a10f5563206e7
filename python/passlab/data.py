"""passlab's sample programs: real C from zlib and Lua, the corpus of the
guide's leaderboard and of ``passlab.gym``'s ``benchmark="samples"``.

::

    import passlab
    zlib = passlab.data.sample_inputs() / "zlib"
    mod = passlab.Module.from_c(zlib / "adler32.c", level="O1", args=[f"-I{zlib}"])

A wheel built after ``python python/ship_samples.py`` carries them as
package data (``passlab/samples``), so that they are there in any venv; a
package installed in place from a checkout finds them where the set-up
links them (``target/inputs``).
"""

import os
import pathlib

from . import _passlab

__all__ = ["sample_inputs", "sample_corpus"]


def sample_inputs():
    """The folder of the sample inputs (``zlib/``, ``lua/``):
    ``target/inputs`` of ``PASSLAB_SOURCE`` (a passlab checkout) when it is
    set; else the package's own copy (``passlab/samples``); else
    ``target/inputs`` of the checkout this package was installed from in
    place."""
    root = os.environ.get("PASSLAB_SOURCE")
    packaged = pathlib.Path(__file__).resolve().parent / "samples"
    if root:
        folder = pathlib.Path(root) / "target" / "inputs"
    elif (packaged / "zlib").is_dir():
        return packaged
    else:
        folder = pathlib.Path(__file__).resolve().parents[2] / "target" / "inputs"
    if not (folder / "zlib").is_dir():
        raise _passlab.MissingFileError(
            f"{folder}: passlab's sample inputs are not there; run the set-up "
            "(bash scripts/passlab.sh setup) in a passlab checkout and set PASSLAB_SOURCE to it, "
            "or install a wheel built after python python/ship_samples.py"
        )
    return folder


def sample_corpus():
    """The leaderboard's 28 C files (zlib and Lua), as paths."""
    folder = sample_inputs()
    return [folder / name for name in _passlab.sample_corpus()]

"""Copies passlab's sample programs into the package (python/passlab/samples/),
so that a wheel built afterwards carries them as package data and
``passlab.gym.samples()`` (``benchmark="samples"``, ``gymnasium.make``
without a benchmark) works in any venv, without a passlab checkout.

    python python/ship_samples.py [SOURCE]   # SOURCE: target/inputs by default

Copies, for each folder of the leaderboard's corpus (zlib, lua), its C
files and headers and its licence (the folder's LICENSE, or the notice in
its main header); nothing else. The copy is not in git (.gitignore).
"""

import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
FOLDERS = ("zlib", "lua")


def ship(source, into=HERE / "passlab" / "samples"):
    source = pathlib.Path(source)
    for folder in FOLDERS:
        if not (source / folder).is_dir():
            raise SystemExit(f"{source / folder}: not there; run the set-up (bash scripts/passlab.sh setup) first")
    if into.exists():
        shutil.rmtree(into)
    count = 0
    for folder in FOLDERS:
        (into / folder).mkdir(parents=True)
        for path in sorted((source / folder).iterdir()):
            if path.is_file() and (path.suffix in (".c", ".h") or path.name in ("LICENSE", "README")):
                shutil.copyfile(path, into / folder / path.name)
                count += 1
    return count


if __name__ == "__main__":
    src = sys.argv[1] if len(sys.argv) > 1 else HERE.parent / "target" / "inputs"
    print(f"{ship(src)} files into {HERE / 'passlab' / 'samples'}")

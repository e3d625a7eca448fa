"""Builds the dbtr package with the libdbtr of a dbtr build inside it, so that `import dbtr`
finds the library wherever pip puts the package. The build is ../build (what ./run.sh test
and ./run.sh demo make) or $DBTR_BUILD_DIR; where it has no libdbtr yet, CMake builds one.
The package's version is the library's."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SONAME = "libdbtr.so.0"


def library() -> Path:
    build = Path(os.environ.get("DBTR_BUILD_DIR", HERE.parent / "build")).resolve()
    lib = build / "lib" / SONAME
    if not lib.exists():
        subprocess.run(["cmake", "-S", str(HERE.parent), "-B", str(build)], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "dbtr_shared", "-j", str(os.cpu_count() or 2)],
                       check=True)
    return lib


class BuildWithLibrary(build_py):
    """build_py, then the library beside the package's modules."""

    def run(self) -> None:
        super().run()
        shutil.copyfile(library(), Path(self.build_lib) / "dbtr" / SONAME)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: tag it for this platform, not as pure Python."""

    def has_ext_modules(self) -> bool:
        return True


lib = ctypes.CDLL(str(library()))
lib.dbtr_version.restype = ctypes.c_char_p
setup(version=lib.dbtr_version().decode(), cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)

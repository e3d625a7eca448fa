"""The ctypes mirrors of python/dbtr/_lib.py against the C structs of include/dbtr.h.

ctypes cannot read a header, so _lib.py repeats each public struct by hand; a mirror with a
member missing, added or moved would read and write the wrong bytes without any error. The
program tests/struct_layout.c prints what the compiler of libdbtr makes of each struct (size,
alignment, each member's name, offset and size in order) and of the constants _lib.py
repeats; tests/python.cmake passes its path in DBTR_STRUCT_LAYOUT. These tests compare the
mirrors with it, and its lists with the header's own declarations, so that a member or a
struct added on one side only fails here.

A mirror is the ctypes.Structure of _lib.py named as the C struct in CamelCase, without
dbtr_: ScanWriteOpts mirrors dbtr_scan_write_opts.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from dbtr import _lib

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "dbtr.h"


@pytest.fixture(scope="module")
def c_side() -> dict:
    """The JSON of tests/struct_layout.c: {"structs": [...], "constants": {...}}."""
    exe = os.environ.get("DBTR_STRUCT_LAYOUT", str(ROOT / "build" / "tests" / "struct_layout"))
    if not os.access(exe, os.X_OK):
        pytest.fail(f"no struct_layout program at {exe}: build it (./run.sh test) or set DBTR_STRUCT_LAYOUT")
    p = subprocess.run([exe], capture_output=True, text=True)
    assert p.returncode == 0, f"{exe}: exit {p.returncode}: {p.stderr}"
    return json.loads(p.stdout)


def header_declarations() -> tuple[dict, dict]:
    """The typedef'd structs of include/dbtr.h, each with its member names in order, and its
    typedef'd enums, each with its enumerators. The header's members are plain declarations
    (`size_t nx, ny, nz;`, `double origin[3];`, `const char *const *paths;`): a member's name
    is the last identifier of its declarator, or the one after `(*` for a function pointer."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", HEADER.read_text(), flags=re.S)
    structs = {}
    for body, name in re.findall(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
        members = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
            if pointer:
                members.append(pointer.group(1))
                continue
            for part in decl.split(","):
                members.append(re.findall(r"\w+", re.sub(r"\[[^\]]*\]", "", part))[-1])
        structs[name] = members
    enums = {name: [e.split("=")[0].strip() for e in body.split(",") if e.strip()]
             for body, name in re.findall(r"typedef\s+enum\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S)}
    return structs, enums


def c_name(cls: type) -> str:
    return "dbtr_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


def mirrors() -> list[type]:
    return [c for c in vars(_lib).values()
            if isinstance(c, type) and issubclass(c, ctypes.Structure) and c.__module__ == _lib.__name__]


def test_struct_layout_program_lists_the_header(c_side):
    """tests/struct_layout.c lists every public struct with every member, in the header's
    order, and every value of each enum it lists a value of."""
    structs, enums = header_declarations()
    listed = {s["name"]: [f["name"] for f in s["fields"]] for s in c_side["structs"]}
    assert len(listed) == len(c_side["structs"]), "a struct is listed twice in tests/struct_layout.c"
    differ = {n: {"tests/struct_layout.c": listed.get(n), "include/dbtr.h": structs.get(n)}
              for n in sorted(listed.keys() | structs.keys()) if listed.get(n) != structs.get(n)}
    assert not differ, f"structs whose members the two list otherwise (None: not there): {differ}"
    for name, values in enums.items():
        present = [v for v in values if v in c_side["constants"]]
        assert present in ([], values), f"{name}: tests/struct_layout.c lists {present} of {values}"


def test_struct_layout_python_matches_c(c_side):
    """Each mirror of _lib.py has its C struct's size, alignment and members: the same names
    in the same order, each at the same offset with the same size."""
    layout = {s["name"]: s for s in c_side["structs"]}
    found = mirrors()
    assert found, "no ctypes.Structure in dbtr._lib"
    for cls in found:
        c = layout.get(c_name(cls))
        assert c is not None, f"_lib.{cls.__name__}: tests/struct_layout.c lists no struct {c_name(cls)}"
        mine = [(n, getattr(cls, n).offset, getattr(cls, n).size) for n, *_ in cls._fields_]
        theirs = [(f["name"], f["offset"], f["size"]) for f in c["fields"]]
        assert mine == theirs, f"_lib.{cls.__name__} (name, offset, size) differs from {c['name']}"
        assert (ctypes.sizeof(cls), ctypes.alignment(cls)) == (c["size"], c["align"]), \
            f"_lib.{cls.__name__}: (size, alignment) differs from {c['name']}"


def test_struct_layout_constants_match_c(c_side):
    """The enums _lib.py repeats (as tuples in the enum's order, or as numbers),
    DBTR_SCAN_MAX_NOTES and the quality measures' indices (DBTR_QCNR ...) have the header's values."""
    mine = {"DBTR_SCAN_MAX_NOTES": _lib.SCAN_MAX_NOTES}
    mine.update({f"DBTR_QUANTITY_{q.upper()}": i for i, q in enumerate(_lib.QUANTITIES)})
    mine.update({f"DBTR_DTYPE_{d.upper()}": i for i, d in enumerate(_lib.DTYPES)})
    mine.update({f"DBTR_Q{m.upper()}": i for i, m in enumerate(_lib.QUALITY_MEASURES)})
    mine["DBTR_QMEASURES"] = len(_lib.QUALITY_MEASURES)
    mine.update({f"DBTR_{n}": getattr(_lib, n) for n in dir(_lib) if n.startswith(("I0_", "PREC_", "MEMORY_"))})
    assert mine == c_side["constants"]

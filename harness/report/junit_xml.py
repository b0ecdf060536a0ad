"""``junit.xml``: the run as JUnit XML, for CI systems that draw test reports.

One ``<testcase>`` per pass x graph x check (``classname`` = the pass,
``name`` = ``graph::check``; a pass-level check such as ``exercised`` has the
graph ``*``: ``*::exercised``), one ``<testsuite>`` per pass. The mapping
follows the gate, not the raw status, so a CI test view never shows red
for a run that exits 0:

- violation (must fail, error, should fail under --strict): ``<failure>``
  (``<error>`` when passgate itself failed), with the message, the repro
  path and the traceback when ``details`` carries them;
- ``should`` fail without --strict and recorded known violations:
  ``<skipped>`` whose message says so (pytest reports xfail the same way);
- skip / not_applicable: ``<skipped>`` with the reason.

Every ``<testsuite>`` carries the run's headline as ``passgate.*``
properties (``passgate.verdict``, ``passgate.new_violations``,
``passgate.known_violations``, ``passgate.fixed``,
``passgate.stale_baseline_entries``, ``passgate.should_warnings``,
``passgate.headline``, ...): the numbers :mod:`harness.report.headline`
gives every other format, for a CI job that reads only this file.

Written with ElementTree, so escaping is the library's job; characters XML
1.0 cannot carry (control bytes from a traceback) are dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

from harness.core.io import atomic_write_bytes
from harness.report import headline as hl
from harness.report import view as reports

__all__ = ["FILE", "render", "testcase", "write"]

FILE = "junit.xml"
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text) -> str:
    return _XML_BAD.sub("", str(text))


def _first_line(text: str, limit: int = 300) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _body(record: dict) -> str:
    d = record.get("details") or {}
    parts = [record.get("message") or ""]
    if d.get("repro"):
        parts.append(f"repro: {d['repro']}")
    shrunk = reports.shrunk_graph(d)
    if shrunk:
        parts.append("shrunk graph:\n" + shrunk)
    if d.get("traceback"):
        parts.append(str(d["traceback"]))
    return "\n".join(p for p in parts if p)


def testcase(record: dict, strict: bool, known: set, worsened: Optional[dict] = None) -> ET.Element:
    tc = ET.Element("testcase", {
        "classname": _clean(record["pass_name"]),
        "name": _clean(f"{record['graph']}::{record['check']}"),
        "time": f"{float(record.get('duration_s') or 0.0):.6f}",
    })
    out = reports.outcome(record, strict, known)
    msg = _clean(_first_line(record.get("message") or "") or record["status"])
    if out in ("fail", "error") and worsened and reports.key(record) in worsened:
        msg = _clean(f"worsened known violation ({worsened[reports.key(record)]}): {msg}")
    if out in ("fail", "error"):
        tag = "error" if out == "error" else "failure"
        el = ET.SubElement(tc, tag, {"message": msg, "type": record["check"]})
        el.text = _clean(_body(record))
    elif out == "warning":
        ET.SubElement(tc, "skipped", {"message": _clean(f"should-level check failed (gates only with --strict): {msg}")})
    elif out == "known":
        ET.SubElement(tc, "skipped", {"message": _clean(f"known violation (waived): {msg}")})
    elif out in ("skip", "not_applicable"):
        prefix = "not applicable" if out == "not_applicable" else "skipped"
        ET.SubElement(tc, "skipped", {"message": _clean(f"{prefix}: {msg}")})
    return tc


def render(doc: dict) -> bytes:
    v = reports.view(doc)
    head = hl.compute(v).properties()
    env = doc.get("environment") or {}
    root = ET.Element("testsuites", {"name": "passgate"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    by_pass: dict[str, list] = {}
    for r in doc.get("results", ()):
        by_pass.setdefault(r["pass_name"], []).append(r)
    for pass_name, records in by_pass.items():
        suite = ET.SubElement(root, "testsuite", {"name": _clean(pass_name), "timestamp": doc.get("started_at", "")})
        props = ET.SubElement(suite, "properties")
        for k in ("torch", "executorch", "python", "passgate", "git_revision"):
            if env.get(k):
                ET.SubElement(props, "property", {"name": k, "value": _clean(env[k])})
        seed = (doc.get("configuration") or {}).get("seed")
        if seed is not None:
            ET.SubElement(props, "property", {"name": "seed", "value": str(seed)})
        for name, value in head:
            ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
        for r in records:
            tc = testcase(r, v.strict, v.known, v.worsened)
            suite.append(tc)
            counts["tests"] += 1
            counts["time"] += float(r.get("duration_s") or 0.0)
            child = tc[0].tag if len(tc) else None
            if child == "failure":
                counts["failures"] += 1
            elif child == "error":
                counts["errors"] += 1
            elif child == "skipped":
                counts["skipped"] += 1
        for k, val in counts.items():
            suite.set(k, f"{val:.6f}" if k == "time" else str(val))
            totals[k] += val
    for k, val in totals.items():
        root.set(k, f"{val:.6f}" if k == "time" else str(val))
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def write(report_dir: Path, doc: dict) -> Path:
    path = Path(report_dir) / FILE
    atomic_write_bytes(path, render(doc))
    return path

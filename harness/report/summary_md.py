"""``summary.md``: the run in a few lines of Markdown, for a CI job summary or a PR comment.

Written for the reader who has ten seconds: the headline first (the one
:mod:`harness.report.headline` computes for every format), then what
regressed against the baseline, what was fixed, what fails (capped, so a
bad run does not post a 5 MB comment: GitHub truncates job summaries at
1 MiB and comments at 64 KiB), the passes no case made change the program
(``exercised``: their green says nothing), op coverage in brief, and the
environment folded away. Regressions and fixes come from ``doc['gate']`` (set by the
baseline gate or ``passgate report diff``), op counts from
``doc['op_coverage']``; both sections are left out when absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from harness.core.io import atomic_write_bytes
from harness.report import blind_sections
from harness.report import headline as hl
from harness.report import view as reports

__all__ = ["FILE", "ICON", "MAX_MESSAGE", "MAX_ROWS", "OUTCOME_LABEL", "cell_text", "code", "render", "write"]

FILE = "summary.md"
MAX_ROWS = 40
MAX_MESSAGE = 160
ICON = {"fail": "❌", "error": "💥", "warning": "⚠️", "known": "🔕"}
OUTCOME_LABEL = {"fail": "new violation", "error": "harness error", "warning": "warning", "known": "known (baselined)"}


def cell_text(text, limit: int = MAX_MESSAGE) -> str:
    """Safe inside a Markdown table cell: one line, pipes escaped, bounded."""
    s = " ".join(str(text or "").split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(text) -> str:
    s = cell_text(text, 80).replace("`", "'")
    return f"`{s}`" if s else ""


def _table(header: list[str], rows: Iterable[list[str]], total: Optional[int] = None) -> list[str]:
    rows = list(rows)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows[:MAX_ROWS]]
    total = len(rows) if total is None else total
    if total > MAX_ROWS:
        lines.append(f"\n…and {total - MAX_ROWS} more (see report.html / results.json)")
    return lines


def _change_rows(changes: list) -> list[list[str]]:
    return [[code(c.get("pass_name")), code(c.get("graph")), code(c.get("check")), cell_text(c.get("message") or c.get("reason"))]
            for c in changes]


def _head(v: reports.View, h: hl.Headline) -> list[str]:
    """The headline, certification and interruption notices, and the counts."""
    doc = v.doc
    cfg = doc.get("configuration") or {}
    out: list[str] = []
    mark = {"PASS": "✅", "INCOMPLETE": "⏸️"}.get(h.verdict, "❌")
    out.append(f"## {mark} passgate {cfg.get('command', '')}: {h.text()}")
    out.append("")
    out.append(f"{h.counts()} ({h.scope()})")
    out.append("")
    cert = doc.get("certification")
    if cert:
        out.append(f"**Certification** suite {code(cert.get('suite_version'))}, profile **{cert.get('profile')}**, "
                   f"backend {code(cert.get('backend') or 'none (reference passes)')}")
        if cert.get("profile") != "full":
            out.append("")
            out.append(f"> **⚠️ NOT A FULL CERTIFICATION: profile `{cert.get('profile')}` runs a subset of the suite.**")
        out.append("")
    if not doc.get("complete", True):
        out += ["> **⚠️ The run was interrupted: these results cover only what finished.**", ""]
    if cfg.get("shard"):
        out += [f"> Shard {cfg['shard']} only: merge the shards with `passgate report merge` for the whole run.", ""]
    inc = doc.get("incremental")
    if inc and (inc.get("reused") or inc.get("not_affected")):  # reused results carry details.reused (the run)
        out += [f"> Incremental: {inc.get('ran')} units ran, {inc.get('reused')} reused from earlier runs (unchanged "
                f"files, case, checks and versions), {inc.get('not_affected')} not affected by the change.", ""]
    by = h.by_status
    out += _table(["checks", "pass", "fail", "error", "skip", "n/a", "new violations", "known", "fixed", "stale",
                   "warnings", "seed"],
                  [[str(h.total), str(by["pass"]), str(by["fail"]), str(by["error"]), str(by["skip"]),
                    str(by["not_applicable"]), f"**{h.new}**", str(h.known), str(h.fixed), str(h.stale),
                    str(h.warnings), str(cfg.get("seed", ""))]])
    out.append("")
    return out


def _gate(doc: dict, h: hl.Headline) -> list[str]:
    """Regressions, fixes and stale entries against the baseline; nothing when the document has no gate."""
    if not doc.get("gate"):
        return []
    g = reports.gate(doc)
    base = f" against {code(g['baseline'])}" if g.get("baseline") else ""
    out = [f"### Regressions{base}: {len(g['regressions'])}"]
    if g["regressions"]:
        out += _table(["pass", "graph", "check", "message"], _change_rows(g["regressions"]))
    out.append("")
    if g["worsened"]:
        out.append(f"### Worsened: {len(g['worsened'])}")
        out.append("Known violations that got worse than their baseline entry records (more or other offending "
                   "nodes, another exception, a larger error): they fail the gate; `passgate baseline update` "
                   "accepts them.")
        out += _table(["pass", "graph", "check", "worse", "now"],
                      [[code(e["pass_name"]), code(e.get("graph")), code(e.get("check")), cell_text(e.get("worse")),
                        cell_text(e.get("now"))] for e in g["worsened"]])
        out.append("")
    out.append(f"### Fixed: {h.fixed}")
    if h.fixed_entries:
        out += _table(["pass", "graph", "check", "was"], _change_rows(h.fixed_entries))
    out.append("")
    if h.stale:
        out.append(f"### Stale baseline entries: {h.stale}")
        out.append("Their pass x graph ran but the entry matched no violation (check not judged, or only a "
                   "should-level warning); `passgate baseline update` drops them.")
        out += _table(["pass", "graph", "check", "now", "reason"],
                      [[code(e["pass_name"]), code(e.get("graph")), code(e.get("check")), code(e.get("now")),
                        cell_text(e.get("reason") or e.get("message"))] for e in h.stale_entries])
        out.append("")
    return out


def _failures(v: reports.View, h: hl.Headline) -> list[str]:
    """Every failed check (capped), worst first, then the failing pass x graph cells folded away."""
    if not v.problems:
        return []
    out = [f"### Failures: {hl.plural(h.new, 'new violation')}, "
           + (f"{h.worsened} worsened, " if h.worsened or h.gated else "") + f"{h.known} known, "
           f"{hl.plural(h.warnings, 'should-level warning')}"]
    rows = []
    for r in v.problems:
        d = r.get("details") or {}
        label = OUTCOME_LABEL.get(v.outcome(r), v.outcome(r))
        if reports.key(r) in v.worsened and v.outcome(r) in ("fail", "error"):
            label = "worsened (baselined, got worse)"
        rows.append([ICON.get(v.outcome(r), ""), code(r["pass_name"]), code(reports.graph_label(r["graph"])), code(r["check"]),
                     r.get("level", ""), label, cell_text(r.get("message")),
                     code(d.get("repro", ""))])
    out += _table(["", "pass", "graph", "check", "level", "is", "message", "repro"], rows)
    out.append("")
    cells = [c for c in v.cells.values() if c.verdict in ("fail", "error")]
    if cells:
        out.append("<details><summary>Failing pass x graph cells</summary>")
        out.append("")
        out += _table(["pass", "graph", "failing checks"],
                      [[code(c.pass_name), code(c.graph), ", ".join(f"{ch} ({OUTCOME_LABEL.get(o, o)})"
                                                                      for o, ch in v.cell_checks(c))] for c in cells])
        out += ["", "</details>", ""]
    return out


def _exercised(v: reports.View) -> list[str]:
    """How many passes some case made change the program; the ones none did, named (capped)."""
    ex = reports.exercised(v)
    if not ex:
        return []
    missing = reports.not_exercised(v)
    out = [f"### Exercised: {len(ex) - len(missing)} of {len(ex)} passes changed the program on some case"]
    if missing:
        out.append(f"- not exercised (no case changed the program; {ex[missing[0]].get('level', '')} level): "
                   f"{', '.join(code(p) for p in missing[:MAX_ROWS])}{' …' if len(missing) > MAX_ROWS else ''}")
    out.append("")
    return out


def _coverage(doc: dict) -> list[str]:
    cov = reports.op_coverage(doc)
    if not cov:
        return []
    covered = {op: n for op, n in cov.items() if n > 0}
    least = sorted(covered.items(), key=lambda kv: (kv[1], kv[0]))[:8]
    pairs = sum(len(d) for d in reports.op_dtype_coverage(doc).values())
    out = [f"### Op coverage: {len(covered)} ops in the graphs" + (f" ({pairs} op x dtype pairs)" if pairs else "")]
    zero = sorted(op for op, n in cov.items() if n == 0)
    if zero:
        out.append(f"- no case exercises: {', '.join(code(op) for op in zero[:20])}"
                   f"{' …' if len(zero) > 20 else ''}")
    out.append(f"- least covered: {', '.join(f'{code(op)} ({n})' for op, n in least)}")
    out.append("")
    return out


def _environment(doc: dict) -> list[str]:
    env = doc.get("environment") or {}
    return ["<details><summary>Environment</summary>", "",
            ", ".join(f"{k} {code(env.get(k))}" for k in ("python", "torch", "executorch", "torchao", "passgate")
                      if env.get(k)) + f"; {cell_text(env.get('platform'))}; git {code(env.get('git_revision'))}",
            "", "</details>", ""]


def render(doc: dict) -> str:
    v = reports.view(doc)
    h = hl.compute(v)
    out = (_head(v, h) + _gate(doc, h) + _failures(v, h) + _exercised(v) + blind_sections.markdown(doc)
           + _coverage(doc) + _environment(doc))
    return "\n".join(out)


def write(report_dir: Path, doc: dict) -> Path:
    path = Path(report_dir) / FILE
    atomic_write_bytes(path, render(doc).encode())
    return path

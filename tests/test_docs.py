"""The documentation stays in step with the code: a page per check id, the Python API page covering
``harness.__all__``, every page in the site's navigation, and the README's first lines the two commands a
newcomer runs.

Read from the files, so no torch is imported; ``tox -e docs`` builds the site itself (``--strict``).
"""

from __future__ import annotations

import re
from pathlib import Path

import harness
from harness.core.results import CHECKS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _nav_pages() -> set:
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:"):]
    return set(re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M))


def test_every_check_id_has_a_page_in_the_nav_with_its_example():
    nav = _nav_pages()
    missing = [c for c in CHECKS if not (DOCS / "checks" / f"{c}.md").is_file() or f"checks/{c}.md" not in nav]
    assert not missing, f"check ids without a page in the nav (python docs/scripts/check_pages.py): {missing}"
    for c in CHECKS:
        for snippet in re.findall(r'--8<-- "([^"]+)"', (DOCS / "checks" / f"{c}.md").read_text()):
            assert (ROOT / snippet).is_file(), f"{c}.md includes {snippet}, which does not exist"


def test_api_page_documents_every_public_name_from_its_module():
    text = (DOCS / "reference" / "api.md").read_text()
    documented = set(re.findall(r"^::: ([\w.]+)$", text, re.M))
    public = {f"{module}.{name}" for name, module in harness._PUBLIC.items()}
    assert public == documented
    assert set(harness._PUBLIC) | {"__version__"} == set(harness.__all__)


def test_every_guide_and_reference_page_is_in_the_nav():
    # a topic page at docs/ top level joins the nav with its feature; `tox -e docs` (--strict) flags it until then
    pages = {str(p.relative_to(DOCS)) for folder in ("guides", "reference", "checks")
             for p in (DOCS / folder).glob("*.md")}
    assert pages - _nav_pages() == set(), "add these pages to mkdocs.yml's nav"


def test_readme_starts_with_the_newcomer_commands_and_stays_short():
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split("#")[0].strip() for line in block] == [
        "pip install tox && tox -e conformance", "pip install tox && tox -e py"]
    assert len(text) <= 8500
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "dates belong in CHANGELOG.md"
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), f"README links to {link}, which does not exist"

"""docs/supported.md is generated from the code and must match what the code renders."""

from __future__ import annotations

from pathlib import Path

import aotc.numpy as anp
from aotc import supported

DOC = Path(__file__).resolve().parents[1] / "docs" / "supported.md"


def test_supported_md_is_current():
    rendered = supported.render()
    current = DOC.read_text() if DOC.exists() else ""
    assert current == rendered, (
        f"{DOC} is stale (the supported functions changed): regenerate it with "
        f"`{supported.REGENERATE}` from the repository root"
    )


def test_listing_covers_every_supported_numpy_function():
    rendered = supported.render()
    section = rendered.split("## aotc.numpy (", 1)[1].split("\n## ", 1)[0]
    listed = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    assert listed == set(anp.supported_functions())


def test_summary_is_first_sentence_or_reference():
    def documented():
        """numpy.thing: does a thing. More detail here.

        A second paragraph."""

    def undocumented():
        pass

    assert supported.summary(documented, "numpy.thing") == "numpy.thing: does a thing."
    assert supported.summary(undocumented, "numpy.other") == "as `numpy.other`"


def test_absent_namespace_is_left_out():
    assert supported.import_optional("aotc.no_such_namespace") is None
    assert supported.render_namespace("aotc.no_such_namespace", "nothing", "numpy") == []

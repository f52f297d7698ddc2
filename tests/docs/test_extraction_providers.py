"""The extraction guide's provider settings (OpenAI, Ollama, vLLM, any OpenAI-compatible
server) are read from the guide itself and validated against the settings model; and no doc
tells to install a package named ``sgam``, which is not published (from a clone the command is
``pip install -e '.[extra]'``).

No provider is called: the guide says its blocks were not run against those servers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.test_readme import exported, fenced_blocks, settings_from

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "extraction.md"
PROVIDERS = ("OpenAI", "Ollama", "vLLM", "Any OpenAI-compatible server")


def provider_blocks() -> dict[str, str]:
    """Each ``### `` subsection of the guide's Providers section, and its one bash block."""
    section = GUIDE.read_text().split("\n## Providers\n", 1)[1].split("\n## ", 1)[0]
    blocks = {}
    for subsection in section.split("\n### ")[1:]:
        heading, body = subsection.split("\n", 1)
        [block] = [b.text for b in fenced_blocks(body) if b.language == "bash"]
        blocks[heading.strip()] = block
    return blocks


def test_the_guide_configures_each_provider_and_says_it_was_not_run() -> None:
    assert tuple(provider_blocks()) == PROVIDERS
    assert "they were not run against those servers here" in GUIDE.read_text()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_providers_settings_validate_and_build_an_extractor(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    variables = exported(provider_blocks()[provider])
    assert set(variables) >= {"SGAM_EXTRACTOR_URL", "SGAM_EXTRACTOR_MODEL"}
    settings = settings_from(variables, monkeypatch)
    assert re.fullmatch(r"https?://[^/\s]+/v1", settings.extractor_url or "")
    extractor = settings.extractor()
    assert extractor is not None
    assert extractor.model == variables["SGAM_EXTRACTOR_MODEL"]
    key = settings.extractor_api_key
    assert (key.get_secret_value() if key else None) == variables.get("SGAM_EXTRACTOR_API_KEY")
    timeout = variables.get("SGAM_EXTRACTOR_TIMEOUT_S")
    assert settings.extractor_timeout_s == (float(timeout) if timeout else 60.0)


UNPUBLISHED = re.compile(
    r"pip3? install\b[^\n`;&|)]*?(?<![\w./-])['\"]?sgam(?:\[[^\]]*\])?['\"]?(?![\w./-])"
)
"""``pip install`` of the unpublished ``sgam`` (with or without extras), in any doc or help."""


def test_the_pattern_finds_the_unpublished_package_and_spares_the_clone_command() -> None:
    assert UNPUBLISHED.search("pip install 'sgam[peers]'")
    assert UNPUBLISHED.search("pip install sgam")
    assert UNPUBLISHED.search("pip install -U sgam[evals]")
    assert not UNPUBLISHED.search("pip install -c constraints.txt -e '.[peers]'")
    assert not UNPUBLISHED.search("pip install sgam-client-foo")
    assert not UNPUBLISHED.search("pip install -e . && sgam serve")


def test_no_doc_or_message_installs_a_package_named_sgam() -> None:
    sources = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    sources += sorted(p for folder in ("server", "evals") for p in (ROOT / folder).rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sources
        for match in UNPUBLISHED.finditer(path.read_text())
    ]
    assert found == []

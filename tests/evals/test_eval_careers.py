"""The careers family of the leakage evaluation: people and organisations told in paragraphs,
questions about periods naming their subject in fixed shares of name forms, their gold, the
scoring of a period block, and a tiny run through the real server.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evals.histories.career_history import TENANT, GeneratedCareers, generate_careers
from evals.histories.career_names import (
    ACRONYM,
    FOLDED,
    FORMS,
    FULL,
    MIDDLE,
    SHORT,
    acronym,
    slug,
    spelled,
)
from evals.histories.careers import CAREER_SIZES, CAREERS, CareersSpec
from evals.leakage.gold_traces import Trace
from evals.leakage.lines import states_value
from evals.leakage.run import Options, Run, run_traces
from evals.leakage.scoring import score_question
from evals.leakage.summary import summarize
from retrieval.context.snippets import split_sentences
from retrieval.search.embeddings import Embedder

ROOT = Path(__file__).resolve().parents[2]
TINY = CareersSpec(subjects=4, questions=10)


@pytest.fixture(scope="module", params=["quick", "default"])
def careers(request: pytest.FixtureRequest) -> GeneratedCareers:
    return generate_careers(seed=7, size=request.param)


def _by_op(careers: GeneratedCareers, op: str) -> list[dict[str, Any]]:
    return [line for line in careers.lines() if line["op"] == op]


def _windows(careers: GeneratedCareers) -> dict[tuple[str, str], list[tuple[datetime, str]]]:
    """Each key's values by start, read back from the update lines alone."""
    keys: dict[tuple[str, str], list[tuple[datetime, str]]] = {}
    for line in _by_op(careers, "update"):
        candidate = line["candidate"]
        start = datetime.fromisoformat(candidate["valid_from"])
        keys.setdefault((candidate["subject"], candidate["attribute"]), []).append(
            (start, candidate["value"])
        )
    return {key: sorted(values) for key, values in keys.items()}


def _digest_in_a_fresh_process(hash_seed: str) -> str:
    code = (
        "import sys; from evals.histories.career_history import generate_careers;"
        " sys.stdout.write(generate_careers(seed=7, size='quick').text())"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, check=True
    ).stdout
    return hashlib.sha256(out).hexdigest()


def test_the_generator_is_deterministic() -> None:
    quick = generate_careers(seed=7, size="quick")
    assert generate_careers(seed=7, size=CAREER_SIZES["quick"]).encoded == quick.encoded
    assert _digest_in_a_fresh_process("3") == hashlib.sha256(quick.text().encode()).hexdigest()
    assert generate_careers(seed=8, size="quick").text() != quick.text()


def test_names_ids_and_acronyms_look_like_real_ones() -> None:
    assert slug("Adaeze Okafor") == "adaeze_okafor"
    assert slug("Ålesund Harbour Authority") == "alesund_harbour_authority"
    assert slug("Søren Ødegaard") == "soren_odegaard"
    assert acronym("World Health Organization") == "WHO"
    assert acronym("Agency for Polar Studies and Safety") == "APSS"
    assert spelled("Zoë Müller") == "Zoe Muller"
    subjects = {
        line["subject"]: line
        for line in _by_op(generate_careers(seed=7, size="default"), "subject")
    }
    assert all(re.fullmatch(r"[a-z0-9]+(?:_[a-z0-9]+)+", subject) for subject in subjects)
    names = [line["display_name"] for line in subjects.values()]
    assert any(spelled(name) != name for name in names)  # diacritics
    assert any(re.search(r" [A-Z]\. ", name) for name in names)  # a middle initial


def test_each_name_form_takes_a_fixed_share_of_the_questions(careers: GeneratedCareers) -> None:
    questions = careers.questions()
    forms = Counter(line["gold"]["name_form"] for line in questions)
    assert forms == dict.fromkeys(FORMS, len(questions) // len(FORMS))
    assert all(count / len(questions) >= 0.15 for count in forms.values())
    # Every question is asked twice: with its subject, then without.
    assert [("subject" in line) for line in questions] == [True, False] * (len(questions) // 2)
    names = {line["subject"]: line["display_name"] for line in _by_op(careers, "subject")}
    for line in questions:
        gold, question = line["gold"], line["question"]
        form = gold["name_form"]
        if form == ACRONYM:
            assert re.search(r"\bthe [A-Z]{3,}\b", question), question
        if form == FOLDED:
            assert question.isascii() or spelled(question) != question, question
        display = names.get(gold["subject"])
        if display is not None and form in (FULL, MIDDLE):
            assert (display in question) == (form == FULL), question
        if display is not None and form == SHORT and " " in display:
            assert display not in question, question


def test_every_candidate_cites_a_substring_of_its_episode(careers: GeneratedCareers) -> None:
    texts = {line["id"]: line["text"] for line in _by_op(careers, "episode")}
    for line in _by_op(careers, "update"):
        candidate, text = line["candidate"], texts[line["episode"]]
        assert candidate["evidence"] in text
        assert states_value(candidate["evidence"], candidate["value"]), candidate
        assert candidate["subject_name"] in text


def test_paragraphs_name_more_than_one_periods_value(careers: GeneratedCareers) -> None:
    keys = _windows(careers)
    for line in _by_op(careers, "episode"):
        sentences = split_sentences(line["text"])
        assert 3 <= len(sentences) <= 7, line["text"]
        [subject] = line["subjects"]
        stated = {
            (attribute, start)
            for (owner, attribute), values in keys.items()
            if owner == subject
            for start, value in values
            if states_value(line["text"], value)
        }
        assert len(stated) >= 2, line["text"]


def test_some_values_are_written_otherwise_than_stored(careers: GeneratedCareers) -> None:
    texts = [line["text"] for line in _by_op(careers, "episode")]
    written = {
        value for line in careers.questions() for value in line["gold"]["written_differently"]
    }
    assert written
    for value in written:
        assert any(states_value(text, value) and value not in text for text in texts), value
    joined = "\n".join(texts)
    assert " , " in joined  # a space before a comma
    assert re.search(r"\bthe [A-Z][a-z]+ ", joined)  # a value's "The" in lower case


def test_gold_holds_every_value_valid_in_the_range_and_no_other(careers: GeneratedCareers) -> None:
    keys = _windows(careers)
    kinds: Counter[str] = Counter()
    for line in careers.questions():
        gold = line["gold"]
        values = keys[gold["subject"], gold["attribute"]]
        windows = [
            (start, values[i + 1][0] if i + 1 < len(values) else None, value)
            for i, (start, value) in enumerate(values)
        ]
        if gold["kind"] == "period":
            start = gold["valid_from"] and datetime.fromisoformat(gold["valid_from"])
            end = datetime.fromisoformat(gold["valid_to"])
            expected = [
                value
                for since, until, value in windows
                if since < end and (start is None or until is None or until > start)
            ]
            assert all(since not in (start, end) for since, _, _ in windows)
        elif gold["kind"] == "point_in_time":
            at = datetime.fromisoformat(gold["valid_at"])
            expected = [
                v for since, until, v in windows if since <= at and (until is None or at < until)
            ]
        else:
            expected = [windows[-1][2]]
        assert gold["answers"] == expected, line["question"]
        assert sorted(gold["values"]) == sorted(value for _, value in values)
        assert set(gold["values"]) - set(gold["answers"]), line["question"]  # a stale value
        assert "valid_at" not in line  # the time is in the question's words
        assert "known_at" not in line
        kinds[gold["kind"]] += 1
    assert set(kinds) == {"current", "point_in_time", "period"}
    assert kinds["period"] > kinds["point_in_time"] + kinds["current"]


def test_half_the_subjects_are_declared_and_every_candidate_names_its_subject(
    careers: GeneratedCareers,
) -> None:
    declared = {line["subject"] for line in _by_op(careers, "subject")}
    cited = {line["candidate"]["subject"] for line in _by_op(careers, "update")}
    assert declared < cited
    assert len(declared) == len(cited) // 2
    assert {line["tenant"] for line in careers.lines()} == {TENANT}


GOLD = {
    "kind": "period",
    "subject": "ana_berg",
    "attribute": "employer",
    "answer": "University of Oslo, Blindern",
    "answers": ["University of Oslo, Blindern", "Ålesund Harbour Authority"],
    "values": ["Acme Labs", "University of Oslo, Blindern", "Ålesund Harbour Authority"],
    "family": CAREERS,
    "name_form": "short",
    "written_differently": ["University of Oslo, Blindern"],
}
BLOCK = (
    "ana_berg from 2004-01-01 to 2006-01-01:\n"
    "employer: University of Oslo, Blindern (from 2001-01-01 until 2005-03-01; source e1)\n"
    "employer: Ålesund Harbour Authority (from 2005-03-01 until 2009-06-01; source e2)\n"
    "Evidence:\n"
    "[e1] In 2001 she joined the University of Oslo , Blindern.\n"
    "[e3] superseded (from 2009-06-01): In 2009 she moved to Acme Labs."
)


def test_a_period_block_presents_every_value_of_the_period_and_marks_the_others() -> None:
    def scored(context: str, system: str = "sgam") -> Any:
        return score_question(
            system=system,
            tenant="t",
            question="Where did Berg work from 2004 to 2005?",
            gold=GOLD,
            context=context,
            tokens=0,
            latency_ms=0.0,
            with_subject=False,
            plan={"subject": "ana_berg", "mode": "period"},
        )

    sgam = scored(BLOCK)
    assert (sgam.answer_present, sgam.stale_leak, sgam.evidence_leak) == (True, False, False)
    assert (sgam.plan_subject, sgam.plan_mode, sgam.with_subject) == ("ana_berg", "period", False)
    assert (sgam.answer_written_differently, sgam.stale_written_differently) == (True, False)
    # A raw paragraph: one answer written otherwise, the other missing, a stale value unmarked.
    dm = scored(
        "In 2001 she joined the University of Oslo , Blindern. In 2009 she moved to Acme Labs.",
        "dm",
    )
    assert (dm.answer_present, dm.stale_leak, dm.evidence_leak) == (False, True, True)
    assert dm.leaked_values == ("Acme Labs",)
    summary = summarize([sgam, dm])["systems"]
    assert (
        summary["sgam"]["families"][CAREERS]["name_forms"]["short"]["subject"]["not_given"][
            "answer_present"
        ]
        == 1.0
    )
    assert summary["dm"]["subject"]["not_given"]["stale_leakage"] == 1.0


@pytest.fixture(scope="module")
def tiny(server_conninfo: str, embedder: Embedder) -> Run:
    """Every system on a tiny careers trace through the real server."""
    careers = generate_careers(seed=7, size=TINY)
    trace = Trace("careers-tiny", careers.lines())
    return run_traces([trace], server=server_conninfo, embedder=embedder, options=Options())


def test_a_tiny_run_reports_each_family_subject_and_name_form(tiny: Run, tmp_path: Path) -> None:
    asked = 2 * TINY.questions
    systems = tiny.summary["systems"]
    assert list(systems) == ["sgam", "sgam_noisy", "dm", "dm_recency"]
    for row in systems.values():
        family = row["families"][CAREERS]
        assert family["questions"] == asked
        assert {name: split["questions"] for name, split in family["subject"].items()} == {
            "given": TINY.questions,
            "not_given": TINY.questions,
        }
        assert set(family["name_forms"]) == set(FORMS)
        assert sum(form["questions"] for form in family["name_forms"].values()) == asked
        assert 0.0 <= family["answer_present"] <= 1.0
    # SGAM reads the subject the request names, and the time the question's words name.
    sgam = [r for r in tiny.results if r.system == "sgam"]
    assert all(r.plan_subject == r.subject for r in sgam if r.with_subject)
    assert all(r.plan_mode == r.kind for r in sgam if r.with_subject)
    assert systems["sgam"]["answer_present"] > systems["dm"]["answer_present"]
    patterns = tiny.summary["patterns"]
    assert patterns["family"] == CAREERS
    assert set(patterns["subject_not_found"]) == {"sgam", "sgam_noisy"}
    assert patterns["subject_not_found"]["sgam"]["questions"] == TINY.questions
    assert set(patterns["stale_in_evidence"]) == set(systems)
    assert set(patterns["noisy_extraction"]) == {"sgam", "sgam_noisy", "difference"}
    assert "subject 2" in tiny.meta["sgam load"]  # the declared names were accepted
    tiny.write(tmp_path)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    for heading in ("## By subject named or not", "## By name form", "## Failure patterns"):
        assert heading in report
    assert f"| `sgam` | {CAREERS} | not named | {TINY.questions} |" in report
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document["patterns"]["family"] == CAREERS

"""The key that signs the timeline pages' CSRF tokens: the setting's, else one kept on disk."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

from pydantic import SecretStr

from server.settings import Settings
from server.ui import sign_in
from server.ui.sign_in import KEY_FILE, server_key, sign_in_token


def test_the_setting_is_the_key_when_set(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, ui_secret=SecretStr("s" * 32))

    assert server_key(settings) == hashlib.sha256(b"s" * 32).digest()
    assert not (tmp_path / KEY_FILE).exists()


def test_without_the_setting_every_process_reads_the_key_the_first_one_kept(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path / "data")

    first = server_key(settings)
    sign_in._kept_key.cache_clear()  # as another process starting on the same folder
    again = server_key(settings)

    kept = tmp_path / "data" / KEY_FILE
    assert (len(first), again, kept.read_bytes()) == (32, first, first)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert sorted(path.name for path in kept.parent.iterdir()) == [KEY_FILE]


def test_a_sign_in_token_differs_by_nonce_and_by_key() -> None:
    tokens = {
        sign_in_token("nonce-1", b"k" * 32),
        sign_in_token("nonce-2", b"k" * 32),
        sign_in_token("nonce-1", b"j" * 32),
    }

    assert len(tokens) == 3

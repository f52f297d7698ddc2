"""``sgam mcp`` without a server to call: its help, no key, an SGAM that cannot be reached."""

from __future__ import annotations

import anyio
from mcp.types import CallToolResult
from typer.testing import CliRunner

from server.cli import app
from server.client import AsyncSGAMClient
from server.mcp.server import call_tool
from tests.cli.test_process_ownership import _free_port


def test_mcp_without_a_key_says_which_setting_is_missing() -> None:
    result = CliRunner().invoke(app, ["mcp"], env={"SGAM_KEY": None, "SGAM_URL": None})
    assert result.exit_code == 2
    assert result.output == "error: set SGAM_KEY to the SGAM API key the tools call with\n"


def test_mcp_help_documents_the_transports_and_the_settings() -> None:
    result = CliRunner().invoke(app, ["mcp", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for words in ("--http", "--host", "--port", "SGAM_URL", "SGAM_KEY", "Bearer"):
        assert words in result.output, words


def test_an_sgam_not_reached_is_an_unavailable_tool_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}"

    async def ask() -> CallToolResult:
        async with AsyncSGAMClient(url, "sgam_some_key") as client:
            return await call_tool(
                client, "history", arguments={"subject": "mira", "attribute": "x"}
            )

    result = anyio.run(ask)
    assert result.is_error is True

    assert result.structured_content == {
        "code": "unavailable",
        "detail": f"SGAM at {url} cannot be reached: ConnectError",
        "status": 503,
    }

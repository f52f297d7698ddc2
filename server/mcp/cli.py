"""``sgam mcp``: serve SGAM's tools to MCP clients, over stdio or streamable HTTP."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_MCP_PORT = 8001


class McpSettings(BaseSettings):
    """Which SGAM the MCP server calls, and with which key (environment, prefix ``SGAM_``)."""

    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore")

    url: str = Field(
        default="http://127.0.0.1:8000", description="Base URL of a running SGAM (SGAM_URL)."
    )
    key: SecretStr = Field(
        min_length=1,
        description="The API key the tools call SGAM with (SGAM_KEY); its tenant is theirs.",
    )


def mcp(
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio; callers must"
            " send Authorization: Bearer $SGAM_KEY.",
        ),
    ] = False,
    host: Annotated[
        str, typer.Option(help="Interface for --http (another than loopback exposes the tools).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for --http.")] = DEFAULT_MCP_PORT,
    log_level: Annotated[str, typer.Option(help="uvicorn log level for --http.")] = "warning",
) -> None:
    """Serve SGAM's memory as MCP tools (context, get_fact, history, record_episode,
    search_evidence, memory_update_schema, declare_attribute).

    It calls a running SGAM at SGAM_URL with the API key SGAM_KEY: the tools see that key's
    tenant only. Standard input and output carry the protocol unless --http is given.
    """
    import anyio  # noqa: PLC0415 - keep --help fast

    from server.client import AsyncSGAMClient  # noqa: PLC0415
    from server.mcp.transport import serve_http, serve_stdio  # noqa: PLC0415

    try:
        settings = McpSettings()
    except ValidationError:
        typer.echo("error: set SGAM_KEY to the SGAM API key the tools call with", err=True)
        raise typer.Exit(2) from None
    key = settings.key.get_secret_value()

    async def run() -> None:
        async with AsyncSGAMClient(settings.url, key) as client:
            if http:
                await serve_http(client, key=key, host=host, port=port, log_level=log_level)
            else:
                await serve_stdio(client)

    anyio.run(run)

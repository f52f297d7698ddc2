"""What the server holds open while it runs: the pool, the store, the model, the key cache.

Nothing here runs at import. ``lifespan`` resolves the database (the embedded one when no
``DATABASE_URL`` is set), loads the model and opens the pool on worker threads, so the event
loop never blocks on them, starts the key cache's listener, and stops the listener and closes
the pool on shutdown. It never migrates: ``sgam serve`` does, once, before its workers start
(``server.runtime.bootstrap``); until the schema is current ``/readyz`` answers 503.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import anyio.to_thread
from litestar import Litestar, Request
from litestar.di import NamedDependency
from litestar.params import SkipValidation
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from extraction.extractor import Extract
from extraction.jobs import WorkPolicy
from retrieval.reader import Reader
from retrieval.routing.index import AttributeIndex
from retrieval.search.embeddings import Embedder
from server.auth.keycache import KeyCache
from server.auth.keylistener import KeyChangeListener
from server.extraction.worker import Worker, policy_from
from server.http.metrics import EncoderMetrics, pool_metrics
from server.runtime.purger import Purger
from server.settings import Settings
from store.db.clock import Clock, wall_clock
from store.db.database import APP_ROLE, check_app_role, make_pool
from store.db.migrate import pending_migrations
from store.db.roles import PoolLogin, login_as, pool_login
from store.db.watch import DatabaseWatch
from store.service import MemoryStore, make_async_pool


@dataclass(frozen=True, slots=True)
class Resources:
    """What every request shares: the open pool, the wall-clock store, the model, the key cache."""

    settings: Settings
    pool: ConnectionPool
    embedder: Embedder
    store: MemoryStore
    attributes: AttributeIndex
    keys: KeyCache
    extractor: Extract | None = None
    policy: WorkPolicy = field(default_factory=WorkPolicy)
    watch: DatabaseWatch | None = None

    def store_with_clock(self, clock: Clock) -> MemoryStore:
        """The same store reading system time from ``clock`` (the ``X-SGAM-Now`` header)."""
        return MemoryStore(
            self.pool,
            clock=clock,
            new_id=self.store.new_id,
            embedder=self.store.embedder,
            async_pool=self.store.async_pool,
        )

    def reader(self, store: MemoryStore) -> Reader:
        """A reader over ``store`` sharing the model and the attribute-routing cache."""
        return Reader(
            store,
            self.embedder,
            attributes=self.attributes,
            text_search_config=self.settings.text_search_config,
        )

    def pending_migrations(self) -> int:
        """How many migrations the database still lacks (readiness, ``readiness_pending``)."""
        return readiness_pending(self.pool)

    def database_down(self) -> str | None:
        """Why the database is known to be down (the watch's last error), or None."""
        if self.watch is None or self.watch.up:
            return None
        return self.watch.detail or "down"


def readiness_pending(pool: ConnectionPool) -> int:
    """How many migrations the pool's database still lacks.

    Connections opened before the application role existed (migrations off, an upgrade from
    before 0012) work as the URL's own role: once the schema is current they are all replaced,
    so every request runs behind row-level security.
    """
    with pool.connection() as conn:
        pending = len(pending_migrations(conn))
        row = conn.execute("SELECT current_user = %s", (APP_ROLE,)).fetchone()
    if pending == 0 and not (row and row[0]):
        pool.drain()  # new connections take the role as they open
    return pending


def api_login(settings: Settings, conninfo: str) -> PoolLogin:
    """How the API's pool logs in to ``conninfo``'s database (``store.db.roles.pool_login``).

    Without DATABASE_URL the embedded database's ``sgam_app`` logs in itself. With one URL
    only, its role must be able to work as ``sgam_app`` (``check_app_role``).
    """
    app_conninfo = settings.app_database_url
    if app_conninfo is None and settings.database_url is None:
        app_conninfo = login_as(conninfo, APP_ROLE)
    login = pool_login(
        conninfo, app_conninfo, allow_superuser=settings.allow_superuser_database_url
    )
    if login.role is not None:
        check_app_role(conninfo, login.role)
    return login


def _open_pool(pool: ConnectionPool) -> None:
    try:
        pool.open(wait=True, timeout=30)
    except BaseException:
        pool.close()  # else it keeps reconnecting in the background
        raise


async def _open_async_pool(
    login: PoolLogin, watch: DatabaseWatch, pool: ConnectionPool, *, max_size: int
) -> AsyncConnectionPool:
    """The event loop's pool for exact reads of one statement, open (``make_async_pool``);
    on failure both pools are closed."""
    # As many as the handler threads may hold: the exact reads waiting for a connection
    # of four, 6 clients of sgam bench's mixed load among them, lost what the loop gained.
    async_pool = make_async_pool(login.conninfo, max_size=max_size, role=login.role, watch=watch)
    try:
        await async_pool.open(wait=True, timeout=30)
    except BaseException:
        await async_pool.close()  # else both keep reconnecting in the background
        await anyio.to_thread.run_sync(pool.close)
        raise
    return async_pool


def lifespan(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock = wall_clock,
) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """The app's lifespan: open everything before the first request, close it after the last.

    With an extractor configured (and ``extractor_in_server``), an extraction worker runs on
    its own thread while the app does; so does the periodic retention purge, unless
    ``purge_interval_s`` is 0.
    """

    @asynccontextmanager
    async def run(app: Litestar) -> AsyncIterator[None]:
        conninfo = await anyio.to_thread.run_sync(settings.conninfo)
        login = await anyio.to_thread.run_sync(api_login, settings, conninfo)
        model = embedder or settings.embedder(serving=True)
        model.encoder.observer = EncoderMetrics()
        await anyio.to_thread.run_sync(model.load)
        watch = DatabaseWatch(login.conninfo)
        pool = make_pool(
            login.conninfo, max_size=settings.pool_max_size, role=login.role, watch=watch
        )
        await anyio.to_thread.run_sync(_open_pool, pool)
        async_pool = await _open_async_pool(login, watch, pool, max_size=settings.pool_max_size)
        loop = asyncio.get_running_loop()

        def recovered() -> None:  # connections lost with the server are replaced
            pool.check()
            asyncio.run_coroutine_threadsafe(async_pool.check(), loop)

        watch.start(on_recovery=recovered)
        # Sync handlers run on the loop's default executor (min(32, CPUs + 4) threads unless
        # set): give it a thread per pooled connection, so requests are not queued for a thread
        # while connections sit idle.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(settings.pool_max_size, thread_name_prefix="sgam-handler")
        )
        keys = KeyCache()
        listener = KeyChangeListener(conninfo, keys)
        listener.start()
        extractor = settings.extractor()
        policy = policy_from(settings)
        store = MemoryStore(pool, clock=clock, embedder=model, async_pool=async_pool)
        worker = None
        if extractor is not None and settings.extractor_in_server:
            worker = Worker(store, extractor, policy)
            worker.start()
        purger = None
        if settings.purge_interval_s > 0:
            purger = Purger(
                store,
                interval_s=settings.purge_interval_s,
                receipt_retention=timedelta(days=settings.receipt_retention_days),
            )
            purger.start()
        try:
            with pool_metrics(pool):
                app.state.resources = Resources(
                    settings=settings,
                    pool=pool,
                    embedder=model,
                    store=store,
                    attributes=AttributeIndex(model),
                    keys=keys,
                    extractor=extractor,
                    policy=policy,
                    watch=watch,
                )
                yield
        finally:
            await anyio.to_thread.run_sync(watch.stop)
            if worker is not None:
                await anyio.to_thread.run_sync(worker.stop)
            if purger is not None:
                await anyio.to_thread.run_sync(purger.stop)
            await anyio.to_thread.run_sync(listener.stop)
            await async_pool.close()
            await anyio.to_thread.run_sync(pool.close)
            if embedder is None:  # a model the caller passed in is the caller's to close
                await anyio.to_thread.run_sync(model.close)

    return run


def resources_of(app: Litestar | Any) -> Resources:
    """The running app's resources (set by ``lifespan``)."""
    resources: Resources = app.state.resources
    return resources


def provide_resources(request: Request[Any, Any, Any]) -> Resources:
    """The ``resources`` dependency: the running app's."""
    return resources_of(request.app)


def provide_reader(
    request: Request[Any, Any, Any], store: NamedDependency[SkipValidation[MemoryStore]]
) -> Reader:
    """The ``reader`` dependency: a reader over the request's store (``server.auth.guard``'s
    chain)."""
    return resources_of(request.app).reader(store)

"""A FastAPI service as Python teams write one: a plain `def` endpoint, which Starlette runs
on anyio's worker threads, so the service is a pool of anyio's thread limiter — 40 tokens
by default, or POOL from the environment. Run by tests/pools/ under uvicorn:

    POOL=6 python -m uvicorn fastapi_pool:app --app-dir tests/data/pools --port 8000
"""

import os
import time
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI


@asynccontextmanager
async def lifespan(_app: FastAPI):
    pool = os.environ.get("POOL")
    if pool:
        anyio.to_thread.current_default_thread_limiter().total_tokens = int(pool)
    yield


app = FastAPI(lifespan=lifespan)


@app.get("/health")
async def health() -> dict:
    return {"ok": True}


@app.get("/sync-def")
def sync_def(ms: int = 20) -> dict:
    """Blocks its thread for `ms` milliseconds, as a synchronous database driver would."""
    time.sleep(ms / 1000)
    return {"slept_ms": ms}

"""Observations from the Langfuse public API (``GET /api/public/v2/observations``).

Keys come from the environment (``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY``),
are sent as HTTP Basic auth and are never written anywhere (toolproof's secret
redactor masks them in any message). Pages follow ``meta.cursor``; each page is
appended to a JSON Lines file in the blob-export shape, which the reader takes
like any export, so memory holds one page at a time.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from toolproof._shared.loaded_keys import remember_secret
from toolproof.errors import UserError

__all__ = ["fetch_observations"]

_FIELDS = "core,basic,io,metadata,model,usage"
_RENAME = {
    "traceId": "trace_id",
    "startTime": "start_time",
    "endTime": "end_time",
    "parentObservationId": "parent_observation_id",
    "statusMessage": "status_message",
    "sessionId": "session_id",
    "userId": "user_id",
    "providedModelName": "provided_model_name",
    "toolDefinitions": "tool_definitions",
    "toolCalls": "tool_calls",
}
MAX_PAGES = 100_000


def _get(url: str, auth: str, timeout: float) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    # never sent on to where a redirect points: the key is for this server alone
    request.add_unredirected_header("Authorization", auth)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read(64 << 20))
    except urllib.error.HTTPError as exc:
        raise UserError(f"Langfuse API: HTTP {exc.code} from {url.split('?')[0]}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UserError(f"Langfuse API: cannot reach {url.split('?')[0]} ({reason})") from None
    except ValueError:
        raise UserError(f"Langfuse API: {url.split('?')[0]} did not answer JSON") from None
    except RecursionError:
        raise UserError(
            f"Langfuse API: {url.split('?')[0]} answered JSON nested too deeply"
        ) from None


def fetch_observations(
    base: str,
    out: Path,
    *,
    from_time: str | None = None,
    to_time: str | None = None,
    limit: int = 1000,
    timeout: float = 30.0,
) -> int:
    """Every observation the API lists, written to ``out`` (JSON Lines); how many."""
    parsed = urllib.parse.urlsplit(base)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UserError(f"--langfuse {base!r}: give the Langfuse server's http(s) URL")
    public, secret = os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY")
    if not public or not secret:
        raise UserError(
            "--langfuse needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY in the environment"
        )
    remember_secret(public)
    remember_secret(secret)
    auth = "Basic " + base64.b64encode(f"{public}:{secret}".encode()).decode()
    remember_secret(auth)
    endpoint = base.rstrip("/") + "/api/public/v2/observations"
    cursor: str | None = None
    cursors: set[str] = set()  # a server that hands out a cursor again would page forever
    count = 0
    with out.open("w", encoding="utf-8") as f:
        for _ in range(MAX_PAGES):
            query: dict[str, Any] = {"limit": limit, "fields": _FIELDS}
            if cursor:
                query["cursor"] = cursor
            if from_time:
                query["fromStartTime"] = from_time
            if to_time:
                query["toStartTime"] = to_time
            page = _get(endpoint + "?" + urllib.parse.urlencode(query), auth, timeout)
            data = page.get("data") if isinstance(page, dict) else None
            if not isinstance(data, list):
                raise UserError(f"Langfuse API: {endpoint} answered without a 'data' list")
            for obs in data:
                if isinstance(obs, dict):
                    row = {_RENAME.get(k, k): v for k, v in obs.items()}
                    if "provided_model_name" not in row and row.get("model"):
                        row["provided_model_name"] = row["model"]
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    count += 1
            meta = page.get("meta") if isinstance(page.get("meta"), dict) else {}
            cursor = meta.get("cursor") if isinstance(meta.get("cursor"), str) else None
            if not cursor or not data:
                break
            if cursor in cursors:
                raise UserError(
                    f"Langfuse API: {endpoint} gave a page cursor it gave before: stopped "
                    f"after {count} observation(s) (the pages would repeat)"
                )
            cursors.add(cursor)
    return count

"""Idempotent requests on Powertools' idempotency utility, and its SQLite persistence layer.

`PowertoolsIdempotency` implements the `Idempotency` port with ``idempotent_function``: the first
call with a key saves an *in progress* record, runs, and saves its JSON result; a later call with
the same key replays that result, or is refused when its payload hash differs. The persistence
layer decides where records live: Powertools' DynamoDB layer in AWS
(`adapters.dynamodb_idempotency`), `SqliteIdempotencyLayer` on one machine. Both follow the same
rules, so a test of one is a test of the port.

An *in progress* record outlives a request that died (a Lambda timeout, a killed process) only for
``in_progress_s``: Powertools would take that budget from the Lambda context, which the port does
not see, so a fixed budget at least as long as the API function's timeout stands in for it. After
it, a retry with the same key runs again instead of being refused until the record expires.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    BasePersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyInconsistentStateError,
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from agent_memory.adapters.sqlite.sqlite_util import ConnectionPerThread
from agent_memory.errors import DependencyError, IdempotencyInProgressError, IdempotencyKeyReusedError
from agent_memory.ports import IdempotentResult

#: Prefix of every stored key (``prefix#sha256``): stable across function names and runtimes.
KEY_PREFIX = "agent-memory.write"
INPROGRESS = "INPROGRESS"


class _FixedBudget:
    """Stands in for the Lambda context Powertools reads the remaining time from."""

    def __init__(self, seconds: float) -> None:
        self._ms = int(seconds * 1000)

    def get_remaining_time_in_millis(self) -> int:
        return self._ms


class PowertoolsIdempotency:
    """`Idempotency` on any Powertools persistence layer."""

    def __init__(
        self,
        persistence: BasePersistenceLayer,
        *,
        expires_after_s: int = 86_400,
        in_progress_s: float = 30.0,
        key_prefix: str = KEY_PREFIX,
    ) -> None:
        self._persistence = persistence
        self._prefix = key_prefix
        self._config = IdempotencyConfig(
            event_key_jmespath="key",
            payload_validation_jmespath="fingerprint",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=expires_after_s,
            hash_function="sha256",
        )
        self._config.register_lambda_context(_FixedBudget(in_progress_s))  # type: ignore[arg-type]

    def run(self, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]) -> IdempotentResult:
        ran = False

        def once(data: dict[str, str]) -> dict[str, Any]:
            nonlocal ran
            ran = True
            return compute()

        wrapped = idempotent_function(
            data_keyword_argument="data",
            persistence_store=self._persistence,
            config=self._config,
            key_prefix=self._prefix,
        )(once)
        try:
            result = wrapped(data={"key": key, "fingerprint": fingerprint})
        except IdempotencyValidationError as exc:
            raise IdempotencyKeyReusedError(
                "this Idempotency-Key was already used with a different request"
            ) from exc
        except IdempotencyAlreadyInProgressError as exc:
            raise IdempotencyInProgressError(
                "a request with this Idempotency-Key is still in progress; retry shortly"
            ) from exc
        except (IdempotencyPersistenceLayerError, IdempotencyInconsistentStateError) as exc:
            raise DependencyError("the idempotency store is unavailable; retry later") from exc
        return IdempotentResult(result=result, replayed=not ran)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency (
    id                     TEXT PRIMARY KEY,
    status                 TEXT NOT NULL,
    expiration             INTEGER NOT NULL,
    in_progress_expiration INTEGER,
    data                   TEXT NOT NULL DEFAULT '',
    validation             TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_expiration ON idempotency (expiration);
"""


class SqliteIdempotencyLayer(BasePersistenceLayer):
    """Powertools' persistence layer on SQLite, with the DynamoDB layer's conditions.

    A record may be (over)written when its key is new, when it expired, or when it is *in
    progress* past its in-progress expiry (its request died); otherwise the put fails with the
    stored record, after the payload check, exactly as the DynamoDB layer's conditional put does.
    The check and the write run in one ``BEGIN IMMEDIATE`` transaction, so two requests with the
    same key cannot both start. Expired records are deleted as new ones are put.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._db = ConnectionPerThread(path, _SCHEMA)

    def _get_record(self, idempotency_key: str) -> DataRecord:
        with self._db.transaction(write=False) as conn:
            row = conn.execute("SELECT * FROM idempotency WHERE id = ?", (idempotency_key,)).fetchone()
        if row is None:
            raise IdempotencyItemNotFoundError
        return _record(row)

    def _put_record(self, data_record: DataRecord) -> None:
        now = dt.datetime.now().timestamp()
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM idempotency WHERE expiration < ?", (int(now),))
            row = conn.execute(
                "SELECT * FROM idempotency WHERE id = ?", (data_record.idempotency_key,)
            ).fetchone()
            if row is not None:
                stale = (
                    row["status"] == INPROGRESS
                    and row["in_progress_expiration"] is not None
                    and row["in_progress_expiration"] < int(now * 1000)
                )
                if not stale:
                    old = _record(row)
                    self._validate_payload(data_payload=data_record, stored_data_record=old)
                    raise IdempotencyItemAlreadyExistsError(old_data_record=old)
            conn.execute(
                "INSERT OR REPLACE INTO idempotency (id, status, expiration, in_progress_expiration, "
                "data, validation) VALUES (?, ?, ?, ?, '', ?)",
                (
                    data_record.idempotency_key,
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.in_progress_expiry_timestamp,
                    data_record.payload_hash if self.payload_validation_enabled else "",
                ),
            )

    def _update_record(self, data_record: DataRecord) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE idempotency SET status = ?, expiration = ?, data = ? WHERE id = ?",
                (
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.response_data,
                    data_record.idempotency_key,
                ),
            )

    def _delete_record(self, data_record: DataRecord) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM idempotency WHERE id = ?", (data_record.idempotency_key,))

    def close(self) -> None:
        self._db.close()


def _record(row: Any) -> DataRecord:
    return DataRecord(
        idempotency_key=row["id"],
        status=row["status"],
        expiry_timestamp=row["expiration"],
        in_progress_expiry_timestamp=row["in_progress_expiration"],
        response_data=row["data"],
        payload_hash=row["validation"],
    )

"""One contract for secret stores, run on every adapter: 0600 files (local) and Secrets Manager (moto).

A tenant's provider key is kept exactly as given, read and described by its tenant id only, and
deleted at once; an empty or oversized key is refused without being echoed. Adapter-specific
behaviour (file modes, symlinks and atomic writes; secret names, KMS, AWS errors and botocore's
logs) stays in each adapter's own tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.secret_record import MAX_SECRET_CHARS
from agent_memory.ports.tenancy import SecretStore
from agent_memory.tenancy.rules.tenant_settings import SecretInfo

KEY = "sk-test-Zq8wContractSecretValue-9f3K"
OTHER_KEY = "sk-test-Other-Tenant-Value-77Xy"
PREFIX = "agent-memory"


def _secretsmanager() -> Iterator[SecretStore]:
    from agent_memory.adapters.secretsmanager_secrets import SecretsManagerSecretStore

    with mock_aws():
        client: Any = boto3.client("secretsmanager", region_name="us-east-1")
        yield SecretsManagerSecretStore(PREFIX, client=client)


@pytest.fixture(params=["local", "secretsmanager"])
def secrets(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SecretStore]:
    if request.param == "local":
        from agent_memory.adapters.local_secrets import LocalFileSecretStore

        yield LocalFileSecretStore(tmp_path / "secrets")
        return
    yield from _secretsmanager()


def test_a_key_is_stored_read_described_and_deleted(secrets: SecretStore) -> None:
    # GIVEN
    before = datetime.now(UTC)

    # WHEN
    info = secrets.put_secret("acme", KEY)

    # THEN
    assert info.last4 == KEY[-4:]
    assert before <= info.set_at <= datetime.now(UTC)
    assert secrets.get_secret("acme") == KEY
    assert secrets.secret_info("acme") == info
    assert secrets.delete_secret("acme") is True
    assert secrets.get_secret("acme") is None
    assert secrets.secret_info("acme") is None


def test_a_tenant_without_a_key_has_none_and_deleting_it_reports_nothing_was_there(
    secrets: SecretStore,
) -> None:
    # WHEN / THEN
    assert (secrets.get_secret("acme"), secrets.secret_info("acme"), secrets.delete_secret("acme")) == (
        None,
        None,
        False,
    )


def test_a_new_key_replaces_the_old_one(secrets: SecretStore) -> None:
    # GIVEN
    secrets.put_secret("acme", KEY)

    # WHEN
    info = secrets.put_secret("acme", OTHER_KEY)

    # THEN
    assert secrets.get_secret("acme") == OTHER_KEY
    assert secrets.secret_info("acme") == info
    assert info.last4 == OTHER_KEY[-4:]


def test_a_key_can_be_set_again_after_it_was_deleted(secrets: SecretStore) -> None:
    # GIVEN
    secrets.put_secret("acme", KEY)
    secrets.delete_secret("acme")

    # WHEN
    secrets.put_secret("acme", OTHER_KEY)

    # THEN
    assert secrets.get_secret("acme") == OTHER_KEY


@pytest.mark.parametrize(
    ("owner", "other"),
    [
        ("acme", "Acme"),
        ("acme", "acme/x"),
        ("acme", "../acme"),
        ("a/b", "a..b"),
        ("acme", "acme "),
        ("acme", "acme/.."),
    ],
)
def test_one_tenants_key_is_never_another_tenants(secrets: SecretStore, owner: str, other: str) -> None:
    # GIVEN
    secrets.put_secret(owner, KEY)

    # WHEN
    before = secrets.get_secret(other)
    secrets.put_secret(other, OTHER_KEY)

    # THEN
    assert before is None
    assert (secrets.get_secret(owner), secrets.get_secret(other)) == (KEY, OTHER_KEY)
    assert secrets.delete_secret(other) is True
    assert secrets.get_secret(owner) == KEY


@pytest.mark.parametrize("value", ["", "x" * (MAX_SECRET_CHARS + 1)])
def test_an_empty_or_oversized_key_is_refused_without_showing_it_and_nothing_is_stored(
    secrets: SecretStore, value: str
) -> None:
    # WHEN
    with pytest.raises(ValueError, match="provider key") as raised:
        secrets.put_secret("acme", value)

    # THEN
    assert "x" * 16 not in str(raised.value)
    assert (secrets.get_secret("acme"), secrets.secret_info("acme")) == (None, None)


def test_a_key_is_kept_exactly_as_given(secrets: SecretStore) -> None:
    # GIVEN
    value = "  " + "k" * (MAX_SECRET_CHARS - 4) + "\t\n"

    # WHEN
    info = secrets.put_secret("acme", value)

    # THEN
    assert secrets.get_secret("acme") == value
    assert info.last4 == "kk\t\n"


def test_what_is_shown_of_a_key_is_its_last_four_characters(secrets: SecretStore) -> None:
    # WHEN
    secrets.put_secret("acme", "abc")

    # THEN
    info = secrets.secret_info("acme")
    assert isinstance(info, SecretInfo)
    assert info.last4 == "abc"

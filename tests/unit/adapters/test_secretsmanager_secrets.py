"""Provider keys in Secrets Manager: moto for behaviour, Stubber and a failing fake for errors.

Every error path checks the key is nowhere in what is raised or logged, with AWS answers that echo
it back, so a message passed through would be caught. The behaviour both secret stores share is in
tests/contract/test_secret_store_contract.py.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ParamValidationError
from botocore.stub import Stubber
from moto import mock_aws

from agent_memory.adapters.secret_record import MAX_SECRET_CHARS
from agent_memory.adapters.secretsmanager_secrets import BODY_LOGGERS, SecretsManagerSecretStore
from agent_memory.errors import ConfigurationError, DependencyError

PREFIX = "agent-memory"
KEY = "sk-test-Zq8wSecretsManagerValue-9f3K"
NAME = f"{PREFIX}/tenants/acme/provider-key"


@pytest.fixture
def sm() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("secretsmanager", region_name="us-east-1")


@pytest.fixture
def store(sm: Any) -> SecretsManagerSecretStore:
    return SecretsManagerSecretStore(PREFIX, client=sm)


@pytest.fixture
def stub() -> Iterator[tuple[SecretsManagerSecretStore, Stubber]]:
    client = boto3.client("secretsmanager", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield SecretsManagerSecretStore(PREFIX, client=client), stubber
        stubber.assert_no_pending_responses()


def _echoing_error(stubber: Stubber, operation: str, code: str = "InternalServiceError") -> None:
    """An AWS error whose message repeats the key, as a careless service or proxy might."""
    stubber.add_client_error(operation, service_error_code=code, service_message=f"bad value {KEY}")


def _shows_key(exc: BaseException) -> bool:
    """Whether the key is anywhere in the error as it would be printed, chain and context included."""
    return KEY in "".join(traceback.format_exception(exc))


def test_the_secret_is_named_for_the_tenant_and_holds_json(store: SecretsManagerSecretStore, sm: Any) -> None:
    # WHEN
    info = store.put_secret("acme", KEY)

    # THEN
    stored = json.loads(sm.get_secret_value(SecretId=NAME)["SecretString"])
    assert stored == {"value": KEY, "last4": KEY[-4:], "set_at": info.set_at.isoformat()}


def test_no_part_of_the_key_is_in_what_listing_or_describing_shows(
    store: SecretsManagerSecretStore, sm: Any
) -> None:
    # WHEN
    store.put_secret("acme", KEY)

    # THEN
    shown = str(sm.describe_secret(SecretId=NAME)) + str(sm.list_secrets())
    assert NAME in shown
    assert KEY[-4:] not in shown


def test_the_secret_is_encrypted_with_the_given_kms_key(sm: Any) -> None:
    # GIVEN
    key_id = boto3.client("kms", region_name="us-east-1").create_key()["KeyMetadata"]["KeyId"]
    store = SecretsManagerSecretStore(PREFIX, client=sm, kms_key_id=key_id)

    # WHEN
    store.put_secret("acme", KEY)

    # THEN
    assert sm.describe_secret(SecretId=NAME)["KmsKeyId"] == key_id
    assert store.get_secret("acme") == KEY


def test_a_secret_scheduled_for_deletion_by_hand_is_absent(store: SecretsManagerSecretStore, sm: Any) -> None:
    # GIVEN
    store.put_secret("acme", KEY)
    sm.delete_secret(SecretId=NAME, RecoveryWindowInDays=7)

    # WHEN / THEN
    assert (store.get_secret("acme"), store.secret_info("acme")) == (None, None)


def test_deleting_a_secret_scheduled_for_deletion_by_hand_purges_it(
    store: SecretsManagerSecretStore, sm: Any
) -> None:
    # GIVEN
    store.put_secret("acme", KEY)
    sm.delete_secret(SecretId=NAME, RecoveryWindowInDays=7)

    # WHEN
    existed = store.delete_secret("acme")

    # THEN it counted as absent, and nothing is left to restore
    assert existed is False
    with pytest.raises(sm.exceptions.ResourceNotFoundException):
        sm.restore_secret(SecretId=NAME)


def test_a_failed_delete_is_a_dependency_error_that_never_shows_the_key(
    stub: tuple[SecretsManagerSecretStore, Stubber],
) -> None:
    # GIVEN a secret that exists and a delete that fails
    store, stubber = stub
    stubber.add_response("describe_secret", {"Name": NAME}, {"SecretId": NAME})
    _echoing_error(stubber, "delete_secret", code="InternalServiceError")

    # WHEN
    with pytest.raises(DependencyError, match="delete the provider key") as raised:
        store.delete_secret("acme")

    # THEN
    assert "InternalServiceError" in str(raised.value)
    assert not _shows_key(raised.value)


def test_setting_a_key_on_a_secret_scheduled_for_deletion_restores_it_first(
    stub: tuple[SecretsManagerSecretStore, Stubber],
) -> None:
    # GIVEN Secrets Manager's answers for a name that is scheduled for deletion
    store, stubber = stub
    stubber.add_client_error("create_secret", service_error_code="InvalidRequestException")
    stubber.add_response("restore_secret", {"Name": NAME}, {"SecretId": NAME})
    stubber.add_response("put_secret_value", {"Name": NAME})

    # WHEN
    info = store.put_secret("acme", KEY)

    # THEN every queued call was made, in order (the fixture checks none is left)
    assert info.last4 == KEY[-4:]


def test_a_restored_secret_whose_new_key_cannot_be_stored_is_deleted_again(
    stub: tuple[SecretsManagerSecretStore, Stubber],
) -> None:
    # GIVEN a restore that succeeds and a new value that is refused
    store, stubber = stub
    stubber.add_client_error("create_secret", service_error_code="InvalidRequestException")
    stubber.add_response("restore_secret", {"Name": NAME})
    _echoing_error(stubber, "put_secret_value")
    stubber.add_response(
        "delete_secret", {"Name": NAME}, {"SecretId": NAME, "ForceDeleteWithoutRecovery": True}
    )

    # WHEN
    with pytest.raises(DependencyError) as raised:
        store.put_secret("acme", KEY)

    # THEN the old key is not left live, and the error does not show the new one
    assert "InternalServiceError" in str(raised.value)
    assert not _shows_key(raised.value)


@pytest.mark.parametrize(
    ("operation", "call"),
    [
        ("get_secret_value", lambda s: s.get_secret("acme")),
        ("get_secret_value", lambda s: s.secret_info("acme")),
        ("create_secret", lambda s: s.put_secret("acme", KEY)),
        ("describe_secret", lambda s: s.delete_secret("acme")),
    ],
)
def test_an_aws_failure_is_a_dependency_error_that_never_shows_the_key(
    stub: tuple[SecretsManagerSecretStore, Stubber],
    caplog: pytest.LogCaptureFixture,
    operation: str,
    call: Any,
) -> None:
    # GIVEN an AWS error that echoes the key
    store, stubber = stub
    caplog.set_level(logging.DEBUG)
    _echoing_error(stubber, operation, code="ThrottlingException")

    # WHEN
    with pytest.raises(DependencyError) as raised:
        call(store)

    # THEN the error names the AWS code, and the key is neither in it, its chain, nor the logs
    assert "ThrottlingException" in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__context__ is None
    assert not _shows_key(raised.value)
    assert KEY not in caplog.text


def test_an_existing_secret_whose_new_value_fails_is_a_dependency_error(
    stub: tuple[SecretsManagerSecretStore, Stubber],
) -> None:
    # GIVEN
    store, stubber = stub
    stubber.add_client_error("create_secret", service_error_code="ResourceExistsException")
    _echoing_error(stubber, "put_secret_value", code="LimitExceededException")

    # WHEN
    with pytest.raises(DependencyError, match="store the provider key") as raised:
        store.put_secret("acme", KEY)

    # THEN
    assert "LimitExceededException" in str(raised.value)
    assert not _shows_key(raised.value)


class _RefusingClient:
    """A client whose every call fails before any request, with botocore's own error (whose
    message repeats the parameters it refused)."""

    def __getattr__(self, operation: str) -> Any:
        def refuse(**params: Any) -> None:
            raise ParamValidationError(report=f"Invalid parameters for {operation}: {params}")

        return refuse


def test_a_client_side_botocore_error_is_a_dependency_error_that_never_shows_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN
    caplog.set_level(logging.DEBUG)
    store = SecretsManagerSecretStore(PREFIX, client=_RefusingClient())

    # WHEN
    with pytest.raises(DependencyError) as raised:
        store.put_secret("acme", KEY)

    # THEN
    assert "ParamValidationError" in str(raised.value)
    assert not _shows_key(raised.value)
    assert KEY not in caplog.text


def test_botocore_debug_logs_never_hold_the_key_and_stay_on_for_other_calls(
    store: SecretsManagerSecretStore, sm: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN botocore logging everything, request and response bodies included
    caplog.set_level(logging.DEBUG)

    # WHEN
    store.put_secret("acme", KEY)
    store.put_secret("acme", KEY)
    store.get_secret("acme")
    store.secret_info("acme")
    sm.list_secrets()

    # THEN the adapter's calls were silenced and another client's call was not
    assert KEY not in caplog.text
    assert any(r.name in BODY_LOGGERS and "ListSecrets" in r.getMessage() for r in caplog.records)


def test_a_secret_not_in_the_expected_format_is_an_error_that_does_not_show_it(
    store: SecretsManagerSecretStore, sm: Any
) -> None:
    # GIVEN a secret set by hand to the bare key
    sm.create_secret(Name=NAME, SecretString=KEY)

    # WHEN
    with pytest.raises(ConfigurationError) as raised:
        store.get_secret("acme")

    # THEN
    assert NAME in str(raised.value)
    assert not _shows_key(raised.value)


@pytest.mark.parametrize("value", ["", "x" * (MAX_SECRET_CHARS + 1)])
def test_an_empty_or_oversized_key_is_refused_before_any_aws_call(
    stub: tuple[SecretsManagerSecretStore, Stubber], value: str
) -> None:
    # GIVEN nothing queued: any AWS call would fail the test
    store, _ = stub

    # WHEN / THEN
    with pytest.raises(ValueError, match="provider key"):
        store.put_secret("acme", value)


def test_the_client_is_made_on_first_use_in_the_given_region(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN
    made: list[tuple[str, str | None]] = []
    real_client = boto3.client

    def client(service: str, region_name: str | None = None) -> Any:
        made.append((service, region_name))
        return real_client(service, region_name=region_name)

    monkeypatch.setattr(boto3, "client", client)

    # WHEN
    with mock_aws():
        store = SecretsManagerSecretStore(PREFIX, region="eu-west-1")
        made_before_use = list(made)
        store.put_secret("acme", KEY)
        found = store.get_secret("acme")

    # THEN
    assert made_before_use == []
    assert made == [("secretsmanager", "eu-west-1")]
    assert found == KEY

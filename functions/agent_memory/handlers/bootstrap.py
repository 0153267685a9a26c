"""The index bootstrap: a CloudFormation custom resource behind the CDK Provider framework.

The framework calls this ``onEvent`` handler with the CloudFormation request and answers
CloudFormation itself: returning ``{"PhysicalResourceId", "Data"}`` is success, raising is
failure (the exception's message becomes the stack event's reason).

- **Create / Update**: `opensearch_bootstrap.bootstrap` — create the versioned records, events and
  knowledge indexes with their aliases unless they exist, then check them. Idempotent, so every
  deployment that changes a property runs it again safely. An existing index built for another
  embedding model or dimension fails the deployment with the reason, which rolls the stack back
  before any function runs against vectors it cannot compare.
- **Delete**: nothing. The indexes hold every tenant's memory; a stack deletion, a rename of this
  resource, or a changed alias (CloudFormation deletes the old physical resource after the
  update) must never drop them. The data goes with the domain, whose own removal policy decides,
  or is deleted by hand.
- **Role mapping** (managed domain only, when ``BackendRoles`` is given): with fine-grained access
  control every principal but the master user (this function's role) is refused until mapped, so
  Create and Update also put the OpenSearch role ``{alias}-data`` (the store's actions on
  ``{alias}`` and ``{alias}-*``) and map exactly the listed IAM role ARNs to it
  (`opensearch_roles.map_backend_roles`).

Properties (all optional; CloudFormation passes them as strings): ``Alias``, ``Dimension``,
``ModelId``, ``BackendRoles`` (IAM role ARNs: a JSON list, not a joined string). Missing ones
fall back to the settings (``AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS``, the configured embedder's
dimension and model id). The endpoint always comes from ``AGENT_MEMORY_OPENSEARCH_ENDPOINT``.
Extra properties are ignored, so the stack may add one (a schema version) just to make
CloudFormation run an update, and the ``Engine`` of an older template (``faiss``), which a
rollback may still send, changes nothing: new indexes are made on lucene.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from agent_memory import container
from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap
from agent_memory.adapters.opensearch.opensearch_roles import data_role_name, map_backend_roles
from agent_memory.errors import ConfigurationError
from agent_memory.observability import logger, tracer
from agent_memory.settings import get_settings

#: An IAM role ARN, as FGAC matches backend roles: exact strings, so anything else maps nobody.
_ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[A-Za-z0-9_+=,.@/-]{1,512}$"


class BootstrapProperties(BaseModel):
    """The custom resource's ``ResourceProperties``, with CloudFormation's strings coerced."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    alias: str | None = Field(default=None, alias="Alias", min_length=1)
    dimension: int | None = Field(default=None, alias="Dimension", ge=8, le=4096)
    model_id: str | None = Field(default=None, alias="ModelId", min_length=1)
    backend_roles: list[Annotated[str, StringConstraints(pattern=_ROLE_ARN)]] | None = Field(
        default=None, alias="BackendRoles"
    )


def _properties(event: dict[str, Any]) -> BootstrapProperties:
    try:
        return BootstrapProperties.model_validate(event.get("ResourceProperties") or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_input=False)
        )
        raise ConfigurationError(f"invalid index bootstrap properties: {problems}") from exc


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = event.get("RequestType")
    logger.append_keys(request_type=request, logical_resource_id=event.get("LogicalResourceId"))
    if request == "Delete":
        logger.info("index bootstrap deleted: the indexes and their data are kept")
        return {"PhysicalResourceId": event.get("PhysicalResourceId") or event.get("LogicalResourceId")}
    if request not in ("Create", "Update"):
        raise ConfigurationError(f"unknown CloudFormation request type {request!r}")

    props = _properties(event)
    settings = get_settings()
    alias = props.alias or settings.opensearch_index_alias
    if props.dimension is None or props.model_id is None:
        embedder = container.embedder()  # no model call: only its configured id and size
        dimension, model_id = props.dimension or embedder.dimension, props.model_id or embedder.model_id
    else:
        dimension, model_id = props.dimension, props.model_id

    client = container.current().opensearch_client
    result = bootstrap(client, alias, dimension, model_id)
    if props.backend_roles is not None:
        role = data_role_name(alias)
        map_backend_roles(client, role, props.backend_roles, [alias, f"{alias}-*"])
        logger.info(
            "backend roles mapped", extra={"security_role": role, "backend_roles": len(props.backend_roles)}
        )
    logger.info(
        "index bootstrapped",
        extra={
            "index": result.index,
            "index_created": result.created,
            "events_index_created": result.events_created,
            "knowledge_index_created": result.knowledge_created,
        },
    )
    return {
        "PhysicalResourceId": alias,
        "Data": {
            "Alias": result.alias,
            "Index": result.index,
            "EventsAlias": result.events_alias,
            "EventsIndex": result.events_index,
            "KnowledgeAlias": result.knowledge_alias,
            "KnowledgeIndex": result.knowledge_index,
            "Created": str(result.created).lower(),
            "Engine": result.engine,
        },
    }

"""Each tenant's own settings (`adapters/dynamodb_tenant_settings.py`) and provider keys
(`adapters/secretsmanager_secrets.py`).

Every function that serves a tenant reads its settings through a short cache (its models, its
retention, its ranking, whether its writes merge), so every function but the authorizer may
read the table. The API function writes it (``PUT /v1/admin/settings``, which also starts a
re-embedding), and so does the summarize worker, which runs the re-embedding job and records its
progress in the tenant's embedding-state item. Provider keys are Secrets Manager secrets under
``<prefix>/tenants/``: the API function sets, reads the last four characters of, and deletes
them; the functions that call a tenant's own model read them; no function may list them.

The functions run outside any VPC (OpenSearch is reached at its HTTPS endpoint under IAM), so a
tenant's OpenAI-compatible endpoint is reached over the internet with no NAT gateway to pay for.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory_stack.environment import settings_env
from agent_memory_stack.nag import acknowledge, as_finding
from agent_memory_stack.tables import on_demand_table

#: Every function reading settings: one item, on a cache miss.
READ_ACTIONS = ("dynamodb:GetItem",)
#: The API function and the summarize worker: a change is a conditional PutItem.
WRITE_ACTIONS = ("dynamodb:GetItem", "dynamodb:PutItem")
#: The API function on the tenants' provider keys (no ListSecrets anywhere). No RestoreSecret:
#: the service deletes keys without a recovery window, so none is ever scheduled for deletion.
SECRET_ACTIONS = (
    "secretsmanager:CreateSecret",
    "secretsmanager:PutSecretValue",
    "secretsmanager:GetSecretValue",
    "secretsmanager:DescribeSecret",
    "secretsmanager:DeleteSecret",
)
#: The functions that read a tenant's settings: writes (TTLs by kind), searches (ranking),
#: the writer (merging), retention (its own retention and per-agent bound) and the summarize
#: worker (its own summary model).
READERS = ("Api", "Search", "Writer", "Retention", "SummarizeWorker")
#: Besides the API function, the summarize worker writes the table: the re-embedding job's state.
STATE_WRITERS = ("SummarizeWorker",)
#: The functions that call a tenant's own model with its key: read the key, nothing else. The
#: summarize worker (summaries, patterns, profiles, re-embedding), the search function (a
#: query is embedded by the tenant's model) and the writer (so is every memory).
KEY_READERS = ("SummarizeWorker", "Search", "Writer")


class TenantSettingsTable(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, prefix: str, retain: bool) -> None:
        super().__init__(scope, construct_id)
        # Settings are tenants' configuration: kept with the data unless told otherwise.
        self.table = on_demand_table(self, "Table", "tenant_id", retain=retain)
        self.prefix = prefix
        stack = Stack.of(self)
        self.secrets_arn = stack.format_arn(
            service="secretsmanager",
            resource="secret",
            resource_name=f"{prefix}/tenants/*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    def environment(self) -> dict[str, str]:
        return settings_env(tenant_settings="dynamodb", tenant_settings_table=self.table.table_name)

    def secrets_environment(self) -> dict[str, str]:
        return settings_env(secrets="secretsmanager", secrets_prefix=self.prefix)

    def attach(self, functions: Mapping[str, lambda_.Function], writer: str = "Api") -> None:
        """The environment and the read grant on each of `READERS`; the write grant and the
        secrets on ``writer``."""
        for name in READERS:
            function = functions[name]
            for variable, value in self.environment().items():
                function.add_environment(variable, value)
            actions = WRITE_ACTIONS if name == writer or name in STATE_WRITERS else READ_ACTIONS
            function.add_to_role_policy(
                iam.PolicyStatement(actions=list(actions), resources=[self.table.table_arn])
            )
        for name in KEY_READERS:
            for variable, value in self.secrets_environment().items():
                functions[name].add_environment(variable, value)
            functions[name].add_to_role_policy(
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.secrets_arn])
            )
            self._acknowledge(functions[name])
        for variable, value in self.secrets_environment().items():
            functions[writer].add_environment(variable, value)
        functions[writer].add_to_role_policy(
            iam.PolicyStatement(actions=list(SECRET_ACTIONS), resources=[self.secrets_arn])
        )
        self._acknowledge(functions[writer])

    def _acknowledge(self, function: lambda_.Function) -> None:
        role = function.role
        assert role is not None
        acknowledge(
            role,
            f"IAM5[Resource::{as_finding(self, self.secrets_arn)}]",
            "each tenant's provider key is its own secret under the stage's prefix, made when the "
            "tenant sets it; the wildcard is the tenant id and the random suffix AWS adds",
        )

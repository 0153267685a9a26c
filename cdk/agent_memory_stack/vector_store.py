"""The vector store: a managed OpenSearch domain.

The functions sign their requests with their own roles (SigV4) and the domain lets in exactly
those roles: its resource policy names each role with the HTTP methods it needs (fine-grained
access control on top, with the index bootstrap's role as master user). The index bootstrap
custom resource (Provider framework) creates the indexes and aliases on every deploy.

OpenSearch Serverless is not offered: its vector collections do not accept caller-chosen
document ids, and the store names every document itself.

Each function's OpenSearch client waits `opensearch_timeout_s` per attempt and tries
`MAX_RETRIES` more times: the stack sets the wait so that every attempt together still ends
before the function's own timeout (`attempt_timeout_s`), and the function can answer with an
error instead of being killed mid-request.
"""

from __future__ import annotations

from typing import Any

import jsii
from aws_cdk import CustomResource, IStableListProducer, Lazy, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import custom_resources as cr
from constructs import Construct

from agent_memory.adapters.opensearch.opensearch_client import MAX_RETRIES
from agent_memory.adapters.opensearch.opensearch_index import EVENTS_SCHEMA_VERSION
from agent_memory.adapters.opensearch.opensearch_index import SCHEMA_VERSION as INDEX_SCHEMA_VERSION
from agent_memory_stack.bedrock import embedding_environment
from agent_memory_stack.config import StackConfig
from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import FUNCTIONS, FunctionFactory, retention_days
from agent_memory_stack.nag import acknowledge, as_finding, logical_id
from agent_memory_stack.removal import retained
from agent_memory_stack.store_construct import DataAccess, StoreConstruct

#: Domain HTTP methods. Every data operation of the store is a GET, HEAD or POST (`_bulk`,
#: `_msearch`, `_mget`, `_update`, `_delete_by_query`, and ``POST _mapping`` adding a tenant's
#: embedding space); only the bootstrap creates indexes (PUT).
#: The store reads (GET mappings) and searches and writes (POST): it never asks HEAD or PUT.
READ_WRITE_METHODS = ("es:ESHttpGet", "es:ESHttpPost")
#: The one DELETE a reader makes: closing the point in time a knowledge read opened (a read of
#: a document's passages and their versions in one snapshot, docs/opensearch.md), on this path only.
CLOSE_SNAPSHOT = ("es:ESHttpDelete",)
CLOSE_SNAPSHOT_PATH = "_search/point_in_time"
#: The index bootstrap also checks (HEAD) and creates (PUT) indices and aliases.
ADMIN_METHODS = ("es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut")

#: Seconds of a function's timeout kept back from its OpenSearch calls (the work around them).
CALL_MARGIN_S = 2.0


def attempt_timeout_s(function_timeout_s: float) -> float:
    """The OpenSearch client's wait per attempt in a function of this timeout: the first try and
    `MAX_RETRIES` more, each waiting this long, end `CALL_MARGIN_S` before the function must."""
    return round((function_timeout_s - CALL_MARGIN_S) / (MAX_RETRIES + 1), 1)


@jsii.implements(IStableListProducer)
class _ProduceList:
    """A list computed at synth time (the roles granted access, once all are known)."""

    def __init__(self, produce: Any) -> None:
        self._produce = produce

    def produce(self) -> list[str]:
        return list(self._produce())


class VectorStore(StoreConstruct):
    """The OpenSearch store, its access policies and the index bootstrap."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: StackConfig, factory: FunctionFactory
    ) -> None:
        super().__init__(scope, construct_id, config=config, factory=factory)
        #: The managed domain, for the alarms (the file store has none).
        self.domain: opensearch.Domain | None = None
        self.name = config.prefix
        self._readers_writers: list[iam.IRole] = []

        # The bootstrap's role is the domain's master user, so it exists before the domain.
        self.bootstrap_function = factory.build(
            self, "IndexBootstrap", "Creates the OpenSearch indexes and aliases on deploy (custom resource)"
        )
        bootstrap_role = _role(self.bootstrap_function)

        self.endpoint = self._domain(bootstrap_role)
        for name, value in self.environment("IndexBootstrap").items():
            self.bootstrap_function.add_environment(name, value)
        self.grant_data_access(self.bootstrap_function, admin=True)
        self._bootstrap_resource()

    # --- what other constructs use -------------------------------------------------------------

    def environment(self, function: str) -> dict[str, str]:
        """Settings of the function ``function`` (of `FUNCTIONS`) that reads or writes memory (the
        store checks the embedder); its client's wait per attempt fits the function's timeout."""
        return {
            **settings_env(
                store="opensearch",
                opensearch_endpoint=self.endpoint,
                opensearch_service="es",
                opensearch_index_alias=self.config.index_alias,
                opensearch_timeout_s=str(attempt_timeout_s(FUNCTIONS[function].timeout.to_seconds())),
            ),
            **embedding_environment(self.config),
        }

    def _grant(self, function: lambda_.IFunction, access: DataAccess) -> None:
        """Let one function's role use the store: IAM on its side, the store's policy on the other.
        ``read_only`` changes nothing here: a search is a POST, as a write is. ``reads_knowledge``:
        the function reads shared knowledge (searches passages, lists a document's), and so may
        close the point in time each such read opens: ``DELETE`` on that one path."""
        role = _role(function)
        if not access.admin:
            self._readers_writers.append(role)
        self._allow(role, list(ADMIN_METHODS if access.admin else READ_WRITE_METHODS), f"{self.domain_arn}/*")
        acknowledge(
            role,
            f"IAM5[Resource::{as_finding(self, f'{self.domain_arn}/*')}]",
            "every request path of this one domain: the store calls root paths (_bulk, _msearch, _mget) "
            "as well as index paths; which indexes a role may touch is enforced inside the domain by "
            "fine-grained access control",
        )
        if access.reads_knowledge:
            self._allow(role, list(CLOSE_SNAPSHOT), f"{self.domain_arn}/{CLOSE_SNAPSHOT_PATH}")

    def _allow(self, role: iam.IRole, actions: list[str], resource: str) -> None:
        """Allow ``role`` ``actions`` on ``resource`` on both sides a request to the domain is
        judged: the role's own policy and the domain's access policy. Either alone is refused, so
        every grant adds both, together."""
        role.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=[resource]))
        principals: list[iam.IPrincipal] = [iam.ArnPrincipal(role.role_arn)]
        self.access_policy.add_statements(
            iam.PolicyStatement(principals=principals, actions=actions, resources=[resource])
        )

    # --- managed domain ------------------------------------------------------------------------

    def _domain(self, master_role: iam.IRole) -> str:
        cfg = self.config.opensearch
        stack = Stack.of(self)
        # A known name lets the access policy name the domain without a self-reference, so it can
        # live on the domain resource itself (the L2 `access_policies` adds a Lambda-backed
        # custom resource instead).
        self.domain_arn = f"arn:{stack.partition}:es:{stack.region}:{stack.account}:domain/{self.name}"
        log_groups = {
            kind: logs.LogGroup(
                self,
                f"{kind}Logs",
                retention=retention_days(self.config.log_retention_days),
                removal_policy=RemovalPolicy.DESTROY,
            )
            for kind in ("SlowSearch", "SlowIndex", "Application")
        }
        # The one policy OpenSearch needs to write them: a native resource, no custom resource.
        logs_policy = logs.ResourcePolicy(
            self,
            "LogsResourcePolicy",
            resource_policy_name=f"{self.name}-opensearch-logs",
            policy_statements=[
                iam.PolicyStatement(
                    principals=[iam.ServicePrincipal("es.amazonaws.com")],
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[group.log_group_arn for group in log_groups.values()],
                    conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
                )
            ],
        )
        self.domain = opensearch.Domain(
            self,
            "Domain",
            domain_name=self.name,
            version=opensearch.EngineVersion.open_search(cfg.engine_version),
            capacity=opensearch.CapacityConfig(
                data_nodes=cfg.data_nodes,
                data_node_instance_type=cfg.data_node_type,
                master_nodes=cfg.master_nodes or None,
                master_node_instance_type=cfg.master_node_type if cfg.master_nodes else None,
                multi_az_with_standby_enabled=False,
            ),
            zone_awareness=opensearch.ZoneAwarenessConfig(
                enabled=cfg.zone_awareness, availability_zone_count=cfg.availability_zones
            ),
            ebs=opensearch.EbsOptions(volume_size=cfg.volume_gib, volume_type=ec2.EbsDeviceVolumeType.GP3),
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True,
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            fine_grained_access_control=opensearch.AdvancedSecurityOptions(
                master_user_arn=master_role.role_arn
            ),
            logging=opensearch.LoggingOptions(
                slow_search_log_enabled=True,
                slow_search_log_group=log_groups["SlowSearch"],
                slow_index_log_enabled=True,
                slow_index_log_group=log_groups["SlowIndex"],
                app_log_enabled=True,
                app_log_group=log_groups["Application"],
            ),
            suppress_logs_resource_policy=True,
            enable_version_upgrade=True,
            removal_policy=retained(self.config.retain_data),
        )
        # The domain checks at creation that it may write its logs: created before the policy is,
        # a first deploy rolls back ("The Resource Access Policy specified for the CloudWatch Logs
        # log group ... does not grant sufficient permissions"). CDK's own policy path orders
        # them; with `suppress_logs_resource_policy` that is ours to do.
        self.domain.node.add_dependency(logs_policy)
        self.access_policy = iam.PolicyDocument()
        cfn_domain = self.domain.node.default_child
        assert isinstance(cfn_domain, opensearch.CfnDomain)
        cfn_domain.access_policies = self.access_policy
        acknowledge(
            self.domain,
            "OS1",
            "no VPC on purpose: every request is SigV4-signed by a function role named in the domain "
            "policy and checked again by fine-grained access control; a VPC would put every function "
            "behind NAT or interface endpoints (about $7 a month each per AZ) for no added control",
        )
        acknowledge(
            self.domain,
            "OS3",
            "access is granted to IAM roles (named in the access policy), not IP ranges: the callers are "
            "Lambda functions whose addresses are not fixed",
        )
        if not cfg.master_nodes:
            acknowledge(
                self.domain,
                "OS4",
                "dedicated master nodes are off in the default (cost: three more instances for a two-node "
                "cluster); set opensearch.master_nodes to 3 in cdk.json for production",
            )
        if not cfg.zone_awareness:
            acknowledge(
                self.domain,
                "OS7",
                "a single data node was configured (opensearch.data_nodes = 1), so there is no second zone",
            )
        return f"https://{self.domain.domain_endpoint}"

    # --- index bootstrap -----------------------------------------------------------------------

    def _bootstrap_resource(self) -> None:
        provider_role = iam.Role(
            self,
            "BootstrapProviderRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="CDK Provider framework: invokes the index bootstrap function",
        )
        provider_logs = logs.LogGroup(
            self,
            "BootstrapProviderLogs",
            retention=retention_days(self.config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        provider_role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"], resources=[provider_logs.log_group_arn]
            )
        )
        provider = cr.Provider(
            self,
            "BootstrapProvider",
            on_event_handler=self.bootstrap_function,
            framework_on_event_role=provider_role,
            log_group=provider_logs,
        )
        acknowledge(
            provider_role,
            f"IAM5[Resource::<{logical_id(self.bootstrap_function)}.Arn>:*]",
            "CDK's Provider framework grants invoke on the bootstrap function and its versions "
            "(ARN:*); the function is named exactly, only the version is a wildcard",
        )
        acknowledge(
            provider,
            "L1",
            "the Provider framework's own function: CDK picks its Node.js runtime",
        )
        properties: dict[str, Any] = {
            "Alias": self.config.index_alias,
            "Dimension": str(self.config.embedding_dimension),
            "ModelId": self.config.embedding_model_id,
            # CloudFormation re-runs the bootstrap only when a property changes: a new index
            # schema must, so that a deploy upgrades the index before the new functions use it.
            "SchemaVersion": str(INDEX_SCHEMA_VERSION),
            "EventsSchemaVersion": str(EVENTS_SCHEMA_VERSION),
        }
        # Fine-grained access control maps IAM roles to OpenSearch roles inside the cluster; the
        # bootstrap (the master user) maps these, the functions' roles.
        properties["BackendRoles"] = Lazy.list(
            _ProduceList(lambda: [role.role_arn for role in self._readers_writers])
        )
        self.bootstrap = CustomResource(
            self,
            "IndexBootstrap",
            service_token=provider.service_token,
            resource_type="Custom::IndexBootstrap",
            properties=properties,
        )
        self.bootstrap.node.add_dependency(self.domain)


def _role(function: lambda_.IFunction) -> iam.IRole:
    role = function.role
    if role is None:
        raise ValueError(f"{function.node.path} has no role")
    return role

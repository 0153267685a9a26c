"""The vector store: a managed OpenSearch domain (default) or a Serverless VECTORSEARCH collection.

Either way the functions sign their requests with their own roles (SigV4) and the store lets in
exactly those roles: the domain's resource policy names each role with the HTTP methods it needs
(fine-grained access control on top, with the index bootstrap's role as master user); the
collection's data access policy names the roles with document or index permissions. The index
bootstrap custom resource (Provider framework) creates the indexes and aliases on every deploy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsii
from aws_cdk import (
    CustomResource,
    IStableListProducer,
    IStableStringProducer,
    Lazy,
    RemovalPolicy,
    Stack,
)
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchserverless as aoss
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import custom_resources as cr
from constructs import Construct

from agent_memory.adapters.opensearch.opensearch_index import SCHEMA_VERSION as INDEX_SCHEMA_VERSION
from agent_memory_stack.bedrock import embedding_environment
from agent_memory_stack.config import StackConfig
from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import FunctionFactory, retention_days
from agent_memory_stack.nag import acknowledge, as_finding, logical_id

#: Domain HTTP methods. Every data operation of the store is a GET, HEAD or POST (`_bulk`,
#: `_msearch`, `_mget`, `_update`, `_delete_by_query`, and ``POST _mapping`` adding a tenant's
#: embedding space); only the bootstrap creates indexes (PUT).
#: The store reads (GET mappings) and searches and writes (POST): it never asks HEAD or PUT.
READ_WRITE_METHODS = ("es:ESHttpGet", "es:ESHttpPost")
#: The index bootstrap also checks (HEAD) and creates (PUT) indices and aliases.
ADMIN_METHODS = ("es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut")

#: Collection permissions: documents for the functions, index management for the bootstrap.
AOSS_READ_WRITE = ("aoss:ReadDocument", "aoss:WriteDocument", "aoss:DescribeIndex")
AOSS_ADMIN = (*AOSS_READ_WRITE, "aoss:CreateIndex", "aoss:UpdateIndex")


@jsii.implements(IStableStringProducer)
class _Produce:
    """A value computed at synth time, after every function has been granted access."""

    def __init__(self, produce: Any) -> None:
        self._produce = produce

    def produce(self) -> str:
        return str(self._produce())


@jsii.implements(IStableListProducer)
class _ProduceList:
    """A list computed at synth time (the roles granted access, once all are known)."""

    def __init__(self, produce: Any) -> None:
        self._produce = produce

    def produce(self) -> list[str]:
        return list(self._produce())


class VectorStore(Construct):
    """The OpenSearch store, its access policies and the index bootstrap."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: StackConfig, factory: FunctionFactory
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.factory = factory
        self.serverless = config.vector_store == "serverless"
        #: The managed domain (None on OpenSearch Serverless), for the alarms.
        self.domain: opensearch.Domain | None = None
        self.service = "aoss" if self.serverless else "es"
        self.name = config.prefix
        self._readers_writers: list[iam.IRole] = []
        self._admins: list[iam.IRole] = []

        # The bootstrap's role is the domain's master user, so it exists before the domain.
        self.bootstrap_function = factory.build(
            self, "IndexBootstrap", "Creates the OpenSearch indexes and aliases on deploy (custom resource)"
        )
        bootstrap_role = _role(self.bootstrap_function)

        if self.serverless:
            self.endpoint = self._collection()
        else:
            self.endpoint = self._domain(bootstrap_role)
        for name, value in self.environment().items():
            self.bootstrap_function.add_environment(name, value)
        self.grant_data_access(self.bootstrap_function, admin=True)
        self._bootstrap_resource()

    # --- what other constructs use -------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        """Settings of a function that reads or writes memory (the store checks the embedder)."""
        return {
            **settings_env(
                store="opensearch",
                opensearch_endpoint=self.endpoint,
                opensearch_service=self.service,
                opensearch_index_alias=self.config.index_alias,
            ),
            **embedding_environment(self.config),
        }

    def build_function(
        self, scope: Construct, name: str, description: str, environment: Mapping[str, str]
    ) -> lambda_.Function:
        """A function that reads or writes memory (`FunctionFactory.build`): the store's settings,
        then ``environment``. Its construct grants it the store (`grant_data_access`) with the rest."""
        return self.factory.build(scope, name, description, {**self.environment(), **environment})

    def grant_data_access(
        self, function: lambda_.IFunction, *, admin: bool = False, read_only: bool = False
    ) -> None:
        """Let one function's role use the store: IAM on its side, the store's policy on the other.
        ``read_only`` changes nothing here: a search is a POST, as a write is."""
        role = _role(function)
        (self._admins if admin else self._readers_writers).append(role)
        if self.serverless:
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["aoss:APIAccessAll"], resources=[self.collection_arn])
            )
            return
        methods = list(ADMIN_METHODS if admin else READ_WRITE_METHODS)
        role.add_to_principal_policy(iam.PolicyStatement(actions=methods, resources=[f"{self.domain_arn}/*"]))
        acknowledge(
            role,
            f"IAM5[Resource::{as_finding(self, f'{self.domain_arn}/*')}]",
            "every request path of this one domain: the store calls root paths (_bulk, _msearch, _mget) "
            "as well as index paths; which indexes a role may touch is enforced inside the domain by "
            "fine-grained access control",
        )
        self.access_policy.add_statements(
            iam.PolicyStatement(
                principals=[iam.ArnPrincipal(role.role_arn)],
                actions=methods,
                resources=[f"{self.domain_arn}/*"],
            )
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
            removal_policy=RemovalPolicy.RETAIN if self.config.retain_data else RemovalPolicy.DESTROY,
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

    # --- serverless collection -----------------------------------------------------------------

    def _collection(self) -> str:
        stack = Stack.of(self)
        rules = [{"ResourceType": "collection", "Resource": [f"collection/{self.name}"]}]
        encryption = self._security_policy("encryption", "enc", {"Rules": rules, "AWSOwnedKey": True})
        # Public endpoint, IAM-authenticated (SigV4) and authorised by the data access policy.
        network = self._security_policy("network", "net", [{"Rules": rules, "AllowFromPublic": True}])
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=self.name,
            type="VECTORSEARCH",
            description="agent-memory vectors",
            standby_replicas="ENABLED" if self.config.serverless.standby_replicas else "DISABLED",
        )
        self.collection.add_dependency(encryption)
        self.collection.add_dependency(network)
        self.collection.apply_removal_policy(
            RemovalPolicy.RETAIN if self.config.retain_data else RemovalPolicy.DESTROY
        )
        self.collection_arn = self.collection.attr_arn
        self.data_access_policy = aoss.CfnAccessPolicy(
            self,
            "DataAccessPolicy",
            name=f"{self.name}-data",
            type="data",
            policy=Lazy.string(_Produce(lambda: stack.to_json_string(self._data_access_rules()))),
        )
        return self.collection.attr_collection_endpoint

    def _security_policy(self, kind: str, suffix: str, policy: object) -> aoss.CfnSecurityPolicy:
        """The collection's ``encryption`` or ``network`` policy, named ``<name>-<suffix>``."""
        return aoss.CfnSecurityPolicy(
            self,
            f"{kind.capitalize()}Policy",
            name=f"{self.name}-{suffix}",
            type=kind,
            policy=json.dumps(policy),
        )

    def _data_access_rules(self) -> list[dict[str, Any]]:
        indexes = f"index/{self.name}/{self.config.index_alias}*"
        rules = []
        for roles, permissions in ((self._readers_writers, AOSS_READ_WRITE), (self._admins, AOSS_ADMIN)):
            if roles:
                rules.append(
                    {
                        "Rules": [
                            {"ResourceType": "index", "Resource": [indexes], "Permission": list(permissions)}
                        ],
                        "Principal": [role.role_arn for role in roles],
                    }
                )
        return rules

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
            "Engine": self.config.opensearch.knn_engine,
            "Serverless": "true" if self.serverless else "false",
            # CloudFormation re-runs the bootstrap only when a property changes: a new index
            # schema must, so that a deploy upgrades the index before the new functions use it.
            "SchemaVersion": str(INDEX_SCHEMA_VERSION),
        }
        if not self.serverless:
            # Fine-grained access control maps IAM roles to OpenSearch roles inside the cluster;
            # the bootstrap (the master user) maps these, the functions' roles.
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
        if self.serverless:
            self.bootstrap.node.add_dependency(self.data_access_policy)
        else:
            self.bootstrap.node.add_dependency(self.domain)


def _role(function: lambda_.IFunction) -> iam.IRole:
    role = function.role
    if role is None:
        raise ValueError(f"{function.node.path} has no role")
    return role

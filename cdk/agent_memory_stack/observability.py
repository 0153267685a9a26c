"""One dashboard and the alarms that mean "someone should look".

Business metrics are the ones the functions emit with Powertools (EMF): namespace
``metrics_namespace``, dimension ``service`` = ``service_name``. Alarms fire on any function
error or throttle, on any message in a dead-letter queue, on writes waiting longer than five
minutes and summarize jobs longer than an hour, on API 5xx bursts, on a burst of refused API keys
(someone guessing, or a client with a revoked key) and, for the managed domain, on a red or
yellow cluster, blocked writes, low free storage, JVM memory pressure, a tripped k-NN circuit
breaker, a failed automated snapshot and, on burstable (t3) nodes, an exhausted CPU credit
balance. Every alarm notifies an SNS topic: ``alarm_topic_arn`` when configured (its policy must
let CloudWatch publish), else one the stack creates, whose policy lets this account's alarms
publish (``alarm_email`` subscribes an address to it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Duration, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory_stack.config import StackConfig

PERIOD = Duration.minutes(5)
AT_LEAST = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD

#: Emitted by the functions (Powertools metrics), dimension ``service``.
BUSINESS_METRICS = (
    "WritesAccepted",
    "WritesDeduplicated",
    "WritesStored",
    "PoisonMessages",
    "Searches",
    "ZeroHitSearches",
    "SearchLatency",
    "SummariesMade",
    "RecordsDeleted",
    "ChangeEventsPublished",
    "ChangeEventsDropped",
    "WebhookDeliveries",
    "WebhookDeliveriesFailed",
)


class Observability(Construct):
    """The dashboard and every alarm of the stack."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        functions: Mapping[str, lambda_.IFunction],
        rest_api: apigw.RestApi,
        queues: Mapping[str, tuple[sqs.IQueue, Duration]],
        dead_letter_queues: Mapping[str, sqs.IQueue],
        domain: opensearch.Domain | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        self.topic: sns.ITopic = (
            sns.Topic.from_topic_arn(self, "AlarmTopic", config.alarm_topic_arn)
            if config.alarm_topic_arn
            else sns.Topic(
                self, "AlarmTopic", display_name=f"agent-memory {config.stage} alarms", enforce_ssl=True
            )
        )
        if isinstance(self.topic, sns.Topic):
            self._let_cloudwatch_publish(self.topic)
        if config.alarm_email and isinstance(self.topic, sns.Topic):
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))

        for name, function in functions.items():
            self._alarm(f"{name}Errors", function.metric_errors(period=PERIOD, statistic="Sum"), 1, "errors")
            self._alarm(
                f"{name}Throttles", function.metric_throttles(period=PERIOD, statistic="Sum"), 1, "throttles"
            )
        for name, queue in dead_letter_queues.items():
            self._alarm(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                1,
                "messages in a dead-letter queue: inspect, fix, redrive",
            )
        for name, (queue, max_age) in queues.items():
            self._alarm(
                f"{name}OldestMessage",
                queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum"),
                max_age.to_seconds(),
                f"a message has waited longer than {max_age.to_human_string()}",
            )
        self._alarm(
            "Api5xx", rest_api.metric_server_error(period=PERIOD, statistic="Sum"), 5, "API 5xx responses"
        )
        self._alarm(
            "AuthorizationsRefused",
            cloudwatch.Metric(
                namespace=config.metrics_namespace,
                metric_name="AuthorizationsRefused",
                dimensions_map={"service": config.service_name},
                statistic="Sum",
                period=PERIOD,
            ),
            100,
            "100 or more refused API keys in 5 minutes: key guessing, or a client with a revoked key",
        )
        if domain is not None:
            self._alarm(
                "ClusterRed", domain.metric_cluster_status_red(period=Duration.minutes(1)), 1, "cluster red"
            )
            self._alarm(
                "ClusterWritesBlocked",
                domain.metric_cluster_index_writes_blocked(period=PERIOD),
                1,
                "the cluster blocks index writes",
            )
            low_mib = config.opensearch.volume_gib * 1024 * 0.2
            self._alarm(
                "FreeStorageLow",
                domain.metric_free_storage_space(period=PERIOD, statistic="Minimum"),
                low_mib,
                "a data node has less than 20% of its volume free",
                comparison=cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
            )
            self._domain_health(domain, config)

        self.dashboard = cloudwatch.Dashboard(
            self,
            "Dashboard",
            dashboard_name=config.prefix,
            default_interval=Duration.hours(24),
            widgets=self._widgets(functions, rest_api, queues, dead_letter_queues),
        )

    @staticmethod
    def _let_cloudwatch_publish(topic: sns.Topic) -> None:
        """Allow this account's CloudWatch alarms to publish to the topic.

        A topic with a resource policy has only what that policy says: ``enforce_ssl`` gives it a
        Deny of plain-HTTP publishing, which replaces SNS's default policy, and an alarm's
        notification is then refused and no e-mail arrives. This statement lets CloudWatch in,
        for alarms of this account only.
        """
        stack = Stack.of(topic)
        alarms = f"arn:{stack.partition}:cloudwatch:{stack.region}:{stack.account}:alarm:*"
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={
                    "ArnLike": {"aws:SourceArn": alarms},
                    "StringEquals": {"aws:SourceAccount": stack.account},
                },
            )
        )

    def _domain_health(self, domain: opensearch.Domain, config: StackConfig) -> None:
        """The managed domain's alarms AWS recommends beyond red, blocked and storage."""
        self._alarm(
            "ClusterYellow",
            domain.metric("ClusterStatus.yellow", period=Duration.minutes(1), statistic="Maximum"),
            1,
            "cluster yellow: a replica shard is unassigned (a node lost or too small)",
            evaluation_periods=5,
        )
        self._alarm(
            "JVMMemoryPressure",
            domain.metric_jvm_memory_pressure(period=PERIOD, statistic="Maximum"),
            85,
            "JVM memory pressure at 85% or more: garbage collection stalls, then out-of-memory",
            evaluation_periods=3,
        )
        self._alarm(
            "KNNCircuitBreaker",
            domain.metric("KNNCircuitBreakerTriggered", period=PERIOD, statistic="Maximum"),
            1,
            "the k-NN circuit breaker tripped: vector searches fail until graph memory is freed",
        )
        self._alarm(
            "AutomatedSnapshotFailure",
            domain.metric_automated_snapshot_failure(period=Duration.minutes(1), statistic="Maximum"),
            1,
            "an automated snapshot failed",
        )
        if config.opensearch.data_node_type.startswith("t3."):
            self._alarm(
                "CPUCreditBalanceLow",
                domain.metric("CPUCreditBalance", period=PERIOD, statistic="Minimum"),
                10,
                "burstable data nodes are out of CPU credits: searches and writes slow to a crawl",
                comparison=cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
                evaluation_periods=3,
            )

    def metric(self, name: str, statistic: str = "Sum") -> cloudwatch.Metric:
        """A business metric of the functions (Powertools EMF)."""
        return cloudwatch.Metric(
            namespace=self.config.metrics_namespace,
            metric_name=name,
            dimensions_map={"service": self.config.service_name},
            statistic=statistic,
            period=PERIOD,
            label=f"{name} {statistic}" if statistic != "Sum" else name,
        )

    def _alarm(
        self,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        what: str,
        comparison: cloudwatch.ComparisonOperator = AT_LEAST,
        evaluation_periods: int = 1,
    ) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            name,
            alarm_name=f"{self.config.prefix}-{name}",
            alarm_description=f"agent-memory ({self.config.stage}): {what}",
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            comparison_operator=comparison,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms[name] = alarm
        return alarm

    def _widgets(
        self,
        functions: Mapping[str, lambda_.IFunction],
        rest_api: apigw.RestApi,
        queues: Mapping[str, tuple[sqs.IQueue, Duration]],
        dead_letter_queues: Mapping[str, sqs.IQueue],
    ) -> list[list[cloudwatch.IWidget]]:
        def graph(
            title: str, metrics: Sequence[cloudwatch.IMetric], width: int = 8
        ) -> cloudwatch.GraphWidget:
            return cloudwatch.GraphWidget(title=title, left=metrics, width=width, height=6)

        return [
            [
                graph(
                    "API latency (ms)",
                    [
                        rest_api.metric_latency(period=PERIOD, statistic="p50", label="p50"),
                        rest_api.metric_latency(period=PERIOD, statistic="p95", label="p95"),
                    ],
                ),
                graph(
                    "API requests",
                    [
                        rest_api.metric_count(period=PERIOD, label="requests"),
                        rest_api.metric_client_error(period=PERIOD, label="4xx"),
                        rest_api.metric_server_error(period=PERIOD, label="5xx"),
                    ],
                ),
                graph(
                    "Writes",
                    [
                        self.metric(n)
                        for n in ("WritesAccepted", "WritesDeduplicated", "WritesStored", "PoisonMessages")
                    ],
                ),
            ],
            [
                graph("Searches", [self.metric("Searches"), self.metric("ZeroHitSearches")]),
                graph(
                    "Search latency (ms)",
                    [self.metric("SearchLatency", "p50"), self.metric("SearchLatency", "p95")],
                ),
                graph(
                    "Summaries made, records deleted",
                    [self.metric("SummariesMade"), self.metric("RecordsDeleted")],
                ),
            ],
            [
                graph(
                    "Oldest message age (s)",
                    [
                        queue.metric_approximate_age_of_oldest_message(
                            period=PERIOD, statistic="Maximum", label=name
                        )
                        for name, (queue, _) in queues.items()
                    ],
                ),
                graph(
                    "Dead-letter queue depth",
                    [
                        queue.metric_approximate_number_of_messages_visible(
                            period=PERIOD, statistic="Maximum", label=name
                        )
                        for name, queue in dead_letter_queues.items()
                    ],
                ),
                graph(
                    "Function errors and throttles",
                    [f.metric_errors(period=PERIOD, label=f"{n} errors") for n, f in functions.items()]
                    + [
                        f.metric_throttles(period=PERIOD, label=f"{n} throttles")
                        for n, f in functions.items()
                    ],
                ),
            ],
            [
                graph(
                    "Change feed: events published and dropped, webhook deliveries and failures",
                    [
                        self.metric(n)
                        for n in (
                            "ChangeEventsPublished",
                            "ChangeEventsDropped",
                            "WebhookDeliveries",
                            "WebhookDeliveriesFailed",
                        )
                    ],
                    width=24,
                ),
            ],
        ]

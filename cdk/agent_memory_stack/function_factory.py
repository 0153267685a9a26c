"""One helper builds every function: same runtime, architecture, logging, tracing, code and layer.

Each function gets its own IAM role that starts empty except for writing to its own log group;
the construct that owns a function grants it exactly what it touches. Code is the ``functions/``
package only (tests, caches and build metadata excluded, so an unrelated edit does not change the
asset hash and redeploy every function); third-party packages come from one shared layer built by
pip for Lambda's platform without Docker (`layers/build.py`).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, Duration, ILocalBundling, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from agent_memory_stack.config import LOG_RETENTION_DAYS, StackConfig
from agent_memory_stack.environment import SettingValue, checked_environment, settings_env
from agent_memory_stack.nag import acknowledge

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = ROOT / "functions"
LAYERS_DIR = ROOT / "layers"

#: The runtime the layer is built for (`layers/build.py` PYTHON_VERSION): change both together.
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64

#: Never part of the function asset, at any depth (shell patterns, as `shutil.ignore_patterns`
#: reads them): they change without the code changing; ``*.onnx``, the update judge's weights, as
#: the deployed writer runs without it (bedrock.py).
SOURCES_IGNORED = (
    "__pycache__",
    "*.pyc",
    "*.egg-info",
    "tests",
    ".pytest_cache",
    ".mypy_cache",
    ".DS_Store",
    "*.onnx",
)
#: The same, as the asset's hash reads them.
CODE_EXCLUDES = [f"**/{pattern}" for pattern in SOURCES_IGNORED]


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Builds the layer on the deployer's machine with pip (`layers/build.py install`), no Docker.

    Raises instead of returning ``False``: falling back to Docker would hide a broken build
    behind a confusing "docker not found" on the machines this path exists for.
    """

    def __init__(self, build_script: Path = LAYERS_DIR / "build.py") -> None:
        self.build_script = build_script

    def try_bundle(self, output_dir: str, options: BundlingOptions | None = None) -> bool:
        target = Path(output_dir) / "python"
        command = [sys.executable, str(self.build_script), "install", "--target", str(target)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"building the dependency layer failed:\n{done.stderr[-4000:]}")
        print(done.stdout.strip(), file=sys.stderr)
        return True


#: Packages no function imports: the embedded runtime and CLI, the HTTP client and agent tools, the
#: console's static files (deployed to S3 by its own construct). tests/infra checks every handler
#: imports from the asset without them.
NOT_IN_LAMBDA = ("local", "client", "tools", "console")


@jsii.implements(ILocalBundling)
class CompiledCodeBundling:
    """The function code: the package's sources (without `CODE_EXCLUDES`) and their bytecode,
    compiled for the runtime's Python (`layers/build.py compile_bytecode`), no Docker."""

    def __init__(self, source: Path = FUNCTIONS_DIR, build_script: Path = LAYERS_DIR / "build.py") -> None:
        self.source = source
        self.build_script = build_script

    def try_bundle(self, output_dir: str, options: BundlingOptions | None = None) -> bool:
        ignore = shutil.ignore_patterns(*SOURCES_IGNORED)
        shutil.copytree(self.source, output_dir, ignore=ignore, dirs_exist_ok=True)
        for package in NOT_IN_LAMBDA:
            shutil.rmtree(Path(output_dir) / "agent_memory" / package, ignore_errors=True)
        command = [sys.executable, str(self.build_script), "compile", "--target", output_dir]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"compiling the function code failed:\n{done.stderr[-4000:]}")
        print(done.stderr.strip() or done.stdout.strip(), file=sys.stderr)
        return True


def layer_asset_hash(layers_dir: Path = LAYERS_DIR) -> str:
    """The layer changes exactly when the lock or the build recipe changes."""
    digest = hashlib.sha256()
    for name in ("requirements.txt", "build.py"):
        digest.update((layers_dir / name).read_bytes())
    return digest.hexdigest()


#: Where the handlers are: `FunctionSpec.handler` is relative to it.
HANDLERS = "agent_memory.handlers"


@dataclass(frozen=True)
class FunctionSpec:
    """What differs between functions besides their description and settings."""

    handler: str
    memory_mb: int
    timeout: Duration


#: Every function of the stack by name: the table of docs/infrastructure.md, which says why each
#: has its memory and timeout. The construct that owns a function builds it by its name.
FUNCTIONS = {
    "Api": FunctionSpec("api.api_handler", 512, Duration.seconds(20)),
    "Search": FunctionSpec("api.search_handler", 1024, Duration.seconds(15)),
    "Authorizer": FunctionSpec("authorizer.handler", 512, Duration.seconds(10)),
    "Writer": FunctionSpec("writer.handler", 1024, Duration.seconds(60)),
    "SummarizeDispatch": FunctionSpec("summarize_dispatch.handler", 512, Duration.minutes(5)),
    "SummarizeWorker": FunctionSpec("summarize_worker.handler", 1024, Duration.minutes(5)),
    # Each _delete_by_query waits for completion (up to 300 s); several grains and plans.
    "Retention": FunctionSpec("retention.handler", 512, Duration.minutes(15)),
    "IndexBootstrap": FunctionSpec("bootstrap.handler", 256, Duration.minutes(5)),
    # Ten deliveries at once, each waiting at most its timeout (5 s) for an answer.
    "WebhookDelivery": FunctionSpec("webhook_delivery.handler", 256, Duration.seconds(30)),
}


class FunctionFactory(Construct):
    """Owns the shared code asset and layer, and builds every function of the stack."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.code = lambda_.Code.from_asset(
            str(FUNCTIONS_DIR),
            exclude=CODE_EXCLUDES,
            # The hash is the sources': bytecode made from them changes nothing about the code.
            asset_hash_type=AssetHashType.SOURCE,
            bundling=BundlingOptions(
                image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.12"),
                local=cast(ILocalBundling, CompiledCodeBundling()),
            ),
        )
        self.layer = lambda_.LayerVersion(
            self,
            "Dependencies",
            description="agent-memory third-party packages (layers/requirements.txt), arm64, Python 3.12",
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            code=lambda_.Code.from_asset(
                str(LAYERS_DIR),
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=layer_asset_hash(),
                bundling=BundlingOptions(
                    # Only used if local bundling were to decline, which it never does.
                    image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.12"),
                    local=cast(ILocalBundling, PipLayerBundling()),
                ),
            ),
        )
        self.functions: dict[str, lambda_.Function] = {}

    def base_environment(self) -> dict[str, str]:
        return {
            "POWERTOOLS_SERVICE_NAME": self.config.service_name,
            "POWERTOOLS_METRICS_NAMESPACE": self.config.metrics_namespace,
        }

    def build(
        self, scope: Construct, name: str, description: str, environment: Mapping[str, str] | None = None
    ) -> lambda_.Function:
        """The function ``name`` of `FUNCTIONS`, with its own role and log group and ``environment``
        (`settings_env`); nothing else is granted here."""
        if name in self.functions:
            raise ValueError(f"function {name!r} is built twice")
        spec = FUNCTIONS[name]
        role = iam.Role(
            scope,
            f"{name}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"agent-memory {name} function ({self.config.stage})",
        )
        log_group = logs.LogGroup(
            scope,
            f"{name}Logs",
            retention=retention_days(self.config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        function = lambda_.Function(
            scope,
            f"{name}Function",
            description=description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=f"{HANDLERS}.{spec.handler}",
            code=self.code,
            layers=[self.layer],
            memory_size=spec.memory_mb,
            timeout=spec.timeout,
            role=role,
            log_group=log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            application_log_level_v2=lambda_.ApplicationLogLevel.INFO,
            system_log_level_v2=lambda_.SystemLogLevel.WARN,
            tracing=lambda_.Tracing.ACTIVE,
            environment=checked_environment({**self.base_environment(), **(environment or {})}),
        )
        # Only its own log group: the default managed policy would allow every log group.
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        acknowledge(
            role,
            "IAM5[Resource::*]",
            "only X-Ray's PutTraceSegments and PutTelemetryRecords (active tracing), which support no "
            "resource-level permissions; every other statement names its resources",
        )
        acknowledge(
            function,
            "L1",
            "pinned to Python 3.12 on purpose: the layer holds cp312 wheels (layers/build.py); moving "
            "to a newer runtime is a deliberate change of both",
        )
        self.functions[name] = function
        return function


#: `logs.RetentionDays` is declared in the order of `LOG_RETENTION_DAYS`; its last member is INFINITE.
_RETENTION = dict(zip(LOG_RETENTION_DAYS, list(logs.RetentionDays)[:-1], strict=True))


def set_settings(function: lambda_.Function, **settings: SettingValue) -> None:
    """More settings on a built function (`settings_env`), once what they name exists."""
    for name, value in settings_env(**settings).items():
        function.add_environment(name, value)


def retention_days(days: int) -> logs.RetentionDays:
    """The `logs.RetentionDays` member for a day count the config accepted."""
    return _RETENTION[days]

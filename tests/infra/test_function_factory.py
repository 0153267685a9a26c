"""Every function is built the same way: runtime, arm64, JSON logs, tracing, layer, own role."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

#: name -> (handler, memory MB, timeout s): the table in docs/infrastructure.md.
FUNCTIONS = {
    "Api": ("agent_memory.handlers.api.api_handler", 512, 20),
    "Search": ("agent_memory.handlers.api.search_handler", 1024, 15),
    "Authorizer": ("agent_memory.handlers.authorizer.handler", 512, 10),
    "Writer": ("agent_memory.handlers.writer.handler", 1024, 60),
    "SummarizeDispatch": ("agent_memory.handlers.summarize_dispatch.handler", 512, 300),
    "SummarizeWorker": ("agent_memory.handlers.summarize_worker.handler", 1024, 300),
    "Retention": ("agent_memory.handlers.retention.handler", 512, 900),
    "IndexBootstrap": ("agent_memory.handlers.bootstrap.handler", 256, 300),
    "WebhookDelivery": ("agent_memory.handlers.webhook_delivery.handler", 256, 30),
}

XRAY_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}


def test_every_function_is_built_by_the_factory_with_its_handler_memory_and_timeout(synth: Synth) -> None:
    # GIVEN the functions the factory built
    built = synth.stack.factory.functions
    # WHEN / THEN they are exactly the nine of the service, each with its handler, memory and timeout
    assert set(built) == set(FUNCTIONS)
    for name, (handler, memory, timeout) in FUNCTIONS.items():
        props = synth.function(name)
        assert (props["Handler"], props["MemorySize"], props["Timeout"]) == (handler, memory, timeout), name


def test_functions_share_runtime_architecture_logging_tracing_layer_and_code(synth: Synth) -> None:
    # GIVEN
    layer = {"Ref": synth.logical_id(synth.stack.factory.layer)}
    code_keys = set()
    # WHEN / THEN
    for name in FUNCTIONS:
        props = synth.function(name)
        assert props["Runtime"] == "python3.12", name
        assert props["Architectures"] == ["arm64"], name
        assert props["TracingConfig"] == {"Mode": "Active"}, name
        assert props["Layers"] == [layer], name
        logging = props["LoggingConfig"]
        assert logging["LogFormat"] == "JSON"
        assert (logging["ApplicationLogLevel"], logging["SystemLogLevel"]) == ("INFO", "WARN")
        env = props["Environment"]["Variables"]
        assert env["POWERTOOLS_SERVICE_NAME"] == "agent-memory"
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "AgentMemory"
        code_keys.add(props["Code"]["S3Key"])
    assert len(code_keys) == 1, "every function runs the same code asset"


def test_each_function_has_its_own_log_group_with_the_configured_retention(synth: Synth) -> None:
    # GIVEN
    groups = synth.of_type("AWS::Logs::LogGroup")
    seen = set()
    # WHEN / THEN
    for name in FUNCTIONS:
        ref = synth.function(name)["LoggingConfig"]["LogGroup"]["Ref"]
        assert groups[ref]["Properties"]["RetentionInDays"] == 30
        seen.add(ref)
    assert len(seen) == len(FUNCTIONS)


def test_each_function_has_its_own_role_that_writes_only_its_own_logs(synth: Synth) -> None:
    # WHEN
    roles = {synth.function(name)["Role"]["Fn::GetAtt"][0] for name in FUNCTIONS}
    # THEN
    assert len(roles) == len(FUNCTIONS)
    for name in FUNCTIONS:
        role = synth.resources[synth.function(name)["Role"]["Fn::GetAtt"][0]]["Properties"]
        assert "ManagedPolicyArns" not in role, f"{name}: no AWS managed policy"
        log_group = synth.function(name)["LoggingConfig"]["LogGroup"]["Ref"]
        log_statements = [
            s for s in synth.function_statements(name) if "logs:PutLogEvents" in as_list(s["Action"])
        ]
        assert [s["Resource"] for s in log_statements] == [{"Fn::GetAtt": [log_group, "Arn"]}], name


def test_no_function_policy_has_a_wildcard_resource_except_xray_and_pii_detection(
    synth: Synth, alt: Synth
) -> None:
    # WHEN / THEN
    # X-Ray's actions and Comprehend's DetectPiiEntities (the API function's, for redaction on
    # write) support no resource-level permission; everything else names its resource.
    for variant in (synth, alt):
        for name in FUNCTIONS:
            for statement in variant.function_statements(name):
                if "*" in as_list(statement["Resource"]):
                    allowed = XRAY_ACTIONS | ({"comprehend:DetectPiiEntities"} if name == "Api" else set())
                    assert set(as_list(statement["Action"])) <= allowed, (name, statement)


def test_the_layer_is_one_arm64_python312_layer(synth: Synth) -> None:
    # GIVEN
    layers = synth.of_type("AWS::Lambda::LayerVersion")
    # WHEN / THEN
    assert len(layers) == 1
    props = next(iter(layers.values()))["Properties"]
    assert props["CompatibleArchitectures"] == ["arm64"]
    assert props["CompatibleRuntimes"] == ["python3.12"]


def test_the_code_asset_is_the_functions_package_without_caches_or_build_metadata(tmp_path: Path) -> None:
    # GIVEN
    from agent_memory_stack.function_factory import CompiledCodeBundling

    # WHEN / THEN
    assert CompiledCodeBundling().try_bundle(str(tmp_path)) is True
    files = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")}
    assert "agent_memory/handlers/api.py" in files and "agent_memory/settings.py" in files
    assert not [f for f in files if "egg-info" in f or "/tests/" in f]
    assert not [f for f in files if f.split("/")[0] not in ("agent_memory",)], "functions/ only"


def test_bytecode_is_compiled_unchecked_so_a_zip_losing_mtimes_cannot_stale_it(tmp_path: Path) -> None:
    # GIVEN
    import importlib.util

    # WHEN
    from agent_memory_stack.function_factory import LAYERS_DIR

    # THEN
    build = runpy.run_path(str(LAYERS_DIR / "build.py"))
    (tmp_path / "m.py").write_text("x = 1\n")
    # this interpreter stands in for the runtime's (bytecode is per minor version)
    assert build["compile_bytecode"](tmp_path, python=sys.executable) is True
    pyc = Path(importlib.util.cache_from_source(str(tmp_path / "m.py")))
    flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
    assert flags == 0b01, "unchecked-hash: never compared with the source's mtime"


def test_without_an_interpreter_of_the_runtimes_version_the_code_ships_as_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN
    from agent_memory_stack.function_factory import LAYERS_DIR

    monkeypatch.delenv("AGENT_MEMORY_BUILD_PYTHON", raising=False)
    build = runpy.run_path(str(LAYERS_DIR / "build.py"))
    build["compile_bytecode"].__globals__["_candidates"] = lambda: []  # no Python 3.12 anywhere
    (tmp_path / "m.py").write_text("x = 1\n")
    # WHEN / THEN
    assert build["compile_bytecode"](tmp_path) is False
    assert not list(tmp_path.rglob("*.pyc"))


def test_layer_asset_hash_follows_the_lock_and_the_build_recipe(tmp_path: Path) -> None:
    # GIVEN
    from agent_memory_stack.function_factory import layer_asset_hash

    for name in ("requirements.txt", "build.py"):
        (tmp_path / name).write_text("a")
    before = layer_asset_hash(tmp_path)
    (tmp_path / "requirements.txt").write_text("b")
    # WHEN / THEN
    assert layer_asset_hash(tmp_path) != before
    (tmp_path / "README").write_text("unrelated")
    assert layer_asset_hash(tmp_path) == layer_asset_hash(tmp_path)


def test_local_bundling_runs_the_build_script_into_python_and_never_falls_back_to_docker(
    tmp_path: Path,
) -> None:
    from agent_memory_stack.function_factory import PipLayerBundling

    # GIVEN a build script that writes a marker where it is told to install
    script = tmp_path / "build.py"
    script.write_text(
        "import sys, pathlib\n"
        "target = pathlib.Path(sys.argv[sys.argv.index('--target') + 1])\n"
        "target.mkdir(parents=True); (target / 'marker').write_text(sys.argv[1])\n"
    )
    out = tmp_path / "out"
    # WHEN the bundler runs THEN it installs into out/python and reports success
    assert PipLayerBundling(script).try_bundle(str(out)) is True
    assert (out / "python" / "marker").read_text() == "install"

    # GIVEN a failing build WHEN bundled THEN it raises with pip's message instead of returning False
    script.write_text("import sys; sys.stderr.write('no matching distribution'); sys.exit(1)\n")
    with pytest.raises(RuntimeError, match="no matching distribution"):
        PipLayerBundling(script).try_bundle(str(tmp_path / "out2"))


def test_retention_days_map_to_cloudwatch_values() -> None:
    # GIVEN
    from aws_cdk import aws_logs as logs

    # WHEN
    from agent_memory_stack.function_factory import retention_days

    # THEN
    assert retention_days(30) is logs.RetentionDays.ONE_MONTH
    assert retention_days(365) is logs.RetentionDays.ONE_YEAR
    assert retention_days(3653) is logs.RetentionDays.TEN_YEARS


def test_every_deployed_handler_imports_from_the_asset_alone(synth: Synth, tmp_path: Path) -> None:
    """The asset leaves out the runtime, client, tools and console: nothing a function imports."""
    # GIVEN
    import os
    import subprocess

    # WHEN
    from agent_memory_stack.function_factory import NOT_IN_LAMBDA, CompiledCodeBundling

    # THEN
    CompiledCodeBundling().try_bundle(str(tmp_path))
    assert not [p for p in NOT_IN_LAMBDA if (tmp_path / "agent_memory" / p).exists()]
    handlers = sorted(
        {
            f["Properties"]["Handler"].rsplit(".", 1)[0]
            for f in synth.of_type("AWS::Lambda::Function").values()
            if f["Properties"].get("Handler", "").startswith("agent_memory.")
        }
    )
    assert len(handlers) >= 7
    probe = (
        "import importlib, sys\n"
        f"for name in {handlers!r}:\n"
        "    importlib.import_module(name)\n"
        "import agent_memory\n"
        "print(agent_memory.__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_MEMORY_", "PYTHONPATH"))}
    env["PYTHONPATH"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().startswith(str(tmp_path)), done.stdout


def test_a_function_setting_the_functions_do_not_know_fails_the_synth() -> None:
    # GIVEN
    from agent_memory_stack.environment import checked_environment

    # WHEN / THEN
    assert checked_environment({"AGENT_MEMORY_STORE": "opensearch", "AWS_X": "1"})
    with pytest.raises(ValueError, match="AGENT_MEMORY_TENANT_TABLE"):
        checked_environment({"AGENT_MEMORY_TENANT_TABLE": "t"})  # misspelt: the tenants table


def test_settings_are_named_by_their_field_and_travel_as_text_in_the_order_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN
    from agent_memory.settings import Settings
    from agent_memory_stack.environment import settings_env

    # WHEN
    environment = settings_env(
        timezone="Europe/Berlin", max_receive_count=5, default_ttls=False, scheduler_enabled=True
    )

    # THEN flags are "true" / "false", numbers their digits
    assert list(environment.items()) == [
        ("AGENT_MEMORY_TIMEZONE", "Europe/Berlin"),
        ("AGENT_MEMORY_MAX_RECEIVE_COUNT", "5"),
        ("AGENT_MEMORY_DEFAULT_TTLS", "false"),
        ("AGENT_MEMORY_SCHEDULER_ENABLED", "true"),
    ]
    # THEN and a function reads back what was given
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    read = Settings()
    assert read.timezone == "Europe/Berlin"
    assert (read.max_receive_count, read.default_ttls, read.scheduler_enabled) == (5, False, True)


def test_a_setting_that_is_no_field_or_no_text_fails_the_synth() -> None:
    # GIVEN
    from agent_memory_stack.environment import settings_env

    # WHEN / THEN a misspelt field (the tenants table) is refused, naming it
    with pytest.raises(ValueError, match="tenant_table"):
        settings_env(tenants_table="ok", tenant_table="t")
    # WHEN / THEN a field read under another name (AWS_REGION, not AGENT_MEMORY_AWS_REGION) too
    with pytest.raises(ValueError, match="aws_region"):
        settings_env(aws_region="eu-west-1")
    # WHEN / THEN a value that is no text, number or flag (an unset option) is refused
    with pytest.raises(TypeError, match="console_origin"):
        settings_env(console_origin=None)  # type: ignore[arg-type]


def test_every_setting_in_the_template_is_a_field_of_settings(synth: Synth) -> None:
    # GIVEN
    from agent_memory.settings import Settings

    # WHEN / THEN
    for function in synth.of_type("AWS::Lambda::Function").values():
        names = function["Properties"].get("Environment", {}).get("Variables", {})
        for name in names:
            if name.startswith("AGENT_MEMORY_"):
                assert name.removeprefix("AGENT_MEMORY_").lower() in Settings.model_fields, name

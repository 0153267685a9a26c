"""The functions' settings as environment variables, checked against their `Settings` at synth.

The functions read their configuration with ``agent_memory.settings.Settings`` (pydantic-settings,
prefix ``AGENT_MEMORY_``): a variable it does not know is ignored at run time, and the function
falls back to a default (a local file, a wrong model). So the stack never spells a variable: it
names `Settings` fields (`settings_env`), and anything that still reaches a function's environment
under the prefix is checked again when the function is built (`checked_environment`).
"""

from __future__ import annotations

from collections.abc import Mapping

#: What a setting may be given as: text (CDK tokens included), a whole number or a flag.
SettingValue = str | int | bool


def _settings_fields() -> tuple[str, set[str]]:
    """The environment prefix and the fields of `Settings` read under it."""
    from agent_memory.settings import Settings

    prefix = Settings.model_config.get("env_prefix", "AGENT_MEMORY_")
    # A field with its own alias (``aws_region`` from ``AWS_REGION``) is not read under the prefix.
    fields = {name for name, info in Settings.model_fields.items() if info.validation_alias is None}
    return prefix, fields


def _as_text(name: str, value: SettingValue) -> str:
    if isinstance(value, bool):  # before int: a bool is an int
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    raise TypeError(f"setting {name!r} must be text, a whole number or a flag, not {type(value).__name__}")


def settings_env(**settings: SettingValue) -> dict[str, str]:
    """The environment variables of these `Settings` fields, in the order given:
    ``settings_env(store="opensearch", max_receive_count=5)`` is
    ``{"AGENT_MEMORY_STORE": "opensearch", "AGENT_MEMORY_MAX_RECEIVE_COUNT": "5"}``.

    A name that is not a field of `Settings` fails the synth."""
    prefix, fields = _settings_fields()
    unknown = sorted(name for name in settings if name not in fields)
    if unknown:
        raise ValueError(f"no setting of agent_memory.settings.Settings is named {unknown}")
    return {f"{prefix}{name.upper()}": _as_text(name, value) for name, value in settings.items()}


def checked_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """``environment`` if every ``AGENT_MEMORY_*`` variable in it is a field of the functions'
    `Settings`, else a synth error naming it."""
    prefix, fields = _settings_fields()
    unknown = sorted(
        key for key in environment if key.startswith(prefix) and key[len(prefix) :].lower() not in fields
    )
    if unknown:
        raise ValueError(
            f"function environment names no setting of agent_memory.settings.Settings: {unknown}"
        )
    return dict(environment)

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


def _settings_variables() -> dict[str, str]:
    """Each field of `Settings` read under the prefix, by the variable it is read from."""
    from agent_memory.settings import Settings

    # A field with its own alias (``aws_region`` from ``AWS_REGION``) is not read under the prefix.
    return {
        Settings.variable(name): name
        for name, info in Settings.model_fields.items()
        if info.validation_alias is None
    }


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
    by_name = {name: variable for variable, name in _settings_variables().items()}
    unknown = sorted(name for name in settings if name not in by_name)
    if unknown:
        raise ValueError(f"no setting of agent_memory.settings.Settings is named {unknown}")
    return {by_name[name]: _as_text(name, value) for name, value in settings.items()}


def checked_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """``environment`` if every ``AGENT_MEMORY_*`` variable in it is a field of the functions'
    `Settings`, else a synth error naming it."""
    from agent_memory.settings import Settings

    prefix, known = Settings.variable(""), _settings_variables()
    unknown = sorted(key for key in environment if key.startswith(prefix) and key not in known)
    if unknown:
        raise ValueError(
            f"function environment names no setting of agent_memory.settings.Settings: {unknown}"
        )
    return dict(environment)

"""The rules the container hands the services are read from the settings of the same name."""

from __future__ import annotations

from pathlib import Path

from agent_memory.container import Container, ranking
from agent_memory.derived.rules.profiles import ProfileRules
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.settings import Settings


def test_every_rule_with_a_setting_takes_it_and_the_others_keep_their_defaults(tmp_path: Path) -> None:
    # GIVEN settings that move every pattern, profile and ranking setting off its default
    settings = Settings(
        data_dir=tmp_path,
        embedder="hashing",
        pattern_min_members=5,
        pattern_min_runs=4,
        pattern_similarity=0.6,
        pattern_window_days=30,
        pattern_max_experiences=50,
        profile_min_statements=2,
        profile_max_statements=9,
        profile_window_days=40,
        profile_max_records=99,
        recency_tau_days=10.0,
        recency_weight=0.3,
        importance_weight=0.1,
        lexical_weight=0.5,
        time_boost=0.2,
        speaker_boost=0.7,
    )
    # WHEN the container makes the rules and the weights
    container = Container(settings)
    patterns, profiles, weights = container.pattern_rules, container.profile_rules, ranking(settings)
    # THEN each field reads its setting
    assert (patterns.min_members, patterns.min_runs, patterns.similarity) == (5, 4, 0.6)
    assert (patterns.window_days, patterns.max_experiences) == (30, 50)
    assert (profiles.min_statements, profiles.max_statements) == (2, 9)
    assert (profiles.window_days, profiles.max_records) == (40, 99)
    assert (weights.recency_tau_days, weights.recency_weight, weights.importance_weight) == (10.0, 0.3, 0.1)
    assert (weights.lexical_weight, weights.time_boost, weights.speaker_boost) == (0.5, 0.2, 0.7)
    # AND a field no setting names keeps the default of its rules
    assert profiles.per_day == ProfileRules().per_day
    defaults = RankingWeights()
    assert (weights.time_hints, weights.private_weight, weights.shared_weight) == (
        defaults.time_hints,
        defaults.private_weight,
        defaults.shared_weight,
    )

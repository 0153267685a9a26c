"""Judges: small cross-encoders that read two statements together, with a question or without
(`ports.UpdateJudge`, `ports.AnswerJudge`; `minilm_judge` says what they share)."""

"""A write's pure rules: dedup, importance, the text embedded, personal data redacted."""

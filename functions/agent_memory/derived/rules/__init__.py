"""Derived memories' pure rules: the derived kinds, what makes a pattern, a profile."""

"""Ranking's pure rules: fusion, scoring, validity, folding, newer first, time hints."""

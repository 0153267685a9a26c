"""Recall's pure rules: a search's ranking (`ranking`: fusion, scoring, validity, folding, newer
first, and `rank`, which applies them in order) and time hints."""

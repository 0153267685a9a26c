"""Supersession's pure rules: claims, shapes, whose fact, review pairs, timelines."""

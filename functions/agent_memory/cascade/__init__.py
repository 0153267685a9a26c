"""The grain cascade: which periods are due, and a period's children folded into a summary."""

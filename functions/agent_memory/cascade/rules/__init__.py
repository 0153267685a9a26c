"""The cascade's pure rules: what each summary folds, the span it covers, when it is due."""
